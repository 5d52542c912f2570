"""The review report on a small synthetic series (no kernel, no tool run):
parsing the patches, attribution to rules and templates, skipped entries,
results tied to the series (or "not run"), and both renderings."""
import json
import os
import textwrap
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from report import patches as P
from report import results as R
from report import review
from slabconv import paths

REPO = Path(__file__).resolve().parent.parent


def _patch(n: int, total: int, subject: str, sources: str, diff: str, body: str = "Body.\n") -> str:
    return (f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            f"From: slabconv <slabconv@localhost>\n"
            f"Date: Mon, 4 Oct 2021 14:45:48 +0100\n"
            f"Subject: [PATCH {n:02d}/{total:02d}] {subject}\n\n"
            f"{body}\n"
            f"Originally-by: Seed Author <seed@example.org>\n"
            f"Generated-with: slabconv ({sources})\n"
            f"Signed-off-by: slabconv <slabconv@localhost>\n"
            f"---\n stat lines\n\n{diff}-- \nslabconv\n\n")


DIFF1 = """\
diff --git a/mm/a.c b/mm/a.c
index 1111111..2222222 100644
--- a/mm/a.c
+++ b/mm/a.c
@@ -1,4 +1,4 @@ int f(void)
 int x;
-int y;
+int z;
 int w;
-- 
@@ -10,2 +10,3 @@ static void g(void)
 a();
+b(<script>);
 c();
"""

DIFF2 = """\
diff --git a/mm/a.c b/mm/a.c
index 2222222..3333333 100644
--- a/mm/a.c
+++ b/mm/a.c
@@ -20 +20 @@ h
-old();
+new();
diff --git a/include/b.h b/include/b.h
index 4444444..5555555 100644
--- a/include/b.h
+++ b/include/b.h
@@ -3,0 +4,3 @@
+#define T_ONE 1
+#define T_TWO 2
+#define T_THREE 3
diff --git a/include/new.h b/include/new.h
new file mode 100644
index 0000000..6666666
--- /dev/null
+++ b/include/new.h
@@ -0,0 +1 @@
+/* new */
"""

DIFF3 = """\
diff --git a/include/b.h b/include/b.h
index 5555555..7777777 100644
--- a/include/b.h
+++ b/include/b.h
@@ -1,3 +1,2 @@
 struct s {
-	int gone;
 };
"""

SUBJ3 = ("mm: A subject long enough that git format-patch folds it over two lines "
         "of the mail header")


def _fold(text: str) -> str:
    """Fold the long Subject: header as git does (a continuation line)."""
    return text.replace(f"] {SUBJ3}\n", "] mm: A subject long enough that git format-patch\n"
                        " folds it over two lines of the mail header\n")


