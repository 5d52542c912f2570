"""Kernel discovery (fetch/discover.py) with the real apt against a Debian
archive on the loopback (tests/fakemirror.py) holding several suites with
several linux-source versions: a backport, a version in two suites, a
security suite there only by codename, suites the mirror lacks (404).

    alias                  codename            linux-source
    oldoldstable           bullseye            5.10 5.10.900-1
    (none)                 bullseye-security   5.10 5.10.999-1, 6.1 6.1.5-1~deb11u1
    oldstable              bookworm            6.1 6.1.10-1
    oldstable-security     bookworm-security   6.1 6.1.20-1, 6.12 6.12.5-1~deb12u1
    stable                 trixie              6.12 6.12.9-1
    stable-backports       trixie-backports    7.2 7.2.1-1~bpo13+1, 7.3 7.3.4-1~bpo13+1
    testing                forky               7.2 7.2.1-1
    unstable               sid                 7.2 7.2.2-1, 7.4 7.4.1-1

The mirror is the machine's through $SLABCONV_APT_MIRROR, or through a fake
apt configuration read by fetch/mirrors.py."""
from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fetch  # noqa: E402
from base.log import SlabconvError  # noqa: E402
from cli import main as cli  # noqa: E402
from fakemirror import Archive, Mirror, build_deb  # noqa: E402
from fetch import apt, discover, mirrors, unpack  # noqa: E402

# (codename, alias or None, [(kernel version, package version)])
SUITES = [
    ("bullseye", "oldoldstable", [("5.10", "5.10.900-1")]),
    ("bullseye-security", None, [("5.10", "5.10.999-1"), ("6.1", "6.1.5-1~deb11u1")]),
    ("bookworm", "oldstable", [("6.1", "6.1.10-1")]),
    ("bookworm-security", "oldstable-security", [("6.1", "6.1.20-1"),
                                                 ("6.12", "6.12.5-1~deb12u1")]),
    ("trixie", "stable", [("6.12", "6.12.9-1")]),
    ("trixie-backports", "stable-backports", [("7.2", "7.2.1-1~bpo13+1"),
                                              ("7.3", "7.3.4-1~bpo13+1")]),
    ("forky", "testing", [("7.2", "7.2.1-1")]),
    ("sid", "unstable", [("7.2", "7.2.2-1"), ("7.4", "7.4.1-1")]),
]
VERSIONS = ["5.10", "6.1", "6.12", "7.2", "7.3", "7.4"]
TABLE = """\
5.10  oldoldstable (bullseye)                    5.10.900-1
5.10  oldoldstable-security (bullseye-security)  5.10.999-1        *
6.1   oldstable (bookworm)                       6.1.10-1
6.1   oldstable-security (bookworm-security)     6.1.20-1          *
6.1   oldoldstable-security (bullseye-security)  6.1.5-1~deb11u1
6.12  stable (trixie)                            6.12.9-1          *
6.12  oldstable-security (bookworm-security)     6.12.5-1~deb12u1
7.2   testing (forky)                            7.2.1-1           *
7.2   stable-backports (trixie-backports)        7.2.1-1~bpo13+1
7.2   unstable (sid)                             7.2.2-1
7.3   stable-backports (trixie-backports)        7.3.4-1~bpo13+1   *
7.4   unstable (sid)                             7.4.1-1           *
"""
ABSENT = ["oldoldstable-backports", "oldstable-backports", "stable-security",
          "testing-backports", "testing-security", "unstable-backports", "unstable-security"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    missing = [t for t in ("apt-get", "dpkg-deb") if not shutil.which(t)]
    assert not missing, f"{', '.join(missing)} not found: install the Debian packages apt and dpkg"
    from test_fetch import build_deb as kernel_deb
    d = tmp_path_factory.mktemp("discover-mirror")
    a = Archive(d / "archive")
    for codename, alias, offers in SUITES:
        debs = []
        for v, debv in offers:
            where = d / f"{codename}-{v}"
            where.mkdir()
            if (v, debv) in (("7.3", "7.3.4-1~bpo13+1"), ("7.4", "7.4.1-1")):   # fetched below
                debs.append(kernel_deb(where, v, deb_version=debv))
            else:
                debs.append(build_deb(where, f"linux-source-{v}", debv, "all",
                                      {"usr/share/doc/x": b"x\n"}))
        a.add(codename, debs, alias=alias, not_automatic=codename.endswith("-backports"))
    return a


@pytest.fixture
def cache(tmp_path, monkeypatch):
    c = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(c))
    monkeypatch.setenv("SLABCONV_FETCH_PAUSE", "0")
    monkeypatch.setenv("SLABCONV_APT_RETRIES", "0")
    monkeypatch.setenv("SLABCONV_APT_MIRROR", "")
    yield c
    if c.exists():
        unpack.remove_tree(c)


