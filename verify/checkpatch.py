"""checkpatch: the kernel's own scripts/checkpatch.pl on every patch of the series.

    from verify import checkpatch
    r = checkpatch.check(baseline_tree, patches)      # paths of the .patch files
    r.ok, r.patches[0].errors, r.patches[0].warnings, r.summary(), r.to_dict()

The script is the baseline tree's (the kernel the series is for, with its
spelling list, MAINTAINERS and typedef lists), run with --root naming that tree from a directory of the cache (never in the tree: checkpatch writes a cache file into its working directory)
with --show-types and without colour, one patch at a time (the cover letter,
0000-*.patch, is not a patch).  Gate: any ERROR fails; WARNINGs (and CHECKs,
which checkpatch only reports with --strict) are listed per patch.

checkpatch is run without git (GIT_DIR points nowhere): a file it is given
that git tracks in the current directory's repository would otherwise be
checked as a source file, not as a patch, and commit ids in a message would
be looked up in whatever repository the tree is.

"Inherited" findings: a series generated from existing code changes lines
that already broke the style (a call whose argument changed keeps its missing
space after a comma).  checkpatch reports only added lines, so for each patch
that has findings in its hunks the patch is also checked reversed (its
removed lines as added ones, line numbers unchanged); a finding whose type
and message checkpatch also reports on a removed line of the same hunk is
marked inherited, with that line of the baseline as the evidence.  Inherited
findings still count: the gate does not excuse them, the lead decides.

Command line: `python3 -m verify.checkpatch --tree BASELINE PATCH_OR_DIR...
[--strict] [--json FILE]`; `./slabconv checkpatch` checks the
committed series against the packaged tree.  Exit 0 (no ERROR), 1 (an ERROR),
2 (no checkpatch.pl in the tree, no patches), 3 (perl or a module it needs is
missing).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from base import atomic, paths
from base.log import guarded, info, SlabconvError
from base.proc import require_tool

from .tree import identity as tree_identity


SCRIPT = "scripts/checkpatch.pl"
LEVELS = ("ERROR", "WARNING", "CHECK")
PERL_MODULES = ("POSIX", "File::Basename", "Cwd", "Term::ANSIColor", "Encode", "Getopt::Long")
NO_GIT = "/nonexistent/slabconv-checkpatch-no-git"

_HEAD = re.compile(r"^(?P<level>ERROR|WARNING|CHECK):(?:(?P<type>[A-Z0-9_]+):)?\s?(?P<msg>.*)$")
_WHERE = re.compile(r"^#(?P<n>\d+):\s?(?:FILE:\s+(?P<file>\S+?):(?P<line>\d+):)?")
_TOTAL = re.compile(r"^total: (?P<errors>\d+) errors, (?P<warnings>\d+) warnings, "
                    r"(?:(?P<checks>\d+) checks, )?(?P<lines>\d+) lines checked")
_HUNK = re.compile(r"^@@ -(?P<a>\d+)(?:,(?P<b>\d+))? \+(?P<c>\d+)(?:,(?P<d>\d+))? @@(?P<rest>.*)$")
_CTX = re.compile(r"\s*\(ctx:[^)]*\)")


@dataclass
class Finding:
    level: str                  # ERROR | WARNING | CHECK
    type: str                   # checkpatch's type (--show-types), e.g. TRAILING_WHITESPACE
    message: str
    patch_line: int = 0         # checkpatch's #N: the line in the patch (0: none given)
    file: str = ""              # the source file and line (FILE:), "" in the commit message
    line: int = 0
    excerpt: list = field(default_factory=list)     # the lines checkpatch quoted
    inherited: Optional[str] = None     # the baseline line with the same complaint

    def where(self) -> str:
        if self.file:
            return f"{self.file}:{self.line}"
        return f"patch line {self.patch_line}" if self.patch_line else "patch"

    def describe(self) -> str:
        s = f"{self.level}:{self.type} {self.where()}: {self.message}"
        if self.inherited:
            s += f" [inherited: {self.inherited}]"
        return s


def parse_output(text: str) -> tuple:
    """(findings, totals) of one checkpatch run (non-terse, --show-types);
    totals is None when the run printed no `total:` line."""
    findings, totals = [], None
    cur = None
    body = []

    def close():
        if cur is None:
            return
        while body and not body[-1].strip():
            body.pop()
        msg_extra, seen_where = [], False
        for ln in body:
            m = _WHERE.match(ln)
            if not seen_where and m:
                seen_where = True
                cur.patch_line = int(m.group("n"))
                if m.group("file"):
                    cur.file, cur.line = m.group("file"), int(m.group("line"))
                continue
            (cur.excerpt if seen_where else msg_extra).append(ln)
        if msg_extra and not seen_where:
            cur.excerpt, msg_extra = msg_extra, []
        if msg_extra:
            cur.message = "\n".join([cur.message] + msg_extra)
        findings.append(cur)

    for ln in text.splitlines():
        m = _HEAD.match(ln)
        if m:
            close()
            cur = Finding(m.group("level"), m.group("type") or "", m.group("msg").strip())
            body = []
            continue
        m = _TOTAL.match(ln)
        if m:
            close()
            cur = None
            totals = {k: int(v or 0) for k, v in m.groupdict().items()}
            continue
        if cur is not None:
            if not ln.strip() and (not body or not body[-1].strip()):
                continue
            body.append(ln)
    close()
    return findings, totals


def hunk_ranges(lines: list) -> list:
    """[(first, last)] 1-based patch line numbers of each hunk's body,
    counted with the hunk header's line counts (so the `-- ` signature
    line after the last hunk is not taken for a removed line)."""
    out = []
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            i += 1
            continue
        old_n = int(m.group("b") if m.group("b") is not None else 1)
        new_n = int(m.group("d") if m.group("d") is not None else 1)
        j = i + 1
        while j < len(lines) and (old_n > 0 or new_n > 0):
            c = lines[j][:1]
            if c == "-":
                old_n -= 1
            elif c == "+":
                new_n -= 1
            elif c == "\\":
                pass
            else:                                       # context (" " or an empty line)
                old_n -= 1
                new_n -= 1
            j += 1
        out.append((i + 2, j))                          # body: lines i+2 .. j (1-based)
        i = j
    return out


def reverse_patch(text: str) -> str:
    """The patch undone, line for line: removed lines become added ones and
    the other way round, hunk headers and the ---/+++ names swapped.  Line
    numbers stay the same, so a finding's #N in either run is the same line."""
    lines = text.split("\n")
    body = set()
    for a, b in hunk_ranges(lines):
        body.update(range(a, b + 1))
    out = []
    for n, ln in enumerate(lines, 1):
        if n in body:
            if ln.startswith("+"):
                ln = "-" + ln[1:]
            elif ln.startswith("-"):
                ln = "+" + ln[1:]
        else:
            m = _HUNK.match(ln)
            if m:
                old = m.group("a") + (f",{m.group('b')}" if m.group("b") is not None else "")
                new = m.group("c") + (f",{m.group('d')}" if m.group("d") is not None else "")
                ln = f"@@ -{new} +{old} @@{m.group('rest')}"
            elif ln.startswith("--- ") and n < len(lines) and lines[n].startswith("+++ "):
                ln = "--- " + lines[n][4:]
            elif ln.startswith("+++ ") and n > 1 and lines[n - 2].startswith("--- "):
                ln = "+++ " + lines[n - 2][4:]
        out.append(ln)
    return "\n".join(out)


