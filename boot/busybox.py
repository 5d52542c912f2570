"""The guest's busybox, per guest architecture.

x86_64 guests use the host's /bin/busybox (Debian's busybox-static).  An
i386 guest cannot run that binary, so the i386 build of the same Debian
package is fetched with apt into a private apt state (its own
sources.list, lists, cache and ``APT::Architecture=i386``, under
``cache_dir("boot", "busybox-i386")``): the system's apt configuration and
dpkg's architecture list are never touched.  apt checks the .deb against
the signed lists; the binary is then extracted with dpkg-deb and checked to
be a 32-bit x86 ELF.  guest/init.sh runs unchanged on it.

    busybox.for_arch("x86_64") -> Path("/bin/busybox")
    busybox.for_arch("i386")   -> <cache>/boot/busybox-i386/busybox
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from slabconv import paths
from slabconv.log import SlabconvError, info

HOST_BUSYBOX = Path("/bin/busybox")
PACKAGE = "busybox-static"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# The suite of this machine (Debian 12): the same busybox version as the host's.
SOURCES = (
    f"deb [signed-by={KEYRING}] http://deb.debian.org/debian bookworm main",
    f"deb [signed-by={KEYRING}] http://deb.debian.org/debian-security bookworm-security main",
)
# Debian architecture of the guest's user space; ELF class and machine it must have.
FOREIGN = {"i386": ("i386", 1, 3)}     # EI_CLASS 1 = 32-bit, e_machine 3 = EM_386
TIMEOUT = 600


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
    if arch == "x86_64":
        if not HOST_BUSYBOX.is_file():
            raise SlabconvError(f"{HOST_BUSYBOX} not found; install the Debian package "
                                f"'{PACKAGE}'", exit_code=3)
        return HOST_BUSYBOX
    if arch not in FOREIGN:
        raise SlabconvError(f"boot: no busybox for guest arch {arch!r} "
                            f"(known: x86_64, {', '.join(FOREIGN)})", exit_code=2)
    return _foreign(arch)


def _apt_options(state: Path, debarch: str) -> list[str]:
    return ["-o", f"Dir::Etc::sourcelist={state / 'sources.list'}",
            "-o", "Dir::Etc::sourceparts=/dev/null",
            "-o", f"Dir::State::Lists={state / 'lists'}",
            "-o", f"Dir::Cache={state / 'cache'}",
            "-o", "Dir::State::status=/dev/null",
            "-o", "Dir::Etc::preferences=/dev/null",
            "-o", "Dir::Etc::preferencesparts=/dev/null",
            "-o", f"APT::Architecture={debarch}", "-o", f"APT::Architectures={debarch}",
            "-o", "APT::Sandbox::User=root", "-o", "Acquire::Languages=none",
            "-o", "Acquire::Retries=3",
            # the system's update hooks are not for these lists
            "-o", "APT::Update::Pre-Invoke::=", "-o", "APT::Update::Post-Invoke::=",
            "-o", "APT::Update::Post-Invoke-Success::="]


UPDATE_TRIES = 3          # apt-get update, with a pause between: mirrors sync several times a day
UPDATE_PAUSE = 20.0


def _update(state: Path, debarch: str) -> None:
    """apt-get update of the private state, tried UPDATE_TRIES times (each
    retry said once).  An index of the security suite that still fails
    (a mirror in the middle of a sync: "File has unexpected size") is
    left out when the main suite's index came: busybox-static is in both."""
    for attempt in range(1, UPDATE_TRIES + 1):
        try:
            _apt("apt-get", ["update"], state, debarch)
            return
        except SlabconvError as e:
            failed = [ln for ln in str(e).splitlines() if ln.startswith(("E:", "Err:"))]
            main_lists = list((state / "lists").glob("*debian_dists_bookworm_main_binary-*"))
            only_security = failed and all("debian-security" in ln or "index files failed" in ln
                                           for ln in failed)
            if attempt == UPDATE_TRIES:
                if only_security and main_lists:
                    info("boot", "bookworm-security's index still fails (mirror sync?); "
                                 f"taking {PACKAGE} from bookworm main")
                    return
                raise SlabconvError(f"{e}\n(tried {UPDATE_TRIES} times; the Debian mirror "
                                    "may be in the middle of a sync: retry in a few minutes)",
                                    exit_code=4)
            info("boot", f"apt-get update failed (try {attempt} of {UPDATE_TRIES}): "
                         f"{failed[0] if failed else 'exit status'}; again in "
                         f"{UPDATE_PAUSE * attempt:.0f}s")
            time.sleep(UPDATE_PAUSE * attempt)


