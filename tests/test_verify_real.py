"""verify on the real kernel tree: the gates must catch planted defects.

A "patched" tree is the pristine 5.10 tree with
  * mm/usercopy.c: an unused variable in check_heap_object() (a compiler
    warning) and an __user pointer assigned to a plain pointer (a sparse-only
    defect: gcc is silent);
  * kernel/sched/fair.c: three comment lines at the top, which move the
    baseline's own warning ('update_nohz_stats' defined but not used) down
    three lines: it must NOT count as new;
  * mm/slub.c: the same three lines, which move its own sparse warnings
    (context imbalance) down three lines: not new either.
Only single objects are built (mm/usercopy.o, kernel/sched/fair.o) after a
shared `make prepare`, so the whole file takes a few minutes on 2 cores.

The trees are hard-link snapshots (verify.tree): planted files are replaced by
new files, never written through a link, and the pristine tree is never
modified.  Nothing here skips: a missing tool (gcc, make, sparse) or kernel
is a failure.
"""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from base import paths  # noqa: E402
from base.log import SlabconvError  # noqa: E402
from base.proc import require_tool  # noqa: E402
from verify import kbuild, kconfig, sparse, tree  # noqa: E402
from verify import warnings as W  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]

OBJS = ("mm/usercopy.o", "kernel/sched/fair.o")
UNUSED = "slabconv_planted_unused"
HEAP_ANCHOR = "\tstruct page *page;\n\n\tif (!virt_addr_valid(ptr))"
SPARSE_DEFECT = """
void slabconv_planted_sparse(const void __user *u);
void slabconv_planted_sparse(const void __user *u)
{
\tconst char *p = u;\t/* sparse: different address spaces; gcc: fine */

\t(void)p;
}
"""
MOVE = "/* slabconv: three lines\n * that only move code\n */\n"


def _pristine() -> Path:
    env = os.environ.get("SLABCONV_TEST_SRC")
    if env:
        return Path(env).resolve()
    from regen.source import resolve
    return resolve(paths.DEFAULT_KERNEL, None).tree


def _replace(path: Path, text: str) -> None:
    """A new file in place of a (hard-linked) one: never write through a link."""
    path.unlink()
    path.write_text(text)


def plant(src: Path, pristine: Path) -> None:
    uc = (pristine / "mm/usercopy.c").read_text()
    assert HEAP_ANCHOR in uc, "mm/usercopy.c changed: update the planted defect"
    uc = uc.replace(HEAP_ANCHOR, HEAP_ANCHOR.replace(
        "\n\n", f"\n\tint {UNUSED};\n\n", 1), 1) + SPARSE_DEFECT
    _replace(src / "mm/usercopy.c", uc)
    for f in ("kernel/sched/fair.c", "mm/slub.c"):
        text = (pristine / f).read_text()
        i = text.index("#include")
        _replace(src / f, text[:i] + MOVE + text[i:])


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    for tool, pkg in (("gcc", "gcc"), ("make", "make"), ("sparse", "sparse")):
        require_tool(tool, pkg)                 # missing: a failure, not a skip
    pristine = _pristine()
    assert (pristine / "mm/usercopy.c").is_file(), pristine
    root = tmp_path_factory.mktemp("verify-real")
    planted = tree.snapshot(pristine, root / "planted")       # the caller's patched tree
    plant(planted, pristine)
    assert (pristine / "mm/usercopy.c").read_text().count(UNUSED) == 0

    base = tree.snapshot(pristine, root / "base" / "tree")
    kconfig.configure_named(base, base / "o", "slub")
    r = kbuild.build(base, base / "o", targets=("prepare",), label="test prepare")
    assert r.ok, r.failure_message()

    pat = root / "pat" / "tree"
    changed = tree.overlay(base, planted, pat, skip=("o",))
    subprocess.run(["cp", "-a", str(base / "o"), str(pat / "o")], check=True)
    tree.relocate(pat / "o", base, pat)
    return SimpleNamespace(pristine=pristine, root=root, planted=planted, base=base, pat=pat,
                           changed=changed)


