"""Layout that Coccinelle's pretty-printer leaves, put right.

- Preprocessor conditionals that a step left empty: Coccinelle removes
  declarations but not the #ifdef/#else/#endif around them.  A conditional
  whose branches are all empty (only blank lines) after a step, and that
  was not empty before it, is removed.  This is structural: it never
  touches a conditional that holds code or comments.
- In the lines a step changed, and only there: no space after a cast
  (checkpatch's rule; Coccinelle prints "(T *) x" when x is new), and an
  argument list that Coccinelle broke over more lines than it had before
  (it breaks while an argument is still page_slab(slab_page(x)), before a
  later rule of the same run folds it) is joined again as far as it fits
  in 80 columns; and where the old lines declared several pointers in one
  declaration (`struct page *page, *n;`, which the driver splits so that
  Coccinelle can convert one of them), consecutive declarations of the same
  type that come out are joined again (`struct slab *slab, *n;`); the
  indentation is tabs where it can be (Coccinelle aligns a continuation
  line with tabs and then spaces, 8 spaces or more of them), and a comma
  is followed by a space (5.10 writes `df.cnt,_RET_IP_` in one call; a
  line Coccinelle printed anew is checkpatch's business again).
- A statement whose identifiers were only renamed keeps the line breaks it
  had (up to 100 columns, checkpatch's limit), instead of Coccinelle's.
- The continuation lines of a changed line that leaves a parenthesis open
  are aligned with it (checkpatch --strict's PARENTHESIS_ALIGNMENT), filled
  again at their commas where that would pass 80 columns, where they were
  aligned with it before and a rename moved it (or are new lines); and a
  changed line of a macro keeps its backslash in its neighbours' column.
- No whitespace-only churn: a continuation line whose only change is its
  indentation keeps its bytes, unless it was aligned with the parenthesis
  it continues and that parenthesis moved (a rename changed its column):
  then it moves with it (keep_indentation()).
"""
from __future__ import annotations

import difflib
import re
from collections import Counter

_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b")
_ELSE = re.compile(r"^\s*#\s*(else|elif)\b")
_END = re.compile(r"^\s*#\s*endif\b")


class _Matcher(difflib.SequenceMatcher):
    """difflib's SequenceMatcher, with the same answers, whose longest
    match is found through the lines that occur once in each range.

    Without junk, find_longest_match() is the longest block common to both
    ranges (then the first in a, then in b).  A block that holds a line
    occurring once in both ranges lies on the diagonal of those two places,
    so it is part of the longest run through them; any other block lies
    between two such lines in a and between two in b.  So the runs through
    them, and difflib's own search in the stretches between them long
    enough to hold a longer block, give the answer; between two versions
    of one source file such stretches are short, and the search is linear
    instead of scanning every equal line (blank lines, lone braces) of
    each against every other."""

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        if self.bjunk or self.bpopular or (ahi - alo) * (bhi - blo) < 10000:
            return super().find_longest_match(alo, ahi, blo, bhi)
        a, b = self.a, self.b
        in_a = Counter(a[alo:ahi])
        in_b = Counter(b[blo:bhi])
        at_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1 and in_a[b[j]] == 1}
        best = (0, alo, blo)                # (size, i, j)
        anchors_a, anchors_b = [], []
        reached: dict[int, int] = {}        # diagonal -> end in a of the run found on it
        for i in range(alo, ahi):
            j = at_b.get(a[i])
            if j is None:
                continue
            anchors_a.append(i)
            anchors_b.append(j)
            d = j - i
            if reached.get(d, -1) > i:
                continue
            si, sj = i, j
            while si > alo and sj > blo and a[si - 1] == b[sj - 1]:
                si, sj = si - 1, sj - 1
            ei = i + 1
            while ei < ahi and ei + d < bhi and a[ei] == b[ei + d]:
                ei += 1
            reached[d] = ei
            if ei - si > best[0] or (ei - si == best[0] and (si, sj) < best[1:]):
                best = (ei - si, si, sj)
        if not anchors_a:
            return super().find_longest_match(alo, ahi, blo, bhi)

        def stretches(lo, hi, marks):
            edges = [lo - 1] + sorted(marks) + [hi]
            return [(x + 1, y) for x, y in zip(edges, edges[1:]) if y - x - 1 >= max(best[0], 1)]
        sa, sb = stretches(alo, ahi, anchors_a), stretches(blo, bhi, anchors_b)
        if len(sa) * len(sb) > 64:          # few long runs: difflib's own search is as quick
            return super().find_longest_match(alo, ahi, blo, bhi)
        for a1, a2 in sa:
            for b1, b2 in sb:
                i, j, k = super().find_longest_match(a1, a2, b1, b2)
                if k > best[0] or (k == best[0] and k and (i, j) < best[1:]):
                    best = (k, i, j)
        return difflib.Match(best[1], best[2], best[0])


