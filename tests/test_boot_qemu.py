"""Integration: boot a real kernel in QEMU with the slabconv guest tests.

The kernel is the patched 5.10 kernel that the `patched_kernel` fixture
(tests/conftest.py) builds from the committed series, or, for development,
one named by the environment:

    SLABCONV_TEST_BZIMAGE=/tmp/kb/o1/arch/x86/boot/bzImage \\
    SLABCONV_TEST_BUILD_DIR=/tmp/kb/o1 \\
    SLABCONV_TEST_SRC=/tmp/apt510/src/linux-source-5.10 \\
    /usr/bin/python3 -m pytest tests/test_boot_qemu.py

Nothing here skips: anything missing (kernel, QEMU, busybox) fails.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import boot  # noqa: E402

pytestmark = pytest.mark.slow

ENV = ("SLABCONV_TEST_BZIMAGE", "SLABCONV_TEST_BUILD_DIR", "SLABCONV_TEST_SRC")


@pytest.fixture(scope="module")
def kernel(request):
    if all(os.environ.get(v) for v in ENV):
        image, build, src = (Path(os.environ[v]) for v in ENV)
    else:
        vr = request.getfixturevalue("patched_kernel")
        assert vr.patched is not None and vr.patched.ok, vr.summary
        image, build, src = vr.patched.image, vr.patched_out, vr.patched_src
    for p in (image, build / ".config", src / "Makefile"):
        assert p.is_file(), f"{p} missing"
    return image, build, src


def test_boot_passes(kernel, tmp_path):
    r = boot.run(*kernel, tmp_path, timeout=120)
    assert r.passed, r.summary()
    assert not r.timed_out and r.failures == []
    assert r.module_tests >= 26
    assert r.counts.failed == 0 and r.counts.crashed == 0
    by_name = {t.name: t for t in r.results.root.subtests}
    fi = by_name["fault_injection"]
    fi_cases = fi.subtests[0].subtests          # the slabconv_faultinj module's
    assert len(fi_cases) == 16 and len(fi.subtests) == 4
    # 8 more init tests, the module's cases nested in test 10 with its 3
    # other subtests, test_meminit's 4 functions, slub_kunit (SKIP on 5.10)
    assert r.counts.total == r.module_tests + 8 + len(fi_cases) + 3 + 4 + 1
    assert (tmp_path / "results.ktap").read_text() == r.ktap
    assert "ok 1 - slabconv_test" in r.ktap
    assert "ok 2 - slub_validate" in r.ktap
    assert "usercopy_kmalloc_8192" in r.ktap
    for case in ("kmalloc_size_classes", "kfree_bulk", "kmem_cache_rcu", "kmem_cache_offslab"):
        assert f"- {case}\n" in r.ktap, case      # ran and passed (no SKIP)
    assert "ok 4 - sysfs_slab_caches\n" in r.ktap     # SLUB: not skipped
    assert "ok 5 - memcg_slab_accounting\n" in r.ktap  # rose and dropped
    assert "ok 7 - kasan_slab_reports # SKIP CONFIG_KASAN is not set" in r.ktap
    assert "ok 8 - kasan_kunit # SKIP CONFIG_KASAN is not set" in r.ktap
    assert "ok 9 - iommu # SKIP CONFIG_INTEL_IOMMU is not set and no IOMMU attached" in r.ktap
    assert "ok 10 - fault_injection\n" in r.ktap
    assert all(t.status is boot.ktap.Status.PASS for t in fi_cases)   # none skipped
    assert "ok 11 - test_meminit\n" in r.ktap
    assert "    ok 1 - test_pages\n" in r.ktap and "    ok 4 - test_rcu_persistent\n" in r.ktap
    assert "ok 12 - slub_kunit # SKIP lib/slub_kunit.c came in Linux 5.14" in r.ktap
    assert r.console_log == tmp_path / "console.log"
    assert "Run /init as init process" in r.console_log.read_text()
    assert (tmp_path / "summary.json").is_file()


def test_module_failure_propagates_through_ktap(kernel, tmp_path):
    r = boot.run(*kernel, tmp_path, timeout=120, cmdline_extra="slabconv.inject=fail")
    assert not r.passed
    # Counted once: the parent fails because of its failed case.
    assert r.counts.failed == 1
    assert r.counts.passed + r.counts.skipped == r.counts.total - 1
    suite = r.results.root.subtests[0]
    assert suite.name == "slabconv_test" and suite.status is boot.ktap.Status.FAIL
    assert any("hardened_usercopy_config: not ok # planted failure" in f
               for f in r.failures), r.failures
    assert "not ok 1 - slabconv_test # 1 of" in r.ktap


def test_fault_injection_cases_cannot_pass_idly(kernel, tmp_path):
    """slabconv.faultinj=noarm: init arms nothing but tells the module it
    did; every case that expects an allocation to fail must fail, and the
    out-of-memory bracket without its report is a console finding."""
    r = boot.run(*kernel, tmp_path, timeout=120, cmdline_extra="slabconv.faultinj=noarm")
    assert not r.passed
    by_name = {t.name: t for t in r.results.root.subtests}
    fi = by_name["fault_injection"]
    assert fi.status is boot.ktap.Status.FAIL
    cases = fi.subtests[0].subtests
    assert len(cases) == 16
    assert all(t.status is boot.ktap.Status.FAIL for t in cases), \
        [(t.name, t.status) for t in cases]
    assert "none failed" in cases[0].directive
    assert [t.name for t in by_name.values() if t.status is boot.ktap.Status.FAIL] == \
        ["fault_injection"]
    assert [f.kind for f in r.findings] == ["expected"]
    assert "report naming cache slabconv_fi_w1024" in r.findings[0].line


def test_planted_warning_detected(kernel, tmp_path):
    r = boot.run(*kernel, tmp_path, timeout=120, cmdline_extra="slabconv.inject=warn")
    assert not r.passed
    assert r.counts.failed == 0      # KTAP is clean: only the console shows it
    warn = [f for f in r.failures if "[warning] WARNING:" in f]
    assert warn, r.failures
    assert "planted warning (inject=warn)" in warn[0]      # excerpt context
    assert [f.kind for f in r.findings] == ["warning"]


def test_planted_slab_corruption_caught_by_validate(kernel, tmp_path):
    r = boot.run(*kernel, tmp_path, timeout=120, cmdline_extra="slabconv.inject=redzone")
    assert not r.passed
    by_name = {t.name: t for t in r.results.root.subtests}
    assert by_name["slabconv_test"].status is boot.ktap.Status.PASS
    v = by_name["slub_validate"]
    assert v.status is boot.ktap.Status.FAIL
    assert "Redzone overwritten" in v.directive
    console = r.console_log.read_text()
    assert "BUG slabconv_uc" in console and "Right Redzone overwritten" in console
    assert by_name["module_unload"].status is boot.ktap.Status.PASS   # repaired
    assert "slub" in [f.kind for f in r.findings]
    assert any("[slub] BUG slabconv_uc" in f for f in r.failures)


@pytest.mark.parametrize("inject,why", [
    ("noaccount", "slab_unreclaimable rose by"),    # nothing charged
    ("nofree", "slab_unreclaimable dropped by"),    # nothing uncharged
])
def test_planted_memcg_accounting_defect(kernel, tmp_path, inject, why):
    """Each direction of the memcg check can fail: objects that are not
    accounted (the cache without SLAB_ACCOUNT) do not raise the cgroup's
    slab lines; objects the release does not free do not lower them."""
    r = boot.run(*kernel, tmp_path, timeout=120, cmdline_extra=f"slabconv.inject={inject}")
    assert not r.passed
    by_name = {t.name: t for t in r.results.root.subtests}
    m = by_name["memcg_slab_accounting"]
    assert m.status is boot.ktap.Status.FAIL, r.summary()
    assert m.directive.startswith(why) and "bytes" in m.directive, m.directive
    assert [n for n, t in by_name.items() if t.status is boot.ktap.Status.FAIL] == \
        ["memcg_slab_accounting"]
    assert r.findings == []          # the console is clean: only KTAP fails


def test_planted_panic_detected(kernel, tmp_path):
    r = boot.run(*kernel, tmp_path, timeout=60,
                 cmdline_extra="rdinit=/nonexistent init=/nonexistent")
    assert not r.passed and not r.timed_out   # panic=-1 + -no-reboot end QEMU at once
    panic = [f for f in r.failures if "[panic] Kernel panic - not syncing" in f]
    assert panic, r.failures
    assert "Requested init /nonexistent failed" in panic[0]
    assert "Call Trace:" in panic[0]
    assert any("no KTAP output" in f for f in r.failures)


def test_hang_reported_as_timeout(kernel, tmp_path):
    init = tmp_path / "hang.sh"
    init.write_text("#!/bin/sh\necho 'hang init: sleeping forever'\n"
                    "while :; do sleep 1000; done\n")
    out = tmp_path / "run"
    r = boot.run(*kernel, out, timeout=10, init_script=init)
    assert not r.passed and r.timed_out
    assert r.failures[0].startswith("hang/timeout: guest still running after 10s")
    assert "hang init: sleeping forever" in r.failures[0]      # the console tail
    assert r.seconds >= 10           # the guest had its whole timeout
    assert "hang init: sleeping forever" in r.console_log.read_text()


def test_cli(kernel, tmp_path):
    image, build, src = kernel
    cp = subprocess.run(
        [sys.executable, "-m", "boot", "--image", image, "--build-dir", build,
         "--src", src, "--out", tmp_path, "--timeout", "120"],
        cwd=REPO, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout.startswith("boot: PASS")
    assert len(cp.stdout.splitlines()) < 25
