"""verify.bisect without a kernel: which targets a patch needs, .cmd
dependency lists, materialising commits into a hard-link snapshot, and the
per-patch loop (stop at the first failure, warnings per patch, resuming)
with a fake `make` (see test_verify_bisect_real.py for the real kernel)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import verify  # noqa: E402
from base.log import SlabconvError  # noqa: E402
from verify import bisect, kbuild, kconfig, tree  # noqa: E402


# --- file -> target selection ---------------------------------------------

@pytest.fixture
def out(tmp_path):
    o = tmp_path / "o"
    for obj in ("mm/slub.o", "mm/usercopy.o", "mm/percpu.o", "lib/xz/xz_dec_stream.o",
                "scripts/mod/modpost.o"):
        (o / obj).parent.mkdir(parents=True, exist_ok=True)
        (o / obj).write_text("")
    return o


FULL = ["bzImage", "modules_prepare"]
DEPS = {
    "mm/slub.c": {"mm/slub.o"},
    "mm/usercopy.c": {"mm/usercopy.o"},
    "mm/percpu.c": {"mm/percpu.o"},
    "mm/percpu-vm.c": {"mm/percpu.o"},                       # #included by percpu.c
    "lib/xz/xz_dec_stream.c": {"lib/xz/xz_dec_stream.o",
                               "arch/x86/boot/compressed/misc.o"},
    "arch/x86/kernel/asm-offsets.c": {"arch/x86/kernel/asm-offsets.s"},
    "include/linux/mm.h": {"mm/slub.o", "mm/usercopy.o"},
}


@pytest.mark.parametrize("files, kind, targets, not_built", [
    (["mm/slub.c"], "objects", ["mm/slub.o"], []),
    (["mm/usercopy.c", "mm/slub.c"], "objects", ["mm/slub.o", "mm/usercopy.o"], []),
    (["mm/slab.c"], "none", [], ["mm/slab.c"]),                      # SLAB under SLUB
    (["mm/slab.c", "mm/slub.c"], "objects", ["mm/slub.o"], ["mm/slab.c"]),
    ([], "none", [], []),
    (["include/linux/mm.h"], "full", FULL, []),
    (["mm/slab.h", "mm/slub.c"], "full", FULL, []),           # a header: every includer
    (["include/linux/never_included.h"], "full", FULL, []),
    (["mm/Makefile"], "full", FULL, []),
    (["mm/Kconfig"], "full", FULL, []),
    (["arch/x86/lib/memcpy_64.S"], "full", FULL, []),
    (["mm/percpu-vm.c"], "full", FULL, []),                   # included by percpu.c
    (["lib/xz/xz_dec_stream.c"], "full", FULL, []),           # also in the boot code
    (["arch/x86/kernel/asm-offsets.c"], "full", FULL, []),    # compiled to a .s
    (["scripts/mod/modpost.c"], "full", FULL, []),            # a host program
    (["mm/slab.c", "mm/slab.h"], "full", FULL, ["mm/slab.c"]),
])
def test_plan_build(out, files, kind, targets, not_built):
    p = bisect.plan_build(files, out, DEPS)
    assert (p.kind, p.targets, p.not_built) == (kind, targets, not_built), p.reason
    assert p.reason


def test_plan_build_without_dependency_index(out):
    """No index (a .cmd file missing): a .c with its .o in O= is still its object."""
    assert bisect.plan_build(["mm/slub.c"], out).targets == ["mm/slub.o"]
    assert bisect.plan_build(["mm/percpu-vm.c"], out).kind == "none"


def test_plan_build_reason_names_the_file(out):
    p = bisect.plan_build(["mm/slub.c", "include/linux/mm.h", "mm/slab.h"], out, DEPS)
    assert p.kind == "full" and p.reason.startswith("include/linux/mm.h: not a .c file (+1 more)")
    p = bisect.plan_build(["mm/percpu-vm.c"], out, DEPS)
    assert "also compiled into mm/percpu.o" in p.reason


CMD = """\
cmd_mm/slub.o := sh /x/verify/ccwrap.sh ccache gcc -Wp,-MMD,mm/.slub.o.d ... -c -o mm/slub.o ../mm/slub.c

source_mm/slub.o := ../mm/slub.c

deps_mm/slub.o := \\
    $(wildcard include/config/slub/debug.h) \\
  ../include/linux/kconfig.h \\
  include/generated/autoconf.h \\
  ../arch/x86/include/asm/../../../../include/linux/mm.h \\
  ../mm/slab.h \\
  ../mm/slub.c \\

mm/slub.o: $(deps_mm/slub.o)

