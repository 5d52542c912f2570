"""A spatch run started before its input file exists (a warm start).

The series is a chain of spatch runs over mm/slub.c, each reading what the
one before it wrote.  Before a run touches its C file, spatch starts,
parses the SmPL and the isomorphisms and, for a rule with a Python script,
starts Python: 0.15 s of a 0.65 s run, 0.35 s of a 0.9 s one, none of it
dependent on the file.  So the driver starts the next run while the
current one works:

- the process runs in a directory of its own, with a named pipe in place
  of the file (and symbolic links to the files it includes with
  #include "...", which spatch looks up beside it): spatch stats its files
  when it starts (a pipe exists) and blocks when it opens it;
- when the run's turn comes and its command line is the one the driver
  would run (the same rule, -D values and options: a parameter's position
  is read off the tree, so an earlier step can change it), the file's
  content is put in the directory in place of the pipe and written into
  the pipe; spatch reads it, works and writes its result (--in-place) to
  the file in its directory, which is copied back into the tree;
- otherwise the process is killed.

A warm start never decides a result: if the process has gone before it
opened the pipe, the pipe breaks, the process fails or anything else is
not as expected, the run is made again the ordinary way, and that run's
result (or error) is the one used.  SLABCONV_WARM_START=0 turns it off.
"""
from __future__ import annotations

import atexit
import errno
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ENABLED = os.environ.get("SLABCONV_WARM_START", "1") != "0"
OPEN_TIMEOUT = 60.0     # seconds for the process to open its pipe once fed
WRITE_TIMEOUT = 60.0    # seconds for it to read the file

# how the warm starts of this process went: used (the result came from the
# warm process), discarded (killed: its command was not the one run, or the
# result was cached), fallback (an ordinary run was made instead)
STATS = {"used": 0, "discarded": 0, "fallback": 0}
_LOCK = threading.Lock()


def count(what: str) -> None:
    with _LOCK:
        STATS[what] += 1


def local_includes(text: bytes) -> list[str]:
    """The files a C file includes with #include "name"."""
    return [m.decode(errors="replace")
            for m in re.findall(rb'^\s*#\s*include\s*"([^"]+)"', text, re.M)]


class Warm:
    """One spatch process waiting for its single input file `file`
    (relative to the tree; also its path in the process's directory)."""

    def __init__(self, cmd: list[str], tree: Path, file: str, root: Path):
        self.cmd, self.tree, self.file = list(cmd), tree, file
        root.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="warm-", dir=root))
        rel = Path(file)
        here = self.dir / rel.parent
        here.mkdir(parents=True, exist_ok=True)
        for name in local_includes((tree / rel).read_bytes()):
            if "/" not in name and name != rel.name and (tree / rel.parent / name).exists():
                os.symlink(tree / rel.parent / name, here / name)
        self.pipe = self.dir / rel
        os.mkfifo(self.pipe)
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.cmd, cwd=self.dir, stdout=self.out, stderr=self.err,
                                     stdin=subprocess.DEVNULL)

    def _open_pipe(self) -> int | None:
        """The pipe opened for writing once the process has opened it for
        reading; None if the process exits (or times out) first."""
        deadline = time.monotonic() + OPEN_TIMEOUT
        while True:
            try:
                return os.open(self.pipe, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as e:
                if e.errno != errno.ENXIO:        # ENXIO: no reader yet
                    return None
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return None
            time.sleep(0.002)

    def _write_all(self, fd: int, data: bytes) -> bool:
        view = memoryview(data)
        deadline = time.monotonic() + WRITE_TIMEOUT
        while view:
            _, ready, _ = select.select([], [fd], [], 0.5)
            if not ready:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    return False
                continue
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except BrokenPipeError:
                # spatch closed it having read what it wanted: it opens the
                # file again to parse it, and finds the file itself
                return True
            view = view[n:]
        return True

    def run(self, data: bytes, wait) -> tuple[int, str, str, bytes] | None:
        """Feed `data` (the file's content) and wait for the process with
        `wait(proc)` (which returns its exit code).  Returns the exit code,
        stdout, stderr and the file's content afterwards, or None when the
        run is not to be trusted (the caller runs spatch the ordinary way)."""
        try:
            fd = self._open_pipe()
            if fd is None:
                return None
            try:
                staged = self.pipe.with_name(f".{self.pipe.name}.in")
                staged.write_bytes(data)
                os.replace(staged, self.pipe)   # later opens see the file itself
                ok = self._write_all(fd, data)
            finally:
                os.close(fd)
            if not ok:
                return None
            rc = wait(self.proc)
            self.out.seek(0)
            self.err.seek(0)
            stdout = self.out.read().decode(errors="replace")
            stderr = self.err.read().decode(errors="replace")
            if rc != 0 or not self.pipe.is_file():
                return None
            return rc, stdout, stderr, self.pipe.read_bytes()
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.out.close()
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Pool:
    """The warm processes of one driver, per tree in the order they were
    started: the next runs of the chain on that tree (at most DEPTH)."""
    DEPTH = 2

    def __init__(self):
        self._warm: dict[str, list[Warm]] = {}
        self._lock = threading.Lock()

    def start(self, cmd: list[str], tree: Path, files: list[str], root: Path) -> bool:
        """Start `cmd` warm for `tree` (unless it is waiting already); the
        oldest process of the tree goes when there are DEPTH of them.  Only
        a run over one file starts warm."""
        if not ENABLED or len(files) != 1:
            return False
        key = str(tree)
        with self._lock:
            ws = self._warm.setdefault(key, [])
            if any(w.cmd == list(cmd) and w.file == files[0] for w in ws):
                return True
            old = ws[:len(ws) - self.DEPTH + 1] if len(ws) >= self.DEPTH else []
            del ws[:len(old)]
        for w in old:
            w.close()
            count("discarded")
        try:
            w = Warm(cmd, tree, files[0], root)
        except OSError:
            return False
        with self._lock:
            self._warm.setdefault(key, []).append(w)
        return True

    def take(self, cmd: list[str], tree: Path, files: list[str]) -> Warm | None:
        """The warm process for exactly this run, if there is one.  Those of
        the tree started before it were for runs that were not made (their
        command turned out otherwise): they are killed."""
        with self._lock:
            ws = self._warm.get(str(tree), [])
            k = next((i for i, w in enumerate(ws)
                      if w.cmd == list(cmd) and [w.file] == list(files)), None)
            if k is None:
                return None
            stale, found = ws[:k], ws[k]
            del ws[:k + 1]
        for w in stale:
            w.close()
            count("discarded")
        return found

    def discard(self, tree: Path | None = None) -> None:
        """Kill the warm processes (of `tree`, or all of them)."""
        with self._lock:
            keys = [k for k in self._warm if tree is None or k == str(tree)]
            gone = [w for k in keys for w in self._warm.pop(k)]
        for w in gone:
            w.close()
            count("discarded")


POOL = Pool()
atexit.register(POOL.discard)
