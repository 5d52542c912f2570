"""The stages: regeneration (do_regen), verify, boot, bench, and `all`.

The series under test is always the written one (generated-patches/<v>/ for
a packaged kernel): it is applied with `git am` to a fresh baseline work
tree, so verify and boot prove the patches as a user receives them.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import boot
import verify
from base import atomic, paths
from base.cliutil import comma_list
from base.log import info, SlabconvError, Stages
from boot import matrix, summary
from boot.matrix import GuestSpec
from regen import field_users, manifest, series, upstream, worktree
from regen.series import output_lock, series_date
from regen.source import committed_identity, DEFAULT_CONFIGS, resolve, series_dir, Source
from regen.spatch import spatch_version
from regen.worktree import BASE_TAG, user_identity, WorkTree
from report import reproduce, results as recorded
from verify import (bisect, checkpatch, compiled, kconfig, layout, messages,
    nullcheck, objdiff, readability, residue)
from verify.field_users import coverage
from verify.gates import Gates
from . import prefetch


DEFAULT_CONFIG = "slub"
# One kernel per allocator: each is built (baseline and patched: new
# compiler and sparse warnings) and booted with the in-guest tests.  The
# first is the primary one (bench, `python3 -m boot` figures).
DEFAULT_BISECT = ("slub", "slub-nodebug", "slab", "slob")   # configs of the per-patch build check
# configs of the per-patch check whose every patch's kernel is also booted
# with the in-guest tests, fault injection included (verify/runtime.py)
RUNTIME_BISECT = ("slub", "slab")
# Every configuration the per-patch check can build (verify/configs; kasan,
# iommu and mm-users are not in the default: see verify/README.md for what
# an incremental per-patch run costs in each).
BISECT_CHOICES = DEFAULT_BISECT + ("kasan", "mm-users", "iommu")
# verify's changed-lines coverage (verify/compiled.py): the configurations
# built (patched tree only) besides --config so that every line the series
# changes is compiled by some build: the other sides of the slab code's
# #ifdefs (SLUB_DEBUG off; SLAB without debugging, with KASAN; SLOB with
# NUMA, zsmalloc and hotplug; i386 NUMA with classic SPARSEMEM for the
# pgflags_*() patches), KASAN and the IOMMU drivers.
COVERAGE_CONFIGS = ("slub-nodebug", "kasan", "iommu", "sparsemem-i386", "slab-kasan",
                    "slob-numa")
SLUB_CONFIGS = ("slub", "slub-nodebug", "slub-i386", "iommu")  # booted with slub_debug=
# The boot matrix (`make boot`, `make all`): the three allocators and SLUB on
# i386, booted two at a time (boot/matrix.py).  `--config +kasan` adds to it
# (kasan's cold build is 13 min, so it is not in the default set).
BOOT_CONFIGS = ("slub", "slab", "slob", "slub-i386")
BOOT_JOBS = 2                      # guests at a time (2 cores: one TCG guest each)
DEFAULT_BOOT_TIMEOUT = 120.0
# Per configuration: the guest's timeout (s) and more QEMU arguments.  A
# new guest is one line in each table it needs (and its kconfig.CONFIGS line).
BOOT_TIMEOUT = {"kasan": 300.0, "slub-i386": 180.0, "iommu": 180.0}   # i386: 57-70 s measured under load
BOOT_QEMU: dict = {}
# Kernel command line additions per configuration.  kasan: every KASAN report
# is printed (5.10 prints only the first one without kasan_multi_shot), so a
# stray report cannot hide behind the guest module's deliberate ones; no
# slub_debug (KASAN's own red zones and quarantine; the KUnit suite's
# out-of-bounds writes would land in SLUB's red zones).
BOOT_CMDLINE = {"kasan": "kasan_multi_shot"}
# Configurations booted more than once: config -> {variant: more boot.run()
# arguments}; the run of variant "" is named after the configuration, the
# others config-variant.  iommu: the Intel IOMMU guest (boot/iommu.py, a
# virtio disk behind -device intel-iommu) in strict mode (the IOTLB flushed
# and the page-table pages freed at every unmap) and in lazy mode (the
# driver's flush queue holds them until its timer flushes): the two paths of
# "iommu: Use put_pages_list"; and behind -device amd-iommu (variant amd):
# the AMD driver's frees of the tables a 2 MiB page replaces and of a freed
# domain's tables.
BOOT_VARIANTS = {"iommu": {"": {"iommu": "intel-strict"}, "lazy": {"iommu": "intel"},
                           "amd": {"iommu": "amd"}}}


@dataclass
class Applied:
    src: Source
    tree: Path            # work tree with the series applied (HEAD)
    baseline_id: str      # commit of the baseline
    patches: list[Path]
    touched: list[str]    # files the series changes


def do_regen(args, src=None):
    import os
    if src is None:
        src = resolve(args.kernel, args.tree, args.deb_version)
    out = series_dir(src, args.output)
    # the committed series keeps its identity unless $SLABCONV_IDENTITY says otherwise
    kept = None if os.environ.get("SLABCONV_IDENTITY") else committed_identity(out)
    identity = worktree.parse_identity(kept) if kept else worktree.user_identity()
    info("regen", f"Linux {src.version} from {src.source_id}: {src.tree}")
    prefix = getattr(args, "subject_prefix", None) or f"PATCH {src.version}"
    if getattr(args, "reroll_count", None):
        prefix += f" v{args.reroll_count}"
    res = series.regenerate(src.tree, src.source_id, version=src.version, output=out,
                            identity=identity, until=getattr(args, "until", None),
                            subject_prefix=prefix)
    for e in res.entries:
        info("regen", f"  {e.seconds:6.2f}s  {e.subject}"
                      f"{'  [usage: ' + '; '.join(e.conversions) + ']' if e.origin == 'usage' else ''}"
                      f"{'  [callers elsewhere: ' + '; '.join(e.callers) + ']' if e.callers else ''}")
    for _, subject, reason in res.skipped:
        info("regen", f"  skipped  {subject}: {' '.join(reason.split())}")
    if res.converted_at:
        n = {s: sum(1 for v in res.verdicts if v[2] == s) for s in ("upstream", "not applicable")}
        info("regen", f"this kernel has struct slab already ({res.converted_at}): "
                      f"{len(res.entries)} entries applied, {n['upstream']} already present "
                      f"upstream, {n['not applicable']} not applicable (per entry: "
                      f"{out / 'ENTRIES'})")
    info("regen", f"{len(res.entries)} patches, {len(res.skipped)} steps skipped, "
                  f"in {res.seconds:.1f}s -> {out}")
    reproduce.record_regen(src.version, out, src.source_id, spatch_version(), res.seconds)
    return src, res


def applicable_configs(src: Source, configs, what: str = "verify") -> list:
    """The configurations of `configs` the tree has (verify.kconfig.applicable);
    each of the others is said to be not applicable.  None left: exit 2."""
    configs = [configs] if isinstance(configs, str) else list(configs)
    ok, na = kconfig.split_applicable(configs, src.tree)
    for c, why in na.items():
        info(what, f"{c}: not applicable: {why}")
    if configs and not ok:
        raise SlabconvError(f"none of the configurations {', '.join(configs)} applies to "
                            f"Linux {src.version}", exit_code=2)
    return ok


def apply_series(src: Source, patches_dir: Path, written: dict | None = None) -> Applied:
    """A fresh baseline work tree with the series applied by `git am`: the
    numbered patches of `patches_dir`, or `written` (name -> bytes: what
    this run's regen wrote there, which another run may have replaced
    since)."""
    if not written and not any(p for p in patches_dir.glob("[0-9][0-9][0-9][0-9]-*.patch")
                               if not p.name.startswith("0000-")):
        raise SlabconvError(f"no series in {patches_dir}: run `make regen` first", exit_code=2)
    wt = WorkTree.prepare(src.tree, src.source_id, paths.cache_dir("work", src.version, src.source_id),
                          user_identity(), series_date())
    # this run's own work tree (regen/worktree.py: a slot no other run uses)
    wt.git("checkout", "-q", "-f", "-B", wt.applied_branch, BASE_TAG)
    # the series as it is now, copied beside this run's work tree: a regen
    # writing the directory at the same time swaps it whole (under the same
    # lock), and every later check reads the copy, the patches applied
    import shutil
    snap = wt.path.parent / "series"
    if snap.exists():
        shutil.rmtree(snap)
    snap.mkdir(parents=True)
    if written:
        for name, data in written.items():
            (snap / name).write_bytes(data)
    else:
        with output_lock(patches_dir):
            for p in sorted(patches_dir.glob("[0-9][0-9][0-9][0-9]-*.patch")):
                if not p.name.startswith("0000-"):
                    shutil.copyfile(p, snap / p.name)
    patches = sorted(snap.glob("*.patch"))
    if not patches:
        raise SlabconvError(f"no series in {patches_dir}: run `make regen` first", exit_code=2)
    info("apply", f"git am {len(patches)} patches from {patches_dir}")
    try:
        wt.git("am", "-q", "--keep-cr", *map(str, patches))
    except SlabconvError as e:
        wt.git("am", "--abort", check=False)
        raise SlabconvError(f"the series in {patches_dir} does not apply to "
                            f"{src.source_id}:\n{e}")
    base = wt.git("rev-parse", BASE_TAG).strip()
    touched = wt.git("diff", "--name-only", "--no-renames", f"{BASE_TAG}..HEAD").split()
    return Applied(src, wt.path, base, patches, touched)


def verify_applied(ap: Applied, config=DEFAULT_CONFIGS, bisect_configs=DEFAULT_BISECT, *,
                   layout: bool = True, checkpatch: bool = True, tree_gates: bool = True,
                   coverage_configs=None, runtime_configs=RUNTIME_BISECT,
                   nullcheck: bool | None = None):
    """Every check of the applied series (verify/gates.py), the cheap ones
    first: checkpatch on every patch; struct slab's layout asserts (x86_64
    and i386, with and without MEMCG); the final tree (baseline vs patched:
    build, new compiler and sparse warnings) in each configuration of
    `config` (a name or a sequence; the first is the primary result, the
    others are in its .others); every patch on its own in each of `bisect_configs`
    (verify.bisect; none: not run), and in each of those that is in
    `runtime_configs` every patch's kernel booted with the in-guest tests
    (verify/runtime.py); the changed lines no build compiled
    (verify/compiled.py) after building the patched tree in each of
    `coverage_configs` too (None: not run; (): only the builds above); the
    field users and the residue gate.
    The primary result fails if any check does; its .gates holds them all,
    whose summary is printed last and whose JSON report is
    runs/verify-<version>.json.  layout=False / checkpatch=False /
    tree_gates=False (the field users and the residue): not run, and said so
    (boot builds kernels through here).  nullcheck (default: as tree_gates):
    slab_null.cocci at every patch (verify/nullcheck.py); False: not run."""
    t0 = time.monotonic()
    configs = [config] if isinstance(config, str) else list(config)
    if not configs:
        raise SlabconvError("verify: no kernel configuration given", exit_code=2)
    g = Gates(kernel=ap.src.version, source=ap.src.source_id, patches=len(ap.patches))
    if checkpatch:                # the patches as written: checkpatch and their messages
        g.checkpatch = checkpatch_series(ap)
        print(g.checkpatch.summary(per_finding=False))
        g.messages = messages_series(ap)
        print(g.messages.summary())
        g.readability = readability_series(ap)
        print(g.readability.summary())
    else:
        g.not_run["checkpatch"] = g.not_run["messages"] = g.not_run["readability"] = "not asked for"
    if tree_gates if nullcheck is None else nullcheck:     # seconds; cached per file
        g.nullcheck = nullcheck_series(ap)
        print(g.nullcheck.summary_text())
    else:
        g.not_run["nullcheck"] = "--no-nullcheck" if nullcheck is False else "not asked for"
    out_root = paths.cache_dir("build", ap.src.version)
    if layout:                    # minutes, where the builds below take an hour cold
        g.layout = layout_series(ap, out_root)
        print(g.layout.summary())
    else:
        g.not_run["layout"] = "not asked for"
    sparse_files = [f for f in ap.touched if f.endswith(".c")]
    ident = f"{ap.src.source_id}@{ap.baseline_id[:12]}"
    results = []
    for c in configs:
        info("verify", f"configuration {c} ({configs.index(c) + 1} of {len(configs)})")
        results.append(verify.check_build(ap.src.tree, ap.tree, out_root, config=c,
                                          sparse_files=sparse_files, baseline_id=ident))
    for x in results:
        if (x.baseline is not None and x.baseline.ok and x.patched is not None
                and x.patched.ok and x.baseline_out and x.patched_out):
            x.code = series_code(x, ap.src.tree)
    r = results[0]
    r.others = {x.config: x for x in results[1:]}
    for x in results[1:]:
        print(x.summary)
        if not x.ok:
            r.ok = False
            r.problems.extend(f"[{x.config}] {p}" for p in x.problems)
    if bisect_configs:
        b = bisect.check_series(ap.tree, out_root, list(bisect_configs), base=BASE_TAG,
                                head="HEAD", baseline_src=ap.src.tree, baseline_id=ident,
                                report_dir=r.report.parent,
                                runtime_configs=[c for c in runtime_configs
                                                 if c in bisect_configs],
                                guest=patch_guest, boot_jobs=BOOT_JOBS,
                                code=code_expectations())
        print(b.summary)
        r.add_bisect(b)
    else:
        g.not_run["per-patch"] = "--bisect-configs none"
    if coverage_configs is not None:
        g.compiled, failed = compiled_lines_check(ap, results, coverage_configs, out_root, ident)
        coverage_builds = g.compiled.build_dirs     # the field users' coverage takes them too
        for c, msg in failed.items():             # a coverage build that fails fails the check
            g.compiled.errors.append(f"[{c}] coverage build: {msg}")
            r.ok = False
            r.problems.append(f"[{c}] {msg}")
        print(g.compiled.summary())
        if g.compiled.missed:
            r.ok = False
            r.problems.append(f"{g.compiled.missed} changed code line(s) compiled by no build")
        elif g.compiled.errors and not failed:
            r.ok = False
            r.problems.append(f"changed lines: {len(g.compiled.errors)} preprocessing error(s): "
                              f"{g.compiled.errors[0]}")
    else:
        g.not_run["compiled-lines"] = "not asked for"
        coverage_builds = {}
    print(r.summary)
    if tree_gates:
        r.field_users = field_users_check(ap, results, coverage_builds)
        if r.field_users is None and not field_users.page_keeps_slab_members(ap.src.tree):
            g.field_users_none = "struct page had no slab members before the series"
        try:
            r.residue = residue_summary(ap)
        except SlabconvError as e:         # a check that did not run fails the verdict
            r.residue, g.residue_error = None, str(e).splitlines()[0] if str(e) else repr(e)
            r.ok = False
            r.problems.append(f"[residue] the check did not run: {g.residue_error}")
        gated = [] if r.residue is None else residue_gate(r.residue, upstream_residue(ap))
    else:
        r.field_users, r.residue, gated = None, None, []
        g.not_run["field-users"] = g.not_run["residue"] = "not asked for"
    if r.field_users and r.field_users["left"]:
        r.ok = False
        r.problems.append(f"slab member(s) of struct page still used after the series in "
                          f"{', '.join(sorted(r.field_users['left']))}")
    if gated:
        r.ok = False
        r.problems.append(f"{len(gated)} struct page use(s) NOT allowed in converted file(s) "
                          f"{', '.join(sorted({c.finding.file for c in gated}))}")
        for c in gated[:20]:
            f = c.finding
            print(f"  NOT allowed: {f.file}:{f.line} {f.function} {f.kind} {f.text}")
    for name, res in (("checkpatch", g.checkpatch), ("messages", g.messages),
                      ("layout", g.layout)):
        if res is not None and not res.ok:
            r.ok = False
            r.problems.extend(f"[{name}] {p}" for p in res.problems)
    if g.nullcheck is not None and not g.nullcheck.ok:
        r.ok = False
        r.problems.extend(f"[nullcheck] {p}" for p in g.nullcheck.problems())
    if r.others:
        print("verify: " + "; ".join(f"{x.config} {'ok' if x.ok else 'FAILED'}" for x in results))
    g.builds, g.bisect, g.field_users, g.residue = results, r.bisect, r.field_users, r.residue
    g.residue_gated, g.problems = gated, list(r.problems)
    g.seconds = time.monotonic() - t0
    g.write(paths.cache_dir("runs") / f"verify-{ap.src.version}.json")
    r.gates = g
    record_verify(ap, results, r)
    print(g.summary())
    return r


def _patched_builds(results) -> dict:
    """config -> O= directory of each patched build of `results` that built."""
    return {x.config: x.patched_out for x in results
            if x.patched_out is not None and x.patched is not None and x.patched.ok}


def compiled_lines_check(ap: Applied, results, coverage_configs, out_root: Path, ident: str):
    """The changed lines each patched build compiled (verify/compiled.py):
    the builds of `results`, and the patched tree built alone in each of
    `coverage_configs` this kernel has (the others are said to be not
    applicable).  Returns the report and {config: problem} for a coverage
    build that failed."""
    builds = _patched_builds(results)
    todo, skipped = kconfig.split_applicable([c for c in coverage_configs if c not in builds],
                                             ap.src.tree)
    for c, why in skipped.items():
        info("compiled", f"{c}: not built: {why}")
    failed = {}
    for i, c in enumerate(todo, 1):
        info("compiled", f"coverage build {i} of {len(todo)}: {c} (the patched tree alone)")
        x = verify.check_build(ap.src.tree, ap.tree, out_root, config=c, baseline_id=ident,
                               baseline=False)
        if x.patched is not None and x.patched.ok:
            builds[c] = x.patched_out
        else:
            failed[c] = "; ".join(x.problems) or "the patched tree does not build"
    info("compiled", f"preprocessing the changed files in {len(builds)} build(s)")
    rep = compiled.check(ap.tree, compiled.changed_lines(ap.tree, ap.baseline_id, "HEAD"), builds)
    rep.not_applicable = dict(skipped)
    return rep, failed


def nullcheck_series(ap: Applied):
    """slab_null.cocci at every patch of the applied series, on the files each changes."""
    return nullcheck.check_series(ap.tree, BASE_TAG, "HEAD")


def messages_series(ap: Applied):
    """Every function a commit message names is touched by its patch
    (verify/messages.py)."""
    return messages.check(ap.patches)


def readability_series(ap: Applied):
    """Page locals, helpers computed twice, round trips in the functions
    each patch changes (verify/readability.py; a report)."""
    return readability.check(ap.tree, BASE_TAG, "HEAD")


def layout_series(ap: Applied, out_root: Path):
    """struct slab's layout asserts, built for the applied series (verify/layout.py)."""
    return layout.check(ap.tree, out_root, base=ap.src.tree, changed=ap.touched)


