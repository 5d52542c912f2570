"""Which rule instance made each hunk of a series: every step run alone.

    ./slabconv attribute --kernel 5.10 [--series DIR]
    make attribute

regen applies an entry's steps in batches: the rules of a conversion
(slab_param, slab_callers, slab_fold) and the consecutive steps over the
same files run together in one spatch run, so the patch cannot say which
of them wrote a line.  Here each entry is replayed from the patch's own
pre-image (the series applied with `git am` in a scratch repository,
report/rangediff.py), regen's batches in regen's order, but every rule
file of every step run alone (a "piece"), with the step's -D values as
regen computes them before its batch; the driver's own edits are pieces
too (regen/declsplit.py where a rule's directive asks, regen/kerneldoc.py
after a parameter conversion, regen/tidy.py after each batch and the reflow at
the end of the entry, regen/comments.py), and last the callers pass
(regen/callers.py: the uses of a changed signature in the files the entry
does not list, each of its rule runs, tidies and its reflow a piece, over
the patch's files).  After each piece the lines of each file are
matched against the text before it (difflib): a line the piece wrote is
marked with it, and with the pieces that wrote the lines it replaced; a
line of the pre-image it removed is marked as removed by it.

When the replay ends with exactly the patch's post-image in every file,
the entry is exact, and each hunk of its patch is attributed to the
pieces that marked its added lines and removed its removed ones (a line
git shows removed and added again, which the replay's matching kept,
counts for no one).  A line the matching cannot place otherwise gives its
hunk every piece that changed that file (the hunk is counted as "by
file").  An entry whose replay differs from its patch
is not attributed here (the review falls back to the manifest for it) and
is listed.  spatch's results are cached per input (regen/spatch.py), so a
second run costs seconds; the first on 5.10 is the ~300 single-rule runs.

The result is recorded for the series under
$SLABCONV_CACHE/runs/attribution-<version>/<series id>.json, with the
slabconv commit, a digest of cocci/ and the spatch version; the review
page (report/review/) shows it when it reviews that series.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import fetch
from base import atomic, paths
from base.cliutil import add_command as add_command_parser
from base.log import info, SlabconvError
from regen import (callers, comments, kerneldoc, manifest as M, members,
    series as S, spatch, template, tidy)
from regen.source import resolve, series_dir
from regen.tidy import line_opcodes
from . import patches as P, rangediff as RD, reproduce


RECORD_DIR = "attribution-{version}"
DRIVER = ("regen/tidy.py", "regen/kerneldoc.py", "regen/declsplit.py", "regen/comments.py")
FORMAT = 1


@dataclass
class Piece:
    """One run of the replay: a rule file of a step, a template, the
    members step, or one of the driver's edits."""
    id: str                      # "<entry>#<n>"
    entry: str
    step: int                    # 1-based step of the entry (0: the entry's end)
    source: str                  # cocci/rules/x.cocci, cocci/templates/y.h, regen/members.py, regen/tidy.py ...
    detail: str = ""             # "fn=kfree", "reflow", ...

    @property
    def driver(self) -> bool:
        return self.source in DRIVER

    @property
    def label(self) -> str:
        name = Path(self.source).name.replace(".cocci", "")
        return f"{name}{' ' + self.detail if self.detail else ''} (step {self.step})" \
            if self.step else f"{name}{' ' + self.detail if self.detail else ''}"


class Track:
    """The lines of one file through the replay: who wrote each line, and
    which pre-image lines each piece removed."""

    def __init__(self, text: str):
        self.lines = text.splitlines(keepends=True)
        self.orig = list(self.lines)
        self.by: list[frozenset] = [frozenset()] * len(self.lines)
        self.base: list[int | None] = list(range(len(self.lines)))
        self.removed: dict[int, frozenset] = {}

    def update(self, text: str, piece: str) -> bool:
        new = text.splitlines(keepends=True)
        if new == self.lines:
            return False
        by: list[frozenset] = []
        base: list[int | None] = []
        for op, i1, i2, j1, j2 in line_opcodes(self.lines, new, autojunk=False):
            if op == "equal":
                by += self.by[i1:i2]
                base += self.base[i1:i2]
                continue
            prev = frozenset().union(*self.by[i1:i2]) if i2 > i1 else frozenset()
            for i in range(i1, i2):
                b = self.base[i]
                if b is not None:
                    self.removed[b] = self.removed.get(b, frozenset()) | {piece}
            by += [prev | {piece}] * (j2 - j1)
            base += [None] * (j2 - j1)
        self.lines, self.by, self.base = new, by, base
        return True


