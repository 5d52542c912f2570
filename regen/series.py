"""The regeneration driver: manifest + tree -> commits -> format-patch series."""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from slabconv import paths
from slabconv.log import SlabconvError, info

from .spatch import SpatchCrash
from . import (declsplit, effects, kerneldoc, manifest, members, spatch, template, tidy, upstream,
               warmstart)
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
    verdicts: list[tuple[str, str, str, list[str]]] = field(default_factory=list)
    converted_at: str | None = None     # where the kernel defines struct slab already


def series_date(series: manifest.Series | None = None) -> str:
    """Commit dates of the work tree: $SLABCONV_DATE, else the manifest's date."""
    return os.environ.get("SLABCONV_DATE") or \
        (series or manifest.load(paths.COCCI / MANIFEST)).date


# The trailer that names the rules and templates a patch was made by.  Its
# name must not end in "by:": checkpatch.pl takes any `*-by:` line for a
# signature and wants an email address on it (an ERROR).  Folded (RFC 822:
# continuation lines start with a space, as git interpret-trailers reads
# them) so that no line of the commit message passes 75 characters.
TRAILER = "Generated-with"
TRAILER_WIDTH = 75


def generated_with(sources) -> str:
    """`Generated-with: slabconv (a, b, ...)` of the steps' sources (a
    conversion step's source names its rules, comma-separated), folded
    between items so that each line fits in TRAILER_WIDTH (an item longer
    than that has a line of its own)."""
    items = list(dict.fromkeys(i.strip() for src in sources for i in src.split(",") if i.strip()))
    lines, cur = [], f"{TRAILER}: slabconv ("
    for i, item in enumerate(items):
        piece = item + (", " if i < len(items) - 1 else ")")
        if cur.strip() and len(cur + piece.rstrip()) > TRAILER_WIDTH and not cur.endswith("("):
            lines.append(cur.rstrip())
            cur = " "
        cur += piece
    lines.append(cur.rstrip() if items else cur + ")")
    return "\n".join(lines)


def commit_message(series: manifest.Series, entry: manifest.Entry, identity: Identity) -> str:
    return (f"{entry.subject}\n\n{entry.message}\n\n"
            f"Originally-by: {series.seed_author}\n"
            f"{generated_with(s.source for s in entry.steps)}\n"
            f"Signed-off-by: {identity}\n")


def batches(steps: list[manifest.Step]) -> list[list[manifest.Step]]:
    """Consecutive rule steps over the same files (and spatch options) run
    together in one spatch run: parsing the file is most of what a run
    costs, and each rule still sees what the ones before it changed."""
    out: list[list[manifest.Step]] = []
    for st in steps:
        prev = out[-1][0] if out else None
        if (prev is not None and st.kind == "rule" and prev.kind == "rule"
                and prev.files == st.files and prev.options == st.options):
            out[-1].append(st)
        else:
            out.append([st])
    return out


def _page_param(step: manifest.Step, tree: Path) -> tuple[int, str] | None:
    """For a parameter conversion: the position and name of fn's struct
    page parameter, read off its declarations in the step's files (None:
    there is none, or the step is not a parameter conversion)."""
    if step.convert != "param":
        return None
    for f in step.files:
        if (tree / f).is_file():
            for params in effects.parameter_lists((tree / f).read_text(errors="replace"),
                                                  step.defines["fn"]):
                for i, p in enumerate(params):
                    m = re.fullmatch(r"(?:const )?struct page \*(\w*)", p)
                    if m:
                        return i, m.group(1)
    return None


def _defines(step: manifest.Step, tree: Path) -> dict[str, str]:
    """The step's -D values; a parameter conversion also gets argpos, the
    position of fn's struct page parameter (the callers' rule needs it in
    files that do not define fn)."""
    if step.convert != "param":
        return step.defines
    found = _page_param(step, tree)
    if found is None:
        fn = step.defines["fn"]
        raise SlabconvError(f"convert param {fn}(): there is no {fn}() with a struct page "
                            f"parameter to convert in {', '.join(step.files)}")
    return {**step.defines, "argpos": str(found[0])}


