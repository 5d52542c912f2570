"""apt access for fetch: private apt states.

A private state (e.g. "bullseye") lives in base.paths.cache_dir("apt", name):

    sources.list   the suite's deb lines (the machine's mirrors: fetch/mirrors.py)
    apt.conf       clears the system's APT::Update hooks (appstream, packagekit),
                   downloads no index but Packages (no Contents, Translations,
                   DEP-11), accepts a suite's new alias or codename after a
                   release, keeps apt-cache's binary cache
    lists/         Dir::State::Lists
    cache/         Dir::Cache
    debs/          downloaded .deb files, kept so a redo needs no network
    updated        stamp written after a successful `apt-get update`
    .lock          flock held around update/download

and is used with `apt-get -c apt.conf -o Dir::Etc::sourcelist=... -o
Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists=... -o Dir::Cache=...
-o Dir::State::status=/dev/null`: the machine's apt configuration, lists
and dpkg status are never changed nor read, but for the mirrors'
URIs (fetch/mirrors.py) and apt's own settings (proxy, ...).

Everything else in fetch talks to apt only through the Repo interface below,
so tests can pass a fake one (fetch.get_tree(..., repo_factory=...)).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from base import paths
from base.lock import locked
from base.log import info, SlabconvError
from base.proc import require_tool
from . import net
from .net import FetchError
from .suites import Suite


MAX_LIST_AGE = 24 * 3600          # refresh private lists older than a day
UPDATE_TIMEOUT = 900
DOWNLOAD_TIMEOUT = 3600
QUERY_TIMEOUT = 300

_PRIVATE_CONF = """\
// Written by slabconv (fetch/apt.py).  Private apt state: do not run the
// system's update hooks (appstream, packagekit) for these lists.
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
// A release moves the aliases: "stable" gets another codename, a codename
// another suite.  That is expected here.
Acquire::AllowReleaseInfoChange::Suite "true";
Acquire::AllowReleaseInfoChange::Codename "true";
Acquire::AllowReleaseInfoChange::Version "true";
Acquire::AllowReleaseInfoChange::Label "true";
// Only the Packages indexes: no Contents, Translations, DEP-11 (targets
// the system's configuration adds are switched off below).
Acquire::Languages "none";
// apt-cache keeps its binary cache of these lists (some machines switch it
// off; each query would then read every list again).
Dir::Cache::pkgcache "pkgcache.bin";
Dir::Cache::srcpkgcache "";
"""


@functools.lru_cache(maxsize=1)
def _other_index_targets() -> tuple[str, ...]:
    """The index targets of the machine's apt configuration but Packages
    (DEP-11, Translations, Contents-deb of apt-file, ...)."""
    exe = shutil.which("apt-config")
    if not exe:
        return ()
    cp = subprocess.run([exe, "dump"], text=True, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, env=dict(os.environ, LC_ALL="C"))
    names = re.findall(r"^Acquire::IndexTargets::deb::([^:\s]+) ", cp.stdout or "", re.M)
    return tuple(n for n in dict.fromkeys(names) if n != "Packages")


def private_conf() -> str:
    return _PRIVATE_CONF + "".join(
        f'Acquire::IndexTargets::deb::{t}::DefaultEnabled "false";\n'
        for t in _other_index_targets())

_NET_FAIL_RE = re.compile(r"^(W|E|Err): .*(Failed to fetch|Some index files failed|"
                          r"Temporary failure|Could not resolve|Could not connect|"
                          r"Unable to connect|Connection failed|Hash Sum mismatch|"
                          r"File has unexpected size|is not signed|NO_PUBKEY|"
                          r"Release file .* is not valid)", re.M)
# Not worth another try: a signature or a clock problem.
_LASTING_RE = re.compile(r"is not signed|NO_PUBKEY|is not valid yet|EXPKEYSIG")
# apt-get update's progress lines: "Get:4 URI SUITE/COMPONENT ARCH Packages"
_ITEM_RE = re.compile(r"^(Hit|Get|Ign|Err):\d+ (\S+) ([^\s/]+)", re.M)
_FAILED_URL_RE = re.compile(r"Failed to fetch (\S+?)/dists/([^/\s]+)/")
_POLICY_VERSION_RE = re.compile(r"^\s+(?:\*\*\*\s+)?(\S+)\s+-?\d+$")


@dataclass(frozen=True)
class DebInfo:
    """What the apt index says about one package version."""
    package: str
    version: str
    sha256: str
    size: int
    filename: str          # basename of the pool file, e.g. linux-source-5.10_5.10.262-1_all.deb


class Repo(Protocol):
    """What fetch needs from apt (AptRepo; tests pass a fake)."""
    suite: Suite

    def debs_dir(self) -> Path: ...
    def refresh(self, *, force: bool = False) -> None: ...
    def candidate(self, package: str) -> str | None: ...
    def versions(self, package: str) -> list[str]: ...
    def info(self, package: str, version: str) -> DebInfo | None: ...
    def download(self, package: str, version: str, workdir: Path) -> Path: ...
    def kernel_versions(self) -> list[str]: ...
    # discovery (fetch/discover.py)
    def update_suites(self) -> set[str]: ...
    def releases(self) -> dict[str, tuple[str, str]]: ...
    def offers(self, packages: list[str]) -> dict[str, list[tuple[str, list[str]]]]: ...


def open_repo(suite: Suite) -> "AptRepo":
    return AptRepo(suite)


def _tail(text: str, n: int = 25) -> str:
    return "\n".join((text or "").splitlines()[-n:])


def _line_at(text: str, m: re.Match) -> str:
    return text[m.start():].splitlines()[0].strip()


def index_failures(out: str) -> tuple[set[str], set[str]]:
    """(suites apt-get update asked for, suites whose index failed), each
    "URI SUITE" (e.g. "http://mirror.invalid/debian-security
    bookworm-security"), from its output."""
    seen: set[str] = set()
    failed: set[str] = set()
    for m in _ITEM_RE.finditer(out or ""):
        key = f"{m.group(2).rstrip('/')} {m.group(3)}"
        seen.add(key)
        if m.group(1) == "Err":
            failed.add(key)
    for m in _FAILED_URL_RE.finditer(out or ""):
        key = f"{m.group(1).rstrip('/')} {m.group(2)}"
        seen.add(key)
        failed.add(key)
    return seen, failed


def parse_policy(text: str) -> tuple[str | None, list[str]]:
    """(candidate, versions in table order) from `apt-cache policy PKG` output."""
    candidate = None
    versions: list[str] = []
    in_table = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Candidate:"):
            c = s.split(":", 1)[1].strip()
            candidate = None if c in ("", "(none)") else c
        elif s.startswith("Version table:"):
            in_table = True
        elif in_table:
            m = _POLICY_VERSION_RE.match(line)
            if m and m.group(1) not in versions:
                versions.append(m.group(1))
    return candidate, versions


def parse_show(text: str, package: str, version: str) -> DebInfo | None:
    """The DebInfo for package=version from `apt-cache show` output, if present."""
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") or ":" not in line:
                continue
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
        if fields.get("Package") != package or fields.get("Version") != version:
            continue
        sha, size = fields.get("SHA256", ""), fields.get("Size", "")
        if not re.fullmatch(r"[0-9a-f]{64}", sha) or not size.isdigit():
            continue
        return DebInfo(package, version, sha, int(size),
                       os.path.basename(fields.get("Filename", "")) or
                       f"{package}_{version.replace(':', '%3a')}_all.deb")
    return None


_PRESENT_RE = re.compile(r"^(?:Hit|Get):\d+ (\S+) (\S+) (?:In)?Release\b", re.M)
_ERR_RE = re.compile(r"^Err:\d+ (\S+) ([^\s/]+)\S* .*\n\s+(\S+)", re.M)
_E_FETCH_RE = re.compile(r"^[EW]: Failed to fetch (\S+?)/dists/([^/\s]+)/\S*\s+(\S+)", re.M)
_E_NO_RELEASE_RE = re.compile(r"^E: The repository '(\S+) (\S+) Release' does not have a "
                              r"Release file", re.M)
_E_GENERIC_RE = re.compile(r"^E: Some index files failed to download", re.M)


def probe_result(out: str) -> tuple[set[str], set[str], set[str]]:
    """(present, absent, failed) suites, each "URI SUITE", from the output of
    an `apt-get update`: absent when its Release is not there (HTTP 404, or
    only 404s for it), failed when anything else went wrong for it.  An
    error line naming no suite counts as a failure of "?"."""
    present = {f"{m.group(1).rstrip('/')} {m.group(2)}" for m in _PRESENT_RE.finditer(out)}
    errors: dict[str, set[str]] = {}
    for rx in (_ERR_RE, _E_FETCH_RE):
        for m in rx.finditer(out):
            errors.setdefault(f"{m.group(1).rstrip('/')} {m.group(2)}", set()).add(m.group(3))
    for m in _E_NO_RELEASE_RE.finditer(out):
        errors.setdefault(f"{m.group(1).rstrip('/')} {m.group(2)}", set()).add("404")
    failed = {k for k, codes in errors.items() if codes != {"404"} or k in present}
    absent = {k for k, codes in errors.items() if codes == {"404"} and k not in present}
    for line in re.findall(r"^(?:E|W): .*$", out, re.M):
        if not (_E_FETCH_RE.match(line) or _E_NO_RELEASE_RE.match(line)
                or _E_GENERIC_RE.match(line) or line.startswith("W: ")):
            failed.add("?")
    return present, absent, failed


def parse_releases(text: str) -> dict[str, tuple[str, str]]:
    """"URI SUITE" -> (alias, codename) of every Packages file, from
    `apt-cache policy` without a package ("release ...,a=stable,n=trixie,...")."""
    out: dict[str, tuple[str, str]] = {}
    key = None
    for line in text.splitlines():
        m = re.match(r"^\s*-?\d+ (\S+) ([^\s/]+)/\S+ \S+ Packages$", line)
        if m:
            key = f"{m.group(1).rstrip('/')} {m.group(2)}"
            continue
        m = re.match(r"^\s+release (.+)$", line)
        if m and key:
            f = dict(kv.split("=", 1) for kv in m.group(1).strip().split(",") if "=" in kv)
            suite = key.split()[1]
            out.setdefault(key, (f.get("a", suite), f.get("n", suite)))
            key = None
    return out


def parse_policy_sources(text: str) -> dict[str, list[tuple[str, list[str]]]]:
    """package -> [(version, ["URI SUITE", ...])] from `apt-cache policy PKG...`
    (only versions some mirror offers; the dpkg status is not a suite)."""
    out: dict[str, list[tuple[str, list[str]]]] = {}
    pkg = None
    cur: list[str] | None = None
    for line in text.splitlines():
        m = re.match(r"^(\S+):$", line)
        if m:
            pkg, cur = m.group(1), None
            out.setdefault(pkg, [])
            continue
        if pkg is None:
            continue
        m = _POLICY_VERSION_RE.match(line)
        if m and not line.startswith("        "):
            cur = []
            out[pkg].append((m.group(1), cur))
            continue
        m = re.match(r"^\s+-?\d+ (\S+://\S+|\S+:/\S+) ([^\s/]+)/\S+ \S+ Packages$", line)
        if m and cur is not None:
            key = f"{m.group(1).rstrip('/')} {m.group(2)}"
            if key not in cur:
                cur.append(key)
    return {p: [(v, w) for v, w in vs if w] for p, vs in out.items()}


def parse_search(text: str) -> list[str]:
    """Kernel versions from `apt-cache search --names-only '^linux-source-...'`."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^linux-source-([0-9]+\.[0-9]+)\s", line)
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


class AptRepo:
    """One private apt state, driven through apt-get/apt-cache."""

    def __init__(self, suite: Suite):
        self.suite = suite
        self.state = paths.cache_dir("apt", suite.name)
        self.broken: set[str] = set()   # suites whose index the last update could not get

    # -- layout -------------------------------------------------------------
    def debs_dir(self) -> Path:
        return paths.cache_dir("apt", self.suite.name, "debs")

    @property
    def _lists(self) -> Path:
        return self.state / "lists"

    @property
    def _stamp(self) -> Path:
        return self.state / "updated"

    def _prepare(self) -> None:
        if not self.suite.sources:
            raise SlabconvError(f"apt state '{self.suite.name}' has no sources", 2)
        for d in (self._lists / "partial", self.state / "cache" / "archives" / "partial"):
            d.mkdir(parents=True, exist_ok=True)
        for name, text in (("sources.list", "\n".join(self.suite.sources) + "\n"),
                           ("apt.conf", private_conf())):
            f = self.state / name
            if not f.exists() or f.read_text() != text:
                tmp = f.with_name(f.name + ".tmp")
                tmp.write_text(text)
                os.replace(tmp, f)

    def options(self) -> list[str]:
        """apt-get/apt-cache options selecting this state."""
        s = self.state
        arch = self.suite.arch
        foreign = [] if not arch else [
            "-o", f"APT::Architecture={arch}", "-o", f"APT::Architectures={arch}"]
        return foreign + ["-c", str(s / "apt.conf"),
                "-o", "Dir::State::status=/dev/null",      # the machine's packages: not ours
                "-o", f"Dir::Etc::sourcelist={s / 'sources.list'}",
                "-o", "Dir::Etc::sourceparts=/dev/null",
                "-o", f"Dir::State::Lists={s / 'lists'}",
                "-o", f"Dir::Cache={s / 'cache'}",
                "-o", "Dir::Etc::preferences=/dev/null",
                "-o", "Dir::Etc::preferencesparts=/dev/null",
                "-o", "Acquire::Languages=none"]

    # -- running apt --------------------------------------------------------
    def _run(self, tool: str, args: list[str], *, timeout: int, cwd=None,
             network: bool = False) -> subprocess.CompletedProcess:
        exe = require_tool(tool, "apt")
        self._prepare()
        env = dict(os.environ, LC_ALL="C", LANG="C", DEBIAN_FRONTEND="noninteractive")
        cmd = [exe, *self.options(), *(net.apt_options() if network else []), *args]
        try:
            return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, text=True,
                                  errors="replace", stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise FetchError(f"{tool} {' '.join(args)} timed out after {timeout}s "
                             f"(apt state '{self.suite.name}')", network=True)

    def _query(self, args: list[str]) -> str:
        cp = self._run("apt-cache", args, timeout=QUERY_TIMEOUT)
        out = cp.stdout or ""
        if cp.returncode != 0 and not re.search(r"^E: (No packages found|Unable to locate)",
                                                out, re.M):
            raise FetchError(f"apt-cache {' '.join(args)} failed (exit {cp.returncode}, "
                             f"apt state '{self.suite.name}'):\n{_tail(out)}")
        return out

    # -- lists ----------------------------------------------------------------
    def has_lists(self) -> bool:
        try:
            return any("_Packages" in p.name for p in self._lists.iterdir())
        except OSError:
            return False

    def lists_age(self) -> float | None:
        """Seconds since the last successful update, None if never."""
        if not self.has_lists():
            return None
        try:
            return max(0.0, time.time() - self._stamp.stat().st_mtime)
        except OSError:
            return None

    def is_stale(self) -> bool:
        age = self.lists_age()
        return age is None or age > MAX_LIST_AGE

    def refresh(self, *, force: bool = False) -> None:
        """apt-get update when forced, or when the lists are missing or stale.

        A failed refresh of stale-but-present lists only warns (the old lists
        still resolve versions); otherwise it raises FetchError.
        """
        if not force and not self.is_stale():
            return
        with locked(self.state / ".lock"):
            if not force and not self.is_stale():      # someone else just did it
                return
            try:
                complete = self._update()
            except FetchError as e:
                if not force and self.has_lists():
                    info("fetch", f"warning: could not refresh apt lists "
                                  f"'{self.suite.name}', using the old ones: "
                                  f"{str(e).splitlines()[0]}")
                    return
                raise
            if complete:
                self._stamp.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z\n"))

    def _where(self) -> str:
        return f"private apt lists '{self.suite.name}' ({self._lists})"

    def _update(self) -> bool:
        """apt-get update, retried (fetch/net.py).  True when every index came;
        False when, after the last try, only some suites' indexes still fail
        while the others came (their names are in self.broken; a package
        found in the others is fetched; one only in a broken suite is an
        error that names it).  Otherwise FetchError."""
        self.broken = set()
        try:
            net.call(self._update_once, f"apt-get update of the {self._where()}")
            return True
        except FetchError as e:
            last = e.__cause__ if isinstance(e.__cause__, FetchError) else e
            ok, failed = getattr(last, "suites_ok", set()), getattr(last, "suites_failed", set())
            if not (ok and failed and self.has_lists()):
                raise
            self.broken = failed
            info("fetch", f"warning: the index of {', '.join(sorted(failed))} still fails "
                          f"({str(e).splitlines()[0]}); going on with {', '.join(sorted(ok))}")
            return False

    def _update_once(self) -> None:
        info("fetch", f"apt-get update: {self._where()}")
        t0 = time.monotonic()
        cp = self._run("apt-get", ["-q", "update"], timeout=UPDATE_TIMEOUT, network=True)
        out = cp.stdout or ""
        bad = _NET_FAIL_RE.search(out)
        if cp.returncode != 0 or bad:
            why = _line_at(out, bad) if bad else f"exit {cp.returncode}"
            e = FetchError(f"apt-get update of the {self._where()} failed: {why}\n{_tail(out)}",
                           network=True, transient=not _LASTING_RE.search(out))
            seen, failed = index_failures(out)
            e.suites_failed, e.suites_ok = failed, seen - failed
            raise e
        info("fetch", f"apt-get update done in {time.monotonic() - t0:.1f}s")

    # -- queries ------------------------------------------------------------
    def candidate(self, package: str) -> str | None:
        return parse_policy(self._query(["policy", package]))[0]

    def versions(self, package: str) -> list[str]:
        return parse_policy(self._query(["policy", package]))[1]

    def info(self, package: str, version: str) -> DebInfo | None:
        return parse_show(self._query(["show", f"{package}={version}"]), package, version)

    def kernel_versions(self) -> list[str]:
        return parse_search(self._query(["search", "--names-only",
                                         r"^linux-source-[0-9.]+$"]))

    # -- discovery ----------------------------------------------------------
    def update_suites(self) -> set[str]:
        """apt-get update of this state, a suite the mirror does not have
        (404) being no failure: retried (fetch/net.py) for anything else.
        The absent suites, "URI SUITE"; FetchError when no suite is there."""
        def once() -> set[str]:
            info("fetch", f"apt-get update: {self._where()}, {len(self.suite.sources)} suites")
            t0 = time.monotonic()
            cp = self._run("apt-get", ["-q", "update"], timeout=UPDATE_TIMEOUT, network=True)
            out = cp.stdout or ""
            present, absent, failed = probe_result(out)
            if failed or (cp.returncode != 0 and not absent):
                bad = _NET_FAIL_RE.search(out)
                why = _line_at(out, bad) if bad else f"exit {cp.returncode}"
                e = FetchError(f"apt-get update of the {self._where()} failed: {why}\n"
                               f"{_tail(out)}", network=True,
                               transient=not _LASTING_RE.search(out))
                e.suites_failed, e.suites_ok = failed, present
                raise e
            if not present:
                raise FetchError(f"apt-get update of the {self._where()}: no suite is there "
                                 f"(the Release of each: 404); is the mirror a Debian "
                                 f"archive?\n{_tail(out)}", network=True, transient=False)
            info("fetch", f"apt-get update done in {time.monotonic() - t0:.1f}s: "
                          f"{len(present)} suites there, {len(absent)} not (404)")
            return absent

        with locked(self.state / ".lock"):
            absent = net.call(once, f"apt-get update of the {self._where()}")
            self._stamp.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z\n"))
        return absent

    def releases(self) -> dict[str, tuple[str, str]]:
        return parse_releases(self._query(["policy"]))

    def offers(self, packages: list[str]) -> dict[str, list[tuple[str, list[str]]]]:
        if not packages:
            return {}
        return parse_policy_sources(self._query(["policy", *packages]))

    # -- download -----------------------------------------------------------
    def download(self, package: str, version: str, workdir: Path) -> Path:
        """apt-get download package=version into workdir; the .deb path."""
        info("fetch", f"downloading {package}={version} (apt state '{self.suite.name}')")
        t0 = time.monotonic()
        lock = self.state / ".lock"
        with locked(lock):
            cp = self._run("apt-get", ["-q", "download", f"{package}={version}"],
                           timeout=DOWNLOAD_TIMEOUT, cwd=workdir, network=True)
        debs = sorted(workdir.glob("*.deb"))
        if cp.returncode != 0 or len(debs) != 1:
            bad = _NET_FAIL_RE.search(cp.stdout or "")
            why = (_line_at(cp.stdout, bad) if bad
                   else f"exit {cp.returncode}, {len(debs)} .deb files")
            raise FetchError(f"apt-get download {package}={version} failed: {why}\n"
                             f"{_tail(cp.stdout)}", network=True)
        size = debs[0].stat().st_size
        dt = time.monotonic() - t0
        info("fetch", f"downloaded {debs[0].name}: {size / 1e6:.1f} MB in {dt:.1f}s")
        return debs[0]


__all__ = ["AptRepo", "DebInfo", "FetchError", "Repo", "open_repo"]
