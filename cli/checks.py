"""verify's orchestration: every check of the applied series, the cheap
ones first, each filling its field of one verify.gates.Gates, whose
verdict, summary, JSON report (runs/verify-<version>.json) and records for
the review (report/results.py) are the one result; and the commands that
run one check alone (residue, layout, checkpatch)."""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from pathlib import Path

import verify
from base import atomic, paths
from base.cliutil import comma_list
from base.log import info, SlabconvError
from regen import field_users, manifest, upstream
from regen.source import series_dir
from regen.worktree import BASE_TAG
from report import results as recorded
from verify import (bisect, checkpatch, compiled, configtable, kconfig, layout, messages,
                    nullcheck, objdiff, readability, residue, variability_builds, whitespace)
from verify.bisect_tree import Repo
from verify.field_users import coverage
from verify.gates import Gates
from .apply import (applicable_configs, Applied, applied_series, asked_configs, bisect_configs,
                    bisect_why, check_options, source)
from .boots import BOOT_JOBS, patch_guest


def verify_applied(ap: Applied, config=None, bisect_configs=None, *,
                   layout: bool = True, checkpatch: bool = True, tree_gates: bool = True,
                   coverage_configs=None, runtime_configs=None,
                   nullcheck: bool | None = None, bisect_why: str = "not asked for",
                   variability: bool = True) -> Gates:
    """Every check of the applied series (verify/gates.py), the cheap ones
    first: checkpatch, the commit messages and the readability report on
    every patch; slab_null.cocci at every patch; struct slab's layout
    asserts (x86_64 and i386, with and without MEMCG); the final tree
    (baseline vs patched: build, new compiler and sparse warnings) in each
    configuration of `config` (a name or a sequence, the first the primary
    one; default: the table's verify set); every patch on its own in each of
    `bisect_configs` (verify.bisect; default: the per-patch set; (): not
    run, for the reason `bisect_why`: the command line's when it asked for
    none), and in each of those that is in `runtime_configs` (default: the
    runtime set) every patch's kernel booted with the in-guest tests
    (verify/runtime.py); the changed lines no build compiled
    (verify/compiled.py) after building the patched tree in each of
    `coverage_configs` too (None: not run; (): only the builds above); the
    field users and the residue gate.
    Returns the Gates, whose verdict() decides, whose summary is printed
    last and whose JSON report is runs/verify-<version>.json.  layout=False /
    checkpatch=False / tree_gates=False (the field users and the residue):
    not run, and said so (boot builds kernels through here).  nullcheck
    (default: as tree_gates): False: not run.  variability: the per-patch
    check's variability builds (verify/variability_builds.py); False: not
    run, and said so."""
    t0 = time.monotonic()
    config = configtable.names("verify") if config is None else config
    configs = [config] if isinstance(config, str) else list(config)
    if not configs:
        raise SlabconvError("verify: no kernel configuration given", exit_code=2)
    bisect_configs = configtable.names("per-patch") if bisect_configs is None else bisect_configs
    runtime_configs = configtable.names("runtime") if runtime_configs is None else runtime_configs
    g = Gates(kernel=ap.src.version, source=ap.src.source_id, patches=len(ap.patches))
    if checkpatch:                # the patches as written: checkpatch and their messages
        g.checkpatch = checkpatch_series(ap)
        print(g.checkpatch.summary(per_finding=False))
        g.messages = messages_series(ap)
        print(g.messages.summary())
        g.whitespace = whitespace_series(ap)
        print(g.whitespace.summary())
        g.readability = readability_series(ap)
        print(g.readability.summary())
    else:
        for name in ("checkpatch", "messages", "whitespace", "readability"):
            g.not_run[name] = "not asked for"
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
    for c in configs:
        info("verify", f"configuration {c} ({configs.index(c) + 1} of {len(configs)})")
        g.builds.append(verify.check_build(ap.src.tree, ap.tree, out_root, config=c,
                                           sparse_files=sparse_files, baseline_id=ident))
    for x in g.builds:
        if (x.baseline is not None and x.baseline.ok and x.patched is not None
                and x.patched.ok and x.baseline_out and x.patched_out):
            x.code = series_code(x, ap.src.tree)
    for x in g.builds[1:]:
        print(x.summary)
    if bisect_configs:
        g.bisect = bisect.check_series(ap.tree, out_root, list(bisect_configs), base=BASE_TAG,
                                       head="HEAD", baseline_src=ap.src.tree, baseline_id=ident,
                                       report_dir=g.primary.report.parent,
                                       runtime_configs=[c for c in runtime_configs
                                                        if c in bisect_configs],
                                       guest=patch_guest, boot_jobs=BOOT_JOBS,
                                       code=code_expectations(), variability=variability)
        if not variability:
            g.not_run["variability"] = "--no-variability"
        print(g.bisect.summary)
    else:
        g.not_run["per-patch"] = bisect_why
    coverage_builds = {}
    if coverage_configs is not None:
        g.compiled, g.coverage_failed = compiled_lines_check(ap, g.builds, coverage_configs,
                                                             out_root, ident)
        coverage_builds = g.compiled.build_dirs     # the field users' coverage takes them too
        for c, msg in g.coverage_failed.items():   # a coverage build that fails fails the check
            g.compiled.errors.append(f"[{c}] coverage build: {msg}")
        print(g.compiled.summary())
    else:
        g.not_run["compiled-lines"] = "not asked for"
    print(g.primary.summary)
    if tree_gates:
        g.field_users = field_users_check(ap, g.builds, coverage_builds)
        if g.field_users is None and not field_users.page_keeps_slab_members(ap.src.tree):
            g.field_users_none = "struct page had no slab members before the series"
        try:
            g.residue = residue_summary(ap)
            g.residue_gated = residue_gate(g.residue, upstream_residue(ap))
        except SlabconvError as e:         # a check that did not run fails the verdict
            g.residue_error = str(e).splitlines()[0] if str(e) else repr(e)
        for c in g.residue_gated[:20]:
            f = c.finding
            print(f"  NOT allowed: {f.file}:{f.line} {f.function} {f.kind} {f.text}")
    else:
        g.not_run["field-users"] = g.not_run["residue"] = "not asked for"
    if len(g.builds) > 1:
        print("verify: " + "; ".join(f"{x.config} {'ok' if x.ok else 'FAILED'}"
                                     for x in g.builds))
    g.seconds = time.monotonic() - t0
    g.write(paths.cache_dir("runs") / f"verify-{ap.src.version}.json")
    record_verify(ap, g)
    print(g.summary())
    return g


