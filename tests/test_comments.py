"""regen/comments.py: comments follow the code they name, and only that."""
import re
from pathlib import Path

import pytest

from regen import comments, kerneldoc

ROOT = Path(__file__).resolve().parents[1] / "cocci"
PHRASES = comments.phrases(ROOT)

BEFORE = '''/*
 * Lock order:
 *   slab_lock(page)
 *	A. page->freelist	-> List of object free in a page
 *	C. page->objects	-> Number of objects in page
 */
#define MAX_OBJS 32767 /* since page.objects is u15 */

/*
 * Check the page->freelist of a page; c->page is the cpu slab.
 */
static void *get_it(struct kmem_cache_cpu *c, struct page *page)
{
	/* must check again c->page: page->objects may change */
	slab_lock(page);
	c->page = page;
	pr_info("/* page->objects */ %d", page->objects + page.objects + page->freelist);
	return page->freelist;
}

static int other(struct page *page)
{
	/* page->inuse is read here */
	return page->inuse;
}
'''


def convert_get_it(src: str) -> str:
    """What a rule does to get_it(): its page becomes a slab."""
    body = src[src.index("static void *get_it"):src.index("static int other")]
    return src.replace(body, body.replace("struct page *page", "struct slab *slab")
                       .replace("slab_lock(page)", "slab_lock(slab)")
                       .replace("c->page = page", "c->slab = slab")
                       .replace("page->", "slab->").replace("page.", "slab.")
                       .replace('"/* slab->objects */', '"/* page->objects */'))


def test_function_comments_follow_the_conversion():
    out = comments.follow(BEFORE, convert_get_it(BEFORE), PHRASES)
    assert "/* must check again c->slab: slab->objects may change */" in out
    # the comment block above the definition is the function's own
    assert " * Check the slab->freelist of a slab; c->slab is the cpu slab." in out


def test_strings_are_not_comments():
    out = comments.follow(BEFORE, convert_get_it(BEFORE), PHRASES)
    assert 'pr_info("/* page->objects */ %d"' in out


def test_a_function_the_entry_did_not_convert_keeps_its_comments():
    out = comments.follow(BEFORE, convert_get_it(BEFORE), PHRASES)
    assert "/* page->inuse is read here */" in out


def test_file_comments_wait_until_no_code_uses_the_name():
    # other() still reads page->inuse, but no code reads page->freelist or
    # page->objects after the entry: those lines of the header follow
    out = comments.follow(BEFORE, convert_get_it(BEFORE), PHRASES)
    assert " *	A. slab->freelist	-> List of object free in a slab\n" in out
    assert " *	C. slab->objects	-> Number of objects in slab\n" in out
    assert "/* since slab.objects is u15 */" in out
    # no code calls slab_lock(page) any more either
    assert " *   slab_lock(slab)\n" in out
    # page->inuse is still read in other(); once other() is converted, it follows
    assert " * Lock order:\n" in out and "/* page->inuse is read here */" in out
    both = convert_get_it(BEFORE)
    done = both.replace("static int other(struct page *page)", "static int other(struct slab *slab)") \
               .replace("return page->inuse;", "return slab->inuse;")
    out2 = comments.follow(both, done, PHRASES)
    assert "/* slab->inuse is read here */" in out2


def test_a_name_the_code_rewrote_two_ways_stays():
    before = "static void f(struct page *page)\n{\n\t/* see page->slab_cache */\n" \
             "\ta = page->slab_cache;\n\tb = page->slab_cache;\n}\n"
    after = "static void f(struct slab *slab)\n{\n\t/* see page->slab_cache */\n" \
            "\ta = slab->slab_cache;\n\tb = slab_page(slab)->slab_cache;\n}\n"
    assert comments.follow(before, after, PHRASES) == after


def test_nothing_changes_when_the_code_did_not():
    edited = BEFORE.replace("/* page->inuse is read here */", "/* page->inuse is read */")
    assert comments.follow(BEFORE, edited, PHRASES) == edited


def test_rewritten_phrases_touch_only_rewritten_lines():
    before = "/*\n * page->objects: objects in page\n * other objects in page\n */\n" \
             "static int f(struct page *page)\n{\n\treturn page->objects;\n}\n"
    after = before.replace("int f(struct page *page)", "int f(struct slab *slab)") \
                  .replace("return page->objects", "return slab->objects")
    out = comments.follow(before, after, PHRASES)
    assert " * slab->objects: objects in slab\n * other objects in page\n" in out


