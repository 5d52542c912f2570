"""The usage pass: convert the code the manifest does not name.

The named entries of cocci/series.toml convert the functions they name.
A tree with slab code of its own (a maintainer's branch) has functions the
manifest has never heard of; after the named entries they still hold a
`struct page *` that they use as a slab.  The manifest's usage entry
(`usage = true`, just before the removal of the slab members from struct
page) runs this pass:

  1. cocci/rules/slab_usage.cocci (report mode) over every file that may
     use a page as a slab finds the struct page parameters and locals that
     are used as a slab and only as a slab (a member only slabs have, a
     walk of a slab list, an argument wrapped in page_slab() for a
     function that takes a struct slab); no function is named;
  2. each one found is converted with the named entries' own generic
     conversions: a parameter with slab_param.cocci and slab_callers.cocci
     over the file and every file that calls the function, a local with
     slab_var.cocci; then slab_fold.cocci;
  3. again, until nothing new is found: a caller whose local only flowed
     into the converted parameter now passes page_slab(local), which makes
     that local one used only as a slab, converted in the next round
     (no page_slab() left around it);
  4. a variable used both as a page and as a slab that reaches a slab
     member keeps its type, its uses as a page and its NULL; each slab
     member it reaches is reached through page_slab() instead
     (slab_members_of_page.cocci, the safe form).  One that is also the
     cursor of a slab list walk is refused: the walk needs the variable to
     be a slab.  regen/guard.py then stops regen before the removal with
     its place, and the refusal says why.

The report of each file is cached by the rule's text, the spatch version
and the file's content.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from base import paths
from base.log import info
from regen import field_users
from . import manifest, spatch


RULE = paths.COCCI / "rules" / "slab_usage.cocci"
ROUNDTRIP = "rules/slab_roundtrip.cocci"   # the fold outside mm/
MEMBERS = "members"     # the safe form's conversion (manifest.CONVERSIONS)
ROUNDS = 4          # a caller's local converted after its callee's parameter, and so on
_LINE = re.compile(r"^SLABCONV-(USAGE|MIXED): (param|local) (\S+):(\d+): (\w+) (\w+)"
                   r"( walk)?$", re.M)
# what is reported, by the form of use (slab_usage.cocci)
SLAB_ONLY, MIXED, MIXED_WALK = "", "mixed", "mixed, walked"


@dataclass(frozen=True)
class Found:
    kind: str       # "param" or "local"
    file: str
    line: int
    fn: str
    var: str
    use: str = SLAB_ONLY    # MIXED: used as a page too; MIXED_WALK: and walked as a slab

    def describe(self) -> str:
        what = "parameter" if self.kind == "param" else "local"
        return f"{self.fn}(): {what} {self.var} ({self.file})"

    def refusal(self) -> str:
        """Why the usage pass leaves it (MIXED_WALK), as the stop names it."""
        return (f"{self.describe()}: used as a page and as the cursor of a slab list "
                f"walk; the safe form (its slab members through page_slab()) was "
                f"tried and refused: the walk needs it to be a struct slab, its "
                f"uses as a page need it to stay a page")


def parse(text: str) -> list[Found]:
    out = []
    for m in _LINE.finditer(text):
        f = m.group(3)
        use = SLAB_ONLY if m.group(1) == "USAGE" else MIXED_WALK if m.group(7) else MIXED
        out.append(Found(m.group(2), f[2:] if f.startswith("./") else f, int(m.group(4)),
                         m.group(5), m.group(6), use))
    return out


def may_use_as_slab(text: str) -> bool:
    """Whether slab_usage.cocci can find something in a file of this text:
    a slab member reached from a name declared with struct page (and the
    other forms verify/field_users.may_use() keeps), or such a name passed
    as page_slab(x) or walked as the cursor of a slab_list walk.  Loose: it
    keeps more files than the rule reports on, never fewer."""
    if field_users.may_use(text):
        return True
    for m in re.finditer(r"[(,]\s*page_slab\(\s*(\w+)\s*\)|"
                         r"\(\s*(\w+)\s*,[^;{}]*,\s*slab_list\s*\)", text):
        if field_users._declared_page(m.group(1) or m.group(2), text):
            return True
    return False


def _pattern() -> str:
    """What the grep in candidates() looks for (grep -E)."""
    names = "|".join(field_users.fields())
    return r"(->|\.)[[:space:]]*(%s)\b|\bslab_list[[:space:]]*\)|\bpage_slab[[:space:]]*\(" % names


def _keeps(text: str) -> bool:
    return re.search(r"struct\s+page\b", text) is not None and may_use_as_slab(text)


def candidates(tree: Path, since: tuple[list[str], set[str]] | None = None) -> list[str]:
    """The .c and .h files where a page may be used as a slab: a slab
    member after -> or ., a walk with the slab_list member, page_slab();
    narrowed by may_use_as_slab().

    `since`: (the candidates of the tree regen started from, the files
    changed since then): only those files are read again."""
    if since is not None:
        return field_users.rescan(tree, since, _pattern(), _keeps)
    cp = subprocess.run(["grep", "-rlE", "--include=*.c", "--include=*.h", _pattern(), "."],
                        cwd=tree, capture_output=True, text=True)
    out = []
    for f in sorted(p[2:] for p in cp.stdout.split() if p.startswith("./")):
        if f.startswith(".git/"):
            continue
        if _keeps((tree / f).read_text(errors="replace")):
            out.append(f)
    return out


def _key(tree: Path, f: str) -> str:
    h = hashlib.sha256()
    for part in (RULE.read_bytes(), spatch.spatch_version().encode(), f.encode(),
                 (tree / f).read_bytes()):
        h.update(part + b"\0")
    return h.hexdigest()


def find(tree: Path, files: list[str] | None = None,
         since: tuple[list[str], set[str]] | None = None) -> list[Found]:
    """What slab_usage.cocci reports in `files` (default: candidates(tree,
    since)), results cached per file content."""
    files = candidates(tree, since) if files is None else files
    store = paths.cache_dir("usage")
    out: list[Found] = []
    todo = []
    for f in files:
        k = store / (_key(tree, f) + ".json")
        if k.is_file():
            out += [Found(**d) for d in json.loads(k.read_text())]
        else:
            todo.append((f, k))

    if todo:
        info("regen", f"    {RULE.name} over {len(todo)} file(s) ({len(files) - len(todo)} cached)")
    for i in range(0, len(todo), 64):
        part = todo[i:i + 64]
        opts = ["-j", str(spatch.JOBS), "--chunksize", "1"] if len(part) > 1 and spatch.JOBS > 1 else []
        found = parse(spatch.report_rule(RULE, tree, [f for f, _ in part], options=opts,
                                         what="usage pass"))
        out += found
        for f, k in part:
            tmp = k.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps([x.__dict__ for x in found if x.file == f]))
            tmp.replace(k)
    return sorted(set(out), key=lambda x: (x.file, x.line, x.var))


def _function_text(text: str, fn: str) -> str:
    """The definition of fn in `text` (from its name to the closing brace at
    column 0), or ''."""
    m = re.search(r"^\w[^;{}]*\b%s\s*\([^;{]*\)\s*\{" % re.escape(fn), text, re.M)
    if not m:
        return ""
    end = re.search(r"^\}", text[m.end():], re.M)
    return text[m.start():m.end() + (end.end() if end else 0)]


def _is_static(text: str, fn: str) -> bool:
    m = re.search(r"^\w[^;{}]*\b%s\s*\(" % re.escape(fn), text, re.M)
    return bool(m) and re.match(r"(static|STATIC)\b", m.group(0)) is not None


def _callers(tree: Path, f: str, fn: str) -> list[str]:
    """The files that name fn: its own file when it is static, else every
    .c and .h file of the tree that names it (git grep in the work tree)."""
    if _is_static((tree / f).read_text(errors="replace"), fn):
        return [f]
    cp = subprocess.run(["git", "-C", str(tree), "grep", "-lw", fn, "--", "*.c", "*.h"],
                        capture_output=True, text=True)
    names = [x for x in cp.stdout.split() if x != f]
    return [f] + sorted(names)


def names_slab(body: str) -> bool:
    """Whether code of a function names something `slab` that a local of
    that name would clash with: in code, not in a comment or a string, and
    not a member (`c->slab`, `x.slab`)."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", " ",
                  body, flags=re.S)
    return re.search(r"(?<!->)(?<!\.)\bslab\b", code) is not None


