"""The slabconv command line: fetch, regen, verify, residue, boot, reference, bench, all, review."""
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
    import fetch
    if args.list:
        print("\n".join(fetch.offered_versions()))
        return 0
    got = fetch.get_tree(args.version or paths.DEFAULT_KERNEL, deb_version=args.deb_version)
    print(got.path)
    return 0


def do_regen(args):
    from regen import series, worktree
    from .pipeline import series_dir
    from .source import resolve
    src = resolve(args.kernel, args.tree, args.deb_version)
    out = series_dir(src, args.output)
    info("regen", f"Linux {src.version} from {src.source_id}: {src.tree}")
    res = series.regenerate(src.tree, src.source_id, version=src.version, output=out,
                            identity=worktree.user_identity(), until=getattr(args, "until", None))
    for e in res.entries:
        info("regen", f"  {e.seconds:6.2f}s  {e.subject}"
                      f"{'  [usage: ' + '; '.join(e.conversions) + ']' if e.origin == 'usage' else ''}")
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

    p = sub.add_parser("fetch", help="fetch and unpack a packaged kernel source")
    p.add_argument("version", nargs="?")
    p.add_argument("--deb-version", default=None)
    p.add_argument("--list", action="store_true", help="list the versions apt offers")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("regen", help="regenerate the series from the rules")
    _common(p)
    p.add_argument("--output", "-o", help="where to write the series "
                   "(default generated-patches/<version>/ for packaged kernels)")
    p.add_argument("--until", help="stop after this manifest entry id")
    p.add_argument("--json", help="write a JSON summary here")
    p.set_defaults(func=cmd_regen)

    from . import pipeline
    pipeline.add_commands(sub, _common)
    from . import reference
    reference.add_command(sub, _common)

    from report import review
    review.add_command(sub)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return guarded(args.func, args)