@pytest.fixture
def world(tmp_path):
    """cocci/ (rules, templates, tests, manifest), regen/members.py and a
    three-patch series with a cover letter and SOURCE."""
    repo = tmp_path / "repo"
    cocci = repo / "cocci"
    (cocci / "rules").mkdir(parents=True)
    (cocci / "templates").mkdir()
    (cocci / "tests" / "alpha").mkdir(parents=True)
    (repo / "regen").mkdir()
    (repo / "verify").mkdir()
    (cocci / "rules" / "alpha.cocci").write_text(textwrap.dedent("""\
        // SPDX-License-Identifier: GPL-2.0-only
        /// Turn y into z.
        ///
        /// Longer text.
        //
        // Confidence: High (it is only a rename,
        //   nothing else)
        // Options: --no-includes

        virtual patch
        """))
    (cocci / "rules" / "beta.cocci").write_text(
        "/// Beta does b.\n//\n// Confidence: Moderate\n\nvirtual patch\n")
    (cocci / "rules" / "report_only.cocci").write_text(
        "/// A report rule.\n//\n// Confidence: High\n\nvirtual report\n")
    (repo / "verify" / "uses.py").write_text('RULE = "report_only.cocci"\n')
    (cocci / "tests" / "alpha" / "one.c").write_text("")
    (cocci / "tests" / "alpha" / "two.c").write_text("")
    (cocci / "templates" / "tmpl.h").write_text(
        "/* slabconv template: three macros.\n * Why: macros.\n */\n"
        "#define T_ONE 1\n#define T_TWO 2\n#define T_THREE 3\n")
    (repo / "regen" / "members.py").write_text('"""Remove named members.\n\nMore."""\n')
    (cocci / "series.toml").write_text(textwrap.dedent(f"""\
        [series]
        subject = "A test series"
        seed_author = "Seed Author <seed@example.org>"
        date = "2021-10-04T14:45:48+01:00"
        blurb = "The blurb."

        [[entry]]
        id = "one"
        subject = "mm: First"
        message = "m"
          [[entry.step]]
          rule = "rules/alpha.cocci"
          files = ["mm/a.c"]
          [[entry.expect]]
          present = "z"
          in = ["mm/a.c"]

        [[entry]]
        id = "gone"
        subject = "mm: A step this kernel lacks"
        skip = "the function came later"

        [[entry]]
        id = "two"
        subject = "mm: Second"
        message = "m"
          [[entry.step]]
          rule = "rules/alpha.cocci"
          files = ["mm/a.c"]
          [[entry.step]]
          rule = "rules/beta.cocci"
          files = ["mm/a.c"]
          [[entry.step]]
          template = "templates/tmpl.h"
          into = "include/b.h"
          at = "end"
          why = "macros are not SmPL"
          [[entry.expect]]
          present = "z"
          in = ["mm/a.c"]

        [[entry]]
        id = "three"
        subject = "{SUBJ3}"
        message = "m"
          [[entry.step]]
          remove_members = ["gone"]
          struct = "s"
          into = "include/b.h"
          why = "nested members"
          [[entry.expect]]
          absent = "gone"
          in = ["include/b.h"]

        [[entry]]
        id = "not-in-cover"
        subject = "mm: Another step this kernel lacks"
        skip = "also later"
        """))
    series = tmp_path / "series"
    series.mkdir()
    (series / "0001-mm-First.patch").write_text(
        _patch(1, 3, "mm: First", "cocci/rules/alpha.cocci", DIFF1))
    (series / "0002-mm-Second.patch").write_text(
        _patch(2, 3, "mm: Second", "cocci/rules/alpha.cocci, cocci/rules/beta.cocci, "
               "cocci/templates/tmpl.h", DIFF2))
    # the trailer of patch 3 names a rule the manifest no longer says (an older series)
    (series / "0003-mm-A-subject.patch").write_text(_fold(
        _patch(3, 3, SUBJ3, "regen/members.py on struct s, cocci/rules/old_rule.cocci", DIFF3)))
    (series / "0000-cover-letter.patch").write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: slabconv <slabconv@localhost>\n"
        "Subject: [PATCH 00/03] A test series\n\n"
        "The blurb.\n\n"
        "Steps of the original series that this kernel does not have (no patch):\n"
        "  mm: A step this kernel lacks\n"
        "    the function came\n"
        "    later\n\n"
        "slabconv (3):\n  mm: First\n\n-- \nslabconv\n\n")
    (series / "SOURCE").write_text("source: linux-source-5.10_5.10.1-1\nspatch: 1.1.1\n"
                                   "identity: slabconv <slabconv@localhost>\ndate: x\n")
    return repo, cocci, series


def _build(world, cache):
    repo, cocci, series = world
    return review.build("5.10", series, cocci=cocci, repo=repo, cache=cache)


# ---------------------------------------------------------------- parsing

def test_parse_patch_hunks_by_their_counts(world):
    _, _, series = world
    p = P.parse_patch(series / "0001-mm-First.patch")
    assert p.number == 1 and p.subject == "mm: First"
    assert p.sources == ["cocci/rules/alpha.cocci"]
    [f] = p.files
    assert f.path == "mm/a.c" and len(f.hunks) == 2
    h1, h2 = f.hunks
    # "-- " inside the first hunk is a removed line, not the mail signature
    assert h1.lines[-1] == "-- " and h1.removed == 2 and h1.added == 1
    assert h1.context == "int f(void)" and (h1.old_start, h1.old_len) == (1, 4)
    # the signature after the last hunk is not part of it
    assert h2.lines == [" a();", "+b(<script>);", " c();"]
    assert (p.added, p.removed) == (2, 2)


