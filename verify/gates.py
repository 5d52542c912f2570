"""All of `slabconv verify`'s checks together: one human summary, one JSON report.

verify runs, on the series applied with git am (cli/checks.py):
checkpatch on every patch (verify/checkpatch.py), page_slab() and the
slab helpers on a value that can be NULL at every patch
(verify/nullcheck.py), per configuration the
baseline and patched kernels (new compiler warnings, sparse before and after
per file: verify/__init__.py), every patch on its own per bisect
configuration (verify/bisect.py), the changed lines each build compiled
(verify/compiled.py), the files that used a slab member of struct page
(verify/field_users.py), the residue gate (verify/residue.py) and struct
slab's layout asserts on x86_64 and i386 with and without MEMCG
(verify/layout.py); and, as a report that the verdict does not depend on,
the readability of each patch's changed functions (verify/readability.py).
Each check prints its own detailed report as it ends and fills its field
of `Gates`, the one result; `verdict()` alone computes pass/fail per check
and the problem list, `summary()` is the one summary printed last,
`to_dict()` the JSON report (`write()`: runs/verify-<version>.json) and
`records()` its parts that report/results.py records per series for the
review and the mail.  A check that was not run is listed with why (an
option said so), never left out silently.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from base import atomic
from base.log import duration
from . import bisect

# The parts of the JSON report recorded per series (records()): record name -> key.
RECORDS = {"bisect": "bisect", "compiled-lines": "compiled_lines", "field-users": "field_users",
           "residue": "residue", "layout": "layout", "checkpatch": "checkpatch",
           "nullcheck": "nullcheck", "messages": "messages", "whitespace": "whitespace"}
VERDICT_KEYS = ("ok", "kernel", "source", "patches", "seconds", "status", "problems", "not_run")
CHECKS = ("checkpatch", "messages", "whitespace", "nullcheck", "builds", "per-patch", "object-code", "runtime",
          "compiled-lines", "field-users", "residue", "layout")


def sparse_per_file(sr) -> list:
    """[(file, baseline count, patched count, new)] of a SparseResult; the
    files sparse checked, in order."""
    if sr is None:
        return []
    files = list(dict.fromkeys(list(sr.patched.files) + list(sr.baseline.files)))
    base = Counter(w.file for w in sr.baseline.warnings)
    pat = Counter(w.file for w in sr.patched.warnings)
    new = Counter(w.file for w in sr.new)
    for f in list(base) + list(pat):
        if f not in files:
            files.append(f)
    return [(f, base[f], pat[f], new[f]) for f in files]


@dataclass
class Gates:
    """The one result of `slabconv verify`: every check fills its field (or
    says in not_run why it did not run); verdict() alone decides."""
    kernel: str
    source: str
    patches: int
    builds: list = field(default_factory=list)     # verify.VerifyResult, the primary first
    bisect: Optional[object] = None                # verify.bisect.BisectResult
    compiled: Optional[object] = None              # verify.compiled.Report
    coverage_failed: dict = field(default_factory=dict)   # config -> why its coverage build failed
    field_users: Optional[dict] = None
    field_users_none: str = "struct page keeps its slab members"   # why None: nothing to prove
    residue: Optional[object] = None               # verify.residue.ResidueResult
    residue_gated: list = field(default_factory=list)   # NOT allowed uses in gated files
    residue_error: str = ""                        # why the residue check did not run
    layout: Optional[object] = None                # verify.layout.LayoutResult
    checkpatch: Optional[object] = None            # verify.checkpatch.CheckpatchResult
    nullcheck: Optional[object] = None             # verify.nullcheck.NullcheckResult
    messages: Optional[object] = None              # verify.messages.MessagesResult
    whitespace: Optional[object] = None            # verify.whitespace.WhitespaceResult
    readability: Optional[object] = None           # verify.readability.ReadabilityResult (a report)
    not_run: dict = field(default_factory=dict)    # check -> why
    seconds: float = 0.0
    report: Optional[Path] = None                  # runs/verify-<version>.json
    stamp: Optional[dict] = None                   # the series the results are recorded for

    @property
    def primary(self):
        """The first configuration's build (verify.VerifyResult)."""
        return self.builds[0] if self.builds else None

    @property
    def ok(self) -> bool:
        return not self.verdict()[1]

    @property
    def problems(self) -> list:
        return self.verdict()[1]

    def status(self) -> dict:
        """check -> 'ok' | 'FAIL' | 'not run: why' | 'nothing to prove (why)'."""
        return self.verdict()[0]

    def verdict(self) -> tuple:
        """(check -> status, problems): the only place verify passes or fails.
        A check that FAILs names at least one problem; no problem: PASS."""
        status, problems = {}, []

        def judge(name, ok, lines=(), missing="the check did not run"):
            if name in self.not_run:
                status[name] = f"not run: {self.not_run[name]}"
                return
            status[name] = "ok" if ok else "FAIL"
            if not ok:
                problems.extend(lines or [f"[{name}] {missing}"])

        for name in ("checkpatch", "messages", "whitespace", "layout"):
            res = getattr(self, name)
            judge(name, res is not None and res.ok,
                  [f"[{name}] {p}" for p in (res.problems if res is not None else [])])
        n = self.nullcheck
        judge("nullcheck", n is not None and n.ok,
              [f"[nullcheck] {p}" for p in (n.problems() if n is not None else [])])
        judge("builds", bool(self.builds) and all(b.ok for b in self.builds),
              [f"[{b.config}] {p}" for b in self.builds if not b.ok
               for p in (b.problems or ["the check failed"])], "no kernel was built")
        b = self.bisect
        cs = [] if b is None else b.configs
        if b is None:
            judge("per-patch", False)
        else:       # per-patch: every patch builds; its problems name code and boots too
            status["per-patch"] = "ok" if all(c.first_failure is None and (
                c.ok or c.boot_failures or c.code_failures) for c in cs) else "FAIL"
            if not b.ok:
                problems.extend(b.problems or ["[per-patch] the check failed"])
        status["object-code"] = "not run: per-patch not run" if b is None else \
            "ok" if not any(c.code_failures for c in cs) else "FAIL"
        v = None if b is None else b.variability
        status["variability"] = "not run: per-patch not run" if b is None else \
            f"not run: {self.not_run.get('variability', 'not asked for')}" if v is None else \
            "ok" if v.ok else "FAIL"
        rt = [c for c in cs if c.runtime]
        status["runtime"] = "not run: no runtime configuration" if not rt else \
            "ok" if not any(c.boot_failures for c in rt) else "FAIL"
        judge("compiled-lines", self.compiled is not None and self.compiled.ok,
              self._compiled_problems())
        fu = self.field_users
        if "field-users" not in self.not_run and fu is None:
            status["field-users"] = f"nothing to prove ({self.field_users_none})"
        else:
            judge("field-users", not fu["left"] if fu else False,
                  [f"slab member(s) of struct page still used after the series in "
                   f"{', '.join(sorted(fu['left']))}"] if fu else [])
        gated = self.residue_gated
        judge("residue", self.residue is not None and not gated,
              [f"[residue] the check did not run: {self.residue_error or 'no report'}"]
              if self.residue is None else
              [f"{len(gated)} struct page use(s) NOT allowed in converted file(s) "
               f"{', '.join(sorted({c.finding.file for c in gated}))}"])
        return {name: status[name] for name in CHECKS}, problems

    def _compiled_problems(self) -> list:
        c = self.compiled
        if c is None:
            return []
        out = [f"[{cfg}] {msg}" for cfg, msg in self.coverage_failed.items()]
        if c.missed:
            out.append(f"{c.missed} changed code line(s) compiled by no build")
        elif c.errors and not self.coverage_failed:
            out.append(f"changed lines: {len(c.errors)} preprocessing error(s): {c.errors[0]}")
        return out or ["the changed-lines check failed"]

    def unproven(self, not_asked=()) -> dict:
        """check -> status, for every check that did not run and pass: each
        check not in `not_asked` must be "ok" ("nothing to prove", a check
        that did not run, a FAIL are all listed), and each in `not_asked`
        must be "not run" (a check that ran when it was not asked for is
        listed too).  Empty: every check of the verdict ran and passed."""
        out = {}
        for name, st in self.status().items():
            if name in not_asked:
                if not st.startswith("not run"):
                    out[name] = st
            elif st != "ok":
                out[name] = st
        return out

    # ---- the human summary ---------------------------------------------------------

    def summary(self) -> str:
        status, problems = self.verdict()
        verdict = "FAIL" if problems else "PASS"
        L = [f"==== verify: Linux {self.kernel} ({self.source}), {self.patches} patches: "
             f"{verdict} ({duration(self.seconds)}) ===="]
        L.append("  " + "; ".join(f"{k} {v}" for k, v in status.items()))
        L += self._checkpatch_lines()
        L += ([self.messages.summary()] if self.messages is not None
              else [f"messages: {self.not_run.get('messages', 'not run')}"])
        L += ([self.whitespace.summary()] if self.whitespace is not None
              else [f"whitespace: {self.not_run.get('whitespace', 'not run')}"])
        L += ([self.readability.summary() + "  (a report: the verdict does not depend on it)"]
              if self.readability is not None
              else [f"readability: {self.not_run.get('readability', 'not run')}"])
        L += self._nullcheck_lines()
        L += self._build_lines() + self._bisect_lines()
        L += self._compiled_lines()
        L += self._field_user_lines() + self._residue_lines() + self._layout_lines()
        if problems:
            L.append("problems:")
            L.extend(f"  {p.splitlines()[0]}" for p in problems)
        L.append(f"verify: {verdict}"
                 + (f"; JSON report {self.report}" if self.report else ""))
        return "\n".join(L)

    def _checkpatch_lines(self) -> list:
        c = self.checkpatch
        if c is None:
            return [f"checkpatch: {self.not_run.get('checkpatch', 'not run')}"]
        L = [f"checkpatch: {'OK' if c.ok else 'FAIL'}: {c.count('ERROR')} error(s), "
             f"{c.count('WARNING')} warning(s) in {len(c.patches)} patches ({c.script})"]
        for p in c.patches:
            e, w = p.errors, p.warnings
            if not (e or w):
                L.append(f"  {p.patch[:4]} clean")
                continue
            kinds = ", ".join(f"{f.level[0]}:{f.type}{' (inherited)' if f.inherited else ''}"
                              for f in e + w)
            L.append(f"  {p.patch[:4]} {len(e)} error(s), {len(w)} warning(s): {kinds}")
            for f in e:
                L.append(f"       {f.describe()}")
        return L

    def _nullcheck_lines(self) -> list:
        n = self.nullcheck
        if n is None:
            return [f"nullcheck: {self.not_run.get('nullcheck', 'not run')}"]
        return n.summary_text().splitlines()

    def _build_lines(self) -> list:
        if not self.builds:
            return [f"builds: {self.not_run.get('builds', 'not run')}"]
        L = ["builds: baseline -> patched kernel per configuration; compiler warnings; "
             "sparse before -> after per file"]
        for b in self.builds:
            if b.patched is None or not b.patched.ok:
                L.append(f"  {b.config:<13} FAIL  patched kernel does not build")
                continue
            base = (f"baseline {duration(b.baseline.seconds)}"
                    f"{' (reused)' if b.baseline_reused else ''}")
            L.append(f"  {b.config:<13} {'OK  ' if b.ok else 'FAIL'}  {base}, patched "
                     f"{duration(b.patched.seconds)} ({b.patched.compiled} objects); compiler "
                     f"warnings {len(b.baseline.warnings)} -> {len(b.patched.warnings)}, "
                     f"{len(b.new_warnings)} new")
            rows = sparse_per_file(b.sparse)
            if rows:
                L.append(f"  {'':13}       sparse: " + ", ".join(
                    f"{f} {n0} -> {n1}" + (f" ({new} NEW)" if new else "")
                    for f, n0, n1, new in rows))
            elif b.sparse is None:
                L.append(f"  {'':13}       sparse: not run")
            if b.code is not None:
                ch = b.code["objects_changed"]
                L.append(f"  {'':13}       code vs baseline: vmlinux {b.code['vmlinux']}; "
                         f"{len(ch)} of {b.code['objects_compared']} objects with changed code"
                         + (": " + ", ".join(f"{o['object']} ({o['delta']:+d})" for o in ch[:6])
                            if ch else ""))
            if b.sparse_not_built:
                L.append(f"  {'':13}       sparse: not built in {b.config}: "
                         f"{', '.join(b.sparse_not_built)}")
        return L

    def _bisect_lines(self) -> list:
        b = self.bisect
        if b is None:
            return [f"per-patch builds: {self.not_run.get('per-patch', 'not run')}"]
        per = "; ".join(f"{c.config} {'OK' if c.ok else 'FAIL'} {len(c.patches)}/{len(b.commits)}"
                        for c in b.configs)
        L = [f"per-patch builds: {per} (seconds per patch; cached: the time it took "
             f"when it was built)"]
        for c in b.configs:
            f = c.first_failure
            if f is not None:
                L.append(f"  {c.config}: first failing patch {f.index}: {f.subject}: {f.problem}")
            if c.coded:
                L.append(f"  {c.config}: object code: {c.code_unchanged}/{len(c.coded)} "
                         "patches change no "
                         f"function's code, {len(c.code_failures)} change code their entry does "
                         "not declare")
            if c.runtime:
                L.append(f"  {c.config}: runtime: {c.kernels_passed}/{len(c.own_kernels)} "
                         "kernels passed the in-guest tests")
        v = b.variability
        L.append("  " + (v.summary(per_patch=False).replace("\n", "\n  ") if v is not None else
                         f"variability: not run: {self.not_run.get('variability', 'not asked for')}"))
        return L + bisect.times_table(b)

    def _compiled_lines(self) -> list:
        c = self.compiled
        if c is None:
            return [f"compiled lines: {self.not_run.get('compiled-lines', 'not run')}"]
        total = sum(f.code for f in c.files)
        L = [f"compiled lines: {total - c.missed - c.allowed} of {total} changed code lines "
             f"compiled by a build ({', '.join(c.builds)}), {c.allowed} allowed not to be, "
             f"{c.missed} NOT compiled"]
        L += [f"  NOT compiled {f.file}:{n}: {t.strip()}" for f in c.files
              for n, t in sorted(f.missed.items())][:20]
        L += [f"  ERROR {e}" for e in c.errors][:5]
        return L

    def _field_user_lines(self) -> list:
        fu = self.field_users
        if "field-users" in self.not_run:
            return [f"field users: not run: {self.not_run['field-users']}"]
        if fu is None:
            return [f"field users: {self.field_users_none}; nothing to prove"]
        built = sum(1 for r in fu["files"] if r["built_by"])
        L = [f"field users: {len(fu['files'])} file(s) used a slab member of struct page, "
             f"{built} compiled after the series, {len(fu['left'])} file(s) still use one"]
        L += [f"  LEFT in {f}" for f in fu["left"]]
        return L

    def _residue_lines(self) -> list:
        r = self.residue
        if "residue" in self.not_run:
            return [f"residue: not run: {self.not_run['residue']}"]
        if r is None:
            return [f"residue: FAIL: the check did not run: {self.residue_error or 'no report'}"]
        L = [f"residue: struct page uses left in the slab code ({len(r.results)} uses, "
             f"{len(r.not_allowed)} NOT allowed, {len(self.residue_gated)} of them in a gated "
             f"file)"]
        for f in r.files:
            n, ok, bad = r.counts(f)
            L.append(f"  {f:<26} {n:4d} uses {ok:4d} allowed {bad:4d} NOT allowed")
        return L

    def _layout_lines(self) -> list:
        lr = self.layout
        if lr is None:
            return [f"layout: {self.not_run.get('layout', 'not run')}"]
        return ["layout: struct slab's asserts per architecture and MEMCG"] + \
            [c.line() for c in lr.combos]

    # ---- the JSON report -------------------------------------------------------------

    def to_dict(self) -> dict:
        """The JSON report (runs/verify-<version>.json); records() are its parts."""
        def d(x):
            return None if x is None else x.to_dict()
        status, problems = self.verdict()
        return {
            "ok": not problems, "kernel": self.kernel, "source": self.source,
            "patches": self.patches, "seconds": round(self.seconds, 1),
            "status": status, "problems": problems, "not_run": self.not_run,
            "checkpatch": d(self.checkpatch),
            "nullcheck": d(self.nullcheck),
            "messages": d(self.messages),
            "whitespace": d(self.whitespace),
            "readability": d(self.readability),
            "builds": {b.config: dict(b.to_dict(), sparse_per_file=[
                {"file": f, "baseline": n0, "patched": n1, "new": new}
                for f, n0, n1, new in sparse_per_file(b.sparse)]) for b in self.builds},
            "bisect": d(self.bisect),
            "compiled_lines": d(self.compiled),
            "field_users": self.field_users,
            "residue": d(self.residue),
            "residue_error": self.residue_error,
            "residue_gated": [f"{c.finding.file}:{c.finding.line} {c.finding.function} "
                              f"{c.finding.kind} {c.finding.text}" for c in self.residue_gated],
            "layout": d(self.layout),
        }

    def records(self) -> dict:
        """name -> data of the results report/results.py records for the series:
        each a part of to_dict() (RECORDS), "verify" its verdict and
        "verify-<config>" each build; the review and the mail read these."""
        d = json.loads(json.dumps(self.to_dict(), default=str))
        out = {"verify": {k: d[k] for k in VERDICT_KEYS}}
        out.update({f"verify-{c}": b for c, b in d["builds"].items()})
        out.update({name: d[key] for name, key in RECORDS.items() if d[key] is not None})
        return out

    def write(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.report = path
        atomic.write_text(path, json.dumps(self.to_dict(), indent=1, default=str) + "\n")
        return path

