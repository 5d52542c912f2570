"""Tests for the fetch stage (fake apt layer, fake .deb files; no network
except the one test marked `network`)."""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # repo root

import fetch
import fetch.__main__ as fetch_cli
from fetch import apt, discover, suites, unpack
from fetch.apt import DebInfo, FetchError
from fetch.suites import Suite, package_name
from base.log import SlabconvError
from base.proc import require_tool



@pytest.fixture(autouse=True, scope="module")
def dpkg_tools():
    """dpkg-deb builds the fake .debs and dpkg orders versions: a missing
    one is a failure (exit code 3, the package to install), as every
    missing tool of this suite is, never a skip."""
    require_tool("dpkg-deb", "dpkg")
    require_tool("dpkg", "dpkg")


# -- fixtures: fake linux-source .deb files -------------------------------------
def build_deb(dest: Path, version: str, *, makefile_version: str | None = None,
              deb_version: str = "1-1") -> Path:
    """A tiny linux-source-<version> .deb holding usr/src/linux-source-<version>.tar.xz."""
    mv = makefile_version or version
    major, minor = mv.split(".")
    work = dest / f"build-{version}-{mv}"
    tree = work / "tree" / f"linux-source-{version}"
    (tree / "mm").mkdir(parents=True)
    (tree / "Makefile").write_text(
        f"# SPDX-License-Identifier: GPL-2.0\nVERSION = {major}\nPATCHLEVEL = {minor}\n"
        "SUBLEVEL = 999\nEXTRAVERSION =\nNAME = Fake\n")
    (tree / "mm" / "slub.c").write_text("/* fake slub */\nstruct page;\n")
    (tree / "include" / "linux").mkdir(parents=True)
    (tree / "include" / "linux" / "slab.h").write_text("/* fake */\n")
    os.symlink("slab.h", tree / "include" / "linux" / "slab-link.h")
    pkg = work / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "usr" / "src").mkdir(parents=True)
    with tarfile.open(pkg / "usr" / "src" / f"linux-source-{version}.tar.xz", "w:xz") as t:
        t.add(tree, arcname=f"linux-source-{version}")
    (pkg / "DEBIAN" / "control").write_text(
        f"Package: linux-source-{version}\nVersion: {deb_version}\nArchitecture: all\n"
        "Maintainer: slabconv tests <nobody@example.org>\nDescription: fake kernel source\n")
    out = dest / f"linux-source-{version}-{mv}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(pkg), str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(work)
    return out


@pytest.fixture(scope="session")
def debs(tmp_path_factory):
    d = tmp_path_factory.mktemp("debs")
    return {"5.10": build_deb(d, "5.10"), "6.1": build_deb(d, "6.1"),
            "5.10-wrong": build_deb(d, "5.10", makefile_version="5.11")}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    c = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(c))
    monkeypatch.setenv("SLABCONV_FETCH_PAUSE", "0")      # retries without the pauses
    monkeypatch.setenv("SLABCONV_APT_MIRROR", MIRROR)    # not the machine's apt configuration
    yield c
    if c.exists():
        unpack.remove_tree(c)        # read-only trees: make pytest's cleanup work


MIRROR = "http://mirror.invalid/debian"
SECURITY = "http://mirror.invalid/debian-security"
# Debian's suites of the fake discovery: alias -> codename.
SUITES = {"oldoldstable": "bullseye", "oldoldstable-security": "bullseye-security",
          "oldstable": "bookworm", "oldstable-security": "bookworm-security",
          "stable": "trixie", "stable-security": "trixie-security",
          "stable-backports": "trixie-backports", "testing": "forky", "unstable": "sid"}
# (kernel version, suite alias, package version) the fake discovery finds.
OFFERS = (("5.10", "oldoldstable-security", "5.10.999-1"),
          ("6.1", "oldstable-security", "6.1.99-1"),
          ("6.12", "stable", "6.12.9-1"))


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


