"""Driver unit tests on a tiny tree and tiny manifests (no kernel needed)."""
import hashlib
import re
import shutil
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from regen import effects, manifest, series, template, tidy
from regen.worktree import Identity
from base import paths
from base.log import SlabconvError

REPO = Path(__file__).resolve().parent.parent
ID = Identity("Test Dev", "dev@example.org")


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
            h.update(oct(p.stat().st_mode).encode())
    return h.hexdigest()


# what calc_slab_order.cocci renames
SLAB_ORDER = textwrap.dedent("""\
    static inline unsigned int slab_order(unsigned int size,
    		unsigned int min_objects, unsigned int max_order,
    		unsigned int fract_leftover)
    {
    	return size;
    }

    static int calculate_order(unsigned int size)
    {
    	return slab_order(size, 1, 2, 3);
    }
    """)


@pytest.fixture
def tree(tmp_path):
    t = tmp_path / "linux"
    (t / "mm").mkdir(parents=True)
    (t / "include").mkdir()
    (t / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")
    (t / "mm" / "slub.c").write_text(SLAB_ORDER)
    (t / "include" / "h.h").write_text(textwrap.dedent("""\
        #ifndef H_H
        #define H_H
        int first(int a);

        /* the anchor */
        static inline int anchor_fn(int x)
        {
        	return x;
        }
        #endif /* H_H */
        """))
    os.chmod(t / "mm" / "slub.c", 0o444)   # a read-only pristine file
    return t


def write_manifest(dir: Path, body: str) -> Path:
    """A manifest in `dir` that may refer to the real rules via a symlinked rules/."""
    dir.mkdir(parents=True, exist_ok=True)
    for sub in ("rules", "templates", "anchors"):
        if not (dir / sub).exists():
            (dir / sub).symlink_to(REPO / "cocci" / sub)
    m = dir / "series.toml"
    m.write_text(textwrap.dedent("""\
        [series]
        subject = "Test series"
        seed_author = "Seed Author <seed@example.org>"
        date = "2021-10-04T14:45:48+01:00"
        """) + textwrap.dedent(body))
    return m


RENAME = """
    [[entry]]
    id = "rename"
    subject = "mm/slub: Rename slab_order()"
    message = "Rename it."
      [[entry.step]]
      rule = "rules/calc_slab_order.cocci"
      files = ["mm/slub.c"]
      [[entry.expect]]
      defines = ["calc_slab_order"]
      in = "mm/slub.c"
"""


def regen(tree, m, tmp_path, out="out"):
    return series.regenerate(tree, "test-tree", version="5.10", output=tmp_path / out,
                             identity=ID, manifest_path=m, workdir=tmp_path / "work")


def test_regenerates_commits_and_patches_without_touching_the_tree(tree, tmp_path, cache):
    before = tree_hash(tree)
    m = write_manifest(tmp_path / "cocci", RENAME)
    res = regen(tree, m, tmp_path)
    assert tree_hash(tree) == before, "the source tree must never be modified"
    names = [p.name for p in res.patches]
    assert names == ["0000-cover-letter.patch", "0001-mm-slub-Rename-slab_order.patch"]
    patch = res.patches[1].read_text()
    assert "-static inline unsigned int slab_order(unsigned int size," in patch
    assert "+\treturn calc_slab_order(size, 1, 2, 3);" in patch
    assert "From: Test Dev <dev@example.org>" in patch
    assert "Signed-off-by: Test Dev <dev@example.org>" in patch
    assert "\nBased on a patch by Seed Author <seed@example.org>.\n" in patch
    assert "Signed-off-by: Seed Author" not in patch, "never forge the seed author's sign-off"
    cover = res.patches[0].read_text()
    assert "Subject: [PATCH 5.10 0/1] Test series" in cover and "*** SUBJECT HERE ***" not in cover


def test_the_cover_letter_names_the_base_and_subjects_carry_the_prefix(tree, tmp_path, cache):
    """A Debian source is named with its version; a user tree that is a
    clean git checkout gets format-patch's base-commit line; any other tree
    is said not to be one.  The subject prefix is the caller's."""
    assert series.base_of(tree, "linux-source-5.10_5.10.262-1") == (
        "Based on Debian's linux-source-5.10 5.10.262-1.", "")
    assert "not a clean git checkout" in series.base_of(tree, "test-tree")[0]
    git = ["git", "-C", str(tree), "-c", "user.name=u", "-c", "user.email=u@e"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert series.base_of(tree, "test-tree") == ("", head)
    m = write_manifest(tmp_path / "cocci", RENAME)
    res = series.regenerate(tree, "test-tree", version="5.10", output=tmp_path / "out",
                            identity=ID, manifest_path=m, workdir=tmp_path / "work",
                            subject_prefix="RFC PATCH 5.10 v2")
    cover = res.patches[0].read_text()
    assert "Subject: [RFC PATCH 5.10 v2 0/1] Test series" in cover
    assert f"\n\nbase-commit: {head}\n-- \n" in cover
    assert "Subject: [RFC PATCH 5.10 v2 1/1] mm/slub: Rename slab_order()" in \
        res.patches[1].read_text()
    (tree / "mm" / "slub.c").write_text((tree / "mm" / "slub.c").read_text() + "\n")
    assert "not a clean git checkout" in series.base_of(tree, "test-tree")[0]


def test_regeneration_is_deterministic(tree, tmp_path, cache):
    m = write_manifest(tmp_path / "cocci", RENAME)
    a = regen(tree, m, tmp_path, "a")
    b = regen(tree, m, tmp_path, "b")
    assert [p.read_bytes() for p in a.patches] == [p.read_bytes() for p in b.patches]


def test_rule_that_changes_nothing_stops_the_run(tree, tmp_path, cache):
    again = RENAME.replace('id = "rename"', 'id = "again"').replace(
        "Rename slab_order()", "Rename it again")
    m = write_manifest(tmp_path / "cocci", RENAME + again)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.patch").write_text("previous series\n")
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "entry 'again'" in msg and "changed nothing" in msg and "mm/slub.c" in msg
    # nothing lost on failure: the previous output is still there
    assert (tmp_path / "out" / "old.patch").read_text() == "previous series\n"


def test_missing_expected_effect_names_entry_expected_and_found(tree, tmp_path, cache):
    m = write_manifest(tmp_path / "cocci", RENAME.replace('defines = ["calc_slab_order"]',
                                                          'defines = ["slab_order_v2"]'))
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "entry 'rename'" in msg
    assert "expected: slab_order_v2 defined in mm/slub.c" in msg
    assert "found:    mm/slub.c: no definition of slab_order_v2" in msg


def test_spatch_error_is_shown_with_file_and_line(tree, tmp_path, cache):
    d = tmp_path / "cocci"
    m = write_manifest(d, RENAME.replace("rules/calc_slab_order.cocci", "broken.cocci"))
    (d / "broken.cocci").write_text("@@\nexpression E;\n@@\n- foo(E\n+ bar(E)\n")
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"{d / 'broken.cocci'}:6: entry 'rename' (mm/slub: Rename "
                          f"slab_order()), step 1 (rule broken.cocci): spatch failed:"), msg
    assert f"{d / 'broken.cocci'}:6, column 0" in msg, "spatch's message"


@pytest.mark.parametrize("body,needle", [
    ("[[entry]]\nid = 'x'\n", "missing 'subject'"),
    (RENAME.replace("calc_slab_order.cocci", "nope.cocci"), "rules/nope.cocci does not exist"),
    (RENAME + RENAME, "duplicate entry id 'rename'"),
    (RENAME.replace('message = "Rename it."', 'message = "x"\n    depends = ["later"]'),
     "depends on 'later'"),
    ("""
    [[entry]]
    id = "t"
    subject = "s"
    message = "m"
      [[entry.step]]
      template = "templates/page_slab.h"
      into = "include/h.h"
      before = "anchor_fn"
      [[entry.expect]]
      present = "x"
      in = "include/h.h"
    """, "must say 'why'"),
])
def test_bad_manifests_are_rejected_with_exit_code_2(tmp_path, body, needle):
    m = write_manifest(tmp_path / "cocci", body)
    with pytest.raises(SlabconvError) as e:
        manifest.load(m)
    assert needle in str(e.value)
    assert e.value.exit_code == 2


def test_template_goes_before_the_anchor_and_its_comment(tree, tmp_path):
    root = tmp_path / "cocci"
    (root / "anchors").mkdir(parents=True)
    (root / "anchors" / "definition.cocci").symlink_to(REPO / "cocci/anchors/definition.cocci")
    (root / "t.h").write_text("/* slabconv template: test */\n#define NEW_THING 1\n")
    work = tmp_path / "w"
    work.mkdir()
    (work / "h.h").write_text((tree / "include" / "h.h").read_text())
    template.insert(root, work, "t.h", "h.h", before="anchor_fn")
    text = (work / "h.h").read_text()
    assert "int first(int a);\n\n#define NEW_THING 1\n\n/* the anchor */\nstatic inline" in text
    assert "slabconv template" not in text
    template.insert(root, work, "t.h", "h.h", at="end")
    assert text.count("NEW_THING") == 1
    assert (work / "h.h").read_text().endswith("}\n\n#define NEW_THING 1\n\n#endif /* H_H */\n")


def test_template_at_start_goes_after_the_guard_and_its_comment(tmp_path):
    root = tmp_path / "cocci"
    root.mkdir()
    (root / "t.h").write_text("/* slabconv template: test */\nstatic inline int helper(void);\n")
    work = tmp_path / "w"
    work.mkdir()
    (work / "h.h").write_text("/* SPDX */\n#ifndef H_H\n#define H_H\n/*\n * What this is\n */\n\n"
                              "#include <linux/x.h>\n#endif\n")
    template.insert(root, work, "t.h", "h.h", at="start")
    assert (work / "h.h").read_text() == (
        "/* SPDX */\n#ifndef H_H\n#define H_H\n/*\n * What this is\n */\n\n"
        "static inline int helper(void);\n\n#include <linux/x.h>\n#endif\n")
    (work / "g.h").write_text("int x;\n")
    with pytest.raises(SlabconvError, match="does not begin with an include guard"):
        template.insert(root, work, "t.h", "g.h", at="start")


def test_template_replaces_a_macro_definition_with_its_continuations(tmp_path):
    root = tmp_path / "cocci"
    root.mkdir()
    (root / "t.h").write_text("/* slabconv template: test */\n#define FREE_FN(LVL)\t\\\n"
                              "static void free_##LVL(struct list_head *l) { }\n")
    work = tmp_path / "w"
    work.mkdir()
    (work / "a.c").write_text("int a;\n#define FREE_FN(LVL)\t\\\nstatic struct page *free_##LVL"
                              "(struct page *f)\t\\\n{ return f; }\nFREE_FN(l1)\n"
                              "#define FREE_FN_OTHER 1\n")
    template.insert(root, work, "t.h", "a.c", replace_macro="FREE_FN")
    assert (work / "a.c").read_text() == (
        "int a;\n#define FREE_FN(LVL)\t\\\nstatic void free_##LVL(struct list_head *l) { }\n"
        "FREE_FN(l1)\n#define FREE_FN_OTHER 1\n")
    with pytest.raises(SlabconvError, match="0 definitions of macro 'NOPE'"):
        template.insert(root, work, "t.h", "a.c", replace_macro="NOPE")


def test_template_anchor_missing_is_an_error(tree, tmp_path):
    with pytest.raises(SlabconvError, match="no top-level declaration of 'nothere'"):
        template.insert(REPO / "cocci", tree / "include", "templates/page_slab.h", "h.h",
                        before="nothere")


def test_tidy_removes_only_conditionals_the_step_emptied():
    before = "#ifdef A\nint a;\n#else\nstatic int a;\n#endif\n\n#ifdef OLD\n#endif\nint z;\n"
    after = "#ifdef A\n#else\n#endif\n\n#ifdef OLD\n#endif\nint z;\n"
    assert tidy.tidy(before, after) == "\n#ifdef OLD\n#endif\nint z;\n"
    keep = "#ifdef A\n/* a comment stays */\n#endif\n"
    assert tidy.tidy("#ifdef A\nint a;\n/* a comment stays */\n#endif\n", keep) == keep


def test_effects_ignore_comments_and_find_signatures():
    src = textwrap.dedent("""\
        /* slab_test_cache() is not defined by this comment */
        void __check_heap_object(const void *ptr, unsigned long n,
        			 const struct slab *slab, bool to_user);
        static inline bool real_one(const struct slab *slab)
        {
        	return __check_heap_object(ptr, n, slab, 1);
        }
        enum e { A, B = 2, };
        """)
    names = effects.defined_names(src)
    assert "real_one" in names and "slab_test_cache" not in names and {"A", "B"} <= names
    lists = effects.parameter_lists(src, "__check_heap_object")
    assert lists == [["const void *ptr", "unsigned long n", "const struct slab *slab", "bool to_user"]]


def test_convert_step_expands_into_the_generic_rules(tmp_path):
    m = write_manifest(tmp_path / "cocci", """
    [[entry]]
    id = "e"
    subject = "x"
    message = "m"
      [[entry.step]]
      convert = "param"
      fn = "validate_slab"
      [[entry.step]]
      convert = "local"
      fn = "f"
      var = "oldpage"
      to = "oldslab"
      files = ["mm/a.c"]
      [[entry.expect]]
      present = "x"
      in = ["mm/slub.c"]
    """)
    s = manifest.load(m)
    st = s.entries[0].steps
    # one spatch run per conversion; the entry ends with one fold over
    # the files its conversions touched
    assert [x.rules for x in st] == [["rules/slab_param.cocci", "rules/slab_callers.cocci"],
                                    ["rules/slab_var.cocci"], ["rules/slab_fold.cocci"]]
    assert st[0].files == ["mm/slub.c"] and not st[0].optional
    assert st[0].defines == {"fn": "validate_slab"}
    assert st[1].defines == {"fn": "f", "var": "oldpage", "to": "oldslab"}
    assert st[1].files == ["mm/a.c"]
    assert st[2].optional and st[2].files == ["mm/slub.c", "mm/a.c"]
    m.write_text(m.read_text().replace('convert = "param"', 'convert = "struct"'))
    with pytest.raises(SlabconvError) as e:
        manifest.load(m)
    assert e.value.exit_code == 2 and "convert = 'struct'" in str(e.value)


def test_declsplit_splits_only_the_named_variable_in_the_named_function():
    from regen import declsplit
    src = ("static void f(void)\n{\n\tstruct page *page, *page2 = NULL;\n\tuse(page2);\n}\n"
           "static void g(void)\n{\n\tstruct page *page, *page2;\n}\n")
    out = declsplit.split(src, "f", "page2")
    assert "\tstruct page *page;\n\tstruct page *page2 = NULL;\n\tuse(page2);" in out
    assert "static void g(void)\n{\n\tstruct page *page, *page2;\n}" in out
    assert declsplit.split(src, "f", "other") == src
    assert declsplit.split(src, "nosuch", "page2") == src


def _own_rules(d: Path) -> Path:
    """A cocci/ directory whose rules/ is a copy of the real one (to edit)."""
    import shutil
    write_manifest(d, "")
    (d / "rules").unlink()
    shutil.copytree(REPO / "cocci" / "rules", d / "rules")
    return d


def test_a_rules_split_declaration_directive_splits_the_local_first(tree, tmp_path, cache):
    """The driver splits `struct page *page, *other;` before a rule whose
    header says `// slabconv: split-declaration var in fn`, whatever the
    rule file is called and however the step names it; an unknown
    directive, or one that reads a -D the step lacks, stops the manifest's
    load at the rule's file and line."""
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(textwrap.dedent("""\
        static void walk(struct kmem_cache *s)
        {
        	struct page *page, *other;

        	page = get_it(s);
        	other = NULL;
        	page->inuse = 0;
        	put_it(other);
        }
        """))
    d = _own_rules(tmp_path / "c")
    text = (REPO / "cocci" / "rules" / "slab_var.cocci").read_text()
    assert "\n// slabconv: split-declaration var in fn\n" in text
    (d / "rules" / "my_local.cocci").write_text(text)
    m = write_manifest(d, """
    [[entry]]
    id = "local"
    subject = "mm/slub: Convert walk() to use a struct slab"
    message = "m"
      [[entry.step]]
      rule = "rules/my_local.cocci"
      files = ["mm/slub.c"]
      defines = { fn = "walk", var = "page", to = "slab" }
      [[entry.expect]]
      present = "struct slab [*]slab;"
      in = "mm/slub.c"
    """)
    res = regen(tree, m, tmp_path)
    patch = res.patches[1].read_text()
    assert "-\tstruct page *page, *other;\n+\tstruct slab *slab;\n+\tstruct page *other;\n" in patch
    # without the directive the rule cannot match the declarator: the step changes nothing
    (d / "rules" / "my_local.cocci").write_text(
        text.replace("// slabconv: split-declaration var in fn\n", ""))
    with pytest.raises(SlabconvError, match="changed nothing"):
        regen(tree, m, tmp_path, "out2")
    line = text[:text.index("// slabconv:")].count("\n") + 1
    (d / "rules" / "my_local.cocci").write_text(
        text.replace("split-declaration var in fn", "split-declarations var in fn"))
    with pytest.raises(SlabconvError) as e:
        manifest.load(m)
    assert e.value.exit_code == 2
    assert f"{d / 'rules' / 'my_local.cocci'}:{line}: unknown directive" in str(e.value)
    (d / "rules" / "my_local.cocci").write_text(text)
    m.write_text(m.read_text().replace('var = "page", ', ""))
    with pytest.raises(SlabconvError) as e:
        manifest.load(m)
    assert e.value.exit_code == 2 and f"my_local.cocci:{line} reads -D var" in str(e.value)


def test_a_broken_rule_is_reported_at_its_own_file_and_line(tree, tmp_path, cache, capsys):
    """spatch's parse error in a composed run (two conversions fused into
    one scratch file) is reported at the user's rule file and line, with
    the entry, the step the line belongs to and spatch's message; the
    command exits non-zero (log.guarded: what the CLI runs)."""
    from base.log import guarded
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(SLABS)
    d = _own_rules(tmp_path / "c")
    rule = d / "rules" / "slab_param.cocci"
    lines = rule.read_text().splitlines(keepends=True)
    n = lines.index("+slab\n") + 1            # the first rule's added argument
    lines[n - 1] = "+slab)\n"
    rule.write_text("".join(lines))
    m = write_manifest(d, """
    [[entry]]
    id = "two"
    subject = "mm/slub: Convert use_b() and use_a()"
    message = "m"
      [[entry.step]]
      convert = "return"
      fn = "use_b"
      [[entry.step]]
      convert = "param"
      fn = "use_a"
      [[entry.expect]]
      present = "struct slab"
      in = "mm/slub.c"
    """)
    s = manifest.load(m)
    assert [len(b) for b in series.batches(s.entries[0].steps)] == [2], "one composed run"
    rc = guarded(series.regenerate, tree, "test-tree", version="5.10", output=tmp_path / "out",
                 identity=ID, manifest_path=m, workdir=tmp_path / "work")
    err = capsys.readouterr().err
    assert rc != 0
    # the place spatch names when it parses the broken file alone
    from regen import spatch
    alone = subprocess.run([*spatch.base_command(), "--sp-file", str(rule), "--no-includes",
                            "-D", "patch", "mm/slub.c"], cwd=tree, capture_output=True, text=True)
    line = int(re.search(r'File "[^"]+", line (\d+)', alone.stdout + alone.stderr).group(1))
    assert line in (n, n + 1), "spatch finds the error at the planted line or the next"
    first = next(l for l in err.splitlines() if l.startswith("slabconv: error:"))
    assert first.startswith(f"slabconv: error: {rule}:{line}: entry 'two' "
                            f"(mm/slub: Convert use_b() and use_a()), step 2 (rule "
                            f"rules/slab_param.cocci + rules/slab_callers.cocci"), err
    assert "spatch failed" in first and "plus: parse error" in err
    assert "scratch" not in err, "no place in the composed file is left"
    assert f"{rule}:{line}, column" in err.split("spatch failed", 1)[1], "spatch's message"


def test_a_semantic_error_in_a_composed_run_names_the_rule_files_line(tmp_path, cache):
    """spatch's check of a rule (a metavariable only in added code) names
    the rule by its renamed name and the composed file's lines: both are
    given back as the user's file and line, in the instance it came from."""
    from regen import spatch
    good = tmp_path / "good.cocci"
    good.write_text("virtual patch\n\n@r depends on patch@\nidentifier virtual.fn;\n@@\n"
                    "- fn(1);\n+ fn(2);\n")
    bad = tmp_path / "bad.cocci"
    bad.write_text("// a comment\nvirtual patch\n\n@r depends on patch@\nidentifier f;\n@@\n"
                   "- kfree(g);\n+ kfree2(f);\n")
    src = tmp_path / "t"
    src.mkdir()
    (src / "a.c").write_text("void x(void)\n{\n\tkfree(g);\n\tuse(1);\n}\n")
    rule, defines = spatch.compose_instances([([good], {"fn": "use"}, True),
                                              ([bad], {}, True)], tmp_path / "scratch")
    with pytest.raises(spatch.SpatchCrash) as e:
        spatch.apply_rule(rule, src, ["a.c"], defines=defines, what="w")
    assert spatch.Origin(bad, 4, 1) in e.value.origins, e.value     # rule r's header
    assert f"{bad}:7: should g be a metavariable?" in e.value.output   # 'warning: line N:'
    assert "scratch" not in str(e.value)


def test_spatch_results_are_cached_by_rule_defines_and_input(tmp_path, cache, monkeypatch):
    from regen import spatch
    rule = REPO / "cocci" / "rules" / "slab_fold.cocci"
    src = "void f(struct slab *slab)\n{\n\tvoid *a = page_address(slab_page(slab));\n}\n"
    (tmp_path / "a.c").write_text(src)
    calls = []
    real_run = spatch._run

    def counting(cmd, *a, **k):
        if cmd and str(cmd[0]).endswith("spatch") and "--in-place" in cmd:
            calls.append(cmd)
        return real_run(cmd, *a, **k)

    monkeypatch.setattr(spatch, "_run", counting)
    spatch.apply_rule(rule, tmp_path, ["a.c"])
    first = (tmp_path / "a.c").read_text()
    assert "slab_address(slab)" in first and len(calls) == 1
    (tmp_path / "a.c").write_text(src)                      # same input: a hit
    spatch.apply_rule(rule, tmp_path, ["a.c"])
    assert (tmp_path / "a.c").read_text() == first and len(calls) == 1
    (tmp_path / "a.c").write_text(src.replace("void *a", "void *b"))   # new input: a miss
    spatch.apply_rule(rule, tmp_path, ["a.c"])
    assert "void *b = slab_address(slab)" in (tmp_path / "a.c").read_text() and len(calls) == 2
    monkeypatch.setenv("SLABCONV_SPATCH_CACHE", "0")        # off: always runs
    (tmp_path / "a.c").write_text(src)
    spatch.apply_rule(rule, tmp_path, ["a.c"])
    assert len(calls) == 3


# --- several steps of an entry in one spatch run ------------------------------
SLABS = textwrap.dedent("""\
    static void use_a(struct kmem_cache *s, struct page *page)
    {
    	page->inuse = 0;
    }

    static void use_b(struct kmem_cache *s, struct page *page)
    {
    	page->frozen = 1;
    }

    static void caller(struct kmem_cache *s, struct page *page)
    {
    	use_a(s, page);
    	use_b(s, page);
    }
    """)


def _conversions(*fns, entries=False):
    steps = "".join(f'''
      [[entry.step]]
      convert = "param"
      fn = "{fn}"''' for fn in fns)
    expect = '''
      [[entry.expect]]
      present = "struct slab"
      in = "mm/slub.c"'''
    if not entries:
        return f'''
    [[entry]]
    id = "both"
    subject = "Convert {' and '.join(fns)}"
    message = "m"{steps}{expect}
'''
    return "".join(f'''
    [[entry]]
    id = "{fn}"
    subject = "Convert {fn}"
    message = "m"
      [[entry.step]]
      convert = "param"
      fn = "{fn}"{expect}
''' for fn in fns)


def test_steps_of_an_entry_run_in_one_spatch_run_with_the_same_result(tree, tmp_path, cache,
                                                                     monkeypatch):
    from regen import spatch
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(SLABS)
    runs = []
    real = spatch.apply_rule
    monkeypatch.setattr(spatch, "apply_rule", lambda rule, *a, **k: runs.append(rule) or real(rule, *a, **k))
    one = regen(tree, write_manifest(tmp_path / "c1", _conversions("use_a", "use_b")), tmp_path, "o1")
    assert len(runs) == 1, "two conversions and the fold: one spatch run"
    merged = (one.worktree.path / "mm" / "slub.c").read_text()
    assert "static void use_a(struct kmem_cache *s, struct slab *slab)" in merged
    assert "static void use_b(struct kmem_cache *s, struct slab *slab)" in merged
    assert "\tuse_a(s, page_slab(page));\n\tuse_b(s, page_slab(page));" in merged
    runs.clear()
    two = regen(tree, write_manifest(tmp_path / "c2", _conversions("use_a", "use_b", entries=True)),
                tmp_path, "o2")
    assert len(runs) == 2
    assert (two.worktree.path / "mm" / "slub.c").read_text() == merged
    # the commits were made without the index, which matches HEAD afterwards
    assert one.worktree.git("status", "--porcelain") == ""


def test_a_step_that_does_nothing_in_a_batch_is_named(tree, tmp_path, cache):
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(SLABS)
    m = write_manifest(tmp_path / "c", _conversions("use_a", "no_such_fn", "use_b"))
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "step 2" in msg and "no_such_fn()" in msg and "no_such_fn() with a struct page" in msg, msg


def test_a_converted_step_that_matches_nothing_in_a_batch_is_named(tree, tmp_path, cache):
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(SLABS)
    m = write_manifest(tmp_path / "c", """
    [[entry]]
    id = "three"
    subject = "Convert three"
    message = "m"
      [[entry.step]]
      convert = "param"
      fn = "use_a"
      [[entry.step]]
      convert = "param"
      fn = "use_b"
      [[entry.step]]
      convert = "local"
      fn = "caller"
      var = "nosuchvar"
      [[entry.expect]]
      present = "struct slab"
      in = "mm/slub.c"
    """)
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "step 3" in msg and "caller()" in msg and "changed nothing" in msg, msg


def test_instances_are_renamed_apart():
    from regen import spatch
    text = textwrap.dedent("""\
        virtual patch
        virtual same_name

        @initialize:python@
        @@
        seen = set()

        @d0 depends on patch && !same_name@
        identifier virtual.fn;
        position p;
        @@
         fn@p(...) {...}

        @script:python@
        p << d0.p;
        @@
        seen.add(p[0].line)

        @@
        identifier virtual.fn;
        position d0.p;
        @@
        -fn@p(...) {...}
        """)
    out, transforming = spatch.instance(text, "_3", "_3_1")
    assert "virtual same_name_3" in out and "virtual patch" in out
    assert "@d0_3_1 depends on patch && !same_name_3@" in out
    assert "identifier virtual.fn_3;" in out and " fn_3@p(...) {...}" in out
    assert "p << d0_3_1.p;" in out and "seen_3_1.add(p[0].line)" in out
    assert "seen_3_1 = set()" in out and "position d0_3_1.p;" in out
    # the anonymous rule is named, to report whether it matched
    assert transforming and transforming[0].endswith("_3_1") and f"@{transforming[0]}@" in out


def test_converted_effects():
    src = ("static int f(struct kmem_cache *s, const struct slab *slab)\n{\n\treturn 0;\n}\n"
           "static struct slab *g(void)\n{\n\tstruct slab *sl = NULL;\n\treturn sl;\n}\n")
    assert effects.converted("param", "f", [src])
    assert not effects.converted("param", "g", [src])
    assert effects.converted("return", "g", [src]) and not effects.converted("return", "f", [src])
    assert effects.converted("local", "g", [src], to="sl")
    assert not effects.converted("local", "f", [src], to="sl")


def test_reflow_fixes_only_what_coccinelle_printed_in_changed_lines():
    old = ("void f(struct page *page)\n{\n\tstruct page *page2, *n;\n"
           "\tx = ((freelist_idx_t *)page->freelist)[i];\n"
           "\ty = (void *) 0;\n"
           "\tobjp = index_to_obj(cachep, page, objnr - 1);\n}\n")
    new = ("void f(struct slab *slab)\n{\n\tstruct slab *slab2;\n\tstruct slab *n;\n"
           "\tx = ((freelist_idx_t *) slab->freelist)[i];\n"
           "\ty = (void *) 0;\n"
           "\tobjp = index_to_obj(cachep,\n\t\t\t    slab,\n\t\t\t    objnr - 1);\n}\n")
    out = tidy.reflow(old, new)
    assert "\tstruct slab *slab2, *n;\n" in out
    assert "((freelist_idx_t *)slab->freelist)[i]" in out
    assert "\ty = (void *) 0;\n" in out, "an unchanged line keeps its layout"
    assert "\tobjp = index_to_obj(cachep, slab, objnr - 1);\n" in out
    # a call that does not fit in 80 columns stays broken where it must
    long_old = "\tfoo(aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbb, page);\n"
    long_new = ("\tfoo(aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbb,\n"
                "\t    page_slab(cccccccccccccccccccccccccccccccccccc));\n")
    assert tidy.reflow(long_old, long_new) == long_new


def test_kerneldoc_follows_a_renamed_parameter():
    from regen import kerneldoc
    src = ("/**\n * slab_destroy - destroy\n * @cachep: cache\n * @page: page pointer\n"
           " *\n * Destroy all the objs in @page.\n */\n"
           "static void slab_destroy(struct kmem_cache *cachep, struct slab *slab)\n{\n"
           "\t/* @page here is not kernel-doc */\n}\n"
           "/**\n * other - @page of another function\n */\nstatic void other(struct page *page);\n")
    out = kerneldoc.rename_param(src, "slab_destroy", "page", "slab")
    assert " * @slab: page pointer\n" in out and "objs in @slab.\n" in out
    assert "/* @page here is not kernel-doc */" in out
    assert " * other - @page of another function" in out


HEADER_ENTRY = """
    [[entry]]
    id = "header"
    subject = "include: Add NEW_THING"
    message = "A header of its own."
      [[entry.step]]
      template = "templates/new_thing.h"
      into = "include/h.h"
      before = "anchor_fn"
      why = "a macro"
      [[entry.expect]]
      present = "NEW_THING"
      in = "include/h.h"
"""
AGAIN = """
    [[entry]]
    id = "again"
    subject = "mm/slub: Convert calc_slab_order() again"
    message = "Back."
      [[entry.step]]
      rule = "rules/rename_fn.cocci"
      files = ["mm/slub.c"]
      defines = { from = "calc_slab_order", to = "slab_order" }
      [[entry.expect]]
      defines = ["slab_order"]
      in = "mm/slub.c"
"""


def test_a_section_comment_before_removed_code_is_kept():
    before = ("int a;\n\n/*********\n * The functions below map things.\n *********/\n\n"
              "static void gone(void)\n{\n}\n\n/* its own */\nstatic void also_gone(void)\n{\n}\n\n"
              "/**\n * doc() - documented\n */\nstatic void doc(void)\n{\n}\n\nint b;\n")
    after = "int a;\n\nint b;\n"
    assert tidy.keep_detached_comments(before, after) == (
        "int a;\n\n/*********\n * The functions below map things.\n *********/\n\nint b;\n")
    # nothing removed, nothing added
    assert tidy.keep_detached_comments(before, before) == before
    reworded = before.replace("map things", "map other things")
    assert tidy.keep_detached_comments(before, reworded) == reworded


def test_line_opcodes_cover_both_files_and_skip_the_common_head_and_tail(monkeypatch):
    """The opcodes that keep_detached_comments and reflow walk: contiguous
    over both files, equal where they say so, and as cheap as the part that
    differs: difflib (quadratic; an 8000-line file with one changed line,
    matched without autojunk, took it seconds) is given only the lines
    between the common head and tail.  How long regeneration takes is
    `make bench`'s."""
    given = []

    class Recording(tidy._Matcher):
        def __init__(self, isjunk, a, b, **kw):
            given.append((len(a), len(b)))
            super().__init__(isjunk, a, b, **kw)
    monkeypatch.setattr(tidy, "_Matcher", Recording)
    old = [f"line {i % 50}\n" for i in range(8000)]
    new = old[:4000] + ["changed\n", "added\n"] + old[4001:]
    ops = tidy.line_opcodes(old, new, autojunk=False)
    assert given == [(1, 2)]                    # the changed line and the two new ones
    assert ops[0] == ("equal", 0, 4000, 0, 4000) and ops[-1] == ("equal", 4001, 8000, 4002, 8001)
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j), "contiguous"
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(old), len(new))
    assert tidy.line_opcodes(old, old) == [("equal", 0, 8000, 0, 8000)]
    assert tidy.line_opcodes([], ["a\n"]) == [("insert", 0, 0, 0, 1)]


