"""The review report: each rule beside the hunks it produced, and the results.

    python3 -m slabconv review --kernel 5.10 [--output DIR] [--series DIR]
    make review

Reads, never runs anything: the manifest (cocci/series.toml), the committed
series (generated-patches/<version>/: the numbered patches, the cover
letter, SOURCE, ENTRIES if regen wrote one), the rule files and templates
(their header comments), and the last verify, per-patch, residue and boot
results the cache has for this series (report/results.py: a result is
shown only when it can be tied to this series; else "not run").  Writes
review.html (static, self-contained: inline CSS, no script, no network)
and review.txt (the same without the hunks' text) into DIR (default
$SLABCONV_CACHE/review/<version>/).

Attribution: the commit message of each patch names the rule files and
templates it was made by (the `Generated-with: slabconv (...)` trailer); the
manifest says which files each of its steps works on (spatch runs on a
step's files only, a template goes into one file).  The hunks of a patch
in a file are attributed to each source of the patch whose steps name
that file; where several could have changed the file (a conversion is
slab_param + slab_callers + slab_fold in one spatch run over the same
files) each counts the hunk, and "own" counts the hunks only one of them
could have made (for a template, also the hunks that carry its text).
When the manifest's steps no longer match a patch's trailer, all its
hunks are attributed to every source it names.
"""
from __future__ import annotations

import ast
import html
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from slabconv import paths
from slabconv.log import SlabconvError, info

from . import patches as P
from . import results as R

MEMBERS = "regen/members.py"
SECTIONS = [("summary", "Summary"), ("rules", "Rules and templates"),
            ("files", "Files"), ("patches", "Patches"), ("skipped", "Skipped entries"),
            ("verify", "Verify"), ("residue", "Residue"), ("boot", "Boot"),
            ("notes", "How to read this page")]
# searched for a rule file's name, to say which stage uses a rule outside the series
CODE_DIRS = ("regen", "verify", "slabconv", "boot", "fetch")


# ---------------------------------------------------------------------------
# rule files, templates, the members step

@dataclass
class Source:
    key: str                     # cocci/rules/x.cocci, cocci/templates/y.h, regen/members.py
    kind: str                    # rule | template | members
    name: str
    exists: bool = True
    title: str = ""
    description: str = ""        # the header comment
    confidence: str = ""
    options: str = ""
    tests: int | None = None     # cases in cocci/tests/<name>/ (rules only)
    why: list[str] = field(default_factory=list)        # the manifest's why (templates, members)
    entries: list[str] = field(default_factory=list)    # manifest entries that name it
    code_refs: list[str] = field(default_factory=list)  # Python files that name it
    patches: list[P.Patch] = field(default_factory=list)
    body: list[str] = field(default_factory=list)       # a template's lines, as inserted
    carries: set = field(default_factory=set)           # (patch, file, hunk index) with its text

    @property
    def anchor(self) -> str:
        return "src-" + re.sub(r"[^A-Za-z0-9]+", "-", self.key).strip("-")

    def items(self) -> list[tuple[P.Patch, P.FileDiff]]:
        """(patch, file diff) of its patches, in the files it could change."""
        return [(p, f) for p in self.patches for f in p.files if self.key in p.sources_of(f.path)]

    @property
    def hunks(self) -> int:
        return sum(len(f.hunks) for _, f in self.items())

    def own(self) -> set:
        """(patch, file, hunk index) of the hunks no other source could
        have made, and, for a template, the hunks that carry its text."""
        out = {(p.number, f.path, h.index) for p, f in self.items()
               if p.sources_of(f.path) == [self.key] for h in f.hunks}
        return out | self.carries

    @property
    def own_hunks(self) -> int:
        return len(self.own())

    def by_file(self) -> dict[str, list[tuple[P.Patch, P.FileDiff]]]:
        out: dict[str, list[tuple[P.Patch, P.FileDiff]]] = {}
        for p, f in self.items():
            out.setdefault(f.path, []).append((p, f))
        return dict(sorted(out.items()))

    @property
    def confidence_word(self) -> str:
        if self.confidence.startswith("not stated"):
            return "n/a"
        m = re.match(r"\s*(\w+)", self.confidence)
        return m.group(1) if m else ""


def rule_header(text: str) -> tuple[str, str, str, str]:
    """A .cocci file's header: (title, description, confidence, options).
    The description is the `///` lines; Confidence and Options are the
    `// Confidence:` and `// Options:` lines with their continuations."""
    desc: list[str] = []
    conf: list[str] = []
    opts: list[str] = []
    cur: list[str] | None = None
    for ln in text.splitlines():
        if ln.startswith("// SPDX-License-Identifier"):
            continue
        if ln.startswith("///"):
            desc.append(ln[3:][1:] if ln[3:4] == " " else ln[3:])
            cur = None
        elif ln.startswith("// Confidence:"):
            cur = conf
            conf.append(ln[len("// Confidence:"):].strip())
        elif ln.startswith("// Options:"):
            cur = opts
            opts.append(ln[len("// Options:"):].strip())
        elif ln.startswith("//"):
            rest = ln[2:]
            if cur is not None and rest.strip():
                cur.append(rest.strip())
            elif not rest.strip():
                cur = None
        elif ln.strip() == "":
            if cur is not None:
                cur = None
            if conf or opts:
                break
        else:
            break
    while desc and not desc[-1].strip():
        desc.pop()
    title = desc[0].strip() if desc else ""
    return title, "\n".join(desc), " ".join(conf), " ".join(opts)


def template_body(text: str) -> list[str]:
    """A template's lines as regen/template.py inserts them (without its
    header comment), stripped, the ones long enough to be telling."""
    m = re.match(r"\s*/\*.*?\*/\n?", text, re.S)
    body = text[m.end():] if m else text
    return [ln.strip() for ln in body.splitlines() if len(ln.strip()) > 3]


def carrying_hunks(s: Source) -> set:
    """The hunks of s's patches whose added lines are mostly the template's
    text: these hunks are the template's own, whatever else made the patch."""
    own = set(s.body)
    out = set()
    if not own:
        return out
    for p, f in s.items():
        for h in f.hunks:
            added = [ln[1:].strip() for ln in h.lines
                     if ln.startswith("+") and len(ln[1:].strip()) > 3]
            k = sum(1 for a in added if a in own)
            if added and k >= 2 and k * 2 >= len(added):
                out.add((p.number, f.path, h.index))
    return out


def template_header(text: str) -> tuple[str, str]:
    """A template's first comment: (title, description)."""
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not m:
        return "", ""
    lines = [re.sub(r"^\s*\* ?", "", ln) for ln in m.group(1).splitlines()]
    lines = [ln.rstrip() for ln in lines]
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines:
        lines[0] = re.sub(r"^\s*slabconv template:\s*", "", lines[0])
    desc = "\n".join(lines).strip()
    return (desc.split("\n")[0] if desc else ""), desc


def module_header(path: Path) -> tuple[str, str]:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except (OSError, SyntaxError):
        doc = ""
    return (doc.split("\n")[0] if doc else ""), doc


def _code_refs(name: str, repo: Path) -> list[str]:
    out = []
    for d in CODE_DIRS:
        for py in sorted((repo / d).glob("*.py")):
            try:
                if name in py.read_text(errors="replace"):
                    out.append(str(py.relative_to(repo)))
            except OSError:
                pass
    return out