def record_verify(ap: Applied, g: Gates) -> None:
    """Record the results (g.records(): the parts of the JSON report) for
    `slabconv review` and `slabconv mail`, tied to the series applied
    (report/results.py); boots.boot_matrix() records its runs with the
    same stamp."""
    g.stamp = recorded.series_stamp(ap.patches, ap.src.source_id, ap.series_dir)
    for name, data in g.records().items():
        recorded.record(ap.src.version, name, g.stamp, data)


def cmd_verify(args) -> int:
    opts = check_options(args)
    ap = applied_series(args, opts["runtime_configs"])
    bisect_set = bisect_configs(args)
    if bisect_set:
        bisect_set = applicable_configs(ap.src, bisect_set, "bisect")
    g = verify_applied(ap, applicable_configs(ap.src, asked_configs(args, "verify")), bisect_set,
                       bisect_why=bisect_why(args), **opts)
    return 0 if g.ok else 1


def cmd_variability(args) -> int:
    """The variability analysis and its builds alone (verify/variability_builds.py),
    on the applied series, without the per-patch check's own builds (the
    unflipped side is built here too)."""
    configs = list(comma_list(args.configs)) if args.configs else list(configtable.names("per-patch"))
    ap = applied_series(args, configs)
    configs = applicable_configs(ap.src, configs, "variability")
    repo = Repo(ap.tree)
    base = repo.rev(BASE_TAG)
    commits = repo.series(base, "HEAD")
    only = _patch_numbers(args.patches, len(commits)) if args.patches else None
    deltas = {sha: repo.delta(base, sha) for sha, _ in commits}
    ident = f"{ap.src.source_id}@{ap.baseline_id[:12]}"
    r = variability_builds.check(repo, commits, deltas, base,
                                 paths.cache_dir("build", ap.src.version), configs, ap.src.tree,
                                 ident, jobs=args.jobs, only=only, build=not args.analyse_only,
                                 symbols=comma_list(args.symbols) if args.symbols else None)
    print(r.summary())
    out = paths.cache_dir("runs") / f"variability-{ap.src.version}.json"
    out.write_text(json.dumps(r.to_dict(), indent=1) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(r.to_dict(), indent=1) + "\n")
    print(f"report {out}")
    return 0 if r.ok else 1