def test_the_matcher_gives_difflibs_own_opcodes():
    """tidy._Matcher finds the longest match through the lines that occur
    once in both ranges: the same opcodes as difflib's SequenceMatcher on
    random edits of random sequences (few symbols: many repeated lines;
    many: long unique runs), on unrelated sequences, and on a kernel file
    with changes in several places."""
    import difflib
    import random
    rnd = random.Random(7)
    for _ in range(600):
        vocab = rnd.choice([3, 20, 400])
        a = [str(rnd.randrange(vocab)) for _ in range(rnd.randint(0, 400))]
        b = list(a)
        for _ in range(rnd.randint(0, 8)):
            p = rnd.randint(0, len(b))
            if rnd.random() < 0.5:
                b[p:p] = [str(rnd.randrange(vocab)) for _ in range(rnd.randint(1, 12))]
            else:
                del b[p:p + rnd.randint(1, 12)]
        if rnd.random() < 0.1:
            b = [str(rnd.randrange(vocab)) for _ in range(rnd.randint(0, 400))]
        assert tidy._Matcher(None, a, b, autojunk=False).get_opcodes() == \
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    src = (REPO / "regen" / "tidy.py").read_text().splitlines() * 3
    changed = src[:100] + ["x", "", "}"] + src[130:900] + src[905:] + ["}"]
    assert tidy._Matcher(None, src, changed, autojunk=False).get_opcodes() == \
        difflib.SequenceMatcher(None, src, changed, autojunk=False).get_opcodes()


