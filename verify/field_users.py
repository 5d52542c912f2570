"""Which build compiled each file that uses a slab member of struct page.

    from regen import field_users as scan
    from verify import field_users
    rows = field_users.coverage(scan.find(tree), {"slub": O1, "iommu": O2})

A .c file counts as compiled by a build when its object exists in that
build directory; a header, when a compiled object's dependency list names
it.  The uses themselves are found by regen/field_users.py.
"""
from __future__ import annotations

import re
from pathlib import Path

from base import arches
from regen.field_users import Use
from . import configtable, kbuild
from .compiled import load_allowlist


def coverage(users: dict[str, list[Use]] | list[str], builds: dict[str, Path],
             src: Path | None = None, allow=None) -> list[dict]:
    """Per file: the configs whose build compiled it, or why none did: the
    reason verify/compiled.toml gives for the whole file (`allow`, default
    that list: no x86 build can reach it), else the architecture, else that
    no configured build compiles it."""
    if allow is None:
        allow = load_allowlist()
    whole = {a.file: a.reason for a in allow if a.match is None}
    deps = {}
    rows = []
    for f in sorted(users):
        built = []
        for name, o in builds.items():
            if f.endswith(".c"):
                if (o / f).with_suffix(".o").is_file():
                    built.append(name)
            else:
                if name not in deps:        # the dependency lists of its C compiles
                    deps[name] = "\n".join(kbuild.c_compiles(o).values())
                if re.search(r"(^|[\s/])%s\b" % re.escape(f), deps[name]):
                    built.append(name)
        row = {"file": f, "uses": len(users[f]) if isinstance(users, dict) else None,
               "built_by": built}
        if not built:
            if f in whole:
                row["why_not"] = whole[f]
            elif f.startswith("arch/") and f.split("/")[1] not in _built_arch_dirs(builds):
                row["why_not"] = (f"{f.split('/')[1]} code: no build of that architecture "
                                  f"(the builds: {', '.join(sorted(_built_arch_dirs(builds)))})")
            else:
                row["why_not"] = "no configured build compiles it (verify/configs)"
        rows.append(row)
    return rows


def _built_arch_dirs(builds: dict) -> set:
    """The arch/<dir>/ of the builds' configurations (x86 for x86_64 and
    i386; arm64): a build named after no configuration counts as none."""
    return {arches.get(configtable.get(n).arch).arch_dir for n in builds
            if n in configtable.table().configs}
