"""Kernel configuration: tinyconfig + named fragments from verify/configs/.

    configure(src, out, ["base-x86_64", "slub"])          # by fragment names
    configure(src, out, config_fragments("slub"))         # by config name

The fragments are merged with the kernel's own scripts/kconfig/merge_config.sh
(-m: merge only), then `make olddefconfig` resolves the dependencies.  Kconfig
silently drops an option whose dependencies are not met, so afterwards every
value the fragments ask for is checked against out/.config and a
SlabconvError names the options that did not stick.

A stamp (out/.slabconv-config.json) records the digest of the inputs: calling
configure() again with the same fragments is a no-op (only the check runs),
which keeps .config's timestamp and therefore the build in `out` incremental.
Reconfiguring a directory that configure() set up for other fragments empties
it first.
"""
import hashlib
import json
import re
import shutil
from pathlib import Path

from slabconv import log
from slabconv.log import SlabconvError
from slabconv.proc import run

CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
STAMP = ".slabconv-config.json"

# Named configurations: name -> (ARCH, fragments merged on top of tinyconfig,
# in order).  Adding a configuration is one line here (plus its fragments).
CONFIGS = {
    "slub": ("x86_64", ["base-x86_64", "slub"]),
    "slub-nodebug": ("x86_64", ["base-x86_64", "slub", "slub-nodebug"]),
    "slab": ("x86_64", ["base-x86_64", "slab"]),
    "kasan": ("x86_64", ["base-x86_64", "slub", "kasan"]),
    "mm-users": ("x86_64", ["base-x86_64", "slub", "mm-users"]),
    "slob": ("x86_64", ["base-x86_64", "slob"]),
    "iommu": ("x86_64", ["base-x86_64", "slub", "iommu"]),
    # The boot matrix's 32-bit guest: the slub kernel on i386 (4-byte words,
    # struct slab's i386 layout), booted with qemu-system-i386.
    "slub-i386": ("i386", ["base-x86_64", "arch-i386", "slub"]),
    # verify/layout.py: struct slab's static_asserts on both word sizes, with
    # and without the memcg word (tinyconfig + SLUB; no boot options needed).
    "layout-x86_64": ("x86_64", ["arch-x86_64", "layout-base", "slub", "memcg"]),
    "layout-x86_64-nomemcg": ("x86_64", ["arch-x86_64", "layout-base", "slub", "nomemcg"]),
    "layout-i386": ("i386", ["arch-i386", "layout-base", "slub", "memcg"]),
    "layout-i386-nomemcg": ("i386", ["arch-i386", "layout-base", "slub", "nomemcg"]),
}

_SET_RE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET_RE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


def config_names() -> list:
    return sorted(CONFIGS)


def config_fragments(name: str) -> list:
    return list(_lookup(name)[1])


def config_arch(name: str) -> str:
    return _lookup(name)[0]


def _lookup(name: str):
    try:
        return CONFIGS[name]
    except KeyError:
        raise SlabconvError(f"unknown kernel config '{name}' "
                            f"(known: {', '.join(config_names())})", exit_code=2)


def fragment_path(name: str) -> Path:
    """A fragment by name ("slub" -> verify/configs/slub.config), or a path."""
    p = Path(name)
    if p.suffix == ".config" and p.is_file():
        return p.resolve()
    p = CONFIGS_DIR / f"{name}.config"
    if not p.is_file():
        known = ", ".join(sorted(f.stem for f in CONFIGS_DIR.glob("*.config")))
        raise SlabconvError(f"no config fragment '{name}' in {CONFIGS_DIR} "
                            f"(known: {known})", exit_code=2)
    return p


def parse_config(text: str) -> dict:
    """CONFIG_X -> value ('y', 'm', '"str"', '123', or 'n' for 'is not set')."""
    vals = {}
    for line in text.splitlines():
        line = line.strip()
        m = _SET_RE.match(line)
        if m:
            vals[m.group(1)] = m.group(2)
            continue
        m = _UNSET_RE.match(line)
        if m:
            vals[m.group(1)] = "n"
    return vals


