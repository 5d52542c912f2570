"""`git range-diff` between two generations of a series, or the series of two kernels.

    ./slabconv range-diff --kernel 5.10 [--old REV|DIR] [--new DIR]
                                   [--old-kernel K] [--output FILE]
    make range-diff [OLD=REV|DIR] [NEW=DIR] [OLD_KERNEL=6.1] [OUT=FILE]

The old side is, by default, the series committed at HEAD of this
repository (generated-patches/<version>/ as `git show HEAD:` has it; any
revision, or a series directory); the new side is the series in the
working copy (generated-patches/<version>/, or --new DIR).  --old-kernel
takes the old side from another kernel's series (its series directory),
so the same step can be compared across kernels.

Each side is applied with `git am` onto its own baseline in a scratch
repository in the cache (under $SLABCONV_CACHE/rangediff/, removed after
the run): the
baseline commit is the one regen made of the kernel source the series'
SOURCE file names (regen/worktree.py; the source is fetched and the
baseline committed once, as for regen), reached through git's alternates,
and only the files the two series touch are checked out (sparse
checkout), so the scratch repository costs seconds, not a copy of the
kernel.  Then `git range-diff base-old..old base-new..new`.

The result is printed (or written to --output) and recorded for the new
series under $SLABCONV_CACHE/runs/rangediff-<version>/<series id>.json,
where the review page (report/review/) finds it when it reviews that
series.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import fetch
from base import atomic, paths
from base.cliutil import add_command as add_command_parser
from base.log import info, SlabconvError
from regen.series import series_date
from regen.source import resolve, series_dir
from regen.worktree import BASE_TAG, LAYOUT, MARKER, user_identity, WorkTree
from . import patches as P, results as R


RECORD_DIR = "rangediff-{version}"
# one line of `git range-diff --no-color`: "1:  abc1234 = 1:  def5678 subject",
# "-:  ------- > 3:  def5678 subject", "3:  abc1234 < -:  ------- subject"
PAIR_RE = re.compile(r"^\s*(\d+|-):\s+([0-9a-f]+|-+) ([=!<>]) \s*(\d+|-):\s+([0-9a-f]+|-+) (.*)$")
STATUS_WORDS = {"=": "equal", "!": "changed", "<": "only in old", ">": "only in new"}


@dataclass
class Side:
    """One series to compare: where its patch files are, and its baseline."""
    label: str                   # what the user named: "HEAD", a directory, "kernel 6.1"
    dir: Path                    # the series directory (a temporary copy for a revision)
    version: str
    source: dict = field(default_factory=dict)   # its SOURCE file
    # (git directory holding the baseline commit's objects, the commit)
    baseline: tuple[Path, str] | None = None

    @property
    def patches(self) -> list[Path]:
        return P.numbered_patches(self.dir)

    @property
    def series_id(self) -> str:
        return R.series_id(self.patches) if self.patches else ""

    def files(self) -> set[str]:
        """Every path the series' diffs name (old and new names)."""
        out: set[str] = set()
        for p in self.patches:
            for m in re.finditer(r"^diff --git a/(\S+) b/(\S+)$", p.read_text(errors="replace"),
                                 re.M):
                out |= {m.group(1), m.group(2)}
        return out


@dataclass
class Pair:
    old: int | None
    new: int | None
    status: str                  # = ! < >
    subject: str
    diff: str = ""               # for "!": the range-diff's lines under the pair


@dataclass
class RangeDiff:
    old: Side
    new: Side
    text: str
    pairs: list[Pair]
    seconds: float

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for p in self.pairs if p.status == s) for s in "=!<>"}

    def summary(self) -> str:
        c = self.counts()
        return (f"{len(self.pairs)} patches: {c['=']} equal, {c['!']} changed, "
                f"{c['<']} only in the old series, {c['>']} only in the new one")

    def to_dict(self) -> dict:
        return {"old": self.old.label, "new": self.new.label,
                "old_series": self.old.series_id, "new_series": self.new.series_id,
                "old_source": self.old.source.get("source", ""),
                "new_source": self.new.source.get("source", ""),
                "counts": self.counts(), "seconds": round(self.seconds, 2),
                "pairs": [p.__dict__ for p in self.pairs], "text": self.text}


def parse(text: str) -> list[Pair]:
    """The pairs of a `git range-diff --no-color` output, with each changed
    pair's own diff lines."""
    pairs: list[Pair] = []
    for line in text.splitlines():
        m = PAIR_RE.match(line)
        if m:
            pairs.append(Pair(None if m[1] == "-" else int(m[1]),
                              None if m[4] == "-" else int(m[4]), m[3], m[6].strip()))
        elif pairs:
            pairs[-1].diff += line + "\n"
    return pairs


# --------------------------------------------------------------------------
# the two sides

def _git(*args: str, cwd: Path | None = None, env: dict | None = None,
         check: bool = True) -> str:
    cp = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env,
                        errors="replace")
    if check and cp.returncode != 0:
        raise SlabconvError(f"git {' '.join(args[:3])} failed:\n{cp.stdout}{cp.stderr}".rstrip())
    return cp.stdout


