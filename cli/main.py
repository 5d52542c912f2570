"""The slabconv command line: fetch, regen, verify, residue, boot, reference, bench, all,
review, mail, range-diff, attribute."""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import time
from pathlib import Path

import fetch
from base import paths
from base.cliutil import add_command, EXIT_CODES
from base.log import guarded, info, SlabconvError, Timer
from cli import bench
from fetch import discover
from regen import series
from report import attribution, mail, rangediff, review
from . import pipeline, prefetch, reference
from .apply import do_regen


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", "-k", default=None,
                   help=f"packaged kernel version, or 'latest' (default "
                        f"{paths.DEFAULT_KERNEL}; `slabconv versions` lists them)")
    p.add_argument("--tree", default=None,
                   help="use this kernel tree (never modified) instead of the packaged one")
    p.add_argument("--deb-version", default=None,
                   help="package version to fetch (default: the one the committed series "
                        "was generated from; 'latest' for apt's candidate)")


def cmd_fetch(args) -> int:
    """Everything a run needs (cli/prefetch.py): prints the tree's path."""
    if args.list:
        print("\n".join(fetch.offered_versions()))
        return 0
    if args.version and args.kernel and args.version != args.kernel:
        raise SlabconvError(f"fetch: two kernels given, {args.version} and --kernel "
                            f"{args.kernel}: give one", 2)
    print(prefetch.everything(args.version or args.kernel, args.tree, args.deb_version).tree)
    return 0


def cmd_versions(args) -> int:
    """What Debian's suites offer (fetch/discover.py)."""
    with Timer() as t:
        cat = discover.catalog(refresh=args.refresh)
    lines = fetch.table(cat)
    if not lines:
        raise SlabconvError("no suite of the mirrors offers a linux-source-X.Y package "
                            f"({discover.discovery_suite().describe()})", 4)
    print("\n".join(lines))
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cat.time))
    info("fetch", f"{len(cat.versions())} kernel versions in {len(cat.suites)} suites, "
                  f"discovered {when}; * the suite --kernel X.Y takes; not on the mirror: "
                  f"{', '.join(cat.absent) or 'none'} ({t.elapsed:.1f}s)")
    return 0


def cmd_regen(args) -> int:
    _, res = do_regen(args)
    if args.json:
        Path(args.json).write_text(series.summary_json(res))
    return 0


def version() -> str:
    """`git describe` of the checkout, and a digest of every file under cocci/
    (the rules, templates and manifest): two runs with the same line ran the
    same rules."""
    try:
        described = subprocess.run(
            ["git", "-C", str(paths.REPO), "describe", "--always", "--dirty", "--tags"],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        described = "unknown (not a git checkout)"
    h = hashlib.sha256()
    for f in sorted(paths.COCCI.rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(paths.COCCI)).encode() + b"\0" + f.read_bytes() + b"\0")
    return f"slabconv {described} (cocci/ {h.hexdigest()[:12]})"


class _Version(argparse.Action):
    """--version, computed only when asked for."""
    def __call__(self, parser, namespace, values, option_string=None):
        print(version())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="slabconv", description=__doc__,
                                 epilog=f"example:\n  slabconv verify --kernel 5.10\n\n"
                                        f"{EXIT_CODES}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_Version, nargs=0,
                    help="print git describe of the checkout and a digest of cocci/, then exit")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = add_command(sub, "fetch", "fetch everything a run needs: the kernel source "
                    "(unpacked into the cache) and the i386 guest's busybox",
                    "Fetch everything a run needs into the cache (cli/prefetch.py): the kernel\n"
                    "source linux-source-<version>, unpacked read-only, and the i386 guest's\n"
                    "busybox; prints the tree's path.  Every other command fetches what it\n"
                    "needs at its start too, then uses no network.",
                    "slabconv fetch 5.10")
    p.add_argument("version", nargs="?",
                   help=f"kernel version or 'latest' (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--kernel", "-k", dest="kernel", default=None,
                   help="the same as VERSION, as the other commands take it")
    p.add_argument("--tree", default=None, help="your kernel tree: only the other downloads")
    p.add_argument("--deb-version", default=None,
                   help="package version (default: the one the committed series was "
                        "generated from, as every command; 'latest' for apt's candidate)")
    p.add_argument("--list", action="store_true", help="list the versions apt offers")
    p.set_defaults(func=cmd_fetch)

    p = add_command(sub, "versions", "list the kernel versions Debian's suites offer",
                    "List the linux-source-X.Y packages of Debian's suites (oldoldstable to\n"
                    "unstable, with backports and security) on the machine's mirrors: one line\n"
                    "per version and suite, 'VERSION SUITE (CODENAME) PACKAGE-VERSION', the\n"
                    "suite --kernel X.Y takes marked *.  Discovery is cached for a day.",
                    "slabconv versions")
    p.add_argument("--refresh", action="store_true",
                   help="discover again even if the cached discovery is less than a day old")
    p.set_defaults(func=cmd_versions)

    p = add_command(sub, "regen", "regenerate the series from the rules",
                    "Regenerate the series from the rules (cocci/series.toml): one commit per\n"
                    "manifest entry in a work tree of its own, written with git format-patch\n"
                    "into generated-patches/<version>/ for a packaged kernel whose series is\n"
                    "committed, else into the cache.",
                    'slabconv regen --kernel 5.10 --subject-prefix "RFC PATCH 5.10"')
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

    pipeline.add_commands(sub, _common, bench.cmd_bench)
    reference.add_command(sub, _common)

    review.add_command(sub)
    mail.add_command(sub)
    rangediff.add_command(sub)
    attribution.add_command(sub)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return guarded(args.func, args)