class FakeRepo:
    """Stands in for apt.AptRepo.  `offers` maps package -> {deb_version: deb file}.

    `script` lists what successive downloads deliver: "good", "corrupt",
    "truncated", or "offline" (raise a network FetchError).
    """

    def __init__(self, suite, *, offers=None, candidate=None, kernels=(), script=(),
                 offline=False, hidden=()):
        self.suite = suite
        self.offers = offers or {}
        self.cand = candidate
        self.kernels = list(kernels)
        self.script = list(script)
        self.offline = offline
        self.hidden = set(hidden)          # versions visible only after refresh(force)
        self.downloads = 0
        self.refreshes: list[bool] = []
        self.queries = 0

    def debs_dir(self):
        d = Path(os.environ["SLABCONV_CACHE"]) / "apt" / self.suite.name / "debs"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def refresh(self, *, force=False):
        self.refreshes.append(force)
        if self.offline and (force or not self.refreshes[:-1]):
            raise FetchError("apt-get update failed: Temporary failure resolving "
                             "'mirror.invalid'", network=True)
        if force:
            self.hidden.clear()

    def _versions(self, package):
        return {v: p for v, p in self.offers.get(package, {}).items() if v not in self.hidden}

    def candidate(self, package):
        self.queries += 1
        return self.cand if self.cand in self._versions(package) else None

    def versions(self, package):
        self.queries += 1
        return sorted(self._versions(package), key=unpack.version_key, reverse=True)

    def info(self, package, version):
        self.queries += 1
        p = self._versions(package).get(version)
        if p is None:
            return None
        return DebInfo(package, version, sha256(p), p.stat().st_size,
                       f"{package}_{version}_all.deb")

    def download(self, package, version, workdir):
        self.downloads += 1
        how = self.script.pop(0) if self.script else "good"
        if how == "offline" or self.offline:
            raise FetchError("apt-get download failed: Could not resolve 'mirror.invalid'",
                             network=True)
        src = self._versions(package)[version]
        out = Path(workdir) / f"{package}_{version}_all.deb"
        data = src.read_bytes()
        if how == "corrupt":
            data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
        elif how == "truncated":
            data = data[: len(data) // 2]
        out.write_bytes(data)
        return out

    def kernel_versions(self):
        return list(self.kernels)


class FakeDiscovery:
    """Stands in for the discovery state's AptRepo (fetch/discover.py):
    Debian's suites `suites` (alias -> codename) on the mirror, the kernel
    `offers` (version, alias, package version) in them, `absent` suites
    not on the mirror (404)."""

    def __init__(self, suite, *, suites=SUITES, offers=OFFERS, absent=(), offline=False):
        self.suite = suite
        self.suites, self.kernels, self.absent = dict(suites), list(offers), list(absent)
        self.offline = offline
        self.updates = 0

    @staticmethod
    def _key(alias):
        return f"{SECURITY if alias.endswith('-security') else MIRROR} {alias}"

    def update_suites(self):
        self.updates += 1
        if self.offline:
            raise FetchError("apt-get update failed: Temporary failure resolving "
                             "'mirror.invalid'", network=True)
        return {self._key(a) for a in self.absent}

    def releases(self):
        return {self._key(a): (a, c) for a, c in self.suites.items()}

    def kernel_versions(self):
        return sorted({v for v, _, _ in self.kernels}, key=suites.version_key)

    def offers(self, packages):
        out = {}
        for v, alias, debv in self.kernels:
            if package_name(v) in packages:
                out.setdefault(package_name(v), []).append((debv, [self._key(alias)]))
        return out


class Factory:
    """repo_factory for get_tree: one FakeRepo per suite name, created lazily
    (the discovery state's a FakeDiscovery)."""

    def __init__(self, **by_suite):
        self.repos = {}
        self.kwargs = by_suite

    def __call__(self, suite):
        if suite.name not in self.repos:
            cls = FakeDiscovery if suite.name == discover.STATE else FakeRepo
            self.repos[suite.name] = cls(suite, **self.kwargs.get(suite.name, {}))
        return self.repos[suite.name]

    def __getitem__(self, name):
        return self(Suite(name))


def bullseye(deb, versions=("5.10.999-1",), **kw):
    kw.setdefault("candidate", versions[0])
    return Factory(bullseye=dict(offers={"linux-source-5.10": {v: deb for v in versions}},
                                 **kw))


class NoApt:
    """A repo_factory that fails the test if apt is consulted at all."""

    def __call__(self, suite):
        raise AssertionError(f"apt consulted ({suite.name}) although a complete tree exists")


def writable_entries(top: Path) -> list[str]:
    bad = []
    for root, dirs, files in os.walk(top):
        for n in dirs + files + [""]:
            p = os.path.join(root, n) if n else root
            if not os.path.islink(p) and os.lstat(p).st_mode & 0o222:
                bad.append(p)
    return bad


# -- get_tree -------------------------------------------------------------------
def test_fetch_unpacks_marks_and_makes_read_only(cache, debs):
    f = bullseye(debs["5.10"])
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert tree == fetch.Tree(cache / "src/5.10/5.10.999-1/linux-source-5.10",
                              "5.10", "5.10.999-1")
    assert (tree.path / "mm/slub.c").is_file()
    assert unpack.makefile_version(tree.path / "Makefile") == "5.10"
    marker = unpack.read_marker(tree.path)
    assert marker["deb_version"] == "5.10.999-1"
    assert marker["sha256"] == sha256(debs["5.10"])
    # pristine tree is read-only, top dir included; symlinks survive
    assert writable_entries(tree.path) == []
    assert os.path.islink(tree.path / "include/linux/slab-link.h")
    if os.geteuid() != 0:
        with pytest.raises(PermissionError):
            (tree.path / "Makefile").write_text("oops")
        with pytest.raises(PermissionError):
            (tree.path / "new-file").write_text("oops")
    # temp dirs and the extracted tarball are gone, the verified .deb is kept
    assert [p.name for p in tree.path.parent.iterdir()] == ["linux-source-5.10"]
    debs_dir = cache / "apt/bullseye/debs"
    assert (debs_dir / "linux-source-5.10_5.10.999-1_all.deb").is_file()
    assert not list(debs_dir.glob(".download-*"))
    assert f["bullseye"].downloads == 1


def test_candidate_is_resolved_then_complete_tree_reused(cache, debs):
    f = bullseye(debs["5.10"])
    t1 = fetch.get_tree("5.10", repo_factory=f)
    assert t1.deb_version == "5.10.999-1"
    assert f["bullseye"].refreshes == [False]          # stale-check refresh only
    f2 = bullseye(debs["5.10"])
    t2 = fetch.get_tree("5.10", repo_factory=f2)
    assert t2 == t1
    assert f2["bullseye"].downloads == 0


def test_complete_tree_with_exact_version_needs_no_apt(cache, debs):
    t1 = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=bullseye(debs["5.10"]))
    mtime = (t1.path / "Makefile").stat().st_mtime_ns
    t2 = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=NoApt())
    assert t2 == t1
    assert (t2.path / "Makefile").stat().st_mtime_ns == mtime


