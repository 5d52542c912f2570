"""What was proven is keyed by what the patches are, not by their bytes:
the committed series and one `make` wrote into the cache under another
identity and date share their verify results, their reproduction record
and their attribution; a series that differs in one line of code or of a
message shares none of them."""
import shutil

import pytest

from base import paths
from base.log import SlabconvError
from report import attribution as A, mail, patches as P, reproduce, results as R, review

COMMITTED = paths.GENERATED / "5.10"
N = len(P.numbered_patches(COMMITTED))
SOURCE = P.read_source(COMMITTED)["source"]
OTHER = "Some Body <some.body@example.org>"
OTHER_DATE = "Tue, 5 Oct 2021 09:00:00 +0200"


def _restamp(src, dst, identity=OTHER, date=OTHER_DATE, prefix=None):
    """A copy of the series `src` signed off by `identity` on `date` (what
    `make` writes into the cache with the user's identity)."""
    shutil.copytree(src, dst)
    for p in dst.iterdir():
        text = p.read_text()
        text = text.replace("From: slabconv <slabconv@localhost>", f"From: {identity}")
        text = text.replace("Signed-off-by: slabconv <slabconv@localhost>",
                            f"Signed-off-by: {identity}")
        text = text.replace("Date: Mon, 4 Oct 2021 14:45:48 +0100", f"Date: {date}")
        text = text.replace(f"\nslabconv ({N}):\n", f"\n{identity.split(' <')[0]} ({N}):\n")
        text = text.replace("identity: slabconv <slabconv@localhost>", f"identity: {identity}")
        if prefix:
            text = text.replace("Subject: [PATCH 5.10 ", f"Subject: [{prefix} ")
        p.write_text(text)
    return dst


def _patch_with(series, needle):
    return next(p for p in P.numbered_patches(series) if needle in p.read_text())


