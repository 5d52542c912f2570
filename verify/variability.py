"""Variability analysis per patch: which Kconfig symbols change what a
patch's changed lines compile to.

    from verify import variability as VA
    scan = VA.scan_file(text)                          # #if nesting, definitions
    idx = VA.Index.of({path: text, ...})               # the headers an object read
    found = VA.analyse("mm/slub.c", text, {1234: line_text}, idx)
    found[0].symbol, found[0].line, found[0].why       # "SLUB_CPU_PARTIAL", 1234, "..."
    kc = VA.Kconfig.read(tree, "x86_64")
    kc.why_refused("SLUB_CPU_PARTIAL", "y", values)    # the dependency that blocks a flip

A configuration the per-patch check builds proves a changed line for the
values its symbols have there.  The same line can mean something else
with another value of a symbol, without any `#ifdef` around it: a macro
defined as `NULL` under `#else` handed to a `_Generic`, a static inline
whose stub takes other argument types.  For every changed code line the
analysis collects, with the reason:

  * the `CONFIG_` symbols of the `#if`/`#ifdef`/`#elif`/`#else` groups
    around the line in the patched file (an `#ifndef X` + `#define X`
    include guard is not a condition);
  * the symbols the line tests itself (`IS_ENABLED(CONFIG_X)`);
  * for every identifier of the line that names a macro: the conditions
    around each of its definitions in the files the object read (kbuild's
    dependency list in the object's .cmd file) and in the file itself,
    then the same for every macro its bodies use, transitively
    (MAX_DEPTH levels);
  * for an identifier that names a function or a type: the conditions
    around its definitions and declarations when they are not all
    unconditional (a static inline in both branches of an `#ifdef`, a
    prototype in one and a macro in the other).

A condition on a macro that is not a `CONFIG_` symbol (`#ifdef
__HAVE_ARCH_X`) is followed to that macro's definitions in the same way.

The scan is a preprocessor-aware pass over each file (continuation lines
joined, comments and literals blanked, `#if` nesting kept as a stack,
brace depth restored at `#else` so that the branches of a group do not
add up); it is kept per file content (scan_file is cached by digest), so
the headers of a series are read once per run.

The builds this asks for (every symbol flipped with the tree's
scripts/config, `make olddefconfig`, the flip confirmed, the objects that
hold the lines built at each patch) are verify/variability_builds.py's.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from .bisect_plan import parse_cmd_deps
from .compiled import code_lines

MAX_DEPTH = 6                  # macro bodies followed this many levels deep

_IDENT = re.compile(r"[A-Za-z_]\w*")
_CONFIG = re.compile(r"\bCONFIG_([A-Za-z0-9_]+)")
_DIRECTIVE = re.compile(r"^\s*#\s*([a-z_]+)\b(.*)$", re.S)
_DEFINE = re.compile(r"^([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.S)
_TYPEDEF_FNPTR = re.compile(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(")
_AGGREGATE = re.compile(r"\b(struct|union|enum)\s+([A-Za-z_]\w*)\s*$")
_CALLISH = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
# C keywords and the operators that look like calls: never a definition's name
_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while _Bool _Generic _Static_assert typeof
    __typeof__ __attribute__ __asm__ asm __inline__ __volatile__ __builtin_expect
    defined __alignof__ _Alignof __extension__ __restrict
""".split())


# --------------------------------------------------------------------------
# the scan of one file

@dataclass(frozen=True)
class Cond:
    line: int                  # of the #if/#ifdef/#elif/#else directive
    text: str                  # the directive as written ("#ifdef CONFIG_SMP")
    symbols: tuple             # CONFIG_ symbols it tests (without the prefix)
    macros: tuple              # other identifiers it tests (followed to their definitions)


@dataclass(frozen=True)
class Def:
    kind: str                  # macro | function | declaration | type
    name: str
    file: str
    line: int
    conds: tuple               # the Cond groups around it, outermost first
    body: tuple = ()           # a macro's identifiers (parameters left out)
    text: str = ""             # its first line, for the report

    @property
    def symbols(self) -> frozenset:
        return frozenset(s for c in self.conds for s in c.symbols)

    def where(self) -> str:
        c = " && ".join(c.text for c in self.conds if c.symbols or c.macros) or "unconditionally"
        return f"{self.file}:{self.line} ({c})"