def test_interrupted_unpack_is_redone(cache, debs):
    # A tree at the final place without marker (e.g. killed old-style unpack),
    # read-only to make removal harder, plus a leftover temp dir.
    final = unpack.tree_path("5.10", "5.10.999-1")
    (final / "mm").mkdir(parents=True)
    (final / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")   # no slub.c
    unpack.make_read_only(final)
    leftover = final.parent / ".unpack-abc123" / "tree"
    leftover.mkdir(parents=True)
    (leftover / "junk").write_text("x")
    unpack.make_read_only(leftover.parent)

    f = bullseye(debs["5.10"])
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert tree.path == final
    assert (final / "mm/slub.c").is_file()
    assert unpack.is_complete(final, "5.10.999-1")
    assert not (final.parent / ".unpack-abc123").exists()
    assert f["bullseye"].downloads == 1


def test_redo_uses_cached_deb_without_network(cache, debs):
    fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=bullseye(debs["5.10"]))
    final = unpack.tree_path("5.10", "5.10.999-1")
    unpack.remove_tree(final)                        # tree lost, .deb still cached
    # apt lists gone and no network: the recorded size/hash of the cached .deb suffice
    f = Factory(bullseye=dict(offline=True))
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert unpack.is_complete(tree.path, "5.10.999-1")
    assert f["bullseye"].downloads == 0


@pytest.mark.parametrize("first", ["corrupt", "truncated", "offline"])
def test_bad_download_is_deleted_and_fetched_again(cache, debs, first):
    f = bullseye(debs["5.10"], script=[first, "good"])
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert f["bullseye"].downloads == 2
    deb = cache / "apt/bullseye/debs/linux-source-5.10_5.10.999-1_all.deb"
    assert sha256(deb) == sha256(debs["5.10"])
    assert unpack.read_marker(tree.path)["sha256"] == sha256(debs["5.10"])


