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


def do_regen(args, src=None):
    import os
    from regen import series, worktree
    from regen.spatch import spatch_version
    from .pipeline import series_dir
    from .source import committed_identity, resolve
    if src is None:
        src = resolve(args.kernel, args.tree, args.deb_version)
    out = series_dir(src, args.output)
    # the committed series keeps its identity unless $SLABCONV_IDENTITY says otherwise
    kept = None if os.environ.get("SLABCONV_IDENTITY") else committed_identity(out)
    identity = worktree.parse_identity(kept) if kept else worktree.user_identity()
    info("regen", f"Linux {src.version} from {src.source_id}: {src.tree}")
    prefix = getattr(args, "subject_prefix", None) or f"PATCH {src.version}"
    if getattr(args, "reroll_count", None):
        prefix += f" v{args.reroll_count}"
    res = series.regenerate(src.tree, src.source_id, version=src.version, output=out,
                            identity=identity, until=getattr(args, "until", None),
                            subject_prefix=prefix)
    for e in res.entries:
        info("regen", f"  {e.seconds:6.2f}s  {e.subject}"
                      f"{'  [usage: ' + '; '.join(e.conversions) + ']' if e.origin == 'usage' else ''}"
                      f"{'  [callers elsewhere: ' + '; '.join(e.callers) + ']' if e.callers else ''}")
    for _, subject, reason in res.skipped:
        info("regen", f"  skipped  {subject}: {' '.join(reason.split())}")
    if res.converted_at:
        n = {s: sum(1 for v in res.verdicts if v[2] == s) for s in ("upstream", "not applicable")}
        info("regen", f"this kernel has struct slab already ({res.converted_at}): "
                      f"{len(res.entries)} entries applied, {n['upstream']} already present "
                      f"upstream, {n['not applicable']} not applicable (per entry: "
                      f"{out / 'ENTRIES'})")
    info("regen", f"{len(res.entries)} patches, {len(res.skipped)} steps skipped, "
                  f"in {res.seconds:.1f}s -> {out}")
    from report import reproduce        # the review's byte-for-byte line reads this record
    reproduce.record_regen(src.version, out, src.source_id, spatch_version(), res.seconds)
    return src, res


def cmd_regen(args) -> int:
    from regen import series
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
    pipeline.add_commands(sub, _common)
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
