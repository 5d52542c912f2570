"""verify/layout.py without a kernel: the asserts found in mm_types.h, gcc's
static assertion failures and other errors parsed out of build logs, the
layout configurations, and the snapshot kept in sync with a tree.  The
builds themselves are in test_layout_real.py (slow)."""
import os

import pytest

from base.log import SlabconvError
from base.paths import COCCI
from verify import configtable, kconfig, layout, tree

# The end of the series (after "mm: Remove slab from struct page").
MM_TYPES = """\
/* SPDX-License-Identifier: GPL-2.0 */
struct page {
	unsigned long flags;
} _struct_page_alignment;

struct slab {
	unsigned long flags;
	atomic_t _refcount;
#ifdef CONFIG_MEMCG
	unsigned long memcg_data;
#endif
};

#define SLAB_MATCH(pg, sl)						\\
	static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
SLAB_MATCH(flags, flags);
SLAB_MATCH(compound_head, slab_list);	/* Ensure bit 0 is clear */
SLAB_MATCH(rcu_head, rcu_head);
SLAB_MATCH(_refcount, _refcount);
#ifdef CONFIG_MEMCG
SLAB_MATCH(obj_cgroups, memcg_data);
#endif
#undef SLAB_MATCH
static_assert(sizeof(struct slab) <= sizeof(struct page));
static_assert(sizeof(struct page) == 64);
"""

# gcc 12 (make -k -j2, O= inside the tree): a swapped struct slab fails
# in prepare (asm-offsets.c includes mm_types.h), then in mm/slub.c.
ASSERT_LOG = """\
  CC      arch/x86/kernel/asm-offsets.s
In file included from ../include/asm-generic/atomic-instrumented.h:20,
                 from ../include/linux/atomic.h:82,
                 from ../include/linux/crypto.h:15,
                 from ../arch/x86/kernel/asm-offsets.c:9:
../include/linux/build_bug.h:78:41: error: static assertion failed: "offsetof(struct page, flags) == offsetof(struct slab, flags)"
   78 | #define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
      |                                         ^~~~~~~~~~~~~~
../include/linux/build_bug.h:77:34: note: in expansion of macro '__static_assert'
   77 | #define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
      |                                  ^~~~~~~~~~~~~~~
../include/linux/mm_types.h:15:9: note: in expansion of macro 'static_assert'
   15 |         static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
      |         ^~~~~~~~~~~~~
../include/linux/mm_types.h:16:1: note: in expansion of macro 'SLAB_MATCH'
   16 | SLAB_MATCH(flags, flags);
      | ^~~~~~~~~~
../include/linux/build_bug.h:78:41: error: static assertion failed: "sizeof(struct slab) <= sizeof(struct page)"
   78 | #define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
      |                                         ^~~~~~~~~~~~~~
../include/linux/build_bug.h:77:34: note: in expansion of macro '__static_assert'
   77 | #define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
      |                                  ^~~~~~~~~~~~~~~
../include/linux/mm_types.h:24:1: note: in expansion of macro 'static_assert'
   24 | static_assert(sizeof(struct slab) <= sizeof(struct page));
      | ^~~~~~~~~~~~~
make[3]: *** [../scripts/Makefile.build:117: arch/x86/kernel/asm-offsets.s] Error 1
  CC      mm/slub.o
In file included from ../include/linux/mm.h:16,
                 from ../mm/slub.c:13:
../include/linux/build_bug.h:78:41: error: static assertion failed: "offsetof(struct page, flags) == offsetof(struct slab, flags)"
../include/linux/mm_types.h:15:9: note: in expansion of macro 'static_assert'
../include/linux/mm_types.h:16:1: note: in expansion of macro 'SLAB_MATCH'
   16 | SLAB_MATCH(flags, flags);
      | ^~~~~~~~~~
../kernel/bounds.c:20:41: error: static assertion failed: "something else"
make: *** [Makefile:192: __sub-make] Error 2
"""

TYPE_LOG = """\
  CC      mm/slub.o
../mm/slub.c: In function 'kfree':
../mm/slub.c:4157:37: error: passing argument 2 of 'slab_free' from incompatible pointer type [-Werror=incompatible-pointer-types]
 4157 |         slab_free(slab->slab_cache, page, object, NULL, 1, _RET_IP_);
      |                                     ^~~~
      |                                     |
      |                                     struct page *
../mm/slub.c:3131:54: note: expected 'struct slab *' but argument is of type 'struct page *'
cc1: some warnings being treated as errors
make[2]: *** [../scripts/Makefile.build:286: mm/slub.o] Error 1
"""


