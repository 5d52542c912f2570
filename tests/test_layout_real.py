"""The layout check on the real 5.10 tree with the committed series applied
(git am), and planted defects that it must catch and name:

  * two fields of struct slab swapped (flags and slab_cache: same size on
    both word sizes) -> SLAB_MATCH(flags, flags) fails in all four
    configurations, x86_64 and i386, with and without MEMCG;
  * struct slab grown past struct page -> the size assert fails;
  * a struct page * passed where a struct slab * is expected in mm/slub.c
    (kfree() -> slab_free()) -> the build fails, naming the file, line,
    function and gcc's incompatible-pointer-type error, on x86_64 and i386.

The series' own check runs in the slabconv cache's build directory (kept,
incremental); each planted tree gets a copy of those builds (layout.seed),
so only what the defect touches is recompiled.  Marked slow (kernel
objects) and network (the packaged tree).  Nothing skips.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from base import paths
from base.proc import require_tool
from tests.helpers import seed_layout
from verify import configtable, layout, tree

pytestmark = [pytest.mark.slow, pytest.mark.network]

REPO = Path(__file__).resolve().parent.parent
FLAGS = "\tunsigned long flags;\n"
CACHE = "\tstruct kmem_cache *slab_cache; /* not slob */\n"
KFREE = "\tslab_free(slab->slab_cache, slab, object, NULL, 1, _RET_IP_);\n}\nEXPORT_SYMBOL(kfree);"
FLAGS_EXPR = "offsetof(struct page, flags) == offsetof(struct slab, flags)"


@pytest.fixture(scope="module")
def series():
    for tool, pkg in (("gcc", "gcc"), ("make", "make")):
        require_tool(tool, pkg)                 # missing: a failure, not a skip
    from cli import apply
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    out_root = paths.cache_dir("build", ap.src.version)
    first = layout.check(ap.tree, out_root, base=src.tree, changed=ap.touched)
    return SimpleNamespace(tree=ap.tree, base=src.tree, touched=ap.touched,
                           out_root=out_root, first=first)


def _struct_slab(text: str) -> tuple:
    i = text.index("struct slab {")
    j = text.index("\n};\n", i) + 1        # the struct's own closing brace
    return i, j


def swap_fields(text: str) -> str:
    i, j = _struct_slab(text)
    body = text[i:j]
    assert body.count(FLAGS) == 1 and body.count(CACHE) == 1, "struct slab changed"
    body = body.replace(FLAGS, "\0", 1).replace(CACHE, FLAGS, 1).replace("\0", CACHE, 1)
    return text[:i] + body + text[j:]


def grow(text: str) -> str:
    i, j = _struct_slab(text)
    return text[:j] + "\tunsigned long slabconv_planted[16];\n" + text[j:]


def planted(series, tmp_path, rel: str, edit) -> tuple:
    """The patched tree with `rel` replaced by edit(its text): a hard-link
    snapshot of the pristine tree with copies of the files the series
    changes (never links into the git work tree), and the cache's layout
    builds copied next to it.  Returns (tree, files that differ from the
    pristine tree)."""
    src = tree.snapshot(series.base, tmp_path / "src")
    for f in series.touched:
        (src / f).unlink(missing_ok=True)
        shutil.copyfile(series.tree / f, src / f)
    p = src / rel
    text = edit(p.read_text())
    p.unlink()                                  # never write through a link
    p.write_text(text)
    seed_layout(series.out_root, tmp_path / "out")
    return src, sorted(set(series.touched) | {rel})


def test_the_series_holds_in_all_four_configurations(series):
    r = series.first
    assert r.ok, r.summary()
    assert [c.name for c in r.combos] == list(configtable.names("layout"))
    assert [(c.arch, c.memcg, c.status) for c in r.combos] == [
        ("x86_64", True, "ok"), ("x86_64", False, "ok"), ("i386", True, "ok"),
        ("i386", False, "ok")]
    # after the last patch: flags, compound_head, rcu_head, _refcount, the
    # memcg word (MEMCG only) and the size assert
    assert [len(c.asserts) for c in r.combos] == [6, 5, 6, 5]
    memcg = "SLAB_MATCH(obj_cgroups, memcg_data)"
    assert [memcg in [a.text for a in c.asserts] for c in r.combos] == [True, False, True, False]
    # a rerun on the same series compiles nothing
    again = layout.check(series.tree, series.out_root, base=series.base,
                         changed=series.touched)
    assert again.ok and again.changed == []
    assert [c.compiled for c in again.combos] == [0, 0, 0, 0], again.summary()
    rep = json.loads(again.report.read_text())
    assert rep["ok"] is True and len(rep["combos"]) == 4


def test_swapped_struct_slab_fields_fail_the_slab_match_assert(series, tmp_path):
    src, changed = planted(series, tmp_path, layout.HEADER, swap_fields)
    r = layout.check(src, tmp_path / "out", base=series.base, changed=changed)
    assert r.changed == [layout.HEADER]
    assert not r.ok
    for c in r.combos:                          # x86_64 and i386, with and without MEMCG
        assert c.status == "assert failed", c.line()
        assert [f.text for f in c.failures] == ["SLAB_MATCH(flags, flags)"], c.line()
        f = c.failures[0]
        assert f.message == f'static assertion failed: "{FLAGS_EXPR}"'
        assert (src / layout.HEADER).read_text().splitlines()[f.line - 1].startswith(
            "SLAB_MATCH(flags, flags);")
        assert f.sources                        # the .c file whose compile hit it
    assert "SLAB_MATCH(flags, flags) at include/linux/mm_types.h:" in r.summary()
    # the command line: exit 1, the assert named
    cp = subprocess.run([sys.executable, "-m", "verify.layout", "--tree", str(src),
                         "--baseline", str(series.base), "--out-root", str(tmp_path / "out"),
                         "--configs", "layout-i386"],
                        cwd=REPO, capture_output=True, text=True)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "layout-i386" in cp.stdout and "SLAB_MATCH(flags, flags)" in cp.stdout
    assert FLAGS_EXPR in cp.stdout


def test_struct_slab_larger_than_struct_page_fails_the_size_assert(series, tmp_path):
    src, changed = planted(series, tmp_path, layout.HEADER, grow)
    r = layout.check(src, tmp_path / "out", ["layout-x86_64", "layout-i386-nomemcg"],
                     base=series.base, changed=changed)
    for c in r.combos:
        assert [f.text for f in c.failures] == [
            "static_assert(sizeof(struct slab) <= sizeof(struct page))"], c.line()


def test_page_passed_for_a_slab_fails_the_build(series, tmp_path):
    def edit(text):
        assert KFREE in text, "mm/slub.c kfree() changed: update the planted defect"
        return text.replace(KFREE, KFREE.replace(", slab, object", ", page, object"), 1)

    src, changed = planted(series, tmp_path, "mm/slub.c", edit)
    r = layout.check(src, tmp_path / "out", ["layout-x86_64", "layout-i386"],
                     base=series.base, changed=changed)
    assert r.changed == ["mm/slub.c"]
    assert not r.ok
    for c in r.combos:
        assert c.status == "build failed" and not c.failures, c.line()
        assert [(e.file, e.function, e.flag) for e in c.errors] == [
            ("mm/slub.c", "kfree", "-Wincompatible-pointer-types")], c.line()
        assert "passing argument 2 of 'slab_free' from incompatible pointer type" in \
            c.errors[0].message
        assert "mm/slub.c:" in c.line() and "(in kfree)" in c.line()


def test_slabconv_layout_command(series):
    """./slabconv layout applies the committed series and passes
    (the builds are the fixture's: nothing to compile)."""
    cp = subprocess.run([str(REPO / "slabconv"), "layout", "--configs",
                         "layout-i386,layout-x86_64-nomemcg"], cwd=REPO,
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "layout: OK" in cp.stdout and "layout-i386 " in cp.stdout
