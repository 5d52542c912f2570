"""verify.bisect on the real 5.10 tree: a defect planted in a series must be
blamed on exactly the patch and the configuration that carry it, with the
compiler's error, although the series' last commit (the tree the final
build checks) is fine.

The planted series are made with git plumbing in a `git clone --shared
--no-checkout` of the applied work tree (no 1 GB checkout), on the
baseline commit: the planted patch, then a patch that removes it again.
Both change mm/slub.c alone, so each per-patch build is one object on top
of a copy of the baseline build.  (Planting after committed patches would
build those too, and the first three change mm.h, mm_types.h and
page-flags.h: a full rebuild each, about 15 minutes per configuration on
an empty ccache.  The per-patch builds of the committed series are `make
verify`'s.)

  * SLUB_DEBUG only: a call of init_tracking(), which mm/slub.c defines only
    under CONFIG_SLUB_DEBUG: slub-nodebug must fail on that patch, slub must
    pass the whole series.
  * a syntax error, through `./slabconv verify` on the series as
    patch files: exit 1, the patch and both configurations named, and the
    check stops there (the removal is not built).

Nothing here skips: a missing tool or kernel is a failure.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from regen.worktree import BASE_TAG  # noqa: E402
from base import paths  # noqa: E402
from cli import apply
from regen.source import resolve  # noqa: E402
from verify import bisect  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]

INIT_TRACKING = "static void init_tracking(struct kmem_cache *s, void *object)"
DEBUG_ONLY = """
void slabconv_planted_debug_only(struct kmem_cache *s, void *object);
void slabconv_planted_debug_only(struct kmem_cache *s, void *object)
{
\tinit_tracking(s, object);\t/* defined only under CONFIG_SLUB_DEBUG */
}
"""
SYNTAX = """
int slabconv_planted_syntax(void);
int slabconv_planted_syntax(void)
{
\treturn 1
}
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "slabconv test", "GIT_AUTHOR_EMAIL": "test@slabconv",
           "GIT_COMMITTER_NAME": "slabconv test", "GIT_COMMITTER_EMAIL": "test@slabconv",
           "GIT_AUTHOR_DATE": "2021-10-04T12:00:00Z", "GIT_COMMITTER_DATE": "2021-10-04T12:00:00Z",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo, *args, input=None, env=None) -> str:
    e = dict(os.environ, **GIT_ENV, **(env or {}))
    cp = subprocess.run(["git", "-C", str(repo), *map(str, args)], env=e, input=input,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert cp.returncode == 0, cp.stderr.decode(errors="replace")
    return cp.stdout.decode(errors="replace").strip()


@pytest.fixture(scope="module")
def applied():
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    ap.ident = f"{src.source_id}@{ap.baseline_id[:12]}"
    yield ap
    apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)   # leave it as found


def plant(ap, root: Path, addition: str, subject: str):
    """A clone of the applied work tree with a two-patch series on the
    baseline commit: `addition` appended to mm/slub.c, then removed again.
    Returns (clone, head, number of commits, the planted patch's number)."""
    clone = root / "repo"
    git(root, "clone", "-q", "--shared", "--no-checkout", ap.tree, clone)
    after = git(clone, "rev-parse", f"{BASE_TAG}^{{commit}}")
    slub = subprocess.run(["git", "-C", str(clone), "show", f"{after}:mm/slub.c"],
                          stdout=subprocess.PIPE, check=True).stdout
    assert INIT_TRACKING.encode() in slub, "mm/slub.c changed: update the planted defect"
    blob = git(clone, "hash-object", "-w", "--stdin", input=slub + addition.encode())
    idx = {"GIT_INDEX_FILE": str(root / "index")}
    git(clone, "read-tree", after, env=idx)
    git(clone, "update-index", "--cacheinfo", f"100644,{blob},mm/slub.c", env=idx)
    planted_tree = git(clone, "write-tree", env=idx)
    # a new commit id every run: the planted part is always built, never
    # taken from the bisect state of an earlier run
    run = f"slabconv test run {time.time_ns()}"
    head = git(clone, "commit-tree", planted_tree, "-p", after, "-m",
               f"{subject}\n\nPlanted defect ({run}).")
    head = git(clone, "commit-tree", f"{after}^{{tree}}", "-p", head, "-m",
               f"mm/slub: Remove the planted defect again\n\n{run}.")
    git(clone, "update-ref", "refs/heads/planted", head)
    return clone, head, 2, 1


