"""verify.objdiff on small C files compiled with gcc -O2 (x86_64; i386 with
-m32, which needs only gcc and the assembler here: the sources include no
system header).  No kernel needed, but for bloat-o-meter's own run, which
takes the script from the 5.10 tree (fetched if the cache has none: a slow
test); its output parser is tested on a captured output."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from regen import manifest  # noqa: E402
from base.log import SlabconvError  # noqa: E402
from verify import objdiff  # noqa: E402


def test_the_tools_are_installed():
    """gcc and objdump (binutils), the arm64 cross gcc and objdump
    (gcc-aarch64-linux-gnu) are set-up requirements: never a skip."""
    assert shutil.which("gcc") and shutil.which("objdump")
    assert shutil.which("aarch64-linux-gnu-gcc") and shutil.which("aarch64-linux-gnu-objdump")

# kernel-like code generation: no PIC, the kernel code model, no jump tables
KFLAGS = ["-O2", "-fno-pic", "-mcmodel=kernel", "-mno-red-zone", "-fno-jump-tables",
          "-falign-jumps=1", "-falign-loops=1", "-fno-asynchronous-unwind-tables"]
I386 = ["-m32", "-O2", "-fno-pic", "-mregparm=3", "-fno-asynchronous-unwind-tables"]
# arm64 as the kernel compiles it (arch/arm64/Makefile): the cross gcc, RELA
# objects whose relocated fields are bits of instructions
A64 = ["aarch64-linux-gnu-gcc", "-O2", "-fno-pic", "-mgeneral-regs-only",
       "-falign-jumps=1", "-falign-loops=1", "-fno-asynchronous-unwind-tables"]


def cc(tmp_path, name, src, flags=KFLAGS, fname="unit.c"):
    """Compile `src` as `fname` (the same file name for both versions, as
    a kernel build compiles the same path) into tmp/name/unit.o; flags
    that start with a compiler (A64) name it, else gcc."""
    d = tmp_path / name
    d.mkdir(parents=True, exist_ok=True)
    (d / fname).write_text(src)
    obj = d / (Path(fname).stem + ".o")
    gcc, flags = (flags[0], flags[1:]) if flags[0].endswith("gcc") else ("gcc", flags)
    subprocess.run([gcc, *flags, "-c", fname, "-o", obj.name], cwd=d, check=True)
    return obj


HEAD = """
struct page { unsigned long flags; unsigned long ch; void *freelist; int inuse; };
extern void use(const char *, long);
extern void __might_sleep(const char *file, int line, int preempt_offset);
"""

BASE = HEAD + """
static int counter;
static long total;

__attribute__((noinline)) static long helper(long x)
{
	return x * 3 + counter;
}

long grow(struct page *p, long k)
{
	use("grow", k);
	return helper(k) + p->inuse;
}

