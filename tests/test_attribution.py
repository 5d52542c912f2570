"""Exact attribution (report/attribution.py): a planted kernel tree, a
one-entry manifest whose conversion runs slab_param, slab_callers and
slab_fold in one spatch run, the series regen makes of it, and the replay
that runs each rule file alone.  The hunk in the converted function is
slab_param's alone, the caller's is slab_callers' and slab_fold's (the
fold turns the page_slab(virt_to_head_page()) the callers' rule wrote
into virt_to_slab()), the hunk of an old
round trip elsewhere is the fold's alone; the replay is exact; the record
is found for the series and only for it; the review shows it."""
import shutil
import textwrap
from pathlib import Path

import pytest

from report import attribution as A
from report import patches as P
from report import results as R
from report import review
from base import paths

FILLER = "".join(f"static int filler{i};\n" for i in range(12))
SLUB = (textwrap.dedent("""\
    // SPDX-License-Identifier: GPL-2.0
    static void dump_state(struct kmem_cache *s, struct page *page)
    {
    \tpr_info("%s: inuse %u\\n", s->name, page->inuse);
    }
    """) + FILLER + textwrap.dedent("""\
    static void caller(struct kmem_cache *s, struct slab *slab, void *obj)
    {
    \tdump_state(s, slab_page(slab));
    \tdump_state(s, virt_to_head_page(obj));
    }
    """) + FILLER + textwrap.dedent("""\
    static unsigned int old_round_trip(struct slab *slab)
    {
    \treturn slab_page(slab)->objects;
    }
    """))

