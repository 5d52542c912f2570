"""Which of the lines the series changes the builds actually compiled.

    from verify import compiled
    changed = compiled.changed_lines(tree, base, "HEAD")   # {file: {line: text}}
    report = compiled.check(tree, changed, {"slub": O1, "sparsemem-i386": O2})
    print(report.summary())

A build proves a changed line only if the preprocessor kept it: a line in
an `#ifdef CONFIG_NUMA` block compiles in no build without NUMA, and
mm/sparse.c's pgflags_nid() (NODE_NOT_IN_PAGE_FLAGS: 32-bit NUMA) in no
x86_64 build at all, however often the kernel is built.  For every file the series changes, one object
of each build that compiled it (the file's own object; for a header, an
object whose dependency list names it) is preprocessed again with the
exact command kbuild recorded in its .cmd file, turned into `-E -dD`
(definitions kept, so a changed `#define` counts).  A source line is
compiled in that build if the output came from it, or from an earlier line
with no conditional directive (`#if`, `#ifdef`, `#ifndef`, `#elif`,
`#else`, `#endif`) in between: only those directives decide what the
preprocessor drops, so the continuation lines of a statement or a macro
take the state of the line they continue.

Changed lines that hold no code (blank, comment only) are not counted.
A changed code line that no build compiled is reported with its text:
verify fails on it, because nothing it ran would have caught a mistake
there, unless verify/compiled.toml says why no x86 build can reach it
(software tag-based KASAN is arm64 only); those are listed as allowed.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from base.log import SlabconvError
from . import kbuild


ALLOWLIST = Path(__file__).resolve().parent / "compiled.toml"

_COND = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"')
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(tree: Path, base: str, head: str = "HEAD") -> dict[str, dict[int, str]]:
    """The lines of C files and headers that `head` adds or changes against
    `base`, by their number in `head`'s version of the file."""
    cp = subprocess.run(["git", "diff", "-U0", "--no-renames", "--no-color", base, head,
                         "--", "*.c", "*.h"], cwd=tree, capture_output=True, text=True)
    if cp.returncode != 0:
        raise SlabconvError(f"git diff {base} {head} in {tree}: {cp.stderr.strip()}")
    return parse_diff(cp.stdout)


def parse_diff(text: str) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    cur, line = None, 0
    for raw in text.splitlines():
        if raw.startswith("+++ "):
            cur = raw[6:] if raw.startswith("+++ b/") else None
            continue
        m = _HUNK.match(raw)
        if m:
            line = int(m.group(1))
            continue
        if cur and raw.startswith("+"):
            out.setdefault(cur, {})[line] = raw[1:]
            line += 1
    return out


def code_lines(text: str) -> set[int]:
    """Line numbers (from 1) that hold something besides comments and blanks."""
    out, in_comment = set(), False
    for no, line in enumerate(text.splitlines(), 1):
        i, code = 0, False
        while i < len(line):
            if in_comment:
                j = line.find("*/", i)
                if j < 0:
                    break
                in_comment, i = False, j + 2
            elif line.startswith("/*", i):
                in_comment, i = True, i + 2
            elif line.startswith("//", i):
                break
            elif line[i] in "\"'":      # a literal: skip it whole (it may hold /*)
                q, i = line[i], i + 1
                code = True
                while i < len(line) and line[i] != q:
                    i += 2 if line[i] == "\\" else 1
                i += 1
            else:
                code = code or not line[i].isspace()
                i += 1
        if code:
            out.add(no)
    return out


def conditional_lines(text: str) -> set[int]:
    """Lines of conditional directives (with their continuation lines)."""
    out, cont = set(), False
    for no, line in enumerate(text.splitlines(), 1):
        if cont or _COND.match(line):
            out.add(no)
            cont = line.rstrip().endswith("\\")
        else:
            cont = False
    return out


def emitted_lines(preprocessed: str, src_root: Path, cwd: Path) -> dict[str, set[int]]:
    """Per source file (relative to src_root): the lines that produced
    non-blank output in a `gcc -E -dD` listing."""
    out: dict[str, set[int]] = {}
    cur, no = None, 0
    names: dict[str, str | None] = {}
    for line in preprocessed.splitlines():
        m = _MARKER.match(line)
        if m:
            no = int(m.group(1))
            name = m.group(2)
            if name not in names:
                p = Path(os.path.normpath(cwd / name))
                try:
                    names[name] = str(p.relative_to(src_root))
                except ValueError:
                    names[name] = None
            cur = names[name]
            continue
        if cur is not None and line.strip():
            out.setdefault(cur, set()).add(no)
        no += 1
    return out


def compiled_in(lines: set[int] | dict[int, str], emitted: set[int], conds: set[int]) -> set[int]:
    """Those of `lines` the preprocessor kept: at or after an emitted line
    with no conditional directive between them.  A conditional directive
    counts as kept when the nearest emitted line before it is (it was read,
    so the change to it was seen; inside an excluded group that is an
    over-estimate, which only a directive line itself can get)."""
    kept = set()
    for n in lines:
        k = n
        if n in conds:
            k = n - 1
            while k > 0 and k not in emitted:
                k -= 1
        else:
            while k > 0 and k not in emitted and k not in conds:
                k -= 1
        if k > 0 and k in emitted:
            kept.add(n)
    return kept


