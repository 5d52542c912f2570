"""verify/checkpatch.py without a kernel tree: checkpatch's output parsed,
hunks counted, patches reversed line for line, inherited findings marked,
missing tools and scripts reported.  The real checkpatch.pl on the
committed series and on a planted defect: test_checkpatch_real.py."""
import os
import subprocess
import sys

import pytest

from base.log import SlabconvError
from verify import checkpatch as C

OUTPUT = """\
WARNING:BAD_SIGN_OFF: Non-standard signature: Originally-by:
#12: 
Originally-by: Matthew Wilcox (Oracle) <willy@infradead.org>

ERROR:BAD_SIGN_OFF: Unrecognized email address: 'slabconv (cocci/rules/x.cocci)'
#13: 
Generated-by: slabconv (cocci/rules/x.cocci)

ERROR:SPACING: space required after that ',' (ctx:VxV)
#40: FILE: mm/slub.c:3281:
+			  df.cnt,_RET_IP_);
 			        ^

WARNING:LINE_SPACING: Missing a blank line after declarations
#52: FILE: mm/slub.c:3300:
+	int a;
+	a = 1;

ERROR:MISSING_SIGN_OFF: Missing Signed-off-by: line(s)

total: 3 errors, 2 warnings, 60 lines checked

NOTE: For some of the reported defects, checkpatch may be able to
      mechanically convert to the typical style using --fix or --fix-inplace.

Your patch has style problems, please review.
"""

PATCH = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: slabconv <slabconv@localhost>
Subject: [PATCH 08/58] mm/slub: Convert process_slab() to take a struct
 slab

Body.

Signed-off-by: slabconv <slabconv@localhost>
---
 mm/slub.c | 4 ++--
 1 file changed, 2 insertions(+), 2 deletions(-)

diff --git a/mm/slub.c b/mm/slub.c
index 0d93b44..6ef6228 100644
--- a/mm/slub.c
+++ b/mm/slub.c
@@ -10,5 +10,5 @@ static void f(void)
 {
-	g(a,b);
+	g(a,c);
 
-	h(x);
+	h(y);
 }
@@ -30,2 +30,3 @@ static void k(void)
 	x();
+	y();
 	z();
-- 
slabconv
"""


def test_parse_output_levels_types_locations():
    fs, totals = C.parse_output(OUTPUT)
    assert totals == {"errors": 3, "warnings": 2, "checks": 0, "lines": 60}
    assert [(f.level, f.type, f.patch_line, f.file, f.line) for f in fs] == [
        ("WARNING", "BAD_SIGN_OFF", 12, "", 0),
        ("ERROR", "BAD_SIGN_OFF", 13, "", 0),
        ("ERROR", "SPACING", 40, "mm/slub.c", 3281),
        ("WARNING", "LINE_SPACING", 52, "mm/slub.c", 3300),
        ("ERROR", "MISSING_SIGN_OFF", 0, "", 0)]
    assert fs[2].message == "space required after that ',' (ctx:VxV)"
    assert fs[2].excerpt[0] == "+\t\t\t  df.cnt,_RET_IP_);"
    assert fs[3].excerpt == ["+\tint a;", "+\ta = 1;"]
    assert fs[1].excerpt == ["Generated-by: slabconv (cocci/rules/x.cocci)"]
    assert fs[2].where() == "mm/slub.c:3281" and fs[0].where() == "patch line 12"
    assert "NOTE" not in " ".join(x for f in fs for x in f.excerpt)


def test_parse_output_without_total_and_with_checks():
    assert C.parse_output("Can't locate Term/ANSIColor.pm in @INC\n") == ([], None)
    fs, t = C.parse_output("CHECK:PARENTHESIS_ALIGNMENT: Alignment should match open "
                           "parenthesis\n#9: FILE: mm/slab.c:3:\n+\tfoo(a,\n\n"
                           "total: 0 errors, 0 warnings, 1 checks, 9 lines checked\n")
    assert t["checks"] == 1 and [(f.level, f.file) for f in fs] == [("CHECK", "mm/slab.c")]


def test_hunks_are_counted_not_guessed_from_the_signature():
    lines = PATCH.split("\n")
    ranges = C.hunk_ranges(lines)
    assert len(ranges) == 2
    a, b = ranges[1]
    assert lines[a - 1] == " \tx();" and lines[b - 1] == " \tz();"
    assert lines[b] == "-- "              # the signature separator is not in a hunk


def test_reverse_patch_keeps_line_numbers_and_is_an_involution():
    rev = C.reverse_patch(PATCH)
    assert len(rev.split("\n")) == len(PATCH.split("\n"))
    assert "-\tg(a,c);" in rev and "+\tg(a,b);" in rev
    assert "@@ -10,5 +10,5 @@ static void f(void)" in rev
    assert "@@ -30,3 +30,2 @@ static void k(void)" in rev
    assert "-\ty();" in rev
    assert rev.split("\n")[-3] == "-- "   # the signature stays
    assert C.reverse_patch(rev) == PATCH


def test_inherited_findings_are_marked_with_the_baseline_line():
    lines = PATCH.split("\n")
    added = lines.index("+\tg(a,c);") + 1
    removed = lines.index("-\tg(a,b);") + 1
    other = lines.index("+\ty();") + 1
    fwd = [C.Finding("ERROR", "SPACING", "space required after that ',' (ctx:VxV)",
                     added, "mm/slub.c", 11),
           C.Finding("ERROR", "SPACING", "space required after that ',' (ctx:VxV)",
                     other, "mm/slub.c", 31),
           C.Finding("ERROR", "BAD_SIGN_OFF", "Unrecognized email address", 9)]
    rev = [C.Finding("ERROR", "SPACING", "space required after that ',' (ctx:VxO)",
                     removed, "mm/slub.c", 11),
           C.Finding("ERROR", "BAD_SIGN_OFF", "Unrecognized email address", 9)]
    assert C.mark_inherited(fwd, rev, PATCH) == 1
    assert fwd[0].inherited == "mm/slub.c:11 before the patch: g(a,b);"
    assert fwd[1].inherited is None           # another hunk: new
    assert fwd[2].inherited is None           # the commit message is never inherited


def test_inherited_by_the_quoted_line_when_checkpatch_numbers_a_neighbour():
    """checkpatch's #N for a multi-line statement can be the line after the
    one it quotes: in the reversed run that is the patch's added line."""
    lines = PATCH.split("\n")
    added = lines.index("+\th(y);") + 1
    fwd = [C.Finding("CHECK", "PARENTHESIS_ALIGNMENT", "Alignment should match open parenthesis",
                     added, "mm/slub.c", 13, ["+\th(y);", " }"])]
    rev = [C.Finding("CHECK", "PARENTHESIS_ALIGNMENT", "Alignment should match open parenthesis",
                     added, "mm/slub.c", 13, ["+\th(x);", " }"])]
    assert C.mark_inherited(fwd, rev, PATCH) == 1
    assert fwd[0].inherited == "mm/slub.c:13 before the patch: h(x);"
    # a reversed complaint whose quoted lines the patch does not remove: not inherited
    fwd[0].inherited = None
    rev[0].excerpt = ["+\tsomething(else);"]
    assert C.mark_inherited(fwd, rev, PATCH) == 0