long after(struct page *p)
{
	total += p->inuse;
	use("after: %ld", total);
	use(__func__, helper(p->inuse));
	return total + counter;
}
"""


# --- stability ------------------------------------------------------------

@pytest.mark.parametrize("flags", [KFLAGS, ["-O2"], I386, A64],
                         ids=["kernel-like", "O2-pic", "i386", "arm64"])
def test_same_source_compiled_twice_is_equal(tmp_path, flags):
    a = cc(tmp_path, "a", BASE, flags)
    b = cc(tmp_path, "b", BASE, flags)
    d = objdiff.compare(a, b, label="unit.o", quick=False)      # disassembled
    assert d.equal and not d.quick, d.text(excerpts=True)
    assert d.compared == 3 and objdiff.stable(a, b)
    q = objdiff.compare(a, b, label="unit.o")
    assert q.equal and q.quick and q.compared == 3 and q.present == {"helper", "grow", "after"}
    assert d.text() == "unit.o: code unchanged (3 functions)"
    fa = objdiff.function_code(a)
    assert set(fa) == {"helper", "grow", "after"}
    assert fa["grow"].size > 0 and len(fa["grow"].digest) == 16
    # no addresses, strings by content, statics by name
    assert '"after: %ld"' in fa["after"].text
    assert "total" in fa["after"].text and "__func__.#=\"after\"" in fa["after"].text


@pytest.mark.parametrize("flags", [KFLAGS, A64], ids=["x86_64", "arm64"])
def test_grown_function_moves_the_next_one_only_the_grown_one_differs(tmp_path, flags):
    a = cc(tmp_path, "a", BASE, flags)
    # arm64: gcc addresses a file's statics from a section anchor, so a new
    # static changes how `after` reaches `total` (a real change of its
    # code): the arm64 version grows without one
    extra = "counter" if flags is A64 else "extra++"
    grown = BASE.replace('use("grow", k);', f'use("grow", k);\n\tif (k > 3)\n\t\tuse("big", {extra});')
    if flags is not A64:
        grown = grown.replace("static int counter;", "static int extra;\nstatic int counter;")
    b = cc(tmp_path, "b", grown, flags)
    d = objdiff.compare(a, b, label="unit.o")
    assert [c.function for c in d.changed] == ["grow"], d.text(excerpts=True)
    c = d.changed[0]
    assert c.delta > 0 and c.new_size - c.old_size == c.delta
    assert '"big"' in c.excerpt
    assert not d.added and not d.removed
    assert d.text().splitlines() == [
        f"unit.o: grow: +{c.delta} bytes ({c.old_size} -> {c.new_size})"]
    # `after` moved in .text, and its statics moved in .bss
    fa, fb = objdiff.function_code(a), objdiff.function_code(b)
    assert fa["after"].text == fb["after"].text


def test_string_table_shift_is_no_change(tmp_path):
    a = cc(tmp_path, "a", BASE)
    shifted = HEAD + ('void early(void)\n{\n\tuse("first new string", 1);\n'
                      '\tuse("a second, longer string to shift the table", 2);\n}\n'
                      ) + BASE[len(HEAD):]
    b = cc(tmp_path, "b", shifted)
    # the strings moved
    ra = subprocess.run(["readelf", "-p", ".rodata.str1.1", str(a)], capture_output=True,
                        text=True).stdout
    rb = subprocess.run(["readelf", "-p", ".rodata.str1.1", str(b)], capture_output=True,
                        text=True).stdout
    pos = lambda out: next(ln.split("]")[0] for ln in out.splitlines() if "after: %ld" in ln)
    assert pos(ra) != pos(rb)
    d = objdiff.compare(a, b)
    assert not d.changed and not d.removed, d.text(excerpts=True)
    assert [x.function for x in d.added] == ["early"]


@pytest.mark.parametrize("flags", [KFLAGS, A64], ids=["x86_64", "arm64"])
def test_changed_string_content_is_a_change(tmp_path, flags):
    a = cc(tmp_path, "a", BASE, flags)
    b = cc(tmp_path, "b", BASE.replace('"after: %ld"', '"later: %ld"'), flags)
    d = objdiff.compare(a, b)
    assert [c.function for c in d.changed] == ["after"]
    assert d.changed[0].delta == 0 and '"later: %ld"' in d.changed[0].excerpt


RENAME = HEAD + """
__attribute__((noinline)) static void print_page_info(struct page *page)
{
	use(__func__, page->flags);
	use("slab %p objects=%u", page->inuse);
}

