"""The residue report: every remaining use of struct page in the slab code.

    from verify import residue
    r = residue.check(tree, files=["mm/slub.c"])      # default: residue.toml's scope
    r.ok, r.findings, r.allowed, r.not_allowed, r.summary(), r.to_json()

cocci/rules/residue_page.cocci (report mode, --no-includes, as regen/spatch.py
runs rules) lists every use of struct page in the files: parameters,
locals, return types, struct members, casts, slab-only fields reached
through a struct page, and calls that pass or yield a page.  Every line that
mentions struct page and has no finding from the rule (a macro body, code
spatch could not parse) is added as kind "text", so nothing goes unlisted.
cocci/residue.toml classifies each finding: a [[deny]] entry that matches
makes it NOT allowed, else the first [[allow]] entry that matches allows it
(with that entry's reason), else it is NOT allowed.

Command line: `python3 -m verify.residue --tree DIR [--files F ...]
[--all] [--strict] [--json FILE]` on any tree; `./slabconv residue`
applies the committed series first.  Exit 0, or 1 with --strict when a use
is NOT allowed; 2 for a bad allowlist or a file not in the tree.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
import time
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from base import paths
from base.log import guarded, info, SlabconvError
from regen.spatch import report_rule


RULE = paths.COCCI / "rules" / "residue_page.cocci"
ALLOWLIST = paths.COCCI / "residue.toml"

KINDS = ("param", "return", "local", "global", "field-decl", "cast", "sizeof",
         "slab-field-access", "call", "text")

_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): residue_page: "
                   r"(?P<kind>[\w-]+) in (?P<function>\S+): (?P<text>.*)$")
_PAGE = re.compile(r"\bstruct\s+page\b")


@dataclass(frozen=True, order=True)
class Finding:
    file: str
    line: int
    col: int
    kind: str
    function: str
    text: str

    def describe(self) -> str:
        return f"{self.file}:{self.line} {self.function} {self.kind} {self.text}"


@dataclass(frozen=True)
class Classified:
    finding: Finding
    allowed: bool
    why: str              # the entry's reason; for NOT allowed, the deny reason or "no allow entry"
    entry: int | None     # index of the entry in Allowlist.entries, None if none matched


# ---- the allowlist ------------------------------------------------------------

@dataclass
class Entry:
    action: str                     # "allow" or "deny"
    why: str
    files: list[str] = field(default_factory=lambda: ["*"])
    functions: list[str] = field(default_factory=lambda: ["*"])
    kinds: list[str] = field(default_factory=lambda: list(KINDS))
    text: str | None = None         # regex, matched in full

    def matches(self, f: Finding) -> bool:
        return (any(fnmatch.fnmatchcase(f.file, g) for g in self.files)
                and any(fnmatch.fnmatchcase(f.function, g) for g in self.functions)
                and f.kind in self.kinds
                and (self.text is None or re.fullmatch(self.text, f.text, re.X) is not None))

    def describe(self) -> str:
        return (f"{self.action} {','.join(self.files)} {','.join(self.functions)} "
                f"{','.join(self.kinds)}" + (f" /{' '.join(self.text.split())}/" if self.text else ""))


@dataclass
class Allowlist:
    path: Path
    scope: list[str]                # files checked by default
    all_files: list[str]            # --all
    types: list[str]                # headers scanned along for struct member types
    entries: list[Entry]            # deny entries first, then allow, each in file order
    gate: list[str] = field(default_factory=list)   # converted files: verify fails on a NOT allowed use

    def classify(self, f: Finding) -> Classified:
        for i, e in enumerate(self.entries):
            if e.matches(f):
                return Classified(f, e.action == "allow", e.why, i)
        return Classified(f, False, "no allow entry", None)


def _strings(v, key: str, where: str) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return v
    raise SlabconvError(f"{where}: `{key}` must be a string or a list of strings", exit_code=2)


def load_allowlist(path: Path = ALLOWLIST) -> Allowlist:
    """Read and check residue.toml (exit code 2 on a bad file)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlabconvError(f"{path}: {e}", exit_code=2)
    unknown = set(data) - {"scope", "allow", "deny"}
    if unknown:
        raise SlabconvError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}", exit_code=2)
    scope = data.get("scope", {})
    files = _strings(scope.get("files", []) or ["mm/slub.c"], "files", f"{path} [scope]")
    all_files = _strings(scope.get("all", []) or files, "all", f"{path} [scope]")
    types = _strings(scope["types"], "types", f"{path} [scope]") if scope.get("types") else []
    gate = _strings(scope["gate"], "gate", f"{path} [scope]") if scope.get("gate") else []
    entries = []
    for action in ("deny", "allow"):
        for n, raw in enumerate(data.get(action, []), 1):
            where = f"{path}: [[{action}]] #{n}"
            bad = set(raw) - {"file", "function", "kind", "text", "why"}
            if bad:
                raise SlabconvError(f"{where}: unknown key(s) {', '.join(sorted(bad))}", exit_code=2)
            if not isinstance(raw.get("why"), str) or not raw["why"].strip():
                raise SlabconvError(f"{where}: every entry needs a `why`", exit_code=2)
            e = Entry(action, raw["why"].strip())
            if "file" in raw:
                e.files = _strings(raw["file"], "file", where)
            if "function" in raw:
                e.functions = _strings(raw["function"], "function", where)
            if "kind" in raw:
                e.kinds = _strings(raw["kind"], "kind", where)
                wrong = [k for k in e.kinds if k not in KINDS]
                if wrong:
                    raise SlabconvError(f"{where}: unknown kind(s) {', '.join(wrong)} "
                                        f"(kinds: {', '.join(KINDS)})", exit_code=2)
            if "text" in raw:
                e.text = _strings(raw["text"], "text", where)[0]
                try:
                    re.compile(e.text, re.X)
                except re.error as err:
                    raise SlabconvError(f"{where}: bad `text` regex: {err}", exit_code=2)
            entries.append(e)
    return Allowlist(path, files, all_files, types, entries, gate)


