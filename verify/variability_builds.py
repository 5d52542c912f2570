"""The per-patch check's variability builds: every Kconfig symbol that
verify/variability.py finds for a patch's changed lines, flipped, and the
objects that hold those lines built with it.

    from verify import variability_builds as VB
    r = VB.check(repo, commits, deltas, base_sha, out_root, ["slub", "slab"], src, ident)
    r.ok, r.summary(), r.to_dict()          # bisect.json's "variability"

For each patch, each changed C file or header is analysed in the first
configuration of the run that compiles it (its object; for a header, an
object whose .cmd lists it), with the headers that object read.  Each
symbol found is then flipped in that configuration (the base): its
baseline .config, `scripts/config --enable/--disable`, `make
olddefconfig` in a scratch directory, and the value read back.  A flip
Kconfig does not keep is reported with what blocks it (variability.Kconfig)
and not built.  Flips whose .config agree on every symbol found in that
base configuration are one configuration; a flip that agrees with another
configuration of the run on them is that configuration's per-patch build
("covered").

Each remaining configuration gets one build directory for the series,
out_root/var-<base>-<key>-<flip digest>/, made like the per-patch check's
(bisect_tree: a hard-link snapshot of the baseline tree and a copy of its
O=), the flipped .config installed and `make olddefconfig` run there, the
flip confirmed again.  Then, patch after patch, the files that differ
are materialised and the objects holding the lines that found one of its
symbols are built (`make dir/file.o`, through kbuild.build: ccache, and
the distcc farm when there is one).  The other side of each flip, the
symbol as the base has it, is the per-patch check's own build of that
patch (check_series passes its results); run alone (`on_side=None`), an
unflipped directory of the base is built the same way.

Results are kept per commit in each directory's state.json, like the
per-patch check's: a rerun builds only the patches that changed.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import verify as V
from base import atomic, log as slog
from base.log import duration, SlabconvError
from . import compiled, kbuild, kconfig, tree, variability as VA
from .bisect_tree import (O_NAME, STATE_VERSION, Repo, _fresh_tree, _load_state, _save_state,
                          materialise)

NO_RULE = "No rule to make target"


@dataclass
class Flip:
    config: str                # the base configuration
    symbols: dict              # CONFIG_X -> wanted value ("y"/"n"); {}: unflipped
    values: dict = field(default_factory=dict)    # the .config after olddefconfig
    held: bool = True
    why: str = ""              # refused: what blocks it
    covered_by: str = ""       # another configuration of the run has the same values
    dir: Optional[Path] = None
    seconds: float = 0.0       # building it (this run)

    @property
    def label(self) -> str:
        if not self.symbols:
            return f"{self.config} (as configured)"
        return f"{self.config} + " + ", ".join(f"{k}={v}" for k, v in self.symbols.items())

    def to_dict(self) -> dict:
        return {"config": self.config, "flip": self.symbols, "held": self.held,
                "why": self.why, "covered_by": self.covered_by,
                "dir": str(self.dir) if self.dir else None, "seconds": round(self.seconds, 1)}


@dataclass
class PatchVar:
    index: int
    commit: str
    subject: str
    findings: list = field(default_factory=list)      # variability.Finding
    builds: list = field(default_factory=list)        # dicts (see _build_one)
    not_flipped: list = field(default_factory=list)   # {symbol, config, why}
    unanalysed: list = field(default_factory=list)    # {file, why}

    @property
    def failed(self) -> list:
        return [b for b in self.builds if b["status"] == "fail"]

    def to_dict(self) -> dict:
        return {"index": self.index, "commit": self.commit, "subject": self.subject,
                "symbols": VA.symbols_of(self.findings),
                "findings": [f.to_dict() for f in self.findings],
                "builds": self.builds, "not_flipped": self.not_flipped,
                "unanalysed": self.unanalysed}


@dataclass
class VarResult:
    patches: list = field(default_factory=list)       # PatchVar, in order
    flips: list = field(default_factory=list)         # Flip
    n: int = 0
    seconds: float = 0.0
    analysis_seconds: float = 0.0
    build_seconds: float = 0.0
    problem: str = ""
    built: bool = True         # False: the analysis and the flips only
    planned: int = 0           # (flipped directory, patch) builds the flips ask for
    planned_dirs: int = 0      # flipped directories

    @property
    def ok(self) -> bool:
        return not self.problem and not any(p.failed for p in self.patches)

    @property
    def symbols(self) -> list:
        return sorted({f.symbol for p in self.patches for f in p.findings})

    @property
    def builds(self) -> list:
        return [b for p in self.patches for b in p.builds
                if b["flip"] and b["status"] in ("ok", "fail", "cached")]

    @property
    def problems(self) -> list:
        out = [f"variability: {self.problem}"] if self.problem else []
        for p in self.patches:
            for b in p.failed:
                f = b.get("finding") or {}
                err = next((ln.strip() for ln in b["excerpt"].splitlines() if "error:" in ln),
                           b["problem"])
                out.append(f"patch {p.index}/{self.n} \"{p.subject}\" does not build with "
                           f"{b['label']} ({', '.join(b['objects'])}), the symbol found at "
                           f"{f.get('file')}:{f.get('line')}: {f.get('text', '')}: {err}")
        return out

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problem": self.problem, "built": self.built,
                "planned": self.planned, "planned_dirs": self.planned_dirs,
                "symbols": self.symbols,
                "builds": len(self.builds), "seconds": round(self.seconds, 1),
                "analysis_seconds": round(self.analysis_seconds, 1),
                "build_seconds": round(self.build_seconds, 1),
                "flips": [f.to_dict() for f in self.flips],
                "patches": [p.to_dict() for p in self.patches]}

    def summary(self, per_patch: bool = True) -> str:
        n_built = len(self.builds)
        fails = sum(len(p.failed) for p in self.patches)
        refused = {(x["config"], x["symbol"]) for p in self.patches for x in p.not_flipped}
        L = [f"variability: {'OK' if self.ok else 'FAIL'}: {len(self.symbols)} symbols found "
             f"in {sum(1 for p in self.patches if p.findings)} of {self.n} patches; "
             f"{sum(1 for f in self.flips if f.held and not f.covered_by and f.symbols)} flipped "
             f"configurations {'built' if self.built else 'to build'}, {n_built} object builds "
             f"({fails} failed), "
             f"{len(refused)} flips not made; {duration(self.seconds, 1)} (analysis "
             f"{duration(self.analysis_seconds, 1)})"]
        if self.problem:
            L.append(f"  {self.problem}")
        if not self.built:
            L.append(f"  nothing built: the analysis and the flips only (--analyse-only); "
                     f"the builds would be {self.planned} patch builds in "
                     f"{self.planned_dirs} flipped configurations")
        for p in self.patches:
            if not p.findings and not p.unanalysed:
                continue
            syms = VA.symbols_of(p.findings)
            if not per_patch and not p.failed:
                continue
            L.append(f"  patch {p.index}/{self.n} {p.subject}: {len(syms)} symbols: "
                     + ", ".join(syms[:12]) + (" ..." if len(syms) > 12 else ""))
            for b in p.builds:
                if b["status"] == "fail":
                    f = b.get("finding") or {}
                    L.append(f"    FAIL {b['label']}: {' '.join(b['objects'])}")
                    L.append(f"      symbol found at {f.get('file')}:{f.get('line')}: "
                             f"{f.get('text', '')}")
                    L.append(f"      why: {f.get('why', '')}")
                    L.extend("      " + ln for ln in b["excerpt"].splitlines()[:8])
                elif per_patch:
                    L.append(f"    {b['status']:<9} {b['label']}: {' '.join(b['objects'])}")
            if per_patch:
                for x in p.not_flipped[:6]:
                    L.append(f"    not flipped {x['symbol']} in {x['config']}: {x['why']}")
                if len(p.not_flipped) > 6:
                    L.append(f"    ... {len(p.not_flipped) - 6} more not flipped")
                for u in p.unanalysed:
                    L.append(f"    not analysed {u['file']}: {u['why']}")
        return "\n".join(L)


# --------------------------------------------------------------------------

def _at_error(findings: list, log: str):
    """Of `findings`, the first whose file and line a compiler message names
    (`../mm/slub.c:5167:24: ...`), in the order of the messages."""
    by = {(f.file, f.line): f for f in reversed(findings)}
    for m in re.finditer(r"(?:\.\./)?([\w./-]+\.[ch]):(\d+):\d+: ", log):
        f = by.get((m.group(1), int(m.group(2))))
        if f is not None:
            return f
    return None


def _digest(*parts) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:12]


class _Base:
    """A configuration of the run as the base of flips: its baseline build
    (verify's, shared with the per-patch check), what it compiles."""

    def __init__(self, config: str, out_root: Path, src: Path, ident: str, jobs: int):
        self.config, self.arch = config, kconfig.config_arch(config)
        self.key = V.build_key(config, ident, kbuild.DEFAULT_TARGETS, kconfig.tree_version(src))
        base_dir = out_root / f"base-{config}-{self.key}"
        with V.config_lock(out_root, config):
            base_dir.mkdir(parents=True, exist_ok=True)
            res, _ = V._baseline(src, base_dir, self.key, config, self.arch,
                                 kbuild.DEFAULT_TARGETS, jobs)
        self.ok = res.ok
        self.error = "" if res.ok else res.failure_message()
        self.snap = base_dir / "tree"
        self.o = self.snap / O_NAME
        self.values = kconfig.parse_config((self.o / ".config").read_text()) if res.ok else {}
        self.compiles = kbuild.c_compiles(self.o) if res.ok else {}

    def object_for(self, f: str, prefer: list) -> Optional[str]:
        objs = compiled.objects_for(self.o, f, 1, tuple(prefer), self.compiles)
        return objs[0] if objs else None


class _Runner:
    def __init__(self, repo: Repo, commits: list, deltas: dict, base_sha: str, out_root: Path,
                 configs: list, src: Path, ident: str, jobs: int, progress: bool,
                 on_side: Optional[dict], only: Optional[set]):
        self.repo, self.commits, self.deltas, self.base_sha = repo, commits, deltas, base_sha
        self.out_root, self.src, self.ident, self.jobs = out_root, src, ident, jobs
        self.configs, self.progress, self.on_side, self.only = configs, progress, on_side, only
        self.res = VarResult(n=len(commits))
        self.build, self.wanted = True, None
        self._blobs: dict = {}
        self._files: dict = {}         # the baseline's files read, by path

    # ---- reading a commit's files
    def read(self, sha: str, path: str, base: _Base) -> Optional[str]:
        ent = self.deltas[sha].get(path)
        if ent is None:
            p = base.snap / path
            if p not in self._files:
                try:
                    self._files[p] = p.read_text(errors="replace")
                except OSError:
                    self._files[p] = None
            return self._files[p]
        if ent[1] is None:
            return None
        if ent[1] not in self._blobs:
            self._blobs[ent[1]] = self._cat(ent[1]).decode(errors="replace")
        return self._blobs[ent[1]]

    def _cat(self, blob: str) -> bytes:
        """A blob through one `git cat-file --batch` for the run (a git
        process per file costs more than the analysis itself on a busy machine)."""
        if getattr(self, "_batch", None) is None:
            self._batch = subprocess.Popen(["git", "-C", str(self.repo.path), "cat-file",
                                            "--batch"], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE)
        p = self._batch
        p.stdin.write(blob.encode() + b"\n")
        p.stdin.flush()
        head = p.stdout.readline().split()
        if len(head) != 3 or head[1] != b"blob":
            return self.repo.blob(blob)
        data = p.stdout.read(int(head[2]))
        p.stdout.read(1)
        return data

    def close(self) -> None:
        if getattr(self, "_batch", None) is not None:
            self._batch.stdin.close()
            self._batch.wait()
            self._batch = None

    def changed(self, i: int) -> dict:
        if getattr(self, "_diffs", None) is None:
            # every patch's diff from one `git log -p` (commit order kept)
            text = self.repo.git("log", "-p", "-U0", "--no-renames", "--no-color", "--reverse",
                                 "--format=%x00%H", f"{self.base_sha}..{self.commits[-1][0]}",
                                 "--", "*.c", "*.h")
            self._diffs = {}
            for chunk in text.split("\0")[1:]:
                sha, _, body = chunk.partition("\n")
                self._diffs[sha.strip()] = compiled.parse_diff(body)
        return self._diffs.get(self.commits[i][0], {})

    # ---- 1. the analysis
    def analyse(self, bases: list) -> dict:
        """(index, config) -> {symbol: [Finding]}; also fills PatchVar.findings."""
        t0 = time.monotonic()
        series_h = sorted({p for d in self.deltas.values() for p in d if p.endswith(".h")})
        need: dict = {}
        for i, (sha, subject) in enumerate(self.commits):
            pv = PatchVar(i + 1, sha, subject)
            self.res.patches.append(pv)
            if self.only is not None and i + 1 not in self.only:
                continue
            changed = self.changed(i)
            files = sorted(changed)
            for f in files:
                base = obj = None
                for b in bases:
                    obj = b.object_for(f, files)
                    if obj:
                        base = b
                        break
                if base is None:
                    pv.unanalysed.append({"file": f, "why": "no configuration of the run "
                                          f"({', '.join(b.config for b in bases)}) compiles it"})
                    continue
                heads = VA.headers_of(base.compiles.get(obj, "")) + series_h
                found = VA.analyse_patch({f: changed[f]}, lambda p: self.read(sha, p, base),
                                         lambda _f: list(dict.fromkeys(heads)))
                pv.findings.extend(found)
                for fd in found:
                    need.setdefault((i + 1, base.config), {}).setdefault(fd.symbol, []).append(
                        (fd, obj))
            if self.progress and pv.findings:
                slog.info("variability", f"[{i + 1}/{len(self.commits)}] {subject}: "
                          f"{len(VA.symbols_of(pv.findings))} symbols "
                          f"({', '.join(VA.symbols_of(pv.findings)[:8])}"
                          f"{' ...' if len(VA.symbols_of(pv.findings)) > 8 else ''})")
        self.res.analysis_seconds = time.monotonic() - t0
        return need

    # ---- 2. the flips
    def flip(self, base: _Base, sym: str, want: str, scratch: Path, memo: dict) -> Flip:
        kc = VA.Kconfig.read(base.snap, base.arch)
        if not kc.known(sym) or not kc.syms[sym].prompt:
            # no such symbol, or one without a prompt: Kconfig computes it from its
            # defaults and selects whatever .config says (no olddefconfig to ask)
            return Flip(base.config, {sym: want}, dict(base.values), False,
                        kc.why_refused(sym, want, base.values))
        # olddefconfig's answer is kept by the base's .config; the reason is read again
        k = f"{_digest(json.dumps(base.values, sort_keys=True))}:{sym}={want}"
        if k in memo:
            vals, held = memo[k]["values"], memo[k]["held"]
            return Flip(base.config, {sym: want}, vals, held,
                        "" if held else kc.why_refused(sym, want, vals))
        conf = scratch / ".config"
        shutil.copyfile(base.o / ".config", conf)
        cp = subprocess.run(["bash", str(base.snap / "scripts/config"), "--file", str(conf),
                             "--enable" if want == "y" else "--disable", sym],
                            capture_output=True, text=True)
        if cp.returncode != 0:
            raise SlabconvError(f"scripts/config --file {conf} {sym}: {cp.stderr.strip()}")
        cp = subprocess.run(kconfig.make_cmd(base.snap, scratch, base.arch, "olddefconfig"),
                            capture_output=True, text=True)
        if cp.returncode != 0:
            raise SlabconvError(f"make olddefconfig in {scratch} (flip {sym}={want} of "
                                f"{base.config}): {cp.stderr.strip()[-400:]}")
        vals = kconfig.parse_config(conf.read_text())
        got = vals.get(f"CONFIG_{sym}", "n")
        held = (got == "n") if want == "n" else got in ("y", "m")
        f = Flip(base.config, {sym: want}, vals, held,
                 "" if held else kc.why_refused(sym, want, vals))
        memo[k] = {"values": f.values, "held": f.held}
        return f

    def plan(self, bases: list, need: dict) -> dict:
        """(config, symbol) -> the Flip that builds it (None: not flipped,
        the reason in PatchVar.not_flipped)."""
        by_cfg = {b.config: b for b in bases}
        chosen: dict = {}
        for b in bases:
            syms = sorted({s for (i, c), d in need.items() if c == b.config for s in d
                           if self.wanted is None or s in self.wanted})
            if not syms:
                continue
            with V.config_lock(self.out_root, f"var-kconfig-{b.config}"):
                self._plan_base(b, by_cfg, need, syms, chosen)
        return chosen

    def _plan_base(self, b: _Base, by_cfg: dict, need: dict, syms: list, chosen: dict) -> None:
        """The flips of one base configuration, in its scratch directory
        (one run at a time: the lock is the caller's)."""
        scratch = self.out_root / f"var-kconfig-{b.config}-{b.key}"
        scratch.mkdir(parents=True, exist_ok=True)
        memo_p = scratch / "flips.json"
        try:
            memo = json.loads(memo_p.read_text())
        except (OSError, ValueError):
            memo = {}
        relevant = [f"CONFIG_{s}" for s in syms]
        def sig(vals):
            return tuple(vals.get(x, "n") for x in relevant)
        others = {c: sig(o.values) for c, o in by_cfg.items()
                  if c != b.config and o.arch == b.arch and self.on_side is not None}
        groups: dict = {}
        for s in syms:
            want = "n" if b.values.get(f"CONFIG_{s}", "n") in ("y", "m") else "y"
            if self.progress:
                slog.info("variability", f"{b.config}: flipping CONFIG_{s}={want} "
                                         "(scripts/config, olddefconfig)")
            fl = self.flip(b, s, want, scratch, memo)
            if not fl.held:
                chosen[b.config, s] = fl
                continue
            g = sig(fl.values)
            cov = next((c for c, v in others.items() if v == g), "")
            if g in groups:
                groups[g].symbols.update(fl.symbols)
                chosen[b.config, s] = groups[g]
                continue
            fl.covered_by = cov
            groups[g] = fl
            chosen[b.config, s] = fl
        atomic.write_text(memo_p, json.dumps(memo) + "\n")
        for fl in groups.values():
            if fl not in self.res.flips:
                self.res.flips.append(fl)
        self.res.flips.extend(f for f in chosen.values()
                              if not f.held and f not in self.res.flips)

    # ---- 3. the builds
    def build_dir(self, base: _Base, fl: Flip, todo: dict) -> None:
        """Build `todo` ({index: ([objects], [Finding])}) in fl's directory."""
        t0 = time.monotonic()
        fd = _digest(json.dumps(fl.values, sort_keys=True))[:10]
        bdir = self.out_root / f"var-{base.config}-{base.key}-{fd}"
        fl.dir = bdir
        snap, o = bdir / "tree", bdir / "tree" / O_NAME
        state_path = bdir / "state.json"
        key = f"{base.key}-{fd}"
        with V.config_lock(self.out_root, f"var-{base.config}-{fd}"):
            bdir.mkdir(parents=True, exist_ok=True)
            st = _load_state(state_path, key, self.base_sha)
            if st is None or not (o / ".config").is_file():
                state_path.unlink(missing_ok=True)
                tree.remove(snap)
                st = {"version": STATE_VERSION, "key": key, "base": self.base_sha, "delta": {},
                      "dirty": [], "results": {}}
                _fresh_tree(bdir, base.snap)
                if fl.symbols:                   # the unflipped side keeps the base's .config
                    self._install(base, fl, o)
                _save_state(state_path, st, set())
            (bdir / "logs").mkdir(exist_ok=True)
            keep = {c for c, _ in self.commits}
            left_out: dict = {}        # object -> the patch at which kbuild left it out
            for i, (sha, subject) in enumerate(self.commits, 1):
                if i not in todo:
                    continue
                objs, fds = todo[i]
                finding = fds[0]
                kb = [p for p in self.deltas[sha] if p.rsplit("/", 1)[-1].startswith(
                    ("Makefile", "Kbuild", "Kconfig"))]
                if objs and all(x in left_out for x in objs) and not kb:
                    # the flipped configuration does not build them (as at that patch),
                    # and no Makefile or Kconfig changed since: no make to ask
                    pv = self.res.patches[i - 1]
                    pv.builds.append({"config": base.config, "flip": fl.symbols, "objects": objs,
                                      "status": "not built", "seconds": 0.0, "excerpt": "",
                                      "problem": f"not built in this configuration (as at patch "
                                                 f"{left_out[objs[0]]})", "label": fl.label,
                                      "finding": finding.to_dict()})
                    continue
                pv = self.res.patches[i - 1]
                cached = st["results"].get(sha)
                if cached and cached.get("objects") == objs and cached["status"] != "fail":
                    # passed (or not built) at this commit before: a commit id covers its history
                    pv.builds.append(dict(cached, status="cached" if cached["status"] == "ok"
                                          else cached["status"], label=fl.label,
                                          finding=finding.to_dict()))
                    continue
                target = self.deltas[sha]
                rewrite = sorted(p for p in set(st["delta"]) | set(target)
                                 if st["delta"].get(p) != target.get(p))
                rewrite = sorted(set(rewrite) | set(st["dirty"]))
                st["delta"], st["dirty"] = target, rewrite
                _save_state(state_path, st, keep)
                materialise(self.repo, snap, base.snap, rewrite, target)
                logp = bdir / "logs" / f"{sha[:12]}.log"
                t1 = time.monotonic()
                for obj in objs:            # compiled at this patch, never "up to date"
                    (o / obj).unlink(missing_ok=True)
                b = kbuild.build(snap, o, targets=objs, jobs=self.jobs, arch=base.arch,
                                 label=f"variability {fl.label} [{i}/{len(self.commits)}]",
                                 log=logp, quiet=True)
                text = logp.read_text(errors="replace") if logp.is_file() else ""
                # kbuild makes only the objects the configuration lists: one it
                # leaves out (the flip turned off what compiles it) is not built
                absent = [x for x in objs if not (o / x).is_file()]
                status = ("not built" if absent else "ok") if b.ok else \
                    ("not built" if NO_RULE in text else "fail")
                r = {"config": base.config, "flip": fl.symbols, "objects": objs,
                     "status": status, "seconds": round(time.monotonic() - t1, 1),
                     "problem": "" if b.ok else f"make {' '.join(objs)}: exit {b.returncode}",
                     "excerpt": "" if b.ok else b.error_excerpt, "log": str(logp)}
                if status == "not built":
                    left_out.update({x: i for x in (absent or objs)})
                if b.ok:
                    st["dirty"] = []
                st["results"][sha] = dict(r, t=time.time())
                _save_state(state_path, st, keep)
                if status == "fail":           # the finding where gcc stopped, if it is one
                    finding = _at_error(fds, b.error_excerpt + "\n" + text) or finding
                pv.builds.append(dict(r, label=fl.label, finding=finding.to_dict()))
                if self.progress:
                    slog.info("variability", f"{fl.label} [{i}/{len(self.commits)}] {subject} "
                                             f"{r['seconds']:.1f}s {' '.join(objs)}: {status}")
        fl.seconds += time.monotonic() - t0

    def _install(self, base: _Base, fl: Flip, o: Path) -> None:
        """The flipped .config into the copied O=, olddefconfig, and the flip
        confirmed: every symbol of the flip has the value the scratch run gave."""
        (o / ".config").write_text("".join(
            f"{k}={v}\n" if v != "n" else f"# {k} is not set\n" for k, v in fl.values.items()))
        (o / kconfig.STAMP).unlink(missing_ok=True)     # not the table's configuration
        cp = subprocess.run(kconfig.make_cmd(o.parent, o, base.arch, "olddefconfig"),
                            capture_output=True, text=True)
        if cp.returncode != 0:
            raise SlabconvError(f"make olddefconfig in {o}: {cp.stderr.strip()[-400:]}")
        got = kconfig.parse_config((o / ".config").read_text())
        lost = {k: (v, got.get(f"CONFIG_{k}", "n")) for k, v in fl.symbols.items()
                if (got.get(f"CONFIG_{k}", "n") == "n") != (v == "n")}
        if lost:
            raise SlabconvError(f"{o / '.config'}: the flip did not hold: " + ", ".join(
                f"CONFIG_{k} wanted {w}, got {g}" for k, (w, g) in lost.items()))

    def run(self) -> VarResult:
        t0 = time.monotonic()
        bases = []
        for c in self.configs:
            b = _Base(c, self.out_root, self.src, self.ident, self.jobs)
            if not b.ok:
                self.res.problem = f"the baseline of {c} does not build: {b.error}"
                continue
            bases.append(b)
        need = self.analyse(bases)
        chosen = self.plan(bases, need)
        by_cfg = {b.config: b for b in bases}
        work: dict = {}            # id(flip) -> (base, flip, {index: (objects, finding)})
        for (i, c), syms in sorted(need.items()):
            pv = self.res.patches[i - 1]
            for s, found in sorted(syms.items()):
                fl = chosen.get((c, s))
                if fl is None or not fl.held:
                    pv.not_flipped.append({"symbol": s, "config": c,
                                           "why": fl.why if fl else
                                           "not asked for (only " + ", ".join(
                                               sorted(self.wanted or ())) + ")"})
                    continue
                if fl.covered_by:
                    on = (self.on_side or {}).get(fl.covered_by, {}).get(i)
                    pv.builds.append({"config": c, "flip": {s: fl.symbols.get(s)},
                                      "label": fl.label, "objects": sorted({o for _, o in found}),
                                      "status": "covered", "covered_by": fl.covered_by,
                                      "problem": "", "excerpt": "",
                                      "finding": found[0][0].to_dict(),
                                      "on_ok": None if on is None else on.ok})
                    continue
                w = work.setdefault(id(fl), (by_cfg[c], fl, {}))
                objs, fds = w[2].get(i, ([], []))
                w[2][i] = (sorted(set(objs) | {o for _, o in found}), fds + [f for f, _ in found])
        # the unflipped side: the per-patch check's own build, else built here
        if self.on_side is None:
            for (i, c), syms in sorted(need.items()):
                if not any(chosen.get((c, s)) is not None and chosen[c, s].held
                           and not chosen[c, s].covered_by for s in syms):
                    continue
                base = by_cfg[c]
                key = ("on", c)
                if key not in work:
                    on = Flip(c, {}, dict(base.values))
                    self.res.flips.append(on)
                    work[key] = (base, on, {})
                objs = sorted({o for found in syms.values() for _, o in found})
                work[key][2][i] = (objs, [f for found in syms.values() for f, _ in found])
        tb = time.monotonic()
        self.res.planned = sum(len(w[2]) for w in work.values() if w[1].symbols)
        self.res.planned_dirs = sum(1 for w in work.values() if w[1].symbols)
        if not self.build:
            work = {}
            self.res.built = False
        order = sorted(work.values(), key=lambda w: (w[1].symbols != {}, w[1].label))
        for base, fl, todo in order:
            if self.progress:
                slog.info("variability", f"{fl.label}: {len(todo)} patches to build")
            self.build_dir(base, fl, todo)
        if self.on_side is not None:
            for (i, c) in need:
                on = self.on_side.get(c, {}).get(i)
                pv = self.res.patches[i - 1]
                if on is not None and any(b["config"] == c and b["flip"] for b in pv.builds):
                    pv.builds.insert(0, {"config": c, "flip": {}, "label": f"{c} (per-patch build)",
                                         "objects": [t for t in on.targets if t.endswith(".o")],
                                         "status": "ok" if on.ok else "fail-per-patch",
                                         "problem": on.problem, "excerpt": "",
                                         "seconds": round(on.seconds, 1)})
        self.res.build_seconds = time.monotonic() - tb
        self.res.seconds = time.monotonic() - t0
        return self.res


def check(repo, commits: list, deltas: dict, base_sha: str, out_root, configs: list,
          src, ident: str, *, jobs: int = 2, progress: bool = True,
          on_side: Optional[dict] = None, only=None, build: bool = True,
          symbols=None) -> VarResult:
    """The variability builds of the series `commits` (of Repo `repo`, on
    base_sha; `deltas` as check_series has them) in the base
    configurations `configs`.  on_side: config -> {patch index: the
    per-patch check's PatchResult} (the unflipped builds); None: built
    here.  only: the patch numbers to analyse (default: all).  build:
    False: the analysis and the flips only, no object built.  symbols: flip
    and build only these (without CONFIG_); the others found are reported
    as not flipped, "not asked for"."""
    r = _Runner(repo if isinstance(repo, Repo) else Repo(repo), commits, deltas, base_sha,
                Path(out_root).resolve(), list(configs), Path(src).resolve(), ident, jobs,
                progress, on_side, set(only) if only else None)
    r.build = build
    r.wanted = set(symbols) if symbols else None
    try:
        return r.run()
    finally:
        r.close()
