import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


# Variables that swap a component of the suite for a stand-in (development:
# a build or a tree of one's own instead of the one the suite makes).  A
# run with one set proves less than the suite claims: its closing lines say
# so, and under CI (CI=true) the run fails.  tests/test_suite_skips.py
# checks that every SLABCONV_TEST_* variable a test reads is listed here.
STAND_INS = {
    "SLABCONV_TEST_IOMMU_TREE": "a patched tree and its build instead of the iommu build "
                                "(no baseline build, no warning gate)",
    "SLABCONV_TEST_ARM64_TREE": "a patched tree and its build instead of the arm64-sw-tags "
                                "build (no warning gate)",
    "SLABCONV_TEST_BZIMAGE": "a kernel image instead of the shared slub build (test_boot_qemu)",
    "SLABCONV_TEST_BUILD_DIR": "that kernel's O= directory (test_boot_qemu)",
    "SLABCONV_TEST_SRC": "a 5.10 tree instead of the fetched one",
    "SLABCONV_TEST_SERIES_REPO": "a repository with the series applied, cloned instead of "
                                 "applying it (test_nullcheck)",
}


def stand_ins(env=None) -> dict:
    """The stand-in variables set in env (default: this process's)."""
    env = os.environ if env is None else env
    return {k: env[k] for k in STAND_INS if env.get(k)}


def _ci(env=None) -> bool:
    env = os.environ if env is None else env
    return env.get("CI", "").strip().lower() in ("true", "1", "yes")


def pytest_configure(config):
    config.addinivalue_line("markers", "network: needs the Debian archive (apt)")
    config.addinivalue_line("markers", "slow: builds or boots a kernel (minutes)")
    if _ci() and stand_ins():
        raise pytest.UsageError(
            "CI=true with stand-ins set: " + "; ".join(
                f"{k}={v} ({STAND_INS[k]})" for k, v in stand_ins().items())
            + ": CI runs the suite on the components it makes; unset them")


# --- tests write only to temporary directories ---------------------------------

CACHES = ("__pycache__", ".pytest_cache")      # Python's and pytest's own, left out


def checkout_state(repo: Path = REPO) -> dict | None:
    """What a test that writes into the checkout changes: every file git
    does not hold as committed (modified, added, untracked, ignored) with
    its size and mtime, and every directory's mtime (a file made and
    removed again changes its directory's), with whether it has a Python
    or pytest cache.  None: not a git checkout."""
    import shutil
    import subprocess
    # git from PATH, else Debian's (a test runs the suite with a PATH that
    # lacks a tool: the guard still runs)
    git = shutil.which("git") or "/usr/bin/git"
    if not Path(git).is_file():
        raise pytest.UsageError("'git' not found; install the Debian package 'git' "
                                "(the suite checks that it leaves the checkout unchanged)")
    cp = subprocess.run([git, "-C", str(repo), "status", "--porcelain=v1", "-z",
                         "--ignored=matching", "--untracked-files=all"], capture_output=True)
    if cp.returncode != 0:
        return None
    state = {}
    fields = cp.stdout.decode(errors="replace").split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        xy, path = entry[:2], entry[3:]
        if "R" in xy or "C" in xy:
            i += 1                              # the rename's source follows
        if set(CACHES) & set(Path(path).parts):
            continue
        try:
            st = os.lstat(repo / path)
            state[path] = (xy, (st.st_size, st.st_mtime_ns))
        except OSError:
            state[path] = (xy, None)
    for d, subdirs, _ in os.walk(repo):
        subdirs[:] = sorted(x for x in subdirs if x != ".git" and x not in CACHES)
        rel = os.path.relpath(d, repo)
        state[("dir", rel)] = (os.stat(d).st_mtime_ns,
                               tuple(os.path.isdir(os.path.join(d, c)) for c in CACHES))
    return state


def checkout_changes(before: dict, after: dict) -> list[str]:
    """The files and directories whose state differs between two
    checkout_state()s; a directory whose only change may be a Python or
    pytest cache made in it since is not one."""
    out = []
    for k in set(before) | set(after):
        b, a = before.get(k), after.get(k)
        if b == a:
            continue
        if isinstance(k, tuple):
            if b and a and any(not x and y for x, y in zip(b[1], a[1])):
                continue                        # a cache appeared: the mtime says nothing more
            out.append(f"{k[1]}/ (a file made or removed in it)")
        else:
            out.append(k)
    return sorted(out)


def pytest_sessionstart(session):
    session.config._checkout_before = checkout_state()


def _checkout_guard(session) -> None:
    """A test that wrote into the checkout fails the run, the paths named in
    its closing lines (tests write to temporary directories only)."""
    before = getattr(session.config, "_checkout_before", None)
    if before is None:
        return
    changed = checkout_changes(before, checkout_state() or {})
    session.config._checkout_changed = changed
    if changed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# outcomes that pass a run without a test having passed: the suite allows none
NOT_RUN = ("skipped", "xfailed", "xpassed")


