"""The per-patch check's results (per patch, per configuration, the whole
check) and their summary text."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from base.log import duration
from . import warnings as W
from .objdiff.expect import stale as objdiff_stale


def _stale(code: dict) -> list:
    """The declared changes of a patch's object-code check that no longer
    happen (verify.objdiff.expect.stale())."""
    return [m for m in code.get("missing", []) if objdiff_stale(m)]


@dataclass
class PatchResult:
    index: int                        # 1-based position in the series
    commit: str
    subject: str
    files: list                       # the files this patch changes
    action: str = ""                  # objects | objects+link | full | none | cached
    targets: list = field(default_factory=list)
    reason: str = ""
    ok: bool = False
    seconds: float = 0.0              # spent in this run
    built_seconds: float = 0.0        # when the result was made (cached: earlier)
    compiled: int = 0
    rebuilt_files: list = field(default_factory=list)   # written into the tree (if != files)
    not_built: list = field(default_factory=list)
    new_warnings: list = field(default_factory=list)
    problem: str = ""
    error_excerpt: str = ""
    log: Optional[str] = None
    boot: Optional[dict] = None       # runtime.PatchBoot.to_dict() (runtime configurations)
    code: Optional[dict] = None       # objdiff.PatchCode.to_dict(): the object-code check
    kernel_seconds: float = 0.0       # runtime bisect: linking the kernel, the guest modules

    @property
    def cached(self) -> bool:
        return self.action == "cached"

    def title(self, n: int) -> str:
        return f"[{self.index}/{n}] {self.subject}"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "index", "commit", "subject", "files", "action", "targets", "reason", "ok",
            "compiled", "rebuilt_files", "not_built", "problem", "error_excerpt", "log",
            "boot", "code")}
        d["kernel_seconds"] = round(self.kernel_seconds, 2)
        d["seconds"] = round(self.seconds, 2)
        d["built_seconds"] = round(self.built_seconds, 2)
        d["new_warnings"] = [w.to_dict() for w in self.new_warnings]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PatchResult":
        d = {"index": 0, "commit": "", "subject": "", "files": [], **d}
        d["new_warnings"] = [W.CompilerWarning.from_dict(w) for w in d.get("new_warnings") or []]
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class ConfigResult:
    config: str
    ok: bool = False
    patches: list = field(default_factory=list)      # PatchResult, in order, up to the failure
    n: int = 0                                       # patches in the series
    baseline_ok: bool = True
    baseline_reused: bool = False
    baseline_seconds: float = 0.0
    setup_seconds: float = 0.0
    seconds: float = 0.0
    problem: str = ""
    build_dir: Optional[Path] = None

    runtime: bool = False                            # each patch's kernel booted
    boot_seconds: float = 0.0

    @property
    def first_failure(self) -> Optional[PatchResult]:
        return next((p for p in self.patches if not p.ok), None)

    @property
    def coded(self) -> list:
        """Patches the object-code check compared (their build compiled code)."""
        return [p for p in self.patches if p.code is not None]

    @property
    def code_unchanged(self) -> int:
        """Of those, the patches that changed no function's code."""
        return sum(not p.code["diffs"] for p in self.coded)

    @property
    def own_kernels(self) -> list:
        """Patches booted with a kernel of their own (the others have the
        previous patch's kernel)."""
        return [p for p in self.patches if p.boot and not p.boot.get("same_as")]

    @property
    def kernels_passed(self) -> int:
        return sum(p.boot["verdict"] == "pass" for p in self.own_kernels)

    @property
    def code_failures(self) -> list:
        """Patches whose object code changed where the manifest expects none,
        or did not change where it declares a change (a stale declaration)."""
        return [p for p in self.patches if p.code and (p.code.get("unexpected")
                                                       or _stale(p.code))]

    @property
    def boot_failures(self) -> list:
        """Patches whose kernel booted and failed (oops, BUG, WARNING, a test)."""
        return [p for p in self.patches if p.boot and p.boot["verdict"] not in ("pass", "same")]

    @property
    def code_declared(self) -> list:
        """Patches whose code changed, every change as their entry declares."""
        return [p for p in self.coded if p.code["diffs"] and not p.code.get("unexpected")
                and not _stale(p.code)]

    @property
    def patch_seconds(self) -> float:
        return sum(p.seconds for p in self.patches)

    def code_line(self) -> str:
        """The object-code check in one line ('' when nothing was compared)."""
        if not self.coded:
            return ""
        bad = [p for p in self.coded if p.code.get("unexpected")]
        stale = [p for p in self.coded if _stale(p.code)]
        return (f"{self.config}: object code: {self.code_unchanged} of {len(self.coded)} "
                f"patches change no function's code; {len(self.code_declared)} change it as "
                f"their entry declares; {len(bad)} change code their entry does not declare"
                + (": " + ", ".join(f"patch {p.index}" for p in bad[:8]) if bad else "")
                + (f"; {len(stale)} declare a change that no longer happens: "
                   + ", ".join(f"patch {p.index}" for p in stale[:8]) if stale else ""))

    def runtime_line(self) -> str:
        """The runtime bisect in one line ('' when this configuration booted nothing)."""
        if not self.runtime:
            return ""
        failed = self.boot_failures
        return (f"{self.config}: runtime: {self.kernels_passed} of {len(self.own_kernels)} "
                "kernels passed the in-guest tests"
                + (": failed " + ", ".join(f"patch {p.index}" for p in failed[:8])
                   if failed else ""))

    @classmethod
    def from_dict(cls, d: dict) -> "ConfigResult":
        """A recorded result (to_dict()) back, for the reports: its counts are
        this class's, not counted again by each reader."""
        return cls(config=d.get("config", "?"), ok=bool(d.get("ok")),
                   patches=[PatchResult.from_dict(p) for p in d.get("patches") or []],
                   n=d.get("patches_total", 0), baseline_ok=d.get("baseline_ok", True),
                   baseline_reused=d.get("baseline_reused", False),
                   baseline_seconds=d.get("baseline_seconds", 0.0),
                   setup_seconds=d.get("setup_seconds", 0.0), seconds=d.get("seconds", 0.0),
                   problem=d.get("problem", ""),
                   build_dir=Path(d["build_dir"]) if d.get("build_dir") else None,
                   runtime=bool(d.get("runtime")), boot_seconds=d.get("boot_seconds", 0.0))

    def to_dict(self) -> dict:
        f = self.first_failure
        return {"config": self.config, "ok": self.ok, "patches_total": self.n,
                "patches_checked": len(self.patches),
                "first_failure": None if f is None else {
                    "index": f.index, "commit": f.commit, "subject": f.subject,
                    "problem": f.problem, "error_excerpt": f.error_excerpt, "log": f.log},
                "problem": self.problem, "baseline_ok": self.baseline_ok,
                "runtime": self.runtime, "boot_seconds": round(self.boot_seconds, 1),
                "boot_failures": [p.index for p in self.boot_failures],
                "code_failures": [p.index for p in self.code_failures],
                "baseline_reused": self.baseline_reused,
                "baseline_seconds": round(self.baseline_seconds, 1),
                "setup_seconds": round(self.setup_seconds, 1),
                "patch_seconds": round(self.patch_seconds, 1),
                "seconds": round(self.seconds, 1),
                "build_dir": str(self.build_dir) if self.build_dir else None,
                "patches": [p.to_dict() for p in self.patches]}