void slab_err(struct page *page)
{
	print_page_info(page);
	use("done", 0);
}
"""


def test_renamed_function_is_compared_under_its_old_name(tmp_path):
    a = cc(tmp_path, "a", RENAME)
    b = cc(tmp_path, "b", RENAME.replace("print_page_info", "print_slab_info"))
    d = objdiff.compare(a, b, {"print_page_info": "print_slab_info"}, label="mm/slub.o")
    assert d.equal, d.text(excerpts=True)
    assert d.compared == 2
    # not declared: found, since the code is the same but for the name
    found = objdiff.compare(a, b, label="mm/slub.o")
    assert found.equal and found.found_renames == {"print_page_info": "print_slab_info"}
    assert found.renames == {}
    assert "print_page_info renamed print_slab_info, same code" in found.text()
    # neither declared nor looked for: one function gone, one new, the caller's call differs
    plain = objdiff.compare(a, b, detect_renames=False)
    assert [r.function for r in plain.removed] == ["print_page_info"]
    assert [x.function for x in plain.added] == ["print_slab_info"]
    assert [c.function for c in plain.changed] == ["slab_err"]
    # a real change in a renamed function is still reported, under the old name
    c = cc(tmp_path, "c", RENAME.replace("print_page_info", "print_slab_info").replace(
        "page->flags);", "page->flags + 1);"))
    d2 = objdiff.compare(a, c, {"print_page_info": "print_slab_info"}, label="mm/slub.o")
    assert [x.function for x in d2.changed] == ["print_page_info"]
    assert d2.changed[0].new_name == "print_slab_info"
    assert "(now print_slab_info)" in d2.text()


PLAIN_FN = HEAD + """
long objects(struct page *p)
{
	use("objects", p->inuse);
	return p->inuse + (long)p->freelist;
}

long other(struct page *p)
{
	return p->flags & 7;
}
"""


def test_planted_compound_head_test_and_branch_is_reported_with_its_delta(tmp_path):
    a = cc(tmp_path, "a", PLAIN_FN)
    planted = PLAIN_FN.replace('{\n\tuse("objects"',
                               '{\n\tif ((unsigned long)p->ch & 1)\n'
                               '\t\tp = (void *)(p->ch - 1);\n\tuse("objects"')
    assert planted != PLAIN_FN
    b = cc(tmp_path, "b", planted)
    d = objdiff.compare(a, b, label="mm/slub.o")
    assert [c.function for c in d.changed] == ["objects"]
    c = d.changed[0]
    assert c.delta > 0
    assert any(x.startswith("+") and ("test" in x or "and" in x or "j" in x)
               for x in c.excerpt.splitlines()), c.excerpt
    assert d.text() == f"mm/slub.o: objects: +{c.delta} bytes ({c.old_size} -> {c.new_size})"
    assert d.to_dict()["changed"][0]["delta"] == c.delta


def test_other_immediate_or_register_is_a_change(tmp_path):
    a = cc(tmp_path, "a", PLAIN_FN)
    b = cc(tmp_path, "b", PLAIN_FN.replace("p->flags & 7", "p->flags & 5"))
    d = objdiff.compare(a, b)
    assert [c.function for c in d.changed] == ["other"] and d.changed[0].delta == 0
    c = cc(tmp_path, "c", PLAIN_FN.replace("return p->flags & 7", "return p->ch & 7"))
    assert [x.function for x in objdiff.compare(a, c).changed] == ["other"]


LINES = HEAD + """
long sleeper(struct page *p)
{
	__might_sleep(__FILE__, __LINE__, 0);
	use("sleeper", p->inuse);
	return p->inuse;
}
"""


@pytest.mark.parametrize("flags", [KFLAGS, I386, A64], ids=["x86_64", "i386", "arm64"])
def test_line_argument_of_might_sleep_is_normalised(tmp_path, flags):
    a = cc(tmp_path, "a", LINES, flags)
    b = cc(tmp_path, "b", LINES.replace("long sleeper", "\n\n\n\nlong sleeper"), flags)
    dump = "aarch64-linux-gnu-objdump" if flags is A64 else "objdump"
    raw = lambda o: subprocess.run([dump, "-d", str(o)], capture_output=True,
                                   text=True).stdout.split("<sleeper>:")[1]
    assert raw(a) != raw(b)                        # the immediates differ ...
    d = objdiff.compare(a, b)
    assert d.equal, d.text(excerpts=True)          # ... and are normalised
    assert ("#__LINE__" if flags is A64 else "$__LINE__") in \
        objdiff.function_code(a)["sleeper"].text
    # a constant that is not a line number still counts
    c = cc(tmp_path, "c", LINES.replace("__might_sleep(__FILE__, __LINE__, 0);",
                                        "__might_sleep(__FILE__, __LINE__, 1);"), flags)
    assert [x.function for x in objdiff.compare(a, c).changed] == ["sleeper"]


COLD = HEAD + """
extern void report(const char *, long) __attribute__((cold));
long walk(long *v, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		if (v[i] < 0) {
			report("negative", v[i]);
			use("after report", i);
			s -= 3;
		}
		s += v[i] * 7;
	}
	return s;
}

