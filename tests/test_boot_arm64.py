"""arm64 end to end: the committed 5.10 series' final kernel in the
arm64-sw-tags configuration (software tag-based KASAN on SLUB,
cross-compiled with gcc-aarch64-linux-gnu; the `arm64_sw_tags_kernel`
fixture, built once), booted under qemu-system-aarch64 -M virt (TCG) with
the in-guest tests; and a planted defect in code only arm64 compiles,
caught by the arm64 build's object-code comparison and by no x86 build.

The suite's one arm64 build: the baseline builds, the per-patch check, the
object-code comparison of every patch and the SLAB configuration are
`make verify CONFIG=arm64-sw-tags BISECT=arm64-sw-tags` and `make boot
CONFIG=arm64,arm64-sw-tags,arm64-sw-tags-slab` (docs/TESTING.md).  Nothing
here skips: a missing cross compiler or QEMU is a failure.
"""
import shutil
import subprocess

import pytest

import boot
from boot.ktap import Status
from cli import boots
from verify import configtable, kbuild, objdiff, tree

pytestmark = [pytest.mark.slow, pytest.mark.network]

CONFIG = "arm64-sw-tags"
# a defect inside an arm64-only #ifdef: get_bug_type() (mm/kasan/tags_report.c,
# compiled only with KASAN_SW_TAGS; the block only with KASAN_SW_TAGS_IDENTIFY)
# takes every tag-matching access for an out-of-bounds one
PLANTED_FILE = "mm/kasan/tags_report.c"
PLANTED_FROM = "if (alloc_meta->free_pointer_tag[i] == tag)"
PLANTED_TO = "if (alloc_meta->free_pointer_tag[i] != tag)"


def by_name(r):
    return {t.name: t for t in r.results.root.subtests}


def test_final_sw_tags_kernel_boots_and_passes_the_guest_tests(arm64_sw_tags_kernel, tmp_path):
    vr = arm64_sw_tags_kernel
    assert vr.patched is not None and vr.patched.ok, vr.summary
    assert vr.patched.image.name == "Image" and vr.patched.image.is_file()
    c = configtable.get(CONFIG)
    r = boot.run(vr.patched.image, vr.patched_out, vr.patched_src, tmp_path, arch=c.arch,
                 timeout=c.timeout, **boots.boot_args(CONFIG))
    assert r.passed, r.summary()
    console = r.console_log.read_text(errors="replace")
    assert "Booting Linux on physical CPU" in console          # arm64's own line
    assert "Machine model: linux,dummy-virt" in console
    assert "KernelAddressSanitizer initialized" in console
    t = by_name(r)
    # the module's two bracketed reports: software tags, the bug type from
    # the object's slab (tags_report.c with KASAN_SW_TAGS_IDENTIFY)
    assert t["kasan_slab_reports"].status is Status.PASS, r.summary()
    assert "BUG: KASAN: out-of-bounds in " in console
    assert "BUG: KASAN: use-after-free in " in console
    assert "belongs to the cache slabconv_kasan" in console
    # the KASAN KUnit suite: every allocation it makes is tagged by
    # assign_tag(); its tag-mismatch cases pass only if the tags differ
    kunit = t["kasan_kunit"]
    assert kunit.status is Status.PASS, r.summary()
    cases = {x.name: x.status for x in kunit.subtests}
    assert len(cases) > 30, cases
    assert cases["kmalloc_oob_right"] is Status.PASS and cases["kmem_cache_oob"] is Status.PASS
    assert t["slabconv_test"].status is Status.PASS, r.summary()
    assert t["slub_validate"].status is Status.PASS, r.summary()


def _copy_build(src, out, dst):
    """A hard-link snapshot of a built tree, with a real copy of its O=."""
    snap = tree.snapshot(src, dst / "tree", skip=(out.name,))
    cp = subprocess.run(["cp", "-a", "--reflink=auto", str(out), str(snap / out.name)],
                        stderr=subprocess.PIPE, text=True)
    assert cp.returncode == 0, cp.stderr
    tree.relocate(snap / out.name, src, snap)
    return snap, snap / out.name


def _plant(snap):
    f = snap / PLANTED_FILE
    text = f.read_text()
    assert text.count(PLANTED_FROM) == 1, f"{PLANTED_FILE} no longer has {PLANTED_FROM!r}"
    lines = text[:text.index(PLANTED_FROM)].splitlines()
    assert "#ifdef CONFIG_KASAN_SW_TAGS_IDENTIFY" in lines and "#endif" not in \
        lines[lines.index("#ifdef CONFIG_KASAN_SW_TAGS_IDENTIFY"):], "not inside the #ifdef"
    f.unlink()                                  # never write through a hard link
    f.write_text(text.replace(PLANTED_FROM, PLANTED_TO))


def _build_and_compare(snap, out, config, tmp):
    """Every object of mm/kasan/ this configuration compiles, built before
    and after the planted change: objdiff's findings, the objects."""
    arch = configtable.get(config).arch
    b = kbuild.build(snap, out, targets=("mm/kasan/",), arch=arch, quiet=True)
    assert b.ok, b.failure_message()
    objs = sorted(o for o in objdiff.list_objects(out) if o.startswith("mm/kasan/"))
    keep = tmp / f"keep-{config}"
    objdiff.snapshot(out, objs, keep)
    _plant(snap)
    b = kbuild.build(snap, out, targets=("mm/kasan/",), arch=arch, quiet=True)
    assert b.ok, b.failure_message()
    pc = objdiff.check_patch(keep, out, objs, None, {}, patch=f"planted ({config})")
    return pc, objs


def test_planted_defect_in_arm64_only_code_is_caught_on_arm64_not_on_x86(
        arm64_sw_tags_kernel, tmp_path):
    assert shutil.which("aarch64-linux-gnu-gcc")
    vr = arm64_sw_tags_kernel
    # arm64: tags_report.o is rebuilt and get_bug_type()'s code changed,
    # undeclared (no manifest entry declares it)
    snap, out = _copy_build(vr.patched_src, vr.patched_out, tmp_path / "arm64")
    pc, objs = _build_and_compare(snap, out, CONFIG, tmp_path)
    assert "mm/kasan/tags_report.o" in objs and "mm/kasan/common.o" in objs
    assert not pc.ok, pc.text()
    assert [(f.object, f.function) for f in pc.unexpected] == \
        [("mm/kasan/tags_report.o", "get_bug_type")], pc.text()
    # x86: the configuration that compiles mm/kasan/ (generic KASAN) builds
    # the same patched tree, and the same planted change leaves every object
    # of mm/kasan/ as it was: no x86 build can see it
    x86 = tmp_path / "x86"
    snap = tree.snapshot(vr.patched_src, x86 / "tree", skip=(vr.patched_out.name,))
    out = snap / "o"
    from verify import kconfig
    kconfig.configure_named(snap, out, "kasan")
    pc, objs = _build_and_compare(snap, out, "kasan", tmp_path)
    assert "mm/kasan/common.o" in objs and "mm/kasan/generic.o" in objs
    assert "mm/kasan/tags_report.o" not in objs
    assert pc.ok and not pc.changed, pc.text()
