"""python3 -m verify.objdiff BEFORE AFTER: compare the code of two builds
of an object (see the package's header)."""
import argparse
import json
import sys
from pathlib import Path

from base.log import guarded
from .bloat import bloat
from .code import function_code
from .compare import compare


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m verify.objdiff",
        description="Compare the code of two builds of an object function by function; "
                    "exit 1 when a function changed, was added or removed.")
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="a function the patch renamed (repeatable)")
    ap.add_argument("--diff", action="store_true", help="show a diff excerpt per function")
    ap.add_argument("--dump", action="store_true",
                    help="print the normalised code of AFTER (BEFORE is not read: give -)")
    ap.add_argument("--bloat", type=Path, metavar="KERNEL_SRC",
                    help="also run KERNEL_SRC/scripts/bloat-o-meter")
    ap.add_argument("--json", action="store_true", help="JSON on stdout")
    args = ap.parse_args(argv)

    def go() -> int:
        if args.dump:
            for name, fc in sorted(function_code(args.after).items()):
                print(f"== {name} ({fc.size} bytes, {fc.digest})\n{fc.text}")
            return 0
        renames = dict(r.split("=", 1) for r in args.rename)
        d = compare(args.before, args.after, renames, label=str(args.after))
        b = bloat(args.before, args.after, args.bloat) if args.bloat else None
        if args.json:
            out = d.to_dict()
            if b:
                out["bloat"] = b.to_dict()
            print(json.dumps(out, indent=1))
        else:
            print(d.text(excerpts=args.diff))
            if b:
                print("bloat-o-meter: " + b.text())
        return 0 if d.equal else 1
    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