__attribute__((section(".init.text"))) long setup(long *v)
{
	return walk(v, 4) + 1;
}
"""


def test_cold_part_and_init_text_belong_to_their_function(tmp_path):
    a = cc(tmp_path, "a", COLD)
    fa = objdiff.function_code(a)
    assert set(fa) == {"walk", "setup"}                # walk.cold folded into walk
    assert "-- walk.cold (.text.unlikely):" in fa["walk"].text
    assert '"negative"' in fa["walk"].text
    assert fa["setup"].text.startswith(".init.text:")
    # grow the code before walk in .text: the relocations into .text.unlikely
    # and from .init.text into .text move, the code does not
    b = cc(tmp_path, "b", COLD.replace("long walk(", PLAIN_FN[len(HEAD):] + "\nlong walk("))
    d = objdiff.compare(a, b)
    assert not d.changed and not d.removed, d.text(excerpts=True)
    assert sorted(x.function for x in d.added) == ["objects", "other"]


def test_jump_tables_by_target_not_by_position(tmp_path):
    sw = HEAD + """
long pick(long k)
{
	switch (k) {
	case 1: use("one", k); return 3;
	case 2: return 7;
	case 3: use("three", k); return 11;
	case 4: return 13;
	case 5: use("five", k); return 17;
	case 6: return 19;
	default: return 0;
	}
}
"""
    a = cc(tmp_path, "a", sw, ["-O2"])
    b = cc(tmp_path, "b", sw.replace("long pick", PLAIN_FN[len(HEAD):] + "\nlong pick"), ["-O2"])
    assert "anon" in objdiff.function_code(a)["pick"].text
    assert objdiff.compare(a, b).changed == []


def test_i386_rel_addends_resolved(tmp_path):
    a = cc(tmp_path, "a", BASE, I386)
    b = cc(tmp_path, "b", BASE.replace('use("grow", k);', 'use("grow and more", k);'), I386)
    d = objdiff.compare(a, b)
    assert [c.function for c in d.changed] == ["grow"]        # not after's strings
    assert '"after: %ld"' in objdiff.function_code(b)["after"].text


def test_missing_objects(tmp_path):
    a = cc(tmp_path, "a", PLAIN_FN)
    d = objdiff.compare(tmp_path / "none.o", a, label="new.o")
    assert d.missing_before and sorted(x.function for x in d.added) == ["objects", "other"]
    d = objdiff.compare(a, tmp_path / "none.o", label="gone.o")
    assert d.missing_after and len(d.removed) == 2 and "removed" in d.text()


def test_snapshot_keeps_relative_paths(tmp_path):
    o = tmp_path / "o"
    (o / "mm").mkdir(parents=True)
    (o / "mm" / "slub.o").write_bytes(b"old")
    dest = tmp_path / "keep"
    assert objdiff.snapshot(o, ["mm/slub.o", "mm/new.o"], dest) == ["mm/slub.o"]
    (o / "vmlinux.o").write_bytes(b"all")
    for glue in ("scripts/mod/empty.o", "arch/x86/boot/setup.o", ".tmp_vmlinux.kallsyms1.o",
                 "mm/slab_test.mod.o"):
        (o / glue).parent.mkdir(parents=True, exist_ok=True)
        (o / glue).write_bytes(b"not compared")
    assert objdiff.list_objects(o) == ["mm/slub.o"]
    assert objdiff.snapshot(o, None, tmp_path / "all") == ["mm/slub.o"]
    assert (dest / "mm" / "slub.o").read_bytes() == b"old"
    (o / "mm" / "slub.o").write_bytes(b"new")
    assert (dest / "mm" / "slub.o").read_bytes() == b"old"      # a copy, not a link
    cc(tmp_path, "a", PLAIN_FN)
    objdiff.snapshot(tmp_path / "a", ["unit.o"], dest)
    [d] = objdiff.compare_objects(dest, tmp_path / "a", ["unit.o"])
    assert d.equal and d.object == "unit.o"


# --- expectations ---------------------------------------------------------

def _diff(obj, changed=(), added=(), removed=(), present=()):
    d = objdiff.ObjDiff(obj)
    d.changed = [objdiff.FuncChange(n, 100, 100 + k) for n, k in changed]
    d.added = [objdiff.FuncSize(n, 10) for n in added]
    d.removed = [objdiff.FuncSize(n, 20) for n in removed]
    d.present = frozenset(present) | {n for n, _ in changed} | set(added) | set(removed)
    return d


def test_judge_declared_undeclared_missing():
    exp = [manifest.CodeExpect(["put_pages_list", "free_pt_*"], "lists, not chains",
                               ["drivers/iommu/amd/iommu.o"]),
           manifest.CodeExpect(["kfree"], "page_slab() adds compound_head()")]
    diffs = [_diff("drivers/iommu/amd/iommu.o", changed=[("free_pt_page", 8)],
                   present=["put_pages_list"]),
             _diff("mm/slub.o", changed=[("kfree.cold", 4), ("kmem_cache_free", -2)],
                   added=["new_helper"])]
    unexpected, missing = objdiff.judge(exp, diffs, patch="57/58 iommu: Use put_pages_list")
    assert [(u.object, u.function, u.change, u.delta) for u in unexpected] == [
        ("mm/slub.o", "kmem_cache_free", "changed", -2), ("mm/slub.o", "new_helper", "added", 10)]
    assert unexpected[0].text() == ("57/58 iommu: Use put_pages_list: mm/slub.o: kmem_cache_free: "
                                    "code changed, -2 bytes (100 -> 98); not declared by the patch")
    assert [(m.function, m.reason) for m in missing] == [("put_pages_list", "unchanged")]
    assert "expected a code change" in missing[0].text()
    assert "lists, not chains" in missing[0].text()
    assert missing[0].to_dict()["kind"] == "missing"
    # a type-only patch: every change is unexpected, nothing is missing
    u, m = objdiff.judge(None, diffs)
    assert len(u) == 4 and m == []
    # an expectation limited to other objects does not cover mm/slub.o; and
    # where none of its objects was built (another configuration) it is not judged
    u, m = objdiff.judge([manifest.CodeExpect(["kfree"], "x", ["mm/slab.o"])], diffs)
    assert "kfree.cold" in [x.function for x in u]
    assert m == []
    u, m = objdiff.judge([manifest.CodeExpect(["kfree"], "x", ["mm/slab.o"])],
                         diffs + [_diff("mm/slab.o", present=["kmalloc"])])
    assert [(x.function, x.reason) for x in m] == [("kfree", "absent")]


def test_a_declaration_that_requires_symbols_is_judged_only_where_they_are_set(tmp_path):
    """The memcg entry's mm/kasan/common.o declaration holds under
    KASAN_SW_TAGS with SLAB (arm64).  In x86's generic-KASAN configuration
    the same object is rebuilt at that patch and keeps its code: judged
    there, the declaration would be stale and fail the patch; it applies
    only where the .config sets what it requires."""
    from cli.checks import code_expectations
    subject = "memcg: Convert object cgroups from struct page to struct slab"
    exps, _ = code_expectations()(subject)
    kasan = [e for e in exps if "mm/kasan/common.o" in e.objects]
    assert kasan and kasan[0].requires == ["KASAN_SW_TAGS", "SLAB"]
    same = [_diff("mm/kasan/common.o", present=["__kasan_kmalloc", "kasan_init_slab_obj"])]
    generic = tmp_path / "generic.config"
    generic.write_text("CONFIG_SLUB=y\nCONFIG_KASAN=y\nCONFIG_KASAN_GENERIC=y\n"
                       "# CONFIG_KASAN_SW_TAGS is not set\n")
    # judged everywhere (the planted defect: no filter), the x86 build fails
    _, m = objdiff.judge(exps, same, patch=subject)
    assert any(objdiff.stale(f.to_dict()) for f in m)
    # judged where it holds: not in the generic configuration
    _, m = objdiff.judge(objdiff.applicable(exps, generic), same, patch=subject)
    assert not any(objdiff.stale(f.to_dict()) for f in m) and m == []
    sw_tags_slab = tmp_path / "sw.config"
    sw_tags_slab.write_text("CONFIG_SLAB=y\nCONFIG_KASAN=y\nCONFIG_KASAN_SW_TAGS=y\n")
    assert kasan[0] in objdiff.applicable(exps, sw_tags_slab)
    assert kasan[0] not in objdiff.applicable(exps, generic)
    assert objdiff.applicable(None, generic) is None
    # a declaration without requires holds in every configuration
    plain = [manifest.CodeExpect(["kfree"], "x")]
    assert objdiff.applicable(plain, generic) == plain
    # requires must be Kconfig symbols
    with pytest.raises(SlabconvError, match="requires"):
        manifest._code({"functions": ["f"], "requires": ["CONFIG_X"], "why": "w"}, "entry a")
    assert manifest._code({"functions": ["f"], "requires": ["SLAB"], "why": "w"},
                          "entry a").requires == ["SLAB"]


def test_manifest_code_table(tmp_path):
    root = Path(__file__).resolve().parent.parent / "cocci"
    base = """