def test_persistently_corrupt_download_is_a_clear_error(cache, debs):
    f = bullseye(debs["5.10"], script=["corrupt", "truncated"] * 2)
    with pytest.raises(SlabconvError) as e:
        fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert e.value.exit_code == 4
    msg = str(e.value)
    assert msg.startswith("cannot fetch linux-source-5.10 from apt state 'bullseye' "
                          "(http://mirror.invalid/debian bullseye main; ")
    assert "failed after 4 tries" in msg and "truncated" in msg and "What to do:" in msg
    assert f["bullseye"].downloads == 4
    debs_dir = cache / "apt/bullseye/debs"
    assert not list(debs_dir.glob("*.deb")) and not list(debs_dir.glob(".download-*"))
    assert not unpack.tree_path("5.10", "5.10.999-1").exists()


def test_corrupt_cached_deb_is_replaced(cache, debs):
    fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=bullseye(debs["5.10"]))
    unpack.remove_tree(unpack.tree_path("5.10", "5.10.999-1"))
    cached = cache / "apt/bullseye/debs/linux-source-5.10_5.10.999-1_all.deb"
    data = cached.read_bytes()
    cached.write_bytes(data[:-10] + b"0123456789")           # same size, bad hash
    f = bullseye(debs["5.10"])
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert f["bullseye"].downloads == 1
    assert sha256(cached) == sha256(debs["5.10"])
    assert unpack.is_complete(tree.path, "5.10.999-1")


def test_deb_with_wrong_kernel_version_is_rejected(cache, debs):
    f = bullseye(debs["5.10-wrong"])
    with pytest.raises(SlabconvError) as e:
        fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert e.value.exit_code == 4 and "5.11" in str(e.value)
    parent = unpack.tree_path("5.10", "5.10.999-1").parent
    assert not parent.exists() or list(parent.iterdir()) == []


@pytest.mark.parametrize("version", ["5.11", "foo", "", "6.1.0"])
def test_unknown_version_lists_what_apt_offers(cache, debs, version):
    f = bullseye(debs["5.10"])
    with pytest.raises(SlabconvError) as e:
        fetch.get_tree(version, repo_factory=f)
    assert e.value.exit_code == 2
    assert str(e.value).endswith("apt offers: 5.10, 6.1, 6.12")
    assert f"no packaged kernel source for {version or '(empty)'};" in str(e.value)
    assert f["bullseye"].downloads == 0
    assert not (cache / "src").exists() or not list((cache / "src").iterdir())


def test_unknown_version_cli(cache, debs, monkeypatch, capsys):
    monkeypatch.setattr(apt, "open_repo", bullseye(debs["5.10"]))
    assert fetch_cli.main(["5.11"]) == 2
    err = capsys.readouterr().err
    assert "slabconv: error: no packaged kernel source for 5.11; apt offers: 5.10, 6.1, 6.12" in err


def test_cli_prints_tree_path_and_lists(cache, debs, monkeypatch, capsys):
    f = bullseye(debs["5.10"], versions=("5.10.999-1", "5.10.998-1"))
    monkeypatch.setattr(apt, "open_repo", f)
    assert fetch_cli.main(["5.10", "--deb-version", "5.10.998-1"]) == 0
    out = capsys.readouterr().out
    assert out == f"{cache}/src/5.10/5.10.998-1/linux-source-5.10\n"
    assert fetch_cli.main(["5.10", "--list"]) == 0
    assert capsys.readouterr().out == "5.10.999-1 candidate\n5.10.998-1\n"


def test_unknown_deb_version_refreshes_then_fails_with_offered_list(cache, debs):
    f = bullseye(debs["5.10"], versions=("5.10.999-1", "5.10.998-1"))
    with pytest.raises(SlabconvError) as e:
        fetch.get_tree("5.10", deb_version="5.10.1-1", repo_factory=f)
    assert e.value.exit_code == 2
    assert "linux-source-5.10 has no version 5.10.1-1; apt offers: 5.10.999-1, 5.10.998-1" \
        == str(e.value)
    assert f["bullseye"].refreshes == [True]


