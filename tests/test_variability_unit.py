"""verify/variability.py on small synthetic trees (no kernel, <1 s): the
symbols that change what a changed line compiles to, found through the
conditions around the line, around the definitions of the macros it uses
(through headers and through macros that use macros), and around the
definitions of the functions it calls; Kconfig's reason for a refused flip.
"""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from verify import kbuild, variability as VA  # noqa: E402
from verify import variability_builds as VB  # noqa: E402


def w(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    return p


PAGE_FLAGS = """\
    #ifndef _LINUX_PAGE_FLAGS_H
    #define _LINUX_PAGE_FLAGS_H
    #define slab_page(s)  (_Generic((s),                      \\
            const struct slab *:  (const struct page *)s,     \\
            struct slab *:        (struct page *)s))
    #endif
"""
SLUB_DEF = """\
    #ifndef _LINUX_SLUB_DEF_H
    #define _LINUX_SLUB_DEF_H
    struct kmem_cache_cpu {
    #ifdef CONFIG_PERCPU_LIST
            struct slab *partial;
    #endif
    };
    #ifdef CONFIG_PERCPU_LIST
    #define percpu_list(c)          ((c)->partial)
    #else
    #define percpu_list(c)          NULL
    #endif /* CONFIG_PERCPU_LIST */
    #endif
"""
C_FILE = """\
    #include <linux/page-flags.h>
    #include <linux/slub_def.h>

    static void show(struct kmem_cache_cpu *c)
    {
            struct page *page;

            page = slab_page(percpu_list(c));
            (void)page;
    }
"""


def analyse_tree(root: Path, f: str, match: str, headers) -> list:
    text = (root / f).read_text()
    lines = {n: t for n, t in enumerate(text.splitlines(), 1) if match in t}
    assert lines, f"no line of {f} holds {match!r}"
    idx = VA.Index.of({h: (root / h).read_text() for h in headers})
    return VA.analyse(f, text, lines, idx)


def test_a_macro_that_is_null_under_else_inside_slab_page_yields_its_symbol(tmp_path):
    w(tmp_path, "include/linux/page-flags.h", PAGE_FLAGS)
    w(tmp_path, "include/linux/slub_def.h", SLUB_DEF)
    w(tmp_path, "mm/slub.c", C_FILE)
    found = analyse_tree(tmp_path, "mm/slub.c", "slab_page(percpu_list",
                         ["include/linux/page-flags.h", "include/linux/slub_def.h"])
    by = {f.symbol: f for f in found}
    assert set(by) == {"PERCPU_LIST"}, found
    f = by["PERCPU_LIST"]
    assert f.file == "mm/slub.c" and f.line == 8 and "percpu_list" in f.text
    assert "percpu_list" in f.why and "include/linux/slub_def.h:9" in f.why, f.why
    assert "include/linux/slub_def.h:11" in f.why and "#else" in f.why, f.why
    # the include guards are not conditions, and slab_page() has one definition
    assert "_LINUX" not in f.why and f.via == ("percpu_list",)


def test_without_the_else_branch_there_is_nothing_to_find(tmp_path):
    """The same line and headers, the macro defined once unconditionally:
    no symbol (the analysis does not report every macro)."""
    w(tmp_path, "include/linux/page-flags.h", PAGE_FLAGS)
    w(tmp_path, "include/linux/slub_def.h", """\
        #define percpu_list(c)          ((c)->partial)
    """)
    w(tmp_path, "mm/slub.c", C_FILE)
    assert analyse_tree(tmp_path, "mm/slub.c", "slab_page(percpu_list",
                        ["include/linux/page-flags.h", "include/linux/slub_def.h"]) == []


def test_a_chain_of_macros_is_followed_through_headers(tmp_path):
    w(tmp_path, "include/linux/a.h", """\
        #include <linux/b.h>
        #define outer(x)   middle((x) + 1)
    """)
    w(tmp_path, "include/linux/b.h", """\
        #define middle(x)  inner(x)
        #if defined(CONFIG_DEEP) && IS_ENABLED(CONFIG_DEEPER)
        #define inner(x)   ((x) * 2)
        #elif defined(CONFIG_OTHER)
        #define inner(x)   ((x) * 3)
        #endif
    """)
    w(tmp_path, "mm/x.c", """\
        #include <linux/a.h>
        int f(int y)
        {
                return outer(y);
        }
    """)
    found = analyse_tree(tmp_path, "mm/x.c", "outer(y)", ["include/linux/a.h",
                                                          "include/linux/b.h"])
    by = {f.symbol: f for f in found}
    assert set(by) == {"DEEP", "DEEPER", "OTHER"}, found
    assert by["DEEP"].via == ("outer", "middle", "inner")
    assert "include/linux/b.h:3" in by["DEEP"].why
    # the #elif's symbol, and the #elif depends on the #if before it
    assert "include/linux/b.h:5" in by["OTHER"].why


def test_the_depth_limit_stops_a_chain(tmp_path):
    w(tmp_path, "include/linux/a.h", """\
        #define outer(x)   middle((x) + 1)
        #define middle(x)  inner(x)
        #ifdef CONFIG_DEEP
        #define inner(x)   ((x) * 2)
        #endif
    """)
    w(tmp_path, "mm/x.c", "int f(int y) { return outer(y); }\n")
    text = (tmp_path / "mm/x.c").read_text()
    idx = VA.Index.of({"include/linux/a.h": (tmp_path / "include/linux/a.h").read_text()})
    assert {f.symbol for f in VA.analyse("mm/x.c", text, {1: text}, idx, max_depth=2)} == {"DEEP"}
    assert VA.analyse("mm/x.c", text, {1: text}, idx, max_depth=1) == []


def test_a_changed_line_inside_ifdef_yields_the_conditions_around_it(tmp_path):
    w(tmp_path, "mm/y.c", """\
        #ifndef CONFIG_OUTER
        int a;
        #else
        #if IS_ENABLED(CONFIG_INNER) || defined(CONFIG_ALSO)
        int b = 1;
        #endif
        int c = 2;
        #endif
        int d = 3;
        int e = IS_ENABLED(CONFIG_TESTED);
    """)
    text = (tmp_path / "mm/y.c").read_text()
    lines = dict(enumerate(text.splitlines(), 1))
    found = VA.analyse("mm/y.c", text, {n: lines[n] for n in (2, 5, 7, 9, 10)}, VA.Index())
    per_line = {}
    for f in found:
        per_line.setdefault(f.line, set()).add(f.symbol)
    assert per_line == {2: {"OUTER"}, 5: {"OUTER", "INNER", "ALSO"}, 7: {"OUTER"},
                        10: {"TESTED"}}, found
    assert any("#else" in f.why and "mm/y.c:3" in f.why for f in found if f.line == 7)


def test_braces_in_both_branches_of_an_ifdef_do_not_shift_the_definitions(tmp_path):
    text = textwrap.dedent("""\
        void f(int x)
        {
        #ifdef CONFIG_A
                if (x) {
        #else
                if (!x) {
        #endif
                        x++;
                }
        }
        #ifdef CONFIG_B
        static inline int g(void) { return 1; }
        #else
        static inline int g(void) { return 0; }
        #endif
    """)
    defs = [(d.kind, d.name, d.line) for d in VA.scan_file(text).defs]
    assert ("function", "f", 1) in defs and ("function", "g", 12) in defs \
        and ("function", "g", 14) in defs, defs


def test_a_function_defined_in_both_branches_of_an_ifdef_yields_the_symbol(tmp_path):
    w(tmp_path, "include/linux/h.h", """\
        #ifdef CONFIG_TRACK
        void set_track(struct kmem_cache *s, void *object);
        #define TRACK_SIZE 16
        #else
        static inline void set_track(struct kmem_cache *s, int object) { }
        #endif
        static inline int plain(void) { return 0; }
    """)
    w(tmp_path, "mm/z.c", """\
        void g(struct kmem_cache *s, void *p)
        {
                set_track(s, p);
                plain();
        }
    """)
    found = analyse_tree(tmp_path, "mm/z.c", "set_track(s, p)", ["include/linux/h.h"])
    assert [f.symbol for f in found] == ["TRACK"], found
    assert "declaration/function set_track" in found[0].why, found[0].why
    assert analyse_tree(tmp_path, "mm/z.c", "plain()", ["include/linux/h.h"]) == []


def test_a_condition_on_a_macro_is_followed_to_its_definition(tmp_path):
    w(tmp_path, "include/asm/x.h", """\
        #ifdef CONFIG_ARCH_FAST
        #define __HAVE_ARCH_FAST 1
        #endif
    """)
    w(tmp_path, "mm/q.c", """\
        #ifdef __HAVE_ARCH_FAST
        int fast = 1;
        #endif
    """)
    found = analyse_tree(tmp_path, "mm/q.c", "int fast", ["include/asm/x.h"])
    assert [f.symbol for f in found] == ["ARCH_FAST"], found
    assert "__HAVE_ARCH_FAST" in found[0].why and "mm/q.c:1" in found[0].why


def test_comments_and_strings_hide_nothing_and_add_nothing(tmp_path):
    text = textwrap.dedent("""\
        /* #ifdef CONFIG_COMMENTED */
        const char *s = "#ifdef CONFIG_STRING";
        #if defined(CONFIG_REAL) /* a comment
           over two lines */
        int x;
        #endif
    """)
    lines = dict(enumerate(text.splitlines(), 1))
    found = VA.analyse("a.c", text, {2: lines[2], 5: lines[5]}, VA.Index())
    assert {(f.line, f.symbol) for f in found} == {(5, "REAL")}, found


KCONFIG = """\
    config SMP
    \tbool "Symmetric multi-processing support"

    config SLUB
    \tbool "SLUB"

    config SYSFS
    \tbool "sysfs file system support" if EXPERT
    \tdefault y

    config SLUB_CPU_PARTIAL
    \tdefault y
    \tdepends on SLUB && SMP
    \tbool "SLUB per cpu partial cache"

    config HIDDEN
    \tbool
    \tselect SMP
    \tselect LATER
    \thelp
    \t  It depends on you have one of these machines.
    \t  if you say so

    config LATER
    \tbool "Defined after a select names it"

    if SLUB
    config SLUB_STATS
    \tbool "Enable SLUB performance statistics"
    endif
"""


def test_a_refused_flip_reports_the_dependency_that_blocks_it(tmp_path):
    w(tmp_path, "mm/Kconfig", KCONFIG)
    kc = VA.Kconfig.read(tmp_path, "x86_64")
    vals = {"CONFIG_SLUB": "y", "CONFIG_SMP": "n", "CONFIG_HIDDEN": "y"}
    why = kc.why_refused("SLUB_CPU_PARTIAL", "y", vals)
    assert "depends on SLUB && SMP" in why and "SMP=n" in why and "mm/Kconfig:11" in why, why
    assert "has no prompt" in kc.why_refused("HIDDEN", "y", vals)
    assert "selected by HIDDEN=y" in kc.why_refused("SMP", "n", vals)
    assert "not a Kconfig symbol of ARCH=x86_64" in kc.why_refused("ARM64_ONLY", "y", vals)
    assert "depends on SLUB (SLUB=n)" in kc.why_refused("SLUB_STATS", "y", {})
    assert "its prompt needs EXPERT (EXPERT=n): Kconfig keeps its default" in \
        kc.why_refused("SYSFS", "n", {"CONFIG_SYSFS": "y"})
    # a help text is not Kconfig syntax; a symbol first named by a select is defined later
    assert kc.syms["HIDDEN"].depends == [] and kc.known("LATER")
    assert "mm/Kconfig:" in kc.why_refused("LATER", "n", {"CONFIG_HIDDEN": "y"})


@pytest.mark.network
def test_a_refused_flip_through_scripts_config_and_olddefconfig(tmp_path):
    """The flip made the way the per-patch check makes it (the packaged
    5.10 tree's scripts/config and olddefconfig, ~15 s, no kernel build)."""
    from base import paths
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None).tree
    o = tmp_path / "o"
    o.mkdir()
    subprocess.run(["make", "-s", "-C", str(src), f"O={o}", "ARCH=x86_64", "tinyconfig"],
                   check=True, capture_output=True)
    base = type("B", (), {})()
    base.config, base.arch, base.snap, base.o = "tiny", "x86_64", Path(src), o
    from verify import kconfig
    base.values = kconfig.parse_config((o / ".config").read_text())
    r = VB._Runner.__new__(VB._Runner)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    memo = {}
    # tinyconfig has no SLUB: SLUB_CPU_PARTIAL (depends on SLUB && SMP) cannot be turned on
    fl = r.flip(base, "SLUB_CPU_PARTIAL", "y", scratch, memo)
    assert not fl.held and "depends on SLUB && SMP" in fl.why and "SMP=n" in fl.why, fl.why
    fl2 = r.flip(base, "SMP", "y", scratch, memo)
    assert fl2.held and fl2.values["CONFIG_SMP"] == "y"
    assert len(memo) == 2


