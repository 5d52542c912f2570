"""Macros that a configuration defines as NULL (regen/nullable.py) and the
rule directives that use them: nullable-macros and locals-first
(regen/manifest.py, regen/series.py; docs/RULES.md)."""
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from base.log import SlabconvError
from regen import manifest, nullable, series
from test_regen import ID, regen, write_manifest

REPO = Path(__file__).resolve().parent.parent

HEADER = textwrap.dedent("""\
    #ifndef CPU_LIST_H
    #define CPU_LIST_H
    #include "cpu_list_types.h"
    #ifdef CONFIG_CPU_LIST
    #define first_of(c)		((c)->first)
    #define first_once(c)		READ_ONCE(first_of(c))
    #else
    #define first_of(c)		NULL
    #define first_once(c)		\\
    	NULL
    #endif
    #define peek_of(c)		(first_of(c))
    #define maybe_of(c)		((c) ? NULL : (c)->first)
    #define sum_of(c)		first_of(c) + 1
    #endif
    """)


def test_nullable_macros_are_read_off_the_definitions_and_the_headers_included(tmp_path):
    """A function-like macro with one definition that is NULL, or that only
    uses such a macro, is nullable; one that can be NULL only at run time
    (a conditional) is not, nor a macro of a header the file does not
    include."""
    t = tmp_path / "t"
    (t / "include" / "linux").mkdir(parents=True)
    (t / "mm").mkdir()
    (t / "include" / "linux" / "cpu_list.h").write_text(HEADER)
    (t / "include" / "linux" / "cpu_list_types.h").write_text(
        "#define no_list(c)\t((void *)0)\n/* #define in_comment(c) NULL */\n")
    (t / "include" / "linux" / "other.h").write_text("#define elsewhere(c) NULL\n")
    (t / "mm" / "user.c").write_text('#include <linux/cpu_list.h>\nint x;\n')
    assert nullable.macros(t, ["mm/user.c"]) == ["first_of", "first_once", "no_list", "peek_of"]
    assert nullable.define(nullable.macros(t, ["mm/user.c"])) == \
        "first_of,first_once,no_list,peek_of"
    # no include, no nullable macro: the -D still has a value
    (t / "mm" / "user.c").write_text("int x;\n")
    assert nullable.macros(t, ["mm/user.c"]) == []
    assert nullable.define([]) == "-"


def test_the_directives_are_parsed_and_a_missing_report_rule_is_an_error(tmp_path):
    d = tmp_path / "cocci"
    (d / "rules").mkdir(parents=True)
    (d / "rules" / "finder.cocci").write_text("virtual report\n")
    rule = d / "rules" / "r.cocci"
    rule.write_text("// slabconv: nullable-macros nullable\n"
                    "// slabconv: locals-first rules/finder.cocci\n")
    got = manifest.directives(rule)
    assert [type(x).__name__ for x in got] == ["NullableMacros", "LocalsFirst"]
    assert got[0].define == "nullable" and got[1].rule == "rules/finder.cocci"
    rule.write_text("\n// slabconv: locals-first rules/gone.cocci\n")
    with pytest.raises(SlabconvError) as e:
        manifest.directives(rule)
    assert e.value.exit_code == 2 and f"{rule}:2: locals-first: rules/gone.cocci" in str(e.value)


SLUB_DEF = textwrap.dedent("""\
    #ifndef _LINUX_SLUB_DEF_H
    #define _LINUX_SLUB_DEF_H
    struct kmem_cache_cpu {
    	void **freelist;
    	unsigned long tid;
    	struct page *page;
    #ifdef CONFIG_SLUB_CPU_PARTIAL
    	struct page *partial;
    #endif
    };

    #ifdef CONFIG_SLUB_CPU_PARTIAL
    #define slub_percpu_partial(c)		((c)->partial)
    #else
    #define slub_percpu_partial(c)		NULL
    #endif
    #endif
    """)

# Not in 5.10: a reader of the cpu partial list that holds it in a page local.
SLUB_C = textwrap.dedent("""\
    #include <linux/slub_def.h>
    #include "slab.h"

    static int cpu_partial_objects(struct kmem_cache *s, int cpu)
    {
    	struct page *page;

    	page = slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu));
    	if (page)
    		return page->pobjects;
    	return 0;
    }
    """)

