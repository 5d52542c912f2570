"""verify/nullcheck.py: cocci/rules/slab_null.cocci at every patch of a series.

The planted-defect proof needs no kernel: a tiny git series whose first
patch makes new_x() return page_slab(alloc_x(...)) while alloc_x() returns
NULL when the page allocator fails (the shape of the generated 5.10 patch
0012 "mm/slub: Convert new_slab() to return a struct slab") is reported
naming that patch, file and line, and the patch that fixes it is clean.
The real series is in the slow tests at the end."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from base.log import SlabconvError
from verify import bisect, nullcheck

BASE_C = """\
static struct page *alloc_x(struct kmem_cache *s, gfp_t flags)
{
	struct page *page = alloc_pages(flags, s->order);

	if (!page)
		return NULL;
	page->objects = s->objects;
	return page;
}

static struct page *new_x(struct kmem_cache *s, gfp_t flags)
{
	return alloc_x(s, flags);
}

/* the baseline's own hazard: used, then tested (not the series') */
static void old_hazard(struct page *page)
{
	struct page *head = compound_head(page);

	if (!page)
		return;
	head->objects = 0;
}
"""

DEFECT_C = BASE_C.replace("""static struct page *new_x(struct kmem_cache *s, gfp_t flags)
{
	return alloc_x(s, flags);
}""", """static struct slab *new_x(struct kmem_cache *s, gfp_t flags)
{
	return page_slab(alloc_x(s, flags));
}""")

FIXED_C = BASE_C.replace("""static struct page *new_x(struct kmem_cache *s, gfp_t flags)
{
	return alloc_x(s, flags);
}""", """static struct slab *new_x(struct kmem_cache *s, gfp_t flags)
{
	struct page *page = alloc_x(s, flags);

	if (!page)
		return NULL;
	return page_slab(page);
}""")

HEADER = """\
struct slab;
static inline int slab_objects(const struct slab *slab);
"""

DEFECT_LINE = DEFECT_C.splitlines().index("\treturn page_slab(alloc_x(s, flags));") + 1


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@localhost",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@localhost",
               GIT_AUTHOR_DATE="2021-10-04T12:00:00Z", GIT_COMMITTER_DATE="2021-10-04T12:00:00Z")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def commit(repo: Path, subject: str, files: dict) -> str:
    for name, text in files.items():
        f = repo / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def series(tmp_path, cache):
    """baseline; 1 the defect (and a header, and a file that is not C);
    2 its fix; 3 a change elsewhere in the file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "Baseline", {"mm/slub.c": BASE_C, "README": "x\n"})
    git(repo, "tag", "slabconv-baseline")
    commit(repo, "mm/slub: Convert new_x() to return a struct slab",
           {"mm/slub.c": DEFECT_C, "mm/slab.h": HEADER, "README": "y\n"})
    commit(repo, "mm/slub: Test what alloc_x() returns", {"mm/slub.c": FIXED_C})
    commit(repo, "mm/slub: A comment", {"mm/slub.c": "/* slub */\n" + FIXED_C})
    return repo


def test_the_planted_defect_is_named_with_its_patch_file_and_line_and_the_fix_is_clean(series):
    r = nullcheck.check_series(series, "slabconv-baseline", "HEAD")
    assert not r.ok
    assert [p.ok for p in r.patches] == [False, True, True]
    [f] = r.findings
    assert (f.patch, f.file, f.line, f.text) == (1, "mm/slub.c", DEFECT_LINE,
                                                 "page_slab(alloc_x(...))")
    assert f.subject == "mm/slub: Convert new_x() to return a struct slab"
    assert f.why == "alloc_x() returns NULL at mm/slub.c:6"
    assert f.gone_at == 2                      # the fix removes it
    assert r.patches[0].files == ["mm/slab.h", "mm/slub.c"]      # C and headers only
    # one line per finding, naming the patch, the file and the line
    [p] = r.problems()
    assert p.startswith("patch 0001 (mm/slub: Convert new_x() to return a struct slab): "
                        f"mm/slub.c:{DEFECT_LINE}: page_slab(alloc_x(...)) on a value that can "
                        "be NULL: alloc_x() returns NULL at mm/slub.c:6")
    text = r.summary_text()
    assert text.startswith("nullcheck: FAIL: 1 finding(s)")
    assert f"mm/slub.c:{DEFECT_LINE}: page_slab(alloc_x(...))" in text
    assert "gone at patch 0002" in text
    # the baseline's own hazard is listed, not blamed on a patch, not failing
    [b] = r.baseline
    assert (b.patch, b.text) == (0, "compound_head(page)")
    assert "in the baseline's code" in text
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ok"] is False and d["counts"]["findings"] == 1
    assert d["patches"][0]["findings"][0]["line"] == DEFECT_LINE
    assert d["patches"][1]["ok"] and d["patches"][1]["findings"] == []