def _result(findings_per_patch):
    ps = [C.PatchResult(f"{i + 1:04d}-p.patch", f"subject {i}", fs, {})
          for i, fs in enumerate(findings_per_patch)]
    return C.CheckpatchResult(ok=not any(p.errors for p in ps), tree="/t",
                              script="/t/scripts/checkpatch.pl", patches=ps)


def test_summary_and_json_list_errors_and_warnings_per_patch():
    e = C.Finding("ERROR", "TRAILING_WHITESPACE", "trailing whitespace", 30, "mm/slub.c", 7)
    w = C.Finding("WARNING", "AVOID_BUG", "Avoid crashing the kernel", 40, "mm/slab.c", 9,
                  inherited="mm/slab.c:9 before the patch: BUG_ON(x);")
    r = _result([[], [e, w]])
    assert not r.ok and [p.patch for p in r.failed] == ["0002-p.patch"]
    s = r.summary()
    assert "0001-p.patch: clean" in s
    assert "0002-p.patch: 1 error(s), 1 warning(s)" in s
    assert "ERROR:TRAILING_WHITESPACE mm/slub.c:7: trailing whitespace" in s
    assert "[inherited: mm/slab.c:9 before the patch: BUG_ON(x);]" in s
    assert "checkpatch: FAIL: 1 error(s) in 1 patch(es), 1 warning(s)" in s
    d = r.to_dict()
    assert d["failed"] == ["0002-p.patch"] and d["counts"] == {"error": 1, "warning": 1,
                                                              "check": 0}
    assert d["patches"][1]["warnings"][0]["inherited"].startswith("mm/slab.c:9")
    assert r.problems == ["0002-p.patch: 1 checkpatch error(s): TRAILING_WHITESPACE mm/slub.c:7"]
    assert _result([[w]]).ok                    # warnings do not fail


def test_series_patches_leave_out_the_cover_letter(tmp_path):
    for n in ("0000-cover-letter.patch", "0001-a.patch", "0002-b.patch", "SOURCE"):
        (tmp_path / n).write_text("x")
    assert [p.name for p in C.series_patches(tmp_path)] == ["0001-a.patch", "0002-b.patch"]
    with pytest.raises(SlabconvError) as e:
        C.series_patches(tmp_path / "none")
    assert e.value.exit_code == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(SlabconvError) as e:
        C.series_patches(tmp_path / "empty")
    assert e.value.exit_code == 2


def test_subject_unfolds_continuation_lines():
    assert C._subject(PATCH) == "mm/slub: Convert process_slab() to take a struct slab"


def test_no_checkpatch_in_the_tree_is_bad_input(tmp_path):
    with pytest.raises(SlabconvError) as e:
        C.find_script(tmp_path)
    assert e.value.exit_code == 2