@pytest.fixture
def mirror(archive, cache, monkeypatch):
    with Mirror(archive.root) as m:
        monkeypatch.setenv("SLABCONV_APT_MIRROR", m.value)
        yield m


def test_versions_lists_every_version_suite_and_package(mirror, capsys):
    assert cli.main(["versions"]) == 0
    out, err = capsys.readouterr()
    assert out == TABLE
    assert "not there by alias, asking by codename: bullseye-backports, " \
           "bullseye-security" in err
    last = err.splitlines()[-1]
    assert re.match(r"^\[fetch\] 6 kernel versions in 8 suites, discovered \d{4}-\d\d-\d\d "
                    r"\d\d:\d\d; \* the suite --kernel X.Y takes; not on the mirror: "
                    + re.escape(", ".join(ABSENT)) + r" \(\d+\.\ds\)$", last), last
    cat = discover.catalog()
    assert cat.versions() == VERSIONS and cat.absent == ABSENT
    assert cat.suites["oldoldstable-security"] == "bullseye-security"


def test_a_version_takes_the_preferred_suite(mirror):
    cat = discover.catalog()
    got = {v: (cat.choose(v).describe(), discover.state_for(cat.choose(v), cat))
           for v in VERSIONS}
    assert {v: d for v, (d, _) in got.items()} == {
        "5.10": "5.10 from bullseye-security (5.10.999-1)",
        "6.1": "6.1 from bookworm-security (6.1.20-1)",
        "6.12": "6.12 from trixie (6.12.9-1)",             # stable over oldstable-security
        "7.2": "7.2 from forky (7.2.1-1)",                  # testing over backports, unstable
        "7.3": "7.3 from trixie-backports (7.3.4-1~bpo13+1)",
        "7.4": "7.4 from sid (7.4.1-1)"}
    u, s = mirror.url, mirror.security_url
    assert {v: (st.name, st.sources) for v, (_, st) in got.items()} == {
        "5.10": ("bullseye", (f"deb [trusted=yes] {u} bullseye main",
                              f"deb [trusted=yes] {s} bullseye-security main")),
        "6.1": ("bookworm", (f"deb [trusted=yes] {u} bookworm main",
                             f"deb [trusted=yes] {s} bookworm-security main")),
        "6.12": ("trixie", (f"deb [trusted=yes] {u} trixie main",)),
        "7.2": ("forky", (f"deb [trusted=yes] {u} forky main",)),
        "7.3": ("trixie-backports", (f"deb [trusted=yes] {u} trixie-backports main",)),
        "7.4": ("sid", (f"deb [trusted=yes] {u} sid main",))}
    assert cat.latest() == "7.4" and fetch.kernel("latest") == "7.4"
    assert fetch.kernel("6.1") == "6.1"


