"""verify: kernel configs, builds, and the "no new warnings" gates.

    from verify import check_build
    r = check_build(baseline_src, patched_src, out_root, config="slub",
                    sparse_files=["mm/slub.c"])
    r.ok, r.new_warnings, r.sparse.new, r.report, r.summary

check_build() builds the baseline tree and the patched tree with the same
configuration, reports the compiler warnings the patched build has and the
baseline does not (keyed without line numbers, multiset difference), runs
sparse on the given .c files of both, and writes report.json + summary.txt.

Layout under out_root (one per configuration and baseline identity):

    base-<config>-<key>/tree/      hard-link snapshot of the baseline tree
    base-<config>-<key>/tree/o/    its O= directory (kept: reused next time)
    base-<config>-<key>/build.json the baseline BuildResult (reuse stamp)
    patched-<config>-<key>/tree/   baseline snapshot + the files that differ
    patched-<config>-<key>/tree/o/ a copy of the baseline O= (incremental)
    patched-<config>-<key>/report.json, summary.txt

<key> hashes the configuration (fragments, arch, targets, the CC wrapper)
and the baseline identity: `baseline_id` from the caller (e.g. the baseline
commit), else verify.tree.identity() (git HEAD, or a stat manifest).

Modules: kconfig (configure), kbuild (build), warnings (parsing, keys,
new_warnings), sparse (sparse gate), tree (snapshots and diffs).
"""
import hashlib
import json
import re
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from base import atomic, log as slog
from base.lock import locked
from base.log import SlabconvError
from . import configtable, kbuild, kconfig, sparse, sparse as _sparse, tree, warnings as W


__all__ = ["check_build", "VerifyResult", "kbuild", "kconfig", "sparse", "tree", "W"]

O_NAME = "o"                 # the O= directory inside each snapshot (srctree="..")
KEEP_BASELINES = 3           # baseline builds kept per configuration


