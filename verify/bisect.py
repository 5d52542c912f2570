"""Per-patch build check (bisectability): every patch of a series builds,
in every configuration, with no new compiler warning.

    from verify import bisect
    r = bisect.check_series(repo, out_root, ["slub", "slub-nodebug"],
                            baseline_src=pristine_tree, baseline_id=ident)
    r.ok, r.summary, r.report            # bisect.json, bisect-summary.txt
    c = r.configs[0]; c.first_failure    # PatchResult (index, subject, problem, error_excerpt)

`repo` is a git repository holding the series as a linear run of commits
base..head (default slabconv-baseline..HEAD, which pipeline.apply_series
makes).  Only git objects are read, never the repository's checkout: a
`git clone --shared --no-checkout` works as well.

For each configuration:

1. The baseline is built once by verify's own machinery (out_root/
   base-<config>-<key>/, the same build check_build uses and reuses).
2. out_root/bisect-<config>-<key>/tree/ is a hard-link snapshot of the
   baseline tree and tree/o/ a copy of its O= directory (verify.tree).
3. For each commit in order, the files whose content differs from the tree's
   current state are replaced by new files holding the commit's content
   (new inode, mtime now; never written through a hard link), and the build
   is incremental:
     * only .c files changed, each compiled by the configuration (its .o is
       in O=) and compiled into no other object: `make dir/file.o` for each;
       when an object's global symbols change (nm: a symbol gone, or a new
       undefined one) `make vmlinux` follows, so that a link error is
       blamed on this patch;
     * anything else (a header, Makefile, Kconfig, assembly, a .c included
       by another file): `make bzImage modules_prepare` (the final build's
       targets: vmlinux and the boot code) in the same O=; make recompiles
       every includer; Kconfig's result is checked again;
     * only .c files the configuration does not build (mm/slab.c under
       SLUB): nothing to build.
   Against a plain `make bzImage modules_prepare` in the same O= with the
   same ccache, building the objects alone saves the link and make's walk
   of the tree: on 5.10's slub configuration a median 5 s per patch that
   changes .c files only (44 of the 58), 4 s per patch with nothing to
   build, about 4 minutes per configuration and series; the dependency
   index it reads costs 0.5 to 2.6 s, once per run and after each full
   build, and only when every changed file is a .c file.
   Warnings are gated per patch against the previous patch: the per-object
   diagnostics (complete for every object in O=, verify/ccwrap.sh) as a
   multiset on verify.warnings keys (no line numbers); warnings that only the
   build log carries (objtool, ld, modpost) against every such warning seen
   since the baseline.
4. The first patch that does not build or has a new warning stops that
   configuration; the result names it (number, subject), the configuration,
   and the compiler's first errors (kbuild.error_excerpt).

Resuming: state.json in the bisect directory records the tree's content
(blob ids of the files that differ from the baseline commit), the files
whose dependants may not be rebuilt yet (a build failed or was interrupted),
and the result of every commit that passed.  A commit id covers its whole
history, so a rerun on the same series skips the commits that passed, and a
series that changed after patch k rebuilds from patch k on; the tree moves
from its recorded content to whatever commit comes next.  The progress
line's estimate of the time left reads the same results (by subject).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import verify as V
from base import atomic, log as slog
from base.cliutil import comma_list, write_json
from base.log import duration, guarded, SlabconvError
from base.paths import cache_dir
from . import configtable, kbuild, kconfig, objdiff, runtime, tree, warnings as W


BASE_REF = "slabconv-baseline"
# A header (or anything but a .c file) changed: what the final build makes, so
# that the boot code's includers are rebuilt too (about 1 s more than vmlinux).
FULL_TARGETS = kbuild.DEFAULT_TARGETS
LINK_TARGETS = ("vmlinux",)        # an object's global symbols changed
O_NAME = "o"
STATE_VERSION = 1
KEEP_OTHER_RESULTS = 300           # results of commits not in the current series

# .c files under these are host programs or tools, not `make dir/file.o` targets
_NOT_KBUILD_OBJECTS = ("scripts/", "tools/", "usr/")

# --------------------------------------------------------------------------
# which targets a set of changed files needs

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


def _builds(out: Path, obj: str, known) -> bool:
    """Does the configuration build `obj`?  Its object or its .cmd file is in
    O= (a failed compile deletes the object, not the .cmd), or the caller
    knows it (objects of the baseline build)."""
    d, _, name = obj.rpartition("/")
    return (obj in known or (out / obj).is_file()
            or (out / d / f".{name}.cmd").is_file())


def plan_build(files, out, deps: Optional[dict] = None, known_objects=()) -> Plan:
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
        elif _builds(out, obj, known_objects):
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


# --------------------------------------------------------------------------
# results

@dataclass
class PatchResult:
    index: int                        # 1-based position in the series
    commit: str
    subject: str
    files: list                       # the files this patch changes
    action: str = ""                  # objects | objects+link | full | none | cached
    targets: list = field(default_factory=list)
    reason: str = ""
    ok: bool = False
    seconds: float = 0.0              # spent in this run
    built_seconds: float = 0.0        # when the result was made (cached: earlier)
    compiled: int = 0
    rebuilt_files: list = field(default_factory=list)   # written into the tree (if != files)
    not_built: list = field(default_factory=list)
    new_warnings: list = field(default_factory=list)
    problem: str = ""
    error_excerpt: str = ""
    log: Optional[str] = None
    boot: Optional[dict] = None       # runtime.PatchBoot.to_dict() (runtime configurations)
    code: Optional[dict] = None       # objdiff.PatchCode.to_dict(): the object-code check
    kernel_seconds: float = 0.0       # runtime bisect: linking the kernel, the guest modules

    @property
    def cached(self) -> bool:
        return self.action == "cached"

    def title(self, n: int) -> str:
        return f"[{self.index}/{n}] {self.subject}"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "index", "commit", "subject", "files", "action", "targets", "reason", "ok",
            "compiled", "rebuilt_files", "not_built", "problem", "error_excerpt", "log",
            "boot", "code")}
        d["kernel_seconds"] = round(self.kernel_seconds, 2)
        d["seconds"] = round(self.seconds, 2)
        d["built_seconds"] = round(self.built_seconds, 2)
        d["new_warnings"] = [w.to_dict() for w in self.new_warnings]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PatchResult":
        d = {"index": 0, "commit": "", "subject": "", "files": [], **d}
        d["new_warnings"] = [W.CompilerWarning.from_dict(w) for w in d.get("new_warnings") or []]
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class ConfigResult:
    config: str
    ok: bool = False
    patches: list = field(default_factory=list)      # PatchResult, in order, up to the failure
    n: int = 0                                       # patches in the series
    baseline_ok: bool = True
    baseline_reused: bool = False
    baseline_seconds: float = 0.0
    setup_seconds: float = 0.0
    seconds: float = 0.0
    problem: str = ""
    build_dir: Optional[Path] = None

    runtime: bool = False                            # each patch's kernel booted
    boot_seconds: float = 0.0

    @property
    def first_failure(self) -> Optional[PatchResult]:
        return next((p for p in self.patches if not p.ok), None)

    @property
    def coded(self) -> list:
        """Patches the object-code check compared (their build compiled code)."""
        return [p for p in self.patches if p.code is not None]

    @property
    def code_unchanged(self) -> int:
        """Of those, the patches that changed no function's code."""
        return sum(not p.code["diffs"] for p in self.coded)

    @property
    def own_kernels(self) -> list:
        """Patches booted with a kernel of their own (the others have the
        previous patch's kernel)."""
        return [p for p in self.patches if p.boot and not p.boot.get("same_as")]

    @property
    def kernels_passed(self) -> int:
        return sum(p.boot["verdict"] == "pass" for p in self.own_kernels)

    @property
    def code_failures(self) -> list:
        """Patches whose object code changed where the manifest expects none."""
        return [p for p in self.patches if p.code and p.code.get("unexpected")]

    @property
    def boot_failures(self) -> list:
        """Patches whose kernel booted and failed (oops, BUG, WARNING, a test)."""
        return [p for p in self.patches if p.boot and p.boot["verdict"] not in ("pass", "same")]

    @property
    def code_declared(self) -> list:
        """Patches whose code changed, every change as their entry declares."""
        return [p for p in self.coded if p.code["diffs"] and not p.code.get("unexpected")]

    @property
    def patch_seconds(self) -> float:
        return sum(p.seconds for p in self.patches)

    def code_line(self) -> str:
        """The object-code check in one line ('' when nothing was compared)."""
        if not self.coded:
            return ""
        bad = self.code_failures
        return (f"{self.config}: object code: {self.code_unchanged} of {len(self.coded)} "
                f"patches change no function's code; {len(self.code_declared)} change it as "
                f"their entry declares; {len(bad)} change code their entry does not declare"
                + (": " + ", ".join(f"patch {p.index}" for p in bad[:8]) if bad else ""))

    def runtime_line(self) -> str:
        """The runtime bisect in one line ('' when this configuration booted nothing)."""
        if not self.runtime:
            return ""
        failed = self.boot_failures
        return (f"{self.config}: runtime: {self.kernels_passed} of {len(self.own_kernels)} "
                "kernels passed the in-guest tests"
                + (": failed " + ", ".join(f"patch {p.index}" for p in failed[:8])
                   if failed else ""))

    @classmethod
    def from_dict(cls, d: dict) -> "ConfigResult":
        """A recorded result (to_dict()) back, for the reports: its counts are
        this class's, not counted again by each reader."""
        return cls(config=d.get("config", "?"), ok=bool(d.get("ok")),
                   patches=[PatchResult.from_dict(p) for p in d.get("patches") or []],
                   n=d.get("patches_total", 0), baseline_ok=d.get("baseline_ok", True),
                   baseline_reused=d.get("baseline_reused", False),
                   baseline_seconds=d.get("baseline_seconds", 0.0),
                   setup_seconds=d.get("setup_seconds", 0.0), seconds=d.get("seconds", 0.0),
                   problem=d.get("problem", ""),
                   build_dir=Path(d["build_dir"]) if d.get("build_dir") else None,
                   runtime=bool(d.get("runtime")), boot_seconds=d.get("boot_seconds", 0.0))

    def to_dict(self) -> dict:
        f = self.first_failure
        return {"config": self.config, "ok": self.ok, "patches_total": self.n,
                "patches_checked": len(self.patches),
                "first_failure": None if f is None else {
                    "index": f.index, "commit": f.commit, "subject": f.subject,
                    "problem": f.problem, "error_excerpt": f.error_excerpt, "log": f.log},
                "problem": self.problem, "baseline_ok": self.baseline_ok,
                "runtime": self.runtime, "boot_seconds": round(self.boot_seconds, 1),
                "boot_failures": [p.index for p in self.boot_failures],
                "code_failures": [p.index for p in self.code_failures],
                "baseline_reused": self.baseline_reused,
                "baseline_seconds": round(self.baseline_seconds, 1),
                "setup_seconds": round(self.setup_seconds, 1),
                "patch_seconds": round(self.patch_seconds, 1),
                "seconds": round(self.seconds, 1),
                "build_dir": str(self.build_dir) if self.build_dir else None,
                "patches": [p.to_dict() for p in self.patches]}


