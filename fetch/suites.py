"""Which apt suite provides the source of which kernel version.

One line per kernel version in VERSIONS.  A version maps to the name of an
apt "state": either SYSTEM (the machine's own apt configuration, used
read-only except for refreshing its package lists) or the name of a private
state described in PRIVATE_SOURCES (its own sources.list, lists and cache
under base.paths.cache_dir("apt", name)).
"""
from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass

SYSTEM = "system"

_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# Private apt states: name -> sources.list lines.
PRIVATE_SOURCES: dict[str, tuple[str, ...]] = {
    "bullseye": (
        f"deb [signed-by={_KEYRING}] http://deb.debian.org/debian bullseye main",
        f"deb [signed-by={_KEYRING}] http://deb.debian.org/debian-security bullseye-security main",
    ),
    # The i386 guest's busybox-static (boot/busybox.py): bookworm main only,
    # which has this machine's version (1:1.35.0-4+deb12u1+b1, a point
    # release); a fault of bookworm-security's index cannot stop it.
    "bookworm-i386": (
        f"deb [signed-by={_KEYRING}] http://deb.debian.org/debian bookworm main",
    ),
}

# Private states whose sources are the machine's own: name -> (release,
# component); its sources.list is the machine's apt configuration's sites
# that serve that release and component (system_sources()), so the private
# state uses whichever mirror the machine is configured for.
# The arm64 guest's busybox-static (boot/busybox.py, base/arches.py).
MIRRORED: dict[str, tuple[str, str]] = {"bookworm-arm64": ("bookworm", "main")}

# Private states of another architecture than the machine's: name -> Debian
# architecture (APT::Architecture; the system's dpkg status is not read).
ARCHITECTURES: dict[str, str] = {"bookworm-i386": "i386", "bookworm-arm64": "arm64"}

# Kernel version -> apt state that provides linux-source-<version>.
VERSIONS: dict[str, str] = {
    "5.10": "bullseye",   # Debian 11
    "6.1": SYSTEM,        # Debian 12 bookworm (this machine)
    "6.12": SYSTEM,       # Debian 12 bookworm-security (backport of trixie's kernel)
}

_VERSION_RE = re.compile(r"^[1-9][0-9]*\.[0-9]+$")


@dataclass(frozen=True)
class Suite:
    """An apt state: `name` is SYSTEM or a key of PRIVATE_SOURCES."""
    name: str

    @property
    def private(self) -> bool:
        return self.name != SYSTEM

    @property
    def sources(self) -> tuple[str, ...]:
        if self.name in PRIVATE_SOURCES:
            return PRIVATE_SOURCES[self.name]
        if self.name in MIRRORED:
            return system_sources(*MIRRORED[self.name])
        return ()

    @property
    def arch(self) -> str | None:
        """The Debian architecture of a foreign-architecture state, else None."""
        return ARCHITECTURES.get(self.name)

    def describe(self) -> str:
        """apt state 'NAME' (URI SUITE COMPONENT, ...), for messages."""
        if not self.private:
            return "the system's apt sources"
        where = "; ".join(" ".join(w for w in line.split()[1:] if not w.startswith("["))
                          for line in self.sources)
        return f"apt state '{self.name}' ({where})"


_SITE_FORMAT = "$(SITE)|$(RELEASE)|$(COMPONENT)|$(TARGET_OF)"


def parse_indextargets(text: str, release: str, component: str) -> list[str]:
    """The sites of `apt-get indextargets --format _SITE_FORMAT` output that
    serve `release`'s `component` as binary packages, in order, each once."""
    sites = []
    for line in text.splitlines():
        f = line.strip().split("|")
        if len(f) == 4 and f[1:] == [release, component, "deb"] and f[0] not in sites:
            sites.append(f[0])
    return sites


@functools.lru_cache(maxsize=None)
def system_sources(release: str, component: str) -> tuple[str, ...]:
    """sources.list lines for `release` `component` from the sites of the
    machine's apt configuration (`apt-get indextargets`); () when it has
    none (AptRepo then says that the state has no sources)."""
    try:
        cp = subprocess.run(["apt-get", "indextargets", "--format", _SITE_FORMAT],
                            capture_output=True, text=True, timeout=60,
                            env={"LC_ALL": "C", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"})
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(f"deb [signed-by={_KEYRING}] {site} {release} {component}"
                 for site in parse_indextargets(cp.stdout, release, component))


def is_version(version: str) -> bool:
    """True for strings shaped like a kernel major.minor ("5.10", "6.12")."""
    return bool(_VERSION_RE.match(version or ""))


def package_name(version: str) -> str:
    return f"linux-source-{version}"


def suite_for(version: str) -> Suite | None:
    """The suite listed for version, or None if the table does not know it."""
    name = VERSIONS.get(version)
    return Suite(name) if name else None


def all_suites() -> list[Suite]:
    """Every apt state a kernel source may come from: private ones first, then
    the system (not the foreign-architecture states of the guests' packages)."""
    names = list(dict.fromkeys([n for n in VERSIONS.values() if n != SYSTEM]
                               + [n for n in PRIVATE_SOURCES if n not in ARCHITECTURES]))
    return [Suite(n) for n in names] + [Suite(SYSTEM)]


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for kernel versions: "5.10" < "6.1" < "6.12"."""
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))