def pytest_sessionfinish(session, exitstatus):
    """A skipped or xfail test fails the run (tests/test_suite_skips.py):
    a check that did not run has proved nothing.  So does a change to the
    checkout (_checkout_guard)."""
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and any(tr.stats.get(k) for k in NOT_RUN) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    _checkout_guard(session)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if stand_ins():
        terminalreporter.section("stand-ins: this run did not test the suite's own components",
                                 sep="=", yellow=True)
        for k, v in stand_ins().items():
            terminalreporter.line(f"{k}={v}: {STAND_INS[k]}")
    changed = getattr(config, "_checkout_changed", [])
    if changed:
        terminalreporter.section(f"the run changed the checkout {REPO} (the run fails): tests "
                                 "write to temporary directories only", sep="=", red=True)
        for path in changed[:40]:
            terminalreporter.line(f"  {path}")
    not_run = [(k, r) for k in NOT_RUN for r in terminalreporter.stats.get(k, [])]
    if not_run:
        terminalreporter.section("tests that did not run (the run fails)", sep="=", red=True)
        for k, r in not_run:
            where = r.location[0] + (f":{r.location[1] + 1}" if r.location[1] is not None else "")
            terminalreporter.line(f"{k.upper()} {r.nodeid} ({where})")


@pytest.fixture(autouse=True)
def _network_allowed_again():
    """A command run in-process forbids the network once it has fetched
    (cli/prefetch.py); the next test starts with it allowed."""
    yield
    from fetch import net
    net.allow()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private slabconv cache for one test."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(d))
    return d


@pytest.fixture(scope="session")
def patched_verify():
    """The committed 5.10 series applied with git am and verified in the
    slub configuration (baseline and patched: new compiler and sparse
    warnings), with checkpatch, the layout asserts, the field users and the
    residue.  Not the per-patch builds of the whole series (four
    configurations, the longest part of `make verify` cold):
    tests/test_verify_bisect_real.py proves that check on a planted series.
    Returns (verify.gates.Gates, cli.apply.Applied)."""
    from base import paths
    from cli import apply, checks
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    return checks.verify_applied(ap, ("slub",), bisect_configs=()), ap


@pytest.fixture(scope="session")
def patched_kernel(patched_verify):
    """patched_verify's slub build (verify.VerifyResult) with .applied; the
    e2e and boot integration tests share it.  SLAB and SLOB:
    `allocator_kernel`."""
    g, ap = patched_verify
    vr = g.primary
    vr.applied = ap
    return vr


def _committed_series_built(config: str):
    """The committed 5.10 series applied with git am, its patched tree built
    in one configuration with no baseline build (check_build(baseline=False):
    half the cold build time; the compiler and sparse warning gates of this
    configuration are `slabconv verify --config <config>`'s, not the boot
    tests').  The VerifyResult, with .applied."""
    import verify
    from base import paths
    from cli import apply
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    vr = verify.check_build(src.tree, ap.tree, paths.cache_dir("build", src.version),
                            config=config, baseline_id=f"{src.source_id}@{ap.baseline_id[:12]}",
                            baseline=False)
    vr.applied = ap
    return vr


@pytest.fixture(scope="session", params=["slab", "slob"])
def allocator_kernel(request):
    """The committed 5.10 series' patched tree built in the slab and in the
    slob configuration (patched tree only: their warning gates are
    `make verify`'s, whose default configurations they are)."""
    return _committed_series_built(request.param)


@pytest.fixture(scope="session")
def kasan_kernel():
    """The committed 5.10 series built in the kasan configuration (generic
    KASAN on SLUB, the KASAN KUnit suite built in), patched tree only.
    Returns the VerifyResult."""
    return _committed_series_built("kasan")


@pytest.fixture(scope="session")
def arm64_sw_tags_kernel():
    """The committed 5.10 series built in the arm64-sw-tags configuration
    (cross-compiled with gcc-aarch64-linux-gnu: software tag-based KASAN on
    SLUB, the KASAN KUnit suite built in), patched tree only: the suite's
    one arm64 build, which tests/test_boot_arm64.py boots and plants a
    defect in.  Returns the VerifyResult.  SLABCONV_TEST_ARM64_TREE=<a
    patched tree with its arm64-sw-tags build in o/> uses that build
    instead (development: no build here, no warning gate)."""
    import os
    from types import SimpleNamespace
    from verify import kbuild
    if os.environ.get("SLABCONV_TEST_ARM64_TREE"):
        tree = Path(os.environ["SLABCONV_TEST_ARM64_TREE"])
        image = kbuild.image_path(tree / "o", "arm64")
        return SimpleNamespace(config="arm64-sw-tags", patched_src=tree, patched_out=tree / "o",
                               patched=SimpleNamespace(ok=image.is_file(), image=image),
                               ok=True, new_warnings=[], sparse=None, summary=str(tree))
    return _committed_series_built("arm64-sw-tags")


@pytest.fixture(scope="session")
def iommu_kernel():
    """The committed 5.10 series built by verify in the iommu configuration
    (the Intel and AMD IOMMU drivers, a virtio-blk disk driver), patched
    tree only.  Returns the VerifyResult; tests/test_boot_iommu.py boots it.
    SLABCONV_TEST_IOMMU_TREE=<a patched tree with its build in o/> uses
    that build instead (development: no baseline build, no warning gate;
    ok only if o/ has the kernel image; a stand-in, see STAND_INS)."""
    import os
    from types import SimpleNamespace
    from verify import kbuild
    if os.environ.get("SLABCONV_TEST_IOMMU_TREE"):
        tree = Path(os.environ["SLABCONV_TEST_IOMMU_TREE"])
        image = kbuild.image_path(tree / "o", "x86_64")
        return SimpleNamespace(config="iommu", patched_src=tree, patched_out=tree / "o",
                               patched=SimpleNamespace(ok=image.is_file(), image=image),
                               ok=image.is_file(), new_warnings=[], sparse=None,
                               summary=f"stand-in (SLABCONV_TEST_IOMMU_TREE): {tree}")
    return _committed_series_built("iommu")