def test_members_are_removed_by_name_with_their_anonymous_aggregates():
    from regen import members
    src = textwrap.dedent("""\
        struct other {
        	int active;
        };

        struct page {
        	unsigned long flags;
        	union {
        		struct {	/* slab */
        			struct list_head slab_list;
        #ifdef CONFIG_64BIT
        			int pages;	/* left */
        #else
        			short int pages;
        #endif
        			/* Double-word boundary */
        			void *freelist;
        		};
        		struct {	/* mixed: stays, loses one */
        			unsigned long private;
        			void *s_mem;
        		};
        		struct rcu_head rcu_head;
        	};
        	union {
        		atomic_t _mapcount;

        		unsigned int active;		/* SLAB */
        	};
        };
        """)
    out, found = members.remove_members(src, "page", ["slab_list", "pages", "freelist",
                                                       "s_mem", "active"])
    assert found == ["slab_list", "pages", "freelist", "s_mem", "active"]
    assert out == textwrap.dedent("""\
        struct other {
        	int active;
        };

        struct page {
        	unsigned long flags;
        	union {
        		struct {	/* mixed: stays, loses one */
        			unsigned long private;
        		};
        		struct rcu_head rcu_head;
        	};
        	union {
        		atomic_t _mapcount;
        	};
        };
        """)
    with pytest.raises(SlabconvError, match="no removable member units"):
        members.remove_members(src, "page", ["units"])
    with pytest.raises(SlabconvError, match="no definition of struct slab"):
        members.remove_members(src, "slab", ["units"])


