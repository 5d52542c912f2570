"""Expected effects of a manifest entry, checked on the patched tree.

Each check reads the C files with comments and string literals blanked
out, so a comment that mentions a name never satisfies a check.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

from .manifest import Expect


_COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def _blank(m: re.Match) -> str:
    return "\n".join(" " * len(part) for part in m.group(0).split("\n"))


_STRIPPED: dict[str, str] = {}
_STRIPPED_LOCK = threading.Lock()      # regen applies some entries on a second thread


def strip_comments(src: str) -> str:
    """Blank comments and strings, keeping line structure.  The driver asks
    about the same file text several times per entry: the last few results
    are kept."""
    with _STRIPPED_LOCK:
        hit = _STRIPPED.get(src)
    if hit is None:
        hit = _COMMENT_OR_STRING.sub(_blank, src)
        with _STRIPPED_LOCK:
            if len(_STRIPPED) >= 8:
                _STRIPPED.pop(next(iter(_STRIPPED)))
            _STRIPPED[src] = hit
    return hit


def _join_continuations(src: str) -> str:
    return src.replace("\\\n", "  ")


def defined_names(src: str) -> set[str]:
    """Names defined in `src`: functions with bodies, macros, struct/union/enum tags,
    enumerators."""
    s = _join_continuations(strip_comments(src))
    names = set(re.findall(r"^\s*#\s*define\s+(\w+)", s, re.M))
    names |= set(re.findall(r"\b(?:struct|union|enum)\s+(\w+)\s*\{", s))
    # function definitions: name ( params ) { at top level (possibly multi-line params)
    names |= set(re.findall(r"\b(\w+)\s*\((?:[^;{}()]|\([^()]*\))*\)\s*(?:__\w+\s*)*\{", s))
    for body in re.findall(r"\benum\s+\w*\s*\{(.*?)\}", s, re.S):
        names |= set(re.findall(r"(?:^|,)\s*(\w+)\s*(?:=[^,]*)?(?=,|$)", body.strip()))
    return names


def _norm(t: str) -> str:
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*\s*", " *", t)


def struct_span(stripped: str, name: str) -> tuple[int, int] | None:
    """Where the body of `struct <name> { ... }` lies in comment-stripped
    text: (just after its '{', its closing '}'), or (start, -1) when it is
    not closed; None when the text does not define it."""
    m = re.search(r"^struct\s+%s\s*\{" % re.escape(name), stripped, re.M)
    if not m:
        return None
    depth, i = 1, m.end()
    while i < len(stripped) and depth:
        depth += {"{": 1, "}": -1}.get(stripped[i], 0)
        i += 1
    return (m.end(), i - 1) if not depth else (m.end(), -1)


def struct_body(src: str, name: str) -> str | None:
    """The comment-stripped body of struct `name` in `src` (None: not defined there)."""
    s = strip_comments(src)
    span = struct_span(s, name)
    return None if span is None else s[span[0]:span[1] if span[1] >= 0 else len(s)]


def parameter_lists(src: str, function: str) -> list[list[str]]:
    """Parameter lists of every declaration or definition of `function`."""
    s = strip_comments(src)
    out = []
    for m in re.finditer(r"\b%s\s*\(" % re.escape(function), s):
        # only declarations/definitions: preceded by a type, not a call in an expression
        line_start = s.rfind("\n", 0, m.start()) + 1
        # attributes such as __printf(3, 4) are part of a declaration
        prefix = re.sub(r"\b__\w+\s*\([^()]*\)", "", s[line_start:m.start()]).strip()
        at_column0 = m.start() == line_start      # return type on the line above
        if (not prefix and not at_column0) or re.search(r"[=(,;!&|?:+\-/<>]|return\b", prefix):
            continue
        depth, i = 1, m.end()
        while i < len(s) and depth:
            depth += {"(": 1, ")": -1}.get(s[i], 0)
            i += 1
        params = s[m.end():i - 1]
        out.append([_norm(p) for p in params.split(",")])
    return out


def check(expect: Expect, tree: Path) -> tuple[bool, str]:
    """(ok, what was found) for one expectation."""
    found = []
    ok = True
    for f in expect.files:
        path = tree / f
        if not path.is_file():
            return False, f"{f} does not exist"
        src = path.read_text(errors="replace")
        if expect.kind == "defines":
            names = defined_names(src)
            missing = [n for n in expect.value if n not in names]
            if missing:
                ok = False
                found.append(f"{f}: no definition of {', '.join(missing)}")
        elif expect.kind == "signature":
            lists = parameter_lists(src, expect.value)
            want = _norm(expect.param)
            if not lists:
                ok = False
                found.append(f"{f}: no declaration of {expect.value}()")
            for params in lists:
                if want not in params:
                    ok = False
                    found.append(f"{f}: {expect.value}({', '.join(params)})")
        else:
            s = strip_comments(src)
            hits = [s.count("\n", 0, m.start()) + 1 for m in re.finditer(expect.value, s, re.M)]
            if expect.kind == "absent" and hits:
                ok = False
                found.append(f"{f}: still matches at line(s) {', '.join(map(str, hits[:10]))}")
            if expect.kind == "present" and not hits:
                ok = False
                found.append(f"{f}: no match")
    return ok, "; ".join(found) if found else "as expected"


def function_bodies(src: str, function: str) -> list[str]:
    """The bodies (between the braces) of the definitions of `function` in
    `src` (comments and strings blanked): more than one when #ifdef
    branches define it differently."""
    s = strip_comments(src)
    bodies = []
    for m in re.finditer(r"\b%s\s*\((?:[^;{}()]|\([^()]*\))*\)\s*(?:__\w+\s*)*\{" % re.escape(function), s):
        line_start = s.rfind("\n", 0, m.start()) + 1
        if re.search(r"[=(,;!&|?:+\-/<>]|return\b", s[line_start:m.start()]):
            continue                                   # a call, not the definition
        depth, i = 1, m.end()
        while i < len(s) and depth:
            depth += {"{": 1, "}": -1}.get(s[i], 0)
            i += 1
        bodies.append(s[m.end():i - 1])
    return bodies


def converted(kind: str, function: str, srcs: list[str], to: str = "slab") -> bool:
    """Whether the generic conversion `kind` of `function` shows in any of
    `srcs`: a struct slab parameter ("param"), a struct slab return type
    ("return"), a `struct slab *to` local in its body ("local"), the page
    variable `to` (the step's var) reaching a slab member through
    page_slab() ("members")."""
    for src in srcs:
        if kind == "param":
            if any(p in ("struct slab *slab", "const struct slab *slab")
                   for params in parameter_lists(src, function) for p in params):
                return True
        elif kind == "return":
            if re.search(r"\bstruct\s+slab\s*\*\s*%s\s*\(" % re.escape(function), strip_comments(src)):
                return True
        elif kind == "local":
            if any(re.search(r"\bstruct\s+slab\s*\*\s*%s\b" % re.escape(to), body)
                   for body in function_bodies(src, function)):
                return True
        elif kind == "members":
            if any(re.search(r"\bpage_slab\(\s*%s\s*\)\s*->" % re.escape(to), body)
                   for body in function_bodies(src, function)):
                return True
        else:
            raise ValueError(kind)
    return False


def changed_units(src: str, settled: str | None) -> list[tuple[int, int, str]]:
    """(start, end, text) of `src`'s top-level declarations and definitions,
    without comments: those that differ from `settled` (an earlier text of
    the same file that the after-rules left with nothing more to do;
    compared without comments and layout), all of them without one.  The
    after-rules act on each function alone, so only these can want them
    (regen/after.py)."""
    s = strip_comments(src)
    spans = top_level_spans(s)
    if settled is not None:
        t = strip_comments(settled)
        done = {" ".join(t[a:b].split()) for a, b in top_level_spans(t)}
        spans = [(a, b) for a, b in spans if " ".join(s[a:b].split()) not in done]
    return [(a, b, s[a:b]) for a, b in spans]


def top_level_spans(s: str) -> list[tuple[int, int]]:
    """`s` cut after every `;` and `}` at the outermost level: the span of
    each top-level declaration or definition with what precedes it since
    the one before (a function's header, comments, preprocessor lines)."""
    spans, depth, start = [], 0, 0
    for m in re.finditer(r"[{};]", s):
        c = m.group(0)
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        if depth == 0 and c != "{":
            spans.append((start, m.end()))
            start = m.end()
    if s[start:].strip():
        spans.append((start, len(s)))
    return spans