def collect_sources(cocci: Path, repo: Path, series_patches: list[P.Patch],
                    manifest=None) -> list[Source]:
    """Every rule file, template and the members step, with its header and
    the patches whose Generated-with trailer names it; a name in a trailer
    whose file is gone is listed too (exists=False)."""
    srcs: dict[str, Source] = {}
    for f in sorted((cocci / "rules").glob("*.cocci")):
        key = f"cocci/rules/{f.name}"
        s = Source(key, "rule", f.stem)
        s.title, s.description, s.confidence, s.options = rule_header(f.read_text(errors="replace"))
        tdir = cocci / "tests" / f.stem
        s.tests = len(list(tdir.glob("*.c"))) if tdir.is_dir() else 0
        s.code_refs = _code_refs(f.name, repo)
        srcs[key] = s
    for f in sorted((cocci / "templates").glob("*")):
        if not f.is_file():
            continue
        key = f"cocci/templates/{f.name}"
        s = Source(key, "template", f.name)
        s.title, s.description = template_header(f.read_text(errors="replace"))
        s.body = template_body(f.read_text(errors="replace"))
        s.confidence = "not stated: a template is C inserted as written (its why says why)"
        srcs[key] = s
    mp = repo / MEMBERS
    s = Source(MEMBERS, "members", "members.py", exists=mp.is_file())
    s.title, s.description = module_header(mp)
    s.confidence = "not stated: members are removed by name; a name the struct lacks is an error"
    srcs[MEMBERS] = s
    for p in series_patches:
        for key in p.sources:
            if key not in srcs:
                kind = ("rule" if key.endswith(".cocci") else
                        "template" if "/templates/" in key else "members")
                srcs[key] = Source(key, kind, Path(key).name, exists=(repo / key).is_file())
            srcs[key].patches.append(p)
    if manifest is not None:
        for e in manifest.entries:
            for st in e.steps:
                for item in st.source.split(", "):
                    key = P.source_key(item)[0]
                    if key in srcs:
                        if e.id not in srcs[key].entries:
                            srcs[key].entries.append(e.id)
                        if st.why and st.why not in srcs[key].why and key == (
                                MEMBERS if st.kind == "members" else f"cocci/{st.path}"):
                            srcs[key].why.append(st.why)
    for s in srcs.values():
        if s.kind == "template":
            s.carries = carrying_hunks(s)
    order = {"rule": 0, "template": 1, "members": 2}
    return sorted(srcs.values(), key=lambda s: (order.get(s.kind, 3),
                                                s.patches[0].number if s.patches else 10**6,
                                                s.key))


# ---------------------------------------------------------------------------
# the review

@dataclass
class Skipped:
    id: str
    subject: str
    seed: str
    reason: str
    in_cover: bool | None        # None: no cover letter
    verdict: str = ""            # from ENTRIES (upstream / not applicable)


@dataclass
class Review:
    version: str
    series_dir: Path
    source: dict
    cover: P.Cover
    patches: list[P.Patch]
    sources: list[Source]
    skipped: list[Skipped]
    verdicts: list[P.Verdict] | None
    results: dict[str, R.Found]
    series_id: str
    entry_of: dict[int, str]                 # patch number -> manifest entry id
    mismatches: dict[int, list[str]]         # patch number -> what the manifest says now
    notes: list[str]
    manifest_error: str = ""
    generated: str = ""

    @property
    def files(self) -> dict[str, dict]:
        """Per file of the series: patches, hunks, +/-, and hunks per source."""
        out: dict[str, dict] = {}
        for p in self.patches:
            for f in p.files:
                d = out.setdefault(f.path, {"patches": [], "hunks": 0, "added": 0,
                                            "removed": 0, "by_source": Counter()})
                d["patches"].append(p)
                d["hunks"] += len(f.hunks)
                d["added"] += f.added
                d["removed"] += f.removed
                for s in p.sources_of(f.path):
                    d["by_source"][s] += len(f.hunks)
        return dict(sorted(out.items()))

    def find_source(self, key: str) -> Source | None:
        return next((s for s in self.sources if s.key == key), None)

    def configs(self, prefix: str, defaults) -> list[str]:
        seen = list(defaults)
        for name in sorted(self.results):
            # boot-reference-<config>: a reference run on the unpatched kernel
            # (slabconv.reference), not a result of the series
            if name.startswith(prefix) and name[len(prefix):] not in seen \
                    and not name[len(prefix):].startswith("reference-"):
                seen.append(name[len(prefix):])
        return seen


