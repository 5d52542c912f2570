"""The variability builds on the real 5.10 tree: the bisection break that
no configuration of the table sees must be named.

tests/planted/series-cpu-partial/ holds patches 0001-0014 of the 5.10
series as slabconv generated them on 2026-12-07: patch 0014 writes
`page = slab_page(slub_percpu_partial(per_cpu_ptr(s->cpu_slab, cpu)));`,
and with CONFIG_SLUB_CPU_PARTIAL=n (every SMP=n kernel too)
include/linux/slub_def.h defines slub_percpu_partial(c) as NULL, a
`void *` that slab_page()'s _Generic does not take.  Every per-patch
configuration of verify/configs.toml has SMP=y and SLUB_CPU_PARTIAL=y, so
the per-patch check builds patch 0014 fine, and the line is compiled, so
the compiled-lines check is satisfied too.

The series is committed on the baseline in a `git clone --shared
--no-checkout` of the applied work tree (git apply --cached, no
checkout), and only patch 14 is analysed and built, in slub: the
baseline build is verify's (shared with conftest's patched_verify), and
each build directory compiles mm/slub.o alone: the symbol as slub has it,
SLUB_CPU_PARTIAL=n, SMP=n.  Cold cost: docs/TESTING.md.

Nothing here skips: a missing tool or kernel is a failure.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from base import paths  # noqa: E402
from cli import apply  # noqa: E402
from regen.source import resolve  # noqa: E402
from regen.worktree import BASE_TAG  # noqa: E402
from verify import configtable, kconfig  # noqa: E402
from verify import variability_builds as VB  # noqa: E402
from verify.bisect_tree import Repo  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]

PLANTED = REPO / "tests" / "planted" / "series-cpu-partial"
BAD_LINE = "slab_page(slub_percpu_partial"     # (per_cpu_ptr(...)) twice, _read_once(c) once
GENERIC = "'_Generic' selector of type 'void *'"
GIT_ENV = {"GIT_AUTHOR_NAME": "slabconv test", "GIT_AUTHOR_EMAIL": "test@slabconv",
           "GIT_COMMITTER_NAME": "slabconv test", "GIT_COMMITTER_EMAIL": "test@slabconv",
           "GIT_AUTHOR_DATE": "2021-10-04T12:00:00Z", "GIT_COMMITTER_DATE": "2021-10-04T12:00:00Z",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo, *args, env=None) -> str:
    e = dict(os.environ, **GIT_ENV, **(env or {}))
    cp = subprocess.run(["git", "-C", str(repo), *map(str, args)], env=e,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert cp.returncode == 0, cp.stderr.decode(errors="replace")
    return cp.stdout.decode(errors="replace").strip()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(applied series, clone, its commits) with the planted patches committed
    on the baseline."""
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    ap.ident = f"{src.source_id}@{ap.baseline_id[:12]}"
    root = tmp_path_factory.mktemp("variability")
    clone = root / "repo"
    git(root, "clone", "-q", "--shared", "--no-checkout", ap.tree, clone)
    head = git(clone, "rev-parse", f"{BASE_TAG}^{{commit}}")
    idx = {"GIT_INDEX_FILE": str(root / "index")}
    git(clone, "read-tree", head, env=idx)
    patches = sorted(PLANTED.glob("0*.patch"))
    assert [p.name[:4] for p in patches] == [f"{i:04d}" for i in range(1, 15)]
    for p in patches:
        git(clone, "apply", "--cached", p, env=idx)
        subject = re.search(r"^Subject: (?:\[[^]]*\] )?(.*)$", p.read_text(), re.M).group(1)
        head = git(clone, "commit-tree", git(clone, "write-tree", env=idx), "-p", head,
                   "-m", subject)
    git(clone, "update-ref", "refs/heads/planted", head)
    repo = Repo(clone)
    base = repo.rev(BASE_TAG)
    commits = repo.series(base, head)
    yield ap, repo, base, commits
    apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)   # leave it as found