@dataclass
class FileScan:
    defs: list                 # Def, with file ""
    conds_at: list             # line number (from 1) -> tuple of Cond (index 0 unused)

    def conds(self, line: int) -> tuple:
        return self.conds_at[line] if 0 < line < len(self.conds_at) else ()


def _blank(text: str) -> str:
    """Comments and string/char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _logical_lines(text: str):
    """(first physical line number, joined text, number of physical lines)."""
    phys = text.split("\n")
    i = 0
    while i < len(phys):
        start, parts = i, [phys[i]]
        while parts[-1].endswith("\\") and i + 1 < len(phys):
            parts[-1] = parts[-1][:-1]
            i += 1
            parts.append(phys[i])
        yield start + 1, " ".join(parts), i - start + 1
        i += 1


def _cond(line: int, kind: str, expr: str, negate_prior: tuple = ()) -> Cond:
    expr = " ".join(expr.split())
    ids = [m.group(0) for m in _IDENT.finditer(expr)]
    syms = tuple(dict.fromkeys(_CONFIG.findall(expr)))
    macros = tuple(dict.fromkeys(i for i in ids if not i.startswith("CONFIG_")
                                 and i not in ("defined", "IS_ENABLED", "IS_BUILTIN",
                                               "IS_MODULE", "IS_REACHABLE")
                                 and not i.isdigit()))
    # an #else/#elif depends on the conditions before it in its group too
    for c in negate_prior:
        syms += tuple(s for s in c.symbols if s not in syms)
        macros += tuple(m for m in c.macros if m not in macros)
    text = f"#{kind} {expr}".strip()
    if negate_prior:
        text += f" (after {negate_prior[0].text}, line {negate_prior[0].line})"
    return Cond(line, text, syms, macros)


def scan_text(text: str) -> FileScan:
    """The #if nesting of every line and the definitions of a C file."""
    blank = _blank(text)
    nlines = blank.count("\n") + 2
    text = text.split("\n")                  # the lines as written, for the report
    conds_at = [()] * nlines
    stack: list = []           # frames: {"conds": [Cond...], "depth0", "depth_end", "guard"}
    defs: list = []
    depth = 0
    pending = ""               # code at brace depth 0 since the last ; { or }
    pending_line = 0
    guard_candidate = None     # (#ifndef X, its frame) waiting for #define X

    def active() -> tuple:
        out = []
        for f in stack:
            if not f["guard"]:
                out.append(f["conds"][-1])
        return tuple(out)

    for no, line, count in _logical_lines(blank):
        cur = active()
        for k in range(no, min(no + count, nlines)):
            conds_at[k] = cur
        m = _DIRECTIVE.match(line)
        if m:
            kind, rest = m.group(1), m.group(2).strip()
            if kind in ("if", "ifdef", "ifndef"):
                expr = rest if kind == "if" else (
                    f"defined({rest.split()[0]})" if rest else "")
                if kind == "ifndef" and rest:
                    expr = "!" + expr
                c = _cond(no, kind, rest)
                if kind in ("ifdef", "ifndef"):
                    name = rest.split()[0] if rest else ""
                    c = Cond(no, f"#{kind} {name}",
                             (name[7:],) if name.startswith("CONFIG_") else (),
                             (name,) if name and not name.startswith("CONFIG_") else ())
                frame = {"conds": [c], "depth0": depth, "depth_end": None, "guard": False}
                stack.append(frame)
                guard_candidate = (rest.split()[0], frame) if kind == "ifndef" and rest else None
                continue
            if kind in ("elif", "else") and stack:
                f = stack[-1]
                if f["depth_end"] is None:
                    f["depth_end"] = depth
                depth = f["depth0"]
                f["conds"].append(_cond(no, kind, rest if kind == "elif" else "",
                                        tuple(f["conds"])))
                guard_candidate = None
                continue
            if kind == "endif" and stack:
                f = stack.pop()
                if f["depth_end"] is not None:
                    depth = f["depth_end"]
                guard_candidate = None
                continue
            if kind == "define":
                dm = _DEFINE.match(rest)
                if dm:
                    name, params, body = dm.group(1), dm.group(2), dm.group(3)
                    if guard_candidate and guard_candidate[0] == name and not body.strip():
                        guard_candidate[1]["guard"] = True      # an include guard
                        for k in range(guard_candidate[1]["conds"][0].line, nlines):
                            conds_at[k] = tuple(c for c in conds_at[k]
                                                if c is not guard_candidate[1]["conds"][0])
                        cur = active()
                    pnames = set(_IDENT.findall(params or "")) | {"__VA_ARGS__"}
                    body_ids = tuple(dict.fromkeys(i for i in _IDENT.findall(body)
                                                   if i not in pnames))
                    defs.append(Def("macro", name, "", no, cur, body_ids, _first_line(text, no)))
            guard_candidate = None
            continue
        guard_candidate = None
        # code: braces, and the definitions at file scope
        for i, ch in enumerate(line):
            if depth == 0 and not pending.strip() and not ch.isspace():
                pending_line = no
            if ch == "{":
                if depth == 0:
                    _top_level_open(pending, pending_line, cur, defs, text)
                    pending = ""
                depth += 1
            elif ch == "}":
                depth = max(0, depth - 1)
                if depth == 0:
                    pending = ""
            elif ch == ";" and depth == 0:
                _top_level_statement(pending, pending_line, cur, defs, text)
                pending = ""
            elif depth == 0:
                pending += ch
        if depth == 0:
            pending += " "
    return FileScan(defs, conds_at)


