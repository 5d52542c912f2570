"""slabconv mail: the cover letter's Testing section states the results
recorded for these patches (the same code and messages), and nothing else."""
import shutil

import pytest

from report import mail, patches as P, results as R
from base import paths
from base.log import SlabconvError

# the committed series' size, its last patch and the IOMMU patch's number
N = len(P.numbered_patches(paths.GENERATED / "5.10"))
IOMMU = next(p.name[:4] for p in P.numbered_patches(paths.GENERATED / "5.10")
             if "iommu-Use-put_pages_list" in p.name)


@pytest.fixture
def series(tmp_path, monkeypatch):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    d = tmp_path / "series"
    shutil.copytree(paths.GENERATED / "5.10", d)
    files = P.numbered_patches(d)
    stamp = {"series": R.series_id(files), "patches": len(files),
             "source": P.read_source(d)["source"]}
    return d, stamp


def _record_all(stamp):
    code = {"vmlinux": "add/remove: 6/5 grow/shrink: 8/24 up/down: 602/-1082 (-480)",
            "objects_compared": 643,
            "objects_changed": [{"object": "mm/slub.o", "delta": -467},
                                {"object": "mm/usercopy.o", "delta": -16}]}
    R.record("5.10", "verify-slub", stamp, {
        "ok": True, "new_warnings": [], "code": code,
        "sparse": {"new": [], "baseline": {"warnings": [1] * 10},
                   "patched": {"warnings": [1] * 10}}})
    R.record("5.10", "verify-slob", stamp, {"ok": True, "new_warnings": [], "sparse": {},
                                            "code": {"vmlinux": "(0)", "objects_changed": []}})
    same = {"diffs": [], "unexpected": []}
    declared = {"diffs": [{"object": "mm/slub.o"}], "unexpected": []}
    patches = [{"index": i, "ok": True, "code": declared if i in (4, 12) else same,
                "boot": {"verdict": "pass", "seconds": 8.0, "same_as": 0}}
               for i in range(1, N + 1)]
    R.record("5.10", "bisect", stamp, {"configs": [
        {"config": "slub", "ok": True, "patches_total": N, "runtime": True,
         "patches": patches}]})
    R.record("5.10", "boot-slub", stamp, {
        "passed": True, "seconds": 7.0, "accel": "tcg",
        "counts": {"total": 58, "passed": 51, "failed": 0, "skipped": 7}})
    R.record("5.10", "checkpatch", stamp, {"ok": True, "strict": True,
                                           "counts": {"error": 0, "warning": 3, "check": 1}})
    R.record("5.10", "nullcheck", stamp, {"ok": True, "counts": {"findings": 0, "patches": N}})
    R.record("5.10", "messages", stamp, {"ok": True, "patches": N, "names": 164, "claims": 33,
                                         "findings": [], "unchecked": []})
    R.record("5.10", "whitespace", stamp, {"ok": True, "patches": N, "pairs": 12,
                                           "justified": 12, "findings": []})


