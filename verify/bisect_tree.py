"""The per-patch check's source: the series read from git objects alone
(Repo), and its build tree, a hard-link snapshot of the baseline with a
copy of the baseline's O=, moved from commit to commit by replacing the
files that differ (materialise); state.json, what resuming needs."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Optional

from base import atomic, log as slog
from base.log import SlabconvError
from . import tree


O_NAME = "o"
STATE_VERSION = 1
KEEP_OTHER_RESULTS = 300           # results of commits not in the current series


class Repo:
    def __init__(self, path):
        self.path = Path(path).resolve()

    def git(self, *args, binary: bool = False, check: bool = True):
        cp = subprocess.run(["git", "-C", str(self.path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        if check and cp.returncode != 0:
            raise SlabconvError(f"git {' '.join(args[:4])} failed in {self.path}: "
                                f"{cp.stderr.decode(errors='replace').strip()}", exit_code=2)
        return cp.stdout if binary else cp.stdout.decode(errors="replace")

    def rev(self, ref: str) -> str:
        """The commit `ref` names, or "" if none."""
        return self.git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False).strip()

    def series(self, base: str, head: str) -> list:
        """[(sha, subject)] of base..head, oldest first; it must be linear."""
        b, h = self.rev(base), self.rev(head)
        lines = self.git("rev-list", "--reverse", "--parents", f"{b}..{h}").split("\n")
        commits, prev = [], b
        for line in filter(None, lines):
            sha, *parents = line.split()
            if parents != [prev]:
                raise SlabconvError(f"{base}..{head} in {self.path} is not a linear series "
                                    f"(commit {sha[:12]} has parents {parents})", exit_code=2)
            commits.append(sha)
            prev = sha
        if not commits:
            raise SlabconvError(f"no commits between {base} and {head} in {self.path}",
                                exit_code=2)
        subjects = {}
        for rec in self.git("log", "--format=%H%x00%s", f"{b}..{h}").splitlines():
            sha, _, subj = rec.partition("\0")
            subjects[sha] = subj
        return [(c, subjects.get(c, "")) for c in commits]

    def delta(self, base: str, commit: str) -> dict:
        """path -> (mode, blob) for each path whose content at `commit`
        differs from `base` (mode "000000", blob None: deleted)."""
        raw = self.git("diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, commit,
                       binary=True).decode(errors="surrogateescape")
        parts = raw.split("\0")
        out = {}
        for i in range(0, len(parts) - 1, 2):
            head, path = parts[i], parts[i + 1]
            if not head.startswith(":"):
                continue
            _, new_mode, _, new_sha, _ = head[1:].split(" ", 4)
            out[path] = (new_mode, None if new_mode == "000000" else new_sha)
        return out

    def blob(self, sha: str) -> bytes:
        return self.git("cat-file", "blob", sha, binary=True)

    def touched(self, base: str, head: str) -> list:
        """Every path that some commit of base..head changes."""
        names = self.git("log", "--format=", "--name-only", "--no-renames", f"{base}..{head}")
        return sorted({n for n in names.splitlines() if n.strip()})

    def check_baseline(self, base: str, src: Path, paths: list) -> None:
        """src must hold `base`'s content for `paths` (the files the series touches)."""
        listed = {}
        if paths:
            for rec in self.git("ls-tree", "-r", "-z", base, "--", *paths).split("\0"):
                if rec:
                    meta, _, p = rec.partition("\t")
                    listed[p] = meta.split()[2]
        bad = []
        for p in paths:
            f = src / p
            if p not in listed:
                if f.exists() or f.is_symlink():
                    bad.append(f"{p} (not in {base[:12]})")
                continue
            if not f.is_file():
                bad.append(f"{p} (missing)")
                continue
            got = self.git("hash-object", "--no-filters", str(f)).strip()
            if got != listed[p]:
                bad.append(p)
        if bad:
            raise SlabconvError(f"the baseline tree {src} is not commit {base[:12]} of "
                                f"{self.path}: {', '.join(bad[:6])} differ", exit_code=2)