def test_every_phrase_is_exercised():
    samples = {
        r"\bin a page\b": ("page->freelist: free in a page", "slab->freelist: free in a slab"),
        r"\bobjects in page\b": ("page->objects: objects in page", "slab->objects: objects in slab"),
        r"\bof a page\b": ("the page->freelist of a page", "the slab->freelist of a slab"),
    }
    for p in PHRASES:
        if p.where != "rewritten":
            continue
        line, want = samples.pop(p.old)
        before = f"/* {line} */\nstatic int f(struct page *page)\n{{\n\treturn page->x;\n}}\n"
        after = before.replace("struct page *page", "struct slab *slab").replace("page->x", "slab->x")
        assert f"/* {want} */" in comments.follow(before, after, PHRASES)
    assert not samples, f"phrases missing from the table: {sorted(samples)}"


@pytest.mark.parametrize("desc,want", [
    ("page pointer being destroyed", "slab being destroyed"),
    ("Page to look in.", "Slab to look in."),
    ("a pointer to the page struct", "a pointer to the slab struct"),
])
def test_kerneldoc_description_follows_a_renamed_parameter(desc, want):
    src = f"/**\n * f - x\n * @page: {desc}\n * @cache: the page cache\n */\nstatic void f(struct page *page)\n{{\n}}\n"
    out = kerneldoc.rename_param(src, "f", "page", "slab", PHRASES)
    assert f" * @slab: {want}\n" in out
    assert " * @cache: the page cache\n" in out     # another parameter's words stay


def test_phrase_table_refuses_an_entry_without_its_upstream(tmp_path):
    (tmp_path / "comments.toml").write_text(
        '[[phrase]]\nwhere = "rewritten"\nold = "a"\nnew = "b"\n')
    with pytest.raises(ValueError, match="upstream"):
        comments.load_phrases(tmp_path / "comments.toml")


def test_functions_finds_definitions_and_their_comment_blocks():
    fns = {name: (s, e, d) for name, s, e, d in comments.functions(BEFORE)}
    assert set(fns) == {"get_it", "other"}
    s, e, d = fns["get_it"]
    assert BEFORE[d:s].startswith("/*\n * Check the page->freelist")
    assert BEFORE[s:e].startswith("static void *get_it(") and BEFORE[s:e].endswith("}")
    s, e, d = fns["other"]
    assert d == s                       # a blank line: no comment of its own


def _slab_fn(comment: str):
    before = f"/*\n{comment} */\nstatic int f(struct page *page)\n{{\n\treturn page->inuse + g(page);\n}}\n"
    after = before.replace("struct page *page", "struct slab *slab") \
                  .replace("page->inuse + g(page)", "slab->inuse + g(slab)")
    return before, after


def test_converted_phrases_follow_in_a_function_whose_page_became_a_slab():
    before, after = _slab_fn(" * Destroy all the objs in a slab page; the page is frozen,\n"
                             " * a partial page is not.  This allows the page\n * allocator to work.\n")
    out = comments.follow(before, after, PHRASES)
    assert (" * Destroy all the objs in a slab; the slab is frozen,\n"
            " * a partial slab is not.  This allows the page\n * allocator to work.\n") in out


def test_converted_phrases_wait_for_a_whole_rename():
    # page became slab in one use and slab_page(slab) in the other: not a slab everywhere
    before, _ = _slab_fn(" * the page is frozen\n")
    after = before.replace("struct page *page", "struct slab *slab") \
                  .replace("page->inuse + g(page)", "slab->inuse + g(slab_page(slab))")
    assert " * the page is frozen\n" in comments.follow(before, after, PHRASES)


def test_get_and_put_a_page_follow_a_page_that_became_a_slab():
    before, after = _slab_fn(" * Put a page that was just frozen into a partial page slot.\n")
    assert (" * Put a slab that was just frozen into a partial slab slot.\n"
            in comments.follow(before, after, PHRASES))


def test_a_page_parameter_of_another_name_that_became_a_slab_converts_its_comments():
    # get_any_partial(): struct page **ret_page became struct slab **ret_slab
    before = ("/*\n * Get a page from somewhere.  Get a partial page.\n */\n"
              "static void *get_any(struct kmem_cache *s, struct page **ret_page)\n{\n"
              "\treturn get_node(s, ret_page);\n}\n")
    after = before.replace("struct page **ret_page", "struct slab **ret_slab") \
                  .replace("get_node(s, ret_page)", "get_node(s, ret_slab)")
    out = comments.follow(before, after, PHRASES)
    assert " * Get a slab from somewhere.  Get a partial slab.\n" in out
    # the same comment over a function whose page stays a page: left alone
    other = before.replace("ret_page", "ret_pages")
    assert " * Get a page from somewhere." in comments.follow(before, other, PHRASES)


def test_every_converted_phrase_is_exercised():
    checked = {r"\bslab page\b", r"\bpartial page\b", r"\bthe page\b(?![\s*]+allocator)",
               r"\b([Gg]et|[Pp]ut) a page\b", r"\bactual page\b", r"\bslabp\b"}
    assert {p.old for p in PHRASES if p.where == "converted"} == checked