@dataclass
class EntryResult:
    entry: str
    patch: int
    exact: bool
    pieces: list[Piece]
    hunks: dict = field(default_factory=dict)   # file -> [[piece ids] per hunk]
    by_file: dict = field(default_factory=dict)  # file -> [hunk indexes placed by file]
    differs: list[str] = field(default_factory=list)   # files whose replay differs
    error: str = ""
    seconds: float = 0.0


# --------------------------------------------------------------------------
# the replay of one entry

class _Tree:
    """Where an entry is replayed: its files as the patch's pre-image has
    them (regen.series.apply_entry's tree: .path and .scratch)."""

    def __init__(self, path: Path, scratch: Path):
        self.path, self.scratch = path, scratch


class _Files:
    """regen.callers.Index over a replay's tree: the files there (the
    entry's and the patch's) that name each function."""

    def __init__(self, path: Path):
        self.tree = path

    def files(self, names: list[str]) -> dict[str, list[str]]:
        texts = {str(p.relative_to(self.tree)): p.read_text(errors="replace")
                 for p in sorted(self.tree.rglob("*")) if p.suffix in (".c", ".h") and p.is_file()}
        return {n: [f for f, t in texts.items() if re.search(r"\b%s\b" % re.escape(n), t)]
                for n in names}


def _show(repo: Path, rev: str, path: str) -> bytes | None:
    cp = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True)
    return cp.stdout if cp.returncode == 0 else None