def test_a_backport_is_fetched_through_its_own_suites_state(mirror, cache, capsys):
    tree = fetch.get_tree("7.3")
    assert tree.deb_version == "7.3.4-1~bpo13+1" and unpack.is_complete(tree.path,
                                                                         tree.deb_version)
    err = capsys.readouterr().err
    assert "[fetch] kernel 7.3 from trixie-backports (7.3.4-1~bpo13+1): apt state " \
           "'trixie-backports'" in err
    assert (cache / "apt/trixie-backports/sources.list").read_text() == \
        f"deb [trusted=yes] {mirror.url} trixie-backports main\n"
    debs = [r for r in mirror.requests if r.endswith(".deb")]
    assert len(debs) == 1 and "/pool/main/trixie-backports/" in debs[0]


def test_latest_and_deb_versions(mirror, capsys):
    cand, versions = fetch.deb_versions("latest")
    assert (cand, versions) == ("7.4.1-1", ["7.4.1-1"])
    assert "[fetch] latest: 7.4 from sid (7.4.1-1)" in capsys.readouterr().err


def test_kernel_latest_on_the_command_line(mirror, cache, capsys):
    import fetch.__main__ as fetch_cli
    from regen import source
    assert fetch_cli.main(["latest"]) == 0
    assert capsys.readouterr().out == f"{cache}/src/7.4/7.4.1-1/linux-source-7.4\n"
    src = source.resolve("latest", None, "latest")
    assert (src.version, src.source_id) == ("7.4", "linux-source-7.4_7.4.1-1")
    assert (cache / "apt/sid/sources.list").read_text() == \
        f"deb [trusted=yes] {mirror.url} sid main\n"


@pytest.mark.parametrize("version", ["9.9", "5.11", "linux"])
def test_an_unknown_version_lists_the_real_ones(mirror, capsys, version):
    assert cli.main(["fetch", version]) == 2
    err = capsys.readouterr().err
    assert f"slabconv: error: no packaged kernel source for {version}; apt offers: " \
           f"{', '.join(VERSIONS)}\n" in err


def test_fetch_takes_the_kernel_as_the_other_commands_do(mirror, capsys):
    """`slabconv fetch --kernel X.Y` as `regen --kernel X.Y`; the same
    version given twice in two ways is one, two different ones an error."""
    assert cli.main(["fetch", "--kernel", "9.9"]) == 2
    assert "no packaged kernel source for 9.9; apt offers: " in capsys.readouterr().err
    assert cli.main(["fetch", "9.9", "--kernel", "9.9"]) == 2
    assert "no packaged kernel source for 9.9" in capsys.readouterr().err
    assert cli.main(["fetch", "7.4", "--kernel", "6.1"]) == 2
    assert "two kernels given, 7.4 and --kernel 6.1: give one" in capsys.readouterr().err


def catalog_time(cache: Path, when: float) -> None:
    f = cache / "apt/discover/catalog.json"
    d = json.loads(f.read_text())
    d["time"] = when
    f.write_text(json.dumps(d))


def test_the_discovery_is_reused_for_a_day_then_made_again(mirror, cache, capsys):
    first = discover.catalog()
    n = len(mirror.requests)
    assert n > 0
    catalog_time(cache, time.time() - 23 * 3600)
    assert discover.catalog().versions() == VERSIONS and len(mirror.requests) == n
    assert fetch.offered_versions() == VERSIONS and len(mirror.requests) == n
    catalog_time(cache, time.time() - 25 * 3600)
    again = discover.catalog()
    assert len(mirror.requests) > n and again.versions() == VERSIONS
    assert again.time > first.time
    # asked by codename at once, the second time: one apt-get update
    assert capsys.readouterr().err.count("apt-get update: private apt lists 'discover'") == 3
    # a day later, the mirror gone: the old discovery, with a warning
    catalog_time(cache, time.time() - 25 * 3600)
    mirror.fail_first = 10 ** 6
    assert discover.catalog().versions() == VERSIONS
    assert "warning: cannot refresh the kernel discovery" in capsys.readouterr().err


