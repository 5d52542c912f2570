"""The guest's initramfs: busybox, /init and the test module, as newc cpio.

Written by a small pure-Python newc writer, so the archive is reproducible
(fixed inode numbers, mtime 0, root ownership) and can hold /dev/console
without root privileges.  The kernel opens /dev/console for init's stdio
*before* init mounts devtmpfs, so that node must be in the archive.

Archives are cached under ``cache_dir("boot", "initramfs")`` keyed by a hash
of everything that goes into them.
"""
from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from base import paths
from base.log import info, SlabconvError


GUEST = Path(__file__).resolve().parent / "guest"
INIT_SCRIPT = GUEST / "init.sh"
MODULE_DIR = "lib/slabconv"          # modules land in /lib/slabconv/<name>.ko
BUSYBOX = "/bin/busybox"
# Applets init.sh (and a person debugging with rdinit=/bin/sh) uses.
APPLETS = (
    "sh", "ash", "cat", "cut", "dd", "dmesg", "echo", "grep", "head", "insmod",
    "lsmod", "ls", "mkdir", "mount", "poweroff", "readlink", "reboot", "rmmod", "sed", "sha256sum",
    "sleep", "usleep", "stty", "sync", "tail", "tr", "umount", "uname", "wc", "test", "[",
)
FORMAT_VERSION = "1"   # bump when the archive layout changes


@dataclass(frozen=True)
class Entry:
    name: str            # path inside the archive, no leading "/"
    mode: int            # full st_mode (type + permissions)
    data: bytes = b""    # file contents or symlink target
    rdev: tuple[int, int] = (0, 0)


def _pad4(n: int) -> bytes:
    return b"\0" * ((4 - n % 4) % 4)


def newc_bytes(entries: Iterable[Entry]) -> bytes:
    """Serialise entries as a newc ("070701") cpio archive with a trailer."""
    out = bytearray()
    ino = 1
    for e in list(entries) + [Entry("TRAILER!!!", 0)]:
        name = e.name.encode() + b"\0"
        trailer = e.name == "TRAILER!!!"
        nlink = 2 if stat.S_ISDIR(e.mode) else 1
        fields = (0 if trailer else ino, e.mode, 0, 0, nlink, 0, len(e.data),
                  0, 0, e.rdev[0], e.rdev[1], len(name), 0)
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        out += hdr + name + _pad4(len(hdr) + len(name))
        out += e.data + _pad4(len(e.data))
        ino += 1
    out += b"\0" * ((512 - len(out) % 512) % 512)     # cpio block size
    return bytes(out)


def read_newc(path: Path) -> dict[str, Entry]:
    """Parse a newc archive (used by the tests and for debugging)."""
    raw = Path(path).read_bytes()
    pos = 0
    entries: dict[str, Entry] = {}
    while True:
        if raw[pos:pos + 6] != b"070701":
            raise ValueError(f"{path}: bad newc magic at offset {pos}")
        f = [int(raw[pos + 6 + 8 * i: pos + 14 + 8 * i], 16) for i in range(13)]
        mode, filesize, rmaj, rmin, namesize = f[1], f[6], f[9], f[10], f[11]
        pos += 110
        name = raw[pos:pos + namesize - 1].decode()
        pos += namesize
        pos += (4 - pos % 4) % 4
        data = raw[pos:pos + filesize]
        pos += filesize
        pos += (4 - pos % 4) % 4
        if name == "TRAILER!!!":
            return entries
        entries[name] = Entry(name, mode, data, (rmaj, rmin))


def _dir(name: str) -> Entry:
    return Entry(name, stat.S_IFDIR | 0o755)


def _file(name: str, data: bytes, perm: int = 0o644) -> Entry:
    return Entry(name, stat.S_IFREG | perm, data)


def entries_for(init: bytes, modules: Mapping[str, bytes], busybox: bytes,
                extra_files: Mapping[str, bytes] | None = None) -> list[Entry]:
    ents = [_dir(d) for d in ("bin", "sbin", "dev", "etc", "lib", MODULE_DIR,
                              "proc", "sys", "tmp", "root")]
    ents.append(Entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)))
    ents.append(Entry("dev/null", stat.S_IFCHR | 0o666, rdev=(1, 3)))
    ents.append(_file("bin/busybox", busybox, 0o755))
    for a in APPLETS:
        ents.append(Entry(f"bin/{a}", stat.S_IFLNK | 0o777, b"busybox"))
    ents.append(_file("init", init, 0o755))
    for name, data in sorted(modules.items()):
        ents.append(_file(f"{MODULE_DIR}/{name}", data))
    for name, data in sorted((extra_files or {}).items()):
        parent = os.path.dirname(name.strip("/"))
        if parent and not any(e.name == parent for e in ents):
            ents.append(_dir(parent))
        ents.append(_file(name.strip("/"), data, 0o755))
    return ents


def build(modules: Iterable[Path] = (), *, init_script: Path | None = None,
          busybox: Path | str = BUSYBOX,
          extra_files: Mapping[str, bytes] | None = None) -> Path:
    """Build (or reuse) the initramfs; return the path of the cpio archive.

    modules: .ko files, stored as /lib/slabconv/<basename>.
    init_script: replaces boot/guest/init.sh (detector tests use this).
    """
    busybox = Path(busybox)
    if not busybox.is_file():
        raise SlabconvError(f"{busybox} not found; install the Debian package "
                            "'busybox-static'", exit_code=3)
    init_path = Path(init_script) if init_script else INIT_SCRIPT
    init = init_path.read_bytes()
    if not init.startswith(b"#!"):
        raise SlabconvError(f"{init_path}: init script needs a #! line", exit_code=2)
    mods = {}
    for m in modules:
        m = Path(m)
        if not m.is_file():
            raise SlabconvError(f"module {m} not found", exit_code=2)
        mods[m.name] = m.read_bytes()
    bb = busybox.read_bytes()

    h = hashlib.sha256()
    h.update(FORMAT_VERSION.encode())
    for label, blob in [("init", init), ("busybox", bb)] + \
            sorted((f"mod:{k}", v) for k, v in mods.items()) + \
            sorted((f"extra:{k}", v) for k, v in (extra_files or {}).items()):
        h.update(label.encode() + b"\0" + hashlib.sha256(blob).digest())
    for a in APPLETS:
        h.update(a.encode() + b"\0")
    key = h.hexdigest()[:20]

    out = paths.cache_dir("boot", "initramfs") / f"{key}.cpio"
    if out.is_file():
        return out
    data = newc_bytes(entries_for(init, mods, bb, extra_files))
    # pid and thread: the boot matrix builds archives from several threads
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, out)
    info("boot", f"initramfs {out} ({len(data) // 1024} KiB, "
                 f"modules: {', '.join(sorted(mods)) or 'none'})")
    return out
