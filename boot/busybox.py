"""The guest's busybox, per guest architecture.

x86_64 guests use the host's /bin/busybox (Debian's busybox-static).  An
i386 guest cannot run that binary, so the i386 build of the same Debian
package is fetched by fetch.get_deb from a private apt state of its own
architecture (fetch/suites.py "bookworm-i386": bookworm main only, its own
sources.list, lists and cache, ``APT::Architecture=i386``): the system's
apt configuration and dpkg's architecture list are never touched.  The
.deb is checked against the size and SHA256 of apt's signed index and
cached (apt/bookworm-i386/debs/), with the retries of fetch/net.py; the
binary is then extracted with dpkg-deb, checked to be a 32-bit x86 ELF and
kept with a record of the .deb it came from and its own SHA256
(boot/busybox-i386/busybox, busybox.json).  guest/init.sh runs unchanged on it.
An arm64 guest's is fetched the same way from "bookworm-arm64" (fetch/suites.py
FOREIGN; like every private state, on the machine's own mirrors), and checked to be an AArch64 ELF; which guest takes which is
base/arches.py's `busybox`.

A run gets it before its first build (cli/prefetch.py, `make
fetch`); afterwards for_arch() only reads the cache.

    busybox.for_arch("x86_64") -> Path("/bin/busybox")
    busybox.for_arch("i386")   -> <cache>/boot/busybox-i386/busybox
    busybox.for_arch("arm64")  -> <cache>/boot/busybox-arm64/busybox
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import fetch
from base import arches, paths
from base.lock import locked
from base.log import info, SlabconvError


HOST_BUSYBOX = Path("/bin/busybox")
PACKAGE = "busybox-static"
# Guest arch -> (apt state of fetch/suites.py, Debian architecture, ELF
# class and machine the binary must have): base/arches.py's busybox.
FOREIGN = {a.name: (a.busybox.state, a.busybox.debian_arch, a.elf_class, a.elf_machine)
           for a in arches.ARCHES.values() if a.busybox.state}


def elf_arch(path: Path) -> tuple[int, int] | None:
    """(EI_CLASS, e_machine) of an ELF file, None if it is not one."""
    try:
        head = Path(path).read_bytes()[:20]
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order = "little" if head[5] == 1 else "big"
    return head[4], int.from_bytes(head[18:20], order)


def for_arch(arch: str) -> Path:
    """The busybox binary for a guest of this architecture."""
    if arch in arches.ARCHES and not arches.get(arch).busybox.state:
        if not HOST_BUSYBOX.is_file():
            raise SlabconvError(f"{HOST_BUSYBOX} not found; install the Debian package "
                                f"'{PACKAGE}'", exit_code=3)
        return HOST_BUSYBOX
    if arch not in FOREIGN:
        raise SlabconvError(f"boot: no busybox for guest arch {arch!r} "
                            f"(known: {', '.join(arches.names())})", exit_code=2)
    return _foreign(arch)


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cached(arch: str) -> Path | None:
    """The cached busybox of a foreign arch if it is whole: the right ELF,
    and the SHA256 recorded when it was extracted from a verified .deb."""
    state, debarch, ei_class, machine = FOREIGN[arch]
    root = paths.cache_dir("boot", f"busybox-{arch}")
    out, record = root / "busybox", root / "busybox.json"
    try:
        rec = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    if (out.is_file() and elf_arch(out) == (ei_class, machine)
            and rec.get("sha256") == _sha256(out)):
        return out
    return None


def _foreign(arch: str) -> Path:
    got = cached(arch)
    if got is not None:
        return got
    state, debarch, ei_class, machine = FOREIGN[arch]
    root = paths.cache_dir("boot", f"busybox-{arch}")
    with locked(root / ".lock", f"the {arch} busybox"):
        got = cached(arch)
        if got is not None:
            return got
        if not shutil.which("dpkg-deb"):
            raise SlabconvError("'dpkg-deb' not found; install the Debian package 'dpkg'",
                                exit_code=3)
        info("boot", f"fetching {PACKAGE}:{debarch} for the {arch} guest")
        deb, want = fetch.get_deb(state, PACKAGE)
        x = root / "x"
        shutil.rmtree(x, ignore_errors=True)
        cp = subprocess.run(["dpkg-deb", "-x", str(deb), str(x)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        binary = x / "bin" / "busybox"
        if cp.returncode != 0 or not binary.is_file():
            raise SlabconvError(f"dpkg-deb -x {deb.name} failed or has no bin/busybox:\n"
                                f"{cp.stdout}", exit_code=4)
        got_arch = elf_arch(binary)
        if got_arch != (ei_class, machine):
            raise SlabconvError(f"{binary} is not a {arch} ELF (class, machine = {got_arch})",
                                exit_code=4)
        out = root / "busybox"
        tmp = out.with_name(f".busybox.{os.getpid()}")
        shutil.copy2(binary, tmp)
        os.replace(tmp, out)
        shutil.rmtree(x, ignore_errors=True)
        for old in ("apt", "debs"):        # the private apt state of before fetch.get_deb
            shutil.rmtree(root / old, ignore_errors=True)
        rec = {"deb": want.filename, "deb_sha256": want.sha256, "sha256": _sha256(out),
               "state": state}
        tmp = root / ".busybox.json.tmp"
        tmp.write_text(json.dumps(rec, indent=1) + "\n")
        os.replace(tmp, root / "busybox.json")
        info("boot", f"{arch} busybox: {out} (from {deb.name}, SHA256 checked)")
        return out