def test_find_asserts_with_their_conditions():
    got = [(a.line, a.text, a.condition) for a in layout.find_asserts(MM_TYPES)]
    assert got == [
        (16, "SLAB_MATCH(flags, flags)", ""),
        (17, "SLAB_MATCH(compound_head, slab_list)", ""),
        (18, "SLAB_MATCH(rcu_head, rcu_head)", ""),
        (19, "SLAB_MATCH(_refcount, _refcount)", ""),
        (21, "SLAB_MATCH(obj_cgroups, memcg_data)", "CONFIG_MEMCG"),
        (24, "static_assert(sizeof(struct slab) <= sizeof(struct page))", ""),
    ]       # the assert on struct page alone is not a struct slab assert
    a = layout.find_asserts(MM_TYPES)
    assert a[1].expr == "offsetof(struct page, compound_head) == offsetof(struct slab, slab_list)"
    assert a[4].applies({"CONFIG_MEMCG": "y"}) and not a[4].applies({})
    assert a[0].applies({})


def test_find_asserts_in_the_struct_slab_template():
    """The template of seed 002 (before the last patch drops four of them)."""
    a = layout.find_asserts((COCCI / "templates" / "struct_slab.h").read_text())
    assert sum(x.text.startswith("SLAB_MATCH") for x in a) == 9
    assert [x.text for x in a if x.condition] == ["SLAB_MATCH(obj_cgroups, memcg_data)"]
    assert a[-1].expr == "sizeof(struct slab) <= sizeof(struct page)"


def test_conditions_else_and_ifndef():
    text = ("#define SLAB_MATCH(a, b) static_assert(a == b)\n#ifndef CONFIG_64BIT\n"
            "SLAB_MATCH(x, y);\n#else\nSLAB_MATCH(z, w);\n#endif\n#undef SLAB_MATCH\n"
            "SLAB_MATCH(not, counted);\n")
    a = layout.find_asserts(text)
    assert [(x.text, x.expr, x.condition) for x in a] == [
        ("SLAB_MATCH(x, y)", "x == y", "!CONFIG_64BIT"),
        ("SLAB_MATCH(z, w)", "z == w", "CONFIG_64BIT")]
    assert a[0].applies({}) and not a[0].applies({"CONFIG_64BIT": "y"})


def test_conditions_elif():
    """An #elif branch holds when the earlier ones do not and its own
    condition does (6.12: memcg_data, else the unused obj_exts word)."""
    text = ("#define SLAB_MATCH(a, b) static_assert(a == b)\n#ifdef CONFIG_MEMCG\n"
            "SLAB_MATCH(memcg_data, obj_exts);\n#elif defined(CONFIG_SLAB_OBJ_EXT)\n"
            "SLAB_MATCH(_unused_slab_obj_exts, obj_exts);\n#else\nSLAB_MATCH(p, q);\n"
            "#endif\n#undef SLAB_MATCH\n")
    a = layout.find_asserts(text)
    assert [x.condition for x in a] == [
        "CONFIG_MEMCG", "!CONFIG_MEMCG && CONFIG_SLAB_OBJ_EXT",
        "!CONFIG_MEMCG && !CONFIG_SLAB_OBJ_EXT"]
    memcg, objext, neither = {"CONFIG_MEMCG": "y"}, {"CONFIG_SLAB_OBJ_EXT": "y"}, {}
    assert [[x.applies(c) for x in a] for c in (memcg, objext, neither)] == [
        [True, False, False], [False, True, False], [False, False, True]]


def test_static_assertion_failures_are_named_by_their_line():
    asserts = layout.find_asserts(MM_TYPES)
    fails, others = layout.parse_failures(ASSERT_LOG, ["/t"], asserts)
    assert [(f.line, f.text, f.sources) for f in fails] == [
        (16, "SLAB_MATCH(flags, flags)", ["arch/x86/kernel/asm-offsets.c", "mm/slub.c"]),
        (24, "static_assert(sizeof(struct slab) <= sizeof(struct page))",
         ["arch/x86/kernel/asm-offsets.c"])]
    f = fails[0]
    assert f.message == ('static assertion failed: "offsetof(struct page, flags) == '
                         'offsetof(struct slab, flags)"')
    assert f.gcc.startswith("include/linux/build_bug.h:78: error: static assertion failed")
    assert "SLAB_MATCH(flags, flags) at include/linux/mm_types.h:16" in f.describe()
    # a static assertion elsewhere is not ours: an other error
    assert [(e.file, e.line, e.message) for e in others] == [
        ("kernel/bounds.c", 20, 'static assertion failed: "something else"')]


