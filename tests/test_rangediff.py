"""`slabconv range-diff` (report/rangediff.py) on planted series: a small
git "kernel" whose baseline is the one regen would commit, two generations
of a three-patch series that differ in one patch, and two kernels whose
series apply to different baselines."""
import json
import subprocess
from pathlib import Path

import pytest

from report import rangediff as RD
from report import results as R
from report import review

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@localhost", "GIT_AUTHOR_DATE": "2021-10-04T14:45:48+01:00",
       "GIT_COMMITTER_DATE": "2021-10-04T14:45:48+01:00", "GIT_CONFIG_GLOBAL": "/dev/null",
       "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=ENV).stdout


def kernel(tmp: Path, name: str, extra: str = "") -> tuple[Path, str]:
    """A baseline repository (files mm/a.c, mm/b.c, mm/c.c and an untouched
    one) tagged like regen's work tree; returns (git dir, baseline commit)."""
    repo = tmp / name
    (repo / "mm").mkdir(parents=True)
    for f in "abc":
        (repo / "mm" / f"{f}.c").write_text(
            "".join(f"int {f}{i}(struct page *page);\n" for i in range(20)) + extra)
    (repo / "untouched.c").write_text("never checked out\n")
    git(repo, "init", "-q", "-b", "slabconv")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Baseline")
    git(repo, "tag", "slabconv-baseline")
    return repo / ".git", git(repo, "rev-parse", "HEAD").strip()


def series(tmp: Path, base: tuple[Path, str], name: str, b_to: str = "slab") -> Path:
    """Three patches on `base`, each converting the first five functions of
    a file to take a struct slab (in b.c the last one takes a `b_to`);
    written with git format-patch into tmp/name."""
    repo = base[0].parent
    git(repo, "checkout", "-q", "-f", "-B", name, base[1])
    for f in "abc":
        p = repo / "mm" / f"{f}.c"
        text = p.read_text()
        for i in range(5):
            to = b_to if (f, i) == ("b", 4) else "slab"
            text = text.replace(f"int {f}{i}(struct page *page)", f"int {f}{i}(struct {to} *{to})")
        p.write_text(text)
        git(repo, "commit", "-q", "-am", f"mm: Convert {f}0() to take a struct slab\n\nBody.")
    out = tmp / name
    git(repo, "format-patch", "-q", "--cover-letter", "-o", str(out), f"{base[1]}..{name}")
    (out / "SOURCE").write_text("source: linux-source-5.10_5.10.1-1\nspatch: 1.1.1\n")
    return out


def side(d: Path, base, label: str) -> RD.Side:
    s = RD.side_from_dir(d, "5.10", label)
    s.baseline = base
    return s


def test_one_changed_patch_is_the_only_one_marked_changed(tmp_path):
    base = kernel(tmp_path, "k510")
    old = side(series(tmp_path, base, "old"), base, "old")
    new = side(series(tmp_path, base, "new", b_to="folio"), base, "new")
    rd = RD.range_diff(old, new, tmp_path / "work")
    assert [(p.old, p.status, p.new) for p in rd.pairs] == [(1, "=", 1), (2, "!", 2), (3, "=", 3)]
    assert rd.counts() == {"=": 2, "!": 1, "<": 0, ">": 0}
    changed = rd.pairs[1]
    assert changed.subject == "mm: Convert b0() to take a struct slab"
    assert "-+int b4(struct slab *slab);" in changed.diff
    assert "++int b4(struct folio *folio);" in changed.diff
    assert rd.pairs[0].diff == "" and rd.pairs[2].diff == ""
    # only the files the series touch are checked out in the scratch repository
    repo = tmp_path / "work" / "repo"
    assert (repo / "mm" / "b.c").is_file() and not (repo / "untouched.c").exists()
    assert "1 changed" in rd.summary() and "2 equal" in rd.summary()


