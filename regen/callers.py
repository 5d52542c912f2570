"""Uses of a converted function in files its entry does not list.

An entry that changes a function's signature (a `struct page *` parameter
or return value becomes a `struct slab *`, or the function is renamed)
adapts the callers in the files it names.  A branch may use the function
from any other file that sees its declaration: a header's function
(obj_to_index(), nearest_obj(), the memcg hooks, account_slab() ...) or
a non-static one with its prototype in a header.  After the entry, such a
call would pass a page where a slab is expected (or take a slab for a
page): the series would break at that patch.  So after each entry:

  1. the signatures it changed are read off the files it changed, before
     and after (effects.parameter_lists(); only functions some step of the
     entry names, or that return a struct slab now; a function defined
     `static` in a .c file is seen by that file only, and skipped);
  2. the files of the whole tree that name one of them (`git grep
     --no-index -F` in the tree regen was given, never in tools/ or
     scripts/, cached per source and name in $SLABCONV_CACHE/callers/;
     the functions whose signature the manifest's steps change are
     grepped at once on a thread from the start of the run (predict());
     the files the series changed so far are read as they are now),
     without the files the entry's steps for that function processed and
     those that define a function of that name;
  3. in those files, rename_fn.cocci for a renamed function, then
     slab_callsite.cocci (parameter) or slab_callsite_return.cocci
     (return value), then the fold (slab_fold.cocci, or
     slab_roundtrip.cocci in a file that cannot call mm/slab.h's helpers);
     page_param_callsite.cocci for a struct page parameter the entry
     dropped (drop_param.cocci: the argument goes from each call, the
     parameter from a prototype of the file's own) or made const
     (const_page_param.cocci: a call needs nothing, and is only matched;
     a prototype of the file's own follows); the changes go into the
     entry's own patch;
  4. every use of the name in those files (comments and strings aside)
     that the rules did not rewrite (a macro body spatch does not parse,
     its address taken, a call it does not match) stops regen, exit 1,
     naming file:line (of the tree regen was given), the function around
     it and the callee; no series is written.

A declaration the entry moved to another header is regen/visibility.py's.

A local that now only flows into page_slab() is converted later by the
usage pass (regen/usage.py), as for the entry's own callers.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from base import paths
from base.log import info, SlabconvError
from . import effects, manifest, spatch, tidy
from .usage import fold_steps


# the paragraph a patch's message gets when uses elsewhere were adapted, one
# Site.describe() a line; and the rules that may adapt them (report/review/)
HEADER = "Uses in files this patch's steps do not list, adapted to the new signature:"
_LISTED = re.compile(r"^  (\S+ \([^)]*\) uses \w+\(\))$", re.M)
PARAM_RULE = "rules/slab_callsite.cocci"
RETURN_RULE = "rules/slab_callsite_return.cocci"
RENAME_RULE = "rules/rename_fn.cocci"
PAGE_PARAM_RULE = "rules/page_param_callsite.cocci"     # a page parameter dropped or made const
SITE = "SLABCONV-SITE:"
_PAGE_PARAM = re.compile(r"(const )?struct page \*\w*")
_SLAB_PARAM = re.compile(r"(const )?struct slab \*\w*")
_MUTABLE_PAGE = re.compile(r"struct page \*\w*")
_CONST_PAGE = re.compile(r"const struct page \*\w*")
_RETURNS = r"\bstruct\s+%s\s*\*\s*(\w+)\s*\("


@dataclass(frozen=True)
class Change:
    name: str               # the function's name after the entry
    kind: str               # "param", "return", "rename", "drop" or "const"
    argpos: int = -1        # "param", "drop", "const": the position of the parameter
    const: bool = False     # "param": it is a const struct slab *
    old: str = ""           # "rename": the name before the entry

    def describe(self) -> str:
        if self.kind == "param":
            return f"{self.name}() takes a struct slab (argument {self.argpos + 1})"
        if self.kind == "return":
            return f"{self.name}() returns a struct slab"
        if self.kind == "drop":
            return f"{self.name}() no longer takes its struct page (argument {self.argpos + 1})"
        if self.kind == "const":
            return f"{self.name}() takes a const struct page (argument {self.argpos + 1})"
        return f"{self.old}() is renamed {self.name}()"


@dataclass
class Site:
    file: str
    line: int | None        # in the tree regen was given (None: a line the series wrote)
    function: str
    callee: str

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{self.function} ({where}) uses {self.callee}()"


@dataclass
class Adapted:
    steps: list[manifest.Step] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)


SOURCES = tuple(f"cocci/{r}" for r in (PARAM_RULE, "rules/slab_callsite_return.cocci",
                                       "rules/rename_fn.cocci", PAGE_PARAM_RULE, manifest.FOLD,
                                       "rules/slab_roundtrip.cocci"))


def listed(message: str) -> list[str]:
    """The uses a patch's message says were adapted in files its steps do
    not list."""
    if HEADER not in message:
        return []
    return _LISTED.findall(message.split(HEADER, 1)[1].split("\n\n\n", 1)[0])


def renames(entry: manifest.Entry) -> dict[str, str]:
    return {st.defines["from"]: st.defines["to"] for st in entry.steps
            if st.path == RENAME_RULE and "from" in st.defines and "to" in st.defines}


def _named(entry: manifest.Entry) -> set[str]:
    """The functions the entry's steps name (fn, a rename's new name)."""
    return {v for st in entry.steps for k, v in st.defines.items() if k in ("fn", "to") and v}


def changes(entry: manifest.Entry, before: dict[str, str], after: dict[str, str]) -> list[Change]:
    """The signatures `entry` changed in the files it changed (`before` and
    `after`: file -> text): a parameter of a function its steps name, from
    struct page to struct slab, dropped (drop_param.cocci: a struct page
    parameter gone, the others as they were) or made a const struct page
    (const_page_param.cocci); a struct page return value that is a struct
    slab now; a rename step's function."""
    renamed = renames(entry)
    back = {v: k for k, v in renamed.items()}
    named = _named(entry)
    out: list[Change] = []
    for f, a in after.items():
        b = before.get(f)
        if b is None:
            continue
        sb, sa = effects.strip_comments(b), effects.strip_comments(a)
        page_ret = set(re.findall(_RETURNS % "page", sb))
        for name in sorted(set(re.findall(_RETURNS % "slab", sa))):
            if back.get(name, name) in page_ret:
                out.append(Change(name, "return"))
        wanted = {back.get(n, n) for n in named}
        lb, la = _param_lists(sb, wanted), _param_lists(sa, named)
        for name in sorted(named):
            old = back.get(name, name)
            pb, pa = lb.get(old, []), la.get(name, [])
            for i in range(max((len(p) for p in pa), default=0)):
                was = any(len(p) > i and _PAGE_PARAM.fullmatch(p[i]) for p in pb)
                now = [p[i] for p in pa if len(p) > i and _SLAB_PARAM.fullmatch(p[i])]
                if was and now:
                    out.append(Change(name, "param", i, const=now[0].startswith("const ")))
                elif any(len(p) > i and _MUTABLE_PAGE.fullmatch(p[i]) for p in pb) and \
                        any(len(p) > i and _CONST_PAGE.fullmatch(p[i]) for p in pa) and \
                        not any(len(p) > i and _MUTABLE_PAGE.fullmatch(p[i]) for p in pa):
                    out.append(Change(name, "const", i))
            dropped = {i for p in pb for q in pa if len(q) == len(p) - 1
                       for i in range(len(p))
                       if _PAGE_PARAM.fullmatch(p[i]) and p[:i] + p[i + 1:] == q}
            if len(dropped) == 1 and not any(len(p) == len(q) for p in pb for q in pa):
                out.append(Change(name, "drop", dropped.pop()))
        for old, new in renamed.items():
            if re.search(r"\b%s\s*\(" % re.escape(old), sb) and \
                    re.search(r"\b%s\s*\(" % re.escape(new), sa):
                out.append(Change(new, "rename", old=old))
    return list(dict.fromkeys(out))


