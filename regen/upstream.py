"""Kernels that already have struct slab (upstream's conversion, 5.17+).

On such a tree each manifest entry is one of:
  applied         its steps ran and its expected effects hold (a patch);
  upstream        what it would do is already there, with the evidence
                  (the function already takes or returns a struct slab, the
                  names its template adds are already defined, its expected
                  effects already hold);
  not applicable  what it converts is not in this kernel (the file or the
                  function is gone: SLOB in 6.4+, a function upstream
                  reworked), or its rules do not match this kernel's code.
An entry part of which is already there while the rest is gone (mixed
evidence) is not upstream: it is tried, and not applicable (with both
lists) when its rules do not fit.  Nothing that failed is left in the
tree, and the run ends with exit 0 and the per-entry report; but a rule
whose spatch run crashes (regen.spatch.SpatchCrash) stops the run with an
error, as a failing entry does on a tree without struct slab (5.10, a
user's branch of it): a rule that did not run is no verdict.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import effects, manifest


APPLIED, UPSTREAM, NOT_APPLICABLE = "applied", "upstream", "not applicable"


@dataclass
class Verdict:
    status: str
    evidence: list[str]

    def describe(self) -> str:
        return f"{self.status}: {'; '.join(self.evidence)}"


def _text(tree: Path, f: str) -> str | None:
    p = tree / f
    return p.read_text(errors="replace") if p.is_file() else None


def _definition_line(src: str, name: str) -> int | None:
    s = effects.strip_comments(src)
    m = re.search(r"^(?:struct|union)\s+%s\s*\{|^[^\n;]*\b%s\s*\([^;{]*\)\s*\{" %
                  (re.escape(name), re.escape(name)), s, re.M)
    return s.count("\n", 0, m.start()) + 1 if m else None


def has_struct_slab(tree: Path) -> str | None:
    """Where struct slab is defined (file:line), if the tree has it."""
    for f in ("mm/slab.h", "include/linux/mm_types.h"):
        src = _text(tree, f)
        if src is not None:
            line = _definition_line(src, "slab")
            if line:
                return f"{f}:{line}"
    return None


def _where_defined(tree: Path, name: str, files: list[str]) -> str | None:
    for f in files:
        src = _text(tree, f)
        if src is not None and name in effects.defined_names(src):
            line = _definition_line(src, name)
            return f"{f}:{line}" if line else f
    return None


SEARCH = ["mm/slab.h", "include/linux/mm_types.h", "include/linux/page-flags.h", "mm/slub.c",
          "mm/slab.c", "mm/slab_common.c", "include/linux/slab.h", "include/linux/slub_def.h",
          "include/linux/slab_def.h", "include/linux/mm.h", "mm/kasan/kasan.h"]


def _upstream_line(x: manifest.Expect, tree: Path) -> str:
    """An upstream check that holds, with the first line that shows it per
    file for a `present` one."""
    if x.kind != "present":
        return f"{x.describe()}"
    at = []
    for f in x.files:
        s = effects.strip_comments(_text(tree, f) or "")
        m = re.search(x.value, s, re.M)
        if m:
            line = s.count("\n", 0, m.start()) + 1
            text = s.splitlines()[line - 1].strip()
            at.append(f"{f}:{line}: {text}")
    return "; ".join(at)


def classify(entry: manifest.Entry, tree: Path, root: Path) -> Verdict | None:
    """The verdict before applying `entry` to `tree` (None: try to apply it).
    Upstream only when every piece of evidence says so; an entry part of
    which is already there while the rest is gone (mixed evidence) is
    tried, and is not applicable if it does not apply."""
    missing_files = [f for f in entry.files if not (tree / f).is_file()]
    if missing_files and len(missing_files) == len(entry.files):
        return Verdict(NOT_APPLICABLE, [f"{', '.join(missing_files)} not in this kernel"])
    if entry.expects and all(effects.check(x, tree)[0] for x in entry.expects):
        return Verdict(UPSTREAM, [f"expected effect holds: {x.describe()}" for x in entry.expects])
    if entry.upstream and all(effects.check(x, tree)[0] for x in entry.upstream):
        return Verdict(UPSTREAM, [_upstream_line(x, tree) for x in entry.upstream])
    have, gone = _evidence(entry, tree, root)
    if gone and not have:
        return Verdict(NOT_APPLICABLE, gone)
    if have and not gone:
        return Verdict(UPSTREAM, have)
    return None


def mixed_evidence(entry: manifest.Entry, tree: Path, root: Path) -> list[str]:
    """For an entry that did not apply: what of it is already there and
    what is gone, when it is both (else nothing)."""
    have, gone = _evidence(entry, tree, root)
    return [f"mixed evidence, not upstream: {'; '.join(have + gone)}"] if have and gone else []


def _evidence(entry: manifest.Entry, tree: Path, root: Path) -> tuple[list[str], list[str]]:
    """(what of the entry is already in `tree`, what it converts that is gone)."""
    missing_files = [f for f in entry.files if not (tree / f).is_file()]
    have, gone = [], [f"{f} not in this kernel" for f in missing_files]
    for st in entry.steps:
        files = [f for f in st.files if (tree / f).is_file()]
        srcs = [_text(tree, f) for f in files]
        fn = st.defines.get("fn")
        if st.convert and fn:
            if not any(effects.parameter_lists(s, fn) or fn in effects.defined_names(s)
                       for s in srcs):
                gone.append(f"{fn}() is not in {', '.join(st.files)}")
            elif effects.converted(st.convert, fn, srcs, st.target):
                what = {"param": "takes a struct slab", "return": "returns a struct slab",
                        "local": "uses a struct slab",
                        "members": "reaches the slab members through page_slab()"}[st.convert]
                at = next((f"{f}:{_definition_line(s, fn)}" for f, s in zip(files, srcs)
                           if _definition_line(s, fn)), ", ".join(files))
                have.append(f"{fn}() already {what} ({at})")
        elif st.kind == "template":
            names = effects.defined_names((root / st.path).read_text())
            found = {n: _where_defined(tree, n, list(dict.fromkeys(st.files + SEARCH)))
                     for n in sorted(names)}
            if names and all(found.values()):
                have.append("already defined: " + ", ".join(f"{n} ({w})" for n, w in found.items()))
        elif st.kind == "members":
            src = _text(tree, st.files[0])
            body = effects.struct_body(src or "", st.defines["struct"])
            if body is not None:
                left = [n for n in st.members if re.search(r"\b%s\b\s*[;:\[]" % n, body)]
                if not left:
                    have.append(f"struct {st.defines['struct']} ({st.files[0]}) has none of "
                                f"{', '.join(st.members)}")
        elif st.kind == "rule" and st.defines.get("from") and st.defines.get("to"):
            old, new = st.defines["from"], st.defines["to"]
            if not any(old in effects.defined_names(s) for s in srcs):
                w = _where_defined(tree, new, files)
                (have if w else gone).append(
                    f"{old}() is not in this kernel" + (f"; {new}() is ({w})" if w else ""))
    return have, gone
