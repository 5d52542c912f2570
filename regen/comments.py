"""Comments follow the code they name.

Coccinelle does not rewrite comments, so after a conversion a comment can
still say `page->objects` or `slab_lock(page)` about code that now reads
`slab->objects` and `slab_lock(slab)`.  This module puts such comments
right, from the entry's own change and nothing else:

* A comment *names code* when it contains a code expression: a member
  access (`page->freelist`, `c->page`, `page.objects`) or a call with one
  identifier argument (`slab_lock(page)`).  English words are left alone:
  "page" alone is as often the page allocator's page as the variable.
* In a scope (a function with its comment block above it, or the whole
  file for comments outside functions), an expression E of the comment
  is rewritten to E' when the entry rewrote every occurrence of E in that
  scope's code to E' and no E is left in its code.  The mapping is read
  from the entry's diff of the code (comments and strings blanked, tokens
  aligned), so it is exactly what the rules did.
* A comment line rewritten so may also have its words follow
  (`-> Number of objects in page` on the `slab->objects` line), and the
  kernel-doc line of a parameter the entry renamed from `page` to `slab`
  has its description follow (`@slab: page pointer being destroyed`).
  Those phrases are a reviewed table: cocci/comments.toml, each with the
  upstream change it follows.
"""
from __future__ import annotations

import bisect
import difflib
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .effects import strip_comments
from .tidy import line_opcodes


_TOKEN = re.compile(r"[A-Za-z_]\w*|->|\d+|\S")
_IDENT = r"[A-Za-z_]\w*"
# a code expression inside a comment: a->b[->c...], a.b, f(a)
_EXPR = re.compile(r"(?<![\w>.\-])(%s(?:(?:->|\.)%s)+|%s\(%s\))(?![\w(])" % ((_IDENT,) * 4))
# comments, and strings (so that a "/*" inside one is not taken for a comment)
_COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)
_BRACE = re.compile(r"[{}]")
_DEFINITION = re.compile(r"^[A-Za-z_][^;=]*?\b(%s)\s*\(" % _IDENT)


@dataclass(frozen=True)
class Phrase:
    where: str          # "rewritten" (a line whose code name was rewritten), "block" (a
                        # comment with such a line), "kernel-doc",
                        # "converted", or "above" (the statement after the comment changed)
    old: str            # regular expression
    new: str
    upstream: str       # the upstream change it follows
    was: str = ""       # "above": the statement after the comment matched this before
    now: str = ""       # "above": ... and matches this after


@functools.lru_cache(maxsize=None)
def phrases(root: Path) -> tuple[Phrase, ...]:
    """The phrase table of a rules directory (cocci/comments.toml)."""
    path = root / "comments.toml"
    return tuple(load_phrases(path)) if path.is_file() else ()


def load_phrases(path: Path) -> list[Phrase]:
    data = tomllib.loads(path.read_text())
    out = []
    for i, p in enumerate(data.get("phrase", [])):
        where = p.get("where")
        if where not in ("rewritten", "block", "converted", "kernel-doc", "above") \
                or not p.get("old") \
                or "new" not in p or not p.get("upstream") \
                or (where == "above") != bool(p.get("was") and p.get("now")):
            raise ValueError(f"{path}: phrase {i + 1}: needs where (rewritten|block|converted|"
                             f"kernel-doc|above), old, new and upstream (and for above: was and now)")
        for k in ("old", "was", "now"):
            re.compile(p.get(k, ""))
        out.append(Phrase(where, p["old"], p["new"], p["upstream"], p.get("was", ""),
                          p.get("now", "")))
    return out


@functools.lru_cache(maxsize=1 << 16)
def _line_tokens(line: str) -> tuple[str, ...]:
    """The tokens of one line (the same lines come back in every entry's
    diff of a file: kept)."""
    return tuple(_TOKEN.findall(line))


