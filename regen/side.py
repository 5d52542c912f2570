"""Entries applied ahead of their turn, beside the mm/slub.c chain.

Most of the series is a chain: each entry converts more of mm/slub.c and
needs the file as the entry before it left it.  An entry that reads none
of the files the entries between it and its last writer change (SLAB,
SLOB, zsmalloc, bootmem, IOMMU) needs only what that writer left.  So once
the writer is applied, the entry is applied once more, in a copy of its
files, by a process of its own (`python3 -m regen.side_apply`) on the other
core.  Its spatch runs go to the result store (regen/spatch.py: keyed by
the rule, its options and the content of every input file; with
SLABCONV_SPATCH_CACHE=0 a store of this run alone, STORE below).

Nothing else is taken from that process.  When the entry's turn comes it
is applied in the work tree like every entry, and each spatch run finds
its result in the store when its rule and input are the same; one whose
input differs (an entry in between changed one of its files after all,
through a caller it adapted) is made again.  The series is the one the
entries applied in order give, only sooner.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from base import paths
from base.proc import tied
from . import manifest, spatch
from .worktree import WorkTree

SIDE = "side"           # under the run's scratch directory


def plan(entries: list[manifest.Entry]) -> dict[str | None, list[str]]:
    """The entries to apply ahead, by the id of the entry after which each
    can start (None: before the first): the last earlier entry that writes
    a file it reads (a usage pass may write any file), when other entries
    come between the two."""
    out: dict[str | None, list[str]] = {}
    live = [e for e in entries if not e.skip]
    for i, e in enumerate(live):
        if e.usage or not any(st.kind == "rule" for st in e.steps):
            continue
        reads = e.reads
        k = next((j for j in range(i - 1, -1, -1)
                  if live[j].usage or reads & set(live[j].files)), None)
        if k is not None and live[k].usage:
            continue                # (written after that pass, which may write any file)
        if (k if k is not None else -1) < i - 1:
            out.setdefault(live[k].id if k is not None else None, []).append(e.id)
    return out


class Ahead:
    """The processes applying entries ahead of this run (plan()), started
    after the entry each waits for."""

    def __init__(self, series: manifest.Series, wt: WorkTree, entries: list[manifest.Entry],
                 manifest_path: Path):
        self.series = series
        self.wt = wt
        self.by_id = {e.id: e for e in entries}
        self.plan = plan(entries)
        self.manifest_path = manifest_path
        self.root = wt.scratch / SIDE
        shutil.rmtree(self.root, ignore_errors=True)
        self.procs: dict[str, subprocess.Popen] = {}      # entry id -> its process
        self.scanning: subprocess.Popen | None = None

    def scan(self, tree: Path) -> None:
        """Find the candidate files of the usage pass and of the removal
        check in `tree` (the one regen starts from; regen/usage.py,
        regen/field_users.py) and report on them for their caches."""
        d = self.root / "scan"
        d.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "regen.side_apply", "--manifest", str(self.manifest_path),
               "--dir", str(d), "--scan", str(tree)]
        with open(d / "log", "w") as log:
            self.scanning = subprocess.Popen(tied(cmd), cwd=paths.REPO, stdout=log,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def since(self, kind: str, changed: set[str]) -> tuple[list[str], set[str]] | None:
        """(the candidates of `kind` ("usage", "field_users") in the tree
        regen started from, `changed`): what usage.candidates() and
        field_users.scan() take; None when there was no scan or it failed."""
        if self.scanning is None:
            return None
        self.scanning.wait()
        try:
            return json.loads((self.root / "scan" / "scan.json").read_text())[kind], set(changed)
        except (OSError, ValueError, KeyError):
            return None

    def after(self, done: str | None) -> None:
        """Start applying the entries that could wait only for `done`."""
        ids = self.plan.get(done)
        if not ids:
            return
        d = self.root / (done or "start")
        tree = d / "linux"
        files = sorted({f for i in ids for f in self.by_id[i].reads})
        for f in files:
            if (self.wt.path / f).is_file():
                (tree / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.wt.path / f, tree / f)
        (d / "settled.json").write_text(json.dumps(
            {f: self.wt.settled[f] for f in files if f in self.wt.settled}))
        cmd = [sys.executable, "-m", "regen.side_apply", "--manifest", str(self.manifest_path),
               "--dir", str(d), *(["--store", str(spatch.STORE)] if spatch.STORE else []), *ids]
        with open(d / "log", "w") as log:
            p = subprocess.Popen(tied(cmd), cwd=paths.REPO, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
        for i in ids:
            self.procs[i] = p

    def wait(self, id: str) -> None:
        """Before `id` is applied: let the process applying it ahead finish
        (its results are what the store gives; it started long before)."""
        p = self.procs.pop(id, None)
        if p is not None and not any(q is p for q in self.procs.values()):
            p.wait()

    def close(self) -> None:
        for p in set(self.procs.values()) | ({self.scanning} if self.scanning else set()):
            p.kill()
            p.wait()
        self.procs.clear()