@dataclass
class VerifyResult:
    ok: bool
    config: str
    baseline: Optional[kbuild.BuildResult]    # None: not built (check_build(baseline=False))
    patched: Optional[kbuild.BuildResult]
    new_warnings: list
    gone_warnings: list = field(default_factory=list)
    sparse: Optional[_sparse.SparseResult] = None
    changed_files: list = field(default_factory=list)
    baseline_reused: bool = False
    patched_reused: bool = False     # no file changed since the last patched build
    seconds: float = 0.0
    report: Optional[Path] = None
    summary: str = ""
    problems: list = field(default_factory=list)   # one line per failed check
    sparse_not_built: list = field(default_factory=list)  # sparse files the config does not build
    # The trees and O= dirs that were built (snapshots under out_root; the
    # patched ones are replaced by the next check_build with the same baseline).
    baseline_src: Optional[Path] = None
    baseline_out: Optional[Path] = None
    patched_src: Optional[Path] = None
    patched_out: Optional[Path] = None
    code: Optional[dict] = None         # series_code(): the whole series' code vs the baseline

    def to_dict(self) -> dict:
        return {
            "ok": self.ok, "config": self.config, "seconds": round(self.seconds, 1),
            "problems": self.problems, "baseline_reused": self.baseline_reused,
            "patched_reused": self.patched_reused,
            "baseline_src": str(self.baseline_src), "baseline_out": str(self.baseline_out),
            "patched_src": str(self.patched_src) if self.patched_src else None,
            "patched_out": str(self.patched_out) if self.patched_out else None,
            "changed_files": self.changed_files, "sparse_not_built": self.sparse_not_built,
            "new_warnings": [w.to_dict() for w in self.new_warnings],
            "gone_warnings": [w.to_dict() for w in self.gone_warnings],
            "baseline": self.baseline.to_dict() if self.baseline else None,
            "gates": "run" if self.baseline is not None else "not run: no baseline build",
            "patched": self.patched.to_dict() if self.patched else None,
            "sparse": self.sparse.to_dict() if self.sparse else None,
            "code": self.code,
        }


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def _old_builds(out_root: Path, config: str, keep_dir: Path) -> list:
    """Baseline builds (and their patched and bisect dirs) beyond the
    KEEP_BASELINES most recently used ones.  Matches this configuration's
    directories only ("slub" must not take "slub-nodebug"'s)."""
    own = re.compile(rf"base-{re.escape(config)}-[0-9a-f]{{12}}")
    bases = sorted((p for p in out_root.glob(f"base-{config}-*")
                    if p != keep_dir and own.fullmatch(p.name)),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    old = []
    for b in bases[KEEP_BASELINES - 1:]:
        slog.info("verify", f"removing old baseline build {b.name}")
        old += [b] + [out_root / b.name.replace("base-", f"{kind}-", 1)
                      for kind in ("patched", "bisect", "var-kconfig")]
        key = b.name[len(f"base-{config}-"):]
        old += sorted(out_root.glob(f"var-{config}-{key}-*"))   # the variability builds'
    return old


def build_key(config: str, ident: str, targets=kbuild.DEFAULT_TARGETS, version: str = "") -> str:
    """The identity of a baseline build: configuration (fragments, arch; with
    the kernel `version`, its overlays), targets, CC wrapper and compiler,
    and the baseline tree's identity."""
    arch = kconfig.config_arch(config)
    cfg = kconfig.inputs_digest(kconfig.config_fragments(config, version), arch)
    wrapper = hashlib.sha256(kbuild.CCWRAP.read_bytes()).hexdigest()[:8]
    return _digest(config, cfg, arch, tuple(targets), wrapper, kbuild.compiler(arch=arch), ident)


@contextmanager
def config_lock(out_root: Path, config: str):
    """Exclusive use of out_root's builds for one configuration (baseline,
    patched and bisect dirs), across processes."""
    with locked(Path(out_root) / f".lock-{config}", f"the {config} builds in {out_root}",
                stage="verify"):
        yield


def _baseline(src: Path, base_dir: Path, key: str, config: str, arch: str,
              targets: tuple, jobs: int):
    """The baseline build, reused when base_dir holds a successful one for key."""
    stamp = base_dir / "build.json"
    snap = base_dir / "tree"
    if stamp.is_file():
        try:
            d = json.loads(stamp.read_text())
            if d.get("key") == key and (snap / O_NAME / ".config").is_file():
                res = kbuild.BuildResult.from_dict(d["result"])
                slog.info("verify", f"baseline: reusing the build in {snap / O_NAME} "
                                    f"({len(res.warnings)} warnings)")
                base_dir.touch()
                return res, True
        except (ValueError, KeyError, TypeError):
            pass
    slog.info("verify", f"baseline: snapshot of {src} -> {snap}")
    stamp.unlink(missing_ok=True)
    tree.snapshot(src, snap)
    kconfig.configure_named(snap, snap / O_NAME, config)
    res = kbuild.build(snap, snap / O_NAME, targets=targets, jobs=jobs, arch=arch,
                       label="baseline", estimate=configtable.get(config).objects or None)
    if res.ok:
        stamp.write_text(json.dumps({"key": key, "src": str(src),
                                     "result": res.to_dict()}, indent=1) + "\n")
    return res, False


def _baseline_sparse(base_dir: Path, snap: Path, files: list, arch: str) -> _sparse.SparseRun:
    cache = base_dir / f"sparse-{_digest(*sorted(files))}.json"
    if cache.is_file():
        try:
            run = sparse.SparseRun.from_dict(json.loads(cache.read_text()))
            if sorted(run.files) == sorted(files) and run.ok:
                slog.info("verify", f"baseline: reusing sparse results for {', '.join(files)}")
                return run
        except (ValueError, KeyError, TypeError):
            pass
    run = sparse.run_sparse(snap, snap / O_NAME, files, arch=arch, label="baseline")
    if run.ok:
        atomic.write_text(cache, json.dumps(run.to_dict(), indent=1) + "\n")
    return run


def check_build(baseline_src, patched_src, out_root, config: str = "slub",
                sparse_files=(), *, baseline_id: Optional[str] = None, jobs: int = 2,
                targets=kbuild.DEFAULT_TARGETS, incremental: bool = True,
                baseline: bool = True) -> VerifyResult:
    """Build baseline and patched trees, compare warnings, run the sparse gate.

    baseline_src, patched_src: kernel source trees (never written to).
    out_root: where builds and the report go (e.g. base.paths.cache_dir("build", "5.10")).
    baseline_id: identity of the baseline tree (e.g. its commit); the baseline
        build is reused when config and baseline_id are unchanged.
    incremental: build the patched tree in a copy of the baseline's O= dir
        (only what the patch touches is recompiled); False: a fresh O= dir
        (everything recompiled, through ccache).
    baseline=False: the patched tree alone, built from scratch; no warning or
        sparse gate (there is nothing to compare with: the result says so).
        For the boot tests of configurations whose gates verify runs
        (`slabconv verify --config kasan`): half the cold build time.
    """
    t0 = time.monotonic()
    baseline_src = Path(baseline_src).resolve()
    patched_src = Path(patched_src).resolve()
    out_root = Path(out_root).resolve()
    for p, what in ((baseline_src, "baseline"), (patched_src, "patched")):
        if not (p / "Makefile").is_file() or not (p / "Kconfig").is_file():
            raise SlabconvError(f"{what} tree {p} is not a kernel source tree", exit_code=2)
    arch = kconfig.config_arch(config)
    targets = tuple(targets)
    sparse_files = sparse.check_files(baseline_src, sparse_files)
    out_root.mkdir(parents=True, exist_ok=True)

    ident = baseline_id or tree.identity(baseline_src)
    key = build_key(config, ident, targets, kconfig.tree_version(baseline_src))
    base_dir = out_root / f"base-{config}-{key}"
    pat_dir = out_root / f"patched-{config}-{key}"

    slog.info("verify", f"config {config} ({arch}); baseline {ident}; builds in {out_root}")
    with config_lock(out_root, config):
        if not baseline:
            return _build_patched_only(patched_src, config, pat_dir, arch, targets, jobs, t0)
        return _check_build_locked(baseline_src, patched_src, out_root, config, sparse_files,
                                   base_dir, pat_dir, key, arch, targets, jobs, incremental, t0)


def _check_build_locked(baseline_src, patched_src, out_root, config, sparse_files, base_dir,
                        pat_dir, key, arch, targets, jobs, incremental, t0) -> VerifyResult:
    cleaner = None
    try:
        base_dir.mkdir(parents=True, exist_ok=True)
        # old trees are deleted in the background, while we build; the last
        # patched build of this baseline is kept: it is brought up to date
        # in place (_patched)
        keep = incremental and _patched_stamp(pat_dir, key) is not None
        cleaner = tree.discard(_old_builds(out_root, config, base_dir)
                               + ([] if keep else [pat_dir]), out_root / ".trash")
        base, reused = _baseline(baseline_src, base_dir, key, config, arch, targets, jobs)
        base_snap = base_dir / "tree"
        problems = []
        if not base.ok:
            problems.append("the baseline tree does not build: " + base.failure_message())
            res = VerifyResult(ok=False, config=config, baseline=base, patched=None,
                               new_warnings=[], problems=problems, baseline_reused=reused,
                               baseline_src=base_snap, baseline_out=base_snap / O_NAME)
            return _finish(res, pat_dir, t0)

        pat_snap = pat_dir / "tree"
        pat_out = pat_snap / O_NAME
        changed, pat, pat_reused = _patched(base_snap, patched_src, pat_dir, key, config, arch,
                                            targets, jobs, incremental, keep)
        new = W.new_warnings(base.warnings, pat.warnings) if pat.ok else []
        gone = W.gone_warnings(base.warnings, pat.warnings) if pat.ok else []
        if not pat.ok:
            problems.append("the patched tree does not build: " + pat.failure_message())
        if new:
            problems.append(f"{len(new)} new compiler warning(s)")

        sp = None
        # sparse checks what the configuration builds: a file whose object the
        # baseline build did not produce (mm/slab.c under SLUB) is left out.
        not_built = [f for f in sparse_files
                     if not (base_snap / O_NAME / (f[:-2] + ".o")).is_file()]
        checked = [f for f in sparse_files if f not in not_built]
        if not_built:
            slog.info("verify", f"sparse: not built in config {config}, not checked: "
                                f"{', '.join(not_built)}")
        if checked and pat.ok:
            t1 = time.monotonic()
            brun = _baseline_sparse(base_dir, base_snap, checked, arch)
            sp = sparse.gate(base_snap, base_snap / O_NAME, pat_snap, pat_out, checked,
                             arch=arch, baseline=brun)
            sp.seconds = time.monotonic() - t1
            if not sp.baseline.ok or not sp.patched.ok:
                problems.append("sparse could not check every file (see the sparse logs)")
            if sp.new:
                problems.append(f"{len(sp.new)} new sparse warning(s)")

        res = VerifyResult(ok=not problems, config=config, baseline=base, patched=pat,
                           new_warnings=new, gone_warnings=gone, sparse=sp,
                           changed_files=changed, baseline_reused=reused,
                           patched_reused=pat_reused, problems=problems, sparse_not_built=not_built,
                           baseline_src=base_snap,
                           baseline_out=base_snap / O_NAME, patched_src=pat_snap,
                           patched_out=pat_out)
        return _finish(res, pat_dir, t0)
    finally:
        if cleaner is not None:
            cleaner.wait()


def _patched_stamp(pat_dir: Path, key: str) -> dict | None:
    """The record of the last patched build in pat_dir, if it was built on
    the baseline build `key` and its O= directory is there."""
    stamp = pat_dir / "build.json"
    try:
        d = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    if d.get("key") != key or not (pat_dir / "tree" / O_NAME / ".config").is_file():
        return None
    return d


def _patched(base_snap: Path, patched_src: Path, pat_dir: Path, key: str, config: str,
             arch: str, targets: tuple, jobs: int, incremental: bool, keep: bool):
    """The patched build: (files that differ from the baseline, BuildResult,
    whether the last build's result was reused).

    keep (the last patched build of this baseline is in pat_dir): its
    snapshot is brought to patched_src's content in place, so only the files
    changed since then get a new time stamp and kbuild recompiles what they
    touch; when none changed and that build passed, its result stands and
    nothing is run.  Otherwise: the baseline snapshot with the differing
    files replaced, built in a copy of the baseline's O= directory
    (incremental) or in a fresh one."""
    pat_snap = pat_dir / "tree"
    pat_out = pat_snap / O_NAME
    stamp = pat_dir / "build.json"
    slog.info("verify", f"patched: comparing {patched_src} with the baseline")
    changed = sorted(set().union(*tree.diff_trees(base_snap, patched_src,
                                                   skip_a=(O_NAME,))))
    slog.info("verify", f"patched: {len(changed)} file(s) differ: "
                        f"{', '.join(changed[:8])}{' ...' if len(changed) > 8 else ''}")
    last = _patched_stamp(pat_dir, key) if keep else None
    if last is not None:
        since = tree.sync(pat_snap, patched_src, skip=(O_NAME,))
        if not since and last.get("result", {}).get("ok"):
            res = kbuild.BuildResult.from_dict(last["result"])
            slog.info("verify", f"patched: reusing the build in {pat_out}: no file changed "
                                f"since it was built ({len(res.warnings)} warnings)")
            return changed, res, True
        slog.info("verify", f"patched: {len(since)} file(s) changed since the last patched "
                            f"build: building it again in place")
    else:
        pat_dir.mkdir(parents=True, exist_ok=True)
        tree.overlay(base_snap, patched_src, pat_snap, skip=(O_NAME,))
        if incremental:
            cp = subprocess.run(["cp", "-a", "--reflink=auto", str(base_snap / O_NAME),
                                 str(pat_out)], stderr=subprocess.PIPE, text=True)
            if cp.returncode != 0:
                raise SlabconvError(f"cannot copy the baseline build: {cp.stderr.strip()}")
            tree.relocate(pat_out, base_snap, pat_snap)
    stamp.unlink(missing_ok=True)
    kconfig.configure_named(pat_snap, pat_out, config)
    pat = kbuild.build(pat_snap, pat_out, targets=targets, jobs=jobs, arch=arch,
                       label="patched")
    if pat.ok:
        kconfig.configure_named(pat_snap, pat_out, config)   # re-check after syncconfig
    if incremental:
        atomic.write_text(stamp, json.dumps({"key": key, "result": pat.to_dict()}, indent=1)
                          + "\n")
    return changed, pat, False


def _build_patched_only(patched_src, config, pat_dir, arch, targets, jobs, t0) -> VerifyResult:
    """check_build(baseline=False): a fresh build of the patched tree."""
    cleaner = tree.discard([pat_dir], pat_dir.parent / ".trash")
    try:
        pat_snap = pat_dir / "tree"
        pat_out = pat_snap / O_NAME
        slog.info("verify", f"patched (no baseline build: warning gates not run): "
                            f"snapshot of {patched_src} -> {pat_snap}")
        tree.snapshot(patched_src, pat_snap)
        kconfig.configure_named(pat_snap, pat_out, config)
        pat = kbuild.build(pat_snap, pat_out, targets=targets, jobs=jobs, arch=arch,
                           label="patched")
        problems = []
        if pat.ok:
            kconfig.configure_named(pat_snap, pat_out, config)   # re-check after syncconfig
        else:
            problems.append("the patched tree does not build: " + pat.failure_message())
        res = VerifyResult(ok=not problems, config=config, baseline=None, patched=pat,
                           new_warnings=[], problems=problems, patched_src=pat_snap,
                           patched_out=pat_out)
        return _finish(res, pat_dir, t0)
    finally:
        if cleaner is not None:
            cleaner.wait()


def summary_text(r: VerifyResult) -> str:
    L = [f"verify {r.config}: {'OK' if r.ok else 'FAIL'} ({slog.duration(r.seconds)})"]

    def line(name, b: Optional[kbuild.BuildResult], extra=""):
        if b is None:
            L.append(f"  {name:<9} not built")
            return
        state = "built " if b.ok else "FAILED"
        cc = f", ccache {b.ccache['hits']}/{b.ccache['hits'] + b.ccache['misses']} hits" \
            if b.ccache and (b.ccache.get("hits") or b.ccache.get("misses")) else ""
        L.append(f"  {name:<9} {state} {slog.duration(b.seconds):>6}  {b.compiled} objects "
                 f"compiled{cc}, {len(b.warnings)} warnings{extra}")

    if r.baseline is None:
        L.append("  baseline  not built: the compiler and sparse warning gates were not run")
        line("patched", r.patched)
    else:
        line("baseline", r.baseline, " (reused)" if r.baseline_reused else "")
        line("patched", r.patched,
             (f", {len(r.new_warnings)} NEW" if r.patched and r.patched.ok else "")
             + (" (reused: no file changed since)" if r.patched_reused else ""))
    if r.changed_files:
        L.append(f"  changed   {len(r.changed_files)} file(s): "
                 f"{', '.join(r.changed_files[:6])}{' ...' if len(r.changed_files) > 6 else ''}")
    for w in r.new_warnings[:20]:
        L.append(f"    NEW {w.format()}")
    if len(r.new_warnings) > 20:
        L.append(f"    ... and {len(r.new_warnings) - 20} more")
    if r.sparse:
        s = r.sparse
        L.append(f"  sparse    {', '.join(s.patched.files)}: {len(s.baseline.warnings)} -> "
                 f"{len(s.patched.warnings)} warnings, {len(s.new)} NEW "
                 f"({slog.duration(s.seconds)})")
        for w in s.new[:20]:
            L.append(f"    NEW {w.format()}")
            L.extend(f"          {d}" for d in w.details[:4])
    if r.sparse_not_built:
        L.append(f"  sparse    not built in this config, not checked: "
                 f"{', '.join(r.sparse_not_built)}")
    for b, name in ((r.baseline, "baseline"), (r.patched, "patched")):
        if b is not None and not b.ok:
            L.append(f"  {name} build errors:")
            L.extend("    " + ln for ln in b.error_excerpt.splitlines()[:30])
            L.append(f"    (full log: {b.log})")
    if r.report:
        L.append(f"  report    {r.report}")
    return "\n".join(L)


def _finish(res: VerifyResult, pat_dir: Path, t0: float) -> VerifyResult:
    res.seconds = time.monotonic() - t0
    pat_dir.mkdir(parents=True, exist_ok=True)
    res.report = pat_dir / "report.json"
    res.summary = summary_text(res)
    res.report.write_text(json.dumps(res.to_dict(), indent=1) + "\n")
    (pat_dir / "summary.txt").write_text(res.summary + "\n")
    return res