@functools.lru_cache(maxsize=16)
def _code_tokens(code: str) -> tuple[str, ...]:
    return tuple(t for line in code.splitlines() for t in _line_tokens(line))


def functions(src: str) -> list[tuple[str, int, int, int]]:
    """(name, start, body_end, doc_start) of each function definition: offsets
    into `src`; doc_start is where the comment block right above it begins
    (start when there is none)."""
    code = strip_comments(src)
    out = []
    depth = 0
    head = None
    for m in _BRACE.finditer(code):
        i = m.start()
        if m.group(0) == "{":
            if depth == 0:
                head = _definition_start(code, i)
            depth += 1
        else:
            depth -= 1
            if depth == 0 and head is not None:
                name, start = head
                out.append((name, start, i + 1, _doc_start(src, start)))
                head = None
            depth = max(depth, 0)
    return out


def _definition_start(code: str, brace: int):
    """(name, offset of the definition's first line) when the `{` at
    `brace` opens a function body, else None."""
    k = brace                   # (the text before the brace, without copying it)
    while k > 0 and code[k - 1].isspace():
        k -= 1
    if k == 0 or code[k - 1] != ")":
        return None
    # walk back over the parameter list
    depth, j = 0, k - 1
    while j >= 0:
        if code[j] == ")":
            depth += 1
        elif code[j] == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    start = code.rfind("\n", 0, j) + 1
    # the return type may be on the line above ("static void\nfoo(...)")
    m = _DEFINITION.match(code[start:j + 1])
    if not m:
        return None
    prev_end = start - 1
    if prev_end > 0:
        prev_start = code.rfind("\n", 0, prev_end) + 1
        prev = code[prev_start:prev_end]
        if prev.strip() and not prev.rstrip().endswith((";", "}", "{", "\\")) \
                and not prev.lstrip().startswith("#") and "(" not in prev:
            start = prev_start
    return m.group(1), start


def _doc_start(src: str, start: int) -> int:
    """Start of the comment block that ends on the line before `start`."""
    above = src[:start]
    if not above.rstrip(" \t\n").endswith("*/") or above.endswith("\n\n"):
        return start
    end = above.rstrip(" \t\n")
    opening = end.rfind("/*")
    if opening < 0:
        return start
    return src.rfind("\n", 0, opening) + 1


def _mapping(old_code: str, new_code: str) -> dict[str, str | None]:
    """For every expression of the old code that the new code no longer
    has: what the change made of it.  None when its occurrences went
    different ways or were not kept as one expression.  Lines are aligned
    first, then the tokens of the lines that changed.  (An expression
    within lines the change kept is in the new code: the unchanged lines
    count only next to a change, where an expression may span the two.)"""
    a_lines, b_lines = old_code.splitlines(), new_code.splitlines()
    at: list[str] = []
    bt: list[str] = []
    where: list[int | None] = []           # old token -> new token
    for op, i1, i2, j1, j2 in line_opcodes(a_lines, b_lines, autojunk=False):
        if op == "equal" and i2 - i1 > 2 * _KEPT:
            spans = [(i1, i1 + _KEPT, j1, j1 + _KEPT), (i2 - _KEPT, i2, j2 - _KEPT, j2)]
        else:
            spans = [(i1, i2, j1, j2)]
        for k, (x1, x2, y1, y2) in enumerate(spans):
            if k:                           # the lines left out: no expression spans them
                at.append("")
                bt.append("")
                where.append(None)
            a = [t for line in a_lines[x1:x2] for t in _line_tokens(line)]
            b = [t for line in b_lines[y1:y2] for t in _line_tokens(line)]
            base_a, base_b = len(at), len(bt)
            at.extend(a)
            bt.extend(b)
            where.extend([None] * len(a))
            if op == "equal":
                pairs = [(x, x) for x in range(len(a))]
            else:
                pairs = []
                sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
                for sop, p1, p2, q1, q2 in sm.get_opcodes():
                    if sop == "equal" or (sop == "replace" and p2 - p1 == q2 - q1):
                        pairs.extend((p1 + x, q1 + x) for x in range(p2 - p1))
            for x, y in pairs:
                where[base_a + x] = base_b + y
    seen: dict[str, str | None] = {}
    for start, length, expr in _code_patterns(at):
        ends = [where[start + k] for k in range(length)]
        if None in ends or any(ends[k + 1] != ends[k] + 1 for k in range(length - 1)):
            target = None
        else:
            target = "".join(bt[ends[0]:ends[0] + length])
        if expr in seen and seen[expr] != target:
            seen[expr] = None
        else:
            seen.setdefault(expr, target)
    return seen