def _param_lists(stripped: str, names: set[str]) -> dict[str, list[list[str]]]:
    """effects.parameter_lists() of each of `names` in one pass over the
    (comment-stripped) text."""
    out: dict[str, list[list[str]]] = {}
    if not names:
        return out
    pat = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, sorted(names, key=len, reverse=True))))
    for m in pat.finditer(stripped):
        line_start = stripped.rfind("\n", 0, m.start()) + 1
        prefix = re.sub(r"\b__\w+\s*\([^()]*\)", "", stripped[line_start:m.start()]).strip()
        at_column0 = m.start() == line_start
        if (not prefix and not at_column0) or re.search(r"[=(,;!&|?:+\-/<>]|return\b", prefix):
            continue
        depth, i = 1, m.end()
        while i < len(stripped) and depth:
            depth += {"(": 1, ")": -1}.get(stripped[i], 0)
            i += 1
        out.setdefault(m.group(1), []).append(
            [effects._norm(p) for p in stripped[m.end():i - 1].split(",")])
    return out


def _decl_prefixes(text: str, name: str) -> list[str]:
    """The text before `name` on each declaration or definition of it:
    from the end of the statement or block before it, preprocessor lines
    and attributes such as __printf(3, 4) aside."""
    s = effects.strip_comments(text)
    out = []
    for m in re.finditer(r"\b%s\s*\(" % re.escape(name), s):
        start = max(s.rfind(c, 0, m.start()) for c in ";{}") + 1
        prefix = "\n".join(ln for ln in s[start:m.start()].split("\n")
                           if not ln.lstrip().startswith("#"))
        prefix = re.sub(r"\b__\w+\s*\(\s*\d[\d\s,]*\)", "", prefix)
        if re.search(r"[=(,;!&|?:+\-/<>{}\[\]]|\b(return|else|do|case)\b", prefix) or \
                not prefix.strip():
            continue                    # a call
        out.append(prefix)
    return out


