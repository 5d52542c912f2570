"""python3 -m fetch VERSION [--deb-version V] | [VERSION] --list"""
from __future__ import annotations

import argparse
import sys

from base.log import guarded, info, SlabconvError, Timer
from . import deb_versions, get_tree, offered_versions, suites


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m fetch",
        description="Fetch the Debian linux-source package of a kernel version and "
                    "unpack it into a pristine, read-only tree in the slabconv cache. "
                    "Prints the tree path on stdout.")
    ap.add_argument("version", nargs="?", help="kernel version, e.g. 5.10, 6.1, 6.12")
    ap.add_argument("--deb-version", metavar="V",
                    help="exact Debian package version (default: apt's candidate)")
    ap.add_argument("--list", action="store_true",
                    help="list what apt offers: without VERSION one line per kernel "
                         "version ('VERSION CANDIDATE SUITE'); with VERSION its Debian "
                         "versions, newest first, the candidate marked")
    args = ap.parse_args(argv)
    def fetch_and_print() -> int:
        if args.list:
            if args.version:
                cand, versions = deb_versions(args.version)
                for v in versions:
                    print(f"{v} candidate" if v == cand else v)
            else:
                for v in offered_versions():
                    suite = suites.VERSIONS.get(v, suites.SYSTEM)
                    try:
                        cand, _ = deb_versions(v)
                    except SlabconvError:
                        cand = None
                    print(f"{v} {cand or '-'} {suite}")
            return 0
        if not args.version:
            ap.error("VERSION is required (or use --list)")
        with Timer() as t:
            tree = get_tree(args.version, deb_version=args.deb_version)
        info("fetch", f"{tree.version} {tree.deb_version} ready in {t.elapsed:.1f}s")
        print(tree.path)
        return 0
    return guarded(fetch_and_print)


if __name__ == "__main__":
    sys.exit(main())