_KEPT = 3       # unchanged lines kept on each side of a change (_mapping)


def _code_patterns(tokens: list[str]):
    """(index, length, text) of the expressions in a token list, of the
    forms _EXPR finds in comments: a->b..., a.b, f(a)."""
    n = len(tokens)
    ident = re.compile(_IDENT + "$")
    for i in range(n):
        if not ident.match(tokens[i]) or (i and tokens[i - 1] in ("->", ".")):
            continue
        yield i, 1, tokens[i]           # a variable: renamed when all its uses are
        j = i
        while j + 2 < n and tokens[j + 1] in ("->", ".") and ident.match(tokens[j + 2]):
            j += 2
            yield i, j - i + 1, "".join(tokens[i:j + 1])
        if i + 3 < n and tokens[i + 1] == "(" and ident.match(tokens[i + 2]) and tokens[i + 3] == ")":
            yield i, 4, "".join(tokens[i:i + 4])


@functools.lru_cache(maxsize=16)
def _token_places(code: str) -> dict[str, list[int]]:
    places: dict[str, list[int]] = {}
    for i, t in enumerate(_code_tokens(code)):
        places.setdefault(t, []).append(i)
    return places


def _count(code: str, expr: str) -> int:
    toks = tuple(_TOKEN.findall(expr))
    if not toks:
        return 0
    ct = _code_tokens(code)
    n = len(toks)
    return sum(1 for i in _token_places(code).get(toks[0], ()) if ct[i:i + n] == toks)


def _rename(expr: str, renames: dict[str, str]) -> str:
    """What a comment's code expression becomes: the code's own rewrite of
    the whole expression, else of the variable it starts with (or, for
    f(x), of x).  `a.b` is the member b of what a points to in `a->b`
    ("since page.objects is u15"): it follows a->b's rewrite."""
    if expr in renames:
        return renames[expr]
    arrow = expr.replace(".", "->")
    if "->" not in expr and arrow in renames and "." not in renames[arrow]:
        return renames[arrow].replace("->", ".")
    m = re.fullmatch(r"(%s)((?:->|\.).*)" % _IDENT, expr)
    if m and m.group(1) in renames:
        return renames[m.group(1)] + m.group(2)
    m = re.fullmatch(r"(%s)\((%s)\)" % (_IDENT, _IDENT), expr)
    if m and m.group(2) in renames:
        return f"{renames.get(m.group(1), m.group(1))}({renames[m.group(2)]})"
    return expr


def _rewrite_comment(comment: str, renames: dict[str, str], phrases: list[Phrase],
                     converted: bool = False) -> str:
    """`converted`: the comment is a function's whose variable `page` the
    entry made a `slab` in every use."""
    out = []
    for line in comment.splitlines(keepends=True):
        new = _EXPR.sub(lambda m: _rename(m.group(1), renames), line)
        if new != line:
            for p in phrases:
                if p.where == "rewritten":
                    new = re.sub(p.old, p.new, new)
        out.append(new)
    text = "".join(out)
    if text != comment:             # the block speaks of what its rewritten line names
        for p in phrases:
            if p.where == "block":
                text = re.sub(p.old, p.new, text)
    if converted:                   # across lines: "the page\n * allocator"
        for p in phrases:
            if p.where == "converted":
                text = re.sub(p.old, p.new, text)
    return text


