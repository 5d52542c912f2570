"""scripts/bloat-o-meter of the kernel tree, run on two objects or images
and its output parsed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from base.log import SlabconvError


@dataclass
class Bloat:
    add: int = 0
    remove: int = 0
    grow: int = 0
    shrink: int = 0
    up: int = 0
    down: int = 0             # negative, as printed
    net: int = 0
    category: str = ""        # "Function", "Data", "RO Data"
    rows: list = field(default_factory=list)     # (name, old, new, delta); old/new None for "-"
    before_total: Optional[int] = None
    after_total: Optional[int] = None

    def to_dict(self) -> dict:
        return {"add": self.add, "remove": self.remove, "grow": self.grow,
                "shrink": self.shrink, "up": self.up, "down": self.down, "net": self.net,
                "category": self.category, "before_total": self.before_total,
                "after_total": self.after_total,
                "rows": [{"name": n, "old": o, "new": w, "delta": d}
                         for n, o, w, d in self.rows]}

    def text(self) -> str:
        """The summary line as bloat-o-meter prints it."""
        return (f"add/remove: {self.add}/{self.remove} grow/shrink: {self.grow}/{self.shrink} "
                f"up/down: {self.up}/{self.down} ({self.net})")


_BLOAT_SUMMARY = re.compile(r"^add/remove: (\d+)/(\d+) grow/shrink: (\d+)/(\d+) "
                            r"up/down: \+?(-?\d+)/(-?\d+) \(([-+]?\d+)\)\s*$")
_BLOAT_TOTAL = re.compile(r"^Total: Before=(\d+), After=(\d+), chg ")


def parse_bloat(text: str) -> list:
    """bloat-o-meter's output -> [Bloat], one per summary line (-c prints three)."""
    out, cur, header = [], None, False
    for line in text.splitlines():
        m = _BLOAT_SUMMARY.match(line)
        if m:
            a, r, g, s, up, down, net = (int(x) for x in m.groups())
            cur = Bloat(a, r, g, s, up, down, net)
            out.append(cur)
            header = True
            continue
        if cur is None:
            continue
        if header:
            parts = line.split()
            if parts[-3:] == ["old", "new", "delta"]:
                cur.category = " ".join(parts[:-3])
            header = False
            continue
        m = _BLOAT_TOTAL.match(line)
        if m:
            cur.before_total, cur.after_total = int(m.group(1)), int(m.group(2))
            continue
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"[-+]?\d+", parts[-1]):
            def num(x):
                return None if x == "-" else int(x)
            try:
                cur.rows.append((" ".join(parts[:-3]), num(parts[-3]), num(parts[-2]),
                                 int(parts[-1])))
            except ValueError:
                pass
    return out


def bloat(before, after, kernel_src, option: Optional[str] = None) -> Bloat:
    """Run the kernel tree's own scripts/bloat-o-meter on two objects or
    vmlinux images (it reads their sizes with `nm --size-sort`); option
    "-t" (functions only) or "-d" (data only), default all symbols."""
    script = Path(kernel_src) / "scripts" / "bloat-o-meter"
    if not script.is_file():
        raise SlabconvError(f"{script} not found (not a kernel tree?)", exit_code=2)
    if shutil.which("nm") is None:
        raise SlabconvError("nm not found (Debian package binutils)", exit_code=3)
    if option not in (None, "-t", "-d"):
        raise SlabconvError(f"bloat: option {option!r} (None, '-t' or '-d')", exit_code=2)
    for p in (before, after):
        if not Path(p).is_file():
            raise SlabconvError(f"bloat: {p} does not exist", exit_code=2)
    with tempfile.TemporaryDirectory(prefix="bloat-") as td:
        # the script hands the path to a shell unquoted: give it plain names
        a, b = Path(td) / "before", Path(td) / "after"
        os.symlink(Path(before).resolve(), a)
        os.symlink(Path(after).resolve(), b)
        cp = subprocess.run([sys.executable, str(script)] + ([option] if option else [])
                            + [str(a), str(b)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "LC_ALL": "C"})
    res = parse_bloat(cp.stdout)
    if cp.returncode != 0 or not res:
        raise SlabconvError(f"bloat-o-meter failed (exit {cp.returncode}): "
                            f"{(cp.stderr or cp.stdout).strip()[:400]}", exit_code=1)
    return res[0]