def test_parse_patch_new_file_short_hunk_headers_and_trailer_items(world):
    _, _, series = world
    p = P.parse_patch(series / "0002-mm-Second.patch")
    assert [f.path for f in p.files] == ["mm/a.c", "include/b.h", "include/new.h"]
    assert p.files[2].status == "new"
    assert (p.files[0].hunks[0].old_len, p.files[0].hunks[0].new_len) == (1, 1)
    assert p.files[1].hunks[0].added == 3
    assert p.sources == ["cocci/rules/alpha.cocci", "cocci/rules/beta.cocci",
                         "cocci/templates/tmpl.h"]


def test_folded_subject_and_members_trailer(world):
    _, _, series = world
    p = P.parse_patch(series / "0003-mm-A-subject.patch")
    assert p.subject == SUBJ3
    assert p.sources == ["regen/members.py", "cocci/rules/old_rule.cocci"]


def test_generated_with_repeats_are_listed_once():
    msg = ("x\n\nGenerated-with: slabconv (cocci/rules/a.cocci, cocci/rules/b.cocci, "
           "cocci/rules/a.cocci, regen/members.py on struct page)\n")
    assert P.parse_generated_with(msg) == ["cocci/rules/a.cocci", "cocci/rules/b.cocci",
                                         "regen/members.py"]
    assert P.parse_generated_with("no trailer") == []


def test_cover_letter_skipped_steps(world):
    _, _, series = world
    c = P.parse_cover(series / "0000-cover-letter.patch")
    assert c.subject == "A test series" and c.blurb == "The blurb."
    assert c.skipped == [("mm: A step this kernel lacks", "the function came later")]


def test_entries_report(tmp_path):
    from regen.series import entries_report
    text = entries_report([
        ("a", "mm: One", "applied", []),
        ("b", "mm: Two", "upstream", ["expected effect holds: " + "word " * 20 + "end"]),
        ("c", "mm: Three", "not applicable", ["mm/gone.c not in this kernel"])])
    (tmp_path / "ENTRIES").write_text(text)
    vs = P.parse_entries(tmp_path / "ENTRIES")
    assert [(v.status, v.subject) for v in vs] == [
        ("applied", "mm: One"), ("upstream", "mm: Two"), ("not applicable", "mm: Three")]
    assert vs[1].evidence == ["expected effect holds: " + "word " * 20 + "end"]   # unwrapped
    assert P.parse_entries(tmp_path / "nothing") is None


def test_rule_and_template_headers(world):
    _, cocci, _ = world
    title, desc, conf, opts = review.rule_header((cocci / "rules" / "alpha.cocci").read_text())
    assert title == "Turn y into z." and "Longer text." in desc
    assert conf == "High (it is only a rename, nothing else)" and opts == "--no-includes"
    t, d = review.template_header((cocci / "templates" / "tmpl.h").read_text())
    assert t == "three macros." and "Why: macros." in d
    assert review.template_body((cocci / "templates" / "tmpl.h").read_text()) == [
        "#define T_ONE 1", "#define T_TWO 2", "#define T_THREE 3"]


# ------------------------------------------------------------ attribution

