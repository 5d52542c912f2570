"""The series manifest: an ordered list of entries, each one patch.

Schema (TOML, see cocci/series.toml for the documented real thing):

    [series]            subject, blurb, seed_author, date
    [[entry]]           id, subject, message, seed, depends (optional),
                        files (optional: the files of every step that names none)
                        skip = "reason": a step of the seed series that does
                        not exist in this kernel; reported, no patch
                        usage = true: no steps; the usage pass
                        (regen/usage.py) converts what it finds, and the
                        entry has no patch when it finds nothing
      [[entry.step]]    one of:
                          rule = "rules/x.cocci", files = [...], defines = {k = v}
                          template = "templates/x.h", into = "file",
                            before = "symbol" | at = "start" | "end"
                            | replace_macro = "NAME" (its #define, continuations included)
                          remove_members = [names], struct = "s", into = "file",
                            why = "..." -- members taken out of a struct
                            definition by name (regen/members.py)
                          convert = "param" | "return" | "local" | "members", fn = "f",
                            [var = "page", to = "slab"], [const = true],
                            [files = [...], default mm/slub.c]
                            -- the generic conversion, expanded into its
                            rule steps (see CONVERSIONS)
      [[entry.expect]]  one of:
                          defines = [names], in = "file"
                          signature = "function", param = "text", in = [files]
                          absent = "regex", in = [files]
                          present = "regex", in = [files]
      [[entry.upstream]] like [[entry.expect]]: on a kernel that has struct
                        slab, all of them holding shows that upstream made
                        the entry's change its own way (verdict "upstream",
                        with the lines found), where the entry's rules no
                        longer fit
      [[entry.code]]    functions = [names or globs], why = "...",
                        objects = [...] (optional)
                        -- functions whose compiled code this patch is
                        expected to change (verify/objdiff/); an entry
                        without one is type-only: its patch must leave the
                        code of every function as it was
"""
from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from base.log import SlabconvError


@dataclass
class Step:
    kind: str                    # "rule", "template" or "members"
    path: str                    # relative to cocci/
    files: list[str]             # files the step may change
    defines: dict[str, str] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    before: str | None = None    # template anchor: definition name
    replace_macro: str | None = None   # template: the macro whose definition it replaces
    at: str | None = None        # template anchor: "start" (after the include guard's #define
                                 # and the comment under it) or "end" (before its #endif)
    why: str = ""                # why a template rather than a rule
    optional: bool = False       # may change nothing
    chain: list[str] = field(default_factory=list)   # rules run after `path` in the same spatch run
    convert: str = ""            # the generic conversion this step is ("param", ...), if one
    members: list[str] = field(default_factory=list)   # kind "members": the names to remove
    alone: bool = False          # runs in a spatch run of its own, never composed with others

    @property
    def rules(self) -> list[str]:
        return [self.path] + self.chain if self.kind == "rule" else []

    @property
    def target(self) -> str:
        """The variable a generic conversion's effect shows under
        (effects.converted()): a local's new name (`to`), the page the
        members conversion keeps (`var`), else `slab`."""
        return self.defines.get("to", self.defines.get("var", "slab"))

    def describe(self) -> str:
        return f"{self.kind} {' + '.join(self.rules) or self.path}"

    @property
    def source(self) -> str:
        """What produced the step, for the commit message."""
        if self.kind == "members":
            return f"regen/members.py on struct {self.defines['struct']}"
        return ", ".join(f"cocci/{r}" for r in (self.rules or [self.path]))


# What a rule file asks of the driver before each run of it, one line each
# in its header:
#   // slabconv: split-declaration VAR in FN
#       the local named by the rule's -D VAR gets a declaration of its own
#       in the function named by -D FN (regen/declsplit.py: Coccinelle
#       cannot match one declarator of `struct page *a, *b;`)
#   // slabconv: acts-where N REGEX
#       the rule can change a top-level declaration or definition only
#       where the Python regular expression REGEX (multi-line) matches N
#       times or more with the same first group (or N times, without a
#       group); several such lines: where any of them holds.  A run is
#       saved where none holds (regen/after.py)
#   // slabconv: nullable-macros NAME
#       the rule runs with -D NAME=m1,m2,...: the function-like macros that
#       some configuration defines as NULL, read off the definitions in the
#       step's files and the headers they include (regen/nullable.py; "-"
#       for none)
#   // slabconv: locals-first RULE
#       before the rule runs, the struct page locals that the report rule
#       RULE (a path under cocci/, run over the step's files with its own
#       directives honoured) reports are converted to struct slab, each with
#       slab_var.cocci as `convert = "local"` would (regen/series.py)
DIRECTIVE = "// slabconv:"