def line_opcodes(old: list[str], new: list[str], autojunk: bool = True) -> list[tuple]:
    """difflib's opcodes for two lists of lines, with the common head and
    tail cut off first: matching whole 8000-line files line by line is what
    would cost (difflib is quadratic in the part that differs, and a step
    changes a few functions of mm/slub.c)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (tail < min(len(old), len(new)) - head
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1
    sm = _Matcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=autojunk)
    opcodes = [("equal", 0, head, 0, head)] if head else []
    opcodes += [(t, i1 + head, i2 + head, j1 + head, j2 + head) for t, i1, i2, j1, j2 in sm.get_opcodes()]
    if tail:
        opcodes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return opcodes


def empty_conditionals(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line indexes of conditionals with only blank lines inside."""
    found = []
    stack: list[tuple[int, bool]] = []   # (start index, has content)
    for i, line in enumerate(lines):
        if "#" not in line:
            if stack and line.strip():
                stack[-1] = (stack[-1][0], True)
            continue
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


def _leading_comment(lines: list[str]) -> int:
    """Length of a block comment at the start of `lines` that is followed by
    a blank line (a heading for what comes after, not a function's own
    comment), 0 if there is none.  Kernel-doc (/**) and one-line comments
    do not count."""
    first = lines[0].strip() if lines else ""
    kerneldoc = first == "/**" or first.startswith("/** ")
    if not first.startswith("/*") or kerneldoc or "*/" in first:
        return 0
    for i, line in enumerate(lines[1:], 1):
        if "*/" in line:
            return i + 1 if i + 1 < len(lines) and not lines[i + 1].strip() else 0
    return 0