def test_attribution_per_rule_and_file(world, tmp_path):
    rv = _build(world, tmp_path / "cache")
    by = {s.key: s for s in rv.sources}
    alpha, beta = by["cocci/rules/alpha.cocci"], by["cocci/rules/beta.cocci"]
    t = by["cocci/templates/tmpl.h"]
    assert [p.number for p in alpha.patches] == [1, 2]
    # patch 2: the manifest's steps say alpha and beta work on mm/a.c, the
    # template goes into include/b.h; no step names include/new.h, so its
    # hunk is attributed to every source of the patch (and said so)
    p2 = rv.patches[1]
    assert p2.sources_of("mm/a.c") == ["cocci/rules/alpha.cocci", "cocci/rules/beta.cocci"]
    assert p2.sources_of("include/b.h") == ["cocci/templates/tmpl.h"]
    assert p2.sources_of("include/new.h") == p2.sources
    assert any("include/new.h, which no step of entry 'two' names" in n for n in rv.notes)
    assert alpha.hunks == 2 + 1 + 1          # patch 1's two, patch 2's mm/a.c and new.h
    assert {f: sum(len(fd.hunks) for _, fd in v) for f, v in alpha.by_file().items()} == {
        "mm/a.c": 3, "include/new.h": 1}
    assert alpha.own() == {(1, "mm/a.c", 1), (1, "mm/a.c", 2)}      # patch 1 is alpha's alone
    assert [p.number for p in beta.patches] == [2] and beta.hunks == 2 and beta.own_hunks == 0
    assert alpha.tests == 2 and beta.tests == 0
    assert alpha.confidence_word == "High" and beta.confidence_word == "Moderate"
    # a rule used by no patch says who uses it
    assert by["cocci/rules/report_only.cocci"].patches == []
    assert by["cocci/rules/report_only.cocci"].code_refs == ["verify/uses.py"]
    # the template: its patch, its why, the hunk that carries its text (its own)
    assert [p.number for p in t.patches] == [2] and t.why == ["macros are not SmPL"]
    assert t.carries == {(2, "include/b.h", 1)} and t.own() == {(2, "include/b.h", 1)}
    assert t.hunks == 2
    m = by["regen/members.py"]
    assert [p.number for p in m.patches] == [3] and m.why == ["nested members"]
    assert m.title == "Remove named members."
    # a trailer naming a file that is gone is still listed, as gone; patch 3's
    # trailer differs from the manifest, so its hunks go to every source it names
    assert by["cocci/rules/old_rule.cocci"].exists is False
    assert by["cocci/rules/old_rule.cocci"].hunks == 1 and m.hunks == 1
    files = rv.files
    assert files["mm/a.c"]["hunks"] == 3 and len(files["mm/a.c"]["patches"]) == 2
    assert files["mm/a.c"]["by_source"] == {"cocci/rules/alpha.cocci": 3,
                                            "cocci/rules/beta.cocci": 1}
    assert files["include/b.h"]["by_source"] == {"cocci/templates/tmpl.h": 1,
                                                 "regen/members.py": 1,
                                                 "cocci/rules/old_rule.cocci": 1}
    assert files["include/b.h"]["added"] == 3 and files["include/b.h"]["removed"] == 1


def test_manifest_cross_check_and_skipped(world, tmp_path):
    rv = _build(world, tmp_path / "cache")
    assert rv.entry_of == {1: "one", 2: "two", 3: "three"}
    # patch 3's trailer names old_rule.cocci; the manifest says members.py only
    assert rv.mismatches == {3: ["regen/members.py"]}
    assert [(s.id, s.in_cover) for s in rv.skipped] == [("gone", True), ("not-in-cover", False)]
    assert rv.skipped[0].reason == "the function came later"


# ---------------------------------------------------------------- results

def _series(rv) -> R.Series:
    return R.Series(rv.version, rv.series_id, rv.source.get("source", ""),
                    [p.subject for p in rv.patches],
                    {f.path for p in rv.patches for f in p.files})


def test_no_results_are_not_run(world, tmp_path):
    rv = _build(world, tmp_path / "cache")
    assert rv.results == {}
    text = review.render_text(rv)
    assert "slub: not run (the cache has no such result)" in text
    assert "residue" in text and "pass" not in text.split("6. Verify")[1]


def _stamp(rv, other=False):
    return {"series": "0" * 16 if other else rv.series_id, "patches": len(rv.patches),
            "source": rv.source["source"]}


