"""The residue report (verify/residue.py, cocci/rules/residue_page.cocci,
cocci/residue.toml): the classifier, the rule on small trees, planted
defects, and the report on the committed series (marked network: it needs
the fetched linux-source-5.10 and applies the series with git am)."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from base.log import SlabconvError
from verify import residue
from verify.residue import Finding

REPO = Path(__file__).resolve().parent.parent


def allowlist(tmp_path, body: str, name="residue.toml") -> residue.Allowlist:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return residue.load_allowlist(p)


def F(function="f", kind="local", text="page", file="mm/slub.c", line=1):
    return Finding(file, line, 1, kind, function, text)


# ---- the classifier -------------------------------------------------------------

ALLOW = """
    [scope]
    files = ["mm/slub.c"]

    [[deny]]
    file = "*"
    kind = "slab-field-access"
    why = "never through a page"

    [[allow]]
    file = "mm/slub.c"
    function = ["allocate_slab", "*_free_slab"]
    kind = ["local", "call"]
    text = "page | alloc_pages_node | __free_pages"
    why = "page allocator"

    [[allow]]
    function = "*"
    kind = "call"
    text = "page_slab|slab_page"
    why = "boundary"
"""


def test_first_matching_allow_entry_gives_the_reason(tmp_path):
    al = allowlist(tmp_path, ALLOW)
    c = al.classify(F("allocate_slab", "call", "alloc_pages_node"))
    assert c.allowed and c.why == "page allocator"
    c = al.classify(F("__free_slab", "local", "page"))          # function glob
    assert c.allowed and c.why == "page allocator"
    c = al.classify(F("deactivate_slab", "call", "slab_page"))  # file and function default to *
    assert c.allowed and c.why == "boundary"


def test_kind_text_and_function_must_all_match(tmp_path):
    al = allowlist(tmp_path, ALLOW)
    for f in (F("allocate_slab", "param", "page"),             # kind not listed
              F("allocate_slab", "call", "setup_object"),      # text not listed
              F("allocate_slab", "call", "alloc_pages_node_x"),  # text matches in full only
              F("deactivate_slab", "local", "page"),           # function not listed
              F("allocate_slab", "local", "page", file="mm/slab.c")):  # file not listed
        c = al.classify(f)
        assert not c.allowed and c.why == "no allow entry" and c.entry is None, f


def test_deny_wins_over_allow(tmp_path):
    al = allowlist(tmp_path, ALLOW + """
    [[allow]]
    function = "allocate_slab"
    why = "everything in allocate_slab (too broad)"
    """)
    c = al.classify(F("allocate_slab", "slab-field-access", "page->freelist"))
    assert not c.allowed and c.why == "never through a page"
    assert al.classify(F("allocate_slab", "param", "page")).allowed


@pytest.mark.parametrize("body,needle", [
    ('[[allow]]\nkind = "call"\n', "needs a `why`"),
    ('[[allow]]\nkind = "calls"\nwhy = "x"\n', "unknown kind"),
    ('[[allow]]\nfunc = "f"\nwhy = "x"\n', "unknown key"),
    ('[[allow]]\ntext = "(("\nwhy = "x"\n', "bad `text` regex"),
    ('[[allow]]\nfile = 3\nwhy = "x"\n', "must be a string"),
    ('[allowed]\n', "unknown table"),
    ('[[allow]\n', "residue.toml"),
])
def test_bad_allowlists_are_rejected_with_exit_code_2(tmp_path, body, needle):
    with pytest.raises(SlabconvError) as e:
        allowlist(tmp_path, body)
    assert e.value.exit_code == 2 and needle in str(e.value)


def test_parse_report_and_reject_garbage():
    got = residue.parse_report(
        "mm/slub.c:1621:15: residue_page: local in alloc_slab_page: page\n"
        "mm/slub.c:1859:22: residue_page: slab-field-access in rcu_free_slab: "
        "container_of(..., struct page, rcu_head)\n")
    assert got == [Finding("mm/slub.c", 1621, 15, "local", "alloc_slab_page", "page"),
                   Finding("mm/slub.c", 1859, 22, "slab-field-access", "rcu_free_slab",
                           "container_of(..., struct page, rcu_head)")]
    with pytest.raises(SlabconvError):
        residue.parse_report("init_defs_builtins: /usr/lib/coccinelle/standard.h\n")


def test_text_net_ignores_comments_and_strings(tmp_path):
    (tmp_path / "a.c").write_text('/* struct page */ int x; // struct page\n'
                                  'char *s = "struct page";\n'
                                  '#define P struct page\n'
                                  'struct page_ext *e;\n')
    got = residue.text_findings(tmp_path, ["a.c"], [])
    assert [(f.line, f.kind, f.text) for f in got] == [(3, "text", "#define P struct page")]


# ---- the committed allowlist ----------------------------------------------------

def test_committed_allowlist_loads_and_is_strict_about_slab_fields():
    al = residue.load_allowlist()
    assert "mm/slub.c" in al.scope and set(al.scope) <= set(al.all_files)
    # a slab-only field through struct page is never allowed in slub.c, not even
    # in the functions that may use struct page
    for fn in ("allocate_slab", "alloc_slab_page", "__free_slab", "kfree", "slab_lock",
               "print_page_info", "deactivate_slab"):
        c = al.classify(F(fn, "slab-field-access", "page->freelist"))
        assert not c.allowed, fn
    # what the end of the conversion keeps
    assert al.classify(F("allocate_slab", "call", "alloc_pages_node")).allowed
    assert al.classify(F("__free_slab", "call", "__free_pages")).allowed
    assert al.classify(F("kfree", "call", "virt_to_head_page")).allowed
    assert al.classify(F("kmalloc_large_node", "local", "page")).allowed
    assert al.classify(F("kmem_cache_free", "call", "page_slab")).allowed
    # what it does not
    assert not al.classify(F("deactivate_slab", "local", "new")).allowed
    assert not al.classify(F("allocate_slab", "call", "setup_object")).allowed
    assert not al.classify(F("alloc_slab_page", "return", "alloc_slab_page")).allowed
    assert not al.classify(F("kfree", "call", "slab_free")).allowed
    assert not al.classify(F("-", "field-decl", "kmem_cache_cpu.page",
                             file="include/linux/slub_def.h")).allowed


# ---- the rule and the check on small trees ------------------------------------------

ALLOWED_ONLY = """\
static struct slab *allocate_slab(struct kmem_cache *s, gfp_t flags, int node)
{
	struct page *page;