$(deps_mm/slub.o):
"""


def test_parse_cmd_deps():
    target, deps = bisect.parse_cmd_deps(CMD)
    assert target == "mm/slub.o"
    assert deps == ["include/linux/kconfig.h", "include/generated/autoconf.h",
                    "include/linux/mm.h", "mm/slab.h", "mm/slub.c"]
    assert bisect.parse_cmd_deps("cmd_x := true\n") == (None, [])


def test_dep_index(tmp_path):
    o = tmp_path / "o"
    (o / "mm").mkdir(parents=True)
    (o / "mm" / ".slub.o.cmd").write_text(CMD)
    (o / "mm" / ".percpu.o.cmd").write_text(
        "deps_mm/percpu.o := \\\n  ../mm/percpu.c \\\n  ../mm/percpu-vm.c \\\n  ../mm/slab.h \\\n\n")
    (o / "mm" / "slub.o").write_text("")
    (o / "mm" / "not-a-cmd.c").write_text("deps_x := y\n")
    idx = bisect.dep_index(o)
    assert idx["mm/slab.h"] == {"mm/slub.o", "mm/percpu.o"}
    assert idx["mm/percpu-vm.c"] == {"mm/percpu.o"}
    assert idx["mm/slub.c"] == {"mm/slub.o"}
    assert "x" not in idx and "y" not in idx
    assert bisect.plan_build(["mm/percpu-vm.c"], o, idx).kind == "full"


def test_needs_link():
    a = (frozenset({"kfree", "ksize"}), frozenset({"memcpy"}))
    assert not bisect.needs_link(a, a)
    assert not bisect.needs_link(a, (frozenset({"kfree", "ksize", "new"}), frozenset()))
    assert bisect.needs_link(a, (frozenset({"kfree"}), frozenset({"memcpy"})))       # gone
    assert bisect.needs_link(a, (a[0], frozenset({"memcpy", "undefined_fn"})))        # new ref
    assert bisect.needs_link(None, a)


def test_symbols_of_a_real_object(tmp_path):
    c = tmp_path / "x.c"
    c.write_text("extern int ext(void);\nstatic int hidden(void) { return 1; }\n"
                 "int visible(void) { return ext() + hidden(); }\n")
    subprocess.run(["gcc", "-c", "-o", str(tmp_path / "x.o"), str(c)], check=True)
    defined, undefined = bisect._symbols(tmp_path / "x.o")
    assert "visible" in defined and "hidden" not in defined
    assert undefined == {"ext"}
    assert bisect._symbols(tmp_path / "missing.o") is None


# --- a small git series ---------------------------------------------------

def git(repo, *args, input=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_AUTHOR_DATE="2021-10-04T00:00:00Z",
               GIT_COMMITTER_DATE="2021-10-04T00:00:00Z", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, text=True,
                          capture_output=True, input=input).stdout.strip()


def commit(repo, msg):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD")


A_C = "int a(void)\n{\n\treturn 1;\n}\n"
B_C = "int b(void)\n{\n\treturn 2;\n}\n"
H_H = "#define H 1\n"


def make_series(tmp_path, **changes):
    """A 'kernel' tree: the pristine copy (like the packaged one) and a git
    repository of it: the baseline commit, tagged; the tests add patches."""
    pristine = tmp_path / "pristine"
    files = {"Makefile": "all:\n", "Kconfig": "", "mm/Makefile": "obj-y := a.o b.o\n",
             "mm/a.c": A_C, "mm/b.c": B_C, "mm/slab.c": "int s;\n", "include/h.h": H_H,
             "scripts/run.sh": "#!/bin/sh\n"}
    files.update(changes)
    for rel, text in files.items():
        (pristine / rel).parent.mkdir(parents=True, exist_ok=True)
        (pristine / rel).write_text(text)
    os.chmod(pristine / "scripts/run.sh", 0o755)
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(pristine), str(repo)], check=True)
    git(repo, "init", "-q", "-b", "main")
    base = commit(repo, "Baseline")
    git(repo, "tag", bisect.BASE_REF)
    return pristine, repo, base


@pytest.fixture
def series(tmp_path):
    return make_series(tmp_path)


def test_repo_series_delta_and_materialise(series, tmp_path):
    pristine, repo, base = series
    (repo / "mm/a.c").write_text(A_C.replace("1", "10"))
    (repo / "mm/new.c").write_text("int n;\n")
    c1 = commit(repo, "mm: Change a, add new")
    (repo / "mm/b.c").unlink()
    os.symlink("a.c", repo / "mm/link.c")
    os.chmod(repo / "mm/new.c", 0o755)
    c2 = commit(repo, "mm: Remove b, link")
    r = bisect.Repo(repo)
    assert r.series(bisect.BASE_REF, "HEAD") == [(c1, "mm: Change a, add new"),
                                                (c2, "mm: Remove b, link")]
    d1, d2 = r.delta(base, c1), r.delta(base, c2)
    assert sorted(d1) == ["mm/a.c", "mm/new.c"]
    assert d2["mm/b.c"] == ("000000", None) and d2["mm/link.c"][0] == "120000"
    assert d2["mm/new.c"][0] == "100755"
    assert r.touched(base, c2) == ["mm/a.c", "mm/b.c", "mm/link.c", "mm/new.c"]
    r.check_baseline(base, pristine, r.touched(base, c2))

    snap = tree.snapshot(pristine, tmp_path / "snap")
    bisect.materialise(r, snap, pristine, sorted(d1), d1)
    assert (snap / "mm/a.c").read_text() == A_C.replace("1", "10")
    assert (snap / "mm/new.c").read_text() == "int n;\n"
    assert os.stat(snap / "mm/b.c").st_ino == os.stat(pristine / "mm/b.c").st_ino
    assert os.stat(snap / "mm/a.c").st_ino != os.stat(pristine / "mm/a.c").st_ino
    assert (pristine / "mm/a.c").read_text() == A_C                     # never written through
    files = sorted(p for p in set(d1) | set(d2) if d1.get(p) != d2.get(p))
    assert files == ["mm/b.c", "mm/link.c", "mm/new.c"]
    bisect.materialise(r, snap, pristine, files, d2)
    assert not (snap / "mm/b.c").exists()
    assert os.readlink(snap / "mm/link.c") == "a.c"
    assert os.stat(snap / "mm/new.c").st_mode & 0o111
    # back to the baseline: the baseline's content as new files, mtime now
    t = os.stat(pristine / "mm/a.c").st_mtime_ns
    bisect.materialise(r, snap, pristine, sorted(set(d2)), {})
    assert (snap / "mm/a.c").read_text() == A_C and (snap / "mm/b.c").read_text() == B_C
    assert os.stat(snap / "mm/b.c").st_ino != os.stat(pristine / "mm/b.c").st_ino
    assert os.stat(snap / "mm/a.c").st_mtime_ns > t
    assert not (snap / "mm/new.c").exists() and not (snap / "mm/link.c").exists()
    assert tree.diff_trees(pristine, snap) == ([], [], [])


def test_repo_rejects_non_linear_and_empty_series_and_wrong_baseline(series, tmp_path):
    pristine, repo, base = series
    with pytest.raises(SlabconvError, match="no commits"):
        bisect.Repo(repo).series(bisect.BASE_REF, "HEAD")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "mm/a.c").write_text("side\n")
    commit(repo, "side")
    git(repo, "checkout", "-q", "main")
    (repo / "mm/b.c").write_text("main\n")
    commit(repo, "main")
    git(repo, "merge", "-q", "--no-edit", "side")
    with pytest.raises(SlabconvError, match="not a linear series") as e:
        bisect.Repo(repo).series(bisect.BASE_REF, "HEAD")
    assert e.value.exit_code == 2
    other = tree.snapshot(pristine, tmp_path / "other")
    (other / "mm/a.c").unlink()
    (other / "mm/a.c").write_text("different\n")
    with pytest.raises(SlabconvError, match="is not commit") as e:
        bisect.Repo(repo).check_baseline(base, other, ["mm/a.c", "mm/b.c"])
    assert "mm/a.c" in str(e.value) and "mm/b.c" not in str(e.value)


# --- the loop, with a fake make ---------------------------------------------

class FakeKernel:
    """Stands in for verify._baseline and kbuild.build: every mm/*.c is an
    object; a .c containing SYNTAX does not compile; one containing WARN
    gets a -Wunused-variable warning; include/h.h is included by every .c
    (a full build recompiles all of them when it is newer).  A compile that
    passes writes the object and its .cmd file; one that fails deletes the
    object and leaves the .cmd file, as kbuild does."""

    def __init__(self, monkeypatch):
        self.builds = []               # (label, targets, compiled objects)
        monkeypatch.setattr(verify, "_baseline", self.baseline)
        monkeypatch.setattr(kbuild, "build", self.build)
        monkeypatch.setattr(kconfig, "configure_named", lambda *a, **k: None)
        monkeypatch.setattr(bisect, "_symbols", lambda obj: (frozenset(), frozenset()))

    def baseline(self, src, base_dir, key, config, arch, targets, jobs):
        stamp = base_dir / "build.json"
        snap = base_dir / "tree"
        if stamp.is_file():
            return self.result(snap / "o", True, [], 0), True
        tree.snapshot(src, snap)
        (snap / "o").mkdir()
        (snap / "o" / ".config").write_text("CONFIG_SLUB=y\n")
        res = self.build(snap, snap / "o", targets=targets, label="baseline",
                         log=snap / "o" / "build.log")
        stamp.write_text("{}")
        return res, False

    @staticmethod
    def result(out, ok, compiled, rc, log=None, error=""):
        return kbuild.BuildResult(ok=ok, seconds=0.01, warnings=[], log=log or out / "log",
                                  image=None, error_excerpt=error, out=out, returncode=rc,
                                  compiled=len(compiled))

    def build(self, src, out, *, targets=(), jobs=2, arch="x86_64", label=None, log=None,
              quiet=False, **kw):
        src, out = Path(src), Path(out)
        header = os.stat(src / "include/h.h").st_mtime_ns
        if any(t.endswith(".o") for t in targets):
            objs = [t for t in targets if t.endswith(".o")]
        else:
            objs = [f"mm/{c.stem}.o" for c in sorted((src / "mm").glob("*.c"))
                    if c.name != "slab.c"]                     # "SLUB": mm/slab.c not built
        compiled, lines = [], []
        for obj in objs:
            c, o = src / (obj[:-2] + ".c"), out / obj
            if not c.exists():
                continue
            newest = max(os.stat(c).st_mtime_ns, header)
            if o.exists() and os.stat(o).st_mtime_ns >= newest:
                continue
            compiled.append(obj)
            lines.append(f"  CC      {obj}")
            text = c.read_text()
            diag = Path(str(o) + kbuild.DIAG_SUFFIX)
            if "SYNTAX" in text:
                o.unlink(missing_ok=True)
                diag.unlink(missing_ok=True)
                lines.append(f"../{obj[:-2]}.c:2:1: error: expected ';' before '}}' token")
                Path(log).write_text("\n".join(lines) + "\n")
                self.builds.append((label, list(targets), compiled))
                return self.result(out, False, compiled, 2, Path(log),
                                   kbuild.error_excerpt("\n".join(lines)))
            o.parent.mkdir(parents=True, exist_ok=True)
            o.write_text("obj")
            (o.parent / f".{o.name}.cmd").write_text(f"cmd_{obj} := gcc\n")   # kept on a failure
            diag.write_text(f"../{obj[:-2]}.c: In function 'f':\n../{obj[:-2]}.c:3:6: warning: "
                            "unused variable 'w' [-Wunused-variable]\n" if "WARN" in text else "")
        Path(log).write_text("\n".join(lines) + "\n")
        self.builds.append((label, list(targets), compiled))
        return self.result(out, True, compiled, 0, Path(log))


def patch(repo, msg, files=None):
    for rel, text in (files or {}).items():
        p = repo / rel
        if text is None:
            p.unlink()
        else:
            p.write_text(text)
    return commit(repo, msg)


def run(repo, pristine, out_root, configs=("slub",), **kw):
    return bisect.check_series(repo, out_root, configs, baseline_src=pristine,
                               report_dir=out_root / "report", **kw)


def test_loop_builds_each_patch_incrementally_and_resumes(series, tmp_path, monkeypatch, capsys):
    pristine, repo, base = series
    fake = FakeKernel(monkeypatch)
    patch(repo, "mm: Change a", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "h: Change the header", {"include/h.h": "#define H 2\n"})
    patch(repo, "mm: Change slab (not built)", {"mm/slab.c": "int s2;\n"})
    patch(repo, "mm: Change a and b", {"mm/a.c": A_C, "mm/b.c": B_C.replace("2", "3")})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root)
    assert r.ok, r.summary
    c = r.configs[0]
    assert [(p.index, p.action, p.targets) for p in c.patches] == [
        (1, "objects", ["mm/a.o"]), (2, "full", FULL), (3, "none", []),
        (4, "objects", ["mm/a.o", "mm/b.o"])]
    assert c.patches[2].not_built == ["mm/slab.c"]
    # the baseline, then exactly what each patch touches
    assert [b[2] for b in fake.builds] == [
        ["mm/a.o", "mm/b.o"], ["mm/a.o"], ["mm/a.o", "mm/b.o"], ["mm/a.o", "mm/b.o"]]
    err = capsys.readouterr().err
    assert "[bisect] slub [1/4] mm: Change a " in err and "mm/a.o" in err
    assert "[bisect] slub [3/4] mm: Change slab (not built) " in err and "nothing to build" in err
    rep = json.loads(r.report.read_text())
    assert rep["ok"] and rep["configs"][0]["patches_checked"] == 4
    assert (out_root / "report" / "bisect-summary.txt").read_text().startswith("bisect: OK")
    assert "total (patches)" in r.summary and "full" in r.summary

    # the same series again: every patch is cached, nothing is built
    n = len(fake.builds)
    r2 = run(repo, pristine, out_root)
    assert r2.ok and [p.action for p in r2.configs[0].patches] == ["cached"] * 4
    assert len(fake.builds) == n
    assert r2.configs[0].baseline_reused

    # one more patch on top: only that one is built
    patch(repo, "mm: Change b again", {"mm/b.c": B_C})
    r3 = run(repo, pristine, out_root)
    assert [p.action for p in r3.configs[0].patches] == ["cached"] * 4 + ["objects"]
    assert fake.builds[-1][2] == ["mm/b.o"] and len(fake.builds) == n + 1


def test_loop_names_the_first_failing_patch_and_stops(series, tmp_path, monkeypatch):
    pristine, repo, base = series
    fake = FakeKernel(monkeypatch)
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "mm: Break b", {"mm/b.c": B_C + "SYNTAX\n"})
    patch(repo, "mm: Fix b", {"mm/b.c": B_C})
    patch(repo, "mm: Break a", {"mm/a.c": "SYNTAX\n"})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root, configs=("slub", "slub-nodebug"))
    assert not r.ok
    for c in r.configs:
        f = c.first_failure
        assert (f.index, f.subject) == (2, "mm: Break b")
        assert len(c.patches) == 2                      # stopped there
        assert "mm/b.c:2:1: error: expected ';'" in f.error_excerpt
        assert f.problem.startswith("does not build (make mm/b.o")
    assert r.problems == [
        'patch 2/4 "mm: Break b" fails in config slub: ' + r.configs[0].patches[1].problem,
        'patch 2/4 "mm: Break b" fails in config slub-nodebug: '
        + r.configs[1].patches[1].problem]
    assert "first failing patch 2/4: mm: Break b" in r.summary
    assert "error: expected ';'" in r.summary
    # the rerun: patch 1 cached, patch 2 rebuilt (and still failing)
    n = len(fake.builds)
    r2 = run(repo, pristine, out_root, configs=("slub",))
    assert [p.action for p in r2.configs[0].patches] == ["cached", "objects"]
    assert not r2.configs[0].patches[1].ok and len(fake.builds) == n + 1


def test_loop_rebuilds_what_a_failed_build_left_behind(series, tmp_path, monkeypatch):
    """A header patch that fails leaves objects unbuilt; the fixed series'
    next run must rebuild them even though its own change is one .c file."""
    pristine, repo, base = series
    fake = FakeKernel(monkeypatch)
    patch(repo, "h: Change the header; a breaks", {"include/h.h": "#define H 3\n", "mm/a.c": "SYNTAX\n"})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root)
    assert not r.ok and r.configs[0].first_failure.index == 1
    git(repo, "reset", "-q", "--hard", bisect.BASE_REF)
    patch(repo, "h: Change the header", {"include/h.h": "#define H 3\n"})
    r = run(repo, pristine, out_root)
    assert r.ok, r.summary
    p = r.configs[0].patches[0]
    assert p.files == ["include/h.h"] and p.rebuilt_files == ["include/h.h", "mm/a.c"]
    assert p.action == "full"
    assert sorted(fake.builds[-1][2]) == ["mm/a.o", "mm/b.o"]


def test_loop_gates_new_warnings_per_patch(series, tmp_path, monkeypatch):
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    (repo / "mm/c.c").write_text("int c;\n")
    patch(repo, "mm: Add c", {"mm/Makefile": "obj-y := a.o b.o c.o\n"})
    patch(repo, "mm: Warn in c", {"mm/c.c": "int c;\nWARN\n"})
    patch(repo, "mm: Change a", {"mm/a.c": A_C.replace("1", "11")})
    r = run(repo, pristine, tmp_path / "builds")
    c = r.configs[0]
    assert [p.action for p in c.patches] == ["full", "objects"]
    f = c.first_failure
    assert not r.ok and (f.index, f.subject) == (2, "mm: Warn in c")
    assert [(w.file, w.function, w.flag) for w in f.new_warnings] == [
        ("mm/c.c", "f", "-Wunused-variable")]
    assert "1 new compiler warning(s): mm/c.c:3:6: warning: unused variable 'w'" in f.problem
    assert "NEW mm/c.c:3:6" in r.summary


def test_loop_warning_of_the_previous_state_is_not_new(tmp_path, monkeypatch):
    pristine, repo, base = make_series(tmp_path, **{"mm/b.c": B_C + "WARN\n"})
    FakeKernel(monkeypatch)
    patch(repo, "mm: Change b, keep its warning", {"mm/b.c": "int b2;\nWARN\n"})
    patch(repo, "mm: Warn in a too", {"mm/a.c": A_C + "WARN\n"})
    patch(repo, "mm: Change a, keep its warning", {"mm/a.c": "int a;\nWARN\n"})
    r = run(repo, pristine, tmp_path / "builds")
    c = r.configs[0]
    assert [(p.index, p.ok) for p in c.patches] == [(1, True), (2, False)]
    assert [w.file for w in c.first_failure.new_warnings] == ["mm/a.c"]


def test_check_series_rejects_bad_input(series, tmp_path, monkeypatch):
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    patch(repo, "mm: Change a", {"mm/a.c": A_C.replace("1", "11")})
    with pytest.raises(SlabconvError, match="unknown kernel config") as e:
        run(repo, pristine, tmp_path / "b", configs=("slub", "nope"))
    assert e.value.exit_code == 2
    with pytest.raises(SlabconvError, match="no commit 'nope'"):
        run(repo, pristine, tmp_path / "b", head="nope")


def test_plan_build_object_deleted_by_a_failed_compile(tmp_path):
    """make deletes an object whose compile failed; its .cmd file still says
    the configuration builds it."""
    o = tmp_path / "o"
    (o / "mm").mkdir(parents=True)
    assert bisect.plan_build(["mm/slub.c"], o).kind == "none"
    (o / "mm" / ".slub.o.cmd").write_text("cmd_mm/slub.o := gcc\n")
    assert bisect.plan_build(["mm/slub.c"], o).targets == ["mm/slub.o"]


def test_cli_bad_input_exit_code(series, tmp_path):
    pristine, repo, base = series
    cli = [sys.executable, "-m", "verify.bisect", "--repo", str(repo), "--baseline-src",
           str(pristine), "--out-root", str(tmp_path / "b")]
    root = Path(__file__).resolve().parent.parent
    cp = subprocess.run(cli + ["--configs", "slub,nope"], cwd=root, capture_output=True,
                        text=True)
    assert cp.returncode == 2 and "unknown kernel config 'nope'" in cp.stderr
    cp = subprocess.run(cli, cwd=root, capture_output=True, text=True)    # no patches yet
    assert cp.returncode == 2 and "slabconv: error: no commits between" in cp.stderr


def test_a_failing_bisect_fails_the_verdict(tmp_path):
    """A failing patch fails verify's verdict (and so the exit code), named
    in its problems and its JSON report; the build's own result stays ok."""
    from verify.gates import Gates
    ok = kbuild.BuildResult(ok=True, seconds=1, warnings=[], log=tmp_path / "log", image=None)
    r = verify.VerifyResult(ok=True, config="slub", baseline=ok, patched=ok, new_warnings=[],
                            report=tmp_path / "report.json")
    bad = bisect.PatchResult(index=2, commit="c2", subject="mm: Break", files=["mm/slub.c"],
                             action="objects", ok=False, problem="does not build (make mm/slub.o)",
                             error_excerpt="mm/slub.c:1:1: error: x")
    b = bisect.BisectResult(ok=False, commits=[("c1", "mm: Fine"), ("c2", "mm: Break")],
                            configs=[bisect.ConfigResult(config="slub-nodebug", n=2, patches=[
                                bisect.PatchResult(index=1, commit="c1", subject="mm: Fine",
                                                   files=[], action="cached", ok=True), bad])],
                            report=tmp_path / "bisect.json")
    b.summary = bisect.summary_text(b)
    g = Gates("5.10", "test", 2, builds=[r], bisect=b, not_run={
        c: "not asked for" for c in ("checkpatch", "messages", "whitespace", "nullcheck",
                                     "compiled-lines", "field-users", "residue", "layout")})
    assert not g.ok and r.ok
    assert g.problems == ['patch 2/2 "mm: Break" fails in config slub-nodebug: '
                          'does not build (make mm/slub.o)']
    assert g.status()["per-patch"] == "FAIL" and g.status()["builds"] == "ok"
    rep = json.loads(g.write(tmp_path / "verify.json").read_text())
    assert rep["ok"] is False and rep["bisect"]["ok"] is False
    assert [c["config"] for c in rep["bisect"]["configs"]] == ["slub-nodebug"]
    assert "per-patch builds: slub-nodebug FAIL 2/2" in g.summary()
    assert "first failing patch 2/2: mm: Break" in b.summary and "cached" in b.summary


def test_baseline_exported_from_the_repository(series, tmp_path, monkeypatch):
    """Without baseline_src the base commit is exported (git archive) once."""
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    patch(repo, "mm: Change a", {"mm/a.c": A_C.replace("1", "11")})
    out_root = tmp_path / "builds"
    r = bisect.check_series(repo, out_root, ["slub"])
    assert r.ok, r.summary
    src = out_root / f"bisect-src-{base[:12]}"
    assert (src / "mm/a.c").read_text() == A_C and (src / ".slabconv-complete").is_file()
    assert r.report == out_root / "bisect.json"


def test_old_build_cleanup_keeps_to_its_own_config(tmp_path):
    """'slub' must not count (or delete) slub-nodebug's builds; an old
    baseline takes its patched, bisect and variability directories with it."""
    root = tmp_path / "builds"
    for i, name in enumerate(["base-slub-%012x" % n for n in range(4)]
                             + ["base-slub-nodebug-%012x" % n for n in range(4)]):
        (root / name).mkdir(parents=True)
        os.utime(root / name, (1000 + i, 1000 + i))
    for name in ("var-slub-000000000000-0123456789", "var-slub-000000000003-0123456789",
                 "var-slub-nodebug-000000000000-0123456789"):
        (root / name).mkdir()
    keep = root / ("base-slub-%012x" % 3)
    old = verify._old_builds(root, "slub", keep)
    assert [p.name for p in old] == [
        "base-slub-000000000000", "patched-slub-000000000000", "bisect-slub-000000000000",
        "var-kconfig-slub-000000000000", "var-slub-000000000000-0123456789"]
    old = verify._old_builds(root, "slub-nodebug", root / ("base-slub-nodebug-%012x" % 3))
    assert [p.name for p in old][::4] == ["base-slub-nodebug-000000000000",
                                          "var-slub-nodebug-000000000000-0123456789"]


# --- runtime bisect: every patch's kernel booted ----------------------------

class FakeGuests:
    """Stands in for the kernel link, the guest module and the boot matrix: a
    kernel whose mm/a.c says OOPS oopses in the guest."""

    def __init__(self, monkeypatch):
        from boot import matrix, module
        from verify import runtime
        self.kept, self.booted = [], []
        monkeypatch.setattr(runtime.Kernels, "keep", lambda kern, *a: self.keep(kern, *a))
        self.matrix = matrix

        def fake_run(specs, out_root, jobs=2, **kw):
            results = []
            for s in specs:
                self.booted.append(s.name)
                bad = "OOPS" in (s.image.parent / "a.c").read_text()
                log = Path(out_root) / s.name / "console.log"
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text("[    1.0] booting\n" + (
                    "[    2.0] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
                    "[    2.0] RIP: 0010:___slab_alloc+0x1c/0x6f0\n" if bad else "ok\n"))
                b = type("B", (), dict(passed=not bad, seconds=5.0, console_log=log,
                                       failures=["oops: BUG: kernel NULL pointer dereference"]
                                       if bad else [], counts="2 passed", timed_out=False))()
                g = matrix.GuestResult(s, Path(out_root) / s.name, boot=b)
                results.append(g)
            return matrix.MatrixResult(results, 1.0, jobs, Path(out_root))
        monkeypatch.setattr(matrix, "run", fake_run)

    def keep(self, kernels, snap, o, sha, label):
        d = kernels.dir(sha)
        d.mkdir(parents=True, exist_ok=True)
        (d / "bzImage").write_text("kernel")
        (d / "a.c").write_text((Path(snap) / "mm/a.c").read_text())
        (d / ".complete").write_text(sha)
        self.kept.append(sha)
        return None


def guest(config, image, build_dir, src, name, modules):
    from boot.matrix import GuestSpec
    return GuestSpec(name=name, arch="x86_64", image=Path(image), build_dir=Path(build_dir),
                     src=Path(src), config=config, options={"modules": modules})


def test_runtime_bisect_boots_every_patch_and_names_the_one_that_oopses(series, tmp_path,
                                                                        monkeypatch):
    """A patch that builds but crashes at run time fails the per-patch check
    with its number, subject and console excerpt; a patch with nothing to
    build is not booted again; a rerun boots nothing."""
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    g = FakeGuests(monkeypatch)
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "mm: Wrap a NULL-able page", {"mm/a.c": A_C + "/* OOPS */\n"})
    patch(repo, "mm: Change slab (not built)", {"mm/slab.c": "int s2;\n"})
    patch(repo, "mm: Unwrap it", {"mm/a.c": A_C})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    c = r.configs[0]
    assert not r.ok and not c.ok and c.runtime
    assert [p.index for p in c.boot_failures] == [2, 3]      # 3 has 2's kernel
    assert c.patches[2].boot["same_as"] == 2
    assert [p.boot["verdict"] for p in c.patches] == ["pass", "FAIL", "FAIL", "pass"]
    assert len(g.booted) == 3 and len(g.kept) == 3
    assert r.problems[0].startswith('patch 2/4 "mm: Wrap a NULL-able page" builds but its '
                                    'kernel fails at run time in config slub: FAIL: oops')
    assert "BUG: kernel NULL pointer dereference" in c.patches[1].boot["excerpt"]
    assert "runtime: 2/3 kernels passed" in r.summary
    assert "| [    2.0] BUG: kernel NULL pointer dereference" in r.summary
    rep = json.loads(r.report.read_text())
    assert rep["configs"][0]["boot_failures"] == [2, 3]
    # the rerun: every verdict comes from the state, nothing is built or booted
    r2 = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert len(g.booted) == 3 and len(g.kept) == 3
    assert [p.action for p in r2.configs[0].patches] == ["cached"] * 4
    assert [p.index for p in r2.configs[0].boot_failures] == [2, 3]


