"""A patch's code changes judged against its manifest entry's
expectations ([[entry.code]]): unexpected changes, expected ones missing."""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from base.log import SlabconvError
from .code import clone_base


@dataclass
class Finding:
    kind: str                 # "unexpected" | "missing"
    patch: str
    object: str
    function: str
    change: str = ""          # changed | added | removed (unexpected)
    old_size: int = 0
    new_size: int = 0
    why: str = ""             # the expectation's why (missing)
    reason: str = ""          # missing: "unchanged" | "absent"

    @property
    def delta(self) -> int:
        return self.new_size - self.old_size

    @property
    def stale(self) -> bool:
        """A declared change that no longer happens (see stale())."""
        return stale(self.to_dict())

    def to_dict(self) -> dict:
        return {"kind": self.kind, "patch": self.patch, "object": self.object,
                "function": self.function, "change": self.change, "old_size": self.old_size,
                "new_size": self.new_size, "delta": self.delta, "why": self.why,
                "reason": self.reason}

    def text(self) -> str:
        p = f"{self.patch}: " if self.patch else ""
        if self.kind == "unexpected":
            if self.change == "changed":
                what = f"code changed, {self.delta:+d} bytes ({self.old_size} -> {self.new_size})"
            elif self.change == "added":
                what = f"added ({self.new_size} bytes)"
            else:
                what = f"removed ({self.old_size} bytes)"
            return f"{p}{self.object}: {self.function}: {what}; not declared by the patch"
        where = f"{self.object}: " if self.object else ""
        how = ("its code is the same" if self.reason == "unchanged"
               else "no compared object has it")
        return (f"{p}{where}{self.function}: expected a code change, but {how} "
                f"(declared: {self.why})")


def stale(finding: dict) -> bool:
    """A missing finding (Finding.to_dict()) that fails the check: the
    declared change no longer happens.  The function was compared and its
    code is the same ("unchanged"), or the objects the expectation names
    were compared and none has it ("absent" with an object).  An
    expectation that names no object and whose function no compared object
    has is not judged in this configuration: the object that has it may not
    be built here (mm/slub.o under SLAB)."""
    return finding.get("kind") == "missing" and (
        finding.get("reason") == "unchanged" or bool(finding.get("object")))


def applicable(expectations, dotconfig) -> list:
    """The expectations that hold in the configuration of `dotconfig` (a
    .config file): those whose `requires` symbols it sets (=y or =m);
    an expectation without `requires` holds everywhere.  None: None."""
    if expectations is None:
        return None
    exps = _expects(expectations)
    if not any(getattr(e, "requires", None) for e in exps):
        return exps
    try:
        text = Path(dotconfig).read_text()
    except OSError:
        text = ""
    on = set(re.findall(r"^CONFIG_([A-Za-z0-9_]+)=[ym]$", text, re.M))
    return [e for e in exps if all(r in on for r in (getattr(e, "requires", None) or []))]


def _fn_matches(pattern: str, name: str) -> bool:
    return (name == pattern or clone_base(name) == pattern
            or fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(clone_base(name),
                                                                         pattern))


def _obj_matches(patterns, obj: str) -> bool:
    if not patterns:
        return True
    for p in patterns:
        p = p[:-2] + ".o" if p.endswith(".c") else p
        if obj == p or obj.endswith("/" + p) or fnmatch.fnmatchcase(obj, p):
            return True
    return False


def _expects(entry_expectations) -> list:
    if entry_expectations is None:
        return []
    if hasattr(entry_expectations, "code"):          # a manifest Entry
        return list(entry_expectations.code)
    return list(entry_expectations)


def judge(entry_expectations, diffs: Iterable, patch: str = ""):
    """(unexpected, missing) [Finding] for one patch.

    entry_expectations: the manifest entry's code expectations (each with
    `functions`, `objects`, `why`: regen.manifest.CodeExpect), the Entry
    itself, or None/[] for a type-only patch.  A function whose code changed,
    appeared or disappeared is unexpected unless an expectation names it
    (a name, a glob, or the base of a GCC clone: `foo` covers `foo.cold`,
    `foo.isra.0`) in one of its objects (all if none are named).  An
    expected function that changed nowhere is missing: reason "unchanged"
    (compared, same code) or "absent" (in none of the compared objects:
    inlined everywhere); an expectation that names objects none of which was
    compared (not built in this configuration) is not judged.  A missing
    change fails the check when it is stale (`stale()`: the declaration no
    longer holds); one in no compared object, by an expectation that names
    none, is a report."""
    exps = _expects(entry_expectations)
    diffs = list(diffs)
    unexpected, missing = [], []
    hit = set()
    for d in diffs:
        items = ([("changed", c.function, c.old_size, c.new_size) for c in d.changed]
                 + [("added", a.function, 0, a.size) for a in d.added]
                 + [("removed", r.function, r.size, 0) for r in d.removed])
        for change, fn, old, new in items:
            ok = False
            for i, e in enumerate(exps):
                if not _obj_matches(list(getattr(e, "objects", []) or []), d.object):
                    continue
                for j, pat in enumerate(e.functions):
                    if _fn_matches(pat, fn):
                        ok = True
                        hit.add((i, j))
            if not ok:
                unexpected.append(Finding("unexpected", patch, d.object, fn, change, old, new))
    for i, e in enumerate(exps):
        objs = list(getattr(e, "objects", []) or [])
        if objs and not any(_obj_matches(objs, d.object) for d in diffs):
            continue        # none of its objects was rebuilt here (another configuration)
        for j, pat in enumerate(e.functions):
            if (i, j) in hit:
                continue
            seen = [d.object for d in diffs if _obj_matches(objs, d.object)
                    and (any(_fn_matches(pat, n) for n in d.present) or not d.present)]
            missing.append(Finding("missing", patch, ", ".join(seen) or ", ".join(objs), pat,
                                   why=getattr(e, "why", ""),
                                   reason="unchanged" if seen else "absent"))
    return unexpected, missing


def _norm_subject(s: str) -> str:
    s = re.sub(r"^\s*\[[^\]]*\]\s*", "", s or "")
    return " ".join(s.split())


def entries_by_subject(series) -> dict:
    """{subject: Entry} of the manifest entries that make a patch (not the
    skipped ones).  A patch is matched to its entry by its subject: regen
    writes the entry's `subject` as the commit subject, and `git am` keeps
    it (bisect's PatchResult.subject); a `[PATCH n/m]` prefix and runs of
    white space are ignored.  Two entries with the same subject are an
    error: the mapping would be ambiguous."""
    out = {}
    for e in series.entries:
        if getattr(e, "skip", ""):
            continue
        k = _norm_subject(e.subject)
        if k in out:
            raise SlabconvError(f"manifest: two entries have the subject '{e.subject}' "
                                f"({out[k].id}, {e.id})", exit_code=2)
        out[k] = e
    return out


def entry_for_subject(series, subject: str, _index: Optional[dict] = None):
    """The manifest entry whose patch has this subject, or None (a patch not
    made from the manifest: judge it as type-only or not at all)."""
    return (_index if _index is not None else entries_by_subject(series)).get(
        _norm_subject(subject))


def renames_of(entry) -> dict:
    """{old: new} function renames an entry makes (its rename_fn steps)."""
    out = {}
    for st in getattr(entry, "steps", []) or []:
        if st.path.endswith("rename_fn.cocci") and "from" in st.defines and "to" in st.defines:
            out[st.defines["from"]] = st.defines["to"]
    return out