def _first_line(lines: list, no: int) -> str:
    return lines[no - 1].strip() if 0 < no <= len(lines) else ""


def _top_level_open(pending: str, no: int, conds: tuple, defs: list, text: list) -> None:
    """A `{` at file scope: a function's body, or a struct/union/enum's."""
    p = " ".join(pending.split())
    if not p or "=" in p:
        return                                     # an initialiser
    m = _AGGREGATE.search(p)
    if m:
        defs.append(Def("type", m.group(2), "", no, conds, (), _first_line(text, no)))
        return
    name = _function_name(p)
    if name:
        defs.append(Def("function", name, "", no, conds, (), _first_line(text, no)))


def _top_level_statement(pending: str, no: int, conds: tuple, defs: list, text: list) -> None:
    """A `;` at file scope: a typedef, a prototype, or a declaration."""
    p = " ".join(pending.split())
    if not p:
        return
    if p.startswith("typedef"):
        m = _TYPEDEF_FNPTR.search(p)
        ids = _IDENT.findall(p)
        name = m.group(1) if m else (ids[-1] if ids else "")
        if name:
            defs.append(Def("type", name, "", no, conds, (), _first_line(text, no)))
        return
    if "=" in p.split("(")[0]:
        return
    name = _function_name(p)
    if name:
        defs.append(Def("declaration", name, "", no, conds, (), _first_line(text, no)))


def _function_name(p: str) -> str:
    """The declarator's name in `static inline struct page *foo(...)`: of
    the identifiers followed by `(` (not keywords), the first one without a
    leading `__` (attributes: `__printf(1, 2)`, `__acquires(x)`), else the
    first; none when nothing precedes the first one (a macro invocation at
    file scope: `DEFINE_PER_CPU(...)`, `EXPORT_SYMBOL(...)`)."""
    names = []
    for m in _CALLISH.finditer(p):
        name = m.group(1)
        if name in _KEYWORDS or name.startswith("__attribute"):
            continue
        if not names and not p[:m.start()].strip() and not name.startswith("__"):
            return ""
        names.append(name)
    plain = [n for n in names if not n.startswith("__")]
    return plain[0] if plain else (names[0] if names else "")


@functools.lru_cache(maxsize=8192)
def _scan_cached(digest: str, text: str) -> FileScan:
    return scan_text(text)


def scan_file(text: str) -> FileScan:
    """scan_text(), kept per content for the run."""
    return _scan_cached(hashlib.sha1(text.encode(errors="surrogateescape")).hexdigest(), text)


# --------------------------------------------------------------------------
# the definitions of the files an object read