ENTRY = """
    [[entry]]
    id = "cpu"
    subject = "mm/slub: Convert kmem_cache_cpu to struct slab"
    message = "Convert it."
      [[entry.step]]
      rule = "rules/kmem_cache_cpu.cocci"
      files = ["include/linux/slub_def.h", "mm/slub.c"]
      [[entry.expect]]
      present = 'struct slab \\*partial;'
      in = ["include/linux/slub_def.h"]
"""


@pytest.fixture
def tree(tmp_path):
    t = tmp_path / "linux"
    (t / "include" / "linux").mkdir(parents=True)
    (t / "mm").mkdir()
    (t / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")
    (t / "include" / "linux" / "slub_def.h").write_text(SLUB_DEF)
    (t / "mm" / "slub.c").write_text(SLUB_C)
    (t / "mm" / "slab.h").write_text("struct slab;\n")
    return t


def _own(d: Path) -> Path:
    write_manifest(d, "")
    (d / "rules").unlink()
    shutil.copytree(REPO / "cocci" / "rules", d / "rules")
    return d


def test_a_page_local_given_a_nullable_macro_becomes_a_slab_before_the_rule(tree, tmp_path,
                                                                             cache):
    """kmem_cache_cpu.cocci's locals-first directive: the page local that
    holds slub_percpu_partial() (NULL without CONFIG_SLUB_CPU_PARTIAL, read
    off slub_def.h) is converted to a slab in the same patch, and no
    slab_page() of the macro is written.  Without the directive the rule
    refuses the read with its place; without the NULL definition the macro
    is a struct slab * everywhere and is wrapped as before."""
    d = _own(tmp_path / "c")
    m = write_manifest(d, ENTRY)
    patch = regen(tree, m, tmp_path).patches[1].read_text()
    assert "+\tstruct slab *slab;\n" in patch
    assert "+\tslab = slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu));\n" in patch
    assert "+\t\treturn slab->pobjects;\n" in patch
    assert "slab_page(slub_percpu_partial" not in patch
    assert "Generated by: cocci/rules/slab_var.cocci\n" in patch

    rule = d / "rules" / "kmem_cache_cpu.cocci"
    text = rule.read_text()
    assert "\n// slabconv: locals-first rules/slab_nullable_local.cocci\n" in text
    rule.write_text(text.replace("// slabconv: locals-first rules/slab_nullable_local.cocci\n", ""))
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path, "out2")
    line = SLUB_C.splitlines().index(
        "\tpage = slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu));") + 1
    assert re.search(rf"mm/slub\.c:{line}: cpu_partial_objects\(\): slub_percpu_partial\(\) is "
                     rf"a macro that some configuration defines as NULL", str(e.value)), e.value

    rule.write_text(text)
    (tree / "include" / "linux" / "slub_def.h").write_text(
        SLUB_DEF.replace("#else\n#define slub_percpu_partial(c)\t\tNULL\n", ""))
    res = series.regenerate(tree, "test-tree-2", version="5.10", output=tmp_path / "out3",
                            identity=ID, manifest_path=m, workdir=tmp_path / "work2")
    patch = res.patches[1].read_text()
    assert "+\tpage = slab_page(slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu)));\n" in patch


def test_make_attribute_replays_the_locals_first_conversions(tree, tmp_path, cache):
    """The replay of each rule alone (report/attribution.py) makes the
    locals-first conversions where regen made them: the replay is exact,
    and the local's hunk is slab_var.cocci's."""
    from report import attribution as A
    d = _own(tmp_path / "c")
    m = write_manifest(d, ENTRY)
    out = tmp_path / "out"
    series.regenerate(tree, "test-tree", version="5.10", output=out, identity=ID,
                      manifest_path=m, workdir=tmp_path / "work")
    at = A.attribute("5.10", out, tree=str(tree), manifest_path=m)
    assert [e.exact for e in at.entries] == [True] and not at.entries[0].differs
    hunks = [at.sources_of_hunk(1, "mm/slub.c", i) for i in (1,)]
    assert "cocci/rules/slab_var.cocci" in hunks[0], hunks
