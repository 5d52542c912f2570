"""Where the Debian archive is: the machine's own apt configuration, or
$SLABCONV_APT_MIRROR.

Every private apt state (fetch/suites.py) takes its URIs from here, so a
machine behind a local mirror or a proxy works unchanged: the mirror is the
one apt itself uses, and apt does the downloads with its own configuration
(proxy included).

The apt configuration read is /etc/apt/sources.list and, in apt's order,
/etc/apt/sources.list.d/*.list (one-line format: `deb [options] URI SUITE
COMPONENT...`) and *.sources (deb822 stanzas: Types, URIs, Suites,
Components, Signed-By, Enabled, ...).  Other files there (`.disabled`,
`.save`, ...) are ignored, as apt ignores them.  A Debian entry is a `deb`
entry whose suite is the machine's release (VERSION_CODENAME of
/etc/os-release) or one of Debian's aliases (stable, testing, ...), with
or without a suffix (-updates, -backports, -security, ...).  The first
whose suites end in -security gives the security archive; the first
other one, the archive.  Their signing options (Signed-By, Trusted, ...)
go with them.

SLABCONV_APT_MIRROR overrides the configuration:

    SLABCONV_APT_MIRROR="[OPTIONS] ARCHIVE-URI [SECURITY-URI]"

OPTIONS are those of a one-line sources.list entry (e.g.
`[signed-by=/usr/share/keyrings/my-mirror.gpg]`), for both URIs.  Without
a security URI, or when the configuration has no security entry, the
security archive is the archive's sibling as on Debian's own mirror
network: the archive URI with `-security` added to its last path
component (http://mirror.invalid/debian -> http://mirror.invalid/debian-security).
A suite that URI does not serve is skipped (fetch/discover.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from base.log import SlabconvError

ENV = "SLABCONV_APT_MIRROR"
APT_ETC = Path("/etc/apt")              # tests point it at a fake configuration
OS_RELEASE = Path("/etc/os-release")

# Debian's suite aliases; a suite is Debian's when its name without a
# suffix is one of these or the machine's own codename.
ALIASES = ("oldoldstable", "oldstable", "stable", "testing", "unstable", "sid",
           "experimental")
_SUFFIX_RE = re.compile(r"(-updates|-proposed-updates|-backports-sloppy|-backports|"
                        r"-security|/updates)$")
# Options of an entry that say how its Release is checked: they go with
# its URI into the private states.  Others (arch=, lang=, target=) are the
# private state's own business.
_KEPT = ("signed-by", "trusted", "check-valid-until", "check-date", "allow-insecure",
         "allow-weak", "allow-downgrade-to-insecure", "valid-until-min", "valid-until-max",
         "date-max-future", "inrelease-path", "pdiffs", "by-hash")
_URI_RE = re.compile(r"^[a-z][a-z0-9+.-]*:\S+$", re.I)
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")     # apt ignores other file names


@dataclass(frozen=True)
class Entry:
    """One `deb` entry of the apt configuration."""
    types: tuple[str, ...]
    uris: tuple[str, ...]
    suites: tuple[str, ...]
    components: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    where: str                      # "file:line"


@dataclass(frozen=True)
class Mirrors:
    """The archive and security archive URIs and their one-line options
    ("[signed-by=...]" or "")."""
    archive: str
    security: str
    options: str
    origin: str                     # where the archive came from, for messages
    security_origin: str
    security_options: str | None = None     # None: the archive's


    def uri(self, suite: str) -> str:
        return self.security if is_security(suite) else self.archive

    def line(self, suite: str, component: str = "main") -> str:
        """A sources.list line for suite (the security archive for *-security)."""
        o = self.options
        if is_security(suite) and self.security_options is not None:
            o = self.security_options
        return f"deb {o + ' ' if o else ''}{self.uri(suite)} {suite} {component}"

    def describe(self) -> str:
        return (f"archive {self.archive} ({self.origin}), security {self.security} "
                f"({self.security_origin})")


def is_security(suite: str) -> bool:
    return suite.endswith("-security") or suite.endswith("/updates")


def derive_security(archive: str) -> str:
    """The security archive beside `archive` on Debian's mirror layout."""
    a = archive.rstrip("/")
    if re.match(r"^[a-z][a-z0-9+.-]*://[^/]*$", a, re.I):
        return a + "/debian-security"
    return a + "-security"