def checkpatch_series(ap: Applied):
    """The baseline tree's checkpatch.pl on every patch of the applied series."""
    return checkpatch.check(ap.src.tree, ap.patches)


def record_verify(ap: Applied, results, r) -> None:
    """Record the results for `slabconv review`, tied to the series applied
    (report/results.py); boot_config() records its runs the same way."""
    stamp = recorded.series_stamp(ap.patches, ap.src.source_id)
    for x in results:
        x.series_record = (ap.src.version, stamp)
        recorded.record(ap.src.version, f"verify-{x.config}", stamp, x.to_dict())
    if r.bisect is not None:
        recorded.record(ap.src.version, "bisect", stamp, r.bisect.to_dict())
    if r.residue is not None:
        recorded.record(ap.src.version, "residue", stamp, r.residue.to_dict())
    if r.field_users is not None:
        recorded.record(ap.src.version, "field-users", stamp, r.field_users)
    g = getattr(r, "gates", None)
    if getattr(g, "compiled", None) is not None:
        recorded.record(ap.src.version, "compiled-lines", stamp, g.compiled.to_dict())
    for name in ("layout", "checkpatch", "nullcheck", "messages"):
        res = getattr(g, name, None)
        if res is not None:
            recorded.record(ap.src.version, name, stamp, res.to_dict())


