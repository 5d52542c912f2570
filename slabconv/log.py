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