def test_new_deb_version_found_after_forced_refresh(cache, debs):
    f = bullseye(debs["5.10"], versions=("5.10.999-1",), hidden=("5.10.999-1",))
    tree = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
    assert f["bullseye"].refreshes == [True]
    assert unpack.is_complete(tree.path, "5.10.999-1")


def test_bad_deb_version_string_is_rejected(cache):
    for bad in ("../../etc", "5.10/1", ""):
        with pytest.raises(SlabconvError) as e:
            fetch.get_tree("5.10", deb_version=bad, repo_factory=NoApt())
        assert e.value.exit_code == 2


def test_offline_candidate_falls_back_to_newest_complete_tree(cache, debs):
    f = bullseye(debs["5.10"], versions=("5.10.998-1", "5.10.999-1", "5.10.1000-1"))
    for v in ("5.10.998-1", "5.10.1000-1", "5.10.999-1"):
        fetch.get_tree("5.10", deb_version=v, repo_factory=f)
    # a newer candidate that cannot be downloaded
    off = bullseye(debs["5.10"], versions=("5.10.1001-1",), script=["offline"] * 4)
    tree = fetch.get_tree("5.10", repo_factory=off)
    assert tree.deb_version == "5.10.1000-1"       # dpkg order, not string order
    # lists cannot be refreshed and do not exist at all
    f2 = Factory(bullseye=dict(offline=True))
    assert fetch.get_tree("5.10", repo_factory=f2).deb_version == "5.10.1000-1"


def test_offline_without_any_tree_is_exit_4(cache, debs):
    f = bullseye(debs["5.10"], script=["offline"] * 4)
    with pytest.raises(SlabconvError) as e:
        fetch.get_tree("5.10", repo_factory=f)
    assert e.value.exit_code == 4 and "What to do:" in str(e.value)


def test_a_version_comes_from_the_state_of_the_suite_that_offers_it(cache, debs, capsys):
    f = Factory(bookworm=dict(offers={"linux-source-6.1": {"6.1.99-1": debs["6.1"]}},
                              candidate="6.1.99-1"))
    tree = fetch.get_tree("6.1", repo_factory=f)
    assert tree.path == cache / "src/6.1/6.1.99-1/linux-source-6.1"
    assert f["bookworm"].downloads == 1 and set(f.repos) == {"discover", "bookworm"}
    assert f["bookworm"].suite.sources == (f"deb {MIRROR} bookworm main",
                                           f"deb {SECURITY} bookworm-security main")
    assert (cache / "apt/bookworm/debs/linux-source-6.1_6.1.99-1_all.deb").is_file()
    assert "[fetch] kernel 6.1 from bookworm-security (6.1.99-1): apt state 'bookworm'" \
        in capsys.readouterr().err


def test_concurrent_get_tree_calls_do_not_collide(cache, debs):
    f = bullseye(debs["5.10"])
    orig = FakeRepo.download

    def slow_download(self, *a):
        time.sleep(0.3)
        return orig(self, *a)

    f["bullseye"].download = slow_download.__get__(f["bullseye"])
    results, errors = [], []

    def worker():
        try:
            results.append(fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f))
        except BaseException as e:               # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({r.path for r in results}) == 1
    assert f["bullseye"].downloads == 1
    assert unpack.is_complete(results[0].path, "5.10.999-1")


def test_concurrent_processes_do_not_collide(cache, debs, tmp_path):
    """Two processes unpacking the same tree: one unpacks, the other reuses."""
    script = tmp_path / "worker.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
sys.path.insert(0, {str(Path(fetch.__file__).resolve().parent.parent)!r})
import fetch, test_fetch
f = test_fetch.bullseye(__import__('pathlib').Path({str(debs['5.10'])!r}))
orig = test_fetch.FakeRepo.download
def slow(self, *a):
    time.sleep(0.5)
    return orig(self, *a)