def field_users_check(ap: Applied, results, extra_builds=None) -> dict | None:
    """The files that used a slab member of struct page before the series
    (found by slab_field_users.cocci, cached per source) and the configs
    whose patched build compiled each; and the uses left after the series,
    which must be none.  Only when the series removes the members (its
    last patch changes struct page)."""
    import json
    if field_users.page_keeps_slab_members(ap.tree):
        info("field-users", "struct page keeps its slab members: nothing to prove")
        return None
    if not field_users.page_keeps_slab_members(ap.src.tree):
        # 6.1, 6.12: upstream removed them; the series removes nothing
        info("field-users", f"struct page had no slab members before the series "
                            f"({ap.src.source_id}): nothing to prove")
        return None
    cache = paths.cache_dir("runs") / f"field-users-{ap.src.source_id}-{_rule_digest()}.json"
    if cache.is_file():
        before = {f: [field_users.Use(**u) for u in us]
                  for f, us in json.loads(cache.read_text()).items()}
    else:
        before = field_users.find(ap.src.tree)
        atomic.write_text(cache, json.dumps({f: [u.__dict__ for u in us]
                                             for f, us in before.items()}))
    cands = sorted(set(field_users.candidates(ap.tree)) | set(before))
    after = field_users.find(ap.tree, [f for f in cands if (ap.tree / f).is_file()],
                             cached=True)
    builds = _patched_builds(results)
    for c, o in (extra_builds or {}).items():    # the coverage builds compiled some of them
        builds.setdefault(c, o)
    rows = coverage(before, builds)
    print("field users: files that used a slab member of struct page before the series, "
          "and the builds that compiled them after it")
    for row in rows:
        how = ", ".join(row["built_by"]) if row["built_by"] else f"NOT BUILT: {row['why_not']}"
        print(f"  {row['file']:34} {row['uses']:4d} use(s)  {how}")
    for f, us in sorted(after.items()):
        for u in us:
            print(f"  LEFT: {u.file}:{u.line} page->{u.field} in {u.function}")
    print(f"field users: {len(rows)} file(s), {sum(1 for r in rows if r['built_by'])} built, "
          f"{sum(len(v) for v in after.values())} use(s) left")
    return {"files": rows, "left": sorted(after)}