def _cmd_file(o: Path, obj: str) -> Path:
    p = o / obj
    return p.parent / f".{p.name}.cmd"


def recorded_command(o: Path, obj: str) -> list[str]:
    """The compile command kbuild recorded for `obj` (relative to build dir o),
    as a list: the compiler and its options, up to the end of that command."""
    text = _cmd_file(o, obj).read_text(errors="replace")
    m = re.search(r"^(?:saved)?cmd_\S+ := (.*)$", text, re.M)
    if not m:
        raise SlabconvError(f"{_cmd_file(o, obj)}: no recorded command")
    cmd = m.group(1).replace("$(pound)", "#").replace("$$", "$").replace("\\#", "#")
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=";&|")
    lex.whitespace_split = True
    words = []
    for w in lex:
        if w in (";", "&&", "||", "|", "&"):
            break
        words.append(w)
    return words


def preprocess_command(words: list[str], out: str) -> list[str]:
    """`words` (a recorded compile) turned into a -E -dD run writing `out`:
    the wrappers before the compiler (ccache, slabconv's warning wrapper)
    and the dependency-file options are dropped."""
    first_opt = next((i for i, w in enumerate(words) if w.startswith("-")), None)
    if not first_opt:
        raise SlabconvError(f"not a compile command: {' '.join(words[:4])} ...")
    cmd = [words[first_opt - 1]]
    skip = False
    for w in words[first_opt:]:
        if skip:
            skip = False
            continue
        if w.startswith(("-Wp,-MMD", "-Wp,-MD")) or w == "-c":
            continue
        if w == "-o":
            skip = True
            continue
        cmd.append(w)
    return cmd + ["-E", "-dD", "-o", out]


# Objects whose compile is not the kernel's own (the boot stub, vDSO, real
# mode code and host programs #undef or override configuration options).
_ODD = re.compile(r"^(arch/[^/]+/(boot|realmode|entry/vdso|purgatory)/|scripts/|tools/|usr/)")


def objects_for(o: Path, f: str, limit: int = 3, prefer: tuple = (),
                compiles: dict[str, str] | None = None) -> list[str]:
    """Objects of build dir o that compiled file f: a .c file's own object;
    for a header, up to `limit` objects whose dependency list names it, the
    objects of `prefer` (the .c files the series changes) first.
    `compiles`: kbuild.c_compiles(o), when the caller has it already."""
    if f.endswith(".c"):
        obj = f[:-2] + ".o"
        return [obj] if _cmd_file(o, obj).is_file() else []
    pat = re.compile(r"(^|[\s/])%s\b" % re.escape(f), re.M)
    objs = kbuild.c_compiles(o) if compiles is None else compiles
    first = [p[:-2] + ".o" for p in prefer if p.endswith(".c")]
    order = [x for x in first if x in objs] + [x for x in objs if x not in first and not _ODD.match(x)]
    return [x for x in order if pat.search(objs[x])][:limit]


@dataclass(frozen=True)
class Allowed:
    file: str
    match: str | None
    reason: str

    def covers(self, f: str, text: str) -> bool:
        return f == self.file and (self.match is None or re.search(self.match, text) is not None)


def load_allowlist(path: Path = ALLOWLIST) -> list[Allowed]:
    import tomllib
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlabconvError(f"{path}: {e}")
    out = []
    for i, a in enumerate(data.get("allow", []), 1):
        if not isinstance(a, dict) or not a.get("file") or not a.get("reason"):
            raise SlabconvError(f"{path}: [[allow]] entry {i} needs a file and a reason")
        out.append(Allowed(a["file"], a.get("match"), a["reason"]))
    return out


@dataclass
class FileCoverage:
    file: str
    code: int                                  # changed lines holding code
    by: dict[str, int] = field(default_factory=dict)   # build -> changed code lines it compiled
    missed: dict[int, str] = field(default_factory=dict)   # line -> text: compiled by none
    allowed: dict[int, str] = field(default_factory=dict)  # line -> reason (compiled.toml)
    objects: dict[str, str] = field(default_factory=dict)  # build -> the object(s) used