@dataclass
class BisectResult:
    ok: bool
    configs: list                      # ConfigResult
    commits: list                      # (sha, subject)
    base: str = ""
    seconds: float = 0.0
    report: Optional[Path] = None
    summary: str = ""
    variability: Optional[object] = None    # variability_builds.VarResult (None: not run)

    @property
    def problems(self) -> list:
        out = list(self.variability.problems) if self.variability is not None else []
        for c in self.configs:
            f = c.first_failure
            if f is not None:
                out.append(f"patch {f.index}/{len(self.commits)} \"{f.subject}\" fails "
                           f"in config {c.config}: {f.problem}")
            elif not c.ok and not c.boot_failures and not c.code_failures:
                out.append(f"config {c.config}: {c.problem}")
            for p in c.code_failures:
                for u in p.code["unexpected"][:5]:
                    out.append(f"patch {p.index}/{len(self.commits)} \"{p.subject}\" changes the code "
                               f"of {u['object']}: {u['function']} ({u['change']}, "
                               f"{u['old_size']} -> {u['new_size']} bytes, "
                               f"{u['new_size'] - u['old_size']:+d}) in config {c.config}; "
                               f"its manifest entry expects no code change there")
                for m in _stale(p.code)[:5]:
                    how = ("its code is the same" if m["reason"] == "unchanged"
                           else "no compared object has it")
                    out.append(f"patch {p.index}/{len(self.commits)} \"{p.subject}\" declares a "
                               f"code change of {m['function']}"
                               + (f" in {m['object']}" if m["object"] else "")
                               + f" ({m['why']}), but in config {c.config} {how}: the "
                               f"declaration is stale; remove it from the manifest entry "
                               f"or find why the change no longer happens")
            for p in c.boot_failures:
                b = p.boot
                first = b["failures"][0].splitlines()[0] if b["failures"] else b["verdict"]
                out.append(f"patch {p.index}/{len(self.commits)} \"{p.subject}\" builds but its "
                           f"kernel fails at run time in config {c.config}: {b['verdict']}: {first}")
        return out

    def to_dict(self) -> dict:
        return {"ok": self.ok, "base": self.base, "seconds": round(self.seconds, 1),
                "problems": self.problems,
                "commits": [{"commit": s, "subject": t} for s, t in self.commits],
                "configs": [c.to_dict() for c in self.configs],
                "variability": None if self.variability is None else self.variability.to_dict()}

    def brief(self) -> dict:
        """For other reports: what failed, per configuration times, where the report is."""
        return {"ok": self.ok, "problems": self.problems, "report": str(self.report),
                "seconds": round(self.seconds, 1),
                "configs": {c.config: {"ok": c.ok, "seconds": round(c.seconds, 1),
                                       "patches_checked": len(c.patches)}
                            for c in self.configs},
                "variability": None if self.variability is None else {
                    k: v for k, v in self.variability.to_dict().items() if k != "patches"}}


