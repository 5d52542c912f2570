"""The last verify, per-patch, residue and boot results of a series, from the cache.

verify and boot leave their results in the cache (report.json per build
directory, bisect.json beside the primary one, summary.json per boot run),
but those files do not say which series they were made from: a later run
with planted defects, or of an older series, writes to the same places.
So the pipeline also records each result under

    $SLABCONV_CACHE/runs/results-<version>/<series id>/<name>.json
        name: verify-<config>, bisect, residue, boot-<config>
        {"series": <series id>, "patches": N, "source": <source id>,
         "recorded": <UTC time>, "data": <the result's JSON>}

where the series id is a digest of the patch files `git am` applied.  Each
series has its own directory: a run on a planted or older series never
overwrites the results of another (records of before that sat directly in
results-<version>/ are still read).  The
review shows a result only when its series id is the reviewed series'
(`find()`); a result recorded for another series is named as such, never
shown as this series'.  Results from before these records existed are
matched by what they can be matched on, and say so: a verify report.json
by the set of files the series changes, bisect.json by the subjects of
its commits, a boot run by the verify build whose image it booted.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from base import atomic, paths


RECORD_DIR = "results-{version}"


def series_id(patches) -> str:
    """A digest of the numbered patch files (names and bytes), in order."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in patches):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def record_dir(version: str, root: Path | None = None) -> Path:
    return (root or paths.cache_root()) / "runs" / RECORD_DIR.format(version=version)


def _series_dir(version: str, series: str, root: Path | None = None) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", str(series)) or "_"
    return record_dir(version, root) / safe


def record(version: str, name: str, stamp: dict, data: dict) -> Path | None:
    """Record one result for the series of `stamp` (series_stamp()).  A
    failure to write is not a failure of the run: None."""
    try:
        d = _series_dir(version, stamp.get("series", ""))
        d.mkdir(parents=True, exist_ok=True)
        out = d / f"{name}.json"
        atomic.write_text(out, json.dumps({**stamp, "recorded": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "data": data}, indent=1) + "\n")
        return out
    except (OSError, TypeError, ValueError):
        return None


def record_boot(version: str, stamp: dict, config: str, res, run_dir: Path) -> Path | None:
    """Record a boot run (boot.BootResult and its run directory's summary.json)."""
    data: dict = {}
    try:
        data = json.loads((Path(run_dir) / "summary.json").read_text())
    except (OSError, ValueError):
        pass
    data.update(passed=bool(res.passed), seconds=round(float(res.seconds), 2),
                run_dir=str(run_dir), ktap=str(res.ktap or ""))
    return record(version, f"boot-{config}", stamp, data)


def series_stamp(patches, source_id: str) -> dict:
    return {"series": series_id(patches), "patches": len(list(patches)), "source": source_id}


# ---------------------------------------------------------------------------
# reading

NOT_RUN = "not run"
THIS = "this series"


@dataclass
class Found:
    """One result as the review shows it."""
    name: str                    # verify-slub, bisect, residue, boot-slab
    status: str                  # THIS or NOT_RUN
    data: dict | None = None     # the result (THIS only)
    how: str = ""                # how it was tied to the series
    recorded: str = ""           # when (record time, else file time)
    path: str = ""               # where it was read
    note: str = ""               # NOT_RUN: what the cache has instead, if anything
    extra: dict = field(default_factory=dict)


def _mtime(p: Path) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(p.stat().st_mtime))


def _load(p: Path) -> dict | None:
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


@dataclass
class Series:
    """What a result is matched against."""
    version: str
    id: str
    source: str                  # SOURCE's source id ('' if unknown)
    subjects: list[str]
    files: set[str]              # files the series changes


def _recorded(version: str, root: Path | None = None):
    """Every record of this kernel: (path, record), newest first."""
    d = record_dir(version, root)
    out = []
    for p in list(d.glob("*.json")) + list(d.glob("*/*.json")) if d.is_dir() else []:
        rec = _load(p)
        if isinstance(rec, dict) and "data" in rec:
            out.append((p, rec))
    out.sort(key=lambda x: (x[1].get("recorded", ""), x[0].stat().st_mtime), reverse=True)
    return out


def latest(version: str, name: str, root: Path | None = None) -> dict | None:
    """The newest record called `name`, whatever its series (make bench
    reports the last per-patch check)."""
    return next((rec for p, rec in _recorded(version, root) if p.stem == name), None)


def records(series: Series, root: Path | None = None) -> dict[str, Found]:
    """The recorded results (runs/results-<version>/), each THIS or NOT_RUN:
    per name, this series' record, else a note on the newest one of another."""
    out: dict[str, Found] = {}
    for p, rec in _recorded(series.version, root):
        name = p.stem
        ok = rec.get("series") == series.id and (not series.source
                                                 or rec.get("source") == series.source)
        if name in out and (out[name].status == THIS or not ok):
            continue
        if ok:
            out[name] = Found(name, THIS, rec["data"], "recorded for this series (same patch "
                              "files, by digest)", rec.get("recorded", ""), str(p))
        else:
            why = (f"recorded {rec.get('recorded', '?')} for another series "
                   f"({rec.get('patches', '?')} patches, id {rec.get('series', '?')}"
                   + (f", source {rec.get('source')}" if rec.get("source") != series.source
                      and series.source else "") + ")")
            out[name] = Found(name, NOT_RUN, note=why, path=str(p))
    return out


