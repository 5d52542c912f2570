"""verify/readability.py: page locals, helpers computed twice and round
trips in the functions each patch changes, found on a planted series."""
import re
import subprocess

from verify import readability as RD


def _repo(tmp_path, versions):
    """A git repository whose first commit is tagged slabconv-baseline and
    each later commit is one version of mm/x.c."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*a):
        subprocess.run(["git", "-C", str(tmp_path), *a], check=True, env=env,
                       capture_output=True)
    git("init", "-q", "-b", "main")
    (tmp_path / "mm").mkdir()
    for i, (subject, text) in enumerate(versions):
        (tmp_path / "mm" / "x.c").write_text(text)
        git("add", "-A")
        git("commit", "-q", "--allow-empty", "-m", subject)
        if i == 0:
            git("tag", "slabconv-baseline")
    return tmp_path


BASE = """static void free_it(struct kmem_cache *s, struct page *page)
{
	__ClearPageSlab(page);
	page_mapcount_reset(page);
	__free_pages(page, 0);
}

static void other(void)
{
}
"""

GOOD = """static void free_it(struct kmem_cache *s, struct slab *slab)
{
	struct page *page = slab_page(slab);

	__ClearPageSlab(page);
	page_mapcount_reset(page);
	__free_pages(page, 0);
}

static void other(void)
{
}
"""

# the defects planted: slab_page() four times, page_slab() twice on one value,
# a round trip; other() is left as it was and is not read
BAD = """static void free_it(struct kmem_cache *s, struct slab *slab)
{
	struct page *p;

	__ClearPageSlab(slab_page(slab));
	page_mapcount_reset(slab_page(slab));
	__free_pages(slab_page(slab), 0);
	put(slab_page(slab));
	p = virt_to_head_page(s);
	use(page_slab(p));
	use(page_slab(p));
	use(page_slab(slab_page(slab)));
}

