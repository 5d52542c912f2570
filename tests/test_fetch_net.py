"""Network faults (issue 29): the retries of fetch/net.py, the error after
the last try, an index broken in an unrelated suite, and runs whose
downloads are cached making no network access.

The mirror tests run the real apt-get against a Debian archive served on
the loopback by tests/fakemirror.py (the kernel source and the i386
busybox as tiny .deb files), set as the machine's mirror through
$SLABCONV_APT_MIRROR, as a user behind a local mirror sets it.  Retries without pauses (SLABCONV_FETCH_PAUSE=0) and, but
in the test of apt's own retries, without apt's (SLABCONV_APT_RETRIES=0),
so that every retry is ours and counted."""
from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fetch  # noqa: E402
from boot import busybox  # noqa: E402
from fakemirror import ELF_ARM64, ELF_I386, Archive, Mirror, build_deb  # noqa: E402
from fetch import net, suites, unpack  # noqa: E402
from fetch.net import FetchError  # noqa: E402
from cli import main as cli, prefetch  # noqa: E402
from base.log import SlabconvError  # noqa: E402

DEBV = "5.10.999-1"
BB_VERSION = "1:1.35.0-4+deb12u1+b1"


# -- the retry helper on its own ---------------------------------------------------
@pytest.fixture
def slept(monkeypatch):
    calls = []
    monkeypatch.setattr(net, "sleep", calls.append)
    for v in ("SLABCONV_FETCH_TRIES", "SLABCONV_FETCH_PAUSE", "SLABCONV_APT_RETRIES"):
        monkeypatch.delenv(v, raising=False)
    return calls


def failing(n, error=lambda i: FetchError(f"E: fault {i}\ndetail", network=True)):
    calls = []

    def action():
        calls.append(1)
        if len(calls) <= n:
            raise error(len(calls))
        return "done"
    return action, calls


def test_policy_backs_off_15_30_60_and_says_each_retry_once(slept, capsys):
    action, calls = failing(3)
    assert net.call(action, "the thing") == "done"
    assert len(calls) == 4 and slept == [15.0, 30.0, 60.0]
    err = capsys.readouterr().err.splitlines()
    assert err == [f"[fetch] the thing failed (try {i} of 4): E: fault {i}; trying again in {w}s"
                   for i, w in ((1, 15), (2, 30), (3, 60))]
    assert net.apt_options() == ["-o", "Acquire::Retries=3", "-o", "Acquire::Retries::Delay=false"]


def test_after_the_last_try_the_error_says_how_many(slept, capsys):
    action, calls = failing(99)
    with pytest.raises(FetchError) as e:
        net.call(action, "the thing")
    assert len(calls) == 4 and e.value.exit_code == 4 and e.value.network
    assert str(e.value).startswith("the thing failed after 4 tries (105s of pauses): E: fault 4")
    assert len(capsys.readouterr().err.splitlines()) == 3


def test_a_lasting_failure_is_not_retried(slept):
    action, calls = failing(1, lambda i: FetchError("NO_PUBKEY", network=True, transient=False))
    with pytest.raises(FetchError):
        net.call(action, "the thing")
    assert len(calls) == 1 and slept == []


def test_the_policy_is_configurable(slept, monkeypatch):
    monkeypatch.setenv("SLABCONV_FETCH_TRIES", "2")
    monkeypatch.setenv("SLABCONV_FETCH_PAUSE", "0.5")
    monkeypatch.setenv("SLABCONV_APT_RETRIES", "0")
    action, calls = failing(5)
    with pytest.raises(FetchError, match="after 2 tries"):
        net.call(action, "x")
    assert slept == [0.5] and net.apt_options()[:2] == ["-o", "Acquire::Retries=0"]
    monkeypatch.setenv("SLABCONV_FETCH_TRIES", "many")
    with pytest.raises(SlabconvError) as e:
        net.policy()
    assert e.value.exit_code == 2


def test_forbidden_network_fails_at_once(slept):
    action, calls = failing(0)
    net.forbid("the run has started building")
    with pytest.raises(FetchError) as e:
        net.call(action, "apt-get update of x")
    assert calls == [] and "would go to the network, but the run has started building" \
        in str(e.value)
    net.allow()
    assert net.call(action, "x") == "done"


