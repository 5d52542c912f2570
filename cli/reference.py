"""Reference runs: the in-guest tests on an UNPATCHED kernel.

The guest module and init (boot/guest/) check slab behaviour, not the
series' text: they must pass on the kernel the series starts from (5.10)
and on kernels that have upstream's own struct slab conversion (6.1, 6.12).
A reference run builds the packaged (or given) tree as it is, in each
configuration the tree has (SLAB and SLOB are gone from 6.12, SLUB_TINY
exists only from 6.2: verify.kconfig.applicable()), and boots each with the
same module, init and command line as the patched boots.

    guests = plan(src, configs).guests # builds; [Guest(name, image, build_dir, src, config, boot_kwargs)]
    results = boot_guests(guests, src) # boots one after the other, records each

plan() returns plain descriptions (Guest.as_tuple(): name, image, build
dir, src, config, boot kwargs for boot.run()); boot_guests() boots them
through the boot matrix (boot/matrix.py, guest_spec()), two at a time.

Builds: $SLABCONV_CACHE/build/<version>/reference-<config>-<key>/tree/o
(verify's baseline build: a hard-link snapshot of the tree, O= inside it,
reused while the key is unchanged).  Boots: $SLABCONV_CACHE/boot/runs/
reference-<version>/ (the matrix: results.ktap, junit.xml, summary.txt),
one <config>/ run directory per guest.  Results: runs/results-<version>/
boot-reference-<config>.json (report.results.record; series "reference",
0 patches), and runs/reference-<version>.json for the whole run.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import verify as V
from base import atomic, paths
from base.cliutil import add_command as add_command_parser
from base.log import info, SlabconvError
from boot import matrix, summary as msummary
from regen.source import Source
from report import results as recorded
from verify import configtable, kbuild, kconfig, tree
from . import prefetch
from .apply import asked_configs
from .boots import (boot_args, BOOT_JOBS, boot_name, boot_variants, kernel_spec,
    variant_options)


# Every configuration a reference run tries by default: verify/configs.toml's
# "reference" set (the boot matrix's, and SLUB_TINY where the kernel has it);
# those the tree lacks are "not applicable" (said, not an error).  kasan and
# iommu on request, as in the matrix (CONFIG=+kasan).
REFERENCE_SERIES = "reference"


def boot_timeout(config: str) -> float:
    """A reference guest's timeout: the patched boot's for the configuration
    (KASAN 300 s) and never less than the table's reference_timeout."""
    return max(configtable.table().reference_timeout, configtable.get(config).timeout)


@dataclass
class Guest:
    """One kernel to boot with the guest tests (a GuestSpec for a matrix runner)."""
    name: str                    # reference-<config>
    image: Path
    build_dir: Path
    src: Path
    config: str
    boot_kwargs: dict
    build_seconds: float = 0.0
    reused: bool = False
    build: object = field(default=None, repr=False)   # verify.kbuild.BuildResult
    variant: str = ""            # boot variants (verify/configs.toml): iommu strict, lazy, amd

    @property
    def key(self) -> str:
        """The guest's name in the matrix and the summary: config[-variant]."""
        return boot_name(self.config, self.variant)

    def as_tuple(self) -> tuple:
        return (self.name, self.image, self.build_dir, self.src, self.config, self.boot_kwargs)


@dataclass
class Plan:
    guests: list                 # Guest, built
    not_applicable: dict         # config -> why
    failed: dict                 # config -> build failure message


def stamp(src: Source) -> dict:
    """What a reference result is recorded for (report.results.record)."""
    return {"series": REFERENCE_SERIES, "patches": 0, "source": src.source_id,
            "reference": True}


def boot_kwargs(config: str) -> dict:
    """boot.run()'s keyword arguments: the patched boots' (boots.boot_args)
    and the configuration's timeout (boot_timeout)."""
    return dict(boot_args(config), timeout=boot_timeout(config))