static void other(void)
{
}
"""


def test_a_readable_series_has_no_finding(tmp_path):
    r = RD.check(_repo(tmp_path, [("base", BASE), ("mm: Convert free_it", GOOD)]))
    assert r.ok and r.patches == 1 and r.functions == 1, r.summary()


def test_planted_defects_are_found_with_their_patch_and_function(tmp_path):
    r = RD.check(_repo(tmp_path, [("base", BASE), ("mm: Convert free_it", BASE),
                                  ("mm: Convert free_it badly", BAD)]))
    kinds = sorted(f.kind for f in r.findings)
    assert kinds == ["computed twice", "page local", "round trip"], r.summary()
    assert all(f.patch == "0002 mm: Convert free_it badly" and f.function == "free_it"
               and f.file == "mm/x.c" for f in r.findings)
    assert "page_slab(p) again with p unchanged" in r.summary()


def test_page_local_finding_when_the_slab_page_is_taken_more_than_twice():
    code = BAD.split("static void other")[0].replace("\tstruct page *p;\n", "") \
        .replace("p = virt_to_head_page(s);", "").replace("use(page_slab(p));", "")
    kinds = [k for k, _ in RD.check_function("free_it", code)]
    assert "page local" in kinds


def test_a_new_value_between_two_uses_is_not_computed_twice():
    code = ("static void walk(struct kmem_cache_node *n)\n{\n\tstruct page *page;\n\n"
            "\tlist_for_each_entry(page, &n->partial, slab_list)\n\t\tuse(page_slab(page));\n"
            "\tlist_for_each_entry(page, &n->full, slab_list)\n\t\tuse(page_slab(page));\n"
            "\tpage = next(page);\n\tuse(virt_to_slab(page));\n\tpage = next(page);\n"
            "\tuse(virt_to_slab(page));\n}\n")
    assert RD.check_function("walk", code) == []


def test_a_slab_the_function_assigns_needs_no_page_local():
    code = ("static void walk(struct slab *slab)\n{\n\tuse(slab_page(slab));\n"
            "\tuse(slab_page(slab));\n\tslab = next(slab);\n\tuse(slab_page(slab));\n}\n")
    assert RD.check_function("walk", code) == []


# ___slab_alloc() as the kmem_cache_cpu step first made it: the slab is a
# local the function assigns four times, and the value read from the cpu
# slab is taken slab_page() of four times
ASSIGNED = """static void *slow(struct kmem_cache *s, struct kmem_cache_cpu *c, int node)
{
	void *freelist;
	struct slab *slab;

reread:
	slab = READ_ONCE(c->slab);
	if (!node_match(slab_page(slab), node))
		goto deactivate;
	if (!pfmemalloc_match_unsafe(slab_page(slab), 0))
		goto deactivate;
	freelist = get_freelist(s, slab_page(slab));
deactivate:
	deactivate_slab(s, slab_page(slab), freelist);
	slab = c->slab = slub_percpu_partial(c);
	freelist = get_partial(s, 0, node, &slab);
	slab = new_slab(s, 0, node);
	if (!alloc_debug_processing(s, slab_page(slab), freelist))
		goto reread;
	return freelist;
}
"""


def test_a_slab_local_taken_more_than_twice_for_one_value_is_found():
    found = RD.check_function("slow", ASSIGNED)
    assert found == [("page local", "slab_page(slab) 4 times for one value of slab: "
                                    "hold it in a page local")], found


def test_a_page_that_follows_the_slab_is_readable():
    code = ASSIGNED.replace("\tstruct slab *slab;\n", "\tstruct slab *slab;\n\tstruct page *page;\n")
    code = code.replace("slab_page(slab)", "page")
    for a in ("slab = READ_ONCE(c->slab);", "slab = c->slab = slub_percpu_partial(c);",
              "freelist = get_partial(s, 0, node, &slab);", "slab = new_slab(s, 0, node);"):
        code = code.replace(a, a + "\n\tpage = slab_page(slab);")
    assert RD.check_function("slow", code) == []


def test_a_loop_cursor_taken_twice_per_iteration_is_readable():
    code = ("static void drain(struct kmem_cache *s, struct kmem_cache_node *n)\n{\n"
            "\tstruct slab *slab, *h;\n\n"
            "\tlist_for_each_entry_safe(slab, h, &n->partial, slab_list) {\n"
            "\t\tremove_partial(n, slab_page(slab));\n\t\tput(slab_page(slab));\n\t}\n"
            "\tlist_for_each_entry_safe(slab, h, &n->full, slab_list)\n"
            "\t\tdiscard_slab(s, slab_page(slab));\n}\n")
    assert RD.check_function("drain", code) == []


def test_a_parameter_under_a_conditional_is_still_found():
    code = ("static void list(struct kmem_cache *s, struct slab *slab)\n{\n"
            "#ifdef CONFIG_SLUB_DEBUG\n\tslab_lock(slab_page(slab));\n"
            "\tget_map(s, slab_page(slab));\n\tslab_unlock(slab_page(slab));\n#endif\n}\n")
    assert [k for k, _ in RD.check_function("list", code)] == ["page local"]


def test_cli_exit_code(tmp_path):
    import sys
    from pathlib import Path
    repo = _repo(tmp_path, [("base", BASE), ("bad", BAD)])
    cp = subprocess.run([sys.executable, "-m", "verify.readability", str(repo)],
                        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True)
    assert cp.returncode == 1 and "round trip" in cp.stdout


# Functions a patch of the 5.10 series names in its subject ("Convert f()")
# that the report does not read under that name in that patch, and why.
NOT_READ_AS_NAMED = {
    "page_to_section": "renamed by its patch: read as pgflags_section()",
    "print_page_info": "renamed by its patch: read as print_slab_info()",
    "setup_page_debug": "renamed by its patch: read as setup_slab_debug()",
    "get_map": "not in 5.10",
    "slab_err": "its definition begins with __printf(3, 4), which "
                "regen.comments.functions() does not take for a definition",
}


def unread_named_functions(r: RD.ReadabilityResult, subjects: list[str]) -> tuple[list, list]:
    """(named, unread): the (patch, function) pairs the subjects name
    ("f()"), and those of them the report did not read in that patch
    (NOT_READ_AS_NAMED left out)."""
    read = {}
    for patch, _, fn in r.read:
        read.setdefault(patch, set()).add(fn)
    named = [(f"{k:04d} {s}", fn) for k, s in enumerate(subjects, 1)
             for fn in re.findall(r"\b(\w+)\(\)", s)]
    return named, [(p, fn) for p, fn in named
                   if fn not in read.get(p, set()) and fn not in NOT_READ_AS_NAMED]


def assert_read_the_series(r: RD.ReadabilityResult, subjects: list[str]) -> None:
    """The readability report read the 5.10 series' own functions: every
    patch, every function read counted once, and in each patch the
    functions its subject names (tests/test_e2e.py, on the applied series)."""
    assert r.patches == len(subjects) > 0, r.summary()
    assert r.functions == len(r.read) >= 1000, r.summary()
    named, unread = unread_named_functions(r, subjects)
    assert len(named) >= 40 and not unread, unread
    for new in ("pgflags_section", "print_slab_info", "setup_slab_debug", "__kmem_cache_shrink"):
        assert any(fn == new for _, _, fn in r.read), new


def test_the_series_check_sees_a_named_function_it_did_not_read():
    subjects = ["mm/slub: Convert kfree() to use a struct slab", "mm: Add foo()"]
    r = RD.ReadabilityResult(patches=2, functions=1,
                             read=[("0001 mm/slub: Convert kfree() to use a struct slab",
                                    "mm/slub.c", "kfree")])
    named, unread = unread_named_functions(r, subjects)
    assert named == [(f"0001 {subjects[0]}", "kfree"), (f"0002 {subjects[1]}", "foo")]
    assert unread == [(f"0002 {subjects[1]}", "foo")]


def test_the_report_lists_what_it_read(tmp_path):
    r = RD.check(_repo(tmp_path, [("base", BASE), ("mm: Convert free_it", GOOD)]))
    assert r.functions == len(r.read) == 1
    assert r.read == [("0001 mm: Convert free_it", r.read[0][1], "free_it")], r.read