def visible(name: str, after: dict[str, str]) -> bool:
    """Whether other files can call `name`: declared in a header, or not
    static in a .c file."""
    seen = False
    for f, text in after.items():
        for prefix in _decl_prefixes(text, name):
            seen = True
            if not f.endswith(".c") or not re.search(r"\b(static|STATIC)\b", prefix):
                return True
    return not seen


def defines(text: str, name: str) -> bool:
    """Whether `text` defines a function or macro `name` of its own."""
    return bool(effects.function_bodies(text, name)) or \
        re.search(r"^\s*#\s*define\s+%s\b" % re.escape(name), text, re.M) is not None


class Index:
    """Which files of the work tree name a function: git grep over the tree
    regen started from (never written: `git grep --no-index` there, its
    result cached per source and name), with the files the series changed
    so far read as they are now in the work tree.  prefetch() runs the
    grep of the names the manifest will likely ask for on a thread of its
    own, from the start of the run."""
    def __init__(self, tree: Path, source_id: str, wt_path: Path):
        self.tree, self.wt = tree, wt_path
        self.store = paths.cache_dir("callers", source_id)
        self.changed: set[str] = set()      # files the series changed so far
        self._lock = threading.Lock()
        self._pending: threading.Thread | None = None

    def prefetch(self, names: list[str]) -> None:
        self._pending = threading.Thread(target=self._baseline, args=(names,),
                                         name="callers-grep", daemon=True)
        self._pending.start()

    def _baseline(self, names: list[str]) -> dict[str, set[str]]:
        with self._lock:
            out: dict[str, set[str]] = {}
            todo = []
            for n in names:
                p = self.store / f"{n}.json"
                if p.is_file():
                    out[n] = set(json.loads(p.read_text()))
                else:
                    todo.append(n)
            if not todo:
                return out
            # fixed strings (several at once are much faster than -w or -E
            # alternatives); the word match is checked below
            cmd = ["git", "grep", "--no-index", "-l", "-F"]
            for n in todo:
                cmd += ["-e", n]
            cp = subprocess.run(cmd + ["--", "*.c", "*.h", ":!tools/", ":!scripts/"],
                                cwd=self.tree, capture_output=True, text=True, errors="replace")
            if cp.returncode not in (0, 1):
                raise SlabconvError(f"git grep for the callers of {', '.join(todo)} in "
                                    f"{self.tree}: {cp.stderr.strip()}")
            found: dict[str, set[str]] = {n: set() for n in todo}
            words = re.compile(r"\b(%s)\b" % "|".join(map(re.escape, sorted(todo, key=len,
                                                                            reverse=True))))
            for f in cp.stdout.split():
                text = (self.tree / f).read_text(errors="replace")
                for m in set(words.findall(text)):
                    found[m].add(f)
            for n, fs in found.items():
                tmp = self.store / f".{n}.json.tmp{os.getpid()}"
                tmp.write_text(json.dumps(sorted(fs)))
                tmp.replace(self.store / f"{n}.json")
                out[n] = fs
            return out

    def files(self, names: list[str]) -> dict[str, list[str]]:
        if self._pending is not None:
            self._pending.join()
            self._pending = None
        base = self._baseline(names)
        out = {}
        for n in names:
            word = re.compile(r"\b%s\b" % re.escape(n))
            fs = {f for f in base[n] if f not in self.changed}
            for f in self.changed:
                p = self.wt / f
                if p.is_file() and word.search(p.read_text(errors="replace")):
                    fs.add(f)
            out[n] = sorted(fs)
        return out