def _rule_digest() -> str:
    import hashlib
    return hashlib.sha256(field_users.RULE.read_bytes()).hexdigest()[:12]


def residue_gate(rr, baseline=None) -> list:
    """NOT allowed uses in the files residue.toml says are converted; with
    `baseline` (the residue of a kernel converted upstream), only those the
    baseline does not have (same file, function, kind and text, counted)."""
    if rr is None:
        return []
    from collections import Counter
    gate = set(residue.load_allowlist().gate)
    gated = [c for c in rr.not_allowed if c.finding.file in gate]
    if baseline is None:
        return gated
    key = (lambda c: (c.finding.file, c.finding.function, c.finding.kind, c.finding.text))
    theirs = Counter(key(c) for c in baseline.not_allowed)
    new = []
    for c in gated:
        if theirs[key(c)]:
            theirs[key(c)] -= 1
        else:
            new.append(c)
    return new


def upstream_residue(ap: Applied):
    """On a kernel that has struct slab already (6.1, 6.12: upstream's own
    conversion), the residue of the unpatched tree: the struct page uses the
    allowlist (written for the series' end state on 5.10) does not allow there
    are upstream's, and the gate fails only on those the series adds.  None
    for a kernel without struct slab (5.10: every use NOT allowed fails)."""
    where = upstream.has_struct_slab(ap.src.tree)
    if not where:
        return None
    try:
        rr = residue.check(ap.src.tree)
    except SlabconvError as e:
        info("residue", f"no residue report of the unpatched tree: {e}")
        return None
    info("residue", f"Linux {ap.src.version} has struct slab already ({where}): "
                    f"{len(rr.not_allowed)} NOT allowed use(s) are upstream's own; "
                    "the gate fails only on uses the series adds")
    return rr