CHECK = """static void check(const void *ptr)
{
	struct page *page;

	/*
	 * The following
	 * is effectively a highmem-aware virt_to_head_page().
	 */
	page = compound_head(kmap_to_page((void *)ptr));
	use(page);
}
"""


def test_above_follows_the_statement_the_entry_changed():
    after = CHECK.replace("struct page *page", "struct slab *slab") \
                 .replace("page = compound_head(", "slab = page_slab(").replace("use(page)", "use(slab)")
    assert "highmem-aware virt_to_slab().\n" in comments.follow(CHECK, after, PHRASES)


def test_above_waits_for_the_statement_to_change():
    # the function is converted, but the statement below the comment still
    # takes compound_head(): the comment stays
    after = CHECK.replace("use(page)", "use(page_slab(page))")
    assert "highmem-aware virt_to_head_page().\n" in comments.follow(CHECK, after, PHRASES)
    # another statement below it: the comment stays
    moved = CHECK.replace("page = compound_head(kmap_to_page((void *)ptr));\n\tuse(page);",
                          "use(page);\n\tpage = compound_head(kmap_to_page((void *)ptr));")
    after = moved.replace("page = compound_head(", "slab = page_slab(")
    assert "highmem-aware virt_to_head_page().\n" in comments.follow(moved, after, PHRASES)


def test_every_above_phrase_is_exercised():
    # each is asserted in a test above (CHECK, CPU_SLAB)
    assert {p.old for p in PHRASES if p.where == "above"} == {
        r"\bvirt_to_head_page\(\)", r"\bpage is pointing to the page\b", r"\bThat page must\b"}


def test_every_block_phrase_is_exercised():
    # each is asserted in test_block_phrases_follow_a_rewritten_line_of_their_comment
    assert {p.old for p in PHRASES if p.where == "block"} == {
        r"\blist operations on the page\b", r"\bpage's freelist\b"}


def test_a_phrase_above_needs_was_and_now(tmp_path):
    (tmp_path / "comments.toml").write_text(
        '[[phrase]]\nwhere = "above"\nold = "a"\nnew = "b"\nupstream = "x"\n')
    with pytest.raises(ValueError, match="was and now"):
        comments.load_phrases(tmp_path / "comments.toml")


def test_a_member_the_function_never_had_follows_the_file():
    # mem_cgroup_from_obj(): its comment names page->obj_cgroups, which only
    # another function's code spelled; that code became slab->memcg_data
    before = ("static void alloc(struct page *page)\n{\n\tcmpxchg(&page->obj_cgroups, NULL, v);\n}\n\n"
              "static void *from_obj(void *p)\n{\n\tstruct page *page = virt_to_head_page(p);\n\n"
              "\t/* saved in the page->obj_cgroups. */\n\treturn page_obj_cgroups(page);\n}\n")
    after = before.replace("alloc(struct page *page)", "alloc(struct slab *slab)") \
                  .replace("&page->obj_cgroups", "&slab->memcg_data") \
                  .replace("struct page *page = virt_to_head_page(p)", "struct slab *slab = virt_to_slab(p)") \
                  .replace("page_obj_cgroups(page)", "slab_objcgs(slab)")
    assert "/* saved in the slab->memcg_data. */" in comments.follow(before, after, PHRASES)
    # in a function the entry did not convert, it stays
    same = after.replace("struct slab *slab = virt_to_slab(p)", "struct page *page = virt_to_head_page(p)") \
                .replace("slab_objcgs(slab)", "page_obj_cgroups(page)")
    assert "/* saved in the page->obj_cgroups. */" in comments.follow(before, same, PHRASES)


def test_a_page_that_became_the_slab_through_page_slab_is_converted():
    # new_slab_objects(): c->slab = page_slab(page) became c->slab = slab
    before = ("static void *objects(struct kmem_cache_cpu *c)\n{\n\tstruct page *page;\n\n"
              "\tpage = slab_page(new_slab());\n\t/* No other reference to the page yet */\n"
              "\tc->slab = page_slab(page);\n\treturn page->freelist;\n}\n")
    after = before.replace("struct page *page;", "struct slab *slab;") \
                  .replace("page = slab_page(new_slab());", "slab = new_slab();") \
                  .replace("c->slab = page_slab(page);", "c->slab = slab;") \
                  .replace("return page->freelist;", "return slab->freelist;")
    assert "/* No other reference to the slab yet */" in comments.follow(before, after, PHRASES)
    # a page left in the function: not converted
    kept = after.replace("return slab->freelist;", "return page_address(slab_page(slab)) + page;")
    assert "/* No other reference to the page yet */" in comments.follow(before, kept, PHRASES)


