"""python3 -m boot --image bzImage --build-dir O --src SRC --out DIR

Boots the kernel with the slabconv guest tests and prints a one-screen
summary.  Exit 0 when every test passed and the console is clean, 1 when
anything failed, 2 on bad usage, 3 when a tool is missing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from base import arches
from base.log import guarded
from . import DEFAULT_SLUB_DEBUG, run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m boot", description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", required=True, type=Path, help="kernel image (bzImage)")
    ap.add_argument("--build-dir", required=True, type=Path,
                    help="the kernel's O= build directory (modules_prepare done)")
    ap.add_argument("--src", required=True, type=Path, help="kernel source tree")
    ap.add_argument("--out", required=True, type=Path, help="run directory for logs")
    ap.add_argument("--arch", default="x86_64", choices=arches.names(),
                    help="guest architecture (default x86_64; its QEMU, console and busybox: "
                         "base/arches.py)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds (default 120)")
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--slub-debug", default=DEFAULT_SLUB_DEBUG,
                    help=f"slub_debug= flags (default {DEFAULT_SLUB_DEBUG}; '' for none)")
    ap.add_argument("--accel", choices=("tcg", "kvm", "auto"), default=None,
                    help="default tcg ($SLABCONV_BOOT_ACCEL); kvm/auto probe KVM first")
    ap.add_argument("--init", type=Path, default=None,
                    help="replacement guest init script (debugging)")
    ap.add_argument("--no-module", action="store_true", help="boot without the test module")
    ap.add_argument("--iommu", choices=("intel", "intel-strict", "amd"), default=None,
                    help="attach an IOMMU and a virtio disk behind it (boot/iommu.py): "
                         "intel (lazy), intel-strict, amd")
    args = ap.parse_args(argv)
    def boot_and_report() -> int:
        r = run(args.image, args.build_dir, args.src, args.out, arch=args.arch,
                timeout=args.timeout, cmdline_extra=args.append,
                slub_debug=args.slub_debug or None, accel=args.accel,
                init_script=args.init, with_module=not args.no_module, iommu=args.iommu)
        print(r.summary())
        return 0 if r.passed else 1
    return guarded(boot_and_report)


if __name__ == "__main__":
    sys.exit(main())