def test_type_errors_are_other_errors_with_their_function():
    fails, others = layout.parse_failures(TYPE_LOG, [], layout.find_asserts(MM_TYPES))
    assert fails == []
    assert [(e.file, e.line, e.function, e.flag) for e in others] == [
        ("mm/slub.c", 4157, "kfree", "-Wincompatible-pointer-types")]
    assert "passing argument 2 of 'slab_free' from incompatible pointer type" in others[0].message


def test_combo_lines_and_result_dict():
    asserts = layout.find_asserts(MM_TYPES)
    fails, _ = layout.parse_failures(ASSERT_LOG, [], asserts)
    ok = layout.ComboResult("layout-x86_64", "x86_64", True, True, "ok", asserts=asserts)
    bad = layout.ComboResult("layout-i386", "i386", False, False, "assert failed",
                             asserts=asserts[:4] + asserts[5:], failures=fails[:1])
    r = layout.LayoutResult(ok=False, tree="/t", asserts=asserts, combos=[ok, bad])
    s = r.summary()
    assert "layout-x86_64" in s and "6 asserts hold" in s
    assert "layout-i386" in s and "FAILED" in s and "SLAB_MATCH(flags, flags)" in s
    assert "layout: FAIL" in s
    assert r.problems == ["[layout-i386] assert failed: " + fails[0].describe()]
    d = r.to_dict()
    assert d["combos"][1]["failures"][0]["line"] == 16
    assert d["combos"][1]["memcg"] is False


def test_layout_configurations():
    want = {"layout-x86_64": ("x86_64", "y"), "layout-x86_64-nomemcg": ("x86_64", "n"),
            "layout-i386": ("i386", "y"), "layout-i386-nomemcg": ("i386", "n")}
    assert configtable.names("layout") == tuple(want)
    for name, (arch, memcg) in want.items():
        assert kconfig.config_arch(name) == arch
        req = kconfig.requested_values(kconfig.config_fragments(name))
        assert req["CONFIG_MEMCG"] == memcg
        assert req["CONFIG_SLUB"] == "y"
        assert req["CONFIG_64BIT"] == ("y" if arch == "x86_64" else "n")


def test_check_refuses_a_tree_without_asserts(tmp_path):
    (tmp_path / "include/linux").mkdir(parents=True)
    (tmp_path / "Makefile").write_text("")
    (tmp_path / layout.HEADER).write_text("struct page { int x; };\n")
    with pytest.raises(SlabconvError) as e:
        layout.check(tmp_path, tmp_path / "out")
    assert e.value.exit_code == 2 and "SLAB_MATCH" in str(e.value)
    with pytest.raises(SlabconvError) as e:
        layout.check(tmp_path / "nothing", tmp_path / "out")
    assert e.value.exit_code == 2


# Upstream's merged conversion (5.17 on, 6.12 here): struct slab and its
# asserts are in mm/slab.h, one under a macro of the architecture.
SLAB_H = """\
#ifndef MM_SLAB_H
#define MM_SLAB_H
struct slab {
	unsigned long __page_flags;
	struct kmem_cache *slab_cache;
	atomic_t __page_refcount;
#ifdef CONFIG_MEMCG
	unsigned long obj_exts;
#endif
};

#define SLAB_MATCH(pg, sl)						\\
	static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
SLAB_MATCH(flags, __page_flags);
SLAB_MATCH(compound_head, slab_cache);	/* Ensure bit 0 is clear */
SLAB_MATCH(_refcount, __page_refcount);
#ifdef CONFIG_MEMCG
SLAB_MATCH(memcg_data, obj_exts);
#endif
#undef SLAB_MATCH
static_assert(sizeof(struct slab) <= sizeof(struct page));
#if defined(system_has_freelist_aba)
static_assert(IS_ALIGNED(offsetof(struct slab, freelist), sizeof(freelist_aba_t)));
#endif
#endif /* MM_SLAB_H */
"""

