"""fetch: packaged kernel source -> pristine, read-only tree in the cache.

    tree = fetch.get_tree("5.10")                      # apt's candidate
    tree = fetch.get_tree("5.10", deb_version="5.10.259-1")
    tree.path  # .../src/5.10/5.10.262-1/linux-source-5.10
    fetch.get_tree("latest")                           # the newest version offered
    python3 -m fetch 5.10                              # prints tree.path
    deb = fetch.get_deb("bookworm-i386", "busybox-static")   # any package: a verified .deb

Modules: mirrors (the machine's Debian mirrors, $SLABCONV_APT_MIRROR),
suites (apt states, Debian's suites and which is preferred), discover (the
kernel versions Debian's suites offer, cached for a day), apt
(private apt states), debcache (verified .deb files), unpack
(atomic unpack, markers, read-only trees, Debian version order through
dpkg), net (retries with backoff, the advice after the last try, the
no-network guard of a run that has started building).
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from base.lock import locked
from base.log import info, SlabconvError
from base.proc import require_tool
from . import apt, debcache, discover, net, suites, unpack
from .apt import DebInfo, FetchError, Repo
from .suites import package_name, Suite


__all__ = ["Tree", "get_tree", "get_deb", "offered_versions", "deb_versions", "kernel",
           "FetchError"]

LATEST = "latest"

RepoFactory = Callable[[Suite], Repo]

_DEBVER_RE = re.compile(r"^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$")


@dataclass(frozen=True)
class Tree:
    """A complete pristine tree: `path` is the linux-source-<version> top dir."""
    path: Path
    version: str
    deb_version: str


def get_tree(version: str, *, deb_version: str | None = None,
             repo_factory: RepoFactory | None = None) -> Tree:
    """The pristine linux-source-<version> tree, fetched and unpacked if needed.

    version "latest" is the newest version offered.  deb_version None means
    the candidate of the apt state of the suite that offers version
    (fetch/discover.py; falling back to the newest complete cached tree when
    the network is unreachable).  A complete tree of an exact deb_version is
    reused without asking apt.  repo_factory replaces the apt layer (tests).
    Raises SlabconvError: 2 unknown version, 3 missing tool, 4
    download/network failure.
    """
    factory = repo_factory or apt.open_repo
    version = kernel(version, factory)
    if deb_version is not None:
        deb_version = deb_version.strip()
        if not _DEBVER_RE.match(deb_version):
            raise SlabconvError(f"not a Debian package version: {deb_version!r}", 2)
    if not suites.is_version(version):
        raise _unknown_version(version, factory)
    for tool, pkg in (("dpkg-deb", "dpkg"), ("tar", "tar"), ("xz", "xz-utils")):
        require_tool(tool, pkg)

    if deb_version is not None:
        # Complete trees only ever appear by rename and are never removed by
        # fetch, so this check needs no lock (no waiting behind another unpack).
        tree = unpack.tree_path(version, deb_version)
        if unpack.is_complete(tree, deb_version):
            return _reuse(tree, version, deb_version)

    repo = _repo_for(version, factory)     # unknown versions fail before touching the cache
    with locked(unpack.version_dir(version) / ".lock", f"the {version} source cache"), \
            _naming(package_name(version), repo):
        if deb_version is not None:
            tree = unpack.tree_path(version, deb_version)
            if unpack.is_complete(tree, deb_version):
                return _reuse(tree, version, deb_version)
        if deb_version is not None:
            return _fetch_exact(repo, version, deb_version)
        return _fetch_candidate(repo, version, factory)


def get_deb(state: str, package: str, *, version: str | None = None,
            repo_factory: RepoFactory | None = None) -> tuple[Path, DebInfo]:
    """A verified .deb of package from the apt state `state` (a name of
    fetch/suites.py), cached in apt/<state>/debs/ with its size and SHA256
    from apt's index; version None: apt's candidate.  With a cached .deb of
    that version, no download.  FetchError (exit 4) names the package, the
    suites and what to do."""
    repo = (repo_factory or apt.open_repo)(suites.named(state))
    with locked(repo.debs_dir() / ".lock", f"the {state} .deb cache"), _naming(package, repo):
        repo.refresh()                       # lists missing or > 1 day old
        if version is None:
            version = repo.candidate(package)
            if version is None:
                info("fetch", f"apt has no candidate for {package}; refreshing lists")
                repo.refresh(force=True)
                version = repo.candidate(package)
            if version is None:
                raise _missing(repo, package, "has no candidate")
        want = _resolve(repo, package, version)
        return debcache.obtain(repo, want), want


@contextlib.contextmanager
def _naming(package: str, repo: Repo):
    """A FetchError of the network or of a mirror (transient) gets the package,
    the suites and what to do."""
    try:
        yield
    except FetchError as e:
        if not e.transient or getattr(e, "named", False):
            raise
        err = FetchError(f"cannot fetch {package} from {repo.suite.describe()}: {e}\n"
                         f"{net.ADVICE}", network=e.network, transient=True)
        err.named = True
        raise err from e


def _missing(repo: Repo, package: str, what: str) -> SlabconvError:
    """package is not in the lists: a FetchError naming the suites whose
    index could not be had, if any (the package may be there)."""
    broken = sorted(getattr(repo, "broken", ()) or ())
    if broken:
        return FetchError(f"{package} {what} in the indexes apt could get, and the index "
                          f"of {', '.join(broken)} failed (mirror sync?)", network=True,
                          transient=True)
    return SlabconvError(f"{package} {what} in {repo.suite.describe()}", 2)


def _reuse(tree: Path, version: str, deb_version: str) -> Tree:
    if tree.stat().st_mode & 0o222:       # renamed but not yet chmod'ed (killed run)
        try:
            unpack.make_read_only(tree)
        except OSError as e:
            info("fetch", f"warning: cannot make {tree} read-only: {e}")
    info("fetch", f"using complete tree {tree}")
    return Tree(tree, version, deb_version)


def kernel(version: str | None, repo_factory: RepoFactory | None = None) -> str:
    """version, or for "latest" the newest version Debian's suites offer."""
    version = (version or "").strip()
    if version != LATEST:
        return version
    cat = discover.catalog(repo_factory)
    newest = cat.latest()
    if newest is None:
        raise discover.unknown(version, cat)
    info("fetch", f"latest: {cat.choose(newest).describe()}")
    return newest