[series]
subject = "s"
seed_author = "a <a@b>"
date = "2021-10-04T14:45:48+01:00"

[[entry]]
id = "one"
subject = "mm/slub: Convert print_page_info() to print_slab_info()"
message = "m"
  [[entry.step]]
  rule = "rules/rename_fn.cocci"
  files = ["mm/slub.c"]
  defines = { from = "print_page_info", to = "print_slab_info" }
  [[entry.expect]]
  absent = "print_page_info"
  in = ["mm/slub.c"]
CODE
[[entry]]
id = "two"
subject = "mm: Other"
message = "m"
  [[entry.step]]
  rule = "rules/rename_fn.cocci"
  files = ["mm/slub.c"]
  defines = { from = "a", to = "b" }
  [[entry.expect]]
  absent = "a"
  in = ["mm/slub.c"]
"""
    # rule paths are relative to the manifest's directory: a cocci/ of its
    # own whose rules/ is the checkout's
    (tmp_path / "cocci").mkdir()
    (tmp_path / "cocci" / "rules").symlink_to(root / "rules")
    p = tmp_path / "cocci" / "series.toml"
    try:
        p.write_text(base.replace("CODE", """  [[entry.code]]
  functions = ["slab_err", "print_*"]
  objects = "mm/slub.o"
  why = "a   reason"