def test_missing_perl_is_an_error_not_a_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))          # no perl anywhere
    with pytest.raises(SlabconvError) as e:
        C.require_perl()
    assert e.value.exit_code == 3 and "perl" in str(e.value)


def test_perl_without_a_module_is_an_error(tmp_path, monkeypatch):
    fake = tmp_path / "perl"
    fake.write_text("#!/bin/sh\necho \"Can't locate Term/ANSIColor.pm in @INC\" >&2\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(SlabconvError) as e:
        C.require_perl()
    assert e.value.exit_code == 3 and "Term/ANSIColor" in str(e.value)


def test_a_checkpatch_that_prints_no_total_is_a_failure(tmp_path):
    script = tmp_path / "scripts" / "checkpatch.pl"
    script.parent.mkdir()
    script.write_text("print STDERR \"boom\\n\"; exit 2;\n")
    with pytest.raises(SlabconvError) as e:
        C.run_checkpatch("perl", script, tmp_path, PATCH, "0008.patch")
    assert "did not check 0008.patch" in str(e.value) and "boom" in str(e.value)


def test_counts_that_do_not_match_the_total_are_a_failure(tmp_path):
    script = tmp_path / "scripts" / "checkpatch.pl"
    script.parent.mkdir()
    script.write_text('print "ERROR:X: y\\n#1: \\nz\\n\\ntotal: 2 errors, 0 warnings, '
                      '3 lines checked\\n"; exit 1;\n')
    with pytest.raises(SlabconvError, match="not understood"):
        C.run_checkpatch("perl", script, tmp_path, PATCH, "p")


def test_checkpatch_runs_without_git_outside_the_tree(tmp_path, monkeypatch):
    """The environment checkpatch sees: GIT_DIR points nowhere (no `git
    ls-files` turning a tracked patch into a source file), cwd a directory
    of the cache (checkpatch writes its CamelCase cache there), never the
    tree (named by --root)."""
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    script = tmp_path / "scripts" / "checkpatch.pl"
    script.parent.mkdir()
    script.write_text('use Cwd; print "ERROR:ENV: $ENV{GIT_DIR} " . getcwd() . "\\n\\n'
                      'total: 1 errors, 0 warnings, 1 lines checked\\n";\n')
    fs, _ = C.run_checkpatch("perl", script, tmp_path, PATCH, "p")
    assert fs[0].message == f"{C.NO_GIT} {tmp_path / 'cache' / 'checkpatch'}"


def test_cli_bad_tree_exit_2(tmp_path):
    cp = subprocess.run([sys.executable, "-m", "verify.checkpatch", "--tree", str(tmp_path),
                         str(tmp_path)], capture_output=True, text=True,
                        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert cp.returncode == 2 and "slabconv: error:" in cp.stderr


def test_a_run_with_the_same_inputs_is_read_back_not_run_again(tmp_path, monkeypatch):
    """The output of a run is kept by what it depends on (checkpatch.pl, the
    tree's identity, --strict, the patch): the same inputs read it back; any
    one of them changed runs checkpatch again; a failed run is never kept."""
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    count = tmp_path / "count"
    script = tmp_path / "scripts" / "checkpatch.pl"
    script.parent.mkdir()
    script.write_text(f'open(my $f, ">>", "{count}"); print $f "x"; close $f;\n'
                      'print "WARNING:W: w\\n#1: \\n\\ntotal: 0 errors, 1 warnings, 1 lines checked\\n";\n')
    runs = lambda: len(count.read_text()) if count.exists() else 0   # noqa: E731
    first = C.run_checkpatch("perl", script, tmp_path, PATCH, "p", tree_id="stat:1")
    assert runs() == 1
    assert C.run_checkpatch("perl", script, tmp_path, PATCH, "p", tree_id="stat:1") == first
    assert runs() == 1                                  # read back
    C.run_checkpatch("perl", script, tmp_path, PATCH + "\n", "p", tree_id="stat:1")
    C.run_checkpatch("perl", script, tmp_path, PATCH, "p", tree_id="stat:2")
    C.run_checkpatch("perl", script, tmp_path, PATCH, "p", strict=True, tree_id="stat:1")
    C.run_checkpatch("perl", script, tmp_path, PATCH, "p")          # no identity: not kept
    C.run_checkpatch("perl", script, tmp_path, PATCH, "p")
    assert runs() == 6
    script.write_text(script.read_text() + "# changed\n")          # checkpatch.pl changed
    C.run_checkpatch("perl", script, tmp_path, PATCH, "p", tree_id="stat:1")
    assert runs() == 7
    script.write_text('print STDERR "boom\\n"; exit 2;\n')
    for _ in range(2):
        with pytest.raises(SlabconvError):
            C.run_checkpatch("perl", script, tmp_path, PATCH, "q", tree_id="stat:3")
    assert not C._stored(C.run_key(script, "stat:3", PATCH, False)).exists()