def test_index_failures_name_the_suites():
    from fetch.apt import index_failures
    out = ("Hit:1 http://mirror.invalid/debian bookworm InRelease\n"
           "Get:2 http://mirror.invalid/debian-security bookworm-security InRelease [48 kB]\n"
           "Err:3 http://mirror.invalid/debian-security bookworm-security/main i386 Packages\n"
           "  File has unexpected size (371952 != 372316). Mirror sync in progress? [IP: x]\n"
           "E: Failed to fetch http://mirror.invalid/debian-security/dists/bookworm-security/"
           "main/binary-i386/Packages.xz  File has unexpected size (371952 != 372316). "
           "Mirror sync in progress?\n")
    seen, failed = index_failures(out)
    assert failed == {"http://mirror.invalid/debian-security bookworm-security"}
    assert seen - failed == {"http://mirror.invalid/debian bookworm"}


# -- the fake mirror ---------------------------------------------------------------
def kernel_deb(dest: Path) -> Path:
    from test_fetch import build_deb as build_kernel_deb
    return build_kernel_deb(dest, "5.10", deb_version=DEBV)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """bullseye (another package) and bullseye-security (linux-source-5.10),
    oldoldstable and oldoldstable-security by alias, for amd64; bookworm
    (busybox-static:i386 and :arm64, the guests') and bookworm-security
    (another package) for i386."""
    missing = [t for t in ("apt-get", "dpkg-deb") if not shutil.which(t)]
    assert not missing, f"{', '.join(missing)} not found: install the Debian packages apt and dpkg"
    d = tmp_path_factory.mktemp("mirror")
    kdeb = kernel_deb(d)
    bb = build_deb(d, "busybox-static", BB_VERSION, "i386", {"bin/busybox": ELF_I386})
    bb64 = build_deb(d, "busybox-static", BB_VERSION, "arm64", {"bin/busybox": ELF_ARM64})
    a = Archive(d / "archive")
    other = build_deb(d, "base-files", "1", "all", {"etc/slabconv-test": b"x\n"})
    a.add("bullseye", [other], alias="oldoldstable")
    a.add("bullseye-security", [kdeb], alias="oldoldstable-security")
    a.add("bookworm", [bb, bb64], archs=("i386", "arm64"))
    a.add("bookworm-security", [other], archs=("i386",))
    return a


@pytest.fixture
def world(tmp_path, monkeypatch, archive):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(cache))
    monkeypatch.setenv("SLABCONV_FETCH_PAUSE", "0")
    monkeypatch.setenv("SLABCONV_APT_RETRIES", "0")
    monkeypatch.setenv("SLABCONV_APT_MIRROR", "")        # serve() sets it; restored after
    yield cache
    if cache.exists():
        unpack.remove_tree(cache)


def serve(archive, **faults) -> Mirror:
    """The fake mirror, as the machine's mirror ($SLABCONV_APT_MIRROR)."""
    m = Mirror(archive.root, **faults)
    os.environ["SLABCONV_APT_MIRROR"] = m.value       # the world fixture removes it
    return m


def discovered(m: Mirror) -> Mirror:
    """m, the kernel discovery made (and cached) on it; every fault then."""
    assert fetch.offered_versions() == ["5.10"]
    m.fail_first = 10 ** 6
    return m


def retries(err: str) -> list[str]:
    return re.findall(r"^\[fetch\] .* failed \(try (\d) of 4\).*$", err, re.M)


def test_failed_requests_are_retried(world, archive, capsys):
    with serve(archive, fail_first=3) as m:
        tree = fetch.get_tree("5.10", deb_version=DEBV)
    assert unpack.is_complete(tree.path, DEBV)
    err = capsys.readouterr().err
    tries = retries(err)
    assert 1 <= len(tries) <= 3 and tries == [str(i) for i in range(1, len(tries) + 1)], err
    assert "503" in err and sum(r.endswith("InRelease") for r in m.requests) >= 2


def test_a_truncated_index_is_retried(world, archive, capsys):
    cut = "/dists/bullseye-security/main/binary-amd64/Packages"
    with serve(archive, truncate_once=(cut,)) as m:
        fetch.get_tree("5.10", deb_version=DEBV)
    err = capsys.readouterr().err
    assert retries(err) == ["1"], err
    line = next(x for x in err.splitlines() if "(try 1 of 4)" in x)
    assert "File has unexpected size" in line and "Mirror sync in progress?" in line
    assert "apt-get update of the private apt lists 'bullseye'" in line
    assert m.requests.count("/debian-security" + cut) == 2


