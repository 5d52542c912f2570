"""Kernel builds: `make O=...` with ccache, reproducible, with progress.

    r = build(src, out)                 # out already configured (kconfig.py)
    r = build(src, out, config="slub")  # configure first
    r.ok, r.seconds, r.warnings, r.log, r.image, r.error_excerpt

Compiler diagnostics are collected per object: CC is wrapped
(verify/ccwrap.sh) so that each X.o gets an X.o.diag-slabconv file holding
what the compiler printed for it.  The warnings of a build are those files
(so an incremental build still reports the warnings of the objects it did not
recompile, and a parallel build's interleaved output does not matter) plus
the warnings of the log that they do not account for (host programs, linker
scripts, objtool, modpost, ld).
"""
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from slabconv import log as slog
from slabconv.log import SlabconvError
from slabconv.paths import cache_dir

from . import warnings as W

CCWRAP = Path(__file__).resolve().parent / "ccwrap.sh"
DIAG_SUFFIX = ".diag-slabconv"
LOG_NAME = "slabconv-build.log"
DEFAULT_TARGETS = ("bzImage", "modules_prepare")
PROGRESS_EVERY = 20.0

# Fixed build identity: reproducible objects (init/version.o, compile.h) and
# therefore ccache hits across trees and runs.
REPRO_ENV = {
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2015",
    "KBUILD_BUILD_USER": "slabconv",
    "KBUILD_BUILD_HOST": "slabconv",
    "KBUILD_BUILD_VERSION": "1",
}

_STEP_LINE = W._STEP_RE          # a Kbuild step line: "  CC      mm/slub.o"
_ARCH_DIR = {"x86_64": "x86", "i386": "x86", "x86": "x86"}


@dataclass
class BuildResult:
    ok: bool
    seconds: float
    warnings: list
    log: Path
    image: Optional[Path]
    error_excerpt: str = ""
    out: Optional[Path] = None
    targets: tuple = DEFAULT_TARGETS
    returncode: int = 0
    compiled: int = 0                       # objects (re)compiled by this build
    ccache: dict = field(default_factory=dict)   # hits / misses during the build

    def failure_message(self, what: str = "kernel build") -> str:
        return (f"{what} failed (make exit {self.returncode}) in {self.out}; "
                f"first errors:\n{self.error_excerpt}\nfull log: {self.log}")

    def raise_for_failure(self, what: str = "kernel build") -> None:
        if not self.ok:
            raise SlabconvError(self.failure_message(what), exit_code=1)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "seconds": round(self.seconds, 1),
                "returncode": self.returncode, "out": str(self.out),
                "log": str(self.log), "image": str(self.image) if self.image else None,
                "targets": list(self.targets), "compiled": self.compiled,
                "ccache": self.ccache, "error_excerpt": self.error_excerpt,
                "warnings": [w.to_dict() for w in self.warnings]}

    @classmethod
    def from_dict(cls, d: dict) -> "BuildResult":
        return cls(ok=d["ok"], seconds=d["seconds"], returncode=d.get("returncode", 0),
                   out=Path(d["out"]) if d.get("out") else None, log=Path(d["log"]),
                   image=Path(d["image"]) if d.get("image") else None,
                   targets=tuple(d.get("targets", DEFAULT_TARGETS)),
                   compiled=d.get("compiled", 0), ccache=d.get("ccache", {}),
                   error_excerpt=d.get("error_excerpt", ""),
                   warnings=[W.CompilerWarning.from_dict(w) for w in d.get("warnings", [])])


def have_ccache() -> bool:
    return shutil.which("ccache") is not None


def installed_wrapper() -> Path:
    """CCWRAP copied into the cache under a name made of its content: the CC=
    command line (which kbuild records for every object, and which is part
    of a build's key) is then the same for every clone of the repository,
    wherever it lives, and a clone reuses the builds another one made."""
    import hashlib
    from slabconv.paths import cache_dir
    data = CCWRAP.read_bytes()
    dst = cache_dir("bin") / f"ccwrap-{hashlib.sha256(data).hexdigest()[:12]}.sh"
    if not dst.is_file() or dst.read_bytes() != data:
        tmp = dst.with_name(f"{dst.name}.tmp{os.getpid()}")
        tmp.write_bytes(data)
        tmp.replace(dst)
    return dst