"""))
        s = manifest.load(p)
        [c] = s.entries[0].code
        assert (c.functions, c.objects, c.why) == (["slab_err", "print_*"], ["mm/slub.o"],
                                                   "a reason")
        assert s.entries[1].code == []
        e = objdiff.entry_for_subject(s, "[PATCH 1/2] mm/slub: Convert print_page_info() "
                                         "to  print_slab_info()")
        assert e.id == "one" and objdiff.renames_of(e) == {"print_page_info": "print_slab_info"}
        assert objdiff.entry_for_subject(s, "planted defect") is None
        for bad in ('functions = ["x"]\n', 'why = "w"\n', 'functions = []\nwhy = "w"\n',
                    'functions = ["x"]\nwhy = "w"\nfiles = ["y"]\n'):
            p.write_text(base.replace("CODE", "  [[entry.code]]\n" + bad))
            with pytest.raises(SlabconvError) as ei:
                manifest.load(p)
            assert ei.value.exit_code == 2
    finally:
        p.unlink(missing_ok=True)


def test_the_real_manifest_maps_every_patch_by_subject():
    root = Path(__file__).resolve().parent.parent
    s = manifest.load(root / "cocci" / "series.toml")
    idx = objdiff.entries_by_subject(s)
    series = root / "generated-patches" / "5.10"
    subjects = []
    for f in sorted(series.glob("0[0-9][0-9][0-9]-*.patch")):
        if f.name.startswith("0000-"):
            continue
        text = f.read_text(errors="replace")
        head = text.split("\n\n", 1)[0]
        import email
        subj = email.message_from_string(head + "\n\n").get("Subject", "")
        subjects.append(" ".join(subj.split()))
    assert subjects and all(objdiff.entry_for_subject(s, x, idx) is not None for x in subjects)


# --- bloat-o-meter ---------------------------------------------------------

CAPTURED = """add/remove: 1/2 grow/shrink: 2/1 up/down: 40/-120 (-80)
Function                                     old     new   delta
print_slab_info                                -      24     +24
kfree                                        300     312     +12
slab_err                                      96     100      +4
__slab_free                                  620     600     -20
print_page_info.cold                          40       -     -40
print_page_info                               60       -     -60
Total: Before=12000, After=11920, chg -0.67%
"""


def test_bloat_parser_on_captured_output():
    [b] = objdiff.parse_bloat(CAPTURED)
    assert (b.add, b.remove, b.grow, b.shrink, b.up, b.down, b.net) == (1, 2, 2, 1, 40, -120, -80)
    assert b.category == "Function" and b.before_total == 12000 and b.after_total == 11920
    assert b.rows[0] == ("print_slab_info", None, 24, 24)
    assert b.rows[-1] == ("print_page_info", 60, None, -60)
    assert b.text() == CAPTURED.splitlines()[0]
    three = objdiff.parse_bloat(CAPTURED.replace("Function", "Data") + CAPTURED)
    assert [x.category for x in three] == ["Data", "Function"]
    assert objdiff.parse_bloat("nothing") == []


def _bloat_script():
    """The 5.10 tree (fetched into the cache if it has none)."""
    import fetch
    return Path(fetch.get_tree("5.10").path)


@pytest.mark.slow
def test_bloat_runs_the_kernel_script(tmp_path):
    a = cc(tmp_path, "a", PLAIN_FN)
    b = cc(tmp_path, "b", PLAIN_FN.replace('{\n\tuse("objects"',
                                           '{\n\tif ((unsigned long)p->ch & 1)\n'
                                           '\t\tp = (void *)(p->ch - 1);\n\tuse("objects"'))
    r = objdiff.bloat(a, b, _bloat_script())
    d = objdiff.compare(a, b)
    assert r.grow == 1 and r.up == d.changed[0].delta == r.net
    assert r.rows == [("objects", d.changed[0].old_size, d.changed[0].new_size,
                       d.changed[0].delta)]
    same = objdiff.bloat(a, a, _bloat_script())
    assert (same.add, same.remove, same.grow, same.shrink, same.net) == (0, 0, 0, 0, 0)
    with pytest.raises(SlabconvError):
        objdiff.bloat(a, tmp_path / "missing.o", _bloat_script())


def test_check_patch_judges_every_object(tmp_path):
    a = cc(tmp_path, "before/mm", PLAIN_FN, fname="slub.c")
    cc(tmp_path, "before/mm", BASE, fname="usercopy.c")
    cc(tmp_path, "after/mm", PLAIN_FN.replace("p->flags & 7", "p->flags & 5"), fname="slub.c")
    cc(tmp_path, "after/mm", BASE, fname="usercopy.c")
    objs = ["mm/slub.o", "mm/usercopy.o"]
    r = objdiff.check_patch(tmp_path / "before", tmp_path / "after", objs, None, patch="7/58 x")
    assert not r.ok and [f.function for f in r.unexpected] == ["other"]
    assert [d.object for d in r.changed] == ["mm/slub.o"]
    assert "1 unexpected" in r.text().splitlines()[0]
    assert "UNEXPECTED 7/58 x: mm/slub.o: other: code changed, +0 bytes" in r.text()
    ok = objdiff.check_patch(tmp_path / "before", tmp_path / "after", objs,
                             [manifest.CodeExpect(["other"], "the mask")], patch="7/58 x")
    assert ok.ok and ok.to_dict()["objects_changed"] == 1
    assert a.is_file()


def test_quick_path_sees_a_code_change_and_ignores_data_it_does_not_read(tmp_path):
    src = PLAIN_FN + "int table_a[4] = { 1, 2, 3, 4 };\n"
    a = cc(tmp_path, "a", src)
    b = cc(tmp_path, "b", src.replace("{ 1, 2, 3, 4 }", "{ 1, 2, 3, 5 }"))
    d = objdiff.compare(a, b)
    assert d.equal and d.quick                     # .data differs, no code reads it
    c = cc(tmp_path, "c", src.replace("p->flags & 7", "p->flags & 6"))
    d = objdiff.compare(a, c)
    assert not d.quick and [x.function for x in d.changed] == ["other"]


ISRA = HEAD + """
__attribute__((noinline)) static long setup_object(struct page *page, long s, void *object)
{
	use("setup", s);
	return (long)object + s;
}

