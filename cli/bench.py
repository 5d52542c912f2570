"""make bench: regeneration time (whole series and per entry), build time, boot time."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import verify
from base import atomic, paths
from base.log import duration, info
from regen import series, spatch, template, worktree
from regen.source import series_dir
from regen.worktree import BASE_TAG
from report import results
from verify import configtable, tree as vtree, variability_builds
from verify.bisect import ConfigResult
from verify.bisect_tree import Repo
from .apply import apply_series, source
from .boots import boot_matrix
from .checks import verify_applied


def _regen_once(src, spatch_cache: bool = True):
    import os
    old = os.environ.get("SLABCONV_SPATCH_CACHE")
    os.environ["SLABCONV_SPATCH_CACHE"] = "1" if spatch_cache else "0"
    out = Path(tempfile.mkdtemp(prefix="bench-regen-"))
    try:
        return series.regenerate(src.tree, src.source_id, version=src.version,
                                 output=out / "series", identity=worktree.user_identity())
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if old is None:
            os.environ.pop("SLABCONV_SPATCH_CACHE", None)
        else:
            os.environ["SLABCONV_SPATCH_CACHE"] = old


GUEST_BUDGET = 30.0     # seconds of boot + in-guest tests a guest should take under TCG


# the main job's goals (make, 2 cores): from an empty cache, package
# installation included; and again with nothing changed
MAIN_JOB_GOALS = {"cold": 25 * 60, "warm": 2 * 60}


def main_job_figures(version: str) -> dict:
    """The last main job's time from an empty cache (runs/all-<v>-cold.json)
    and the last one on a warm cache (runs/all-<v>.json when it was not
    cold), each with its goal."""
    out = {}
    for kind, name in (("cold", f"all-{version}-cold.json"), ("warm", f"all-{version}.json")):
        try:
            rec = json.loads((paths.cache_dir("runs") / name).read_text())
        except (OSError, ValueError):
            rec = None
        if rec is not None and kind == "warm" and rec.get("cold"):
            rec = None
        out[kind] = None if rec is None else {
            "seconds": rec.get("seconds"), "ok": rec.get("ok"), "goal": MAIN_JOB_GOALS[kind],
            "stages": rec.get("stages", {})}
    return out


def main_job_lines(fig: dict) -> str:
    L = []
    for kind, what in (("cold", "from an empty cache"), ("warm", "warm, nothing changed")):
        r = fig.get(kind)
        if r is None or r.get("seconds") is None:
            L.append(f"  main job ({what}): no record in this cache (run make"
                     + (" with an empty SLABCONV_CACHE)" if kind == "cold" else ")"))
            continue
        s, goal = r["seconds"], r["goal"]
        verdict = "within" if s <= goal else "OVER"
        L.append(f"  main job ({what}): {duration(s)}, {verdict} the goal of {duration(goal)}"
                 + ("" if r.get("ok") else " (that run FAILED)"))
    return "\n".join(L)


def boot_figures(m) -> dict:
    """Per guest of a boot matrix: boot + test seconds, verdict, counts."""
    return {r.spec.name: {"arch": r.spec.arch, "seconds": round(r.seconds, 1),
                          "verdict": r.verdict,
                          "accel": getattr(r.boot, "accel", None),
                          "counts": r.boot.counts.as_dict() if r.boot is not None else None}
            for r in m.results}


def boot_lines(figures: dict) -> str:
    out = [f"  boot + in-guest tests per guest ({figures['boot_jobs']} at a time, "
           f"matrix {figures['boot_matrix_seconds']}s wall time):"]
    for name, g in figures["boot"].items():
        c = g["counts"] or {}
        over = "" if g["seconds"] < GUEST_BUDGET else f"  (over {GUEST_BUDGET:.0f}s)"
        out.append(f"    {name:12} {g['arch']:7} {g['seconds']:6.1f}s  {g['verdict']:5} "
                   f"{c.get('passed', 0)} passed, {c.get('failed', 0)} failed, "
                   f"{c.get('skipped', 0)} skipped ({g['accel'] or '-'}){over}")
    return "\n".join(out)


RUNTIME_BUDGET = 600.0   # seconds the runtime bisect may add to the per-patch builds


def runtime_figures(version: str) -> dict:
    """The runtime bisect's cost in the last per-patch check recorded for
    this kernel (a full one takes hours: bench reports it, it does not run
    it): per configuration the kernels booted, the boots' wall time (two
    guests at a time) and the time spent linking each patch's kernel and
    building its guest modules."""
    rec = results.latest(version, "bisect")
    if rec is None:
        return {}
    out = {}
    for c in map(ConfigResult.from_dict, (rec.get("data") or {}).get("configs") or []):
        if not c.runtime:
            continue
        own = c.own_kernels
        out[c.config] = {
            "kernels": len(own), "patches": len(c.patches), "passed": c.kernels_passed,
            "boot_wall_seconds": c.boot_seconds,
            "boot_guest_seconds": round(sum(p.boot.get("seconds", 0) for p in own), 1),
            "kernel_seconds": round(sum(p.kernel_seconds for p in c.patches), 1)}
    return out


def runtime_lines(figures: dict) -> str:
    if not figures:
        return "  runtime bisect: no per-patch check with boots recorded for this series (make verify)"
    out = ["  runtime bisect (the last per-patch check recorded; budget "
           f"{duration(RUNTIME_BUDGET)} per configuration on top of its builds):"]
    for c, f in figures.items():
        added = f["boot_wall_seconds"] + f["kernel_seconds"]
        out.append(f"    {c}: {f['passed']}/{f['kernels']} kernels passed ({f['patches']} patches); "
                   f"boots {f['boot_wall_seconds']:.0f}s wall ({f['boot_guest_seconds']:.0f}s of "
                   f"guest time), linking and guest modules {f['kernel_seconds']:.0f}s: "
                   f"{duration(added)} added, "
                   f"{'within' if added <= RUNTIME_BUDGET else 'OVER'} budget")
    return "\n".join(out)


def variability_figures(ap, config: str) -> dict:
    """What the variability builds (verify/variability_builds.py) add to the
    per-patch check in `config`, over the whole series: cold (their build
    directories made afresh: snapshot, O= copy, flipped .config, every object
    compiled; ccache as the cache has it, its hits counted) and warm (the
    same series again: every result kept by commit).  The unflipped side is
    the per-patch check's own build, so only the flipped directories count;
    the load average is kept with the figures (a shared machine)."""
    repo = Repo(ap.tree)
    base = repo.rev(BASE_TAG)
    commits = repo.series(base, "HEAD")
    deltas = {sha: repo.delta(base, sha) for sha, _ in commits}
    ident = f"{ap.src.source_id}@{ap.baseline_id[:12]}"
    out_root = paths.cache_dir("build", ap.src.version)
    key = verify.build_key(config, ident, verify.kbuild.DEFAULT_TARGETS,
                           verify.kconfig.tree_version(ap.src.tree))
    for d in out_root.glob(f"var-{config}-{key}-*"):       # cold: new build directories
        vtree.remove(d)
    out = {"config": config, "load_before": [round(x, 2) for x in os.getloadavg()]}
    for kind in ("cold", "warm"):
        info("bench", f"variability builds in {config}, {kind}")
        r = variability_builds.check(repo, commits, deltas, base, out_root, [config],
                                     ap.src.tree, ident, jobs=2, on_side={})
        flips = [f for f in r.flips if f.symbols and f.held and not f.covered_by]
        out[kind] = {"seconds": round(r.seconds, 1),
                     "analysis_seconds": round(r.analysis_seconds, 1),
                     "flip_build_seconds": round(sum(f.seconds for f in flips), 1),
                     "ok": r.ok}
        out.update(symbols=len(r.symbols), flipped_configs=len(flips),
                   object_builds=len(r.builds),
                   not_flipped=len({(x["config"], x["symbol"]) for p in r.patches
                                    for x in p.not_flipped}),
                   failed=[p.index for p in r.patches if p.failed])
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def variability_lines(v: dict) -> str:
    if not v:
        return "  variability builds: not measured"
    return (f"  variability builds ({v['config']}, added to the per-patch check): "
            f"{v['symbols']} symbols, {v['flipped_configs']} flipped configurations, "
            f"{v['object_builds']} object builds ({len(v['failed'])} patches failing), "
            f"{v['not_flipped']} flips Kconfig refused; cold {duration(v['cold']['seconds'])} "
            f"(analysis {v['cold']['analysis_seconds']}s, flipped builds "
            f"{duration(v['cold']['flip_build_seconds'])}), warm {duration(v['warm']['seconds'])}; "
            f"load {v['load_before'][0]} -> {v['load_after'][0]} on {os.cpu_count()} cores")


def failures(figures: dict, builds) -> list[str]:
    """The steps of a bench run that failed: a kernel that did not build, a
    guest that did not pass."""
    out = [f"{b.config}: the patched kernel does not build" for b in builds
           if b.patched is None or not b.patched.ok]
    if not figures.get("full_build_ok", True):
        out.append("the full build (fresh O=, no ccache) failed")
    out += [f"{name}: {g['verdict']}" for name, g in figures.get("boot", {}).items()
            if g["verdict"] != "pass"]
    v = figures.get("variability") or {}
    if v.get("failed"):
        out.append(f"variability builds: patches {', '.join(map(str, v['failed']))} do not "
                   f"build with a symbol flipped in {v['config']}")
    return out


def cmd_bench(args) -> int:
    """Exit 1 when a build or a guest failed (the figures are written all the same)."""
    boot_configs = configtable.names("boot")
    src = source(args, boot_configs)
    figures: dict = {"kernel": src.version, "source": src.source_id}

    warm = _regen_once(src)                   # warm-up: the baseline work tree exists after it
    # the machine's speed, to compare figures across machines and days: one
    # spatch run that parses mm/slub.c (of the baseline) and matches a small rule
    base = warm.worktree.path
    warm.worktree.git("checkout", "-q", "-f", BASE_TAG, "--", "mm/slub.c")
    t0 = time.monotonic()
    for _ in range(3):
        template.find_anchor(paths.COCCI, base, "mm/slub.c", "kmem_cache_free")
    figures["calibration_seconds"] = round((time.monotonic() - t0) / 3, 3)
    warm.worktree.git("checkout", "-q", "-f", "HEAD", "--", "mm/slub.c")
    # every spatch run for real (as on a new kernel or a changed tree) ...
    cold = [_regen_once(src, spatch_cache=False) for _ in range(2)]
    best = min(cold, key=lambda r: r.seconds)
    figures["regen_seconds"] = [round(r.seconds, 2) for r in cold]
    figures["regen_entries"] = {e.subject: round(e.seconds, 2) for e in best.entries}
    figures["spatch_peak_rss_mb"] = round(spatch.PEAK["rss_kb"] / 1024, 1)
    figures["spatch_peak_rule"] = spatch.PEAK["rule"]
    # ... and again with the spatch results cached (rules and tree unchanged)
    figures["regen_cached_seconds"] = round(_regen_once(src).seconds, 2)

    ap = apply_series(src, series_dir(src, args.output))
    # the primary configuration first (its build figures), then the rest of
    # the boot matrix (built one after another, then booted two at a time)
    configs = [args.config] + [c for c in boot_configs if c != args.config]
    g = verify_applied(ap, configs, bisect_configs=(), layout=False, checkpatch=False,
                       tree_gates=False)     # the builds only: verify's checks are verify's
    vr = g.primary
    figures["verify_build_seconds"] = {
        "baseline": round(vr.baseline.seconds, 1) if vr.baseline else None,
        "baseline_reused": vr.baseline_reused,
        "patched_incremental": round(vr.patched.seconds, 1) if vr.patched else None}

    info("bench", "full build of the patched tree in a fresh O= directory, without ccache")
    with tempfile.TemporaryDirectory(prefix="bench-build-", dir=paths.cache_dir("build")) as o:
        verify.kconfig.configure_named(ap.tree, Path(o), args.config)
        t0 = time.monotonic()
        full = verify.kbuild.build(ap.tree, Path(o), use_ccache=False, label="bench")
        figures["full_build_seconds"] = round(time.monotonic() - t0, 1)
        figures["full_build_ok"] = full.ok

    figures["variability"] = variability_figures(ap, args.config)

    m, boots = boot_matrix(g, "bench")
    if m is not None:
        figures["boot"] = boot_figures(m)
        figures["boot_matrix_seconds"] = round(m.seconds, 1)
        figures["boot_jobs"] = m.jobs
        figures["boot_passed"] = m.passed

    print("\nslabconv bench (Linux %s, %s)" % (src.version, src.source_id))
    print(f"  regeneration, whole series: best {min(figures['regen_seconds']):.2f}s "
          f"of {figures['regen_seconds']} (every spatch run made; baseline work tree cached)")
    cal = figures["calibration_seconds"]
    print(f"  calibration: one spatch run over mm/slub.c takes {cal}s on this machine now"
          + (f" (the cold figure is about {min(figures['regen_seconds']) / cal:.0f} of those)"
             if cal > 0 else ""))
    print(f"  regeneration with spatch results cached: {figures['regen_cached_seconds']:.2f}s")
    print(f"  spatch peak memory: {figures['spatch_peak_rss_mb']} MB (max RSS of one run, "
          f"{figures['spatch_peak_rule']})")
    for subj, s in figures["regen_entries"].items():
        print(f"    {s:6.2f}s  {subj}")
    vb = figures["verify_build_seconds"]
    print(f"  build (verify): baseline {vb['baseline']}s{' (reused)' if vb['baseline_reused'] else ''}, "
          f"patched incremental {vb['patched_incremental']}s")
    print(f"  build (full, no ccache, -j2): {figures['full_build_seconds']}s "
          f"({'ok' if figures['full_build_ok'] else 'FAILED'})")
    if "boot" in figures:
        print(boot_lines(figures))
    print(variability_lines(figures["variability"]))
    figures["runtime_bisect"] = runtime_figures(src.version)
    print(runtime_lines(figures["runtime_bisect"]))
    figures["main_job"] = main_job_figures(src.version)
    print(main_job_lines(figures["main_job"]))
    figures["failed"] = failures(figures, g.builds)
    out = paths.cache_dir("runs") / f"bench-{src.version}.json"
    atomic.write_text(out, json.dumps(figures, indent=2))
    print(f"  figures: {out}")
    for f in figures["failed"]:
        print(f"  FAILED: {f}")
    return 1 if figures["failed"] else 0