@dataclass
class BisectResult:
    ok: bool
    configs: list                      # ConfigResult
    commits: list                      # (sha, subject)
    base: str = ""
    seconds: float = 0.0
    report: Optional[Path] = None
    summary: str = ""

    @property
    def problems(self) -> list:
        out = []
        for c in self.configs:
            f = c.first_failure
            if f is not None:
                out.append(f"patch {f.index}/{len(self.commits)} \"{f.subject}\" fails "
                           f"in config {c.config}: {f.problem}")
            elif not c.ok and not c.boot_failures and not c.code_failures:
                out.append(f"config {c.config}: {c.problem}")
            for p in c.code_failures:
                for u in p.code["unexpected"][:5]:
                    out.append(f"patch {p.index}/{len(self.commits)} \"{p.subject}\" changes the code "
                               f"of {u['object']}: {u['function']} ({u['change']}, "
                               f"{u['old_size']} -> {u['new_size']} bytes, "
                               f"{u['new_size'] - u['old_size']:+d}) in config {c.config}; "
                               f"its manifest entry expects no code change there")
            for p in c.boot_failures:
                b = p.boot
                first = b["failures"][0].splitlines()[0] if b["failures"] else b["verdict"]
                out.append(f"patch {p.index}/{len(self.commits)} \"{p.subject}\" builds but its "
                           f"kernel fails at run time in config {c.config}: {b['verdict']}: {first}")
        return out

    def to_dict(self) -> dict:
        return {"ok": self.ok, "base": self.base, "seconds": round(self.seconds, 1),
                "problems": self.problems,
                "commits": [{"commit": s, "subject": t} for s, t in self.commits],
                "configs": [c.to_dict() for c in self.configs]}

    def brief(self) -> dict:
        """For other reports: what failed, per configuration times, where the report is."""
        return {"ok": self.ok, "problems": self.problems, "report": str(self.report),
                "seconds": round(self.seconds, 1),
                "configs": {c.config: {"ok": c.ok, "seconds": round(c.seconds, 1),
                                       "patches_checked": len(c.patches)}
                            for c in self.configs}}


