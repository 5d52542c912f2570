"""Every expected effect of cocci/series.toml is an effect of its entry.

regen checks each entry's [[entry.expect]] after its steps, and on a kernel
with upstream's struct slab (6.x) regen/upstream.py takes "every
expectation already holds" as evidence that an entry is upstream.  An
expectation that already holds on the tree before its entry proves neither:
it passes whether the entry did its work or not.

The committed 5.10 series, applied with git am, gives each entry's commit
and its parent; every expectation must hold at the commit and fail at the
parent.  Nothing here skips: a missing kernel or series is a failure.
"""
import subprocess

import pytest

from regen import effects, manifest
from base import paths
from cli import apply
from regen.source import resolve

pytestmark = [pytest.mark.network]


@pytest.fixture(scope="module")
def commits():
    """subject -> commit of the committed series applied with git am."""
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = apply.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    out = subprocess.run(["git", "-C", str(ap.tree), "log", "--format=%H %s",
                          f"{ap.baseline_id}..HEAD"], check=True, capture_output=True,
                         text=True).stdout
    by_subject = dict(reversed(line.split(" ", 1)) for line in out.splitlines())
    assert len(by_subject) == len(ap.patches)
    return ap.tree, by_subject


def _tree_at(repo, rev: str, files, root):
    """The files an expectation reads, as they are at `rev`, under root."""
    root.mkdir(parents=True)
    for f in files:
        cp = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{f}"],
                            capture_output=True)
        if cp.returncode == 0:
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_bytes(cp.stdout)
    return root


def _entries():
    return [e for e in manifest.load(paths.COCCI / "series.toml").entries if not e.skip]


def test_every_expectation_fails_before_its_entry_and_holds_after(commits, tmp_path):
    repo, by_subject = commits
    # the usage entry makes no patch on pristine 5.10 (nothing is left to convert)
    entries = [e for e in _entries() if not e.usage]
    assert len(entries) == len(by_subject), "an entry without its patch, or the reverse"
    holds_before, fails_after = [], []
    n = 0
    for e in entries:
        sha = by_subject[e.subject]
        for k, x in enumerate(e.expects):
            n += 1
            before = _tree_at(repo, f"{sha}^", x.files, tmp_path / f"{e.id}-{k}-before")
            after = _tree_at(repo, sha, x.files, tmp_path / f"{e.id}-{k}-after")
            ok, found = effects.check(x, after)
            if not ok:
                fails_after.append(f"{e.id}: {x.describe()}: {found}")
            ok, found = effects.check(x, before)
            if ok:
                holds_before.append(f"{e.id}: {x.describe()}")
    assert n > len(entries)
    assert not fails_after, "\n".join(fails_after)
    assert not holds_before, ("expectations that already hold before their entry "
                              "(they prove nothing):\n" + "\n".join(holds_before))


def test_every_entry_has_an_expectation():
    """An entry whose expectations are dropped (the fix for one that held
    before) would be proved by nothing.  The usage entry has no steps and
    no expectations of its own: what it converts depends on the tree (on
    pristine 5.10, nothing), and regen's check before the removal proves it."""
    assert not [e.id for e in _entries() if not e.expects and not e.usage]
    assert [e.id for e in _entries() if e.usage] == ["usage"]