def keep_detached_comments(before: str, after: str) -> str:
    """Put back the block comments that spatch removed with the code after
    them although a blank line separates them from it (Coccinelle drops
    the comments in front of what a rule removes; a section heading such
    as AMD IOMMU's "The functions below are used ..." is not the removed
    function's)."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out: list[str] = []
    for op, i1, i2, j1, j2 in line_opcodes(old, new, autojunk=False):
        if op in ("delete", "replace"):
            n = _leading_comment(old[i1:i2])
            starts_comment = j1 < j2 and new[j1].lstrip().startswith(("/*", "*"))
            if n and not starts_comment:     # (a comment reworded is not a comment removed)
                out.extend(old[i1:i1 + n + 1])          # the comment and its blank line
        out.extend(new[j1:j2])
    return "".join(out)


_CAST_SPACE = re.compile(r"(\((?:const\s+)?(?:(?:struct|union|enum)\s+)?\w+(?:\s*\*)+\)) +(?=[\w(&*])")
_STARTS_STATEMENT = re.compile(r"^\s*(?:[{}#]|/[*/]|\*|(?:if|for|while|return|case|default|else|do|switch)\b)")


def _width(line: str) -> int:
    return len(line.rstrip("\n").expandtabs(8))


def _indent(col: int) -> str:
    """Leading whitespace up to display column `col`: tabs, then fewer
    than 8 spaces (checkpatch's CODE_INDENT)."""
    return "\t" * (col // 8) + " " * (col % 8)


def _lead_width(line: str) -> int:
    """The display width (tabs to 8) of the line's leading whitespace."""
    return len(line[:len(line) - len(line.lstrip(" \t"))].expandtabs(8))


def _tab_indent(line: str) -> str:
    """The line with its leading whitespace as tabs where it can be, then
    fewer than 8 spaces (checkpatch's CODE_INDENT)."""
    body = line.lstrip(" \t")
    if not body.strip():
        return line
    return _indent(_lead_width(line)) + body


def _comma_space(line: str) -> str:
    """A space after each comma of the code that has none (not in string or
    character literals, nor in comments)."""
    out, i, n, quote = [], 0, len(line), ""
    while i < n:
        c = line[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(line[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
            out.append(c)
        elif line.startswith("//", i) or line.startswith("/*", i):
            out.append(line[i:])
            break
        else:
            out.append(c)
            if c == "," and i + 1 < n and line[i + 1] not in " \t\n":
                out.append(" ")
        i += 1
    return "".join(out)


# Where a step only renamed (sp -> slab, struct page -> struct slab), a
# statement keeps the line breaks it had, up to checkpatch's own limit (100
# columns since Linux 5.7): a renamed for header that was 80 columns wide
# must not be split.
KEEP_BREAKS_LIMIT = 100
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\w+|->|\+\+|--|<<=|>>=|&&|\|\|'
                    r"|[<>=!+\-*/%&|^]=|<<|>>|\S")


def _restore_breaks(old: list[str], new: list[str]) -> list[str] | None:
    """`new` broken where `old` was, when `new` is `old` with identifiers
    renamed only (the same tokens but for identifiers) and each line fits
    in KEEP_BREAKS_LIMIT columns; else None.  Comments and preprocessor
    lines are never rearranged."""
    if any(l.lstrip().startswith(("#", "/*", "*", "//")) or "/*" in l or "//" in l
           for l in old + new):
        return None
    old_toks = [_TOKEN.findall(l) for l in old]
    flat_old = [t for ts in old_toks for t in ts]
    joined = ""
    for l in new:
        body = l.strip()
        if joined and body:
            joined += "" if joined.endswith(("(", "[")) else " "
        joined += body
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(joined)]
    flat_new = [joined[a:b] for a, b in spans]
    if len(flat_new) != len(flat_old) or not flat_old:
        return None
    for a, b in zip(flat_old, flat_new):
        if a != b and not (re.fullmatch(r"[A-Za-z_]\w*", a) and re.fullmatch(r"[A-Za-z_]\w*", b)):
            return None
    out, k = [], 0
    for line, ts in zip(old, old_toks):
        if not ts:
            return None
        lead = line[:len(line) - len(line.lstrip(" \t"))]
        text = lead + joined[spans[k][0]:spans[k + len(ts) - 1][1]] + "\n"
        if _width(text) > KEEP_BREAKS_LIMIT:
            return None
        out.append(text)
        k += len(ts)
    return out


def _statement_end(lines: list[str]) -> int | None:
    """How many lines the statement the first of `lines` opens takes: up to
    the one that closes the parenthesis it leaves open (None: it leaves
    none open, or none closes it)."""
    depth = opened = 0
    for k, line in enumerate(lines):
        if line.lstrip().startswith(("#", "/*", "*", "//")):
            return None
        depth += _paren_delta(line)
        opened = opened or depth > 0
        if opened and depth <= 0:
            return k + 1
        if not opened:
            return None
    return None


def _restore_statement_breaks(old: list[str], new: list[str]) -> list[str] | None:
    """_restore_breaks() of the statement that opens the region (a
    signature whose body got a new line after it is one region with it),
    the rest of `new` after it as it is."""
    a, b = _statement_end(old), _statement_end(new)
    if not a or not b or (a == len(old) and b == len(new)):
        return None
    kept = _restore_breaks(old[:a], new[:b])
    return None if kept is None else kept + new[b:]


def _join_block(lines: list[str], limit: int) -> list[str]:
    """Join continuation lines onto a line ending in ',' or '(' while the
    result fits in `limit` columns."""
    out: list[str] = []
    for line in lines:
        if out:
            prev = out[-1].rstrip("\n")
            cont = line.strip()
            if (prev.rstrip().endswith((",", "(")) and cont and not _STARTS_STATEMENT.match(line)
                    and line[:1] in ("\t", " ")):
                sep = "" if prev.rstrip().endswith("(") else " "
                joined = prev.rstrip() + sep + cont + "\n"
                if _width(joined) <= limit:
                    out[-1] = joined
                    continue
        out.append(line)
    return out


_CLOSING = re.compile(r"^[ \t]+\)[);,]*[ \t]*\n?$")


def _join_closing(lines: list[str], limit: int) -> list[str]:
    """A line that is only the closing parenthesis (spatch's layout when
    the last argument or parameter goes) joined onto the line before it,
    when that line is code and the result fits in `limit` columns."""
    out: list[str] = []
    for line in lines:
        if out and _CLOSING.match(line):
            prev = out[-1].rstrip()
            if prev and not prev.endswith((",", "(", "\\")) and not \
                    prev.lstrip().startswith(("#", "/*", "*", "//")):
                joined = prev + line.strip() + "\n"
                if _width(joined) <= limit:
                    out[-1] = joined
                    continue
        out.append(line)
    return out


_MULTI_DECL = re.compile(r"^\s*(?:const\s+)?(?:struct|union|enum)\s+\w+\s*\*\s*\w+\s*(?:=[^,;]*)?,")
_ONE_DECL = re.compile(r"^(\s*)((?:const\s+)?(?:struct|union|enum)\s+\w+) \*(\w+);\n$")


def _join_decls(block: list[str]) -> list[str]:
    out: list[str] = []
    for line in block:
        m = _ONE_DECL.match(line)
        if m and out:
            prev = _ONE_DECL.match(out[-1]) or re.match(
                r"^(\s*)((?:const\s+)?(?:struct|union|enum)\s+\w+) \*(\w+(?:, \*\w+)+);\n$", out[-1])
            if prev and prev.group(1) == m.group(1) and prev.group(2) == m.group(2):
                out[-1] = f"{prev.group(1)}{prev.group(2)} *{prev.group(3)}, *{m.group(3)};\n"
                continue
        out.append(line)
    return out


def _code_chars(line: str):
    """(display column, character) of each character of `line` that is code:
    outside string and character literals and comments (tabs to 8)."""
    col, i, n, quote = 0, 0, len(line), ""
    while i < n:
        c = line[i]
        step = 1
        if quote:
            if c == "\\" and i + 1 < n:
                step = 2
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
            step = end + 2 - i
        else:
            yield col, c
        for ch in line[i:i + step]:
            col = (col // 8 + 1) * 8 if ch == "\t" else col + 1
        i += step


def _last_open_paren(line: str) -> int:
    """The display column (tabs to 8) just after the last '(' of `line`
    that the line does not close, or -1."""
    stack: list[int] = []
    for col, c in _code_chars(line):
        if c == "(":
            stack.append(col + 1)
        elif c == ")" and stack:
            stack.pop()
    return stack[-1] if stack else -1


def _paren_delta(line: str) -> int:
    """'(' minus ')' in `line`, outside literals and comments."""
    return sum((c == "(") - (c == ")") for _, c in _code_chars(line))


_CONTINUES = re.compile(r"(?:,|&&|\|\|)\s*(?:/\*.*\*/\s*)?$")


def _split_top_commas(text: str) -> list[str]:
    """`text` cut after each comma outside parentheses, brackets and
    literals; each piece stripped."""
    items, depth, quote, cur = [], 0, "", []
    for i, c in enumerate(text):
        cur.append(c)
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
    if "".join(cur).strip():
        items.append("".join(cur).strip())
    return items


def _fill(items: list[str], col: int, limit: int) -> list[str] | None:
    """`items` joined with spaces into lines indented to `col` (tabs, then
    spaces), as many on a line as fit in `limit`; None if one alone does not."""
    lead = _indent(col)
    lines: list[str] = []
    for it in items:
        if lines and _width(lines[-1] + " " + it) <= limit:
            lines[-1] += " " + it
        elif _width(lead + it) <= limit:
            lines.append(lead + it)
        else:
            return None
    return [ln + "\n" for ln in lines]


def _aligned_before(old: list[str], old_at: dict, text: str, near: int, col: int) -> bool:
    """Whether the continuation line `text` (stripped), found in `old` (the
    occurrence nearest to line `near`), was aligned there with the
    parenthesis it continues, and that parenthesis was not at `col`: a
    rename moved it.  A line `old` does not have is new: True."""
    at = old_at.get(text)
    if not at:
        return True
    k = min(at, key=lambda i: abs(i - near))
    was = _open_paren(old, k)
    return was is not None and _lead_width(old[k]) == was and was != col


def _align_continuations(lines: list[str], changed: set[int], limit: int,
                         old: list[str] | None = None) -> list[str]:
    """The lines after a changed line that leaves a parenthesis open at a
    ',', '&&' or '||' (a call's arguments, a signature's parameters, a
    condition), up to the line that closes it, aligned with the column
    after that parenthesis, as checkpatch --strict wants (tabs, then fewer
    than 8 spaces).  Only where the opening line changed: a conversion that
    changed a line's length moves its continuation lines with it; other
    code keeps its own style.  Where an aligned line would pass `limit`
    columns, the continuation's items (cut at its top-level commas) are
    filled again at the new column; if one item alone does not fit, the
    lines stay as they are.  `old`: the lines before the step; a group
    whose first line is there is moved only if it was aligned with its
    parenthesis and that parenthesis moved (no whitespace-only churn)."""
    out = list(lines)
    old_at: dict[str, list[int]] = {}
    for i, line in enumerate(old or ()):
        old_at.setdefault(line.strip(), []).append(i)
    for j in sorted(changed, reverse=True):       # from the end: a refill changes the count
        if j >= len(out) or out[j].lstrip().startswith(("#", "*", "/*", "//")):
            continue
        head = out[j].rstrip("\n")
        col = _last_open_paren(head)
        if col < 0 or not _CONTINUES.search(head):
            continue
        k, group, depth = j + 1, [], 1
        while k < len(out):
            body = out[k].lstrip(" \t")
            if not body.strip() or body.startswith(("#", "{", "}")):
                group = []
                break
            group.append(body.rstrip("\n"))
            depth += _paren_delta(body)
            if depth <= 0:                         # the parenthesis closes here
                break
            if depth > 1:                          # a nested one stays open: its own layout
                group = []
                break
            k += 1
        else:
            group = []
        if not group:
            continue
        if old is not None and not _aligned_before(old, old_at, group[0].strip(), j + 1, col):
            continue
        aligned = [_indent(col) + g + "\n" for g in group]
        if any(_width(a) > limit for a in aligned):
            aligned = _fill(_split_top_commas(" ".join(group)), col, limit)
            if aligned is None:
                continue
        out[j + 1:j + 1 + len(group)] = aligned
    return out


def _pad_to(text: str, col: int) -> str | None:
    """`text` padded with tabs (then spaces) so that what follows starts at
    display column `col`; None if it is already past it."""
    w = _width(text)
    if w >= col:
        return None
    pad = ""
    while (w // 8 + 1) * 8 <= col:
        pad += "\t"
        w = (w // 8 + 1) * 8
    return text + pad + " " * (col - w)


def _backslash_column(lines: list[str], changed: set[int]) -> list[str]:
    """A changed line of a macro keeps its continuation backslash in the
    column of its unchanged neighbours' backslashes."""
    out = list(lines)

    def col_of(i):
        body = out[i].rstrip("\n")
        if not body.endswith("\\") or i in changed:
            return None
        return _width(body[:-1])

    for j in sorted(changed):
        body = out[j].rstrip("\n") if j < len(out) else ""
        if not body.endswith("\\"):
            continue
        near = [c for c in (col_of(k) for k in (j - 1, j + 1, j - 2, j + 2)
                            if 0 <= k < len(out)) if c is not None]
        if not near or _width(body[:-1]) == near[0]:
            continue
        padded = _pad_to(body[:-1].rstrip(" \t"), near[0])
        if padded is not None:
            out[j] = padded + "\\\n"
    return out


def _open_paren(lines: list[str], i: int, reach: int = 40) -> int | None:
    """The display column just after the parenthesis that line i of `lines`
    continues (the innermost one the lines before it leave open), or None:
    line i starts a statement of its own."""
    depth = 0
    for k in range(i - 1, max(-1, i - 1 - reach), -1):
        line = lines[k]
        if line.lstrip().startswith(("#", "/*", "*", "//")):
            return None
        for col, c in reversed(list(_code_chars(line.rstrip("\n")))):
            if c == ")":
                depth += 1
            elif c == "(":
                if depth == 0:
                    return col + 1
                depth -= 1
            elif depth == 0 and c in ";{}":
                return None
    return None


def keep_indentation(before: str, after: str) -> str:
    """`after` with each line that differs from its counterpart in `before`
    only in its leading whitespace given that line's bytes back, unless
    the old line was aligned with the parenthesis it continues and that
    parenthesis is in another column now: then it is aligned with it
    there (tabs, then fewer than 8 spaces).  A counterpart is a line of
    the same changed region with the same text after the indentation,
    taken in order."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out = list(new)
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        i = i1
        for j in range(j1, j2):
            body = new[j].lstrip(" \t")
            if not body.strip():
                continue
            k = next((k for k in range(i, i2) if old[k].lstrip(" \t") == body), None)
            if k is None:
                continue
            i = k + 1
            if old[k] == new[j]:
                continue
            was = _open_paren(old, k)
            now = _open_paren(new, j)
            if was is not None and now is not None and _lead_width(old[k]) == was and now != was:
                out[j] = _indent(now) + body
            else:
                out[j] = old[k]
    return "".join(out)


def reflow(before: str, after: str, limit: int = 80) -> str:
    """`after` with the cast spacing and the broken argument lists of the
    lines that differ from `before` put right (see the module's doc)."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out: list[str] = []
    opcodes = line_opcodes(old, new)
    # the regions between unchanged runs (a replace next to an insert is one)
    regions: list[list[int]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            regions.append(["equal", i1, i2, j1, j2])
        elif regions and regions[-1][0] == "changed":
            regions[-1][2], regions[-1][4] = i2, j2
        else:
            regions.append(["changed", i1, i2, j1, j2])
    changed: set[int] = set()
    for tag, i1, i2, j1, j2 in regions:
        block = new[j1:j2]
        if tag == "changed":
            block = [l if l.lstrip().startswith(("*", "/*", "//")) else
                     _CAST_SPACE.sub(r"\1", l) if l.lstrip().startswith("#") else
                     _comma_space(_tab_indent(_CAST_SPACE.sub(r"\1", l)))
                     for l in block]
            if i2 > i1 and (j2 - j1) > (i2 - i1):
                kept = _restore_breaks(old[i1:i2], block) or \
                    _restore_statement_breaks(old[i1:i2], block)
                block = kept if kept is not None else _join_block(block, limit)
            if any(_MULTI_DECL.match(l) for l in old[i1:i2]):
                block = _join_decls(block)
            block = _join_closing(block, limit)
            changed.update(range(len(out), len(out) + len(block)))
        out.extend(block)
    laid = "".join(_backslash_column(_align_continuations(out, changed, limit, old), changed))
    return keep_indentation(before, laid)