long allocate(long s, void *o, struct page *page)
{
	return setup_object(page, s, o) + setup_object(page, s + 1, o);
}
"""


def test_a_clone_that_is_no_longer_needed_is_the_same_function(tmp_path):
    a = cc(tmp_path, "a", ISRA)
    assert any(n.startswith("setup_object.") for n in objdiff.function_code(a)), \
        "gcc made no clone of setup_object() (unused parameter)"
    b = cc(tmp_path, "b", ISRA.replace("setup_object(struct page *page, long s",
                                       "setup_object(long s").replace(
        "setup_object(page, ", "setup_object("))
    assert "setup_object" in objdiff.function_code(b)
    d = objdiff.compare(a, b)
    assert d.equal, d.text(excerpts=True)
    [(old, new)] = d.found_renames.items()
    assert old.startswith("setup_object.") and new == "setup_object"


def test_notes_name_calls_gained_and_helpers_inlined(tmp_path):
    a = cc(tmp_path, "a", PLAIN_FN)
    b = cc(tmp_path, "b", PLAIN_FN.replace('use("objects", p->inuse);',
                                           'use("objects", p->inuse);\n\tuse("more", 1);').replace(
        "return p->flags & 7;", "use(\"x\", 2);\n\treturn p->flags & 7;"))
    d = objdiff.compare(a, b)
    notes = {c.function: c.notes for c in d.changed}
    assert notes["other"] == ["now calls use"]
    assert "(now calls use)" in d.text(excerpts=True)


def test_a_declared_change_that_no_longer_happens_fails_the_patch():
    diffs = [_diff("mm/slub.o", changed=[("kfree", 4)], present=["kmalloc"])]
    u, m = objdiff.judge([manifest.CodeExpect(["kfree"], "x"),
                          manifest.CodeExpect(["kmalloc"], "stale")], diffs, patch="p")
    pc = objdiff.PatchCode("p", diffs, u, m)
    assert not pc.ok, pc.text()
    assert [f.function for f in pc.stale] == ["kmalloc"] and "STALE" in pc.text()
    # named objects compared, none has the function: stale too
    u, m = objdiff.judge([manifest.CodeExpect(["kfree"], "x"),
                          manifest.CodeExpect(["gone"], "renamed", ["mm/slub.o"])], diffs)
    assert not objdiff.PatchCode("p", diffs, u, m).ok
    # no object named and no compared object has it: not judged in this configuration
    u, m = objdiff.judge([manifest.CodeExpect(["kfree"], "x"),
                          manifest.CodeExpect(["slab_only"], "SLAB")], diffs)
    assert [x.reason for x in m] == ["absent"] and objdiff.PatchCode("p", diffs, u, m).ok
