"""Inter-process locks (fcntl.flock on a file in the cache).

The holder writes its pid into the lock file once it has the lock, so that
a run that has to wait can say whom it waits for.  flock locks vanish when
the process dies (SIGKILL included), so a killed run never leaves a lock
behind; the pid left in the file is then only a hint.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from base.log import info


def holder(path: Path) -> int | None:
    """The pid written in the lock file `path` by its last holder (None:
    none, or unreadable)."""
    try:
        text = Path(path).read_text().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _mark(fd: int) -> None:
    """Write this process's pid into the lock file we hold."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass


def waiting_message(path: Path, what: str | None) -> str:
    pid = holder(path)
    return (f"waiting for another slabconv run{f' (pid {pid})' if pid else ''} "
            f"on {what or path}")


def acquire(path: Path, what: str | None = None, *, block: bool = True,
            stage: str = "lock") -> int | None:
    """Take an exclusive flock on `path` (created if needed); return its
    file descriptor (close it, or let the process end, to release), or
    None when `block` is False and another process holds it.  Waiting is
    said once on stderr, with the holder's pid."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not block:
                os.close(fd)
                return None
            info(stage, waiting_message(path, what))
            fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    _mark(fd)
    return fd


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    """Whether some process holds the flock on `path` now (this process's
    own other descriptors count too)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def locked(path: Path, what: str | None = None, stage: str = "lock"):
    """Hold an exclusive flock on path (created if needed) for the with-block.

    Waits for other holders, saying once on stderr "waiting for another
    slabconv run (pid N) on <what>".  flock locks vanish when the process
    dies, so a crashed run never leaves a stale lock behind.
    """
    fd = acquire(path, what, stage=stage)
    try:
        yield
    finally:
        release(fd)