def replay_entry(series, entry, patch: P.Patch, repo: Path, commit: str, work: Path) -> EntryResult:
    """Replay `entry` piece by piece on the pre-image of `commit` (the
    patch applied in `repo`), and attribute the hunks of `patch`."""
    t0 = time.monotonic()
    res = EntryResult(entry.id, patch.number, False, [])
    root = work / entry.id
    if root.exists():
        shutil.rmtree(root)
    tree = _Tree(root / "tree", work / "scratch")
    for f in sorted(entry.reads | {fd.path for fd in patch.files}):
        data = _show(repo, f"{commit}^", f)
        if data is not None:
            (tree.path / f).parent.mkdir(parents=True, exist_ok=True)
            (tree.path / f).write_bytes(data)
    tree.path.mkdir(parents=True, exist_ok=True)
    tracks: dict[str, Track] = {}

    def text(f: str) -> str | None:
        p = tree.path / f
        return p.read_text(errors="replace") if p.is_file() else None

    for f in dict.fromkeys([*entry.files, *(fd.path for fd in patch.files)]):
        t = text(f)         # the patch's files: also those the callers pass changed
        tracks[f] = Track(t if t is not None else "")

    def piece(step: int, source: str, detail: str, files, run) -> None:
        pc = Piece(f"{entry.id}#{len(res.pieces) + 1}", entry.id, step, source, detail)
        run()
        changed = False
        for f in files:
            t = text(f)
            if f in tracks and t is not None:
                changed |= tracks[f].update(t, pc.id)
        if changed:
            res.pieces.append(pc)

    start = {f: text(f) for f in entry.files}
    stepno = {id(st): i for i, st in enumerate(entry.steps, 1)}
    queue = S.batches(entry.steps)
    asked: set[int] = set()
    try:
        while queue:
            batch = queue.pop(0)
            ready = S._ready(batch, tree.path)
            if ready < len(batch):
                queue.insert(0, batch[ready:])
                batch = batch[:ready]
            added: list = []        # as regen: a locals-first directive's conversions first
            got = S.take_locals_first(series, batch, queue, asked, tree.path,
                                      f"attribution {entry.id}", added, [])
            for st in added:        # numbered as the step that asked for them
                stepno[id(st)] = stepno[id(batch[0])]
            if got is None:
                continue
            batch = got
            files = batch[0].files
            before = {f: text(f) for f in files if (tree.path / f).is_file()}
            renamed = [(st, found[1]) for st in batch
                       if (found := S._page_param(st, tree.path)) is not None]
            if batch[0].kind == "rule":
                defines = [S._defines(st, tree.path, series.root) for st in batch]   # as regen
                for st, defs in zip(batch, defines):
                    k = stepno[id(st)]
                    detail = " ".join(f"{a}={defs[a]}" for a in ("fn", "var") if a in defs)
                    if any(isinstance(d, M.SplitDeclaration)
                           for r in st.rules for d in M.directives(series.root / r)):
                        piece(k, "regen/declsplit.py", detail, st.files,
                              lambda st=st: S.prepare(series, st, tree.path))
                    for r in st.rules:
                        piece(k, f"cocci/{r}", detail, st.files,
                              lambda r=r, st=st, defs=defs: spatch.apply_rule(
                                  series.root / r, tree.path, st.files,
                                  defines=own_defines(series.root / r, defs),
                                  options=st.options, what=f"attribution {entry.id} {r}"))
            elif batch[0].kind == "members":
                st = batch[0]

                def rm(st=st):
                    p = tree.path / st.files[0]
                    p.write_text(members.remove_members(p.read_text(), st.defines["struct"],
                                                        st.members)[0])
                piece(stepno[id(st)], "regen/members.py", f"struct {st.defines['struct']}",
                      st.files, rm)
            else:
                st = batch[0]
                piece(stepno[id(st)], f"cocci/{st.path}", "", st.files,
                      lambda st=st: template.insert(series.root, tree.path, st.path,
                                                    st.files[0], before=st.before, at=st.at,
                                                    replace_macro=st.replace_macro))
            for st, name in renamed:

                def kdoc(st=st, name=name):
                    for f in st.files:
                        if name and f in before:
                            t = text(f)
                            fixed = kerneldoc.rename_param(t, st.defines["fn"], name, "slab",
                                                           comments.phrases(series.root))
                            if fixed != t:
                                (tree.path / f).write_text(fixed)
                piece(stepno[id(st)], "regen/kerneldoc.py", f"fn={st.defines['fn']}",
                      st.files, kdoc)

            def tidy_batch(before=before):
                for f, old in before.items():
                    new = text(f)
                    if new != old:
                        tidied = tidy.keep_detached_comments(old, tidy.tidy(old, new))
                        if tidied != new:
                            (tree.path / f).write_text(tidied)
            piece(stepno[id(batch[-1])], "regen/tidy.py", "", list(before), tidy_batch)

        def reflow():
            for f, old in start.items():
                t = text(f)
                if old is not None and t is not None:
                    fixed = tidy.reflow(old, t)
                    if fixed != t:
                        (tree.path / f).write_text(fixed)
        piece(0, "regen/tidy.py", "reflow", list(start), reflow)

        def follow():
            for f, old in start.items():
                t = text(f)
                if old is not None and t is not None:
                    fixed = comments.follow(old, t, comments.phrases(series.root))
                    if fixed != t:
                        (tree.path / f).write_text(fixed)
        piece(0, "regen/comments.py", "", list(start), follow)

        # the callers pass (regen/callers.py): the uses, in files the entry
        # does not list, of the functions whose signature it changed, each
        # of its runs a piece; the files it may change are the patch's
        after = {f: t for f in start if (t := text(f)) is not None}
        callers.adapt(series, entry, tree, _Files(tree.path), start, after,
                      piece=lambda source, detail, files, run: piece(0, source, detail, files, run))
    except (SlabconvError, OSError) as e:
        res.error = str(e)
        res.seconds = time.monotonic() - t0
        return res
    # the replay against the patch's post-image
    for fd in patch.files:
        want = _show(repo, commit, fd.path)
        got = (tree.path / fd.path).read_bytes() if (tree.path / fd.path).is_file() else None
        if want != got or fd.path not in tracks:
            res.differs.append(fd.path)
    res.exact = not res.differs
    if res.exact:
        for fd in patch.files:
            res.hunks[fd.path], res.by_file[fd.path] = attribute_hunks(
                fd, tracks[fd.path], [p.id for p in res.pieces])
    res.seconds = time.monotonic() - t0
    shutil.rmtree(root, ignore_errors=True)
    return res


