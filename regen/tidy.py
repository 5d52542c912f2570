"""Remove preprocessor conditionals that a step left empty.

Coccinelle removes declarations but not the #ifdef/#else/#endif around
them.  A conditional whose branches are all empty (only blank lines) after
a step, and that was not empty before it, is removed.  This is structural:
it never touches a conditional that holds code or comments.
"""
from __future__ import annotations

import re

_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b")
_ELSE = re.compile(r"^\s*#\s*(else|elif)\b")
_END = re.compile(r"^\s*#\s*endif\b")


def empty_conditionals(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line indexes of conditionals with only blank lines inside."""
    found = []
    stack: list[tuple[int, bool]] = []   # (start index, has content)
    for i, line in enumerate(lines):
        if _OPEN.match(line):
            if stack:
                stack[-1] = (stack[-1][0], True)
            stack.append((i, False))
        elif _ELSE.match(line):
            continue
        elif _END.match(line):
            if not stack:
                continue
            start, content = stack.pop()
            if not content:
                found.append((start, i))
        elif line.strip() and stack:
            stack[-1] = (stack[-1][0], True)
    return found


def _signature(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(l.strip() for l in lines[span[0]:span[1] + 1] if l.strip())


def tidy(before: str, after: str) -> str:
    """Return `after` without the empty conditionals that were not empty in `before`."""
    old = before.splitlines(keepends=True)
    old_empty = {_signature(old, s) for s in empty_conditionals(old)}
    new = after.splitlines(keepends=True)
    drop: set[int] = set()
    for start, end in empty_conditionals(new):
        if _signature(new, (start, end)) in old_empty:
            continue
        drop.update(range(start, end + 1))
        # also drop one blank line that separated the block, so no double blank remains
        if end + 1 < len(new) and not new[end + 1].strip() and start > 0 and not new[start - 1].strip():
            drop.add(end + 1)
    return "".join(l for i, l in enumerate(new) if i not in drop)
