"""Run a kernel + initramfs in QEMU with the serial ports captured to files.

* The kernel console (ttyS0; arm64: ttyAMA0) -> console.log, the KTAP
  channel the guest init writes (ttyS1; arm64: the virtio console hvc0) ->
  ktap.log, QEMU's own output -> qemu.log.  Each architecture's QEMU,
  machine, CPU, console and channel: base/arches.py.
* TCG by default.  KVM is used only after a probe boot proved that it reaches
  the guest init within a hard timeout (on some hosts ``-enable-kvm`` hangs
  at "Booting from ROM"); the verdict is cached for the process and, keyed by
  the host's boot id, in the cache (so pytest and the CLI share it).
* QEMU runs in its own process group; a guest that runs past the timeout is
  killed (SIGTERM, then SIGKILL) and reported as timed out.  A guest that
  printed the end marker but did not reset is killed after a short grace and
  is *not* a failure.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from base import arches, atomic, paths
from base.log import info, SlabconvError


END_MARKER = b"# slabconv: end"
PROBE_MARKER = b"slabconv-init: probe ok"


# The guests' QEMU (binary, machine, CPU, console, KTAP channel): base/arches.py.
ARCHES = arches.ARCHES


@dataclass
class QemuRun:
    cmd: list[str]
    console_log: Path
    ktap_log: Path
    qemu_log: Path
    seconds: float = 0.0
    returncode: int | None = None
    timed_out: bool = False
    end_seen: bool = False          # the guest printed the end marker
    killed_after_end: bool = False  # ... and was killed after the grace period
    accel: str = "tcg"
    extra: dict = field(default_factory=dict)


def arch_info(arch: str) -> arches.Arch:
    return arches.get(arch)


def _chardev_path(p: Path) -> str:
    return str(p).replace(",", ",,")


def command(image: Path, initrd: Path, append: str, *, arch: str = "x86_64",
            accel: str = "tcg", memory: str = "512M", smp: int = 2,
            console_log: Path, ktap_log: Path, devices=()) -> list[str]:
    """devices: more QEMU arguments (boot/iommu.py's IOMMU and disk, a
    matrix guest's qemu_extra), after the serial ports, before the kernel."""
    a = arch_info(arch)
    binary = shutil.which(a.qemu)
    if not binary:
        raise SlabconvError(f"'{a.qemu}' not found; install the Debian package "
                            f"'{a.qemu_package}' (sh scripts/install-deps.sh boot)", exit_code=3)
    return [
        binary, "-machine", a.machine, "-accel", accel,
        "-cpu", a.cpu_kvm if accel == "kvm" else a.cpu_tcg,
        # One core per socket: without ACPI (tinyconfig) the kernel finds CPUs
        # through SeaBIOS's MP table, which lists only one CPU per package.
        "-m", memory, "-smp", f"{smp},sockets={smp},cores=1,threads=1",
        "-nographic", "-no-reboot", "-monitor", "none", "-nic", "none",
        "-chardev", f"file,id=ser0,path={_chardev_path(console_log)}",
        "-serial", "chardev:ser0",
        *(x.replace("{path}", _chardev_path(ktap_log)) for x in a.ktap_channel),
        *devices,
        "-kernel", str(image), "-initrd", str(initrd), "-append", append,
    ]


def _kill_group(p: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


class _Tail:
    """Incrementally look for a marker in a growing file."""

    def __init__(self, path: Path, marker: bytes):
        self.path, self.marker, self.pos, self.buf = path, marker, 0, b""

    def seen(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                chunk = f.read()
        except FileNotFoundError:
            return False
        self.pos += len(chunk)
        self.buf = (self.buf + chunk)[-(len(self.marker) + 4096):]
        return self.marker in self.buf


def boot(image: Path, initrd: Path, out_dir: Path, *, append: str,
         arch: str = "x86_64", accel: str = "tcg", timeout: float = 120,
         grace: float = 10, memory: str = "512M", smp: int = 2,
         marker: bytes = END_MARKER, devices=()) -> QemuRun:
    """Boot once; return when QEMU exits, after timeout, or grace seconds
    after the guest printed marker (on either serial port)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    console_log, ktap_log = out_dir / "console.log", out_dir / "ktap.log"
    qemu_log = out_dir / "qemu.log"
    for p in (console_log, ktap_log):
        p.unlink(missing_ok=True)
    cmd = command(image, initrd, append, arch=arch, accel=accel, memory=memory,
                  smp=smp, console_log=console_log, ktap_log=ktap_log, devices=devices)
    run = QemuRun(cmd, console_log, ktap_log, qemu_log, accel=accel)
    tails = [_Tail(ktap_log, marker), _Tail(console_log, marker)]
    start = time.monotonic()
    end_at = None
    with open(qemu_log, "wb") as qlog:
        qlog.write((" ".join(cmd) + "\n").encode())
        qlog.flush()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while p.poll() is None:
                now = time.monotonic()
                if end_at is None and any(t.seen() for t in tails):
                    end_at = now
                    run.end_seen = True
                if end_at is not None and now - end_at > grace:
                    run.killed_after_end = True
                    _kill_group(p)
                    break
                if now - start > timeout:
                    run.timed_out = True
                    _kill_group(p)
                    break
                time.sleep(0.05)
        finally:
            if p.poll() is None:
                _kill_group(p)
    run.seconds = time.monotonic() - start
    run.returncode = p.returncode
    if not run.end_seen:
        run.end_seen = any(t.seen() for t in tails)
    for p_ in (console_log, ktap_log):
        p_.touch()
    return run


# ---- KVM probe ------------------------------------------------------------------

_verdicts: dict[str, bool] = {}


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def kvm_usable(image: Path, initrd, *, arch: str = "x86_64",
               timeout: float = 20, append: str = "") -> bool:
    """Probe once per host boot whether KVM boots this guest to its init."""
    a = arch_info(arch)
    key = f"{a.qemu}:{_boot_id()}"
    if key in _verdicts:
        return _verdicts[key]
    store = paths.cache_dir("boot") / "kvm-probe.json"
    try:
        saved = json.loads(store.read_text())
        if saved.get("key") == key:
            _verdicts[key] = bool(saved["ok"])
            return _verdicts[key]
    except (OSError, ValueError, KeyError):
        pass
    ok = False
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        info("boot", f"probing KVM (up to {timeout:.0f}s)")
        d = paths.cache_dir("boot", "kvm-probe")
        r = boot(image, initrd() if callable(initrd) else initrd, d, arch=arch,
                 accel="kvm", timeout=timeout, grace=2, marker=PROBE_MARKER,
                 append=f"console={a.console} panic=-1 {append} slabconv.mode=probe")
        ok = r.end_seen and not r.timed_out
        why = "" if ok else ("hung" if r.timed_out else "QEMU: " + " | ".join(
            r.qemu_log.read_text(errors="replace").splitlines()[1:][-2:]))
        info("boot", f"KVM probe: {'boots' if ok else 'does not boot'} "
                     f"({r.seconds:.1f}s) {why}; logs in {d}")
    _verdicts[key] = ok
    try:
        atomic.write_text(store, json.dumps({"key": key, "ok": ok}))
    except OSError:
        pass
    return ok


def resolve_accel(accel: str | None, image: Path, initrd, *,
                  arch: str = "x86_64") -> str:
    """accel: 'tcg' (default; $SLABCONV_BOOT_ACCEL overrides), 'kvm' or
    'auto' (both probe KVM first and fall back to TCG).  initrd may be a
    callable returning the path, so it is only built when a probe runs."""
    accel = (accel or os.environ.get("SLABCONV_BOOT_ACCEL") or "tcg").lower()
    if accel == "tcg":
        return "tcg"
    if accel not in ("kvm", "auto"):
        raise SlabconvError(f"boot: unknown accelerator {accel!r} "
                            "(tcg, kvm or auto)", exit_code=2)
    if kvm_usable(image, initrd, arch=arch):
        return "kvm"
    info("boot", "KVM unusable here; using TCG")
    return "tcg"