EXCERPT_LINES_SUMMARY = 12
_ACTION = {"objects": "obj", "objects+link": "obj+ld", "full": "full", "none": "skip",
           "cached": "cached"}


def summary_text(r: BisectResult) -> str:
    n = len(r.commits)
    L = [f"bisect: {'OK' if r.ok else 'FAIL'}: {n} patches x {len(r.configs)} configs "
         f"in {duration(r.seconds, 1)}"]
    for c in r.configs:
        f = c.first_failure
        base = "baseline reused" if c.baseline_reused else \
            f"baseline built {duration(c.baseline_seconds, 1)}"
        cached = sum(p.cached for p in c.patches)
        extra = f"{base}" + (f", {cached} cached" if cached else "")
        state = "OK  " if c.ok else "FAIL"
        L.append(f"  {c.config:<13} {state} {len(c.patches)}/{n} patches  "
                 f"{duration(c.patch_seconds, 1)} ({extra}; total {duration(c.seconds, 1)})")
        if f is not None:
            L.append(f"    first failing patch {f.index}/{n}: {f.subject}")
            L.append(f"    {f.problem}")
            for ln in f.error_excerpt.splitlines()[:12]:
                L.append(f"      {ln}")
            for w in _uniq(f.new_warnings)[:8]:
                L.append(f"      NEW {w.format()}")
            if f.log:
                L.append(f"      (log: {f.log})")
        elif not c.ok and not c.boot_failures:
            L.extend("    " + ln for ln in c.problem.splitlines()[:14])
        coded = c.coded
        if coded:
            L.append(f"    object code: {c.code_unchanged}/{len(coded)} patches change no "
                     "function's code"
                     + (f"; {len(c.code_failures)} with changes their entry does not declare"
                        " or declared changes that no longer happen"
                        if any(_stale(p.code) for p in c.code_failures) else
                        f"; {len(c.code_failures)} with changes their entry does not declare"
                        if c.code_failures else ""))
            for p in coded:
                if not p.code["diffs"] and not p.code["missing"]:
                    continue
                bad = {(u["object"], u["function"]) for u in p.code["unexpected"]}
                L.append(f"    patch {p.index}/{n} {p.subject}:")
                for d in p.code["diffs"][:4]:
                    for ch in d.get("changed", [])[:6]:
                        tag = "UNEXPECTED" if (d["object"], ch["function"]) in bad else "expected"
                        L.append(f"      {tag} {d['object']}: {ch['function']}: "
                                 f"{ch['new_size'] - ch['old_size']:+d} bytes "
                                 f"({ch['old_size']} -> {ch['new_size']})")
                for m in p.code["missing"][:3]:
                    tag = "STALE, expected but unchanged" if objdiff_stale(m) else \
                        "expected but unchanged"
                    L.append(f"      {tag}: {m['function']} ({m.get('why', '')})")
        if c.runtime:
            booted = c.own_kernels
            L.append(f"    runtime: {c.kernels_passed}/{len(booted)} "
                     f"kernels passed the in-guest tests ({len(c.patches) - len(booted)} patches "
                     f"without a kernel of their own), boots {duration(c.boot_seconds, 1)}")
            for p in c.boot_failures[:3]:
                L.append(f"    patch {p.index}/{n} {p.subject}: {p.boot['verdict']}")
                for f in p.boot["failures"][:2]:
                    L.append(f"      {f.splitlines()[0]}")
                for ln in p.boot["excerpt"].splitlines()[:EXCERPT_LINES_SUMMARY]:
                    L.append(f"      | {ln}")
                L.append(f"      (console: {p.boot['log']})")
    L.extend(times_table(r))
    if r.variability is not None:
        L.extend("  " + ln for ln in r.variability.summary().splitlines())
    if r.report:
        L.append(f"  report {r.report}")
    return "\n".join(L)


