"""The table of kernel configurations (verify/configs.toml), one entry each.

    from verify import configtable
    configtable.get("slub").fragments         # ('base-x86_64', 'slub', ...)
    configtable.names("boot")                 # ('slub', 'slab', 'slob', 'slub-i386')
    configtable.choices("per-patch")          # the defaults, then those on request
    configtable.primary("main")               # 'slub'

Every check takes its configurations from here (kconfig: arch, fragments,
requires; the pipeline: verify, per-patch, runtime, coverage, boot, main;
the reference run; the layout check; the review's order), so a new guest is
one table in configs.toml.  A mistake in the file is an error naming the
file and the line of the configuration's table (exit 2).
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from base import arches
from base.log import SlabconvError

TABLE_FILE = Path(__file__).resolve().parent / "configs.toml"
CHECKS = ("verify", "per-patch", "runtime", "coverage", "boot", "reference", "main", "layout")
ARCHES = arches.names()
ALLOCATORS = ("slub", "slab", "slob", "slub-tiny")
DEFAULTS = {"boot_timeout": float, "reference_timeout": float}
_KEYS = {"arch", "allocator", "fragments", "requires", "checks", "on_request", "boot",
         "objects"}
_BOOT_KEYS = {"slub_debug", "cmdline", "qemu", "timeout", "variants"}


@dataclass(frozen=True)
class Config:
    name: str
    arch: str
    allocator: str
    fragments: tuple
    requires: tuple = ()
    checks: tuple = ()
    on_request: tuple = ()
    slub_debug: bool = False          # booted with slub_debug=boot.DEFAULT_SLUB_DEBUG
    cmdline: str = ""                 # more kernel parameters
    qemu: tuple = ()                  # more QEMU arguments
    timeout: float = 0.0              # a guest's timeout (s)
    variants: dict = field(default_factory=lambda: {"": {}})   # variant -> boot.run() options
    line: int = 0                     # of its table in the file
    objects: int = 0                  # a whole build's objects, measured (progress total, 0: none)

    @property
    def fault_injection(self) -> bool:
        """Its guests run the fault-injection test armed (configs/faultinject.config)."""
        return "faultinject" in self.fragments


@dataclass(frozen=True)
class Table:
    path: Path
    configs: dict                     # name -> Config, in the file's order
    boot_timeout: float
    reference_timeout: float


def _line(text: str, name: str) -> int:
    m = re.search(rf'^[ \t]*\[[ \t]*(?:"{re.escape(name)}"|{re.escape(name)})\s*[.\]]', text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _strings(v, what: str) -> tuple:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(v)


def _config(name: str, d: dict, line: int, fragments_dir: Path, default_timeout: float) -> Config:
    unknown = set(d) - _KEYS
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(sorted(unknown))} (known: "
                         f"{', '.join(sorted(_KEYS))})")
    for k in ("arch", "allocator", "fragments"):
        if k not in d:
            raise ValueError(f"no {k}")
    if d["arch"] not in ARCHES:
        raise ValueError(f"arch {d['arch']!r} is not one of {', '.join(ARCHES)}")
    if d["allocator"] not in ALLOCATORS:
        raise ValueError(f"allocator {d['allocator']!r} is not one of {', '.join(ALLOCATORS)}")
    frags = _strings(d["fragments"], "fragments")
    missing = [f for f in frags if not (fragments_dir / f"{f}.config").is_file()]
    if missing:
        raise ValueError(f"no fragment {', '.join(f'{fragments_dir / m}.config' for m in missing)}")
    checks = _strings(d.get("checks", []), "checks")
    on_request = _strings(d.get("on_request", []), "on_request")
    bad = [c for c in checks + on_request if c not in CHECKS]
    if bad:
        raise ValueError(f"unknown check(s) {', '.join(bad)} (known: {', '.join(CHECKS)})")
    b = d.get("boot", {})
    if not isinstance(b, dict) or set(b) - _BOOT_KEYS:
        raise ValueError(f"boot: unknown key(s) {', '.join(sorted(set(b) - _BOOT_KEYS))} "
                         f"(known: {', '.join(sorted(_BOOT_KEYS))})")
    variants = b.get("variants", {"": {}})
    if not isinstance(variants, dict) or "" not in variants or \
            not all(isinstance(v, dict) for v in variants.values()):
        raise ValueError('boot.variants must map each variant (one of them "") to a table')
    c = Config(name, d["arch"], d["allocator"], frags, _strings(d.get("requires", []), "requires"),
               checks, on_request, bool(b.get("slub_debug", False)), str(b.get("cmdline", "")),
               _strings(b.get("qemu", []), "boot.qemu"),
               float(b.get("timeout", default_timeout)), variants, line)
    objects = d.get("objects", 0)
    if not isinstance(objects, int) or isinstance(objects, bool) or objects < 0:
        raise ValueError(f"objects must be a whole number of objects, not {objects!r}")
    c = replace(c, objects=objects)
    if "runtime" in checks and not c.fault_injection:
        raise ValueError("a runtime configuration's guests run the fault-injection test: "
                         "its fragments need faultinject")
    return c


@functools.lru_cache(maxsize=None)
def load(path: Path = TABLE_FILE) -> Table:
    """The table in `path` (cached per path); SlabconvError (exit 2) naming the
    file and line of a mistake."""
    path = Path(path)
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlabconvError(f"{path}: {e}", exit_code=2)
    top = {k: v for k, v in data.items() if not isinstance(v, dict)}
    for k, v in top.items():
        if k not in DEFAULTS or not isinstance(v, (int, float)):
            raise SlabconvError(f"{path}:{_line(text, k)}: unknown setting {k} "
                                f"(known: {', '.join(DEFAULTS)})", exit_code=2)
    timeout = float(top.get("boot_timeout", 120.0))
    configs = {}
    for name, d in data.items():
        if not isinstance(d, dict):
            continue
        line = _line(text, name)
        try:
            configs[name] = _config(name, d, line, path.parent / "configs", timeout)
        except (ValueError, TypeError) as e:
            raise SlabconvError(f"{path}:{line}: [{name}] {e}", exit_code=2)
    return Table(path, configs, timeout, float(top.get("reference_timeout", timeout)))


def table() -> Table:
    return load(TABLE_FILE)


def get(name: str) -> Config:
    """One configuration; exit 2 for a name the table does not have."""
    t = table()
    try:
        return t.configs[name]
    except KeyError:
        raise SlabconvError(f"unknown kernel config '{name}' (known: "
                            f"{', '.join(sorted(t.configs))}; {t.path})", exit_code=2)


def all_names() -> list:
    return sorted(table().configs)


def names(check: str) -> tuple:
    """The configurations a check uses by default, in the table's order."""
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}")
    return tuple(n for n, c in table().configs.items() if check in c.checks)


def choices(check: str) -> tuple:
    """names(check), then the configurations it takes on request."""
    return names(check) + tuple(n for n, c in table().configs.items()
                                if check in c.on_request)


def primary(check: str) -> str:
    """The first configuration of a check."""
    n = names(check)
    if not n:
        raise SlabconvError(f"{table().path}: no configuration is used by {check}", exit_code=2)
    return n[0]
