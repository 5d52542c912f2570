"""Two builds of an object compared function by function, and a patch's
objects compared (check_patch); the snapshot of O= taken before a build."""
from __future__ import annotations

import difflib
import os
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from .code import _COLD, FuncCode, _digest, clone_base, function_code
from .elf import STT_FILE, STT_FUNC, Elf
from .expect import judge


EXCERPT_LINES = 24

@dataclass
class FuncChange:
    function: str
    old_size: int
    new_size: int
    excerpt: str = ""
    new_name: str = ""               # the name after the patch, if renamed
    notes: list = field(default_factory=list)   # calls gained or lost, inlining

    @property
    def delta(self) -> int:
        return self.new_size - self.old_size

    def to_dict(self) -> dict:
        d = {"function": self.function, "old_size": self.old_size,
             "new_size": self.new_size, "delta": self.delta, "excerpt": self.excerpt}
        if self.new_name:
            d["new_name"] = self.new_name
        if self.notes:
            d["notes"] = list(self.notes)
        return d


@dataclass
class FuncSize:
    function: str
    size: int

    def to_dict(self) -> dict:
        return {"function": self.function, "size": self.size}


@dataclass
class ObjDiff:
    object: str
    changed: list = field(default_factory=list)       # FuncChange
    added: list = field(default_factory=list)         # FuncSize
    removed: list = field(default_factory=list)       # FuncSize
    compared: int = 0                                 # functions in both
    renames: dict = field(default_factory=dict)       # old -> new, as given
    missing_before: bool = False                      # no object before (new file)
    missing_after: bool = False
    present: frozenset = frozenset()                  # function names in either object
    quick: bool = False                               # equal without disassembling
    aliases: list = field(default_factory=list)       # "new = old": a new name of old code
    found_renames: dict = field(default_factory=dict)  # old -> new, same code (not declared)

    @property
    def equal(self) -> bool:
        return not (self.changed or self.added or self.removed)

    @property
    def delta(self) -> int:
        return (sum(c.delta for c in self.changed) + sum(a.size for a in self.added)
                - sum(r.size for r in self.removed))

    def to_dict(self) -> dict:
        return {"object": self.object, "equal": self.equal, "compared": self.compared,
                "delta": self.delta, "missing_before": self.missing_before,
                "missing_after": self.missing_after, "renames": dict(self.renames),
                "quick": self.quick, "aliases": list(self.aliases),
                "found_renames": dict(self.found_renames),
                "changed": [c.to_dict() for c in self.changed],
                "added": [a.to_dict() for a in self.added],
                "removed": [r.to_dict() for r in self.removed],
                "present": sorted(self.present) if not self.equal else []}

    @classmethod
    def from_dict(cls, d: dict) -> "ObjDiff":
        """The stored form back (to_dict()): enough to judge it again."""
        return cls(d["object"],
                   changed=[FuncChange(c["function"], c["old_size"], c["new_size"],
                                       c.get("excerpt", ""), c.get("new_name", ""),
                                       list(c.get("notes", []))) for c in d.get("changed", [])],
                   added=[FuncSize(a["function"], a["size"]) for a in d.get("added", [])],
                   removed=[FuncSize(r["function"], r["size"]) for r in d.get("removed", [])],
                   compared=d.get("compared", 0), renames=dict(d.get("renames", {})),
                   present=frozenset(d.get("present", ())))

    def lines(self) -> list:
        out = []
        for c in self.changed:
            nm = c.function + (f" (now {c.new_name})" if c.new_name else "")
            out.append(f"{self.object}: {nm}: {c.delta:+d} bytes ({c.old_size} -> {c.new_size})")
        for a in self.added:
            out.append(f"{self.object}: {a.function}: added ({a.size} bytes)")
        for r in self.removed:
            out.append(f"{self.object}: {r.function}: removed ({r.size} bytes)")
        return out

    def text(self, excerpts: bool = False) -> str:
        found = "".join(f"; {a} renamed {b}, same code" for a, b in self.found_renames.items())
        if self.equal:
            return f"{self.object}: code unchanged ({self.compared} functions){found}"
        lines = self.lines()
        out = []
        for i, ln in enumerate(lines):
            out.append(ln)
            if excerpts and i < len(self.changed) and self.changed[i].notes:
                out.append("    (" + "; ".join(self.changed[i].notes) + ")")
            if excerpts and i < len(self.changed) and self.changed[i].excerpt:
                out.extend("    " + x for x in self.changed[i].excerpt.splitlines())
        if found:
            out.append(f"{self.object}: {found[2:]}")
        return "\n".join(out)