PATCHED_RE = re.compile(r"^patched-(.+)-([0-9a-f]{12})$")


def _legacy_verify(series: Series, root: Path) -> dict[str, Found]:
    """report.json of the newest patched build per configuration whose
    changed files are the series' files."""
    out: dict[str, Found] = {}
    bdir = root / "build" / series.version
    cands: dict[str, list[tuple[float, Path, dict]]] = {}
    for rep in bdir.glob("patched-*/report.json") if bdir.is_dir() else []:
        m = PATCHED_RE.match(rep.parent.name)
        d = _load(rep)
        if not m or not isinstance(d, dict):
            continue
        cands.setdefault(d.get("config") or m.group(1), []).append((rep.stat().st_mtime, rep, d))
    for config, cs in cands.items():
        cs.sort(key=lambda c: c[0], reverse=True)
        match = [c for c in cs if set(c[2].get("changed_files") or []) == series.files]
        name = f"verify-{config}"
        if match:
            _, rep, d = match[0]
            out[name] = Found(name, THIS, d, "matched by the set of files it changed (made "
                              "before series records; the patches' content is not checked)",
                              _mtime(rep), str(rep))
        else:
            _, rep, d = cs[0]
            out[name] = Found(name, NOT_RUN, path=str(rep), note=(
                f"the last {config} build in the cache ({_mtime(rep)}) changed "
                f"{len(d.get('changed_files') or [])} files, not this series' {len(series.files)}"))
    return out


def _legacy_bisect(series: Series, root: Path) -> Found | None:
    bdir = root / "build" / series.version
    cs = []
    for rep in bdir.glob("patched-*/bisect.json") if bdir.is_dir() else []:
        d = _load(rep)
        if isinstance(d, dict):
            cs.append((rep.stat().st_mtime, rep, d))
    if not cs:
        return None
    cs.sort(key=lambda c: c[0], reverse=True)
    for _, rep, d in cs:
        if [c.get("subject") for c in d.get("commits", [])] == series.subjects:
            return Found("bisect", THIS, d, "matched by the subjects of its commits (made "
                         "before series records; the patches' content is not checked)",
                         _mtime(rep), str(rep))
    _, rep, d = cs[0]
    return Found("bisect", NOT_RUN, path=str(rep), note=(
        f"the last per-patch check in the cache ({_mtime(rep)}) is of a series of "
        f"{len(d.get('commits', []))} commits that is not this one"))


def _legacy_boot(series: Series, root: Path, verify: dict[str, Found]) -> dict[str, Found]:
    """Boot runs whose image is the one of a verify build matched above,
    booted after that build's report was written."""
    out: dict[str, Found] = {}
    runs = root / "boot" / "runs"
    cs = []
    for s in runs.glob("*/summary.json") if runs.is_dir() else []:
        d = _load(s)
        if not isinstance(d, dict):
            continue
        parts = Path(d.get("image") or "").parts
        pdir = next((x for x in parts if PATCHED_RE.match(x)), None)
        if pdir is None:
            continue
        cs.append((s.stat().st_mtime, s, d, PATCHED_RE.match(pdir).group(1), pdir))
    cs.sort(key=lambda c: c[0], reverse=True)
    for mtime, s, d, config, pdir in cs:
        name = f"boot-{config}"
        if name in out and out[name].status == THIS:
            continue
        v = verify.get(f"verify-{config}")
        built = Path((v.data or {}).get("patched_src") or "") if v is not None else Path()
        if (v is not None and v.status == THIS and pdir in built.parts
                and mtime >= Path(v.path).stat().st_mtime):
            ktap = s.parent / "results.ktap"
            f = Found(name, THIS, d, f"the image of the {config} verify build above, booted "
                      f"after it (run {s.parent.name}; made before series records)",
                      _mtime(s), str(s))
            if ktap.is_file():
                f.extra["ktap"] = ktap.read_text(errors="replace")
            out[name] = f
        elif name not in out:
            out[name] = Found(name, NOT_RUN, path=str(s), note=(
                f"the last {config} boot in the cache ({_mtime(s)}, run {s.parent.name}) "
                f"cannot be tied to this series"))
    return out


def find(series: Series, root: Path | None = None) -> dict[str, Found]:
    """Every result the cache has for `series`: records first; for a name
    with no record, the results of before records, matched as said above."""
    root = root or paths.cache_root()
    found = records(series, root)
    legacy_verify = _legacy_verify(series, root)
    for name, f in legacy_verify.items():
        if name not in found:
            found[name] = f
    if "bisect" not in found:
        b = _legacy_bisect(series, root)
        if b is not None:
            found["bisect"] = b
    verify = {k: v for k, v in found.items() if k.startswith("verify-")}
    for name, f in _legacy_boot(series, root, verify).items():
        if name not in found:
            found[name] = f
    return found