# --------------------------------------------------------------------------
# git (objects only)

class Repo:
    def __init__(self, path):
        self.path = Path(path).resolve()

    def git(self, *args, binary: bool = False, check: bool = True):
        cp = subprocess.run(["git", "-C", str(self.path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        if check and cp.returncode != 0:
            raise SlabconvError(f"git {' '.join(args[:4])} failed in {self.path}: "
                                f"{cp.stderr.decode(errors='replace').strip()}", exit_code=2)
        return cp.stdout if binary else cp.stdout.decode(errors="replace")

    def rev(self, ref: str) -> str:
        """The commit `ref` names, or "" if none."""
        return self.git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False).strip()

    def series(self, base: str, head: str) -> list:
        """[(sha, subject)] of base..head, oldest first; it must be linear."""
        b, h = self.rev(base), self.rev(head)
        lines = self.git("rev-list", "--reverse", "--parents", f"{b}..{h}").split("\n")
        commits, prev = [], b
        for line in filter(None, lines):
            sha, *parents = line.split()
            if parents != [prev]:
                raise SlabconvError(f"{base}..{head} in {self.path} is not a linear series "
                                    f"(commit {sha[:12]} has parents {parents})", exit_code=2)
            commits.append(sha)
            prev = sha
        if not commits:
            raise SlabconvError(f"no commits between {base} and {head} in {self.path}",
                                exit_code=2)
        subjects = {}
        for rec in self.git("log", "--format=%H%x00%s", f"{b}..{h}").splitlines():
            sha, _, subj = rec.partition("\0")
            subjects[sha] = subj
        return [(c, subjects.get(c, "")) for c in commits]

    def delta(self, base: str, commit: str) -> dict:
        """path -> (mode, blob) for each path whose content at `commit`
        differs from `base` (mode "000000", blob None: deleted)."""
        raw = self.git("diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, commit,
                       binary=True).decode(errors="surrogateescape")
        parts = raw.split("\0")
        out = {}
        for i in range(0, len(parts) - 1, 2):
            head, path = parts[i], parts[i + 1]
            if not head.startswith(":"):
                continue
            _, new_mode, _, new_sha, _ = head[1:].split(" ", 4)
            out[path] = (new_mode, None if new_mode == "000000" else new_sha)
        return out

    def blob(self, sha: str) -> bytes:
        return self.git("cat-file", "blob", sha, binary=True)

    def touched(self, base: str, head: str) -> list:
        """Every path that some commit of base..head changes."""
        names = self.git("log", "--format=", "--name-only", "--no-renames", f"{base}..{head}")
        return sorted({n for n in names.splitlines() if n.strip()})

    def check_baseline(self, base: str, src: Path, paths: list) -> None:
        """src must hold `base`'s content for `paths` (the files the series touches)."""
        listed = {}
        if paths:
            for rec in self.git("ls-tree", "-r", "-z", base, "--", *paths).split("\0"):
                if rec:
                    meta, _, p = rec.partition("\t")
                    listed[p] = meta.split()[2]
        bad = []
        for p in paths:
            f = src / p
            if p not in listed:
                if f.exists() or f.is_symlink():
                    bad.append(f"{p} (not in {base[:12]})")
                continue
            if not f.is_file():
                bad.append(f"{p} (missing)")
                continue
            got = self.git("hash-object", "--no-filters", str(f)).strip()
            if got != listed[p]:
                bad.append(p)
        if bad:
            raise SlabconvError(f"the baseline tree {src} is not commit {base[:12]} of "
                                f"{self.path}: {', '.join(bad[:6])} differ", exit_code=2)


# --------------------------------------------------------------------------
# the bisect tree

def _ensure_writable_dir(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    if not os.access(d, os.W_OK):
        os.chmod(d, os.stat(d).st_mode | 0o700)


def _unlink(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        _ensure_writable_dir(p.parent)
        p.unlink()
    elif p.is_dir():
        tree.remove(p)


def materialise(repo: Repo, snap: Path, base_snap: Path, files, target: dict) -> None:
    """Give each of `files` in `snap` its content in the commit whose delta
    from the baseline is `target` (a path not in `target` has the baseline's
    content, taken from `base_snap`).  Every file is a new inode with mtime
    now: never written through a hard link, always newer than the objects."""
    for rel in sorted(files):
        d = snap / rel
        _unlink(d)
        ent = target.get(rel)
        if ent is None:                              # the baseline's content
            s = base_snap / rel
            if s.is_symlink():
                _ensure_writable_dir(d.parent)
                os.symlink(os.readlink(s), d)
                continue
            if not s.is_file():
                continue                             # not in the baseline either
            data = s.read_bytes()
            mode = 0o755 if os.stat(s).st_mode & 0o111 else 0o644
        else:
            gmode, sha = ent
            if sha is None or gmode == "160000":    # deleted; submodules are ignored
                continue
            data = repo.blob(sha)
            if gmode == "120000":
                _ensure_writable_dir(d.parent)
                os.symlink(os.fsdecode(data), d)
                continue
            mode = 0o755 if gmode == "100755" else 0o644
        _ensure_writable_dir(d.parent)
        with open(d, "xb") as fh:
            fh.write(data)
        os.chmod(d, mode)
        now = time.time_ns()                         # finer than the file system's clock
        os.utime(d, ns=(now, now))


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


# --------------------------------------------------------------------------
# state (resuming)

def _load_state(path: Path, key: str, base: str) -> Optional[dict]:
    try:
        st = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if st.get("version") != STATE_VERSION or st.get("key") != key or st.get("base") != base:
        return None
    st["delta"] = {p: tuple(v) for p, v in st.get("delta", {}).items()}
    st.setdefault("dirty", [])
    st.setdefault("results", {})
    return st


def _save_state(path: Path, st: dict, keep: set) -> None:
    res = st["results"]
    others = sorted((s for s in res if s not in keep), key=lambda s: res[s].get("t", 0))
    for s in others[:max(0, len(others) - KEEP_OTHER_RESULTS)]:
        del res[s]
    d = dict(st)
    d["delta"] = {p: list(v) for p, v in st["delta"].items()}
    atomic.write_text(path, json.dumps(d, indent=0) + "\n")


def previous_times(results: dict) -> dict:
    """subject -> the seconds its build took, from the results state.json
    keeps (this series' and others', the newest last): the progress line's
    estimate of the time left."""
    out = {}
    for r in sorted(results.values(), key=lambda r: r.get("t", 0)):
        res = r.get("result") or {}
        if res.get("subject") and res.get("built_seconds"):
            out[res["subject"]] = round(res["built_seconds"], 1)
    return out


def _fresh_tree(bdir: Path, base_snap: Path) -> None:
    snap = bdir / "tree"
    slog.info("bisect", f"new bisect tree {snap} (baseline snapshot + a copy of its O=)")
    tree.snapshot(base_snap, snap, skip=(O_NAME,))
    cp = subprocess.run(["cp", "-a", "--reflink=auto", str(base_snap / O_NAME),
                         str(snap / O_NAME)], stderr=subprocess.PIPE, text=True)
    if cp.returncode != 0:
        raise SlabconvError(f"cannot copy the baseline build: {cp.stderr.strip()}")
    tree.relocate(snap / O_NAME, base_snap, snap)


# --------------------------------------------------------------------------
# the check

def _uniq(ws: list) -> list:
    seen, out = set(), []
    for w in ws:
        if w.key not in seen:
            seen.add(w.key)
            out.append(w)
    return out


class _ConfigRun:
    """One configuration: baseline, bisect tree, the loop over the commits."""

    def __init__(self, repo: Repo, commits: list, deltas: dict, base: str, out_root: Path,
                 config: str, baseline_src: Path, ident: str, jobs: int, progress: bool,
                 guest=None, boot_jobs: int = 2, code=None):
        self.repo, self.commits, self.deltas, self.base = repo, commits, deltas, base
        self.code = code          # object-code check: subject -> (expectations, renames)
        self.out_root, self.config, self.src, self.ident = out_root, config, baseline_src, ident
        self.jobs, self.progress = jobs, progress
        self.guest, self.boot_jobs = guest, boot_jobs     # runtime bisect: see verify/runtime.py
        self.arch = kconfig.config_arch(config)
        self.res = ConfigResult(config=config, n=len(commits), runtime=guest is not None)
        self._deps = None
        self._known = None

    def known_objects(self, base_o: Path) -> set:
        """The objects of the baseline build (relative to O=)."""
        if self._known is None:
            self._known = set()
            for dirpath, _, filenames in os.walk(base_o):
                rel = os.path.relpath(dirpath, base_o)
                for f in filenames:
                    if f.endswith(".o"):
                        self._known.add(f if rel == "." else f"{rel}/{f}")
        return self._known

    def deps(self) -> dict:
        if self._deps is None:
            self._deps = dep_index(self.o)
        return self._deps

    def run(self) -> ConfigResult:
        t0 = time.monotonic()
        key = V.build_key(self.config, self.ident, kbuild.DEFAULT_TARGETS,
                          kconfig.tree_version(self.src))
        base_dir = self.out_root / f"base-{self.config}-{key}"
        self.bdir = self.out_root / f"bisect-{self.config}-{key}"
        self.res.build_dir = self.bdir
        with V.config_lock(self.out_root, self.config):
            base_dir.mkdir(parents=True, exist_ok=True)
            cleaner = tree.discard(V._old_builds(self.out_root, self.config, base_dir),
                                   self.out_root / ".trash")
            try:
                base, reused = V._baseline(self.src, base_dir, key, self.config, self.arch,
                                           kbuild.DEFAULT_TARGETS, self.jobs)
                self.res.baseline_reused = reused
                self.res.baseline_seconds = 0.0 if reused else base.seconds
                if not base.ok:
                    self.res.baseline_ok = False
                    self.res.problem = "the baseline does not build: " + base.failure_message()
                else:
                    self._run(base, base_dir / "tree", key, t0)
            finally:
                if cleaner is not None:
                    cleaner.wait()
        self.res.seconds = time.monotonic() - t0
        return self.res

    def _run(self, base: kbuild.BuildResult, base_snap: Path, key: str, t0: float) -> None:
        self.bdir.mkdir(parents=True, exist_ok=True)
        self.snap = self.bdir / "tree"
        self.o = self.snap / O_NAME
        self.base_o = base_snap / O_NAME
        state_path = self.bdir / "state.json"
        st = _load_state(state_path, key, self.base)
        if st is None or not (self.o / ".config").is_file():
            state_path.unlink(missing_ok=True)      # no stale state for a half-made tree
            st = {"version": STATE_VERSION, "key": key, "base": self.base, "delta": {},
                  "dirty": [], "results": {}}
            _fresh_tree(self.bdir, base_snap)
            _save_state(state_path, st, set())
        kconfig.configure_named(self.snap, self.o, self.config)
        (self.bdir / "logs").mkdir(exist_ok=True)
        keep = {c for c, _ in self.commits}
        self._times, self._now = previous_times(st["results"]), []

        # warnings at the baseline: per-object diagnostics + log-only ones
        base_diag = kbuild.collect_warnings(base_snap, base_snap / O_NAME)
        prev_diag = base_diag
        known_log = W.new_warnings(base_diag, base.warnings)
        self.res.setup_seconds = time.monotonic() - t0
        n = len(self.commits)
        resuming = True
        prev_delta = {}
        kernels = runtime.Kernels(self.bdir, self.config, self.arch, self.jobs) \
            if self.guest is not None else None
        to_boot = []                            # (index, sha): kernels kept, not booted yet
        for i, (sha, subject) in enumerate(self.commits, 1):
            target = self.deltas[sha]
            files = sorted(p for p in set(prev_delta) | set(target)
                           if prev_delta.get(p) != target.get(p))
            prev_delta = target
            pr = PatchResult(index=i, commit=sha, subject=subject, files=files)
            cached = st["results"].get(sha)
            if (kernels is not None and cached and not runtime.current(cached.get("boot"))
                    and not kernels.have(sha)):
                cached = None                  # never booted, or with other guest tests: again
            if self.code is not None and cached and "code" not in cached["result"]:
                cached = None                  # built before without the object-code check
            if resuming and cached and cached.get("ok"):
                old = PatchResult.from_dict(cached["result"])
                pr.action, pr.ok, pr.targets = "cached", True, old.targets
                pr.built_seconds, pr.compiled, pr.reason = old.built_seconds, old.compiled, old.action
                pr.not_built, pr.log = old.not_built, old.log
                pr.code = old.code
                if pr.code is not None and self.code is not None:
                    self._judge_again(pr)
                prev_diag = [W.CompilerWarning.from_dict(w) for w in cached["diag"]]
                known_log = [W.CompilerWarning.from_dict(w) for w in cached["log_warnings"]]
                if kernels is not None:
                    pr.boot = cached.get("boot") if runtime.current(cached.get("boot")) else None
                    if pr.boot is None:
                        to_boot.append((i, sha))
                self.res.patches.append(pr)
                self._progress(pr, n, "cached")
                continue
            if resuming and self.code is not None:
                self._rewind(i, st, state_path, keep, base_snap)
            resuming = False
            t1 = time.monotonic()
            rewrite = sorted(p for p in set(st["delta"]) | set(target)
                             if st["delta"].get(p) != target.get(p))
            rewrite = sorted(set(rewrite) | set(st["dirty"]))
            if rewrite != files:
                pr.rebuilt_files = rewrite
            # record first: an interruption leaves these files "dirty"
            st["delta"], st["dirty"] = target, rewrite
            _save_state(state_path, st, keep)
            materialise(self.repo, self.snap, base_snap, rewrite, target)
            diag, log_ws = self._build(pr, rewrite, sha)
            pr.seconds = pr.built_seconds = time.monotonic() - t1
            if pr.ok:
                new = W.new_warnings(prev_diag, diag) + W.new_warnings(known_log, log_ws)
                if new:
                    pr.ok = False
                    pr.new_warnings = new
                    u = _uniq(new)
                    pr.problem = (f"{len(u)} new compiler warning(s): "
                                  + "; ".join(w.format() for w in u[:3])
                                  + (" ..." if len(u) > 3 else ""))
            if pr.ok and kernels is not None:
                if pr.action == "none" and self.res.patches:
                    # the previous patch's kernel: not booted again
                    pr.boot = runtime.PatchBoot("same", same_as=self.res.patches[-1].index,
                                                tests=runtime.tests_digest()).to_dict()
                else:
                    t2 = time.monotonic()
                    failed = kernels.keep(self.snap, self.o, sha,
                                          f"bisect {self.config} [{pr.index}/{n}]")
                    pr.kernel_seconds = time.monotonic() - t2
                    if failed:
                        pr.ok, pr.problem = False, failed
                    else:
                        to_boot.append((i, sha))
                pr.seconds = time.monotonic() - t1
            if pr.ok:
                known_log = known_log + W.new_warnings(known_log, log_ws)
                prev_diag = diag
                st["dirty"] = []
                st["results"][sha] = {"ok": True, "t": time.time(), "result": pr.to_dict(),
                                      "diag": [w.to_dict() for w in diag],
                                      "log_warnings": [w.to_dict() for w in known_log]}
                if pr.boot is not None:
                    st["results"][sha]["boot"] = pr.boot
            # else the files stay dirty: a rerun rebuilds what depends on them
            # (and so sees a log-only warning again)
            _save_state(state_path, st, keep)
            self.res.patches.append(pr)
            self._progress(pr, n, "ok" if pr.ok else "FAIL")
            if not pr.ok:
                break
        if kernels is not None:
            self._boot(kernels, to_boot, st, state_path, keep)
        self.res.ok = (len(self.res.patches) == n and all(p.ok for p in self.res.patches)
                       and not self.res.boot_failures and not self.res.code_failures)
        self._prune_logs(keep)

    def _boot(self, kernels, to_boot: list, st: dict, state_path: Path, keep: set) -> None:
        """Boot the kernels kept for to_boot; record each verdict with its commit."""
        t0 = time.monotonic()
        booted = runtime.boot(kernels, to_boot, self.snap, self.o, self.guest,
                              self.bdir / "boots", jobs=self.boot_jobs)
        by_index = {p.index: p for p in self.res.patches}
        for i, sha in to_boot:
            b = booted.get(sha)
            if b is None:
                continue
            by_index[i].boot = b.to_dict()
            if sha in st["results"]:
                st["results"][sha]["boot"] = b.to_dict()
        for p in self.res.patches:             # a patch without a kernel of its own
            if p.boot and p.boot["verdict"] == "same" and p.boot["same_as"] in by_index:
                ref = by_index[p.boot["same_as"]].boot
                if ref and ref["verdict"] not in ("pass", "same"):
                    p.boot = dict(ref, same_as=p.boot["same_as"])
        _save_state(state_path, st, keep)
        kernels.prune({sha for sha in keep if not (st["results"].get(sha) or {}).get("boot")})
        self.res.boot_seconds = time.monotonic() - t0

    def _build(self, pr: PatchResult, rewrite: list, sha: str):
        """Build what `rewrite` needs; sets pr's action/ok/problem.  Returns
        (per-object warnings, log-only warnings) when the build passed."""
        only_c = all(f.endswith(".c") for f in rewrite)      # else the plan is "full"
        plan = plan_build(rewrite, self.o, self.deps() if only_c else {},
                          self.known_objects(self.base_o) if only_c else ())
        pr.action, pr.targets, pr.reason, pr.not_built = (
            plan.kind, list(plan.targets), plan.reason, plan.not_built)
        if plan.kind == "none":
            pr.ok = True
            return kbuild.collect_warnings(self.snap, self.o), []
        before = {t: _symbols(self.o / t) for t in plan.targets} if plan.kind == "objects" else {}
        prev = self._snapshot(plan)
        logp = self.bdir / "logs" / f"{sha[:12]}.log"
        pr.log = str(logp)
        label = f"bisect {self.config} [{pr.index}/{len(self.commits)}]"
        made = plan.targets
        b = kbuild.build(self.snap, self.o, targets=made, jobs=self.jobs,
                         arch=self.arch, label=label, log=logp, quiet=True)
        pr.compiled = b.compiled
        log_text = logp.read_text(errors="replace") if b.ok else ""
        if b.ok and plan.kind == "objects":
            changed = [t for t in plan.targets if needs_link(before[t], _symbols(self.o / t))]
            if changed:
                pr.action = "objects+link"
                pr.reason += f"; global symbols of {changed[0]} changed: link"
                pr.targets = pr.targets + list(LINK_TARGETS)
                lp = self.bdir / "logs" / f"{sha[:12]}-link.log"
                made = LINK_TARGETS
                b = kbuild.build(self.snap, self.o, targets=LINK_TARGETS, jobs=self.jobs,
                                 arch=self.arch, label=label + " link", log=lp, quiet=True)
                pr.compiled += b.compiled
                if b.ok:
                    log_text += lp.read_text(errors="replace")
                else:
                    pr.log = str(lp)
        if not b.ok:
            pr.ok = False
            pr.problem = f"does not build (make {' '.join(made)}, exit {b.returncode})"
            pr.error_excerpt = b.error_excerpt
            return [], []
        if plan.kind == "full":
            try:
                kconfig.configure_named(self.snap, self.o, self.config)
            except SlabconvError as e:
                pr.ok = False
                pr.problem = str(e).splitlines()[0]
                pr.error_excerpt = str(e)
                return [], []
            self._deps = None              # new objects or includes: index again if needed
        if prev is not None:
            self._compare(pr, plan, prev)
        diag = kbuild.collect_warnings(self.snap, self.o)
        roots = [str(self.snap), str(self.o)]
        from_log = W.parse_log(log_text, roots)
        log_only = W.new_warnings(diag, from_log, key=W.loose_key)
        pr.ok = True
        return diag, log_only

    def _rewind(self, i: int, st: dict, state_path: Path, keep: set, base_snap: Path) -> None:
        """Before the first patch this run builds: the build tree holds what
        an earlier run left (a later patch, a failed build).  The object-code
        check compares a patch's objects with the previous patch's, so the
        tree is first built at the previous patch (or the baseline)."""
        prev = self.deltas[self.commits[i - 2][0]] if i > 1 else {}
        if st["delta"] == prev and not st["dirty"]:
            return
        rw = sorted(p for p in set(st["delta"]) | set(prev)
                    if st["delta"].get(p) != prev.get(p))
        rw = sorted(set(rw) | set(st["dirty"]))
        slog.info("bisect", f"{self.config}: the build tree is not at patch {i - 1}; building "
                            f"it there first ({len(rw)} files), for the object-code check")
        st["delta"], st["dirty"] = prev, rw
        _save_state(state_path, st, keep)
        materialise(self.repo, self.snap, base_snap, rw, prev)
        b = kbuild.build(self.snap, self.o, targets=FULL_TARGETS, jobs=self.jobs, arch=self.arch,
                         label=f"bisect {self.config} [{i - 1}]", quiet=True,
                         log=self.bdir / "logs" / f"rewind-{i - 1}.log")
        if b.ok:
            st["dirty"] = []
            _save_state(state_path, st, keep)

    def _snapshot(self, plan: Plan) -> Optional[tuple]:
        """Before a patch's build: keep the objects it may recompile (the
        object-code check compares them with what the build makes)."""
        if self.code is None or plan.kind == "none":
            return None
        objs = ([t for t in plan.targets if t.endswith(".o")] if plan.kind == "objects"
                else objdiff.list_objects(self.o))
        keep = self.bdir / "code-before"
        tree.remove(keep)
        stamps = {}
        for o in objs:
            try:
                st = os.stat(self.o / o)
                stamps[o] = (st.st_size, st.st_mtime_ns)
            except FileNotFoundError:
                pass
        return keep, objdiff.snapshot(self.o, objs, keep), stamps

    def _compare(self, pr: PatchResult, plan: Plan, prev: tuple) -> None:
        """After it: compare every object the build rewrote, judged against
        the manifest entry of the patch (type-only unless it declares
        functions whose code changes)."""
        keep, objs, stamps = prev
        rewritten = []
        for o in objs:
            try:
                st = os.stat(self.o / o)
            except FileNotFoundError:
                continue
            if (st.st_size, st.st_mtime_ns) != stamps.get(o):
                rewritten.append(o)
        expectations, renames = self.code(pr.subject)
        pc = objdiff.check_patch(keep, self.o, rewritten, expectations, renames,
                                 patch=f"{pr.index}/{len(self.commits)} {pr.subject}")
        pr.code = pc.to_dict()
        pr.code["rewritten"] = rewritten
        tree.remove(keep)
        if pc.changed or pc.missing:
            slog.info("bisect", f"{self.config} [{pr.index}/{len(self.commits)}] object code: "
                                + pc.text().splitlines()[0])

    def _judge_again(self, pr: PatchResult) -> None:
        """A patch that passed in an earlier run: its code changes judged
        against the manifest as it is now (a declaration added since counts)."""
        expectations, _ = self.code(pr.subject)
        diffs = [objdiff.ObjDiff.from_dict(d) for d in pr.code["diffs"]]
        changed = {d.object for d in diffs}
        rew = pr.code.get("rewritten")
        diffs += [objdiff.ObjDiff(o) for o in (rew if isinstance(rew, list) else [])
                  if o not in changed]                   # compared, same code
        unexpected, missing = objdiff.judge(expectations, diffs,
                                            f"{pr.index}/{len(self.commits)} {pr.subject}")
        pr.code = dict(pr.code, unexpected=[f.to_dict() for f in unexpected],
                       missing=[f.to_dict() for f in missing],
                       ok=not unexpected)

    def _left(self, pr: PatchResult) -> str:
        """", about Xm left": the remaining patches at the times their builds
        took before (previous_times(), by subject), else at this run's mean."""
        if not pr.cached:
            self._times[pr.subject] = round(pr.seconds, 1)
            self._now.append(pr.seconds)
        rest = self.commits[pr.index:]
        if not rest:
            return ""
        mean = (sum(self._now) / len(self._now)) if self._now else (
            sum(self._times.values()) / len(self._times) if self._times else None)
        if mean is None:
            return ""
        left = sum(self._times.get(subj, mean) for _, subj in rest)
        return f", about {slog.duration(left)} left"

    def _progress(self, pr: PatchResult, n: int, status: str) -> None:
        if not self.progress:
            return
        if pr.cached:
            detail = "cached"
        elif pr.action == "none":
            detail = "nothing to build" + (f" ({', '.join(pr.not_built[:3])} not in this config)"
                                           if pr.not_built else "")
        elif pr.action.startswith("objects"):
            objs = [t for t in pr.targets if t.endswith(".o")]
            detail = ", ".join(objs[:3]) + (" +link" if pr.action.endswith("link") else "")
        else:
            detail = f"make {' '.join(pr.targets)}, {pr.compiled} objects"
        msg = f"{self.config} [{pr.index}/{n}] {pr.subject} {pr.seconds:.1f}s {detail}"
        if status != "ok" and status != "cached":
            msg += f": {status}: {pr.problem}"
        msg += self._left(pr)
        slog.info("bisect", msg)

    def _prune_logs(self, keep: set) -> None:
        logs = self.bdir / "logs"
        prefixes = {s[:12] for s in keep}
        for f in logs.glob("*.log"):
            if f.name[:12] not in prefixes:
                f.unlink(missing_ok=True)


def _export_baseline(repo: Repo, base: str, out_root: Path) -> Path:
    """The baseline commit's tree, exported once into out_root (git archive)."""
    dst = out_root / f"bisect-src-{base[:12]}"
    if (dst / ".slabconv-complete").is_file():
        return dst
    tree.remove(dst)
    dst.mkdir(parents=True)
    slog.info("bisect", f"exporting {base[:12]} into {dst}")
    p1 = subprocess.Popen(["git", "-C", str(repo.path), "archive", base], stdout=subprocess.PIPE)
    p2 = subprocess.run(["tar", "-x", "-C", str(dst)], stdin=p1.stdout)
    p1.stdout.close()
    if p1.wait() != 0 or p2.returncode != 0:
        raise SlabconvError(f"cannot export {base} from {repo.path}")
    (dst / ".slabconv-complete").write_text(base + "\n")
    return dst


def check_series(repo, out_root, configs=None, *, base: str = BASE_REF,
                 head: str = "HEAD", baseline_src=None, baseline_id: Optional[str] = None,
                 jobs: int = 2, report_dir=None, progress: bool = True,
                 runtime_configs=(), guest=None, boot_jobs: int = 2,
                 code=None) -> BisectResult:
    """Build every commit of base..head of `repo` incrementally, in each of
    `configs` (default: verify/configs.toml's per-patch set); stop a
    configuration at its first failing patch.

    baseline_src: a tree holding the base commit's content (e.g. the pristine
        tree the work tree was made from: its baseline build is the one
        check_build uses); default: the commit exported from the repository.
    baseline_id: identity of the baseline for verify's build key (pass what
        check_build gets, to share its baseline build); default: the commit.
    report_dir: where bisect.json and bisect-summary.txt go (default out_root).
    runtime_configs: the configurations in which every patch's kernel is
        also booted with the in-guest tests (verify/runtime.py), through
        `guest(config, image, build_dir, src, name, modules) -> GuestSpec`,
        boot_jobs guests at a time once the configuration's builds are done.
    code: the object-code check (verify/objdiff/) in every configuration:
        `code(subject) -> (expectations, renames)` gives a patch's declared
        code changes (None: type-only) and its function renames; every
        object a patch's build rewrites is compared with its version
        before the build.  None: not checked.
    """
    t0 = time.monotonic()
    configs = configtable.names("per-patch") if configs is None else configs
    repo = Repo(repo)
    out_root = Path(out_root).resolve()
    out_root.mkdir(parents=True, exist_ok=True)
    configs = list(configs)
    for c in configs:
        kconfig.config_arch(c)                  # unknown config: exit 2 before any work
    base_sha = repo.rev(base)
    if not base_sha:
        raise SlabconvError(f"no commit '{base}' in {repo.path}", exit_code=2)
    if not repo.rev(head):
        raise SlabconvError(f"no commit '{head}' in {repo.path}", exit_code=2)
    commits = repo.series(base_sha, head)
    src = Path(baseline_src).resolve() if baseline_src else _export_baseline(repo, base_sha,
                                                                             out_root)
    if not (src / "Makefile").is_file() or not (src / "Kconfig").is_file():
        raise SlabconvError(f"baseline tree {src} is not a kernel source tree", exit_code=2)
    repo.check_baseline(base_sha, src, repo.touched(base_sha, commits[-1][0]))
    deltas = {sha: repo.delta(base_sha, sha) for sha, _ in commits}
    ident = baseline_id or f"git:{base_sha}"
    slog.info("bisect", f"{len(commits)} patches x {len(configs)} configs "
                        f"({', '.join(configs)}); builds in {out_root}")
    results = []
    for c in configs:
        if c in runtime_configs and guest is None:
            raise SlabconvError("bisect: runtime configurations need a guest", exit_code=2)
        results.append(_ConfigRun(repo, commits, deltas, base_sha, out_root, c, src, ident,
                                  jobs, progress, guest if c in runtime_configs else None,
                                  boot_jobs, code).run())
        r = results[-1]
        slog.info("bisect", f"{c}: {'OK' if r.ok else 'FAIL'}, {len(r.patches)}/{len(commits)} "
                            f"patches in {duration(r.seconds, 1)}")
    res = BisectResult(ok=all(r.ok for r in results), configs=results, commits=commits,
                       base=base_sha, seconds=time.monotonic() - t0)
    rdir = Path(report_dir) if report_dir else out_root
    rdir.mkdir(parents=True, exist_ok=True)
    res.report = rdir / "bisect.json"
    res.summary = summary_text(res)
    res.report.write_text(json.dumps(res.to_dict(), indent=1) + "\n")
    (rdir / "bisect-summary.txt").write_text(res.summary + "\n")
    return res


# --------------------------------------------------------------------------
# the human summary

EXCERPT_LINES_SUMMARY = 12
_ACTION = {"objects": "obj", "objects+link": "obj+ld", "full": "full", "none": "skip",
           "cached": "cached"}


def summary_text(r: BisectResult) -> str:
    n = len(r.commits)
    L = [f"bisect: {'OK' if r.ok else 'FAIL'}: {n} patches x {len(r.configs)} configs "
         f"in {duration(r.seconds, 1)}"]
    for c in r.configs:
        f = c.first_failure
        base = "baseline reused" if c.baseline_reused else \
            f"baseline built {duration(c.baseline_seconds, 1)}"
        cached = sum(p.cached for p in c.patches)
        extra = f"{base}" + (f", {cached} cached" if cached else "")
        state = "OK  " if c.ok else "FAIL"
        L.append(f"  {c.config:<13} {state} {len(c.patches)}/{n} patches  "
                 f"{duration(c.patch_seconds, 1)} ({extra}; total {duration(c.seconds, 1)})")
        if f is not None:
            L.append(f"    first failing patch {f.index}/{n}: {f.subject}")
            L.append(f"    {f.problem}")
            for ln in f.error_excerpt.splitlines()[:12]:
                L.append(f"      {ln}")
            for w in _uniq(f.new_warnings)[:8]:
                L.append(f"      NEW {w.format()}")
            if f.log:
                L.append(f"      (log: {f.log})")
        elif not c.ok and not c.boot_failures:
            L.extend("    " + ln for ln in c.problem.splitlines()[:14])
        coded = c.coded
        if coded:
            L.append(f"    object code: {c.code_unchanged}/{len(coded)} patches change no "
                     "function's code"
                     + (f"; {len(c.code_failures)} with changes their entry does not declare"
                        if c.code_failures else ""))
            for p in coded:
                if not p.code["diffs"] and not p.code["missing"]:
                    continue
                bad = {(u["object"], u["function"]) for u in p.code["unexpected"]}
                L.append(f"    patch {p.index}/{n} {p.subject}:")
                for d in p.code["diffs"][:4]:
                    for ch in d.get("changed", [])[:6]:
                        tag = "UNEXPECTED" if (d["object"], ch["function"]) in bad else "expected"
                        L.append(f"      {tag} {d['object']}: {ch['function']}: "
                                 f"{ch['new_size'] - ch['old_size']:+d} bytes "
                                 f"({ch['old_size']} -> {ch['new_size']})")
                for m in p.code["missing"][:3]:
                    L.append(f"      expected but unchanged: {m['function']} ({m.get('why', '')})")
        if c.runtime:
            booted = c.own_kernels
            L.append(f"    runtime: {c.kernels_passed}/{len(booted)} "
                     f"kernels passed the in-guest tests ({len(c.patches) - len(booted)} patches "
                     f"without a kernel of their own), boots {duration(c.boot_seconds, 1)}")
            for p in c.boot_failures[:3]:
                L.append(f"    patch {p.index}/{n} {p.subject}: {p.boot['verdict']}")
                for f in p.boot["failures"][:2]:
                    L.append(f"      {f.splitlines()[0]}")
                for ln in p.boot["excerpt"].splitlines()[:EXCERPT_LINES_SUMMARY]:
                    L.append(f"      | {ln}")
                L.append(f"      (console: {p.boot['log']})")
    L.extend(times_table(r))
    if r.report:
        L.append(f"  report {r.report}")
    return "\n".join(L)


def times_table(r: BisectResult) -> list:
    """The time per patch per configuration, one line per patch (a patch
    that passed in an earlier run: `cached` and the time it took then)."""
    L = []
    width = min(52, max([len(s) for _, s in r.commits] + [15]))
    L.append(f"  {'#':>3} {'patch':<{width}}" + "".join(f" {c.config:>14}" for c in r.configs))
    by_cfg = [{p.index: p for p in c.patches} for c in r.configs]
    for i, (_, subj) in enumerate(r.commits, 1):
        cells = []
        for m in by_cfg:
            p = m.get(i)
            if p is None:
                cells.append(f" {'-':>14}")
            elif p.cached:
                cells.append(f" {'cached':>6} {p.built_seconds:6.1f}s")
            else:
                tag = _ACTION.get(p.action, p.action) if p.ok else "FAIL"
                cells.append(f" {tag:>6} {p.seconds:6.1f}s")
        s = subj if len(subj) <= width else subj[:width - 3] + "..."
        L.append(f"  {i:>3} {s:<{width}}" + "".join(cells))
    L.append(f"  {'':>3} {'total (patches)':<{width}}"
             + "".join(f" {duration(c.patch_seconds, 1):>14}" for c in r.configs))
    return L


# --------------------------------------------------------------------------
# command line: python3 -m verify.bisect

def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        prog="python3 -m verify.bisect",
        description="Build every patch of a series (commits BASE..HEAD of a git repository) "
                    "incrementally in each configuration; exit 1 naming the first patch "
                    "that does not build or adds a compiler warning.")
    ap.add_argument("--repo", required=True, type=Path, help="git repository with the series")
    ap.add_argument("--base", default=BASE_REF, help="baseline commit (default: %(default)s)")
    ap.add_argument("--head", default="HEAD", help="last patch (default: %(default)s)")
    ap.add_argument("--baseline-src", type=Path,
                    help="tree with the baseline's content (default: exported from the repo)")
    ap.add_argument("--baseline-id", help="baseline identity for the build key")
    ap.add_argument("--configs", default=",".join(configtable.names("per-patch")),
                    help="comma-separated configurations (default: %(default)s)")
    ap.add_argument("--out-root", type=Path, help="where builds go (default: the cache's "
                                                  "build/bisect/)")
    ap.add_argument("--json", type=Path, help="also write the JSON report here")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)

    def go() -> int:
        r = check_series(args.repo, args.out_root or cache_dir("build", "bisect"),
                         comma_list(args.configs),
                         base=args.base, head=args.head, baseline_src=args.baseline_src,
                         baseline_id=args.baseline_id, jobs=args.jobs)
        write_json(args.json, r.to_dict())
        print(r.summary)
        return 0 if r.ok else 1
    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
