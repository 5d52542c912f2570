"""Progress and error reporting shared by every stage.

Progress goes to stderr prefixed with the stage name, so stdout stays
available for machine-readable output (paths, JSON).
"""
import sys
import time


class SlabconvError(Exception):
    """A failure that should be reported to the user without a traceback.

    exit_code lets callers distinguish kinds of failure (see README, "Exit codes").
    """

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def duration(sec, decimals: int = 0) -> str:
    """Seconds as a person reads them: "42s" ("4.2s" with decimals=1) under
    a minute, "3m07s" from a minute on; "?" for None."""
    if sec is None:
        return "?"
    sec = float(sec)
    if round(sec, decimals) < 60:
        return f"{sec:.{decimals}f}s"
    m, s = divmod(round(sec), 60)
    return f"{m}m{s:02d}s"


def info(stage: str, msg: str) -> None:
    print(f"[{stage}] {msg}", file=sys.stderr, flush=True)


class Timer:
    def __enter__(self):
        self.start = time.monotonic()
        self.elapsed = 0.0
        return self

    def __exit__(self, *exc):
        self.elapsed = time.monotonic() - self.start
        return False


def guarded(func, *args, **kwargs) -> int:
    """Call a command's body; turn SlabconvError and ^C into a message and an exit code.

    Every command line (slabconv, python3 -m fetch/verify/boot) reports errors
    the same way: one line `slabconv: error: ...` on stderr, no traceback.
    """
    try:
        return func(*args, **kwargs)
    except SlabconvError as e:
        print(f"slabconv: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("slabconv: error: interrupted", file=sys.stderr)
        return 130


class Stages:
    """One-line headers for a job of several steps: "==== step 2 of 4:
    apply the series (last run: 41s) ====".  `last` maps a step's name
    to its time in the previous run; `times` holds this run's, to record."""

    def __init__(self, job: str, names: list[str], last: dict | None = None):
        self.job, self.names, self.last = job, list(names), dict(last or {})
        self.times: dict[str, float] = {}
        self._cur: str | None = None
        self._t0 = 0.0

    def start(self, name: str) -> None:
        self._close()
        k = self.names.index(name) + 1
        prev = self.last.get(name)
        when = f" (last run: {duration(prev)})" if prev is not None else ""
        print(f"==== {self.job}: step {k} of {len(self.names)}: {name}{when} ====",
              file=sys.stderr, flush=True)
        self._cur, self._t0 = name, time.monotonic()

    def _close(self) -> None:
        if self._cur is not None:
            self.times[self._cur] = round(time.monotonic() - self._t0, 1)
            self._cur = None

    def done(self) -> dict:
        self._close()
        return self.times