def test_a_kernel_with_struct_slab_gets_a_verdict_per_entry(tree, tmp_path, cache):
    """Upstream's own conversion (struct slab in mm/slab.h): an entry whose
    effect is there is 'upstream' with the evidence, one whose file or
    function is gone is 'not applicable', one whose rules do not fit is
    'not applicable' and leaves nothing behind, and one that applies is
    'applied' (a patch).  The run succeeds."""
    from regen import upstream
    (tree / "mm" / "slab.h").write_text("struct slab {\n\tunsigned long flags;\n};\n")
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(SLABS.replace(
        "static void use_b(struct kmem_cache *s, struct page *page)\n{\n\tpage->frozen = 1;",
        "static void use_b(struct kmem_cache *s, struct slab *slab)\n{\n\tslab->frozen = 1;") +
        "\nstatic inline unsigned int slab_order(unsigned int size)\n{\n\treturn size;\n}\n")
    def entry(id, body):
        return f'''
    [[entry]]
    id = "{id}"
    subject = "mm/slub: {id}"
    message = "m"{body}
'''
    conv = lambda fn, f="mm/slub.c": f'''
      [[entry.step]]
      convert = "param"
      fn = "{fn}"
      files = ["{f}"]
      [[entry.expect]]
      signature = "{fn}"
      param = "struct slab *slab"
      in = ["{f}"]'''
    m = write_manifest(tmp_path / "c", entry("b", conv("use_b")) + entry("gone", conv("use_z"))
                       + entry("slob", conv("slob_free", "mm/slob.c"))
                       + entry("mixed", conv("use_b") + conv("use_z"))
                       + entry("misfit", '''
      [[entry.step]]
      rule = "rules/rename_fn.cocci"
      files = ["mm/slub.c"]
      defines = { from = "caller", to = "caller2" }
      [[entry.step]]
      rule = "rules/calc_slab_order.cocci"
      files = ["mm/slub.c"]
      [[entry.step]]
      rule = "rules/calc_slab_order.cocci"
      files = ["mm/slub.c"]
      [[entry.expect]]
      defines = ["caller2"]
      in = "mm/slub.c"''')
                       + entry("a", conv("use_a")))
    res = regen(tree, m, tmp_path)
    verdicts = {v[0]: (v[2], " ".join(v[3])) for v in res.verdicts}
    assert res.converted_at == "mm/slab.h:1"
    assert verdicts["b"][0] == upstream.UPSTREAM and "use_b() takes 'struct slab *slab'" in verdicts["b"][1]
    assert verdicts["gone"] == (upstream.NOT_APPLICABLE, "use_z() is not in mm/slub.c")
    assert verdicts["slob"] == (upstream.NOT_APPLICABLE, "mm/slob.c not in this kernel")
    assert verdicts["misfit"][0] == upstream.NOT_APPLICABLE and "changed nothing" in verdicts["misfit"][1]
    # half of it already there, half of it gone: not upstream
    assert verdicts["mixed"][0] == upstream.NOT_APPLICABLE, verdicts["mixed"]
    assert "mixed evidence, not upstream: use_b() already takes a struct slab" in verdicts["mixed"][1]
    assert "use_z() is not in mm/slub.c" in verdicts["mixed"][1]
    assert verdicts["a"] == (upstream.APPLIED, "")
    assert [e.id for e in res.entries] == ["a"]
    text = (res.worktree.path / "mm" / "slub.c").read_text()
    assert "caller2" not in text, "a misfit entry leaves nothing behind"
    assert "static void use_a(struct kmem_cache *s, struct slab *slab)" in text
    report = (tmp_path / "out" / "ENTRIES").read_text()
    assert "upstream        mm/slub: b" in report and "1 applied, 1 upstream, 4 not applicable" in report


