"""boot.qemu and boot.module without a kernel: a fake QEMU script checks the
timeout / end-marker / process-group handling, fake build dirs the checks."""
import dataclasses
import os
import stat
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from base import arches  # noqa: E402
from boot import module, qemu  # noqa: E402
from base.log import SlabconvError  # noqa: E402

FAKE_QEMU = """#!/bin/sh
# Fake qemu: find the chardev paths, then behave as $FAKE_MODE says.
for a in "$@"; do
  case "$a" in file,id=ser0,path=*) CON=${a#file,id=ser0,path=} ;;
               file,id=ser1,path=*) KTAP=${a#file,id=ser1,path=} ;; esac
done
echo "fake console" > "$CON"
: > "$KTAP"
sleep 300 &
echo $! > "$FAKE_CHILD"
case "$FAKE_MODE" in
  end)  printf 'KTAP version 1\\n1..0\\n# slabconv: end\\n' >> "$KTAP"; sleep 300 ;;
  exit) printf 'KTAP version 1\\n' >> "$KTAP"; kill $!; exit 0 ;;
  hang) sleep 300 ;;
esac
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    script = tmp_path / "fake-qemu"
    script.write_text(FAKE_QEMU)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setitem(qemu.ARCHES, "fake", dataclasses.replace(
        arches.get("x86_64"), name="fake", qemu=str(script), machine="pc", qemu_package="none"))
    child = tmp_path / "child.pid"
    monkeypatch.setenv("FAKE_CHILD", str(child))
    img, initrd = tmp_path / "bzImage", tmp_path / "initrd"
    img.write_bytes(b"k")
    initrd.write_bytes(b"i")

    def run(mode, **kw):
        monkeypatch.setenv("FAKE_MODE", mode)
        r = qemu.boot(img, initrd, tmp_path / "out", append="console=ttyS0", arch="fake", **kw)
        return r, int(child.read_text())
    return run


def gone(pid, within: float = 30.0) -> bool:
    """The process has ended (its group was killed), once a loaded machine
    has reaped it: polled, up to `within` seconds."""
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of an already-killed group still "exists" briefly.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_command_line():
    cmd = qemu.command(Path("/k"), Path("/i"), "console=ttyS0", accel="tcg",
                       console_log=Path("/o/console.log"), ktap_log=Path("/o/k,tap.log"))
    s = " ".join(cmd)
    assert "-accel tcg -cpu max" in s and "-no-reboot" in s and "-nographic" in s
    assert "-smp 2,sockets=2,cores=1,threads=1" in s
    assert "file,id=ser1,path=/o/k,,tap.log" in cmd     # commas escaped
    assert cmd[-2:] == ["-append", "console=ttyS0"]
    assert "-cpu host" in " ".join(qemu.command(Path("/k"), Path("/i"), "", accel="kvm",
                                                console_log=Path("/c"), ktap_log=Path("/t")))


def test_timeout_kills_the_process_group(fake):
    t = time.monotonic()
    r, child = fake("hang", timeout=1.5)
    assert r.timed_out and not r.end_seen
    assert time.monotonic() - t >= 1.5      # killed at its timeout, not before
    assert gone(child)
    assert r.console_log.read_text() == "fake console\n"


def test_end_marker_then_grace_is_not_a_timeout(fake):
    r, child = fake("end", timeout=60, grace=0.5)
    assert r.end_seen and r.killed_after_end and not r.timed_out
    assert gone(child)


def test_normal_exit(fake):
    r, _ = fake("exit", timeout=60)
    assert r.returncode == 0 and not r.timed_out and not r.end_seen
    assert r.ktap_log.read_text() == "KTAP version 1\n"


def test_resolve_accel_default_is_tcg(monkeypatch):
    monkeypatch.delenv("SLABCONV_BOOT_ACCEL", raising=False)
    assert qemu.resolve_accel(None, Path("/k"), lambda: 1 / 0) == "tcg"
    with pytest.raises(SlabconvError):
        qemu.resolve_accel("xen", Path("/k"), Path("/i"))


def test_unsupported_arch():
    with pytest.raises(SlabconvError) as e:
        qemu.arch_info("sparc")
    assert e.value.exit_code == 2


def _fake_build(tmp_path, config):
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "Makefile").write_text("")
    (build / "scripts" / "mod").mkdir(parents=True)
    (build / ".config").write_text(config)
    return src, build


def test_module_needs_config_modules(tmp_path):
    src, build = _fake_build(tmp_path, "CONFIG_SLUB=y\n# CONFIG_MODULES is not set\n")
    with pytest.raises(SlabconvError) as e:
        module.build(src, build)
    assert e.value.exit_code == 2 and "CONFIG_MODULES" in str(e.value)


def test_module_key_tracks_kernel_build(tmp_path):
    src, build = _fake_build(tmp_path, "CONFIG_MODULES=y\n")
    k1 = module._key(src, build, "x86_64")
    assert module._key(src, build, "x86_64") == k1
    (build / "vmlinux").write_bytes(b"rebuilt")
    assert module._key(src, build, "x86_64") != k1


def test_boot_arguments_per_configuration():
    from cli import boots
    assert boots.boot_args("slub") == {"slub_debug": "FZPU", "cmdline_extra": ""}
    assert boots.boot_args("slab", "slabconv.inject=nofree") == {
        "slub_debug": None, "cmdline_extra": "slabconv.inject=nofree"}
    # kasan: every report printed (5.10 prints only the first without it);
    # KASAN's own red zones, no slub_debug.
    assert boots.boot_args("kasan", " slabconv.inject=kasan_stray ") == {
        "slub_debug": None, "cmdline_extra": "kasan_multi_shot slabconv.inject=kasan_stray"}


def test_kasan_config_builds_the_kunit_suite_in():
    # Built in (=y): KUnit's executor runs it at boot, init lifts it from
    # dmesg, which must be large enough to keep it.
    from verify import kconfig
    req = kconfig.requested_values(kconfig.config_fragments("kasan"))
    assert req["CONFIG_KASAN"] == req["CONFIG_KUNIT"] == req["CONFIG_KASAN_KUNIT_TEST"] == "y"
    assert int(req["CONFIG_LOG_BUF_SHIFT"]) >= 20