MANIFEST = textwrap.dedent("""\
    [series]
    subject = "A planted series"
    seed_author = "Seed Author <seed@example.org>"
    date = "2021-10-04T14:45:48+01:00"
    blurb = "The blurb."

    [[entry]]
    id = "dump-state"
    subject = "mm/slub: Convert dump_state() to take a struct slab"
    message = "dump_state() takes a struct slab."
      [[entry.step]]
      convert = "param"
      fn = "dump_state"
      [[entry.expect]]
      signature = "dump_state"
      param = "struct slab *slab"
      in = ["mm/slub.c"]
    """)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(tree, cocci dir, series dir, Attribution) with a private cache."""
    from regen import series as S
    from regen.worktree import DEFAULT_IDENTITY, tree_id
    tmp = tmp_path_factory.mktemp("attr")
    mp = pytest.MonkeyPatch()
    mp.setenv("SLABCONV_CACHE", str(tmp / "cache"))
    try:
        tree = tmp / "linux"
        (tree / "mm").mkdir(parents=True)
        (tree / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 0\n")
        (tree / "mm" / "slub.c").write_text(SLUB)
        cocci = tmp / "cocci"
        (cocci / "rules").mkdir(parents=True)
        for r in ("slab_param", "slab_callers", "slab_fold"):
            shutil.copy(paths.COCCI / "rules" / f"{r}.cocci", cocci / "rules")
        (cocci / "series.toml").write_text(MANIFEST)
        out = tmp / "series"
        S.regenerate(tree, tree_id(tree), version="5.10", output=out, identity=DEFAULT_IDENTITY,
                     manifest_path=cocci / "series.toml")
        at = A.attribute("5.10", out, tree=str(tree), manifest_path=cocci / "series.toml")
        yield tree, cocci, out, at
    finally:
        mp.undo()


def _hunks(out: Path) -> list[P.Hunk]:
    p = P.parse_patch(P.numbered_patches(out)[0])
    assert [f.path for f in p.files] == ["mm/slub.c"]
    return p.files[0].hunks


def test_the_regenerated_patch_has_three_hunks(planted):
    _, _, out, _ = planted
    hunks = _hunks(out)
    assert len(hunks) == 3, [h.text for h in hunks]
    assert "+static void dump_state(struct kmem_cache *s, struct slab *slab)" in hunks[0].lines
    assert "+\tdump_state(s, slab);" in hunks[1].lines
    assert "+\tdump_state(s, virt_to_slab(obj));" in hunks[1].lines
    assert "+\treturn slab->objects;" in hunks[2].lines


def test_each_hunk_is_attributed_to_the_rule_runs_that_made_it(planted):
    _, _, out, at = planted
    assert [e.exact for e in at.entries] == [True] and not at.entries[0].differs
    srcs = [at.sources_of_hunk(1, "mm/slub.c", i) for i in (1, 2, 3)]
    assert srcs == [["cocci/rules/slab_param.cocci"],
                    ["cocci/rules/slab_callers.cocci", "cocci/rules/slab_fold.cocci"],
                    ["cocci/rules/slab_fold.cocci"]]
    labels = [p.label for p in at.hunk(1, "mm/slub.c", 1)]
    assert labels == ["slab_param fn=dump_state (step 1)"]
    assert at.entries[0].by_file == {"mm/slub.c": []}      # every line placed


def test_own_counts_the_hunks_one_rule_made_alone(planted):
    _, _, out, at = planted
    patches = [P.parse_patch(f) for f in P.numbered_patches(out)]
    fig = A.per_source(at, patches)
    got = {k: (len(v["hunks"]), len(v["own"])) for k, v in fig.items()}
    assert got == {"cocci/rules/slab_param.cocci": (1, 1),
                   "cocci/rules/slab_callers.cocci": (1, 0),
                   "cocci/rules/slab_fold.cocci": (2, 1)}


def test_the_record_is_this_series_only(planted, tmp_path):
    _, _, out, at = planted
    f = A.record(at, tmp_path)
    sid = R.series_id(P.numbered_patches(out))
    assert f.name == f"{sid}.json"
    back = A.find("5.10", sid, tmp_path)
    assert back is not None and back.sources_of_hunk(1, "mm/slub.c", 2) == \
        at.sources_of_hunk(1, "mm/slub.c", 2)
    assert A.find("5.10", "0" * 16, tmp_path) is None
    # a series changed since is another series: no attribution for it
    other = tmp_path / "other"
    shutil.copytree(out, other)
    p = P.numbered_patches(other)[0]
    p.write_text(p.read_text().replace("dump_state() takes", "dump_state() now takes"))
    assert A.find("5.10", R.series_id(P.numbered_patches(other)), tmp_path) is None


def test_a_replay_that_differs_is_not_attributed(planted, tmp_path):
    """A patch edited by hand after regen: the replay does not end with its
    post-image, so its hunks are not attributed (the review falls back to
    the manifest)."""
    tree, cocci, out, _ = planted
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    p = P.numbered_patches(edited)[0]
    p.write_text(p.read_text().replace("+\treturn slab->objects;", "+\treturn slab->inuse;"))
    at = A.attribute("5.10", edited, tree=str(tree), manifest_path=cocci / "series.toml")
    e = at.entries[0]
    assert not e.exact and e.differs == ["mm/slub.c"] and e.hunks == {}
    assert at.hunk(1, "mm/slub.c", 1) is None


def test_the_review_shows_the_attribution(planted, tmp_path):
    _, cocci, out, at = planted
    A.record(at, tmp_path / "cache")
    rv = review.build("5.10", out, cocci=cocci, repo=cocci.parent, cache=tmp_path / "cache")
    assert rv.attribution is not None and rv.attributed == 1
    by = {s.key: s for s in rv.sources}
    assert (by["cocci/rules/slab_param.cocci"].hunks, by["cocci/rules/slab_param.cocci"].own_hunks) == (1, 1)
    assert (by["cocci/rules/slab_callers.cocci"].hunks, by["cocci/rules/slab_callers.cocci"].own_hunks) == (1, 0)
    assert (by["cocci/rules/slab_fold.cocci"].hunks, by["cocci/rules/slab_fold.cocci"].own_hunks) == (2, 1)
    html = review.render_html(rv)
    assert "hunk 2 made by: slab_callers fn=dump_state (step 1), slab_fold fn=dump_state (step 1)" in html
    text = review.render_text(rv)
    assert "attribution:        exact, 1 of 1 patches hunk by hunk" in text
    # without the record: the manifest's guess, each rule of the run claims every hunk
    rv = review.build("5.10", out, cocci=cocci, repo=cocci.parent, cache=tmp_path / "none")
    by = {s.key: s for s in rv.sources}
    assert rv.attribution is None
    assert [by[f"cocci/rules/{r}.cocci"].own_hunks for r in ("slab_param", "slab_callers")] == [0, 0]
    assert by["cocci/rules/slab_callers.cocci"].hunks == 3


def test_track_marks_writers_and_removers():
    t = A.Track("a\nb\nc\n")
    t.update("a\nB\nc\n", "x#1")
    t.update("a\nB2\nc\nd\n", "x#2")
    assert t.removed == {1: frozenset({"x#1"})}
    assert t.by[1] == frozenset({"x#1", "x#2"}) and t.by[3] == frozenset({"x#2"})
    assert t.base == [0, None, 2, None]
    assert not t.update("a\nB2\nc\nd\n", "x#3")


def test_a_line_git_aligns_otherwise_goes_to_the_run_that_removed_its_twin():
    """git's diff removes lines 3-4 ("y", "}"); the replay's matching said
    the run removed lines 2-3 ("}", "y"): the "}" git shows removed is its
    twin, removed by the same run.  A blank line git shows removed and
    added again is no one's.  A line with no twin is placed by file."""
    fd = P.parse_diff("diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n"
                      "@@ -1,5 +1,3 @@\n x\n }\n-y\n-}\n z\n")[0]
    t = A.Track("x\n}\ny\n}\nz\n")
    t.lines, t.by, t.base = ["x\n", "}\n", "z\n"], [frozenset()] * 3, [0, 3, 4]
    t.removed = {1: frozenset({"e#1"}), 2: frozenset({"e#1"})}
    assert A.attribute_hunks(fd, t, ["e#1"]) == ([["e#1"]], [])
    t = A.Track("x\n\nz\n")
    t.update("x\nw\n\nz\n", "e#1")          # the run wrote w; git shows the blank line moved
    fd2 = P.parse_diff("diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n"
                       "@@ -1,3 +1,4 @@\n x\n-\n+w\n+\n z\n")[0]
    assert A.attribute_hunks(fd2, t, ["e#1"]) == ([["e#1"]], [])
    t = A.Track("x\nq\nz\n")
    t.update("x\nr\nz\n", "e#1")
    lone = P.parse_diff("diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n"
                        "@@ -1,3 +1,3 @@\n-x\n+x2\n q\n z\n")[0]
    assert A.attribute_hunks(lone, t, ["e#1"]) == ([["e#1"]], [1])