def compiler(use_ccache: Optional[bool] = None) -> str:
    """The CC= value: the diagnostics wrapper around (ccache) gcc."""
    if use_ccache is None:
        use_ccache = have_ccache()
    return f"sh {installed_wrapper()} " + ("ccache gcc" if use_ccache else "gcc")


def build_env(src: Path, out: Path) -> dict:
    env = dict(os.environ)
    env.update(REPRO_ENV)
    env["LC_ALL"] = "C"                         # ASCII quotes in diagnostics
    env.pop("LANG", None)
    env.pop("LANGUAGE", None)
    env.setdefault("CCACHE_DIR", str(cache_dir("ccache")))
    env.setdefault("CCACHE_NOHASHDIR", "1")     # O= dirs differ between trees
    common = os.path.commonpath([str(src), str(out)])
    if common != "/":
        env.setdefault("CCACHE_BASEDIR", common)
    for var in ("ARCH", "CROSS_COMPILE", "KBUILD_OUTPUT", "KCONFIG_CONFIG", "O", "C", "V", "W"):
        env.pop(var, None)
    return env


def build_jobs(jobs: int) -> int:
    """make -j: $SLABCONV_JOBS (make's JOBS=, default nproc) when set,
    else what the caller asked for."""
    env = os.environ.get("SLABCONV_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise SlabconvError(f"SLABCONV_JOBS={env!r} (JOBS=) is not a number", exit_code=2)
    return max(1, jobs)


def make_args(src: Path, out: Path, arch: str, jobs: int, *, use_ccache=None,
              nice: bool = True) -> list:
    jobs = build_jobs(jobs)
    cc = compiler(use_ccache)
    host = "ccache gcc" if (use_ccache if use_ccache is not None else have_ccache()) else "gcc"
    cmd = ["nice", "-n", "10"] if nice and shutil.which("nice") else []
    return cmd + ["make", "-C", str(src), f"O={out}", f"ARCH={arch}", f"-j{jobs}",
                  f"CC={cc}", f"HOSTCC={host}"]


def ccache_counters(env: dict) -> dict:
    if not have_ccache():
        return {}
    try:
        cp = subprocess.run(["ccache", "--print-stats"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {}
    stats = {}
    for line in cp.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].strip().isdigit():
            stats[parts[0]] = int(parts[1])
    hits = stats.get("direct_cache_hit", 0) + stats.get("preprocessed_cache_hit", 0)
    return {"hits": hits, "misses": stats.get("cache_miss", 0)}


def _is_step(line: str, kinds=("CC", "AS", "CC [M]")) -> bool:
    if not line.startswith("  "):
        return False
    head = line[2:10].rstrip()
    return head in kinds


def _mmss(sec: float) -> str:
    return f"{int(sec // 60)}m{int(sec % 60):02d}s"


def progress_line(label: str, count: int, elapsed: float, total: Optional[int],
                  cold: bool = True) -> str:
    """'label: N of ~M objects compiled, 3m10s, about 4m00s left' for a
    build from scratch whose .config was counted before; without a total
    for the first one, and for an incremental build (make decides)."""
    if not total:
        return f"{label}: {count} objects compiled, {_mmss(elapsed)}" + (
            " (no total yet: the first build of this configuration)" if cold else "")
    line = f"{label}: {count} of ~{total} objects compiled, {_mmss(elapsed)}"
    if 0 < count < total:
        line += f", about {_mmss(elapsed / count * (total - count))} left"
    return line


def _objects_file() -> Path:
    return cache_dir("build") / "objects.json"


def config_digest(out: Path) -> str:
    import hashlib
    return hashlib.sha256((Path(out) / ".config").read_bytes()).hexdigest()[:16]


def expected_objects(out: Path) -> Optional[int]:
    """How many objects a build from scratch of this .config compiled last
    time (any tree, any run): the total the progress line counts against."""
    import json
    try:
        return json.loads(_objects_file().read_text()).get(config_digest(out))
    except (OSError, ValueError):
        return None


def record_objects(out: Path, compiled: int) -> None:
    import json
    f = _objects_file()
    try:
        d = json.loads(f.read_text()) if f.is_file() else {}
        d[config_digest(out)] = compiled
        tmp = f.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
        tmp.replace(f)
    except (OSError, ValueError):
        pass


def run_make(cmd: list, *, env: dict, log_path: Path, label: str,
             every: float = PROGRESS_EVERY, total: Optional[int] = None,
             cold: bool = False) -> tuple:
    """Run make, writing its output to log_path; progress on stderr every
    `every` seconds, against `total` objects when it is known.  Returns
    (returncode, objects compiled, seconds)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    count = [0]
    done = threading.Event()

    def ticker():
        while not done.wait(every):
            slog.info("verify", progress_line(label, count[0], time.monotonic() - start, total,
                                              cold))

    with open(log_path, "w", encoding="utf-8", errors="replace", buffering=1) as logf:
        logf.write("# " + " ".join(map(str, cmd)) + "\n")
        logf.flush()
        try:
            proc = subprocess.Popen(list(map(str, cmd)), env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", bufsize=1)
        except FileNotFoundError as e:
            raise SlabconvError(f"cannot run make: {e}", exit_code=3)
        t = threading.Thread(target=ticker, daemon=True)
        t.start()
        try:
            for line in proc.stdout:
                logf.write(line)
                if _is_step(line):
                    count[0] += 1
            rc = proc.wait()
        except BaseException:
            proc.terminate()        # make passes SIGTERM on to the compilers it runs
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        finally:
            done.set()
    return rc, count[0], time.monotonic() - start


def collect_warnings(src: Path, out: Path, log_text: str = "") -> list:
    """The warnings of the build in `out`: the per-object diagnostics files,
    then the log's warnings that those do not account for."""
    roots = [str(src), str(out), os.path.realpath(src), os.path.realpath(out)]
    captured = []
    files = []
    for dirpath, dirnames, filenames in os.walk(out):
        dirnames.sort()
        for f in filenames:
            if f.endswith(DIAG_SUFFIX):
                files.append(os.path.join(dirpath, f))
    for f in sorted(files):
        try:
            text = Path(f).read_text(errors="replace")
        except OSError:
            continue
        if text.strip():
            captured.extend(W.parse_log(text, roots))
    residual = W.new_warnings(captured, W.parse_log(log_text, roots),
                              key=W.loose_key) if log_text else []
    return captured + residual


def error_excerpt(log_text: str, max_errors: int = 3, context: int = 6) -> str:
    """The first compiler/linker errors with file:line and a few lines after."""
    lines = log_text.splitlines()
    picks = []
    i = 0
    err = re.compile(r"(^[^\s:][^:]*:\d+:(\d+:)? (fatal )?error: )|"
                     r"(undefined reference to )|(^ld: .*(error|cannot|multiple definition))|"
                     r"(^\S+: No such file or directory)|(No rule to make target)")
    while i < len(lines) and len(picks) < max_errors:
        if err.search(lines[i]):
            block = []
            if i > 0 and ("In function" in lines[i - 1] or "At top level" in lines[i - 1]):
                block.append(lines[i - 1])
            block.append(lines[i])
            j = i + 1
            while j < len(lines) and j <= i + context:
                nxt = lines[j]
                if _is_step(nxt, kinds=("CC", "AS", "LD", "AR", "CC [M]", "HOSTCC", "GEN")) \
                        or nxt.startswith("make") or err.search(nxt):
                    break
                block.append(nxt)
                j += 1
            picks.append("\n".join(block))
            i = j
        else:
            i += 1
    if picks:
        return "\n".join(picks)
    tail = [ln for ln in lines if ln.strip()][-25:]
    return "\n".join(tail)


_C_COMPILE = re.compile(r"^(?:saved)?cmd_\S+ := .*\s-c\s.*\.c\s*(?:;|$)", re.M)


def c_compiles(out: Path) -> dict[str, str]:
    """The C compiles build directory `out` recorded: object (relative to
    out, e.g. "mm/slub.o") -> the text of its .cmd file (kbuild's command
    and the dependency list fixdep wrote).  Modules' .mod.o and assembler
    objects are not C compiles.  Read afresh on each call: a caller that
    asks often keeps the result while the directory does not change."""
    found = {}
    for root, dirs, names in os.walk(out):
        dirs.sort()
        for n in sorted(names):
            if not (n.startswith(".") and n.endswith(".o.cmd")) or n.endswith(".mod.o.cmd"):
                continue
            p = Path(root, n)
            try:
                text = p.read_text(errors="replace")
            except OSError:
                continue
            if _C_COMPILE.search(text):
                found[str((p.parent / n[1:-4]).relative_to(out))] = text
    return found


def image_path(out: Path, arch: str) -> Path:
    return Path(out) / "arch" / _ARCH_DIR.get(arch, arch) / "boot" / "bzImage"


def build(src, out, *, targets=DEFAULT_TARGETS, jobs: int = 2, arch: str = "x86_64",
          config: Optional[str] = None, label: Optional[str] = None,
          log: Optional[Path] = None, use_ccache: Optional[bool] = None,
          quiet: bool = False, keep_going: bool = False) -> BuildResult:
    """Build `targets` of the source tree `src` in O=`out` (configured already,
    or `config` names a configuration of verify.kconfig to apply first).
    quiet: no start/end lines on stderr (progress every PROGRESS_EVERY s stays).
    keep_going: `make -k`, so that every target that can be built is (the
    errors of each failing object are in the log)."""
    src, out = Path(src).resolve(), Path(out).resolve()
    if shutil.which("make") is None:
        raise SlabconvError("'make' not found; install the Debian package 'make'", exit_code=3)
    if shutil.which("gcc") is None:
        raise SlabconvError("'gcc' not found; install the Debian package 'gcc'", exit_code=3)
    if config is not None:
        from . import kconfig
        arch = kconfig.config_arch(config)
        kconfig.configure_named(src, out, config)
    if not (out / ".config").is_file():
        raise SlabconvError(f"{out} is not configured (no .config); "
                            "run verify.kconfig.configure() first", exit_code=2)
    targets = tuple(targets)
    label = label or out.name
    log_path = Path(log) if log else out / LOG_NAME
    env = build_env(src, out)
    if use_ccache is None:
        use_ccache = have_ccache()
    cmd = make_args(src, out, arch, jobs, use_ccache=use_ccache) + \
        (["-k"] if keep_going else []) + list(targets)
    before = ccache_counters(env)
    if not quiet:
        slog.info("verify", f"{label}: make {' '.join(targets)} in {out} (-j{jobs}"
                            f"{', ccache' if use_ccache else ''})")
    cold = not (out / "vmlinux.o").exists() and not any((out / "mm").glob("*.o"))
    rc, compiled, seconds = run_make(cmd, env=env, log_path=log_path, label=label,
                                     total=expected_objects(out) if cold else None, cold=cold)
    if rc == 0 and cold and compiled:
        record_objects(out, compiled)
    after = ccache_counters(env)
    cc = {k: after[k] - before.get(k, 0) for k in after} if after else {}
    text = log_path.read_text(errors="replace")
    ok = rc == 0
    img = image_path(out, arch)
    res = BuildResult(
        ok=ok, seconds=seconds, warnings=collect_warnings(src, out, text), log=log_path,
        image=img if ok and "bzImage" in targets and img.is_file() else None,
        error_excerpt="" if ok else error_excerpt(text), out=out, targets=targets,
        returncode=rc, compiled=compiled, ccache=cc)
    if not quiet:
        slog.info("verify", f"{label}: {'built' if ok else 'FAILED'} in {seconds:.0f}s, "
                            f"{compiled} objects compiled"
                            + (f" (ccache {cc['hits']} hits, {cc['misses']} misses)" if cc else "")
                            + f", {len(res.warnings)} warnings")
    return res