def steps_for(tree: Path, found: list[Found]) -> tuple[list[manifest.Step], list[Found]]:
    """The conversion steps of what was found, and what is left out (the
    new name `slab` is taken in the function: the conversion would clash;
    a page used as a page that is walked as a slab)."""
    steps: list[manifest.Step] = []
    left: list[Found] = []
    seen = set()
    for x in found:
        if (x.kind, x.fn, x.var) in seen:
            continue
        seen.add((x.kind, x.fn, x.var))
        if x.use == MIXED_WALK:
            left.append(x)
            continue
        if x.use == MIXED:          # the page keeps its name: no clash to look for
            steps += manifest._convert({"convert": MEMBERS, "fn": x.fn, "var": x.var,
                                        "files": [x.file]}, f"usage pass: {x.describe()}")
            continue
        body = _function_text((tree / x.file).read_text(errors="replace"), x.fn)
        clash = x.var != "slab" and names_slab(body)
        if x.kind == "param":
            if clash:
                left.append(x)
                continue
            d = {"convert": "param", "fn": x.fn, "files": _callers(tree, x.file, x.fn)}
        else:
            d = {"convert": "local", "fn": x.fn, "var": x.var, "files": [x.file],
                 "to": x.var if clash else "slab"}
        steps += manifest._convert(d, f"usage pass: {x.describe()}")
    return steps, left