def test_same_series_is_all_equal_and_a_dropped_patch_is_one_sided(tmp_path):
    base = kernel(tmp_path, "k510")
    d = series(tmp_path, base, "old")
    rd = RD.range_diff(side(d, base, "a"), side(d, base, "b"), tmp_path / "work")
    assert [p.status for p in rd.pairs] == ["=", "=", "="]
    short = tmp_path / "short"
    short.mkdir()
    for p in sorted(d.iterdir()):
        if not p.name.startswith("0003-"):
            (short / p.name).write_bytes(p.read_bytes())
    rd = RD.range_diff(side(d, base, "a"), side(short, base, "b"), tmp_path / "work")
    assert [(p.old, p.status, p.new) for p in rd.pairs] == [(1, "=", 1), (2, "=", 2),
                                                           (3, "<", None)]


def test_two_kernels_two_baselines(tmp_path):
    """The same step on two kernels: each series applies to its own
    baseline; the patches whose context differs are changed, not new."""
    b510 = kernel(tmp_path, "k510")
    b61 = kernel(tmp_path, "k61", extra="int only_in_6_1;\n")
    old = side(series(tmp_path, b61, "s61"), b61, "6.1")
    new = side(series(tmp_path, b510, "s510", b_to="folio"), b510, "5.10")
    rd = RD.range_diff(old, new, tmp_path / "work")
    assert [p.status for p in rd.pairs] == ["=", "!", "="]


def test_a_series_that_does_not_apply_is_an_error(tmp_path):
    from base.log import SlabconvError
    base = kernel(tmp_path, "k510")
    d = series(tmp_path, base, "old")
    other = kernel(tmp_path / "x", "kx", extra="")
    (other[0].parent / "mm" / "a.c").write_text("something else\n")
    git(other[0].parent, "commit", "-q", "-am", "different")
    other = (other[0], git(other[0].parent, "rev-parse", "HEAD").strip())
    with pytest.raises(SlabconvError) as e:
        RD.range_diff(side(d, base, "a"), side(d, other, "b"), tmp_path / "work")
    assert "does not apply" in str(e.value)


def test_record_is_found_for_its_series_only(tmp_path):
    base = kernel(tmp_path, "k510")
    old = side(series(tmp_path, base, "old"), base, "old")
    new = side(series(tmp_path, base, "new", b_to="folio"), base, "new")
    rd = RD.range_diff(old, new, tmp_path / "work")
    f = RD.record(rd, tmp_path / "cache")
    assert f is not None and json.loads(f.read_text())["counts"]["!"] == 1
    got = RD.find("5.10", R.series_id(new.patches), tmp_path / "cache")
    assert got is not None and [p.status for p in got["pairs"]] == ["=", "!", "="]
    assert RD.find("5.10", R.series_id(old.patches), tmp_path / "cache") is None


def test_parse_of_range_diff_lines():
    text = ("1:  aaaaaaa = 1:  bbbbbbb mm: One\n"
            " 2:  aaaaaab ! 2:  bbbbbbc mm: Two\n    @@ x\n    -old\n    +new\n"
            "-:  ------- > 3:  bbbbbbd mm: Three\n"
            "10:  aaaaaac < -:  ------- mm: Ten\n")
    pairs = RD.parse(text)
    assert [(p.old, p.status, p.new, p.subject) for p in pairs] == [
        (1, "=", 1, "mm: One"), (2, "!", 2, "mm: Two"), (None, ">", 3, "mm: Three"),
        (10, "<", None, "mm: Ten")]
    assert "+new" in pairs[1].diff


def test_side_from_a_revision_of_this_repository(tmp_path):
    s = RD.side_from_rev("HEAD", "5.10", tmp_path / "old")
    assert len(s.patches) > 50 and s.source.get("source", "").startswith("linux-source-5.10_")
    assert s.label.startswith("HEAD (")
    from base.log import SlabconvError
    with pytest.raises(SlabconvError):
        RD.side_from_rev("no-such-revision-xyz", "5.10", tmp_path / "x")
    with pytest.raises(SlabconvError):
        RD.side_from_rev("HEAD", "4.19", tmp_path / "y")


