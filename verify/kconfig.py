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

Kernel versions.  A symbol that differs between the kernels slabconv
supports is set in a version overlay: configs/<VERSION>/<fragment>.config
(VERSION as in the tree's Makefile, "6.12") is merged right after
<fragment>.config when the tree is that version (expand()); e.g. 6.12's
tinyconfig selects SLUB_TINY, which the slub fragment must turn off there.
A configuration whose allocator the tree does not have (SLAB and SLOB are
gone from 6.12, SLUB_TINY came in 6.2) is not applicable to that tree:
applicable() says why, from the tree's own Kconfig files, and
configure_named() raises NotApplicable (exit 2) instead of letting Kconfig
drop the choice and the build test another allocator.
"""
import hashlib
import json
import re
import shutil
from pathlib import Path

from base import arches, log
from base.log import SlabconvError
from base.proc import run
from . import configtable


CONFIGS_DIR = Path(__file__).resolve().parent / "configs"
STAMP = ".slabconv-config.json"

# Named configurations: verify/configs.toml (verify/configtable.py): each
# one's ARCH, the fragments merged on top of tinyconfig and the Kconfig
# symbols a tree must define for it to apply.  What the kernel history says
# of those symbols is added to the reason.
HISTORY = {
    "SLAB": "SLAB was removed in Linux 6.8",
    "SLOB": "SLOB was removed in Linux 6.4",
    "SLUB_TINY": "SLUB_TINY was added in Linux 6.2",
}
# Where those symbols are defined (5.10: init/Kconfig; later: mm/Kconfig).
KCONFIG_FILES = ("init/Kconfig", "mm/Kconfig", "mm/Kconfig.debug", "lib/Kconfig.kasan")


class NotApplicable(SlabconvError):
    """A configuration the kernel tree cannot build (its allocator is missing)."""

    def __init__(self, message: str):
        super().__init__(message, exit_code=2)


_SET_RE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET_RE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


def tree_version(src) -> str:
    """VERSION.PATCHLEVEL of a kernel tree ("6.12"), '' if its Makefile says nothing."""
    try:
        text = (Path(src) / "Makefile").read_text(errors="replace")
    except OSError:
        return ""
    v = re.search(r"^VERSION\s*=\s*(\d+)", text, re.M)
    p = re.search(r"^PATCHLEVEL\s*=\s*(\d+)", text, re.M)
    return f"{v.group(1)}.{p.group(1)}" if v and p else ""


def kconfig_symbols(src, names) -> set:
    """Those of `names` that the tree's Kconfig files (KCONFIG_FILES) define."""
    want = set(names)
    found = set()
    for rel in KCONFIG_FILES:
        try:
            text = (Path(src) / rel).read_text(errors="replace")
        except OSError:
            continue
        for m in re.finditer(r"^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$", text, re.M):
            if m.group(1) in want:
                found.add(m.group(1))
    return found


def applicable(name: str, src) -> tuple:
    """(True, '') if configuration `name` can be built from tree `src`, else
    (False, why): a symbol it is about is not in the tree's Kconfig."""
    need = configtable.get(name).requires
    missing = [s for s in need if s not in kconfig_symbols(src, need)]
    if not missing:
        return True, ""
    v = tree_version(src) or "this kernel"
    hist = "; ".join(HISTORY[s] for s in missing if s in HISTORY)
    return False, (f"configuration '{name}' is not applicable to Linux {v}: its Kconfig has no "
                   f"{', '.join('CONFIG_' + s for s in missing)}" + (f" ({hist})" if hist else ""))


def split_applicable(names, src) -> tuple:
    """(applicable names, {name: why not}) in the given order."""
    ok, no = [], {}
    for n in names:
        a, why = applicable(n, src)
        if a:
            ok.append(n)
        else:
            no[n] = why
    return ok, no


def expand(fragments, version: str = "") -> list:
    """The fragments with each one's overlay for `version`
    (configs/<version>/<fragment>.config) right after it."""
    out = []
    for f in fragments:
        out.append(f)
        if version and not str(f).endswith(".config"):
            o = CONFIGS_DIR / version / f"{f}.config"
            if o.is_file():
                out.append(str(o))
    return out


def config_names() -> list:
    return configtable.all_names()


def config_fragments(name: str, version: str = "") -> list:
    """The fragments of a configuration; with `version`, its overlays too."""
    return expand(configtable.get(name).fragments, version)


def config_arch(name: str) -> str:
    return configtable.get(name).arch


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
        overlay = p.parent.parent == CONFIGS_DIR
        h.update(f"--- {p.parent.name + '/' if overlay else ''}{p.name}\n".encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def make_cmd(src: Path, out: Path, arch: str, *targets, extra=()) -> list:
    """make for Kconfig: ARCH= and, cross-compiling, CROSS_COMPILE= (Kconfig
    asks the compiler what it supports: CC_HAS_KASAN_SW_TAGS is a cc-option)."""
    return ["make", "-s", "-C", str(src), f"O={out}", *arches.get(arch).make_vars(),
            *extra, *targets]


def configure(src, out, fragments, arch="x86_64", *, force=False) -> Path:
    """Write out/.config = tinyconfig + fragments; returns the .config path.

    Raises SlabconvError naming the requested options Kconfig dropped.
    """
    src, out = Path(src).resolve(), Path(out).resolve()
    if not (src / "Makefile").is_file() or not (src / "Kconfig").is_file():
        raise SlabconvError(f"{src} is not a kernel source tree", exit_code=2)
    fragments = expand(fragments, tree_version(src))
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
             f"{' + '.join(_label(p) for p in paths)} (ARCH={arch})")
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


def _label(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}" if p.parent.parent == CONFIGS_DIR else p.stem


def configure_named(src, out, name: str, **kw) -> Path:
    """configure() with a named configuration; NotApplicable (exit 2) when
    the tree does not have what it is about (applicable())."""
    c = configtable.get(name)
    ok, why = applicable(name, src)
    if not ok:
        raise NotApplicable(why)
    return configure(src, out, list(c.fragments), arch=c.arch, **kw)


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