def test_runtime_bisect_passes_once_the_defect_is_gone(series, tmp_path, monkeypatch):
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    g = FakeGuests(monkeypatch)
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "mm: Keep the NULL", {"mm/a.c": A_C + "/* NULL kept */\n"})
    r = run(repo, pristine, tmp_path / "b", runtime_configs=("slub",), guest=guest)
    assert r.ok, r.summary
    assert [p.boot["verdict"] for p in r.configs[0].patches] == ["pass", "pass"]
    assert "runtime: 2/2 kernels passed" in r.summary


def test_object_code_check_names_a_type_only_patch_that_changes_code(series, tmp_path,
                                                                     monkeypatch):
    """The loop keeps the objects a patch's build may rewrite, hands the
    rewritten ones to objdiff.check_patch with the patch's expectations, and
    fails a patch with an undeclared change; a rerun takes the verdicts from
    the state."""
    from verify import objdiff
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    seen = []

    def fake_check(before, after, objects, expectations, renames, patch=""):
        seen.append((patch, sorted(objects), expectations, all(
            (Path(before) / o).is_file() for o in objects)))
        hot = [o for o in objects if "HOT" in (Path(after).parent / "mm" /
                                               (Path(o).stem + ".c")).read_text()
               and "Header" not in patch]           # the header changes no code
        d = [objdiff.ObjDiff(o, changed=[objdiff.FuncChange("kfree", 100, 108)]) for o in hot]
        unexpected, missing = objdiff.judge(expectations, d, patch)
        return objdiff.PatchCode(patch, d, unexpected, missing)
    monkeypatch.setattr(objdiff, "check_patch", fake_check)
    patch(repo, "mm: Type only", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "mm: Hot path", {"mm/a.c": A_C + "/* HOT */\n"})
    patch(repo, "h: Header", {"include/h.h": "#define H 3\n"})
    patch(repo, "mm: Declared", {"mm/b.c": B_C + "/* HOT */\n"})
    declared = [CodeExpectStub(["kfree"], "on purpose")]
    code = lambda subject: (declared if subject == "mm: Declared" else None, {})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root, code=code)
    c = r.configs[0]
    assert [p.ok for p in c.patches] == [True] * 4 and not r.ok
    assert [p.index for p in c.code_failures] == [2]
    assert seen[0][:2] == ("1/4 mm: Type only", ["mm/a.o"]) and seen[0][3]
    assert seen[2][1] == ["mm/a.o", "mm/b.o"]       # the header: every object rewritten
    assert r.problems == ['patch 2/4 "mm: Hot path" changes the code of mm/a.o: kfree '
                          '(changed, 100 -> 108 bytes, +8) in config slub; its manifest entry '
                          'expects no code change there']
    assert "object code: 2/4 patches change no function's code" in r.summary
    assert "UNEXPECTED mm/a.o: kfree: +8 bytes (100 -> 108)" in r.summary
    n = len(seen)
    r2 = run(repo, pristine, out_root, code=code)
    assert len(seen) == n and [p.index for p in r2.configs[0].code_failures] == [2]