	page = alloc_pages_node(node, flags, oo_order(s->oo));
	if (!page)
		return NULL;
	__SetPageSlab(page);
	return page_slab(page);
}

static void __free_slab(struct kmem_cache *s, struct slab *slab)
{
	struct page *page = slab_page(slab);
	int order = compound_order(page);

	__ClearPageSlab(page);
	__free_pages(page, order);
}

static void *get_freelist(struct kmem_cache *s, struct slab *slab)
{
	return slab->freelist;
}
"""

PLANTED = """
static void *planted_defect(struct kmem_cache *s, void *object)
{
	struct page *page = virt_to_head_page(object);

	return page->freelist;
}
"""


def small_tree(root: Path, slub: str) -> Path:
    (root / "mm").mkdir(parents=True)
    (root / "include" / "linux").mkdir(parents=True)
    (root / "mm" / "slub.c").write_text(slub)
    (root / "include" / "linux" / "slub_def.h").write_text(
        "struct kmem_cache_cpu {\n\tvoid **freelist;\n\tstruct slab *slab;\n};\n")
    return root


def cli(*args):
    return subprocess.run([sys.executable, "-m", "verify.residue", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True)


def test_only_allowed_uses_pass(tmp_path):
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY)
    r = residue.check(tree)
    # the scope's files this (small) tree does not have are left out
    assert r.files == ["mm/slub.c", "include/linux/slub_def.h"]
    assert r.ok, r.summary()
    kinds = sorted({(c.finding.function, c.finding.kind) for c in r.allowed})
    assert kinds == [("__free_slab", "call"), ("__free_slab", "local"),
                     ("allocate_slab", "call"), ("allocate_slab", "local")]
    assert "mm/slub.c: 9 struct page uses, 9 allowed, 0 NOT allowed" in r.summary()
    cp = cli("--tree", tree, "--strict")
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_planted_slab_field_through_a_page_is_not_allowed_and_strict_fails(tmp_path):
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY + PLANTED)
    r = residue.check(tree)
    assert not r.ok
    bad = {(c.finding.function, c.finding.kind, c.finding.text) for c in r.not_allowed}
    assert bad == {("planted_defect", "local", "page"),
                   ("planted_defect", "call", "virt_to_head_page"),
                   ("planted_defect", "slab-field-access", "page->freelist")}
    s = r.summary()
    assert "mm/slub.c: 12 struct page uses, 9 allowed, 3 NOT allowed:" in s
    assert "mm/slub.c:30 planted_defect slab-field-access page->freelist" in s
    out = tmp_path / "r.json"
    cp = cli("--tree", tree, "--strict", "--json", out)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "3 NOT allowed" in cp.stdout
    data = json.loads(out.read_text())
    assert data["ok"] is False and data["counts"]["mm/slub.c"] == {
        "uses": 12, "allowed": 9, "not_allowed": 3}
    assert {d["text"] for d in data["not_allowed"]} == {"page", "virt_to_head_page",
                                                         "page->freelist"}
    # without --strict the report is information only
    assert cli("--tree", tree).returncode == 0


def test_slab_field_in_an_allowed_function_is_still_not_allowed(tmp_path):
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY.replace(
        "\t__SetPageSlab(page);", "\t__SetPageSlab(page);\n\tpage->slab_cache = s;"))
    r = residue.check(tree, ["mm/slub.c"])
    assert [(c.finding.function, c.finding.text, c.why) for c in r.not_allowed] == [
        ("allocate_slab", "page->slab_cache",
         "a slab-only field read or written through struct page: go through struct slab")]


def test_header_structs_type_member_accesses(tmp_path):
    """c->page->frozen: kmem_cache_cpu is in a header; [scope] types passes it along."""
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY + """
static void *cpu_freelist(struct kmem_cache_cpu *c)
{
	if (c->partial->frozen)
		return NULL;
	return c->page->freelist;
}
""")
    (tree / "include" / "linux" / "slub_def.h").write_text(
        "struct kmem_cache_cpu {\n\tstruct page *page;\n\tstruct slab *partial;\n};\n")
    r = residue.check(tree, ["mm/slub.c"])
    assert r.files == ["mm/slub.c"] and {f.file for f in r.findings} == {"mm/slub.c"}
    assert [(c.finding.function, c.finding.text) for c in r.not_allowed] == [
        ("cpu_freelist", "c->page->freelist")]
    r = residue.check(tree)
    assert ("include/linux/slub_def.h", "field-decl", "kmem_cache_cpu.page") in {
        (f.file, f.kind, f.text) for f in r.findings}


def test_unparsed_mentions_are_listed_as_text(tmp_path):
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY + "#if 0\nstatic struct page *old(void);\n#endif\n")
    r = residue.check(tree, ["mm/slub.c"])
    assert [(c.finding.kind, c.finding.line, c.allowed) for c in r.not_allowed] == [
        ("text", 26, False)]


def test_missing_file_is_a_usage_error(tmp_path):
    tree = small_tree(tmp_path / "t", ALLOWED_ONLY)
    with pytest.raises(SlabconvError) as e:
        residue.check(tree, ["mm/slob.c"])
    assert e.value.exit_code == 2
    assert cli("--tree", tree, "--files", "mm/slob.c").returncode == 2


def test_verify_prints_the_residue_summary_and_raises_when_it_cannot(tmp_path, capsys, monkeypatch):
    from cli import apply, checks
    ap = apply.Applied(src=None, tree=small_tree(tmp_path / "t", ALLOWED_ONLY + PLANTED),
                       baseline_id="0" * 40, patches=[], touched=[])
    rr = checks.residue_summary(ap, limit=2)
    out = capsys.readouterr().out
    assert rr is not None and not rr.ok
    assert "3 NOT allowed" in out and "... and 1 more" in out
    # a scope file this kernel lacks is left out, and said so
    (ap.tree / "include" / "linux" / "slub_def.h").unlink()
    rr = checks.residue_summary(ap)
    assert rr is not None and rr.files == ["mm/slub.c"]
    # no report at all (spatch failing, say) is raised, never taken as "no problem"
    from base.log import SlabconvError

    def broken(*a, **k):
        raise SlabconvError("spatch failed")
    monkeypatch.setattr(residue, "check", broken)
    with pytest.raises(SlabconvError, match="spatch failed"):
        checks.residue_summary(ap)


# ---- the committed series ------------------------------------------------------------

@pytest.fixture(scope="module")
def applied():
    from base import paths
    from cli import apply
    from regen.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    return apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)


@pytest.mark.network
def test_committed_series_residue(applied):
    r = residue.check(applied.tree, all_files=True)
    assert set(r.files) >= {"mm/slub.c", "mm/slab.c", "mm/slob.c", "mm/slab.h"}
    total, ok, bad = r.counts("mm/slub.c")
    # SLUB is converted: what is left of struct page in mm/slub.c is allowed
    assert total > 30 and bad == 0 and total == ok, r.summary()
    # and so are SLAB, SLOB, the shared helpers and the allocator headers
    for f in ("mm/slab.c", "mm/slob.c", "mm/slab.h", "mm/slab_common.c",
              "include/linux/slub_def.h", "include/linux/slab_def.h"):
        total, ok, bad = r.counts(f)
        assert bad == 0 and total == ok, f + "\n" + r.summary()
    # the rule has a finding on every line that mentions struct page
    assert not [f for f in r.findings if f.kind == "text"], r.summary()
    # spot checks on the shapes the series has now and will keep
    found = {(c.finding.file, c.finding.function, c.finding.kind, c.finding.text): c.allowed
             for c in r.results}
    assert found[("mm/slub.c", "alloc_slab_page", "call", "alloc_pages")] is True
    assert found[("mm/slub.c", "kmalloc_large_node", "call", "alloc_pages_node")] is True
    assert found[("mm/slab.h", "slab_order", "cast", "(struct page *)slab")] is True
    assert all(not c.allowed for c in r.results if c.finding.kind == "slab-field-access")
    # converted functions: struct slab, not struct page
    assert not [f for f in r.findings if f.function == "__check_heap_object"
                and f.file == "mm/slub.c"]


@pytest.mark.network
def test_planted_defect_in_the_real_slub(applied, tmp_path):
    """The patched mm/slub.c plus one function that reads page->freelist."""
    tree = tmp_path / "t"
    (tree / "mm").mkdir(parents=True)
    (tree / "mm" / "slub.c").write_text((applied.tree / "mm" / "slub.c").read_text() + PLANTED)
    def uses(r):
        return {(c.finding.function, c.finding.kind, c.finding.text, c.allowed) for c in r.results}
    clean = residue.check(applied.tree, ["mm/slub.c"])
    planted = residue.check(tree, ["mm/slub.c"])
    assert not planted.ok
    assert uses(planted) - uses(clean) == {("planted_defect", "local", "page", False),
                   ("planted_defect", "call", "virt_to_head_page", False),
                   ("planted_defect", "slab-field-access", "page->freelist", False)}


@pytest.mark.network
def test_slabconv_residue_command(applied, tmp_path):
    out = tmp_path / "r.json"
    cp = subprocess.run([str(REPO / "slabconv"), "residue", "--files", "mm/slub.c",
                         "--json", str(out)], cwd=REPO, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("mm/slub.c: ") and "struct page uses" in cp.stdout
    data = json.loads(out.read_text())
    assert data["files"] == ["mm/slub.c"]
    strict = subprocess.run([str(REPO / "slabconv"), "residue", "--files", "mm/slub.c",
                             "--strict"], cwd=REPO, capture_output=True, text=True)
    assert strict.returncode == (0 if data["ok"] else 1)


def test_verify_gates_only_the_converted_files(monkeypatch):
    """residue.toml's [scope] gate: a NOT allowed use in mm/slub.c fails
    verify; one in a file not converted yet is only reported."""
    from cli import checks
    al = residue.load_allowlist()
    assert "mm/slub.c" in al.gate

    class C:
        def __init__(self, file):
            self.finding = type("F", (), {"file": file})()

    class R:
        not_allowed = [C("mm/slub.c"), C("mm/slab.c"), C("drivers/iommu/intel/iommu.c")]

    gated = checks.residue_gate(R())
    assert [c.finding.file for c in gated] == ["mm/slub.c", "mm/slab.c"]


def test_every_allow_entry_of_the_committed_allowlist_names_its_uses():
    """An [[allow]] entry without a `text` allows any use of struct page of
    its kinds anywhere in its functions: a new call or local there would
    pass unseen.  Every entry says which uses it allows; a planted call in
    one of those functions is NOT allowed."""
    al = residue.load_allowlist()
    loose = [e.describe() for e in al.entries if e.action == "allow" and e.text is None]
    assert not loose, loose
    F = residue.Finding
    for f in (F("mm/slub.c", 1, 1, "call", "kmalloc_large_node", "virt_to_head_page"),
              F("mm/slab.h", 1, 1, "local", "slab_address", "head"),
              F("mm/slab.c", 1, 1, "call", "kmem_getpages", "compound_head"),
              F("mm/slob.c", 1, 1, "call", "slob_new_pages", "virt_to_head_page"),
              F("mm/slab.h", 1, 1, "call", "account_slab", "page_to_nid")):
        assert not al.classify(f).allowed, f
    # what the series leaves there is still allowed
    for f in (F("mm/slub.c", 1, 1, "call", "kmalloc_large_node", "alloc_pages_node"),
              F("mm/slab.h", 1, 1, "cast", "slab_order", "(struct page *)slab"),
              F("mm/slab.c", 1, 1, "local", "kmem_getpages", "page"),
              F("mm/slob.c", 1, 1, "local", "slob_free_pages", "sp")):
        assert al.classify(f).allowed, f