def test_the_error_after_the_last_try_names_suite_package_and_what_to_do(world, archive,
                                                                          capsys):
    with discovered(serve(archive)) as m:
        assert cli.main(["fetch", "5.10", "--deb-version", DEBV]) == 4
    err = capsys.readouterr().err
    assert retries(err) == ["1", "2", "3"]
    msg = err[err.index("slabconv: error: "):]
    assert msg.startswith(f"slabconv: error: cannot fetch linux-source-5.10 from apt state "
                          f"'bullseye' ({m.url} bullseye main; {m.security_url} "
                          f"bullseye-security main): apt-get update of the private apt "
                          f"lists 'bullseye' ")
    assert "failed after 4 tries" in msg and "503" in msg
    assert "What to do: the Debian mirror may be in the middle of a sync" in msg
    assert not (world / "src" / "5.10" / DEBV).exists()


def test_a_discovery_that_fails_says_where_and_what_to_do(world, archive, capsys):
    with serve(archive, fail_first=10 ** 6) as m:
        assert cli.main(["fetch", "5.10", "--deb-version", DEBV]) == 4
    err = capsys.readouterr().err
    assert retries(err) == ["1", "2", "3"]
    msg = err[err.index("slabconv: error: "):]
    assert msg.startswith(f"slabconv: error: cannot discover the kernel versions Debian's "
                          f"suites offer (apt state 'discover' on {m.url} and "
                          f"{m.security_url}): apt-get update of the private apt lists "
                          f"'discover' ")
    assert "failed after 4 tries" in msg and "503" in msg and "What to do:" in msg


def test_the_i386_busybox_error_names_its_package_and_suite(world, archive):
    with serve(archive, fail_first=10 ** 6) as m:
        with pytest.raises(SlabconvError) as e:
            busybox.for_arch("i386")
    assert e.value.exit_code == 4
    assert str(e.value).startswith(f"cannot fetch busybox-static from apt state "
                                   f"'bookworm-i386' ({m.url} bookworm main): ")
    assert "What to do:" in str(e.value)


def test_an_index_broken_in_an_unrelated_suite_does_not_fail_the_fetch(world, archive, capsys):
    with serve(archive, broken=("/dists/bullseye/main/",)) as m:
        tree = fetch.get_tree("5.10", deb_version=DEBV)
    assert unpack.is_complete(tree.path, DEBV)
    err = capsys.readouterr().err
    assert retries(err) == ["1", "2", "3"]
    assert f"warning: the index of {m.url} bullseye still fails" in err
    assert f"going on with {m.security_url} bullseye-security" in err


def test_a_package_only_in_the_broken_suite_is_an_error_that_names_it(world, archive):
    with serve(archive, broken=("/dists/bullseye-security/main/",)) as m:
        with pytest.raises(SlabconvError) as e:
            fetch.get_tree("5.10", deb_version=DEBV)
    msg = str(e.value)
    assert e.value.exit_code == 4
    assert f"linux-source-5.10 has no version {DEBV} in the indexes apt could get, and the " \
           f"index of {m.security_url} bullseye-security failed" in msg and "What to do:" in msg


def test_the_i386_busybox_asks_only_its_suite(world, archive):
    with serve(archive, broken=("bookworm-security",)) as m:
        bb = busybox.for_arch("i386")
    assert busybox.elf_arch(bb) == (1, 3) and bb == world / "boot/busybox-i386/busybox"
    assert not [r for r in m.requests if "bookworm-security" in r]
    debs = [r for r in m.requests if r.endswith(".deb")]
    assert len(debs) == 1 and "/pool/main/bookworm/busybox-static_" in debs[0]
    assert (world / "apt/bookworm-i386/debs/busybox-static=1:1.35.0-4+deb12u1+b1.info"
            ).is_file()