def _options_text(options) -> str:
    kept = [f"{k}={v}" for k, v in options if k in _KEPT]
    return f"[{' '.join(kept)}]" if kept else ""


# -- parsing ------------------------------------------------------------------
def parse_one_line(text: str, file: str) -> tuple[list[Entry], list[str]]:
    """(entries, problems "file:line: why") of a one-line sources.list."""
    entries, problems = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{file}:{n}"
        m = re.match(r"^(\S+)\s*(?:\[([^\]]*)\])?\s*(.*)$", line)
        kind, opts, rest = m.group(1), m.group(2), m.group(3).split()
        if kind not in ("deb", "deb-src"):
            problems.append(f"{where}: not a deb or deb-src line: {line[:60]}")
            continue
        if opts is None and "[" in line:
            problems.append(f"{where}: unclosed [options]: {line[:60]}")
            continue
        if len(rest) < 2:
            problems.append(f"{where}: needs a URI and a suite: {line[:60]}")
            continue
        options = []
        for o in (opts or "").split():
            k, _, v = o.partition("=")
            options.append((k.lower().rstrip("+-"), v))
        suite = rest[1]
        comps = tuple(rest[2:])
        entries.append(Entry((kind,), (rest[0],), (suite,), comps, tuple(options), where))
    return entries, problems


def parse_deb822(text: str, file: str) -> tuple[list[Entry], list[str]]:
    """(entries, problems) of a deb822 .sources file: stanzas separated by
    blank lines, `#` comment lines, continuation lines indented."""
    entries, problems = [], []
    stanza: dict[str, str] = {}
    start = 0
    last = None

    def close():
        nonlocal stanza, last
        if stanza:
            _stanza(stanza, f"{file}:{start}", entries, problems)
        stanza, last = {}, None

    for n, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("#"):
            continue
        if not raw.strip():
            close()
            continue
        if raw[0] in " \t":
            if last is None:
                problems.append(f"{file}:{n}: a continuation line without a field")
            else:
                stanza[last] += "\n" + raw.strip()
            continue
        if ":" not in raw:
            problems.append(f"{file}:{n}: not a 'Field: value' line: {raw.strip()[:60]}")
            continue
        if not stanza:
            start = n
        k, v = raw.split(":", 1)
        last = k.strip().lower()
        stanza[last] = v.strip()
    close()
    return entries, problems


def _stanza(f: dict[str, str], where: str, entries: list, problems: list) -> None:
    if f.get("enabled", "yes").strip().lower() in ("no", "false", "0"):
        return
    types = tuple(f.get("types", "").split())
    uris = tuple(f.get("uris", "").split())
    suites = tuple(f.get("suites", "").split())
    missing = [k for k, v in (("Types", types), ("URIs", uris), ("Suites", suites)) if not v]
    if missing:
        problems.append(f"{where}: a stanza without {', '.join(missing)}")
        return
    options = []
    for k, v in f.items():
        if k in ("types", "uris", "suites", "components", "enabled"):
            continue
        if k == "signed-by" and "\n" in v:
            problems.append(f"{where}: Signed-By holds a key block, which slabconv cannot "
                            f"pass on; give the key a file, or set {ENV}")
            return
        options.append((k, v.strip()))
    entries.append(Entry(types, uris, suites, tuple(f.get("components", "").split()),
                         tuple(options), where))


def config_files(etc: Path) -> list[Path]:
    """apt's sources files in the order apt reads them."""
    files = [etc / "sources.list"] if (etc / "sources.list").is_file() else []
    parts = etc / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir()
                        if p.is_file() and p.suffix in (".list", ".sources")
                        and _NAME_RE.match(p.name))
    return files


def read_entries(etc: Path) -> tuple[list[Entry], list[str]]:
    entries, problems = [], []
    for f in config_files(etc):
        try:
            text = f.read_text(errors="replace")
        except OSError as e:
            problems.append(f"{f}: cannot read: {e.strerror}")
            continue
        parse = parse_deb822 if f.suffix == ".sources" else parse_one_line
        e, p = parse(text, str(f))
        entries += e
        problems += p
    return entries, problems


