"""Insert a template (new code) at an anchor that a SmPL rule locates.

Templates hold code that exists nowhere in the tree and that SmPL cannot
express as added code (macro definitions and invocations such as
SLAB_MATCH(), _Generic selections, declarations guarded by #ifdef).  The
place is never a line number: it is "before the definition of <symbol>",
found by cocci/anchors/definition.cocci, or "at the end of the header"
(before the include guard's closing #endif).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from base.log import SlabconvError
from regen import spatch


ANCHOR_RULE = "anchors/definition.cocci"


def find_anchor(cocci_root: Path, tree: Path, file: str, symbol: str) -> int:
    """1-based line of the (first) top-level declaration of `symbol` in `file`."""
    cp = subprocess.run([*spatch.base_command(), "--sp-file", str(cocci_root / ANCHOR_RULE), "-D", "report",
                         "-D", f"anchor={symbol}", "--no-includes", "--very-quiet", file],
                        cwd=tree, capture_output=True, text=True, errors="replace")
    lines = sorted(int(m.group(1)) for m in re.finditer(r"^ANCHOR \S+:(\d+)$", cp.stdout, re.M))
    if cp.returncode != 0 or not lines:
        raise SlabconvError(f"template anchor: no top-level declaration of '{symbol}' in {file}"
                            + (f"\n{cp.stdout}{cp.stderr}".rstrip() if cp.returncode else ""))
    return lines[0]


def declaration_start(lines: list[str], anchor: int) -> int:
    """0-based index where the declaration holding line `anchor` (1-based) begins,
    including the comment block directly above it."""
    i = anchor - 1
    # walk up over the rest of the declarator (e.g. "static inline\nfoo(...)")
    while i > 0:
        prev = lines[i - 1].rstrip()
        if not prev or prev.endswith((";", "}", "*/", "{")) or prev.lstrip().startswith("#"):
            break
        i -= 1
    # then over a comment that sits directly on top of it
    if i > 0 and lines[i - 1].rstrip().endswith("*/"):
        j = i - 1
        while j >= 0 and "/*" not in lines[j]:
            j -= 1
        if j >= 0:
            i = j
    return i


def guard_end(lines: list[str], file: str) -> int:
    """0-based index of the include guard's closing #endif (the last #endif)."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip():
            if re.match(r"\s*#\s*endif\b", lines[i]):
                return i
            break
    raise SlabconvError(f"template anchor 'end': {file} does not end with an include guard #endif")


def guard_start(lines: list[str], file: str) -> int:
    """0-based index just after the include guard's #define (and the comment
    block right under it, which describes the whole header)."""
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith(("/*", "*", "//")):
            continue
        m = re.match(r"\s*#\s*ifndef\s+(\w+)", line)
        if not m or i + 1 >= len(lines) or not re.match(r"\s*#\s*define\s+%s\b" % m.group(1),
                                                       lines[i + 1]):
            break
        j = i + 2
        if j < len(lines) and lines[j].lstrip().startswith("/*"):
            while j < len(lines) and "*/" not in lines[j]:
                j += 1
            j += 1
        return j
    raise SlabconvError(f"template anchor 'start': {file} does not begin with an include guard")


def macro_span(lines: list[str], name: str, file: str) -> tuple[int, int]:
    """(start, end) 0-based line indexes (end exclusive) of the definition
    of macro `name`: its #define line and the lines its backslashes continue."""
    found = []
    pat = re.compile(r"^\s*#\s*define\s+%s\b" % re.escape(name))
    for i, line in enumerate(lines):
        if pat.match(line):
            j = i
            while j < len(lines) and lines[j].rstrip("\n").endswith("\\"):
                j += 1
            found.append((i, j + 1))
    if len(found) != 1:
        raise SlabconvError(f"template: {file} has {len(found)} definitions of macro '{name}' "
                            f"(expected exactly one to replace)")
    return found[0]


def insert(cocci_root: Path, tree: Path, template: str, file: str, *,
           before: str | None = None, at: str | None = None,
           replace_macro: str | None = None) -> None:
    text = (cocci_root / template).read_text()
    body = _strip_header(text)
    path = tree / file
    lines = path.read_text().splitlines(keepends=True)
    chunk = body + "\n"
    if replace_macro:
        # a macro definition is not C that SmPL can rewrite (its body is
        # token soup, its names may be pasted with ##): the template gives
        # the new definition, which takes the old one's place
        start, end = macro_span(lines, replace_macro, file)
        lines[start:end] = [body]
        path.write_text("".join(lines))
        return
    if before:
        idx = declaration_start(lines, find_anchor(cocci_root, tree, file, before))
    elif at == "start":
        idx = guard_start(lines, file)
        chunk = "\n" + body                      # a blank line on either side
        if idx < len(lines) and lines[idx].strip():
            chunk += "\n"
    else:
        idx = guard_end(lines, file)
        if idx > 0 and lines[idx - 1].strip():   # a blank line before the new block
            chunk = "\n" + chunk
    lines[idx:idx] = [chunk]
    path.write_text("".join(lines))


def _strip_header(text: str) -> str:
    """Templates start with a comment block saying what they are; it is not inserted."""
    out = text
    if out.startswith("/* slabconv template"):
        end = out.index("*/") + 2
        out = out[end:].lstrip("\n")
    return out.rstrip("\n") + "\n"
