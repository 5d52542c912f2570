"""Compiler (and sparse) diagnostics out of build logs, keyed for comparison.

A warning is keyed on (file, function, message) with line and column numbers
left out, so that a patch that only moves code does not produce "new"
warnings; the file is normalised (relative to the source tree, O= and
absolute prefixes stripped).  `new_warnings(baseline, patched)` is a multiset
difference on those keys: a warning that the baseline has twice and the
patched tree three times is reported once.

Understood formats:
  gcc     FILE:LINE:COL: warning: MESSAGE [-Wflag]   (also without COL/flag)
          FILE: In function 'f':  /  FILE: At top level:   (context)
          note: lines, "In file included from", "inlined from" (ignored)
  sparse  FILE:LINE:COL: warning|error: MESSAGE  (+ indented detail lines)
  objtool OBJ.o: warning: objtool: f()+0x12: MESSAGE
  modpost WARNING: modpost: MESSAGE
  ld      ld: warning: MESSAGE
"""
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Iterable, Optional

__all__ = ["CompilerWarning", "Warning", "parse_log", "parse_sparse",
           "new_warnings", "normalise_path", "summarise"]


@dataclass
class CompilerWarning:
    file: str                       # normalised path ("" when not file-bound)
    message: str                    # normalised message, flag included
    line: int = 0
    col: int = 0
    function: Optional[str] = None
    flag: Optional[str] = None      # e.g. "-Wunused-variable"
    kind: str = "warning"           # warning | error
    tool: str = "gcc"               # gcc | sparse | objtool | modpost | ld
    text: str = ""                  # the original first line
    details: list = field(default_factory=list)   # sparse "expected/got" lines

    @property
    def key(self) -> tuple:
        return (self.tool if self.tool in ("objtool", "modpost", "ld") else "cc",
                self.file, self.function or "", self.message)

    def location(self) -> str:
        loc = self.file or "?"
        if self.line:
            loc += f":{self.line}"
            if self.col:
                loc += f":{self.col}"
        return loc

    def format(self) -> str:
        fn = f" (in {self.function})" if self.function else ""
        return f"{self.location()}: {self.kind}: {self.message}{fn}"

    def to_dict(self) -> dict:
        d = asdict(self)
        if not d["details"]:
            del d["details"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CompilerWarning":
        return cls(**d)


# The name used by the rest of slabconv (deliberately shadows the builtin
# only inside modules that import it).
Warning = CompilerWarning

_Q = "['\u2018\u2019`\"]"          # ASCII or UTF-8 quotes (gcc's LANG-dependent)
_DIAG_RE = re.compile(
    r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s+"
    r"(?P<kind>warning|error|fatal error|note|sorry, unimplemented):\s+(?P<msg>.*?)\s*$")
_FLAG_RE = re.compile(r"\s+\[(?P<flag>-W[^\]]+|enabled by default)\]$")
_FUNC_RE = re.compile(
    r"^(?P<file>[^\s:][^:]*?): In (?:static |member )?function " + _Q +
    r"(?P<func>[^'\u2018\u2019`\"]+)" + _Q + r"[:,]\s*$")
_TOPLEVEL_RE = re.compile(r"^(?P<file>[^\s:][^:]*?): At (?:top level|global scope):\s*$")
_INCLUDED_RE = re.compile(r"^(?:In file included from |\s+from )")
_OBJTOOL_RE = re.compile(r"^(?P<file>\S+?\.o): warning: objtool: (?P<msg>.*?)\s*$")
_MODPOST_RE = re.compile(r"^WARNING: (?:modpost: )?(?P<msg>.*?)\s*$")
_LD_RE = re.compile(r"^(?:\S*/)?(?:ld|ld\.bfd|ld\.gold|ld\.lld)(?:: \S+)?: warning: (?P<msg>.*?)\s*$")
_STEP_RE = re.compile(r"^  [A-Z][A-Z0-9_\[\] ]{1,10} \S")   # kbuild "  CC      mm/slub.o"
_MAKE_RE = re.compile(r"^make(?:\[\d+\])?: ")
_DETAIL_RE = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s{2,}(?P<msg>\S.*)$")
_HEX_RE = re.compile(r"\+0x[0-9a-fA-F]+|\b0x[0-9a-fA-F]{4,}\b")


def normalise_path(path: str, roots: Iterable = ()) -> str:
    """A path relative to the source tree: absolute `roots` (source tree, O=
    directory) stripped, then "./" and a leading "../" (srctree when O= is a
    sub-directory of the tree) removed; "a/b/../c" collapsed."""
    p = path.strip()
    for root in sorted((str(r).rstrip("/") for r in roots if r), key=len, reverse=True):
        if p == root:
            return "."
        if p.startswith(root + "/"):
            p = p[len(root) + 1:]
            break
    if os.path.isabs(p):
        return os.path.normpath(p)
    p = os.path.normpath(p)
    while p.startswith("../"):
        p = p[3:]
    return p


def _norm_msg(msg: str) -> str:
    msg = re.sub("[\u2018\u2019]", "'", msg)
    return re.sub(r"\s+", " ", msg).strip()


def parse_log(text: str, roots: Iterable = (), *, tool: str = "gcc",
              include_errors: bool = False) -> list:
    """All warnings (and with include_errors, errors) in a build log, in order.

    `roots`: absolute directories to strip from paths (source tree, O= dir).
    `tool`: what FILE:LINE:COL diagnostics are attributed to ("gcc" or "sparse").
    """
    roots = list(roots)
    out = []
    func = None            # current "In function" context
    last = None            # last diagnostic, for sparse detail lines
    for raw in text.splitlines():
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        m = _FUNC_RE.match(line)
        if m:
            func = m.group("func")
            last = None
            continue
        if _TOPLEVEL_RE.match(line) or _INCLUDED_RE.match(line):
            func = None
            last = None
            continue
        m = _DIAG_RE.match(line)
        if m:
            kind = m.group("kind")
            if kind == "note":
                continue
            kind = "error" if "error" in kind or kind.startswith("sorry") else "warning"
            if kind == "error" and not include_errors:
                last = None
                continue
            msg = m.group("msg")
            flag = None
            fm = _FLAG_RE.search(msg)
            if fm:
                flag = fm.group("flag")
            if flag and flag.startswith("-Werror="):
                flag = "-W" + flag[len("-Werror="):]
            w = CompilerWarning(
                file=normalise_path(m.group("file"), roots), message=_norm_msg(msg),
                line=int(m.group("line")), col=int(m.group("col") or 0),
                function=func if tool == "gcc" else None, flag=flag, kind=kind,
                tool=tool, text=line)
            out.append(w)
            last = w
            continue
        m = _DETAIL_RE.match(line)
        if m and last is not None and tool == "sparse":
            last.details.append(_norm_msg(m.group("msg")))
            continue
        m = _OBJTOOL_RE.match(line)
        if m:
            out.append(CompilerWarning(
                file=normalise_path(m.group("file"), roots),
                message=_HEX_RE.sub("+0x?", _norm_msg(m.group("msg"))),
                tool="objtool", text=line))
            func = last = None
            continue
        m = _MODPOST_RE.match(line)
        if m:
            out.append(CompilerWarning(
                file="", message=_HEX_RE.sub("+0x?", _norm_msg(m.group("msg"))),
                tool="modpost", text=line))
            func = last = None
            continue
        m = _LD_RE.match(line)
        if m:
            out.append(CompilerWarning(file="", message=_norm_msg(m.group("msg")),
                                       tool="ld", text=line))
            func = last = None
            continue
        if _STEP_RE.match(line) or _MAKE_RE.match(line):
            func = last = None
    return out


def parse_sparse(text: str, roots: Iterable = ()) -> list:
    """sparse diagnostics (warnings and errors) from `make C=1/2` output."""
    return [w for w in parse_log(text, roots, tool="sparse", include_errors=True)
            if w.tool == "sparse"]


def loose_key(w: CompilerWarning) -> tuple:
    """.key without the function: for matching a parallel build's log, where
    one compiler's "In function" context can precede another's warning."""
    return w.key[:2] + w.key[3:]


def new_warnings(baseline: Iterable, patched: Iterable, key=None) -> list:
    """Warnings of `patched` not accounted for by `baseline` (multiset
    difference on .key, or on key(w)); the patched occurrences are returned,
    in order."""
    key = key or (lambda w: w.key)
    budget = Counter(key(w) for w in baseline)
    new = []
    for w in patched:
        k = key(w)
        if budget[k] > 0:
            budget[k] -= 1
        else:
            new.append(w)
    return new


def gone_warnings(baseline: Iterable, patched: Iterable) -> list:
    """Warnings the patched tree no longer has (for information)."""
    return new_warnings(patched, baseline)


def summarise(ws: Iterable, limit: int = 20) -> str:
    ws = list(ws)
    lines = [w.format() for w in ws[:limit]]
    if len(ws) > limit:
        lines.append(f"... and {len(ws) - limit} more")
    return "\n".join(lines)