def build_one(src: Source, config: str, out_root: Path, jobs: int = 2):
    """The unpatched tree built in `config` (reused when built before):
    (BuildResult, build dir, snapshot, reused)."""
    version = kconfig.tree_version(src.tree)
    arch = kconfig.config_arch(config)
    targets = tuple(kbuild.DEFAULT_TARGETS)
    ident = f"{REFERENCE_SERIES}:{src.source_id}"
    key = V.build_key(config, ident, targets, version)
    d = out_root / f"reference-{config}-{key}"
    lock = f"reference-{config}"
    with V.config_lock(out_root, lock):
        d.mkdir(parents=True, exist_ok=True)
        old = [p for p in out_root.glob(f"reference-{config}-*")
               if p != d and p.name[len(f"reference-{config}-"):].isalnum()
               and len(p.name) == len(d.name)]
        cleaner = tree.discard(old, out_root / ".trash")
        try:
            res, reused = V._baseline(src.tree, d, key, config, arch, targets, jobs)
        finally:
            if cleaner is not None:
                cleaner.wait()
    return res, d, d / "tree", reused


def plan(src: Source, configs=None, *, jobs: int = 2) -> Plan:
    """Build the unpatched kernel in each applicable configuration (default:
    the reference set); a guest per boot variant of each."""
    configs = list(configtable.names("reference") if configs is None else configs)
    ok, na = kconfig.split_applicable(configs, src.tree)
    for c, why in na.items():
        info("reference", f"{c}: not applicable: {why}")
    out_root = paths.cache_dir("build", src.version)
    guests, failed = [], {}
    for c in ok:
        info("reference", f"{c}: building unpatched {src.source_id} "
                          f"({ok.index(c) + 1} of {len(ok)})")
        res, d, snap, reused = build_one(src, c, out_root, jobs)
        if not res.ok:
            failed[c] = res.failure_message(f"the unpatched {c} build")
            info("reference", f"{c}: build FAILED (log {res.log})")
            continue
        info("reference", f"{c}: built in {res.seconds:.0f}s{' (reused)' if reused else ''}")
        for v in boot_variants(c):          # one kernel, booted once per variant
            guests.append(Guest(f"reference-{boot_name(c, v)}", res.image, snap / "o", snap, c,
                                dict(boot_kwargs(c), **variant_options(c, v)),
                                build_seconds=res.seconds, reused=reused, build=res,
                                variant=v))
    return Plan(guests, na, failed)


def run_root(version: str) -> Path:
    """The reference matrix of a kernel: cache/boot/runs/reference-<version>/."""
    return paths.cache_dir("boot", "runs", f"reference-{version}")


def record(src: Source, config: str, res, out: Path) -> Path | None:
    return recorded.record_boot(src.version, stamp(src), f"reference-{config}", res, out)


def guest_spec(g: Guest):
    """The boot matrix's GuestSpec (boot/matrix.py) for a built reference guest."""
    kw = dict(g.boot_kwargs)
    return kernel_spec(g.config, g.image, g.build_dir, g.src, name=g.key,
                       cmdline=kw.pop("cmdline_extra", ""), slub_debug=kw.pop("slub_debug", None),
                       timeout=kw.pop("timeout", boot_timeout(g.config)), options=kw)


def boot_guests(guests, src: Source, jobs: int | None = None) -> dict:
    """Boot the guests through the boot matrix (boot/matrix.py: `jobs` at a
    time, each with its own timeout; KTAP, JUnit XML and the one-screen
    summary in cache/boot/runs/reference-<version>/, each guest's run in
    <config>/ there); record each.  config -> BootResult (None: the guest
    could not be booted, e.g. its module did not build)."""
    guests = list(guests)
    if not guests:
        return {}
    m = matrix.run([guest_spec(g) for g in guests], run_root(src.version),
                   jobs=BOOT_JOBS if jobs is None else jobs)
    print(msummary.render(m))
    out = {}
    for r in m.results:
        c = r.spec.name                 # config[-variant]
        out[c] = r.boot
        if r.boot is not None:
            print(f"[reference {src.version} {c}] " + r.boot.summary())
            record(src, c, r.boot, r.out_dir)
        else:
            info("reference", f"{c}: not booted: {r.error}")
    return out