_STATIC = re.compile(r"^(?:static|STATIC)\b[^;{}()=]*?\b(\w+)\s*\(", re.M)


def predict(series: manifest.Series, tree: Path) -> list[str]:
    """The functions whose callers regen will likely look for: those whose
    signature the manifest's steps change (slab_param, slab_return,
    rename_fn: fn, from), declared in the step's files in `tree`, not
    static in a .c file."""
    texts: dict[str, str] = {}
    statics: dict[str, set[str]] = {}
    out: set[str] = set()
    for e in series.entries:
        for st in e.steps:
            if not {"rules/slab_param.cocci", "rules/slab_return.cocci", RENAME_RULE,
                    "rules/drop_param.cocci", "rules/const_page_param.cocci"} & set(st.rules):
                continue                # not a change of signature
            for k in ("fn", "from"):
                n = st.defines.get(k)
                if not n or n in out:
                    continue
                for f in st.files:
                    if f not in texts:
                        p = tree / f
                        texts[f] = effects.strip_comments(p.read_text(errors="replace")) \
                            if p.is_file() else ""
                        statics[f] = set(_STATIC.findall(         # __printf(3, 4) aside
                            re.sub(r"\b__\w+\s*\(\s*\d[\d\s,]*\)", "", texts[f])))
                    if re.search(r"\b%s\s*\(" % re.escape(n), texts[f]) and \
                            not (f.endswith(".c") and n in statics[f]):
                        out.add(n)
                        break
    renames = {st.defines["from"]: st.defines["to"] for e in series.entries for st in e.steps
               if st.path == RENAME_RULE and "from" in st.defines and "to" in st.defines}
    return sorted(out | {renames[n] for n in out if n in renames})


def _processed(entry: manifest.Entry, ch: Change) -> set[str]:
    """The files the entry's steps for this function went over: those of
    every step that names it (fn, callee, a rename's from or to)."""
    names = {ch.name, ch.old} - {""}
    mine = {f for st in entry.steps if names & set(st.defines.values()) for f in st.files}
    if not mine and ch.kind == "return":
        mine = {f for st in entry.steps if "rules/slab_return.cocci" in st.rules for f in st.files}
    return mine or set(entry.files)