@dataclass(frozen=True)
class SplitDeclaration:
    var: str                     # the -D name whose value is the local
    fn: str                      # the -D name whose value is the function
    where: str                   # the directive's file:line


@dataclass(frozen=True)
class ActsWhere:
    count: int
    pattern: re.Pattern
    where: str                   # the directive's file:line

    def holds(self, text: str) -> bool:
        """Whether the rule may change `text` (one top-level unit)."""
        found = self.pattern.findall(text)
        if self.pattern.groups:
            found = [f[0] if isinstance(f, tuple) else f for f in found]
            return any(n >= self.count for n in Counter(found).values())
        return len(found) >= self.count


@dataclass(frozen=True)
class NullableMacros:
    define: str                  # the -D name that gets the macros
    where: str                   # the directive's file:line


@dataclass(frozen=True)
class LocalsFirst:
    rule: str                    # the report rule, relative to cocci/
    where: str                   # the directive's file:line


def directives(rule: Path) -> list[SplitDeclaration | ActsWhere | NullableMacros | LocalsFirst]:
    """The directives of a rule file's `// slabconv:` lines; an unknown
    one, or a locals-first rule that does not exist, is an error at its
    file and line."""
    out: list[SplitDeclaration | ActsWhere | NullableMacros | LocalsFirst] = []
    for n, line in enumerate(rule.read_text(errors="replace").splitlines(), 1):
        if line.startswith(DIRECTIVE):
            text = line[len(DIRECTIVE):].strip()
            split = re.fullmatch(r"split-declaration (\w+) in (\w+)", text)
            acts = re.fullmatch(r"acts-where (\d+) (.+)", text)
            nullable = re.fullmatch(r"nullable-macros (\w+)", text)
            first = re.fullmatch(r"locals-first (\S+\.cocci)", text)
            if split:
                out.append(SplitDeclaration(split.group(1), split.group(2), f"{rule}:{n}"))
            elif nullable:
                out.append(NullableMacros(nullable.group(1), f"{rule}:{n}"))
            elif first:
                if not (rule.parent.parent / first.group(1)).is_file():
                    raise SlabconvError(f"{rule}:{n}: locals-first: {first.group(1)} does not "
                                        f"exist in {rule.parent.parent}", 2)
                out.append(LocalsFirst(first.group(1), f"{rule}:{n}"))
            elif acts:
                try:
                    pattern = re.compile(acts.group(2), re.M)
                except re.error as e:
                    raise SlabconvError(f"{rule}:{n}: acts-where: {e}", 2) from None
                out.append(ActsWhere(int(acts.group(1)), pattern, f"{rule}:{n}"))
            else:
                raise SlabconvError(f"{rule}:{n}: unknown directive '{line.strip()}' "
                                    f"(known: '{DIRECTIVE} split-declaration VAR in FN', "
                                    f"'{DIRECTIVE} acts-where N REGEX', "
                                    f"'{DIRECTIVE} nullable-macros NAME', "
                                    f"'{DIRECTIVE} locals-first RULE')", 2)
    return out


def _check_directives(step: Step, root: Path, where: str) -> None:
    """Every -D name a directive of the step's rules reads is one of the step's."""
    for r in step.rules:
        for d in (d for d in directives(root / r) if isinstance(d, SplitDeclaration)):
            missing = [x for x in (d.var, d.fn) if x not in step.defines]
            if missing:
                raise SlabconvError(f"manifest: {where}: {d.where} reads -D "
                                    f"{', '.join(missing)}, which the step does not define", 2)


@dataclass
class Expect:
    kind: str                    # defines | signature | absent | present
    value: object
    files: list[str]
    param: str | None = None

    def describe(self) -> str:
        where = ", ".join(self.files)
        if self.kind == "defines":
            return f"{', '.join(self.value)} defined in {where}"
        if self.kind == "signature":
            return f"{self.value}() takes '{self.param}' in {where}"
        if self.kind == "absent":
            return f"no match for /{self.value}/ in {where}"
        return f"a match for /{self.value}/ in {where}"


