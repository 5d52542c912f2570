"""The layout check: struct slab's static_asserts compile on both word sizes.

    from verify import layout
    r = layout.check(patched_tree, out_root)        # the four combinations
    r.ok, r.combos[0].status, r.combos[0].failures, r.summary(), r.to_dict()

After the series, include/linux/mm_types.h defines struct slab right after
struct page (on a kernel converted upstream, 5.17 on, mm/slab.h does, with
the same kind of asserts: HEADERS, the first with SLAB_MATCH() is checked),
then SLAB_MATCH(page_member, slab_member) static_asserts (the
two members sit at the same offset) and static_assert(sizeof(struct slab)
<= sizeof(struct page)).  They only prove something when they are compiled,
and the structure differs with the word size (SLUB's partial counters are
shorts on 32-bit) and with CONFIG_MEMCG (the memcg word and its assert).
So `make prepare` (its arch/x86/kernel/asm-offsets.c already includes the
header) and the objects that include it (mm/slab_common.o, and mm/slub.o,
the main user of struct slab) are built with `make -k` in four
configurations (verify/configs.toml's layout set), tinyconfig + SLUB (+ SYSFS
and SMP, which SLUB_DEBUG and SLUB_CPU_PARTIAL need):

    layout-x86_64           x86_64, MEMCG
    layout-x86_64-nomemcg   x86_64, no MEMCG
    layout-i386             i386,   MEMCG
    layout-i386-nomemcg     i386,   no MEMCG

Each combination reports ok, or the assert that failed (the SLAB_MATCH()
line of mm_types.h and gcc's message), or the other compiler errors (a
conversion that does not type-check on that configuration).  An object that
does not include mm_types.h (the asserts were not compiled) fails too.

Builds: out_root/layout/tree/ is a hard-link snapshot of the baseline tree
(the pristine source) with copies of the files the series changes, kept
between runs and brought to the patched tree's content in place (only the
files whose content differs are replaced, by new files), with one O= per
combination inside it (tree/o-<combination>, srctree=".."): a rerun on the
same series compiles nothing, a changed header recompiles what includes it
(through ccache).  Nothing is ever hard-linked into the patched tree: a git
work tree whose files gain a link (a new ctime) is rewritten whole by its
next `git checkout -f`.

Command line: `python3 -m verify.layout --tree DIR [--baseline DIR]
[--configs a,b] [--objects mm/slub.o] [--json FILE]` on any patched tree;
`./slabconv layout` applies the committed series first.
Exit 0 when every combination is ok, 1 when one fails, 2 when the tree has
no struct slab asserts, 3 for a missing tool.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from base import log as slog
from base.cliutil import comma_list, write_json
from base.log import guarded, SlabconvError
from base.paths import cache_dir
from . import config_lock, configtable, kbuild, kconfig, tree as T, warnings as W


OBJECTS = ("mm/slab_common.o", "mm/slub.o")
HEADER = "include/linux/mm_types.h"
# Where struct slab's asserts may be: mm_types.h after this series (as in
# the 2021 posting), mm/slab.h in upstream's merged conversion (5.17 on).
HEADERS = (HEADER, "mm/slab.h")
DIR_NAME = "layout"
O_PREFIX = "o-"

_DEFINE = re.compile(r"^\s*#\s*define\s+SLAB_MATCH\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)(.*)$")
_UNDEF = re.compile(r"^\s*#\s*undef\s+SLAB_MATCH\b")
_MATCH = re.compile(r"^\s*SLAB_MATCH\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*;")
_ASSERT = re.compile(r"^\s*static_assert\s*\((?P<expr>.*)\)\s*;")
_IF = re.compile(r"^\s*#\s*(?P<kw>ifdef|ifndef|if|elif|else|endif)\b\s*(?P<arg>.*?)\s*(?:/[*/].*)?$")
_ERR = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s+"
                  r"(?:fatal )?error:\s+(?P<msg>.*?)\s*$")
_SA = re.compile(r"static assertion failed(?::\s*\"(?P<expr>.*)\")?")
_NOTE = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s+note:\s+"
                   r"in expansion of macro " + W._Q + r"(?P<macro>\w+)" + W._Q)
_INCLUDED = re.compile(r"^(?:In file included from |\s+from )(?P<file>[^\s:]+):\d+[:,]")
_SRC = re.compile(r"^\s*\d*\s*\|")          # gcc's source excerpt ("  245 | SLAB_MATCH(...)")


def _norm(expr: str) -> str:
    return re.sub(r"\s+", " ", expr.replace("\\\"", "\"")).strip()


@dataclass
class Assert:
    """A static_assert on struct slab in mm_types.h."""
    line: int
    text: str                   # "SLAB_MATCH(flags, flags)" or "static_assert(sizeof(...))"
    expr: str                   # the asserted expression, as gcc prints it
    condition: str = ""         # "CONFIG_MEMCG" when inside #ifdef CONFIG_MEMCG

    def applies(self, config: dict) -> bool:
        """Is it compiled with this .config (CONFIG_X -> value)?  Only the
        simple conditions of mm_types.h: [!]CONFIG_X, nested with '&&'."""
        for c in filter(None, self.condition.split(" && ")):
            neg = c.startswith("!")
            on = config.get(c.lstrip("!"), "n") in ("y", "m")
            if on == neg:
                return False
        return True


def _if_condition(arg: str) -> str:
    """An #if's condition as Assert.condition writes it: CONFIG_X or
    !CONFIG_X for `[!]defined(X)`, else the expression in parentheses
    (which applies() takes for false)."""
    d = re.fullmatch(r"(!?)\s*defined\s*\(?\s*(\w+)\s*\)?", arg)
    return (d.group(1) + d.group(2)) if d else f"({arg})"


def find_asserts(text: str) -> list:
    """The SLAB_MATCH() invocations (between the macro's #define and its
    #undef) and the static_asserts that name struct slab, with the #ifdef
    they sit in."""
    lines = text.splitlines()
    out = []
    stack = []                          # conditions of the enclosing #if blocks
    template = None                     # (pg, sl, expression with pg and sl)
    inside = False
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = _IF.match(ln)
        if m:
            kw, arg = m.group("kw"), m.group("arg")
            if kw == "ifdef":
                stack.append([arg])
            elif kw == "ifndef":
                stack.append(["!" + arg])
            elif kw == "if":
                stack.append([_if_condition(arg)])
            elif kw in ("else", "elif") and stack:
                # every earlier branch false (the level holds those already
                # negated, then the branch that ends here), and an #elif's own
                *prior, last = stack[-1]
                prior.append(last[1:] if last.startswith("!") else "!" + last)
                stack[-1] = prior + ([_if_condition(arg)] if kw == "elif" else [])
            elif kw == "endif" and stack:
                stack.pop()
            i += 1
            continue
        cond = " && ".join(c for level in stack for c in level)
        m = _DEFINE.match(ln)
        if m:
            body = m.group(3)
            while body.rstrip().endswith("\\") and i + 1 < len(lines):
                body = body.rstrip()[:-1] + " "
                i += 1
                body += lines[i]
            a = _ASSERT.match(body.strip() + ";")
            expr = a.group("expr") if a else body.strip()
            template = (m.group(1), m.group(2), _norm(expr))
            inside = True
            i += 1
            continue
        if _UNDEF.match(ln):
            inside = False
            i += 1
            continue
        m = _MATCH.match(ln)
        if m and inside and template:
            pg, sl, expr = template
            e = re.sub(rf"\b{pg}\b", "\0PG\0", expr)
            e = re.sub(rf"\b{sl}\b", m.group(2), e).replace("\0PG\0", m.group(1))
            out.append(Assert(i + 1, f"SLAB_MATCH({m.group(1)}, {m.group(2)})", e, cond))
            i += 1
            continue
        m = _ASSERT.match(ln)
        if m and re.search(r"\bstruct\s+slab\b", m.group("expr")):
            out.append(Assert(i + 1, f"static_assert({_norm(m.group('expr'))})",
                              _norm(m.group("expr")), cond))
        i += 1
    return out


@dataclass
class Failure:
    """A failed struct slab assert, as gcc reported it."""
    line: int                   # the line of mm_types.h (the SLAB_MATCH() invocation)
    text: str                   # the assert ("SLAB_MATCH(flags, flags)")
    expr: str                   # the expression that is false
    message: str                # gcc's message: 'static assertion failed: "..."'
    gcc: str = ""               # gcc's error line (paths relative to the tree)
    sources: list = field(default_factory=list)    # the .c files whose compile hit it
    header: str = HEADER        # the file the asserts are in

    def describe(self) -> str:
        src = f" (compiling {', '.join(self.sources)})" if self.sources else ""
        return f"{self.text} at {self.header}:{self.line}{src}: error: {self.message}"


def parse_failures(log_text: str, roots=(), asserts=(), header: str = HEADER) -> tuple:
    """(failures, other errors) of a build log: `static assertion failed`
    errors whose macro expansion leads to a line of mm_types.h are
    Failures (matched to `asserts` by line, else by expression); every other
    compiler error is returned as a verify.warnings.CompilerWarning (kind
    error: file, line, function, message)."""
    by_line = {a.line: a for a in asserts}
    by_expr = {_norm(a.expr): a for a in asserts}
    lines = log_text.splitlines()
    fails, claimed = {}, set()
    cur_src = None                  # the .c file the diagnostics are about
    for i, ln in enumerate(lines):
        inc = _INCLUDED.match(ln)
        if inc:
            src = W.normalise_path(inc.group("file"), roots)
            if src.endswith(".c"):
                cur_src = src
            continue
        m = _ERR.match(ln)
        if not m:
            continue
        src = W.normalise_path(m.group("file"), roots)
        if src.endswith(".c"):
            cur_src = src
        sa = _SA.search(m.group("msg"))
        if not sa:
            continue
        expr = _norm(sa.group("expr") or "")
        where = None                # (line, macro) of the last expansion note in HEADER
        j = i + 1
        while j < len(lines):
            nl = lines[j]
            n = _NOTE.match(nl)
            if n:
                if W.normalise_path(n.group("file"), roots) == header:
                    where = (int(n.group("line")), n.group("macro"))
            elif not (_SRC.match(nl) or nl.startswith(" ")):
                break
            j += 1
        if where is None and W.normalise_path(m.group("file"), roots) == header:
            where = (int(m.group("line")), "")
        a = by_line.get(where[0]) if where else None
        a = a or by_expr.get(expr)
        if a is None and where is None:
            continue                # not ours: stays among the other errors
        key = a.line if a else where[0]
        msg = W._norm_msg(m.group("msg"))
        f = fails.get(key)
        if f is None:
            f = fails[key] = Failure(
                line=key, text=a.text if a else f"line {key}", expr=a.expr if a else expr,
                message=msg, gcc=f"{W.normalise_path(m.group('file'), roots)}:"
                                 f"{m.group('line')}: error: {msg}", header=header)
        if cur_src and cur_src not in f.sources:
            f.sources.append(cur_src)
        claimed.add(i)
    others = []
    errs = W.parse_log(log_text, roots, include_errors=True)
    # parse_log drops the line index; drop the static assertion errors that
    # were claimed by matching their text instead.
    claimed_text = {lines[i] for i in claimed}
    for w in errs:
        if w.kind != "error" or w.text in claimed_text:
            continue
        if any((o.file, o.line, o.message) == (w.file, w.line, w.message) for o in others):
            continue
        others.append(w)
    return sorted(fails.values(), key=lambda f: f.line), others


@dataclass
class ComboResult:
    name: str
    arch: str
    memcg: bool
    ok: bool
    status: str                 # ok | assert failed | build failed | asserts not compiled
    seconds: float = 0.0
    compiled: int = 0
    asserts: list = field(default_factory=list)     # the Asserts this .config compiles
    failures: list = field(default_factory=list)    # Failure
    errors: list = field(default_factory=list)      # other compiler errors (CompilerWarning)
    excerpt: str = ""           # the build's first errors, when none could be parsed
    not_included: list = field(default_factory=list)  # objects that do not include header
    out: Optional[Path] = None
    log: Optional[Path] = None
    header: str = HEADER

    def line(self) -> str:
        head = (f"  {self.name:<22} {self.arch:<6} {'MEMCG' if self.memcg else 'no MEMCG':<8} "
                f"{'ok' if self.ok else 'FAILED':<6}")
        if self.ok:
            return (f"{head} {len(self.asserts)} asserts hold "
                    f"({self.seconds:.0f}s, {self.compiled} objects compiled)")
        L = [f"{head} {self.status} ({self.seconds:.0f}s)"]
        for f in self.failures:
            L.append(f"      {f.describe()}")
        for e in self.errors[:5]:
            L.append(f"      {e.format()}")
        if len(self.errors) > 5:
            L.append(f"      ... and {len(self.errors) - 5} more errors")
        if not self.failures and not self.errors and self.excerpt:
            L.extend("      " + x for x in self.excerpt.splitlines()[:12])
        for o in self.not_included:
            L.append(f"      {o} does not include {self.header}: its asserts were not compiled")
        if self.log:
            L.append(f"      (log: {self.log})")
        return "\n".join(L)

    def to_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch, "memcg": self.memcg, "ok": self.ok,
                "status": self.status, "seconds": round(self.seconds, 1),
                "compiled": self.compiled,
                "asserts": [asdict(a) for a in self.asserts],
                "failures": [asdict(f) for f in self.failures],
                "errors": [e.to_dict() for e in self.errors],
                "excerpt": self.excerpt, "not_included": self.not_included,
                "out": str(self.out) if self.out else None,
                "log": str(self.log) if self.log else None}


@dataclass
class LayoutResult:
    ok: bool
    tree: Path
    asserts: list               # every struct slab assert of mm_types.h
    combos: list                # ComboResult
    objects: tuple = OBJECTS
    seconds: float = 0.0
    changed: Optional[list] = None    # files the snapshot took from the tree (None: new)
    report: Optional[Path] = None
    header: str = HEADER        # the file the asserts are in (HEADERS)

    @property
    def problems(self) -> list:
        return [f"[{c.name}] {c.status}: " + "; ".join(
                    [f.describe() for f in c.failures] + [e.format() for e in c.errors[:3]])
                for c in self.combos if not c.ok]

    def summary(self) -> str:
        span = (f"{self.header}:{self.asserts[0].line}-{self.asserts[-1].line}"
                if self.asserts else self.header)
        n_match = sum(a.text.startswith("SLAB_MATCH") for a in self.asserts)
        L = [f"layout: {n_match} SLAB_MATCH() asserts and {len(self.asserts) - n_match} "
             f"other struct slab assert(s) in {span}; objects {', '.join(self.objects)}"]
        L += [c.line() for c in self.combos]
        L.append(f"layout: {'OK' if self.ok else 'FAIL'} ({self.seconds:.0f}s"
                 + (f"; report {self.report}" if self.report else "") + ")")
        return "\n".join(L)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "tree": str(self.tree), "header": self.header,
                "objects": list(self.objects), "seconds": round(self.seconds, 1),
                "asserts": [asdict(a) for a in self.asserts],
                "changed": self.changed, "problems": self.problems,
                "combos": [c.to_dict() for c in self.combos]}


def _o_dirs(snap: Path) -> tuple:
    return tuple(e for e in os.listdir(snap) if e.startswith(O_PREFIX)) if snap.is_dir() else ()


STAMP = "tree.json"


def _same(a: Path, b: Path) -> bool:
    """Same content (both absent counts as the same)."""
    try:
        sa = os.lstat(a)
    except FileNotFoundError:
        sa = None
    try:
        sb = os.lstat(b)
    except FileNotFoundError:
        sb = None
    if sa is None or sb is None:
        return sa is None and sb is None
    return T._same_content(str(a), str(b), sa, sb)


def _fresh(snap: Path) -> None:
    """Remove a snapshot and its O= dirs (their objects were built from
    other sources, whose timestamps make would trust)."""
    T.remove(snap)


def prepare_tree(src: Path, work: Path, base: Optional[Path] = None,
                 changed: Optional[list] = None) -> tuple:
    """work/tree = the content of src, kept between runs with its O= dirs.
    Returns (snapshot, the files replaced since the last run, or None for a
    new snapshot).

    With `base` (a tree that is never modified, such as the pristine source
    the series applies to): a hard-link snapshot of base with copies of the
    files where src differs (`changed`, e.g. from git; else found by
    comparing the trees); a rerun compares only those and the ones it
    replaced last time.  Without base: a real copy of src, compared file by
    file on a rerun.  Never a hard link into src: a git work tree whose
    files gain a link (a new ctime) is rewritten whole by its next
    `git checkout -f`."""
    snap = work / "tree"
    stamp = work / STAMP
    try:
        st = json.loads(stamp.read_text()) if stamp.is_file() else {}
    except ValueError:
        st = {}
    have = (snap / "Makefile").is_file()
    if base is None:
        if have and st.get("base", "?") is None:
            done = T.sync(snap, src, skip=_o_dirs(snap))
            _log_changes(snap, done)
            return snap, done
        slog.info("layout", f"copy of {src} -> {snap}")
        stamp.unlink(missing_ok=True)
        _fresh(snap)
        snap.mkdir(parents=True)
        entries = [str(src / e) for e in T._top_entries(src)]
        cp = subprocess.run(["cp", "-a", "--reflink=auto", *entries, str(snap)],
                            stderr=subprocess.PIPE, text=True)
        if cp.returncode != 0:
            raise SlabconvError(f"cannot copy {src} to {snap}: {cp.stderr.strip()}")
        stamp.write_text(json.dumps({"base": None}) + "\n")
        return snap, None

    base = Path(base).resolve()
    if changed is None:
        c, a, r = T.diff_trees(base, src)
        changed = c + a + r
    changed = sorted(set(changed))
    fresh = not have or st.get("base") != str(base)
    stamp.unlink(missing_ok=True)          # an interrupted update: a new snapshot next time
    if fresh:
        slog.info("layout", f"snapshot of {base} + {len(changed)} file(s) of {src} -> {snap}")
        _fresh(snap)
        T.snapshot(base, snap)
        previous = []
    else:
        previous = st.get("overlaid", [])
    from_src, from_base, remove = [], [], []
    cset = set(changed)
    for rel in sorted(cset | set(previous)):
        want = (src if rel in cset else base) / rel
        if _same(want, snap / rel):
            continue
        if not (os.path.lexists(want)):
            remove.append(rel)
        elif rel in cset:
            from_src.append(rel)
        else:
            from_base.append(rel)        # back to the baseline: a copy (mtime now), not a link
    T._apply(snap, src, from_src, [], remove)
    T._apply(snap, base, from_base, [], [])
    stamp.write_text(json.dumps({"base": str(base), "src": str(src), "overlaid": changed},
                                indent=1) + "\n")
    done = sorted(from_src + from_base + remove)
    if fresh:
        return snap, None
    _log_changes(snap, done)
    return snap, done


def _log_changes(snap: Path, done: list) -> None:
    slog.info("layout", f"{snap}: {len(done)} file(s) changed since the last run"
                        + (f": {', '.join(done[:6])}{' ...' if len(done) > 6 else ''}"
                           if done else ""))


def _includes_header(out: Path, obj: str, header: str = HEADER) -> bool:
    cmd = out / Path(obj).parent / f".{Path(obj).name}.cmd"
    try:
        return re.search(r"(^|[\s/])%s\b" % re.escape(header),
                         cmd.read_text(errors="replace"), re.M) is not None
    except OSError:
        return False


def check_combo(snap: Path, combo: str, objects=OBJECTS, asserts=(), jobs: int = 2,
                header: str = HEADER) -> ComboResult:
    """Configure and build `objects` of the snapshot in O=snap/o-<combo>."""
    arch = kconfig.config_arch(combo)
    out = snap / f"{O_PREFIX}{combo}"
    t0 = time.monotonic()
    dot = kconfig.configure_named(snap, out, combo)
    config = kconfig.parse_config(dot.read_text())
    memcg = config.get("CONFIG_MEMCG") == "y"
    mine = [a for a in asserts if a.applies(config)]
    b = kbuild.build(snap, out, targets=("prepare", *objects), jobs=jobs, arch=arch,
                     label=combo, keep_going=True)
    roots = [str(snap), str(out), os.path.realpath(snap), os.path.realpath(out)]
    res = ComboResult(name=combo, arch=arch, memcg=memcg, ok=b.ok, status="ok",
                      compiled=b.compiled, asserts=mine, out=out, log=b.log, header=header)
    if not b.ok:
        text = b.log.read_text(errors="replace")
        res.failures, res.errors = parse_failures(text, roots, asserts, header)
        res.status = "assert failed" if res.failures else "build failed"
        if not res.failures and not res.errors:
            res.excerpt = b.error_excerpt
    else:
        res.not_included = [o for o in objects if not _includes_header(out, o, header)]
        if res.not_included:
            res.ok, res.status = False, "asserts not compiled"
    res.seconds = time.monotonic() - t0
    return res


def find_header(tree: Path) -> tuple:
    """(the first of HEADERS that has SLAB_MATCH() asserts, its struct
    slab asserts), or (None, []) when none has."""
    for h in HEADERS:
        p = tree / h
        if p.is_file():
            asserts = find_asserts(p.read_text(errors="replace"))
            if any(a.text.startswith("SLAB_MATCH") for a in asserts):
                return h, asserts
    return None, []


def check(tree, out_root, combos=None, objects=OBJECTS, *, jobs: int = 2,
          report: bool = True, base=None, changed=None) -> LayoutResult:
    """The layout check of the patched kernel tree `tree` (only read) in each
    configuration of `combos` (default: verify/configs.toml's layout set);
    builds under out_root/layout/.  base: the
    tree the patched one was made from (hard-linked, so it must never be
    modified), changed: the files where they differ (else found by
    comparison); without base the tree is copied (see prepare_tree)."""
    t0 = time.monotonic()
    combos = configtable.names("layout") if combos is None else combos
    tree = Path(tree).resolve()
    out_root = Path(out_root).resolve()
    if not (tree / "Makefile").is_file() or not (tree / HEADER).is_file():
        raise SlabconvError(f"{tree} is not a kernel source tree (no {HEADER})", exit_code=2)
    header, asserts = find_header(tree)
    if header is None:
        raise SlabconvError(f"{tree}: none of {', '.join(HEADERS)} has SLAB_MATCH() asserts: "
                            "is the series (struct slab) applied?", exit_code=2)
    for c in combos:
        kconfig.config_arch(c)                     # unknown name: exit 2 before building
    work = out_root / DIR_NAME
    work.mkdir(parents=True, exist_ok=True)
    with config_lock(out_root, DIR_NAME):
        snap, changed = prepare_tree(tree, work, base, changed)
        results = [check_combo(snap, c, objects, asserts, jobs, header) for c in combos]
    r = LayoutResult(ok=all(c.ok for c in results), tree=tree, asserts=asserts,
                     combos=results, objects=tuple(objects), changed=changed,
                     seconds=time.monotonic() - t0, header=header)
    if report:
        r.report = work / "report.json"
        r.report.write_text(json.dumps(r.to_dict(), indent=1) + "\n")
        (work / "summary.txt").write_text(r.summary() + "\n")
    return r


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options `python3 -m verify.layout` and `slabconv layout` share."""
    p.add_argument("--configs", default=",".join(configtable.names("layout")),
                   help="combinations to build, comma-separated (verify/configs.toml; "
                        "default: %(default)s)")
    p.add_argument("--objects", default=",".join(OBJECTS),
                   help="objects to compile, comma-separated (default: %(default)s)")
    p.add_argument("--json", type=Path, help="also write the JSON report here")
    p.add_argument("-j", "--jobs", type=int, default=2)


def run_and_report(tree, out_root, args, base=None, changed=None) -> int:
    r = check(tree, out_root, comma_list(args.configs), comma_list(args.objects),
              jobs=args.jobs, base=base, changed=changed)
    write_json(args.json, r.to_dict())
    print(r.summary())
    return 0 if r.ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m verify.layout",
                                 description="Build the objects that carry struct slab's "
                                             "static_asserts in four configurations "
                                             "(see verify/README.md).")
    ap.add_argument("--tree", required=True, type=Path, help="the patched kernel tree (only read)")
    ap.add_argument("--out-root", type=Path, help="where builds go (default: the cache's "
                                                  "build/layout/)")
    ap.add_argument("--baseline", type=Path,
                    help="the tree the patched one was made from, never modified (hard-linked "
                         "into the build snapshot; without it the patched tree is copied)")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return guarded(lambda: run_and_report(args.tree, args.out_root or cache_dir("build", "layout"),
                                          args, base=args.baseline))


if __name__ == "__main__":
    sys.exit(main())
