"""Small helpers the command lines share (./slabconv / verify / verify.bisect)."""
from __future__ import annotations

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