def _excerpt(a: str, b: str, name: str = "", limit: int = EXCERPT_LINES) -> str:
    """A unified diff of two normalised texts.  The offsets of jumps inside
    the function (`<fn+0x1c8>`) are masked (`<fn+?>`) so that the diff shows
    what changed, not every jump past it; when only offsets differ (the same
    instructions encoded at other sizes) the diff is of the texts as they
    are."""
    if name:
        base = re.escape(clone_base(name))
        mask = re.compile(r"<((?:\{alias:[^{}]*\}|" + base + r"[.\w]*))\+0x[0-9a-f]+>")
        ma, mb = mask.sub(r"<\1+?>", a), mask.sub(r"<\1+?>", b)
        if ma != mb:
            a, b = ma, mb
    d = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "before", "after", n=2,
                                  lineterm=""))[2:]
    if len(d) > limit:
        d = d[:limit] + [f"... ({len(d) - limit} more diff lines)"]
    return "\n".join(d)


def _elf_functions(elf: Elf) -> list:
    """The function names function_code() would give, from the symbols alone
    (X.cold folded into X; the pseudo-functions of unclaimed code left out)."""
    by_range = {}
    for s in elf.symbols:
        if (s.type == STT_FUNC and s.defined and s.size > 0 and s.name
                and elf.sections[s.shndx].exec):
            by_range.setdefault((s.shndx, s.value, s.size), set()).add(s.name)
    names = {n for g in by_range.values() for n in g}
    firsts = {min(g) for g in by_range.values()}        # aliases count once
    return sorted(n for n in firsts
                  if not (_COLD.match(n) and _COLD.match(n).group(1) in names))


def _quick_equal(a: Elf, b: Elf) -> bool:
    """True when everything the normalised code is made of is the same in
    both objects, so the code is equal without disassembling: the bytes of
    every code section, every relocation (by symbol name or section name),
    the symbol tables, and the bytes of every section a relocation in code
    refers to.  (A header change typically moves only __bug_table's line
    numbers, which nothing here reads.)  False means "look closer"."""
    if a.machine != b.machine or len(a.sections) != len(b.sections):
        return False

    def syms(e: Elf):
        return sorted((s.name, s.type, s.bind, e.sections[s.shndx].name if s.defined else "",
                       s.value, s.size) for s in e.symbols if s.type != STT_FILE)

    def rels(e: Elf, idx: int):
        out = []
        for r in e.relocs.get(idx, []):
            s = e.symbols[r.sym] if r.sym < len(e.symbols) else None
            out.append((r.offset, r.type, r.addend, s.name if s else "",
                        e.sections[s.shndx].name if s is not None and s.defined else ""))
        return out

    referenced = set()
    for sa, sb in zip(a.sections, b.sections):
        if (sa.name, sa.type, sa.flags, sa.size, sa.entsize) != (
                sb.name, sb.type, sb.flags, sb.size, sb.entsize):
            return False
        if rels(a, sa.index) != rels(b, sb.index):
            return False
        if sa.exec:
            if a.section_data(sa) != b.section_data(sb):
                return False
            for r in a.relocs.get(sa.index, []):
                s = a.symbols[r.sym] if r.sym < len(a.symbols) else None
                if s is not None and s.defined:
                    referenced.add(s.shndx)
    if syms(a) != syms(b):
        return False
    return all(a.section_data(a.sections[i]) == b.section_data(b.sections[i])
               for i in referenced)


_ALIAS = re.compile(r"\{alias:([^{}]+)\}")


def _fold_aliases(fa: dict, fb: dict):
    """Names that share one function's code (an alias made by identical
    code folding) are that one function: each group is named by one of its
    names, preferring a name both objects have (the old function a new one
    was folded into), and the others are not functions of their own.
    Returns the two dicts and the aliases after the patch that are new."""
    both = set(fa) & set(fb)

    def rep(group) -> str:
        inb = sorted(n for n in group if n in both)
        return inb[0] if inb else sorted(group)[0]

    def fold(funcs: dict) -> dict:
        out = {}
        for name, fc in funcs.items():
            if fc.aliases and rep((name,) + fc.aliases) != name:
                continue
            text = _ALIAS.sub(lambda m: rep(tuple(m.group(1).split("|"))), fc.text)
            if text != fc.text or fc.aliases:
                fc = FuncCode(fc.size, _digest(fc.size, text), text, fc.section, fc.aliases)
            out[name] = fc
        return out

    new_aliases = sorted(f"{a} = {n}" for n, fc in fb.items() if n in fb
                         for a in fc.aliases if a not in fa
                         and rep((n,) + fc.aliases) == n)
    return fold(fa), fold(fb), new_aliases


