"""Integration: a __check_heap_object() that accepts every copy fails the boot.

The series converts __check_heap_object() (hardened usercopy's check of a
slab object's bounds and its cache's usercopy whitelist) to a struct slab.
tests/planted/usercopy/0001-slub-planted-usercopy-defect.patch (a test
fixture, not a rule) makes the converted function return before it checks
anything; it is applied with `git am` on top of the committed 5.10 series,
the slub configuration is built incrementally (only mm/slub.c changes) and
its guest booted through boot.matrix as `slabconv boot` boots it.  The
guest module's three copies that must be rejected (past the end of an
object, outside a cache's whitelist, into a freed neighbour) go ahead: each
of those cases must fail, saying the copy was not rejected, and the console
check must miss the hardened-usercopy report in each bracket; the in-bounds
copies still pass.  Nothing here skips.

Like tests/test_boot_planted.py, the fixture leaves the shared patched slub
build as it found it: the committed series' kernel.
"""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import matrix  # noqa: E402
from base import paths  # noqa: E402
from cli import apply, boots

pytestmark = [pytest.mark.slow, pytest.mark.network]

PLANTED = Path(__file__).resolve().parent / "planted" / "usercopy"
REJECTED = {"usercopy_reject_past_end": "slabconv_rej",
            "usercopy_reject_outside_window": "slabconv_uc",
            "usercopy_reject_freed_neighbour": "slabconv_rej"}


@pytest.fixture(scope="module")
def planted_kernel():
    import verify
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    patches = sorted(PLANTED.glob("*.patch"))
    assert patches
    subprocess.run(["git", "-C", str(ap.tree), "am", "-q", *map(str, patches)], check=True)
    assert "slabconv planted defect" in (ap.tree / "mm/slub.c").read_text()
    ident = f"{src.source_id}@{ap.baseline_id[:12]}"
    try:
        vr = verify.check_build(src.tree, ap.tree, paths.cache_dir("build", src.version),
                                config="slub", baseline_id=ident)
        assert vr.patched is not None and vr.patched.ok, vr.summary
        # what was built is the planted tree (the work tree is shared: a
        # regen or apply elsewhere in between would make this test vacuous)
        assert "slabconv planted defect" in (vr.patched_src / "mm/slub.c").read_text()
        yield vr
    finally:
        # leave the shared patched slub build as found (the committed series)
        ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
        back = verify.check_build(src.tree, ap.tree, paths.cache_dir("build", src.version),
                                  config="slub", baseline_id=ident)
        assert back.patched is not None and back.patched.ok, back.summary
        assert "slabconv planted defect" not in (back.patched_src / "mm/slub.c").read_text()


def test_check_heap_object_that_accepts_every_copy_fails_the_boot(planted_kernel, tmp_path):
    spec = boots.guest_spec(planted_kernel, name="slub-usercopy-planted")
    m = matrix.run([spec], tmp_path / "m", jobs=1)
    assert not m.passed
    r = m.results[0]
    assert r.verdict == "FAIL", r.failures
    ktap = r.boot.ktap
    # each copy that must be rejected went ahead, and its case says so
    for name in REJECTED:
        assert re.search(rf"^\s*not ok \d+ - {name} # .*was not rejected", ktap, re.M), ktap
    # the in-bounds copies still pass: only the rejections are missing
    assert re.search(r"^\s*ok \d+ - usercopy_kmalloc_offset$", ktap, re.M), ktap
    assert re.search(r"^\s*ok \d+ - usercopy_cache_whitelist$", ktap, re.M), ktap
    # the console check misses the report in each bracket, naming its cache
    missing = [f.line for f in r.boot.findings if f.kind == "expected"]
    assert len(missing) == len(REJECTED), r.failures
    for line, cache in zip(missing, REJECTED.values()):
        assert f"no usercopy exposure report naming cache {cache}" in line, missing
    assert not [f for f in r.boot.findings if f.kind in ("bug", "oops", "panic")], r.failures
    x = ET.fromstring((tmp_path / "m" / "junit.xml").read_text())
    f = x.find("./testsuite[@name='slub-usercopy-planted']/testcase[@name='console']/failure")
    assert f is not None and "no usercopy exposure report" in f.text