def test_a_network_failure_is_retried_not_taken_for_a_missing_suite(archive, cache,
                                                                     monkeypatch, capsys):
    with Mirror(archive.root, fail_first=4) as m:
        monkeypatch.setenv("SLABCONV_APT_MIRROR", m.value)
        cat = discover.catalog()
    assert cat.versions() == VERSIONS and cat.absent == ABSENT
    assert "failed (try 1 of 4)" in capsys.readouterr().err


def test_the_mirror_of_a_fake_apt_configuration_is_used(archive, cache, tmp_path,
                                                        monkeypatch):
    """The machine's configuration (here a fake /etc/apt: a deb822 archive,
    a one-line security entry, a disabled file) gives the mirror."""
    with Mirror(archive.root) as m:
        etc = tmp_path / "etc-apt"
        (etc / "sources.list.d").mkdir(parents=True)
        (etc / "sources.list").write_text(f"deb [trusted=yes] {m.security_url} "
                                          f"bookworm-security main\n")
        (etc / "sources.list.d/debian.sources").write_text(
            f"Types: deb\nURIs: {m.url}\nSuites: bookworm bookworm-updates\n"
            f"Components: main\nTrusted: yes\n")
        (etc / "sources.list.d/debian.sources.disabled").write_text(
            "Types: deb\nURIs: http://127.0.0.1:9/debian\nSuites: bookworm\nComponents: main\n")
        (tmp_path / "os-release").write_text("VERSION_CODENAME=bookworm\n")
        monkeypatch.setattr(mirrors, "APT_ETC", etc)
        monkeypatch.setattr(mirrors, "OS_RELEASE", tmp_path / "os-release")
        assert discover.catalog().versions() == VERSIONS
        assert m.requests


def test_a_mirror_with_no_debian_suite_is_an_error(cache, tmp_path, monkeypatch):
    empty = Archive(tmp_path / "empty")
    with Mirror(empty.root) as m:
        monkeypatch.setenv("SLABCONV_APT_MIRROR", m.value)
        with pytest.raises(SlabconvError) as e:
            discover.catalog()
    assert e.value.exit_code == 4
    assert "no suite is there (the Release of each: 404)" in str(e.value)


# -- apt-get update's output -------------------------------------------------------
SIGNED = """\
Get:1 http://mirror.invalid/debian stable InRelease [150 kB]
Err:2 http://mirror.invalid/debian stable-backports Release
  404  Not Found [IP: 192.0.2.1 80]
Err:3 http://mirror.invalid/debian-security stable-security Release
  Could not connect to mirror.invalid:80 (192.0.2.1), connection timed out
E: The repository 'http://mirror.invalid/debian stable-backports Release' does not have a Release file.
E: Failed to fetch http://mirror.invalid/debian-security/dists/stable-security/InRelease  Could not connect
"""
TRUSTED = """\
Ign:1 http://mirror.invalid/debian stable-backports InRelease
Hit:2 http://mirror.invalid/debian stable InRelease
Ign:3 http://mirror.invalid/debian stable-backports Release
Err:4 http://mirror.invalid/debian stable-backports/main amd64 Packages
  404  File not found [IP: 127.0.0.1 1]
E: Failed to fetch http://mirror.invalid/debian/dists/stable-backports/main/binary-amd64/Packages  404  File not found [IP: 127.0.0.1 1]
E: Some index files failed to download. They have been ignored, or old ones used instead.
"""


def test_a_404_is_a_missing_suite_anything_else_a_failure():
    present, absent, failed = apt.probe_result(SIGNED)
    assert present == {"http://mirror.invalid/debian stable"}
    assert absent == {"http://mirror.invalid/debian stable-backports"}
    assert failed == {"http://mirror.invalid/debian-security stable-security"}
    present, absent, failed = apt.probe_result(TRUSTED)
    assert (present, absent, failed) == ({"http://mirror.invalid/debian stable"},
                                         {"http://mirror.invalid/debian stable-backports"},
                                         set())
    assert apt.probe_result("E: The repository 'http://mirror.invalid/debian stable Release' "
                            "is not signed.\n")[2] == {"?"}