def test_slub_debug_only_defect_is_caught_by_slub_nodebug_only(applied, tmp_path):
    subject = "mm/slub: Call init_tracking() from outside CONFIG_SLUB_DEBUG"
    clone, head, n, bad = plant(applied, tmp_path, DEBUG_ONLY, subject)
    r = bisect.check_series(clone, paths.cache_dir("build", applied.src.version),
                            ["slub", "slub-nodebug"], base=BASE_TAG, head=head,
                            baseline_src=applied.src.tree, baseline_id=applied.ident,
                            report_dir=tmp_path / "report")
    slub, nodebug = r.configs
    assert slub.config == "slub" and nodebug.config == "slub-nodebug"
    assert slub.ok and len(slub.patches) == n and all(p.ok for p in slub.patches), r.summary
    # the removal changes mm/slub.c only: one object (and a link: a symbol went away)
    assert slub.patches[bad].action.startswith("objects") and "mm/slub.o" in slub.patches[bad].targets
    assert not r.ok and not nodebug.ok
    f = nodebug.first_failure
    assert (f.index, f.subject) == (bad, subject), r.summary
    assert len(nodebug.patches) == bad and all(p.ok for p in nodebug.patches[:-1])
    assert "mm/slub.c:" in f.error_excerpt and "init_tracking" in f.error_excerpt
    assert "implicit declaration of function 'init_tracking'" in f.error_excerpt
    assert r.problems == [f'patch {bad}/{n} "{subject}" fails in config slub-nodebug: '
                          f"{f.problem}"]
    assert f"first failing patch {bad}/{n}: {subject}" in r.summary
    rep = json.loads((tmp_path / "report" / "bisect.json").read_text())
    assert [c["ok"] for c in rep["configs"]] == [True, False]
    assert rep["configs"][1]["first_failure"]["index"] == bad
    assert Path(f.log).is_file()