def machine_codename(os_release: Path = None) -> str | None:
    try:
        text = Path(os_release or OS_RELEASE).read_text()
    except OSError:
        return None
    m = re.search(r"^VERSION_CODENAME=\"?([a-z]+)\"?$", text, re.M)
    return m.group(1) if m else None


def is_debian_suite(suite: str, codename: str | None) -> bool:
    base = _SUFFIX_RE.sub("", suite)
    return base in ALIASES or (codename is not None and base == codename)


# -- the mirrors ----------------------------------------------------------------
def from_config(etc: Path | None = None, os_release: Path | None = None) -> Mirrors:
    """The archive and security URIs of the apt configuration under etc
    (default /etc/apt).  SlabconvError (exit 2) naming each file and line
    when it has no usable Debian entry."""
    etc = Path(etc or APT_ETC)
    codename = machine_codename(os_release)
    entries, problems = read_entries(etc)
    archive = security = None
    rejected = []
    for e in entries:
        if "deb" not in e.types:
            continue
        debian = [s for s in e.suites if is_debian_suite(s, codename)]
        if not debian:
            rejected.append(f"{e.where}: suite {' '.join(e.suites)} is not a Debian suite "
                            f"({codename or 'no codename in ' + str(os_release or OS_RELEASE)}"
                            f" or {', '.join(ALIASES[:5])}, ...)")
            continue
        if "main" not in e.components:
            rejected.append(f"{e.where}: no component main")
            continue
        uri = next((u for u in e.uris if _URI_RE.match(u)), None)
        if uri is None:
            rejected.append(f"{e.where}: no URI in {' '.join(e.uris)}")
            continue
        if security is None and any(is_security(s) for s in debian):
            security = (uri, e)
        if archive is None and any(not is_security(s) for s in debian):
            archive = (uri, e)
    if archive is None:
        files = config_files(etc)
        why = problems + rejected
        if security is not None:
            why.append(f"{security[1].where}: only a security archive")
        raise SlabconvError(
            "no Debian archive in the apt configuration ("
            + (", ".join(map(str, files)) if files else f"no sources.list or sources.list.d "
               f"files in {etc}") + ")"
            + ("".join(f"\n  {w}" for w in why) if why else ": no deb entry")
            + f"\nSet {ENV}=URI (the Debian archive to use) to go on.", exit_code=2)
    a_uri, a_entry = archive
    if security is None:
        s_uri, s_origin, s_opts = derive_security(a_uri), f"derived from {a_entry.where}", None
    else:
        s_uri, s_origin = security[0], security[1].where
        s_opts = _options_text(security[1].options)
    return Mirrors(a_uri.rstrip("/"), s_uri.rstrip("/"), _options_text(a_entry.options),
                   a_entry.where, s_origin, s_opts)


def from_env(value: str) -> Mirrors:
    """SLABCONV_APT_MIRROR's value: "[OPTIONS] ARCHIVE [SECURITY]"."""
    v = value.strip()
    opts = ""
    m = re.match(r"^\[([^\]]*)\]\s*(.*)$", v)
    if m:
        options = [(k.lower(), val) for k, _, val in (o.partition("=") for o in m.group(1).split())]
        bad = [k for k, _ in options if k not in _KEPT]
        if bad:
            raise SlabconvError(f"${ENV}: option {', '.join(bad)} is not one slabconv passes "
                                f"on (one of {', '.join(_KEPT[:4])}, ...)", exit_code=2)
        opts, v = _options_text(options), m.group(2)
    uris = v.split()
    if not 1 <= len(uris) <= 2 or not all(_URI_RE.match(u) for u in uris):
        raise SlabconvError(f"${ENV} must be '[OPTIONS] ARCHIVE-URI [SECURITY-URI]', e.g. "
                            f"'http://mirror.invalid/debian', not {value!r}", exit_code=2)
    archive = uris[0].rstrip("/")
    if len(uris) == 2:
        return Mirrors(archive, uris[1].rstrip("/"), opts, f"${ENV}", f"${ENV}")
    return Mirrors(archive, derive_security(archive), opts, f"${ENV}",
                   f"derived from ${ENV}")


def machine() -> Mirrors:
    """$SLABCONV_APT_MIRROR if set, else the machine's apt configuration."""
    value = os.environ.get(ENV, "").strip()
    return from_env(value) if value else from_config()