def test_overlay_holds_exactly_the_planted_files(work):
    assert work.changed == ["kernel/sched/fair.c", "mm/slub.c", "mm/usercopy.c"]
    st_p = os.stat(work.pristine / "mm/slab.c")
    assert os.stat(work.pat / "mm/slab.c").st_ino == st_p.st_ino       # shared, untouched
    assert os.stat(work.pat / "mm/usercopy.c").st_ino != os.stat(
        work.pristine / "mm/usercopy.c").st_ino
    assert UNUSED not in (work.pristine / "mm/usercopy.c").read_text()


def test_compiler_gate_catches_planted_unused_variable(work):
    b = kbuild.build(work.base, work.base / "o", targets=OBJS, label="test baseline")
    p = kbuild.build(work.pat, work.pat / "o", targets=OBJS, label="test patched")
    assert b.ok, b.failure_message()
    assert p.ok, p.failure_message()
    assert b.image is None and p.image is None
    # the baseline's own warning is seen in both, three lines apart: not new
    fb = [w for w in b.warnings if w.file == "kernel/sched/fair.c"]
    fp = [w for w in p.warnings if w.file == "kernel/sched/fair.c"]
    assert fb and len(fb) == len(fp)
    assert [w.line + 3 for w in fb] == [w.line for w in fp]
    new = W.new_warnings(b.warnings, p.warnings)
    assert [(w.file, w.function, w.flag) for w in new] == [
        ("mm/usercopy.c", "check_heap_object", "-Wunused-variable")], W.summarise(new)
    assert UNUSED in new[0].message
    # a second build recompiles nothing and still reports the same warnings
    again = kbuild.build(work.pat, work.pat / "o", targets=OBJS, label="test patched again")
    assert again.ok and again.compiled == 0
    assert sorted(w.key for w in again.warnings) == sorted(w.key for w in p.warnings)


def test_sparse_gate_catches_planted_address_space_defect(work):
    res = sparse.gate(work.base, work.base / "o", work.pat, work.pat / "o", ["mm/usercopy.c"])
    assert res.baseline.ok and res.patched.ok
    assert [(w.file, w.kind, w.message) for w in res.new] == [
        ("mm/usercopy.c", "warning", "incorrect type in initializer (different address spaces)")]
    assert any("__user" in d for d in res.new[0].details)
    assert not res.ok
    # sparse output only: the planted gcc warning is not a sparse warning
    assert not any(UNUSED in w.message for w in res.patched.warnings)
    # the other way round (the planted tree as the baseline): the planted
    # warning is gone, nothing is new
    back = sparse.compare(res.patched, res.baseline)
    assert back.ok and not back.new, [w.format() for w in back.new]
    assert [(w.file, w.message) for w in back.gone] == [
        ("mm/usercopy.c", "incorrect type in initializer (different address spaces)")]


def test_sparse_gate_on_slub_baseline_warnings_are_not_new(work):
    """mm/slub.c has sparse warnings of its own on 5.10 (context imbalance);
    in the planted tree the same warnings are three lines further down (the
    three comment lines): two different runs, and none of it is new."""
    base = sparse.run_sparse(work.base, work.base / "o", ["mm/slub.c"], label="test slub")
    pat = sparse.run_sparse(work.pat, work.pat / "o", ["mm/slub.c"], label="test slub moved")
    assert base.ok and pat.ok
    assert sum("context imbalance" in w.message for w in base.warnings) >= 3
    assert [w.line + 3 for w in base.warnings] == [w.line for w in pat.warnings]
    res = sparse.compare(base, pat)
    assert res.ok and res.new == [] and res.gone == [], [w.format() for w in res.new]


