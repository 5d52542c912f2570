"""Integration: the kasan guest's checks fail on planted defects.

The kernel is the patched 5.10 kernel in the kasan configuration (the
`kasan_kernel` fixture, tests/conftest.py), booted as `slabconv boot
--config kasan` boots it (kasan_multi_shot, no slub_debug), with a
`slabconv.inject=` knob of the guest module:

* kasan_missing: the brackets are printed, the bad reads are not made: the
  expected reports are missing (init test 7 and the console scanner);
* kasan_wrongcache: the out-of-bounds read is on a kmalloc-128 object: the
  report names another cache;
* kasan_stray: one more KASAN report, outside the brackets: the console
  scanner fails it (init test 7 still passes).

The passing boot is tests/test_e2e.py's.  Nothing here skips.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boot  # noqa: E402
from boot.ktap import Status  # noqa: E402
from cli import boots  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]


def boot_kasan(vr, out, inject):
    assert vr.patched is not None and vr.patched.ok, vr.summary
    return boot.run(vr.patched.image, vr.patched_out, vr.patched_src, out, timeout=120,
                    **boots.boot_args("kasan", f"slabconv.inject={inject}"))


def by_name(r):
    return {t.name: t for t in r.results.root.subtests}


def test_missing_expected_reports_fail(kasan_kernel, tmp_path):
    r = boot_kasan(kasan_kernel, tmp_path, "kasan_missing")
    assert not r.passed
    t = by_name(r)
    assert t["kasan_slab_reports"].status is Status.FAIL, r.summary()
    assert "no KASAN slab-out-of-bounds report on an object of cache slabconv_kasan" \
        in t["kasan_slab_reports"].directive
    assert t["kasan_kunit"].status is Status.PASS
    assert [f.kind for f in r.findings] == ["expected", "expected"], r.failures
    assert "no KASAN use-after-free report on an object of cache slabconv_kasan" \
        in r.findings[1].line


def test_report_on_another_cache_fails(kasan_kernel, tmp_path):
    r = boot_kasan(kasan_kernel, tmp_path, "kasan_wrongcache")
    assert not r.passed
    t = by_name(r)
    assert t["kasan_slab_reports"].status is Status.FAIL, r.summary()
    assert "the report names cache kmalloc-128" in t["kasan_slab_reports"].directive
    assert [f.kind for f in r.findings] == ["kasan"], r.failures
    assert "which belongs to the cache kmalloc-128" in r.findings[0].line


def test_stray_report_fails(kasan_kernel, tmp_path):
    r = boot_kasan(kasan_kernel, tmp_path, "kasan_stray")
    assert not r.passed
    t = by_name(r)
    assert t["kasan_slab_reports"].status is Status.PASS, r.summary()
    assert [f.kind for f in r.findings] == ["bug"], r.failures
    assert r.findings[0].line.startswith("BUG: KASAN: slab-out-of-bounds in ")
