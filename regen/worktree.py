"""The git work tree in which the series is built, one commit per entry.

The pristine tree is copied once into the cache and committed as the
baseline (tag `slabconv-baseline`); later runs reset to that tag, so a
regeneration costs only the rules, not a 1 GB copy.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from slabconv.log import SlabconvError, info

BASE_TAG = "slabconv-baseline"
BRANCH = "slabconv"
MARKER = "slabconv-source"       # inside .git: identity of the copied tree
LAYOUT = "2"                     # bump when the way the work tree is made changes


@dataclass
class Identity:
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


DEFAULT_IDENTITY = Identity("slabconv", "slabconv@localhost")


def parse_identity(text: str) -> Identity:
    import re
    m = re.match(r"\s*(.+?)\s*<([^>]+)>\s*$", text)
    if not m:
        raise SlabconvError(f"identity '{text}' is not 'Name <email>'", exit_code=2)
    return Identity(m.group(1), m.group(2))


def user_identity() -> Identity:
    """$SLABCONV_IDENTITY, else git's user.name/user.email, else DEFAULT_IDENTITY."""
    env = os.environ.get("SLABCONV_IDENTITY")
    if env:
        return parse_identity(env)

    def cfg(key):
        cp = subprocess.run(["git", "config", "--get", key], capture_output=True, text=True)
        return cp.stdout.strip() if cp.returncode == 0 else ""
    name, email = cfg("user.name"), cfg("user.email")
    if name and email:
        return Identity(name, email)
    return DEFAULT_IDENTITY


