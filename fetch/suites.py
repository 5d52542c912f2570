"""apt states and Debian's suites.

An apt state is a private one with its own sources.list, lists and cache
under base.paths.cache_dir("apt", name) (fetch/apt.py); the machine's own
apt configuration and lists are never changed.  Every state takes its
URIs from fetch/mirrors.py (the machine's apt configuration or
$SLABCONV_APT_MIRROR): nothing here names a host.

Which kernel versions exist and in which suite is not written here: it is
discovered (fetch/discover.py) in Debian's suites, named by their aliases
(RELEASES, each with -backports and -security), which the Release files
map to codenames.  A kernel source is fetched through the private state of
the suite it was found in, named by codename: "bullseye" (bullseye and
bullseye-security), "trixie-backports", "sid".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from base.log import SlabconvError
from . import mirrors

# Debian's release aliases, oldest first.  Each has its -backports and
# -security suite (those the mirror does not have are skipped).
RELEASES = ("oldoldstable", "oldstable", "stable", "testing", "unstable")
_STABLE = ("stable", "oldstable", "oldoldstable")        # preferred in this order

# Private states of another architecture than the machine's, for a guest's
# packages: name -> (suite, Debian architecture).  The system's dpkg
# status is not read.  The i386 guest's busybox-static (boot/busybox.py):
# bookworm main only, which has the version of this machine's own busybox.
# The arm64 guest's (base/arches.py) from the same suite.
FOREIGN: dict[str, tuple[str, str]] = {"bookworm-i386": ("bookworm", "i386"),
                                       "bookworm-arm64": ("bookworm", "arm64")}

_VERSION_RE = re.compile(r"^[1-9][0-9]*\.[0-9]+$")


@dataclass(frozen=True)
class Suite:
    """A private apt state: its name (its directory in the cache), its
    sources.list lines and, for another architecture than the machine's,
    its arch."""
    name: str
    sources: tuple[str, ...] = ()
    arch: str | None = None

    def describe(self) -> str:
        """apt state 'NAME' (URI SUITE COMPONENT, ...), for messages."""
        where = "; ".join(" ".join(w for w in line.split()[1:] if not w.startswith("["))
                          for line in self.sources)
        return f"apt state '{self.name}' ({where})"


def discovery_suites() -> list[str]:
    """Every suite discovery asks the mirrors for, by alias."""
    return [s for r in RELEASES for s in (r, f"{r}-backports", f"{r}-security")]


def named(name: str) -> Suite:
    """A private state of fetch.get_deb by name (FOREIGN), its URIs the
    machine's mirrors."""
    if name not in FOREIGN:
        raise SlabconvError(f"no apt state '{name}' (known: {', '.join(FOREIGN)})", 2)
    suite, arch = FOREIGN[name]
    return Suite(name, (mirrors.machine().line(suite),), arch)


def base(suite: str) -> str:
    """The release alias or codename of a suite: "stable-security" -> "stable"."""
    return re.sub(r"-(security|backports)$", "", suite)


def kind(alias: str) -> str:
    """"stable" (oldoldstable, oldstable, stable, and their security
    updates), "testing" (and testing-security), "backports", "unstable"."""
    if alias.endswith("-backports"):
        return "backports"
    b = base(alias)
    return "stable" if b in _STABLE else b


def rank(alias: str) -> tuple[int, int]:
    """Preference of a suite for a kernel version offered in several: the
    stable suites (stable first, a security update counting as its suite),
    then testing, then backports (of stable first), then unstable; lower
    is preferred.  Unknown names last."""
    kinds = ("stable", "testing", "backports", "unstable")
    k = kind(alias)
    b = base(alias)
    return (kinds.index(k) if k in kinds else len(kinds),
            _STABLE.index(b) if b in _STABLE else len(_STABLE))


def is_version(version: str) -> bool:
    """True for strings shaped like a kernel major.minor ("5.10", "6.12")."""
    return bool(_VERSION_RE.match(version or ""))


def package_name(version: str) -> str:
    return f"linux-source-{version}"


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for kernel versions: "5.10" < "6.1" < "6.12"."""
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))
