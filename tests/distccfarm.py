"""A distcc farm on the loopback for tests and measurements: distccd daemons
on free ports of 127.0.0.1, accepting only 127.0.0.1, each with its own log,
stopped (by their process ids) when the farm is closed.

    with Farm(2) as farm:
        os.environ["DISTCC_HOSTS"] = farm.hosts      # "127.0.0.1:P1/1 127.0.0.1:P2/1"
        ...
        farm.compiles()     # per daemon: the sources it compiled (from its log)

`python3 -m tests.distccfarm N` starts N daemons and prints their DISTCC_HOSTS
until interrupted (for measuring by hand).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

# distccd's summary line of a job: "... COMPILE_OK exit:0 ... gcc mm/slub.c"
_JOB_RE = re.compile(r"\b(COMPILE_OK|COMPILE_ERROR|COMPILE_TIMEOUT)\b.*?\s(\S+\.(?:c|i|S|s))\s*$")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Farm:
    def __init__(self, n: int = 2, jobs: int = 1, logdir=None):
        if shutil.which("distccd") is None:
            raise RuntimeError("'distccd' not found; install the Debian package 'distcc'")
        self.n, self.jobs = n, jobs
        self._own_dir = logdir is None
        self.dir = Path(logdir) if logdir else Path(tempfile.mkdtemp(prefix="slabconv-farm-"))
        self.procs, self.ports, self.logs = [], [], []

    @property
    def hosts(self) -> str:
        return " ".join(f"127.0.0.1:{p}/{self.jobs}" for p in self.ports)

    def start(self) -> "Farm":
        for i in range(self.n):
            for _attempt in range(5):
                port = free_port()
                log = self.dir / f"distccd-{i}.log"
                f = open(log, "ab")
                p = subprocess.Popen(
                    ["distccd", "--daemon", "--no-detach", "--listen", "127.0.0.1",
                     "--port", str(port), "--allow", "127.0.0.1", "--jobs", str(self.jobs),
                     "--log-stderr", "--log-level", "info",
                     "--nice", "10"],       # as kbuild's make: equal priority with a local build
                    stdin=subprocess.DEVNULL, stdout=f, stderr=f, start_new_session=True)
                f.close()
                if self._wait_listening(port, p):
                    self.procs.append(p)
                    self.ports.append(port)
                    self.logs.append(log)
                    break
                self._stop(p)
            else:
                self.close()
                raise RuntimeError(f"distccd did not start; its log: {log}")
        return self

    @staticmethod
    def _wait_listening(port: int, p, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if p.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.1)
        return False

    @staticmethod
    def _stop(p) -> None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)    # the daemon and its children, by id
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def compiles(self) -> list:
        """Per daemon, the sources it compiled with success or error."""
        out = []
        for log in self.logs:
            text = log.read_text(errors="replace") if log.is_file() else ""
            out.append([m.group(2) for m in map(_JOB_RE.search, text.splitlines()) if m])
        return out

    def close(self) -> None:
        for p in self.procs:
            self._stop(p)
        self.procs = []

    def remove(self) -> None:
        self.close()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.remove()


if __name__ == "__main__":
    import sys
    with Farm(int(sys.argv[1]) if len(sys.argv) > 1 else 2,
              int(sys.argv[2]) if len(sys.argv) > 2 else 1) as farm:
        print(f"DISTCC_HOSTS='{farm.hosts}'  logs: {farm.dir}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