test_fetch.FakeRepo.download = slow
t = fetch.get_tree("5.10", deb_version="5.10.999-1", repo_factory=f)
print(t.path, f["bullseye"].downloads)
""")
    env = dict(os.environ, SLABCONV_CACHE=str(cache))
    procs = [subprocess.Popen(["/usr/bin/python3", str(script)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    paths_, counts = zip(*(o[0].split() for o in outs))
    assert len(set(paths_)) == 1
    assert sorted(counts) == ["0", "1"]


# -- pieces ---------------------------------------------------------------------
def test_remove_tree_handles_read_only_trees(tmp_path):
    t = tmp_path / "t"
    (t / "a" / "b").mkdir(parents=True)
    (t / "a" / "b" / "f").write_text("x")
    os.symlink("/nonexistent", t / "a" / "dangling")
    unpack.make_read_only(t)
    assert stat.S_IMODE(os.stat(t / "a").st_mode) & 0o222 == 0
    unpack.remove_tree(t)
    assert not t.exists()


@pytest.mark.parametrize("a,b", [
    ("5.10.259-1", "5.10.262-1"), ("5.10.9-1", "5.10.10-1"), ("1.0~rc1-1", "1.0-1"),
    ("6.12.118-1~deb12u1", "6.12.118-1"), ("2.0", "1:0.1"), ("1.0-1", "1.0-1+b1"),
    ("1.0", "1.0-0.1"), ("6.1.180-1~deb11u1", "6.1.192-3"), ("1.0a", "1.0b"),
])
def test_debian_version_order(a, b):
    assert unpack.compare_versions(a, b) < 0 and unpack.compare_versions(b, a) > 0
    assert unpack.compare_versions(a, a) == 0 and unpack.compare_versions("1.0", "0:1.0") == 0
    assert max([b, a], key=unpack.version_key) == b


POLICY = """linux-source-6.1:
  Installed: (none)
  Candidate: 6.1.192-3
  Version table:
     6.1.192-3 500
        500 http://mirror.invalid/debian-security bookworm-security/main amd64 Packages
 *** 6.1.192-2 500
        500 http://mirror.invalid/debian-security bookworm-security/main amd64 Packages
        100 /var/lib/dpkg/status
     6.1.176-1 500
        500 http://mirror.invalid/debian bookworm/main amd64 Packages
"""

SHOW = """Package: linux-source-5.10
Source: linux
Version: 5.10.259-1
Installed-Size: 121212
Depends: binutils, xz-utils
Description: Linux kernel source for version 5.10 with Debian patches
 This package provides source code for the Linux kernel version 5.10.
 Version: 1.0
Filename: pool/updates/main/l/linux/linux-source-5.10_5.10.259-1_all.deb
Size: 121927376
SHA256: c277a02b2dd31ff68d225a74569cc30707150945c94e24e5ee777d85e2c2611f