@dataclass
class CodeExpect:
    """Functions whose compiled code a patch is expected to change, and why
    (verify/objdiff.judge).  A name covers its GCC clones (foo.cold,
    foo.isra.0); globs are allowed.  No objects: any object.  `requires`:
    Kconfig symbols (without CONFIG_) that a configuration must set for the
    declaration to hold there (a change only some configuration compiles);
    none: every configuration."""
    functions: list[str]
    why: str
    objects: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)

    def describe(self) -> str:
        where = f" in {', '.join(self.objects)}" if self.objects else ""
        return f"code of {', '.join(self.functions)}{where} changes: {self.why}"


@dataclass
class Entry:
    id: str
    subject: str
    message: str
    seed: str
    steps: list[Step]
    expects: list[Expect]
    depends: list[str] = field(default_factory=list)
    skip: str = ""               # why the step does not apply (no patch)
    code: list[CodeExpect] = field(default_factory=list)   # expected code changes
    usage: bool = False          # the usage pass (regen/usage.py) chooses its steps
    # on a kernel that has struct slab: what shows that upstream made this
    # change in its own way (all must hold; regen/upstream.py)
    upstream: list[Expect] = field(default_factory=list)
    # set by regen: the conversions a locals-first directive of one of its
    # rules added (regen/series.py)
    added: list = field(default_factory=list)
    # set by regen: what those directives found (usage.Found), for the message
    first: list = field(default_factory=list)
    # set by regen: the series' after-rules ("cocci/rules/x.cocci") that
    # changed nothing in this entry (its commit message names only what
    # made the patch)
    quiet: set = field(default_factory=set)

    @property
    def files(self) -> list[str]:
        seen: list[str] = []
        for s in self.steps:
            for f in s.files:
                if f not in seen:
                    seen.append(f)
        return seen

    @property
    def reads(self) -> set[str]:
        """Every file applying the entry reads: its steps' files (spatch
        runs with --no-includes, and the driver's own checks read the same
        files) and the files its expected effects are checked in."""
        return set(self.files) | {f for x in self.expects for f in x.files}


@dataclass
class Series:
    subject: str
    blurb: str
    seed_author: str
    date: str
    entries: list[Entry]
    root: Path                   # the cocci/ directory
    link: str = ""               # the original posting (each commit's Link: trailer)
    after_rules: list[str] = field(default_factory=list)   # run alone after each entry with rules

    def entry(self, ident: str) -> Entry:
        for e in self.entries:
            if e.id == ident:
                return e
        raise SlabconvError(f"no manifest entry '{ident}'", exit_code=2)


def _req(d: dict, key: str, where: str):
    if key not in d:
        raise SlabconvError(f"manifest: {where}: missing '{key}'", exit_code=2)
    return d[key]


def _as_list(v) -> list[str]:
    return [v] if isinstance(v, str) else list(v)


# The generic conversion "Convert fn() to take / return / use a struct slab":
# one manifest step expands into the rules that change the type and then
# adapt the callers and fold the page/slab round trips away.
CONVERSIONS = {
    "param": ("rules/slab_param.cocci", "rules/slab_callers.cocci"),
    "return": ("rules/slab_return.cocci",),
    "local": ("rules/slab_var.cocci",),
    "members": ("rules/slab_members_of_page.cocci",),   # the page stays: page_slab(var)->F
}
FOLD = "rules/slab_fold.cocci"
DEFAULT_FILES = ["mm/slub.c"]


def _convert(d: dict, where: str) -> list[Step]:
    kind = d["convert"]
    if kind not in CONVERSIONS:
        raise SlabconvError(f"manifest: {where}: convert = '{kind}' "
                            f"(one of {', '.join(CONVERSIONS)})", 2)
    fn = _req(d, "fn", where)
    files = _as_list(d.get("files", DEFAULT_FILES))
    defines = {"fn": fn}
    if kind == "param" and d.get("const"):
        defines["const_slab"] = ""
    if kind == "local":
        defines["var"] = d.get("var", "page")
        defines["to"] = d.get("to", "slab")
        if defines["var"] == defines["to"]:
            defines["same_name"] = ""      # the members need no rename
    if kind == "members":
        defines["var"] = d.get("var", "page")
    unknown = set(d) - {"convert", "fn", "files", "const", "var", "to"}
    if unknown:
        raise SlabconvError(f"manifest: {where}: unknown key(s) for convert: "
                            f"{', '.join(sorted(unknown))}", 2)
    rules = CONVERSIONS[kind]
    # One spatch run: the type change, then (for a parameter) the callers,
    # then the fold -- the later rules see what the earlier ones changed.
    return [Step("rule", rules[0], files, dict(defines), chain=list(rules[1:]), convert=kind)]