def own_defines(rule: Path, defines: dict[str, str]) -> dict[str, str]:
    """The -D values of a step that a rule file of its chain takes (regen
    runs the chain as one composed file, whose virtual names are the
    union of its files'; spatch refuses -D of a name its file lacks)."""
    text = rule.read_text()
    names = set(re.findall(r"virtual\.(\w+)", text))
    for m in re.finditer(r"^virtual\s+(.+)$", text, re.M):
        names |= {v.strip() for v in m.group(1).split(",")}
    return {k: v for k, v in defines.items() if k in names}


def attribute_hunks(fd: P.FileDiff, track: Track, changed_file: list[str]) -> tuple[list, list]:
    """Per hunk of `fd`: the pieces that wrote its added lines and removed
    its removed ones; and the hunks with a line the matching could not
    place, which get every piece that changed the file too."""
    every = sorted({p for b in track.by for p in b} | {p for r in track.removed.values() for p in r},
                   key=lambda x: changed_file.index(x) if x in changed_file else 0)
    out, by_file = [], []
    for h in fd.hunks:
        got: set = set()
        lost = False
        # a line git shows removed and added again (a blank line the diff
        # aligned otherwise than the replay's matching) was made by no one
        plus = {ln[1:] for ln in h.lines if ln.startswith("+")}
        minus = {ln[1:] for ln in h.lines if ln.startswith("-")}
        i, j = h.old_start - 1 if h.old_len else h.old_start, h.new_start - 1 if h.new_len else h.new_start
        olds, news = range(i, i + h.old_len), range(j, j + h.new_len)

        def same_text_removed(t: str) -> set | None:
            """The removers of an equal line of the hunk's old range (git's
            diff and the replay's matching chose different equal lines)."""
            ks = [k for k in olds if k in track.removed and k < len(track.orig)
                  and track.orig[k].rstrip("\n") == t]
            return set().union(*(track.removed[k] for k in ks)) if ks else None

        def same_text_written(t: str) -> set | None:
            ks = [k for k in news if k < len(track.lines) and track.base[k] is None
                  and track.lines[k].rstrip("\n") == t]
            return set().union(*(track.by[k] for k in ks)) if ks else None
        for ln in h.lines:
            if ln.startswith("+"):
                if j < len(track.by) and track.base[j] is None:
                    got |= track.by[j]
                elif ln[1:] not in minus:
                    alt = same_text_written(ln[1:])
                    lost |= alt is None
                    got |= alt or set()
                j += 1
            elif ln.startswith("-"):
                if i in track.removed:
                    got |= track.removed[i]
                elif ln[1:] not in plus:
                    alt = same_text_removed(ln[1:])
                    lost |= alt is None
                    got |= alt or set()
                i += 1
            elif ln.startswith(" "):
                i += 1
                j += 1
        if lost or not got:
            got |= set(every)
            by_file.append(h.index)
        out.append(sorted(got, key=lambda x: int(x.rsplit("#", 1)[1])))
    return out, by_file


# --------------------------------------------------------------------------
# the whole series

@dataclass
class Attribution:
    version: str
    series: str                  # series id
    entries: list[EntryResult]
    pieces: dict[str, Piece]
    spatch: str = ""
    commit: str = ""             # slabconv commit
    dirty: list[str] = field(default_factory=list)   # uncommitted files (reproduce.INPUTS)
    cocci_digest: str = ""
    recorded: str = ""
    seconds: float = 0.0
    path: str = ""

    def of_patch(self, number: int) -> EntryResult | None:
        return next((e for e in self.entries if e.patch == number), None)

    def hunk(self, number: int, path: str, index: int) -> list[Piece] | None:
        """The pieces a hunk is attributed to (None: not attributed here)."""
        e = self.of_patch(number)
        if e is None or not e.exact or path not in e.hunks or index > len(e.hunks[path]):
            return None
        return [self.pieces[x] for x in e.hunks[path][index - 1]]

    def sources_of_hunk(self, number: int, path: str, index: int) -> list[str] | None:
        """The rule files, templates and members step of a hunk (not the
        driver's edits), each once, in order."""
        ps = self.hunk(number, path, index)
        if ps is None:
            return None
        return list(dict.fromkeys(p.source for p in ps if not p.driver))

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": self.version, "series": self.series,
                "spatch": self.spatch, "commit": self.commit, "dirty": self.dirty,
                "cocci_digest": self.cocci_digest, "recorded": self.recorded,
                "seconds": round(self.seconds, 1),
                "pieces": {k: p.__dict__ for k, p in self.pieces.items()},
                "entries": [{**{k: v for k, v in e.__dict__.items() if k != "pieces"},
                             "pieces": [p.id for p in e.pieces]} for e in self.entries]}

    @classmethod
    def from_dict(cls, d: dict) -> "Attribution":
        pieces = {k: Piece(**v) for k, v in d["pieces"].items()}
        entries = []
        for e in d["entries"]:
            e = dict(e)
            e["pieces"] = [pieces[x] for x in e["pieces"]]
            entries.append(EntryResult(**e))
        return cls(d["version"], d["series"], entries, pieces, d.get("spatch", ""),
                   d.get("commit", ""), d.get("dirty") or [], d.get("cocci_digest", ""),
                   d.get("recorded", ""), d.get("seconds", 0.0))