def _same_code_renames(fa: dict, fb: dict) -> dict:
    """{old: new} for functions only in fa and only in fb whose code is the
    same once the new name (in its own jumps, its cold part, its __func__)
    reads as the old one; each name in one pair at most.  Also a function
    whose GCC clone changed (setup_object.isra.0 -> setup_object) with the
    same code."""
    gone = {n: f for n, f in fa.items() if n not in fb and not n.startswith("[")}
    new = {n: f for n, f in fb.items() if n not in fa and not n.startswith("[")}
    out, used = {}, set()
    for b in sorted(new):
        y = new[b]
        base_b = clone_base(b)
        for a in sorted(gone):
            x = gone[a]
            if a in used or x.size != y.size:
                continue
            base_a = clone_base(a)
            if base_a == base_b:
                # the same function, cloned otherwise (foo.isra.0 -> foo: the
                # parameter GCC's clone dropped is gone from the source)
                old, new_, strings = a, b, False
            elif b[len(base_b):] == a[len(base_a):]:      # the same clone suffix
                old, new_, strings = base_a, base_b, True
            else:
                continue
            q = "" if strings else '"'
            pat = re.compile(r"(?<![\w.%s])%s(?![\w%s])" % (q, re.escape(new_), q))
            if pat.sub(old, y.text) == x.text:
                out[old] = new_
                used.add(a)
                break
    return out


def _renamed(name: str, renames: dict) -> str:
    """The name after the patch of a function compared under `name`, or ""."""
    base, dot, rest = name.partition(".")
    if base in renames:
        return renames[base] + dot + rest
    return ""


def compare(before_obj, after_obj, renames: Optional[dict] = None, *,
            label: Optional[str] = None, quick: bool = True,
            detect_renames: bool = True) -> ObjDiff:
    """Compare the functions of two builds of an object.  `renames` {old:
    new}: a function the patch renamed is compared under its old name, and
    its new name in calls and its `__func__` read as the old one.  A missing
    file is an object with no functions (a new or a deleted object).
    quick: objects whose code, relocations, symbols and referenced data are
    the same byte for byte are equal without disassembling them (ObjDiff.
    quick; with renames only identical files).
    detect_renames: a function that disappeared and one that appeared with
    the same code but for its own name (a rename the caller did not
    declare, such as slab_order() -> calc_slab_order()) are a rename:
    ObjDiff.found_renames, and the comparison is made again with it."""
    renames = dict(renames or {})
    inv = {new: old for old, new in renames.items()}
    a_path, b_path = Path(before_obj), Path(after_obj)
    d = ObjDiff(label or str(after_obj), renames=dict(renames),
                missing_before=not a_path.is_file(), missing_after=not b_path.is_file())
    if quick and a_path.is_file() and b_path.is_file():
        ea, eb = Elf(a_path), Elf(b_path)
        if ea.data == eb.data or (not renames and _quick_equal(ea, eb)):
            names = _elf_functions(ea)
            d.compared, d.present, d.quick = len(names), frozenset(names), True
            return d
    raw_a = fa = function_code(a_path) if a_path.is_file() else {}
    fb = function_code(b_path, inv) if b_path.is_file() else {}
    fa, fb, d.aliases = _fold_aliases(raw_a, fb)
    found = _same_code_renames(fa, fb) if detect_renames else {}
    if found:
        # compare again with them: the callers then call the old name
        d.found_renames = found
        renames.update(found)
        inv.update({new: old for old, new in found.items()})
        fb = function_code(b_path, inv)
        fa, fb, d.aliases = _fold_aliases(raw_a, fb)
    d.present = frozenset(fa) | frozenset(fb)
    for name in sorted(set(fa) | set(fb)):
        x, y = fa.get(name), fb.get(name)
        if x is None:
            d.added.append(FuncSize(_renamed(name, renames) or name, y.size))
        elif y is None:
            d.removed.append(FuncSize(name, x.size))
        else:
            d.compared += 1
            if x.digest != y.digest:
                d.changed.append(FuncChange(name, x.size, y.size, _excerpt(x.text, y.text, name),
                                            new_name=_renamed(name, renames)))
    gone = {r.function for r in d.removed}
    new = {a.function for a in d.added} | {n for n in fb if n not in fa}
    for c in d.changed:
        c.notes = _call_notes(c.function, fa[c.function].text, fb[c.function].text, gone, new)
    return d


_CALL = re.compile(r"^(?:call|jmp)\S*\s+<([^<>+]+)>", re.M)


def _call_notes(name: str, a: str, b: str, gone: set, new: set) -> list:
    """What a changed function calls that it did not, and the reverse: a
    static helper the compiler now inlines (its out-of-line copy gone), a
    new call (page_slab()'s compound_head())."""
    own = clone_base(name)

    def calls(t):
        return Counter(x for x in _CALL.findall(t)
                       if clone_base(x) != own and not x.startswith("["))
    ca, cb = calls(a), calls(b)
    notes = []
    for x in sorted(set(ca) | set(cb)):
        if not cb[x]:
            notes.append(f"{x} inlined (no out-of-line copy left)" if x in gone
                         else f"no longer calls {x}")
        elif not ca[x]:
            notes.append(f"calls {x}, now out of line" if x in new else f"now calls {x}")
        elif ca[x] != cb[x]:
            notes.append(f"{cb[x] - ca[x]:+d} call{'s' if abs(cb[x] - ca[x]) > 1 else ''} "
                         f"of {x}")
    return notes[:6]