def _fold_once(steps: list[Step], after_rules: list[str]) -> list[Step]:
    """An entry with conversions ends with one run of the fold over the
    files they touched (not one per conversion: the fold reads the whole
    file, and nothing in a conversion needs an earlier one folded).  Any
    entry with rules then runs the series' `after_rules` (slab_page_local,
    page_slab_local) over the files of its rules, in a spatch run of their
    own: a helper the entry made a function take more than once gets its
    local in that entry's patch."""
    conv = [st for st in steps if st.path in {r[0] for r in CONVERSIONS.values()}]
    if conv:
        files: list[str] = []
        for st in conv:
            files += [f for f in st.files if f not in files]
        last = steps[-1]
        if last.path == FOLD or FOLD in last.chain:
            pass
        elif last in conv and last.files == files:
            last.chain.append(FOLD)          # same spatch run, one parse less
        else:
            steps = steps + [Step("rule", FOLD, files, optional=True)]
    rule_files: list[str] = []
    for st in steps:
        if st.kind == "rule":
            rule_files += [f for f in st.files if f not in rule_files]
    if after_rules and rule_files:
        steps = steps + [Step("rule", after_rules[0], rule_files, optional=True, alone=True,
                              chain=list(after_rules[1:]))]
    return steps

def _steps(d: dict, where: str, root: Path) -> list[Step]:
    if "convert" in d:
        steps = _convert(d, where)
        for st in steps:
            for r in st.rules:
                if not (root / r).is_file():
                    raise SlabconvError(f"manifest: {where}: {r} does not exist in {root}", 2)
            _check_directives(st, root, where)
        return steps
    return [_step(d, where, root)]


def _step(d: dict, where: str, root: Path) -> Step:
    if "rule" in d and "template" in d:
        raise SlabconvError(f"manifest: {where}: a step is a rule or a template, not both", 2)
    if "rule" in d:
        files = _as_list(_req(d, "files", where))
        step = Step("rule", d["rule"], files, dict(d.get("defines", {})),
                    list(d.get("options", [])), optional=bool(d.get("optional", False)))
    elif "template" in d:
        into = _req(d, "into", where)
        if sum(k in d for k in ("before", "at", "replace_macro")) != 1:
            raise SlabconvError(f"manifest: {where}: a template needs exactly one of "
                                f"'before' (a definition name), 'at = \"start\"|\"end\"' or "
                                f"'replace_macro' (a macro whose definition it replaces)", 2)
        if d.get("at", "end") not in ("start", "end"):
            raise SlabconvError(f"manifest: {where}: at = '{d['at']}' (\"start\" or \"end\")", 2)
        if not d.get("why"):
            raise SlabconvError(f"manifest: {where}: a template step must say 'why' "
                                f"SmPL does not fit", 2)
        step = Step("template", d["template"], [into], before=d.get("before"),
                    at=d.get("at"), why=d["why"], replace_macro=d.get("replace_macro"))
    elif "remove_members" in d:
        into = _req(d, "into", where)
        struct = _req(d, "struct", where)
        names = _as_list(d["remove_members"])
        if not d.get("why"):
            raise SlabconvError(f"manifest: {where}: a remove_members step must say 'why' "
                                f"SmPL does not fit", 2)
        return Step("members", f"remove members of struct {struct}", [into],
                    {"struct": struct}, why=d["why"], members=names)
    else:
        raise SlabconvError(f"manifest: {where}: a step needs 'rule', 'template' or "
                            f"'remove_members'", 2)
    if not (root / step.path).is_file():
        raise SlabconvError(f"manifest: {where}: {step.path} does not exist in {root}", 2)
    if step.kind == "rule":
        _check_directives(step, root, where)
    return step


def _expect(d: dict, where: str) -> Expect:
    files = _as_list(_req(d, "in", where))
    for kind in ("defines", "signature", "absent", "present"):
        if kind in d:
            if kind == "defines":
                return Expect(kind, _as_list(d[kind]), files)
            if kind == "signature":
                return Expect(kind, d[kind], files, param=_req(d, "param", where))
            return Expect(kind, d[kind], files)
    raise SlabconvError(f"manifest: {where}: expect needs one of defines/signature/absent/present", 2)


