"""Integration: the IOMMU guests (boot/iommu.py, boot/guest/slabconv_iommu.c,
init test 9) on the patched 5.10 kernel in the iommu configuration (the
`iommu_kernel` fixture, tests/conftest.py), booted as `slabconv boot
--config iommu` boots it: Intel strict (intel_iommu=on,strict), Intel lazy
(intel_iommu=on, the driver's flush queue) and AMD (-device amd-iommu: the
module's AMD cases on an unmanaged domain).

The planted defect: the same tree with every put_pages_list() call of
"iommu: Use put_pages_list" that gives page-table pages back removed: the
Intel strict one (intel_unmap()) and lazy one (iova_entry_free()), and the
AMD ones (iommu_map_page(): tables a large page replaced; free_pagetable():
a freed domain's tables); built incrementally from a copy of the patched
build.  Booted in each variant, the module's checks must fail and name the
leak.  And the iommu kernel booted without an IOMMU must fail test 9, not
skip it.  Nothing here skips.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot.ktap import Status  # noqa: E402
from base import paths  # noqa: E402
from cli import boots
from tests.helpers import boot_config
from verify import kbuild, tree  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]

INTEL = "drivers/iommu/intel/iommu.c"
# The two frees of a list of unmapped page-table pages that 0057 writes.
STRICT_FREE = ("\t\tfree_iova_fast(&domain->iovad, iova_pfn, dma_to_mm_pfn(nrpages));\n"
               "\t\tput_pages_list(&freelist);\n")
LAZY_FREE = "\tlist_add_tail(&pages, &pg->lru);\n\tput_pages_list(&pages);\n"
AMD = "drivers/iommu/amd/iommu.c"
# The AMD driver's two frees of a page-table page list (0057).
AMD_LARGE_FREE = "\t/* Everything flushed out, free pages now */\n\tput_pages_list(&freelist);\n"
AMD_DOMAIN_FREE = "\tfree_sub_pt(root, pgtable->mode, &freelist);\n\n\tput_pages_list(&freelist);\n"


def by_name(tests):
    return {t.name: t for t in tests}


def iommu_tests(r):
    top = by_name(r.results.root.subtests)
    t9 = top["iommu"]
    mod = by_name(t9.subtests)["pagetables"]
    return t9, by_name(t9.subtests), by_name(mod.subtests)


def boot_variant(vr, variant, run):
    return boot_config(vr, run, variant=variant)


@pytest.mark.parametrize("variant", ["", "lazy"])
def test_iommu_guest_passes(iommu_kernel, variant):
    vr = iommu_kernel
    assert vr.patched is not None and vr.patched.ok, vr.summary
    r = boot_variant(vr, variant, f"test-iommu-{variant or 'strict'}")
    assert r.passed, r.summary()
    t9, sub, mod = iommu_tests(r)
    assert t9.status is Status.PASS
    assert list(sub) == ["dmar_active", "disk_dma", "pagetables", "no_dmar_faults"]
    assert all(t.status is Status.PASS for t in sub.values()), r.summary()
    assert list(mod) == ["iommu_enabled", "device_translated", "pagetables_built",
                         "pagetables_freed_on_unmap", "pagetables_no_leak"]
    assert all(t.status is Status.PASS for t in mod.values()), r.summary()   # none skipped
    mode = "lazy" if variant else "strict"
    assert f"mode {mode}" in r.ktap
    assert ("intel_iommu=on,strict" in r.cmdline) == (mode == "strict")
    assert "read 3 times with O_DIRECT" in r.ktap


def test_amd_iommu_guest_passes(iommu_kernel):
    """-device amd-iommu: AMD-Vi translates the disk's DMA, and the AMD
    driver's converted frees give back every leaf table a 2 MiB page
    replaces and every table of a freed domain."""
    vr = iommu_kernel
    r = boot_variant(vr, "amd", "test-iommu-amd")
    assert r.passed, r.summary()
    t9, sub, mod = iommu_tests(r)
    assert t9.status is Status.PASS
    assert list(sub) == ["amd_vi_active", "disk_dma", "pagetables", "no_io_page_faults"]
    assert all(t.status is Status.PASS for t in sub.values()), r.summary()
    assert list(mod) == ["iommu_enabled", "device_translated", "pagetables_built",
                         "large_page_frees_tables", "domain_free_frees_tables",
                         "pagetables_no_leak"]
    assert all(t.status is Status.PASS for t in mod.values()), r.summary()   # none skipped
    assert "mode amd" in r.ktap and "intel_iommu" not in r.cmdline
    assert re.search(r"# amd: 4 KiB pages unmapped: .*2 MiB pages mapped over them", r.ktap)
    assert "read 3 times with O_DIRECT" in r.ktap


def test_iommu_kernel_without_an_iommu_fails(iommu_kernel, tmp_path):
    """The configuration says there is an Intel IOMMU; booted without one
    (no -device intel-iommu, no intel_iommu=on) test 9 must fail, not skip."""
    import boot
    vr = iommu_kernel
    r = boot.run(vr.patched.image, vr.patched_out, vr.patched_src, tmp_path, timeout=180,
                 **boots.boot_args("iommu"))
    assert not r.passed
    t9, sub, mod = iommu_tests(r)
    assert t9.status is Status.FAIL and t9.directive == "dmar_active failed"
    assert sub["dmar_active"].directive == "no /sys/class/iommu/dmar* (DMAR not active)"
    assert mod["iommu_enabled"].status is Status.FAIL
    assert "intel_iommu_enabled is 0" in mod["iommu_enabled"].directive
    assert sub["no_dmar_faults"].status is Status.PASS


@pytest.fixture(scope="module")
def leaky_kernel(iommu_kernel, tmp_path_factory):
    """The patched tree with the frees of page-table page lists removed
    (Intel: strict and lazy; AMD: large page and domain free), built from a
    copy of the patched build (two objects recompiled)."""
    vr = iommu_kernel
    assert vr.patched is not None and vr.patched.ok, vr.summary
    root = paths.cache_dir("build", "5.10", "test-iommu-leak")
    snap = root / "tree"
    shutil.rmtree(root, ignore_errors=True)
    tree.snapshot(vr.patched_src, snap, skip=("o",))
    cp = subprocess.run(["cp", "-a", "--reflink=auto", str(vr.patched_out), str(snap / "o")],
                        stderr=subprocess.PIPE, text=True)
    assert cp.returncode == 0, cp.stderr
    tree.relocate(snap / "o", vr.patched_src, snap)
    f = snap / INTEL
    text = f.read_text()
    assert text.count(STRICT_FREE) == 1 and text.count(LAZY_FREE) == 1, \
        f"{INTEL} changed: update the planted defect"
    text = text.replace(STRICT_FREE, STRICT_FREE.split("\n")[0] + "\n") \
               .replace(LAZY_FREE, LAZY_FREE.split("\n")[0] + "\n")
    f.unlink()                                   # never write through a hard link
    f.write_text(text)
    f = snap / AMD
    text = f.read_text()
    assert text.count(AMD_LARGE_FREE) == 1 and text.count(AMD_DOMAIN_FREE) == 1, \
        f"{AMD} changed: update the planted defect"
    text = text.replace(AMD_LARGE_FREE, AMD_LARGE_FREE.split("\n")[0] + "\n") \
               .replace(AMD_DOMAIN_FREE, AMD_DOMAIN_FREE.split("\n")[0] + "\n")
    f.unlink()
    f.write_text(text)
    b = kbuild.build(snap, snap / "o")
    assert b.ok, b.failure_message()
    return SimpleNamespace(config="iommu", patched=b, patched_out=snap / "o",
                           patched_src=snap, series_record=None)


@pytest.mark.parametrize("variant", ["", "lazy"])
def test_planted_page_table_leak_is_caught(leaky_kernel, variant):
    r = boot_variant(leaky_kernel, variant, f"test-iommu-leak-{variant or 'strict'}")
    assert not r.passed
    t9, sub, mod = iommu_tests(r)
    assert t9.status is Status.FAIL and t9.directive == "pagetables failed"
    assert sub["dmar_active"].status is sub["disk_dma"].status is Status.PASS
    assert mod["pagetables_built"].status is Status.PASS
    leak = mod["pagetables_no_leak"]
    assert leak.status is Status.FAIL, r.summary()
    assert "pages missing after 16 rounds that built and freed 1024 page-table pages (leaked" \
        in leak.directive
    freed = mod["pagetables_freed_on_unmap"]
    assert freed.status is Status.FAIL
    # strict: nothing came back at the unmap; lazy: nothing after the flush
    assert re.match(r"(strict|lazy): only -?\d+ of 64 page-table pages ", freed.directive)
    assert freed.directive.startswith("lazy" if variant else "strict"), freed.directive
    assert "iommu.pagetables.pagetables_no_leak: not ok" in "\n".join(r.failures)


def test_planted_amd_page_table_leak_is_caught(leaky_kernel):
    """AMD: without the two frees, the leaf tables a 2 MiB page replaced and
    the tables of a freed domain never come back, and the rounds leak."""
    r = boot_variant(leaky_kernel, "amd", "test-iommu-leak-amd")
    assert not r.passed
    t9, sub, mod = iommu_tests(r)
    assert t9.status is Status.FAIL and t9.directive == "pagetables failed"
    assert sub["amd_vi_active"].status is sub["disk_dma"].status is Status.PASS
    assert mod["pagetables_built"].status is Status.PASS
    large = mod["large_page_frees_tables"]
    assert large.status is Status.FAIL, r.summary()
    assert re.match(r"only -?\d+ of 64 leaf tables came back when 2 MiB pages replaced them",
                    large.directive), large.directive
    dom = mod["domain_free_frees_tables"]
    assert dom.status is Status.FAIL
    assert re.match(r"only -?\d+ of 64 leaf tables came back at iommu_domain_free\(\)",
                    dom.directive), dom.directive
    leak = mod["pagetables_no_leak"]
    assert leak.status is Status.FAIL
    assert "pages missing after 16 rounds that built and freed 2048 page-table pages (leaked" \
        in leak.directive
    assert "iommu.pagetables.pagetables_no_leak: not ok" in "\n".join(r.failures)