def mark_inherited(findings: list, reversed_findings: list, patch_text: str) -> int:
    """Mark each finding in a hunk whose type and message the reversed run
    reports on a removed line of the same hunk.  Returns how many."""
    lines = patch_text.split("\n")
    ranges = hunk_ranges(lines)

    def hunk_of(n):
        for a, b in ranges:
            if a <= n <= b:
                return (a, b)
        return None

    def key(f):
        return (f.type, _CTX.sub("", f.message.splitlines()[0] if f.message else ""))

    n_marked = 0
    for f in findings:
        h = hunk_of(f.patch_line) if f.patch_line else None
        if h is None:
            continue
        removed = {ln[1:] for ln in lines[h[0] - 1:h[1]] if ln.startswith("-")}
        for r in reversed_findings:
            if key(r) != key(f) or hunk_of(r.patch_line) != h:
                continue
            # The reversed run quotes the lines it complains about; the ones
            # it adds are the lines this patch removes.  (checkpatch's #N of
            # a multi-line statement may name a neighbouring line.)
            olds = [x[1:] for x in r.excerpt if x.startswith("+") and x[1:] in removed]
            if not olds and lines[r.patch_line - 1].startswith("-"):
                olds = [lines[r.patch_line - 1][1:]]
            if not olds:
                continue                    # not on a line the patch removes
            old = olds[0].strip()
            f.inherited = f"{r.file}:{r.line} before the patch: {old}" if r.file else old
            n_marked += 1
            break
    return n_marked