def test_slabconv_verify_names_the_patch_that_does_not_compile(applied, tmp_path):
    """The series as patch files through `./slabconv verify`: the
    last commit builds (the final gate passes), patch 4 does not."""
    subject = "mm/slub: Plant a syntax error"
    clone, head, n, bad = plant(applied, tmp_path, SYNTAX, subject)
    series = tmp_path / "series"
    git(clone, "format-patch", "-q", "-o", series, f"{BASE_TAG}..{head}")
    assert len(list(series.glob("0*.patch"))) == n
    cp = subprocess.run([str(REPO / "slabconv"), "verify", "--kernel",
                         paths.DEFAULT_KERNEL, "--output", series,
                         "--config", "slub", "--bisect-configs", "slub,slub-nodebug",
                         "--no-layout", "--no-checkpatch",       # their own tests plant theirs
                         "--coverage-configs", "none"],
                        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = cp.stdout, cp.stderr
    assert cp.returncode == 1, out + err
    # the final tree builds (its own verdict OK); the per-patch check fails,
    # and the one verdict of every check (verify/gates.py) with it
    assert "bisect: FAIL" in out and "verify slub: OK" in out
    for config in ("slub", "slub-nodebug"):
        assert f'patch {bad}/{n} "{subject}" fails in config {config}: does not build' in out
        assert f"[bisect] {config} [{bad}/{n}] {subject} " in err
        assert f"[bisect] {config} [{bad + 1}/{n}]" not in err          # stopped there
    assert f"first failing patch {bad}/{n}: {subject}" in out
    assert "mm/slub.c:" in out and "error: expected ';' before '}' token" in out
    # the one summary and JSON report of all the checks (verify/gates.py)
    assert "per-patch FAIL" in out and "layout not run" in out and "checkpatch not run" in out
    assert "compiled-lines not run: not asked for" in out
    gates = json.loads((paths.cache_dir("runs") / f"verify-{paths.DEFAULT_KERNEL}.json").read_text())
    assert gates["ok"] is False and gates["status"]["per-patch"] == "FAIL"
    assert any(p.startswith(f'patch {bad}/{n} "{subject}"') for p in gates["problems"])
    # the final tree itself is fine: its build passed, only the per-patch check failed
    reports = sorted(paths.cache_dir("build", paths.DEFAULT_KERNEL).glob("patched-slub-*/report.json"),
                     key=lambda p: p.stat().st_mtime)
    rep = json.loads(reports[-1].read_text())
    assert rep["patched"]["ok"] and rep["new_warnings"] == [] and rep["ok"] is True
    mine = [p for p in gates["problems"] if p.startswith(f'patch {bad}/{n} "{subject}"')]
    assert len(mine) == 2
    for p, config in zip(mine, ("slub", "slub-nodebug")):
        assert p.startswith(f'patch {bad}/{n} "{subject}" fails in config {config}: '
                            "does not build (make "), p
    b = json.loads((reports[-1].parent / "bisect.json").read_text())
    slub = [c for c in b["configs"] if c["config"].startswith("slub")]
    assert [(c["config"], c["first_failure"]["index"], c["first_failure"]["subject"])
            for c in slub] == [("slub", bad, subject), ("slub-nodebug", bad, subject)]
    for c in slub:
        assert "error: expected ';'" in c["first_failure"]["error_excerpt"]
        assert c["patches_checked"] == bad
    assert [c["config"] for c in b["configs"]] == ["slub", "slub-nodebug"]   # as asked


UNUSED_WARNING = """
void slabconv_planted_warning(void);
void slabconv_planted_warning(void)
{
\tint slabconv_planted_unused;\t/* -Wunused-variable: a warning, not an error */
}
"""


def test_a_real_warning_planted_mid_series_is_named(applied, tmp_path):
    """A three-patch series on the baseline, in the real tree and a real
    build: a harmless patch, then one that adds a compiler warning (an
    unused variable in mm/slub.c), then the warning's removal.  The per-patch
    check must pass the first patch and name the second, with gcc's
    warning; the series' last commit is clean, so only the per-patch check
    can see it."""
    clone = tmp_path / "repo"
    git(tmp_path, "clone", "-q", "--shared", "--no-checkout", applied.tree, clone)
    base = git(clone, "rev-parse", f"{BASE_TAG}^{{commit}}")
    slub = subprocess.run(["git", "-C", str(clone), "show", f"{base}:mm/slub.c"],
                          stdout=subprocess.PIPE, check=True).stdout
    run = f"slabconv test run {time.time_ns()}"
    idx = {"GIT_INDEX_FILE": str(tmp_path / "index")}

    def commit(parent, content: bytes, subject: str) -> str:
        blob = git(clone, "hash-object", "-w", "--stdin", input=content)
        git(clone, "read-tree", base, env=idx)
        git(clone, "update-index", "--cacheinfo", f"100644,{blob},mm/slub.c", env=idx)
        return git(clone, "commit-tree", git(clone, "write-tree", env=idx), "-p", parent,
                   "-m", f"{subject}\n\n{run}.")

    comment = f"\n/* {run} */\n".encode()
    subjects = ["mm/slub: A comment", "mm/slub: Plant an unused variable",
                "mm/slub: Remove the unused variable again"]
    one = commit(base, slub + comment, subjects[0])
    two = commit(one, slub + comment + UNUSED_WARNING.encode(), subjects[1])
    head = commit(two, slub + comment, subjects[2])
    r = bisect.check_series(clone, paths.cache_dir("build", applied.src.version), ["slub"],
                            base=BASE_TAG, head=head, baseline_src=applied.src.tree,
                            baseline_id=applied.ident, report_dir=tmp_path / "report")
    c = r.configs[0]
    assert not r.ok and not c.ok, r.summary
    f = c.first_failure
    assert (f.index, f.subject) == (2, subjects[1]), r.summary
    assert [p.ok for p in c.patches] == [True, False], r.summary
    assert [(w.file, w.function, w.flag) for w in f.new_warnings] == [
        ("mm/slub.c", "slabconv_planted_warning", "-Wunused-variable")], f.problem
    assert f.problem.startswith("1 new compiler warning(s): mm/slub.c:") and \
        "unused variable 'slabconv_planted_unused'" in f.problem, f.problem
    assert r.problems == [f'patch 2/3 "{subjects[1]}" fails in config slub: {f.problem}']