def residue_summary(ap: Applied, limit: int = 10):
    """Print the residue report of the applied series (counts and the first
    `limit` uses that are NOT allowed) and return it; verify's residue gate
    (residue_gate()) decides on it.  A failure to produce it is raised
    (SlabconvError): verify fails on a residue check that did not run."""
    rr = residue.check(ap.tree)
    print(rr.summary(limit=limit))
    return rr


def _applied(args, boot_configs=()) -> Applied:
    src = _src(args, boot_configs)
    return apply_series(src, series_dir(src, args.output))


def cmd_residue(args) -> int:
    """The series applied with git am; the residue report (verify/residue.py)."""
    ap = _applied(args)
    rr = residue.check(ap.tree, args.files, all_files=args.all, allowlist=args.allowlist)
    recorded.record(ap.src.version, "residue",
                    recorded.series_stamp(ap.patches, ap.src.source_id), rr.to_dict())
    return residue.report(rr, args)


def cmd_layout(args) -> int:
    """The series applied with git am; struct slab's asserts built in the
    layout configurations (verify/layout.py)."""
    ap = _applied(args)
    return layout.run_and_report(ap.tree, paths.cache_dir("build", ap.src.version), args,
                                 base=ap.src.tree, changed=ap.touched)


def cmd_checkpatch(args) -> int:
    """The kernel's own scripts/checkpatch.pl, from the baseline tree, on
    every patch of the series as written (verify/checkpatch.py; nothing
    applied)."""
    src = _src(args)
    return checkpatch.run_and_report(src.tree, series_dir(src, args.output), args,
                                     default_json=paths.cache_dir("runs") /
                                     f"checkpatch-{src.version}.json")


def _bisect_configs(args) -> tuple:
    v = getattr(args, "bisect_configs", None)
    if v is None:
        return DEFAULT_BISECT
    return tuple(c for c in comma_list(v) if c != "none")


def verified_builds(vr) -> list:
    """(config, VerifyResult) of every configuration verify built."""
    return [(vr.config, vr)] + list(getattr(vr, "others", {}).items())


def boot_verified(vr, run_name: str = "patched"):
    """Boot the primary configuration's patched kernel with the guest tests."""
    return boot_config(vr, run_name)


def series_code(x, src) -> dict:
    """The whole series' effect on the compiled code in one configuration:
    scripts/bloat-o-meter on vmlinux, and every kernel object of the
    patched build compared function by function with the baseline's
    (verify/objdiff.py), with bloat-o-meter for each object whose code
    changed."""
    base, new = Path(x.baseline_out), Path(x.patched_out)
    objs = [o for o in objdiff.list_objects(new) if (base / o).is_file()]
    changed = []
    for d in objdiff.compare_objects(base, new, objs):
        if not d.equal:
            changed.append({"object": d.object, "delta": d.delta,
                            "functions": [c.to_dict() for c in d.changed],
                            "added": [a.to_dict() for a in d.added],
                            "removed": [a.to_dict() for a in d.removed],
                            "bloat": objdiff.bloat(base / d.object, new / d.object,
                                                   src).text()})
    vml = objdiff.bloat(base / "vmlinux", new / "vmlinux", src)
    return {"vmlinux": vml.text(), "vmlinux_net": vml.net, "objects_compared": len(objs),
            "objects_changed": changed}


