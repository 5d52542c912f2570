"""Never a silently broken series: before the entry that removes the slab
members from struct page, every use of them left in the tree stops regen.

The removal entry (a `remove_members` step on struct page) turns every use
left into a compile error, but only in what a build compiles, and regen
itself builds nothing.  So before that entry is applied, the work tree as
the series has left it (the user's own code included) is scanned with
cocci/rules/slab_field_users.cocci, over every file that may hold a use
(verify/field_users.py: candidates() and narrow(), results cached per file
content).  A use of one of the members the entry removes stops the run
with exit 1, naming each use by file, line, function and member; no series
is written.
"""
from __future__ import annotations

from pathlib import Path

from base.log import info, SlabconvError
from regen import field_users
from . import manifest
from .worktree import BASE_TAG


def removed_members(entry: manifest.Entry) -> list[str]:
    """The members of struct page that `entry` removes (none: not a removal)."""
    return [m for st in entry.steps
            if st.kind == "members" and st.defines.get("struct") == "page"
            for m in st.members]


def uses_left(tree: Path, members: list[str], since=None) -> list:
    """The uses of `members` through a struct page in `tree` (field_users.Use);
    `since`: as field_users.scan() takes it."""
    known = field_users.fields()
    unknown = [m for m in members if m not in known]
    if unknown:
        raise SlabconvError(f"the removal of {', '.join(unknown)} from struct page cannot be "
                            f"checked: {field_users.RULE.name} does not look for "
                            f"{'it' if len(unknown) == 1 else 'them'}")
    files = field_users.scan(tree, since)
    found = field_users.find(tree, files, cached=True)
    return sorted((u for us in found.values() for u in us if u.field in members),
                  key=lambda u: (u.file, u.line, u.field))


def _baseline_line(tree: Path, f: str, line: int) -> int | None:
    """The line of the tree regen started from (the work tree's baseline
    commit) that is line `line` of `f` now, when the patches so far left
    it as it was."""
    import difflib
    import subprocess
    cp = subprocess.run(["git", "-C", str(tree), "show", f"{BASE_TAG}:{f}"],
                        capture_output=True, text=True, errors="replace")
    if cp.returncode != 0:
        return None
    old = cp.stdout.splitlines()
    new = (tree / f).read_text(errors="replace").splitlines()
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" and j1 < line <= j2:
            return i1 + line - j1
    return None


def place(tree: Path, f: str, line: int) -> str:
    """`file:line` in the tree regen was given (the user's), or, for a line
    an earlier patch of the series wrote, its line after those patches."""
    was = _baseline_line(tree, f, line) if (tree / ".git").exists() else line
    return f"{f}:{was}" if was is not None else f"{f}:{line} (a line the series wrote)"


def check(tree: Path, entry: manifest.Entry, since=None,
          refused: dict[tuple[str, str], str] | None = None) -> None:
    """Stop (exit 1) when code in `tree` still uses a member `entry` removes
    (`since`: as field_users.scan() takes it).  `refused`: (file, function)
    -> what the usage pass tried there and why it refused it, said under
    the uses of that function."""
    members = removed_members(entry)
    if not members:
        return
    info("regen", f"    scanning the tree for uses of struct page's slab members before "
                  f"'{entry.id}'")
    left = uses_left(tree, members, since)
    if not left:
        return
    refused = refused or {}
    lines = []
    for i, u in enumerate(left):
        lines.append(f"  {place(tree, u.file, u.line)}: {u.function}(): page->{u.field}")
        if (u.file, u.function) in refused:          # said once, under its last use
            if not any((v.file, v.function) == (u.file, u.function) for v in left[i + 1:]):
                lines.append(f"    not converted: {refused[(u.file, u.function)]}")
    raise SlabconvError(
        f"entry '{entry.id}' ({entry.subject}) removes the slab members from struct page, "
        f"but {len(left)} use(s) of them through a struct page are left that no rule "
        f"converts; the series would not build there, so none is written:\n"
        + "\n".join(lines)
        + "\n  convert them to struct slab (page_slab(), slab_page()) on your branch, or "
          "add a step to cocci/series.toml that converts them")
