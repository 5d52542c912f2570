"""The NULL check: page_slab() and the helpers that dereference their argument, on a value that can be NULL, at every patch.

    from verify import nullcheck
    r = nullcheck.check_series(repo, base="slabconv-baseline", head="HEAD")
    r.ok, r.findings, r.problems(), r.summary_text(), r.to_dict()

cocci/rules/slab_null.cocci (report mode, --no-includes) reports a
page_slab(), compound_head(), slab_address(), slab_nid(), slab_order(),
slab_pgdat(), slab_size(), slab_test_*()/slab_set_*()/slab_clear_*() or
slab_page(x)->m whose argument can be NULL: the call of a function that
can return NULL, a variable assigned from one and not tested, or a
variable the function tests against NULL after the use.  A build does not
see this (page_slab() of a NULL page compiles) and a boot sees it only if
the allocation fails.

Every commit of base..head (one per patch) is checked on the C files and
headers it changes, each whole at that commit's content (the functions
that return NULL are found in the same file).  A finding is the patch's if
the file before the patch does not have it (compared on file, text and
reason without line numbers): code the series did not change is not
blamed on it, and a hazard a patch adds is named once, by that patch.
spatch failing (an exit code, an exception, a timeout) fails the check
with spatch's message, and so does code of a changed file that spatch
cannot parse and could parse before the patch (code the rule would not
see).  Results are cached per rule, spatch version, path and content in
$SLABCONV_CACHE/nullcheck/, so a rerun on an unchanged series runs no
spatch.

Command line: `python3 -m verify.nullcheck --repo DIR [--base REF]
[--head REF] [--json FILE]`: exit 0, 1 on a finding or a spatch failure,
2 for a repository or range that is not a linear series.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from base import paths
from base.cliutil import write_json
from base.log import guarded, info, SlabconvError
from regen.spatch import base_command, spatch_version
from .bisect import BASE_REF, Repo


RULE = paths.COCCI / "rules" / "slab_null.cocci"
SUFFIXES = (".c", ".h")
CACHE_VERSION = "1"

_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<text>.+?) on a value that can be NULL: "
                   r"(?P<why>.+)$")
# spatch's own failures; the code it echoes around a parse error (bad:,
# BAD:) may say anything and is not looked at
_FAILED = re.compile(r"(Fatal error|EXN|[Ee]xception|Timeout at|timeout \(we abort\)|"
                     r"Traceback|Error in Python|Segmentation fault|Out of memory)")


def _spatch_failed(rc: int, err: str) -> bool:
    return rc != 0 or any(_FAILED.search(line) for line in err.splitlines()
                          if not line.startswith(("bad:", "BAD:")))


@dataclass(frozen=True, order=True)
class Finding:
    patch: int            # 1-based number of the patch in the series
    subject: str
    commit: str
    file: str
    line: int
    text: str             # helper(expr)
    why: str
    gone_at: int = 0      # the later patch whose change to the file removes it; 0: still at head

    def report_line(self) -> str:
        return f"{self.file}:{self.line}: {self.text} on a value that can be NULL: {self.why}"

    def describe(self) -> str:
        return f"patch {self.patch:04d} ({self.subject}): {self.report_line()}"

    def fate(self) -> str:
        return f"gone at patch {self.gone_at:04d}" if self.gone_at else "still there at the last patch"

    def key(self) -> tuple:
        """What stays the same when code moves: file, text, reason without line numbers."""
        return (self.file, self.text, _unlined(self.why))


def _unlined(s: str) -> str:
    return re.sub(r"(\.[ch]):\d+", r"\1", s)


@dataclass
class Scan:
    """The rule's result on one version of one file."""
    file: str
    findings: list      # [(line, text, why)]
    unparsed: list      # code lines spatch could not parse (its BAD: lines)
    seconds: float = 0.0
    cached: bool = False


@dataclass
class PatchCheck:
    index: int
    commit: str
    subject: str
    files: list = field(default_factory=list)      # the C files and headers checked
    findings: list = field(default_factory=list)   # Finding: new in this patch
    inherited: int = 0                             # findings the files had before the patch
    errors: list = field(default_factory=list)     # spatch failures, code it could not parse
    seconds: float = 0.0
    spatch_runs: int = 0                           # not from the cache

    @property
    def ok(self) -> bool:
        return not self.findings and not self.errors