def test_recorded_results_of_this_series_only(world, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(cache))
    rv = _build(world, cache)
    assert rv.series_id == R.series_id(P.numbered_patches(world[2]))
    verify = {"ok": True, "config": "slub", "seconds": 12.0, "problems": [],
              "changed_files": sorted(_series(rv).files), "new_warnings": [],
              "gone_warnings": [], "baseline_reused": True,
              "baseline": {"ok": True, "seconds": 3.0, "warnings": []},
              "patched": {"ok": True, "seconds": 4.0, "compiled": 7, "warnings": []},
              "sparse": {"new": [], "baseline": {"warnings": [1, 2]},
                         "patched": {"warnings": [1, 2], "files": ["mm/a.c"]}},
              "patched_src": str(cache / "build/5.10/patched-slub-0123456789ab/tree"),
              "code": {"vmlinux": "add/remove: 6/5 grow/shrink: 8/24 up/down: 602/-1082 (-480)",
                       "objects_compared": 643, "objects_changed": [
                           {"object": "mm/slub.o", "delta": -529}]}}
    R.record("5.10", "verify-slub", _stamp(rv), verify)
    R.record("5.10", "verify-slab", _stamp(rv, other=True), dict(verify, config="slab"))
    R.record("5.10", "boot-slub", _stamp(rv), {
        "passed": False, "seconds": 5.4, "accel": "tcg", "cmdline": "console=ttyS0",
        "counts": {"passed": 29, "failed": 1, "skipped": 1, "crashed": 0, "total": 31},
        "failures": ["not ok 3 slab_caches_visible"], "ktap": "KTAP version 1\n1..6\n"})
    R.record("5.10", "residue", _stamp(rv), {
        "ok": False, "counts": {"mm/a.c": {"uses": 3, "allowed": 2, "not_allowed": 1}},
        "allowed": [{"why": "page allocator"}, {"why": "page allocator"}],
        "not_allowed": [{"file": "mm/a.c", "line": 9, "function": "f", "kind": "local",
                         "text": "page"}], "unused_entries": []})
    R.record("5.10", "compiled-lines", _stamp(rv), {
        "ok": False, "builds": ["slub", "slab"], "errors": [], "not_applicable": {},
        "missed": 1, "allowed": 2,
        "files": [{"file": "mm/a.c", "changed_code_lines": 10, "compiled_by": {"slub": 7},
                   "objects": {"slub": "mm/a.o"},
                   "not_compiled": {"42": "\tif (node != NUMA_NO_NODE)"},
                   "allowed": {"50": "arm64 only", "51": "arm64 only"}}]})
    rv = _build(world, cache)
    st = {k: v.status for k, v in rv.results.items()}
    assert st == {"verify-slub": R.THIS, "verify-slab": R.NOT_RUN, "boot-slub": R.THIS,
                  "residue": R.THIS, "compiled-lines": R.THIS}
    assert "another series" in rv.results["verify-slab"].note
    rows = {label: s for label, _, s in review._result_rows(rv)}
    assert rows["verify slub"] == "pass" and rows["verify slab"] == "not run"
    assert rows["boot slub"] == "FAIL" and rows["residue"] == "FAIL"
    assert rows["verify slob"] == "not run" and rows["per-patch builds"] == "not run"
    text = review.render_text(rv)
    assert "slub: ok; baseline ok 3.0s (reused); patched ok 4.0s, 7 objects" in text
    assert "sparse 2 -> 2, 0 new" in text
    assert ("code against the baseline: vmlinux add/remove: 6/5 grow/shrink: 8/24 up/down: "
            "602/-1082 (-480); 1 of 643 objects with changed code: mm/slub.o -529"
            ) in " ".join(text.split())
    assert "slab: not run (recorded" in text and "for another series" in text
    assert "slub: FAIL; 31 tests: 29 passed, 1 failed, 1 skipped, 0 crashed" in text
    assert "mm/a.c: 3 uses, 2 allowed, 1 NOT allowed" in text
    assert ("compiled lines: FAILED; 7 of 10 changed code lines compiled by a build "
            "(slub, slab), 2 allowed not to be, 1 NOT compiled") in text
    assert "NOT compiled mm/a.c:42: if (node != NUMA_NO_NODE)" in text
    html = review.render_html(rv)
    assert "not ok 3 slab_caches_visible" in html and "KTAP version 1" in html
    assert "Changed lines the builds compiled" in html and "2 allowed: arm64 only" in html
    assert "42: <code>if (node != NUMA_NO_NODE)</code>" in html