class CodeExpectStub:
    def __init__(self, functions, why, objects=()):
        self.functions, self.why, self.objects = functions, why, list(objects)


def _kfree_grows(before, after, objects, expectations, renames, patch=""):
    """objdiff.check_patch for the tests below: in every object kfree's code
    grows by 8 bytes and kmalloc is compiled unchanged; judged as the real
    check judges."""
    from verify import objdiff
    d = [objdiff.ObjDiff(o, changed=[objdiff.FuncChange("kfree", 100, 108)],
                         present=frozenset({"kfree", "kmalloc"})) for o in objects]
    unexpected, missing = objdiff.judge(expectations, d, patch)
    return objdiff.PatchCode(patch, d, unexpected, missing)


def test_a_declaration_added_later_judges_the_stored_code_changes_again(series, tmp_path,
                                                                        monkeypatch):
    from verify import objdiff
    pristine, repo, base = series
    FakeKernel(monkeypatch)

    monkeypatch.setattr(objdiff, "check_patch", _kfree_grows)
    patch(repo, "mm: Hot path", {"mm/a.c": A_C + "/* HOT */\n"})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root, code=lambda s: (None, {}))
    assert [p.index for p in r.configs[0].code_failures] == [1]
    r2 = run(repo, pristine, out_root, code=lambda s: ([CodeExpectStub(["kfree"], "on purpose")],
                                                       {}))
    p = r2.configs[0].patches[0]
    assert p.cached and r2.ok and not p.code["unexpected"] and not p.code["missing"]