class Index:
    """name -> [Def] over a set of files (each Def with its file).  Each
    file's table is kept per (path, content) for the run, so the index of
    the next patch, which reads the same headers but one or two, costs
    nothing to make."""

    def __init__(self, tables=()):
        self.tables = list(tables)          # {name: [Def]} per file

    @classmethod
    def of(cls, files: dict) -> "Index":
        """files: path -> text (or None: not read)."""
        return cls(_table(path, text) for path, text in files.items() if text is not None)

    def plus(self, path: str, text: str) -> "Index":
        return Index(self.tables + [_table(path, text)])

    def get(self, name: str) -> list:
        out = []
        for t in self.tables:
            d = t.get(name)
            if d:
                out.extend(d)
        return out


def _table(path: str, text: str) -> dict:
    return _table_cached(path, hashlib.sha1(text.encode(errors="surrogateescape")).hexdigest(),
                         text)


@functools.lru_cache(maxsize=8192)
def _table_cached(path: str, digest: str, text: str) -> dict:
    t: dict = {}
    for d in scan_file(text).defs:
        t.setdefault(d.name, []).append(Def(d.kind, d.name, path, d.line, d.conds, d.body,
                                            d.text))
    return t


# --------------------------------------------------------------------------
# the analysis of a changed line

@dataclass
class Finding:
    symbol: str                # without CONFIG_
    file: str
    line: int
    text: str                  # the changed line
    why: str                   # what makes the symbol matter there
    via: tuple = ()            # the names followed (line -> ... -> the definition)

    def to_dict(self) -> dict:
        return {"symbol": self.symbol, "file": self.file, "line": self.line,
                "text": self.text.strip(), "why": self.why, "via": list(self.via)}

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        return cls(d["symbol"], d["file"], d["line"], d["text"], d["why"], tuple(d.get("via", ())))

    def format(self) -> str:
        return f"CONFIG_{self.symbol}: {self.file}:{self.line}: {self.text.strip()}: {self.why}"


def _code_ids(line: str) -> list:
    return list(dict.fromkeys(_IDENT.findall(_blank(line))))


def _differs(defs: list) -> bool:
    """Definitions that depend on the configuration: one under a condition,
    or several whose conditions differ."""
    return any(d.symbols or any(c.macros for c in d.conds) for d in defs)


def analyse(path: str, text: str, lines: dict, index: Index,
            max_depth: int = MAX_DEPTH) -> list:
    """Findings for the changed lines `lines` ({number: text}) of file
    `path` whose content is `text`; `index` covers what the file includes
    (the file itself is added).  One Finding per (line, symbol), the
    shortest reason first found."""
    own = scan_file(text)
    idx = index.plus(path, text)
    out: list = []
    for no in sorted(lines):
        src_line = lines[no]
        seen: dict = {}

        def add(sym: str, why: str, via: tuple) -> None:
            if sym not in seen:
                seen[sym] = Finding(sym, path, no, src_line, why, via)

        for c in own.conds(no):
            for s in c.symbols:
                add(s, f"the line is inside `{c.text}` ({path}:{c.line})", ())
            for m in c.macros:
                _follow(idx, m, (m,), max_depth, add, set(), cond_of=f"{path}:{c.line}")
        for s in _CONFIG.findall(_blank(src_line)):
            add(s, "the line tests it", ())
        visited: set = set()
        for name in _code_ids(src_line):
            if name.startswith("CONFIG_") or name in _KEYWORDS:
                continue
            _follow(idx, name, (name,), max_depth, add, visited)
        out.extend(seen.values())
    return out


def _follow(idx: Index, name: str, via: tuple, depth: int, add, visited: set,
            cond_of: str = "") -> None:
    if name in visited or depth < 0:
        return
    visited.add(name)
    defs = idx.get(name)
    if not defs:
        return
    macros = [d for d in defs if d.kind == "macro"]
    shown = "; ".join(d.where() for d in defs[:3]) + (f" (+{len(defs) - 3})" if len(defs) > 3 else "")
    chain = " -> ".join(via)
    if _differs(defs):
        kinds = "/".join(dict.fromkeys(d.kind for d in defs))
        lead = (f"the condition at {cond_of} tests {name}, " if cond_of else
                f"it uses {chain}, " if len(via) > 1 else "")
        for d in defs:
            for s in d.symbols:
                add(s, f"{lead}{kinds} {name} defined at {shown}", via)
        for d in defs:
            for c in d.conds:
                for m in c.macros:
                    _follow(idx, m, via + (m,), depth - 1, add, visited,
                            cond_of=f"{d.file}:{c.line}")
    for d in macros:
        for s in (x[7:] for x in d.body if x.startswith("CONFIG_")):
            add(s, f"it uses {chain}, macro {name} at {d.file}:{d.line} tests CONFIG_{s}", via)
        if depth > 0:
            for b in d.body:
                if not b.startswith("CONFIG_") and b not in _KEYWORDS:
                    _follow(idx, b, via + (b,), depth - 1, add, visited)