@dataclass
class NullcheckResult:
    repo: Path
    base: str
    head: str
    rule: str                                      # rule digest
    patches: list = field(default_factory=list)    # PatchCheck
    baseline: list = field(default_factory=list)   # Finding: in code the baseline has (patch 0)
    seconds: float = 0.0

    @property
    def findings(self) -> list:
        return [f for p in self.patches for f in p.findings]

    @property
    def errors(self) -> list:
        return [(p, e) for p in self.patches for e in p.errors]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.patches)

    def problems(self) -> list:
        """One line per finding (patch, subject, file:line, text) and per spatch failure."""
        out = [f.describe() for f in self.findings]
        out += [f"patch {p.index:04d} ({p.subject}): spatch failed: {e.splitlines()[0]}"
                for p, e in self.errors]
        return out

    def counts(self) -> dict:
        return {"patches": len(self.patches),
                "files": sum(len(p.files) for p in self.patches),
                "findings": len(self.findings), "errors": len(self.errors),
                "inherited": sum(p.inherited for p in self.patches),
                "spatch_runs": sum(p.spatch_runs for p in self.patches)}

    def summary_text(self) -> str:
        c = self.counts()
        L = [f"nullcheck: {'OK' if self.ok else 'FAIL'}: {c['findings']} finding(s) of "
             f"{RULE.name} added by a patch, {c['errors']} spatch failure(s); "
             f"{c['patches']} patches, {c['files']} changed C file(s)/header(s) checked "
             f"({self.seconds:.1f}s, {c['spatch_runs']} spatch run(s), the rest cached)"]
        for p in self.patches:
            if p.ok:
                continue
            L.append(f"  patch {p.index:04d} {p.subject}:")
            L += [f"    {f.report_line()} ({f.fate()})" for f in p.findings]
            L += [f"    spatch failed: {e}" for e in p.errors]
        if self.baseline:
            L.append(f"  in the baseline's code, not the series' (not failing): "
                     f"{len(self.baseline)}")
            L += [f"    {f.report_line()}" for f in self.baseline]
        return "\n".join(L)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok, "repo": str(self.repo), "base": self.base, "head": self.head,
            "rule": RULE.name, "rule_digest": self.rule, "seconds": round(self.seconds, 1),
            "counts": self.counts(), "problems": self.problems(),
            "patches": [{"index": p.index, "commit": p.commit, "subject": p.subject,
                         "files": p.files, "ok": p.ok,
                         "findings": [asdict(f) for f in p.findings],
                         "inherited": p.inherited, "errors": p.errors,
                         "seconds": round(p.seconds, 2)} for p in self.patches],
            "baseline": [asdict(f) for f in self.baseline],
        }


# ---- one file version ----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _spatch_version() -> str:
    return spatch_version()


def rule_digest() -> str:
    """The rule's text and spatch's version: what a cached result depends on besides the file."""
    h = hashlib.sha256(RULE.read_bytes() + b"\0" + _spatch_version().encode() + b"\0"
                       + CACHE_VERSION.encode())
    return h.hexdigest()[:16]


def parse_output(out: str) -> list:
    """The rule's report, [(file, line, text, why)]."""
    found = []
    for line in out.splitlines():
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise SlabconvError(f"{RULE.name} printed a line that is not a finding: {line!r}")
        found.append((m["file"], int(m["line"]), m["text"], m["why"]))
    return found


def parse_unparsed(err: str) -> list:
    """The code lines spatch could not parse.  --parse-error-msg prints each
    failure as the region it gave up on (`bad: ` lines) ending with the line
    it failed on (`BAD:!!!!! `).  A failure in a macro definition (the line
    is a `#define` or continues one) is left out: the rule does not look
    into macro bodies (page_slab()'s own _Generic definition is one)."""
    out, region = [], []
    for line in err.splitlines():
        if line.startswith("badcount:"):
            region = []
        elif line.startswith("bad:"):
            region.append(line[4:].lstrip(" "))
        elif line.startswith("BAD:"):
            text = re.sub(r"^BAD:!+ ?", "", line)
            j = len(region)
            while j > 0 and region[j - 1].rstrip().endswith("\\"):
                j -= 1
            first = region[j] if j < len(region) else text
            if not first.lstrip().startswith("#"):
                out.append(" ".join(text.split()))
            region = []
    return out


