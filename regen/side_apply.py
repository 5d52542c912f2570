"""The process that applies entries ahead of their turn, in a copy of
their files, for the result store (regen/side.py starts it; nothing it
writes is taken but the results of its spatch runs); or, with --scan,
finds the usage pass's and the removal check's candidate files in the
tree regen starts from, and fills their per-file result caches."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import field_users, manifest, spatch, usage
from .series import apply_entry
from .worktree import WorkTree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m regen.side_apply",
                                 description="apply entries in a copy of their files, for the "
                                             "result store (regen/side.py); a regen run starts it")
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("--dir", type=Path, required=True, help="holds linux/ and settled.json")
    ap.add_argument("--store", type=Path, help="the run's own result store")
    ap.add_argument("--scan", type=Path, metavar="TREE",
                    help="write the candidates of TREE to scan.json instead")
    ap.add_argument("ids", nargs="*")
    args = ap.parse_args(argv)
    spatch.STORE = args.store
    series = manifest.load(args.manifest)
    if args.scan:
        return scan(series, args.scan, args.dir)
    wt = WorkTree(args.dir / "linux", None, "")
    wt.settled = json.loads((args.dir / "settled.json").read_text())
    by_id = {e.id: e for e in series.entries}
    for i in args.ids:
        apply_entry(series, by_id[i], wt)     # a failure is the work tree's to report
    return 0


def scan(series: manifest.Series, tree: Path, out: Path) -> int:
    found = {"usage": usage.candidates(tree), "field_users": field_users.scan(tree)}
    (out / "scan.tmp").write_text(json.dumps(found))
    (out / "scan.tmp").replace(out / "scan.json")
    # what the entries leave as it is, reported now for the caches
    written = {f for e in series.entries for f in e.files}
    usage.find(tree, [f for f in found["usage"] if f not in written])
    field_users.find(tree, [f for f in found["field_users"] if f not in written], cached=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
