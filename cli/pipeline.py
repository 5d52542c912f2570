"""The commands that chain the stages: verify, boot, the main job (all),
bench (cli/bench.py's command, passed in), and the single checks (layout,
checkpatch, residue).

The series under test is always the written one (generated-patches/<v>/ for
a packaged kernel): it is applied with `git am` to a fresh baseline work
tree (cli/apply.py), so verify and boot prove the patches as a user
receives them.  verify's orchestration is cli/checks.py, the boots'
cli/boots.py; the configurations each takes are verify/configs.toml's.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from base import atomic, paths
from base.cliutil import add_command
from base.log import info, SlabconvError, Stages
from report import patches as P, reproduce, results as R
from verify import checkpatch, configtable, layout, residue
from .apply import (applicable_configs, applied_series, apply_series, asked_configs, bisect_configs,
                    bisect_why, check_options, do_regen, source)
from .boots import boot_all, BOOT_JOBS
from .checks import (cmd_checkpatch, cmd_layout, cmd_residue, cmd_variability, cmd_verify,
    verify_applied)


def cmd_boot(args) -> int:
    ap = applied_series(args, asked_configs(args, "boot"))
    # builds first, one after another (-j2 each: the CPU-bound part), then
    # the guests, two at a time
    g = verify_applied(ap, applicable_configs(ap.src, asked_configs(args, "boot"), "boot"),
                       bisect_configs=(), layout=False, checkpatch=False, tree_gates=False)
    results = boot_all(g, jobs=args.jobs)
    if all(b is None for b in results.values()):
        raise SlabconvError("no patched kernel builds; nothing to boot")
    return 0 if all(b is not None and b.passed for b in results.values()) else 1


# The main job (make, make all): what a newcomer runs first.  It proves the
# series on the main configurations (verify/configs.toml: slub) end to end
# and says what it left to `make verify` and `make boot` (the whole matrix:
# hours on 2 cores).
def main_job_lines(g, boots: dict) -> list[str]:
    """What the main job proved (g: verify.gates.Gates), what it did not
    run, and the command for the rest."""
    proved, not_run = [], []
    for check, st in g.status().items():
        (proved if st == "ok" else not_run if st.startswith(("not run", "nothing")) else [])\
            .append(f"{check}" + ("" if st == "ok" else f" ({st})"))
    for c, b in boots.items():
        if b is not None and b.passed:
            proved.append(f"boot {c} ({b.counts})")
    built = {b.config for b in g.builds}
    rest = [c for c in configtable.names("verify") if c not in built]
    if rest:
        not_run.append("builds in " + ", ".join(rest))
    rest_boot = [c for c in configtable.names("boot") if c not in boots]
    if rest_boot:
        not_run.append("boots of " + ", ".join(rest_boot))
    return (["proved: " + "; ".join(proved),
             "not run here: " + ("; ".join(not_run) or "nothing"),
             "the rest: make verify (every configuration, every patch on its own, "
             "its object code and its kernel) and make boot (every guest)"])


def next_lines(version: str, produced: Path, committed: Path) -> list[str]:
    """The main job's last lines: the review page and the mail copy of the
    series it proved.  When the committed series has the same patches (the
    same series id, report/results.py), `make review` and `make mail` with
    no options show this run's results; else they are told where it is."""
    same = committed.is_dir() and R.series_id(P.numbered_patches(produced)) \
        == R.series_id(P.numbered_patches(committed))
    if same:
        where = committed.relative_to(paths.REPO) if committed.is_relative_to(paths.REPO) \
            else committed
        return [f"next: make review (the review page: {where} with these results) and "
                f"make mail (its mail-ready copy, the results in its Testing section)"]
    args = ("" if version == paths.DEFAULT_KERNEL else f" KERNEL={version}") + \
        f" SERIES={produced}"
    return [f"next: make review{args} (the review page of this run's series, with its "
            f"results) and make mail{args} (its mail-ready copy)"]


MAIN_STEPS = ("regenerate the series", "apply it", "verify: checkpatch, messages, whitespace, "
              "nullcheck, layout, builds and sparse, field users, residue",
              "boot with the in-guest tests")


def _last_stages(version: str) -> dict:
    try:
        return json.loads((paths.cache_dir("runs") / f"all-{version}.json").read_text())\
            .get("stages", {})
    except (OSError, ValueError):
        return {}


