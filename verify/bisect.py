"""Per-patch build check (bisectability): every patch of a series builds,
in every configuration, with no new compiler warning.

    from verify import bisect
    r = bisect.check_series(repo, out_root, ["slub", "slub-nodebug"],
                            baseline_src=pristine_tree, baseline_id=ident)
    r.ok, r.summary, r.report            # bisect.json, bisect-summary.txt
    c = r.configs[0]; c.first_failure    # PatchResult (index, subject, problem, error_excerpt)

`repo` is a git repository holding the series as a linear run of commits
base..head (default slabconv-baseline..HEAD, which apply.apply_series
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
   of the tree: on 5.10's slub configuration (2 cores) a patch of
   mm/slub.c took 5.1 s against 18.9 s (medians of 8 runs each, the plan,
   the dependency index and nm included), and 1.3 to 8.5 s against 3.7 to
   29.5 s over 10 patches of the series; a patch with nothing to build
   costs nothing against a make that finds nothing to do (2.3 to 13 s).
   44 of the 58 patches change .c files only: 4 to 10 minutes per
   configuration and series.  The dependency index costs 0.5 to 2.6 s,
   once per run and after each full build, and is read only when every
   changed file is a .c file.
   Warnings are gated per patch against the previous patch: the per-object
   diagnostics (complete for every object in O=, verify/ccwrap.sh) as a
   multiset on verify.warnings keys (no line numbers); warnings that only the
   build log carries (objtool, ld, modpost) against every such warning seen
   since the baseline.
4. The first patch that does not build or has a new warning stops that
   configuration; the result names it (number, subject), the configuration,
   and the compiler's first errors (kbuild.error_excerpt).

Modules: bisect_plan.py (what a patch's build needs), bisect_tree.py (the
series from git objects, the build tree, state.json), bisect_results.py
(the results and their summary); this one runs the check.

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
import sys
import time
from pathlib import Path
from typing import Optional

import verify as V
from base import log as slog
from base.cliutil import comma_list, write_json
from base.log import duration, guarded, SlabconvError
from base.paths import cache_dir
from . import configtable, kbuild, kconfig, objdiff, runtime, tree, warnings as W
from . import variability_builds
from .bisect_plan import (FULL_TARGETS, LINK_TARGETS, Plan, _symbols, dep_index, needs_link,
                          parse_cmd_deps, plan_build)
from .bisect_results import (BisectResult, ConfigResult, PatchResult, _uniq, summary_text,
                             times_table)
from .bisect_tree import (O_NAME, STATE_VERSION, Repo, _export_baseline, _fresh_tree,
                          _load_state, _save_state, materialise, previous_times)

# the check's interface (verify.gates, verify.nullcheck, the report read these here)
__all__ = ["BASE_REF", "check_series", "main", "BisectResult", "ConfigResult", "PatchResult",
           "Plan", "Repo", "dep_index", "materialise", "needs_link", "parse_cmd_deps",
           "plan_build", "previous_times", "summary_text", "times_table"]


BASE_REF = "slabconv-baseline"


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
        boot_key = runtime.verdict_key(self.guest, self.config) if kernels is not None else ""
        to_boot = []                            # (index, sha): kernels kept, not booted yet
        for i, (sha, subject) in enumerate(self.commits, 1):
            target = self.deltas[sha]
            files = sorted(p for p in set(prev_delta) | set(target)
                           if prev_delta.get(p) != target.get(p))
            prev_delta = target
            pr = PatchResult(index=i, commit=sha, subject=subject, files=files)
            cached = st["results"].get(sha)
            if (kernels is not None and cached
                    and not runtime.current(cached.get("boot"), boot_key)
                    and not kernels.have(sha)):
                cached = None                  # never booted, or with other tests, scanners or
                                               # command line: again
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
                    pr.boot = cached.get("boot") if runtime.current(cached.get("boot"), boot_key) else None
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
                                                tests=boot_key).to_dict()
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
        plan = plan_build(rewrite, self.o, self.deps() if only_c else {})
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
        expectations = objdiff.applicable(expectations, self.o / ".config")
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
        expectations = objdiff.applicable(expectations, self.o / ".config")
        diffs = [objdiff.ObjDiff.from_dict(d) for d in pr.code["diffs"]]
        changed = {d.object for d in diffs}
        rew = pr.code.get("rewritten")
        diffs += [objdiff.ObjDiff(o) for o in (rew if isinstance(rew, list) else [])
                  if o not in changed]                   # compared, same code
        unexpected, missing = objdiff.judge(expectations, diffs,
                                            f"{pr.index}/{len(self.commits)} {pr.subject}")
        pr.code = dict(pr.code, unexpected=[f.to_dict() for f in unexpected],
                       missing=[f.to_dict() for f in missing],
                       ok=not unexpected and not any(f.stale for f in missing))

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


def check_series(repo, out_root, configs=None, *, base: str = BASE_REF,
                 head: str = "HEAD", baseline_src=None, baseline_id: Optional[str] = None,
                 jobs: int = 2, report_dir=None, progress: bool = True,
                 runtime_configs=(), guest=None, boot_jobs: int = 2,
                 code=None, variability: bool = False) -> BisectResult:
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
    variability: after the configurations, the variability builds
        (verify/variability_builds.py): every Kconfig symbol that changes
        what a patch's changed lines compile to, flipped in the first of
        `configs` that compiles them, and the objects holding the lines
        built at that patch; the unflipped side is this check's own build.
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
    var = None
    if variability:
        on_side = {r.config: {p.index: p for p in r.patches} for r in results}
        var = variability_builds.check(repo, commits, deltas, base_sha, out_root, configs, src,
                                       ident, jobs=jobs, progress=progress, on_side=on_side)
        slog.info("bisect", var.summary(per_patch=False).splitlines()[0])
    res = BisectResult(ok=all(r.ok for r in results) and (var is None or var.ok),
                       configs=results, commits=commits, base=base_sha,
                       seconds=time.monotonic() - t0, variability=var)
    rdir = Path(report_dir) if report_dir else out_root
    rdir.mkdir(parents=True, exist_ok=True)
    res.report = rdir / "bisect.json"
    res.summary = summary_text(res)
    res.report.write_text(json.dumps(res.to_dict(), indent=1) + "\n")
    (rdir / "bisect-summary.txt").write_text(res.summary + "\n")
    return res


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
    ap.add_argument("--variability", action="store_true",
                    help="also the variability builds (verify/variability_builds.py)")
    args = ap.parse_args(argv)

    def go() -> int:
        r = check_series(args.repo, args.out_root or cache_dir("build", "bisect"),
                         comma_list(args.configs),
                         base=args.base, head=args.head, baseline_src=args.baseline_src,
                         baseline_id=args.baseline_id, jobs=args.jobs,
                         variability=args.variability)
        write_json(args.json, r.to_dict())
        print(r.summary)
        return 0 if r.ok else 1
    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