def test_a_run_with_cached_downloads_makes_no_network_access(world, archive, capsys,
                                                             monkeypatch):
    with serve(archive) as m:
        src = prefetch.everything("5.10", None, DEBV)        # `make fetch`
        assert src.tree == world / f"src/5.10/{DEBV}/linux-source-5.10"
        assert busybox.cached("i386") is not None
        n = len(m.requests)
        # the mirror now unreachable, the lists and the discovery more than a day old
        m.close()
        old = time.time() - 3 * 86400
        for state in ("bullseye", "bookworm-i386"):
            os.utime(world / "apt" / state / "updated", (old, old))
        f = world / "apt" / "discover" / "catalog.json"
        f.write_text(re.sub(r'"time": [0-9.]+', f'"time": {old}', f.read_text()))
        tried = []
        real_call = net.call
        monkeypatch.setattr(net, "call", lambda action, what, **kw: (
            tried.append(what), real_call(action, what, **kw))[1])
        src2 = prefetch.inputs("5.10", None, DEBV, ["slub", "slab", "slub-i386"])
        assert src2.tree == src.tree and busybox.for_arch("i386") == busybox.cached("i386")
        assert net.forbidden() and tried == []       # not one download or apt-get update tried
        # the tree gone: unpacked again from the cached, recorded .deb, no network
        # (the discovery of a day ago is kept, with a warning)
        unpack.remove_tree(src.tree)
        assert fetch.get_tree("5.10", deb_version=DEBV).path == src.tree
        assert "warning: cannot refresh the kernel discovery" in capsys.readouterr().err
        # anything not fetched up front fails at once, without a request
        with pytest.raises(FetchError) as e:
            fetch.get_deb("bookworm-i386", "hello")
        assert "would go to the network" in str(e.value)
        assert len(m.requests) == n


def test_a_corrupt_cached_busybox_is_fetched_again(world, archive):
    with serve(archive) as m:
        bb = busybox.for_arch("i386")
        n = len(m.requests)
        bb.write_bytes(ELF_I386 + b"changed")
        assert busybox.cached("i386") is None
        assert busybox.for_arch("i386") == bb and busybox.cached("i386") == bb
    assert len(m.requests) == n          # from the verified .deb in the cache


def test_apt_retries_a_failed_request_itself(world, archive, capsys, monkeypatch):
    """apt's own retries (without its delay, which stalls apt 2.6.1 here:
    fetch/net.py): the two first requests fail, no retry of ours."""
    monkeypatch.setenv("SLABCONV_APT_RETRIES", "3")
    with serve(archive, fail_first=2) as m:
        fetch.get_tree("5.10", deb_version=DEBV)
    assert retries(capsys.readouterr().err) == []
    assert m.requests[0] in m.requests[1:]          # apt asked again for the same file


# -- the commands fetch first ------------------------------------------------------
class Stop(Exception):
    pass


@pytest.mark.parametrize("argv,boots", [
    (["all"], {"slub"}),
    (["all", "--config", "+slub-i386"], {"slub", "slub-i386"}),
    (["boot", "--config", "+kasan"], {"slub", "slab", "slob", "slub-i386", "kasan"}),
    (["verify", "--runtime-configs", "slub"], {"slub"}),
    (["reference", "--config", "slub-i386"], {"slub-i386"}),
])
def test_a_run_fetches_everything_before_anything_else(argv, boots, monkeypatch):
    """The first thing a command does is prefetch.inputs() with every
    configuration it will boot; nothing runs before it."""
    from cli import main as slabconv_cli, pipeline  # noqa: F401
    from regen import series
    seen = []

    def inputs(version, tree, deb_version, boot_configs=()):
        seen.append(set(boot_configs))
        raise Stop()
    monkeypatch.setattr(prefetch, "inputs", inputs)
    monkeypatch.setattr(series, "regenerate", lambda *a, **k: pytest.fail("regen first"))
    with pytest.raises(Stop):
        args = slabconv_cli.build_parser().parse_args(argv)
        args.func(args)
    assert seen and boots <= seen[0]
    assert ("i386" in prefetch.guest_arches(seen[0])) == ("slub-i386" in boots)


def test_the_i386_busybox_state_is_bookworm_main_for_i386(monkeypatch, tmp_path):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLABCONV_APT_MIRROR", "http://mirror.invalid/debian")
    s = suites.named(busybox.FOREIGN["i386"][0])
    assert s.arch == "i386"
    assert [line.split()[-3:] for line in s.sources] == \
        [["http://mirror.invalid/debian", "bookworm", "main"]]
    opts = " ".join(fetch.apt.AptRepo(s).options())
    assert "APT::Architecture=i386" in opts and "Dir::State::status=/dev/null" in opts
    assert "bookworm" not in suites.discovery_suites()    # not a kernel source state