def summary(src: Source, p: Plan, boots: dict, seconds: float) -> dict:
    rows = {}
    for g in p.guests:
        b = boots.get(g.key)
        rows[g.key] = {
            "status": "not booted" if b is None else ("pass" if b.passed else "FAIL"),
            "build_seconds": round(g.build_seconds, 1), "build_reused": g.reused,
            "boot_seconds": None if b is None else round(b.seconds, 1),
            "counts": None if b is None else b.counts.as_dict(),
            "module_tests": None if b is None else b.module_tests,
            "failures": [] if b is None else b.failures[:10],
            "run_dir": None if b is None else str(b.out_dir)}
    for c, why in p.not_applicable.items():
        rows[c] = {"status": "not applicable", "why": why}
    for c, why in p.failed.items():
        rows[c] = {"status": "build FAILED", "why": why}
    return {"kernel": src.version, "source": src.source_id, "seconds": round(seconds, 1),
            "ok": bool(p.guests) and not p.failed and all(
                b is not None and b.passed for b in (boots.get(g.key) for g in p.guests)),
            "configs": rows}


def format_summary(s: dict) -> str:
    lines = [f"reference {s['kernel']} ({s['source']}): {'PASS' if s['ok'] else 'FAIL'} "
             f"in {s['seconds']:.0f}s"]
    for c, r in s["configs"].items():
        if r["status"] in ("not applicable", "build FAILED"):
            lines.append(f"  {c:10} {r['status']}: {r['why'].splitlines()[0]}")
            continue
        cnt = r["counts"] or {}
        lines.append(f"  {c:10} {r['status']:5} build {r['build_seconds']:.0f}s"
                     f"{' (reused)' if r['build_reused'] else ''}, boot "
                     f"{r['boot_seconds'] if r['boot_seconds'] is not None else '-'}s, "
                     + ", ".join(f"{k} {v}" for k, v in cnt.items())
                     + f", module cases {r['module_tests']}")
        for f in r["failures"][:3]:
            lines.append(f"      {f.splitlines()[0]}")
    return "\n".join(lines)


def cmd_reference(args) -> int:
    t0 = time.monotonic()
    configs = asked_configs(args, "reference")
    src = prefetch.inputs(args.kernel, args.tree, args.deb_version, configs)
    if not kconfig.split_applicable(configs, src.tree)[0]:
        plan(src, configs)                  # says why each is not applicable
        raise SlabconvError(f"no configuration of {', '.join(configs)} applies to Linux "
                            f"{src.version}", exit_code=2)
    # The builds one after another (-j2 each: the CPU-bound part), then the
    # guests through the boot matrix, two at a time.
    p = plan(src, configs, jobs=args.jobs)
    boots = boot_guests(p.guests, src)
    s = summary(src, p, boots, time.monotonic() - t0)
    out = paths.cache_dir("runs") / f"reference-{src.version}.json"
    atomic.write_text(out, json.dumps(s, indent=1) + "\n")
    print(format_summary(s))
    info("reference", f"{'PASS' if s['ok'] else 'FAIL'} (report: {out})")
    return 0 if s["ok"] else 1


def add_command(sub, common) -> None:
    p = add_command_parser(
        sub, "reference", "build the UNPATCHED kernel in each configuration it has and boot it "
                          "with the in-guest tests (reference run)",
        "Build the unpatched kernel in each configuration it has (those whose allocator\n"
        "it lacks are not applicable) and boot each with the same in-guest tests as the\n"
        "patched kernels: the tests check slab behaviour, not the series' text.\n"
        "Summary: $SLABCONV_CACHE/runs/reference-<version>.json.",
        "slabconv reference --kernel 6.12 --config +kasan")
    common(p)
    p.add_argument("--config", default=None,
                   help="kernel configs, comma-separated (default: "
                        f"{','.join(configtable.names('reference'))}; +a,b adds to it, as `boot` "
                        "does; those the kernel lacks are not applicable)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="make -j (default 2)")
    p.set_defaults(func=cmd_reference)