def _patch_numbers(spec: str, n: int) -> set:
    """'14', '1-20,33': patch numbers (1-based); exit 2 on anything else."""
    out = set()
    for part in comma_list(spec):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise SlabconvError(f"--patches: not a patch number or range: {part!r}", exit_code=2)
        if not 1 <= lo <= hi <= n:
            raise SlabconvError(f"--patches: {part} is not within 1-{n}", exit_code=2)
        out.update(range(lo, hi + 1))
    return out


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


def whitespace_series(ap: Applied):
    """The whitespace-only -/+ pairs of the applied series' patches, and
    which a moved parenthesis justifies (verify/whitespace.py)."""
    return whitespace.check(ap.patches)


def messages_series(ap: Applied):
    """Every function a commit message names is touched by its patch, and
    its absence and signature claims hold in the tree at that patch
    (verify/messages.py)."""
    return messages.check(ap.patches, messages.SeriesTree(ap.tree, BASE_TAG, "HEAD"))


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


def field_users_check(ap: Applied, results, extra_builds=None) -> dict | None:
    """The files that used a slab member of struct page before the series
    (found by slab_field_users.cocci, cached per source) and the configs
    whose patched build compiled each; and the uses left after the series,
    which must be none.  Only when the series removes the members (its
    last patch changes struct page)."""
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
    return hashlib.sha256(field_users.RULE.read_bytes()).hexdigest()[:12]


def residue_gate(rr, baseline=None) -> list:
    """NOT allowed uses in the files residue.toml says are converted; with
    `baseline` (the residue of a kernel converted upstream), only those the
    baseline does not have (same file, function, kind and text, counted)."""
    if rr is None:
        return []
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


def cmd_residue(args) -> int:
    """The series applied with git am; the residue report (verify/residue.py)."""
    ap = applied_series(args)
    rr = residue.check(ap.tree, args.files, all_files=args.all, allowlist=args.allowlist)
    recorded.record(ap.src.version, "residue",
                    recorded.series_stamp(ap.patches, ap.src.source_id, ap.series_dir),
                    rr.to_dict())
    return residue.report(rr, args)


def cmd_layout(args) -> int:
    """The series applied with git am; struct slab's asserts built in the
    layout configurations (verify/layout.py)."""
    ap = applied_series(args)
    return layout.run_and_report(ap.tree, paths.cache_dir("build", ap.src.version), args,
                                 base=ap.src.tree, changed=ap.touched)


def cmd_checkpatch(args) -> int:
    """The kernel's own scripts/checkpatch.pl, from the baseline tree, on
    every patch of the series as written (verify/checkpatch.py; nothing
    applied)."""
    src = source(args)
    return checkpatch.run_and_report(src.tree, series_dir(src, args.output), args,
                                     default_json=paths.cache_dir("runs") /
                                     f"checkpatch-{src.version}.json")


def series_code(x, src) -> dict:
    """The whole series' effect on the compiled code in one configuration:
    scripts/bloat-o-meter on vmlinux, and every kernel object of the
    patched build compared function by function with the baseline's
    (verify/objdiff/), with bloat-o-meter for each object whose code
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