# --- the per-patch check with the variability builds, a fake make ----------

HDR = """\
#ifdef CONFIG_FAST
#define fast_ptr(c)   ((c)->p)
#else
#define fast_ptr(c)   NULL
#endif
"""


CONF = "CONFIG_SLUB=y\nCONFIG_FAST=y\nCONFIG_LOCKED=y\n"     # the fake baseline's .config


class FlipKernel:
    """tests/test_verify_bisect_unit.py's fake kernel, whose compile of a
    .c that holds `wrap(fast_ptr(` fails when the O= directory's .config
    has CONFIG_FAST off (the NULL of the #else), as gcc's _Generic does;
    the flips are made on the .config text (no scripts/config in this tree)."""

    def __init__(self, monkeypatch):
        from tests.test_verify_bisect_unit import FakeKernel
        self.fake = FakeKernel(monkeypatch)
        self.flips = []
        inner = self.fake.build

        self.calls = []

        def build(src, out, *, targets=(), log=None, **kw):
            self.calls.append((kw.get("label") or "", list(targets)))
            conf = (Path(out) / ".config").read_text()
            bad = [t for t in targets if t.endswith(".o") and "CONFIG_FAST=y" not in conf
                   and "wrap(fast_ptr(" in (Path(src) / (t[:-2] + ".c")).read_text()]
            if bad:
                text = (f"../{bad[0][:-2]}.c:3:9: error: '_Generic' selector of type 'void *' "
                        "is not compatible with any association\n")
                Path(log).write_text(text)
                (Path(out) / bad[0]).unlink(missing_ok=True)
                return self.fake.result(Path(out), False, bad, 2, Path(log),
                                        kbuild.error_excerpt(text))
            return inner(src, out, targets=targets, log=log, **kw)
        monkeypatch.setattr(kbuild, "build", build)

        def flip(runner, base, sym, want, scratch, memo):
            self.flips.append((base.config, sym, want))
            vals = dict(base.values, **{f"CONFIG_{sym}": want})
            if sym == "LOCKED":                      # Kconfig keeps it: reported, not built
                return VB.Flip(base.config, {sym: want}, base.values, False,
                               "CONFIG_LOCKED (mm/Kconfig:1) depends on NEVER (NEVER=n)")
            return VB.Flip(base.config, {sym: want}, vals, True, "")
        monkeypatch.setattr(VB._Runner, "flip", flip)

        def install(runner, base, fl, o):
            (o / ".config").write_text("".join(f"{k}={v}\n" for k, v in fl.values.items()
                                               if v != "n"))
        monkeypatch.setattr(VB._Runner, "_install", install)
        monkeypatch.setattr(VB._Base, "__init__", self._base_init(VB._Base.__init__))
        import verify
        baseline = self.fake.baseline

        def with_config(src, base_dir, *a):
            res = baseline(src, base_dir, *a)
            (base_dir / "tree" / "o" / ".config").write_text(CONF)
            return res
        monkeypatch.setattr(verify, "_baseline", with_config)

    @staticmethod
    def _base_init(orig):
        def init(self, config, out_root, src, ident, jobs):
            orig(self, config, out_root, src, ident, jobs)
            assert self.values == {"CONFIG_SLUB": "y", "CONFIG_FAST": "y", "CONFIG_LOCKED": "y"}
            # the fake build records no dependency list: every object read include/h.h
            for obj in list(self.compiles) or ["mm/a.o", "mm/b.o"]:
                self.compiles[obj] = (f"cmd_{obj} := gcc -c ../{obj[:-2]}.c\n\n"
                                      f"deps_{obj} := \\\n  ../include/h.h \\\n\n")
        return init


