"""verify/whitespace.py: whitespace-only -/+ pairs, and which a moved
parenthesis justifies; and regen's layout pass (regen/tidy.py
keep_indentation()) that leaves none unjustified."""
import subprocess
import sys
from pathlib import Path

from regen import tidy
from verify import whitespace

REPO = Path(__file__).resolve().parent.parent
SERIES = sorted(p for p in (REPO / "generated-patches" / "5.10").glob("0*.patch")
                if not p.name.startswith("0000-"))


def patch(hunk: str, path: str = "mm/slub.c") -> str:
    return (f"From x\nSubject: [PATCH] t\n\n---\ndiff --git a/{path} b/{path}\n"
            f"--- a/{path}\n+++ b/{path}\n{hunk}")


# The re-indentation regen made in "Convert __slab_free() to take a struct
# slab" until its layout pass kept continuation lines: the parenthesis of
# __cmpxchg_double_slab( did not move, yet its arguments went from 3 to 6 tabs.
PLANTED = """\
@@ -100,9 +100,9 @@ static void unfreeze_partials(void)
 		new.frozen = 0;
 
-	} while (!__cmpxchg_double_slab(s, page,
-			prior, counters,
-			freelist, new.counters,
-			"drain percpu freelist"));
+	} while (!__cmpxchg_double_slab(s, slab,
+						prior, counters,
+						freelist, new.counters,
+						"drain percpu freelist"));
 
"""

# a rename that moves the parenthesis: the aligned continuation moves with it
RENAMED = """\
@@ -10,4 +10,4 @@
-static void account_slab_page(struct page *page, int order,
-			      struct kmem_cache *s)
+static void account_slab(struct slab *slab, int order,
+			 struct kmem_cache *s)
 {
"""

# the same rename, but the continuation was not aligned with the parenthesis
UNALIGNED = """\
@@ -10,4 +10,4 @@
-static void account_slab_page(struct page *page, int order,
-		struct kmem_cache *s)
+static void account_slab(struct slab *slab, int order,
+			 struct kmem_cache *s)
 {
"""


def test_the_planted_reindentation_is_a_finding():
    pairs, justified, found = whitespace.check_text("0011.patch", patch(PLANTED))
    assert (pairs, justified, len(found)) == (3, 0, 3)
    assert found[0].line == 103 and found[0].file == "mm/slub.c"
    assert "prior, counters," in str(found[0]) and "0011.patch: mm/slub.c:103:" in str(found[0])


def test_a_continuation_aligned_with_a_moved_parenthesis_is_justified():
    assert whitespace.check_text("p", patch(RENAMED)) == (1, 1, [])


def test_one_that_was_not_aligned_is_not_justified():
    pairs, justified, found = whitespace.check_text("p", patch(UNALIGNED))
    assert (pairs, justified, len(found)) == (1, 0, 1)


def test_a_change_inside_a_line_is_whitespace_only_too():
    hunk = "@@ -1,2 +1,2 @@\n-\tx = f(a,b);\n+\tx = f(a, b);\n \ty = 0;\n"
    pairs, justified, found = whitespace.check_text("p", patch(hunk))
    assert (pairs, justified, len(found)) == (1, 0, 1)


def test_a_real_change_is_not_a_pair():
    hunk = "@@ -1,2 +1,2 @@\n-\tx = f(page);\n+\tx = f(slab);\n \ty = 0;\n"
    assert whitespace.check_text("p", patch(hunk)) == (0, 0, [])


def test_the_committed_series_has_no_unjustified_pair():
    r = whitespace.check(SERIES)
    assert r.patches == len(SERIES) > 50
    assert r.ok, r.summary()
    assert r.pairs == r.justified > 0, r.summary()     # the realignments after renames