SLAB_H_LOG = """\
In file included from ../mm/slab_common.c:30:
../include/linux/build_bug.h:78:41: error: static assertion failed: "offsetof(struct page, flags) == offsetof(struct slab, __page_flags)"
   78 | #define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
      |                                         ^~~~~~~~~~~~~~
../mm/slab.h:13:9: note: in expansion of macro 'static_assert'
   13 |         static_assert(offsetof(struct page, pg) == offsetof(struct slab, sl))
      |         ^~~~~~~~~~~~~
../mm/slab.h:14:1: note: in expansion of macro 'SLAB_MATCH'
   14 | SLAB_MATCH(flags, __page_flags);
      | ^~~~~~~~~~
"""


def test_the_asserts_of_upstreams_conversion_are_in_mm_slab_h(tmp_path):
    """On a kernel converted upstream the check finds the asserts in
    mm/slab.h, names failures there, and asks the objects to include it;
    mm_types.h without asserts is not a reason to refuse the tree."""
    (tmp_path / "include/linux").mkdir(parents=True)
    (tmp_path / "mm").mkdir()
    (tmp_path / layout.HEADER).write_text("struct page { unsigned long flags; };\n")
    (tmp_path / "mm/slab.h").write_text(SLAB_H)
    header, asserts = layout.find_header(tmp_path)
    assert header == "mm/slab.h"
    assert [(a.line, a.text, a.condition) for a in asserts] == [
        (14, "SLAB_MATCH(flags, __page_flags)", "!MM_SLAB_H"),
        (15, "SLAB_MATCH(compound_head, slab_cache)", "!MM_SLAB_H"),
        (16, "SLAB_MATCH(_refcount, __page_refcount)", "!MM_SLAB_H"),
        (18, "SLAB_MATCH(memcg_data, obj_exts)", "!MM_SLAB_H && CONFIG_MEMCG"),
        (21, "static_assert(sizeof(struct slab) <= sizeof(struct page))", "!MM_SLAB_H"),
        (23, "static_assert(IS_ALIGNED(offsetof(struct slab, freelist), "
             "sizeof(freelist_aba_t)))", "!MM_SLAB_H && system_has_freelist_aba")]
    fails, others = layout.parse_failures(SLAB_H_LOG, ["/t"], asserts, header)
    assert [(f.line, f.text, f.sources) for f in fails] == [
        (14, "SLAB_MATCH(flags, __page_flags)", ["mm/slab_common.c"])]
    assert "at mm/slab.h:14 (compiling mm/slab_common.c)" in fails[0].describe()
    assert others == []
    # the same failure is not claimed for mm_types.h
    fails, others = layout.parse_failures(SLAB_H_LOG, ["/t"], [], layout.HEADER)
    assert fails == [] and len(others) == 1
    o = tmp_path / "o"
    (o / "mm").mkdir(parents=True)
    (o / "mm/.slub.o.cmd").write_text("deps_mm/slub.o := \\\n  /t/mm/slab.h \\\n")
    (o / "mm/.slab_common.o.cmd").write_text("deps := \\\n  /t/include/linux/slab.h \\\n")
    assert layout._includes_header(o, "mm/slub.o", "mm/slab.h")
    assert not layout._includes_header(o, "mm/slab_common.o", "mm/slab.h")
    r = layout.LayoutResult(ok=True, tree=tmp_path, asserts=asserts, combos=[], header=header)
    assert "in mm/slab.h:14-23" in r.summary() and r.to_dict()["header"] == "mm/slab.h"


