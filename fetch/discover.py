"""Which kernel versions Debian packages, and where: discovered, not listed.

One private apt state, "discover", holds every suite of
suites.discovery_suites() (oldoldstable ... unstable, each with -backports
and -security) on the machine's mirrors (fetch/mirrors.py).  Its `apt-get
update` skips a suite the mirror does not have (its Release: 404) and
retries anything else (fetch/net.py).  Then apt says which suites are there
and their codenames (`apt-cache policy`), which linux-source-X.Y packages
exist (`apt-cache search`) and which versions of them each suite has
(`apt-cache policy PACKAGES`).

The result, a Catalog, is kept in apt/discover/catalog.json with its time
and reused for a day (MAX_LIST_AGE), as the private lists are; a refresh
that fails then keeps the old one, with a warning.

A kernel version is fetched through the private state of the suite that
offers it (state_for): the suite preferred by suites.rank() (the stable
suites, then testing, backports, unstable), and in it the newest package
version; a security update counts as its release.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from base import paths
from base.lock import locked
from base.log import info, SlabconvError
from . import apt, mirrors, net, suites, unpack
from .apt import FetchError, Repo
from .suites import Suite

STATE = "discover"
MAX_AGE = apt.MAX_LIST_AGE        # a day, as the lists of the other states


@dataclass(frozen=True)
class Offer:
    """linux-source-<version>=<deb_version> in a suite (alias "stable-backports",
    codename "trixie-backports") at uri."""
    version: str
    deb_version: str
    suite: str
    codename: str
    uri: str

    def describe(self) -> str:
        return f"{self.version} from {self.codename} ({self.deb_version})"


@dataclass
class Catalog:
    offers: list[Offer]
    suites: dict[str, str] = field(default_factory=dict)   # alias -> codename, present ones
    uris: dict[str, str] = field(default_factory=dict)     # alias -> URI
    absent: list[str] = field(default_factory=list)        # suites the mirrors lack
    sources: list[str] = field(default_factory=list)       # the discovery state's own lines
    extra: list[str] = field(default_factory=list)         # suites asked for by codename
    time: float = 0.0

    def versions(self) -> list[str]:
        return sorted({o.version for o in self.offers}, key=suites.version_key)

    def of(self, version: str) -> list[Offer]:
        """The offers of version, preferred first."""
        return sorted((o for o in self.offers if o.version == version),
                      key=lambda o: (suites.rank(o.suite), o.suite))

    def choose(self, version: str) -> Offer | None:
        """The release preferred for version (a security update counting as
        its release), and in it the newest package."""
        offers = self.of(version)
        if not offers:
            return None
        first = offers[0].suite
        same = [o for o in offers if suites.kind(o.suite) == suites.kind(first)
                and suites.base(o.suite) == suites.base(first)]
        return max(same, key=lambda o: unpack.version_key(o.deb_version))

    def latest(self) -> str | None:
        v = self.versions()
        return v[-1] if v else None

    def age(self) -> float:
        return max(0.0, time.time() - self.time)


def discovery_suite(extra=()) -> Suite:
    """The discovery state: every suite of suites.discovery_suites() by
    alias, and `extra` suites by codename (where the mirror has no alias)."""
    m = mirrors.machine()
    names = list(dict.fromkeys([*suites.discovery_suites(), *extra]))
    return Suite(STATE, tuple(m.line(s) for s in names))


def _file():
    return paths.cache_dir("apt", STATE) / "catalog.json"


def _load(sources: tuple[str, ...]) -> Catalog | None:
    try:
        d = json.loads(_file().read_text())
        cat = Catalog([Offer(**o) for o in d["offers"]], d["suites"], d["uris"], d["absent"],
                      d["sources"], d["extra"], float(d["time"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return cat if tuple(cat.sources) == tuple(sources) else None    # other mirrors: ask again


def _save(cat: Catalog) -> None:
    f = _file()
    d = asdict(cat)
    d["written"] = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(cat.time))
    tmp = f.with_name(f".{f.name}.{os.getpid()}")
    tmp.write_text(json.dumps(d, indent=1) + "\n")
    os.replace(tmp, f)


def _alias(written: str, release: tuple[str, str] | None, codenames: dict[str, str]) -> str:
    """The alias of a suite: its Release's Suite (a=), else the name it was
    asked for with a codename turned back into its alias."""
    if release and release[0] and suites.kind(release[0]) in ("stable", "testing",
                                                              "backports", "unstable"):
        return release[0]
    back = {c: a for a, c in codenames.items()}
    b = suites.base(written)
    return back[b] + written[len(b):] if b in back else written


def scan(factory: Callable[[Suite], Repo], extra=()) -> Catalog:
    """Update the discovery state's lists and read what they offer.  A
    -security or -backports suite the mirror has under its codename only
    (bullseye-security, where oldoldstable-security is not there) is asked
    for by codename, once the release's codename is known."""
    t0 = time.monotonic()
    base_sources = discovery_suite().sources
    extra = list(extra)
    for _ in range(2):
        repo = factory(discovery_suite(extra))
        absent_keys = repo.update_suites()
        releases = repo.releases()                  # "URI SUITE" -> (alias, codename)
        absent = {k.rsplit(" ", 1)[1] for k in absent_keys}
        codenames = {k.rsplit(" ", 1)[1]: n for k, (a, n) in releases.items()
                     if k.rsplit(" ", 1)[1] in suites.RELEASES}
        more = [f"{codenames[r]}{sfx}" for r in suites.RELEASES if r in codenames
                for sfx in ("-backports", "-security")
                if f"{r}{sfx}" in absent and f"{codenames[r]}{sfx}" not in extra]
        if not more:
            break
        info("fetch", f"not there by alias, asking by codename: {', '.join(more)}")
        extra += more
    kernels = [v for v in repo.kernel_versions() if suites.is_version(v)]
    offered = repo.offers([suites.package_name(v) for v in kernels])
    present: dict[str, str] = {}
    uris: dict[str, str] = {}
    alias_of: dict[str, str] = {}
    for key, rel in releases.items():
        uri, written = key.rsplit(" ", 1)
        alias = _alias(written, rel, codenames)
        alias_of[key] = alias
        present[alias] = rel[1] or written
        uris[alias] = uri
    best: dict[tuple[str, str], Offer] = {}
    for v in kernels:
        for debv, where in offered.get(suites.package_name(v), []):
            for key in where:
                uri, written = key.rsplit(" ", 1)
                alias = alias_of.get(key, written)
                o = Offer(v, debv, alias, present.get(alias, written), uri)
                old = best.get((v, alias))
                if old is None or unpack.compare_versions(debv, old.deb_version) > 0:
                    best[(v, alias)] = o
    order = suites.discovery_suites()
    gone = sorted({_alias(s, None, codenames) for s in absent} - set(present),
                  key=lambda s: (order.index(s) if s in order else len(order), s))
    cat = Catalog(sorted(best.values(), key=lambda o: (suites.version_key(o.version),
                                                       suites.rank(o.suite))),
                  present, uris, gone, list(base_sources), extra, time.time())
    info("fetch", f"discovered {len(cat.versions())} kernel versions in {len(present)} "
                  f"suites in {time.monotonic() - t0:.1f}s")
    return cat