class WorkTree:
    def __init__(self, path: Path, identity: Identity, date: str):
        self._unsynced: set[str] = set()
        self.path = path
        self.identity = identity
        self.date = date

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        env = dict(os.environ)
        env.update({
            "GIT_AUTHOR_NAME": self.identity.name, "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name, "GIT_COMMITTER_EMAIL": self.identity.email,
            "GIT_AUTHOR_DATE": self.date, "GIT_COMMITTER_DATE": self.date,
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
        })
        cp = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True,
                            env=env, input=input, errors="replace")
        if check and cp.returncode != 0:
            raise SlabconvError(f"git {' '.join(args[:3])} failed in {self.path}:\n"
                                f"{cp.stdout}{cp.stderr}".rstrip())
        return cp.stdout

    # --- creation -------------------------------------------------------
    @classmethod
    def prepare(cls, source: Path, source_id: str, workdir: Path, identity: Identity,
                date: str) -> "WorkTree":
        """A work tree whose HEAD is the baseline copy of `source`, on branch BRANCH.

        `source` is only read.  `source_id` identifies its content (package
        version, or a hash for user trees); a cached copy is reused only
        when it matches.
        """
        wt = cls(workdir / "linux", identity, date)
        marker = wt.path / ".git" / MARKER
        if marker.is_file() and marker.read_text().strip() == f"{source_id} layout={LAYOUT}" and wt._has_baseline():
            info("regen", f"reusing baseline work tree {wt.path}")
            wt.git("checkout", "-q", "-f", "-B", BRANCH, BASE_TAG)
            wt.git("clean", "-q", "-f", "-d", "-x")
            return wt
        info("regen", f"copying {source} into a new work tree (once per source)")
        tmp = workdir / "linux.new"
        for d in (tmp, wt.path):
            if d.exists():
                _rmtree(d)
        workdir.mkdir(parents=True, exist_ok=True)
        # keep modes (scripts must stay executable), drop read-only bits of a pristine tree
        subprocess.run(["cp", "-R", "--preserve=mode,timestamps", str(source), str(tmp)], check=True)
        subprocess.run(["chmod", "-R", "u+w", str(tmp)], check=True)
        if (tmp / ".git").exists():      # a user's git tree: take its files, not its history
            _rmtree(tmp / ".git")
        tmp_wt = cls(tmp, identity, date)
        tmp_wt.git("init", "-q", "-b", BRANCH)
        tmp_wt.git("config", "core.autocrlf", "false")
        tmp_wt.git("config", "gc.auto", "0")
        info("regen", "committing the baseline (git add of the whole tree)")
        tmp_wt.git("add", "-A", "-f", ".")
        tmp_wt.git("commit", "-q", "--no-verify", "-m", f"Baseline: {source_id}")
        tmp_wt.git("tag", BASE_TAG)
        (tmp / ".git" / MARKER).write_text(f"{source_id} layout={LAYOUT}\n")
        tmp.rename(wt.path)
        return wt

    def _has_baseline(self) -> bool:
        return self.git("rev-parse", "-q", "--verify", f"refs/tags/{BASE_TAG}", check=False).strip() != ""

    # --- per entry --------------------------------------------------------
    @property
    def scratch(self) -> Path:
        """Driver files that belong next to the tree, not in it (composed rules)."""
        return self.path.parent / "scratch"

    def changed_files(self, paths=()) -> list[str]:
        """Files that differ from HEAD (only among `paths` when given: a
        status of the whole tree takes long)."""
        out = self.git("status", "--porcelain", "--untracked-files=all", "--", *paths)
        return sorted(line[3:] for line in out.splitlines() if line.strip())

    def diff(self, *paths: str) -> str:
        return self.git("diff", "--", *paths)

    def snapshot(self, paths) -> dict[str, bytes | None]:
        """The current content of `paths` (None: absent), for commit_snapshot()."""
        return {p: (self.path / p).read_bytes() if (self.path / p).is_file() else None
                for p in paths}

    def commit_snapshot(self, message: str, contents: dict[str, bytes | None]) -> str:
        """Commit `contents` (path -> bytes, None: removed) on top of HEAD
        without reading the work tree, so the files may change meanwhile:
        regen commits entry k while entry k+1 runs."""
        head = self.git("rev-parse", "HEAD").strip()
        changes: dict[str, str | None] = {}
        for p, data in contents.items():
            if data is None:
                changes[p] = None
                continue
            cp = subprocess.run(["git", "-C", str(self.path), "hash-object", "-w", "--stdin"],
                                input=data, capture_output=True)
            if cp.returncode != 0:
                raise SlabconvError(f"git hash-object failed for {p}: "
                                    f"{cp.stderr.decode(errors='replace').strip()}")
            changes[p] = cp.stdout.decode().strip()
        tree = self._tree_with(f"{head}^{{tree}}", "", changes)
        commit = self.git("commit-tree", tree, "-p", head, "-F", "-", input=message).strip()
        self.git("update-ref", "HEAD", commit)
        self._unsynced.update(contents)
        return commit

    def commit(self, message: str, paths=()) -> str:
        """Commit the changes (of `paths` only when given: then the new tree
        is made from HEAD's with the changed blobs swapped in, without
        reading the index of the whole tree; call sync_index() when done)."""
        if not paths:
            self.git("add", "-A")
            self.git("commit", "-q", "--no-verify", "--no-status", "-F", "-", input=message)
            return self.git("rev-parse", "HEAD").strip()
        head = self.git("rev-parse", "HEAD").strip()
        present = [p for p in paths if (self.path / p).is_file()]
        blobs = dict(zip(present, self.git("hash-object", "-w", "--", *present).split())) \
            if present else {}
        changes: dict[str, str | None] = {p: blobs.get(p) for p in paths}
        tree = self._tree_with(f"{head}^{{tree}}", "", changes)
        commit = self.git("commit-tree", tree, "-p", head, "-F", "-", input=message).strip()
        self.git("update-ref", "HEAD", commit)
        self._unsynced.update(paths)
        return commit

    def _tree_with(self, tree: str, prefix: str, changes: dict[str, str | None]) -> str:
        """The id of `tree` (the directory `prefix` of the commit) with the
        blobs in `changes` (path -> blob id, None: removed) replaced."""
        here = {p[len(prefix):]: b for p, b in changes.items() if p.startswith(prefix)}
        entries = {}
        for line in self.git("ls-tree", "-z", tree).split("\0"):
            if line:
                meta, name = line.split("\t", 1)
                entries[name] = meta.split()
        subdirs = {}
        for rel, blob in here.items():
            if "/" in rel:
                subdirs.setdefault(rel.split("/", 1)[0], None)
            elif blob is None:
                entries.pop(rel, None)
            else:
                mode = entries[rel][0] if rel in entries else "100644"
                entries[rel] = [mode, "blob", blob]
        for d in subdirs:
            old = entries[d][2] if d in entries else self._empty_tree()
            entries[d] = ["040000", "tree", self._tree_with(old, f"{prefix}{d}/", changes)]
        listing = "".join(f"{m} {t} {o}\t{n}\0" for n, (m, t, o) in entries.items())
        return self.git("mktree", "-z", input=listing).strip()

    def _empty_tree(self) -> str:
        return self.git("mktree", input="").strip()

    def sync_index(self) -> None:
        """Make the index match HEAD again for the files commit() changed."""
        if self._unsynced:
            self.git("update-index", "--add", "--remove", "--", *sorted(self._unsynced))
            self._unsynced.clear()

    def commits(self) -> list[str]:
        return self.git("rev-list", "--reverse", f"{BASE_TAG}..HEAD").split()

    def format_patch(self, out: Path, cover_subject: str, cover_blurb: str) -> list[Path]:
        """git format-patch --cover-letter into `out` (created fresh)."""
        self.git("config", f"branch.{BRANCH}.description", f"{cover_subject}\n\n{cover_blurb}\n")
        out.mkdir(parents=True)
        self.git("format-patch", "-q", "--cover-letter", "--cover-from-description=subject",
                 "--zero-commit", "--signature=slabconv", "--no-numbered-files", "-o", str(out),
                 f"{BASE_TAG}..{BRANCH}")
        return sorted(out.glob("*.patch"))


def tree_id(path: Path) -> str:
    """An identity for a user-supplied tree: its path and a hash of its top-level listing and mtimes."""
    h = hashlib.sha256(str(path.resolve()).encode())
    for p in sorted(path.rglob("*.[ch]")):
        st = p.stat()
        h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
    return "tree-" + h.hexdigest()[:16]


def _rmtree(path: Path) -> None:
    def onerror(func, p, exc):
        os.chmod(p, 0o700)
        func(p)
    subprocess.run(["chmod", "-R", "u+w", str(path)], check=False)
    shutil.rmtree(path, onerror=onerror)
