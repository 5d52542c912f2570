"""Whether the rules reproduce a series byte for byte: regen's own record.

Every regen that writes a series records what it wrote:

    $SLABCONV_CACHE/runs/regen-<version>/<digest>.json
        {"digest": <every file of the series directory: names and bytes>,
         "series": <series id: the numbered patches, report/results.py>,
         "files": N, "output": <directory>, "source": <source id>,
         "spatch": <version>, "commit": <slabconv HEAD>,
         "dirty": [files under cocci/, regen/, slabconv/ that differ from HEAD],
         "seconds": <regen's time>, "recorded": <UTC time>}

The review says that the rules reproduce a series byte for byte only
when such a record has the digest of the directory it reviews (a regen
in this cache wrote exactly these bytes), and names the commit and
spatch version of that run; whether the commit's rules were all
committed, and whether these are the bytes committed at that commit
(generated-patches/<version>/ there), are said too.  Nothing is
asserted without a record.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from pathlib import Path

from base import atomic, paths
from . import patches as P, results as R


RECORD_DIR = "regen-{version}"
INPUTS = ("cocci", "regen", "slabconv")     # what a regen is made of, in this repository


def digest(series_dir: Path) -> str:
    """A digest of every file of a series directory (names and bytes)."""
    h = hashlib.sha256()
    for f in sorted(Path(series_dir).iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _git(*args: str, repo: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def repo_state(repo: Path | None = None) -> tuple[str, list[str]]:
    """(HEAD of this repository, the files of INPUTS that differ from it)."""
    repo = repo or paths.REPO
    head = _git("rev-parse", "HEAD", repo=repo).strip()
    st = _git("status", "--porcelain", "--", *INPUTS, repo=repo)
    return head, sorted(ln[3:] for ln in st.splitlines() if ln.strip())


def committed_digest(commit: str, version: str, repo: Path | None = None) -> str:
    """The digest of generated-patches/<version>/ as `commit` has it ("": none)."""
    repo = repo or paths.REPO
    rel = f"{paths.GENERATED.relative_to(paths.REPO)}/{version}"
    names = _git("ls-tree", "--name-only", commit, "--", rel + "/", repo=repo).split()
    if not commit or not names:
        return ""
    h = hashlib.sha256()
    for n in sorted(names, key=lambda x: Path(x).name):
        data = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{n}"],
                              capture_output=True).stdout
        h.update(Path(n).name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:16]


def record_regen(version: str, output: Path, source_id: str, spatch: str, seconds: float,
                 *, root: Path | None = None, repo: Path | None = None) -> Path | None:
    """Record a regen that wrote `output` (a failure to write is not a
    failure of the run: None)."""
    try:
        commit, dirty = repo_state(repo)
        d = digest(output)
        rec = {"digest": d, "series": R.series_id(P.numbered_patches(output)),
               "files": sum(1 for f in Path(output).iterdir() if f.is_file()),
               "output": str(output), "source": source_id, "spatch": spatch,
               "commit": commit, "dirty": dirty, "seconds": round(seconds, 1),
               "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        out = (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version)
        out.mkdir(parents=True, exist_ok=True)
        f = out / f"{d}.json"
        atomic.write_text(f, json.dumps(rec, indent=1) + "\n")
        return f
    except (OSError, TypeError, ValueError):
        return None


def find(version: str, series_dir: Path, root: Path | None = None,
         repo: Path | None = None) -> dict | None:
    """The record of the regen that wrote exactly the files of
    `series_dir`, with "committed": whether they are the series committed
    at its commit; None: no regen in this cache wrote these bytes."""
    if not Path(series_dir).is_dir():
        return None
    d = digest(series_dir)
    f = (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version) / f"{d}.json"
    try:
        rec = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    if rec.get("digest") != d:
        return None
    rec["path"] = str(f)
    rec["committed"] = bool(rec.get("commit")) and \
        committed_digest(rec["commit"], version, repo) == d
    return rec


def line(rec: dict | None) -> tuple[bool, str]:
    """(reproduced by committed rules, the sentence the review shows)."""
    if rec is None:
        return False, ("No regen in this cache wrote exactly these files, so the page does not "
                       "say that the rules reproduce them: `make regen` records what it writes.")
    when = rec.get("recorded", "?").replace("T", " ").replace("Z", " UTC")
    commit = (rec.get("commit") or "?")[:12]
    what = (f"a regen on {when} (spatch {rec.get('spatch', '?')}, "
            f"{rec.get('source', '?')}) wrote exactly these {rec.get('files', '?')} files "
            f"(digest {rec.get('digest')})")
    if not rec.get("commit"):
        return False, (f"Not a reproduction by a commit: {what}, but not from a git checkout "
                       f"of slabconv (no commit to name).")
    if rec.get("dirty"):
        return False, (f"Not a reproduction by a commit: {what}, from commit {commit} with "
                       f"uncommitted changes to {', '.join(rec['dirty'][:6])}"
                       f"{' and more' if len(rec['dirty']) > 6 else ''}.")
    if rec.get("committed"):
        return True, (f"The rules at commit {commit} reproduce the committed series byte for "
                      f"byte: {what}, the series committed at {commit}.")
    return True, (f"The rules at commit {commit} reproduce this series byte for byte: {what}; "
                  f"it is not the series committed at {commit}.")


IDENTITY_LINES = ("From: ", "Signed-off-by: ", "identity: ", "date: ", "Date: ")
SHORTLOG_HEAD = re.compile(r"^\S.* \(\d+\):$")     # the cover letter's "Author (58):"


def _without_identity(text: str) -> str:
    """A series file without the lines that carry who made it and when (a
    folded From: header's continuation line goes with it)."""
    out, skip = [], False
    for ln in text.split("\n"):
        if ln.startswith(IDENTITY_LINES) or SHORTLOG_HEAD.match(ln):
            skip = True
            continue
        if skip and ln.startswith(" ") and not ln.startswith("  "):
            continue
        skip = False
        out.append(ln)
    return "\n".join(out)


def compare(produced: Path, committed: Path) -> tuple[str, list[str]]:
    """How a series the main job wrote to the cache stands to the committed
    one: ("identical", []), ("identical except identity and date", []), or
    ("different", [the files that differ or exist on one side only])."""
    a = {p.name: p for p in Path(produced).iterdir() if p.is_file()}
    b = {p.name: p for p in Path(committed).iterdir() if p.is_file()}
    only = sorted(set(a) ^ set(b))
    both = sorted(set(a) & set(b))
    if not only and all(a[n].read_bytes() == b[n].read_bytes() for n in both):
        return "identical", []
    diff = only + [n for n in both
                   if _without_identity(a[n].read_text(errors="replace"))
                   != _without_identity(b[n].read_text(errors="replace"))]
    if not diff:
        return "identical except identity and date", []
    return "different", sorted(diff)
