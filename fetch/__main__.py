"""python3 -m fetch VERSION [--deb-version V] | [VERSION] --list"""
from __future__ import annotations

import argparse
import sys

from base.log import guarded, info, Timer
from . import deb_versions, discover, get_tree, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m fetch",
        description="Fetch the Debian linux-source package of a kernel version and "
                    "unpack it into a pristine, read-only tree in the slabconv cache. "
                    "Prints the tree path on stdout.")
    ap.add_argument("version", nargs="?", help="kernel version, e.g. 5.10, or latest")
    ap.add_argument("--deb-version", metavar="V",
                    help="exact Debian package version (default: apt's candidate)")
    ap.add_argument("--list", action="store_true",
                    help="list what apt offers: without VERSION one line per kernel "
                         "version and suite ('VERSION SUITE (CODENAME) PACKAGE-VERSION', "
                         "the suite it is taken from marked *); with VERSION its Debian "
                         "versions, newest first, the candidate marked")
    args = ap.parse_args(argv)
    def fetch_and_print() -> int:
        if args.list:
            if args.version:
                cand, versions = deb_versions(args.version)
                for v in versions:
                    print(f"{v} candidate" if v == cand else v)
            else:
                for line in table(discover.catalog()):
                    print(line)
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