@dataclass
class PatchResult:
    patch: str                  # file name
    subject: str
    findings: list
    totals: dict
    seconds: float = 0.0

    def of(self, level: str) -> list:
        return [f for f in self.findings if f.level == level]

    @property
    def errors(self) -> list:
        return self.of("ERROR")

    @property
    def warnings(self) -> list:
        return self.of("WARNING")

    @property
    def checks(self) -> list:
        return self.of("CHECK")

    def to_dict(self) -> dict:
        return {"patch": self.patch, "subject": self.subject, "totals": self.totals,
                "seconds": round(self.seconds, 2),
                "errors": [asdict(f) for f in self.errors],
                "warnings": [asdict(f) for f in self.warnings],
                "checks": [asdict(f) for f in self.checks]}


@dataclass
class CheckpatchResult:
    ok: bool
    tree: Path
    script: Path
    patches: list               # PatchResult
    strict: bool = False
    seconds: float = 0.0
    report: Optional[Path] = None

    def count(self, level: str) -> int:
        return sum(len(p.of(level)) for p in self.patches)

    @property
    def failed(self) -> list:
        return [p for p in self.patches if p.errors]

    @property
    def problems(self) -> list:
        return [f"{p.patch}: {len(p.errors)} checkpatch error(s): "
                + "; ".join(f"{f.type} {f.where()}" for f in p.errors[:3])
                + (" ..." if len(p.errors) > 3 else "") for p in self.failed]

    def by_type(self, level: str) -> dict:
        """type -> number of findings of that level (inherited ones in brackets)."""
        out = {}
        for p in self.patches:
            for f in p.of(level):
                n, inh = out.get(f.type, (0, 0))
                out[f.type] = (n + 1, inh + (1 if f.inherited else 0))
        return dict(sorted(out.items(), key=lambda kv: (-kv[1][0], kv[0])))

    def summary(self, per_finding: bool = True) -> str:
        L = [f"checkpatch ({self.script}{', --strict' if self.strict else ''}): "
             f"{len(self.patches)} patches"]
        for p in self.patches:
            e, w, c = len(p.errors), len(p.warnings), len(p.checks)
            if not (e or w or c):
                L.append(f"  {p.patch}: clean")
                continue
            L.append(f"  {p.patch}: {e} error(s), {w} warning(s)" + (f", {c} check(s)" if c else ""))
            if per_finding:
                for f in p.findings:
                    L.append(f"    {f.describe()}")
        for level in LEVELS:
            t = self.by_type(level)
            if t:
                L.append(f"  {level}s by type: " + ", ".join(
                    f"{k} {n}" + (f" ({i} inherited)" if i else "") for k, (n, i) in t.items()))
        inh = sum(1 for p in self.patches for f in p.findings if f.inherited)
        L.append(f"checkpatch: {'OK' if self.ok else 'FAIL'}: {self.count('ERROR')} error(s) in "
                 f"{len(self.failed)} patch(es), {self.count('WARNING')} warning(s), "
                 f"{self.count('CHECK')} check(s); {inh} finding(s) inherited from the baseline "
                 f"({self.seconds:.1f}s)" + (f"; report {self.report}" if self.report else ""))
        return "\n".join(L)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "tree": str(self.tree), "script": str(self.script),
                "strict": self.strict, "seconds": round(self.seconds, 1),
                "counts": {lv.lower(): self.count(lv) for lv in LEVELS},
                "failed": [p.patch for p in self.failed], "problems": self.problems,
                "patches": [p.to_dict() for p in self.patches]}


