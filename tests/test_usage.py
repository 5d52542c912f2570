"""The usage pass (regen/usage.py with cocci/rules/slab_usage.cocci) on
tiny trees (no kernel needed).

Each case cocci/tests/slab_usage/<case>.c is what slab_usage.cocci reports
on (its .out, checked by test_rules.py); here the whole pass runs on it
through regen, as the manifest's usage entry, and the file must come out
as <case>.res: the variables found are converted by the named entries'
generic conversions, the callers adapted, and a page used as a page is
left alone.
"""
import shutil
import textwrap
from pathlib import Path

import pytest

from regen import series, usage
from regen.worktree import Identity
from tests.test_regen import write_manifest

REPO = Path(__file__).resolve().parent.parent
CASES = sorted((REPO / "cocci" / "tests" / "slab_usage").glob("*.c"))
ID = Identity("Test Dev", "dev@example.org")
USAGE = """
    [[entry]]
    id = "usage"
    subject = "mm: Convert remaining users of struct page's slab fields"
    usage = true
    message = "Convert them."
"""


def _regen(tmp_path: Path, files: dict[str, str], entries: str = USAGE):
    t = tmp_path / "linux"
    for f, text in files.items():
        (t / f).parent.mkdir(parents=True, exist_ok=True)
        (t / f).write_text(text)
    (t / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")
    m = write_manifest(tmp_path / "cocci", entries)
    return series.regenerate(t, "test-tree", version="5.10", output=tmp_path / "out",
                             identity=ID, manifest_path=m, workdir=tmp_path / "work")


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_usage_pass_case(case, tmp_path, cache):
    res = _regen(tmp_path, {f"mm/{case.name}": case.read_text()})
    got = (res.worktree.path / "mm" / case.name).read_text()
    assert got == case.with_suffix(".res").read_text(), got
    usage_entries = [e for e in res.entries if e.origin == "usage"]
    if got == case.read_text():
        assert not usage_entries and len(res.patches) == 0
    else:
        assert len(usage_entries) == 1 and usage_entries[0].conversions


def test_a_caller_in_another_file_is_adapted(tmp_path, cache):
    """A function that is not static: its callers in other files (found by
    name in the tree) get page_slab(), and a caller's local that only flows
    into it is converted in the next round."""
    res = _regen(tmp_path, {
        "mm/user.c": textwrap.dedent("""\
            unsigned int slab_free_count(struct page *page)
            {
            	return page->objects - page->inuse;
            }
            """),
        "drivers/x/x.c": textwrap.dedent("""\
            static unsigned int use(struct kmem_cache_node *n, const void *p)
            {
            	struct page *page = virt_to_head_page(p);

            	return slab_free_count(page);
            }
            """)})
    x = (res.worktree.path / "drivers" / "x" / "x.c").read_text()
    assert "struct slab *slab = page_slab(virt_to_head_page(p));" in x, x
    assert "slab_free_count(slab)" in x, x
    e = [e for e in res.entries if e.origin == "usage"][0]
    assert e.conversions == ["slab_free_count(): parameter page (mm/user.c)",
                             "use(): local page (drivers/x/x.c)"]
    msg = res.patches[1].read_text()
    assert "slab_free_count(): parameter page (mm/user.c)" in msg


def test_nothing_found_is_no_patch_and_no_cover_note(tmp_path, cache):
    res = _regen(tmp_path, {"mm/page.c": "static void *map(struct page *page)\n{\n"
                                         "\treturn page_address(page);\n}\n"})
    assert res.patches == [] or all("Convert remaining" not in p.name for p in res.patches)


def test_outside_mm_no_fold_to_the_helpers_of_mm_slab_h(tmp_path, cache):
    """Code outside mm/ cannot call virt_to_slab() (mm/slab.h): its local is
    converted with page_slab(), which <linux/page-flags.h> has."""
    res = _regen(tmp_path, {"lib/user.c": textwrap.dedent("""\
        #include <linux/mm.h>

        struct kmem_cache *cache_of(const void *x)
        {
        	struct page *page = virt_to_head_page(x);

        	return page->slab_cache;
        }
        """)})
    got = (res.worktree.path / "lib" / "user.c").read_text()
    assert "struct slab *slab = page_slab(virt_to_head_page(x));" in got, got
    assert "return slab->slab_cache;" in got


def test_a_local_named_slab_clashes_only_with_code_that_names_slab():
    """The word in a comment or a string, or a member named slab, leaves
    the name `slab` free; a local, parameter or call argument named slab
    takes it (the conversion then keeps the local's own name)."""
    from regen.usage import names_slab
    assert not names_slab("{\n\t/* the slab's memory */\n\tx = c->slab; y = s.slab;\n"
                          "\tpr_info(\"slab\");\n}\n")
    assert names_slab("{\n\tstruct slab *slab;\n}\n")
    assert names_slab("{\n\tfree_it(slab);\n}\n")


def test_a_page_used_both_ways_keeps_its_type_and_reaches_the_slab_through_page_slab(
        tmp_path, cache):
    """The safe form: a local linked through its lru (a use as a page) whose
    cache is read (a use as a slab) stays a struct page; the member goes
    through page_slab(), and the message lists it apart from the
    conversions.  A local used only as a slab in the same file is
    converted as before.  Two in one file run in one spatch run, each
    checked for its effect."""
    res = _regen(tmp_path, {"mm/user.c": textwrap.dedent("""\
        static LIST_HEAD(deferred);

        void flush_deferred(void)
        {
        	struct page *page, *next;

        	list_for_each_entry_safe(page, next, &deferred, lru) {
        		list_del(&page->lru);
        		kmem_cache_free(page->slab_cache, page->freelist);
        	}
        }

        unsigned int free_objects(struct page *page)
        {
        	return page->objects - page->inuse;
        }

        unsigned int objects_if_slab(struct page *page)
        {
        	return PageSlab(page) ? page->objects : 0;
        }
        """)})
    got = (res.worktree.path / "mm" / "user.c").read_text()
    assert "\tstruct page *page, *next;\n" in got, got
    assert "kmem_cache_free(page_slab(page)->slab_cache," in got, got
    assert "page_slab(page)->freelist);" in got, got
    assert "list_del(&page->lru);" in got
    assert "unsigned int free_objects(struct slab *slab)" in got, got
    assert "return PageSlab(page) ? page_slab(page)->objects : 0;" in got, got
    e = [e for e in res.entries if e.origin == "usage"][0]
    assert e.conversions == ["free_objects(): parameter page (mm/user.c)",
                             "flush_deferred(): local page (mm/user.c)",
                             "objects_if_slab(): parameter page (mm/user.c)"]
    msg = res.patches[1].read_text()
    assert ("Converted because of how they are used (no manifest entry names them):\n\n"
            "  free_objects(): parameter page (mm/user.c)\n\n"
            f"{usage.MIXED_HEADER}\n\n  flush_deferred(): local page (mm/user.c)\n"
            "  objects_if_slab(): parameter page (mm/user.c)\n") in msg, msg


REMOVAL = """
    [[entry]]
    id = "remove"
    subject = "mm: Remove slab from struct page"
    message = "Remove them."
      [[entry.step]]
      remove_members = ["slab_list", "inuse"]
      struct = "page"
      into = "include/linux/mm_types.h"
      why = "members of nested unions"
      [[entry.expect]]
      absent = "inuse"
      in = ["include/linux/mm_types.h"]
"""


def test_a_page_walked_as_a_slab_and_used_as_a_page_stops_with_the_refusal(tmp_path, cache):
    """The safe form cannot convert a cursor of a slab list walk that is
    used as a page too: regen stops before the removal, naming each use
    and, once, the conversion it tried and why it refused it."""
    from base.log import SlabconvError
    files = {"mm/user.c": textwrap.dedent("""\
                 unsigned long partial_bytes(struct kmem_cache_node *n)
                 {
                 	struct page *page;
                 	unsigned long x = 0;

                 	list_for_each_entry(page, &n->partial, slab_list)
                 		x += page_size(page) - page->inuse;
                 	return x;
                 }
                 """),
             "include/linux/mm_types.h": "struct page {\n\tstruct list_head slab_list;\n"
                                         "\tunsigned inuse:16;\n\tint _refcount;\n};\n"}
    with pytest.raises(SlabconvError) as e:
        _regen(tmp_path, files, USAGE + REMOVAL)
    err = str(e.value)
    assert ("  mm/user.c:6: partial_bytes(): page->slab_list\n"
            "  mm/user.c:7: partial_bytes(): page->inuse\n"
            "    not converted: partial_bytes(): local page (mm/user.c): used as a page and as "
            "the cursor of a slab list walk; the safe form (its slab members through "
            "page_slab()) was tried and refused") in err, err
    assert err.count("not converted:") == 1
    assert not (tmp_path / "out").exists()