def cmd_all(args) -> int:
    t0 = time.monotonic()
    configs = asked_configs(args, "main")
    opts = check_options(args)
    src = source(args, [*configs, *opts["runtime_configs"]])
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
    bisect_set = bisect_configs(args)
    if bisect_set:
        bisect_set = applicable_configs(src, bisect_set, "bisect")
    stages.start(MAIN_STEPS[2])
    g = verify_applied(ap, applicable_configs(src, configs), bisect_set,
                       bisect_why=bisect_why(args), **opts)
    stages.start(MAIN_STEPS[3])
    boots = boot_all(g)
    ok = g.ok and all(b is not None and b.passed for b in boots.values())
    for line in main_job_lines(g, boots) + next_lines(src.version, Path(regen.output),
                                                       committed):
        info("all", line)
    report = {
        "kernel": src.version, "source": src.source_id, "ok": ok,
        "regen_seconds": round(regen.seconds, 2), "patches": len(ap.patches),
        "verify": {k: v for k, v in g.to_dict().items() if k in ("ok", "status", "problems")},
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


def _config_help(name: str) -> str:
    check = {"boot": "boot", "all": "main", "bench": "main"}.get(name, "verify")
    return (f"kernel config(s), comma-separated, the first the primary one (verify/configs.toml; "
            f"default: {','.join(configtable.names(check))}"
            f"{'; bench: the first only' if name == 'bench' else ''}; +a,b: the default and a, b)")


COMMANDS = {   # name -> (function, one-line help, description, example)
    "verify": (cmd_verify, "apply the series, build baseline and patched, gate on new warnings",
               "Apply the series with git am to a fresh baseline tree and run every check:\n"
               "checkpatch and the commit messages, the NULL check, struct slab's layout,\n"
               "each configuration's baseline and patched builds (new compiler and sparse\n"
               "warnings, object code), every patch on its own (and its kernel booted),\n"
               "the changed lines no build compiled, the field users and the residue.\n"
               "One summary; the JSON report is $SLABCONV_CACHE/runs/verify-<version>.json.",
               "slabconv verify --kernel 5.10 --config +kasan --bisect-configs none"),
    "boot": (cmd_boot, "build and boot the patched kernel with the in-guest tests",
             "Build the patched kernel of each configuration of the boot matrix and boot\n"
             "them under QEMU with the in-guest tests, two at a time (KTAP, JUnit XML and\n"
             "a one-screen summary in $SLABCONV_CACHE/boot/runs/matrix/).",
             "slabconv boot --config +kasan --jobs 1"),
    "all": (None, "the main job: regen, the checks, the slub kernel built and booted; "
                  "says what it proved and what is left",
            "The main job (make): regenerate the series into the cache, apply it, run\n"
            "verify's checks on the main configuration and boot its kernel; the last\n"
            "lines say what was proved, what was not run and the commands for the rest.",
            "slabconv all --kernel 5.10"),
    "bench": (None, "time regeneration, build and boot",
              "Time the regeneration (whole series and per entry), the builds and the\n"
              "boots; the figures go to $SLABCONV_CACHE/runs/bench-<version>.json.\n"
              "Exits 1 when a build or a guest fails.",
              "slabconv bench --config slub"),
    "layout": (cmd_layout, "apply the series and build the objects that carry struct slab's "
                           "static_asserts (x86_64 and i386, with and without MEMCG)",
               "Apply the series and build the objects that carry struct slab's\n"
               "static_asserts in each layout configuration; a failed assert is named\n"
               "with gcc's message.",
               "slabconv layout --configs layout-i386,layout-i386-nomemcg"),
    "checkpatch": (cmd_checkpatch, "run the baseline tree's scripts/checkpatch.pl on every "
                                   "patch of the series; fail on an ERROR",
                   "Run the baseline tree's scripts/checkpatch.pl on every patch of the series\n"
                   "as written; findings the baseline has already are marked inherited.",
                   "slabconv checkpatch --kernel 5.10 --strict"),
    "variability": (cmd_variability, "the variability analysis alone: per patch, the Kconfig "
                                     "symbols that change what its changed lines compile to, "
                                     "each flipped and built",
                    "Apply the series and, per patch, find the CONFIG_ symbols that change what\n"
                    "its changed lines compile to (the #ifs around them, the macros, functions\n"
                    "and types they use), flip each one in the first per-patch configuration\n"
                    "that compiles the file (scripts/config, olddefconfig, the flip checked)\n"
                    "and build the objects holding the lines, the symbol on and off.  The\n"
                    "report is $SLABCONV_CACHE/runs/variability-<version>.json; exit 1 when a\n"
                    "flipped build fails.  `make verify` runs the same as part of the\n"
                    "per-patch check.",
                    "slabconv variability --patches 14 --configs slub"),
    "residue": (cmd_residue, "apply the series and list the uses of struct page left in the "
                             "slab code, allowed or not (cocci/residue.toml)",
                "Apply the series and list the uses of struct page left in the slab code,\n"
                "each allowed (with the reason cocci/residue.toml gives) or not.",
                "slabconv residue --all"),
}


def add_commands(sub, common, bench) -> None:
    """verify, boot, all and bench (`bench`: cli/bench.py's command, passed
    in by the CLI: bench reads this module, not the other way), and the
    single checks: layout, checkpatch, residue."""
    funcs = {"all": cmd_all, "bench": bench}
    for name, (func, help_, description, example) in COMMANDS.items():
        p = add_command(sub, name, help_, description, example)
        common(p)
        p.add_argument("--output", "-o", default=None, help="the series directory")
        p.set_defaults(func=func or funcs[name])
        if name == "variability":
            p.add_argument("--configs", default=None,
                           help="base configurations, in order (default: the per-patch set, "
                                f"{','.join(configtable.names('per-patch'))})")
            p.add_argument("--patches", default=None,
                           help="patch numbers to analyse and build: 14 or 1-20,33 "
                                "(default: every patch)")
            p.add_argument("--symbols", default=None,
                           help="flip and build only these symbols (comma-separated, without "
                                "CONFIG_); the others found are listed as not flipped")
            p.add_argument("--analyse-only", action="store_true",
                           help="report the symbols and the flips; build nothing")
            p.add_argument("--jobs", "-j", type=int, default=2, help="make -j (default 2)")
            p.add_argument("--json", default=None, help="also write the JSON report here")
            continue
        if name in ("layout", "checkpatch", "residue"):
            {"layout": layout, "checkpatch": checkpatch, "residue": residue}[name].add_arguments(p)
            continue
        p.add_argument("--config", default=None if name != "bench" else configtable.primary("main"),
                       help=_config_help(name))
        if name == "boot":
            p.add_argument("--jobs", "-j", type=int, default=BOOT_JOBS,
                           help="guests booted at a time (default %(default)s)")
        if name in ("verify", "all"):
            _verify_options(p, main=name == "all")   # the main job: the matrix is make verify's


def _verify_options(p, main: bool) -> None:
    p.add_argument("--bisect-configs",
                   default="none" if main else ",".join(configtable.names("per-patch")),
                   help="configs in which every patch must build on its own (comma-separated; "
                        "'none' skips the per-patch check; default: %(default)s; any of: "
                        f"{', '.join(configtable.choices('per-patch'))})")
    p.add_argument("--runtime-configs",
                   default="none" if main else ",".join(configtable.names("runtime")),
                   help="per-patch configurations in which every patch's kernel is also booted "
                        "with the in-guest tests, fault injection included ('none': no boots; "
                        "default: %(default)s)")
    p.add_argument("--no-layout", action="store_true",
                   help="do not build struct slab's layout asserts (listed as not run)")
    p.add_argument("--coverage-configs",
                   default="none" if main else ",".join(configtable.names("coverage")),
                   help="configs whose patched build (no baseline) is added so that every "
                        "changed line is compiled by some build (verify/compiled.py; 'none' "
                        "skips the changed-lines check; default: %(default)s)")
    p.add_argument("--no-checkpatch", action="store_true",
                   help="do not run checkpatch on the patches (listed as not run)")
    p.add_argument("--no-variability", action="store_true",
                   help="no variability builds in the per-patch check (verify/"
                        "variability_builds.py; listed as not run)")
    p.add_argument("--no-nullcheck", action="store_true",
                   help="do not run cocci/rules/slab_null.cocci at every patch "
                        "(verify/nullcheck.py; listed as not run)")
