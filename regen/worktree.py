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

    def env(self) -> dict:
        """git's environment: the identity and date of every commit, and no
        user or system configuration."""
        env = dict(os.environ)
        env.update({
            "GIT_AUTHOR_NAME": self.identity.name, "GIT_AUTHOR_EMAIL": self.identity.email,
            "GIT_COMMITTER_NAME": self.identity.name, "GIT_COMMITTER_EMAIL": self.identity.email,
            "GIT_AUTHOR_DATE": self.date, "GIT_COMMITTER_DATE": self.date,
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
        })
        return env

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        cp = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True,
                            env=self.env(), input=input, errors="replace")
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
        """The current content of `paths` (None: absent), for SnapshotImporter.commit()."""
        return {p: (self.path / p).read_bytes() if (self.path / p).is_file() else None
                for p in paths}

    def importer(self) -> "SnapshotImporter":
        """A SnapshotImporter on top of HEAD (close() it)."""
        return SnapshotImporter(self)

    def sync_index(self) -> None:
        """Make the index match HEAD again for the files committed by a
        SnapshotImporter (the work tree must hold what was committed)."""
        if self._unsynced:
            self.git("update-index", "--add", "--remove", "--", *sorted(self._unsynced))
            self._unsynced.clear()

    def commits(self) -> list[str]:
        return self.git("rev-list", "--reverse", f"{BASE_TAG}..HEAD").split()

    def format_patch(self, out: Path, cover_subject: str, cover_blurb: str,
                     subject_prefix: str = "PATCH", base_commit: str = "") -> list[Path]:
        """git format-patch --cover-letter into `out` (created fresh).  The
        baseline commit is this copy's own, so the user tree's commit, when
        there is one, goes into the cover letter as format-patch --base
        would put it."""
        self.git("config", f"branch.{BRANCH}.description", f"{cover_subject}\n\n{cover_blurb}\n")
        out.mkdir(parents=True)
        self.git("format-patch", "-q", "--cover-letter", "--cover-from-description=subject",
                 f"--subject-prefix={subject_prefix}", "--zero-commit", "--signature=slabconv",
                 "--no-numbered-files", "-o", str(out), f"{BASE_TAG}..{BRANCH}")
        files = sorted(out.glob("*.patch"))
        if base_commit and files:
            cover = files[0]
            text = cover.read_text()
            at = text.rindex("\n-- \n")
            cover.write_text(text[:at] + f"\n\nbase-commit: {base_commit}" + text[at:])
        return files


class SnapshotImporter:
    """Commits snapshots (path -> bytes, None: removed) on top of HEAD, one
    per entry, through a single `git fast-import` that runs beside the
    driver: the work tree is not read, so its files may change while a
    commit is written (regen commits entry k while entry k+1 runs), and a
    series costs one git process instead of about ten per entry.  close()
    ends the stream, moves the branch (and HEAD with it) and returns the
    commit ids; the index is put right by WorkTree.sync_index()."""

    def __init__(self, wt: WorkTree):
        import tempfile
        self.wt = wt
        self.ref = wt.git("symbolic-ref", "-q", "HEAD").strip()
        if not self.ref.startswith("refs/heads/"):
            raise SlabconvError(f"{wt.path}: HEAD is not on a branch; cannot commit the series")
        self.parent = wt.git("rev-parse", "HEAD").strip()
        self._modes: dict[str, str] = {}
        # the identity lines as git commit-tree writes them: git parses the
        # date (any format GIT_AUTHOR_DATE takes) into its raw form
        self._author = wt.git("var", "GIT_AUTHOR_IDENT").strip().encode()
        self._committer = wt.git("var", "GIT_COMMITTER_IDENT").strip().encode()
        self.count = 0
        self._marks = Path(tempfile.mkstemp(prefix="slabconv-marks-")[1])
        self._err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            ["git", "-C", str(wt.path), "fast-import", "--quiet", "--date-format=raw",
             f"--export-marks={self._marks}"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._err, env=wt.env())

    def _mode(self, path: str) -> str:
        if path not in self._modes:
            out = self.wt.git("ls-tree", self.parent, "--", path).split()
            self._modes[path] = out[0] if out else "100644"
        return self._modes[path]

    def _write(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
        except BrokenPipeError:
            self.proc.wait()
            raise SlabconvError(f"git fast-import stopped in {self.wt.path}:\n"
                                f"{self._stderr()}") from None

    def _stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace").strip()

    def commit(self, message: str, contents: dict[str, bytes | None]) -> int:
        """Queue a commit of `contents` with `message`; returns its number
        (0, 1, ...: its index in close()'s list)."""
        self.count += 1
        msg = message.encode()
        out = [b"commit %s\nmark :%d\n" % (self.ref.encode(), self.count),
               b"author %s\ncommitter %s\n" % (self._author, self._committer),
               b"data %d\n%s\n" % (len(msg), msg),
               b"from %s\n" % (self.parent.encode() if self.count == 1
                                else b":%d" % (self.count - 1))]
        for path, data in contents.items():
            if "\n" in path or path.startswith('"'):      # fast-import would need it quoted
                raise SlabconvError(f"cannot commit a file named {path!r}")
            if data is None:
                out.append(b"D %s\n" % path.encode())
            else:
                out.append(b"M %s inline %s\ndata %d\n" % (self._mode(path).encode(),
                                                            path.encode(), len(data)))
                out.append(data + b"\n")
        self._write(b"".join(out))
        self.wt._unsynced.update(contents)
        return self.count - 1

    def close(self) -> list[str]:
        """End the stream; the commit ids in order (raises if git failed)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.proc.wait()
        try:
            if rc != 0:
                raise SlabconvError(f"git fast-import failed (exit {rc}) in {self.wt.path}:\n"
                                    f"{self._stderr()}")
            marks = dict(line.split() for line in self._marks.read_text().splitlines()
                         if line.strip())
            return [marks[f":{i}"] for i in range(1, self.count + 1)]
        finally:
            self._marks.unlink(missing_ok=True)
            self._err.close()


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