def test_a_rule_that_crashes_on_a_kernel_with_struct_slab_is_an_error(tree, tmp_path, cache):
    """On a converted kernel an entry whose rules do not fit is 'not
    applicable', but a rule whose spatch run fails (here: a SmPL syntax
    error) did not run at all: regen stops with an error naming the entry,
    it does not pass it off as not applicable with exit 0."""
    (tree / "mm" / "slab.h").write_text("struct slab {\n\tunsigned long flags;\n};\n")
    rules = tmp_path / "c" / "rules"
    rules.mkdir(parents=True)
    for r in (REPO / "cocci" / "rules").iterdir():
        (rules / r.name).symlink_to(r)
    (rules / "crash.cocci").write_text("@@\nidentifier f;\n@@\n- f(\n")
    m = write_manifest(tmp_path / "c", '''
    [[entry]]
    id = "crash"
    subject = "mm/slub: crash"
    message = "m"
      [[entry.step]]
      rule = "rules/crash.cocci"
      files = ["mm/slub.c"]
      [[entry.expect]]
      defines = ["nothing_like_this"]
      in = "mm/slub.c"
''')
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    assert e.value.exit_code == 1
    assert str(e.value).startswith(f"{rules / 'crash.cocci'}:5: entry 'crash' (mm/slub: crash), "
                                   f"step 1 (rule rules/crash.cocci): spatch failed:"), str(e.value)


