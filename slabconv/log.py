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
