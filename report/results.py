"""The last verify, per-patch, residue and boot results of a series, from the cache.

verify and boot leave their results in the cache (report.json per build
directory, bisect.json beside the primary one, summary.json per boot run),
but those files do not say which series they were made from: a later run
with planted defects, or of an older series, writes to the same places.
So the pipeline also records each result under

    $SLABCONV_CACHE/runs/results-<version>/<series id>/<name>.json
        name: verify (the verdict), verify-<config>, bisect, compiled-lines,
              field-users, residue, layout, checkpatch, nullcheck, messages,
              whitespace
              (each the part of verify's JSON report of that name:
              verify.gates.Gates.records()), boot-<config>
        {"series": <series id>, "patches": N, "source": <source id>,
         "recorded": <UTC time>, "data": <the result's JSON>,
         "patch_ids": [<git patch-id of each patch>],
         "from": {"path": <the series directory>, "identity": <its From:>,
                  "date": <its Date:>}}

where the series id is a digest of what the patches are, not of their
bytes: per patch, in order, its `git patch-id --verbatim` (git's stable
patch-id, whitespace kept: the diff, without line numbers and blob ids)
and its message without identity and date (the subject without its
"[PATCH ...]" prefix, the body with each Signed-off-by: line's name left
out).  The same patches written by another identity, on another date, with
another subject prefix or as the mail copy have the same id; a one-line
change of the code or the message makes another.  Each series has its own
directory: a run on a planted or older series never overwrites the results
of another.  The review and the mail show a result only when its series id
is the reviewed series' (`find()`), and say which series directory it was
recorded for (`Found.origin`); a result recorded for another series is
named as such, never shown as this series'.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from base import atomic, paths
from base.log import SlabconvError


RECORD_DIR = "results-{version}"


IDENTITY_TRAILERS = re.compile(rb"^(Signed-off-by|Co-developed-by):[^\n]*$", re.M)
SUBJECT_PREFIX = re.compile(rb"^(?:\s*\[[^\]]*\])+\s*")


def patch_id(data: bytes) -> str:
    """git's stable patch-id of one patch, whitespace kept (`git patch-id
    --verbatim`): its diff without line numbers and blob ids; "" for a
    patch without a diff."""
    return patch_id_list([data])[0]


def _diff(data: bytes) -> bytes:
    """The diff of a patch file (from its first "diff --git" line), without
    the message: git patch-id takes a line "commit <id>" or "From <id>"
    anywhere for the start of another patch."""
    at = data.find(b"\ndiff --git ")
    if at < 0:
        return b""
    d = data[at + 1:]
    return d if d.endswith(b"\n") else d + b"\n"


def patch_id_list(datas) -> list[str]:
    """patch_id() of each patch, in one `git patch-id` run (each patch's
    diff given its number as its commit id)."""
    datas = list(datas)
    feed = b"".join(f"commit {i:040x}\n".encode() + _diff(d) for i, d in enumerate(datas))
    try:
        cp = subprocess.run(["git", "patch-id", "--verbatim"], input=feed,
                            capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SlabconvError(f"git patch-id failed: {e}", exit_code=3)
    parts: list[list[str]] = [[] for _ in datas]
    for ln in cp.stdout.decode().splitlines():
        pid, commit = ln.split()
        i = int(commit, 16)
        if i >= len(parts):
            raise SlabconvError(f"git patch-id: unexpected output {ln!r}", exit_code=3)
        parts[i].append(pid)
    # a diff whose hunk counts do not add up is given in parts: the id of them all
    return [x[0] if len(x) == 1 else hashlib.sha1(" ".join(x).encode()).hexdigest()
            if x else "" for x in parts]


def message(data: bytes) -> bytes:
    """A patch's commit message without who made it and when: the subject
    (unfolded, without its "[PATCH ...]" prefix) and the body up to the
    "---" line, each Signed-off-by: and Co-developed-by: line without its
    name; the From:, Date: and other mail headers are left out."""
    head, _, body = data.partition(b"\n\n")
    m = re.search(rb"^Subject: (.*(?:\n[ \t].*)*)", head, re.M)
    subject = b" ".join(m.group(1).split()) if m else b""
    subject = SUBJECT_PREFIX.sub(b"", subject)
    body = re.split(rb"^---$", body, maxsplit=1, flags=re.M)[0]
    body = IDENTITY_TRAILERS.sub(lambda t: t.group(1) + b":", body)
    return subject + b"\n\n" + body.strip() + b"\n"


def content_id(datas, ids: list[str] | None = None) -> str:
    """The series id of patches given as their bytes, in order (series_id());
    `ids`: their patch_id()s, if known."""
    datas = list(datas)
    ids = ids if ids is not None else patch_id_list(datas)
    h = hashlib.sha256()
    for d, i in zip(datas, ids, strict=True):
        h.update(f"{i}:{hashlib.sha256(message(d)).hexdigest()}\n".encode())
    return h.hexdigest()[:16]


def series_id(patches) -> str:
    """The id of the numbered patch files, in order: what they are (the
    code by git's patch-id, the message without identity and date), not
    their bytes."""
    return content_id(p.read_bytes() for p in sorted(Path(x) for x in patches))


def patch_ids(patches) -> list[str]:
    return patch_id_list(p.read_bytes() for p in sorted(Path(x) for x in patches))


def identity_and_date(patches) -> tuple[str, str]:
    """The From: and Date: of the first patch ("" each when absent)."""
    files = sorted(Path(x) for x in patches)
    if not files:
        return "", ""
    head = files[0].read_text(errors="replace").partition("\n\n")[0]
    out = []
    for name in ("From", "Date"):
        m = re.search(rf"^{name}: (.*(?:\n[ \t].*)*)", head, re.M)
        out.append(" ".join(m.group(1).split()) if m else "")
    return out[0], out[1]


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


def series_stamp(patches, source_id: str, series_dir: Path | str | None = None) -> dict:
    """What a result is recorded for: the series id of `patches`, and the
    series directory they were read from (default: theirs), its identity
    and date."""
    patches = sorted(Path(x) for x in patches)
    datas = [p.read_bytes() for p in patches]
    ids = patch_id_list(datas)
    who, when = identity_and_date(patches)
    where = series_dir if series_dir is not None else (patches[0].parent if patches else "")
    return {"series": content_id(datas, ids), "patches": len(patches), "source": source_id,
            "patch_ids": ids,
            "from": {"path": str(where), "identity": who, "date": when}}


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
    origin: dict = field(default_factory=dict)   # THIS: the series directory it was
                                                 # recorded for: path, identity, date

    @property
    def origin_line(self) -> str:
        """Which series the result was recorded for, in words ("" unknown)."""
        return origin_words(self.origin)


def origin_words(o: dict | None) -> str:
    if not o or not o.get("path"):
        return ""
    who = ", ".join(x for x in (o.get("identity"), o.get("date")) if x)
    return f"{o['path']}" + (f" ({who})" if who else "")


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
            o = rec.get("from") if isinstance(rec.get("from"), dict) else {}
            out[name] = Found(name, THIS, rec["data"], "recorded for these patches (the same "
                              "code by git patch-id, the same messages)"
                              + (f", as the series {origin_words(o)}" if o else ""),
                              rec.get("recorded", ""), str(p), origin=o)
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
