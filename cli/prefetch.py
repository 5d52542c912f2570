"""Every download of a run, at its start.

A run downloads two kinds of things, both through apt with the retries of
fetch/net.py, both cached and checked against the SHA256 of apt's signed
index:

  * the kernel source, linux-source-<version> (fetch.get_tree; not with
    TREE=): cache/apt/<state>/debs/ and the read-only tree cache/src/;
  * the busybox of each foreign guest architecture among the
    configurations the run boots (boot.busybox.for_arch: i386 for
    slub-i386, busybox-static:i386 from bookworm main; arm64 for the arm64
    configurations, busybox-static:arm64 from the machine's own apt sites
    for bookworm main): cache/apt/bookworm-<arch>/debs/ and
    cache/boot/busybox-<arch>/.

Everything else a guest or a check uses is on the machine already (the
host's busybox for x86_64 guests, QEMU, the compilers: scripts/install-deps.sh).

inputs() fetches what one command needs, then forbids the network for the
rest of the process (fetch.net.forbid): a run that has started building
never goes to the network, and a download that fails stops the run before
its first build.  `make fetch` (everything()) gets all of it for every
guest of the boot matrix.
"""
from __future__ import annotations

from base.log import info, SlabconvError
from boot import busybox
from fetch import net
from regen import source
from verify import kconfig


STARTED = ("the run has started building (everything it needs is fetched at its start: "
           "cli/prefetch.py)")


def guest_arches(configs) -> list[str]:
    """The guest architectures of the configurations (unknown names are
    left to the command to report)."""
    arches = set()
    for c in configs or ():
        try:
            arches.add(kconfig.config_arch(c))
        except SlabconvError:
            pass
    return sorted(arches)


def busyboxes(arches) -> None:
    for arch in arches:
        busybox.for_arch(arch)


def inputs(version: str | None, tree: str | None, deb_version: str | None,
           boot_configs=()) -> source.Source:
    """The run's kernel source and the busybox of every guest it boots; then
    no network for the rest of the process."""
    src = source.resolve(version, tree, deb_version)
    busyboxes(guest_arches(boot_configs))
    net.forbid(STARTED)
    return src


def everything(version: str | None, tree: str | None = None,
               deb_version: str | None = None) -> source.Source:
    """`make fetch`: the kernel source (the version the committed series
    pins, as every command takes it) and the busybox of every guest
    architecture of the boot matrix."""
    src = source.resolve(version, tree, deb_version)
    busyboxes(["x86_64", *busybox.FOREIGN])
    info("fetch", f"everything a run needs is in the cache: {src.source_id}"
                  f"{'' if src.packaged else ' (your tree)'}, busybox for x86_64 and "
                  f"{', '.join(busybox.FOREIGN)}")
    return src