def build(version: str, series_dir: Path | None = None, *, cocci: Path | None = None,
          repo: Path | None = None, cache: Path | None = None) -> Review:
    """Read everything the review shows (no tool is run)."""
    from regen import manifest as M
    repo = repo or paths.REPO
    cocci = cocci or paths.COCCI
    series_dir = Path(series_dir or paths.GENERATED / version)
    if not series_dir.is_dir():
        raise SlabconvError(f"no series in {series_dir}: run `make regen` first", exit_code=2)
    files = P.numbered_patches(series_dir)
    verdicts = P.parse_entries(series_dir / "ENTRIES")
    if not files and verdicts is None:
        raise SlabconvError(f"no series in {series_dir}: run `make regen` first", exit_code=2)
    patches = [P.parse_patch(f) for f in files]
    cover = P.parse_cover(series_dir / "0000-cover-letter.patch")
    source = P.read_source(series_dir)
    notes: list[str] = []
    try:
        man = M.load(cocci / "series.toml")
        merr = ""
    except SlabconvError as e:
        man, merr = None, str(e)
        notes.append(f"the manifest could not be read ({e}): patches are not matched to entries")
    entry_of: dict[int, str] = {}
    mismatches: dict[int, list[str]] = {}
    skipped: list[Skipped] = []
    if man is not None:
        by_subject = {e.subject: e for e in man.entries}
        for p in patches:
            e = by_subject.get(p.subject)
            if e is None or e.skip:
                notes.append(f"patch {p.tag} ({p.subject}) has no entry in the manifest: "
                             f"the series is older than the manifest")
                continue
            entry_of[p.number] = e.id
            if e.usage:             # the usage pass chose its conversions: no steps to match
                p.origin = "usage"
                continue
            want: list[str] = []
            for st in e.steps:
                for item in st.source.split(", "):
                    k = P.source_key(item)[0]
                    if k not in want:
                        want.append(k)
            if want != p.sources:
                mismatches[p.number] = want
                continue
            step_files: dict[str, list[str]] = {}
            for st in e.steps:
                for item in st.source.split(", "):
                    k = P.source_key(item)[0]
                    for f in st.files:
                        if k not in step_files.setdefault(f, []):
                            step_files[f].append(k)
            for f in p.files:
                if f.path in step_files:
                    p.file_sources[f.path] = [k for k in p.sources if k in step_files[f.path]]
                else:
                    notes.append(f"patch {p.tag} changes {f.path}, which no step of entry "
                                 f"'{e.id}' names: its hunks there are attributed to every "
                                 f"source of the patch")
        cover_subjects = {s for s, _ in cover.skipped}
        for e in man.entries:
            if e.skip:
                skipped.append(Skipped(e.id, e.subject, e.seed, " ".join(e.skip.split()),
                                       (e.subject in cover_subjects) if cover.present else None))
        if verdicts:
            vmap = {v.subject: v for v in verdicts}
            for e in man.entries:
                v = vmap.get(e.subject)
                if not e.skip and v is not None and v.status != "applied":
                    skipped.append(Skipped(e.id, e.subject, e.seed, " ".join(v.evidence),
                                           (e.subject in cover_subjects) if cover.present else None,
                                           verdict=v.status))
        for subj, why in cover.skipped:
            if not any(s.subject == subj for s in skipped):
                skipped.append(Skipped("", subj, "", why, True))
                notes.append(f"the cover letter lists '{subj}' as skipped; the manifest does not")
        missing = [e for e in man.entries if not e.skip and not e.usage
                   and e.id not in entry_of.values()
                   and not (verdicts and any(s.id == e.id for s in skipped))]
        for e in missing:
            notes.append(f"manifest entry '{e.id}' ({e.subject}) has no patch in this series")
    sources = collect_sources(cocci, repo, patches, man)
    sid = R.series_id(files) if files else ""
    rs = R.Series(version, sid, source.get("source", ""), [p.subject for p in patches],
                  {f.path for p in patches for f in p.files})
    results = R.find(rs, cache) if files else {}
    return Review(version, series_dir, source, cover, patches, sources, skipped, verdicts,
                  results, sid, entry_of, mismatches, notes, merr,
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


# ---------------------------------------------------------------------------
# small helpers shared by both renderings

def _n(k: int, word: str, plural: str | None = None) -> str:
    return f"{k} {word if k == 1 else (plural or word + 's')}"


def _dur(sec) -> str:
    if sec is None:
        return "?"
    sec = float(sec)
    return f"{sec:.1f}s" if sec < 60 else f"{int(sec // 60)}m{int(sec % 60):02d}s"


def _short(key: str) -> str:
    return Path(key).name.replace(".cocci", "")


def verify_line(d: dict) -> dict:
    """The figures of one verify report.json the review shows."""
    sp = d.get("sparse") or {}
    base_sp = len(((sp.get("baseline") or {}).get("warnings")) or [])
    pat_sp = len(((sp.get("patched") or {}).get("warnings")) or [])
    pb = d.get("patched") or {}
    bb = d.get("baseline") or {}
    return {
        "ok": d.get("ok"),
        "problems": d.get("problems") or [],
        "new": d.get("new_warnings") or [],
        "gone": len(d.get("gone_warnings") or []),
        "sparse": f"{base_sp} -> {pat_sp}" if sp else "not run",
        "sparse_new": sp.get("new") or [],
        "sparse_files": len((sp.get("patched") or {}).get("files") or []),
        "baseline": f"{'ok' if bb.get('ok') else 'FAILED'} {_dur(bb.get('seconds'))}"
                    f"{' (reused)' if d.get('baseline_reused') else ''}" if bb else "?",
        "patched": (f"{'ok' if pb.get('ok') else 'FAILED'} {_dur(pb.get('seconds'))}, "
                    f"{pb.get('compiled', '?')} objects" if pb else "not built"),
        "warnings": len(pb.get("warnings") or []),
        "seconds": d.get("seconds"),
        "changed": len(d.get("changed_files") or []),
        "code": series_code_line(d.get("code")),
    }


def series_code_line(code) -> str:
    """The whole series' code against the baseline (verify's series_code())."""
    if not code:
        return "not compared"
    ch = code.get("objects_changed") or []
    return (f"vmlinux {code.get('vmlinux')}; {len(ch)} of {code.get('objects_compared')} objects "
            "with changed code" + (": " + ", ".join(f"{o['object']} {o['delta']:+d}"
                                                     for o in ch[:8]) if ch else ""))


def residue_counts(d: dict) -> list[tuple[str, int, int, int]]:
    c = d.get("counts") or {}
    return [(f, v.get("uses", 0), v.get("allowed", 0), v.get("not_allowed", 0))
            for f, v in c.items()]


def boot_counts(d: dict) -> str:
    c = d.get("counts")
    if isinstance(c, dict):
        return (f"{c.get('total', '?')} tests: {c.get('passed', '?')} passed, "
                f"{c.get('failed', '?')} failed, {c.get('skipped', '?')} skipped, "
                f"{c.get('crashed', 0)} crashed")
    return str(c or "?")


def status_of(f: R.Found | None, ok_key: str = "ok") -> str:
    if f is None or f.status != R.THIS:
        return "not run"
    v = (f.data or {}).get(ok_key)
    return "pass" if v else "FAIL"


def attribution_note() -> str:
    return ("A patch's hunks in a file are attributed to the rule files and templates named "
            "in its Generated-with trailer whose manifest steps name that file (spatch runs on "
            "a step's files only; a template goes into one file).  When several could have "
            "changed the same file (a conversion runs slab_param, slab_callers and slab_fold "
            "over the same files in one spatch run), the page cannot say which of them wrote "
            "which line: each of them counts the hunk.  \"own\" counts the hunks only one "
            "of them could have made (for a template, also the hunks that carry its text).  "
            "Where the manifest's steps no longer match a patch's trailer, its hunks are "
            "attributed to every source it names.")


def provenance_note() -> str:
    return ("Results are read from the cache, never made by this command.  A result is "
            "shown only when it is tied to this series: recorded by verify/boot/residue "
            "with the digest of the patch files they applied, or, for results made before "
            "such records, matched as each result says (the files a build changed, the "
            "subjects of the per-patch check, the build whose image was booted).  "
            "Anything else is \"not run\".")


# ---------------------------------------------------------------------------
# HTML

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2327;background:#fff}
header{background:#22313f;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px;font-size:22px}
header p{margin:2px 0;color:#d5dde5}
main{padding:0 24px 40px;max-width:1500px}
nav{background:#f3f5f7;border:1px solid #d6dbe0;padding:8px 16px;margin:16px 0;columns:3}
nav a{display:block;padding:1px 0}
section{border-top:3px solid #22313f;margin-top:28px;padding-top:4px}
h2{font-size:19px;margin:8px 0}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #d6dbe0;padding:2px 7px;text-align:left;vertical-align:top}
th{background:#eef1f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}
a{color:#0b5cad;text-decoration:none}
a:hover{text-decoration:underline}
details{margin:3px 0}
details>summary{cursor:pointer;padding:2px 4px}
details[open]>summary{background:#f3f5f7}
.box{border:1px solid #d6dbe0;border-radius:3px;padding:2px 8px;margin:4px 0}
pre{margin:4px 0;padding:6px 8px;background:#fafbfc;border:1px solid #e3e7eb;overflow-x:auto;font:12px/1.35 ui-monospace,"DejaVu Sans Mono",monospace}
pre.doc{background:#fffdf3;border-color:#eee3b8;white-space:pre-wrap}
.diff .a{background:#e6ffec;display:block}
.diff .d{background:#ffebe9;display:block}
.diff .h{color:#6639ba;display:block}
.diff .c{display:block}
.ok{color:#116329;font-weight:600}
.fail{color:#b3261e;font-weight:700}
.nr{color:#6a737d;font-style:italic}
.warn{background:#fff8c5;border:1px solid #e9d87a;padding:4px 8px;margin:6px 0}
.tag{display:inline-block;font-size:11px;padding:0 5px;border-radius:8px;background:#e7ecf0;margin-right:3px}
.tag.rule{background:#dbeafe}.tag.template{background:#fde7c8}.tag.members{background:#e9d8fd}
.small{font-size:12px;color:#57606a}
.hunkcap{font-size:12px;color:#57606a;margin-top:6px}
"""


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def _status_html(status: str) -> str:
    cls = {"pass": "ok", "ok": "ok", "FAIL": "fail", "FAILED": "fail"}.get(status, "nr")
    return f'<span class="{cls}">{_e(status)}</span>'


def _diff_html(hunks) -> str:
    out = ['<pre class="diff">']
    for h in hunks:
        out.append(f'<span class="h">{_e(h.header)}</span>')
        for ln in h.lines:
            cls = "a" if ln.startswith("+") else "d" if ln.startswith("-") else "c"
            out.append(f'<span class="{cls}">{_e(ln) or " "}</span>')
    out.append("</pre>")
    return "".join(out)


def _src_link(rv: Review, key: str) -> str:
    s = rv.find_source(key)
    kind = s.kind if s else "rule"
    anchor = s.anchor if s else ""
    return (f'<a class="tag {kind}" href="#{anchor}">{_e(_short(key))}</a>')


def _patch_link(p: P.Patch) -> str:
    return f'<a href="#patch-{p.tag}">{p.tag}</a>'


def _found_head(f: R.Found | None) -> str:
    if f is None:
        return '<p class="nr">not run: the cache has no such result</p>'
    if f.status != R.THIS:
        return f'<p class="nr">not run for this series: {_e(f.note)}</p>'
    return (f'<p class="small">{_e(f.how)}; {_e(f.recorded)}; <code>{_e(f.path)}</code></p>')


def render_html(rv: Review) -> str:
    o: list[str] = []
    w = o.append
    title = f"slabconv review: Linux {rv.version}"
    w(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
      f'<meta name="viewport" content="width=device-width,initial-scale=1">'
      f'<title>{_e(title)}</title><style>{CSS}</style></head><body>')
    w(f'<header><h1>{_e(title)} &mdash; {_e(rv.cover.subject or "the series")}</h1>'
      f'<p>{_e(rv.source.get("source", "source unknown (no SOURCE file)"))}, spatch '
      f'{_e(rv.source.get("spatch", "?"))}, identity {_e(rv.source.get("identity", "?"))}, '
      f'date {_e(rv.source.get("date", "?"))}</p>'
      f'<p>series <code>{_e(rv.series_dir)}</code> (id {_e(rv.series_id or "-")}); '
      f'page made {_e(rv.generated)}</p></header><main>')
    w('<nav id="toc"><strong>Contents</strong>')
    for i, (sid, name) in enumerate(SECTIONS, 1):
        w(f'<a href="#{sid}">{i}. {_e(name)}</a>')
    w("</nav>")
    _html_summary(rv, w)
    _html_rules(rv, w)
    _html_files(rv, w)
    _html_patches(rv, w)
    _html_skipped(rv, w)
    _html_verify(rv, w)
    _html_residue(rv, w)
    _html_boot(rv, w)
    _html_notes(rv, w)
    w("</main></body></html>\n")
    return "".join(o)


def _sec(w, sid: str) -> None:
    i, name = next((i, n) for i, (s, n) in enumerate(SECTIONS, 1) if s == sid)
    w(f'<section id="{sid}"><h2>{i}. {_e(name)}</h2>')


def _html_summary(rv: Review, w) -> None:
    _sec(w, "summary")
    used = [s for s in rv.sources if s.patches]
    hunks = sum(len(p.hunks) for p in rv.patches)
    w('<table>')
    w(f'<tr><th>patches</th><td class="n" id="patch-count">{len(rv.patches)}</td>'
      f'<td>{hunks} hunks, +{sum(p.added for p in rv.patches)} '
      f'&minus;{sum(p.removed for p in rv.patches)} lines in '
      f'{len(rv.files)} files (summed over the patches)</td></tr>')
    w(f'<tr><th>skipped entries</th><td class="n">{len(rv.skipped)}</td>'
      f'<td>steps of the original series with no patch here (<a href="#skipped">why</a>)</td></tr>')
    w(f'<tr><th>rules and templates</th><td class="n">{len(rv.sources)}</td>'
      f'<td>{len(used)} used by the series, {len(rv.sources) - len(used)} not '
      f'(report rules and the like)</td></tr>')
    for label, sid, st in _result_rows(rv):
        w(f'<tr><th>{_e(label)}</th><td>{_status_html(st)}</td>'
          f'<td><a href="#{sid}">details</a></td></tr>')
    w('</table>')
    if rv.cover.blurb:
        w(f'<details><summary>Cover letter text</summary><pre class="doc">'
          f'{_e(rv.cover.blurb)}</pre></details>')
    for n in rv.notes:
        w(f'<p class="warn">{_e(n)}</p>')
    if rv.mismatches:
        w(f'<p class="warn">{_n(len(rv.mismatches), "patch", "patches")} name rules in their '
          f'Generated-with trailer that differ from what the manifest says now (marked in '
          f'<a href="#patches">Patches</a>): the series may be older than the rules.</p>')
    w('</section>')


def _result_rows(rv: Review) -> list[tuple[str, str, str]]:
    from slabconv.pipeline import DEFAULT_BISECT, DEFAULT_CONFIGS
    rows = []
    for c in rv.configs("verify-", DEFAULT_CONFIGS):
        rows.append((f"verify {c}", "verify", status_of(rv.results.get(f"verify-{c}"))))
    b = rv.results.get("bisect")
    rows.append(("per-patch builds", "verify", status_of(b)))
    rows.append(("residue", "residue", status_of(rv.results.get("residue"))))
    for c in rv.configs("boot-", DEFAULT_CONFIGS):
        rows.append((f"boot {c}", "boot", status_of(rv.results.get(f"boot-{c}"), "passed")))
    return rows


def _html_rules(rv: Review, w) -> None:
    _sec(w, "rules")
    w(f'<p>{_e(attribution_note())}</p>')
    w('<table><tr><th>rule / template</th><th>kind</th><th>confidence</th><th>tests</th>'
      '<th>patches</th><th>hunks</th><th>own</th><th>files (hunks)</th></tr>')
    for s in rv.sources:
        bf = sorted(s.by_file().items(), key=lambda kv: -sum(len(fd.hunks) for _, fd in kv[1]))
        files = ", ".join(f"{_e(f)} ({sum(len(fd.hunks) for _, fd in v)})" for f, v in bf[:4])
        if len(bf) > 4:
            files += f" and {len(bf) - 4} more"
        w(f'<tr><td><a href="#{s.anchor}">{_e(s.key)}</a>'
          f'{"" if s.exists else " <em>(file gone)</em>"}</td><td>{_e(s.kind)}</td>'
          f'<td>{_e(s.confidence_word or "-")}</td>'
          f'<td class="n">{"-" if s.tests is None else s.tests}</td>'
          f'<td class="n">{len(s.patches)}</td><td class="n">{s.hunks}</td>'
          f'<td class="n">{s.own_hunks}{_carries_note(s)}</td>'
          f'<td class="small">{files or _e(_unused_why(s))}</td></tr>')
    w('</table>')
    for s in rv.sources:
        _html_source(rv, s, w)
    w('</section>')


def _carries_note(s: Source) -> str:
    if s.kind != "template" or not s.patches:
        return ""
    return f' <span class="small">({len(s.carries)} with its text)</span>'


def _unused_why(s: Source) -> str:
    if s.patches:
        return ""
    if s.code_refs:
        return f"not in the series; used by {', '.join(s.code_refs)}"
    if s.entries:
        return f"named by manifest entries {', '.join(s.entries)}, but in no patch"
    return "used by no patch of this series"


def _html_source(rv: Review, s: Source, w) -> None:
    w(f'<details class="box source" id="{s.anchor}"><summary><span class="tag {s.kind}">'
      f'{_e(s.kind)}</span> <strong>{_e(s.key)}</strong> &mdash; {_e(s.title or "(no header)")} '
      f'<span class="small">[{_n(len(s.patches), "patch", "patches")}, '
      f'{_n(s.hunks, "hunk")}]</span></summary>')
    if not s.exists:
        w('<p class="warn">This file is named by a patch but no longer exists.</p>')
    w('<table>')
    w(f'<tr><th>Confidence</th><td>{_e(s.confidence or "not stated")}</td></tr>')
    if s.options:
        w(f'<tr><th>Options</th><td>{_e(s.options)}</td></tr>')
    if s.tests is not None:
        w(f'<tr><th>tests</th><td>{s.tests} case(s) in cocci/tests/{_e(s.name)}/</td></tr>')
    for why in s.why:
        w(f'<tr><th>why not a rule</th><td>{_e(why)}</td></tr>')
    if s.entries:
        w(f'<tr><th>manifest entries</th><td>{_e(", ".join(s.entries))}</td></tr>')
    if s.code_refs:
        w(f'<tr><th>named in code</th><td>{_e(", ".join(s.code_refs))}</td></tr>')
    w('</table>')
    if s.description:
        w(f'<pre class="doc">{_e(s.description)}</pre>')
    if not s.patches:
        w(f'<p class="nr">{_e(_unused_why(s))}.</p></details>')
        return
    if s.kind == "template":
        w(f'<p>{_n(len(s.carries), "hunk")} of the {_n(s.hunks, "hunk")} of its patches carry '
          f'the template\'s text (found by content: most of the lines the hunk adds are '
          f'lines of the template); marked below.</p>')
    w(f'<p>{_n(s.hunks, "hunk")} in the files it could change, {s.own_hunks} of them its own.</p>')
    w(f'<h3>Patches ({len(s.patches)})</h3><ul>')
    for p in s.patches:
        others = [x for x in p.sources if x != s.key]
        w(f'<li>{_patch_link(p)} {_e(p.subject)} '
          + ('<span class="small">(made by it alone)</span>' if not others else
             '<span class="small">with ' + " ".join(_src_link(rv, x) for x in others)
             + '</span>') + '</li>')
    w('</ul><h3>Hunks by file</h3>')
    for path, items in s.by_file().items():
        n = sum(len(fd.hunks) for _, fd in items)
        a = sum(fd.added for _, fd in items)
        r = sum(fd.removed for _, fd in items)
        w(f'<details><summary><code>{_e(path)}</code> &mdash; {_n(n, "hunk")} in '
          f'{_n(len(items), "patch", "patches")}, +{a} &minus;{r}</summary>')
        for p, fd in items:
            others = [x for x in p.sources_of(path) if x != s.key]
            w(f'<div class="hunkcap">{_patch_link(p)} {_e(p.subject)} &middot; '
              f'{_n(len(fd.hunks), "hunk")}'
              + (" &middot; in this file also from " + ", ".join(_e(_short(x)) for x in others)
                 if others else f" &middot; its own (no other {'source' if s.kind != 'rule' else 'rule'}"
                                f" of the patch works on this file)") + '</div>')
            if s.kind == "template":
                mine = [h for h in fd.hunks if (p.number, path, h.index) in s.carries]
                if mine:
                    w(f'<div class="hunkcap">carrying the template\'s text: hunk '
                      + ", ".join(str(h.index) for h in mine) + '</div>')
            w(_diff_html(fd.hunks))
        w('</details>')
    w('</details>')


def _html_files(rv: Review, w) -> None:
    _sec(w, "files")
    w('<p>Hunks per file of the series, and per rule in each file (a hunk of a patch made '
      'by several rules counts for each of them).</p>')
    w('<table><tr><th>file</th><th>patches</th><th>hunks</th><th>+</th><th>&minus;</th>'
      '<th>rules (hunks)</th></tr>')
    for path, d in rv.files.items():
        rules = " ".join(f'{_src_link(rv, k)}{n}' for k, n in d["by_source"].most_common())
        w(f'<tr><td><code>{_e(path)}</code></td><td class="n">{len(d["patches"])}</td>'
          f'<td class="n">{d["hunks"]}</td><td class="n">{d["added"]}</td>'
          f'<td class="n">{d["removed"]}</td><td>{rules}</td></tr>')
    w('</table></section>')


def _origin(p) -> str:
    """Where a patch's conversions came from: the manifest's named steps, or
    the usage pass (regen/usage.py), which lists them in the message."""
    if p.origin != "usage":
        return "the manifest (the functions its steps name)"
    found = re.findall(r"^  (\w+\(\): (?:parameter|local) \w+ \([^)]*\))$", p.message, re.M)
    return "usage (no manifest entry names them): " + ("; ".join(found) or "see the message")


def _html_patches(rv: Review, w) -> None:
    _sec(w, "patches")
    w(f'<p>{_n(len(rv.patches), "patch", "patches")} in <code>{_e(rv.series_dir)}</code>, '
      f'in order.  Open one for its message, files and hunks.</p>')
    for p in rv.patches:
        w(f'<article class="patch box" id="patch-{p.tag}"><details><summary>'
          f'<strong>{p.tag}</strong> {_e(p.subject)} <span class="small">'
          f'[{_n(len(p.files), "file")}, +{p.added} &minus;{p.removed}, '
          f'{_n(len(p.hunks), "hunk")}]</span> '
          + " ".join(_src_link(rv, k) for k in p.sources) + '</summary>')
        w('<table>')
        w(f'<tr><th>file</th><td><code>{_e(p.name)}</code></td></tr>')
        entry = rv.entry_of.get(p.number)
        w(f'<tr><th>manifest entry</th><td>{_e(entry or "none found")}</td></tr>')
        w(f'<tr><th>conversions from</th><td>{_e(_origin(p))}</td></tr>')
        w('<tr><th>generated by</th><td>'
          + (" ".join(_src_link(rv, k) for k in p.sources)
             or '<span class="fail">no Generated-with trailer</span>') + '</td></tr>')
        if p.number in rv.mismatches:
            w('<tr><th>manifest now</th><td class="warn">'
              + " ".join(_src_link(rv, k) for k in rv.mismatches[p.number]) + '</td></tr>')
        w('</table>')
        w(f'<pre class="doc">{_e(p.message)}</pre>')
        w('<table><tr><th>file</th><th>hunks</th><th>+</th><th>&minus;</th>'
          '<th>attributed to</th></tr>')
        for f in p.files:
            w(f'<tr><td><code>{_e(f.path)}</code>{"" if f.status == "modified" else " (" + _e(f.status) + ")"}'
              f'</td><td class="n">{len(f.hunks)}</td><td class="n">{f.added}</td>'
              f'<td class="n">{f.removed}</td><td>'
              + " ".join(_src_link(rv, k) for k in p.sources_of(f.path)) + '</td></tr>')
        w('</table>')
        for f in p.files:
            w(f'<details><summary><code>{_e(f.path)}</code> +{f.added} &minus;{f.removed}'
              f'</summary>{_diff_html(f.hunks)}</details>')
        w('</details></article>')
    w('</section>')


def _html_skipped(rv: Review, w) -> None:
    _sec(w, "skipped")
    if not rv.skipped:
        w('<p>None: every entry of the manifest has a patch.</p>')
    else:
        w('<table><tr><th>entry</th><th>subject</th><th>why</th><th>in the cover letter</th></tr>')
        for s in rv.skipped:
            cov = {True: "yes", False: "NO", None: "no cover letter"}[s.in_cover]
            why = (f"{s.verdict}: " if s.verdict else "") + s.reason
            w(f'<tr><td>{_e(s.id or "?")}</td><td>{_e(s.subject)}</td><td>{_e(why)}</td>'
              f'<td>{_e(cov)}</td></tr>')
        w('</table>')
    if rv.verdicts is not None:
        w('<h3>Per-entry verdicts (ENTRIES)</h3><table><tr><th>verdict</th><th>subject</th>'
          '<th>evidence</th></tr>')
        for v in rv.verdicts:
            w(f'<tr><td>{_e(v.status)}</td><td>{_e(v.subject)}</td>'
              f'<td class="small">{_e(" ".join(v.evidence))}</td></tr>')
        w('</table>')
    w('</section>')


def _html_verify(rv: Review, w) -> None:
    from slabconv.pipeline import DEFAULT_CONFIGS
    _sec(w, "verify")
    w('<p>Baseline and patched kernel per configuration: the build, new compiler '
      'warnings, sparse warnings (baseline &rarr; patched).</p>')
    w('<table><tr><th>config</th><th>result</th><th>baseline</th><th>patched</th>'
      '<th>new warnings</th><th>gone</th><th>sparse</th><th>new sparse</th><th>time</th></tr>')
    details = []
    for c in rv.configs("verify-", DEFAULT_CONFIGS):
        f = rv.results.get(f"verify-{c}")
        if f is None or f.status != R.THIS:
            note = "the cache has no such result" if f is None else f.note
            w(f'<tr><td>{_e(c)}</td><td colspan="8"><span class="nr">not run</span> '
              f'<span class="small">{_e(note)}</span></td></tr>')
            continue
        v = verify_line(f.data)
        w(f'<tr><td>{_e(c)}</td><td>{_status_html("ok" if v["ok"] else "FAILED")}</td>'
          f'<td>{_e(v["baseline"])}</td><td>{_e(v["patched"])}</td>'
          f'<td class="n">{len(v["new"])}</td><td class="n">{v["gone"]}</td>'
          f'<td>{_e(v["sparse"])}</td><td class="n">{len(v["sparse_new"])}</td>'
          f'<td>{_e(_dur(v["seconds"]))}</td></tr>')
        details.append((c, f, v))
    w('</table>')
    for c, f, v in details:
        w(f'<details><summary>{_e(c)}: where this result comes from, problems, new '
          f'warnings</summary>{_found_head(f)}')
        w(f'<p>Code, the whole series against the baseline: {_e(v["code"])}</p>')
        for pr in v["problems"]:
            w(f'<p class="fail">{_e(pr)}</p>')
        for x in v["new"] + v["sparse_new"]:
            w(f'<pre>{_e(x.get("text") or x)}</pre>')
        if not v["problems"] and not v["new"] and not v["sparse_new"]:
            w('<p>No problem, no new warning.</p>')
        w('</details>')
    fu = rv.results.get("field-users")
    if fu is not None and fu.status == R.THIS and isinstance(fu.data, dict):
        rows = fu.data.get("files") or []
        w(f'<h3>Users of struct page\'s slab members</h3><p>{len(rows)} file(s) used one '
          f'before the series; {len(fu.data.get("left") or [])} still do after it.</p><table>'
          '<tr><th>file</th><th>uses</th><th>built by</th></tr>')
        for r in rows:
            w(f'<tr><td><code>{_e(r.get("file"))}</code></td><td class="n">{_e(r.get("uses"))}'
              f'</td><td>{_e(", ".join(r.get("built_by") or []) or "NOT BUILT: " + str(r.get("why_not")))}</td></tr>')
        w('</table>')
    _html_compiled(rv, w)
    _html_bisect(rv, w)
    w('</section>')


def _html_compiled(rv: Review, w) -> None:
    """verify's changed-lines coverage (verify/compiled.py)."""
    f = rv.results.get("compiled-lines")
    if f is None or f.status != R.THIS or not isinstance(f.data, dict):
        return
    d = f.data
    files = d.get("files") or []
    total = sum(x.get("changed_code_lines", 0) for x in files)
    w(f'<h3>Changed lines the builds compiled</h3><p>{_status_html("ok" if d.get("ok") else "FAILED")} '
      f'{total - d.get("missed", 0) - d.get("allowed", 0)} of {total} changed code lines '
      f'compiled by at least one of {_e(", ".join(d.get("builds") or []))}; '
      f'{d.get("allowed", 0)} allowed not to be; {d.get("missed", 0)} NOT compiled.</p>'
      '<table><tr><th>file</th><th>changed</th><th>compiled by (lines)</th>'
      '<th>not compiled</th></tr>')
    for x in files:
        by = ", ".join(f"{b} {n}" for b, n in (x.get("compiled_by") or {}).items() if n) or "none"
        miss = x.get("not_compiled") or {}
        allowed = x.get("allowed") or {}
        w(f'<tr><td><code>{_e(x.get("file"))}</code></td><td class="n">'
          f'{x.get("changed_code_lines")}</td><td>{_e(by)}</td><td>'
          + "".join(f'<div class="fail">{_e(n)}: <code>{_e(t.strip())}</code></div>'
                    for n, t in miss.items())
          + (f'<div>{len(allowed)} allowed: {_e(next(iter(allowed.values())))}</div>'
             if allowed else "") + '</td></tr>')
    w('</table>')
    for e in d.get("errors") or []:
        w(f'<p class="fail">{_e(e)}</p>')


def _html_bisect(rv: Review, w) -> None:
    w('<h3>Per-patch builds (bisectability)</h3>')
    f = rv.results.get("bisect")
    w(_found_head(f))
    if f is None or f.status != R.THIS:
        return
    d = f.data
    configs = d.get("configs") or []
    w('<table><tr><th>config</th><th>result</th><th>checked</th><th>time</th>'
      '<th>first failure</th></tr>')
    for c in configs:
        ff = c.get("first_failure")
        w(f'<tr><td>{_e(c.get("config"))}</td><td>{_status_html("ok" if c.get("ok") else "FAILED")}'
          f'</td><td class="n">{c.get("patches_checked")}/{c.get("patches_total")}</td>'
          f'<td>{_e(_dur(c.get("seconds")))}</td><td>'
          + ("" if not ff else f'patch {ff.get("index")} {_e(ff.get("subject"))}: '
             f'{_e(ff.get("problem"))}<pre>{_e(ff.get("error_excerpt") or "")}</pre>')
          + (_e(c.get("problem")) if c.get("problem") else "") + '</td></tr>')
    w('</table>')
    w('<details><summary>Time per patch per configuration</summary><table><tr><th>#</th>'
      '<th>subject</th>' + "".join(f'<th>{_e(c.get("config"))}</th>' for c in configs) + '</tr>')
    per = [{p.get("index"): p for p in c.get("patches") or []} for c in configs]
    for i, cm in enumerate(d.get("commits") or [], 1):
        cells = []
        for m in per:
            p = m.get(i)
            if p is None:
                cells.append('<td class="nr">-</td>')
            elif not p.get("ok"):
                cells.append(f'<td class="fail">FAIL {_e(p.get("problem"))}</td>')
            else:
                t = (f'cached ({_e(_dur(p.get("built_seconds")))})' if p.get("action") == "cached"
                     else f'{_e(_dur(p.get("seconds")))} {_e(p.get("action"))}')
                bad = _patch_run_marks(p)
                cells.append(f'<td class="{"fail" if bad[1] else "n"}">{t}{bad[0]}</td>')
        w(f'<tr><td class="n">{i}</td><td>{_e(cm.get("subject"))}</td>{"".join(cells)}</tr>')
    w('</table></details>')
    for c in configs:
        for line in _run_lines(c):
            w(f'<p>{_e(line)}</p>')


def _patch_run_marks(p: dict) -> tuple:
    """(HTML after a patch's build time: its object code and its boot, failed?)."""
    out, failed = [], False
    code = p.get("code")
    if code is not None:
        n = sum(len(d.get("changed") or []) + len(d.get("added") or []) + len(d.get("removed") or [])
                for d in code.get("diffs") or [])
        if code.get("unexpected"):
            failed = True
            out.append("code: " + ", ".join(
                f'{u["function"]} {u["new_size"] - u["old_size"]:+d} UNEXPECTED'
                for u in code["unexpected"][:3]))
        else:
            out.append(f"code: {n} function(s) changed, declared" if n else "code: same")
    b = p.get("boot")
    if b is not None:
        v = b.get("verdict")
        failed = failed or v not in ("pass", "same")
        out.append(f"boot: same kernel as patch {b.get('same_as')}" if b.get("same_as")
                   and v in ("pass", "same") else f"boot: {v} {_dur(b.get('seconds'))}")
    return ("".join(f"<br>{_e(x)}" for x in out), failed)


def _run_lines(c: dict) -> list:
    """One line each for a configuration's object-code check and runtime bisect."""
    ps = c.get("patches") or []
    coded = [p for p in ps if p.get("code") is not None]
    out = []
    if coded:
        same = sum(not p["code"].get("diffs") for p in coded)
        bad = [p for p in coded if p["code"].get("unexpected")]
        out.append(f"{c.get('config')}: object code: {same} of {len(coded)} patches change no "
                   f"function's code; {len(bad)} change code their entry does not declare"
                   + (": " + ", ".join(f"patch {p.get('index')}" for p in bad[:8]) if bad else ""))
    if c.get("runtime"):
        own = [p for p in ps if p.get("boot") and not p["boot"].get("same_as")]
        failed = [p for p in ps if p.get("boot") and p["boot"].get("verdict") not in ("pass", "same")]
        out.append(f"{c.get('config')}: runtime: {sum(p['boot']['verdict'] == 'pass' for p in own)} "
                   f"of {len(own)} kernels passed the in-guest tests"
                   + (": failed " + ", ".join(f"patch {p.get('index')}" for p in failed[:8])
                      if failed else ""))
    return out


def _html_residue(rv: Review, w) -> None:
    _sec(w, "residue")
    w('<p>Uses of struct page left in the slab code after the series, classified by '
      '<code>cocci/residue.toml</code>.</p>')
    f = rv.results.get("residue")
    w(_found_head(f))
    if f is not None and f.status == R.THIS:
        d = f.data
        w(f'<p>Files checked: {_e(", ".join(d.get("files") or []) or "?")}.</p>')
        w('<table><tr><th>file</th><th>uses</th><th>allowed</th><th>NOT allowed</th></tr>')
        for path, u, a, n in residue_counts(d):
            w(f'<tr><td><code>{_e(path)}</code></td><td class="n">{u}</td><td class="n">{a}</td>'
              f'<td class="n">{n}</td></tr>')
        w('</table>')
        nots = d.get("not_allowed") or []
        if nots:
            kinds = Counter(x.get("kind") for x in nots)
            w(f'<p class="fail">{len(nots)} NOT allowed: '
              + _e(", ".join(f"{k} {n}" for k, n in kinds.most_common())) + '</p>')
            w('<details><summary>The uses that are NOT allowed</summary><table>'
              '<tr><th>where</th><th>function</th><th>kind</th><th>text</th></tr>')
            for x in nots:
                w(f'<tr><td><code>{_e(x.get("file"))}:{_e(x.get("line"))}</code></td>'
                  f'<td>{_e(x.get("function"))}</td><td>{_e(x.get("kind"))}</td>'
                  f'<td><code>{_e(x.get("text"))}</code></td></tr>')
            w('</table></details>')
        else:
            w('<p class="ok">Every use is allowed.</p>')
        why = Counter(x.get("why") for x in d.get("allowed") or [])
        if why:
            w('<details><summary>Allowed uses by reason</summary><table><tr><th>uses</th>'
              '<th>why</th></tr>')
            for k, n in why.most_common():
                w(f'<tr><td class="n">{n}</td><td>{_e(k)}</td></tr>')
            w('</table></details>')
        for e in d.get("unused_entries") or []:
            w(f'<p class="small">allowlist entry not used: {_e(e)}</p>')
    w('</section>')


def _html_boot(rv: Review, w) -> None:
    from slabconv.pipeline import DEFAULT_CONFIGS
    _sec(w, "boot")
    w('<p>The patched kernel of each configuration booted in QEMU with the in-guest tests '
      '(KTAP).</p>')
    w('<table><tr><th>config</th><th>result</th><th>tests</th><th>time</th><th>accel</th>'
      '<th>command line</th></tr>')
    found = []
    for c in rv.configs("boot-", DEFAULT_CONFIGS):
        f = rv.results.get(f"boot-{c}")
        if f is None or f.status != R.THIS:
            note = "the cache has no such result" if f is None else f.note
            w(f'<tr><td>{_e(c)}</td><td colspan="5"><span class="nr">not run</span> '
              f'<span class="small">{_e(note)}</span></td></tr>')
            continue
        d = f.data
        w(f'<tr><td>{_e(c)}</td><td>{_status_html("pass" if d.get("passed") else "FAIL")}</td>'
          f'<td>{_e(boot_counts(d))}</td><td>{_e(_dur(d.get("seconds")))}</td>'
          f'<td>{_e(d.get("accel", "?"))}</td><td><code>{_e(d.get("cmdline", ""))}</code></td></tr>')
        found.append((c, f))
    w('</table>')
    for c, f in found:
        d = f.data
        w(f'<details><summary>{_e(c)}: where this result comes from, failures, KTAP</summary>'
          f'{_found_head(f)}')
        for x in d.get("failures") or []:
            w(f'<pre class="fail">{_e(x)}</pre>')
        ktap = d.get("ktap") or f.extra.get("ktap")
        if ktap:
            w(f'<pre>{_e(ktap)}</pre>')
        w('</details>')
    w('</section>')


def _html_notes(rv: Review, w) -> None:
    _sec(w, "notes")
    w(f'<p><strong>Attribution.</strong> {_e(attribution_note())}</p>')
    w(f'<p><strong>Results.</strong> {_e(provenance_note())}</p>')
    w('<p><strong>Counts.</strong> A hunk is one <code>@@</code> block of a patch; '
      '+/&minus; are the lines it adds and removes.  Per-file and per-series totals are sums '
      'over the patches (a line changed by two patches counts twice), so they are larger than '
      'the cover letter\'s diffstat of the whole series.</p>')
    w('</section>')


# ---------------------------------------------------------------------------
# plain text

def render_text(rv: Review) -> str:
    from slabconv.pipeline import DEFAULT_CONFIGS
    o: list[str] = []
    w = o.append

    def head(sid):
        i, name = next((i, n) for i, (s, n) in enumerate(SECTIONS, 1) if s == sid)
        w("")
        w(f"{i}. {name}")
        w("=" * len(f"{i}. {name}"))

    w(f"slabconv review: Linux {rv.version} -- {rv.cover.subject or 'the series'}")
    w(f"{rv.source.get('source', 'source unknown')}, spatch {rv.source.get('spatch', '?')}, "
      f"identity {rv.source.get('identity', '?')}, date {rv.source.get('date', '?')}")
    w(f"series {rv.series_dir} (id {rv.series_id or '-'}); made {rv.generated}")
    w("")
    w("Contents: " + "; ".join(f"{i}. {n}" for i, (_, n) in enumerate(SECTIONS, 1)))

    head("summary")
    hunks = sum(len(p.hunks) for p in rv.patches)
    used = [s for s in rv.sources if s.patches]
    w(f"patches:            {len(rv.patches)} ({hunks} hunks, +{sum(p.added for p in rv.patches)} "
      f"-{sum(p.removed for p in rv.patches)} lines in {len(rv.files)} files)")
    w(f"skipped entries:    {len(rv.skipped)}")
    w(f"rules and templates: {len(rv.sources)} ({len(used)} used by the series)")
    for label, _, st in _result_rows(rv):
        w(f"{label + ':':19} {st}")
    for n in rv.notes:
        w(f"NOTE: {n}")
    if rv.mismatches:
        w(f"NOTE: {len(rv.mismatches)} patch(es) name other rules than the manifest now does")

    head("rules")
    w(_wrap(attribution_note()))
    w("")
    width = max(len(s.key) for s in rv.sources) if rv.sources else 10
    w(f"{'rule / template':{width}}  {'kind':8} {'conf.':9} tests patches hunks   own")
    for s in rv.sources:
        w(f"{s.key:{width}}  {s.kind:8} {(s.confidence_word or '-'):9} "
          f"{'-' if s.tests is None else s.tests:>5} {len(s.patches):>7} {s.hunks:>5} "
          f"{s.own_hunks:>5}")
    for s in rv.sources:
        w("")
        w(f"{s.key} [{s.kind}]{'' if s.exists else ' (file gone)'}")
        w(f"  {s.title or '(no header)'}")
        w(f"  Confidence: {s.confidence or 'not stated'}")
        if s.options:
            w(f"  Options: {s.options}")
        for why in s.why:
            w(_wrap(f"why not a rule: {why}", "  "))
        if not s.patches:
            w(f"  {_unused_why(s)}")
            continue
        if s.kind == "template":
            w(f"  {len(s.carries)} of the {s.hunks} hunks of its patches carry its text: "
              + ", ".join(f"{n:04d} {f} #{i}" for n, f, i in sorted(s.carries)))
        w(f"  patches ({len(s.patches)}): " + " ".join(p.tag for p in s.patches))
        own = s.own()
        for path, items in s.by_file().items():
            n = sum(len(fd.hunks) for _, fd in items)
            mine = sum(1 for p, fd in items for h in fd.hunks if (p.number, path, h.index) in own)
            w(f"  {path}: {_n(n, 'hunk')} in {_n(len(items), 'patch', 'patches')}, {mine} own")

    head("files")
    fl = rv.files
    width = max((len(f) for f in fl), default=10)
    w(f"{'file':{width}}  patches hunks     +     -  rules (hunks)")
    for path, d in fl.items():
        w(f"{path:{width}}  {len(d['patches']):>7} {d['hunks']:>5} {d['added']:>5} "
          f"{d['removed']:>5}  " + ", ".join(f"{_short(k)} {n}" for k, n in
                                            d["by_source"].most_common()))

    head("patches")
    for p in rv.patches:
        w(f"{p.tag} {p.subject}")
        w(f"     conversions from: {_origin(p)}")
        w(f"     entry: {rv.entry_of.get(p.number, 'none found')}; generated by: "
          + (", ".join(_short(k) for k in p.sources) or "NO Generated-with trailer"))
        if p.number in rv.mismatches:
            w("     manifest now: " + ", ".join(_short(k) for k in rv.mismatches[p.number]))
        for f in p.files:
            w(f"     {f.path}  +{f.added} -{f.removed}  {_n(len(f.hunks), 'hunk')}"
              + ("" if f.status == "modified" else f" ({f.status})")
              + ("" if p.sources_of(f.path) == p.sources else
                 "  [" + ", ".join(_short(k) for k in p.sources_of(f.path)) + "]"))
            for h in f.hunks:
                w(f"       @@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@ "
                  f"{h.context}  (+{h.added} -{h.removed})")

    head("skipped")
    if not rv.skipped:
        w("None: every entry of the manifest has a patch.")
    for s in rv.skipped:
        cov = {True: "in the cover letter", False: "NOT in the cover letter",
               None: "no cover letter"}[s.in_cover]
        w(f"{s.subject} ({s.id or '?'}; {cov})")
        w(_wrap((f"{s.verdict}: " if s.verdict else "") + s.reason, "    "))
    if rv.verdicts is not None:
        w("")
        w("Per-entry verdicts (ENTRIES):")
        for v in rv.verdicts:
            w(f"  {v.status:15} {v.subject}")

    head("verify")
    for c in rv.configs("verify-", DEFAULT_CONFIGS):
        f = rv.results.get(f"verify-{c}")
        if f is None or f.status != R.THIS:
            w(f"{c}: not run ({'the cache has no such result' if f is None else f.note})")
            continue
        v = verify_line(f.data)
        w(f"{c}: {'ok' if v['ok'] else 'FAILED'}; baseline {v['baseline']}; patched "
          f"{v['patched']}; {len(v['new'])} new warnings, {v['gone']} gone; sparse "
          f"{v['sparse']}, {len(v['sparse_new'])} new; {_dur(v['seconds'])}")
        w(_wrap(f"({f.how}; {f.recorded}; {f.path})", "    "))
        w(_wrap(f"code against the baseline: {v['code']}", "    "))
        for pr in v["problems"]:
            w(f"    problem: {pr}")
        for x in v["new"] + v["sparse_new"]:
            w(f"    new: {x.get('text') if isinstance(x, dict) else x}")
    fu = rv.results.get("field-users")
    if fu is not None and fu.status == R.THIS and isinstance(fu.data, dict):
        w(f"field users: {len(fu.data.get('files') or [])} file(s) used a slab member of "
          f"struct page before the series; {len(fu.data.get('left') or [])} still do")
    cl = rv.results.get("compiled-lines")
    if cl is not None and cl.status == R.THIS and isinstance(cl.data, dict):
        d = cl.data
        total = sum(x.get("changed_code_lines", 0) for x in d.get("files") or [])
        w(f"compiled lines: {'ok' if d.get('ok') else 'FAILED'}; "
          f"{total - d.get('missed', 0) - d.get('allowed', 0)} of {total} changed code lines "
          f"compiled by a build ({', '.join(d.get('builds') or [])}), "
          f"{d.get('allowed', 0)} allowed not to be, {d.get('missed', 0)} NOT compiled")
        for x in d.get("files") or []:
            for n, t in (x.get("not_compiled") or {}).items():
                w(f"    NOT compiled {x.get('file')}:{n}: {t.strip()}")
    w("")
    w("Per-patch builds:")
    f = rv.results.get("bisect")
    if f is None or f.status != R.THIS:
        w(f"  not run ({'the cache has no such result' if f is None else f.note})")
    else:
        w(_wrap(f"({f.how}; {f.recorded}; {f.path})", "  "))
        for c in f.data.get("configs") or []:
            ff = c.get("first_failure")
            w(f"  {c.get('config')}: {'ok' if c.get('ok') else 'FAILED'}, "
              f"{c.get('patches_checked')}/{c.get('patches_total')} patches, "
              f"{_dur(c.get('seconds'))}"
              + (f"; first failure: patch {ff.get('index')} {ff.get('subject')}: "
                 f"{ff.get('problem')}" if ff else ""))
            for line in _run_lines(c):
                w(f"  {line}")

    head("residue")
    f = rv.results.get("residue")
    if f is None or f.status != R.THIS:
        w(f"not run ({'the cache has no such result' if f is None else f.note})")
    else:
        w(_wrap(f"({f.how}; {f.recorded}; {f.path})"))
        w(_wrap("files checked: " + (", ".join(f.data.get("files") or []) or "?")))
        for path, u, a, n in residue_counts(f.data):
            w(f"  {path}: {u} uses, {a} allowed, {n} NOT allowed")
        for x in (f.data.get("not_allowed") or [])[:50]:
            w(f"  NOT allowed: {x.get('file')}:{x.get('line')} {x.get('function')} "
              f"{x.get('kind')} {x.get('text')}")

    head("boot")
    for c in rv.configs("boot-", DEFAULT_CONFIGS):
        f = rv.results.get(f"boot-{c}")
        if f is None or f.status != R.THIS:
            w(f"{c}: not run ({'the cache has no such result' if f is None else f.note})")
            continue
        d = f.data
        w(f"{c}: {'PASS' if d.get('passed') else 'FAIL'}; {boot_counts(d)}; "
          f"{_dur(d.get('seconds'))} under {d.get('accel', '?')}")
        w(_wrap(f"({f.how}; {f.recorded}; {f.path})", "    "))
        for x in d.get("failures") or []:
            w(f"    failure: {x.splitlines()[0] if x else x}")

    head("notes")
    w(_wrap("Attribution. " + attribution_note()))
    w("")
    w(_wrap("Results. " + provenance_note()))
    w("")
    w(_wrap("Counts. A hunk is one @@ block of a patch; +/- are the lines it adds and "
            "removes.  Per-file and per-series totals are sums over the patches."))
    return "\n".join(o) + "\n"


def _wrap(text: str, indent: str = "") -> str:
    import textwrap
    return "\n".join(textwrap.wrap(text, 78, initial_indent=indent, subsequent_indent=indent))


# ---------------------------------------------------------------------------
# command line

def write(rv: Review, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    h, t = out / "review.html", out / "review.txt"
    h.write_text(render_html(rv))
    t.write_text(render_text(rv))
    return h, t


def cmd_review(args) -> int:
    version = args.kernel or paths.DEFAULT_KERNEL
    series = Path(args.series).resolve() if args.series else None
    if series is None and args.tree:
        from regen.worktree import tree_id
        from slabconv.source import kernel_version
        t = Path(args.tree).expanduser().resolve()
        version = kernel_version(t)
        series = paths.cache_root() / "out" / tree_id(t) / "patches"
    rv = build(version, series)
    out = Path(args.output).resolve() if args.output else paths.cache_dir("review", version)
    h, t = write(rv, out)
    info("review", f"{len(rv.patches)} patches, {len(rv.sources)} rules and templates, "
                   f"{len(rv.skipped)} skipped entries; results: "
                   + ", ".join(f"{label} {st}" for label, _, st in _result_rows(rv)))
    print(h)
    print(t)
    return 0


def add_command(sub) -> None:
    p = sub.add_parser("review", help="write the review report (HTML and text): each rule "
                                      "beside its hunks, skipped entries, the last results")
    p.add_argument("--kernel", "-k", default=None,
                   help=f"kernel version of the series (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--tree", default=None,
                   help="the series regenerated for this tree of yours (its cache directory)")
    p.add_argument("--series", default=None,
                   help="the series directory (default generated-patches/<version>/)")
    p.add_argument("--output", "-o", default=None,
                   help="where to write review.html and review.txt "
                        "(default $SLABCONV_CACHE/review/<version>/)")
    p.set_defaults(func=cmd_review)
