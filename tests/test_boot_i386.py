"""Integration: the i386 SLUB guest (the slub-i386 configuration: the
committed 5.10 series built for ARCH=i386, booted with qemu-system-i386, the
test module built for i386, Debian's i386 busybox-static) runs the same
guest tests as x86_64 and passes with slub_debug=FZPU.  Nothing here skips."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import busybox, matrix  # noqa: E402
from boot.ktap import Status  # noqa: E402
from base import paths  # noqa: E402
from cli import apply, boots

pytestmark = [pytest.mark.slow, pytest.mark.network]


@pytest.fixture(scope="module")
def i386_kernel():
    """The patched i386 build (check_build with no baseline build: the
    i386 warning gates are `slabconv verify --config slub-i386`'s; the
    struct slab layout on i386 is tests/test_layout_real.py's)."""
    import verify
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    ident = f"{src.source_id}@{ap.baseline_id[:12]}"
    return verify.check_build(src.tree, ap.tree, paths.cache_dir("build", src.version),
                              config="slub-i386", baseline_id=ident, baseline=False)


def test_i386_busybox_is_32_bit():
    assert busybox.elf_arch(busybox.for_arch("i386")) == (1, 3)


def test_i386_slub_guest_passes(i386_kernel, tmp_path):
    vr = i386_kernel
    assert vr.ok, vr.summary
    spec = boots.guest_spec(vr)
    assert spec.arch == "i386" and spec.slub_debug == "FZPU"
    m = matrix.run([spec], tmp_path / "m", jobs=1)
    r = m.results[0]
    assert m.passed, r.failures
    assert "qemu-system-i386" in (r.out_dir / "qemu.log").read_text()
    t = {x.name: x for x in r.boot.results.root.subtests}
    # the same tests as on x86_64, and those SLUB has run (not skipped)
    for name in ("slabconv_test", "slub_validate", "slab_caches_visible",
                 "sysfs_slab_caches", "memcg_slab_accounting", "module_unload"):
        assert t[name].status is Status.PASS, (name, t[name].directive)
    assert r.boot.module_tests >= 26
    # fault injection is not built into slub-i386 (no FAIL_PAGE_ALLOC nor
    # FAILSLAB): the group says so; it is proven on x86_64 (docs/TESTING.md)
    assert t["fault_injection"].status is Status.SKIP and \
        "CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAILSLAB are not set" in t["fault_injection"].directive
    # a 32-bit kernel (the console does not name the arch)
    assert "\nCONFIG_X86_32=y\n" in (spec.build_dir / ".config").read_text()