def times_table(r: BisectResult) -> list:
    """The time per patch per configuration, one line per patch (a patch
    that passed in an earlier run: `cached` and the time it took then)."""
    L = []
    width = min(52, max([len(s) for _, s in r.commits] + [15]))
    L.append(f"  {'#':>3} {'patch':<{width}}" + "".join(f" {c.config:>14}" for c in r.configs))
    by_cfg = [{p.index: p for p in c.patches} for c in r.configs]
    for i, (_, subj) in enumerate(r.commits, 1):
        cells = []
        for m in by_cfg:
            p = m.get(i)
            if p is None:
                cells.append(f" {'-':>14}")
            elif p.cached:
                cells.append(f" {'cached':>6} {p.built_seconds:6.1f}s")
            else:
                tag = _ACTION.get(p.action, p.action) if p.ok else "FAIL"
                cells.append(f" {tag:>6} {p.seconds:6.1f}s")
        s = subj if len(subj) <= width else subj[:width - 3] + "..."
        L.append(f"  {i:>3} {s:<{width}}" + "".join(cells))
    L.append(f"  {'':>3} {'total (patches)':<{width}}"
             + "".join(f" {duration(c.patch_seconds, 1):>14}" for c in r.configs))
    return L


def _uniq(ws: list) -> list:
    seen, out = set(), []
    for w in ws:
        if w.key not in seen:
            seen.add(w.key)
            out.append(w)
    return out