def test_the_fixed_series_passes(series):
    r = nullcheck.check_series(series, "HEAD~2", "HEAD")     # the fix and after
    assert r.ok and r.problems() == [] and not r.findings
    assert r.summary_text().startswith("nullcheck: OK: 0 finding(s)")


def test_a_rerun_on_an_unchanged_series_runs_no_spatch(series, cache, monkeypatch):
    first = nullcheck.check_series(series)
    assert first.counts()["spatch_runs"] == 5   # base, 1, 2, 3 of slub.c; slab.h
    assert not list(cache.rglob("*.tmp*"))      # written with os.replace
    real = subprocess.run

    def no_spatch(cmd, *a, **k):
        assert "--sp-file" not in cmd, "spatch ran a rule although its result is cached"
        return real(cmd, *a, **k)
    monkeypatch.setattr(subprocess, "run", no_spatch)
    again = nullcheck.check_series(series)
    assert again.counts()["spatch_runs"] == 0
    assert again.problems() == first.problems()


def test_progress_goes_to_stderr_with_totals(series, capsys):
    nullcheck.check_series(series)
    err = capsys.readouterr().err
    assert "[nullcheck] [1/3] mm/slub: Convert new_x() to return a struct slab: 2 file(s), " \
           "1 finding(s)" in err
    assert "[nullcheck] [3/3]" in err
    assert "[nullcheck] 3 patches, 4 file(s) checked, 1 finding(s), 0 spatch failure(s)" in err


def test_a_spatch_failure_fails_the_check_with_its_message(series, tmp_path, monkeypatch):
    bad = tmp_path / "slab_null.cocci"
    bad.write_text(nullcheck.RULE.read_text().replace("@retnull depends on report@",
                                                      "@retnull depends on report@ @@ (", 1))
    monkeypatch.setattr(nullcheck, "RULE", bad)
    r = nullcheck.check_series(series)
    assert not r.ok and not r.findings
    assert len(r.errors) == 4                  # every file of every patch
    p = r.problems()[0]
    assert p.startswith("patch 0001 (mm/slub: Convert new_x() to return a struct slab): "
                        "spatch failed: mm/slab.h")
    assert "spatch exit" in r.patches[0].errors[0]
    assert "FAIL" in r.summary_text()


def test_code_a_patch_makes_unparsable_fails_the_check(series):
    commit(series, "mm/slub: Broken", {"mm/slub.c": FIXED_C.replace(
        "\treturn page_slab(page);", "\treturn page_slab(alloc_x(s, flags)) +;")})
    r = nullcheck.check_series(series, "HEAD~1", "HEAD")
    assert not r.ok and not r.findings           # the rule did not see the function
    [e] = r.patches[0].errors
    assert "spatch cannot parse this code" in e and "page_slab(alloc_x(s, flags)) +;" in e
    assert e.startswith("mm/slub.c:")


def test_unparsed_macro_definitions_are_left_out():
    err = """HANDLING: include/linux/page-flags.h
parse error
 = error in include/linux/page-flags.h; set verbose_parsing for more info
badcount: 4
bad: }
bad: 
bad: #define page_slab(p)		(_Generic((p),				\\
bad: 	const struct page * :	(const struct slab *)compound_head((struct page *)(p)), \\
BAD:!!!!! 	struct page * :		(struct slab *)compound_head(p)))
parse error
 = error in mm/x.c; set verbose_parsing for more info
badcount: 2
bad: static int f(void)
bad: {
BAD:!!!!! 	return 1 +;
"""
    assert nullcheck.parse_unparsed(err) == ["return 1 +;"]


