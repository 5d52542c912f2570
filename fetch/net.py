"""The network policy of every download slabconv makes: retries with
backoff, the advice after the last try, and the guard that keeps a run
that has started building off the network.

Every download goes through apt (fetch/apt.py: `apt-get update` of an apt
state's lists, `apt-get download` of a .deb), for the kernel source and
for the i386 guest's busybox alike (boot/busybox.py gets it through
fetch.get_deb).  Two layers of retries:

  * apt's own, inside one apt-get run: ``Acquire::Retries=APT_RETRIES``
    (a file that fails on a connection error or an HTTP error such as 503
    is fetched again at once; ``Acquire::Retries::Delay=false`` because
    apt 2.6.1's delayed retry stalls the whole `apt-get update` when
    another index of the same host is in flight: no request for 150 s on
    the loopback mirror of tests/fakemirror.py, and Debian's default mirror
    serves the archive and the security archive from one host);
  * ours, around the whole apt-get run (call()): TRIES tries, PAUSE
    seconds before the second, doubled each time (15, 30, 60 s: 105 s in
    all).  A mirror in the middle of a sync serves an index that does not
    match its Release file ("File has unexpected size ... Mirror sync in
    progress?", "Hash Sum mismatch"), and a .deb can arrive truncated:
    apt does not retry those, a later `apt-get update` usually succeeds.

Each retry is said once on stderr.  After the last try the error says
what failed; fetch adds the suite and the package and ADVICE.

SLABCONV_FETCH_TRIES, SLABCONV_FETCH_PAUSE and SLABCONV_APT_RETRIES
override TRIES, PAUSE and APT_RETRIES (the tests use a pause of 0).

forbid(why) makes every later call() fail at once instead of going to
the network: the pipeline calls it once everything a run needs is fetched
(cli/prefetch.py), so a run that has started building never waits on
a mirror; a download that was missed is a bug that shows.
"""
from __future__ import annotations

import os
import time
from typing import Callable, TypeVar

from base.log import info, SlabconvError


T = TypeVar("T")

TRIES = 4               # apt-get runs per index update or download
PAUSE = 15.0            # seconds before the 2nd try; doubled before each next one
APT_RETRIES = 3         # apt's Acquire::Retries, per file within one apt-get run

ADVICE = ("What to do: the Debian mirror may be in the middle of a sync (it syncs "
          "several times a day) or this machine's network or proxy may be down; check "
          "that `apt-get update` works, then run the command again in a few minutes.  "
          "Every download is made before the first build, so nothing was built in vain.")

sleep = time.sleep      # tests replace it

_forbidden: str | None = None


class FetchError(SlabconvError):
    """Download, integrity or network failure (exit code 4).

    network: apt could not reach the archive (update/download failed);
    get_tree then may fall back to a complete tree already cached.
    transient: worth another try (default: network).
    """

    def __init__(self, message: str, exit_code: int = 4, *, network: bool = False,
                 transient: bool | None = None):
        super().__init__(message, exit_code)
        self.network = network
        self.transient = network if transient is None else transient


def _env_number(name: str, default: float, cast=float):
    v = os.environ.get(name, "").strip()
    if not v:
        return default
    try:
        x = cast(v)
    except ValueError:
        raise SlabconvError(f"${name} must be a number, not {v!r}", exit_code=2)
    if x < 0:
        raise SlabconvError(f"${name} must not be negative", exit_code=2)
    return x


def policy() -> tuple[int, float]:
    """(tries, first pause in seconds) for call()."""
    return (max(1, _env_number("SLABCONV_FETCH_TRIES", TRIES, int)),
            _env_number("SLABCONV_FETCH_PAUSE", PAUSE))


def pauses() -> list[float]:
    """The pauses between the tries: PAUSE, 2*PAUSE, 4*PAUSE, ..."""
    tries, pause = policy()
    return [pause * 2 ** i for i in range(tries - 1)]


def apt_options() -> list[str]:
    """apt's own retries, for every apt-get run that goes to the network."""
    return ["-o", f"Acquire::Retries={_env_number('SLABCONV_APT_RETRIES', APT_RETRIES, int)}",
            "-o", "Acquire::Retries::Delay=false"]


def forbid(why: str) -> None:
    """From now on call() raises instead of going to the network."""
    global _forbidden
    _forbidden = why


def allow() -> None:
    global _forbidden
    _forbidden = None


def forbidden() -> str | None:
    return _forbidden


def call(action: Callable[[], T], what: str, *, stage: str = "fetch") -> T:
    """action(), tried again after a transient FetchError (see the module
    doc).  After the last try: FetchError "<what> failed after N tries: ..."
    (network and transient as the last failure's)."""
    if _forbidden is not None:
        raise FetchError(f"{what} would go to the network, but {_forbidden}; this "
                         f"download was not made up front (a slabconv bug: "
                         f"cli/prefetch.py lists what a run needs)", network=False)
    waits = pauses()
    tries = len(waits) + 1
    for n in range(1, tries + 1):
        try:
            return action()
        except FetchError as e:
            if not e.transient:
                raise
            if n == tries:
                if tries == 1:
                    raise
                raise FetchError(f"{what} failed after {tries} tries "
                                 f"({sum(waits):g}s of pauses): {e}",
                                 network=e.network, transient=True) from e
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            info(stage, f"{what} failed (try {n} of {tries}): {first}; "
                        f"trying again in {waits[n - 1]:g}s")
            sleep(waits[n - 1])
    raise AssertionError("unreachable")