def sees_slab_helpers(tree: Path, f: str) -> bool:
    """Whether code in `f` can call mm/slab.h's helpers (virt_to_slab(),
    slab_address(), ...): mm/slab.h itself, or a file that includes it."""
    if f == "mm/slab.h":
        return True
    text = (tree / f).read_text(errors="replace")
    return re.search(r'^#\s*include\s+"(\.\./)*slab\.h"', text, re.M) is not None


def fold_steps(tree: Path, steps: list[manifest.Step]) -> list[manifest.Step]:
    """The fold after the conversions (slab_fold.cocci), over the files it
    may fold in: it writes mm/slab.h's helpers (page_slab(virt_to_head_page(x))
    becomes virt_to_slab(x)), which a file that does not include mm/slab.h
    (code outside mm/) cannot call; there page_slab() and slab_page(),
    which <linux/page-flags.h> defines, stay, and only their round trips
    are folded (slab_roundtrip.cocci)."""
    inside: list[str] = []
    outside: list[str] = []
    for st in steps:
        for f in st.files:
            if f not in inside + outside:
                (inside if sees_slab_helpers(tree, f) else outside).append(f)
    return ([manifest.Step("rule", manifest.FOLD, inside, optional=True)] if inside else []) + \
        ([manifest.Step("rule", ROUNDTRIP, outside, optional=True)] if outside else [])


MIXED_HEADER = ("Kept as a page, being used as one too; the slab members they reach are "
                "reached through page_slab():")


def apply(series: manifest.Series, entry: manifest.Entry, wt, apply_entry,
          since: tuple[list[str], set[str]] | None = None
          ) -> tuple[manifest.Entry, list[str], list[Found], list[Found]]:
    """Run the usage pass for `entry` on the work tree: find, convert, again
    until nothing new is found, then the safe form for the pages used both
    ways; `apply_entry(series, entry, wt)` (regen's own, passed in so that
    this pass stays below regen/series.py) applies each round's steps.
    Returns the entry as it is committed (its steps, and its message with
    the list of conversions), the changed files, the conversions (none: no
    patch) and the refusals (Found.refusal()).  `since`: as candidates()
    takes it."""
    from dataclasses import replace
    done: list[Found] = []
    keys: set = set()
    steps_all: list[manifest.Step] = []
    changed: list[str] = []

    def now():
        return None if since is None else (since[0], since[1] | set(changed))

    def run(steps: list[manifest.Step]) -> None:
        """Apply `steps` as a part of the entry; note the files they change."""
        step_entry = replace(entry, steps=steps, expects=[], usage=False)
        for f in apply_entry(series, step_entry, wt):
            if f not in changed:
                changed.append(f)
        steps_all.extend(steps)

    mixed: list[Found] = []
    for _ in range(ROUNDS):
        everything = find(wt.path, since=now())
        mixed = [x for x in everything if x.use != SLAB_ONLY]
        found = [x for x in everything
                 if x.use == SLAB_ONLY and (x.kind, x.fn, x.var) not in keys]
        steps, left = steps_for(wt.path, found)
        for x in left:
            info("regen", f"    usage: not converted: {x.describe()}: the function "
                          f"has a `slab` of its own")
        found = [x for x in found if x not in left]
        if not steps:
            break
        for x in found:
            info("regen", f"    usage: {x.describe()}")
        run(steps + fold_steps(wt.path, steps))
        done += found
        keys |= {(x.kind, x.fn, x.var) for x in found}
    else:
        mixed = [x for x in find(wt.path, since=now()) if x.use != SLAB_ONLY]
    # the pages used both ways, once every variable used only as a slab is
    # one: a conversion of a round may have made a use as a page one as a slab
    steps, refused = steps_for(wt.path, mixed)
    safe = [x for x in mixed if x not in refused]
    for x in refused:
        info("regen", f"    usage: not converted: {x.refusal()}")
    for x in safe:
        info("regen", f"    usage: {x.describe()}: its slab members through page_slab()")
    if steps:
        run(steps)
    if not done and not safe:
        return entry, [], [], refused
    message = entry.message
    if done:
        listing = "\n".join(f"  {x.describe()}" for x in done)
        message += (f"\n\nConverted because of how they are used (no "
                    f"manifest entry names them):\n\n{listing}")
    if safe:
        listing = "\n".join(f"  {x.describe()}" for x in safe)
        message += f"\n\n{MIXED_HEADER}\n\n{listing}"
    return replace(entry, steps=steps_all, message=message), changed, done + safe, refused