def test_a_declared_change_that_no_longer_happens_fails(series, tmp_path, monkeypatch):
    """A change the manifest declares whose function is compiled and keeps
    its code (kmalloc), or is in none of the objects the declaration names,
    is a stale declaration: the patch fails the object-code check, and a
    rerun judging the stored changes says so too."""
    from verify import objdiff
    pristine, repo, base = series
    FakeKernel(monkeypatch)

    monkeypatch.setattr(objdiff, "check_patch", _kfree_grows)
    patch(repo, "mm: Hot path", {"mm/a.c": A_C + "/* HOT */\n"})
    out_root = tmp_path / "builds"
    for declared in ([CodeExpectStub(["kfree"], "on purpose"), CodeExpectStub(["kmalloc"], "too")],
                     [CodeExpectStub(["kfree"], "on purpose"),
                      CodeExpectStub(["gone_fn"], "renamed since", ["mm/a.o"])]):
        for _ in range(2):                              # built, then judged from the state
            r = run(repo, pristine, out_root, code=lambda s: (declared, {}))
            c = r.configs[0]
            assert not r.ok and [p.index for p in c.code_failures] == [1], r.summary
            stale = [l for l in r.problems if "declaration is stale" in l]
            assert len(stale) == 1 and declared[1].functions[0] in stale[0], r.problems
            assert declared[1].why in stale[0]
            assert "1 declare a change that no longer happens: patch 1" in c.code_line()
    # an expectation naming no object, whose function no compared object has,
    # is not judged here (its object may not be built in this configuration)
    r = run(repo, pristine, out_root, code=lambda s: ([CodeExpectStub(["kfree"], "on purpose"),
                                                       CodeExpectStub(["slab_only"], "SLAB")], {}))
    assert r.ok, r.problems
    assert [m["reason"] for m in r.configs[0].patches[0].code["missing"]] == ["absent"]


