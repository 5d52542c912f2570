"""Whether the rules reproduce a series: regen's own record.

Every regen that writes a series records what it wrote:

    $SLABCONV_CACHE/runs/regen-<version>/<digest>.json
        {"digest": <every file of the series directory: names and bytes>,
         "series": <series id: what the numbered patches are, report/results.py
                    (git patch-id and the messages without identity and date)>,
         "plain": <every file of the directory without identity and date lines>,
         "identity": <SOURCE's identity>, "date": <SOURCE's date>,
         "files": N, "output": <directory>, "source": <source id>,
         "spatch": <version>, "commit": <slabconv HEAD>,
         "dirty": [files under cocci/, regen/, slabconv/ that differ from HEAD],
         "seconds": <regen's time>, "recorded": <UTC time>}

The review says that the rules reproduce a series only when such a record
is of the directory it reviews: byte for byte when a regen in this cache
wrote exactly these bytes; else, when a regen wrote the same patches (the
same series id: the same code by git patch-id, the same messages) under
another identity or date, as `make` does into the cache, that they are
reproduced but for identity and date, naming the directory, identity and
date of that regen.  It names the commit and spatch version of that run;
whether the commit's rules were all committed, and whether the series is
the one committed at that commit (generated-patches/<version>/ there: the
same bytes, or the same series id), are said too.  Nothing is asserted
without a record.
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


def _committed_files(commit: str, version: str, repo: Path | None = None) -> dict[str, bytes]:
    """name -> bytes of the files of generated-patches/<version>/ at `commit`."""
    repo = repo or paths.REPO
    rel = f"{paths.GENERATED.relative_to(paths.REPO)}/{version}"
    names = _git("ls-tree", "--name-only", commit, "--", rel + "/", repo=repo).split()
    if not commit or not names:
        return {}
    return {Path(n).name: subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{n}"],
                                         capture_output=True).stdout for n in names}


def committed_digest(commit: str, version: str, repo: Path | None = None) -> str:
    """The digest of generated-patches/<version>/ as `commit` has it ("": none)."""
    files = _committed_files(commit, version, repo)
    if not files:
        return ""
    h = hashlib.sha256()
    for n in sorted(files):
        h.update(n.encode() + b"\0" + files[n] + b"\0")
    return h.hexdigest()[:16]


def committed_series(commit: str, version: str, repo: Path | None = None) -> str:
    """The series id of generated-patches/<version>/ at `commit` ("": none)."""
    files = _committed_files(commit, version, repo)
    numbered = sorted(n for n in files if P.NUMBERED_RE.match(n) and not n.startswith("0000-"))
    return R.content_id(files[n] for n in numbered) if numbered else ""


def plain_digest(series_dir: Path) -> str:
    """A digest of every file of a series directory without the lines that
    carry identity and date (_without_identity())."""
    h = hashlib.sha256()
    for f in sorted(Path(series_dir).iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0"
                     + _without_identity(f.read_text(errors="replace")).encode() + b"\0")
    return h.hexdigest()[:16]


def record_regen(version: str, output: Path, source_id: str, spatch: str, seconds: float,
                 *, root: Path | None = None, repo: Path | None = None) -> Path | None:
    """Record a regen that wrote `output` (a failure to write is not a
    failure of the run: None)."""
    try:
        commit, dirty = repo_state(repo)
        d = digest(output)
        src = P.read_source(output)
        rec = {"digest": d, "series": R.series_id(P.numbered_patches(output)),
               "plain": plain_digest(output),
               "identity": src.get("identity", ""), "date": src.get("date", ""),
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


def _records(version: str, root: Path | None = None) -> list[tuple[Path, dict]]:
    d = (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version)
    out = []
    for f in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            rec = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict):
            out.append((f, rec))
    return out


def find(version: str, series_dir: Path, root: Path | None = None,
         repo: Path | None = None) -> dict | None:
    """The record of the regen that wrote the series of `series_dir`:
    exactly its files ("match": "bytes"), or the same patches under
    another identity or date ("match": "content", "plain_same": whether
    every other file is the same but for identity and date).  Of several,
    a run of committed rules comes first, then these bytes, then the
    newest.  "committed": whether it is the series committed at the
    record's commit.  None: no regen in this cache wrote these patches."""
    if not Path(series_dir).is_dir():
        return None
    d = digest(series_dir)
    recs = _records(version, root)
    found = [{**r, "path": str(f), "match": "bytes"} for f, r in recs
             if f.stem == d and r.get("digest") == d]
    files = P.numbered_patches(series_dir)
    if files:
        sid = R.series_id(files)
        source = P.read_source(series_dir).get("source", "")
        plain = plain_digest(series_dir)
        found += [{**r, "path": str(f), "match": "content", "plain_same": r.get("plain") == plain}
                  for f, r in recs if r.get("digest") != d and r.get("series") == sid
                  and (not source or not r.get("source") or r.get("source") == source)]
    if not found:
        return None

    def rank(rec):
        # a run of committed rules first (the cache may be shared by checkouts
        # with uncommitted changes), then these bytes, then the newest
        same = rec["match"] == "bytes" or rec.get("plain_same")
        return (bool(same and rec.get("commit") and not rec.get("dirty")),
                rec["match"] == "bytes", bool(same), rec.get("recorded", ""))
    rec = max(found, key=rank)
    if rec["match"] == "bytes":
        rec["committed"] = bool(rec.get("commit")) and \
            committed_digest(rec["commit"], version, repo) == d
    else:
        rec["committed"] = bool(rec.get("commit")) and \
            committed_series(rec["commit"], version, repo) == sid
    return rec