def code_expectations(manifest_path=None):
    """For the per-patch object-code check: subject -> (the code changes its
    manifest entry declares, None for a type-only patch; its function
    renames)."""
    series = manifest.load(Path(manifest_path) if manifest_path else paths.COCCI / "series.toml")
    index = objdiff.entries_by_subject(series)

    def expect(subject: str):
        e = objdiff.entry_for_subject(series, subject, index)
        return (e.code or None, objdiff.renames_of(e)) if e is not None else (None, {})
    return expect


def patch_guest(config: str, image, build_dir, src, name: str, modules):
    """The guest of one patch's kernel in the per-patch check (runtime
    bisect): the configuration's boot arguments, with the guest modules
    kept with that kernel."""
    a = boot_args(config)
    return kernel_spec(config, image, build_dir, src, name=name, cmdline=a["cmdline_extra"],
                       slub_debug=a["slub_debug"], options={"modules": tuple(modules)})


def boot_args(config: str, cmdline_extra: str = "") -> dict:
    """boot.run()'s slub_debug and cmdline_extra for a configuration
    (cmdline_extra: more kernel parameters, e.g. slabconv.inject=...)."""
    slub_debug = boot.DEFAULT_SLUB_DEBUG if config in SLUB_CONFIGS else None
    extra = " ".join(x for x in (BOOT_CMDLINE.get(config, ""), cmdline_extra.strip()) if x)
    return {"slub_debug": slub_debug, "cmdline_extra": extra}


def boot_variants(config: str) -> list:
    """The variants a configuration is booted in ([""]: once)."""
    return list(BOOT_VARIANTS.get(config, {"": {}}))


def variant_options(config: str, variant: str = "") -> dict:
    """boot.run()'s options for one variant of a configuration (BOOT_VARIANTS;
    {} for a configuration booted once)."""
    return dict(BOOT_VARIANTS.get(config, {}).get(variant, {}))


def boot_name(config: str, variant: str = "") -> str:
    return f"{config}-{variant}" if variant else config


def boot_config(vr, run_name: str, cmdline_extra: str = "", variant: str = ""):
    if variant not in boot_variants(vr.config):
        raise SlabconvError(f"boot: configuration {vr.config} has no variant {variant!r} "
                            f"(has: {', '.join(repr(v) for v in boot_variants(vr.config))})",
                            exit_code=2)
    name = boot_name(vr.config, variant)
    out = paths.cache_dir("boot", "runs", run_name)
    b = vr.patched
    res = boot.run(b.image, vr.patched_out, vr.patched_src, out,
                   **boot_args(vr.config, cmdline_extra),
                   **variant_options(vr.config, variant))
    print(f"[{name}] " + res.summary())
    rec = getattr(vr, "series_record", None)
    if rec is not None:                  # the series verify built (record_verify)
        recorded.record_boot(rec[0], rec[1], name, res, out)
    return res


def kernel_spec(config: str, image, build_dir, src, *, name: str, cmdline: str = "",
                slub_debug: str | None = None, timeout: float | None = None,
                options: dict | None = None):
    """A boot matrix GuestSpec for a built kernel of `config`: its arch, the
    configuration's QEMU extras and timeout (BOOT_QEMU, BOOT_TIMEOUT) unless
    a timeout is given.  The patched boots (guest_spec) and the reference
    boots (cli.reference) both go through here."""
    return GuestSpec(name=name, arch=kconfig.config_arch(config), image=Path(image),
                     build_dir=Path(build_dir), src=Path(src), config=config, cmdline=cmdline,
                     slub_debug=slub_debug, qemu_extra=tuple(BOOT_QEMU.get(config, ())),
                     timeout=BOOT_TIMEOUT.get(config, DEFAULT_BOOT_TIMEOUT)
                     if timeout is None else timeout,
                     options=dict(options or {}))


def guest_spec(r, cmdline_extra: str = "", name: str | None = None, variant: str = ""):
    """The boot matrix's GuestSpec for the patched kernel of one verified
    configuration (r: a VerifyResult whose patched build is ok), in one of
    its variants (BOOT_VARIANTS: iommu strict and lazy)."""
    a = boot_args(r.config, cmdline_extra)
    return kernel_spec(r.config, r.patched.image, r.patched_out, r.patched_src,
                       name=name or boot_name(r.config, variant), cmdline=a["cmdline_extra"],
                       slub_debug=a["slub_debug"],
                       options=variant_options(r.config, variant))


def boot_matrix(vr, run_name: str = "matrix", *, jobs: int = BOOT_JOBS,
                cmdline_extra: str = ""):
    """Boot the patched kernel of every configuration verify built, `jobs` at
    a time (boot/matrix.py), in cache/boot/runs/<run_name>/<config>/; record
    each for the review.  Returns (MatrixResult or None, config ->
    BootResult, None for a kernel that did not build)."""
    out: dict = {}
    specs, built = [], {}
    for config, r in verified_builds(vr):
        for v in boot_variants(config):
            name = boot_name(config, v)
            out[name] = None
            if r.patched is None or not r.patched.ok:
                info("boot", f"{name}: the patched kernel did not build; not booted")
                continue
            specs.append(guest_spec(r, cmdline_extra, variant=v))
            built[name] = r
    if not specs:
        return None, out
    m = matrix.run(specs, paths.cache_dir("boot", "runs", run_name), jobs=jobs)
    for g in m.results:
        out[g.spec.name] = g.boot
        rec = getattr(built[g.spec.name], "series_record", None)
        if rec is not None and g.boot is not None:
            recorded.record_boot(rec[0], rec[1], g.spec.name, g.boot, g.out_dir)
    return m, out


