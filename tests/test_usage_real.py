"""A user's branch of 5.10 with slab code of its own, through `slabconv
regen --tree`: code that uses the slab members of struct page in a way no
rule converts stops regen before "mm: Remove slab from struct page", with
exit 1, every use named (file, line, function, member), and no series
written (issue 22, item 2).

The branch is made from the pristine packaged tree: a hard-linked copy
(no 1 GB copy; the pristine files are never written: a changed file is
unlinked and written anew) with the user's code appended to the files.
regen then copies it into a work tree of its own, as for any TREE=.
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from base import paths  # noqa: E402
from regen import field_users, usage  # noqa: E402
from regen.source import resolve  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]


def user_branch(root: Path, additions: dict[str, str]) -> Path:
    """A copy of the pristine 5.10 tree at root/linux with `additions`
    (file -> code appended to it)."""
    src = resolve(paths.DEFAULT_KERNEL, None)
    tree = root / "linux"
    subprocess.run(["cp", "-al", str(src.tree), str(tree)], check=True)
    for f, code in additions.items():
        p = tree / f
        text = p.read_text()
        p.unlink()                      # a hard link to the pristine file: never write it
        p.write_text(text + code)
    return tree


def line_of(tree: Path, f: str, needle: str) -> int:
    lines = (tree / f).read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if needle in ln)


# the forms left to the error: a struct page reached through a member of the
# user's own struct (no rule converts the member's type), a global, a page
# used as a page and walked as a slab list's cursor (the safe form is
# tried and refused); these stay uses of struct page's fields
HOLDER_SLUB = """
struct slabconv_user_holder {
\tstruct page *pg;
};

unsigned int slabconv_user_held_inuse(struct slabconv_user_holder *h);
unsigned int slabconv_user_held_inuse(struct slabconv_user_holder *h)
{
\treturn h->pg->inuse;
}

/* a global struct page: no rule converts a global's type */
static struct page *slabconv_user_last;

unsigned int slabconv_user_last_inuse(void);
unsigned int slabconv_user_last_inuse(void)
{
\treturn slabconv_user_last->inuse;
}

/* a page used as a page and walked as a slab list's cursor */
unsigned long slabconv_user_walk_both(struct kmem_cache_node *n);
unsigned long slabconv_user_walk_both(struct kmem_cache_node *n)
{
\tstruct page *page;
\tunsigned long x = 0;

\tlist_for_each_entry(page, &n->partial, slab_list)
\t\tx += page_size(page) - page->inuse;
\treturn x;
}
"""
HOLDER_LIB = """
struct slabconv_user_cache_ref {
\tstruct page *pg;
};

void *slabconv_user_cache_of(struct slabconv_user_cache_ref *r);
void *slabconv_user_cache_of(struct slabconv_user_cache_ref *r)
{
\treturn r->pg->slab_cache;
}
"""


def test_an_unconverted_use_stops_regen_with_its_place(tmp_path):
    tree = user_branch(tmp_path, {"mm/slub.c": HOLDER_SLUB, "lib/dump_stack.c": HOLDER_LIB})
    out = tmp_path / "series"
    env = dict(os.environ, SLABCONV_IDENTITY="slabconv <slabconv@localhost>")
    cp = subprocess.run([str(REPO / "slabconv"), "regen", "--tree", str(tree),
                         "--output", str(out)], cwd=REPO, env=env, capture_output=True,
                        text=True)
    assert cp.returncode == 1, cp.stderr[-3000:]
    err = cp.stderr
    assert "slabconv: error:" in err and "'remove-slab-from-page'" in err, err[-3000:]
    slub = line_of(tree, "mm/slub.c", "return h->pg->inuse;")
    lib = line_of(tree, "lib/dump_stack.c", "return r->pg->slab_cache;")
    assert f"mm/slub.c:{slub}: slabconv_user_held_inuse(): page->inuse" in err, err[-3000:]
    assert f"lib/dump_stack.c:{lib}: slabconv_user_cache_of(): page->slab_cache" in err
    glob = line_of(tree, "mm/slub.c", "return slabconv_user_last->inuse;")
    assert f"mm/slub.c:{glob}: slabconv_user_last_inuse(): page->inuse" in err, err[-3000:]
    both = line_of(tree, "mm/slub.c", "x += page_size(page) - page->inuse;")
    assert f"mm/slub.c:{both}: slabconv_user_walk_both(): page->inuse\n    not converted: " \
           f"slabconv_user_walk_both(): local page (mm/slub.c): used as a page and as the " \
           f"cursor of a slab list walk; the safe form" in err, err[-3000:]
    assert not out.exists(), "no series is written"
    drop(tree)


# a use of a header's function, in a file that no entry lists, that no rule
# can adapt: its address taken (a function pointer would have the old type)
FNPTR_UTIL = """
#include "slab.h"