# --------------------------------------------------------------------------
# Kconfig: why a flip does not hold

_KC_START = re.compile(r"^\s*(menuconfig|config)\s+([A-Za-z0-9_]+)\s*$")
_KC_PROMPT = re.compile(r'^\s*(?:bool|tristate|string|int|hex|prompt)\s+"')
_KC_DEPENDS = re.compile(r"^\s*depends\s+on\s+(.*)$")
_KC_SELECT = re.compile(r"^\s*select\s+([A-Za-z0-9_]+)(?:\s+if\s+(.*))?$")
_KC_IF = re.compile(r"^\s*if\s+(.*)$")
_KC_ENDIF = re.compile(r"^\s*endif\b")
_KC_OTHER = re.compile(r"^\s*(menu|choice|endmenu|endchoice|comment|source|mainmenu|if|endif)\b")


@dataclass
class KSym:
    name: str
    file: str = ""
    line: int = 0
    prompt: bool = False
    prompt_if: list = field(default_factory=list)      # `bool "..." if EXPR`: EXPR
    depends: list = field(default_factory=list)        # expressions (its own and its ifs')
    selected_by: list = field(default_factory=list)    # (symbol, condition or "")


class Kconfig:
    """The Kconfig symbols of a tree for one ARCH, read for the reasons of
    refused flips (not a Kconfig evaluator: `make olddefconfig` decides)."""

    def __init__(self, syms: dict, arch: str):
        self.syms, self.arch = syms, arch

    @classmethod
    @functools.lru_cache(maxsize=8)
    def read(cls, tree, arch: str) -> "Kconfig":
        tree = Path(tree)
        src_arch = "x86" if arch in ("x86_64", "i386") else arch
        syms: dict = {}
        for root, dirs, files in os.walk(tree):
            rel = os.path.relpath(root, tree)
            parts = rel.split(os.sep)
            if parts[0] in (".git", "o", "Documentation", "tools", "scripts") or (
                    parts[0] == "arch" and len(parts) > 1 and parts[1] != src_arch):
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if f.startswith("Kconfig"):
                    cls._parse(tree, Path(root, f), syms)
        return cls(syms, arch)

    @staticmethod
    def _parse(tree: Path, path: Path, syms: dict) -> None:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            return
        rel = str(path.relative_to(tree))
        ifs: list = []
        cur = None
        help_indent = None         # inside a help text: lines indented deeper than this
        for no, line, _ in _logical_lines(text):
            if help_indent is not None:
                if not line.strip():
                    continue
                indent = len(line.expandtabs()) - len(line.expandtabs().lstrip())
                if indent > help_indent:
                    continue
                help_indent = None
            s = line.split("#", 1)[0] if '"' not in line else line
            if s.strip() in ("help", "---help---"):
                help_indent = len(s.expandtabs()) - len(s.expandtabs().lstrip())
                continue
            m = _KC_START.match(s)
            if m:
                cur = syms.setdefault(m.group(2), KSym(m.group(2)))
                if not cur.file:                 # first seen as a select's target
                    cur.file, cur.line = rel, no
                cur.depends.extend(ifs)
                continue
            m = _KC_IF.match(s)
            if m and s.lstrip().startswith("if "):
                ifs.append(m.group(1).strip())
                cur = None
                continue
            if _KC_ENDIF.match(s):
                if ifs:
                    ifs.pop()
                cur = None
                continue
            if _KC_OTHER.match(s):
                cur = None
                continue
            if cur is None:
                continue
            if _KC_PROMPT.match(s):
                cur.prompt = True
                cond = re.search(r'"\s+if\s+(.+)$', s)
                if cond:
                    cur.prompt_if.append(cond.group(1).strip())
            m = _KC_DEPENDS.match(s)
            if m:
                cur.depends.append(m.group(1).strip())
            m = _KC_SELECT.match(s)
            if m:
                t = syms.setdefault(m.group(1), KSym(m.group(1)))
                t.selected_by.append((cur.name, (m.group(2) or "").strip()))

    def known(self, sym: str) -> bool:
        return sym in self.syms and bool(self.syms[sym].file)

    def why_refused(self, sym: str, want: str, values: dict) -> str:
        """Why CONFIG_sym did not take the value `want` ('y' or 'n'), from
        its Kconfig entry and the values of the configuration after
        olddefconfig (CONFIG_X -> value)."""
        def val(s: str) -> str:
            return values.get(f"CONFIG_{s}", "n")
        k = self.syms.get(sym)
        if k is None or not k.file:
            return f"CONFIG_{sym} is not a Kconfig symbol of ARCH={self.arch}"
        where = f"{k.file}:{k.line}"
        hidden = [f"its prompt needs {c} ("
                  + ", ".join(f"{x}={val(x)}" for x in re.findall(r"\b[A-Z][A-Z0-9_]+\b", c))
                  + ")" for c in k.prompt_if
                  if all(val(x) == "n" for x in re.findall(r"\b[A-Z][A-Z0-9_]+\b", c))]
        if hidden and len(hidden) == len(k.prompt_if):
            return f"CONFIG_{sym} ({where}): {'; '.join(hidden)}: Kconfig keeps its default"
        if want != "n":
            blocked = []
            for d in k.depends:
                bad = [f"{s}={val(s)}" for s in re.findall(r"\b[A-Z][A-Z0-9_]+\b", d)
                       if s not in ("y", "n", "m")]
                blocked.append(f"depends on {d}" + (f" ({', '.join(bad)})" if bad else ""))
            if not k.prompt:
                by = ", ".join(s for s, _ in k.selected_by[:6]) or "nothing"
                return (f"CONFIG_{sym} ({where}) has no prompt: only a default or a select "
                        f"sets it (selected by {by})"
                        + (f"; {'; '.join(blocked)}" if blocked else ""))
            if blocked:
                return f"CONFIG_{sym} ({where}) {'; '.join(blocked)}"
            return f"CONFIG_{sym} ({where}): Kconfig kept it {val(sym)}"
        on = [f"{s}={val(s)}" + (f" if {c}" if c else "") for s, c in k.selected_by
              if val(s) in ("y", "m")]
        if on:
            return f"CONFIG_{sym} ({where}) is selected by {', '.join(on[:6])}"
        if not k.prompt:
            return f"CONFIG_{sym} ({where}) has no prompt: its default sets it"
        return f"CONFIG_{sym} ({where}): Kconfig kept it {val(sym)}"