def when(rec: dict | None) -> str:
    """The record's time, "2026-12-07 18:41 UTC" ("" without a record)."""
    t = (rec or {}).get("recorded", "")
    return t[:16].replace("T", " ") + " UTC" if t else ""


def status(rec: dict | None) -> str:
    """The summary's word: "yes (this machine, <time>)" when the rules at a
    commit reproduce the series, else why not."""
    ok, _ = line(rec)
    if ok:
        return f"yes (this machine, {when(rec)})"
    return "not recorded" if rec is None else "no: not by a commit (see below)"


def line(rec: dict | None) -> tuple[bool, str]:
    """(reproduced by committed rules, the sentence the review shows)."""
    if rec is None:
        return False, ("No regen in this cache wrote exactly these files, nor the same "
                       "patches under another identity or date, so the page does not say "
                       "that the rules reproduce them: `make regen` and `make` record what "
                       "they write.")
    commit = (rec.get("commit") or "?")[:12]
    if rec.get("match") == "content":
        who = ", ".join(x for x in (rec.get("identity"), rec.get("date")) if x)
        what = (f"a regen on {when(rec)} (spatch {rec.get('spatch', '?')}, "
                f"{rec.get('source', '?')}) wrote the same patches (the same code by git "
                f"patch-id, the same messages; series {rec.get('series')}) to "
                f"{rec.get('output', '?')}" + (f" as {who}" if who else "")
                + "; every other file is the same but for identity and date")
        how = "but for identity and date"
        if not rec.get("plain_same"):
            return False, (f"Not a reproduction: {what.split('; every')[0]}, but the cover "
                           f"letter or SOURCE differ from this series' in more than identity "
                           f"and date.")
    else:
        what = (f"a regen on {when(rec)} (spatch {rec.get('spatch', '?')}, "
                f"{rec.get('source', '?')}) wrote exactly these {rec.get('files', '?')} files "
                f"(digest {rec.get('digest')})")
        how = "byte for byte"
    if not rec.get("commit"):
        return False, (f"Not a reproduction by a commit: {what}, but not from a git checkout "
                       f"of slabconv (no commit to name).")
    if rec.get("dirty"):
        return False, (f"Not a reproduction by a commit: {what}, from commit {commit} with "
                       f"uncommitted changes to {', '.join(rec['dirty'][:6])}"
                       f"{' and more' if len(rec['dirty']) > 6 else ''}.")
    if rec.get("committed"):
        return True, (f"The rules at commit {commit} reproduce the committed series {how}: "
                      f"{what}" + (f", the series committed at {commit}." if how ==
                                   "byte for byte" else
                                   f"; these are the patches committed at {commit}."))
    return True, (f"The rules at commit {commit} reproduce this series {how}: {what}; "
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