def run_rule(path: str, content: bytes, digest: str | None = None) -> Scan:
    """The rule on `content` as file `path` (relative, as the report names it);
    cached.  Raises SlabconvError with spatch's message when spatch fails."""
    digest = digest or rule_digest()
    key = hashlib.sha256(path.encode() + b"\0" + content).hexdigest()
    cfile = paths.cache_dir("nullcheck", digest) / f"{key}.json"
    try:
        data = json.loads(cfile.read_text())
        return Scan(path, [tuple(f) for f in data["findings"]], data["unparsed"],
                    data.get("seconds", 0.0), cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nullcheck-") as tmp:
        f = Path(tmp) / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content)
        cmd = [*base_command(), "--sp-file", str(RULE), "--no-includes", "--quiet",
               "--parse-error-msg", "-D", "report", "--timeout", "120", path]
        cp = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, errors="replace",
                            stdin=subprocess.DEVNULL)
    err = cp.stderr or ""
    if _spatch_failed(cp.returncode, err):
        lines = [l for l in err.splitlines() if l.strip() and not l.startswith(
            ("Warning: PARSING: type defaults", "init_defs_builtins", "HANDLING:", "bad:"))]
        raise SlabconvError(f"spatch exit {cp.returncode} on {path}: "
                            + ("\n".join(lines[-12:]) or cp.stdout.strip()[-2000:]))
    findings = [(line, text, why) for fname, line, text, why in parse_output(cp.stdout)]
    scan = Scan(path, findings, parse_unparsed(err), time.monotonic() - t0)
    tmpf = cfile.with_suffix(f".tmp{os.getpid()}")
    tmpf.write_text(json.dumps({"file": path, "findings": scan.findings,
                                "unparsed": scan.unparsed,
                                "seconds": round(scan.seconds, 2)}) + "\n")
    os.replace(tmpf, cfile)
    return scan


# ---- the series -------------------------------------------------------------------

def _blobs(repo, commit: str, files: list) -> dict:
    """path -> blob id at `commit` for those of `files` it has."""
    out = {}
    if files:
        for rec in repo.git("ls-tree", "-z", commit, "--", *files).split("\0"):
            if rec:
                meta, _, p = rec.partition("\t")
                kind, sha = meta.split()[1:3]
                if kind == "blob":
                    out[p] = sha
    return out


def _new(after: list, before: list) -> tuple[list, int]:
    """Findings of `after` that `before` does not have (multiset on Finding.key)."""
    left = Counter(f.key() for f in before)
    new, old = [], 0
    for f in after:
        if left[f.key()] > 0:
            left[f.key()] -= 1
            old += 1
        else:
            new.append(f)
    return new, old


def _line_of(content: bytes, text: str) -> str:
    for n, line in enumerate(content.decode(errors="replace").splitlines(), 1):
        if " ".join(line.split()) == text:
            return str(n)
    return "?"


