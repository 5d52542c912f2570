"""Small helpers the command lines share (./slabconv / verify / verify.bisect)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def comma_list(text: str | None) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c'] (None or '' -> [])."""
    return [s for s in (x.strip() for x in (text or "").split(",")) if s]


def write_json(path: Path | None, data, indent: int = 1) -> None:
    """Write `data` as JSON to `path` (its directory created); nothing when path is None."""
    if path is None:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n")


EXIT_CODES = ("exit codes: 0 success; 1 a check failed (rule, build, boot); 2 bad usage or "
              "input;\n  3 missing tool or package; 4 fetch or network failure")


def add_command(sub, name: str, help: str, description: str, example: str):
    """A subcommand's parser whose --help gives what it does, an example and
    the exit codes (docs/ARCHITECTURE.md, "Exit codes")."""
    return sub.add_parser(name, help=help, description=description,
                          epilog=f"example:\n  {example}\n\n{EXIT_CODES}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