def test_a_verdict_made_with_other_guest_tests_is_made_again(series, tmp_path, monkeypatch):
    """A boot verdict names the guest tests it ran (their digest): once
    they change, the patch's kernel is built and booted again."""
    from verify import runtime
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    g = FakeGuests(monkeypatch)
    monkeypatch.setattr(runtime, "tests_digest", lambda cmdline="": "tests-v1")
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    out_root = tmp_path / "builds"
    r = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert r.ok and len(g.booted) == 1
    assert r.configs[0].patches[0].boot["tests"] == "tests-v1"
    run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert len(g.booted) == 1                          # the same tests: from the state
    monkeypatch.setattr(runtime, "tests_digest", lambda cmdline="": "tests-v2")
    r3 = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert len(g.booted) == 2 and not r3.configs[0].patches[0].cached
    assert r3.configs[0].patches[0].boot["tests"] == "tests-v2"


@pytest.mark.parametrize("scanner", ["console", "ktap"])
def test_a_verdict_made_with_another_scanner_is_made_again(series, tmp_path, monkeypatch,
                                                           scanner):
    """boot/console.py and boot/ktap.py judge the guest's output: once
    either changes (fixed or broken), the recorded verdicts are not theirs
    and the kernels are booted again."""
    import importlib
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    g = FakeGuests(monkeypatch)
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    out_root = tmp_path / "builds"
    run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert len(g.booted) == 1                          # the same scanners: from the state
    mod = importlib.import_module(f"boot.{scanner}")
    copy = tmp_path / f"{scanner}.py"
    copy.write_text(Path(mod.__file__).read_text() + "# changed\n")
    monkeypatch.setattr(mod, "__file__", str(copy))
    r = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest)
    assert len(g.booted) == 2 and not r.configs[0].patches[0].cached


