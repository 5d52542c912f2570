"""Inter-process locks (fcntl.flock on a file in the cache)."""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from slabconv.log import info


@contextlib.contextmanager
def locked(path: Path, what: str | None = None):
    """Hold an exclusive flock on path (created if needed) for the with-block.

    Waits for other holders, saying so once on stderr.  flock locks vanish when
    the process dies, so a crashed run never leaves a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info("fetch", f"waiting for {what or path} (another slabconv is using it)")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
