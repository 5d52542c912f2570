"""Macros that some configuration defines as NULL.

slub_def.h defines the cpu partial list's accessors twice:

    #ifdef CONFIG_SLUB_CPU_PARTIAL
    #define slub_percpu_partial(c)            ((c)->partial)
    #define slub_percpu_partial_read_once(c)  READ_ONCE(slub_percpu_partial(c))
    #else
    #define slub_percpu_partial(c)            NULL
    #define slub_percpu_partial_read_once(c)  NULL
    #endif

Without CONFIG_SLUB_CPU_PARTIAL (which every CONFIG_SMP=n kernel lacks),
the value of such a macro is NULL, a `void *`.  slab_page() and
page_slab() are _Generic selections with no `void *` association, so a
conversion that hands that value to one of them builds in one
configuration and not in the other.  The rules that convert such values
are told which macros these are (`// slabconv: nullable-macros NAME`,
-D NAME=m1,m2; docs/RULES.md): a `struct page *` local that holds one is
converted to a slab instead (`// slabconv: locals-first`), any other use
where a page is still expected is refused with its place.

A macro is nullable when one of its definitions, in the given files or in
the headers they include (followed as regen/visibility.Includes follows
them, #if not evaluated), has NULL as its whole body (`NULL`, `(NULL)`,
`((void *)0)`), or is only a use of another nullable macro
(`#define a(c) b(c)`, `#define a(c) (b(c))`).
"""
from __future__ import annotations

import re
from pathlib import Path

from .visibility import Includes, includes

_CONT = re.compile(r"\\\n")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)[ \t]*(.*)$", re.M)
_NULL = re.compile(r"\(*\s*(?:NULL|\(\s*void\s*\*\s*\)\s*0)\s*\)*")


def _bodies(text: str) -> list[tuple[str, str]]:
    """(name, body) of each function-like macro definition of `text`,
    continuation lines joined, comments dropped."""
    text = re.sub(r"/\*.*?\*/", " ", _CONT.sub(" ", text), flags=re.S)
    return [(m.group(1), re.sub(r"//.*", "", m.group(3)).strip())
            for m in _DEFINE.finditer(text)]


def _balanced(body: str) -> bool:
    depth = 0
    for ch in body:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _alias(body: str) -> str | None:
    """The macro a body only uses (`b(c)`, `(b(c))`), or None."""
    body = body.strip()
    while body.startswith("(") and body.endswith(")") and _balanced(body[1:-1]):
        body = body[1:-1].strip()
    m = re.match(r"(\w+)\s*\(", body)
    if not m or not body.endswith(")") or not _balanced(body[m.end():-1]):
        return None
    return m.group(1)


def from_texts(texts: list[str]) -> list[str]:
    """The nullable macros defined in `texts`, sorted."""
    return _nullable([d for t in texts for d in _bodies(t)])


def _nullable(defs: list[tuple[str, str]]) -> list[str]:
    found = {name for name, body in defs if _NULL.fullmatch(body) and _balanced(body)}
    while True:
        more = {name for name, body in defs if name not in found and _alias(body) in found}
        if not more:
            return sorted(found)
        found |= more


# what a file was read to: path -> (mtime_ns, size, its #includes, its
# function-like macro definitions); a file is read again when it changed
_SCANNED: dict[Path, tuple[int, int, list[tuple[str, str]], list[tuple[str, str]]]] = {}


def _scan(p: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    try:
        st = p.stat()
    except OSError:
        return [], []
    got = _SCANNED.get(p)
    if got is not None and got[:2] == (st.st_mtime_ns, st.st_size):
        return got[2], got[3]
    text = p.read_text(errors="replace")
    found = (includes(text), _bodies(text) if "NULL" in text or "void" in text else [])
    _SCANNED[p] = (st.st_mtime_ns, st.st_size, *found)
    return found


def macros(tree: Path, files: list[str]) -> list[str]:
    """The nullable macros that code in `files` of `tree` can use: defined
    in them or in a header they include, directly or through others."""
    inc = Includes(tree)
    seen: set[str] = set()
    todo = list(files)
    defs: list[tuple[str, str]] = []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        incs, bodies = _scan(tree / f)
        defs += bodies
        todo += [r for k, n in incs if (r := inc.resolve(f, k, n)) is not None and r not in seen]
    return _nullable(defs)


def define(names: list[str]) -> str:
    """The -D value of a nullable-macros directive: the names joined by
    commas ("-" for none, so that the rule still sees the -D)."""
    return ",".join(names) or "-"
