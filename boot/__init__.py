"""boot: from a built kernel to KTAP results.

    result = boot.run(bzImage, build_dir, src_dir, out_dir)

builds the in-guest test module against the kernel (boot.module), packs it
with busybox and boot/guest/init.sh into an initramfs (boot.initramfs),
boots it in QEMU (boot.qemu), parses the KTAP the guest prints (boot.ktap)
and scans the console for kernel failure reports (boot.console).

The run directory (out_dir) receives console.log, ktap.log (the raw KTAP
channel), results.ktap (the parsed document), qemu.log, summary.json and,
if the module does not build, module-build.log.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from base.lock import locked
from base.log import info, SlabconvError
from . import (busybox as guest_busybox, console, initramfs, iommu as iommu_guest, ktap,
    module, qemu)


__all__ = ["BootResult", "run", "DEFAULT_SLUB_DEBUG", "base_cmdline", "console_tail"]

# F sanity checks, Z red zones, P poisoning, U alloc/free tracking: makes
# SLUB validate and the slab paths of the conversion series do real work.
DEFAULT_SLUB_DEBUG = "FZPU"
MODULE_SUITE = "slabconv_test"


@dataclass
class BootResult:
    passed: bool
    ktap: str                       # the KTAP document (results.ktap)
    console_log: Path
    seconds: float                  # wall time of the QEMU run
    failures: list[str]
    counts: ktap.Counts
    ktap_path: Path | None = None
    out_dir: Path | None = None
    timed_out: bool = False
    accel: str = "tcg"
    cmdline: str = ""
    module_tests: int = 0           # cases in the module's KTAP document
    findings: list[console.Finding] = field(default_factory=list, repr=False)
    results: ktap.KtapResult | None = field(default=None, repr=False)

    def summary(self) -> str:
        head = "PASS" if self.passed else "FAIL"
        lines = [f"boot: {head} in {self.seconds:.1f}s ({self.accel}); {self.counts}; "
                 f"module cases: {self.module_tests}"]
        if self.results is not None and self.results.root.subtests:
            lines.append(ktap.render(self.results))
        if self.failures:
            lines.append("failures:")
            for f in self.failures[:10]:
                lines.extend("  " + x for x in f.splitlines()[:18])
            if len(self.failures) > 10:
                lines.append(f"  ... {len(self.failures) - 10} more")
        lines.append(f"logs: {self.out_dir}")
        return "\n".join(lines)


def base_cmdline(arch: str = "x86_64", slub_debug: str | None = DEFAULT_SLUB_DEBUG) -> str:
    """console on the first serial port; any panic ends QEMU (panic=-1 with
    -no-reboot); an Oops panics (oops=panic) so a broken guest fails fast
    instead of limping into the timeout; printk timestamps for timing.
    slab_common.usercopy_fallback=N: hardened usercopy rejects a copy outside
    a cache's usercopy whitelist (5.10 only warns by default, with
    HARDENED_USERCOPY_FALLBACK; 5.16 removed the fallback and the parameter,
    which later kernels ignore), as the guest's usercopy_reject cases expect."""
    a = qemu.arch_info(arch)
    parts = [f"console={a.console}", "panic=-1", "oops=panic", "printk.time=1",
             "slab_common.usercopy_fallback=N"]
    if slub_debug:
        parts.append(f"slub_debug={slub_debug}")
    return " ".join(parts)