def test_the_per_patch_check_names_a_line_that_breaks_with_a_symbol_flipped(tmp_path,
                                                                              monkeypatch):
    from tests.test_verify_bisect_unit import make_series, patch, run
    from verify import bisect
    pristine, repo, base = make_series(tmp_path, **{"include/h.h": HDR})
    k = FlipKernel(monkeypatch)
    ok_line = "int a(void)\n{\n\treturn 1;\n}\n#ifdef CONFIG_LOCKED\nint l;\n#endif\n"
    patch(repo, "mm: Add a locked int", {"mm/a.c": ok_line})
    bad = "int b(void *c)\n{\n\treturn wrap(fast_ptr(c)) != 0;\n}\n"
    patch(repo, "mm: Wrap fast_ptr()", {"mm/b.c": bad})
    patch(repo, "mm: Unwrap it again", {"mm/b.c": "int b(void *c)\n{\n\treturn c != 0;\n}\n"})
    # the per-patch check as it was: every patch builds in the table's configuration
    before = run(repo, pristine, tmp_path / "out")
    assert before.ok and before.variability is None and before.to_dict()["variability"] is None
    r = run(repo, pristine, tmp_path / "out", variability=True)
    # the table's configuration builds every patch: only the analysis sees it
    assert r.configs[0].ok and len(r.configs[0].patches) == 3
    v = r.variability
    assert not r.ok and not v.ok
    p1, p2, p3 = v.patches
    # the #ifdef tests it, the line and the #endif are inside it
    assert [(f.symbol, f.line) for f in p1.findings] == [("LOCKED", 5), ("LOCKED", 6),
                                                         ("LOCKED", 7)]
    assert p1.not_flipped == [{"symbol": "LOCKED", "config": "slub",
                               "why": "CONFIG_LOCKED (mm/Kconfig:1) depends on NEVER (NEVER=n)"}]
    assert [(f.symbol, f.line) for f in p2.findings] == [("FAST", 3)]
    assert "include/h.h:2" in p2.findings[0].why and "include/h.h:4" in p2.findings[0].why
    assert p3.findings == []                                 # the line no longer uses it
    flipped = [b for b in p2.builds if b["flip"]]
    assert [(b["flip"], b["objects"], b["status"]) for b in flipped] == \
        [({"FAST": "n"}, ["mm/b.o"], "fail")]
    assert "'_Generic' selector of type 'void *'" in flipped[0]["excerpt"]
    on = [b for b in p2.builds if not b["flip"]]
    assert [b["status"] for b in on] == ["ok"]              # the per-patch build is the "on" side
    assert k.flips == [("slub", "FAST", "n"), ("slub", "LOCKED", "n")]
    assert any("patch 2/3 \"mm: Wrap fast_ptr()\" does not build with slub + FAST=n (mm/b.o), "
               "the symbol found at mm/b.c:3" in x for x in r.problems), r.problems
    assert "FAIL slub + FAST=n: mm/b.o" in r.summary and "not flipped LOCKED" in r.summary
    d = r.to_dict()["variability"]
    assert d["symbols"] == ["FAST", "LOCKED"] and d["builds"] == 1
    # a rerun builds nothing that passed, and the failure again
    n_builds = len(k.calls)
    r2 = run(repo, pristine, tmp_path / "out", variability=True)
    assert not r2.variability.ok
    again = [b for b in k.calls[n_builds:] if b[0].startswith("variability")]
    assert [b[1] for b in again] == [["mm/b.o"]]


def test_the_patches_option_takes_numbers_and_ranges_and_refuses_the_rest():
    from base.log import SlabconvError
    from cli.checks import _patch_numbers
    assert _patch_numbers("14", 58) == {14}
    assert _patch_numbers("1-3,33", 58) == {1, 2, 3, 33}
    for bad in ("0", "59", "3-1", "x", "1-y"):
        with pytest.raises(SlabconvError) as e:
            _patch_numbers(bad, 58)
        assert e.value.exit_code == 2 and "--patches" in str(e.value)


def test_the_variability_command_is_wired():
    from cli import main
    args = main.build_parser().parse_args(["variability", "--patches", "14", "--symbols",
                                           "SLUB_CPU_PARTIAL,SMP", "--configs", "slub",
                                           "--analyse-only"])
    assert args.func.__name__ == "cmd_variability" and args.analyse_only
    v = main.build_parser().parse_args(["verify", "--no-variability"])
    from cli.apply import check_options
    assert check_options(v)["variability"] is False
    assert check_options(main.build_parser().parse_args(["verify"]))["variability"] is True