def test_sync_replaces_only_what_differs_and_keeps_o_dirs(tmp_path):
    src = tmp_path / "src"
    (src / "mm").mkdir(parents=True)
    (src / "Makefile").write_text("m\n")
    (src / "mm/a.c").write_text("a\n")
    (src / "mm/b.c").write_text("b\n")
    snap = tree.snapshot(src, tmp_path / "snap")
    (snap / "o-x").mkdir()
    (snap / "o-x/keep.o").write_text("obj")
    os.utime(snap / "mm/b.c", ns=(1, 10**18))
    # the tree moves on: a.c rewritten with other content, b.c with the same, c.c new
    for f, t in (("mm/a.c", "A\n"), ("mm/b.c", "b\n"), ("mm/c.c", "c\n")):
        (src / f).unlink(missing_ok=True)
        (src / f).write_text(t)
    (src / "Makefile").unlink()
    (src / "Makefile").write_text("m\n")
    changed = tree.sync(snap, src, skip=("o-x",))
    assert changed == ["mm/a.c", "mm/c.c"]
    assert (snap / "mm/a.c").read_text() == "A\n"
    assert os.stat(snap / "mm/b.c").st_mtime_ns == 10**18         # same content: untouched
    assert (snap / "o-x/keep.o").read_text() == "obj"
    assert tree.diff_trees(snap, src, skip_a=("o-x",)) == ([], [], [])
    (src / "mm/c.c").unlink()
    assert tree.sync(snap, src, skip=("o-x",)) == ["mm/c.c"]
    assert not (snap / "mm/c.c").exists()


def _tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_prepare_tree_links_the_baseline_never_the_patched_tree(tmp_path):
    base = _tree(tmp_path / "base", {"Makefile": "m\n", "mm/a.c": "a\n", "mm/b.c": "b\n",
                                      "mm/gone.c": "g\n"})
    src = _tree(tmp_path / "src", {"Makefile": "m\n", "mm/a.c": "A\n", "mm/b.c": "b\n",
                                    "mm/new.c": "n\n"})
    work = tmp_path / "work"
    snap, done = layout.prepare_tree(src, work, base)          # changes found by comparison
    assert done is None
    assert (snap / "mm/a.c").read_text() == "A\n" and (snap / "mm/new.c").is_file()
    assert not (snap / "mm/gone.c").exists()
    assert os.stat(snap / "mm/b.c").st_ino == os.stat(base / "mm/b.c").st_ino
    for f in ("Makefile", "mm/a.c", "mm/b.c", "mm/new.c"):   # nothing linked into src
        assert os.stat(src / f).st_nlink == 1, f
    (snap / "o-x").mkdir()
    (snap / "o-x/keep.o").write_text("obj")
    # same content again (a git checkout rewrote the files): nothing replaced
    (src / "mm/a.c").unlink()
    (src / "mm/a.c").write_text("A\n")
    snap, done = layout.prepare_tree(src, work, base, ["mm/a.c", "mm/gone.c", "mm/new.c"])
    assert done == [] and (snap / "o-x/keep.o").is_file()
    # a.c back to the baseline: a copy with a new mtime, not the baseline's link
    os.utime(base / "mm/a.c", ns=(1, 1))
    snap, done = layout.prepare_tree(src, work, base, ["mm/gone.c", "mm/new.c"])
    assert done == ["mm/a.c"] and (snap / "mm/a.c").read_text() == "a\n"
    assert os.stat(snap / "mm/a.c").st_ino != os.stat(base / "mm/a.c").st_ino
    assert os.stat(snap / "mm/a.c").st_mtime_ns > 1
    # another baseline: a new snapshot, the old O= dirs gone with it
    other = tree.snapshot(base, tmp_path / "other")
    snap, done = layout.prepare_tree(src, work, other, ["mm/a.c"])
    assert done is None and not (snap / "o-x").exists()


def test_prepare_tree_without_a_baseline_copies(tmp_path):
    src = _tree(tmp_path / "src", {"Makefile": "m\n", "mm/a.c": "a\n"})
    snap, done = layout.prepare_tree(src, tmp_path / "work")
    assert done is None and os.stat(src / "mm/a.c").st_nlink == 1
    assert (snap / "mm/a.c").read_text() == "a\n"
    (src / "mm/a.c").write_text("A\n")                    # in place: the copy is unaffected
    snap, done = layout.prepare_tree(src, tmp_path / "work")
    assert done == ["mm/a.c"] and (snap / "mm/a.c").read_text() == "A\n"


def test_command_lines_parse():
    from cli.main import build_parser
    a = build_parser().parse_args(["layout", "--configs", "layout-i386", "--json", "x.json"])
    assert a.func.__name__ == "cmd_layout" and a.configs == "layout-i386"
    assert a.objects == ",".join(layout.OBJECTS)
    a = build_parser().parse_args(["checkpatch", "--strict", "--brief"])
    assert a.func.__name__ == "cmd_checkpatch" and a.strict and a.brief
