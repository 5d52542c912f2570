"""Integration: a planted runtime defect in a patched kernel fails the boot matrix.

tests/planted/0001-slub-planted-freelist-defect.patch (a test fixture, not
a rule) is applied with `git am` on top of the committed 5.10 series; the
slub configuration is built incrementally (only mm/slub.c changes) and its
guest booted through boot.matrix as `slabconv boot` boots it (slub_debug=FZPU).
Every object of the guest module's caches that __slab_free() puts on a
non-empty freelist gets a free pointer one byte past the next free object.
The matrix must fail (not hang), and SLUB's own report ("BUG <cache> (...):
...") must name one of the module's caches, in the findings and in the
JUnit XML with the console excerpt: a crash of any other kind, or an oops
whose "Modules linked in:" line says slabconv_test, is not enough.  Nothing here skips.
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

PLANTED = Path(__file__).resolve().parent / "planted"
# SLUB's report header, mm/slub.c slab_bug(): "BUG <cache> (Not tainted): <what>"
SLUB_REPORT = re.compile(r"\bBUG (\S+) \((?:Not tainted|Tainted[^)]*)\): ")


@pytest.fixture(scope="module")
def planted_kernel():
    import verify
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    patches = sorted(PLANTED.glob("*.patch"))
    assert patches
    subprocess.run(["git", "-C", str(ap.tree), "am", "-q", *map(str, patches)], check=True)
    # the same baseline identity as verify_applied(): the baseline build is
    # reused, the patched one is incremental (the next verify rebuilds slub.o)
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
        # leave the shared patched slub build as found: the session's
        # patched_kernel (tests/conftest.py), which later tests boot, is that
        # directory, so it must hold the committed series' kernel again
        ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
        back = verify.check_build(src.tree, ap.tree, paths.cache_dir("build", src.version),
                                  config="slub", baseline_id=ident)
        assert back.patched is not None and back.patched.ok, back.summary


def test_broken_freelist_fails_the_matrix(planted_kernel, tmp_path):
    spec = boots.guest_spec(planted_kernel, name="slub-planted")
    assert spec.slub_debug == "FZPU" and spec.arch == "x86_64"
    m = matrix.run([spec], tmp_path / "m", jobs=1)
    assert not m.passed
    r = m.results[0]
    assert r.verdict == "FAIL", r.failures
    # SLUB's own report ("BUG <cache> (Not tainted): ..."), on a cache of the
    # guest module: not any crash, nor the "Modules linked in:" line of an oops
    slub = [m.group(1) for f in r.boot.findings if f.kind == "slub"
            for m in [SLUB_REPORT.search(f.line)] if m]
    assert any(c.startswith("slabconv_") for c in slub), (slub, r.failures)
    x = ET.fromstring((tmp_path / "m" / "junit.xml").read_text())
    f = x.find("./testsuite[@name='slub-planted']/testcase[@name='console']/failure")
    assert f is not None, (tmp_path / "m" / "junit.xml").read_text()
    assert any(m.group(1).startswith("slabconv_") for m in SLUB_REPORT.finditer(f.text)), f.text
    assert "console.log:" in f.text
    text = (tmp_path / "m" / "summary.txt").read_text()
    assert "slub-planted" in text and ("FAIL" in text or "HANG" in text)
    assert (r.out_dir / "console.log").stat().st_size > 1000     # the full console is kept
