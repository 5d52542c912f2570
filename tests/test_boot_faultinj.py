"""Integration: the fault-injection guest test (init test 10) catches a
slab page allocation failure that the kernel does not survive.

The defect is one the series itself once had (patch 12 as generated
before its fix, tests/planted/series-0012/, which the NULL check names):
new_slab() takes page_slab() of allocate_slab()'s result; when the slab
page cannot be allocated, allocate_slab() returns NULL and page_slab()
(compound_head()) reads NULL->compound_head, the second word of struct
page: "BUG: kernel NULL pointer dereference, address: 0000000000000008"
from ___slab_alloc().  Nothing else in the guest makes a slab page
allocation fail.

`defective_kernel` plants the same dereference on top of the committed
series (tests/planted/faultinj/, applied with git am) and rebuilds the
shared patched slub build incrementally (only mm/slub.c changes, as for
tests/test_boot_planted.py): the guest booted with it must fail for that
reason, and the series' final kernel (the shared `patched_kernel`) must
pass the same test.  The shared build is put back afterwards.  Should
page_slab() no longer read the page (a NULL then passes through), the
fixture says so: the defect is then to be planted another way.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from boot import ktap, matrix  # noqa: E402
from base import paths  # noqa: E402
from cli import apply, boots

pytestmark = [pytest.mark.slow, pytest.mark.network]

PLANTED = REPO / "tests" / "planted" / "faultinj"
DEFECT = re.compile(r"^\+\s*return page_slab\(slab_page\(allocate_slab\(", re.M)
NULL_DEREF = "BUG: kernel NULL pointer dereference, address: 0000000000000008"


def symbolize(vmlinux: Path, addrs) -> dict:
    """{address: function} from vmlinux's ELF symbol table (the guests'
    kernels have no CONFIG_KALLSYMS: their oopses print bare addresses)."""
    out = subprocess.run(["nm", "-n", str(vmlinux)], check=True, text=True,
                         capture_output=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            # ___slab_alloc.constprop.0 -> ___slab_alloc
            syms.append((int(parts[0], 16), parts[2].split(".")[0]))
    res = {}
    for a in addrs:
        best = None
        for v, name in syms:
            if v > a:
                break
            best = name
        res[a] = best
    return res


@pytest.fixture
def defective_kernel():
    """Function-scoped: its one test boots it, and the shared build is put
    back before the next test (test_final_series_... boots that build)."""
    import verify
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    patches = sorted(PLANTED.glob("*.patch"))
    assert len(patches) == 1 and DEFECT.search(patches[0].read_text()), patches
    # page_slab() must still be compound_head() of its page, or NULL passes through
    flags = (ap.tree / "include" / "linux" / "page-flags.h").read_text()
    assert re.search(r"define page_slab\(p\).*\n.*compound_head", flags), \
        "page_slab() no longer reads the page: plant the NULL dereference another way"
    subprocess.run(["git", "-C", str(ap.tree), "am", "-q", *map(str, patches)], check=True)
    # the baseline identity of verify_applied(): the patched slub build is
    # the shared one, rebuilt incrementally (mm/slub.c)
    ident = f"{src.source_id}@{ap.baseline_id[:12]}"
    out_root = paths.cache_dir("build", src.version)
    try:
        vr = verify.check_build(src.tree, ap.tree, out_root, config="slub", baseline_id=ident)
        assert vr.patched is not None and vr.patched.ok, vr.summary
        # what was built is the planted tree (the work tree is shared)
        assert "slabconv planted defect" in (vr.patched_src / "mm/slub.c").read_text()
        yield vr
    finally:
        # the session's patched_kernel (tests/conftest.py), which later tests
        # boot, is that build directory: it must hold the committed series again
        ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
        back = verify.check_build(src.tree, ap.tree, out_root, config="slub", baseline_id=ident)
        assert back.patched is not None and back.patched.ok, back.summary


def test_a_slab_page_failure_the_kernel_does_not_survive_fails_the_guest(defective_kernel,
                                                                           tmp_path):
    spec = boots.guest_spec(defective_kernel, name="slub-null-slab")
    m = matrix.run([spec], tmp_path / "m", jobs=1)
    assert not m.passed
    r = m.results[0]
    assert r.verdict in ("FAIL", "HANG"), r.failures
    b = r.boot
    text = b.console_log.read_text(errors="replace")
    lines = [ktap.clean_line(x) for x in text.splitlines()]
    # The oops: the NULL page's compound_head word, an injected failure just before.
    bug = [f for f in b.findings if f.kind == "bug" and NULL_DEREF in f.line]
    assert bug, b.failures
    at = next(i for i, x in enumerate(lines) if NULL_DEREF in x)
    assert any("FAULT_INJECTION: forcing a failure." in x for x in lines[max(0, at - 12):at]), \
        lines[max(0, at - 12):at + 1]
    assert any(f.kind in ("oops", "panic") for f in b.findings), b.failures
    # In the first fault-injection case, in SLUB's slow path.
    assert "slabconv-fi-ktap: 1..16" in text and "ok 1 - page_fail_64" not in text
    rip = next(x for x in lines[at:] if x.startswith("RIP: 0010:"))
    addr = int(rip.split(":")[-1].split("+")[0], 16)
    vmlinux = defective_kernel.patched_out / "vmlinux"
    trace = [int(a, 16) for a in re.findall(r"\b(?:0x)?(ffffffff8[0-9a-f]{7})\b",
                                            "\n".join(lines[at:at + 60]))]
    where = symbolize(vmlinux, [addr] + trace)
    # compound_head() itself (5.10 with gcc 12 -Os keeps it out of line:
    # "mov 0x8(%rdi),%rdx" with RDI 0), else where it was inlined
    assert where[addr] in ("compound_head", "___slab_alloc", "new_slab", "new_slab_objects"), \
        (rip, where[addr])
    assert "___slab_alloc" in where.values(), where
    # KTAP: the guest died inside test 10, so the document is cut short.
    assert any("fault_injection" in f or "truncated" in f or "no end marker" in f
               for f in b.failures), b.failures


def test_final_series_survives_the_same_failures(patched_kernel, tmp_path):
    spec = boots.guest_spec(patched_kernel, name="slub-final")
    m = matrix.run([spec], tmp_path / "m", jobs=1)
    r = m.results[0]
    assert m.passed, r.failures
    by_name = {t.name: t for t in r.boot.results.root.subtests}
    fi = by_name["fault_injection"]
    assert fi.status is ktap.Status.PASS
    cases = {t.name: t for t in fi.subtests[0].subtests}
    for size in (64, 512, 1024, 4096, 16384):
        for kind in ("page_fail", "page_fail_atomic"):
            assert cases[f"{kind}_{size}"].status is ktap.Status.PASS
    assert cases["failslab_64"].status is ktap.Status.PASS
    assert [t.status for t in fi.subtests] == [ktap.Status.PASS] * 4
    assert r.boot.findings == []
