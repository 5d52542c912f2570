"""The slabconv command line: fetch, regen, verify, residue, boot, reference, bench, all,
review, mail, range-diff, attribute."""
from __future__ import annotations

import argparse
from pathlib import Path

from . import paths
from .log import guarded, info


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", "-k", default=None,
                   help=f"packaged kernel version (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--tree", default=None,
                   help="use this kernel tree (never modified) instead of the packaged one")
    p.add_argument("--deb-version", default=None,
                   help="package version to fetch (default: the one the committed series "
                        "was generated from; 'latest' for apt's candidate)")


def cmd_fetch(args) -> int:
    """Everything a run needs (slabconv/prefetch.py): prints the tree's path."""
    import fetch
    from . import prefetch
    if args.list:
        print("\n".join(fetch.offered_versions()))
        return 0
    print(prefetch.everything(args.version, args.tree, args.deb_version).tree)
    return 0


def cmd_regen(args) -> int:
    from regen import series
    from .pipeline import do_regen
    _, res = do_regen(args)
    if args.json:
        Path(args.json).write_text(series.summary_json(res))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="slabconv", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("fetch", help="fetch everything a run needs: the kernel source "
                       "(unpacked into the cache) and the i386 guest's busybox")
    p.add_argument("version", nargs="?", help=f"kernel version (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--tree", default=None, help="your kernel tree: only the other downloads")
    p.add_argument("--deb-version", default=None,
                   help="package version (default: the one the committed series was "
                        "generated from, as every command; 'latest' for apt's candidate)")
    p.add_argument("--list", action="store_true", help="list the versions apt offers")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("regen", help="regenerate the series from the rules")
    _common(p)
    p.add_argument("--output", "-o", help="where to write the series "
                   "(default generated-patches/<version>/ for packaged kernels)")
    p.add_argument("--until", help="stop after this manifest entry id")
    p.add_argument("--subject-prefix", default=None,
                   help="the subjects' prefix (default 'PATCH <version>'; e.g. 'RFC PATCH 5.10')")
    p.add_argument("--reroll-count", "-v", type=int, default=None,
                   help="the series' version: adds ' vN' to the subject prefix")
    p.add_argument("--json", help="write a JSON summary here")
    p.set_defaults(func=cmd_regen)

    from . import pipeline
    from report import bench
    pipeline.add_commands(sub, _common, bench.cmd_bench)
    from . import reference
    reference.add_command(sub, _common)

    from report import attribution, mail, rangediff, review
    review.add_command(sub)
    mail.add_command(sub)
    rangediff.add_command(sub)
    attribution.add_command(sub)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return guarded(args.func, args)
