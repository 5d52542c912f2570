"""Warm starts (regen/warmstart.py): a spatch run started before its input
exists gives exactly what an ordinary run gives, and anything else than the
expected run (another command, a process that died) falls back to one."""
import os
import textwrap
from pathlib import Path

import pytest

from regen import spatch, warmstart

REPO = Path(__file__).resolve().parent.parent
FOLD = REPO / "cocci" / "rules" / "slab_fold.cocci"
PARAM = REPO / "cocci" / "rules" / "slab_param.cocci"

SRC = textwrap.dedent("""\
    #include "local.h"

    static void take_slab(struct kmem_cache *s, struct slab *slab)
    {
    	s->n = slab->inuse;
    }

    static void use(struct kmem_cache *s, struct slab *slab)
    {
    	if (slab_page(slab)->objects)
    		take_slab(s, page_slab(slab_page(slab)));
    	take_slab(s, slab_page(slab));
    }
    """)


@pytest.fixture
def trees(tmp_path, monkeypatch):
    monkeypatch.setenv("SLABCONV_SPATCH_CACHE", "0")
    monkeypatch.setattr(warmstart, "ENABLED", True)
    out = []
    for name in ("plain", "warm"):
        t = tmp_path / name / "linux"
        (t / "mm").mkdir(parents=True)
        (t / "mm" / "x.c").write_text(SRC)
        (t / "mm" / "local.h").write_text("/* beside x.c */\n")
        out.append(t)
    yield out
    warmstart.POOL.discard()


def stats():
    return dict(warmstart.STATS)


def delta(before):
    return {k: warmstart.STATS[k] - before[k] for k in before}


def test_a_warm_run_gives_what_an_ordinary_run_gives(trees):
    plain, warm = trees
    out_plain = spatch.apply_rule(FOLD, plain, ["mm/x.c"])
    before = stats()
    assert spatch.prestart(FOLD, warm, ["mm/x.c"])
    # the input changes after the start: the process must read what is
    # there when its turn comes, not what was there when it started
    (warm / "mm" / "x.c").write_text(SRC)
    out_warm = spatch.apply_rule(FOLD, warm, ["mm/x.c"])
    assert delta(before) == {"used": 1, "discarded": 0, "fallback": 0}
    folded = (plain / "mm" / "x.c").read_text()
    assert "if (slab->objects)" in folded and "take_slab(s, slab);" in folded
    assert (warm / "mm" / "x.c").read_text() == folded
    assert out_warm == out_plain
    assert not list((warm.parent / "warm").iterdir()), "the warm directory is removed"


def test_the_input_is_what_the_tree_holds_when_the_run_is_made(trees):
    plain, warm = trees
    before = stats()
    assert spatch.prestart(FOLD, warm, ["mm/x.c"])
    changed = SRC.replace("if (slab_page(slab)->objects)", "if (slab_page(slab)->inuse)")
    (warm / "mm" / "x.c").write_text(changed)
    (plain / "mm" / "x.c").write_text(changed)
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])
    spatch.apply_rule(FOLD, plain, ["mm/x.c"])
    assert delta(before)["used"] == 1
    assert "if (slab->inuse)" in (warm / "mm" / "x.c").read_text()
    assert (warm / "mm" / "x.c").read_text() == (plain / "mm" / "x.c").read_text()


def test_a_warm_process_for_another_command_is_not_used_and_is_killed(trees):
    plain, warm = trees
    before = stats()
    assert spatch.prestart(PARAM, warm, ["mm/x.c"], defines={"fn": "use", "argpos": "1"})
    waiting = warmstart.POOL._warm[str(warm)][0].proc
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])
    spatch.apply_rule(FOLD, plain, ["mm/x.c"])
    assert (warm / "mm" / "x.c").read_text() == (plain / "mm" / "x.c").read_text()
    assert delta(before)["used"] == 0
    warmstart.POOL.discard(warm)
    assert waiting.poll() is not None, "the process that was not used is gone"
    assert delta(before)["discarded"] == 1