@dataclass
class Report:
    builds: list[str]
    files: list[FileCoverage]
    errors: list[str] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)   # config -> why not built
    build_dirs: dict[str, Path] = field(default_factory=dict, repr=False)   # name -> O= dir

    @property
    def missed(self) -> int:
        return sum(len(f.missed) for f in self.files)

    @property
    def ok(self) -> bool:
        return not self.missed and not self.errors

    @property
    def allowed(self) -> int:
        return sum(len(f.allowed) for f in self.files)

    def summary(self, limit: int = 30) -> str:
        total = sum(f.code for f in self.files)
        done = total - self.missed - self.allowed
        lines = [f"compiled lines: {'OK' if self.ok else 'FAIL'}: {done} of the {total} changed "
                 f"code lines in {len(self.files)} file(s) compiled by at least one of "
                 f"{', '.join(self.builds)}; {self.allowed} allowed not to be "
                 f"(verify/compiled.toml), {self.missed} NOT compiled"]
        for f in self.files:
            by = ", ".join(f"{b} {n}" for b, n in f.by.items() if n) or "none"
            lines.append(f"  {f.file:40} {f.code:4d} changed, compiled: {by}"
                         + (f"; allowed: {len(f.allowed)}" if f.allowed else "")
                         + (f"; NOT compiled: {len(f.missed)}" if f.missed else ""))
        for f in self.files:
            for reason in dict.fromkeys(f.allowed.values()):
                lines.append(f"  allowed {f.file}: {reason}")
        shown = 0
        for f in self.files:
            for n, text in sorted(f.missed.items()):
                if shown < limit:
                    lines.append(f"  NOT COMPILED {f.file}:{n}: {text.strip()}")
                shown += 1
        if shown > limit:
            lines.append(f"  ... and {shown - limit} more")
        lines += [f"  ERROR {e}" for e in self.errors]
        lines += [f"  not built: {c}: {why}" for c, why in self.not_applicable.items()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "builds": self.builds, "errors": self.errors,
                "not_applicable": self.not_applicable,
                "missed": self.missed, "allowed": self.allowed,
                "files": [{"file": f.file, "changed_code_lines": f.code, "compiled_by": f.by,
                           "objects": f.objects,
                           "not_compiled": {str(k): v for k, v in sorted(f.missed.items())},
                           "allowed": {str(k): v for k, v in sorted(f.allowed.items())}}
                          for f in self.files]}


def _preprocess(o: Path, obj: str, root: Path, tmp: str, name: str,
                rep: Report) -> dict[str, set[int]] | None:
    """Object obj of build dir o preprocessed again: its emitted lines per
    file (None: it could not be, the error is in rep.errors)."""
    out = os.path.join(tmp, "out.i")
    try:
        cmd = preprocess_command(recorded_command(o, obj), out)
    except (OSError, SlabconvError) as e:
        rep.errors.append(f"{name}: {obj}: {e}")
        return None
    cp = subprocess.run(cmd, cwd=o, capture_output=True, text=True)
    if cp.returncode != 0:
        rep.errors.append(f"{name}: preprocessing {obj} failed: {cp.stderr.strip()[-400:]}")
        return None
    return emitted_lines(Path(out).read_text(errors="replace"), root, o)


def check(tree: Path, changed: dict[str, dict[int, str]], builds: dict[str, Path],
          *, objects_per_header: int = 3, allow: list[Allowed] | None = None) -> Report:
    """Which changed code lines each build compiled.  `tree` is the tree
    `changed` (what changed_lines() returns) was read from; `builds` maps a
    name to the O= directory of a build of the same sources (<tree>/o of
    its own snapshot, or of `tree`).  `allow`: compiled.toml's entries."""
    allow = load_allowlist() if allow is None else allow
    compiles: dict[str, dict[str, str]] = {}     # build -> kbuild.c_compiles(), read once here
    rep = Report(list(builds), [], build_dirs=dict(builds))
    # (build, object) -> its emitted lines per file: a header's object is
    # often one already preprocessed for another changed file (mm/slub.o)
    seen: dict[tuple[str, str], dict[str, set[int]] | None] = {}
    with tempfile.TemporaryDirectory(prefix="slabconv-compiled-") as tmp:
        for f, lines in sorted(changed.items()):
            path = tree / f
            if not path.is_file():
                continue
            text = path.read_text(errors="replace")
            has_code = code_lines(text)
            code = {n: t for n, t in lines.items() if n in has_code}
            if not code:
                continue
            conds = conditional_lines(text)
            fc = FileCoverage(f, len(code))
            kept_any: set[int] = set()
            for name, o in builds.items():
                # the tree the build was made from: O= is <tree>/o
                root = o.parent if (o.parent / f).is_file() else tree
                if root != tree and (root / f).read_bytes() != path.read_bytes():
                    # line numbers would not match: a build of other sources
                    rep.errors.append(f"{name}: {f} in {root} differs from {path}: "
                                      f"the build is not of this tree")
                    fc.by[name] = 0
                    continue
                kept: set[int] = set()
                used = []
                if not f.endswith(".c") and name not in compiles:
                    compiles[name] = kbuild.c_compiles(o)
                for obj in objects_for(o, f, objects_per_header, tuple(changed),
                                       compiles.get(name)):
                    if (name, obj) not in seen:
                        seen[name, obj] = _preprocess(o, obj, root, tmp, name, rep)
                    if seen[name, obj] is None:
                        continue
                    used.append(obj)
                    emitted = seen[name, obj].get(f, set())
                    kept |= compiled_in(set(code), emitted, conds)
                    if kept == set(code):
                        break
                fc.by[name] = len(kept)
                if used:
                    fc.objects[name] = " ".join(used)
                kept_any |= kept
            for n, t in code.items():
                if n in kept_any:
                    continue
                why = next((a.reason for a in allow if a.covers(f, t)), None)
                if why is None:
                    fc.missed[n] = t
                else:
                    fc.allowed[n] = why
            rep.files.append(fc)
    return rep