def test_a_changed_patch_file_makes_the_record_another_series(world, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(cache))
    rv = _build(world, cache)
    R.record("5.10", "verify-slub", _stamp(rv), {"ok": True})
    p = world[2] / "0001-mm-First.patch"
    p.write_text(p.read_text().replace("Body.", "Body, changed."))
    rv = _build(world, cache)
    assert rv.results["verify-slub"].status == R.NOT_RUN


def test_results_from_before_records_are_matched_by_what_they_show(world, tmp_path):
    cache = tmp_path / "cache"
    rv = _build(world, cache)
    files = sorted(_series(rv).files)
    b = cache / "build" / "5.10"
    good = b / "patched-slub-0123456789ab"
    other = b / "patched-slab-ba9876543210"
    for d in (good, other):
        (d / "tree" / "o").mkdir(parents=True)
    (good / "report.json").write_text(json.dumps({"ok": True, "config": "slub",
                                                  "changed_files": files,
                                                  "patched_src": str(good / "tree")}))
    (other / "report.json").write_text(json.dumps({"ok": True, "config": "slab",
                                                   "changed_files": files[:1]}))
    (good / "bisect.json").write_text(json.dumps({
        "ok": True, "commits": [{"subject": p.subject} for p in rv.patches],
        "configs": [{"config": "slub", "ok": True, "patches_total": 3, "patches_checked": 3,
                     "seconds": 9.0, "patches": [
                         {"index": i, "ok": True, "action": "obj", "seconds": 1.5}
                         for i in (1, 2, 3)]}]}))
    (other / "bisect.json").write_text(json.dumps({"ok": False, "commits": [{"subject": "x"}]}))
    old = time.time() - 100
    os.utime(other / "bisect.json", (old, old))
    runs = cache / "boot" / "runs"
    for name, pdir in (("patched", good), ("patched-slab", other)):
        (runs / name).mkdir(parents=True)
        (runs / name / "summary.json").write_text(json.dumps({
            "passed": True, "seconds": 3.0, "counts": {"total": 31, "passed": 31},
            "image": str(pdir / "tree/o/arch/x86/boot/bzImage")}))
    (runs / "patched" / "results.ktap").write_text("KTAP version 1\n")
    future = time.time() + 5
    os.utime(runs / "patched" / "summary.json", (future, future))
    rv = _build(world, cache)
    r = rv.results
    assert r["verify-slub"].status == R.THIS and "set of files" in r["verify-slub"].how
    assert r["verify-slab"].status == R.NOT_RUN and "changed 1 files" in r["verify-slab"].note
    assert r["bisect"].status == R.THIS and "subjects" in r["bisect"].how
    assert r["boot-slub"].status == R.THIS and r["boot-slub"].extra["ktap"] == "KTAP version 1\n"
    assert r["boot-slab"].status == R.NOT_RUN
    text = review.render_text(rv)
    assert "slub: ok, 3/3 patches, 9.0s" in text
    html = review.render_html(rv)
    assert "1.5s obj" in html


def test_pipeline_records_verify_and_boot_for_the_series(world, tmp_path, monkeypatch):
    from slabconv import pipeline
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    series = world[2]

    class Fake:
        def __init__(self, config):
            self.config = config

        def to_dict(self):
            return {"ok": True, "config": self.config}

    class Src:
        version, source_id = "5.10", "linux-source-5.10_5.10.1-1"

    ap = pipeline.Applied(Src(), tmp_path, "base", P.numbered_patches(series), [])
    r = Fake("slub")
    r.bisect = r.residue = r.field_users = None
    pipeline.record_verify(ap, [r, Fake("slab")], r)
    rv = _build(world, tmp_path / "cache")
    assert {k: v.status for k, v in rv.results.items()} == {"verify-slub": R.THIS,
                                                             "verify-slab": R.THIS}
    assert r.series_record[1]["series"] == rv.series_id