def test_cli_on_5_10_a_planted_old_series_against_the_working_copy(tmp_path, monkeypatch):
    """`slabconv range-diff --kernel 5.10 --old DIR`: the committed series
    with one line of the iommu patch changed (as a rule change would) against the
    working copy's series.  The record goes to a private directory, not
    over the working copy's own record in the cache."""
    import shutil
    from base import paths
    from cli.main import main
    from report import patches as P
    monkeypatch.setattr(RD, "record_dir", lambda version, root=None: tmp_path / "records")
    old = tmp_path / "old"
    shutil.copytree(paths.GENERATED / "5.10", old)
    numbered = P.numbered_patches(old)
    (k,) = [i for i, p in enumerate(numbered) if "-iommu-Use-put_pages_list" in p.name]
    text = numbered[k].read_text()
    assert text.count("+\tlist_add_tail(&p->lru, list);") == 1
    numbered[k].write_text(text.replace("+\tlist_add_tail(&p->lru, list);",
                                        "+\tlist_add(&p->lru, list);"))
    out = tmp_path / "rd.txt"
    assert main(["range-diff", "--kernel", "5.10", "--old", str(old), "--output", str(out)]) == 0
    pairs = RD.parse(out.read_text())
    n = len(P.numbered_patches(paths.GENERATED / "5.10"))
    assert [p.status for p in pairs] == ["="] * k + ["!"] + ["="] * (n - k - 1)
    assert "list_add(&p->lru, list);" in pairs[k].diff
    rec = json.loads(next((tmp_path / "records").glob("*.json")).read_text())
    assert rec["counts"] == {"=": n - 1, "!": 1, "<": 0, ">": 0} and rec["old"] == str(old)
    assert rec["old_series"] == R.series_id(P.numbered_patches(old)) != rec["new_series"]
    # the default old side, HEAD's series, is copied out of git; its id is recorded too
    assert main(["range-diff", "--kernel", "5.10", "--output", str(out)]) == 0
    rec = json.loads((tmp_path / "records" / f"{rec['new_series']}.json").read_text())
    assert rec["old"].startswith("HEAD (") and len(rec["old_series"]) == 16


def test_a_rule_change_shows_in_the_patches_it_changes_only(tmp_path):
    """What a reviewer of a rule change sees: a copy of cocci/ in which one
    line of the code page_chain_queue.cocci adds is reworded, the 5.10
    series regenerated from it, and the range-diff against the series
    committed at HEAD: the patch that rule makes (the iommu one) is '!', with the
    reworded line, and every other patch '='."""
    import shutil
    from regen import series as S
    from regen.worktree import parse_identity
    from report import patches as P
    from base import paths
    from regen.source import resolve
    old_line = "/* The pages were queued as a ring without its head: put one back. */"
    new_line = "/* Queued as a ring without its head: put one page back on it. */"
    cocci = tmp_path / "cocci"
    shutil.copytree(paths.COCCI, cocci)
    rule = cocci / "rules" / "page_chain_queue.cocci"
    assert rule.read_text().count(old_line) == 1
    rule.write_text(rule.read_text().replace(old_line, new_line))
    src = resolve("5.10", None)
    committed = paths.GENERATED / "5.10"
    out = tmp_path / "series"
    S.regenerate(src.tree, src.source_id, version="5.10", output=out,
                 identity=parse_identity(P.read_source(committed)["identity"]),
                 manifest_path=cocci / "series.toml")
    old = RD.side_from_rev("HEAD", "5.10", tmp_path / "old")
    old.baseline = RD.baseline_of(old)
    new = RD.side_from_dir(out, "5.10", "rule change")
    new.baseline = old.baseline
    rd = RD.range_diff(old, new, tmp_path / "work")
    n = len(old.patches)
    (k,) = [i for i, p in enumerate(old.patches) if "-iommu-Use-put_pages_list" in p.name]
    changed = [p.new for p in rd.pairs if p.status != "="]
    assert changed == [k + 1], rd.text[:3000]
    assert rd.pairs[k].subject == "iommu: Use put_pages_list"
    assert old_line in rd.pairs[k].diff and new_line in rd.pairs[k].diff
    assert len(rd.pairs) == n
