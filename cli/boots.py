"""Booting verified kernels: each configuration's guest (its arch, boot
arguments, QEMU options, timeout and variants from verify/configs.toml)
as a boot matrix GuestSpec; the matrix of every patched kernel verify
built (make boot, make all), recorded for the review."""
from __future__ import annotations

from pathlib import Path

import boot
from base import paths
from base.log import info
from boot import matrix, summary
from boot.matrix import GuestSpec
from report import results as recorded
from verify import configtable

BOOT_JOBS = 2                      # guests at a time (2 cores: one TCG guest each)


def boot_args(config: str, cmdline_extra: str = "") -> dict:
    """boot.run()'s slub_debug and cmdline_extra for a configuration
    (cmdline_extra: more kernel parameters, e.g. slabconv.inject=...)."""
    c = configtable.get(config)
    extra = " ".join(x for x in (c.cmdline, cmdline_extra.strip()) if x)
    return {"slub_debug": boot.DEFAULT_SLUB_DEBUG if c.slub_debug else None,
            "cmdline_extra": extra}


def boot_variants(config: str) -> list:
    """The variants a configuration is booted in ([""]: once)."""
    return list(configtable.get(config).variants)


def variant_options(config: str, variant: str = "") -> dict:
    """boot.run()'s options for one variant of a configuration ({} for a
    configuration booted once)."""
    return dict(configtable.get(config).variants.get(variant, {}))


def boot_name(config: str, variant: str = "") -> str:
    return f"{config}-{variant}" if variant else config


def kernel_spec(config: str, image, build_dir, src, *, name: str, cmdline: str = "",
                slub_debug: str | None = None, timeout: float | None = None,
                options: dict | None = None):
    """A boot matrix GuestSpec for a built kernel of `config`: its arch, the
    configuration's QEMU extras and timeout unless a timeout is given.  The
    patched boots (guest_spec), the per-patch kernels (patch_guest) and the
    reference boots (cli.reference) all go through here."""
    c = configtable.get(config)
    return GuestSpec(name=name, arch=c.arch, image=Path(image), build_dir=Path(build_dir),
                     src=Path(src), config=config, cmdline=cmdline, slub_debug=slub_debug,
                     qemu_extra=tuple(c.qemu), timeout=c.timeout if timeout is None else timeout,
                     options=dict(options or {}))


def guest_spec(r, cmdline_extra: str = "", name: str | None = None, variant: str = ""):
    """The boot matrix's GuestSpec for the patched kernel of one verified
    configuration (r: a verify.VerifyResult whose patched build is ok), in
    one of its variants."""
    a = boot_args(r.config, cmdline_extra)
    return kernel_spec(r.config, r.patched.image, r.patched_out, r.patched_src,
                       name=name or boot_name(r.config, variant), cmdline=a["cmdline_extra"],
                       slub_debug=a["slub_debug"], options=variant_options(r.config, variant))


def patch_guest(config: str, image, build_dir, src, name: str, modules):
    """The guest of one patch's kernel in the per-patch check (runtime
    bisect): the configuration's boot arguments, with the guest modules
    kept with that kernel."""
    a = boot_args(config)
    return kernel_spec(config, image, build_dir, src, name=name, cmdline=a["cmdline_extra"],
                       slub_debug=a["slub_debug"], options={"modules": tuple(modules)})


def boot_matrix(g, run_name: str = "matrix", *, jobs: int = BOOT_JOBS,
                cmdline_extra: str = ""):
    """Boot the patched kernel of every configuration verify built (g:
    verify.gates.Gates), `jobs` at a time (boot/matrix.py), in
    cache/boot/runs/<run_name>/<config>/; record each for the review when
    g's results were recorded (g.stamp).  Returns (MatrixResult or None,
    name -> BootResult, None for a kernel that did not build)."""
    out: dict = {}
    specs = []
    for r in g.builds:
        for v in boot_variants(r.config):
            name = boot_name(r.config, v)
            out[name] = None
            if r.patched is None or not r.patched.ok:
                info("boot", f"{name}: the patched kernel did not build; not booted")
                continue
            specs.append(guest_spec(r, cmdline_extra, variant=v))
    if not specs:
        return None, out
    m = matrix.run(specs, paths.cache_dir("boot", "runs", run_name), jobs=jobs)
    for res in m.results:
        out[res.spec.name] = res.boot
        if g.stamp is not None and res.boot is not None:
            recorded.record_boot(g.kernel, g.stamp, res.spec.name, res.boot, res.out_dir)
    return m, out


def boot_all(g, run_name: str = "matrix", jobs: int = BOOT_JOBS) -> dict:
    """boot_matrix() with its one-screen summary printed; name -> BootResult."""
    m, out = boot_matrix(g, run_name, jobs=jobs)
    if m is not None:
        print(summary.render(m))
    return out
