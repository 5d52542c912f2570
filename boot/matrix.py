"""The boot matrix: several guests, booted in parallel, each with its own timeout.

    specs = [GuestSpec("slub", "x86_64", image, build_dir, src, timeout=120), ...]
    m = matrix.run(specs, out_root, jobs=2)
    m.passed, m.results (GuestResult per spec, in spec order), m.seconds

A GuestSpec says everything one guest needs (kernel image, its O= build
directory and source tree for the test module, kernel command line, QEMU
extras, timeout); where the kernel came from is the caller's business, so
the patched kernels of `slabconv boot` and reference runs on unpatched
kernels go through the same matrix.

Scheduling: up to `jobs` guests run at a time (threads; each guest is one
QEMU process, TCG, with its own timeout).  Builds are not done here: the
caller builds first (CPU-bound, one after another with -j2), then boots.
A guest whose boot raises (a missing tool, a bad image) is an "error"
result with the message, not an exception that stops the others.

Output in out_root:

    <name>/           each guest's run directory (console.log: the full
                      console of the guest, ktap.log, results.ktap, qemu.log,
                      summary.json, junit.xml)
    results.ktap      one KTAP document, a subtest per guest (its document nested)
    junit.xml         JUnit XML, a testsuite per guest (boot/junit.py)
    summary.txt       the one-screen table (boot/summary.py)
    matrix.json       per guest: verdict, counts, seconds, log paths, failures
"""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import boot
from base.lock import locked
from base.log import info, SlabconvError
from . import junit, summary


DEFAULT_TIMEOUT = 120.0
DEFAULT_JOBS = 2


@dataclass
class GuestSpec:
    name: str                       # unique in a matrix: the run directory's name
    arch: str                       # x86_64, i386 (boot.qemu.ARCHES)
    image: Path                     # bzImage
    build_dir: Path                 # the kernel's O= (the module is built against it)
    src: Path                       # its source tree
    config: str = ""                # the configuration it was built in (information)
    cmdline: str = ""               # appended to the kernel command line
    slub_debug: str | None = None   # slub_debug= (None: not set)
    qemu_extra: tuple = ()          # more QEMU arguments
    timeout: float = DEFAULT_TIMEOUT
    options: dict = field(default_factory=dict)   # more boot.run() arguments

    def boot_kwargs(self) -> dict:
        kw = dict(arch=self.arch, timeout=self.timeout, cmdline_extra=self.cmdline,
                  slub_debug=self.slub_debug, qemu_extra=tuple(self.qemu_extra))
        kw.update(self.options)
        return kw


@dataclass
class GuestResult:
    spec: GuestSpec
    out_dir: Path
    boot: object | None = None      # boot.BootResult
    error: str = ""                 # boot.run() raised: its message
    start: float = 0.0              # seconds after the matrix started
    end: float = 0.0

    @property
    def passed(self) -> bool:
        return self.boot is not None and self.boot.passed and not self.error

    @property
    def verdict(self) -> str:
        if self.error:
            return "ERROR"
        if self.boot is None:
            return "not run"
        if self.boot.timed_out:
            return "HANG"
        return "pass" if self.boot.passed else "FAIL"

    @property
    def seconds(self) -> float:
        """Boot and test time: the guest's QEMU wall time (else the slot's)."""
        if self.boot is not None:
            return float(self.boot.seconds)
        return self.end - self.start

    @property
    def failures(self) -> list[str]:
        if self.error:
            return [f"error: {self.error}"]
        return list(self.boot.failures) if self.boot is not None else []

    @property
    def console_log(self) -> Path:
        return self.out_dir / "console.log"

    def to_dict(self) -> dict:
        b = self.boot
        return {"name": self.spec.name, "arch": self.spec.arch, "config": self.spec.config,
                "verdict": self.verdict, "passed": self.passed,
                "seconds": round(self.seconds, 2),
                "slot": [round(self.start, 2), round(self.end, 2)],
                "timeout": self.spec.timeout, "timed_out": bool(b and b.timed_out),
                "counts": b.counts.as_dict() if b is not None else None,
                "module_tests": getattr(b, "module_tests", 0) if b is not None else 0,
                "failures": self.failures, "run_dir": str(self.out_dir),
                "console_log": str(self.console_log), "image": str(self.spec.image)}


@dataclass
class MatrixResult:
    results: list[GuestResult]
    seconds: float                  # wall time of the whole matrix
    jobs: int
    out_root: Path

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def by_name(self) -> dict:
        return {r.spec.name: r for r in self.results}