def test_kconfig_reports_options_that_kconfig_dropped(work, tmp_path):
    dot = (work.base / "o" / ".config").read_text()
    assert "CONFIG_SLUB=y" in dot and "CONFIG_SLUB_DEBUG=y" in dot
    frag = tmp_path / "dropped.config"
    # MEMCG_SWAP depends on SWAP, which needs BLOCK: not in this tiny config
    frag.write_text("CONFIG_MEMCG_SWAP=y\n")
    with pytest.raises(SlabconvError) as e:
        kconfig.configure(work.base, tmp_path / "o",
                          kconfig.config_fragments("slub") + [str(frag)])
    assert "CONFIG_MEMCG_SWAP" in str(e.value)
    assert "CONFIG_SLUB:" not in str(e.value)


def test_build_failure_names_the_error(work, tmp_path):
    broken = tree.snapshot(work.planted, tmp_path / "broken-src")
    text = (work.pristine / "mm/usercopy.c").read_text()
    _replace(broken / "mm/usercopy.c", text.replace(HEAP_ANCHOR, HEAP_ANCHOR.replace(
        "\n\n", "\n\tundeclared_thing = 1;\n\n", 1), 1))
    snap = tmp_path / "broken" / "tree"
    tree.overlay(work.base, broken, snap, skip=("o",))
    subprocess.run(["cp", "-a", str(work.base / "o"), str(snap / "o")], check=True)
    tree.relocate(snap / "o", work.base, snap)
    r = kbuild.build(snap, snap / "o", targets=("mm/usercopy.o",), label="test broken")
    assert not r.ok and r.returncode != 0
    assert "mm/usercopy.c:" in r.error_excerpt and "error:" in r.error_excerpt
    assert "undeclared_thing" in r.error_excerpt
    with pytest.raises(SlabconvError, match="undeclared_thing"):
        r.raise_for_failure()


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "verify", *map(str, args)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_check_build_cli_end_to_end(work):
    """python3 -m verify on the caller's two trees: exit 1 with both planted
    defects reported; then the pristine tree against itself: exit 0, with the
    baseline build reused."""
    out_root = work.root / "cli"
    common = ["--baseline", work.pristine, "--config", "slub", "--sparse-files", "mm/usercopy.c",
              "--targets", ",".join(OBJS), "--out-root", out_root]
    r = _cli(*common, "--patched", work.planted, "--json", work.root / "planted.json")
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((work.root / "planted.json").read_text())
    assert rep["ok"] is False and rep["patched"]["ok"] is True
    assert rep["changed_files"] == ["kernel/sched/fair.c", "mm/slub.c", "mm/usercopy.c"]
    assert [(w["file"], w["function"]) for w in rep["new_warnings"]] == [
        ("mm/usercopy.c", "check_heap_object")]
    assert [w["message"] for w in rep["sparse"]["new"]] == [
        "incorrect type in initializer (different address spaces)"]
    assert "NEW mm/usercopy.c:" in r.stdout and "FAIL" in r.stdout
    assert Path(rep["patched_out"], "mm/usercopy.o").is_file()
    assert rep["patched_reused"] is False

    # the same patched tree again: nothing is built, and the gates judge the
    # kept result exactly as before
    r = _cli(*common, "--patched", work.planted, "--json", work.root / "again.json")
    assert r.returncode == 1, r.stdout + r.stderr
    again = json.loads((work.root / "again.json").read_text())
    assert again["patched_reused"] is True and "reusing the build" in r.stderr + r.stdout
    assert again["new_warnings"] == rep["new_warnings"]
    assert again["sparse"]["new"] == rep["sparse"]["new"]

    # the pristine tree: the kept build is brought up to date in place (the
    # three files go back), and the planted warnings are gone with them
    r = _cli(*common, "--patched", work.pristine, "--json", work.root / "clean.json")
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((work.root / "clean.json").read_text())
    assert rep["ok"] is True and rep["baseline_reused"] is True
    assert rep["patched_reused"] is False and "3 file(s) changed since" in r.stderr + r.stdout
    assert rep["changed_files"] == [] and rep["new_warnings"] == []
    assert rep["sparse"]["new"] == []