def test_a_failing_entry_names_the_entries_that_depend_on_it(tree, tmp_path, cache):
    again = RENAME.replace('id = "rename"', 'id = "again"').replace(
        "Rename slab_order()", "Rename it again")
    third = RENAME.replace('id = "rename"', 'id = "third"\ndepends = ["again"]').replace(
        "Rename slab_order()", "Third")
    fourth = RENAME.replace('id = "rename"', 'id = "fourth"\ndepends = ["third"]').replace(
        "Rename slab_order()", "Fourth")
    m = write_manifest(tmp_path / "cocci", RENAME + again + third + fourth)
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "entry 'again'" in msg and "changed nothing" in msg
    assert "entries that depend on 'again' and cannot be applied without it: third, fourth" in msg


def test_reflow_tabs_and_comma_spacing_in_changed_lines_only():
    """checkpatch's CODE_INDENT and SPACING on lines Coccinelle printed anew:
    a continuation aligned with 4 tabs and 10 spaces is 5 tabs and 2
    spaces; 5.10's `df.cnt,_RET_IP_` carried onto a new line gets its
    space; strings, character literals, comments and unchanged lines keep
    theirs."""
    old = ("\t\t\tlist_slab_objects(s, page,\n"
           "\t\t\t  \"Objects remaining in %s on __kmem_cache_shutdown()\");\n"
           "\tslab_free(df.s, df.page, df.freelist, df.tail, df.cnt,_RET_IP_);\n"
           "\tkeep(a,b);\n")
    new = ("\t\t\tlist_slab_objects(s, slab_page(slab),\n"
           "\t\t\t\t          \"Objects remaining in %s on __kmem_cache_shutdown()\");\n"
           "\tslab_free(df.s, slab_page(df.slab), df.freelist, df.tail,\n"
           "\t\t  df.cnt,_RET_IP_);\n"
           "\tkeep(a,b);\n")
    out = tidy.reflow(old, new).splitlines()
    # not aligned with its parenthesis before, which did not move: its bytes
    assert out[1] == "\t\t\t  \"Objects remaining in %s on __kmem_cache_shutdown()\");"
    assert out[3] == "\t\t  df.cnt, _RET_IP_);"
    fresh = tidy.reflow("\tx = 1;\n", "\t\t\tlist_slab_objects(s, slab_page(slab),\n"
                        "\t\t\t\t          \"Objects remaining in %s on shutdown()\");\n")
    assert fresh.splitlines()[1] == "\t\t\t\t\t  \"Objects remaining in %s on shutdown()\");", \
        fresh                                               # a new line: aligned, tabs first
    assert out[4] == "\tkeep(a,b);", "an unchanged line keeps its layout"
    assert tidy._comma_space("\tf(',', \"a,b\", x,y); /* c,d */\n") == \
        "\tf(',', \"a,b\", x, y); /* c,d */\n"
    assert tidy._tab_indent("          x;\n") == "\t  x;\n"
    assert tidy._tab_indent(" \t x;\n") == "\t x;\n"


def test_reflow_joins_a_closing_parenthesis_left_alone_on_its_line():
    """spatch removes a last argument or parameter and leaves the closing
    parenthesis on a line of its own: joined onto the line before it when
    that fits; an unchanged line, or one that would be too long, stays."""
    old = ("unsigned long next(struct kmem_cache *s, unsigned long *pos,\n"
           "\t\t\t   struct page *page);\n"
           "\tkeep(a\n"
           "\t     );\n")
    new = ("unsigned long next(struct kmem_cache *s, unsigned long *pos\n"
           "\t\t\t   );\n"
           "\tkeep(a\n"
           "\t     );\n")
    out = tidy.reflow(old, new).splitlines()
    assert out == ["unsigned long next(struct kmem_cache *s, unsigned long *pos);",
                   "\tkeep(a", "\t     );"]
    long = "x" * 79
    assert tidy.reflow("f(a,\n  b);\n", f"{long}\n  );\n") == f"{long}\n  );\n"


def test_generated_by_lines_name_each_rule_once():
    """One `Generated by: <file>` line per rule or template, in order, each
    once: no `*-by:` trailer (checkpatch's signature test), and the review's
    parser reads the items back in order."""
    from report import patches as P
    srcs = ["cocci/rules/slab_param.cocci, cocci/rules/slab_callers.cocci, "
            "cocci/rules/slab_fold.cocci", "regen/members.py on struct page",
            "cocci/rules/slab_fold.cocci"]
    t = series.generated_by(srcs)
    assert t.split("\n") == ["Generated by: cocci/rules/slab_param.cocci",
                             "Generated by: cocci/rules/slab_callers.cocci",
                             "Generated by: cocci/rules/slab_fold.cocci",
                             "Generated by: regen/members.py on struct page"]
    assert not re.search(r"^\s*[a-z0-9_-]+by:", t, re.I | re.M)     # checkpatch's signature test
    assert P.parse_generated_with(f"subject\n\nbody\n\n{t}\n\nSigned-off-by: a <b@c>\n") == [
        "cocci/rules/slab_param.cocci", "cocci/rules/slab_callers.cocci",
        "cocci/rules/slab_fold.cocci", "regen/members.py"]
    # series made before: one folded Generated-with trailer
    assert P.parse_generated_with("s\n\nb\n\nGenerated-with: slabconv (a.cocci,\n b.cocci)\n") \
        == ["a.cocci", "b.cocci"]


def test_the_snapshot_importer_commits_in_order_keeps_modes_and_moves_head(tmp_path):
    """regen's committer (one git fast-import for the series): each snapshot
    becomes a commit on HEAD's branch with the work tree's identity and
    date; a file's mode is kept, None removes a file, and the files in the
    work tree are not read (they may have moved on)."""
    from regen.worktree import WorkTree
    src = tmp_path / "src"
    (src / "mm").mkdir(parents=True)
    (src / "mm" / "a.c").write_text("int a;\n")
    (src / "mm" / "gone.c").write_text("int gone;\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    wt = WorkTree.prepare(src, "t1", tmp_path / "w", Identity("A U Thor", "a@example.org"),
                          "2021-10-04T14:45:48+01:00")
    imp = wt.importer()
    assert imp.commit("first\n\nbody\n", {"mm/a.c": b"int a = 1;\n", "run.sh": b"#!/bin/sh\nx\n"}) == 0
    (wt.path / "mm" / "a.c").write_text("not what is committed\n")
    assert imp.commit("second\n", {"mm/gone.c": None, "mm/new.c": b"int n;\n"}) == 1
    ids = imp.close()
    assert len(ids) == 2 and wt.git("rev-parse", "HEAD").strip() == ids[1]
    assert wt.git("rev-parse", f"{ids[1]}^").strip() == ids[0]
    assert wt.git("show", f"{ids[0]}:mm/a.c") == "int a = 1;\n"
    assert wt.git("ls-tree", ids[1], "run.sh").split()[0] == "100755"
    assert wt.git("ls-tree", "--name-only", "-r", ids[1]).split() == ["mm/a.c", "mm/new.c", "run.sh"]
    assert wt.git("log", "-1", "--format=%an <%ae> %ad|%cn %cd|%B", "--date=iso-strict",
                  ids[0]).strip() == ("A U Thor <a@example.org> 2021-10-04T14:45:48+01:00|"
                                      "A U Thor 2021-10-04T14:45:48+01:00|first\n\nbody")
    assert imp._author.endswith(b" 1633355148 +0100") and imp._committer == imp._author
    # the date as git reads GIT_AUTHOR_DATE (as commit-tree did): other
    # offsets and formats, and an error for one it cannot read
    wt.date = "2021-10-04T14:45:48-05:30"
    other = wt.importer()
    assert other._author.endswith(b" 1633378548 -0530")
    other.close()
    wt.date = "Mon, 4 Oct 2021 14:45:48 +0100"
    other = wt.importer()
    assert other._author.endswith(b" 1633355148 +0100")
    other.close()
    wt.date = "4 Oct 2021"
    with pytest.raises(SlabconvError):
        wt.importer()
    # the work tree as regen leaves it (its last entry's files): the index follows
    (wt.path / "mm" / "a.c").write_text("int a = 1;\n")
    (wt.path / "mm" / "gone.c").unlink()
    (wt.path / "mm" / "new.c").write_text("int n;\n")
    (wt.path / "run.sh").write_text("#!/bin/sh\nx\n")
    wt.sync_index()
    assert wt.changed_files() == []


