"""verify/readability.py: page locals, helpers computed twice and round
trips in the functions each patch changes, found on a planted series."""
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
    assert kinds == ["computed twice", "round trip"], r.summary()
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


def test_cli_exit_code(tmp_path):
    import sys
    from pathlib import Path
    repo = _repo(tmp_path, [("base", BASE), ("bad", BAD)])
    cp = subprocess.run([sys.executable, "-m", "verify.readability", str(repo)],
                        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True)
    assert cp.returncode == 1 and "round trip" in cp.stdout