def _statement_after(text: str, end: int) -> str:
    """The code from `end` (a comment's end) to the end of the statement
    after it."""
    m = re.compile(r"[^;{}]*[;{]", re.S).match(text, end)
    return m.group(0) if m else ""


def _above(comment: str, before: str, after: str, end: int, phrases) -> str:
    """The "above" phrases of a comment whose next statement the entry
    changed from matching `was` to matching `now` (found in `before` by the
    comment's own text, which must occur there once)."""
    above = [p for p in phrases if p.where == "above"]
    if not above or before.count(comment) != 1:
        return comment
    old_stmt = _statement_after(before, before.index(comment) + len(comment))
    new_stmt = _statement_after(after, end)
    for p in above:
        if re.search(p.was, old_stmt) and not re.search(p.was, new_stmt) \
                and re.search(p.now, new_stmt):
            comment = re.sub(p.old, p.new, comment)
    return comment


def follow(before: str, after: str, phrases: list[Phrase] = ()) -> str:
    """`after` with its comments following the code change from `before`."""
    old_code, new_code = strip_comments(before), strip_comments(after)
    if old_code == new_code:
        return after
    old_fns = {name: (s, e) for name, s, e, _ in functions(before)}
    scopes = []                     # (start, end, renames, old code) in `after`
    new_fns = functions(after)
    for name, s, e, doc in new_fns:
        if name not in old_fns:
            continue
        os_, oe = old_fns[name]
        oc, nc = old_code[os_:oe], new_code[s:e]
        if oc == nc:
            continue
        renames = {x: y for x, y in _mapping(oc, nc).items()
                   if y is not None and y != x and _count(nc, x) == 0}
        if renames:
            scopes.append((doc, e, renames, oc))
    file_renames = {x: y for x, y in _mapping(old_code, new_code).items()
                    if y is not None and y != x and _count(new_code, x) == 0}
    # a member access the function's own code never had (the comment speaks
    # of where the data lives, page->obj_cgroups) follows the file's rewrite
    # of it, in a function the entry converted
    for _, _, renames, oc in scopes:
        for x, y in file_renames.items():
            if x not in renames and ("->" in x or "." in x) and _count(oc, x) == 0:
                renames[x] = y

    # a function whose struct page *page became struct slab *slab and that
    # names no page any more, nor the slab's page (its page_slab(page) became
    # the slab, so the token mapping alone sees page go two ways)
    declared = {id(r) for s, e, r, oc in scopes
                if re.search(r"\bstruct page \*page\b", oc)
                and re.search(r"\bstruct slab \*slab\b", new_code[s:e])
                and _count(new_code[s:e], "page") == 0
                and not re.search(r"\bslab_page\(\s*slab\s*\)", new_code[s:e])}

    fn_starts = [doc for _, _, _, doc in new_fns]      # (in the order of the text)

    def in_a_function(pos: int) -> bool:
        k = bisect.bisect_right(fn_starts, pos) - 1
        return k >= 0 and pos < new_fns[k][2]

    def scope_of(pos: int):
        for s, e, r, _ in scopes:
            if s <= pos < e:
                return r
        return None

    def fix(m: re.Match) -> str:
        if m.group(0).startswith('"'):
            return m.group(0)
        inside = scope_of(m.start())
        if inside is not None:
            text = _above(m.group(0), before, after, m.end(), phrases)
            return _rewrite_comment(text, inside, phrases, inside.get("page") == "slab"
                                    or id(inside) in declared)
        if in_a_function(m.start()):
            return m.group(0)           # in a function the entry did not convert
        return _rewrite_comment(m.group(0), file_renames, phrases)

    if not scopes and not file_renames:
        return after
    return _COMMENT.sub(fix, after)