def test_slab_words_of_the_slab_allocator_follow_a_converted_function():
    before, after = _slab_fn(" * move slabp to correct slabp list; the actual page can be freed\n")
    assert (" * move slab to correct slab list; the actual slab can be freed\n"
            in comments.follow(before, after, PHRASES))


HEADER = '''/*
 *   The slab_lock only protects:
 *	A. page->freelist	-> List of object free in a page
 *
 *   The processor that froze the slab is the one who can perform
 *   list operations on the page, and it alone takes objects from the
 *   page's freelist.
 */
#define MAX_OBJS 32767 /* since page.objects is u15 */

/* The page's freelist is not this comment's business */
static int f(struct page *page)
{
	return page->freelist != NULL && page->objects;
}

static int other(struct page *page)
{
	return page->inuse;
}
'''


# f() converted; other() still reads page->inuse
HEADER_F_CONVERTED = HEADER.replace("static int f(struct page *page)", "static int f(struct slab *slab)") \
                           .replace("page->freelist != NULL && page->objects",
                                    "slab->freelist != NULL && slab->objects")


def test_block_phrases_follow_a_rewritten_line_of_their_comment():
    out = comments.follow(HEADER, HEADER_F_CONVERTED, PHRASES)
    assert " *	A. slab->freelist	-> List of object free in a slab\n" in out
    assert " *   list operations on the slab, and it alone takes objects from the\n" in out
    assert " *   page's freelist.\n" not in out and " *   slab's freelist.\n" in out
    # a comment without a rewritten code name keeps its words
    assert "/* The page's freelist is not this comment's business */" in out


def test_a_dot_member_follows_the_arrow_members_rewrite():
    out = comments.follow(HEADER, HEADER_F_CONVERTED, PHRASES)
    assert "/* since slab.objects is u15 */" in out
    # while the code still reads page->objects somewhere, page.objects stays
    half = HEADER.replace("page->freelist != NULL", "slab_page(slab)->freelist != NULL") \
                 .replace("struct page *page", "struct slab *slab")
    assert "/* since page.objects is u15 */" in comments.follow(HEADER, half, PHRASES)


CPU_SLAB = '''static void *alloc(struct kmem_cache_cpu *c)
{
	void *freelist = c->freelist;

	/*
	 * freelist is pointing to the list of objects to be used.
	 * page is pointing to the page from which the objects are obtained.
	 * That page must be frozen for per cpu allocations to work.
	 */
	VM_BUG_ON(!c->page->frozen);
	/* page is pointing to the page: That page must stay */
	VM_BUG_ON(!c->freelist);
	return freelist;
}
'''


def test_above_phrases_follow_the_cpu_slab_below_the_comment():
    after = CPU_SLAB.replace("c->page->frozen", "c->slab->frozen")
    out = comments.follow(CPU_SLAB, after, PHRASES)
    assert " * slab is pointing to the slab from which the objects are obtained.\n" in out
    assert " * That slab must be frozen for per cpu allocations to work.\n" in out
    # the statement below this one did not change: its words stay
    assert "/* page is pointing to the page: That page must stay */" in out


# The comments of mm/slub.c that the original series rewrote, as the
# committed 5.10 series must leave them (its last change to each line).
# Not among them: init_cache_random_seq()'s "offset on the set of pages",
# whose function no conversion touches, and "must check again c->page in
# case we got preempted", which 5.10 does not have.
SEED_COMMENTS = [
    " *	A. slab->freelist	-> List of object free in a slab",
    " *	C. slab->objects	-> Number of objects in slab",
    " *   slab is the one who can perform list operations on the slab. Other",
    " *   slab's freelist.",
    " * slab->frozen		The slab is frozen and exempt from list processing.",
    "#define MAX_OBJS_PER_PAGE	32767 /* since slab.objects is u15 */",
    "	 * slab is pointing to the slab from which the objects are obtained.",
    "	 * That slab must be frozen for per cpu allocations to work.",
]


def test_the_committed_series_rewrites_the_comments_the_original_did():
    series = sorted((ROOT.parent / "generated-patches" / "5.10").glob("0*.patch"))
    final: dict[str, str] = {}           # a line's text without its page/slab -> its last form
    for p in series:
        for line in p.read_text().splitlines():
            if line[:1] in ("+", "-") and line[:3] not in ("+++", "---"):
                key = re.sub(r"\b(page|slab)\b", "X", line[1:])
                if line[0] == "+":
                    final[key] = line[1:]
    for want in SEED_COMMENTS:
        key = re.sub(r"\b(page|slab)\b", "X", want)
        assert final.get(key) == want, f"the series leaves {final.get(key)!r}, not {want!r}"
