"""Whitespace-only churn: the -/+ line pairs of each patch that differ only in whitespace.

    from verify import whitespace
    r = whitespace.check(patches)          # [Path] of git format-patch files
    r.ok, r.pairs, r.justified, r.findings, r.summary(), r.to_dict()

A generated patch should change what its rules change.  A line whose only
change is whitespace is churn for a reviewer, unless the conversion moved
what it was laid out against: a continuation line that was aligned with
the parenthesis it continues (checkpatch --strict's PARENTHESIS_ALIGNMENT),
where a rename on the opening line moved that parenthesis to another
column, is aligned with it again, and that pair is justified.  Any other
whitespace-only pair is a finding, named by patch, hunk line and text.

Each hunk is read on its own, as many lines as its header counts: its old
side (context and '-' lines) and its new side (context and '+' lines).  A '-' line and a '+' line of the same
run of changes pair when they are equal without their whitespace (in
order).  The parenthesis a line continues is found by reading back through
its side of the hunk to the innermost one left open; one opened above the
hunk lies on an unchanged line, so it did not move.  This module reads the
patch text only and shares no code with regen's layout pass
(regen/tidy.py), which it checks.

Command line: `python3 -m verify.whitespace PATCH... [--json FILE]`: exit
0, 1 on a finding, 2 for a file that is not a patch.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from base.log import SlabconvError

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Finding:
    patch: str
    line: int           # the '+' line's number in the patched file
    file: str
    old: str
    new: str

    def __str__(self) -> str:
        return (f"{self.patch}: {self.file}:{self.line}: only its whitespace changed, and no "
                f"moved parenthesis justifies it: {self.new.strip()!r}")


@dataclass
class WhitespaceResult:
    patches: int = 0
    pairs: int = 0              # whitespace-only pairs seen
    justified: int = 0          # of them, realigned with a parenthesis that moved
    findings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def problems(self) -> list:
        return [str(f) for f in self.findings]

    def summary(self) -> str:
        head = (f"whitespace: {'OK' if self.ok else 'FAIL'}: {self.pairs} whitespace-only line "
                f"pair(s) in {self.patches} patches, {self.justified} realigned with a moved "
                f"parenthesis, {len(self.findings)} not justified")
        return "\n".join([head] + [f"  {p}" for p in self.problems])

    def to_dict(self) -> dict:
        return {"ok": self.ok, "patches": self.patches, "pairs": self.pairs,
                "justified": self.justified, "findings": [vars(f) for f in self.findings]}


def _code(line: str):
    """(display column, character) of the code characters of a C line:
    not in a string or character literal or a comment; tabs to 8."""
    col, i, quote = 0, 0, ""
    while i < len(line):
        c = line[i]
        n = 1
        if quote:
            if c == "\\":
                n = 2
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return
        elif line.startswith("/*", i):
            end = line.find("*/", i + 2)
            if end < 0:
                return
            n = end + 2 - i
        else:
            yield col, c
        for ch in line[i:i + n]:
            col = col + 8 - col % 8 if ch == "\t" else col + 1
        i += n


def paren_column(side: list[str], i: int) -> int | None:
    """The display column just after the innermost parenthesis that the
    lines of `side` before line i leave open, or None (line i starts a
    statement, or the parenthesis is above the hunk)."""
    depth = 0
    for k in range(i - 1, -1, -1):
        chars = list(_code(side[k]))
        for col, c in reversed(chars):
            if c == ")":
                depth += 1
            elif c == "(":
                if depth == 0:
                    return col + 1
                depth -= 1
            elif depth == 0 and c in ";{}":
                return None
    return None


def _lead(line: str) -> int:
    return len(line[:len(line) - len(line.lstrip(" \t"))].expandtabs(8))


def _squash(line: str) -> str:
    return re.sub(r"\s+", "", line)


def hunk_findings(name: str, path: str, start: int, body: list[str]) -> tuple[int, int, list]:
    """(pairs, justified, findings) of one hunk: `body` its lines with
    their ' ', '-' or '+' mark, `start` the new side's first line number."""
    old: list[str] = []
    new: list[str] = []
    pairs = justified = 0
    found: list[Finding] = []
    k = 0
    while k < len(body):
        if body[k][:1] not in "-+":
            old.append(body[k][1:])
            new.append(body[k][1:])
            k += 1
            continue
        minus, plus = [], []
        while k < len(body) and body[k][:1] == "-":
            old.append(body[k][1:])
            minus.append(len(old) - 1)
            k += 1
        while k < len(body) and body[k][:1] == "+":
            new.append(body[k][1:])
            plus.append(len(new) - 1)
            k += 1
        free = list(plus)
        left = []                       # '-' lines no '+' line equals without whitespace
        paired: set[int] = set()
        for i in minus:
            key = _squash(old[i])
            if not key:
                continue
            j = next((j for j in free if _squash(new[j]) == key), None)
            if j is None:
                left.append(i)
                continue
            free = free[free.index(j) + 1:]
            paired.add(j)
            pairs += 1
            was, now = paren_column(old, i), paren_column(new, j)
            if (old[i].lstrip(" \t") == new[j].lstrip(" \t") and was is not None
                    and now is not None and was != now and _lead(old[i]) == was
                    and _lead(new[j]) == now):
                justified += 1
            else:
                found.append(Finding(name, start + j, path, old[i], new[j]))
        unpaired = [j for j in plus if j not in paired and _squash(new[j])]
        for ms, ps in _rewraps(old, left, new, unpaired):
            pairs += 1
            if _refill_justified(old, ms, new, ps):
                justified += 1
            else:
                found.append(Finding(name, start + ps[0], path, "\n".join(old[i] for i in ms),
                                     "\n".join(new[j] for j in ps)))
    return pairs, justified, found