def _repo_for(version: str, factory: RepoFactory) -> Repo:
    """The apt state of the suite that offers version (fetch/discover.py)."""
    cat = discover.catalog(factory)
    offer = cat.choose(version)
    if offer is None:
        raise discover.unknown(version, cat)
    suite = discover.state_for(offer, cat)
    others = [f"{o.codename} {o.deb_version}" for o in cat.of(version) if o != offer]
    info("fetch", f"kernel {offer.describe()}: apt state '{suite.name}'"
                  + (f" (also offered: {', '.join(others)})" if others else ""))
    return factory(suite)


def _fetch_exact(repo: Repo, version: str, deb_version: str) -> Tree:
    unpack.discard_partial(version, deb_version)
    want = _resolve(repo, package_name(version), deb_version)
    deb = debcache.obtain(repo, want)
    path = unpack.unpack(deb, version, deb_version, want.sha256)
    return Tree(path, version, deb_version)


def _resolve(repo: Repo, pkg: str, deb_version: str) -> DebInfo:
    """Size/SHA256 of pkg=deb_version: apt index, else our record, else refresh."""
    want = repo.info(pkg, deb_version) or debcache.recorded_info(repo, pkg, deb_version)
    if want is None:
        info("fetch", f"{pkg}={deb_version} not in the apt lists; refreshing them")
        repo.refresh(force=True)
        want = repo.info(pkg, deb_version)
    if want is None and getattr(repo, "broken", None):
        raise _missing(repo, pkg, f"has no version {deb_version}")
    if want is None:
        offered = repo.versions(pkg)
        raise SlabconvError(f"{pkg} has no version {deb_version}; apt offers: "
                            f"{', '.join(offered) or 'none'}", 2)
    return want


def _fetch_candidate(repo: Repo, version: str, factory: RepoFactory) -> Tree:
    pkg = package_name(version)
    try:
        repo.refresh()                       # lists missing or > 1 day old
        cand = repo.candidate(pkg)
        if cand is None:
            info("fetch", f"apt has no candidate for {pkg}; refreshing lists")
            repo.refresh(force=True)
            cand = repo.candidate(pkg)
        if cand is None and getattr(repo, "broken", None):
            raise _missing(repo, pkg, "has no candidate")
        if cand is None:
            raise _unknown_version(version, factory)
        info("fetch", f"{pkg} candidate: {cand}")
        tree = unpack.tree_path(version, cand)
        if unpack.is_complete(tree, cand):
            return _reuse(tree, version, cand)
        return _fetch_exact(repo, version, cand)
    except FetchError as e:
        if not e.network:
            raise
        trees = unpack.complete_trees(version)
        if not trees:
            raise
        debv, tree = trees[-1]
        info("fetch", f"warning: cannot reach apt ({str(e).splitlines()[0]}); "
                      f"using the newest complete tree {debv}")
        return Tree(tree, version, debv)


def table(cat: "discover.Catalog") -> list[str]:
    """`slabconv versions`: one line per kernel version and suite offering it,
    the suite KERNEL=X.Y takes marked with *, newest version last."""
    rows = []
    for v in cat.versions():
        chosen = cat.choose(v)
        for o in cat.of(v):
            rows.append((o.version, f"{o.suite} ({o.codename})", o.deb_version,
                         "*" if o == chosen else ""))
    if not rows:
        return []
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    return [f"{a:<{w[0]}}  {b:<{w[1]}}  {c:<{w[2]}}  {d}".rstrip() for a, b, c, d in rows]


def offered_versions(repo_factory: RepoFactory | None = None) -> list[str]:
    """Kernel versions with a linux-source-X.Y package in Debian's suites."""
    return discover.catalog(repo_factory).versions()


def deb_versions(version: str, repo_factory: RepoFactory | None = None
                 ) -> tuple[str | None, list[str]]:
    """(candidate, all offered Debian versions) of linux-source-<version>."""
    factory = repo_factory or apt.open_repo
    version = kernel(version, factory)
    if not suites.is_version(version):
        raise _unknown_version(version, factory)
    repo = _repo_for(version, factory)
    repo.refresh()
    pkg = package_name(version)
    cand, versions = repo.candidate(pkg), repo.versions(pkg)
    if cand is None and not versions:
        raise _unknown_version(version, factory)
    return cand, versions


def _unknown_version(version: str, factory: RepoFactory) -> SlabconvError:
    try:
        cat = discover.catalog(factory)
    except SlabconvError as e:
        return discover.unknown(version, None, f"apt could not be asked: "
                                               f"{str(e).splitlines()[0]}")
    return discover.unknown(version, cat)
