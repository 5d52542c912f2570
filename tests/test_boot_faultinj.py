"""Integration: the fault-injection guest test (init test 10) catches a
slab page allocation failure that the kernel does not survive.

The defect is the series' own: patches 0001..0012 of the 5.10 series, as
generated before its fix, make new_slab() return
`page_slab(allocate_slab(...))`; when the slab page cannot be allocated,
allocate_slab() returns NULL and page_slab() (compound_head()) reads
NULL->compound_head, the second word of struct page: "BUG: kernel NULL
pointer dereference, address: 0000000000000008" from ___slab_alloc().
Nothing else in the guest makes a slab page allocation fail.

`defective_kernel` applies the committed series' patches 0001..0011 and
that 0012 (tests/planted/series-0012/, kept as generated, so that the test
outlives the fix), builds them in the slub configuration, patched tree
only, in a build directory of its own (the patched slub build that the
other boot tests share is left alone); the guest booted with it must fail
for that reason, and the series' final kernel (the shared `patched_kernel`)
must pass the same test.  Should the committed 0001..0011 change so that
page_slab() no longer reads the page (a NULL then passes through), the
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

PLANTED = REPO / "tests" / "planted" / "series-0012"
DEFECT = re.compile(r"^\+\s*return page_slab\(allocate_slab\(", re.M)
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


@pytest.fixture(scope="module")
def defective_kernel(tmp_path_factory):
    import verify
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    series = paths.GENERATED / paths.DEFAULT_KERNEL
    first11 = sorted(p for p in series.glob("[0-9][0-9][0-9][0-9]-*.patch")
                     if not p.name.startswith("0000-"))[:11]
    assert first11[-1].name.startswith("0011-"), first11[-1]
    (p12,) = PLANTED.glob("0012-*.patch")
    assert DEFECT.search(p12.read_text())
    d = tmp_path_factory.mktemp("series-0012")
    for p in first11 + [p12]:
        shutil.copy2(p, d / p.name)
    ap = apply.apply_series(src, d)
    # page_slab() must still be compound_head() of its page, or NULL passes through
    flags = (ap.tree / "include" / "linux" / "page-flags.h").read_text()
    assert re.search(r"define page_slab\(p\).*\n.*compound_head", flags), \
        "page_slab() no longer reads the page: plant the NULL dereference another way"
    out_root = paths.cache_dir("build", src.version, "series-0012")
    vr = verify.check_build(src.tree, ap.tree, out_root, config="slub",
                            baseline_id=f"{src.source_id}@{ap.baseline_id[:12]}", baseline=False)
    assert vr.patched is not None and vr.patched.ok, vr.summary
    return vr


def test_slab_page_failure_at_patch_0012_fails_the_guest(defective_kernel, tmp_path):
    spec = boots.guest_spec(defective_kernel, name="slub-0012")
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