def boot_all(vr, run_name: str = "matrix", jobs: int = BOOT_JOBS) -> dict:
    """boot_matrix() with its one-screen summary printed; config -> BootResult."""
    m, out = boot_matrix(vr, run_name, jobs=jobs)
    if m is not None:
        print(summary.render(m))
    return out


def _src(args, boot_configs=()) -> Source:
    """The run's kernel source and the busybox of each guest it boots, fetched
    before anything is built; no network afterwards (cli/prefetch.py)."""
    return prefetch.inputs(args.kernel, args.tree, args.deb_version, boot_configs)


def _configs(args, default=DEFAULT_CONFIGS) -> list:
    """--config a,b (those), +a,b (the default set and those) or the default."""
    v = getattr(args, "config", None)
    if v and v.startswith("+"):
        return list(dict.fromkeys(list(default) + comma_list(v[1:])))
    return comma_list(v or ",".join(default))


def _checks(args) -> dict:
    cov = getattr(args, "coverage_configs", None)
    cov = None if cov is None or cov.strip() == "none" else tuple(comma_list(cov))
    rt = getattr(args, "runtime_configs", None)
    rt = RUNTIME_BISECT if rt is None else tuple(c for c in comma_list(rt) if c != "none")
    return {"layout": not getattr(args, "no_layout", False),
            "checkpatch": not getattr(args, "no_checkpatch", False),
            "nullcheck": False if getattr(args, "no_nullcheck", False) else None,
            "coverage_configs": cov, "runtime_configs": rt}


def cmd_verify(args) -> int:
    ap = _applied(args, _checks(args)["runtime_configs"])
    src = ap.src
    bisect_configs = _bisect_configs(args)
    if bisect_configs:
        bisect_configs = applicable_configs(src, bisect_configs, "bisect")
    return 0 if verify_applied(ap, applicable_configs(src, _configs(args)), bisect_configs,
                               **_checks(args)).ok else 1


def cmd_boot(args) -> int:
    ap = _applied(args, _configs(args, BOOT_CONFIGS))
    # builds first, one after another (-j2 each: the CPU-bound part), then
    # the guests, two at a time
    vr = verify_applied(ap, applicable_configs(ap.src, _configs(args, BOOT_CONFIGS), "boot"),
                        bisect_configs=(), layout=False, checkpatch=False, tree_gates=False)
    results = boot_all(vr, jobs=args.jobs)
    if all(b is None for b in results.values()):
        raise SlabconvError("no patched kernel builds; nothing to boot")
    return 0 if all(b is not None and b.passed for b in results.values()) else 1


# The main job (make, make all): what a newcomer runs first.  It proves the
# series on one configuration end to end and says what it left to
# `make verify` and `make boot` (the whole matrix: hours on 2 cores).
MAIN_CONFIGS = ("slub",)


def main_job_lines(vr, boots: dict) -> list[str]:
    """What the main job proved, what it did not run, and the command for
    the rest."""
    proved, not_run = [], []
    for check, st in vr.gates.status().items():
        (proved if st == "ok" else not_run if st.startswith(("not run", "nothing")) else [])\
            .append(f"{check}" + ("" if st == "ok" else f" ({st})"))
    for c, b in boots.items():
        if b is not None and b.passed:
            proved.append(f"boot {c} ({b.counts})")
    built = {c for c, _ in verified_builds(vr)}
    rest = [c for c in DEFAULT_CONFIGS if c not in built]
    if rest:
        not_run.append("builds in " + ", ".join(rest))
    rest_boot = [c for c in BOOT_CONFIGS if c not in boots]
    if rest_boot:
        not_run.append("boots of " + ", ".join(rest_boot))
    return (["proved: " + "; ".join(proved),
             "not run here: " + ("; ".join(not_run) or "nothing"),
             "the rest: make verify (every configuration, every patch on its own, "
             "its object code and its kernel) and make boot (every guest)"])


MAIN_STEPS = ("regenerate the series", "apply it", "verify: checkpatch, messages, nullcheck, "
              "layout, builds and sparse, field users, residue", "boot with the in-guest tests")


def _last_stages(version: str) -> dict:
    try:
        return json.loads((paths.cache_dir("runs") / f"all-{version}.json").read_text())\
            .get("stages", {})
    except (OSError, ValueError):
        return {}


