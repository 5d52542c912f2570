"""Build the in-guest test module against the kernel under test.

The sources in boot/guest/ are copied to a staging directory in the cache
and built there with ``make -C SRC O=BUILD M=<staging> modules``; nothing
is ever built inside the repository or the (read-only) kernel source.
Builds are cached, keyed by the guest sources and the identity of the
kernel build (config, release, and the vmlinux / Module.symvers stamps).
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from base import arches, paths, proc
from base.lock import locked
from base.log import info, SlabconvError


GUEST = Path(__file__).resolve().parent / "guest"
SOURCES = ("slabconv_test.c", "slabconv_iommu.c", "slabconv_faultinj.c", "Kbuild", "Makefile")
MODULE_NAME = "slabconv_test"
# Every module Kbuild builds; the first is the one build() returns.
MODULES = (MODULE_NAME, "slabconv_iommu", "slabconv_faultinj")


def _stamp(p: Path) -> str:
    try:
        st = p.stat()
    except FileNotFoundError:
        return f"{p.name}:-"
    return f"{p.name}:{st.st_size}:{st.st_mtime_ns}"


def _key(src_dir: Path, build_dir: Path, arch: str) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (GUEST / name).read_bytes())
    h.update(f"{src_dir.resolve()}\0{build_dir.resolve()}\0{arch}\0".encode())
    for rel in (".config", "include/generated/utsrelease.h",
                "include/generated/autoconf.h", "Module.symvers", "vmlinux"):
        h.update(_stamp(build_dir / rel).encode() + b"\0")
    cfg = build_dir / ".config"
    if cfg.is_file():
        h.update(hashlib.sha256(cfg.read_bytes()).digest())
    return h.hexdigest()[:20]


def build(src_dir: Path, build_dir: Path, *, arch: str = "x86_64",
          jobs: int = 2) -> Path:
    """Return the path of slabconv_test.ko built for build_dir's kernel."""
    src_dir, build_dir = Path(src_dir), Path(build_dir)
    a = arches.get(arch)
    if not (src_dir / "Makefile").is_file():
        raise SlabconvError(f"{src_dir} is not a kernel source tree", exit_code=2)
    if not (build_dir / ".config").is_file():
        raise SlabconvError(f"{build_dir} has no .config (not a kernel build "
                            "directory?)", exit_code=2)
    config = (build_dir / ".config").read_text(errors="replace")
    if "\nCONFIG_MODULES=y" not in "\n" + config:
        raise SlabconvError(f"{build_dir}/.config lacks CONFIG_MODULES=y: the boot "
                            "tests load a module", exit_code=2)
    if "\nCONFIG_HARDENED_USERCOPY=y" not in "\n" + config:
        info("boot", "CONFIG_HARDENED_USERCOPY is not set: usercopy cases run "
                     "without the hardened checks")
    if not (build_dir / "scripts" / "mod").is_dir():
        raise SlabconvError(f"{build_dir}: run 'make modules_prepare' (or a full "
                            "build) there first", exit_code=2)
    make = proc.require_tool("make", "make")

    key = _key(src_dir, build_dir, arch)
    root = paths.cache_dir("boot", "module")
    staging = root / key
    ko = staging / f"{MODULE_NAME}.ko"
    done = staging / ".complete"
    with locked(root / f"{key}.lock", f"the {MODULE_NAME}.ko build", stage="boot"):
        # concurrent runs build once
        if ko.is_file() and done.is_file():
            return ko
        # Build in place (so WARN/BUG file names point at the real copy).
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in SOURCES:
            shutil.copy2(GUEST / name, staging / name)
        # ARCH= and, for a cross-built kernel, CROSS_COMPILE= (base/arches.py)
        env = dict(os.environ, **dict(v.split("=", 1) for v in a.make_vars()))
        if not (build_dir / "Module.symvers").is_file():
            # A bzImage-only build has no Module.symvers: without this, newer
            # modpost refuses the unresolved (but exported) symbols.
            env["KBUILD_MODPOST_WARN"] = "1"
        info("boot", f"building {MODULE_NAME}.ko against {build_dir}")
        cp = proc.run([make, "-C", src_dir, f"O={build_dir}", f"M={staging}",
                       f"-j{jobs}", "modules"], check=False,
                      what=f"building {MODULE_NAME}.ko", env=env, timeout=600)
        (staging / "build.log").write_text(cp.stdout or "")
        missing = [m for m in MODULES if not (staging / f"{m}.ko").is_file()]
        if cp.returncode != 0 or missing:
            tail = "\n".join((cp.stdout or "").splitlines()[-30:])
            raise SlabconvError(f"building {', '.join(m + '.ko' for m in missing or MODULES)} failed (exit "
                                f"{cp.returncode}); full log {staging}/build.log\n{tail}")
        done.write_text(key + "\n")
    return ko


def companions(ko: Path) -> list[Path]:
    """The modules built with ko (build()'s result), ko first."""
    return [Path(ko).parent / f"{m}.ko" for m in MODULES]
