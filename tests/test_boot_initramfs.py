"""boot.initramfs: archive contents, format and caching; init.sh syntax."""
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import initramfs  # noqa: E402

def test_busybox_static_is_installed():
    assert Path(initramfs.BUSYBOX).is_file(), "busybox-static is required"


def needs_busybox(f):       # busybox is required (test above), never a reason to skip
    return f


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def fake_ko(tmp_path):
    ko = tmp_path / "slabconv_test.ko"
    ko.write_bytes(b"\x7fELF fake module " * 100)
    return ko


@needs_busybox
def test_contains_init_busybox_and_module(cache, fake_ko):
    cpio = initramfs.build([fake_ko])
    assert cpio.is_file() and str(cpio).startswith(str(cache))
    ents = initramfs.read_newc(cpio)

    init = ents["init"]
    assert stat.S_ISREG(init.mode) and init.mode & 0o111
    assert init.data == initramfs.INIT_SCRIPT.read_bytes()

    bb = ents["bin/busybox"]
    assert stat.S_ISREG(bb.mode) and bb.mode & 0o111
    assert bb.data == Path(initramfs.BUSYBOX).read_bytes()
    for applet in ("sh", "insmod", "rmmod", "dmesg", "mount", "reboot", "stty"):
        e = ents[f"bin/{applet}"]
        assert stat.S_ISLNK(e.mode) and e.data == b"busybox"

    ko = ents["lib/slabconv/slabconv_test.ko"]
    assert ko.data == fake_ko.read_bytes()

    console = ents["dev/console"]
    assert stat.S_ISCHR(console.mode) and console.rdev == (5, 1)
    for d in ("proc", "sys", "dev", "tmp"):
        assert stat.S_ISDIR(ents[d].mode)


@needs_busybox
def test_archive_is_valid_for_cpio(cache, fake_ko):
    assert shutil.which("cpio"), "cpio is required"
    cpio = initramfs.build([fake_ko])
    names = subprocess.run(["cpio", "-it", "--quiet"], stdin=open(cpio, "rb"),
                           capture_output=True, text=True, check=True).stdout.split()
    assert {"init", "bin/busybox", "lib/slabconv/slabconv_test.ko", "dev/console"} <= set(names)


@needs_busybox
def test_cached_by_content(cache, fake_ko, tmp_path):
    a = initramfs.build([fake_ko])
    mtime = a.stat().st_mtime_ns
    assert initramfs.build([fake_ko]) == a and a.stat().st_mtime_ns == mtime
    fake_ko.write_bytes(b"different module")
    b = initramfs.build([fake_ko])
    assert b != a
    init = tmp_path / "init.sh"
    init.write_text("#!/bin/sh\nexec sh\n")
    c = initramfs.build([fake_ko], init_script=init)
    assert c not in (a, b)
    assert initramfs.read_newc(c)["init"].data == init.read_bytes()


def test_newc_roundtrip(tmp_path):
    ents = [initramfs.Entry("d", stat.S_IFDIR | 0o755),
            initramfs.Entry("d/f", stat.S_IFREG | 0o644, b"abc"),
            initramfs.Entry("l", stat.S_IFLNK | 0o777, b"d/f")]
    p = tmp_path / "x.cpio"
    p.write_bytes(initramfs.newc_bytes(ents))
    assert p.stat().st_size % 512 == 0
    got = initramfs.read_newc(p)
    assert got["d/f"].data == b"abc" and got["l"].data == b"d/f"


def test_missing_module_is_an_error(cache, tmp_path):
    from base.log import SlabconvError
    with pytest.raises(SlabconvError):
        initramfs.build([tmp_path / "nope.ko"])


@needs_busybox
def test_init_script_syntax():
    subprocess.run([initramfs.BUSYBOX, "sh", "-n", str(initramfs.INIT_SCRIPT)], check=True)