_KEYWORDS = {"return", "case", "sizeof", "else", "do", "typeof", "__typeof__"}


def uses(text: str, name: str) -> list[tuple[int, int]]:
    """(line, column) of each use of `name` in code (comments and strings
    aside): not a member (`->name`, `.name`), a label or a goto, nor a
    variable of that name being declared (`type name`, `type *name`,
    without a parameter list)."""
    s = effects.strip_comments(text)
    out = []
    for m in re.finditer(r"(?<![\w.>])%s\b" % re.escape(name), s):    # not a member
        after = s[m.end():m.end() + 80].lstrip()
        if not after.startswith("("):
            bol = s.rfind("\n", 0, m.start()) + 1
            before = s[bol:m.start()]
            prev = re.search(r"(\w+)\s*\**\s*$", before)
            stmt = s[max(s.rfind(c, 0, m.start()) for c in ";{}") + 1:m.start()]
            if re.search(r"\bgoto\s+$", before) or \
                    (not before.strip() and re.match(r":(?!:)", after)) or \
                    (prev and prev.group(1) not in _KEYWORDS) or \
                    (re.match(r"\s*(?:struct\s+)?\w+\s+[\w*]", stmt) and
                     not re.search(r"[=(]", stmt) and not re.match(r"\s*return\b", stmt)):
                continue                # a label, a goto, a variable declared
        line = s.count("\n", 0, m.start()) + 1
        out.append((line, m.start() - (s.rfind("\n", 0, m.start()) + 1)))
    return out


def enclosing(text: str, line: int) -> str:
    """What holds line `line` (1-based) of `text`: "f()" (a function's
    body), "macro M" or "file scope"."""
    s = effects.strip_comments(text)
    lines = s.splitlines()
    j = line - 1
    while j > 0 and lines[j - 1].rstrip().endswith("\\"):
        j -= 1
    m = re.match(r"\s*#\s*define\s+(\w+)", lines[j]) if j < len(lines) else None
    if m:
        return f"macro {m.group(1)}"
    end = sum(len(x) + 1 for x in lines[:line - 1])
    depth, head, last = 0, "", 0
    for k, ch in enumerate(s[:end]):
        if ch == "{":
            if depth == 0:
                head = s[last:k]
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                last = k + 1
        elif ch == ";" and depth == 0:
            last = k + 1
    if depth == 0:
        return "file scope"
    head = "\n".join(x for x in head.splitlines() if not x.lstrip().startswith("#"))
    m = re.search(r"(\w+)\s*\(", head)
    return f"{m.group(1)}()" if m else "file scope"


def _sites(out: str, tree: Path) -> dict[tuple[str, int], int]:
    """How many uses the rule rewrote on each (file, line), from its output."""
    found: dict[tuple[str, int], int] = {}
    for ln in out.splitlines():
        if ln.startswith(SITE):
            path, line, _ = ln[len(SITE):].strip().rsplit(":", 2)
            p = Path(path)
            rel = str(p.relative_to(tree)) if p.is_absolute() and p.is_relative_to(tree) else \
                (path[2:] if path.startswith("./") else path)
            found[(rel, int(line))] = found.get((rel, int(line)), 0) + 1
    return found


def _why(text: str, line: int, col: int, name: str) -> str:
    s = effects.strip_comments(text).splitlines()[line - 1]
    where = enclosing(text, line)
    if where.startswith("macro "):
        return "in a macro body that spatch does not parse as code"
    rest = s[col + len(name):].lstrip()
    if not rest.startswith("("):
        return "not a call: its address is taken, and would have the old type"
    return "a call the rules do not match (too few arguments, or code spatch cannot parse)"


def _plain(source: str, detail: str, files: list[str], run) -> None:
    run()