#ifdef CONFIG_SLUB
static void *__maybe_unused user_util_index_fn(void)
{
\treturn (void *)obj_to_index;
}
#endif
"""


def test_a_use_elsewhere_that_cannot_be_adapted_stops_regen_with_its_place(tmp_path):
    """The memcg patch changes obj_to_index() to take a struct slab; its
    address taken in mm/util.c, which that patch does not list, cannot be
    adapted: regen stops there, exit 1, naming file:line, the function and
    the callee, and writes no series."""
    tree = user_branch(tmp_path, {"mm/util.c": FNPTR_UTIL})
    out = tmp_path / "series"
    env = dict(os.environ, SLABCONV_IDENTITY="slabconv <slabconv@localhost>")
    cp = subprocess.run([str(REPO / "slabconv"), "regen", "--tree", str(tree),
                         "--output", str(out)], cwd=REPO, env=env, capture_output=True,
                        text=True)
    try:
        assert cp.returncode == 1, cp.stderr[-3000:]
        err = cp.stderr
        line = line_of(tree, "mm/util.c", "return (void *)obj_to_index;")
        assert "slabconv: error: entry 'memcg'" in err, err[-3000:]
        assert (f"mm/util.c:{line}: user_util_index_fn(): obj_to_index(): not a call"
                in err), err[-3000:]
        assert not out.exists(), "no series is written"
    finally:
        drop(tree)


# a call, outside mm/, of a function whose declaration the check_heap_object
# patch moves from include/linux/slab.h to mm/slab.h, which the file does
# not include: after that patch it would call an undeclared function
MOVED_DECL_LIB = """
#include <linux/slab.h>

static void __maybe_unused user_lib_check(const void *p, unsigned long n)
{
\t__check_heap_object(p, n, virt_to_head_page(p), false);
}
"""


def test_a_call_that_cannot_see_a_moved_declaration_stops_regen_with_its_place(tmp_path):
    """regen stops at the check_heap_object patch, exit 1, naming the call
    (file:line, function), the function, where it is declared now and why
    the file does not see it; no series is written."""
    tree = user_branch(tmp_path, {"lib/dump_stack.c": MOVED_DECL_LIB})
    out = tmp_path / "series"
    env = dict(os.environ, SLABCONV_IDENTITY="slabconv <slabconv@localhost>")
    cp = subprocess.run([str(REPO / "slabconv"), "regen", "--tree", str(tree),
                         "--output", str(out)], cwd=REPO, env=env, capture_output=True,
                        text=True)
    try:
        assert cp.returncode == 1, cp.stderr[-3000:]
        err = cp.stderr
        line = line_of(tree, "lib/dump_stack.c", "__check_heap_object(p, n,")
        assert "slabconv: error: entry 'check-heap-object'" in err, err[-3000:]
        assert (f"lib/dump_stack.c:{line}: user_lib_check(): __check_heap_object(): declared "
                f"in mm/slab.h after this entry (in include/linux/slab.h before), which "
                f"lib/dump_stack.c does not include, directly or through the headers it "
                f"includes") in err, err[-3000:]
        assert not out.exists(), "no series is written"
    finally:
        drop(tree)


def drop(tree: Path) -> None:
    """Remove the branch and the work tree regen made of it in the cache
    (1.6 GB per branch)."""
    from regen.worktree import _rmtree, tree_id
    work = paths.cache_root() / "work" / paths.DEFAULT_KERNEL / tree_id(tree)
    if work.exists():
        _rmtree(work)
    shutil.rmtree(tree)


# ---- a branch with slab code of its own of every form: converted, builds -----
# Each addition compiles on 5.10 as it is.  `page_*` functions that use their
# page as a page must come out of the series unchanged.
FORMS = {
    "mm/slub.c": """
/* user code: a parameter used as a slab, a walk of the partial list whose
 * cursor flows into it, a local passed to slab_lock() (which the series
 * converts), and a page that is only a page */
static unsigned int __maybe_unused user_slub_free(struct page *page)
{
\treturn page->objects - page->inuse;
}

static unsigned long __maybe_unused user_slub_partial_free(struct kmem_cache_node *n)
{
\tstruct page *page;
\tunsigned long x = 0;

\tlist_for_each_entry(page, &n->partial, slab_list)
\t\tx += user_slub_free(page);
\treturn x;
}