def _change_code(series, old="+\treturn page_slab(page);", new="+\treturn NULL;"):
    """One added line of one patch's code changed (its hunk otherwise the same)."""
    p = _patch_with(series, old)
    p.write_text(p.read_text().replace(old, new, 1))
    return p


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """(the committed series, the same patches by another identity on
    another date, the cache)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(cache))
    a = tmp_path / "committed"
    shutil.copytree(COMMITTED, a)
    b = _restamp(COMMITTED, tmp_path / "made")
    assert R.identity_and_date(P.numbered_patches(b)) == (OTHER, OTHER_DATE)
    assert all(x.read_bytes() != y.read_bytes()
               for x, y in zip(P.numbered_patches(a), P.numbered_patches(b)))
    return a, b, cache


# ------------------------------------------------------------------ the id

def test_identity_date_and_subject_prefix_do_not_change_the_id(pair, tmp_path):
    a, b, _ = pair
    c = _restamp(COMMITTED, tmp_path / "rfc", identity="A N Other <other@example.org>",
                 prefix="RFC PATCH v2 5.10")
    assert R.series_id(P.numbered_patches(a)) == R.series_id(P.numbered_patches(b)) \
        == R.series_id(P.numbered_patches(c))
    assert R.patch_ids(P.numbered_patches(a)) == R.patch_ids(P.numbered_patches(b))


def test_one_line_of_code_changes_the_id_and_the_patch_id(pair):
    a, b, _ = pair
    p = _change_code(b)
    i = P.numbered_patches(b).index(p)
    assert R.series_id(P.numbered_patches(a)) != R.series_id(P.numbered_patches(b))
    ids_a, ids_b = R.patch_ids(P.numbered_patches(a)), R.patch_ids(P.numbered_patches(b))
    assert [k for k in range(N) if ids_a[k] != ids_b[k]] == [i]


def test_whitespace_in_the_code_changes_the_id(pair):
    """git patch-id --stable alone ignores whitespace; the id does not."""
    a, b, _ = pair
    _change_code(b, "+\treturn page_slab(page);", "+\treturn page_slab(page); ")
    assert R.series_id(P.numbered_patches(a)) != R.series_id(P.numbered_patches(b))


def test_one_line_of_a_message_changes_the_id(pair):
    """The message check and checkpatch read the messages: a planted
    message defect is another series."""
    a, b, _ = pair
    p = P.numbered_patches(b)[3]
    text = p.read_text()
    head, sep, rest = text.partition("\n\n")
    p.write_text(head + sep + "Also converts kfree().\n\n" + rest)
    assert R.series_id(P.numbered_patches(a)) != R.series_id(P.numbered_patches(b))
    assert R.patch_ids(P.numbered_patches(a)) == R.patch_ids(P.numbered_patches(b))


def test_a_message_that_names_a_commit_is_read_as_one_patch(pair):
    """git patch-id starts a patch at any "commit <id>" line: the message
    is not given to it."""
    a, b, _ = pair
    p = P.numbered_patches(b)[3]
    head, sep, rest = p.read_text().partition("\n\n")
    p.write_text(head + sep + f"commit {'a' * 40}\nFrom {'b' * 40} x\n\n" + rest)
    assert R.patch_ids(P.numbered_patches(a)) == R.patch_ids(P.numbered_patches(b))
    assert R.series_id(P.numbered_patches(a)) != R.series_id(P.numbered_patches(b))


def test_the_order_of_the_patches_is_part_of_the_id(pair):
    a, _, _ = pair
    ps = P.numbered_patches(a)
    assert R.content_id(p.read_bytes() for p in ps) != \
        R.content_id(p.read_bytes() for p in [ps[1], ps[0], *ps[2:]])


# ------------------------------------------------------ the verify results

def _verify(stamp):
    R.record("5.10", "verify", stamp, {"ok": True, "status": {}, "problems": []})
    R.record("5.10", "verify-slub", stamp, {
        "ok": True, "new_warnings": [], "code": {"vmlinux": "(-480)", "objects_changed": []},
        "sparse": {"new": [], "baseline": {"warnings": []}, "patched": {"warnings": []}}})
    R.record("5.10", "boot-slub", stamp, {
        "passed": True, "seconds": 7.0, "accel": "tcg",
        "counts": {"total": 58, "passed": 51, "failed": 0, "skipped": 7}})


def test_the_committed_series_shows_the_results_of_the_same_patches(pair, tmp_path):
    a, b, cache = pair
    stamp = R.series_stamp(P.numbered_patches(b), SOURCE, b)
    assert stamp["from"] == {"path": str(b), "identity": OTHER, "date": OTHER_DATE}
    _verify(stamp)
    rv = review.build("5.10", a, cache=cache)
    assert {k: f.status for k, f in rv.results.items()} == {
        "verify": R.THIS, "verify-slub": R.THIS, "boot-slub": R.THIS}
    rows = {label: st for label, _, st in review.model.result_rows(rv)}
    assert rows["verify: every check"] == rows["verify slub"] == rows["boot slub"] == "passed"
    assert rows["verify slab"] == rows["per-patch builds"] == "not run"
    text = review.render_text(rv)
    assert f"results of:         {b} ({OTHER}, {OTHER_DATE}), recorded " in text
    html = review.render_html(rv)
    e = review.html_page._e
    assert e(f"as the series {b} ({OTHER}, {OTHER_DATE})") in html
    assert f'<td class="results-from">{e(f"{b} ({OTHER}, {OTHER_DATE}), recorded ")}' in html
    # the mail copy of the committed series states them and says whose they are
    mail.write(a, tmp_path / "mail", "5.10", thread=False)
    flat = " ".join((tmp_path / "mail" / "0000-cover-letter.patch").read_text().split())
    assert f"on the series in {b} ({OTHER}, {OTHER_DATE}):" in flat
    assert "slub: ok; 0 new compiler warnings" in flat and "slub: passed; 58 in-guest" in flat


def test_a_series_one_line_apart_shares_no_result(pair, tmp_path):
    a, b, cache = pair
    _verify(R.series_stamp(P.numbered_patches(a), SOURCE, a))
    _change_code(b)
    rv = review.build("5.10", b, cache=cache)
    assert {k: f.status for k, f in rv.results.items()} == {
        "verify": R.NOT_RUN, "verify-slub": R.NOT_RUN, "boot-slub": R.NOT_RUN}
    assert "another series" in rv.results["verify-slub"].note
    assert {st for _, _, st in review.model.result_rows(rv)} == {"not run"}
    with pytest.raises(SlabconvError, match=f"no verify result for these {N} patches"):
        mail.write(b, tmp_path / "mail", "5.10")


# ------------------------------------------------------- the reproduction

from tests.helpers import git as _git  # noqa: E402


@pytest.fixture
def checkout(pair, tmp_path):
    """A git checkout of slabconv whose HEAD commits the series `a`."""
    a, _, _ = pair
    repo = tmp_path / "repo"
    shutil.copytree(a, repo / paths.GENERATED.relative_to(paths.REPO) / "5.10")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def test_a_regen_under_another_identity_reproduces_the_committed_series(pair, checkout):
    a, b, cache = pair
    repo, head = checkout
    assert reproduce.find("5.10", a, cache, repo) is None
    assert reproduce.record_regen("5.10", b, SOURCE, "1.1.1", 20.0, root=cache, repo=repo)
    rec = reproduce.find("5.10", a, cache, repo)
    assert rec["match"] == "content" and rec["committed"] and rec["plain_same"]
    ok, line = reproduce.line(rec)
    assert ok and line.startswith(f"The rules at commit {head[:12]} reproduce the committed "
                                  "series but for identity and date: ")
    assert f"to {b} as {OTHER}" in line
    assert reproduce.status(rec) == f"yes (this machine, {reproduce.when(rec)})"
    assert reproduce.when(rec).endswith(" UTC") and len(reproduce.when(rec)) == 20
    # the regen's own directory is still reproduced byte for byte
    assert reproduce.find("5.10", b, cache, repo)["match"] == "bytes"


def test_a_regen_of_committed_rules_comes_before_one_of_changed_rules(pair, checkout):
    """The cache is shared by checkouts: a regen of these very bytes from
    rules with uncommitted changes does not hide one by committed rules."""
    a, b, cache = pair
    repo, head = checkout
    reproduce.record_regen("5.10", b, SOURCE, "1.1.1", 20.0, root=cache, repo=repo)
    (repo / "cocci").mkdir()
    (repo / "cocci" / "x.cocci").write_text("// uncommitted\n")
    reproduce.record_regen("5.10", a, SOURCE, "1.1.1", 20.0, root=cache, repo=repo)
    rec = reproduce.find("5.10", a, cache, repo)
    assert rec["match"] == "content" and rec["output"] == str(b) and reproduce.line(rec)[0]
    # without the other, the bytes' own record is said to be of changed rules
    (cache / "runs" / "regen-5.10" / f"{reproduce.digest(b)}.json").unlink()
    rec = reproduce.find("5.10", a, cache, repo)
    assert rec["match"] == "bytes" and rec["dirty"] == ["cocci/"]
    assert reproduce.line(rec)[1].startswith("Not a reproduction by a commit")


def test_a_regen_one_line_apart_does_not_reproduce_it(pair, checkout):
    a, b, cache = pair
    repo, _ = checkout
    _change_code(b)
    reproduce.record_regen("5.10", b, SOURCE, "1.1.1", 20.0, root=cache, repo=repo)
    rec = reproduce.find("5.10", a, cache, repo)
    assert rec is None and reproduce.status(rec) == "not recorded"
    assert not reproduce.line(rec)[0]


# -------------------------------------------------------- the attribution

def test_the_attribution_of_the_same_patches_is_found(pair, tmp_path):
    a, b, cache = pair
    sid_b = R.series_id(P.numbered_patches(b))
    A.record(A.Attribution("5.10", sid_b, [], {}, recorded="2026-12-07T00:00:00Z"), cache)
    assert A.find("5.10", R.series_id(P.numbered_patches(a)), cache) is not None
    _change_code(b)
    assert A.find("5.10", R.series_id(P.numbered_patches(b)), cache) is None


# ----------------------------------------------------- the main job's end

def test_the_main_job_names_make_review_and_make_mail(pair):
    from cli import pipeline
    a, b, _ = pair
    (line,) = pipeline.next_lines("5.10", b, a)
    assert line.startswith("next: make review (") and " and make mail (" in line
    assert "SERIES=" not in line
    _change_code(b)
    (line,) = pipeline.next_lines("5.10", b, a)
    assert f"make review SERIES={b} " in line and f"make mail SERIES={b} " in line
    (line,) = pipeline.next_lines("6.1", b, a / "none")
    assert f"make review KERNEL=6.1 SERIES={b} " in line