def _run(series: manifest.Series, step: manifest.Step, wt, what: str,
         piece=_plain) -> tuple[str, dict[str, str]]:
    """One rule of the pass over its files, then the tidy of what it
    changed; each through `piece(source, detail, files, run)` (adapt())."""
    tree = wt.path
    before = {f: (tree / f).read_text(errors="replace") for f in step.files}
    got: dict[str, str] = {}

    def rule() -> None:
        got["out"] = spatch.apply_rule(series.root / step.path, tree, step.files,
                                       defines=step.defines, what=what)
    detail = " ".join(f"{a}={step.defines[a]}" for a in ("fn", "from") if a in step.defines)
    piece(f"cocci/{step.path}", detail, step.files, rule)
    out = got["out"]
    refused = spatch.refusals(out)
    if refused:
        raise SlabconvError(f"{what}: the rules refuse to convert:\n"
                            + "\n".join(f"  {r}" for r in refused))

    def tidy_() -> None:
        for f, old in before.items():
            new = (tree / f).read_text(errors="replace")
            if new != old:
                tidied = tidy.keep_detached_comments(old, tidy.tidy(old, new))
                if tidied != new:
                    (tree / f).write_text(tidied)
    piece("regen/tidy.py", "", step.files, tidy_)
    return out, before


