"""Readable conversions, at every patch: what a reviewer would send back.

In each function a patch changes (read in the patch's post-image, comments
and strings blanked):

* **page local**: slab_page() taken more than twice of one value of a
  slab, parameter or local: the uses after an assignment of the slab up to
  the next one, in the order of the text (a page local holds it:
  cocci/rules/slab_page_local.cocci for a parameter,
  slab_page_follow.cocci for a local the function assigns);
* **computed twice**: page_slab() or virt_to_slab() evaluated twice on the
  same value, that is with no assignment of its argument between the two
  uses (`x =`, `&x`, an iterator such as list_for_each_entry(x, ...))
  (cocci/rules/page_slab_local.cocci holds the slab in a local where the
  page is known not to be NULL);
* **round trip**: page_slab(slab_page(x)) or slab_page(page_slab(x)).

A finding names the patch, file, function and what to do.  The check is a
report: the series builds and runs the same with or without these, so the
verdict does not depend on it; it lists what is left for a reviewer.

    python3 -m verify.readability TREE [BASE]   a git tree, its commits after BASE
                                                (default: the tag slabconv-baseline)
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from regen.comments import functions
from regen.effects import strip_comments


TWICE = ("page_slab", "virt_to_slab")
ROUND_TRIP = re.compile(r"\b(?:page_slab\s*\(\s*slab_page|slab_page\s*\(\s*page_slab)\s*\(\s*(\w+)\s*\)\s*\)")


@dataclass
class Finding:
    patch: str                   # "0012 mm/slub: ..." (number and subject)
    file: str
    function: str
    kind: str                    # "page local", "computed twice", "round trip"
    text: str

    def __str__(self) -> str:
        return f"{self.patch}: {self.file}: {self.function}(): {self.kind}: {self.text}"


@dataclass
class ReadabilityResult:
    patches: int = 0
    functions: int = 0           # changed functions read
    findings: list = field(default_factory=list)
    read: list = field(default_factory=list)   # (patch, file, function) of each one read

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        head = (f"readability: {self.functions} changed functions in {self.patches} patches, "
                f"{len(self.findings)} finding(s)")
        kinds = Counter(f.kind for f in self.findings)
        if kinds:
            head += " (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")"
        return "\n".join([head] + [f"  {f}" for f in self.findings])

    def to_dict(self) -> dict:
        return {"ok": self.ok, "patches": self.patches, "functions": self.functions,
                "findings": [vars(f) for f in self.findings]}


def _assigns(body: str, name: str) -> list[int]:
    """Offsets in `body` where `name` gets a new value."""
    n = re.escape(name)
    pat = re.compile(rf"(?<![\w.>])(?:{n}\s*=(?!=)|&\s*{n}\b(?!\s*(?:->|\.|\[))|{n}\s*(?:\+\+|--)"
                     rf"|\w*for_each\w*\s*\(\s*{n}\b)")
    return [m.start() for m in pat.finditer(body)]


def most_per_value(uses: list[int], defs: list[int]) -> int:
    """The most uses one value gets: each use (an offset) counts for the
    last assignment before it in the text, or for the value the function
    was entered with."""
    per: Counter = Counter()
    for u in uses:
        per[max((d for d in defs if d < u), default=-1)] += 1
    return max(per.values(), default=0)


def check_function(name: str, code: str) -> list[tuple[str, str]]:
    """(kind, text) of the findings in one function's code (comments blanked)."""
    out = []
    brace = code.find("{")
    if brace < 0:
        return out
    body = code[brace:]
    uses: dict[str, list[int]] = {}
    for m in re.finditer(r"\bslab_page\s*\(\s*(\w+)\s*\)", body):
        uses.setdefault(m.group(1), []).append(m.start())
    for s, at in uses.items():
        n = most_per_value(at, _assigns(body, s))
        if n > 2:
            out.append(("page local", f"slab_page({s}) {n} times for one value of {s}: "
                                      f"hold it in a page local"))
    for helper in TWICE:
        seen: dict[str, int] = {}
        for m in re.finditer(rf"\b{helper}\s*\(\s*(\w+)\s*\)", body):
            arg = m.group(1)
            prev = seen.get(arg)
            if prev is not None and not any(prev < a < m.start() for a in _assigns(body, arg)):
                out.append(("computed twice", f"{helper}({arg}) again with {arg} unchanged: "
                                              f"hold it in a local"))
                break
            seen[arg] = m.start()
    for m in ROUND_TRIP.finditer(body):
        trip = re.sub(r"\s+", "", m.group(0))
        out.append(("round trip", f"{trip}: that is {m.group(1)}"))
    return out


def _git(tree: Path, *args: str) -> str:
    cp = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                        errors="replace")
    if cp.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {tree}: {cp.stderr.strip()}")
    return cp.stdout


def _show(tree: Path, rev: str, path: str) -> str:
    cp = subprocess.run(["git", "-C", str(tree), "show", f"{rev}:{path}"], capture_output=True,
                        text=True, errors="replace")
    return cp.stdout if cp.returncode == 0 else ""


def check(tree: Path, base: str = "slabconv-baseline", head: str = "HEAD") -> ReadabilityResult:
    res = ReadabilityResult()
    commits = _git(tree, "rev-list", "--reverse", f"{base}..{head}").split()
    for k, c in enumerate(commits, 1):
        subject = _git(tree, "log", "-1", "--format=%s", c).strip()
        patch = f"{k:04d} {subject}"
        res.patches += 1
        for f in _git(tree, "diff", "--name-only", "--no-renames", f"{c}^", c).split():
            if not f.endswith((".c", ".h")):
                continue
            old, new = _show(tree, f"{c}^", f), _show(tree, c, f)
            old_code, new_code = strip_comments(old), strip_comments(new)
            before = {n: old_code[s:e] for n, s, e, _ in functions(old)}
            for n, s, e, _ in functions(new):
                code = new_code[s:e]
                if before.get(n) == code:
                    continue
                res.functions += 1
                res.read.append((patch, f, n))
                res.findings += [Finding(patch, f, n, kind, text)
                                 for kind, text in check_function(n, code)]
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify.readability",
                                 description="readable conversions at every commit after BASE")
    ap.add_argument("tree", type=Path)
    ap.add_argument("base", nargs="?", default="slabconv-baseline")
    a = ap.parse_args(argv)
    r = check(a.tree, a.base)
    print(r.summary())
    return 0 if r.ok else 1


if __name__ == "__main__":
    sys.exit(main())
