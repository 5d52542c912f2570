"""base/arches.py, the one place that says how each architecture is built
and booted, and the consumers that take it from there: the make command
lines (kbuild, kconfig, the guest module), the image, the QEMU command
line, the guest's busybox and the apt state it comes from, objdiff's
objdump.  No kernel, no QEMU run."""
import dataclasses
from pathlib import Path

import pytest

from base import arches
from base.log import SlabconvError
from boot import busybox, qemu
from fetch import suites
from verify import configtable, kbuild, kconfig
from verify.objdiff import code


def test_every_arch_of_the_table_is_an_entry_and_the_table_refuses_others(tmp_path):
    used = {c.arch for c in configtable.table().configs.values()}
    assert used == {"x86_64", "i386", "arm64"}
    assert set(configtable.ARCHES) == set(arches.ARCHES)
    t = tmp_path / "configs.toml"
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "slub.config").write_text("CONFIG_SLUB=y\n")
    t.write_text('\n[x]\narch = "riscv64"\nallocator = "slub"\nfragments = ["slub"]\n')
    with pytest.raises(SlabconvError) as e:
        configtable.load(t)
    assert f"{t}:2: [x] arch 'riscv64' is not one of x86_64, i386, arm64" in str(e.value)


def test_arm64_is_cross_compiled_to_Image():
    a = arches.get("arm64")
    assert a.make_vars() == ["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"]
    assert a.compiler == "aarch64-linux-gnu-gcc" and a.objdump == "aarch64-linux-gnu-objdump"
    assert a.targets(kbuild.DEFAULT_TARGETS) == ("Image", "modules_prepare")
    assert a.image_path("/o") == Path("/o/arch/arm64/boot/Image")
    assert kbuild.image_path(Path("/o"), "arm64") == Path("/o/arch/arm64/boot/Image")
    x = arches.get("x86_64")
    assert x.make_vars() == ["ARCH=x86_64"] and x.compiler == "gcc"
    assert x.targets(kbuild.DEFAULT_TARGETS) == kbuild.DEFAULT_TARGETS
    assert kbuild.image_path(Path("/o"), "i386") == Path("/o/arch/x86/boot/bzImage")
    assert (a.packages("build"), a.packages("boot")) == (("gcc-aarch64-linux-gnu",),
                                                         ("qemu-system-arm",))


def test_make_command_lines_carry_the_cross_compiler(tmp_path):
    cmd = kbuild.make_args(tmp_path, tmp_path / "o", "arm64", 2, use_ccache=True, nice=False)
    assert "ARCH=arm64" in cmd and "CROSS_COMPILE=aarch64-linux-gnu-" in cmd
    cc = next(x for x in cmd if x.startswith("CC="))
    assert cc.endswith(" ccache aarch64-linux-gnu-gcc")
    assert "HOSTCC=ccache gcc" in cmd                        # host programs stay native
    x86 = kbuild.make_args(tmp_path, tmp_path / "o", "x86_64", 2, use_ccache=True, nice=False)
    assert not any(x.startswith("CROSS_COMPILE=") for x in x86)
    assert next(x for x in x86 if x.startswith("CC=")).endswith(" ccache gcc")
    # Kconfig asks the cross gcc what it supports (CC_HAS_KASAN_SW_TAGS)
    k = kconfig.make_cmd(tmp_path, tmp_path / "o", "arm64", "olddefconfig")
    assert k[-3:] == ["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-", "olddefconfig"]
    assert kconfig.inputs_digest(["slub"], "arm64") != kconfig.inputs_digest(["slub"], "x86_64")


def test_a_missing_cross_compiler_is_named_with_its_package(tmp_path, monkeypatch):
    fake = dataclasses.replace(arches.get("arm64"), name="fakearch",
                               cross_compile="no-such-prefix-", toolchain_package="gcc-fake")
    monkeypatch.setitem(arches.ARCHES, "fakearch", fake)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / ".config").write_text("")
    with pytest.raises(SlabconvError) as e:
        kbuild.build(tmp_path, tmp_path / "o", arch="fakearch")
    assert e.value.exit_code == 3
    assert "'no-such-prefix-gcc' not found; install the Debian package 'gcc-fake'" in str(e.value)
    with pytest.raises(SlabconvError) as e:
        arches.get("riscv64")
    assert "supported: x86_64, i386, arm64" in str(e.value) and e.value.exit_code == 2