def test_the_testing_section_states_the_recorded_results(series, tmp_path):
    d, stamp = series
    _record_all(stamp)
    out = tmp_path / "out"
    written = mail.write(d, out, "5.10", thread=False)
    assert [p.name for p in written] == ["0000-cover-letter.patch"] + [
        p.name for p in P.numbered_patches(d)]
    for p in P.numbered_patches(d):                 # the patches are copied unchanged
        assert (out / p.name).read_bytes() == p.read_bytes()
    text = (out / "0000-cover-letter.patch").read_text()
    flat = " ".join(text.split())
    assert text.index("\nTesting\n-------\n") < text.index(f"\nslabconv ({N}):\n")
    assert (f"(series {stamp['series']}: the same code by git patch-id and the same "
            f"messages, {stamp['source']})") in flat
    assert ("slub: ok; 0 new compiler warnings; sparse 10 -> 10 warnings, 0 new; vmlinux "
            "-480 bytes, code changed in mm/slub.o -467, mm/usercopy.o -16") in flat
    assert "slob: ok; 0 new compiler warnings; sparse not run; no change in generated code" in flat
    assert f"slub: {N} of {N} patches built" in flat
    assert (f"object code: {N - 2} of {N} patches change no function's code; 2 change it as their "
            "entry declares; 0 change code their entry does not declare") in flat
    assert f"runtime: {N} of {N} kernels passed the in-guest tests" in flat
    assert "slub: passed; 58 in-guest tests, 51 passed, 0 failed, 7 skipped (tcg, 7s)" in flat
    assert "checkpatch --strict: 0 errors, 3 warnings, 1 checks" in flat
    assert f"NULL-safety check: 0 findings in {N} patches" in flat
    assert ("commit messages: 164 function names and 33 claims (absent, signature) checked, "
            "0 findings") in flat
    assert ("whitespace-only line changes: 12, 12 of them realigned with a parenthesis a "
            "rename moved, 0 not justified") in flat
    assert "Not run for these patches: the layout asserts; the residue check." in flat
    assert all(len(ln) <= 72 for ln in text[text.index("\nTesting\n"):
                                            text.index(f"\nslabconv ({N}):")].split("\n"))
    # the original letter is untouched, and the copy only adds the section
    orig = (d / "0000-cover-letter.patch").read_text()
    start, end = text.index("Testing\n-------"), text.index(f"slabconv ({N}):")
    assert text[:start] + text[end:] == orig


def test_results_of_another_series_are_not_stated(series, tmp_path):
    d, stamp = series
    _record_all(stamp)
    p = P.numbered_patches(d)[11]                   # patch 12 changed after the results
    p.write_text(p.read_text().replace("allocate_slab", "allocate_slab ", 1))
    with pytest.raises(SlabconvError, match=f"no verify result for these {N} patches"):
        mail.write(d, tmp_path / "out", "5.10")
    mail.write(d, tmp_path / "out", "5.10", untested=True)
    text = (tmp_path / "out" / "0000-cover-letter.patch").read_text()
    assert "None recorded: the cache has no result for these patches." in text
    assert f"{N} of {N} patches" not in text and "sparse 10" not in text


def test_a_failed_check_is_stated_as_failed(series, tmp_path):
    d, stamp = series
    _record_all(stamp)
    R.record("5.10", "boot-slub", stamp, {"passed": False, "accel": "tcg", "seconds": 9.0,
                                          "counts": {"total": 58, "passed": 50, "failed": 1,
                                                     "skipped": 7}})
    bad = {"diffs": [{"object": "mm/slub.o"}], "unexpected": [{"function": "kfree"}]}
    R.record("5.10", "bisect", stamp, {"configs": [
        {"config": "slub", "ok": False, "patches_total": N, "patches": [
            {"index": 1, "ok": True, "code": bad},
            {"index": 2, "ok": False, "problem": "build failed: mm/slub.c:12: error"}]}]})
    mail.write(d, tmp_path / "out", "5.10")
    flat = " ".join((tmp_path / "out" / "0000-cover-letter.patch").read_text().split())
    assert "slub: FAILED; 58 in-guest tests, 50 passed, 1 failed" in flat
    assert f"slub: 2 of {N} patches built, patch 2 fails: build failed: mm/slub.c:12: error" in flat
    assert "1 change code their entry does not declare: patch 1" in flat


def test_patches_are_threaded_to_the_cover_letter(series, tmp_path):
    d, stamp = series
    _record_all(stamp)
    written = mail.write(d, tmp_path / "out", "5.10", stamp="20261205120000")
    cover = written[0].read_text()
    mid = f"<20261205120000.{stamp['series']}-0@localhost>"
    assert f"\nMessage-Id: {mid}\n" in cover.split("\n\n")[0] + "\n"
    for i, p in enumerate(written[1:], 1):
        head = p.read_text().split("\n\n")[0]
        assert f"\nMessage-Id: <20261205120000.{stamp['series']}-{i}@localhost>" in head
        assert f"\nIn-Reply-To: {mid}\nReferences: {mid}" in head
    # the body is the committed patch's, byte for byte
    orig = (d / written[5].name).read_text()
    assert written[5].read_text().split("\n\n", 1)[1] == orig.split("\n\n", 1)[1]