def cocci_digest(cocci: Path | None = None) -> str:
    """A digest of the rules, templates and manifest (cocci/, tests aside)."""
    cocci = cocci or paths.COCCI
    h = hashlib.sha256()
    for f in sorted(cocci.rglob("*")):
        if f.is_file() and "tests" not in f.relative_to(cocci).parts:
            h.update(str(f.relative_to(cocci)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def attribute(version: str, series_dir: Path, *, tree: str | None = None,
              jobs: int = 2, manifest_path: Path | None = None) -> Attribution:
    """Apply the series in a scratch repository, replay every entry piece by
    piece (`jobs` entries at a time) and attribute every hunk."""
    t0 = time.monotonic()
    mpath = manifest_path or paths.COCCI / "series.toml"
    man = M.load(mpath)
    cocci = mpath.parent
    side = RD.side_from_dir(series_dir, version)
    side.baseline = RD.baseline_of(side, tree)
    # a directory of its own per run: two runs on one cache do not meet
    work = Path(tempfile.mkdtemp(prefix="run-", dir=paths.cache_dir("attribution", version)))
    try:
        repo = RD.scratch_repo(work, [side])
        info("attribute", f"git am {len(side.patches)} patches of {series_dir}")
        RD.apply(repo, side, 0)
        commits = subprocess.run(["git", "rev-list", "--reverse", "base-0..side-0"], cwd=repo,
                                 capture_output=True, text=True, check=True).stdout.split()
        patches = [P.parse_patch(f) for f in side.patches]
        by_subject = {e.subject: e for e in man.entries if not e.skip}
        todo = []
        for p, c in zip(patches, commits):
            e = by_subject.get(p.subject)
            if e is None:
                info("attribute", f"patch {p.tag} ({p.subject}) has no entry in the manifest")
                continue
            todo.append((e, p, c))

        def one(job):
            e, p, c = job
            r = replay_entry(man, e, p, repo, c, work / "replay")
            info("attribute", f"{p.tag} {e.id}: {len(r.pieces)} pieces, "
                              + ("exact" if r.exact else
                                 f"NOT exact ({r.error.splitlines()[0] if r.error else ', '.join(r.differs)})")
                              + f", {r.seconds:.1f}s")
            return r
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            results = list(ex.map(one, todo))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    commit, dirty = reproduce.repo_state()
    at = Attribution(version, side.series_id, results,
                     {p.id: p for r in results for p in r.pieces}, spatch.spatch_version(),
                     commit, dirty, cocci_digest(cocci),
                     time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.monotonic() - t0)
    return at


# --------------------------------------------------------------------------
# figures, records

def per_source(at: Attribution, patches: list[P.Patch]) -> dict[str, dict]:
    """Per source (rule file, template, members, driver): the hunks
    attributed to it, the ones attributed to it alone among the rules,
    templates and members ("own"), and its instances (pieces that changed
    something)."""
    out: dict[str, dict] = {}
    for p in patches:
        e = at.of_patch(p.number)
        if e is None or not e.exact:
            continue
        for fd in p.files:
            for h in fd.hunks:
                ps = at.hunk(p.number, fd.path, h.index) or []
                srcs = list(dict.fromkeys(x.source for x in ps))
                rules = [s for s in srcs if s not in DRIVER]
                for s in srcs:
                    d = out.setdefault(s, {"hunks": set(), "own": set(), "instances": set()})
                    d["hunks"].add((p.number, fd.path, h.index))
                    if rules == [s]:
                        d["own"].add((p.number, fd.path, h.index))
                for x in ps:
                    out[x.source]["instances"].add(x.id)
    return out


def apply(at: Attribution, patches: list[P.Patch]) -> int:
    """Give each patch whose entry was replayed exactly its hunks' sources
    (P.Patch.hunk_sources: rules, templates, members) and runs (labels,
    the driver's edits included; a hunk placed by file says so).  Returns
    how many patches were attributed."""
    n = 0
    for p in patches:
        e = at.of_patch(p.number)
        if e is None or not e.exact or any(fd.path not in e.hunks for fd in p.files):
            continue
        for fd in p.files:
            loose = set(e.by_file.get(fd.path) or [])
            for h in fd.hunks:
                ps = at.hunk(p.number, fd.path, h.index) or []
                p.hunk_sources[(fd.path, h.index)] = list(dict.fromkeys(
                    x.source for x in ps if not x.driver))
                p.hunk_pieces[(fd.path, h.index)] = [x.label for x in ps] + (
                    ["(placed by file: a line the matching could not place)"]
                    if h.index in loose else [])
        p.attributed = True
        n += 1
    return n


def record_dir(version: str, root: Path | None = None) -> Path:
    return (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version)


def record(at: Attribution, root: Path | None = None) -> Path:
    d = record_dir(at.version, root)
    d.mkdir(parents=True, exist_ok=True)
    out = d / f"{at.series}.json"
    atomic.write_text(out, json.dumps(at.to_dict(), indent=1) + "\n")
    return out


def find(version: str, series: str, root: Path | None = None) -> Attribution | None:
    """The attribution recorded for the series whose id is `series`."""
    if not series:
        return None
    f = record_dir(version, root) / f"{series}.json"
    try:
        d = json.loads(f.read_text())
        if d.get("format") != FORMAT or d.get("series") != series:
            return None
        at = Attribution.from_dict(d)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    at.path = str(f)
    return at


def cmd_attribute(args) -> int:
    version = fetch.kernel(args.kernel or paths.DEFAULT_KERNEL)
    if args.series:
        d = Path(args.series).resolve()
    else:
        src = resolve(version, args.tree, None)
        d, version = series_dir(src), src.version
    at = attribute(version, d, tree=args.tree, jobs=args.jobs)
    f = record(at)
    exact = sum(1 for e in at.entries if e.exact)
    patches = [P.parse_patch(x) for x in P.numbered_patches(d)]
    figures = per_source(at, patches)
    for s, v in sorted(figures.items(), key=lambda kv: -len(kv[1]["hunks"])):
        print(f"{s:45} {len(v['hunks']):5} hunks {len(v['own']):5} own "
              f"{len(v['instances']):4} instances")
    info("attribute", f"{exact} of {len(at.entries)} entries replayed exactly, "
                      f"{len(at.pieces)} pieces, {at.seconds:.1f}s; recorded in {f}")
    for e in at.entries:
        if not e.exact:
            info("attribute", f"  not exact: {e.entry} ({e.error or ', '.join(e.differs)})")
    return 0


def add_command(sub) -> None:
    p = add_command_parser(
        sub, "attribute", "attribute every hunk of the series to the rule instance that made "
                          "it (each step run alone)",
        "Replay each manifest entry from its patch's pre-image with every rule file run\n"
        "alone and record which run made each hunk (runs/attribution-<version>/); the\n"
        "review page attributes hunks by these records.",
        "slabconv attribute --kernel 5.10 --jobs 2")
    p.add_argument("--kernel", "-k", default=None,
                   help=f"kernel version of the series (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--tree", default=None, help="the series regenerated for this tree of yours")
    p.add_argument("--series", default=None,
                   help="the series directory (default generated-patches/<version>/)")
    p.add_argument("--jobs", "-j", type=int, default=2, help="entries replayed at a time")
    p.set_defaults(func=cmd_attribute)