def cmd_all(args) -> int:
    t0 = time.monotonic()
    configs = _configs(args, MAIN_CONFIGS)
    src = _src(args, [*configs, *_checks(args)["runtime_configs"]])
    stages = Stages("make", list(MAIN_STEPS), _last_stages(src.version))
    # from an empty cache: no build of any configuration yet (make bench
    # holds the main job's cold and warm times against its goals)
    cold = not (paths.cache_root() / "build" / "objects.json").is_file()
    committed = paths.GENERATED / src.version
    if not args.output:        # the checkout stays as it is: the series goes to the cache
        args.output = str(paths.cache_root() / "out" / src.source_id / "patches")
    stages.start(MAIN_STEPS[0])
    src, regen = do_regen(args, src)
    if (committed / "SOURCE").is_file() and Path(regen.output) != committed:
        how, files = reproduce.compare(regen.output, committed)
        info("all", f"the rules reproduce {committed.relative_to(paths.REPO)}: {how}"
                    + (f" ({len(files)} files differ: {', '.join(files[:6])}"
                       f"{' ...' if len(files) > 6 else ''}; make range-diff NEW={regen.output} "
                       "shows how; make regen writes them)" if files else ""))
    stages.start(MAIN_STEPS[1])
    ap = apply_series(src, regen.output, written=regen.written)   # this run's own series
    bisect_configs = _bisect_configs(args)
    if bisect_configs:
        bisect_configs = applicable_configs(src, bisect_configs, "bisect")
    stages.start(MAIN_STEPS[2])
    vr = verify_applied(ap, applicable_configs(src, configs), bisect_configs,
                        **_checks(args))
    ok = vr.ok
    stages.start(MAIN_STEPS[3])
    boots = boot_all(vr)
    ok = ok and all(b is not None and b.passed for b in boots.values())
    for line in main_job_lines(vr, boots):
        info("all", line)
    report = {
        "kernel": src.version, "source": src.source_id, "ok": ok,
        "regen_seconds": round(regen.seconds, 2), "patches": len(ap.patches),
        "verify": {"ok": vr.ok, "problems": vr.problems,
                   "bisect": vr.bisect.brief() if vr.bisect is not None else None},
        "residue": None if getattr(vr, "residue", None) is None else {
            "ok": vr.residue.ok, "uses": len(vr.residue.results),
            "not_allowed": len(vr.residue.not_allowed)},
        "boot": {c: None if b is None else {"passed": b.passed, "seconds": round(b.seconds, 1),
                                            "counts": str(b.counts)}
                 for c, b in boots.items()},
        "seconds": round(time.monotonic() - t0, 1),
        "stages": stages.done(),
        "cold": cold,
    }
    out = paths.cache_dir("runs") / f"all-{src.version}.json"
    atomic.write_text(out, json.dumps(report, indent=2))
    if cold:
        atomic.write_text(paths.cache_dir("runs") / f"all-{src.version}-cold.json",
                          json.dumps(report, indent=2))
    info("all", f"{'PASS' if ok else 'FAIL'}: {len(ap.patches)} patches regenerated, "
                f"verified and booted in {report['seconds']}s (report: {out})")
    return 0 if ok else 1


def add_commands(sub, common, bench) -> None:
    """verify, boot, all and bench (`bench`: cli/bench.py's command,
    passed in by the CLI: report/ reads this module, not the other way)."""
    for name, func, help_ in (
            ("verify", cmd_verify, "apply the series, build baseline and patched, gate on new warnings"),
            ("boot", cmd_boot, "build and boot the patched kernel with the in-guest tests"),
            ("all", cmd_all, "the main job: regen, the checks, the slub kernel built and "
                             "booted; says what it proved and what is left"),
            ("bench", bench, "time regeneration, build and boot")):
        p = sub.add_parser(name, help=help_)
        common(p)
        p.add_argument("--config", default=None if name != "bench" else DEFAULT_CONFIG,
                       help="kernel config(s), comma-separated, the first the primary one "
                            f"(verify/configs; default: "
                            f"{','.join(BOOT_CONFIGS if name == 'boot' else MAIN_CONFIGS if name == 'all' else DEFAULT_CONFIGS)}"
                            f"{'' if name != 'bench' else '; bench: ' + DEFAULT_CONFIG}; "
                            "+a,b: the default and a, b)")
        p.add_argument("--output", "-o", default=None, help="the series directory")
        if name == "boot":
            p.add_argument("--jobs", "-j", type=int, default=BOOT_JOBS,
                           help="guests booted at a time (default %(default)s)")
        if name in ("verify", "all"):
            main = name == "all"              # the main job: the matrix is make verify's
            p.add_argument("--bisect-configs", default="none" if main else ",".join(DEFAULT_BISECT),
                           help="configs in which every patch must build on its own "
                                "(comma-separated; 'none' skips the per-patch check; "
                                "default: %(default)s; any of: "
                                f"{', '.join(BISECT_CHOICES)})")
            p.add_argument("--runtime-configs", default="none" if main else ",".join(RUNTIME_BISECT),
                           help="per-patch configurations in which every patch's kernel is "
                                "also booted with the in-guest tests, fault injection included "
                                "('none': no boots; default: %(default)s)")
            p.add_argument("--no-layout", action="store_true",
                           help="do not build struct slab's layout asserts (listed as not run)")
            p.add_argument("--coverage-configs",
                           default="none" if main else ",".join(COVERAGE_CONFIGS),
                           help="configs whose patched build (no baseline) is added so that "
                                "every changed line is compiled by some build "
                                "(verify/compiled.py; 'none' skips the changed-lines check; "
                                "default: %(default)s)")
            p.add_argument("--no-checkpatch", action="store_true",
                           help="do not run checkpatch on the patches (listed as not run)")
            p.add_argument("--no-nullcheck", action="store_true",
                           help="do not run cocci/rules/slab_null.cocci at every patch "
                                "(verify/nullcheck.py; listed as not run)")
        p.set_defaults(func=func)

    for name, func, module, help_ in (
            ("layout", cmd_layout, layout,
             "apply the series and build the objects that carry struct slab's static_asserts "
             "(x86_64 and i386, with and without MEMCG)"),
            ("checkpatch", cmd_checkpatch, checkpatch,
             "run the baseline tree's scripts/checkpatch.pl on every patch of the series; "
             "fail on an ERROR"),
            ("residue", cmd_residue, residue,
             "apply the series and list the uses of struct page left in the slab code, "
             "allowed or not (cocci/residue.toml)")):
        p = sub.add_parser(name, help=help_)
        common(p)
        p.add_argument("--output", "-o", default=None, help="the series directory")
        module.add_arguments(p)
        p.set_defaults(func=func)