def test_a_warm_process_that_died_gives_way_to_an_ordinary_run(trees):
    plain, warm = trees
    before = stats()
    assert spatch.prestart(FOLD, warm, ["mm/x.c"])
    w = warmstart.POOL._warm[str(warm)][0]
    w.proc.kill()
    w.proc.wait()
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])
    spatch.apply_rule(FOLD, plain, ["mm/x.c"])
    assert delta(before) == {"used": 0, "discarded": 0, "fallback": 1}
    assert (warm / "mm" / "x.c").read_text() == (plain / "mm" / "x.c").read_text()
    assert "take_slab(s, slab);" in (warm / "mm" / "x.c").read_text()


def test_a_failure_is_reported_from_an_ordinary_run(trees, tmp_path):
    _, warm = trees
    bad = tmp_path / "bad.cocci"
    bad.write_text("@@\nexpression E;\n@@\n- slab_page(E\n+ E\n")
    before = stats()
    assert spatch.prestart(bad, warm, ["mm/x.c"])
    with pytest.raises(Exception) as e:
        spatch.apply_rule(bad, warm, ["mm/x.c"])
    assert "spatch failed on bad.cocci" in str(e.value)
    assert delta(before)["fallback"] == 1
    assert (warm / "mm" / "x.c").read_text() == SRC


def test_the_process_finds_the_files_its_file_includes(trees):
    _, warm = trees
    assert spatch.prestart(FOLD, warm, ["mm/x.c"])
    w = warmstart.POOL._warm[str(warm)][0]
    assert os.readlink(w.dir / "mm" / "local.h") == str(warm / "mm" / "local.h")
    assert (w.dir / "mm" / "x.c").is_fifo()
    warmstart.POOL.discard(warm)
    assert not w.dir.exists()


def test_no_warm_start_where_results_come_from_the_cache(trees, tmp_path, monkeypatch):
    _, warm = trees
    monkeypatch.setenv("SLABCONV_SPATCH_CACHE", "1")
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])           # a miss: kept
    (warm / "mm" / "x.c").write_text(SRC)
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])           # a hit
    assert not spatch.prestart(FOLD, warm, ["mm/x.c"])


def test_warm_starts_can_be_turned_off(trees, monkeypatch):
    _, warm = trees
    monkeypatch.setattr(warmstart, "ENABLED", False)
    assert not spatch.prestart(FOLD, warm, ["mm/x.c"])


def test_a_run_over_several_files_starts_warm_too(trees):
    plain, warm = trees
    for t in trees:
        (t / "mm" / "y.c").write_text(SRC.replace("use(", "use_y("))
        (t / "lib").mkdir()
        (t / "lib" / "z.c").write_text(SRC.replace("use(", "use_z("))
    files = ["mm/x.c", "mm/y.c", "lib/z.c"]
    spatch.apply_rule(FOLD, plain, files)
    before = stats()
    assert spatch.prestart(FOLD, warm, files)
    spatch.apply_rule(FOLD, warm, files)
    assert delta(before) == {"used": 1, "discarded": 0, "fallback": 0}
    for f in files:
        assert (warm / f).read_text() == (plain / f).read_text()
        assert "take_slab(s, slab);" in (warm / f).read_text()


def test_no_warm_start_where_pipes_cannot_be_made(trees, monkeypatch):
    plain, warm = trees

    def no_fifo(path, *a, **k):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(os, "mkfifo", no_fifo)
    assert not spatch.prestart(FOLD, warm, ["mm/x.c"])
    assert not list((warm.parent / "warm").iterdir()), "nothing left behind"
    spatch.apply_rule(FOLD, warm, ["mm/x.c"])
    spatch.apply_rule(FOLD, plain, ["mm/x.c"])
    assert (warm / "mm" / "x.c").read_text() == (plain / "mm" / "x.c").read_text()
