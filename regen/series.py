"""The regeneration driver: manifest + tree -> commits -> format-patch series."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from slabconv import paths
from slabconv.log import SlabconvError, info

from . import declsplit, effects, manifest, spatch, template, tidy
from .worktree import Identity, WorkTree

MANIFEST = "series.toml"


@dataclass
class EntryResult:
    id: str
    subject: str
    seconds: float
    files: list[str]
    commit: str = ""


@dataclass
class RegenResult:
    worktree: WorkTree
    entries: list[EntryResult]
    seconds: float
    output: Path | None
    patches: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)   # (id, subject, reason)


def series_date(series: manifest.Series | None = None) -> str:
    """Commit dates of the work tree: $SLABCONV_DATE, else the manifest's date."""
    return os.environ.get("SLABCONV_DATE") or \
        (series or manifest.load(paths.COCCI / MANIFEST)).date


def commit_message(series: manifest.Series, entry: manifest.Entry, identity: Identity) -> str:
    rules = ", ".join(dict.fromkeys(f"cocci/{r}" for s in entry.steps for r in (s.rules or [s.path])))
    return (f"{entry.subject}\n\n{entry.message}\n\n"
            f"Originally-by: {series.seed_author}\n"
            f"Generated-by: slabconv ({rules})\n"
            f"Signed-off-by: {identity}\n")


def apply_entry(series: manifest.Series, entry: manifest.Entry, wt: WorkTree) -> list[str]:
    """Apply every step of `entry` to the work tree and check its effects.

    Returns the changed files.  Raises SlabconvError naming the entry when a
    step changes nothing or an expected effect is missing.
    """
    tree = wt.path
    for n, step in enumerate(entry.steps, 1):
        what = f"entry '{entry.id}' ({entry.subject}), step {n} ({step.describe()})"
        before = {f: (tree / f).read_text(errors="replace") for f in step.files if (tree / f).is_file()}
        if step.kind == "rule":
            if step.path == "rules/slab_var.cocci":
                for f in step.files:
                    old = before.get(f)
                    if old is not None:
                        new = declsplit.split(old, step.defines["fn"], step.defines["var"])
                        if new != old:
                            (tree / f).write_text(new)
            rule = series.root / step.path
            if step.chain:
                rule = spatch.compose([series.root / r for r in step.rules], wt.scratch)
            spatch.apply_rule(rule, tree, step.files, defines=step.defines,
                              options=step.options, what=what)
        else:
            template.insert(series.root, tree, step.path, step.files[0], before=step.before, at=step.at)
        changed = []
        for f, old in before.items():
            new = (tree / f).read_text(errors="replace")
            if new != old:
                tidied = tidy.tidy(old, new)
                if tidied != new:
                    (tree / f).write_text(tidied)
                changed.append(f)
        if not changed and not step.optional:
            raise SlabconvError(f"{what}: the step changed nothing in {', '.join(step.files)}; "
                                f"expected it to change at least one of them")
    for x in entry.expects:
        ok, found = effects.check(x, tree)
        if not ok:
            raise SlabconvError(f"entry '{entry.id}' ({entry.subject}): expected effect missing\n"
                                f"  expected: {x.describe()}\n  found:    {found}")
    return wt.changed_files(entry.files)


def regenerate(tree: Path, source_id: str, *, version: str, output: Path | None,
               identity: Identity, manifest_path: Path | None = None,
               workdir: Path | None = None, until: str | None = None) -> RegenResult:
    """Apply the whole series (or up to entry `until`) to a copy of `tree`.

    `tree` is never modified.  When `output` is given, the series is written
    there with git format-patch; the old content is replaced only after the
    whole run succeeded.
    """
    t0 = time.monotonic()
    series = manifest.load(manifest_path or paths.COCCI / MANIFEST)
    date = series_date(series)
    workdir = workdir or paths.cache_dir("work", version, source_id)
    wt = WorkTree.prepare(tree, source_id, workdir, identity, date)
    results = []
    skipped = []
    total = len(series.entries)
    for i, entry in enumerate(series.entries, 1):
        e0 = time.monotonic()
        if entry.skip:
            info("regen", f"[{i}/{total}] SKIPPED {entry.subject}")
            skipped.append((entry.id, entry.subject, entry.skip))
            if until and entry.id == until:
                break
            continue
        info("regen", f"[{i}/{total}] {entry.subject}")
        files = apply_entry(series, entry, wt)
        commit = wt.commit(commit_message(series, entry, identity), files)
        results.append(EntryResult(entry.id, entry.subject, time.monotonic() - e0, files, commit))
        if until and entry.id == until:
            break
    patches: list[Path] = []
    if output is not None:
        patches = write_series(wt, series, output, source_id, skipped)
    return RegenResult(wt, results, time.monotonic() - t0, output, patches, skipped)


def cover_blurb(series: manifest.Series, skipped) -> str:
    """The cover letter's text: the manifest's blurb and the skipped steps."""
    if not skipped:
        return series.blurb
    lines = [series.blurb, "", "Steps of the original series that this kernel does not have "
             "(no patch):"]
    for _, subject, reason in skipped:
        lines.append(f"  {subject}")
        lines.extend(f"    {ln}" for ln in textwrap.wrap(reason, 66))
    return "\n".join(lines)


def write_series(wt: WorkTree, series: manifest.Series, output: Path, source_id: str,
                 skipped=()) -> list[Path]:
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        staged = tmp / "series"
        wt.format_patch(staged, series.subject, cover_blurb(series, skipped))
        (staged / "SOURCE").write_text(
            f"source: {source_id}\nspatch: {spatch.spatch_version()}\n"
            f"identity: {wt.identity}\ndate: {wt.date}\n")
        if output.exists():
            shutil.rmtree(output)
        staged.rename(output)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return sorted(output.glob("*.patch"))


def read_source(output: Path) -> dict[str, str]:
    """The SOURCE metadata written next to a generated series."""
    f = output / "SOURCE"
    if not f.is_file():
        return {}
    return dict(line.split(": ", 1) for line in f.read_text().splitlines() if ": " in line)


def summary_json(result: RegenResult) -> str:
    return json.dumps({
        "seconds": round(result.seconds, 2),
        "entries": [{"id": e.id, "subject": e.subject, "seconds": round(e.seconds, 2),
                     "files": e.files, "commit": e.commit} for e in result.entries],
        "skipped": [{"id": i, "subject": sub, "reason": r} for i, sub, r in result.skipped],
        "output": str(result.output) if result.output else None,
        "worktree": str(result.worktree.path),
    }, indent=2)