static void __maybe_unused user_slub_lock_first(struct kmem_cache_node *n)
{
\tstruct page *page;

\tpage = list_first_entry_or_null(&n->partial, struct page, slab_list);
\tif (!page)
\t\treturn;
\tslab_lock(page);
\tslab_unlock(page);
}

static void *__maybe_unused user_slub_page_only(struct page *page)
{
\treturn page_address(page);
}

/* user code: pages used both as pages and as slabs, which stay pages with
 * their slab members reached through page_slab(): a deferred free of slab
 * pages linked through their lru, and a flag tested next to a member */
static LIST_HEAD(user_slub_deferred);

static void __maybe_unused user_slub_flush_mixed(void)
{
\tstruct page *page, *next;

\tlist_for_each_entry_safe(page, next, &user_slub_deferred, lru) {
\t\tlist_del(&page->lru);
\t\t__free_slab(page->slab_cache, page);
\t}
}

static unsigned int __maybe_unused user_slub_objects_mixed(struct page *page)
{
\tif (!PageSlab(page))
\t\treturn 0;
\treturn page->objects;
}

/* an RCU callback: the page from its rcu_head, freed as a slab */
static void __maybe_unused user_slub_rcu_free(struct rcu_head *h)
{
\tstruct page *page = container_of(h, struct page, rcu_head);

\t__free_slab(page->slab_cache, page);
}

/* a slab member written; the cpu partial chain walked (slub_percpu_partial()
 * is NULL without SLUB_CPU_PARTIAL: the local becomes a slab at the
 * kmem_cache_cpu patch, locals-first) */
static void __maybe_unused user_slub_thaw(struct page *page)
{
\tpage->frozen = 0;
}

static unsigned int __maybe_unused user_slub_cpu_partial(struct kmem_cache_cpu *c)
{
\tstruct page *page;
\tunsigned int x = 0;

\tfor (page = slub_percpu_partial(c); page; page = page->next)
\t\tx += page->objects;
\treturn x;
}
""",
    "mm/slab.c": """
/* user code: SLAB's full, partial and free lists walked, page->active read */
static unsigned int __maybe_unused user_slab_active(struct kmem_cache_node *n)
{
\tstruct page *page;
\tunsigned int x = 0;

\tlist_for_each_entry(page, &n->slabs_full, slab_list)
\t\tx += page->active;
\tlist_for_each_entry(page, &n->slabs_partial, slab_list)
\t\tx += page->active;
\tlist_for_each_entry(page, &n->slabs_free, slab_list)
\t\tx++;
\treturn x;
}

static int __maybe_unused user_slab_page_only(struct page *page)
{
\treturn page_count(page);
}

/* pages used both ways: a deferred-free list, a flag next to a member */
static LIST_HEAD(user_slab_deferred);

static void __maybe_unused user_slab_flush_mixed(void)
{
\tstruct page *page, *next;

\tlist_for_each_entry_safe(page, next, &user_slab_deferred, lru) {
\t\tlist_del(&page->lru);
\t\tkmem_cache_free(page->slab_cache, page->s_mem);
\t}
}

static unsigned int __maybe_unused user_slab_active_mixed(struct page *page)
{
\tif (!PageSlab(page))
\t\treturn 0;
\treturn page->active;
}
""",
    "mm/slob.c": """
/* user code: a SLOB page from virt_to_page(), its units read */
static int __maybe_unused user_slob_units(const void *b)
{
\tstruct page *sp = virt_to_page(b);

\treturn sp->units;
}

static int __maybe_unused user_slob_page_only(const void *b)
{
\tstruct page *sp = virt_to_page(b);

\treturn page_to_nid(sp);
}

/* a page used both ways: a flag next to a member */
static int __maybe_unused user_slob_units_mixed(struct page *sp)
{
\tif (!PageSlab(sp))
\t\treturn 0;
\treturn sp->units;
}
""",
    "mm/slab_common.c": """
/* user code: a cache read off virt_to_head_page(), and a freelist
 * parameter */
static struct kmem_cache *__maybe_unused user_common_cache(const void *x)
{
\tstruct page *page = virt_to_head_page(x);

\treturn page->slab_cache;
}

static void *__maybe_unused user_common_freelist(struct page *page)
{
\treturn page->freelist;
}

static void __maybe_unused user_common_page_only(struct page *page)
{
\tput_page(page);
}
""",
    "mm/util.c": """