def test_a_failed_import_is_reported_with_gits_message(tmp_path):
    from regen.worktree import WorkTree
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.c").write_text("int a;\n")
    wt = WorkTree.prepare(src, "t2", tmp_path / "w", Identity("A", "a@example.org"),
                          "2021-10-04T14:45:48+01:00")
    imp = wt.importer()
    imp.commit("x\n", {"a.c": b"1\n"})
    imp._write(b"nonsense command\n")
    with pytest.raises(SlabconvError) as e:
        imp.close()
    assert "fast-import" in str(e.value) and "nonsense" in str(e.value)


def test_a_return_that_can_be_null_is_refused_with_its_file_and_line(tree, tmp_path, cache):
    """slab_return.cocci never wraps a page that can be NULL in page_slab():
    regen stops naming the entry, the tree's file and the return's line,
    also when an earlier step of the same spatch run changed the function
    (spatch then names a scratch copy)."""
    (tree / "mm" / "slub.c").chmod(0o644)
    (tree / "mm" / "slub.c").write_text(textwrap.dedent("""\
        static struct page *grab_slab(struct kmem_cache *s, struct page *page, int node)
        {
        	struct page *fresh = alloc_pages_node(node, s->gfp, s->order);

        	if (fresh)
        		account(fresh, page->objects);
        	return fresh;
        }
        """))
    m = write_manifest(tmp_path / "cocci", """
        [[entry]]
        id = "grab"
        subject = "mm/slub: Convert grab_slab() to return a struct slab"
        message = "Convert it."
          [[entry.step]]
          convert = "param"
          fn = "grab_slab"
          [[entry.step]]
          convert = "return"
          fn = "grab_slab"
          [[entry.expect]]
          present = 'struct slab \\*grab_slab'
          in = ["mm/slub.c"]
    """)
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    msg = str(e.value)
    assert "entry 'grab'" in msg and "refuse" in msg
    assert "mm/slub.c:7: grab_slab() returns fresh, which can be NULL there" in msg, msg


def test_regenerating_the_committed_series_keeps_its_identity(tmp_path, monkeypatch):
    """make regen on a machine with its own git identity must not rewrite
    the committed patches' From: and Signed-off-by: (a fresh checkout stays
    clean); a series written anywhere else takes the user's identity."""
    from regen.source import committed_identity
    assert committed_identity(paths.GENERATED / "5.10") == "slabconv <slabconv@localhost>"
    other = tmp_path / "5.10"
    other.mkdir()
    (other / "SOURCE").write_text("identity: slabconv <slabconv@localhost>\n")
    assert committed_identity(other) is None
    assert committed_identity(paths.GENERATED / "9.99") is None


def test_continuation_lines_follow_a_changed_opening_line():
    """checkpatch --strict's PARENTHESIS_ALIGNMENT where the conversion
    moved what a line was aligned with: the lines after a changed line that
    leaves a parenthesis open, aligned with it before, are aligned with it
    again, and filled again at their commas where the aligned line would
    pass 80 columns; lines that were not aligned, and code whose opening
    line did not change, keep their own style (no whitespace-only churn)."""
    old = ("static void deactivate_slab(struct kmem_cache *s, struct page *page,\n"
           "\t\t\t\tvoid *freelist, struct kmem_cache_cpu *c)\n{\n"
           "\tfoo(a,\n\t\tb);\n}\n"
           "static inline unsigned int slab_order(unsigned int size,\n"
           "\t\tunsigned int min_objects, unsigned int max_order,\n"
           "\t\tunsigned int fract_leftover)\n{\n}\n")
    new = (old.replace("struct page *page,", "struct slab *slab,")
              .replace("int slab_order(", "int calc_slab_order("))
    out = tidy.reflow(old, new)
    # not aligned with their parenthesis before: they keep their bytes,
    # whether the parenthesis stayed (deactivate_slab) or moved (the rename)
    assert ("static void deactivate_slab(struct kmem_cache *s, struct slab *slab,\n"
            "\t\t\t\tvoid *freelist, struct kmem_cache_cpu *c)\n") in out
    assert "\tfoo(a,\n\t\tb);\n" in out                      # not changed: left alone
    assert ("static inline unsigned int calc_slab_order(unsigned int size,\n"
            "\t\tunsigned int min_objects, unsigned int max_order,\n"
            "\t\tunsigned int fract_leftover)\n") in out
    # aligned before, and the rename moved the parenthesis: aligned again,
    # filled again at the commas where the aligned line passes 80 columns
    old = ("static inline unsigned int slab_order(unsigned int size,\n"
           "\t\t\t\t      unsigned int min_objects,\n"
           "\t\t\t\t      unsigned int max_order, unsigned int fract_leftover)\n{\n}\n")
    out = tidy.reflow(old, old.replace("int slab_order(", "int calc_slab_order("))
    assert ("static inline unsigned int calc_slab_order(unsigned int size,\n"
            "\t\t\t\t\t   unsigned int min_objects,\n"
            "\t\t\t\t\t   unsigned int max_order,\n"
            "\t\t\t\t\t   unsigned int fract_leftover)\n") in out, out
    assert all(len(ln.expandtabs(8)) <= 80 for ln in out.splitlines())


def test_a_renamed_statement_keeps_its_line_breaks():
    """Coccinelle breaks a line that a rename made longer than 80 columns; a
    statement that only had identifiers renamed gets its own breaks back (up
    to checkpatch's 100 columns), one with new tokens is joined to 80."""
    old = "\tfor (prev = NULL, cur = sp->freelist; ; prev = cur, cur = slob_next(cur)) {\n"
    new = ("\tfor (prev = NULL, cur = slab->freelist; ; prev = cur,\n"
           "\t     cur = slob_next(cur)) {\n")
    assert tidy.reflow(old, new) == (
        "\tfor (prev = NULL, cur = slab->freelist; ; prev = cur, cur = slob_next(cur)) {\n")
    two = "\tx = f(a, page,\n\t      c);\n"
    assert tidy.reflow(two, "\tx = f(a,\n\t      slab,\n\t      c);\n") == "\tx = f(a, slab,\n\t      c);\n"


def test_a_changed_macro_line_keeps_the_backslash_column():
    old = ("#define DEFINE_FREE_PT_FN(LVL, FN)\t\t\t\t\t\t\\\n"
           "static struct page *free_pt_##LVL (unsigned long __pt, struct page *freelist)\t\\\n"
           "{\t\t\t\t\t\t\t\t\t\t\\\n")
    new = old.replace("struct page *free_pt_##LVL (unsigned long __pt, struct page *freelist)",
                      "void free_pt_##LVL (unsigned long __pt, struct list_head *list)")
    out = tidy.reflow(old, new).splitlines()
    assert out[1].startswith("static void free_pt_##LVL (unsigned long __pt, struct list_head *list)\t")
    assert {len(ln[:-1].expandtabs(8)) for ln in out} == {80}


REMOVE = """
    [[entry]]
    id = "remove"
    subject = "mm: Remove slab from struct page"
    message = "Take them out."
      [[entry.step]]
      remove_members = ["slab_cache", "freelist", "inuse"]
      struct = "page"
      into = "include/linux/mm_types.h"
      why = "a test"
      [[entry.expect]]
      absent = 'inuse'
      in = ["include/linux/mm_types.h"]
"""