def test_the_changelog_names_new_dropped_and_changed_patches(series, tmp_path):
    """Against the series committed at HEAD: a patch whose code changed, one
    whose message changed, one dropped."""
    d, _ = series
    files = P.numbered_patches(d)
    code, msg, gone = files[11], files[20], files[-1]
    code.write_text(code.read_text().replace("+\treturn page_slab(page);",
                                             "+\treturn (struct slab *)page;", 1))
    msg.write_text(msg.read_text().replace("\n\nBased on a patch", "\nMore words.\n\n"
                                           "Based on a patch", 1))
    gone.unlink()
    mail.write(d, tmp_path / "out", "5.10", untested=True, previous="HEAD", thread=False)
    text = (tmp_path / "out" / "0000-cover-letter.patch").read_text()
    log = text[text.index("Changes since the series at HEAD"):text.index("Testing\n---")]
    assert "Code changed (1):\n  mm/slub: Convert new_slab() to return a struct slab\n" in log
    assert "Message changed only (1):\n  " + P.parse_patch(msg).subject in log
    assert "Dropped (1):\n  mm: Remove slab from struct page\n" in log
    assert "New" not in log
    with pytest.raises(SlabconvError, match="--previous no-such-rev"):
        mail.write(d, tmp_path / "out", "5.10", untested=True, previous="no-such-rev")


@pytest.fixture(scope="module")
def tree510():
    """The packaged 5.10 tree of the real cache (before `series` points
    SLABCONV_CACHE at a temporary one)."""
    from regen.source import resolve
    return resolve("5.10", None).tree


@pytest.mark.network
def test_cc_lines_come_from_get_maintainer(tree510, series, tmp_path):
    """The packaged 5.10 tree's get_maintainer.pl: the slab maintainers and
    linux-mm on a SLUB patch, the IOMMU maintainers on the IOMMU patch, all
    of them on the cover letter."""
    d, _ = series
    tree = tree510
    for p in P.numbered_patches(d):                 # two patches are enough (1 s each)
        if p.name[:4] not in ("0012", IOMMU):
            p.unlink()
    written = mail.write(d, tmp_path / "out", "5.10", untested=True, cc_tree=tree,
                         thread=False)
    head = {p.name[:4]: p.read_text().split("\n\n")[0] for p in written}
    assert "\nCc: linux-mm@kvack.org" in head["0012"]
    assert "\nCc: Christoph Lameter <cl@linux.com>" in head["0012"]
    assert "\nCc: Joerg Roedel <joro@8bytes.org>" in head[IOMMU]
    assert "Joerg Roedel" not in head["0012"]
    assert "\nCc: Joerg Roedel <joro@8bytes.org>" in head["0000"]
    assert "\nCc: linux-mm@kvack.org" in head["0000"]


def test_the_main_job_says_whether_the_rules_reproduce_the_committed_series(tmp_path):
    """make writes its series to the cache and compares it with the
    committed one: identical, identical but for who made it and when, or
    the files that differ."""
    from report import reproduce
    committed = paths.GENERATED / "5.10"
    out = tmp_path / "series"
    shutil.copytree(committed, out)
    assert reproduce.compare(out, committed) == ("identical", [])
    for p in out.iterdir():
        text = p.read_text()
        text = text.replace("From: slabconv <slabconv@localhost>",
                            "From: Some Body\n <some.body@example.org>")
        text = text.replace("Signed-off-by: slabconv <slabconv@localhost>",
                            "Signed-off-by: Some Body <some.body@example.org>")
        text = text.replace(f"\nslabconv ({N}):\n", f"\nSome Body ({N}):\n")
        p.write_text(text.replace("identity: slabconv <slabconv@localhost>",
                                  "identity: Some Body <some.body@example.org>"))
    assert reproduce.compare(out, committed) == ("identical except identity and date", [])
    p = P.numbered_patches(out)[11]
    p.write_text(p.read_text().replace("+\treturn page_slab(page);", "+\treturn NULL;", 1))
    (out / "0059-extra.patch").write_text("x\n")
    assert reproduce.compare(out, committed) == ("different", [p.name, "0059-extra.patch"])
