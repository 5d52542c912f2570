"""The last verify, per-patch, residue and boot results of a series, from the cache.

verify and boot leave their results in the cache (report.json per build
directory, bisect.json beside the primary one, summary.json per boot run),
but those files do not say which series they were made from: a later run
with planted defects, or of an older series, writes to the same places.
So the pipeline also records each result under

    $SLABCONV_CACHE/runs/results-<version>/<series id>/<name>.json
        name: verify (the verdict), verify-<config>, bisect, compiled-lines,
              field-users, residue, layout, checkpatch, nullcheck, messages
              (each the part of verify's JSON report of that name:
              verify.gates.Gates.records()), boot-<config>
        {"series": <series id>, "patches": N, "source": <source id>,
         "recorded": <UTC time>, "data": <the result's JSON>}

where the series id is a digest of the patch files `git am` applied.  Each
series has its own directory: a run on a planted or older series never
overwrites the results of another.  The review and the mail show a result
only when its series id is the reviewed series' (`find()`); a result
recorded for another series is named as such, never shown as this series'.
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


def _recorded(version: str, root: Path | None = None):
    """Every record of this kernel: (path, record), newest first."""
    d = record_dir(version, root)
    out = []
    for p in d.glob("*/*.json") if d.is_dir() else []:
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


def find(series: Series, root: Path | None = None) -> dict[str, Found]:
    """Every result the cache recorded for `series` (records())."""
    return records(series, root or paths.cache_root())