def _ready(batch: list[manifest.Step], tree: Path) -> int:
    """How many steps of `batch` can run now: a parameter conversion of a
    function that an earlier step of the batch renames (or adds) waits for
    that step's run, whose result tells its parameter's position."""
    for i, st in enumerate(batch[1:], 1):
        if st.convert == "param" and _page_param(st, tree) is None:
            return i
    return len(batch)


def _batch_rule(series: manifest.Series, batch: list[manifest.Step], tree: Path,
                scratch: Path) -> tuple[Path, dict[str, str]]:
    """The SmPL file and -D values of a batch's spatch run, as they are on
    `tree` now."""
    first = batch[0]
    if len(batch) == 1:
        rule = series.root / first.path
        if first.chain:
            rule = spatch.compose([series.root / r for r in first.rules], scratch)
        return rule, _defines(first, tree)
    return spatch.compose_instances(
        [([series.root / r for r in st.rules], _defines(st, tree), not st.convert) for st in batch],
        scratch)


def prestart_entry(series: manifest.Series, entry: manifest.Entry, wt: WorkTree) -> bool:
    """Start the first spatch run of `entry` warm (regen/warmstart.py), as
    it would be made on the work tree as it is now.  The entries before it
    may change what it will be (a parameter's position): apply_rule uses
    the process only if its command is the one it makes."""
    if entry.skip or not entry.steps:
        return False
    batch = batches(entry.steps)[0]
    batch = batch[:_ready(batch, wt.path)]
    if batch[0].kind != "rule":
        return False
    try:
        rule, defines = _batch_rule(series, batch, wt.path, wt.scratch)
    except SlabconvError:
        return False
    return spatch.prestart(rule, wt.path, batch[0].files, defines=defines,
                           options=batch[0].options)


_REFUSED = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<fn>\w+)\(\) returns "
                      r"(?:the result of (?P<call>\w+)\(\)|(?P<var>\w+))")


def _place(refusal: str, texts: dict[str, str]) -> str:
    """A refusal with its place in the file as it was before the run
    (`texts`: file -> text): spatch names a scratch copy when an earlier
    rule of the same run changed the function."""
    m = _REFUSED.match(refusal)
    if not m or m["path"] in texts:
        return refusal
    what = rf"\breturn\s+{re.escape(m['call'] or m['var'])}\b"
    for f, text in texts.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if re.match(rf"^\w.*\b{re.escape(m['fn'])}\(", line):
                for j in range(i + 1, len(lines)):
                    if lines[j].startswith("}"):
                        break
                    if re.search(what, lines[j]):
                        return f"{f}:{j + 1}{refusal[m.end('line'):]}"
    return refusal


def _run_batch(series: manifest.Series, batch: list[manifest.Step], wt: WorkTree,
               what: str) -> set[int]:
    """Apply one batch; return the indexes of the steps that matched (all
    of them for a batch of one, which is checked by its changes)."""
    tree = wt.path
    for step in batch:
        if step.path == "rules/slab_var.cocci":
            for f in step.files:
                if (tree / f).is_file():
                    old = (tree / f).read_text(errors="replace")
                    new = declsplit.split(old, step.defines["fn"], step.defines["var"])
                    if new != old:
                        (tree / f).write_text(new)
    first = batch[0]
    rule, defines = _batch_rule(series, batch, tree, wt.scratch)
    texts = {f: (tree / f).read_text(errors="replace") for f in first.files if (tree / f).is_file()}
    out = spatch.apply_rule(rule, tree, first.files, defines=defines,
                            options=first.options, what=what)
    refused = spatch.refusals(out)
    if refused:
        raise SlabconvError(f"{what}: the rules refuse to convert:\n"
                            + "\n".join(f"  {_place(r, texts)}" for r in refused))
    if len(batch) == 1:
        return {0}
    matched = spatch.hits(out)
    srcs = [(tree / f).read_text(errors="replace") for f in first.files if (tree / f).is_file()]
    for i, st in enumerate(batch):
        if st.convert and effects.converted(st.convert, st.defines["fn"], srcs,
                                            st.defines.get("to", "slab")):
            matched.add(i)
    return matched


