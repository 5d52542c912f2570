"""Spatch runs started before their input files exist (warm starts).

The series is a chain of spatch runs over mm/slub.c, each reading what the
one before it wrote.  Before a run touches its C files, spatch starts,
parses the SmPL and the isomorphisms and, for a rule with a Python script,
starts Python: 0.15 s of a 0.65 s run, 0.35 s of a 0.9 s one, none of it
dependent on the files.  So the driver starts the next run while the
current one works:

- the process runs in a directory of its own, with a named pipe in place
  of each of its files (and symbolic links to the files they include with
  #include "...", which spatch looks up beside them): spatch stats its
  files when it starts (a pipe exists) and blocks when it opens one;
- when the run's turn comes and its command line is the one the driver
  would run (the same rule, -D values, options and files: a parameter's
  position is read off the tree, so an earlier step can change it), each
  file's content is put in the directory in place of its pipe and written
  into the pipe; spatch reads it, works and writes its results (--in-place)
  to the files in its directory, which are copied back into the tree;
- otherwise the process is killed.

A warm start never decides a result: if the process has gone before it
opened every pipe, it times out, the process fails or anything else is not
as expected, the run is made again the ordinary way, and that run's result
(or error) is the one used.  SLABCONV_WARM_START=0 turns warm starts off.
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

from base.proc import tied


ENABLED = os.environ.get("SLABCONV_WARM_START", "1") != "0"
OPEN_TIMEOUT = 60.0     # seconds for the process to open a pipe once its turn comes
WRITE_TIMEOUT = 60.0    # seconds for it to read a file

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
    """One spatch process waiting for its input files `files` (relative to
    the tree; the same paths in the process's directory)."""

    def __init__(self, cmd: list[str], tree: Path, files: list[str], root: Path):
        self.cmd = list(cmd)
        root.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="warm-", dir=root))
        self.pipes = [self.dir / f for f in files]
        try:
            for pipe in self.pipes:
                pipe.parent.mkdir(parents=True, exist_ok=True)
                os.mkfifo(pipe)         # OSError where the file system has none
            for f in files:
                rel = Path(f)
                for name in local_includes((tree / rel).read_bytes()):
                    link = self.dir / rel.parent / name
                    if ("/" not in name and not os.path.lexists(link)
                            and (tree / rel.parent / name).exists()):
                        os.symlink(tree / rel.parent / name, link)
            self.out = tempfile.TemporaryFile()
            self.err = tempfile.TemporaryFile()
            # tied: a driver killed with SIGKILL does not leave it waiting on its pipe
            self.proc = subprocess.Popen(tied(self.cmd), cwd=self.dir, stdout=self.out,
                                         stderr=self.err, stdin=subprocess.DEVNULL)
        except BaseException:
            for f in ("out", "err"):
                if hasattr(self, f):
                    getattr(self, f).close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def is_for(self, cmd: list[str]) -> bool:
        """Whether this is the run of `cmd` (which ends with its files)."""
        return self.cmd == list(cmd)

    def _feed(self, contents: list[bytes]) -> bool:
        """Write each file's content into its pipe once the process opens
        it (in whatever order it does: the workers of -j open theirs at
        the same time), and put the file in place of the pipe first, for
        the process's later opens.  False if the process exits, or times
        out, before it has opened and read them all."""
        waiting = list(range(len(self.pipes)))      # not opened yet
        writing: dict[int, tuple[int, memoryview]] = {}
        deadline = time.monotonic() + OPEN_TIMEOUT
        try:
            while waiting or writing:
                for i in list(waiting):
                    try:
                        fd = os.open(self.pipes[i], os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                    except OSError as e:
                        if e.errno != errno.ENXIO:        # ENXIO: no reader yet
                            return False
                        continue
                    staged = self.pipes[i].with_name(f".{self.pipes[i].name}.in")
                    staged.write_bytes(contents[i])
                    os.replace(staged, self.pipes[i])    # later opens see the file
                    waiting.remove(i)
                    writing[i] = (fd, memoryview(contents[i]))
                    deadline = time.monotonic() + WRITE_TIMEOUT
                if writing:
                    _, ready, _ = select.select([], [fd for fd, _ in writing.values()], [], 0.002)
                    for i, (fd, view) in list(writing.items()):
                        if fd not in ready:
                            continue
                        try:
                            n = os.write(fd, view)
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            # spatch closed it having read what it wanted: it
                            # opens the file again to parse it, and finds the
                            # file itself
                            n = len(view)
                        view = view[n:]
                        if view:
                            writing[i] = (fd, view)
                        else:
                            os.close(fd)
                            del writing[i]
                    if ready:
                        continue
                elif waiting:
                    time.sleep(0.002)
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    return False
            return True
        finally:
            for fd, _ in writing.values():
                os.close(fd)

    def run(self, contents: list[bytes], wait) -> tuple[int, str, str, list[bytes]] | None:
        """Feed `contents` (the files' contents) and wait for the process
        with `wait(proc)` (which returns its exit code).  Returns the exit
        code, stdout, stderr and the files' contents afterwards, or None
        when the run is not to be trusted (the caller runs spatch the
        ordinary way)."""
        try:
            if not self._feed(contents):
                return None
            rc = wait(self.proc)
            self.out.seek(0)
            self.err.seek(0)
            stdout = self.out.read().decode(errors="replace")
            stderr = self.err.read().decode(errors="replace")
            if rc != 0 or not all(p.is_file() for p in self.pipes):
                return None
            return rc, stdout, stderr, [p.read_bytes() for p in self.pipes]
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
        oldest process of the tree goes when there are DEPTH of them."""
        if not ENABLED:
            return False
        key = str(tree)
        with self._lock:
            ws = self._warm.setdefault(key, [])
            if any(w.is_for(cmd) for w in ws):
                return True
            old = ws[:len(ws) - self.DEPTH + 1] if len(ws) >= self.DEPTH else []
            del ws[:len(old)]
        for w in old:
            w.close()
            count("discarded")
        try:
            w = Warm(cmd, tree, files, root)
        except OSError:
            return False
        with self._lock:
            self._warm.setdefault(key, []).append(w)
        return True

    def take(self, cmd: list[str], tree: Path) -> Warm | None:
        """The warm process for exactly this run, if there is one.  Those of
        the tree started before it were for runs that were not made (their
        command turned out otherwise): they are killed."""
        with self._lock:
            ws = self._warm.get(str(tree), [])
            k = next((i for i, w in enumerate(ws) if w.is_for(cmd)), None)
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
