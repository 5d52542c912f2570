"""What every command of the pipeline starts from: the run's source, its
series regenerated (do_regen) or applied with `git am` to a fresh baseline
work tree (apply_series), and the configurations the command line asks for
(verify/configs.toml through verify.configtable)."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from base import paths
from base.cliutil import comma_list
from base.log import info, SlabconvError
from regen import series, worktree
from regen.series import output_lock, series_date
from regen.source import committed_identity, resolve, series_dir, Source
from regen.spatch import spatch_version
from regen.worktree import BASE_TAG, user_identity, WorkTree
from report import reproduce
from verify import configtable, kconfig
from . import prefetch


@dataclass
class Applied:
    src: Source
    tree: Path            # work tree with the series applied (HEAD)
    baseline_id: str      # commit of the baseline
    patches: list[Path]
    touched: list[str]    # files the series changes
    series_dir: Path | None = None   # where the patches were read (patches: a copy)


def do_regen(args, src=None):
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
    return Applied(src, wt.path, base, patches, touched, Path(patches_dir))


def source(args, boot_configs=()) -> Source:
    """The run's kernel source and the busybox of each guest it boots, fetched
    before anything is built; no network afterwards (cli/prefetch.py)."""
    return prefetch.inputs(args.kernel, args.tree, args.deb_version, boot_configs)


def applied_series(args, boot_configs=()) -> Applied:
    src = source(args, boot_configs)
    return apply_series(src, series_dir(src, args.output))


def asked_configs(args, check: str) -> list:
    """--config a,b (those), +a,b (the check's default set and those) or the
    check's default set (verify/configs.toml)."""
    default = configtable.names(check)
    v = getattr(args, "config", None)
    if v and v.startswith("+"):
        return list(dict.fromkeys(list(default) + comma_list(v[1:])))
    return comma_list(v or ",".join(default))


def bisect_configs(args) -> tuple:
    """--bisect-configs: the per-patch check's configurations ('none': none)."""
    v = getattr(args, "bisect_configs", None)
    if v is None:
        return configtable.names("per-patch")
    return tuple(c for c in comma_list(v) if c != "none")


def bisect_why(args) -> str:
    """Why the per-patch check does not run when bisect_configs(args) is
    empty: what the command line said."""
    v = getattr(args, "bisect_configs", None)
    return "not asked for" if v is None else f"--bisect-configs {v if v.strip() else repr(v)}"


def check_options(args) -> dict:
    """verify_applied()'s keyword arguments from the command line."""
    cov = getattr(args, "coverage_configs", None)
    cov = None if cov is None or cov.strip() == "none" else tuple(comma_list(cov))
    rt = getattr(args, "runtime_configs", None)
    rt = configtable.names("runtime") if rt is None else \
        tuple(c for c in comma_list(rt) if c != "none")
    return {"layout": not getattr(args, "no_layout", False),
            "checkpatch": not getattr(args, "no_checkpatch", False),
            "nullcheck": False if getattr(args, "no_nullcheck", False) else None,
            "coverage_configs": cov, "runtime_configs": rt,
            "variability": not getattr(args, "no_variability", False)}