def apply_entry(series: manifest.Series, entry: manifest.Entry, wt: WorkTree) -> list[str]:
    """Apply every step of `entry` to the work tree and check its effects.

    Returns the changed files.  Raises SlabconvError naming the entry when a
    step changes (or, in a batch, matches) nothing or an expected effect is
    missing.
    """
    tree = wt.path
    start = {f: (tree / f).read_bytes() if (tree / f).is_file() else None for f in entry.files}
    n = 0
    queue = batches(entry.steps)
    while queue:
        batch = queue.pop(0)
        ready = _ready(batch, tree)
        if ready < len(batch):          # a later step needs what this part makes
            queue.insert(0, batch[ready:])
            batch = batch[:ready]
        nums = list(range(n + 1, n + 1 + len(batch)))
        n += len(batch)
        label = ", ".join(f"{k} ({st.describe()}{'' if st.kind != 'rule' or not st.defines.get('fn') else ' fn=' + st.defines['fn']})"
                          for k, st in zip(nums, batch))
        what = f"entry '{entry.id}' ({entry.subject}), step{'s' if len(batch) > 1 else ''} {label}"
        files = batch[0].files
        before = {f: (tree / f).read_text(errors="replace") for f in files if (tree / f).is_file()}
        renamed = [(st, found[1]) for st in batch
                   if (found := _page_param(st, tree)) is not None]
        if batch[0].kind == "rule":
            try:
                matched = _run_batch(series, batch, wt, what)
            except SlabconvError as e:
                if str(e).startswith("convert param"):
                    raise SlabconvError(f"entry '{entry.id}' ({entry.subject}), step {nums[0]}: {e}")
                raise
        elif batch[0].kind == "members":
            step = batch[0]
            path = tree / step.files[0]
            text, _ = members.remove_members(path.read_text(), step.defines["struct"], step.members)
            path.write_text(text)
            matched = {0}
        else:
            step = batch[0]
            template.insert(series.root, tree, step.path, step.files[0], before=step.before,
                            at=step.at, replace_macro=step.replace_macro)
            matched = {0}
        for st, name in renamed:             # the kernel-doc follows the parameter
            for f in st.files:
                if name and f in before:
                    text = (tree / f).read_text(errors="replace")
                    fixed = kerneldoc.rename_param(text, st.defines["fn"], name, "slab")
                    if fixed != text:
                        (tree / f).write_text(fixed)
        changed = []
        for f, old in before.items():
            new = (tree / f).read_text(errors="replace")
            if new != old:
                tidied = tidy.keep_detached_comments(old, tidy.tidy(old, new))
                if tidied != new:
                    (tree / f).write_text(tidied)
                changed.append(f)
        idle = [(k, st) for i, (k, st) in enumerate(zip(nums, batch))
                if not st.optional and (not changed or i not in matched)]
        if idle:
            k, st = idle[0]
            fn = f" for {st.defines['fn']}()" if st.defines.get("fn") else ""
            raise SlabconvError(f"entry '{entry.id}' ({entry.subject}), step {k} "
                                f"({st.describe()}{fn}): the step changed nothing in "
                                f"{', '.join(st.files)}; expected it to change at least one of them")
    # Coccinelle's layout, put right against the entry's starting text (a
    # line one step broke may be short again after a later step's fold)
    for f, data in start.items():
        if data is not None and (tree / f).is_file():
            text = (tree / f).read_text(errors="replace")
            fixed = tidy.reflow(data.decode(errors="replace"), text)
            if fixed != text:
                (tree / f).write_text(fixed)
    for x in entry.expects:
        ok, found = effects.check(x, tree)
        if not ok:
            raise SlabconvError(f"entry '{entry.id}' ({entry.subject}): expected effect missing\n"
                                f"  expected: {x.describe()}\n  found:    {found}")
    return [f for f, old in start.items()
            if ((tree / f).read_bytes() if (tree / f).is_file() else None) != old]


def _reads(entry: manifest.Entry) -> set[str]:
    """Every file applying `entry` reads: its steps' files (spatch runs
    with --no-includes, and the driver's own checks read the same files)
    and the files its expected effects are checked in."""
    return set(entry.files) | {f for x in entry.expects for f in x.files}


def _independent(entries: list[manifest.Entry], k: int, j: int) -> bool:
    """Whether entry j can be applied before entries k..j-1 with the same
    result: none of them writes a file j reads, nor reads one j writes."""
    rj, wj = _reads(entries[j]), set(entries[j].files)
    return all(not (rj & set(e.files)) and not (wj & _reads(e))
               for e in entries[k:j] if not e.skip)