def test_the_command_line(tmp_path):
    bad = tmp_path / "0001-bad.patch"
    bad.write_text(patch(PLANTED))
    cp = subprocess.run([sys.executable, "-m", "verify.whitespace", str(bad), "--json",
                         str(tmp_path / "r.json")], cwd=REPO, capture_output=True, text=True)
    assert cp.returncode == 1 and "whitespace: FAIL: 3 whitespace-only" in cp.stdout, cp.stdout
    assert '"justified": 0' in (tmp_path / "r.json").read_text()
    cp = subprocess.run([sys.executable, "-m", "verify.whitespace", str(SERIES[0])], cwd=REPO,
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    notpatch = tmp_path / "x.patch"
    notpatch.write_text("hello\n")
    cp = subprocess.run([sys.executable, "-m", "verify.whitespace", str(notpatch)], cwd=REPO,
                        capture_output=True, text=True)
    assert cp.returncode == 2 and "not a patch" in cp.stderr


# --- regen's side: keep_indentation() ---------------------------------------

BEFORE = """\
	} while (!__cmpxchg_double_slab(s, page,
			prior, counters,
			"drain"));
static void account_slab_page(struct page *page, int order,
			      struct kmem_cache *s)
{
"""


def test_regen_keeps_a_continuation_whose_parenthesis_did_not_move():
    spatch = BEFORE.replace("(s, page,", "(s, slab,").replace(
        "\t\t\tprior, counters,\n\t\t\t\"drain\"));",
        "\t\t\t\t\t\tprior, counters,\n\t\t\t\t\t\t\"drain\"));")
    assert tidy.keep_indentation(BEFORE, spatch) == BEFORE.replace("(s, page,", "(s, slab,")
    assert tidy.reflow(BEFORE, spatch) == BEFORE.replace("(s, page,", "(s, slab,")


def test_regen_moves_an_aligned_continuation_with_its_parenthesis():
    renamed = BEFORE.replace("account_slab_page(struct page *page,",
                             "account_slab(struct slab *slab,")
    got = tidy.reflow(BEFORE, renamed)      # spatch left it where it was
    assert "static void account_slab(struct slab *slab, int order,\n" \
           "\t\t\t struct kmem_cache *s)\n" in got, got


def test_regen_keeps_a_renamed_signatures_breaks_when_its_body_gets_a_line():
    """The signature and the new first line of the body are one changed
    region: the signature, only renamed, keeps its line breaks (81 columns
    fit in checkpatch's 100) and the body line stays."""
    old = ("static inline bool __cmpxchg_double_slab(struct kmem_cache *s, struct page *page,\n"
           "\t\tvoid *freelist_old, unsigned long counters_old,\n"
           "\t\tconst char *n)\n{\n\tVM_BUG_ON(!irqs_disabled());\n")
    spatch = ("static inline bool __cmpxchg_double_slab(struct kmem_cache *s,\n"
              "\t\t\t\t\t struct slab *slab,\n\t\t\t\t\t void *freelist_old,\n"
              "\t\t\t\t\t unsigned long counters_old,\n\t\t\t\t\t const char *n)\n{\n"
              "\tstruct page *page = slab_page(slab);\n\n\tVM_BUG_ON(!irqs_disabled());\n")
    assert tidy.reflow(old, spatch) == (
        "static inline bool __cmpxchg_double_slab(struct kmem_cache *s, struct slab *slab,\n"
        "\t\tvoid *freelist_old, unsigned long counters_old,\n"
        "\t\tconst char *n)\n{\n\tstruct page *page = slab_page(slab);\n\n"
        "\tVM_BUG_ON(!irqs_disabled());\n")


REWRAP = """\
@@ -355,6 +355,8 @@
 static inline bool cmpxchg_double_slab(struct kmem_cache *s, struct slab *slab,
-		void *freelist_old, unsigned long counters_old,
-		void *freelist_new, unsigned long counters_new,
+				       void *freelist_old,
+				       unsigned long counters_old,
+				       void *freelist_new,
+				       unsigned long counters_new,
 		const char *n)
"""


def test_a_rewrap_is_a_finding():
    """The same arguments broken at other places: each old line broken in
    two is a pair, not justified (the parenthesis is on an unchanged line,
    and they were not aligned with it)."""
    pairs, justified, found = whitespace.check_text("0044.patch", patch(REWRAP))
    assert (pairs, justified, len(found)) == (2, 0, 2), found
    assert found[0].line == 356 and "void *freelist_old," in str(found[0])


def test_a_hunk_is_as_long_as_its_header_says():
    """A removed line that reads "-- " (the text "- ") is not the mail's
    signature: the pair after it is still read."""
    hunk = "@@ -1,3 +1,2 @@\n-- \n-\tx = f(a,b);\n+\tx = f(a, b);\n \ty = 0;\n-- \n2.39.5\n"
    pairs, justified, found = whitespace.check_text("p", patch(hunk))
    assert (pairs, justified, len(found)) == (1, 0, 1), found