def test_a_verdict_made_with_another_command_line_is_made_again(series, tmp_path, monkeypatch):
    from boot.matrix import GuestSpec
    pristine, repo, base = series
    FakeKernel(monkeypatch)
    g = FakeGuests(monkeypatch)
    line = ["slabconv.inject=none"]

    def guest_with_line(config, image, build_dir, src, name, modules):
        return GuestSpec(name=name, arch="x86_64", image=Path(image), build_dir=Path(build_dir),
                         src=Path(src), config=config, cmdline=line[0],
                         options={"modules": modules})
    patch(repo, "mm: Fine", {"mm/a.c": A_C.replace("1", "11")})
    out_root = tmp_path / "builds"
    run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest_with_line)
    run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest_with_line)
    assert len(g.booted) == 1                          # the same command line: from the state
    line[0] = "slabconv.inject=all"
    r = run(repo, pristine, out_root, runtime_configs=("slub",), guest=guest_with_line)
    assert len(g.booted) == 2 and not r.configs[0].patches[0].cached


def test_the_object_code_check_compares_with_the_previous_patch_after_a_resume(
        series, tmp_path, monkeypatch):
    """A rerun that starts building at patch k (the tree holds a later
    patch) builds the tree at patch k-1 first: patch k is compared with
    k-1's objects, not with whatever the tree held."""
    from verify import objdiff
    pristine, repo, base = series
    fake = FakeKernel(monkeypatch)
    befores = []

    def fake_check(before, after, objects, expectations, renames, patch=""):
        befores.append((patch, {o: (Path(before) / o).read_text() for o in objects}))
        return objdiff.PatchCode(patch, [], [], [])
    monkeypatch.setattr(objdiff, "check_patch", fake_check)
    patch(repo, "mm: One", {"mm/a.c": A_C.replace("1", "11")})
    patch(repo, "mm: Two", {"mm/a.c": A_C.replace("1", "12")})
    out_root = tmp_path / "builds"
    run(repo, pristine, out_root, code=lambda s: (None, {}))
    # forget patch 1's result: the next run starts there, with the tree at patch 2
    st = next(out_root.glob("bisect-slub-*/state.json"))
    d = json.loads(st.read_text())
    first = next(k for k, v in d["results"].items() if v["result"]["index"] == 1)
    del d["results"][first]
    st.write_text(json.dumps(d))
    n = len(fake.builds)
    befores.clear()
    run(repo, pristine, out_root, code=lambda s: (None, {}))
    assert fake.builds[n][0] == "bisect slub [0]"          # the tree rebuilt at the baseline
    tree_a = next(out_root.glob("bisect-slub-*/tree/mm/a.c"))
    assert "12" in tree_a.read_text()                      # and then patches 1 and 2
    assert [p for p, _ in befores] == ["1/2 mm: One", "2/2 mm: Two"]


def test_per_patch_eta_from_the_previous_run(tmp_path):
    """The remaining patches at their times in an earlier run (by subject,
    from the results state.json keeps), else at this run's mean; cached
    patches cost nothing now."""
    from verify import bisect as _B
    run = _B._ConfigRun.__new__(_B._ConfigRun)
    run.commits = [("a", "one"), ("b", "two"), ("c", "three"), ("d", "four")]
    results = {sha: {"ok": True, "t": t, "result": {"subject": subj, "built_seconds": sec}}
               for sha, subj, sec, t in [("x", "two", 99.0, 1), ("b", "two", 60.0, 2),
                                         ("c", "three", 120.0, 3)]}
    run._times, run._now = _B.previous_times(results), []
    assert run._times == {"two": 60.0, "three": 120.0}     # the newest result of a subject
    pr = _B.PatchResult(index=1, commit="a", subject="one", files=[])
    pr.seconds = 30.0
    # two 60 s + three 120 s from the last run, four at this run's mean (30 s)
    assert run._left(pr) == ", about 3m30s left"
    last = _B.PatchResult(index=4, commit="d", subject="four", files=[])
    last.seconds = 1.0
    assert run._left(last) == ""