def side_from_dir(d: Path, version: str, label: str | None = None) -> Side:
    d = Path(d).resolve()
    if not d.is_dir() or not P.numbered_patches(d):
        raise SlabconvError(f"no series in {d}", exit_code=2)
    return Side(label or str(d), d, version, P.read_source(d))


def side_from_rev(rev: str, version: str, into: Path, repo: Path | None = None) -> Side:
    """The series generated-patches/<version>/ as revision `rev` of this
    repository has it, copied into `into`."""
    repo = repo or paths.REPO
    rel = f"{paths.GENERATED.relative_to(paths.REPO)}/{version}"
    commit = _git("-C", str(repo), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}",
                  check=False).strip()
    if not commit:
        raise SlabconvError(f"--old {rev}: neither a series directory nor a revision of "
                            f"{repo}", exit_code=2)
    names = _git("-C", str(repo), "ls-tree", "-r", "--name-only", commit, "--", rel + "/").split()
    if not names:
        raise SlabconvError(f"revision {rev} ({commit[:12]}) has no series in {rel}/",
                            exit_code=2)
    into.mkdir(parents=True, exist_ok=True)
    for n in names:
        data = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{n}"],
                              capture_output=True, check=True).stdout
        (into / Path(n).name).write_bytes(data)
    return Side(f"{rev} ({commit[:12]}):{rel}", into, version, P.read_source(into))


def baseline_of(side: Side, tree: str | None = None) -> tuple[Path, str]:
    """The git directory and commit of the baseline `side` applies to: the
    baseline regen commits of the kernel source its SOURCE names (or of
    `tree`), made once per source in the cache.  A work tree regen made
    already is only read, never reset."""
    m = re.match(r"^linux-source-([0-9.]+)_(\S+)$", side.source.get("source", ""))
    if tree is None and not m:
        raise SlabconvError(f"{side.label}: its SOURCE names no packaged kernel "
                            f"({side.source.get('source', 'no SOURCE file')}): give --tree",
                            exit_code=2)
    src = resolve(side.version if tree else m.group(1), tree, None if tree else m.group(2))
    workdir = paths.cache_dir("work", src.version, src.source_id)
    git_dir = workdir / "linux" / ".git"
    marker = git_dir / MARKER
    if not (marker.is_file() and marker.read_text().strip() ==
            f"{src.source_id} layout={LAYOUT}"):
        WorkTree.ensure_baseline(src.tree, src.source_id, workdir, user_identity(),
                                 series_date())
    commit = _git("--git-dir", str(git_dir), "rev-parse", "--verify", "-q",
                  f"refs/tags/{BASE_TAG}^{{commit}}", check=False).strip()
    if not commit:
        raise SlabconvError(f"{git_dir}: no {BASE_TAG} tag: remove {workdir} and run again")
    return git_dir, commit


# --------------------------------------------------------------------------
# the scratch repository