/* user code in a file that no entry lists: slub_def.h's (or slab_def.h's)
 * obj_to_index() and objs_per_slab_page(), which the memcg patch converts
 * (the latter renamed objs_per_slab()); mm/slab.h includes them */
#include "slab.h"

#if defined(CONFIG_SLUB) || defined(CONFIG_SLAB)
static unsigned int __maybe_unused user_util_index(struct kmem_cache *s, const void *x)
{
\tstruct page *page = virt_to_head_page(x);

\treturn obj_to_index(s, page, (void *)x);
}

static int __maybe_unused user_util_objects(struct kmem_cache *s, const void *x)
{
\treturn objs_per_slab_page(s, virt_to_head_page(x));
}
#endif
""",
    "lib/dump_stack.c": """
#include <linux/mm.h>
#include <linux/slab.h>

#ifdef CONFIG_SLUB
/* user code outside mm/ in a file that no entry lists: slub_def.h's
 * nearest_obj(), which the kasan patch converts (mm/slab.h includes it,
 * and has the helpers the converted one calls) */
#include "../mm/slab.h"

static void *__maybe_unused user_lib_nearest(struct kmem_cache *s, const void *x)
{
\treturn nearest_obj(s, virt_to_head_page(x), (void *)x);
}
#endif

/* user code outside mm/: a cache read off virt_to_head_page() */
static struct kmem_cache *__maybe_unused user_lib_cache(const void *x)
{
\tstruct page *page = virt_to_head_page(x);

\treturn page->slab_cache;
}

static int __maybe_unused user_lib_page_only(const void *x)
{
\tstruct page *page = virt_to_head_page(x);

\treturn page_count(page);
}

/* user code outside mm/: the return value of mm/kasan's kasan_addr_to_page(),
 * which the kasan patch renames kasan_addr_to_slab() and makes return a
 * struct slab (the file's own prototype, as mm/kasan/kasan.h's other
 * declarations need KASAN's shadow constants): used as a slab, and as a page */
struct page *kasan_addr_to_page(const void *addr);

static struct kmem_cache *__maybe_unused user_lib_kasan_cache(const void *x)
{
\tstruct page *page = kasan_addr_to_page(x);

\treturn page->slab_cache;
}