def _apt(tool: str, args: list[str], state: Path, debarch: str, cwd: Path | None = None) -> str:
    exe = shutil.which(tool)
    if not exe:
        raise SlabconvError(f"'{tool}' not found; install the Debian package 'apt'",
                            exit_code=3)
    env = dict(os.environ, LC_ALL="C", LANG="C", DEBIAN_FRONTEND="noninteractive")
    cmd = [exe, *_apt_options(state, debarch), *args]
    try:
        cp = subprocess.run(cmd, cwd=cwd, env=env, text=True, errors="replace",
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SlabconvError(f"{tool} {' '.join(args)} timed out after {TIMEOUT}s "
                            f"(private apt state {state})", exit_code=4)
    if cp.returncode != 0 or re.search(r"^(E|Err):", cp.stdout or "", re.M):
        tail = "\n".join((cp.stdout or "").splitlines()[-15:])
        raise SlabconvError(f"{tool} {' '.join(args)} failed (exit {cp.returncode}, "
                            f"private apt state {state}):\n{tail}", exit_code=4)
    return cp.stdout or ""


def _foreign(arch: str) -> Path:
    debarch, ei_class, machine = FOREIGN[arch]
    root = paths.cache_dir("boot", f"busybox-{arch}")
    out = root / "busybox"
    if out.is_file() and elf_arch(out) == (ei_class, machine):
        return out
    if not shutil.which("dpkg-deb"):
        raise SlabconvError("'dpkg-deb' not found; install the Debian package 'dpkg'",
                            exit_code=3)
    state = root / "apt"
    for d in (state / "lists" / "partial", state / "cache" / "archives" / "partial"):
        d.mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text("\n".join(SOURCES) + "\n")
    info("boot", f"fetching {PACKAGE}:{debarch} for the {arch} guest "
                 f"(private apt state {state})")
    _update(state, debarch)
    debs = root / "debs"
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir()
    _apt("apt-get", ["download", f"{PACKAGE}:{debarch}"], state, debarch, cwd=debs)
    found = sorted(debs.glob(f"{PACKAGE}_*_{debarch}.deb"))
    if not found:
        raise SlabconvError(f"apt-get download {PACKAGE}:{debarch} left no .deb in {debs}",
                            exit_code=4)
    x = root / "x"
    shutil.rmtree(x, ignore_errors=True)
    cp = subprocess.run(["dpkg-deb", "-x", str(found[-1]), str(x)], text=True,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    binary = x / "bin" / "busybox"
    if cp.returncode != 0 or not binary.is_file():
        raise SlabconvError(f"dpkg-deb -x {found[-1].name} failed or has no bin/busybox:\n"
                            f"{cp.stdout}", exit_code=4)
    got = elf_arch(binary)
    if got != (ei_class, machine):
        raise SlabconvError(f"{binary} is not a {arch} ELF (class, machine = {got})",
                            exit_code=4)
    tmp = out.with_name(f".busybox.{os.getpid()}")
    shutil.copy2(binary, tmp)
    os.replace(tmp, out)
    shutil.rmtree(x, ignore_errors=True)
    info("boot", f"{arch} busybox: {out} (from {found[-1].name})")
    return out
