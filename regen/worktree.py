"""The git work tree in which the series is built, one commit per entry.

The pristine tree is committed once into a repository of the cache as the
baseline (tag `slabconv-baseline`); later runs reset to that tag, so a
regeneration costs only the rules, not a 1 GB copy.

The baseline is committed straight from the source (`git --work-tree=SOURCE
add`: the source is only read, never copied), and the repository borrows the
objects of the cache's other baseline repositories of the same kernel
version (objects/info/alternates): a user's branch of 5.10 shares all but a
few of its 70,000 files with the packaged tree, so its baseline writes only
those few objects instead of compressing the whole tree again.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from base import atomic, lock
from base.lock import locked
from base.log import info, SlabconvError
from base.proc import tied


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


# At most this many regen work trees per source (`git worktree`s of the
# baseline repository), so at most this many runs use them at once; one
# more waits for a slot.
MAX_SLOTS = max(1, int(os.environ.get("SLABCONV_WORKTREES", "4") or 4))

# The slots this process holds: workdir -> (slot, lock fd).  A slot is held
# until the process ends (verify builds from its tree for hours) or
# WorkTree.release().
_HELD: dict[str, tuple[int, int]] = {}


class WorkTree:
    def __init__(self, path: Path, identity: Identity, date: str, slot: int | None = None,
                 workdir: Path | None = None):
        self._unsynced: set[str] = set()
        # file -> its text as the series' after-rules last left it (regen/series.py)
        self.settled: dict[str, str] = {}
        self.path = path
        self.workdir = workdir or path.parent       # holds the baseline repository "linux"
        self.identity = identity
        self.date = date
        self.slot = slot
        # slot None: the baseline repository's own work tree (made once, then
        # only read); slot k: branches of the slot's own
        self.branch = BRANCH if slot is None else f"{BRANCH}-{slot}"
        self.applied_branch = f"{BRANCH}-applied" + ("" if slot is None else f"-{slot}")

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
        cp = subprocess.run(tied(["git", "-C", str(self.path), *args]), capture_output=True,
                            text=True, env=self.env(), input=input, errors="replace")
        if check and cp.returncode != 0:
            raise SlabconvError(f"git {' '.join(args[:3])} failed in {self.path}:\n"
                                f"{cp.stdout}{cp.stderr}".rstrip())
        return cp.stdout

    # --- creation -------------------------------------------------------
    @classmethod
    def prepare(cls, source: Path, source_id: str, workdir: Path, identity: Identity,
                date: str) -> "WorkTree":
        """A work tree of this run's own whose HEAD is the baseline copy of
        `source`, on the slot's branch (BRANCH-k).

        `source` is only read.  `source_id` identifies its content (package
        version, or a hash for user trees); a cached copy is reused only
        when it matches.  The baseline repository is shared by the runs
        of one source (`workdir/linux`, made once under a lock, then only
        read: its objects and its tag); each run takes a slot of its own,
        held until the process ends: slot k is a `git worktree` of that
        repository in `workdir/slots/k/` (made the first time k+1 runs are
        at work at once), with its own index, HEAD and branches, so runs
        never check out or commit in each other's tree (nor in the
        repository's own work tree, where slabconv before the slots
        worked: a checkout of an older slabconv may share the cache).
        Git lock files a killed run left in its slot are removed.
        """
        workdir = Path(workdir)
        slot = claim_slot(workdir)
        path = cls._slot_ready(workdir, slot, source_id, identity, date)
        if path is None:         # made under the lock (another run may be making its slot)
            with locked(workdir / ".repo.lock", f"the baseline repository {workdir / 'linux'}",
                        stage="regen"):
                cls._ensure_baseline(source, source_id, workdir, identity, date)
                path = cls._ensure_slot(workdir, slot, identity, date)
        wt = cls(path, identity, date, slot=slot, workdir=workdir)
        wt.recover()
        info("regen", f"reusing baseline work tree {wt.path}")
        wt.git("checkout", "-q", "-f", "-B", wt.branch, BASE_TAG)
        wt.git("clean", "-q", "-f", "-d", "-x")
        return wt

    @classmethod
    def ensure_baseline(cls, source: Path, source_id: str, workdir: Path, identity: Identity,
                        date: str) -> Path:
        """The shared baseline repository's git directory, made if needed
        (no slot is taken: for readers of the baseline commit)."""
        workdir = Path(workdir)
        with locked(workdir / ".repo.lock", f"the baseline repository {workdir / 'linux'}",
                    stage="regen"):
            cls._ensure_baseline(source, source_id, workdir, identity, date)
        return workdir / "linux" / ".git"

    @classmethod
    def _ensure_baseline(cls, source: Path, source_id: str, workdir: Path, identity: Identity,
                         date: str) -> None:
        """Under the repository lock: the baseline repository `workdir/linux`
        of `source`, copied and committed once."""
        main = cls(workdir / "linux", identity, date)
        marker = main.path / ".git" / MARKER
        if marker.is_file() and marker.read_text().strip() == f"{source_id} layout={LAYOUT}" \
                and _alternates_present(main.path / ".git") and main._has_baseline():
            return
        tmp = workdir / "linux.new"
        for d in (tmp, main.path, workdir / "slots"):
            if d.exists():
                _rmtree(d)
        workdir.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        tmp_wt = cls(tmp, identity, date)
        tmp_wt.git("init", "-q", "-b", BRANCH)
        tmp_wt.git("config", "core.autocrlf", "false")
        tmp_wt.git("config", "gc.auto", "0")
        donors = donor_objects(workdir)
        if donors:
            atomic.write_text(tmp / ".git" / "objects" / "info" / "alternates",
                              "".join(f"{d}\n" for d in donors))
        info("regen", f"committing {source} as the baseline (once per source; git add of the "
                      f"whole tree, objects shared with {len(donors)} other baseline"
                      f"{'' if len(donors) == 1 else 's'} of the cache)")
        # the source's files, read where they are (a user's .git is never taken:
        # git skips it); only the executable bit of a mode is recorded
        tmp_wt.git("--work-tree", str(Path(source).resolve()), "add", "-A", "-f", ".")
        tmp_wt.git("commit", "-q", "--no-verify", "-m", f"Baseline: {source_id}")
        tmp_wt.git("tag", BASE_TAG)
        (tmp / ".git" / MARKER).write_text(f"{source_id} layout={LAYOUT}\n")
        tmp.rename(main.path)

    @classmethod
    def _slot_ready(cls, workdir: Path, slot: int, source_id: str, identity: Identity,
                    date: str) -> Path | None:
        """Slot `slot`'s work tree if the baseline repository and the slot are
        made already (read only, no lock needed: neither changes once made)."""
        main = cls(workdir / "linux", identity, date)
        marker = main.path / ".git" / MARKER
        d = workdir / "slots" / str(slot)
        try:
            if not (marker.read_text().strip() == f"{source_id} layout={LAYOUT}"
                    and (d / "linux" / ".git").is_file()
                    and _alternates_present(main.path / ".git")):
                return None
            ready = (d / "ready").read_text().strip()
        except OSError:
            return None
        base = main.git("rev-parse", "-q", "--verify", f"{BASE_TAG}^{{commit}}",
                        check=False).strip()
        return d / "linux" if base and ready == base else None

    @classmethod
    def _ensure_slot(cls, workdir: Path, slot: int, identity: Identity, date: str) -> Path:
        """Under the repository lock: slot `slot`'s work tree, a `git
        worktree` of the baseline repository at the baseline (made once;
        one a killed run left half made is made again)."""
        main = cls(workdir / "linux", identity, date)
        base = main.git("rev-parse", f"{BASE_TAG}^{{commit}}").strip()
        d = workdir / "slots" / str(slot)
        path, ready = d / "linux", d / "ready"
        if ready.is_file() and ready.read_text().strip() == base and (path / ".git").is_file():
            return path
        if d.exists():
            info("regen", f"work tree slot {slot}: removing the one a killed run left half made")
            _rmtree(d)
        main.git("worktree", "prune")
        d.mkdir(parents=True)
        info("regen", f"making work tree slot {slot} ({path}: a git worktree of the baseline; "
                      f"once, for runs at work at the same time)")
        branch = f"{BRANCH}-{slot}"
        main.git("worktree", "add", "-q", "-f", "-B", branch, str(path), BASE_TAG)
        atomic.write_text(ready, base + "\n")
        return path

    def release(self) -> None:
        """Give this process's slot back before the process ends."""
        held = _HELD.pop(str(self.workdir), None)
        if held is not None:
            lock.release(held[1])

    def git_dir(self) -> Path:
        """This work tree's own git directory (index, HEAD, am's state)."""
        dot = self.path / ".git"
        if dot.is_file():        # a git worktree: "gitdir: <path>"
            return Path(dot.read_text().split(":", 1)[1].strip())
        return dot

    def recover(self) -> None:
        """Remove what a run killed in this slot left behind: git's lock
        files (index.lock, HEAD.lock, the branches' locks) and an
        unfinished `git am`.  Only called with the slot's lock held, so no
        live slabconv run is using them; each removal is said."""
        own = self.git_dir()
        common = self.workdir / "linux" / ".git"      # the branches are the repository's
        for f in [own / "index.lock", own / "HEAD.lock", own / "ORIG_HEAD.lock",
                  *[common / "refs" / "heads" / f"{b}.lock"
                    for b in (self.branch, self.applied_branch)]]:
            _remove_stale(f)
        am = own / "rebase-apply"
        if am.exists():
            info("regen", f"removing {am}: an unfinished git am of a run that was killed")
            _rmtree(am)

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
        out.mkdir(parents=True)
        # the description on the command line: the repository's config is
        # shared by every run's work tree
        self.git("-c", f"branch.{self.branch}.description={cover_subject}\n\n{cover_blurb}\n",
                 "format-patch", "-q", "--cover-letter", "--cover-from-description=subject",
                 f"--subject-prefix={subject_prefix}", "--zero-commit", "--signature=slabconv",
                 "--no-numbered-files", "-o", str(out), f"{BASE_TAG}..{self.branch}")
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
            tied(["git", "-C", str(wt.path), "fast-import", "--quiet", "--date-format=raw",
                  f"--export-marks={self._marks}"]),
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


def donor_objects(workdir: Path) -> list[Path]:
    """The object directories of the cache's other baseline repositories of
    the same kernel version (the siblings of `workdir`, each a complete
    baseline of this layout), for objects/info/alternates.  A borrowed
    object is read from its donor, so a donor must stay: the cache removes
    a baseline repository only to make it again, with the same objects,
    and a repository whose donor is gone is made anew
    (_alternates_present)."""
    out = []
    parent = Path(workdir).parent
    if not parent.is_dir():
        return out
    for d in sorted(parent.iterdir()):
        git = d / "linux" / ".git"
        if d == Path(workdir) or not (git / "objects").is_dir():
            continue
        try:
            if not (git / MARKER).read_text().strip().endswith(f" layout={LAYOUT}"):
                continue
        except OSError:
            continue
        if (git / "objects" / "info" / "alternates").is_file():
            continue            # a borrower itself: its own objects are only the few it wrote
        out.append((git / "objects").resolve())
    return out


def _alternates_present(git_dir: Path) -> bool:
    """Every object directory this repository borrows from is still there."""
    f = git_dir / "objects" / "info" / "alternates"
    try:
        lines = f.read_text().splitlines()
    except FileNotFoundError:
        return True
    return all(Path(line).is_dir() for line in lines if line.strip() and not line.startswith("#"))


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


def claim_slot(workdir: Path, poll: float = 1.0) -> int:
    """A work tree slot of `workdir` for this process (the one it holds
    already, if any): the first free one of MAX_SLOTS; when all are taken,
    the first that comes free (said once, with the holders' pids)."""
    key = str(Path(workdir))
    if key in _HELD:
        return _HELD[key][0]
    said = False
    while True:
        for slot in range(MAX_SLOTS):
            fd = lock.acquire(_slot_lock(workdir, slot), block=False)
            if fd is not None:
                _HELD[key] = (slot, fd)
                return slot
        if not said:
            pids = [lock.holder(_slot_lock(workdir, k)) for k in range(MAX_SLOTS)]
            info("regen", f"waiting for another slabconv run (pids "
                          f"{', '.join(str(p) for p in pids if p)}) on the regen work trees "
                          f"{Path(workdir) / 'slots'} (all {MAX_SLOTS} in use; "
                          f"$SLABCONV_WORKTREES allows more)")
            said = True
        time.sleep(poll)


def _slot_lock(workdir: Path, slot: int) -> Path:
    return Path(workdir) / f".slot-{slot}.lock"


def _remove_stale(f: Path) -> None:
    """Remove git's lock file `f`, which a killed run left (the caller holds
    the lock that every slabconv run takes before writing there)."""
    if os.path.lexists(f):
        info("regen", f"removing {f}: a stale git lock left by a slabconv run that was killed "
                      f"(no live run holds this work tree)")
        try:
            f.unlink()
        except FileNotFoundError:
            pass
