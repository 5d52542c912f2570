"""The architectures slabconv builds and boots: one entry each, the only
place that knows what differs between them.

    from base import arches
    a = arches.get("arm64")
    a.kernel_arch, a.cross_compile, a.compiler     # ARCH=, CROSS_COMPILE=, CC's gcc
    a.image_target, a.image_path(out)              # make target, its file in O=
    a.qemu, a.machine, a.cpu_tcg, a.console        # the guest's QEMU and console
    a.packages("build"), a.packages("boot")        # the Debian packages they need

An entry's name is what verify/configs.toml's `arch` says.  The kernel
builds (verify/kbuild.py, verify/kconfig.py), the guest module build
(boot/module.py), the QEMU command line (boot/qemu.py), the guest's busybox
(boot/busybox.py) and scripts/install-deps.sh's groups (checked by
tests/test_deps_groups.py) read it from here.  Adding an architecture is
one entry here (and its base fragment in verify/configs/).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .log import SlabconvError


# make's name for the kernel image of every architecture in the callers'
# target lists (verify's build keys, the per-patch targets): build()
# replaces it with the architecture's own image target.
IMAGE = "bzImage"


@dataclass(frozen=True)
class Busybox:
    """Where a guest gets its busybox: the host's (Debian's busybox-static
    of the host's architecture), or the package of another Debian
    architecture through a private apt state (fetch/suites.py)."""
    state: str = ""              # fetch/suites.py apt state; "" = the host's /bin/busybox
    debian_arch: str = ""        # dpkg architecture of the package


@dataclass(frozen=True)
class Arch:
    name: str                    # verify/configs.toml's arch
    kernel_arch: str             # ARCH= of the kernel build
    arch_dir: str                # arch/<dir>/ of the source tree
    image_target: str            # make target of the bootable image
    image_file: str              # its path below arch/<dir>/boot/
    cross_compile: str           # CROSS_COMPILE= ("" for the host's gcc)
    toolchain_package: str       # the Debian package of <cross_compile>gcc
    qemu: str                    # QEMU binary
    qemu_package: str            # the Debian package that has it
    machine: str                 # -machine
    console: str                 # the kernel's console (console=)
    # QEMU arguments of the guest's second channel (the KTAP port the guest
    # init writes): {path} is the host file it is captured to
    ktap_channel: tuple
    busybox: Busybox
    elf_class: int               # EI_CLASS of its objects and binaries: 1 = 32-bit, 2 = 64-bit
    elf_machine: int             # e_machine: 3 = EM_386, 62 = EM_X86_64, 183 = EM_AARCH64
    cpu_tcg: str = "max"
    cpu_kvm: str = "host"
    # console lines its kernels print as a consequence of what the guest
    # tests do on purpose (regexes; boot.run()'s allow): not findings
    console_allow: tuple = ()

    @property
    def compiler(self) -> str:
        """The C compiler of the kernel build (CC's last word)."""
        return f"{self.cross_compile}gcc"

    @property
    def objdump(self) -> str:
        """The objdump that disassembles its objects (verify/objdiff/):
        binutils' own for the host's, the cross toolchain's otherwise."""
        return f"{self.cross_compile}objdump"

    def image_path(self, out) -> Path:
        return Path(out) / "arch" / self.arch_dir / "boot" / self.image_file

    def make_vars(self) -> list:
        """ARCH= and, for a cross build, CROSS_COMPILE= (binutils' prefix)."""
        return [f"ARCH={self.kernel_arch}"] + (
            [f"CROSS_COMPILE={self.cross_compile}"] if self.cross_compile else [])

    def targets(self, targets) -> tuple:
        """A target list with IMAGE replaced by this architecture's image target."""
        return tuple(self.image_target if t == IMAGE else t for t in targets)

    def packages(self, group: str) -> tuple:
        """The Debian packages a scripts/install-deps.sh group needs for it."""
        return {"build": (self.toolchain_package,),
                "boot": (self.qemu_package,)}.get(group, ())


# Two serial ports on the PC machines: ttyS1 is the KTAP channel.
_SECOND_SERIAL = ("-chardev", "file,id=ser1,path={path}", "-serial", "chardev:ser1")

ARCHES = {
    "x86_64": Arch("x86_64", "x86_64", "x86", "bzImage", "bzImage", "", "gcc",
                   "qemu-system-x86_64", "qemu-system-x86", "q35", "ttyS0",
                   _SECOND_SERIAL, Busybox(), 2, 62),
    # 32-bit guest (the slub-i386 configuration); the host's gcc (-m32) and
    # the same QEMU package.  TCG's "max" CPU says AuthenticAMD family 6,
    # which a 32-bit kernel takes for an Athlon that is not SMP-certified (a
    # WARNING at the second CPU's boot): the same CPU with Intel's vendor
    # string.
    "i386": Arch("i386", "i386", "x86", "bzImage", "bzImage", "", "gcc",
                 "qemu-system-i386", "qemu-system-x86", "q35", "ttyS0",
                 _SECOND_SERIAL, Busybox("bookworm-i386", "i386"), 1, 3,
                 cpu_tcg="max,vendor=GenuineIntel"),
    # arm64, cross-compiled with Debian's gcc-aarch64-linux-gnu, booted on
    # QEMU's virt machine: the console on its PL011 UART (ttyAMA0); virt has
    # one UART, so the KTAP channel is a virtio console (hvc0 in the guest,
    # base-arm64.config's VIRTIO_MMIO and VIRTIO_CONSOLE).  "max" has TBI,
    # which KASAN_SW_TAGS's tagged pointers need; pauth-impdef: TCG computes
    # pointer authentication codes with a cheap implementation-defined
    # function instead of QARMA.  No KVM on an x86 host.
    "arm64": Arch("arm64", "arm64", "arm64", "Image", "Image", "aarch64-linux-gnu-",
                  "gcc-aarch64-linux-gnu", "qemu-system-aarch64", "qemu-system-arm",
                  "virt", "ttyAMA0",
                  ("-device", "virtio-serial-device", "-chardev", "file,id=ser1,path={path}",
                   "-device", "virtconsole,chardev=ser1"),
                  Busybox("bookworm-arm64", "arm64"), 2, 183,
                  cpu_tcg="max,pauth-impdef=on", cpu_kvm="max",
                  # The guest's rejected usercopies end their thread in the
                  # BUG() of mm/usercopy.c.  5.10's arm64 enters a BUG's brk
                  # exception as an NMI for RCU (arm64_enter_el1_dbg()) and
                  # die() never leaves it, so when that CPU next goes idle
                  # rcu_eqs_enter()'s WARN_ON_ONCE() finds the NMI nesting
                  # off: once per CPU, on its idle task (PID 0).
                  console_allow=(r"WARNING: CPU: \d+ PID: 0 at kernel/rcu/tree\.c:\d+ ",)),
}


def get(name: str) -> Arch:
    """One architecture; exit 2 naming the known ones otherwise."""
    try:
        return ARCHES[name]
    except KeyError:
        raise SlabconvError(f"unsupported arch {name!r} (supported: {', '.join(ARCHES)})",
                            exit_code=2)


def names() -> tuple:
    return tuple(ARCHES)


def by_elf(elf_class: int, machine: int) -> Arch:
    """The architecture of an ELF object (its EI_CLASS and e_machine);
    x86_64's objdump reads i386's objects too, so the first entry wins."""
    for a in ARCHES.values():
        if (a.elf_class, a.elf_machine) == (elf_class, machine):
            return a
    raise SlabconvError(f"no architecture of base/arches.py has ELF class {elf_class}, "
                        f"machine {machine}", exit_code=2)