def _rewraps(old: list[str], minus: list[int], new: list[str], plus: list[int]):
    """The runs of consecutive '-' lines and of consecutive '+' lines, one of
    them longer than a line, that hold the same text but for whitespace:
    the same code broken at other places (a rewrap)."""
    out = []
    used: set[int] = set()
    for a in range(len(minus)):
        if minus[a] in used:
            continue
        acc_m = ""
        for b in range(a, len(minus)):
            if b > a and minus[b] != minus[b - 1] + 1:
                break
            acc_m += _squash(old[minus[b]])
            hit = None
            for c in range(len(plus)):
                acc_p = ""
                for d in range(c, len(plus)):
                    if d > c and plus[d] != plus[d - 1] + 1:
                        break
                    acc_p += _squash(new[plus[d]])
                    if len(acc_p) > len(acc_m):
                        break
                    if acc_p == acc_m and (b > a or d > c):
                        hit = (minus[a:b + 1], plus[c:d + 1])
                        break
                if hit:
                    break
            if hit:
                out.append(hit)
                used.update(hit[0])
                break
    return out


def _refill_justified(old: list[str], ms: list[int], new: list[str], ps: list[int]) -> bool:
    """A rewrap is justified when the old lines were aligned with the
    parenthesis they continue, a rename moved it, the new lines are aligned
    with it, and one old line aligned there would pass 80 columns."""
    was, now = paren_column(old, ms[0]), paren_column(new, ps[0])
    if was is None or now is None or was == now:
        return False
    if any(_lead(old[i]) != was for i in ms) or any(_lead(new[j]) != now for j in ps):
        return False
    return any(now + len(old[i].strip().expandtabs(8)) > 80 for i in ms)


def check_text(name: str, text: str) -> tuple[int, int, list]:
    """(pairs, justified, findings) of one patch's text."""
    pairs = justified = 0
    found: list = []
    path = ""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/")
        m = _HUNK.match(line)
        if not m:
            k += 1
            continue
        k += 1
        body = []
        # the hunk is as long as its header says (a '-' line reading "-- "
        # is not the mail's signature); "\ No newline" lines are no side's
        old_left, new_left = int(m.group(1) or 1), int(m.group(3) or 1)
        while k < len(lines) and (old_left > 0 or new_left > 0):
            mark = lines[k][:1]
            if mark != "\\":
                body.append(lines[k] if mark else " ")
                old_left -= mark != "+"
                new_left -= mark != "-"
            k += 1
        p, j, f = hunk_findings(name, path, int(m.group(2)), body)
        pairs, justified, found = pairs + p, justified + j, found + f
    return pairs, justified, found


def check(patches: list[Path]) -> WhitespaceResult:
    r = WhitespaceResult(patches=len(patches))
    for p in patches:
        text = Path(p).read_text(errors="replace")
        if "\ndiff --git " not in text:
            raise SlabconvError(f"{p}: not a patch (no diff --git)", exit_code=2)
        pairs, justified, found = check_text(Path(p).name, text)
        r.pairs += pairs
        r.justified += justified
        r.findings += found
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify.whitespace",
                                 description="whitespace-only -/+ pairs of patches, and which "
                                             "a moved parenthesis justifies")
    ap.add_argument("patches", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write the result here")
    args = ap.parse_args(argv)
    try:
        r = check(args.patches)
    except SlabconvError as e:
        print(f"verify.whitespace: {e}", file=sys.stderr)
        return e.exit_code
    print(r.summary())
    if args.json:
        args.json.write_text(json.dumps(r.to_dict(), indent=1) + "\n")
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