static int __maybe_unused user_lib_kasan_nid(const void *x)
{
\treturn page_to_nid(kasan_addr_to_page(x));
}
""",
}

# the objects that hold the additions, and the configuration that builds each
OBJECTS = {"slub": ["mm/slub.o", "mm/slab_common.o", "mm/util.o", "lib/dump_stack.o"],
           "slab": ["mm/slab.o", "mm/slab_common.o", "mm/util.o"],
           "slob": ["mm/slob.o", "mm/slab_common.o", "mm/util.o"]}
SOURCES = {c: [o[:-2] + ".c" for o in objs] for c, objs in OBJECTS.items()}


def _function(text: str, name: str) -> str:
    i = text.index(name + "(")
    i = text.rindex("\n", 0, i) + 1
    return text[i:text.index("\n}\n", i) + 3]


def test_every_form_is_converted_and_the_objects_build(tmp_path):
    """`slabconv regen --tree` on the branch: the usage patch converts every
    addition used as a slab and leaves the page-only ones alone; the objects
    that hold them build, in the configuration that compiles each
    (tinyconfig + verify/configs, objects only: `make <dir>/<file>.o`), at
    every patch that changes one of their files (where a named entry
    rewrites calls in the user's code), and at the baseline, the last named
    patch, the usage patch and the removal in every configuration."""
    from regen.worktree import BASE_TAG, tree_id
    from verify import kbuild, kconfig
    tree = user_branch(tmp_path, FORMS)
    out = tmp_path / "series"
    env = dict(os.environ, SLABCONV_IDENTITY="slabconv <slabconv@localhost>")
    cp = subprocess.run([str(REPO / "slabconv"), "regen", "--tree", str(tree),
                         "--output", str(out)], cwd=REPO, env=env, capture_output=True,
                        text=True)
    try:
        assert cp.returncode == 0, cp.stderr[-4000:]
        patches = sorted(out.glob("0*.patch"))
        usage_patch = [p for p in patches if "Convert-remaining-users" in p.name]
        assert len(usage_patch) == 1, [p.name for p in patches]
        assert patches[-1].name.endswith("mm-Remove-slab-from-struct-page.patch")
        msg = usage_patch[0].read_text().split("\n---\n")[0]      # the message
        shutil.copy(usage_patch[0], tmp_path / "usage.patch")        # kept for a look
        for conv in ("user_slub_free(): parameter page (mm/slub.c)",
                     "user_slub_partial_free(): local page (mm/slub.c)",
                     "user_slub_lock_first(): local page (mm/slub.c)",
                     "user_slab_active(): local page (mm/slab.c)",
                     "user_slob_units(): local sp (mm/slob.c)",
                     "user_common_cache(): local page (mm/slab_common.c)",
                     "user_common_freelist(): parameter page (mm/slab_common.c)",
                     "user_lib_cache(): local page (lib/dump_stack.c)",
                     "user_slub_thaw(): parameter page (mm/slub.c)",
                     "user_lib_kasan_cache(): local page (lib/dump_stack.c)",
                     "user_slub_rcu_free(): local page (mm/slub.c)"):
            assert conv in msg.split(usage.MIXED_HEADER)[0], msg[:3000]
        # the pages used both ways: kept, their slab members through page_slab()
        mixed = msg.split(usage.MIXED_HEADER + "\n\n")[1].split("\n\n")[0].splitlines()
        assert mixed == ["  user_slab_flush_mixed(): local page (mm/slab.c)",
                         "  user_slab_active_mixed(): parameter page (mm/slab.c)",
                         "  user_slob_units_mixed(): parameter sp (mm/slob.c)",
                         "  user_slub_flush_mixed(): local page (mm/slub.c)",
                         "  user_slub_objects_mixed(): parameter page (mm/slub.c)"], msg
        assert "page_only" not in msg
        # the cpu partial list's value is NULL without SLUB_CPU_PARTIAL: its
        # local becomes a slab at the kmem_cache_cpu patch (locals-first), whose
        # message lists it, as the function its own text does not name
        assert "user_slub_cpu_partial" not in msg
        cpu = [p for p in patches if "Convert-kmem_cache_cpu" in p.name]
        assert len(cpu) == 1, [p.name for p in patches]
        cpu_msg, cpu_diff = cpu[0].read_text().split("\n---\n", 1)
        from regen.series import FIRST_HEADER
        assert f"{FIRST_HEADER}\n\n  user_slub_cpu_partial(): local page (mm/slub.c)" in cpu_msg, \
            cpu_msg
        assert "show_slab_objects(): local" not in cpu_msg     # named by its own text
        assert "+\tfor (slab = slub_percpu_partial(c); slab; slab = slab->next)" in \
            cpu_diff.split("\n")
        # the calls of the header's functions in files no entry lists: adapted
        # in the patch that converts each function, which names them
        for subject, use in (
                ("memcg-Convert-object-cgroups", "user_util_index() (mm/util.c:%d) uses "
                 "obj_to_index()" % line_of(tree, "mm/util.c", "return obj_to_index(s, page,")),
                ("memcg-Convert-object-cgroups", "user_util_objects() (mm/util.c:%d) uses "
                 "objs_per_slab_page()" % line_of(tree, "mm/util.c", "return objs_per_slab_page(")),
                ("mm-kasan-Convert-to-struct-slab", "user_lib_nearest() (lib/dump_stack.c:%d) uses "
                 "nearest_obj()" % line_of(tree, "lib/dump_stack.c", "return nearest_obj(")),
                # the return value: slab_callsite_return.cocci, after rename_fn.cocci
                ("mm-kasan-Convert-to-struct-slab", "user_lib_kasan_cache() (lib/dump_stack.c:%d) "
                 "uses kasan_addr_to_page()" % line_of(tree, "lib/dump_stack.c",
                                                       "= kasan_addr_to_page(x);")),
                ("mm-kasan-Convert-to-struct-slab", "user_lib_kasan_nid() (lib/dump_stack.c:%d) "
                 "uses kasan_addr_to_page()" % line_of(tree, "lib/dump_stack.c",
                                                       "page_to_nid(kasan_addr_to_page(x))"))):
            p = [p for p in patches if subject in p.name]
            assert len(p) == 1, subject
            text = p[0].read_text()
            assert "Uses in files this patch's steps do not list" in text and use in text, \
                text.split("\n---\n")[0]
        assert "objs_per_slab(s, virt_to_slab(x))" in \
            [p for p in patches if "memcg-Convert" in p.name][0].read_text()
        kasan = [p for p in patches if "mm-kasan-Convert" in p.name][0].read_text()
        for line in ("+struct slab *kasan_addr_to_slab(const void *addr);",
                     "+\tstruct page *page = slab_page(kasan_addr_to_slab(x));",
                     "+\treturn page_to_nid(slab_page(kasan_addr_to_slab(x)));"):
            assert line in kasan.split("\n"), line
        usage_text = usage_patch[0].read_text()
        for line in ("+\tstruct slab *slab = kasan_addr_to_slab(x);",
                     "+\tslab->frozen = 0;"):
            assert line in usage_text.split("\n"), line
        # the series' commits, in a clone of the cache's repository for this
        # tree (each regen works in a worktree of its own and leaves the
        # shared repository as it is): the slot branch that has the usage patch
        repo = paths.cache_root() / "work" / paths.DEFAULT_KERNEL / tree_id(tree) / "linux"

        def git(*a, at=repo):
            return subprocess.run(["git", "-C", str(at), *a], capture_output=True, text=True,
                                  check=True).stdout
        heads = git("for-each-ref", "--format=%(objectname) %(refname:short)",
                    "refs/heads/slabconv-*").split("\n")
        head = next(h.split()[0] for h in heads if h.strip() and "applied" not in h
                    and "Convert remaining users" in git("log", "--format=%s",
                                                         f"{BASE_TAG}..{h.split()[0]}"))
        work = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(work)],
                       check=True)
        # the series written applies with git am onto the branch, to the same tree
        git("checkout", "-q", "-f", "-b", "am", BASE_TAG, at=work)
        series = [str(p) for p in patches if not p.name.startswith("0000-")]   # no cover
        am = subprocess.run(["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t",
                             "am", "-q", *series], capture_output=True, text=True)
        assert am.returncode == 0, am.stdout + am.stderr
        assert git("rev-parse", "HEAD^{tree}", at=work) == git("rev-parse", f"{head}^{{tree}}",
                                                               at=work)
        git("checkout", "-q", "-f", head, at=work)
        for f, code in FORMS.items():
            final = (work / f).read_text()
            for name in re.findall(r"(user_\w+_page_only)\(", code):
                assert _function(final, name) == _function(tree.joinpath(f).read_text(), name)
            for name in re.findall(r"(user_\w+)\(", code):
                fn = _function(final, name)
                if name.endswith("_mixed"):     # a page still, its slab members through page_slab()
                    assert "page_slab(" in fn and not re.search(
                        r"\b(page|sp)->(%s)\b" % "|".join(field_users.fields()), fn), fn
                elif "page_only" not in name:
                    assert not re.search(r"struct page\s*\*", fn), fn
        def log(*files):
            return subprocess.run(["git", "-C", str(work), "log", "--reverse", "--format=%H",
                                   f"{BASE_TAG}..HEAD", "--", *files], capture_output=True,
                                  text=True, check=True).stdout.split()
        commits = log()
        k = next(i for i, c in enumerate(commits) if "Convert remaining users" in subprocess.run(
            ["git", "-C", str(work), "log", "-1", "--format=%s", c], capture_output=True,
            text=True).stdout)
        # every patch that changes a file holding the user's code is built in
        # each configuration that compiles that file; the baseline, the last
        # named patch, the usage patch and the removal in all of them
        wants: dict[str, set] = {c: set(OBJECTS) for c in
                                 (BASE_TAG, commits[k - 1], commits[k], commits[-1])}
        for config, files in SOURCES.items():
            for c in log(*files):
                wants.setdefault(c, set()).add(config)
        order = [BASE_TAG] + [c for c in commits if c in wants]
        builds = tmp_path / "o"
        times: dict[str, float] = {}
        for n, rev in enumerate(order):
            subprocess.run(["git", "-C", str(work), "checkout", "-q", "-f", rev], check=True)
            label = "baseline" if rev == BASE_TAG else f"patch {commits.index(rev) + 1}"
            for config in sorted(wants[rev]):
                o = builds / config
                kconfig.configure_named(work, o, config)
                t0 = time.monotonic()
                r = subprocess.run(kbuild.make_args(work, o, kconfig.config_arch(config), 2)
                                   + OBJECTS[config], env=kbuild.build_env(work, o),
                                   capture_output=True, text=True)
                times[config] = times.get(config, 0) + time.monotonic() - t0
                assert r.returncode == 0, (f"{label} ({rev[:12]}), {config}: "
                                           f"{kbuild.error_excerpt(r.stdout + r.stderr)}")
        print(f"object builds: {len(order)} points, "
              f"{sum(len(w) for w in wants.values())} builds, seconds per config:",
              {c: round(t) for c, t in times.items()})
    finally:
        drop(tree)