# ---- the callers pass: uses in files the entry does not list -----------------
SLUB_DEF = textwrap.dedent("""\
    #ifndef _LINUX_SLUB_DEF_H
    #define _LINUX_SLUB_DEF_H

    static inline unsigned int obj_to_index(const struct kmem_cache *cache,
    					struct page *page, void *obj)
    {
    	return (obj - page_address(page)) / cache->size;
    }

    #endif
    """)
CALLERS_TREE = {
    "include/linux/slub_def.h": SLUB_DEF,
    "mm/slub.c": textwrap.dedent("""\
        #include <linux/slub_def.h>

        static unsigned int index_of(struct kmem_cache *s, struct slab *slab, void *x)
        {
        	return obj_to_index(s, slab_page(slab), x);
        }
        """),
    "drivers/x/x.c": textwrap.dedent("""\
        #include <linux/slab.h>

        static unsigned int x_index(struct kmem_cache *s, const void *p)
        {
        	return obj_to_index(s, virt_to_head_page(p), (void *)p);
        }

        static unsigned int x_index_of(struct kmem_cache *s, struct slab *slab, void *p)
        {
        	return obj_to_index(s, slab_page(slab), p);
        }
        """),
    "mm/util.c": textwrap.dedent("""\
        #include "slab.h"

        static unsigned int util_index(struct kmem_cache *s, const void *x)
        {
        	return obj_to_index(s, virt_to_head_page(x), (void *)x);
        }
        """)}
CALLERS_MANIFEST = MANIFEST.split("[[entry]]")[0] + textwrap.dedent("""\
    [[entry]]
    id = "obj-to-index"
    subject = "mm: Convert obj_to_index() to take a struct slab"
    message = "obj_to_index() takes a struct slab."
      [[entry.step]]
      convert = "param"
      fn = "obj_to_index"
      files = ["include/linux/slub_def.h", "mm/slub.c"]
      [[entry.expect]]
      signature = "obj_to_index"
      param = "struct slab *slab"
      in = ["include/linux/slub_def.h"]
    """)


def test_the_callers_pass_is_replayed_and_its_hunks_attributed(tmp_path, monkeypatch):
    """obj_to_index() takes a struct slab: regen adapts its uses in
    drivers/x/x.c and mm/util.c, which the entry does not list, in the same
    patch.  The replay runs the callers pass too: the entry is exact, and
    those files' hunks go to the rules of the callers pass that made them
    (slab_callsite.cocci; the fold in mm/util.c, which sees mm/slab.h's
    virt_to_slab(); slab_roundtrip.cocci outside mm/), not to the entry's
    steps."""
    from regen import series as S
    from regen.worktree import DEFAULT_IDENTITY, tree_id
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "linux"
    for f, t in CALLERS_TREE.items():
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        (tree / f).write_text(t)
    (tree / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 0\n")
    cocci = tmp_path / "cocci"
    shutil.copytree(paths.COCCI / "rules", cocci / "rules")
    (cocci / "series.toml").write_text(CALLERS_MANIFEST)
    out = tmp_path / "series"
    S.regenerate(tree, tree_id(tree), version="5.10", output=out, identity=DEFAULT_IDENTITY,
                 manifest_path=cocci / "series.toml")
    p = P.parse_patch(P.numbered_patches(out)[0])
    files = {f.path: f for f in p.files}
    assert sorted(files) == ["drivers/x/x.c", "include/linux/slub_def.h", "mm/slub.c",
                             "mm/util.c"]
    assert "+\treturn obj_to_index(s, page_slab(virt_to_head_page(p)), (void *)p);" in \
        files["drivers/x/x.c"].hunks[0].lines
    at = A.attribute("5.10", out, tree=str(tree), manifest_path=cocci / "series.toml")
    e = at.entries[0]
    assert e.exact and not e.differs and not e.error, (e.differs, e.error)
    x = [at.sources_of_hunk(1, "drivers/x/x.c", h.index) for h in files["drivers/x/x.c"].hunks]
    assert x == [["cocci/rules/slab_callsite.cocci"]] * len(x), x
    assert [p.label for p in at.hunk(1, "drivers/x/x.c", 1) if not p.driver] == \
        ["slab_callsite fn=obj_to_index"]
    u = [at.sources_of_hunk(1, "mm/util.c", h.index) for h in files["mm/util.c"].hunks]
    assert u == [["cocci/rules/slab_callsite.cocci", "cocci/rules/slab_fold.cocci"]], u
    assert at.sources_of_hunk(1, "include/linux/slub_def.h", 1) == \
        ["cocci/rules/slab_param.cocci"]
    assert e.by_file == {f: [] for f in files}, e.by_file      # every line placed
