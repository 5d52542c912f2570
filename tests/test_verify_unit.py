"""verify: log parsing, warning keys, multiset comparison, config checks,
tree snapshots (no kernel build here: see test_verify_real.py)."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from base.log import SlabconvError  # noqa: E402
from verify import kbuild, kconfig, sparse, tree  # noqa: E402
from verify import warnings as W  # noqa: E402

GCC_LOG = """\
  CC      mm/usercopy.o
In file included from ../include/linux/slab.h:12,
                 from ../mm/usercopy.c:14:
../include/linux/gfp.h: In function 'gfp_zone':
../include/linux/gfp.h:437:13: warning: unused variable 'tmp' [-Wunused-variable]
  437 |         int tmp;
      |             ^~~
../mm/usercopy.c: In function 'check_stack_object':
../mm/usercopy.c:33:15: warning: unused variable 'x' [-Wunused-variable]
   33 |         int x;
      |             ^
../mm/usercopy.c:40:9: note: in expansion of macro 'FOO'
../mm/usercopy.c: At top level:
../mm/usercopy.c:99:12: warning: 'helper' defined but not used [-Wunused-function]
  CC      mm/slub.o
/abs/src/mm/slub.c: In function \u2018kmem_cache_free\u2019:
/abs/src/mm/slub.c:3100:5: warning: \u2018s\u2019 may be used uninitialized [-Wmaybe-uninitialized]
mm/slub.o: warning: objtool: ___slab_alloc()+0x1a3: unreachable instruction
WARNING: modpost: vmlinux.o(.text+0x1234): Section mismatch in reference from foo to bar
ld: warning: arch/x86/boot/compressed/vmlinux has a LOAD segment with RWX permissions
../mm/slub.c:200:1: error: expected ';' before '}' token
"""


def test_parse_gcc_log():
    ws = W.parse_log(GCC_LOG, roots=["/abs/src"])
    got = [(w.tool, w.file, w.line, w.col, w.function, w.flag, w.message) for w in ws]
    assert got == [
        ("gcc", "include/linux/gfp.h", 437, 13, "gfp_zone", "-Wunused-variable",
         "unused variable 'tmp' [-Wunused-variable]"),
        ("gcc", "mm/usercopy.c", 33, 15, "check_stack_object", "-Wunused-variable",
         "unused variable 'x' [-Wunused-variable]"),
        ("gcc", "mm/usercopy.c", 99, 12, None, "-Wunused-function",
         "'helper' defined but not used [-Wunused-function]"),
        ("gcc", "mm/slub.c", 3100, 5, "kmem_cache_free", "-Wmaybe-uninitialized",
         "'s' may be used uninitialized [-Wmaybe-uninitialized]"),
        ("objtool", "mm/slub.o", 0, 0, None, None,
         "___slab_alloc()+0x?: unreachable instruction"),
        ("modpost", "", 0, 0, None, None,
         "vmlinux.o(.text+0x?): Section mismatch in reference from foo to bar"),
        ("ld", "", 0, 0, None, None,
         "arch/x86/boot/compressed/vmlinux has a LOAD segment with RWX permissions"),
    ]
    errs = [w for w in W.parse_log(GCC_LOG, include_errors=True) if w.kind == "error"]
    assert [(e.file, e.line) for e in errs] == [("mm/slub.c", 200)]


def test_normalise_path():
    roots = ["/c/base/tree", "/c/base/tree/o"]
    assert W.normalise_path("../mm/slub.c", roots) == "mm/slub.c"
    assert W.normalise_path("/c/base/tree/mm/slub.c", roots) == "mm/slub.c"
    assert W.normalise_path("/c/base/tree/o/include/generated/autoconf.h",
                            roots) == "include/generated/autoconf.h"
    assert W.normalise_path("./include/generated/bounds.h", roots) == "include/generated/bounds.h"
    assert W.normalise_path("../arch/x86/include/asm/../../../../include/linux/a.h",
                            roots) == "include/linux/a.h"
    assert W.normalise_path("/usr/include/stdio.h", roots) == "/usr/include/stdio.h"


def _ws(text, roots=()):
    return W.parse_log(text, roots)


def test_moved_warning_is_not_new():
    base = _ws("../mm/a.c: In function 'f':\n"
               "../mm/a.c:10:5: warning: unused variable 'x' [-Wunused-variable]\n")
    moved = _ws("/other/tree/mm/a.c: In function 'f':\n"
                "/other/tree/mm/a.c:250:9: warning: unused variable 'x' [-Wunused-variable]\n",
                roots=["/other/tree"])
    assert W.new_warnings(base, moved) == []


def test_genuinely_new_warning():
    base = _ws("../mm/a.c: In function 'f':\n"
               "../mm/a.c:10:5: warning: unused variable 'x' [-Wunused-variable]\n")
    patched = _ws("../mm/a.c: In function 'f':\n"
                  "../mm/a.c:11:5: warning: unused variable 'x' [-Wunused-variable]\n"
                  "../mm/a.c:12:5: warning: unused variable 'y' [-Wunused-variable]\n"
                  "../mm/a.c: In function 'g':\n"
                  "../mm/a.c:40:5: warning: unused variable 'x' [-Wunused-variable]\n")
    new = W.new_warnings(base, patched)
    # same message in another function, another message: both new
    assert [(w.function, w.message.split(" [")[0], w.line) for w in new] == [
        ("f", "unused variable 'y'", 12), ("g", "unused variable 'x'", 40)]
    assert W.gone_warnings(base, patched) == []


def test_multiset_counts():
    one = "../include/linux/h.h:3:1: warning: boo [-Wboo]\n"
    base = _ws("  CC  a.o\n" + one + "  CC  b.o\n" + one)
    three = _ws(("  CC  a.o\n" + one) * 3)
    assert len(W.new_warnings(base, three)) == 1
    assert len(W.new_warnings(base, three[:2])) == 0
    assert len(W.gone_warnings(base, three[:1])) == 1


def test_tool_warnings_keyed_apart_from_gcc():
    a = W.parse_log("mm/slub.o: warning: objtool: f()+0x10: call without frame pointer\n")
    b = W.parse_log("mm/slub.o: warning: objtool: f()+0x28: call without frame pointer\n")
    assert W.new_warnings(a, b) == []


SPARSE_LOG = """\
  CC      mm/usercopy.o