def _ensure_writable_dir(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    if not os.access(d, os.W_OK):
        os.chmod(d, os.stat(d).st_mode | 0o700)


def _unlink(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        _ensure_writable_dir(p.parent)
        p.unlink()
    elif p.is_dir():
        tree.remove(p)


def materialise(repo: Repo, snap: Path, base_snap: Path, files, target: dict) -> None:
    """Give each of `files` in `snap` its content in the commit whose delta
    from the baseline is `target` (a path not in `target` has the baseline's
    content, taken from `base_snap`).  Every file is a new inode with mtime
    now: never written through a hard link, always newer than the objects."""
    for rel in sorted(files):
        d = snap / rel
        _unlink(d)
        ent = target.get(rel)
        if ent is None:                              # the baseline's content
            s = base_snap / rel
            if s.is_symlink():
                _ensure_writable_dir(d.parent)
                os.symlink(os.readlink(s), d)
                continue
            if not s.is_file():
                continue                             # not in the baseline either
            data = s.read_bytes()
            mode = 0o755 if os.stat(s).st_mode & 0o111 else 0o644
        else:
            gmode, sha = ent
            if sha is None or gmode == "160000":    # deleted; submodules are ignored
                continue
            data = repo.blob(sha)
            if gmode == "120000":
                _ensure_writable_dir(d.parent)
                os.symlink(os.fsdecode(data), d)
                continue
            mode = 0o755 if gmode == "100755" else 0o644
        _ensure_writable_dir(d.parent)
        with open(d, "xb") as fh:
            fh.write(data)
        os.chmod(d, mode)
        now = time.time_ns()                         # finer than the file system's clock
        os.utime(d, ns=(now, now))


def _load_state(path: Path, key: str, base: str) -> Optional[dict]:
    try:
        st = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if st.get("version") != STATE_VERSION or st.get("key") != key or st.get("base") != base:
        return None
    st["delta"] = {p: tuple(v) for p, v in st.get("delta", {}).items()}
    st.setdefault("dirty", [])
    st.setdefault("results", {})
    return st


def _save_state(path: Path, st: dict, keep: set) -> None:
    res = st["results"]
    others = sorted((s for s in res if s not in keep), key=lambda s: res[s].get("t", 0))
    for s in others[:max(0, len(others) - KEEP_OTHER_RESULTS)]:
        del res[s]
    d = dict(st)
    d["delta"] = {p: list(v) for p, v in st["delta"].items()}
    atomic.write_text(path, json.dumps(d, indent=0) + "\n")


def previous_times(results: dict) -> dict:
    """subject -> the seconds its build took, from the results state.json
    keeps (this series' and others', the newest last): the progress line's
    estimate of the time left."""
    out = {}
    for r in sorted(results.values(), key=lambda r: r.get("t", 0)):
        res = r.get("result") or {}
        if res.get("subject") and res.get("built_seconds"):
            out[res["subject"]] = round(res["built_seconds"], 1)
    return out


def _fresh_tree(bdir: Path, base_snap: Path) -> None:
    snap = bdir / "tree"
    slog.info("bisect", f"new bisect tree {snap} (baseline snapshot + a copy of its O=)")
    tree.snapshot(base_snap, snap, skip=(O_NAME,))
    cp = subprocess.run(["cp", "-a", "--reflink=auto", str(base_snap / O_NAME),
                         str(snap / O_NAME)], stderr=subprocess.PIPE, text=True)
    if cp.returncode != 0:
        raise SlabconvError(f"cannot copy the baseline build: {cp.stderr.strip()}")
    tree.relocate(snap / O_NAME, base_snap, snap)


def _export_baseline(repo: Repo, base: str, out_root: Path) -> Path:
    """The baseline commit's tree, exported once into out_root (git archive)."""
    dst = out_root / f"bisect-src-{base[:12]}"
    if (dst / ".slabconv-complete").is_file():
        return dst
    tree.remove(dst)
    dst.mkdir(parents=True)
    slog.info("bisect", f"exporting {base[:12]} into {dst}")
    p1 = subprocess.Popen(["git", "-C", str(repo.path), "archive", base], stdout=subprocess.PIPE)
    p2 = subprocess.run(["tar", "-x", "-C", str(dst)], stdin=p1.stdout)
    p1.stdout.close()
    if p1.wait() != 0 or p2.returncode != 0:
        raise SlabconvError(f"cannot export {base} from {repo.path}")
    (dst / ".slabconv-complete").write_text(base + "\n")
    return dst