def check_series(repo, base: str = "slabconv-baseline", head: str = "HEAD") -> NullcheckResult:
    """Run the rule at every commit of base..head on the C files and headers
    it changes.  `repo` is a path or a verify.bisect.Repo."""
    repo = repo if isinstance(repo, Repo) else Repo(repo)
    t0 = time.monotonic()
    digest = rule_digest()
    commits = repo.series(base, head)
    res = NullcheckResult(repo.path, base, head, digest)
    prev = repo.rev(base)
    n = len(commits)
    info("nullcheck", f"{RULE.name} at each of {n} patches ({base}..{head}), on the C files "
                      f"and headers each changes")
    introduced: dict = {}            # Finding.key() -> the patches that added it
    gone_at: dict = {}               # (Finding.key(), patch that added it) -> patch that removed it
    baseline: dict = {}              # the same for findings the baseline's code has
    for k, (sha, subject) in enumerate(commits, 1):
        pt = time.monotonic()
        pc = PatchCheck(k, sha, subject)
        changed = {p: blob for p, (mode, blob) in repo.delta(prev, sha).items()
                   if blob and p.endswith(SUFFIXES) and not mode.startswith("12")}
        pc.files = sorted(changed)
        before_blobs = _blobs(repo, prev, pc.files)
        for path in pc.files:
            versions = [("after", changed[path])]
            if path in before_blobs:
                versions.append(("before", before_blobs[path]))
            scans, contents = {}, {}
            try:
                for which, blob in versions:
                    contents[which] = repo.blob(blob)
                    s = run_rule(path, contents[which], digest)
                    pc.spatch_runs += not s.cached
                    scans[which] = s
            except SlabconvError as e:
                pc.errors.append(f"{path} ({which} patch {k:04d}): {e}")
                continue
            mk = lambda s: [Finding(k, subject, sha, path, line, text, why)
                            for line, text, why in s.findings]
            after = mk(scans["after"])
            before = mk(scans["before"]) if "before" in scans else []
            new, old = _new(after, before)
            pc.findings += new
            pc.inherited += old
            for f in new:
                introduced.setdefault(f.key(), []).append(k)
            for f in before:
                if f.key() not in introduced:
                    baseline.setdefault(f.key(), dataclasses.replace(f, patch=0, subject="",
                                                                     commit=repo.rev(base)))
            gone = {f.key() for f in before} - {f.key() for f in after}
            for key in gone:
                if key in introduced:
                    gone_at.setdefault((key, introduced[key][-1]), k)
            was = Counter(scans["before"].unparsed) if "before" in scans else Counter()
            for text in scans["after"].unparsed:
                if was[text] > 0:
                    was[text] -= 1
                    continue
                pc.errors.append(f"{path}:{_line_of(contents['after'], text)}: spatch cannot "
                                 f"parse this code, which it could before the patch, so the "
                                 f"rule does not see it: {text}")
        pc.findings.sort(key=lambda f: (f.file, f.line))
        pc.seconds = time.monotonic() - pt
        res.patches.append(pc)
        state = "ok" if pc.ok else (f"{len(pc.findings)} finding(s)"
                                   + (f", {len(pc.errors)} spatch failure(s)" if pc.errors else ""))
        info("nullcheck", f"[{k}/{n}] {subject}: {len(pc.files)} file(s), {state} "
                          f"({pc.seconds:.1f}s{', cached' if pc.files and not pc.spatch_runs else ''})")
        for f in pc.findings:
            info("nullcheck", f"  {f.report_line()}")
        prev = sha
    for pc in res.patches:           # with the patch that removed each one, if any
        pc.findings = [dataclasses.replace(f, gone_at=gone_at.get((f.key(), pc.index), 0))
                       for f in pc.findings]
    res.baseline = sorted(baseline.values(), key=lambda f: (f.file, f.line))
    res.seconds = time.monotonic() - t0
    c = res.counts()
    info("nullcheck", f"{c['patches']} patches, {c['files']} file(s) checked, "
                      f"{c['findings']} finding(s), {c['errors']} spatch failure(s), "
                      f"{c['spatch_runs']} spatch run(s) in {res.seconds:.1f}s")
    return res


# ---- command line: python3 -m verify.nullcheck ------------------------------------

def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        prog="python3 -m verify.nullcheck",
        description=f"Run {RULE.name} at every commit of BASE..HEAD on the C files and headers "
                    "it changes; exit 1 naming each patch that applies page_slab() or another "
                    "dereferencing slab helper to a value that can be NULL.")
    ap.add_argument("--repo", required=True, type=Path, help="git repository with the series")
    ap.add_argument("--base", default=BASE_REF, help="baseline commit (default: %(default)s)")
    ap.add_argument("--head", default="HEAD", help="last patch (default: %(default)s)")
    ap.add_argument("--json", type=Path, help="also write the JSON report here")
    args = ap.parse_args(argv)

    def go() -> int:
        r = check_series(args.repo, args.base, args.head)
        write_json(args.json, r.to_dict())
        print(r.summary_text())
        return 0 if r.ok else 1
    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
