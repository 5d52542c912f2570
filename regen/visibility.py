"""Declarations an entry moves: the callers that can no longer see them.

An entry may move a function's declaration to another header, or take it
out of one: "mm: Convert check_heap_object() to use struct slab" moves
__check_heap_object()'s prototype from include/linux/slab.h to mm/slab.h,
so that the wider kernel no longer sees it.  The entry's own files follow
(mm/usercopy.c gets `#include "slab.h"`), but a branch may call the
function from a file that saw it only through the old header; after the
entry that file calls an undeclared function and the series does not
build there (regen/callers.py adapts the call's arguments, which is not
enough).  So after each entry:

  1. the functions whose declaration left a header the entry changed:
     declared at file scope (a prototype, a definition, a macro) in the
     header before the entry and not after; a function the entry renames
     is the callers pass's (regen/callers.py);
  2. the headers that declare each after the entry: those the entry
     changed, and the others that name it (the callers pass's grep of the
     tree, regen/callers.Index);
  3. every file that names it in code (the entry's own files too), does
     not declare or define it itself, and has no declaring header among
     its includes (followed transitively, see below), stops regen, exit 1,
     naming file:line (of the tree regen was given), the function around
     the use, the function, where it is declared now and why the file does
     not see it.  No include is added: which header a file should include
     is the branch's choice, not a guess regen makes.

Includes are resolved as an x86 build resolves them: `"x"` beside the file
first, `<x>` (and `"x"` not found beside it) in include/, arch/x86/include/,
their uapi/ directories, and include/asm-generic/ for an `asm/` header;
one that resolves nowhere (a generated header) is not followed.  #if is
not evaluated: an include under a condition counts as seen, so a file
that sees the header only in some configurations passes this check (the
per-patch builds catch it there).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from base.log import SlabconvError
from . import effects
from .callers import _user_line, enclosing, uses

_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "typeof", "__typeof__",
             "defined", "do", "else", "case", "__attribute__", "asm", "__asm__", "_Static_assert",
             "static_assert"}
_ATTR = re.compile(r"\b__\w+\s*\(\s*[^()]*\)")     # __printf(1, 2), __section(".x") ...
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_SEARCH = ("include", "arch/x86/include", "include/uapi", "arch/x86/include/uapi")


def declared(text: str) -> set[str]:
    """The functions `text` declares at file scope: prototypes and
    definitions (outside any brace and parenthesis), and function-like
    macros."""
    s = effects.strip_comments(text)
    out = set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(", s, re.M))
    # preprocessor lines (with their continuations) are not declarations
    s = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)),
               s, flags=re.M)
    brace = paren = 0
    last = 0                # where the current file-scope statement starts
    i, n = 0, len(s)
    name = re.compile(r"[A-Za-z_]\w*")
    while i < n:
        c = s[i]
        if c == "{":
            brace += 1
        elif c == "}":
            brace = max(brace - 1, 0)
            if brace == 0:
                last = i + 1
        elif c == ";" and brace == 0 and paren == 0:
            last = i + 1
        elif c == "(":
            if brace == 0 and paren == 0:
                m = re.search(r"([A-Za-z_]\w*)\s*$", s[last:i])
                pointer = s[i + 1:i + 80].lstrip().startswith("*")      # void (*fp)(int)
                if m and m.group(1) not in _KEYWORDS and not pointer:
                    prefix = _ATTR.sub(" ", s[last:last + m.start()])
                    if prefix.strip() and not re.search(r"[=(),;!&|?:+\-/<>{}\[\]]", prefix):
                        out.add(m.group(1))
            paren += 1
        elif c == ")":
            paren = max(paren - 1, 0)
        elif brace == 0 and paren == 0 and c.isalpha():
            m = name.match(s, i)
            i = m.end()
            continue
        i += 1
    return out


def includes(text: str) -> list[tuple[str, str]]:
    """(`<` or `"`, path) of each #include of `text`."""
    return [(m.group(1), m.group(2).strip()) for m in _INCLUDE.finditer(
        re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S))]