# --------------------------------------------------------------------------
# a patch's findings, per file

def headers_of(cmd_text: str) -> list:
    """The source files (relative to the tree) an object's .cmd lists."""
    _, deps = parse_cmd_deps(cmd_text)
    return [d for d in deps if not d.startswith(("/", "include/config/", "include/generated/"))
            and (d.endswith(".h") or d.endswith(".c"))]


def analyse_patch(changed: dict, read: Callable, includes: Callable,
                  code_only: Optional[Callable] = None) -> list:
    """Findings for a patch: `changed` {file: {line: text}} (its added
    lines, numbered in the patched file), `read(path)` the patched tree's
    text of a file (None: none), `includes(file)` the files an object
    holding `file` read.  Lines without code are left out."""
    out = []
    for f, lines in sorted(changed.items()):
        if not f.endswith((".c", ".h")):
            continue
        text = read(f)
        if text is None:
            continue
        code = _code_lines(text)
        keep = {n: t for n, t in lines.items() if n in code}
        if not keep:
            continue
        idx = Index.of({h: read(h) for h in includes(f) if h != f})
        out.extend(analyse(f, text, keep, idx))
    return out


def _code_lines(text: str) -> set:
    return _code_lines_cached(hashlib.sha1(text.encode(errors="surrogateescape")).hexdigest(),
                              text)


@functools.lru_cache(maxsize=256)
def _code_lines_cached(digest: str, text: str) -> set:
    return code_lines(text)


def symbols_of(findings: Iterable) -> list:
    return sorted({f.symbol for f in findings})
