"""The IOMMU guest: QEMU devices, disk image and kernel parameters.

``boot.run(..., iommu="intel-strict")`` boots the guest with

* ``-device intel-iommu,intremap=off`` first among the devices (QEMU wants
  the IOMMU created before the PCI devices it translates for; interrupt
  remapping is off: the series does not touch it, and under TCG it only
  adds a second way for the guest to go wrong);
* a modern virtio-blk PCI disk that uses the DMA API
  (``iommu_platform=on,disable-legacy=on``: without VIRTIO_F_ACCESS_PLATFORM
  virtio bypasses the IOMMU), backed by a read-only raw image of
  ``DISK_MIB`` MiB of a fixed pseudo-random pattern made in the cache;
* ``intel_iommu=on`` (lazy: the driver's flush queue, the default) or
  ``intel_iommu=on,strict`` (IOTLB flushed and page-table pages freed at
  every unmap), and ``slabconv.iommu=intel slabconv.iommu_disk=<sha256>``
  for the guest's test 9 (boot/guest/init.sh).

``amd`` attaches ``-device amd-iommu`` instead (``amd_iommu=`` defaults,
``amd_iommu_dump``) and ``slabconv.iommu=amd``: QEMU 7.2 drives 5.10's
AMD-Vi under TCG; the guest module runs its AMD cases (an unmanaged
domain: the tables a 2 MiB page replaces and a freed domain's tables must
come back; boot/README.md, "AMD IOMMU").
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from base import atomic, paths
from base.log import SlabconvError


DISK_MIB = 16
DISK_ID = "slabconv-disk"
_PATTERN_SEED = b"slabconv-iommu-disk-v1"


@dataclass(frozen=True)
class Kind:
    name: str
    vendor: str         # what slabconv.iommu= tells the guest
    device: str         # the QEMU IOMMU device
    cmdline: str        # kernel parameters


KINDS = {
    "intel": Kind("intel", "intel", "intel-iommu,intremap=off", "intel_iommu=on"),
    "intel-strict": Kind("intel-strict", "intel", "intel-iommu,intremap=off",
                         "intel_iommu=on,strict"),
    "amd": Kind("amd", "amd", "amd-iommu", "amd_iommu_dump"),
}


def kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise SlabconvError(f"boot: unknown IOMMU {name!r} (known: {', '.join(KINDS)})",
                            exit_code=2)


def pattern(size: int) -> bytes:
    """size bytes of a reproducible pattern (sha256 of a counter): every
    4 KiB block differs, so a block read from the wrong place shows."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += hashlib.sha256(_PATTERN_SEED + i.to_bytes(8, "little")).digest()
        i += 1
    return bytes(out[:size])


def disk_image(mib: int = DISK_MIB) -> tuple[Path, str]:
    """The disk image in the cache (made once) and its sha256."""
    d = paths.cache_dir("boot", "iommu")
    img = d / f"disk-{mib}M-{hashlib.sha256(_PATTERN_SEED).hexdigest()[:8]}.img"
    sha = d / (img.name + ".sha256")
    if not (img.is_file() and sha.is_file()):
        data = pattern(mib << 20)
        atomic.write_bytes(img, data)
        atomic.write_text(sha, hashlib.sha256(data).hexdigest() + "\n")
    return img, sha.read_text().strip()


def _arg(s: str) -> str:
    return s.replace(",", ",,")


def qemu_args(k: Kind, image: Path) -> list[str]:
    """IOMMU first, then the disk behind it."""
    return ["-device", k.device,
            "-drive", f"file={_arg(str(image))},if=none,id={DISK_ID},format=raw,readonly=on",
            "-device", f"virtio-blk-pci,drive={DISK_ID},iommu_platform=on,disable-legacy=on"]


def setup(name: str) -> tuple[list[str], str]:
    """(QEMU arguments, kernel parameters) for an IOMMU guest of kind name."""
    k = kind(name)
    image, digest = disk_image()
    params = f"{k.cmdline} slabconv.iommu={k.vendor} slabconv.iommu_disk={digest}"
    return qemu_args(k, image), params
