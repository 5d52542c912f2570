"""The "no new sparse warnings" gate.

    run_sparse(src, out, ["mm/slub.c"])  ->  SparseRun (warnings, log, seconds)
    gate(base_src, base_out, pat_src, pat_out, files)  ->  SparseResult (.new)

sparse runs through Kbuild (`make O=out C=2 mm/slub.o`: C=2 checks the file
whether or not the object needs recompiling, with exactly the flags of the
build), so `out` must be a configured (ideally built) O= directory of `src`.
Only .c files can be checked: for a header, pass the .c files that include
it.  Diagnostics are keyed on file + message (line numbers stripped) and the
gate reports the multiset difference patched - baseline.

sparse on 5.10 already warns about mm/slub.c (3 "context imbalance"
warnings): the gate is on NEW warnings, not on zero.
"""
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from base import log as slog
from base.log import SlabconvError
from base.proc import require_tool
from . import kbuild, warnings as W


@dataclass
class SparseRun:
    ok: bool
    seconds: float
    files: list
    warnings: list
    log: Path
    error_excerpt: str = ""

    def to_dict(self) -> dict:
        return {"ok": self.ok, "seconds": round(self.seconds, 1), "files": self.files,
                "log": str(self.log), "error_excerpt": self.error_excerpt,
                "warnings": [w.to_dict() for w in self.warnings]}

    @classmethod
    def from_dict(cls, d: dict) -> "SparseRun":
        return cls(ok=d["ok"], seconds=d["seconds"], files=d["files"], log=Path(d["log"]),
                   error_excerpt=d.get("error_excerpt", ""),
                   warnings=[W.CompilerWarning.from_dict(w) for w in d["warnings"]])


@dataclass
class SparseResult:
    ok: bool                        # both runs worked and nothing new
    new: list
    baseline: SparseRun
    patched: SparseRun
    seconds: float
    gone: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "seconds": round(self.seconds, 1),
                "new": [w.to_dict() for w in self.new],
                "gone": [w.to_dict() for w in self.gone],
                "baseline": self.baseline.to_dict(), "patched": self.patched.to_dict()}


def check_files(src: Path, files) -> list:
    """Validate the list: relative .c paths that exist in src."""
    out = []
    for f in files:
        f = str(f).strip()
        while f.startswith("./"):
            f = f[2:]
        if not f:
            continue
        if not f.endswith(".c"):
            raise SlabconvError(f"sparse gate: '{f}' is not a .c file (for a header, "
                                "pass the .c files that include it)", exit_code=2)
        if f.startswith("/") or ".." in Path(f).parts:
            raise SlabconvError(f"sparse gate: '{f}' must be relative to the source tree",
                                exit_code=2)
        if not (Path(src) / f).is_file():
            raise SlabconvError(f"sparse gate: {f} does not exist in {src}", exit_code=2)
        out.append(f)
    return out


def sparse_section(log_text: str) -> str:
    """The lines sparse printed: after a Kbuild "  CHECK   file" line, up to the
    next Kbuild step or make line (the make runs with -j1, so this is exact;
    it leaves out the warnings of gcc if an object gets recompiled)."""
    keep = []
    inside = False
    for line in log_text.splitlines():
        if line.startswith("  CHECK "):
            inside = True
            continue
        if kbuild._STEP_LINE.match(line) or line.startswith("make"):
            inside = False
            continue
        if inside:
            keep.append(line)
    return "\n".join(keep)


def checked(log_text: str, src: Path, out: Path) -> set:
    """The files (relative to src) that Kbuild's "  CHECK   <file>" lines say
    sparse checked; a relative path is the make's, run in `out`."""
    src, out = Path(src).resolve(), Path(out).resolve()
    done = set()
    for line in log_text.splitlines():
        if not line.startswith("  CHECK "):
            continue
        p = Path(line.split(None, 1)[1].strip())
        p = (p if p.is_absolute() else out / p).resolve()
        try:
            done.add(str(p.relative_to(src)))
        except ValueError:
            done.add(str(p))
    return done


def run_sparse(src, out, files, *, arch: str = "x86_64", label: Optional[str] = None,
               log: Optional[Path] = None) -> SparseRun:
    require_tool("sparse", "sparse")
    src, out = Path(src).resolve(), Path(out).resolve()
    files = check_files(src, files)
    if not (out / ".config").is_file():
        raise SlabconvError(f"sparse gate: {out} is not configured", exit_code=2)
    label = label or out.name
    log_path = Path(log) if log else out / "slabconv-sparse.log"
    objs = [f[:-2] + ".o" for f in files]
    cmd = kbuild.make_args(src, out, arch, 1) + ["C=2", "CHECK=sparse", *objs]
    env = kbuild.build_env(src, out)
    slog.info("verify", f"{label}: sparse on {', '.join(files)}")
    rc, _, seconds = kbuild.run_make(cmd, env=env, log_path=log_path,
                                     label=f"{label} sparse")
    text = log_path.read_text(errors="replace")
    roots = [str(src), str(out)]
    ws = W.parse_sparse(sparse_section(text), roots)
    if rc != 0:
        return SparseRun(ok=False, seconds=seconds, files=files, warnings=ws, log=log_path,
                         error_excerpt=kbuild.error_excerpt(text))
    # a make that exits 0 without running sparse on a file (no CHECK line:
    # C= or CHECK= not honoured, the object not in this configuration) has
    # not checked it: no warnings is not a pass
    unchecked = [f for f in files if f not in checked(text, src, out)]
    if unchecked:
        return SparseRun(ok=False, seconds=seconds, files=files, warnings=ws, log=log_path,
                         error_excerpt=f"{log_path}: make exited 0 but sparse did not check "
                                       f"{', '.join(unchecked)} (no \"  CHECK\" line for "
                                       f"{'it' if len(unchecked) == 1 else 'them'}; is the "
                                       f"object built in this configuration?)")
    return SparseRun(ok=True, seconds=seconds, files=files, warnings=ws, log=log_path)


def compare(baseline: SparseRun, patched: SparseRun, seconds: float = 0.0) -> SparseResult:
    new = W.new_warnings(baseline.warnings, patched.warnings)
    gone = W.gone_warnings(baseline.warnings, patched.warnings)
    return SparseResult(ok=baseline.ok and patched.ok and not new, new=new, gone=gone,
                        baseline=baseline, patched=patched, seconds=seconds)


def gate(base_src, base_out, pat_src, pat_out, files, *, arch: str = "x86_64",
         baseline: Optional[SparseRun] = None) -> SparseResult:
    """sparse on both trees; `baseline` may be a cached SparseRun of the same files."""
    t0 = time.monotonic()
    if baseline is None or sorted(baseline.files) != sorted(files):
        baseline = run_sparse(base_src, base_out, files, arch=arch, label="baseline")
    patched = run_sparse(pat_src, pat_out, files, arch=arch, label="patched")
    res = compare(baseline, patched, time.monotonic() - t0)
    for r, name in ((baseline, "baseline"), (patched, "patched")):
        if not r.ok:
            slog.info("verify", f"sparse run on the {name} tree failed (log {r.log}):\n"
                                f"{r.error_excerpt}")
    slog.info("verify", f"sparse: {len(baseline.warnings)} baseline / "
                        f"{len(patched.warnings)} patched warnings, {len(res.new)} new")
    for w in res.new:
        slog.info("verify", f"  NEW sparse {w.format()}")
        for d in w.details:
            slog.info("verify", f"      {d}")
    return res
