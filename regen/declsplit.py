"""Give a local variable its own declaration before its type is changed.

Coccinelle 1.1.1 cannot match one declarator of a multiple declaration
(`struct page *page, *page2;`): a rule for `struct page *page2;` does not
see it, and SmPL has no syntax for the pair.  Before slab_var.cocci changes
the type of `var` in function `fn`, a declaration of `var` that shares its
statement with other declarators is split into one declaration per
declarator, in place and with the same indentation.  Nothing else changes:
the same variables, initialisers and order; only declarations of
`struct page *` inside the body of `fn` are touched.
"""
from __future__ import annotations

import re

_DECL = re.compile(r"^(?P<ind>[ \t]+)struct page (?P<list>\*\s*\w+(?:\s*=\s*[^,;()]+)?"
                   r"(?:\s*,\s*\*\s*\w+(?:\s*=\s*[^,;()]+)?)+);[ \t]*$", re.M)
_ITEM = re.compile(r"\*\s*(?P<name>\w+)(?P<init>\s*=\s*[^,;()]+)?")


def function_body(src: str, fn: str) -> tuple[int, int] | None:
    """(start, end) offsets of the body of the definition of `fn` in `src`."""
    for m in re.finditer(rf"^[^\s#].*\b{re.escape(fn)}\s*\(", src, re.M):
        i = src.find("(", m.end() - 1)
        depth = 0
        while i < len(src):
            c = src[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        rest = src[i + 1:]
        head = re.match(r"\s*\{", rest)
        if not head:
            continue           # a prototype
        start = i + 1 + head.end() - 1
        depth = 0
        for j in range(start, len(src)):
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
                if depth == 0:
                    return start, j + 1
    return None


def split(src: str, fn: str, var: str) -> str:
    """`src` with the multiple declaration of `var` in `fn` split (or unchanged)."""
    span = function_body(src, fn)
    if span is None:
        return src
    a, b = span
    body = src[a:b]

    def one(m: re.Match) -> str:
        items = list(_ITEM.finditer(m.group("list")))
        if var not in (it.group("name") for it in items):
            return m.group(0)
        ind = m.group("ind")
        return "\n".join(f"{ind}struct page *{it.group('name')}{(it.group('init') or '').rstrip()};"
                         for it in items)

    return src[:a] + _DECL.sub(one, body) + src[b:]