def test_no_per_patch_configuration_turns_slub_cpu_partial_off(tmp_path):
    """Why the per-patch check cannot see the defect: the table offers no
    SLUB configuration without SLUB_CPU_PARTIAL (or without SMP) (the
    others have no SLUB_CPU_PARTIAL to turn off)."""
    src = resolve(paths.DEFAULT_KERNEL, None).tree
    slub = [c for c in configtable.names("per-patch") if configtable.get(c).allocator == "slub"]
    assert slub
    for c in slub:
        kconfig.configure_named(src, tmp_path / "o", c)
        vals = kconfig.parse_config((tmp_path / "o" / ".config").read_text())
        assert vals.get("CONFIG_SMP") == "y", c
        assert vals.get("CONFIG_SLUB_CPU_PARTIAL") == "y", c


def test_the_planted_cpu_partial_break_is_named_and_fails_for_the_right_reason(planted):
    ap, repo, base, commits = planted
    n = len(commits)
    deltas = {sha: repo.delta(base, sha) for sha, _ in commits}
    r = VB.check(repo, commits, deltas, base, paths.cache_dir("build", ap.src.version),
                 ["slub"], ap.src.tree, ap.ident, only={n},
                 symbols={"SLUB_CPU_PARTIAL", "SMP"})
    # the cost, for docs/TESTING.md (the baseline build is patched_verify's)
    print(f"\nvariability (patch 14, slub, 3 build directories): analysis "
          f"{r.analysis_seconds:.1f}s, builds {r.build_seconds:.1f}s, flips "
          f"{[round(f.seconds, 1) for f in r.flips if f.dir]}")
    p = r.patches[n - 1]
    assert p.index == 14 and "kmem_cache_cpu" in p.subject
    # named: the symbol, the patch and the line, with the macro that makes it matter
    slub_c = repo.blob(deltas[commits[-1][0]]["mm/slub.c"][1]).decode(errors="replace")
    bad_lines = {i for i, t in enumerate(slub_c.splitlines(), 1) if BAD_LINE in t}
    assert len(bad_lines) == 3, bad_lines
    cpu_partial = [f for f in p.findings if f.symbol == "SLUB_CPU_PARTIAL" and f.line in bad_lines]
    assert {f.line for f in cpu_partial} == bad_lines, [f.format() for f in p.findings][:20]
    f = cpu_partial[0]
    assert f.file == "mm/slub.c" and BAD_LINE in f.text
    assert "slub_percpu_partial" in f.why and "include/linux/slub_def.h" in f.why, f.why
    assert any(x.symbol == "SMP" and x.line in bad_lines for x in p.findings)
    # the symbol as slub has it builds; each flip fails on _Generic's void *
    # (built here, or "cached": built ok at this very commit, with the same
    # objects, by an earlier run on this cache: a commit id covers its history)
    on = [b for b in p.builds if not b["flip"]]
    assert [b["status"] for b in on] in (["ok"], ["cached"]), on
    assert on[0]["objects"] == ["mm/slub.o"] and Path(on[0]["log"]).is_file(), on
    for sym in ("SLUB_CPU_PARTIAL", "SMP"):
        flipped = [b for b in p.builds if b["flip"].get(sym) == "n"]
        assert len(flipped) == 1, p.builds
        b = flipped[0]
        assert b["status"] == "fail" and b["objects"] == ["mm/slub.o"], b
        assert GENERIC in b["excerpt"], b["excerpt"]
        # the finding reported is the one where gcc stopped
        assert b["finding"]["file"] == "mm/slub.c" and b["finding"]["line"] in bad_lines, b
        assert f"mm/slub.c:{b['finding']['line']}:" in Path(b["log"]).read_text()
    assert not r.ok
    text = "\n".join(r.problems)
    assert "patch 14/14" in text and "SLUB_CPU_PARTIAL=n" in text and GENERIC in text, text
    # the other symbols are reported, not dropped
    assert {x["symbol"] for x in p.not_flipped} >= set(p.findings and
                                                       {f.symbol for f in p.findings}
                                                       - {"SLUB_CPU_PARTIAL", "SMP"})
    summary = r.summary()
    assert "FAIL slub + SLUB_CPU_PARTIAL=n" in summary and GENERIC in summary, summary