def console_tail(log: Path, lines: int = 20) -> str:
    """The last lines of a console log (timestamps kept), indented."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return "    (no console log)"
    tail = [x.rstrip() for x in text.splitlines() if x.strip()][-lines:]
    return "\n".join(f"    {x}" for x in tail) or "    (console empty)"


def _fail_early(out_dir: Path, message: str, seconds: float) -> BootResult:
    log = out_dir / "console.log"
    log.touch()
    return BootResult(False, "", log, seconds, [message], ktap.Counts(),
                      out_dir=out_dir)


def run(kernel_image, build_dir, src_dir, out_dir, *, arch: str = "x86_64",
        timeout: float = 120, cmdline_extra: str = "",
        slub_debug: str | None = DEFAULT_SLUB_DEBUG, accel: str | None = None,
        init_script: Path | None = None, with_module: bool = True,
        allow: tuple[str, ...] = (), memory: str = "512M", smp: int = 2,
        iommu: str | None = None, busybox: Path | None = None,
        qemu_extra: tuple[str, ...] = (), modules: tuple | None = None) -> BootResult:
    """Boot kernel_image with the slabconv guest tests; see the module doc.

    cmdline_extra is appended to the kernel command line (so it wins).
    accel: None/'tcg' (default, $SLABCONV_BOOT_ACCEL overrides), 'kvm', 'auto'.
    init_script replaces boot/guest/init.sh (used by the detector tests).
    allow: regexes of console lines that are expected (not failures).
    iommu: None, or a kind of boot/iommu.py ('intel' lazy, 'intel-strict',
    'amd'): the IOMMU and a virtio disk behind it, and their kernel parameters.
    busybox: the guest's busybox (default: boot.busybox.for_arch(arch)).
    qemu_extra: more QEMU arguments (devices, machine options).
    modules: the guest modules already built for this kernel (the per-patch
    boots keep them with each patch's image, since the build directory
    moves on to the next patch); default: built against build_dir.
    """
    kernel_image, out_dir = Path(kernel_image), Path(out_dir)
    if not kernel_image.is_file():
        raise SlabconvError(f"kernel image {kernel_image} not found", exit_code=2)
    out_dir.mkdir(parents=True, exist_ok=True)
    # one guest at a time per run directory: two runs booting the same
    # configuration at once would write each other's console log and results
    with locked(out_dir / ".lock", f"the boot run directory {out_dir}", stage="boot"):
        return _run(kernel_image, build_dir, src_dir, out_dir, arch=arch, timeout=timeout,
                    cmdline_extra=cmdline_extra, slub_debug=slub_debug, accel=accel,
                    init_script=init_script, with_module=with_module, allow=allow,
                    memory=memory, smp=smp, iommu=iommu, busybox=busybox,
                    qemu_extra=qemu_extra, modules=modules)


def _run(kernel_image: Path, build_dir, src_dir, out_dir: Path, *, arch, timeout,
         cmdline_extra, slub_debug, accel, init_script, with_module, allow, memory, smp,
         iommu, busybox, qemu_extra, modules) -> BootResult:
    for stale in ("results.ktap", "summary.json", "module-build.log"):
        (out_dir / stale).unlink(missing_ok=True)
    t0 = time.monotonic()

    mods = []
    if with_module and modules is not None:
        mods.extend(Path(m) for m in modules)
    elif with_module:
        try:
            mods.extend(module.companions(
                module.build(Path(src_dir), Path(build_dir), arch=arch)))
        except SlabconvError as e:
            if e.exit_code != 1:
                raise
            (out_dir / "module-build.log").write_text(str(e) + "\n")
            info("boot", "test module does not build against this kernel")
            return _fail_early(out_dir, f"test module build failed: {e}",
                               time.monotonic() - t0)
    bb = Path(busybox) if busybox else guest_busybox.for_arch(arch)
    initrd = initramfs.build(mods, init_script=init_script, busybox=bb)
    # A KVM probe (accel kvm/auto only) boots the standard init in probe mode.
    accel = qemu.resolve_accel(
        accel, kernel_image,
        (lambda: initramfs.build([], busybox=bb)) if init_script else (lambda: initrd),
        arch=arch)

    cmdline = base_cmdline(arch, slub_debug)
    devices: list[str] = []
    if iommu:
        devices, params = iommu_guest.setup(iommu)
        cmdline += " " + params
    if cmdline_extra:
        cmdline += " " + cmdline_extra.strip()
    info("boot", f"booting {kernel_image} ({accel}, timeout {timeout:.0f}s): {cmdline}")
    r = qemu.boot(kernel_image, initrd, out_dir, append=cmdline, arch=arch,
                  accel=accel, timeout=timeout, memory=memory, smp=smp,
                  devices=[*devices, *qemu_extra])

    failures: list[str] = []
    if r.timed_out:
        failures.append(f"hang/timeout: guest still running after {timeout:.0f}s "
                        f"(killed); see {r.console_log}; console tail:\n"
                        + console_tail(r.console_log))

    raw = r.ktap_log.read_text(errors="replace") if r.ktap_log.is_file() else ""
    res = ktap.parse(raw)
    if not res.lines:   # no KTAP channel output: look on the console
        res = ktap.parse(r.console_log.read_text(errors="replace"), prefix="")
    res.write(out_dir / "results.ktap")
    failures += [f"ktap: {x}" for x in res.failures()]
    done = res.counts.passed + res.counts.skipped
    if res.lines and done < res.planned:
        failures.append(f"ktap: {done} of the {res.planned} planned tests passed or were "
                        f"skipped ({res.counts})")

    # the arch's own expected lines (base/arches.py) with the caller's
    findings = console.scan(r.console_log, allow=(*qemu.arch_info(arch).console_allow, *allow))
    failures += console.summarize(findings, log_name=r.console_log.name)
    if not r.timed_out and not r.end_seen:
        failures.append("guest did not finish its tests (no end marker); "
                        f"see {r.console_log}")

    module_tests = next((len(t.subtests) for t in res.root.subtests
                         if t.name == MODULE_SUITE), 0)
    result = BootResult(
        passed=not failures, ktap=res.text, console_log=r.console_log,
        seconds=r.seconds, failures=failures, counts=res.counts,
        ktap_path=out_dir / "results.ktap", out_dir=out_dir,
        timed_out=r.timed_out, accel=accel, cmdline=cmdline,
        module_tests=module_tests, findings=findings, results=res)
    (out_dir / "summary.json").write_text(json.dumps({
        "passed": result.passed, "seconds": round(r.seconds, 2),
        "timed_out": r.timed_out, "accel": accel, "cmdline": cmdline,
        "counts": res.counts.as_dict(), "module_tests": module_tests,
        "failures": failures, "image": str(kernel_image),
        "initramfs": str(initrd), "qemu": r.cmd,
    }, indent=2) + "\n")
    info("boot", f"{'PASS' if result.passed else 'FAIL'} in {r.seconds:.1f}s: "
                 f"{res.counts}; logs in {out_dir}")
    return result
