"""python3 -m verify --baseline DIR --patched DIR [--config slub]
                     [--sparse-files mm/slub.c,mm/usercopy.c] [--json FILE]

Builds both trees with the same configuration and fails (exit 1) when the
patched tree does not build or has compiler or sparse warnings the baseline
does not have.  The summary goes to stdout, progress to stderr.
"""
import argparse
import sys
from pathlib import Path

from base.cliutil import comma_list, write_json
from base.log import guarded
from base.paths import cache_dir
from . import check_build, kbuild, kconfig


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify", description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, type=Path, help="baseline kernel source tree")
    ap.add_argument("--patched", required=True, type=Path, help="patched kernel source tree")
    ap.add_argument("--config", default="slub", choices=kconfig.config_names(),
                    help="named configuration (default: slub)")
    ap.add_argument("--sparse-files", default="",
                    help="comma-separated .c files to check with sparse (e.g. mm/slub.c)")
    ap.add_argument("--json", type=Path, help="also write the JSON report here")
    ap.add_argument("--out-root", type=Path,
                    help="where builds go (default: the cache's build/verify/)")
    ap.add_argument("--baseline-id", help="identity of the baseline tree (e.g. its commit); "
                    "default: git HEAD or a digest of file sizes and times")
    ap.add_argument("--targets", default=",".join(kbuild.DEFAULT_TARGETS),
                    help="comma-separated make targets (default: %(default)s); single "
                         "objects such as mm/slub.o make a quick check")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--fresh", action="store_true",
                    help="build the patched tree in a fresh O= dir instead of a copy "
                         "of the baseline's")
    args = ap.parse_args(argv)
    files = comma_list(args.sparse_files)
    def check_and_report() -> int:
        r = check_build(args.baseline, args.patched,
                        args.out_root or cache_dir("build", "verify"),
                        config=args.config, sparse_files=files, baseline_id=args.baseline_id,
                        jobs=args.jobs, incremental=not args.fresh,
                        targets=comma_list(args.targets))
        write_json(args.json, r.to_dict())
        print(r.summary)
        return 0 if r.ok else 1
    return guarded(check_and_report)


if __name__ == "__main__":
    sys.exit(main())