def requested_values(fragments: list) -> dict:
    """What the fragments ask for, later fragments overriding earlier ones."""
    req = {}
    for f in fragments:
        req.update(parse_config(fragment_path(f).read_text()))
    return req


def missing_options(requested: dict, actual: dict) -> dict:
    """Options whose final value differs from the request: name -> (wanted, got)."""
    bad = {}
    for name, want in requested.items():
        got = actual.get(name, "n")
        if want != got:
            bad[name] = (want, got)
    return bad


def inputs_digest(fragments: list, arch: str) -> str:
    h = hashlib.sha256(f"arch={arch}\n".encode())
    for f in fragments:
        p = fragment_path(f)
        h.update(f"--- {p.name}\n".encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def make_cmd(src: Path, out: Path, arch: str, *targets, extra=()) -> list:
    return ["make", "-s", "-C", str(src), f"O={out}", f"ARCH={arch}", *extra, *targets]


def configure(src, out, fragments, arch="x86_64", *, force=False) -> Path:
    """Write out/.config = tinyconfig + fragments; returns the .config path.

    Raises SlabconvError naming the requested options Kconfig dropped.
    """
    src, out = Path(src).resolve(), Path(out).resolve()
    if not (src / "Makefile").is_file() or not (src / "Kconfig").is_file():
        raise SlabconvError(f"{src} is not a kernel source tree", exit_code=2)
    paths = [fragment_path(f) for f in fragments]
    requested = requested_values(fragments)
    digest = inputs_digest(fragments, arch)
    out.mkdir(parents=True, exist_ok=True)
    dotconfig = out / ".config"
    stamp = out / STAMP

    old = {}
    if stamp.is_file():
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = {}
    if not force and dotconfig.is_file() and old.get("digest") == digest:
        # Same inputs: keep .config (and its timestamp).  A changed Kconfig
        # in the tree is picked up by Kbuild's own syncconfig.
        _check(requested, dotconfig, fragments)
        return dotconfig
    if old.get("digest") and old.get("digest") != digest:
        # An O= dir configured by us for other fragments: start afresh, so
        # that objects (and their diagnostics) of the old config do not linger.
        log.info("verify", f"{out}: configuration changed, emptying the build directory")
        for entry in out.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    log.info("verify", f"configuring {out.name}: tinyconfig + "
             f"{' + '.join(p.stem for p in paths)} (ARCH={arch})")
    stamp.unlink(missing_ok=True)
    run(make_cmd(src, out, arch, "tinyconfig"), what="make tinyconfig")
    # merge_config.sh writes its temporary files into the current directory.
    run(["sh", str(src / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(out),
         str(dotconfig), *map(str, paths)], what="merge_config.sh", cwd=out)
    run(make_cmd(src, out, arch, "olddefconfig"), what="make olddefconfig")
    _check(requested, dotconfig, fragments)
    stamp.write_text(json.dumps({"digest": digest, "src": str(src), "arch": arch,
                                 "fragments": [str(p) for p in paths]}, indent=1) + "\n")
    return dotconfig


def configure_named(src, out, name: str, **kw) -> Path:
    arch, frags = _lookup(name)
    return configure(src, out, frags, arch=arch, **kw)


def _check(requested: dict, dotconfig: Path, fragments) -> None:
    bad = missing_options(requested, parse_config(dotconfig.read_text()))
    if bad:
        lines = [f"  {k}: requested {w}, got {'not set' if g == 'n' else g}"
                 for k, (w, g) in sorted(bad.items())]
        raise SlabconvError(
            f"Kconfig dropped {len(bad)} option(s) requested by "
            f"{', '.join(map(str, fragments))} (unmet dependencies?):\n"
            + "\n".join(lines) + f"\n(see {dotconfig}; `make O=... menuconfig` "
            "shows what each option depends on)")
