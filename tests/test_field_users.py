"""regen/field_users.py and verify/field_users.py on a tiny tree: the users of the slab members of
struct page are found by the rule, and the coverage says which build
compiled each (no kernel needed)."""
import textwrap
from pathlib import Path

from regen import field_users
from verify import field_users as coverage


def _tree(tmp_path: Path) -> Path:
    t = tmp_path / "linux"
    (t / "mm").mkdir(parents=True)
    (t / "drivers" / "x").mkdir(parents=True)
    (t / "arch" / "powerpc" / "mm").mkdir(parents=True)
    (t / "include" / "linux").mkdir(parents=True)
    (t / "include" / "linux" / "mm_types.h").write_text(textwrap.dedent("""\
        struct page {
        	unsigned long flags;
        	union {
        		struct {
        			struct kmem_cache *slab_cache;
        			void *freelist;
        		};
        		struct rcu_head rcu_head;
        	};
        };
        """))
    (t / "mm" / "user.c").write_text(
        "void f(struct page *page)\n{\n\tpage->freelist = NULL;\n}\n")
    (t / "drivers" / "x" / "own.c").write_text(      # a freelist of its own: not a use
        "struct page;\nstruct pool { void *freelist; };\n"
        "void g(struct pool *p)\n{\n\tp->freelist = NULL;\n}\n")
    (t / "arch" / "powerpc" / "mm" / "pp.c").write_text(
        "int h(unsigned long pfn)\n{\n\treturn pfn_to_page(pfn)->units;\n}\n"
        "/* struct page */\n")
    return t


def test_users_are_found_and_look_alikes_are_not(tmp_path):
    t = _tree(tmp_path)
    assert "drivers/x/own.c" in field_users.candidates(t)
    users = field_users.find(t, field_users.candidates(t))
    assert sorted(users) == ["arch/powerpc/mm/pp.c", "mm/user.c"]
    assert [(u.line, u.field, u.function) for u in users["mm/user.c"]] == [(3, "freelist", "f")]
    assert field_users.page_keeps_slab_members(t)


def test_coverage_names_the_build_or_why_not(tmp_path):
    t = _tree(tmp_path)
    users = field_users.find(t, field_users.candidates(t))
    o = tmp_path / "o"
    (o / "mm").mkdir(parents=True)
    (o / "mm" / "user.o").write_bytes(b"")
    rows = {r["file"]: r for r in coverage.coverage(users, {"slub": o})}
    assert rows["mm/user.c"]["built_by"] == ["slub"]
    assert rows["arch/powerpc/mm/pp.c"]["built_by"] == []
    assert "powerpc" in rows["arch/powerpc/mm/pp.c"]["why_not"]
    assert rows["mm/user.c"].get("why_not") is None


def test_a_file_no_x86_build_reaches_gets_compiled_tomls_reason(tmp_path):
    """mm/kasan/tags_report.c (software tag-based KASAN, arm64 only): the
    reason is verify/compiled.toml's, not a bare 'not built'."""
    from verify.compiled import Allowed, load_allowlist
    rows = coverage.coverage(["mm/kasan/tags_report.c", "mm/other.c"], {"slub": tmp_path})
    assert "arm64" in rows[0]["why_not"]
    assert rows[0]["why_not"] == next(a.reason for a in load_allowlist()
                                      if a.file == "mm/kasan/tags_report.c")
    assert rows[1]["why_not"].startswith("no configured build")
    # a match-limited entry is about some lines, not the whole file
    rows = coverage.coverage(["mm/other.c"], {"slub": tmp_path},
                                allow=[Allowed("mm/other.c", "foo", "some lines")])
    assert rows[0]["why_not"].startswith("no configured build")


def test_a_use_left_after_the_members_are_gone_is_found(tmp_path):
    """The planted defect: struct page without its slab members, and one
    file still using page->freelist: the check lists it."""
    t = _tree(tmp_path)
    (t / "include" / "linux" / "mm_types.h").write_text(
        "struct page {\n\tunsigned long flags;\n\tstruct rcu_head rcu_head;\n};\n")
    assert not field_users.page_keeps_slab_members(t)
    left = field_users.find(t, field_users.candidates(t))
    assert "mm/user.c" in left


