"""verify's field users and residue gates on the real series, with real planted failures.

test_verify_gates.py proves the wiring with recorded results; here both
checks run for real (slab_field_users.cocci and residue_page.cocci over the
committed 5.10 series applied with git am) through verify_applied(), on a
hard-link snapshot of the applied tree with two planted defects:

  * a leftover use: mm/zsmalloc.c, a former user of the slab members of
    struct page, reads page->freelist again;
  * a use that is not allowed: a new function of mm/slub.c (a converted
    file, gated) takes a struct page and calls virt_to_head_page().

Only the kernel builds are replaced by a recorded passing result (they are
proved in test_verify_real.py and the end-to-end test); layout, checkpatch
and the NULL check are not asked for.  verify must fail naming both, and
the two checks' statuses must be FAIL.  Nothing here skips.
"""
import pytest

from base import paths
from cli import apply, checks
from verify import tree as T

pytestmark = [pytest.mark.slow, pytest.mark.network]

LEFTOVER = """
unsigned long slabconv_planted_leftover(struct page *page);
unsigned long slabconv_planted_leftover(struct page *page)
{
\treturn (unsigned long)page->freelist;
}
"""
NOT_ALLOWED = """
void *slabconv_planted_page_use(const void *x);
void *slabconv_planted_page_use(const void *x)
{
\tstruct page *page = virt_to_head_page(x);

\treturn page_address(page);
}
"""


def _replace(path, text):
    path.unlink()                   # a hard link: never write through it
    path.write_text(text)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    snap = T.snapshot(ap.tree, tmp_path_factory.mktemp("gates") / "tree")
    for f, add in (("mm/zsmalloc.c", LEFTOVER), ("mm/slub.c", NOT_ALLOWED)):
        _replace(snap / f, (ap.tree / f).read_text() + add)
    return apply.Applied(src, snap, ap.baseline_id, ap.patches, ap.touched)


def test_a_leftover_field_use_and_a_use_not_allowed_fail_verify(planted, monkeypatch, capsys):
    import verify
    from verify import kbuild

    def built(base, tree, out_root, config, **kw):     # a passing build, recorded
        b = kbuild.BuildResult(ok=True, seconds=1.0, warnings=[], log=planted.tree / "log",
                               image=None, compiled=0)
        return verify.VerifyResult(ok=True, config=config, baseline=b, patched=b,
                                   new_warnings=[], sparse=None,
                                   report=planted.tree / f"{config}-report.json",
                                   patched_out=None)
    monkeypatch.setattr(verify, "check_build", built)
    monkeypatch.setattr(checks, "record_verify", lambda *a: None)
    monkeypatch.setattr(checks, "series_code", lambda *a, **k: None)
    g = checks.verify_applied(planted, ("slub",), (), layout=False, checkpatch=False,
                              nullcheck=False)
    out = capsys.readouterr().out
    assert not g.ok
    st = g.status()
    assert st["field-users"] == "FAIL" and st["residue"] == "FAIL", st
    assert st["builds"] == "ok", st
    # the leftover use, and only it
    assert g.field_users["left"] == ["mm/zsmalloc.c"], g.field_users
    assert "LEFT: mm/zsmalloc.c:" in out and "page->freelist in slabconv_planted_leftover" in out
    # the use not allowed, in a gated file, and only it
    gated = [(c.finding.file, c.finding.function, c.finding.kind, c.finding.text)
             for c in g.residue_gated]
    assert gated and {x[1] for x in gated} == {"slabconv_planted_page_use"}, gated
    assert ("mm/slub.c", "slabconv_planted_page_use", "call", "virt_to_head_page") in gated
    assert any("still used after the series in mm/zsmalloc.c" in p for p in g.problems), g.problems
    assert any("NOT allowed in converted file(s) mm/slub.c" in p for p in g.problems), g.problems