def _code(d: dict, where: str) -> CodeExpect:
    unknown = set(d) - {"functions", "objects", "why", "requires"}
    if unknown:
        raise SlabconvError(f"manifest: {where}: unknown key(s) {', '.join(sorted(unknown))} "
                            f"(functions, objects, why, requires)", 2)
    req = _as_list(d.get("requires", []))
    if not all(isinstance(r, str) and re.fullmatch(r"[A-Z0-9_]+", r)
               and not r.startswith("CONFIG_") for r in req):
        raise SlabconvError(f"manifest: {where}: 'requires' must be Kconfig symbols "
                            f"without CONFIG_ (e.g. KASAN_SW_TAGS)", 2)
    fns = _as_list(_req(d, "functions", where))
    objs = _as_list(d.get("objects", []))
    why = str(d.get("why", "")).strip()
    if not fns or not all(isinstance(f, str) and f.strip() for f in fns):
        raise SlabconvError(f"manifest: {where}: 'functions' must name at least one function", 2)
    if not all(isinstance(o, str) and o.strip() for o in objs):
        raise SlabconvError(f"manifest: {where}: 'objects' must be file names", 2)
    if not why:
        raise SlabconvError(f"manifest: {where}: an expected code change must say 'why'", 2)
    return CodeExpect([f.strip() for f in fns], " ".join(why.split()),
                      [o.strip() for o in objs], list(req))


def load(path: Path) -> Series:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlabconvError(f"manifest {path}: {e}", exit_code=2)
    root = path.parent
    s = _req(data, "series", str(path))
    after_rules = _as_list(s.get("after_rules", []))
    for r in after_rules:
        if not (root / r).is_file():
            raise SlabconvError(f"manifest: series after_rules: {r} does not exist in {root}", 2)
    entries = []
    ids = set()
    for i, e in enumerate(data.get("entry", []), 1):
        where = f"entry {i} ({e.get('id', '?')})"
        ident = _req(e, "id", where)
        if ident in ids:
            raise SlabconvError(f"manifest: duplicate entry id '{ident}'", 2)
        ids.add(ident)
        subject = _req(e, "subject", where)
        skip = e.get("skip", "")
        if skip:
            if "step" in e or "expect" in e or "code" in e:
                raise SlabconvError(f"manifest: {where}: a skipped entry has no steps, "
                                    f"expects or code", 2)
            entries.append(Entry(ident, subject, "", e.get("seed", ""), [], [],
                                 list(e.get("depends", [])), skip=skip.strip()))
            continue
        message = _req(e, "message", where)
        if e.get("usage"):
            if "step" in e or "expect" in e or "code" in e:
                raise SlabconvError(f"manifest: {where}: a usage entry has no steps, expects "
                                    f"or code: the usage pass chooses its conversions", 2)
            entries.append(Entry(ident, subject, message.strip(), e.get("seed", ""), [], [],
                                 list(e.get("depends", [])), usage=True))
            continue
        default_files = e.get("files")       # the steps' files unless a step names its own
        steps = _fold_once([x for j, st in enumerate(_req(e, "step", where), 1)
                            for x in _steps(st if "files" in st or not default_files
                                            else {**st, "files": default_files},
                                            f"{where} step {j}", root)], after_rules)
        expects = [_expect(x, f"{where} expect {j}") for j, x in enumerate(_req(e, "expect", where), 1)]
        code = [_code(x, f"{where} code {j}") for j, x in enumerate(e.get("code", []), 1)]
        deps = list(e.get("depends", []))
        for d in deps:
            if d not in ids:
                raise SlabconvError(f"manifest: {where} depends on '{d}', which is not an earlier entry", 2)
        ups = [_expect(x, f"{where} upstream {j}") for j, x in enumerate(e.get("upstream", []), 1)]
        entries.append(Entry(ident, subject, message.strip(),
                             e.get("seed", ""), steps, expects, deps, code=code, upstream=ups))
    if not entries:
        raise SlabconvError(f"manifest {path}: no entries", 2)
    return Series(_req(s, "subject", "series"), s.get("blurb", "").strip(),
                  _req(s, "seed_author", "series"), _req(s, "date", "series"), entries, root,
                  link=s.get("link", ""), after_rules=after_rules)