def test_nothing_to_prove_on_a_kernel_whose_struct_page_has_no_slab_members(tmp_path, capsys):
    """6.1, 6.12: upstream removed the members before the series, so the
    before/after scan (minutes over the whole tree) is not run and the
    summary says why."""
    from cli import apply, checks
    converted = tmp_path / "base"
    (converted / "include" / "linux").mkdir(parents=True)
    (converted / "include" / "linux" / "mm_types.h").write_text(
        "struct page {\n\tunsigned long flags;\n\tunsigned long private;\n};\n")
    src = type("Src", (), {"tree": converted, "source_id": "linux-source-6.12_x"})()
    ap = apply.Applied(src=src, tree=converted, baseline_id="0" * 40, patches=[], touched=[])
    assert checks.field_users_check(ap, []) is None
    assert not field_users.page_keeps_slab_members(ap.src.tree)
    assert "had no slab members before the series" in capsys.readouterr().err
    keeps = _tree(tmp_path)          # 5.10-like: the baseline has them
    ap2 = apply.Applied(src=type("Src", (), {"tree": keeps, "source_id": "x"})(), tree=keeps,
                        baseline_id="0" * 40, patches=[], touched=[])
    assert field_users.page_keeps_slab_members(ap2.src.tree)


def test_narrow_keeps_every_file_the_rule_can_report_from():
    """narrow() only drops files where no slab member is reached through
    something the file could type as a struct page."""
    own = "struct page;\nstruct pool { void *freelist; };\nvoid g(struct pool *p) { p->freelist = 0; }\n"
    assert not field_users.may_use(own)
    for text in ("void f(struct page *page) { page->freelist = 0; }\n",
                 "void f(void) { struct page *a, *b; b->inuse = 0; }\n",
                 "void f(void *x) { ((struct page *)x)->freelist = 0; }\n",
                 "int f(void *x) { return virt_to_head_page(x)->objects; }\n",
                 "struct page *mine(void);\nint f(void) { return mine()->objects; }\n",
                 "struct h { struct page *pg; };\nint f(struct h *h) { return h->pg->inuse; }\n",
                 "int f(struct page **pp) { return pp[1]->inuse; }\n"):
        assert field_users.may_use(text), text


def test_a_scan_since_the_start_rereads_only_the_changed_files_and_finds_the_same(tmp_path):
    """field_users.scan() and usage.candidates() given the start's result
    and the files changed since (regen/side.py) are the full scan: a file
    that became a candidate, one that stopped being one, one unchanged."""
    from regen import usage
    t = _tree(tmp_path)
    (t / "mm" / "later.c").write_text("int nothing;\n")
    (t / "mm" / "split.c").write_text(      # the member on the next line: grep does not see it
        "void k(struct page *page)\n{\n\tpage->\n\t\tfreelist = NULL;\n}\n")
    start_fu, start_us = field_users.scan(t), usage.candidates(t)
    assert "mm/user.c" in start_fu and "mm/user.c" in start_us
    (t / "mm" / "later.c").write_text(
        "void f2(struct page *page)\n{\n\tpage->slab_cache = NULL;\n}\n")
    (t / "mm" / "user.c").write_text("void f(struct slab *slab)\n{\n\tslab->freelist = NULL;\n}\n")
    (t / "mm" / "split.c").write_text((t / "mm" / "split.c").read_text() + "/* again */\n")
    changed = {"mm/later.c", "mm/user.c", "mm/split.c", "mm/gone.c"}
    assert field_users.scan(t, (start_fu, changed)) == field_users.scan(t)
    assert usage.candidates(t, (start_us, changed)) == usage.candidates(t)
    assert "mm/later.c" in field_users.scan(t) and "mm/user.c" not in field_users.scan(t)
    assert "mm/split.c" not in field_users.scan(t, (start_fu, changed))
    # planted: a start that missed a file stays missed where the file did not change
    assert field_users.scan(t, ([], changed)) != field_users.scan(t)