def test_pipeline_records_a_boot_of_a_verified_build(world, tmp_path, monkeypatch):
    import boot
    from slabconv import pipeline
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    rv = _build(world, tmp_path / "cache")

    class Res:
        passed, seconds, ktap = True, 4.2, "KTAP version 1\n1..1\nok 1 x\n"

        def summary(self):
            return "boot: PASS"

    def fake_run(image, build_dir, src_dir, out, **kw):
        (out / "summary.json").write_text(json.dumps({
            "passed": True, "accel": "tcg", "counts": {"total": 1, "passed": 1}}))
        return Res()

    monkeypatch.setattr(boot, "run", fake_run)

    class VR:
        config = "slab"
        patched = type("B", (), {"image": "bzImage"})()
        patched_out = patched_src = tmp_path
        series_record = ("5.10", _stamp(rv))

    pipeline.boot_config(VR(), "patched-slab")
    pipeline.boot_config(type("Unrecorded", (VR,), {"series_record": None, "config": "slob"})(),
                         "patched-slob")
    rv = _build(world, tmp_path / "cache")
    f = rv.results["boot-slab"]
    assert f.status == R.THIS and f.data["accel"] == "tcg" and f.data["ktap"] == Res.ktap
    assert "boot-slob" not in rv.results       # a boot of no recorded build: nothing


# -------------------------------------------------------------- rendering

class _Checker(HTMLParser):
    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.ids, self.articles = [], [], [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "article":
            self.articles += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def test_html_is_balanced_escaped_and_complete(world, tmp_path):
    rv = _build(world, tmp_path / "cache")
    page = review.render_html(rv)
    c = _Checker()
    c.feed(page)
    assert c.errors == [] and c.stack == []
    assert len(c.ids) == len(set(c.ids)), "duplicate ids"
    for sid, _ in review.SECTIONS:
        assert sid in c.ids
    assert c.articles == 3
    assert "<script" not in page and "b(&lt;script&gt;);" in page
    for s in rv.sources:
        assert s.anchor in c.ids and s.key in page
    assert "http://" not in page and "https://" not in page      # nothing from the network
    assert review._e(review.attribution_note()) in page


def test_text_has_every_section_rule_and_patch(world, tmp_path):
    rv = _build(world, tmp_path / "cache")
    text = review.render_text(rv)
    for i, (_, name) in enumerate(review.SECTIONS, 1):
        assert f"\n{i}. {name}\n" in text
    for s in rv.sources:
        assert s.key in text
    for p in rv.patches:
        assert f"{p.tag} {p.subject}" in text
    assert "@@ -1,4 +1,4 @@ int f(void)  (+1 -2)" in text
    assert "manifest now: members" in text


def test_cli_review_on_the_committed_series(tmp_path, monkeypatch):
    """The real 5.10 series, an empty cache: every result is "not run"."""
    from slabconv.cli import main
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["review", "--kernel", "5.10", "--output", str(out)]) == 0
    text = (out / "review.txt").read_text()
    n = len(P.numbered_patches(paths.GENERATED / "5.10"))
    assert f"patches:            {n} " in text
    assert "verify slub:        not run" in text and "boot slab:          not run" in text
    for f in (paths.COCCI / "rules").glob("*.cocci"):
        assert f"cocci/rules/{f.name}" in text
    assert (out / "review.html").stat().st_size > 100_000
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_missing_series_is_a_usage_error(tmp_path):
    from slabconv.log import SlabconvError
    with pytest.raises(SlabconvError) as e:
        review.build("5.10", tmp_path / "none")
    assert e.value.exit_code == 2


def test_a_kernel_with_struct_slab_already_entries_verdicts(world, tmp_path):
    """regen on a converted kernel may write no patch, only ENTRIES: the
    review lists each entry's verdict and the entries with no patch."""
    from regen.series import entries_report
    repo, cocci, _ = world
    series = tmp_path / "converted"
    series.mkdir()
    (series / "ENTRIES").write_text(entries_report([
        ("one", "mm: First", "upstream", ["expected effect holds: a match for /z/ in mm/a.c"]),
        ("two", "mm: Second", "not applicable", ["mm/a.c not in this kernel"]),
        ("three", SUBJ3, "upstream", ["the struct has no member gone"])]))
    (series / "SOURCE").write_text("source: linux-source-6.1_6.1.1-1\n")
    rv = review.build("6.1", series, cocci=cocci, repo=repo, cache=tmp_path / "cache")
    assert rv.patches == [] and rv.results == {}
    got = {s.id: (s.verdict, s.reason) for s in rv.skipped}
    assert got["one"] == ("upstream", "expected effect holds: a match for /z/ in mm/a.c")
    assert got["two"] == ("not applicable", "mm/a.c not in this kernel")
    assert got["gone"] == ("", "the function came later")
    assert not any("has no patch" in n for n in rv.notes)
    c = _Checker()
    c.feed(review.render_html(rv))
    assert c.errors == [] and c.articles == 0
    text = review.render_text(rv)
    assert "Per-entry verdicts (ENTRIES):" in text and "not applicable  mm: Second" in text