LOOKAHEAD = os.environ.get("SLABCONV_LOOKAHEAD", "1") != "0"


class _Shadow:
    """Where an entry is applied ahead of its turn: copies of the files it
    reads, and the work tree's scratch directory for composed rules."""
    def __init__(self, wt: WorkTree, entry: manifest.Entry):
        self.path = wt.path.parent / "ahead" / entry.id
        self.scratch = wt.scratch
        if self.path.exists():
            shutil.rmtree(self.path)
        for f in sorted(_reads(entry)):
            if (wt.path / f).is_file():
                (self.path / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(wt.path / f, self.path / f)
        self.path.mkdir(parents=True, exist_ok=True)

    def apply(self, series: manifest.Series, entry: manifest.Entry):
        t0 = time.monotonic()
        return apply_entry(series, entry, self), time.monotonic() - t0

    def copy_back(self, wt: WorkTree, entry: manifest.Entry) -> None:
        for f in entry.files:
            src, dst = self.path / f, wt.path / f
            if src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
            elif dst.is_file():
                dst.unlink()
        shutil.rmtree(self.path, ignore_errors=True)


class _Ahead:
    """Entries applied on a second thread while the main one works through
    the series: an entry whose files nothing between it and the current
    entry reads or writes gives the same result early (its input is
    already final), so its spatch runs use the second core.  One at a time;
    the results are taken back into the work tree, and committed, in
    series order."""
    def __init__(self, series: manifest.Series, wt: WorkTree, last: int):
        from concurrent.futures import ThreadPoolExecutor
        self.series, self.wt, self.last = series, wt, last
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ahead") if LOOKAHEAD else None
        self.jobs: dict[int, tuple[_Shadow, object]] = {}

    def launch(self, k: int) -> None:
        """While entry k is next on the main thread: start the first later
        entry that does not depend on k..itself, unless one is running."""
        if self.pool is None or any(not fut.done() for _, fut in self.jobs.values()):
            return
        entries = self.series.entries
        for j in range(k + 1, self.last + 1):
            if j in self.jobs or entries[j].skip:
                continue
            if _independent(entries, k, j):
                sh = _Shadow(self.wt, entries[j])
                self.jobs[j] = (sh, self.pool.submit(sh.apply, self.series, entries[j]))
                return

    def take(self, j: int) -> tuple[list[str], float] | None:
        """Entry j's result, copied into the work tree (None: it was not run
        ahead).  A failure is raised now, in series order."""
        job = self.jobs.pop(j, None)
        if job is None:
            return None
        sh, fut = job
        files, secs = fut.result()
        sh.copy_back(self.wt, self.series.entries[j])
        return files, secs

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self.wt.path.parent / "ahead", ignore_errors=True)


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
    ids = [e.id for e in series.entries]
    last = ids.index(until) if until in ids else total - 1
    converted_at = upstream.has_struct_slab(wt.path)
    if converted_at:
        info("regen", f"this kernel already has struct slab ({converted_at}): upstream's own "
                      f"conversion; each entry is applied, found upstream or not applicable")
    ahead = _Ahead(series, wt, last if not converted_at else -1)
    verdicts: list[tuple[str, str, str, list[str]]] = []    # (id, subject, status, evidence)
    committer = wt.importer()   # git fast-import beside the driver: one commit per entry
    failed = True
    try:
        for i, entry in enumerate(series.entries[:last + 1], 1):
            e0 = time.monotonic()
            if entry.skip:
                info("regen", f"[{i}/{total}] SKIPPED {entry.subject}")
                skipped.append((entry.id, entry.subject, entry.skip))
                continue
            ahead.launch(i - 1)
            done = ahead.take(i - 1)
            if not converted_at:
                nxt = next((e for j, e in enumerate(series.entries[i:last + 1], i)
                            if not e.skip and j not in ahead.jobs), None)
                if nxt is not None:     # the next run on this thread starts while this one works
                    prestart_entry(series, nxt, wt)
            info("regen", f"[{i}/{total}] {entry.subject}{' (applied ahead)' if done else ''}")
            if converted_at:
                v = _on_converted_kernel(series, entry, wt)
                if v.status != upstream.APPLIED:
                    info("regen", f"    {v.describe()}")
                    verdicts.append((entry.id, entry.subject, v.status, v.evidence))
                    skipped.append((entry.id, entry.subject, v.describe()))
                    continue
                files, secs = v.evidence, None
            else:
                try:
                    if done is None:
                        files, secs = apply_entry(series, entry, wt), None
                    else:
                        files, secs = done
                except SlabconvError as e:
                    later = dependents(series, entry.id)
                    if later:
                        e.args = (f"{e}\n  entries that depend on '{entry.id}' and cannot be "
                                  f"applied without it: {', '.join(later)}",) + e.args[1:]
                    raise
            verdicts.append((entry.id, entry.subject, upstream.APPLIED, []))
            # committed from a snapshot, in order, while the next entry runs
            committer.commit(commit_message(series, entry, identity), wt.snapshot(files))
            results.append(EntryResult(entry.id, entry.subject,
                                       secs if secs is not None else time.monotonic() - e0,
                                       files))
        failed = False
    finally:
        warmstart.POOL.discard(wt.path)
        ahead.close()
        try:
            ids = committer.close()     # the entries before a failed one stay committed
        except SlabconvError:
            if not failed:
                raise
            ids = []                    # the entry's own failure is the one to report
        wt.sync_index()     # the index matches HEAD, also after a failed entry
    for result, commit in zip(results, ids):
        result.commit = commit
    patches: list[Path] = []
    if output is not None:
        # the per-entry verdicts matter where the kernel has struct slab already
        patches = write_series(wt, series, output, source_id, skipped,
                               verdicts if converted_at else ())
    return RegenResult(wt, results, time.monotonic() - t0, output, patches, skipped, verdicts,
                       converted_at)


