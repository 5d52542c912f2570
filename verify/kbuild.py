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

Distributed builds: with DISTCC_HOSTS set (make's DISTCC=), ccache stays in
front and hands its misses to distcc (CCACHE_PREFIX, plain mode:
preprocessing stays local), so CC= and every .cmd file are those of a local
build (the O= directories and build keys are shared with local builds) and
the compiler's diagnostics come back through the same wrapper.  A remote
compile that prints anything or fails is compiled again here
(verify/distccwrap.sh, ccache's prefix): a remote gcc sees preprocessed text,
whose diagnostics can differ, so the gates see what a local build prints.
distcc's own messages go to slabconv-distcc.log in O=, never into the
diagnostics; make -j is sized to the farm (distcc -j) unless JOBS= says
otherwise; each host is checked once per run to answer with the local gcc's
version.
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

from base import arches, log as slog
from base.log import SlabconvError
from base.paths import cache_dir
from . import kconfig, warnings as W


CCWRAP = Path(__file__).resolve().parent / "ccwrap.sh"
DISTCCWRAP = Path(__file__).resolve().parent / "distccwrap.sh"
DIAG_SUFFIX = ".diag-slabconv"
LOG_NAME = "slabconv-build.log"
# arches.IMAGE ("bzImage") stands for the architecture's image target
# (arm64: Image): build() asks make for arches.get(arch).targets(targets).
DEFAULT_TARGETS = (arches.IMAGE, "modules_prepare")
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
    distcc: dict = field(default_factory=dict)   # a farm build: hosts, jobs, local fallbacks
                                                 # and recompiles (distcc_counts)

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
                "ccache": self.ccache, "distcc": self.distcc,
                "error_excerpt": self.error_excerpt,
                "warnings": [w.to_dict() for w in self.warnings]}

    @classmethod
    def from_dict(cls, d: dict) -> "BuildResult":
        return cls(ok=d["ok"], seconds=d["seconds"], returncode=d.get("returncode", 0),
                   out=Path(d["out"]) if d.get("out") else None, log=Path(d["log"]),
                   image=Path(d["image"]) if d.get("image") else None,
                   targets=tuple(d.get("targets", DEFAULT_TARGETS)),
                   compiled=d.get("compiled", 0), ccache=d.get("ccache", {}),
                   distcc=d.get("distcc", {}),
                   error_excerpt=d.get("error_excerpt", ""),
                   warnings=[W.CompilerWarning.from_dict(w) for w in d.get("warnings", [])])


def have_ccache() -> bool:
    return shutil.which("ccache") is not None


def installed_wrapper(wrapper: Path = CCWRAP, mode: int = 0o644) -> Path:
    """CCWRAP copied into the cache under a name made of its content: the CC=
    command line (which kbuild records for every object, and which is part
    of a build's key) is then the same for every clone of the repository,
    wherever it lives, and a clone reuses the builds another one made."""
    import hashlib
    data = wrapper.read_bytes()
    dst = cache_dir("bin") / f"{wrapper.stem}-{hashlib.sha256(data).hexdigest()[:12]}.sh"
    if not dst.is_file() or dst.read_bytes() != data or (dst.stat().st_mode & 0o777) != mode:
        tmp = dst.with_name(f"{dst.name}.tmp{os.getpid()}")
        tmp.write_bytes(data)
        tmp.chmod(mode)
        tmp.replace(dst)
    return dst


def compiler(use_ccache: Optional[bool] = None, arch: str = "x86_64") -> str:
    """The CC= value: the diagnostics wrapper around (ccache) gcc, the
    architecture's cross gcc for a cross build (base/arches.py)."""
    if use_ccache is None:
        use_ccache = have_ccache()
    gcc = arches.get(arch).compiler
    return f"sh {installed_wrapper()} " + (f"ccache {gcc}" if use_ccache else gcc)


DISTCC_LOG_NAME = "slabconv-distcc.log"
_FALLBACK_RE = re.compile(r"failed to distribute|running locally instead|"
                          r"could not connect|connection refused", re.I)
_probed: dict = {}          # DISTCC_HOSTS -> None (ok) or the error, once per process


def distcc_hosts() -> str:
    """The farm: $DISTCC_HOSTS (make's DISTCC=host1,host2 sets it), "" when
    the builds are local."""
    return " ".join(os.environ.get("DISTCC_HOSTS", "").split())


def _host_specs(hosts: str) -> list:
    """The host entries of a DISTCC_HOSTS value (options such as --randomize
    and zeroconf left out)."""
    return [h for h in hosts.split() if not h.startswith(("-", "+"))]


def _gcc_ident(obj: Path) -> str:
    """The compiler's identification in an object's .comment section
    ("GCC: (Debian 12.2.0-14) 12.2.0"): written by the gcc that compiled it."""
    data = obj.read_bytes()
    m = re.search(rb"GCC: \([^)]*\) [^\0]+", data)
    return m.group(0).decode(errors="replace") if m else ""


def check_farm(hosts: str, gcc: str = "gcc") -> None:
    """Each host of the farm compiles a probe with the local gcc's version
    (its .comment section names the gcc that made it); raise a SlabconvError
    naming the host otherwise.  Different gcc versions give different
    warnings: the gates would compare apples with oranges.  `gcc`: the
    build's compiler (a cross build's, base/arches.py), which every host
    must have too.  Once per process, host list and compiler."""
    key = hosts if gcc == "gcc" else f"{hosts} ({gcc})"
    if key in _probed:
        if _probed[key]:
            raise SlabconvError(_probed[key], exit_code=3)
        return
    import tempfile
    err = None
    with tempfile.TemporaryDirectory(prefix="slabconv-distcc-") as d:
        c = Path(d, "probe.c")
        c.write_text("int slabconv_probe(int x) { return x + 1; }\n")
        local = subprocess.run([gcc, "-c", str(c), "-o", str(Path(d, "local.o"))],
                               capture_output=True, text=True)
        want = _gcc_ident(Path(d, "local.o")) if local.returncode == 0 else ""
        for h in _host_specs(hosts):
            o = Path(d, "remote.o")
            o.unlink(missing_ok=True)
            env = dict(os.environ, DISTCC_HOSTS=h, DISTCC_FALLBACK="0",
                       DISTCC_LOG=str(Path(d, "distcc.log")))
            try:
                cp = subprocess.run(["distcc", gcc, "-c", str(c), "-o", str(o)], env=env,
                                    capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                err = f"distcc host {h} did not answer a probe compile in 120 s"
                break
            if cp.returncode != 0 or not o.is_file():
                log = Path(d, "distcc.log")
                why = (log.read_text(errors="replace") if log.is_file() else cp.stderr).strip()
                err = (f"distcc host {h} could not compile a probe (DISTCC_HOSTS={hosts!r}):\n"
                       + "\n".join(why.splitlines()[-5:]))
                break
            got = _gcc_ident(o)
            if got != want:
                err = (f"distcc host {h} compiles with {got or 'an unknown compiler'!r}, "
                       f"this machine with {want!r}: the warning gates need the same gcc "
                       "on every host (same Debian gcc package version)")
                break
    _probed[key] = err
    if err:
        raise SlabconvError(err, exit_code=3)


def farm_jobs(hosts: str) -> int:
    """make -j for a farm: what distcc says it can run at once (the sum of
    the hosts' /LIMIT slots, 4 a host without one), at least this machine's
    processors."""
    local = os.cpu_count() or 1
    try:
        cp = subprocess.run(["distcc", "-j"], env=dict(os.environ, DISTCC_HOSTS=hosts),
                            capture_output=True, text=True, timeout=30)
        return max(local, int(cp.stdout.strip()))
    except (OSError, ValueError, subprocess.SubprocessError):
        return local


def require_farm(gcc: str = "gcc") -> str:
    """The farm's host list, checked: distcc and ccache installed, every host
    answering with the local version of `gcc` (the build's compiler).  ""
    when the builds are local."""
    hosts = distcc_hosts()
    if not hosts:
        return ""
    if shutil.which("distcc") is None:
        raise SlabconvError("DISTCC_HOSTS is set but 'distcc' is not found; install the "
                            "Debian package 'distcc'", exit_code=3)
    if not have_ccache():
        raise SlabconvError("DISTCC_HOSTS is set but 'ccache' is not found; distributed "
                            "builds go through ccache (CCACHE_PREFIX): install the "
                            "Debian package 'ccache'", exit_code=3)
    check_farm(hosts, gcc)
    return hosts


def distcc_counts(out: Path) -> dict:
    """From the build's distcc log in O=: compiles distcc ran locally because
    a host failed, and compiles made again here because the remote one
    printed diagnostics or failed (verify/distccwrap.sh)."""
    f = Path(out) / DISTCC_LOG_NAME
    try:
        lines = f.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    again = sum(1 for ln in lines if ln.startswith("slabconv: diagnostics, compiled locally"))
    fell = sum(1 for ln in lines if not ln.startswith("slabconv:") and _FALLBACK_RE.search(ln))
    return {"local_fallbacks": fell, "local_recompiles": again}


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
    hosts = distcc_hosts()
    if hosts:
        # ccache in front; its misses compiled by distcc (plain mode: the
        # preprocessor runs here, the remote gcc compiles the .i and sends
        # back the object and its diagnostics).  CC= is unchanged, so are the
        # .cmd files and build keys.
        env["DISTCC_HOSTS"] = hosts
        env["CCACHE_PREFIX"] = str(installed_wrapper(DISTCCWRAP, 0o755))
        # distcc's own messages (a host down, a fallback) to a log of the
        # build, not to stderr, where ccache would cache them and the
        # wrapper would keep them as the object's diagnostics.
        env["DISTCC_LOG"] = str(Path(out) / DISTCC_LOG_NAME)
        # a compile error is the source's, not the host's: not compiled twice
        env.setdefault("DISTCC_SKIP_LOCAL_RETRY", "1")
        # ccache's depend mode: on a miss ccache does not preprocess the file
        # itself (distcc does, once); the key is made from the compiler's
        # dependency file (kbuild's -Wp,-MMD).  This machine's share of a
        # compile, measured on mm/: 0.37 -> 0.22 CPU seconds an object.
        if "CCACHE_NODEPEND" not in env:
            env.setdefault("CCACHE_DEPEND", "1")
    return env


def build_jobs(jobs: int, farm: bool = True) -> int:
    """make -j: $SLABCONV_JOBS (make's JOBS=, default nproc, or unset with a
    farm) when set; else with a farm (DISTCC_HOSTS) sized to it (farm_jobs),
    at least what the caller asked for; else what the caller asked for."""
    env = os.environ.get("SLABCONV_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise SlabconvError(f"SLABCONV_JOBS={env!r} (JOBS=) is not a number", exit_code=2)
    hosts = distcc_hosts() if farm else ""
    if hosts:
        return max(jobs, farm_jobs(hosts))
    return max(1, jobs)


def make_args(src: Path, out: Path, arch: str, jobs: int, *, use_ccache=None,
              nice: bool = True, farm: bool = True) -> list:
    jobs = build_jobs(jobs, farm)
    cc = compiler(use_ccache, arch)
    host = "ccache gcc" if (use_ccache if use_ccache is not None else have_ccache()) else "gcc"
    cmd = ["nice", "-n", "10"] if nice and shutil.which("nice") else []
    return cmd + ["make", "-C", str(src), f"O={out}", *arches.get(arch).make_vars(),
                  f"-j{jobs}", f"CC={cc}", f"HOSTCC={host}"]


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


def progress_line(label: str, count: int, elapsed: float, total: Optional[int],
                  cold: bool = True) -> str:
    """'label: N of ~M objects compiled, 3m10s, about 4m00s left' for a
    build from scratch whose .config was counted before; without a total
    for the first one, and for an incremental build (make decides)."""
    if not total:
        return f"{label}: {count} objects compiled, {slog.duration(elapsed)}" + (
            " (no total yet: the first build of this configuration)" if cold else "")
    line = f"{label}: {count} of ~{total} objects compiled, {slog.duration(elapsed)}"
    if 0 < count < total:
        line += f", about {slog.duration(elapsed / count * (total - count))} left"
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
    return arches.get(arch).image_path(out)


def build(src, out, *, targets=DEFAULT_TARGETS, jobs: int = 2, arch: str = "x86_64",
          config: Optional[str] = None, label: Optional[str] = None,
          log: Optional[Path] = None, use_ccache: Optional[bool] = None,
          quiet: bool = False, keep_going: bool = False,
          estimate: Optional[int] = None) -> BuildResult:
    """Build `targets` of the source tree `src` in O=`out` (configured already,
    or `config` names a configuration of verify.kconfig to apply first).
    quiet: no start/end lines on stderr (progress every PROGRESS_EVERY s stays).
    keep_going: `make -k`, so that every target that can be built is (the
    errors of each failing object are in the log).
    estimate: the objects a build from scratch of this configuration compiles
    (verify/configs.toml `objects`), the progress total until this machine
    has counted a build of its own .config (expected_objects())."""
    src, out = Path(src).resolve(), Path(out).resolve()
    if shutil.which("make") is None:
        raise SlabconvError("'make' not found; install the Debian package 'make'", exit_code=3)
    if config is not None:
        arch = kconfig.config_arch(config)
    a = arches.get(arch)
    for tool, pkg in (("gcc", "gcc"), (a.compiler, a.toolchain_package)):
        if shutil.which(tool) is None:
            raise SlabconvError(f"'{tool}' not found; install the Debian package '{pkg}' "
                                f"(sh scripts/install-deps.sh build)", exit_code=3)
    if config is not None:
        kconfig.configure_named(src, out, config)
    if not (out / ".config").is_file():
        raise SlabconvError(f"{out} is not configured (no .config); "
                            "run verify.kconfig.configure() first", exit_code=2)
    targets = tuple(targets)
    make_targets = a.targets(targets)
    label = label or out.name
    log_path = Path(log) if log else out / LOG_NAME
    hosts = require_farm(a.compiler)
    env = build_env(src, out)
    if use_ccache is None:
        use_ccache = have_ccache()
    if hosts and not use_ccache:
        env.pop("CCACHE_PREFIX", None)      # no ccache in this build: a local one
        hosts = ""
    cmd = make_args(src, out, arch, jobs, use_ccache=use_ccache, farm=bool(hosts)) + \
        (["-k"] if keep_going else []) + list(make_targets)
    before = ccache_counters(env)
    if hosts:
        (out / DISTCC_LOG_NAME).unlink(missing_ok=True)
    njobs = build_jobs(jobs, bool(hosts))
    if not quiet:
        slog.info("verify", f"{label}: make {' '.join(make_targets)} in {out} (-j{njobs}"
                            f"{', ccache' if use_ccache else ''}"
                            f"{', distcc: ' + hosts if hosts else ''})")
    cold = not (out / "vmlinux.o").exists() and not any((out / "mm").glob("*.o"))
    rc, compiled, seconds = run_make(cmd, env=env, log_path=log_path, label=label,
                                     total=(expected_objects(out) or estimate) if cold else None,
                                     cold=cold)
    if rc == 0 and cold and compiled and set(DEFAULT_TARGETS) <= set(targets):
        record_objects(out, compiled)       # a whole kernel's count, not prepare's or a few objects
    after = ccache_counters(env)
    cc = {k: after[k] - before.get(k, 0) for k in after} if after else {}
    text = log_path.read_text(errors="replace")
    ok = rc == 0
    img = image_path(out, arch)
    res = BuildResult(
        ok=ok, seconds=seconds, warnings=collect_warnings(src, out, text), log=log_path,
        image=img if ok and arches.IMAGE in targets and img.is_file() else None,
        error_excerpt="" if ok else error_excerpt(text), out=out, targets=targets,
        returncode=rc, compiled=compiled, ccache=cc,
        distcc=dict(hosts=hosts, jobs=njobs, **distcc_counts(out)) if hosts else {})
    if hosts and res.distcc["local_fallbacks"]:
        slog.info("verify", f"{label}: {res.distcc['local_fallbacks']} compiles ran locally: "
                            f"a distcc host failed (see {out / DISTCC_LOG_NAME})")
    if not quiet:
        dc = res.distcc
        slog.info("verify", f"{label}: {'built' if ok else 'FAILED'} in {seconds:.0f}s, "
                            f"{compiled} objects compiled"
                            + (f" (ccache {cc['hits']} hits, {cc['misses']} misses)" if cc else "")
                            + (f" (distcc: {dc['local_recompiles']} with diagnostics compiled "
                               "again here)" if dc.get("local_recompiles") else "")
                            + f", {len(res.warnings)} warnings")
    return res