def test_per_patch_code_and_boot_results_are_shown(world, tmp_path, monkeypatch):
    """The per-patch check's object-code and runtime results, per patch and
    per configuration, on the page and in the text."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(cache))
    rv = _build(world, cache)
    subjects = [p.subject for p in rv.patches]
    same = {"diffs": [], "unexpected": [], "missing": []}
    bad = {"diffs": [{"object": "mm/slub.o", "changed": [
               {"function": "kfree", "old_size": 100, "new_size": 108}]}],
           "unexpected": [{"object": "mm/slub.o", "function": "kfree", "change": "changed",
                           "old_size": 100, "new_size": 108}], "missing": []}
    patches = [{"index": i, "subject": s, "ok": True, "action": "objects", "seconds": 2.0,
                "code": bad if i == 1 else same,
                "boot": {"verdict": "FAIL" if i == 1 else "pass", "seconds": 6.0,
                         "same_as": 0, "failures": ["oops"]}}
               for i, s in enumerate(subjects, 1)]
    R.record("5.10", "bisect", _stamp(rv), {
        "ok": False, "commits": [{"subject": s} for s in subjects],
        "configs": [{"config": "slub", "ok": False, "runtime": True,
                     "patches_checked": len(subjects), "patches_total": len(subjects),
                     "seconds": 60.0, "patches": patches}]})
    rv = _build(world, cache)
    text = review.render_text(rv)
    n = len(subjects)
    assert (f"slub: object code: {n - 1} of {n} patches change no function's code; "
            "1 change code their entry does not declare: patch 1") in text
    assert f"slub: runtime: {n - 1} of {n} kernels passed the in-guest tests: failed patch 1" in text
    html = review.render_html(rv)
    assert "code: kfree +8 UNEXPECTED" in html and "boot: FAIL 6.0s" in html
    assert "code: same" in html and "boot: pass" in html


def test_usage_patch_says_its_conversions_came_from_usage(world, tmp_path):
    """The patch of a usage entry (regen/usage.py) is matched to the entry
    without steps to compare, and the page says per patch whether its
    conversions came from the manifest or from usage; the usage entry
    without a patch (it found nothing) is no 'missing' note."""
    repo, cocci, series = world
    m = cocci / "series.toml"
    m.write_text(m.read_text() + textwrap.dedent("""\

        [[entry]]
        id = "usage"
        subject = "mm: Convert remaining users"
        usage = true
        message = "m"
        """))
    rv = _build(world, tmp_path / "cache")
    assert not any("usage" in n for n in rv.notes), rv.notes
    (series / "0004-mm-Convert-remaining-users.patch").write_text(
        _patch(4, 4, "mm: Convert remaining users", "cocci/rules/alpha.cocci", DIFF1,
               body="m\n\nConverted because of how they are used (no manifest entry "
                    "names them):\n\n  user_free(): parameter page (mm/a.c)\n"))
    rv = _build(world, tmp_path / "cache2")
    assert rv.entry_of[4] == "usage" and 4 not in rv.mismatches
    p4 = [p for p in rv.patches if p.number == 4][0]
    assert "conversions from: usage (no manifest entry names them): user_free()" \
        in review.render_text(rv)
    assert "conversions from</th><td>usage" in review.render_html(rv)
    assert review._origin(p4) == ("usage (no manifest entry names them): "
                                  "user_free(): parameter page (mm/a.c)")
    assert review._origin(rv.patches[0]).startswith("the manifest")