def check_specs(specs: list[GuestSpec]) -> None:
    names = [s.name for s in specs]
    if not specs:
        raise SlabconvError("boot matrix: no guest to boot", exit_code=2)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SlabconvError(f"boot matrix: guest names must be unique: {', '.join(dup)}",
                            exit_code=2)
    for s in specs:
        if s.timeout <= 0:
            raise SlabconvError(f"boot matrix: {s.name}: timeout must be positive",
                                exit_code=2)


def _boot_fn():
    return boot.run


def run(specs: list[GuestSpec], out_root, *, jobs: int = DEFAULT_JOBS,
        boot_fn: Callable | None = None, write: bool = True) -> MatrixResult:
    """Boot every spec, at most `jobs` at a time; see the module doc.
    boot_fn replaces boot.run (tests)."""
    specs = list(specs)
    check_specs(specs)
    jobs = max(1, int(jobs))
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    # the matrix files (results.ktap, junit.xml, summary) are one run's
    with locked(out_root / ".lock", f"the boot matrix directory {out_root}", stage="matrix"):
        return _run(specs, out_root, jobs, boot_fn, write)


def _run(specs: list[GuestSpec], out_root: Path, jobs: int, boot_fn, write: bool) -> MatrixResult:
    fn = boot_fn or _boot_fn()
    t0 = time.monotonic()
    lock = threading.Lock()
    done = [0]

    def one(spec: GuestSpec) -> GuestResult:
        res = GuestResult(spec, out_root / spec.name, start=time.monotonic() - t0)
        info("matrix", f"{spec.name} ({spec.arch}): booting, timeout {spec.timeout:.0f}s")
        try:
            res.boot = fn(spec.image, spec.build_dir, spec.src, res.out_dir,
                          **spec.boot_kwargs())
        except SlabconvError as e:
            res.error = str(e)
        except Exception as e:       # one guest's bug must not take the matrix down
            res.error = f"{type(e).__name__}: {e}"
        res.end = time.monotonic() - t0
        with lock:
            done[0] += 1
            info("matrix", f"{spec.name}: {res.verdict} in {res.seconds:.1f}s "
                           f"({done[0]} of {len(specs)} done)")
        return res

    info("matrix", f"{len(specs)} guest(s), {jobs} at a time: "
                   f"{', '.join(s.name for s in specs)}")
    with ThreadPoolExecutor(max_workers=min(jobs, len(specs)),
                            thread_name_prefix="guest") as pool:
        results = list(pool.map(one, specs))
    m = MatrixResult(results, time.monotonic() - t0, jobs, out_root)
    if write:
        write_outputs(m)
    return m


def ktap_document(m: MatrixResult) -> str:
    """One KTAP document: a subtest per guest, its own document nested."""
    lines = ["KTAP version 1", f"# slabconv boot matrix: {len(m.results)} guests", 
             f"1..{len(m.results)}"]
    for i, r in enumerate(m.results, 1):
        lines.append(f"    # Subtest: {r.spec.name}")
        doc = r.boot.ktap if r.boot is not None else ""
        body = [x for x in doc.splitlines() if x.strip()]
        if body:
            lines += ["    " + x for x in body]
        else:
            lines += ["    KTAP version 1", "    1..0"]
        why = "" if r.passed else " # " + (r.failures[0].splitlines()[0] if r.failures
                                           else r.verdict)
        lines.append(f"{'ok' if r.passed else 'not ok'} {i} - {r.spec.name}{why}")
    return "\n".join(lines) + "\n"


def write_outputs(m: MatrixResult) -> dict:
    root = m.out_root
    files = {"ktap": root / "results.ktap", "junit": root / "junit.xml",
             "summary": root / "summary.txt", "json": root / "matrix.json"}
    files["ktap"].write_text(ktap_document(m))
    for r in m.results:
        r.out_dir.mkdir(parents=True, exist_ok=True)
        junit.write(junit.document([r]), r.out_dir / "junit.xml")
    junit.write(junit.document(m.results), files["junit"])
    files["summary"].write_text(summary.render(m) + "\n")
    files["json"].write_text(json.dumps({
        "passed": m.passed, "seconds": round(m.seconds, 2), "jobs": m.jobs,
        "guests": [r.to_dict() for r in m.results],
        "files": {k: str(v) for k, v in files.items()}}, indent=2) + "\n")
    return files