def require_perl() -> str:
    """perl with the modules checkpatch.pl uses; a missing one is exit 3."""
    perl = require_tool("perl", "perl")
    cp = subprocess.run([perl, *[f"-M{m}" for m in PERL_MODULES], "-e", "1"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if cp.returncode != 0:
        raise SlabconvError("perl cannot load a module checkpatch.pl needs; install the "
                            f"Debian package 'perl' (perl-base is not enough):\n{cp.stdout.strip()}",
                            exit_code=3)
    return perl


def find_script(tree) -> Path:
    tree = Path(tree).resolve()
    script = tree / SCRIPT
    if not script.is_file():
        raise SlabconvError(f"{tree} has no {SCRIPT}: not a kernel tree?", exit_code=2)
    return script


def series_patches(path) -> list:
    """The patches of a series directory (NNNN-*.patch without the cover
    letter), or the given files."""
    path = Path(path)
    if path.is_dir():
        ps = sorted(p for p in path.glob("[0-9][0-9][0-9][0-9]-*.patch")
                    if not p.name.startswith("0000-"))
        if not ps:
            raise SlabconvError(f"no patches in {path}", exit_code=2)
        return ps
    if not path.is_file():
        raise SlabconvError(f"no such patch: {path}", exit_code=2)
    return [path]


def _subject(text: str) -> str:
    m = re.search(r"^Subject: (?:\[[^\]]*\] )?(.*(?:\n [^\n]*)*)", text, re.M)
    return " ".join(m.group(1).split()) if m else ""


def _scratch_cwd() -> Path:
    """checkpatch.pl's working directory: not the tree (--root names it).
    Outside a git repository checkpatch writes its CamelCase cache
    (.checkpatch-camelcase.date.*) into the current directory, which must
    not be the pristine source tree; here the cache is kept between runs."""
    return paths.cache_dir("checkpatch")


def _stored(key: str | None) -> Path | None:
    """Where checkpatch's output for `key` is kept (None: no key, not kept)."""
    return None if key is None else paths.cache_dir("checkpatch", "runs") / f"{key}.out"


def run_key(script: Path, tree_id: str | None, text: str, strict: bool) -> str | None:
    """What one run's output depends on: checkpatch.pl itself, the tree it
    reads (--root: spelling list, typedefs, the headers of the CamelCase
    check; `tree_id` is verify/tree.py's identity of it), the options and
    the patch.  None when the tree has no identity: such runs are not kept."""
    if tree_id is None:
        return None
    h = hashlib.sha256()
    for part in (script.read_bytes(), tree_id.encode(), b"strict" if strict else b"",
                 text.encode(errors="replace")):
        h.update(part + b"\0")
    return h.hexdigest()


def run_checkpatch(perl: str, script: Path, tree: Path, text: str, name: str,
                   strict: bool = False, tree_id: str | None = None) -> tuple:
    """One checkpatch run on `text` (fed on stdin): (findings, totals).  With
    `tree_id`, the output of a run with the same inputs (run_key()) is read
    back instead of running checkpatch again."""
    stored = _stored(run_key(script, tree_id, text, strict))
    if stored is not None and stored.is_file():
        findings, totals = parse_output(stored.read_text())
        if totals is not None:
            return findings, totals
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_DIR"] = NO_GIT
    env["LC_ALL"] = "C.UTF-8"
    cmd = ["nice", "-n", "10", perl, str(script), "--color=never", "--show-types",
           "--root", str(tree)] + (["--strict"] if strict else []) + ["-"]
    cp = subprocess.run(cmd, input=text, cwd=_scratch_cwd(), env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, errors="replace")
    findings, totals = parse_output(cp.stdout)
    if totals is None:
        err = (cp.stderr or cp.stdout).strip()
        code = 3 if "Can't locate" in err else 1
        raise SlabconvError(f"checkpatch.pl did not check {name} (exit {cp.returncode}):\n"
                            f"{err[-2000:]}", exit_code=code)
    got = {lv: sum(1 for f in findings if f.level == lv) for lv in LEVELS}
    want = {"ERROR": totals["errors"], "WARNING": totals["warnings"], "CHECK": totals["checks"]}
    if got["ERROR"] != want["ERROR"] or got["WARNING"] != want["WARNING"] or \
            (totals["checks"] and got["CHECK"] != want["CHECK"]):
        raise SlabconvError(f"checkpatch output for {name} not understood: parsed {got}, "
                            f"checkpatch counted {want}")
    if stored is not None:
        atomic.write_text(stored, cp.stdout)
    return findings, totals


def check_one(perl: str, script: Path, tree: Path, patch: Path, strict: bool = False,
              inherited: bool = True, tree_id: str | None = None) -> PatchResult:
    t0 = time.monotonic()
    text = patch.read_text(errors="replace")
    findings, totals = run_checkpatch(perl, script, tree, text, patch.name, strict, tree_id)
    if inherited and any(f.file for f in findings):
        rev, _ = run_checkpatch(perl, script, tree, reverse_patch(text),
                                f"{patch.name} (reversed)", strict, tree_id)
        mark_inherited(findings, rev, text)
    return PatchResult(patch=patch.name, subject=_subject(text), findings=findings,
                       totals=totals, seconds=time.monotonic() - t0)


def check(tree, patches, *, strict: bool = False, jobs: int = 2,
          inherited: bool = True) -> CheckpatchResult:
    """Run the tree's checkpatch.pl on each patch (in order in the result)."""
    t0 = time.monotonic()
    tree = Path(tree).resolve()
    script = find_script(tree)
    perl = require_perl()
    patches = [Path(p).resolve() for p in patches]
    if not patches:
        raise SlabconvError("no patches to check", exit_code=2)
    info("checkpatch", f"{script} on {len(patches)} patch(es)")
    tree_id = tree_identity(tree)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        results = list(ex.map(lambda p: check_one(perl, script, tree, p, strict, inherited,
                                                  tree_id), patches))
    return CheckpatchResult(ok=not any(r.errors for r in results), tree=tree, script=script,
                            patches=results, strict=strict, seconds=time.monotonic() - t0)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options `python3 -m verify.checkpatch` and `slabconv checkpatch` share."""
    p.add_argument("--strict", action="store_true",
                   help="checkpatch --strict (CHECKs too; listed, they do not fail)")
    p.add_argument("--json", type=Path, help="write the JSON report here")
    p.add_argument("--brief", action="store_true", help="counts per patch, not every finding")
    p.add_argument("-j", "--jobs", type=int, default=2)


def run_and_report(tree, patches_or_dir, args, default_json: Optional[Path] = None) -> int:
    items = patches_or_dir if isinstance(patches_or_dir, (list, tuple)) else [patches_or_dir]
    patches = [p for x in items for p in series_patches(x)]
    r = check(tree, patches, strict=args.strict, jobs=args.jobs)
    out = args.json or default_json
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        r.report = out
        atomic.write_text(out, json.dumps(r.to_dict(), indent=1) + "\n")
    print(r.summary(per_finding=not args.brief))
    return 0 if r.ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify.checkpatch",
                                 description="Run a kernel tree's scripts/checkpatch.pl on "
                                             "patches; fail on an ERROR (see verify/README.md).")
    ap.add_argument("--tree", required=True, type=Path,
                    help="the kernel tree whose checkpatch.pl is run (the baseline)")
    ap.add_argument("patches", nargs="+", type=Path,
                    help="patch files or series directories (NNNN-*.patch, cover letter left out)")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return guarded(lambda: run_and_report(args.tree, list(args.patches), args))


if __name__ == "__main__":
    sys.exit(main())