../mm/usercopy.c:33:15: warning: unused variable 'x' [-Wunused-variable]
  CHECK   ../mm/usercopy.c
../mm/usercopy.c:280:14: warning: incorrect type in assignment (different address spaces)
../mm/usercopy.c:280:14:    expected char *p
../mm/usercopy.c:280:14:    got char [noderef] __user *from
../mm/usercopy.c:300:1: error: bad constant expression
  CHECK   ../mm/slub.c
../mm/slub.c:2270:13: warning: context imbalance in 'deactivate_slab' - unexpected unlock
../mm/slub.c:4000:9: warning: context imbalance in '__kmem_cache_shrink' - wrong count at exit
make[1]: Leaving directory '/x/o'
"""


def test_parse_sparse_output():
    ws = W.parse_sparse(sparse.sparse_section(SPARSE_LOG))
    assert [(w.file, w.line, w.kind, w.message) for w in ws] == [
        ("mm/usercopy.c", 280, "warning",
         "incorrect type in assignment (different address spaces)"),
        ("mm/usercopy.c", 300, "error", "bad constant expression"),
        ("mm/slub.c", 2270, "warning", "context imbalance in 'deactivate_slab' - unexpected unlock"),
        ("mm/slub.c", 4000, "warning",
         "context imbalance in '__kmem_cache_shrink' - wrong count at exit"),
    ]
    assert ws[0].details == ["expected char *p", "got char [noderef] __user *from"]
    # the gcc warning before CHECK is not a sparse warning
    assert all(w.tool == "sparse" for w in ws)


@pytest.mark.parametrize("log,ok", [
    (SPARSE_LOG, True),                                   # both files checked
    (SPARSE_LOG.replace("  CHECK   ../mm/slub.c\n", ""), False),   # slub.c never checked
    ("  CC      mm/usercopy.o\n  CC      mm/slub.o\n", False),      # sparse did not run
], ids=["checked", "one-unchecked", "none-checked"])
def test_sparse_that_exits_0_without_checking_a_file_fails(tmp_path, monkeypatch, log, ok):
    src, out = tmp_path / "src", tmp_path / "src" / "o"
    (src / "mm").mkdir(parents=True)
    out.mkdir()
    (out / ".config").write_text("CONFIG_SLUB=y\n")
    for f in ("mm/usercopy.c", "mm/slub.c"):
        (src / f).write_text("")

    def make_that_exits_0(cmd, *, env, log_path, label, **kw):
        log_path.write_text(log)
        return 0, 0, 0.1
    monkeypatch.setattr(kbuild, "run_make", make_that_exits_0)
    r = sparse.run_sparse(src, out, ["mm/usercopy.c", "mm/slub.c"])
    assert r.ok is ok, r.error_excerpt
    if not ok:
        assert "sparse did not check" in r.error_excerpt and "mm/slub.c" in r.error_excerpt
        assert str(r.log) in r.error_excerpt
        assert not sparse.compare(r, r).ok


def test_sparse_key_ignores_lines():
    base = W.parse_sparse("../mm/slub.c:2270:13: warning: context imbalance in 'f' - "
                          "unexpected unlock\n")
    moved = W.parse_sparse("../mm/slub.c:2301:13: warning: context imbalance in 'f' - "
                           "unexpected unlock\n")
    extra = moved + W.parse_sparse("../mm/slub.c:99:1: warning: symbol 'x' was not "
                                   "declared. Should it be static?\n")
    assert W.new_warnings(base, moved) == []
    assert [w.line for w in W.new_warnings(base, extra)] == [99]


def test_sparse_check_files(tmp_path):
    (tmp_path / "mm").mkdir()
    (tmp_path / "mm/a.c").write_text("")
    (tmp_path / "mm/a.h").write_text("")
    assert sparse.check_files(tmp_path, ["./mm/a.c", " "]) == ["mm/a.c"]
    with pytest.raises(SlabconvError, match="not a .c file"):
        sparse.check_files(tmp_path, ["mm/a.h"])
    with pytest.raises(SlabconvError, match="does not exist"):
        sparse.check_files(tmp_path, ["mm/b.c"])


def test_error_excerpt():
    log = ("  CC      mm/a.o\n../mm/a.c: In function 'f':\n"
           "../mm/a.c:5:2: error: 'y' undeclared (first use in this function)\n"
           "    5 |  y = 1;\n      |  ^\n"
           "make[2]: *** [../scripts/Makefile.build:280: mm/a.o] Error 1\n")
    ex = kbuild.error_excerpt(log)
    assert ex.splitlines()[0] == "../mm/a.c: In function 'f':"
    assert "../mm/a.c:5:2: error: 'y' undeclared" in ex
    assert "make[2]" not in ex


def test_collect_warnings_from_diag_files(tmp_path):
    out = tmp_path / "o"
    (out / "mm").mkdir(parents=True)
    (out / "mm/a.o.diag-slabconv").write_text(
        "../mm/a.c: In function 'f':\n../mm/a.c:3:3: warning: unused variable 'v' "
        "[-Wunused-variable]\n")
    (out / "mm/b.o.diag-slabconv").write_text("")
    # the log repeats a.o's warning (already captured) and has one of its own
    log = ("  CC      mm/a.o\n../mm/a.c: In function 'f':\n../mm/a.c:3:3: warning: unused "
           "variable 'v' [-Wunused-variable]\n  HOSTCC  scripts/x\n"
           "../scripts/x.c:1:1: warning: host thing [-Wfoo]\n")
    ws = kbuild.collect_warnings(tmp_path, out, log)
    assert [(w.file, w.message.split(" [")[0]) for w in ws] == [
        ("mm/a.c", "unused variable 'v'"), ("scripts/x.c", "host thing")]


def test_ccwrap_keeps_diagnostics(tmp_path):
    c = tmp_path / "w.c"
    c.write_text("int f(void) { int unused; return 0; }\n")
    import subprocess
    cp = subprocess.run(["sh", str(kbuild.CCWRAP), "gcc", "-Wall", "-c", "-o",
                         str(tmp_path / "w.o"), str(c)], stderr=subprocess.PIPE, text=True,
                        env=dict(os.environ, LC_ALL="C"))
    assert cp.returncode == 0
    assert "unused variable 'unused'" in cp.stderr
    diag = (tmp_path / "w.o.diag-slabconv").read_text()
    assert diag == cp.stderr
    # a failing compile leaves no diagnostics file and keeps the exit status
    c.write_text("int f(void) { return }\n")
    cp = subprocess.run(["sh", str(kbuild.CCWRAP), "gcc", "-c", "-o", str(tmp_path / "w.o"),
                         str(c)], stderr=subprocess.PIPE, text=True)
    assert cp.returncode != 0 and "error" in cp.stderr
    assert not (tmp_path / "w.o.diag-slabconv").exists()
    # not an object: passed through untouched
    cp = subprocess.run(["sh", str(kbuild.CCWRAP), "gcc", "--version"],
                        stdout=subprocess.PIPE, text=True)
    assert cp.returncode == 0 and "gcc" in cp.stdout


def test_kconfig_requested_and_missing():
    req = kconfig.requested_values(["base-x86_64", "slub"])
    assert req["CONFIG_SLUB"] == "y" and req["CONFIG_SERIAL_8250_CONSOLE"] == "y"
    actual = kconfig.parse_config("CONFIG_SLUB=y\n# CONFIG_SLUB_DEBUG is not set\n"
                                  "CONFIG_NR_CPUS=8\n")
    bad = kconfig.missing_options({"CONFIG_SLUB": "y", "CONFIG_SLUB_DEBUG": "y",
                                   "CONFIG_MEMCG": "y", "CONFIG_SLOB": "n",
                                   "CONFIG_NR_CPUS": "8"}, actual)
    assert bad == {"CONFIG_SLUB_DEBUG": ("y", "n"), "CONFIG_MEMCG": ("y", "n")}


def test_kconfig_names():
    assert kconfig.config_fragments("slub") == ["base-x86_64", "slub", "faultinject",
                                                "failslab", "slub-kunit"]
    assert kconfig.config_fragments("slob") == ["base-x86_64", "slob", "faultinject"]
    assert kconfig.config_arch("slub") == "x86_64"
    with pytest.raises(SlabconvError, match="unknown kernel config"):
        kconfig.config_fragments("nope")
    with pytest.raises(SlabconvError, match="no config fragment"):
        kconfig.fragment_path("nope")


def test_tree_overlay_never_writes_through_links(tmp_path):
    a = tmp_path / "a"
    (a / "mm").mkdir(parents=True)
    (a / "mm/x.c").write_text("old\n")
    (a / "mm/same.c").write_text("same\n")
    (a / "mm/gone.c").write_text("gone\n")
    (a / ".git").mkdir()
    (a / ".git/HEAD").write_text("ref\n")
    b = tmp_path / "b"
    (b / "mm").mkdir(parents=True)
    (b / "mm/x.c").write_text("new\n")
    (b / "mm/same.c").write_text("same\n")
    (b / "mm/new.c").write_text("added\n")
    snap = tree.snapshot(a, tmp_path / "snap")
    assert not (snap / ".git").exists()
    assert os.stat(snap / "mm/x.c").st_ino == os.stat(a / "mm/x.c").st_ino
    changed = tree.overlay(snap, b, tmp_path / "pat")
    assert changed == ["mm/gone.c", "mm/new.c", "mm/x.c"]
    pat = tmp_path / "pat"
    assert (pat / "mm/x.c").read_text() == "new\n"
    assert (a / "mm/x.c").read_text() == "old\n"          # original untouched
    assert (snap / "mm/x.c").read_text() == "old\n"
    assert not (pat / "mm/gone.c").exists() and (a / "mm/gone.c").exists()
    assert os.stat(pat / "mm/same.c").st_ino == os.stat(a / "mm/same.c").st_ino
    assert tree.diff_trees(pat, b) == ([], [], [])


def test_tree_identity_changes(tmp_path):
    (tmp_path / "f").write_text("1")
    i1 = tree.identity(tmp_path)
    assert i1 == tree.identity(tmp_path) and i1.startswith("stat:")
    os.utime(tmp_path / "f", ns=(1, 1))
    assert tree.identity(tmp_path) != i1


def test_collect_warnings_interleaved_log(tmp_path):
    """-j2: another compiler's "In function" line precedes fair.c's warning in
    the log; the per-object file is right, and the log adds nothing."""
    out = tmp_path / "o"
    (out / "k").mkdir(parents=True)
    (out / "k/fair.o.diag-slabconv").write_text(
        "../k/fair.c:8653:13: warning: 'u' defined but not used [-Wunused-function]\n")
    log = ("  CC      mm/a.o\n  CC      k/fair.o\n../mm/a.c: In function 'f':\n"
           "../k/fair.c:8653:13: warning: 'u' defined but not used [-Wunused-function]\n")
    ws = kbuild.collect_warnings(tmp_path, out, log)
    assert [(w.file, w.function) for w in ws] == [("k/fair.c", None)]


def test_cc_wrapper_lives_in_the_cache_named_by_its_content(cache):
    """CC= (part of every build key and of kbuild's .cmd files) must not name
    the clone's own path: a clone elsewhere reuses the builds."""
    cc = kbuild.compiler(use_ccache=False)
    assert str(kbuild.CCWRAP.parent) not in cc
    path = Path(cc.split()[1])
    assert path.is_file() and path.read_bytes() == kbuild.CCWRAP.read_bytes()
    assert str(path).startswith(str(cache)) and cc == kbuild.compiler(use_ccache=False)


def _fake_kernel_tree(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 0\n")
    (root / "Kconfig").write_text("")
    (root / "mm").mkdir()
    (root / "mm" / "slub.c").write_text("int x;\n")
    return root


@pytest.mark.parametrize("ok", [True, False])
def test_check_build_without_a_baseline_builds_the_patched_tree_alone(tmp_path, monkeypatch, ok):
    """check_build(baseline=False): one build (of the patched tree, from
    scratch), no baseline, no warning or sparse gate, and the result and its
    report say that the gates were not run; a failing build fails it."""
    import json
    import verify
    base = _fake_kernel_tree(tmp_path / "base")
    pat = _fake_kernel_tree(tmp_path / "pat")
    built = []

    def fake_build(src, out, **kw):
        built.append((Path(src), kw.get("label")))
        Path(out).mkdir(parents=True, exist_ok=True)
        return kbuild.BuildResult(ok=ok, seconds=1.0, warnings=[], log=Path(out) / "log",
                                  image=Path(out) / "bzImage" if ok else None, out=Path(out),
                                  returncode=0 if ok else 2,
                                  error_excerpt="" if ok else "mm/slub.c:1: error: planted")

    monkeypatch.setattr(kbuild, "build", fake_build)
    monkeypatch.setattr(kconfig, "configure_named", lambda *a, **k: None)
    r = verify.check_build(base, pat, tmp_path / "out", config="slub", baseline_id="b1",
                           sparse_files=["mm/slub.c"], baseline=False)
    assert [label for _, label in built] == ["patched"]
    assert built[0][0].parent.name.startswith("patched-slub-")
    assert (built[0][0] / "mm" / "slub.c").is_file()            # a snapshot of the patched tree
    assert r.baseline is None and r.sparse is None and r.new_warnings == []
    assert not list((tmp_path / "out").glob("base-*"))
    assert "warning gates were not run" in r.summary
    rep = json.loads(r.report.read_text())
    assert rep["baseline"] is None and rep["gates"] == "not run: no baseline build"
    assert r.ok is ok
    if not ok:
        assert "the patched tree does not build" in r.problems[0]
        assert "planted" in r.summary


def test_the_progress_line_counts_against_the_last_cold_build(tmp_path, monkeypatch):
    """A build from scratch records how many objects it compiled for its
    .config; the next one of the same .config says N of ~M and the time left."""
    from verify import kbuild
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "o"
    out.mkdir()
    (out / ".config").write_text("CONFIG_SLUB=y\n")
    assert kbuild.expected_objects(out) is None
    assert kbuild.progress_line("base-slub", 40, 100.0, None) == (
        "base-slub: 40 objects compiled, 1m40s (no total yet: the first build of this "
        "configuration)")
    kbuild.record_objects(out, 2000)
    assert kbuild.expected_objects(out) == 2000
    assert kbuild.progress_line("patched-slub", 500, 150.0, 2000) == (
        "patched-slub: 500 of ~2000 objects compiled, 2m30s, about 7m30s left")
    assert kbuild.progress_line("patched-slub", 7, 30.0, None, cold=False) == (
        "patched-slub: 7 objects compiled, 30s")                  # incremental: make decides
    (out / ".config").write_text("CONFIG_SLAB=y\n")           # another configuration
    assert kbuild.expected_objects(out) is None


def test_a_first_build_counts_against_the_tables_figure(tmp_path, monkeypatch):
    """With no build of this .config counted on this machine, a build from
    scratch counts against verify/configs.toml's `objects`; once one is
    counted, against that."""
    from verify import configtable, kbuild
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DISTCC_HOSTS", raising=False)
    out = tmp_path / "src" / "o"
    out.mkdir(parents=True)
    (out / ".config").write_text("CONFIG_SLUB=y\n")
    totals = []

    def fake_make(cmd, *, env, log_path, total=None, **kw):
        totals.append(total)
        log_path.write_text("")
        return 0, 26, 1.0
    monkeypatch.setattr(kbuild, "run_make", fake_make)
    assert configtable.get("slub").objects > 0
    kbuild.build(tmp_path / "src", out, quiet=True, estimate=configtable.get("slub").objects)
    assert totals == [configtable.get("slub").objects]
    for f in out.iterdir():                         # a build from scratch again
        if f.name != ".config":
            f.unlink()
    kbuild.build(tmp_path / "src", out, quiet=True, estimate=configtable.get("slub").objects)
    assert totals[-1] == 26                          # this machine's own count now


def test_only_a_whole_kernel_build_records_its_object_count(tmp_path, monkeypatch):
    """`prepare` or a few objects built in a new O= directory are not the
    count the progress line of a kernel build counts against."""
    from verify import kbuild
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DISTCC_HOSTS", raising=False)
    out = tmp_path / "src" / "o"
    out.mkdir(parents=True)
    (out / ".config").write_text("CONFIG_SLUB=y\n")

    def fake_make(cmd, *, env, log_path, **kw):
        log_path.write_text("")
        return 0, 26, 1.0
    monkeypatch.setattr(kbuild, "run_make", fake_make)
    kbuild.build(tmp_path / "src", out, targets=("prepare",), quiet=True)
    kbuild.build(tmp_path / "src", out, targets=("mm/slub.o",), quiet=True)
    assert kbuild.expected_objects(out) is None
    kbuild.build(tmp_path / "src", out, quiet=True)
    assert kbuild.expected_objects(out) == 26


def test_jobs_sets_the_build_parallelism(monkeypatch, tmp_path):
    from verify import kbuild
    monkeypatch.delenv("SLABCONV_JOBS", raising=False)
    assert "-j2" in kbuild.make_args(tmp_path, tmp_path / "o", "x86_64", 2)
    monkeypatch.setenv("SLABCONV_JOBS", "7")
    assert "-j7" in kbuild.make_args(tmp_path, tmp_path / "o", "x86_64", 2)
    monkeypatch.setenv("SLABCONV_JOBS", "many")
    with pytest.raises(SlabconvError, match="JOBS="):
        kbuild.make_args(tmp_path, tmp_path / "o", "x86_64", 2)
