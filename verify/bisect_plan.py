"""What a patch's build needs: its objects alone when only .c files that
this configuration compiles (each into its own object) changed, a full
build otherwise, nothing when no changed file is built; and whether an
object's global symbols changed (then the kernel is linked too)."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import kbuild, warnings as W


# A header (or anything but a .c file) changed: what the final build makes, so
# that the boot code's includers are rebuilt too (about 1 s more than vmlinux).
FULL_TARGETS = kbuild.DEFAULT_TARGETS
LINK_TARGETS = ("vmlinux",)        # an object's global symbols changed

# .c files under these are host programs or tools, not `make dir/file.o` targets
_NOT_KBUILD_OBJECTS = ("scripts/", "tools/", "usr/")


@dataclass
class Plan:
    kind: str                 # "objects" | "full" | "none"
    targets: list
    not_built: list = field(default_factory=list)   # .c files the config does not build
    reason: str = ""


def parse_cmd_deps(text: str):
    """(target, [dependencies]) of a Kbuild .X.o.cmd file (fixdep output),
    or (None, []) if it has no deps_ list.  `$(wildcard ...)` entries (config
    options) are left out; paths are normalised as warnings are."""
    target, deps, inside = None, [], False
    for line in text.splitlines():
        if not inside:
            if line.startswith("deps_") and " := " in line:
                target = line[len("deps_"):line.index(" := ")].strip()
                inside = line.rstrip().endswith("\\")
            continue
        item = line.strip()
        cont = item.endswith("\\")
        item = item.rstrip("\\").strip()
        if item and not item.startswith("$("):
            deps.append(W.normalise_path(item))
        if not cont:
            break
    return (W.normalise_path(target) if target else None), deps


def dep_index(out) -> dict:
    """dependency path (relative to the source tree) -> set of the targets
    (relative to O=) whose .cmd file lists it, for every .cmd file in O=."""
    index = {}
    for dirpath, _, filenames in os.walk(out):
        for f in filenames:
            if not (f.startswith(".") and f.endswith(".cmd")):
                continue
            try:
                with open(os.path.join(dirpath, f), errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if "deps_" not in text:
                continue
            target, deps = parse_cmd_deps(text)
            if target is None:
                continue
            for d in deps:
                index.setdefault(d, set()).add(target)
    return index


def _builds(out: Path, obj: str) -> bool:
    """Does the configuration build `obj`?  Its object or its .cmd file is in
    O= (a failed compile deletes the object, not the .cmd; the bisect O= is
    a copy of the baseline's, so every object of the baseline build is
    there)."""
    d, _, name = obj.rpartition("/")
    return (out / obj).is_file() or (out / d / f".{name}.cmd").is_file()


def plan_build(files, out, deps: Optional[dict] = None) -> Plan:
    """What to build in O=`out` after `files` (relative paths) changed.

    "objects": only .c files changed; the configuration builds each one's
    object (_builds) and, per `deps` (dep_index), no other target includes
    the file.  "none": only .c files that the configuration does not
    build.  "full": anything else (headers, Makefiles, Kconfig, assembly, a
    .c file that another one includes, host programs)."""
    out = Path(out)
    deps = deps or {}
    objects, not_built, other = [], [], []
    for f in sorted(set(files)):
        if not f.endswith(".c") or f.startswith(_NOT_KBUILD_OBJECTS):
            other.append((f, "not a .c file" if not f.endswith(".c") else "a host program"))
            continue
        obj = f[:-2] + ".o"
        users = sorted(deps.get(f, set()) - {obj})
        if users:
            other.append((f, f"also compiled into {users[0]}"))
        elif _builds(out, obj):
            objects.append(obj)
        else:
            not_built.append(f)
    if other:
        f, why = other[0]
        more = f" (+{len(other) - 1} more)" if len(other) > 1 else ""
        return Plan("full", list(FULL_TARGETS), not_built, f"{f}: {why}{more}")
    if objects:
        return Plan("objects", objects, not_built, "only .c files changed")
    return Plan("none", [], not_built, "no changed file is built by this configuration")


def _symbols(obj: Path):
    """(defined global symbols, undefined symbols) of an object, or None."""
    if not obj.is_file():
        return None
    cp = subprocess.run(["nm", "-P", "-g", str(obj)], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True, errors="replace")
    if cp.returncode != 0:
        return None
    defined, undefined = set(), set()
    for line in cp.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, typ = parts[0], parts[1]
        if typ == "U":
            undefined.add(name)
        elif typ not in ("w", "v"):
            defined.add(name)
    return frozenset(defined), frozenset(undefined)


def needs_link(before, after) -> bool:
    """An object lost a global symbol or references a new one: link to see."""
    if before is None or after is None:
        return True
    return bool((before[0] - after[0]) or (after[1] - before[1]))
