"""Remove named members from a struct definition.

The last patch of the series takes the slab fields out of struct page.
They sit in anonymous structs and unions nested in the definition (some
under #ifdef), which Coccinelle 1.1.1 does not match: a rule such as
`struct page { ... - T active; ... };` or one on the nested member leaves
the file unchanged (measured on 5.10's mm_types.h and on a reduced copy).
So the driver does it, by member name, never by line number:

  - a declaration whose declarators all have names in the set goes;
  - an anonymous struct or union all of whose members go, goes whole
    (with the #if lines and comments inside it);
  - comment lines directly above a removed member, and the comment after
    it on its last line, go with it.

What is removed is reported; a name in the set that the struct does not
have is an error, so a kernel that moved a field is noticed.  Conditionals
left empty are dropped by tidy.tidy() afterwards.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from base.log import SlabconvError
from .effects import strip_comments, struct_span


@dataclass
class Member:
    start: int                   # offset of its first character
    end: int                     # offset just after its ';'
    names: list[str]             # declarator names (empty: anonymous aggregate)
    children: list["Member"] = field(default_factory=list)
    aggregate: bool = False


def _declarator_names(decl: str) -> list[str]:
    """Names declared by one member declaration (no braces in it)."""
    names = []
    depth = 0
    part = ""
    parts = []
    for ch in decl:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    for i, p in enumerate(parts):
        p = re.sub(r"\[[^\]]*\]", "", p.split(":")[0])       # arrays, bit-field widths
        p = re.sub(r"\b__\w+\s*\([^()]*(?:\([^()]*\)[^()]*)*\)", "", p)   # attributes
        ids = re.findall(r"[A-Za-z_]\w*", p)
        if ids:
            names.append(ids[-1])
    return names


def _parse(s: str, lo: int, hi: int) -> list[Member]:
    """The members between offsets lo and hi of the comment-stripped text."""
    out: list[Member] = []
    i = lo
    while i < hi:
        if s[i].isspace():
            i += 1
            continue
        if s[i] == "#":                                   # a preprocessor line
            while i < hi:
                nl = s.find("\n", i)
                nl = hi if nl < 0 or nl > hi else nl
                if s[i:nl].rstrip().endswith("\\"):
                    i = nl + 1
                    continue
                i = nl
                break
            continue
        start = i
        depth = 0
        inner = None
        while i < hi:
            ch = s[i]
            if ch == "{":
                if depth == 0:
                    inner = [i + 1, None]
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and inner is not None:
                    inner[1] = i
            elif ch == ";" and depth == 0:
                break
            i += 1
        if i >= hi:
            break                                         # no ';': not a member
        end = i + 1
        if inner is not None:
            children = _parse(s, inner[0], inner[1])
            tail = s[inner[1] + 1:i]
            names = _declarator_names(tail) if tail.strip() else []
            out.append(Member(start, end, names, children, aggregate=True))
        else:
            out.append(Member(start, end, _declarator_names(s[start:i])))
        i = end
    return out


def _removable(m: Member, gone: set[str]) -> bool:
    if m.names:
        return all(n in gone for n in m.names)
    return bool(m.children) and all(_removable(c, gone) for c in m.children)


def _collect(members: list[Member], gone: set[str], spans: list[tuple[int, int]],
             found: set[str]) -> None:
    for m in members:
        if _removable(m, gone):
            spans.append((m.start, m.end))
            found.update(_all_names(m))
        elif m.aggregate and not m.names:
            _collect(m.children, gone, spans, found)


def _all_names(m: Member) -> set[str]:
    out = set(m.names)
    for c in m.children:
        out |= _all_names(c)
    return out


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Whole lines from start to end, with the comment lines right above
    and the rest of the last line (a trailing comment)."""
    a = text.rfind("\n", 0, start) + 1
    if text[a:start].strip():                 # something else before it on the line
        a = start
    nl = text.find("\n", end)
    b = len(text) if nl < 0 else nl + 1
    lines_before = text[:a].splitlines(keepends=True)
    k = len(lines_before)
    in_comment = False
    while k > 0:
        ln = lines_before[k - 1].strip()
        if ln.endswith("*/") and (ln.startswith(("/*", "*")) or in_comment):
            in_comment = not ln.startswith("/*")
            k -= 1
            continue
        if in_comment and (ln.startswith("*") or ln.startswith("/*")):
            in_comment = not ln.startswith("/*")
            k -= 1
            continue
        if ln.startswith("//"):
            k -= 1
            continue
        break
    if in_comment:                            # not a whole comment: keep it
        k = len(lines_before)
    return sum(len(x) for x in lines_before[:k]), b


def remove_members(text: str, struct: str, names: list[str]) -> tuple[str, list[str]]:
    """`text` with the members called `names` removed from the definition of
    `struct <struct>`; also returns the names removed, in `names` order."""
    s = strip_comments(text)
    span = struct_span(s, struct)
    if span is None:
        raise SlabconvError(f"remove members: no definition of struct {struct}")
    if span[1] < 0:
        raise SlabconvError(f"remove members: struct {struct} is not closed")
    gone = set(names)
    spans: list[tuple[int, int]] = []
    found: set[str] = set()
    _collect(_parse(s, *span), gone, spans, found)
    missing = [n for n in names if n not in found]
    if missing:
        raise SlabconvError(f"remove members: struct {struct} has no removable member "
                            f"{', '.join(missing)} (not there, or sharing a declaration or "
                            f"an anonymous struct with members that stay)")
    out = text
    for a, b in sorted((_line_span(text, a, b) for a, b in spans), reverse=True):
        out = out[:a] + out[b:]
        # no blank line left between the last member and the closing brace
        if re.match(r"[ \t]*}", out[a:]) and out[:a].endswith("\n\n"):
            out = out[:a - 1] + out[a:]
    return out, [n for n in names if n in found]