def test_spatch_failures_are_told_from_the_code_it_echoes():
    echoed = "parse error\nbadcount: 2\nbad: if (exception)\nBAD:!!!!! \tTimeout at(x) +;\n"
    assert not nullcheck._spatch_failed(0, echoed)
    assert nullcheck._spatch_failed(0, echoed + "Timeout at 120.000000 on: mm/slub.c\n")
    assert nullcheck._spatch_failed(0, "EXN: Failure(\"...\")\n")
    assert nullcheck._spatch_failed(255, "")


def test_output_that_is_not_a_finding_is_an_error():
    assert nullcheck.parse_output("mm/slub.c:12: page_slab(p) on a value that can be NULL: "
                                  "p is tested against NULL after this use, at mm/slub.c:14\n") \
        == [("mm/slub.c", 12, "page_slab(p)",
             "p is tested against NULL after this use, at mm/slub.c:14")]
    with pytest.raises(SlabconvError):
        nullcheck.parse_output("something else\n")


def test_a_series_that_is_not_linear_is_exit_2(series):
    with pytest.raises(SlabconvError) as e:
        nullcheck.check_series(bisect.Repo(series), "HEAD", "HEAD")
    assert e.value.exit_code == 2


def test_the_command_line_exits_1_on_a_finding(series, tmp_path, capsys):
    out = tmp_path / "n.json"
    assert nullcheck.main(["--repo", str(series), "--json", str(out)]) == 1
    assert "nullcheck: FAIL" in capsys.readouterr().out
    assert json.loads(out.read_text())["counts"]["findings"] == 1
    assert nullcheck.main(["--repo", str(series), "--base", "HEAD~2"]) == 0


# ---- the real series (the fetched 5.10 tree) ---------------------------------------

def _applied_series_repo(tmp_path: Path) -> Path:
    """A clone of the committed 5.10 series applied with git am (the tag
    slabconv-baseline, then one commit per patch).  SLABCONV_TEST_SERIES_REPO:
    a repository that has it already, used instead (only cloned)."""
    src = os.environ.get("SLABCONV_TEST_SERIES_REPO")
    if not src:
        from base import paths
        from cli import apply
        from regen.source import resolve
        ap = apply.apply_series(resolve(paths.DEFAULT_KERNEL, None),
                                   paths.GENERATED / paths.DEFAULT_KERNEL)
        src = str(ap.tree)
    clone = tmp_path / "series"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", src, str(clone)],
                   check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", src, "HEAD"], check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--tags", src], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "-B", "t", "FETCH_HEAD"],
                   check=True)
    return clone


@pytest.mark.slow
def test_the_committed_series_passes(tmp_path, cache):
    """Every patch of generated-patches/5.10/: no page_slab() or other
    dereferencing slab helper on a value that can be NULL, and spatch
    parses all they change."""
    r = nullcheck.check_series(_applied_series_repo(tmp_path))
    assert len(r.patches) == len(list((Path(nullcheck.paths.GENERATED) / "5.10").glob(
        "[0-9][0-9][0-9][0-9]-*.patch"))) - 1
    assert r.ok, r.summary_text()


@pytest.mark.slow
def test_a_planted_untested_new_slab_in_the_real_slub_is_named(tmp_path, cache):
    """On top of the real series: early_kmem_cache_node_alloc() without its
    BUG_ON(!slab) reads slab_nid(slab) of new_slab()'s result untested."""
    repo = _applied_series_repo(tmp_path)
    slub = repo / "mm/slub.c"
    text = slub.read_text()
    planted = text.replace("\tslab = new_slab(kmem_cache_node, GFP_NOWAIT, node);\n\n"
                           "\tBUG_ON(!slab);\n",
                           "\tslab = new_slab(kmem_cache_node, GFP_NOWAIT, node);\n\n")
    assert planted != text
    line = planted.splitlines().index("\tif (slab_nid(slab) != node) {") + 1
    commit(repo, "mm/slub: Planted: no BUG_ON(!slab)", {"mm/slub.c": planted})
    commit(repo, "mm/slub: Planted: the BUG_ON(!slab) again", {"mm/slub.c": text})
    r = nullcheck.check_series(repo, "HEAD~2", "HEAD")
    [f] = r.findings
    assert (f.patch, f.file, f.line, f.text) == (1, "mm/slub.c", line, "slab_nid(slab)")
    assert "new_slab()" in f.why and f.gone_at == 2
    assert r.patches[1].ok