def catalog(repo_factory: Callable[[Suite], Repo] | None = None, *,
            refresh: bool = False) -> Catalog:
    """The catalog: the cached one if less than a day old (and of the same
    mirrors), else discovered again; when that fails, the old one with a
    warning, or the FetchError."""
    factory = repo_factory or apt.open_repo
    sources = discovery_suite().sources
    cached = _load(sources)
    if cached is not None and not refresh and cached.age() <= MAX_AGE:
        return cached
    with locked(paths.cache_dir("apt", STATE) / ".catalog.lock", "the kernel discovery"):
        again = _load(sources)
        if again is not None and not refresh and again.age() <= MAX_AGE:
            return again                              # another run just made it
        try:
            cat = scan(factory, cached.extra if cached else ())
        except FetchError as e:
            if cached is None:
                m = mirrors.machine()
                err = FetchError(f"cannot discover the kernel versions Debian's suites offer "
                                 f"(apt state '{STATE}' on {m.archive} and {m.security}): "
                                 f"{e}" + (f"\n{net.ADVICE}" if e.transient else ""),
                                 network=e.network, transient=e.transient)
                err.named = True
                raise err from e
            info("fetch", f"warning: cannot refresh the kernel discovery "
                          f"({str(e).splitlines()[0]}); using the one of "
                          f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(cached.time))}")
            return cached
        _save(cat)
        return cat


def state_for(offer: Offer, cat: Catalog) -> Suite:
    """The private state that fetches an offer: its release and that
    release's security suite (those there), or its backports suite alone,
    named by codename ("bullseye", "trixie-backports", "sid")."""
    k = suites.kind(offer.suite)
    if k == "backports":
        members = [offer.suite]
    else:
        b = suites.base(offer.suite)
        members = [s for s in (b, f"{b}-security") if s in cat.suites]
    m = mirrors.machine()
    codenames = [cat.suites.get(alias, alias) for alias in members]
    name = codenames[0] if k == "backports" else suites.base(codenames[0])
    return Suite(name, tuple(m.line(c) for c in codenames))


def unknown(version: str, cat: Catalog | None, why: str = "") -> SlabconvError:
    """The error for a version no suite offers, with what apt offers."""
    if cat is None or not cat.versions():
        what = "none" + (f" ({why})" if why else "")
    else:
        what = ", ".join(cat.versions())
    return SlabconvError(f"no packaged kernel source for {version or '(empty)'}; "
                         f"apt offers: {what}", 2)