class Includes:
    """The headers a file of `tree` includes, directly or through others
    (resolved as the module's doc says), each file read once."""

    def __init__(self, tree: Path):
        self.tree = tree
        self._direct: dict[str, list[str]] = {}

    def resolve(self, f: str, kind: str, name: str) -> str | None:
        cands = []
        if kind == '"':
            cands.append(str(Path(f).parent / name))
        cands += [f"{d}/{name}" for d in _SEARCH]
        if name.startswith("asm/"):
            cands.append("include/asm-generic/" + name[4:])
        for c in cands:
            c = _normpath(c)
            if c is not None and (self.tree / c).is_file():
                return c
        return None

    def direct(self, f: str) -> list[str]:
        if f not in self._direct:
            p = self.tree / f
            text = p.read_text(errors="replace") if p.is_file() else ""
            self._direct[f] = [r for k, n in includes(text)
                               if (r := self.resolve(f, k, n)) is not None]
        return self._direct[f]

    def closure(self, f: str) -> set[str]:
        seen: set[str] = set()
        todo = [f]
        while todo:
            for h in self.direct(todo.pop()):
                if h not in seen:
                    seen.add(h)
                    todo.append(h)
        return seen


def _normpath(p: str) -> str | None:
    parts: list[str] = []
    for x in p.split("/"):
        if x in ("", "."):
            continue
        if x == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(x)
    return "/".join(parts)


@dataclass
class Move:
    name: str
    left: list[str]         # headers that declared it before the entry and not after
    homes: list[str]        # headers that declare it after the entry


def moved(before: dict[str, str | None], after: dict[str, str], renamed: set[str]) -> dict[str, list[str]]:
    """The functions whose declaration left a header the entry changed
    (`before`/`after`: file -> text), each with those headers; not the
    functions in `renamed`."""
    out: dict[str, list[str]] = {}
    for f in sorted(after):
        b = before.get(f)
        if not f.endswith(".h") or b is None:
            continue
        for name in sorted(declared(b) - declared(after[f]) - renamed):
            out.setdefault(name, []).append(f)
    return out


def _declares(text: str, name: str) -> bool:
    return name in declared(text)


def check(entry, tree: Path, src: Path, before: dict[str, str | None], after: dict[str, str],
          renamed: set[str], files_naming) -> list[Move]:
    """Stop (exit 1) when a file of the work tree `tree` names a function
    whose declaration `entry` moved or removed and sees no header that
    declares it now.  `src`: the tree regen was given (for the lines named);
    `files_naming(names)`: name -> the files of the tree that name it
    (regen/callers.Index.files).  Returns the moves found."""
    gone = moved(before, after, renamed)
    if not gone:
        return []
    found = files_naming(sorted(gone))
    inc = Includes(tree)
    moves: list[Move] = []
    left: list[str] = []
    for name, headers in gone.items():
        word = re.compile(r"\b%s\b" % re.escape(name))
        files = sorted(set(found.get(name, [])) | {f for f, t in after.items() if word.search(t)})
        texts = {f: (tree / f).read_text(errors="replace") for f in files if (tree / f).is_file()}
        homes = sorted(f for f, t in texts.items() if f.endswith(".h") and _declares(t, name))
        moves.append(Move(name, headers, homes))
        for f, text in texts.items():
            if f in homes or _declares(text, name):
                continue                # it declares or defines its own
            where = uses(text, name)
            if not where or set(homes) & inc.closure(f):
                continue
            was = " and ".join(headers)
            why = (f"declared in {' and '.join(homes)} after this entry (in {was} before), "
                   f"which {f} does not include, directly or through the headers it includes"
                   if homes else f"no header declares it after this entry (it was in {was})")
            for line, _ in where:
                orig = _user_line(src, f, text, line)
                at = f"{f}:{orig}" if orig is not None else f"{f}:{line} (a line the series wrote)"
                left.append(f"  {at}: {enclosing(text, line)}: {name}(): {why}")
    if left:
        raise SlabconvError(
            f"entry '{entry.id}' ({entry.subject}) moves the declaration of functions that "
            f"files cannot see afterwards, and {len(left)} use(s) would call an undeclared "
            f"function; the series would not build at this patch, so none is written:\n"
            + "\n".join(dict.fromkeys(left))
            + "\n  include the header that declares it now on your branch (or stop using "
              "it there), or add a step to cocci/series.toml that does")
    return moves