Package: linux-source-5.10
Version: 5.10.262-1
Filename: pool/updates/main/l/linux/linux-source-5.10_5.10.262-1_all.deb
Size: 121947504
SHA256: 4f01148344ca9e5c1c9743ab4a084cf61c437548f803443ccc044602278b52bc
"""


def test_parse_apt_output():
    assert apt.parse_policy(POLICY) == ("6.1.192-3", ["6.1.192-3", "6.1.192-2", "6.1.176-1"])
    assert apt.parse_policy("") == (None, [])
    assert apt.parse_policy("x:\n  Installed: (none)\n  Candidate: (none)\n")[0] is None
    i = apt.parse_show(SHOW, "linux-source-5.10", "5.10.259-1")
    assert i == DebInfo("linux-source-5.10", "5.10.259-1",
                        "c277a02b2dd31ff68d225a74569cc30707150945c94e24e5ee777d85e2c2611f",
                        121927376, "linux-source-5.10_5.10.259-1_all.deb")
    assert apt.parse_show(SHOW, "linux-source-5.10", "5.10.262-1").size == 121947504
    assert apt.parse_show(SHOW, "linux-source-5.10", "1.0") is None
    assert apt.parse_search("linux-source-6.1 - Linux kernel source for version 6.1\n"
                            "linux-source-6.12 - Linux kernel source\n") == ["6.1", "6.12"]


def bullseye_state():
    cat = discover.Catalog([], {"oldoldstable": "bullseye",
                                "oldoldstable-security": "bullseye-security"})
    return discover.state_for(discover.Offer("5.10", "5.10.999-1", "oldoldstable-security",
                                             "bullseye-security", SECURITY), cat)


def test_private_apt_state_layout(cache):
    r = apt.AptRepo(bullseye_state())
    r._prepare()
    state = cache / "apt/bullseye"
    sources = (state / "sources.list").read_text()
    assert sources == (f"deb {MIRROR} bullseye main\n"
                       f"deb {SECURITY} bullseye-security main\n")
    conf = (state / "apt.conf").read_text()
    assert 'Acquire::Languages "none";' in conf
    assert 'Acquire::AllowReleaseInfoChange::Codename "true";' in conf
    opts = " ".join(r.options())
    for o in (f"Dir::Etc::sourcelist={state}/sources.list", "Dir::Etc::sourceparts=/dev/null",
              f"Dir::State::Lists={state}/lists", f"Dir::Cache={state}/cache"):
        assert o in opts
    assert r.is_stale() and r.lists_age() is None


def test_private_lists_refreshed_when_missing_or_older_than_a_day(cache, monkeypatch):
    r = apt.AptRepo(bullseye_state())
    calls = []
    outcome = {"fail": False}

    def fake_update(self):
        calls.append(1)
        if outcome["fail"]:
            raise FetchError("apt-get update failed: W: Failed to fetch", network=True)
        self._prepare()
        (self._lists / "mirror.invalid_debian_dists_bullseye_main_binary-amd64_Packages.lz4"
         ).write_text("")
        return True                               # every index came

    monkeypatch.setattr(apt.AptRepo, "_update", fake_update)
    r.refresh()                                   # no lists: update
    assert len(calls) == 1 and not r.is_stale()
    r.refresh()                                   # fresh: nothing
    assert len(calls) == 1
    old = time.time() - apt.MAX_LIST_AGE - 60
    os.utime(r._stamp, (old, old))
    assert r.is_stale()
    r.refresh()                                   # stale: update
    assert len(calls) == 2 and not r.is_stale()
    r.refresh(force=True)                         # forced: always
    assert len(calls) == 3
    os.utime(r._stamp, (old, old))
    outcome["fail"] = True
    r.refresh()                                   # stale + offline: warn, keep old lists
    assert len(calls) == 4 and r.is_stale()
    with pytest.raises(FetchError) as e:          # forced + offline: error
        r.refresh(force=True)
    assert e.value.exit_code == 4 and e.value.network


def test_suite_preference():
    """The stable suites (stable first; a security update is its release),
    then testing, then backports (of stable first), then unstable."""
    order = ["stable", "stable-security", "oldstable", "oldstable-security", "oldoldstable",
             "testing", "testing-security", "stable-backports", "oldstable-backports",
             "unstable"]
    ranks = [suites.rank(s) for s in order]
    assert ranks == sorted(ranks) and ranks[0] == ranks[1] and ranks[2] == ranks[3]
    assert ranks[5] == ranks[6] and len(set(ranks)) == 7
    assert [suites.kind(s) for s in ("oldoldstable-security", "testing-security",
                                     "oldstable-backports", "unstable")] == \
        ["stable", "testing", "backports", "unstable"]
    assert suites.discovery_suites()[:3] == ["oldoldstable", "oldoldstable-backports",
                                             "oldoldstable-security"]
    assert len(suites.discovery_suites()) == 15
    assert sorted(["6.12", "5.10", "6.1"], key=suites.version_key) == ["5.10", "6.1", "6.12"]
    assert package_name("6.12") == "linux-source-6.12"


# -- network ---------------------------------------------------------------------
@pytest.mark.network
def test_real_bullseye_candidate_via_private_apt(cache, monkeypatch):
    monkeypatch.delenv("SLABCONV_APT_MIRROR")                 # the machine's mirrors
    repo = fetch._repo_for("5.10", apt.open_repo)
    repo.refresh()
    cand = repo.candidate("linux-source-5.10")
    assert cand and cand.startswith("5.10.")
    assert cand in repo.versions("linux-source-5.10")
    i = repo.info("linux-source-5.10", cand)
    assert i is not None and len(i.sha256) == 64 and i.size > 50_000_000
    assert "5.10" in repo.kernel_versions()
    assert (cache / "apt/bullseye/lists").is_dir()
    assert not list((cache / "src").glob("*/*/linux-source-*")) if (cache / "src").exists() else True