def adapt(series: manifest.Series, entry: manifest.Entry, wt, index: Index,
          before: dict[str, str], after: dict[str, str], piece=_plain) -> Adapted:
    """Adapt the uses, in files `entry` does not list, of the functions
    whose signature it changed (`before`/`after`: the texts of the files
    it changed); raise SlabconvError (exit 1) naming every use that cannot
    be adapted.  Each rule run and each edit of the driver goes through
    `piece(source, detail, files, run)`, which calls run() (make attribute
    records what each made: report/attribution.py)."""
    result = Adapted()
    chs = [c for c in changes(entry, before, after) if visible(c.name, after)]
    if not chs:
        return result
    tree = wt.path
    names = sorted({c.old if c.kind == "rename" else c.name for c in chs})
    found = index.files(names)
    todo: list[tuple[Change, list[str]]] = []
    for c in chs:
        n = c.old if c.kind == "rename" else c.name
        skip = _processed(entry, c)
        files = []
        for f in found[n]:
            if f in skip or not (tree / f).is_file():
                continue
            text = (tree / f).read_text(errors="replace")
            if uses(text, n) and not defines(text, n):
                files.append(f)
        if files:
            todo.append((c, files))
    renamed = {c.name: fs for c, fs in todo if c.kind == "rename"}
    todo = [(c, fs if c.kind == "rename" else sorted(set(fs) | set(renamed.get(c.name, []))))
            for c, fs in todo] + \
        [(c, renamed[c.name]) for c in chs                 # the calls the rename makes
         if c.kind != "rename" and c.name in renamed and not any(c == t for t, _ in todo)]
    if not todo:
        return result
    start = {f: (tree / f).read_text(errors="replace") for _, fs in todo for f in fs}
    what = f"entry '{entry.id}' ({entry.subject}), its callers elsewhere"
    left: list[str] = []
    # renames first: the other changes are of the new name
    for c, files in sorted(todo, key=lambda t: t[0].kind != "rename"):
        if c.kind == "rename":
            step = manifest.Step("rule", RENAME_RULE, files, {"from": c.old, "to": c.name})
            info("regen", f"    callers elsewhere: {c.describe()}: {', '.join(files)}")
            _run(series, step, wt, what, piece)
            for f in files:
                text = (tree / f).read_text(errors="replace")
                for line, col in uses(text, c.old):
                    left.append(_refusal(index.tree, f, text, line, col, c.old, c))
        else:
            files = [f for f in files if uses((tree / f).read_text(errors="replace"), c.name)]
            if not files:
                continue
            defs = {"fn": c.name}
            if c.kind != "return":
                defs["argpos"] = str(c.argpos)
            if c.kind == "param" and c.const:
                defs["const_slab"] = ""
            if c.kind in ("drop", "const"):
                defs["drop" if c.kind == "drop" else "const_page"] = ""
            rule = {"param": PARAM_RULE, "return": RETURN_RULE}.get(c.kind, PAGE_PARAM_RULE)
            step = manifest.Step("rule", rule, files, defs)
            info("regen", f"    callers elsewhere: {c.describe()}: {', '.join(files)}")
            out, texts = _run(series, step, wt, what, piece)
            done = _sites(out, tree)
            for f, text in texts.items():
                seen: dict[int, int] = {}
                for line, col in uses(text, c.name):   # more uses on a line than sites rewritten
                    seen[line] = seen.get(line, 0) + 1
                    if seen[line] > done.get((f, line), 0):
                        left.append(_refusal(index.tree, f, text, line, col, c.name, c))
        result.steps.append(step)
        for f in files:
            text = start[f]
            kept = _kept_lines(text, (tree / f).read_text(errors="replace")) \
                if c.kind == "const" else set()     # a call: nothing adapted
            for line, _ in uses(text, c.old or c.name):
                if line in kept:
                    continue
                s = Site(f, _user_line(index.tree, f, text, line), enclosing(text, line),
                         c.old or c.name)
                if s not in result.sites:
                    result.sites.append(s)
    if left:
        raise SlabconvError(
            f"entry '{entry.id}' ({entry.subject}) changes the signature of functions that "
            f"files it does not list use, and {len(left)} use(s) there cannot be adapted; "
            f"the series would not build at this patch, so none is written:\n"
            + "\n".join(dict.fromkeys(left))
            + "\n  adapt them on your branch (page_slab(), slab_page(), a call instead of "
              "a macro or a function pointer), or add a step to cocci/series.toml that does")
    # the round trips a new page_slab() or slab_page() made (a dropped or
    # const page parameter makes none)
    for st in fold_steps(tree, [st for st in result.steps if st.path != PAGE_PARAM_RULE]):
        _run(series, st, wt, what, piece)
        result.steps.append(st)

    def reflow() -> None:
        for f, old in start.items():
            text = (tree / f).read_text(errors="replace")
            fixed = tidy.reflow(old, text)
            if fixed != text:
                (tree / f).write_text(fixed)
    piece("regen/tidy.py", "reflow", list(start), reflow)
    result.files = [f for f, old in start.items() if (tree / f).read_text(errors="replace") != old]
    # a const parameter asks nothing of a call: files where every use was one
    # are proved and left as they were, and named nowhere
    result.sites = [x for x in result.sites if x.file in result.files]
    result.steps = [st for st in result.steps if set(st.files) & set(result.files)]
    return result


def _kept_lines(old: str, new: str) -> set[int]:
    """The lines (1-based) of `old` that `new` has as they were."""
    import difflib
    sm = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return {i + 1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag == "equal"
            for i in range(i1, i2)}


def _user_line(src: Path, f: str, text: str, line: int) -> int | None:
    """Line `line` of `text` (file `f` as the series has left it) in the
    tree regen was given (`src`); None for a line the series wrote."""
    import difflib
    p = src / f
    if not p.is_file():
        return None
    old = p.read_text(errors="replace").splitlines()
    sm = difflib.SequenceMatcher(None, old, text.splitlines(), autojunk=False)
    for tag, i1, _, j1, j2 in sm.get_opcodes():
        if tag == "equal" and j1 < line <= j2:
            return i1 + line - j1
    return None


def _refusal(src: Path, f: str, text: str, line: int, col: int, name: str, c: Change) -> str:
    was = _user_line(src, f, text, line)
    where = f"{f}:{was}" if was is not None else f"{f}:{line} (a line the series wrote)"
    return (f"  {where}: {enclosing(text, line)}: {name}(): "
            f"{_why(text, line, col, name)} ({c.describe()})")