# ---- finding the uses ---------------------------------------------------------

def parse_report(text: str) -> list[Finding]:
    """The rule's output, one Finding per line."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise SlabconvError(f"{RULE.name} printed a line that is not a finding: {line!r}")
        out.append(Finding(m["file"], int(m["line"]), int(m["col"]), m["kind"], m["function"],
                           m["text"]))
    return out


def strip_comments(code: str) -> str:
    """C code with comments and string/char literals blanked (newlines kept)."""
    def blank(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
        return re.sub(r"[^\n]", " ", s)
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, code,
                  flags=re.S)


def text_findings(tree: Path, files: list[str], findings: list[Finding]) -> list[Finding]:
    """Lines that mention struct page (outside comments and strings) and have no finding."""
    seen = {(f.file, f.line) for f in findings}
    extra = []
    for name in files:
        code = strip_comments((tree / name).read_text(errors="replace"))
        for n, line in enumerate(code.splitlines(), 1):
            m = _PAGE.search(line)
            if m and (name, n) not in seen:
                extra.append(Finding(name, n, m.start() + 1, "text", "?", " ".join(line.split())))
    return extra


def scan(tree: Path, files: list[str], types: list[str] = ()) -> list[Finding]:
    """Every use of struct page in `files` (relative to `tree`, which is only read).

    `types` are headers whose struct declarations tell the rule which members
    are a struct page (spatch runs without includes); they are scanned along,
    and their own findings are kept only if they are in `files` too."""
    missing = [f for f in files if not (tree / f).is_file()]
    if missing:
        raise SlabconvError(f"residue: not in {tree}: {', '.join(missing)}", exit_code=2)
    extra = [t for t in types if t not in files and (tree / t).is_file()]
    findings = [f for f in parse_report(report_rule(RULE, tree, list(files) + extra, what="residue"))
                if f.file in files]
    return sorted(findings + text_findings(tree, files, findings))


# ---- the result -----------------------------------------------------------------

@dataclass
class ResidueResult:
    tree: Path
    files: list[str]
    results: list[Classified]
    entries: list[Entry]
    seconds: float = 0.0

    @property
    def findings(self) -> list[Finding]:
        return [c.finding for c in self.results]

    @property
    def allowed(self) -> list[Classified]:
        return [c for c in self.results if c.allowed]

    @property
    def not_allowed(self) -> list[Classified]:
        return [c for c in self.results if not c.allowed]

    @property
    def ok(self) -> bool:
        return not self.not_allowed

    def unused_entries(self) -> list[Entry]:
        used = {c.entry for c in self.results}
        return [e for i, e in enumerate(self.entries) if i not in used]

    def counts(self, file: str) -> tuple[int, int, int]:
        mine = [c for c in self.results if c.finding.file == file]
        ok = sum(c.allowed for c in mine)
        return len(mine), ok, len(mine) - ok

    def summary(self, limit: int | None = None) -> str:
        """Per file: counts, the NOT allowed uses (file:line function kind text; the
        first `limit` of them if given) and the allowed ones by reason."""
        lines = []
        for name in self.files:
            total, ok, bad = self.counts(name)
            head = f"{name}: {total} struct page uses, {ok} allowed, {bad} NOT allowed"
            mine = [c for c in self.results if c.finding.file == name]
            nots = [c for c in mine if not c.allowed]
            lines.append(head + (":" if nots else ""))
            if nots:
                kinds = Counter(c.finding.kind for c in nots)
                lines.append("  NOT allowed by kind: " +
                             ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
            shown = nots if limit is None else nots[:limit]
            for c in shown:
                lines.append(f"  {c.finding.describe()}")
            if len(shown) < len(nots):
                lines.append(f"  ... and {len(nots) - len(shown)} more (`make residue` lists them)")
            denied = {c.why for c in nots if c.entry is not None}
            for why in sorted(denied):
                lines.append(f"  never allowed: {why}")
            by_why: dict[str, list[Classified]] = {}
            for c in mine:
                if c.allowed:
                    by_why.setdefault(c.why, []).append(c)
            if by_why and limit is None:
                lines.append("  allowed:")
                for why, cs in by_why.items():
                    fns = sorted({c.finding.function for c in cs})
                    lines.append(f"    {len(cs):3d}  {why} ({', '.join(fns)})")
        total = len(self.results)
        lines.append(f"residue: {total} struct page uses in {len(self.files)} file(s), "
                     f"{total - len(self.not_allowed)} allowed, {len(self.not_allowed)} NOT allowed "
                     f"({self.seconds:.1f}s)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok, "tree": str(self.tree), "files": self.files,
            "seconds": round(self.seconds, 1),
            "counts": {f: dict(zip(("uses", "allowed", "not_allowed"), self.counts(f)))
                       for f in self.files},
            "allowed": [dict(asdict(c.finding), why=c.why) for c in self.allowed],
            "not_allowed": [dict(asdict(c.finding), why=c.why) for c in self.not_allowed],
            "unused_entries": [e.describe() for e in self.unused_entries()],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"


def check(tree: Path, files: list[str] | None = None, *, all_files: bool = False,
          allowlist: Path | Allowlist | None = None) -> ResidueResult:
    """Scan `files` of `tree` (default: the allowlist's scope, or all its files)
    and classify every use of struct page.  A file named in `files` must
    exist; a file of the allowlist's scope that this kernel does not have
    (mm/slob.c after 6.4, say) is left out, and said so."""
    al = allowlist if isinstance(allowlist, Allowlist) else load_allowlist(allowlist or ALLOWLIST)
    if not files:
        files = list(al.all_files if all_files else al.scope)
        absent = [f for f in files if not (Path(tree) / f).is_file()]
        if absent:
            info("residue", f"not in this kernel, not checked: {', '.join(absent)}")
            files = [f for f in files if f not in absent]
    files = list(files)
    t0 = time.monotonic()
    info("residue", f"{RULE.name} over {', '.join(files)}")
    results = [al.classify(f) for f in scan(Path(tree), files, al.types)]
    return ResidueResult(Path(tree), files, results, al.entries, time.monotonic() - t0)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options `python3 -m verify.residue` and `slabconv residue` share."""
    p.add_argument("--files", nargs="+", metavar="FILE",
                   help="files to check, relative to the tree (default: the [scope] files of "
                        "cocci/residue.toml)")
    p.add_argument("--all", action="store_true",
                   help="check every file the allowlist covers ([scope] all)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a use of struct page is NOT allowed")
    p.add_argument("--json", type=Path, help="also write the result as JSON here")
    p.add_argument("--allowlist", type=Path, default=None,
                   help="the allowlist (default: cocci/residue.toml)")


def report(r: ResidueResult, args) -> int:
    """Print the summary, write the JSON, and give the exit code."""
    print(r.summary())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(r.to_json())
    return 1 if args.strict and not r.ok else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify.residue",
                                 description="List and classify the uses of struct page in a "
                                             "kernel tree (see verify/README.md).")
    ap.add_argument("--tree", required=True, type=Path, help="the kernel tree (only read)")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return guarded(lambda: report(check(args.tree, args.files, all_files=args.all,
                                        allowlist=args.allowlist), args))


if __name__ == "__main__":
    sys.exit(main())