def _struct_page_tree(tree: Path) -> None:
    (tree / "include" / "linux").mkdir(parents=True)
    (tree / "include" / "linux" / "mm_types.h").write_text(textwrap.dedent("""\
        struct page {
        	unsigned long flags;
        	struct kmem_cache *slab_cache;
        	void *freelist;
        	unsigned inuse;
        };
        """))


def test_a_slab_member_used_through_struct_page_stops_the_removal(tree, tmp_path, cache):
    """A use of a member the removal entry takes out of struct page, which
    no rule converted, stops regen before that entry (exit 1): file, line,
    function and member are named, and no series is written.  A member of
    the same name in a struct of its own, and a page used as a page, are
    not uses."""
    _struct_page_tree(tree)
    (tree / "drivers").mkdir()
    (tree / "drivers" / "user.c").write_text(textwrap.dedent("""\
        struct pool { void *freelist; };

        static unsigned int count_used(struct page *page)
        {
        	return page->inuse;
        }

        static void drop(struct pool *p, struct page *page)
        {
        	p->freelist = NULL;
        	put_page(page);
        }
        """))
    m = write_manifest(tmp_path / "cocci", RENAME + REMOVE)
    with pytest.raises(SlabconvError) as e:
        regen(tree, m, tmp_path)
    assert e.value.exit_code == 1
    msg = str(e.value)
    assert "entry 'remove'" in msg
    assert "drivers/user.c:5: count_used(): page->inuse" in msg
    assert msg.count("page->") == 1, msg
    assert not (tmp_path / "out").exists(), "no series is written"


def test_no_use_left_lets_the_removal_through(tree, tmp_path, cache):
    _struct_page_tree(tree)
    m = write_manifest(tmp_path / "cocci", RENAME + REMOVE)
    res = regen(tree, m, tmp_path)
    assert [p.name for p in res.patches][-1] == "0002-mm-Remove-slab-from-struct-page.patch"


def test_an_entry_that_upstream_made_its_own_way_is_upstream_with_its_lines(tree, tmp_path, cache):
    """[[entry.upstream]]: on a kernel with struct slab, an entry whose rules
    no longer fit but whose change upstream made in its own code (the
    lines its checks find) is 'upstream' with those lines as evidence, not
    'not applicable'; the usage entry is 'not applicable' there."""
    from regen import upstream
    (tree / "mm" / "slab.h").write_text("struct slab {\n\tunsigned long flags;\n};\n")
    (tree / "drivers").mkdir()
    (tree / "drivers" / "pt.c").write_text(
        "static void free_pt(struct page *p, struct list_head *freelist)\n{\n"
        "\tlist_add_tail(&p->lru, freelist);\n}\n")
    m = write_manifest(tmp_path / "c", '''
    [[entry]]
    id = "lists"
    subject = "drivers: Use put_pages_list"
    message = "m"
      [[entry.step]]
      rule = "rules/page_chain_walk.cocci"
      files = ["drivers/pt.c"]
      [[entry.expect]]
      present = 'put_pages_list'
      in = ["drivers/pt.c"]
      [[entry.upstream]]
      present = 'list_add_tail\\(&p->lru, freelist\\)'
      in = ["drivers/pt.c"]
      [[entry.upstream]]
      absent = '->freelist = '
      in = ["drivers/pt.c"]

    [[entry]]
    id = "usage"
    subject = "mm: Convert remaining users of struct page's slab fields"
    usage = true
    message = "m"
''')
    res = regen(tree, m, tmp_path)
    verdicts = {v[0]: (v[2], v[3]) for v in res.verdicts}
    assert verdicts["lists"][0] == upstream.UPSTREAM
    assert verdicts["lists"][1][0] == "drivers/pt.c:3: list_add_tail(&p->lru, freelist);"
    assert verdicts["usage"][0] == upstream.NOT_APPLICABLE


def test_after_rules_run_alone_after_every_entry_with_rules(tmp_path):
    """[series] after_rules: one step of their own at the end of each entry
    that has rules, over the files of its rules; a name that is not a rule
    file is refused."""
    m = write_manifest(tmp_path / "cocci", """
    [[entry]]
    id = "e"
    subject = "x"
    message = "m"
      [[entry.step]]
      convert = "param"
      fn = "validate_slab"
      [[entry.step]]
      rule = "rules/rename_fn.cocci"
      files = ["mm/a.c"]
      [[entry.expect]]
      present = "x"
      in = ["mm/slub.c"]
    """)
    text = m.read_text().replace('[series]\n', '[series]\nafter_rules = ["rules/slab_page_local.cocci", '
                                 '"rules/page_slab_local.cocci"]\n')
    m.write_text(text)
    st = manifest.load(m).entries[0].steps
    assert st[-1].rules == ["rules/slab_page_local.cocci", "rules/page_slab_local.cocci"]
    assert st[-1].alone and st[-1].optional and st[-1].files == ["mm/slub.c", "mm/a.c"]
    assert [len(b) for b in series.batches(st)][-1] == 1  # never composed with the others
    m.write_text(text.replace("rules/page_slab_local.cocci", "rules/no_such.cocci"))
    with pytest.raises(SlabconvError, match="after_rules: rules/no_such.cocci does not exist"):
        manifest.load(m)


def test_a_baseline_is_committed_from_the_source_and_borrows_its_siblings_objects(tmp_path):
    """The baseline repository is committed from the source where it lies
    (no copy; the source is not written) and a second source of the same
    kernel version borrows the first one's objects: only the objects the
    first lacks are written.  A repository whose donor is gone is made
    anew instead of reading missing objects."""
    from regen.worktree import WorkTree, donor_objects
    ident = Identity("A", "a@example.org")
    date = "2021-10-04T14:45:48+01:00"
    pristine = tmp_path / "pristine"
    (pristine / "mm").mkdir(parents=True)
    for i in range(20):
        (pristine / "mm" / f"f{i}.c").write_text(f"int f{i};\n")
    (pristine / "run.sh").write_text("#!/bin/sh\n")
    (pristine / "run.sh").chmod(0o555)                    # read-only, executable
    before = sorted((p.relative_to(pristine), p.stat().st_mtime_ns) for p in pristine.rglob("*"))
    work = tmp_path / "work" / "5.10"
    a = WorkTree.prepare(pristine, "pkg", work / "pkg", ident, date)
    assert sorted((p.relative_to(pristine), p.stat().st_mtime_ns)
                  for p in pristine.rglob("*")) == before          # only read
    assert not (work / "pkg" / "linux" / ".git" / "objects" / "info" / "alternates").exists()
    assert a.git("ls-tree", "HEAD", "run.sh").split()[0] == "100755"
    assert (a.path / "mm" / "f3.c").read_text() == "int f3;\n"
    # a user's branch: the same files but one, and a .git of its own that is not taken
    branch = tmp_path / "branch"
    shutil.copytree(pristine, branch)
    (branch / "mm" / "f0.c").chmod(0o644)
    (branch / "mm" / "f0.c").write_text("int f0 = 1;\n")
    subprocess.run(["git", "init", "-q", str(branch)], check=True)
    assert donor_objects(work / "user") == [(work / "pkg" / "linux" / ".git" / "objects").resolve()]
    b = WorkTree.prepare(branch, "user", work / "user", ident, date)
    git_b = work / "user" / "linux" / ".git"
    assert (git_b / "objects" / "info" / "alternates").read_text().strip() == \
        str((work / "pkg" / "linux" / ".git" / "objects").resolve())
    own = subprocess.run(["git", "--git-dir", str(git_b), "count-objects", "-v"],
                         capture_output=True, text=True, check=True).stdout
    loose = int(re.search(r"^count: (\d+)", own, re.M).group(1))
    # the commit, the root tree, mm/'s tree and the changed file: not the 20 others
    assert loose == 4, own
    assert b.git("show", "HEAD:mm/f0.c") == "int f0 = 1;\n"
    assert b.git("show", "HEAD:mm/f7.c") == "int f7;\n"
    assert ".git" not in b.git("ls-tree", "--name-only", "HEAD").split()
    # the donor goes: the borrower is made again, complete on its own
    b.release()
    shutil.rmtree(work / "pkg")
    c = WorkTree.prepare(branch, "user", work / "user", ident, date)
    assert not (git_b / "objects" / "info" / "alternates").exists()
    assert c.git("show", "HEAD:mm/f7.c") == "int f7;\n"