def dependents(series: manifest.Series, id: str) -> list[str]:
    """The later entries that depend on entry `id`, directly or through
    others (the manifest's `depends`)."""
    out: list[str] = []
    for e in series.entries:
        if e.id != id and (id in e.depends or any(d in out for d in e.depends)):
            out.append(e.id)
    return out


def _on_converted_kernel(series: manifest.Series, entry: manifest.Entry,
                         wt: WorkTree) -> upstream.Verdict:
    """Apply `entry` on a kernel that has struct slab already, or say why
    not; a failed attempt leaves the work tree as it was.  An applied
    verdict carries the changed files as its evidence."""
    v = upstream.classify(entry, wt.path, series.root)
    if v is not None:
        return v
    before = wt.snapshot(sorted(_reads(entry)))
    try:
        files = apply_entry(series, entry, wt)
    except SlabconvError as e:
        for f, data in before.items():
            p = wt.path / f
            if data is None:
                p.unlink(missing_ok=True)
            else:
                p.write_bytes(data)
        if isinstance(e, SpatchCrash):  # a rule that did not run proves nothing: an error
            raise SlabconvError(f"entry '{entry.id}' ({entry.subject}): {e}") from e
        first = str(e).splitlines()[0]
        return upstream.Verdict(upstream.NOT_APPLICABLE,
                                [f"its rules do not fit this kernel's code ({first})"]
                                + upstream.mixed_evidence(entry, wt.path, series.root))
    return upstream.Verdict(upstream.APPLIED, files)


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


def entries_report(verdicts) -> str:
    """One line per entry: applied, upstream or not applicable, and why."""
    lines = []
    for _, subject, status, evidence in verdicts:
        lines.append(f"{status:15} {subject}")
        for ev in evidence:
            lines.extend(f"{'':16}{ln}" for ln in textwrap.wrap(ev, 72))
    counts = {s: sum(1 for v in verdicts if v[2] == s)
              for s in (upstream.APPLIED, upstream.UPSTREAM, upstream.NOT_APPLICABLE)}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines) + "\n"


def write_series(wt: WorkTree, series: manifest.Series, output: Path, source_id: str,
                 skipped=(), verdicts=()) -> list[Path]:
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        staged = tmp / "series"
        if wt.commits():
            wt.format_patch(staged, series.subject, cover_blurb(series, skipped))
        else:                       # nothing to apply on this kernel: the report says why
            staged.mkdir(parents=True)
        if verdicts:
            (staged / "ENTRIES").write_text(entries_report(verdicts))
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