def test_arm64_qemu_command_line(tmp_path):
    cmd = qemu.command(tmp_path / "Image", tmp_path / "initrd", "console=ttyAMA0",
                       arch="arm64", console_log=tmp_path / "c,1.log",
                       ktap_log=tmp_path / "k.log")
    assert Path(cmd[0]).name == "qemu-system-aarch64"
    assert cmd[cmd.index("-machine") + 1] == "virt"
    assert cmd[cmd.index("-cpu") + 1] == "max,pauth-impdef=on"
    assert cmd[cmd.index("-accel") + 1] == "tcg"
    # console on the one PL011 UART, the KTAP channel on a virtio console
    assert cmd.count("-serial") == 1
    assert f"file,id=ser0,path={tmp_path}/c,,1.log" in cmd
    i = cmd.index(f"file,id=ser1,path={tmp_path}/k.log")
    assert cmd[i - 3:i - 1] == ["-device", "virtio-serial-device"]
    assert cmd[i + 1:i + 3] == ["-device", "virtconsole,chardev=ser1"]
    x86 = qemu.command(tmp_path / "b", tmp_path / "i", "", arch="x86_64",
                       console_log=tmp_path / "c", ktap_log=tmp_path / "k")
    assert x86.count("-serial") == 2 and "virtconsole,chardev=ser1" not in x86
    from boot import base_cmdline
    assert base_cmdline("arm64", None).startswith("console=ttyAMA0 ")


def test_guest_busybox_per_arch(tmp_path):
    assert busybox.FOREIGN == {"i386": ("bookworm-i386", "i386", 1, 3),
                               "arm64": ("bookworm-arm64", "arm64", 2, 183)}
    assert suites.FOREIGN["bookworm-arm64"] == ("bookworm", "arm64")
    elf = tmp_path / "elf"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + (183).to_bytes(2, "little"))
    assert busybox.elf_arch(elf) == (2, 183)
    assert arches.by_elf(2, 183).name == "arm64" and arches.by_elf(2, 62).name == "x86_64"
    assert arches.by_elf(1, 3).name == "i386"
    with pytest.raises(SlabconvError):
        busybox.for_arch("riscv64")


def test_the_arm64_guests_state_takes_its_sites_from_the_machines_apt(monkeypatch):
    """Like every private state, the arm64 busybox's names the machine's
    own mirror (fetch/mirrors.py), never a host of its own."""
    from fetch import mirrors
    monkeypatch.setenv("SLABCONV_APT_MIRROR", "http://m.example/debian")
    mirrors.machine.cache_clear() if hasattr(mirrors.machine, "cache_clear") else None
    st = suites.named("bookworm-arm64")
    assert st.arch == "arm64"
    assert any("http://m.example/debian bookworm main" in line for line in st.sources), st.sources
    assert "http://m.example/debian bookworm main" in st.describe()


def test_objdiff_disassembles_each_object_with_its_architectures_objdump(monkeypatch):
    assert Path(code.objdump_path("arm64")).name == "aarch64-linux-gnu-objdump"
    assert Path(code.objdump_path("x86_64")).name == "objdump"
    monkeypatch.setattr(code.shutil, "which", lambda exe: None)
    with pytest.raises(SlabconvError) as e:
        code.objdump_path("arm64")
    assert "aarch64-linux-gnu-objdump not found (Debian package gcc-aarch64-linux-gnu)" \
        in str(e.value)


@pytest.mark.network
def test_kconfig_asks_the_cross_gcc_and_confirms_sw_tags(tmp_path, monkeypatch):
    """arm64-sw-tags configured on the packaged 5.10 tree (tinyconfig,
    fragments, olddefconfig; no build): gcc 12 for aarch64 has
    -fsanitize=kernel-hwaddress, so Kconfig sets KASAN_SW_TAGS, and the
    confirmation finds every requested value.  Planted: the same ARCH=arm64
    with the host's x86 gcc (no CROSS_COMPILE): CC_HAS_KASAN_SW_TAGS is
    off, and the confirmation names the options Kconfig dropped."""
    from regen.source import resolve
    from base import paths
    src = resolve(paths.DEFAULT_KERNEL, None).tree
    cfg = kconfig.configure_named(src, tmp_path / "o", "arm64-sw-tags")
    vals = kconfig.parse_config(cfg.read_text())
    assert {k: vals.get(k) for k in ("CONFIG_CC_IS_GCC", "CONFIG_CC_HAS_KASAN_SW_TAGS",
                                     "CONFIG_KASAN_SW_TAGS", "CONFIG_KASAN_SW_TAGS_IDENTIFY",
                                     "CONFIG_SLUB", "CONFIG_SERIAL_AMBA_PL011_CONSOLE")} == \
        dict.fromkeys(("CONFIG_CC_IS_GCC", "CONFIG_CC_HAS_KASAN_SW_TAGS", "CONFIG_KASAN_SW_TAGS",
                       "CONFIG_KASAN_SW_TAGS_IDENTIFY", "CONFIG_SLUB",
                       "CONFIG_SERIAL_AMBA_PL011_CONSOLE"), "y")
    assert vals.get("CONFIG_KASAN_GENERIC", "n") == "n"
    host = dataclasses.replace(arches.get("arm64"), cross_compile="")
    monkeypatch.setitem(arches.ARCHES, "arm64", host)
    with pytest.raises(SlabconvError) as e:
        kconfig.configure_named(src, tmp_path / "host-gcc", "arm64-sw-tags")
    assert "CONFIG_KASAN_SW_TAGS: requested y, got not set" in str(e.value)