def stable(obj_a, obj_b) -> bool:
    """Two builds of the same source: every function compares equal."""
    return compare(obj_a, obj_b).equal


def compare_objects(before_dir, after_dir, objects: Iterable[str],
                    renames: Optional[dict] = None) -> list:
    """compare() for each object (paths relative to both directories)."""
    return [compare(Path(before_dir) / o, Path(after_dir) / o, renames, label=o)
            for o in objects]


@dataclass
class PatchCode:
    """The object-code check of one patch: every object compared, and the
    changes judged against the patch's declared expectations."""
    patch: str
    diffs: list                       # ObjDiff
    unexpected: list                  # Finding
    missing: list                     # Finding
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No undeclared change and no stale declaration."""
        return not self.unexpected and not self.stale

    @property
    def stale(self) -> list:
        """Declared changes that no longer happen (expect.stale())."""
        return [f for f in self.missing if f.stale]

    @property
    def changed(self) -> list:
        return [d for d in self.diffs if not d.equal]

    def to_dict(self) -> dict:
        return {"patch": self.patch, "ok": self.ok, "seconds": round(self.seconds, 2),
                "objects": len(self.diffs), "objects_changed": len(self.changed),
                "diffs": [d.to_dict() for d in self.changed],
                "unexpected": [f.to_dict() for f in self.unexpected],
                "missing": [f.to_dict() for f in self.missing]}

    def text(self) -> str:
        n_fn = sum(len(d.changed) + len(d.added) + len(d.removed) for d in self.changed)
        out = [f"{self.patch + ': ' if self.patch else ''}{len(self.diffs)} objects compared, "
               f"{n_fn} functions with changed code in {len(self.changed)}; "
               f"{len(self.unexpected)} unexpected, {len(self.missing)} expected but missing"]
        for d in self.changed:
            out.extend("  " + ln for ln in d.lines())
        out.extend("  UNEXPECTED " + f.text() for f in self.unexpected)
        out.extend(("  STALE " if f.stale else "  missing ") + f.text() for f in self.missing)
        return "\n".join(out)


def check_patch(before_dir, after_dir, objects: Iterable[str], expectations=None,
                renames: Optional[dict] = None, patch: str = "") -> PatchCode:
    """Compare `objects` (relative paths) of a snapshot taken before a
    patch's build with O= after it, and judge the changes (see judge)."""
    t0 = time.monotonic()
    diffs = compare_objects(before_dir, after_dir, sorted(set(objects)), renames)
    unexpected, missing = judge(expectations, diffs, patch)
    return PatchCode(patch, diffs, unexpected, missing, time.monotonic() - t0)


# objects whose code is not the kernel's own functions compiled from source:
# the link's products (vmlinux.o, kallsyms), the boot code that wraps the
# compressed vmlinux, host programs and tools, module glue
NOT_COMPARED = ("scripts/", "tools/", "usr/", "arch/x86/boot/", ".tmp_", "vmlinux.o")


def list_objects(o_dir) -> list:
    """The kernel objects of a build directory O= (relative paths) whose
    functions the check compares: every .o but those of NOT_COMPARED and
    the modules' .mod.o glue."""
    o_dir = Path(o_dir)
    out = []
    for dirpath, dirnames, filenames in os.walk(o_dir):
        rel = os.path.relpath(dirpath, o_dir)
        rel = "" if rel == "." else rel + "/"
        if rel.startswith(NOT_COMPARED):
            dirnames[:] = []
            continue
        for f in filenames:
            path = rel + f
            if (f.endswith(".o") and not f.endswith(".mod.o")
                    and not path.startswith(NOT_COMPARED) and not f.startswith(".tmp_")):
                out.append(path)
    return sorted(out)


def snapshot(o_dir, objects: Optional[Iterable[str]], dest) -> list:
    """Copy the objects (paths relative to O=; None: list_objects(o_dir))
    that exist into dest, keeping their relative paths; returns the ones
    copied (a new object has no previous version)."""
    o_dir, dest = Path(o_dir), Path(dest)
    copied = []
    for rel in (list_objects(o_dir) if objects is None else objects):
        src = o_dir / rel
        if not src.is_file():
            continue
        dst = dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".tmp-objdiff")
        shutil.copyfile(src, tmp)
        shutil.copystat(src, tmp)
        os.replace(tmp, dst)
        copied.append(rel)
    return copied
