"""Runtime bisect: boot the kernel of every patch with the in-guest tests.

A series that builds at every patch can still crash at one of them.  The
per-patch check (verify/bisect.py) builds each patch incrementally in one
O= per configuration; in a configuration with runtime checks it calls
`Kernels.keep()` right after a patch has built: the kernel is linked
(`make bzImage`), the guest modules are built against it (the build
directory moves on with the next patch, so they are built now), and the
image and modules are kept under <bisect dir>/kernels/<commit>/.  A patch
that builds nothing (its files are not in this configuration) has the
previous patch's kernel: it is not booted again.  When the configuration's
builds are done, `boot()` boots the kept kernels through the boot matrix
(boot/matrix.py, `jobs` guests at a time), each with the in-guest tests,
fault injection included; the verdict of each patch is kept in the bisect
state with its commit id, so a rerun boots only what changed.

The guest of a configuration (its command line, QEMU extras, timeout) is
the caller's: `spec(config, image, build_dir, src, name, modules)` returns
a boot.matrix.GuestSpec (cli.boots.kernel_spec for verify), so
this module needs nothing from the layers above it.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from base import log as slog
from base.log import SlabconvError
from boot import base_cmdline, console, initramfs, ktap, matrix, module
from boot.module import MODULES
from . import kbuild


BOOT_TARGETS = ("bzImage",)
EXCERPT_LINES = 25


@dataclass
class PatchBoot:
    """One patch's boot: pass, FAIL (tests failed, oops, BUG, WARNING),
    HANG, ERROR (no boot), or `same` (the kernel of patch `same_as`)."""
    verdict: str
    seconds: float = 0.0
    failures: list = field(default_factory=list)
    excerpt: str = ""                 # console lines around the first failure
    counts: str = ""
    log: str = ""
    same_as: int = 0
    tests: str = ""                   # tests_digest() of the guest tests it ran

    @property
    def ok(self) -> bool:
        return self.verdict in ("pass", "same")

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "seconds": round(self.seconds, 1),
                "failures": self.failures[:5], "excerpt": self.excerpt,
                "counts": self.counts, "log": self.log, "same_as": self.same_as,
                "tests": self.tests}

    @classmethod
    def from_dict(cls, d: dict) -> "PatchBoot":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def tests_digest(cmdline: str = "") -> str:
    """The identity of what a boot verdict depends on besides the kernel:
    the guest tests (the modules' sources and init.sh), the scanners that
    judge the guest's output (boot/console.py, boot/ktap.py) and the kernel
    command line the guest booted with (`guest_cmdline()`).  A verdict made
    with other tests, another scanner or another command line is not a
    verdict on these; the kernel is built and booted again."""
    import hashlib
    h = hashlib.sha256()
    for p in ([module.GUEST / n for n in module.SOURCES] + [initramfs.INIT_SCRIPT]
              + [Path(console.__file__), Path(ktap.__file__)]):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(b"cmdline\0" + cmdline.encode())
    return h.hexdigest()[:16]


def guest_cmdline(g) -> str:
    """What boot.run() boots a guest (a boot.matrix.GuestSpec) with: its
    kernel command line, and its other options (the IOMMU's parameters,
    ...) but the modules, which are the kernel's own."""
    line = " ".join(x for x in (base_cmdline(g.arch, g.slub_debug), g.cmdline.strip()) if x)
    opts = sorted((k, repr(v)) for k, v in g.options.items() if k != "modules")
    return line + (f" {opts}" if opts else "")


def verdict_key(spec: Callable, config: str) -> str:
    """tests_digest() for the guests `spec` makes in `config`."""
    g = spec(config, Path("bzImage"), Path("."), Path("."), "key", ())
    return tests_digest(guest_cmdline(g))


def current(verdict: Optional[dict], key: str) -> bool:
    """A recorded verdict made with the guest tests, scanners and command
    line of `key` (verdict_key())."""
    return bool(verdict) and verdict.get("tests") == key


def excerpt(console_log: Path, failures: list, lines: int = EXCERPT_LINES) -> str:
    """The console lines from the first oops/BUG/WARNING/failed test on
    (or the last lines), for the report."""
    try:
        text = Path(console_log).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    marks = ("BUG:", "Oops", "WARNING:", "Kernel panic", "general protection", "not ok ")
    start = next((i for i, ln in enumerate(text) if any(m in ln for m in marks)), None)
    if start is None:
        return "\n".join(text[-lines:])
    return "\n".join(text[max(0, start - 3):start + lines])


class Kernels:
    """The kernels of one configuration's per-patch builds, kept for booting."""

    def __init__(self, bdir: Path, config: str, arch: str, jobs: int = 2):
        self.root = Path(bdir) / "kernels"
        self.root.mkdir(parents=True, exist_ok=True)
        self.config, self.arch, self.jobs = config, arch, jobs

    def dir(self, sha: str) -> Path:
        return self.root / sha[:12]

    def have(self, sha: str) -> bool:
        return (self.dir(sha) / ".complete").is_file()

    def keep(self, snap: Path, o: Path, sha: str, label: str) -> Optional[str]:
        """Link the kernel of the tree as it is now and keep it with its guest
        modules for `sha`.  Returns None, or what failed (a patch whose
        kernel does not link fails the per-patch check)."""
        d = self.dir(sha)
        shutil.rmtree(d, ignore_errors=True)
        b = kbuild.build(snap, o, targets=BOOT_TARGETS, jobs=self.jobs, arch=self.arch,
                         label=label + " bzImage", log=d.parent / f"{sha[:12]}-bzImage.log",
                         quiet=True)
        if not b.ok:
            return f"the kernel does not link (make bzImage, exit {b.returncode})"
        try:
            ko = module.build(snap, o, arch=self.arch, jobs=self.jobs)
        except SlabconvError as e:
            return f"the guest test module does not build against it: {e}"
        d.mkdir(parents=True)
        shutil.copy2(b.image, d / "bzImage")
        for m in module.companions(ko):
            if m.is_file():
                shutil.copy2(m, d / m.name)
        (d / ".complete").write_text(sha + "\n")
        return None

    def prune(self, keep: set) -> None:
        prefixes = {s[:12] for s in keep}
        for d in self.root.iterdir():
            if d.is_dir() and d.name not in prefixes:
                shutil.rmtree(d, ignore_errors=True)


def boot(kernels: Kernels, todo: list, src: Path, o: Path, spec: Callable,
         out_root: Path, jobs: int = 2) -> dict:
    """Boot the kept kernels of `todo` ([(index, sha)]) `jobs` at a time;
    returns {sha: PatchBoot}.  A patch's guest is named p<NN>-<sha12>."""
    specs, names = [], {}
    for index, sha in todo:
        d = kernels.dir(sha)
        mods = tuple(str(d / f"{m}.ko") for m in MODULES if (d / f"{m}.ko").is_file())
        name = f"p{index:02d}-{sha[:12]}"
        specs.append(spec(kernels.config, d / "bzImage", o, src, name, mods))
        names[name] = sha
    if not specs:
        return {}
    t0 = time.monotonic()
    slog.info("runtime", f"{kernels.config}: booting {len(specs)} kernels, {jobs} at a time")
    m = matrix.run(specs, out_root, jobs=jobs)
    out = {}
    for g in m.results:
        sha = names[g.spec.name]
        if g.boot is None:
            out[sha] = PatchBoot("ERROR", g.seconds, [g.error or "did not boot"], log=str(g.out_dir),
                                 tests=tests_digest(guest_cmdline(g.spec)))
            continue
        b = g.boot
        out[sha] = PatchBoot(g.verdict, b.seconds, list(b.failures),
                             "" if b.passed else excerpt(b.console_log, b.failures),
                             str(b.counts), str(b.console_log),
                             tests=tests_digest(guest_cmdline(g.spec)))
    slog.info("runtime", f"{kernels.config}: {sum(p.ok for p in out.values())}/{len(out)} "
                         f"kernels passed in {time.monotonic() - t0:.0f}s")
    return out
