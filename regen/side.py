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
from dataclasses import dataclass
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


@dataclass
class _Job:
    need: int                   # the place in the series of the entry that needs it
    dir: Path
    args: list[str]             # regen.side_apply's, after --manifest and --dir
    proc: subprocess.Popen | None = None


class Ahead:
    """The work done beside the chain in this run: the entries plan()
    names, each ready once the entry it waits for is applied, and the scan
    of the tree regen starts from (scan()).  One process at a time (the
    chain has the other core), the work needed soonest first."""

    def __init__(self, wt: WorkTree, entries: list[manifest.Entry], manifest_path: Path):
        self.wt = wt
        self.place = {e.id: k for k, e in enumerate(entries)}
        self.by_id = {e.id: e for e in entries}
        self.plan = plan(entries)
        self.manifest_path = manifest_path
        self.root = wt.scratch / SIDE
        shutil.rmtree(self.root, ignore_errors=True)
        self.jobs: dict[str, _Job] = {}     # entry id (or "scan") -> its job
        self.queue: list[_Job] = []
        self.running: _Job | None = None

    def _add(self, name: str, need: int, args: list[str]) -> Path:
        d = self.root / name
        d.mkdir(parents=True, exist_ok=True)
        self.jobs[name] = job = _Job(need, d, args)
        self.queue.append(job)
        return d

    def _pump(self) -> None:
        """Start the next job when none is at work."""
        if self.running is not None and self.running.proc.poll() is None:
            return
        self.running = None
        if self.queue:
            job = min(self.queue, key=lambda j: j.need)
            self.queue.remove(job)
            cmd = [sys.executable, "-m", "regen.side_apply", "--manifest",
                   str(self.manifest_path), "--dir", str(job.dir), *job.args]
            with open(job.dir / "log", "w") as log:
                job.proc = subprocess.Popen(tied(cmd), cwd=paths.REPO, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            self.running = job

    def _finish(self, job: _Job) -> bool:
        """Wait for `job` if it is at work or done; one that never started
        leaves the queue (the caller does the work itself): False."""
        started = job not in self.queue
        if started:
            job.proc.wait()
        else:
            self.queue.remove(job)
        self._pump()
        return started

    def scan(self, tree: Path, need: str) -> None:
        """Find the candidate files of the usage pass and of the removal
        check in `tree` (the one regen starts from; regen/usage.py,
        regen/field_users.py) and report on them for their caches, before
        the entry `need`."""
        self._add("scan", self.place[need], ["--scan", str(tree)])
        self._pump()

    def since(self, kind: str, changed: set[str]) -> tuple[list[str], set[str]] | None:
        """(the candidates of `kind` ("usage", "field_users") in the tree
        regen started from, `changed`): what usage.candidates() and
        field_users.scan() take; None when there was no scan or it failed."""
        job = self.jobs.get("scan")
        if job is None or not self._finish(job):
            self.jobs.pop("scan", None)
            return None
        try:
            return json.loads((job.dir / "scan.json").read_text())[kind], set(changed)
        except (OSError, ValueError, KeyError):
            return None

    def after(self, done: str | None) -> None:
        """The entries that could wait only for `done` are ready: a copy of
        the files each reads, as they are now, and their job."""
        for id in self.plan.get(done, []):
            files = sorted(self.by_id[id].reads)
            args = [*(["--store", str(spatch.STORE)] if spatch.STORE else []), id]
            d = self._add(id, self.place[id], args)
            for f in files:
                if (self.wt.path / f).is_file():
                    (d / "linux" / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(self.wt.path / f, d / "linux" / f)
            (d / "settled.json").write_text(json.dumps(
                {f: self.wt.settled[f] for f in files if f in self.wt.settled}))
        self._pump()

    def wait(self, id: str) -> None:
        """Before `id` is applied: let its job finish if it is at work (its
        results are what the store gives), or drop it if it never started."""
        job = self.jobs.pop(id, None)
        if job is not None:
            self._finish(job)

    def close(self) -> None:
        for job in self.jobs.values():
            if job.proc is not None:
                job.proc.kill()
                job.proc.wait()
        self.jobs.clear()
        self.queue.clear()
        self.running = None
