"""Every file that uses a slab-only member of struct page, and which build compiled it.

    from regen import field_users
    users = field_users.find(tree)                  # {file: [Use, ...]}

verify/field_users.py says which build compiled each file (coverage()).

The last patch of the series removes the slab members from struct page.
The compiler then rejects any use left, but only in what a build compiles:
so cocci/rules/slab_field_users.cocci (report mode) finds the uses in the
whole tree, and coverage() says, per file, which of the configs built it
(a .c file: its object exists in that build directory; a header: a
compiled object's dependency list names it).  Run on the baseline it lists
the files the series had to convert; run on the patched tree it must list
none (a use left is reported with its place).

Candidates: files that name `struct page` and access a member with one of
the slab names (`->freelist`, `.units`, ...) or name slab_list as a list's
member (a walk, list_entry()).  With --no-includes the rule
can only know an expression is a struct page from the file itself, so a
file that never names struct page cannot yield a use: the filter loses
nothing the rule would find.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from base import paths
from base.log import info
from regen import spatch
from regen.effects import struct_body
from regen.spatch import JOBS, report_rule


RULE = paths.COCCI / "rules" / "slab_field_users.cocci"


def fields() -> list[str]:
    """The slab-only member names, as the rule lists them."""
    m = re.search(r"identifier F = \{([^}]*)\}", RULE.read_text())
    return [f.strip() for f in m.group(1).split(",")]


@dataclass(frozen=True)
class Use:
    file: str
    line: int
    field: str
    function: str


def _pattern() -> str:
    """An access to a slab member, or slab_list closing an argument list (a
    walk's or list_entry()'s member)."""
    return r"(->|\.)[[:space:]]*(%s)\b|\bslab_list[[:space:]]*\)" % "|".join(fields())


def candidates(tree: Path) -> list[str]:
    """Files (relative to `tree`) that name struct page and access a member
    with a slab name."""
    cp = subprocess.run(["grep", "-rlE", "--include=*.c", "--include=*.h", _pattern(), "."],
                        cwd=tree, capture_output=True, text=True)
    files = sorted(p[2:] for p in cp.stdout.split() if p.startswith("./"))
    out = []
    for f in files:
        try:
            if "struct page" in (tree / f).read_text(errors="replace"):
                out.append(f)
        except OSError:
            continue
    return out


def scan(tree: Path, since: tuple[list[str], set[str]] | None = None) -> list[str]:
    """The files of `tree` where the rule may find a use: candidates()
    narrowed by may_use().  `since`: (scan() of the tree regen started
    from, the files changed since then): only those files are read again."""
    if since is None:
        return narrow(tree, candidates(tree))
    return rescan(tree, since, _pattern(), lambda text: "struct page" in text and may_use(text))


def rescan(tree: Path, since: tuple[list[str], set[str]], ere: str, keeps) -> list[str]:
    """What a scan of `tree` with `grep -rlE ere` over the .c and .h files,
    narrowed by `keeps(text)`, gives, from `since`: (that scan of the tree
    regen started from, the files changed since then).  Only the changed
    files are read.  (ere's [[:space:]] stays within a line, as in grep.)"""
    base, changed = since
    grep = re.compile(ere.replace("[[:space:]]", r"[^\S\n]"))
    again = set()
    for f in changed:
        if f.endswith((".c", ".h")) and (tree / f).is_file():
            text = (tree / f).read_text(errors="replace")
            if grep.search(text) and keeps(text):
                again.add(f)
    return sorted({f for f in base if f not in changed} | again)


def page_keeps_slab_members(tree: Path) -> bool:
    """Whether struct page (include/linux/mm_types.h) still has any of the
    slab members: then the series did not remove them, and nothing is to
    be proved about their users."""
    body = struct_body((tree / "include/linux/mm_types.h").read_text(errors="replace"), "page")
    if body is None:
        return False
    return any(re.search(r"\b%s\b\s*[;:]" % f, body) for f in fields())


def parse(text: str) -> list[Use]:
    out = []
    for m in re.finditer(r"^SLAB_FIELD (\S+):(\d+): page->(\w+) in (\S+)$", text, re.M):
        f = m.group(1)
        out.append(Use(f[2:] if f.startswith("./") else f, int(m.group(2)), m.group(3),
                       m.group(4)))
    return sorted(set(out), key=lambda u: (u.file, u.line, u.field))


# What precedes `->F` / `.F` (F a slab member): a name, or a closing bracket.
_ACCESS = None
# The calls the rule takes for a struct page * without a declaration in the file.
_PAGE_CALLS = {"virt_to_page", "virt_to_head_page", "compound_head", "pfn_to_page",
               "phys_to_page", "alloc_page", "alloc_pages", "alloc_pages_node",
               "vmalloc_to_page", "kmap_to_page", "sg_page", "list_entry", "list_first_entry",
               "list_last_entry", "list_first_entry_or_null", "container_of"}


def _word_before(text: str, end: int) -> str:
    j = end
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    return text[j:end]


def _declared_page(name: str, text: str) -> bool:
    """Whether `name` may be declared with type struct page in `text` (a
    parameter, a local, a global, a struct member, a function): `struct
    page`, pointer stars and qualifiers, then the name, or the name later in
    the same declarator list (`struct page *a = NULL, *name`)."""
    return re.search(r"struct\s+page\b(?:[\s*]|const\b|volatile\b|__\w+\b)*"
                     r"(?:\w+\s*(?:\[[^\]]*\])*\s*(?:=[^,;(){}]*)?,[\s*]*)*\b%s\b"
                     % re.escape(name), text) is not None


def may_use(text: str) -> bool:
    """Whether the rule can find a use in a file of this text: some access
    `X->F` / `X.F` to a slab member where X may be a struct page as far as
    the rule can tell from the file alone (a name declared with struct page,
    a call of a function the rule knows or the file declares to return one,
    a cast or bracket that names struct page or such a name, an array
    element).  Files it rejects cannot yield a use; it keeps more than the
    rule reports, never less (the rule takes types from the file only)."""
    global _ACCESS
    if re.search(r"\bslab_list\s*\)", text) and re.search(r"struct\s+page\b", text):
        return True                     # a walk or list_entry() of pages, maybe
    if _ACCESS is None:
        _ACCESS = re.compile(r"([\w)\]])\s*(?:->|\.)\s*(?:%s)\b" % "|".join(fields()))
    for m in _ACCESS.finditer(text):
        s, c = m.start(1), m.group(1)
        if c not in ")]":
            if _declared_page(_word_before(text, s + 1), text):
                return True
            continue
        opening = "(" if c == ")" else "["
        depth, i = 0, s
        while i >= 0:
            if text[i] == c:
                depth += 1
            elif text[i] == opening:
                depth -= 1
                if depth == 0:
                    break
            i -= 1
        inner = text[i + 1:s]
        k = i
        while k > 0 and text[k - 1] in " \t\n":
            k -= 1
        name = _word_before(text, k)
        if not name:
            if c == "]" or "struct page" in inner or \
                    any(_declared_page(w, text) for w in set(re.findall(r"\w+", inner))):
                return True
        elif c == "]":
            if _declared_page(name, text):
                return True
        elif name in _PAGE_CALLS or \
                re.search(r"struct\s+page\s*\*\s*%s\s*\(" % re.escape(name), text):
            return True
    return False


def narrow(tree: Path, files: list[str]) -> list[str]:
    """The files of `files` where the rule may find a use (may_use())."""
    return [f for f in files if may_use((tree / f).read_text(errors="replace"))]


def _file_key(tree: Path, f: str) -> str:
    import hashlib
    h = hashlib.sha256()
    for part in (RULE.read_bytes(), spatch.spatch_version().encode(), f.encode(),
                 (tree / f).read_bytes()):
        h.update(part + b"\0")
    return h.hexdigest()


def find(tree: Path, files: list[str] | None = None, chunk: int = 64,
         cached: bool = False) -> dict[str, list[Use]]:
    """The uses in `files` (default: candidates(tree)), by file.  `cached`:
    each file's result is kept under the cache's field-users/, keyed by the
    rule, the spatch version, the file's path and its content (the rule
    reads one file at a time, --no-includes), and only files not seen run."""
    import json
    files = candidates(tree) if files is None else files
    uses: list[Use] = []
    keys = {}
    if cached:
        store = paths.cache_dir("field-users")
        todo = []
        for f in files:
            keys[f] = store / (_file_key(tree, f) + ".json")
            if keys[f].is_file():
                uses += [Use(**u) for u in json.loads(keys[f].read_text())]
            else:
                todo.append(f)
        files = todo
    info("field-users", f"{RULE.name} over {len(files)} candidate file(s) of {tree}")
    for i in range(0, len(files), chunk):
        part = files[i:i + chunk]
        opts = ["-j", str(JOBS), "--chunksize", "1"] if len(part) > 1 and JOBS > 1 else []
        found = parse(report_rule(RULE, tree, part, options=opts, what="field users"))
        uses += found
        for f in part if cached else ():
            tmp = keys[f].with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps([u.__dict__ for u in found if u.file == f]))
            tmp.replace(keys[f])
        info("field-users", f"  {min(i + chunk, len(files))}/{len(files)} files")
    out: dict[str, list[Use]] = {}
    for u in uses:
        out.setdefault(u.file, []).append(u)
    return out