def _env() -> dict:
    import os
    env = dict(os.environ)
    env.update({"GIT_AUTHOR_NAME": "slabconv", "GIT_AUTHOR_EMAIL": "slabconv@localhost",
                "GIT_COMMITTER_NAME": "slabconv", "GIT_COMMITTER_EMAIL": "slabconv@localhost",
                "GIT_COMMITTER_DATE": "2021-10-04T14:45:48+01:00",
                "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def scratch_repo(work: Path, sides: list[Side]) -> Path:
    """A fresh git repository in `work` whose objects include each side's
    baseline (alternates), tagged base-<i>, with a sparse checkout of the
    files the sides touch."""
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    env = _env()
    _git("init", "-q", "-b", "scratch", str(repo), env=env)
    alt = repo / ".git" / "objects" / "info" / "alternates"
    dirs = list(dict.fromkeys(str((s.baseline[0] / "objects").resolve()) for s in sides))
    alt.write_text("".join(d + "\n" for d in dirs))
    for i, s in enumerate(sides):
        _git("update-ref", f"refs/tags/base-{i}", s.baseline[1], cwd=repo, env=env)
    files = sorted(set().union(*(s.files() for s in sides)))
    _git("config", "core.sparseCheckout", "true", cwd=repo, env=env)
    _git("config", "core.autocrlf", "false", cwd=repo, env=env)
    _git("config", "gc.auto", "0", cwd=repo, env=env)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "sparse-checkout").write_text(
        "".join("/" + f + "\n" for f in files) or "/nothing-at-all\n")
    return repo


def apply(repo: Path, side: Side, i: int) -> str:
    """`git am` side i's series onto base-<i>, on branch side-<i>."""
    env = _env()
    _git("checkout", "-q", "-f", "-B", f"side-{i}", f"base-{i}", cwd=repo, env=env)
    patches = [str(p) for p in side.patches]
    cp = subprocess.run(["git", "am", "-q", "--keep-cr", *patches], cwd=repo, env=env,
                        capture_output=True, text=True, errors="replace")
    if cp.returncode != 0:
        subprocess.run(["git", "am", "--abort"], cwd=repo, env=env, capture_output=True)
        raise SlabconvError(f"the series {side.label} does not apply to its baseline "
                            f"({side.source.get('source', '?')}):\n{cp.stdout}{cp.stderr}".rstrip())
    return f"side-{i}"


def range_diff(old: Side, new: Side, work: Path) -> RangeDiff:
    """Apply both sides in a scratch repository in `work` and run git range-diff."""
    t0 = time.monotonic()
    repo = scratch_repo(work, [old, new])
    info("range-diff", f"git am {len(old.patches)} patches of {old.label}")
    apply(repo, old, 0)
    info("range-diff", f"git am {len(new.patches)} patches of {new.label}")
    apply(repo, new, 1)
    text = _git("range-diff", "--no-color", "base-0..side-0", "base-1..side-1", cwd=repo,
                env=_env())
    return RangeDiff(old, new, text, parse(text), time.monotonic() - t0)


# --------------------------------------------------------------------------
# records

def record_dir(version: str, root: Path | None = None) -> Path:
    return (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version)


def record(rd: RangeDiff, root: Path | None = None) -> Path | None:
    """Record the range-diff for its new series (a failure to write is not
    a failure of the run: None)."""
    try:
        d = record_dir(rd.new.version, root)
        d.mkdir(parents=True, exist_ok=True)
        out = d / f"{rd.new.series_id}.json"
        atomic.write_text(out, json.dumps({**rd.to_dict(), "recorded": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1) + "\n")
        return out
    except (OSError, TypeError, ValueError):
        return None


def find(version: str, series: str, root: Path | None = None) -> dict | None:
    """The range-diff recorded for the series whose id is `series`, if any."""
    if not series:
        return None
    f = record_dir(version, root) / f"{series}.json"
    try:
        d = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    if d.get("new_series") != series:
        return None
    d["path"] = str(f)
    d["pairs"] = [Pair(**p) for p in d.get("pairs") or []]
    return d


# --------------------------------------------------------------------------
# command line

def cmd_range_diff(args) -> int:
    version = fetch.kernel(args.kernel or paths.DEFAULT_KERNEL)
    tmp = Path(tempfile.mkdtemp(prefix="rangediff-", dir=paths.cache_dir("rangediff")))
    try:
        if args.new:
            new = side_from_dir(Path(args.new), version)
        else:
            src = resolve(version, args.tree, args.deb_version)
            new = side_from_dir(series_dir(src), src.version, "working copy " + str(series_dir(src)))
        if args.old_kernel:
            if args.old:
                raise SlabconvError("--old and --old-kernel: one or the other", exit_code=2)
            osrc = resolve(args.old_kernel, None, None)
            old = side_from_dir(series_dir(osrc), osrc.version, f"Linux {osrc.version} "
                                                                f"({series_dir(osrc)})")
        elif args.old and Path(args.old).is_dir():
            old = side_from_dir(Path(args.old), version)
        else:
            old = side_from_rev(args.old or "HEAD", version, tmp / "old")
        old.baseline = baseline_of(old, args.tree if not args.old_kernel else None)
        new.baseline = baseline_of(new, args.tree)
        rd = range_diff(old, new, tmp)
        rec = record(rd)            # while the old side's files are there (its series id)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.output:
        Path(args.output).write_text(rd.text)
        print(args.output)
    else:
        print(rd.text, end="")
    info("range-diff", f"{rd.old.label} -> {rd.new.label}: {rd.summary()} "
                       f"({rd.seconds:.1f}s)" + (f"; recorded in {rec}" if rec else ""))
    return 0


def add_command(sub) -> None:
    p = add_command_parser(
        sub, "range-diff", "git range-diff between two generations of a series (or the series "
                           "of two kernels)",
        "Apply two series with git am (each onto its own baseline) and run git\n"
        "range-diff between them: the committed one and the working copy's, two\n"
        "directories, or the series of two kernels.",
        "slabconv range-diff --old HEAD~3 --output /tmp/rd.txt")
    p.add_argument("--kernel", "-k", default=None,
                   help=f"kernel version of the new series (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--tree", default=None,
                   help="the series regenerated for this tree of yours")
    p.add_argument("--deb-version", default=None,
                   help="package version of the new series' kernel (default: the pinned one)")
    p.add_argument("--old", default=None,
                   help="the old series: a revision of this repository (its "
                        "generated-patches/<version>/; default HEAD) or a series directory")
    p.add_argument("--old-kernel", default=None,
                   help="the old series is this kernel's (e.g. 6.1: its series directory)")
    p.add_argument("--new", default=None,
                   help="the new series directory (default: the working copy's, "
                        "generated-patches/<version>/)")
    p.add_argument("--output", "-o", default=None, help="write the range-diff here")
    p.set_defaults(func=cmd_range_diff)
