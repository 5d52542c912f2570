"""Entries applied ahead of their turn, beside the chain (regen/side.py).

plan() starts an entry after the last earlier entry that writes a file it
reads, when others come between; never after a usage pass.  In a run,
the entry applied ahead gives the series the entries in order give, its
spatch runs come from the store (none is made again at its turn), and a
file changed in between after all (planted: an entry that writes it
without saying so) makes its runs again on what the file is then.
"""
import pytest

from regen import manifest, series, side, spatch
from tests.test_regen import ID, SLAB_ORDER, SLABS, _conversions, write_manifest

BODY = _conversions("use_a", "use_b", entries=True) + '''
    [[entry]]
    id = "rename"
    subject = "mm/slob: Rename slab_order()"
    message = "Rename it."
      [[entry.step]]
      rule = "rules/calc_slab_order.cocci"
      files = ["mm/slob.c"]
      [[entry.expect]]
      defines = ["calc_slab_order"]
      in = "mm/slob.c"
'''


def _entry(id, files, usage=False, skip=""):
    return manifest.Entry(id=id, subject=id, message="m", seed="", expects=[], usage=usage, skip=skip,
                          steps=[manifest.Step("rule", "rules/x.cocci", files)])


def test_plan_starts_an_entry_after_the_last_writer_of_what_it_reads():
    es = [_entry("a", ["mm/slub.c"]), _entry("b", ["mm/slub.c"]), _entry("c", ["mm/slab.c"]),
          _entry("d", ["mm/slub.c", "mm/slab.c"]), _entry("e", ["mm/slub.c"]),
          _entry("f", ["mm/slab.c"]), _entry("g", ["mm/slub.c"])]
    assert side.plan(es) == {None: ["c"], "d": ["f"], "e": ["g"]}
    # right after its writer: nothing to gain; after a usage pass: any file may have changed
    es = [_entry("a", ["mm/slub.c"]), _entry("b", ["mm/slab.c"]),
          manifest.Entry(id="u", subject="u", message="m", seed="", steps=[], expects=[], usage=True),
          _entry("c", ["mm/slub.c"]), _entry("d", ["mm/slab.c"])]
    assert side.plan(es) == {None: ["b"]}


@pytest.fixture
def tree(tmp_path):
    t = tmp_path / "linux"
    (t / "mm").mkdir(parents=True)
    (t / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")
    (t / "mm" / "slub.c").write_text(SLABS)
    (t / "mm" / "slob.c").write_text(SLAB_ORDER)
    return t


def _setup(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLABCONV_SPATCH_CACHE", "0")
    made = []                           # the rules spatch ran for in this process
    real = spatch._run
    monkeypatch.setattr(spatch, "_run", lambda cmd, cwd, rule: made.append(rule.name)
                        or real(cmd, cwd, rule))
    return write_manifest(tmp_path / "m", BODY), made


def _regen(tree, m, tmp_path, out):
    return series.regenerate(tree, "test-tree", version="5.10", output=tmp_path / out,
                             identity=ID, manifest_path=m, workdir=tmp_path / ("work-" + out))


def test_an_entry_applied_ahead_gives_the_same_series_from_the_store(tree, tmp_path, monkeypatch):
    m, made = _setup(tree, tmp_path, monkeypatch)
    assert side.plan(manifest.load(m).entries) == {None: ["rename"]}
    ahead = _regen(tree, m, tmp_path, "ahead")
    assert not [r for r in made if r.startswith("calc_slab_order")], \
        "the entry applied ahead ran spatch again at its turn"
    assert len(made) == 2                   # use_a's and use_b's runs
    made.clear()
    monkeypatch.setattr(side, "plan", lambda entries: {})
    in_order = _regen(tree, m, tmp_path, "in-order")
    assert [r for r in made if r.startswith("calc_slab_order")]
    for p, q in zip(ahead.patches, in_order.patches, strict=True):
        assert p.read_bytes() == q.read_bytes()
    assert "calc_slab_order(size, 1, 2, 3)" in (ahead.worktree.path / "mm/slob.c").read_text()
    assert spatch.STORE is None             # the run's own store is gone with it


def test_a_file_changed_in_between_is_converted_as_it_is_then(tree, tmp_path, monkeypatch):
    m, made = _setup(tree, tmp_path, monkeypatch)
    real = series.apply_entry

    def apply_entry(s, entry, wt):     # planted: use_b also writes mm/slob.c
        files = real(s, entry, wt)
        if entry.id == "use_b":
            with open(wt.path / "mm/slob.c", "a") as f:
                f.write("\nint more(void)\n{\n\treturn slab_order(1, 2, 3, 4);\n}\n")
            files.append("mm/slob.c")
        return files
    monkeypatch.setattr(series, "apply_entry", apply_entry)
    res = _regen(tree, m, tmp_path, "changed")
    assert [r for r in made if r.startswith("calc_slab_order")], "a stale result was taken"
    text = (res.worktree.path / "mm/slob.c").read_text()
    assert "return calc_slab_order(1, 2, 3, 4);" in text
    assert "calc_slab_order(size, 1, 2, 3)" in text
