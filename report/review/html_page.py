"""The review page as HTML: static, self-contained (inline CSS, no
script, no network).  page() lays out the header, the contents and the
sections; each section's function renders what model.py gives for it."""
from __future__ import annotations

import html
from collections import Counter

from base.log import duration
from .. import patches as P, results as R
from . import model
from .model import Review, _n, _short
from .sources import Source, unused_why


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
.made{display:block;font:11px/1.5 system-ui,sans-serif;color:#0b5cad;background:#eef4fb;border-top:1px solid #d6e3f3;margin-top:4px}
.beside{display:flex;gap:12px;align-items:flex-start}
.beside>.col{flex:1 1 0;min-width:0}
pre.code{max-height:520px;overflow:auto}
#reproduced.repro{color:#b7f5c5}
#reproduced.norepro{color:#f5d9a7}
"""


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def _status_html(status: str) -> str:
    cls = {"pass": "ok", "passed": "ok", "ok": "ok", "yes": "ok", "exact": "ok",
           "recorded": "ok", "FAIL": "fail", "FAILED": "fail"}.get(status.split(" (")[0], "nr")
    return f'<span class="{cls}">{_e(status)}</span>'


def _diff_html(hunks, caption=None) -> str:
    out = ['<pre class="diff">']
    for h in hunks:
        if caption is not None:
            out.append(caption(h))
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


def page(rv: Review, sections) -> str:
    """The whole page: the header, the contents, then each of `sections`
    (each with an id, a title, content(rv) and html(rv, content, w))."""
    o: list[str] = []
    w = o.append
    title = f"slabconv review: Linux {rv.version}"
    ok, line = rv.reproduced_line
    w(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
      f'<meta name="viewport" content="width=device-width,initial-scale=1">'
      f'<title>{_e(title)}</title><style>{CSS}</style></head><body>')
    w(f'<header><h1>{_e(title)} &mdash; {_e(rv.cover.subject or "the series")}</h1>'
      f'<p>{_e(rv.source.get("source", "source unknown (no SOURCE file)"))}, spatch '
      f'{_e(rv.source.get("spatch", "?"))}, identity {_e(rv.source.get("identity", "?"))}, '
      f'date {_e(rv.source.get("date", "?"))}</p>'
      f'<p>series <code>{_e(rv.series_dir)}</code> (id {_e(rv.series_id or "-")}); '
      f'page made {_e(rv.generated)}</p>'
      f'<p id="reproduced" class="{"repro" if ok else "norepro"}">'
      f'{_e(line)}</p></header><main>')
    w('<nav id="toc"><strong>Contents</strong>')
    for i, s in enumerate(sections, 1):
        w(f'<a href="#{s.id}">{i}. {_e(s.title)}</a>')
    w("</nav>")
    for i, s in enumerate(sections, 1):
        w(f'<section id="{s.id}"><h2>{i}. {_e(s.title)}</h2>')
        s.html(rv, s.content(rv), w)
        w('</section>')
    w("</main></body></html>\n")
    return "".join(o)


def summary(rv: Review, c: model.Summary, w) -> None:
    w('<table>')
    w(f'<tr><th>patches</th><td class="n" id="patch-count">{c.patches}</td>'
      f'<td>{c.hunks} hunks, +{c.added} '
      f'&minus;{c.removed} lines in '
      f'{c.files} files (summed over the patches)</td></tr>')
    w(f'<tr><th>skipped entries</th><td class="n">{c.skipped}</td>'
      f'<td>steps of the original series with no patch here (<a href="#skipped">why</a>)</td></tr>')
    w(f'<tr><th>rules and templates</th><td class="n">{c.sources}</td>'
      f'<td>{c.used} used by the series, {c.sources - c.used} not '
      f'(report rules and the like)</td></tr>')
    w(f'<tr><th>reproduced</th><td>{_status_html(c.reproduced_status)}</td>'
      f'<td>{_e(c.reproduced_line)}</td></tr>')
    at = c.attributed is not None
    w(f'<tr><th>attribution</th><td>{_status_html("exact" if at else "by manifest")}</td><td>'
      + (f'{c.attributed} of {c.patches} patches attributed hunk by hunk, from '
         f'{c.runs} runs (<a href="#rules">per rule</a>)' if at else
         'not recorded for this series: <code>make attribute</code>') + '</td></tr>')
    rd = c.rangediff
    w(f'<tr><th>range-diff</th><td>{_status_html("recorded" if rd else "not run")}</td><td>'
      + (_e(rd) + ' (<a href="#rangediff">details</a>)' if rd else
         'not recorded for this series: <code>make range-diff</code>') + '</td></tr>')
    for label, sid, st in c.results:
        w(f'<tr><th>{_e(label)}</th><td>{_status_html(st)}</td>'
          f'<td><a href="#{sid}">details</a></td></tr>')
    for o in c.results_from:
        w(f'<tr><th>results of</th><td></td><td class="results-from">{_e(o)}</td></tr>')
    w('</table>')
    if c.blurb:
        w(f'<details><summary>Cover letter text</summary><pre class="doc">'
          f'{_e(c.blurb)}</pre></details>')
    for n in c.notes:
        w(f'<p class="warn">{_e(n)}</p>')
    if c.mismatches:
        w(f'<p class="warn">{_n(c.mismatches, "patch", "patches")} name rules in their '
          f'Generated by: lines that differ from what the manifest says now (marked in '
          f'<a href="#patches">Patches</a>): the series may be older than the rules.</p>')


def rules(rv: Review, c: model.Rules, w) -> None:
    w(f'<p>{_e(c.note)}</p>')
    w('<table id="rule-table"><tr><th>rule / template</th><th>kind</th><th>confidence</th>'
      '<th>tests</th><th>patches</th><th>instances</th><th>hunks</th><th>own</th>'
      '<th>files (hunks)</th></tr>')
    for s in c.sources:
        bf = sorted(s.by_file().items(), key=lambda kv: -sum(len(s.mine(p, fd)) for p, fd in kv[1]))
        files = ", ".join(f"{_e(f)} ({sum(len(s.mine(p, fd)) for p, fd in v)})" for f, v in bf[:4])
        if len(bf) > 4:
            files += f" and {len(bf) - 4} more"
        w(f'<tr data-source="{_e(s.key)}"><td><a href="#{s.anchor}">{_e(s.key)}</a>'
          f'{"" if s.exists else " <em>(file gone)</em>"}</td><td>{_e(s.kind)}</td>'
          f'<td>{_e(s.confidence_word or "-")}</td>'
          f'<td class="n">{"-" if s.tests is None else s.tests}</td>'
          f'<td class="n">{len(s.patches)}</td>'
          f'<td class="n">{"-" if s.instances is None else s.instances}</td>'
          f'<td class="n hunks">{s.hunks}</td>'
          f'<td class="n own">{s.own_hunks}{_carries_note(s)}</td>'
          f'<td class="small">{files or _e(unused_why(s))}</td></tr>')
    w('</table>')
    if c.driver:
        w('<p>The driver\'s own edits, in the same replay (they count in no rule\'s '
          '"own"): ' + "; ".join(
              f'<code>{_e(k)}</code> {_n(hunks, "hunk")} in '
              f'{_n(runs, "run")}' for k, hunks, runs in c.driver) + '.</p>')
    if c.inexact:
        w('<table><tr><th>entry</th><th>patch</th><th>why its replay is not exact</th></tr>')
        for e in c.inexact:
            w(f'<tr><td>{_e(e.entry)}</td><td>{e.patch:04d}</td><td class="small">'
              f'{_e(e.error or "differs in " + ", ".join(e.differs))}</td></tr>')
        w('</table>')
    for s in c.sources:
        _html_source(rv, s, w)


def _carries_note(s: Source) -> str:
    if s.kind != "template" or not s.patches:
        return ""
    return f' <span class="small">({len(s.carries)} with its text)</span>'


def _html_source(rv: Review, s: Source, w) -> None:
    w(f'<details class="box source" id="{s.anchor}"><summary><span class="tag {s.kind}">'
      f'{_e(s.kind)}</span> <strong>{_e(s.key)}</strong> &mdash; {_e(s.title or "(no header)")} '
      f'<span class="small">[{_n(len(s.patches), "patch", "patches")}, '
      f'{_n(s.hunks, "hunk")}, {s.own_hunks} own]</span></summary>')
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
    w('<div class="beside"><div class="col">')
    if s.text:
        what = "SmPL" if s.kind == "rule" else "Template"
        w(f'<details class="smpl"><summary>{what}: <code>{_e(s.key)}</code> '
          f'({_n(len(s.text.splitlines()), "line")})</summary>'
          f'<pre class="code">{_e(s.text)}</pre></details>')
    if s.kind == "rule":
        _html_cases(s, w)
    w('</div><div class="col">')
    _html_source_hunks(rv, s, w)
    w('</div></div></details>')


def _html_cases(s: Source, w) -> None:
    if not s.cases:
        w(f'<p class="nr">No test case in cocci/tests/{_e(s.name)}/.</p>')
        return
    w(f'<details class="cases"><summary>Tests: {_n(len(s.cases), "case")} in '
      f'<code>cocci/tests/{_e(s.name)}/</code> (.c &rarr; .res)</summary>')
    for c in s.cases:
        exp = {"res": ".res", "out": ".out (what it reports)", "": " (no expected file)"}[c.kind]
        w(f'<div class="case" data-case="{_e(c.name)}"><div class="hunkcap"><code>{_e(c.name)}.c'
          f'</code> &rarr; <code>{_e(c.name)}{_e(exp)}</code>'
          + (f' &middot; <code>{_e(c.args)}</code>' if c.args else "") + '</div>')
        if c.kind == "res":
            d = c.diff()
            w(_udiff_html(d) if d else '<p class="small">the rule leaves this case as it is</p>')
        elif c.kind == "out":
            w(f'<pre class="code">{_e(c.expected)}</pre>')
        w(f'<details><summary>{_e(c.name)}.c and {_e(c.name)}{_e(exp.split()[0])} in full'
          f'</summary><div class="beside"><pre class="code col">{_e(c.input)}</pre>'
          f'<pre class="code col">{_e(c.expected or "")}</pre></div></details></div>')
    w('</details>')


def _udiff_html(text: str) -> str:
    out = ['<pre class="diff">']
    for ln in text.splitlines():
        cls = ("h" if ln.startswith(("@@", "---", "+++")) else "a" if ln.startswith("+")
               else "d" if ln.startswith("-") else "c")
        out.append(f'<span class="{cls}">{_e(ln) or " "}</span>')
    out.append("</pre>")
    return "".join(out)


def _hunk_caption(p: P.Patch, path: str):
    """A caption per hunk: the runs that made it (recorded attribution)."""
    if not p.attributed:
        return None

    def cap(h) -> str:
        runs = p.hunk_pieces.get((path, h.index)) or []
        return (f'<span class="made">hunk {h.index} made by: '
                + (_e(", ".join(runs)) if runs else "nothing recorded") + '</span>')
    return cap


def _html_source_hunks(rv: Review, s: Source, w) -> None:
    if not s.patches:
        w(f'<p class="nr">{_e(unused_why(s))}.</p>')
        return
    if s.kind == "template" and s.carries:
        w(f'<p>{_n(len(s.carries), "hunk")} of its patches without a recorded attribution '
          f'carry the template\'s text (found by content: most of the lines the hunk adds '
          f'are lines of the template); marked below.</p>')
    w(f'<p>{_n(s.hunks, "hunk")} {"made by it" if rv.attribution else "in the files it could change"}, '
      f'{s.own_hunks} of them its own.</p>')
    w(f'<h3>Patches ({len(s.patches)})</h3><ul>')
    for p in s.patches:
        others = [x for x in p.sources if x != s.key]
        idle = p.attributed and not any(s.mine(p, f) for f in p.files)
        w(f'<li>{_patch_link(p)} {_e(p.subject)} '
          + ('<span class="small">(made by it alone)</span>' if not others else
             '<span class="small">with ' + " ".join(_src_link(rv, x) for x in others)
             + '</span>')
          + (' <span class="nr">its runs made no hunk of this patch</span>' if idle else "")
          + '</li>')
    w('</ul><h3>Its hunks, by file</h3>')
    for path, items in s.by_file().items():
        n = sum(len(s.mine(p, fd)) for p, fd in items)
        w(f'<details><summary><code>{_e(path)}</code> &mdash; {_n(n, "hunk")} in '
          f'{_n(len(items), "patch", "patches")}</summary>')
        for p, fd in items:
            mine = s.mine(p, fd)
            own = sum(1 for h in mine if p.sources_of_hunk(path, h.index) == [s.key])
            if p.attributed:
                how = (f" &middot; {own} made by it alone, the others with "
                       + ", ".join(_e(_short(x)) for x in dict.fromkeys(
                           y for h in mine for y in p.sources_of_hunk(path, h.index)
                           if y != s.key)) if own < len(mine) else " &middot; all made by it alone")
            else:
                others = [x for x in p.sources_of(path) if x != s.key]
                how = (" &middot; in this file also from " + ", ".join(_e(_short(x)) for x in others)
                       if others else " &middot; its own (no other source of the patch works "
                                      "on this file)")
            w(f'<div class="hunkcap">{_patch_link(p)} {_e(p.subject)} &middot; '
              f'{_n(len(mine), "hunk")} of {len(fd.hunks)}{how}</div>')
            if s.kind == "template" and not p.attributed:
                carry = [h for h in mine if (p.number, path, h.index) in s.carries]
                if carry:
                    w('<div class="hunkcap">carrying the template\'s text: hunk '
                      + ", ".join(str(h.index) for h in carry) + '</div>')
            w(_diff_html(mine, _hunk_caption(p, path)))
        w('</details>')


def files(rv: Review, c: dict, w) -> None:
    w('<p>Hunks per file of the series, and per rule in each file (a hunk of a patch made '
      'by several rules counts for each of them).</p>')
    w('<table><tr><th>file</th><th>patches</th><th>hunks</th><th>+</th><th>&minus;</th>'
      '<th>rules (hunks)</th></tr>')
    for path, d in c.items():
        by = " ".join(f'{_src_link(rv, k)}{n}' for k, n in d["by_source"].most_common())
        w(f'<tr><td><code>{_e(path)}</code></td><td class="n">{len(d["patches"])}</td>'
          f'<td class="n">{d["hunks"]}</td><td class="n">{d["added"]}</td>'
          f'<td class="n">{d["removed"]}</td><td>{by}</td></tr>')
    w('</table>')


def patches(rv: Review, c: list, w) -> None:
    w(f'<p>{_n(len(rv.patches), "patch", "patches")} in <code>{_e(rv.series_dir)}</code>, '
      f'in order.  Open one for its message, files and hunks.</p>')
    for v in c:
        p = v.patch
        w(f'<article class="patch box" id="patch-{p.tag}"><details><summary>'
          f'<strong>{p.tag}</strong> {_e(p.subject)} <span class="small">'
          f'[{_n(len(p.files), "file")}, +{p.added} &minus;{p.removed}, '
          f'{_n(len(p.hunks), "hunk")}]</span> '
          + " ".join(_src_link(rv, k) for k in p.sources) + '</summary>')
        w('<table>')
        w(f'<tr><th>file</th><td><code>{_e(p.name)}</code></td></tr>')
        toml = v.toml
        w(f'<tr><th>manifest entry</th><td>{_e(v.entry or "none found")}'
          + (f'<details class="entry"><summary>its [[entry]] in cocci/series.toml '
             f'({_n(len(toml.splitlines()), "line")})</summary><pre class="code">{_e(toml)}</pre>'
             f'</details>' if toml else "") + '</td></tr>')
        w(f'<tr><th>conversions from</th><td>{_e(v.origin)}</td></tr>')
        w('<tr><th>generated by</th><td>'
          + (" ".join(_src_link(rv, k) for k in p.sources)
             or '<span class="fail">no Generated by: line</span>') + '</td></tr>')
        if v.mismatch is not None:
            w('<tr><th>manifest now</th><td class="warn">'
              + " ".join(_src_link(rv, k) for k in v.mismatch) + '</td></tr>')
        w('</table>')
        w(f'<pre class="doc">{_e(p.message)}</pre>')
        w('<table><tr><th>file</th><th>hunks</th><th>+</th><th>&minus;</th>'
          f'<th>attributed to {"(recorded, hunk by hunk)" if p.attributed else "(by the manifest)"}'
          '</th></tr>')
        for f in p.files:
            w(f'<tr><td><code>{_e(f.path)}</code>{"" if f.status == "modified" else " (" + _e(f.status) + ")"}'
              f'</td><td class="n">{len(f.hunks)}</td><td class="n">{f.added}</td>'
              f'<td class="n">{f.removed}</td><td>'
              + " ".join(_src_link(rv, k) for k in p.sources_of(f.path)) + '</td></tr>')
        w('</table>')
        for f in p.files:
            w(f'<details><summary><code>{_e(f.path)}</code> +{f.added} &minus;{f.removed}'
              f'</summary>{_diff_html(f.hunks, _hunk_caption(p, f.path))}</details>')
        w('</details></article>')


def rangediff(rv: Review, c: model.RangeDiff, w) -> None:
    rd = c.recorded
    if rd is None:
        w('<p class="nr">not run: no range-diff is recorded for this series.  '
          '<code>make range-diff</code> compares it with the series committed at HEAD (or '
          'OLD=rev|dir, OLD_KERNEL=6.1) and records the result for it.</p>')
        return
    w(f'<p><code>git range-diff</code> of <strong>{_e(rd.get("old"))}</strong> '
      f'(series {_e(rd.get("old_series"))}, {_e(rd.get("old_source"))}) and '
      f'<strong>{_e(rd.get("new"))}</strong> (this series, {_e(rd.get("new_source"))}), each '
      f'applied with <code>git am</code> to its baseline: {_e(c.summary)}.</p>'
      f'<p class="small"><code>{_e(rd.get("path"))}</code></p>')
    w('<table id="rangediff-pairs"><tr><th>old</th><th></th><th>new</th><th>subject</th></tr>')
    for pr in rd["pairs"]:
        cls = {"=": "ok", "!": "fail"}.get(pr.status, "nr")
        new = c.by_number.get(pr.new) if pr.new else None
        w(f'<tr data-status="{_e(pr.status)}"><td class="n">{pr.old or "-"}</td>'
          f'<td class="{cls}" title="{_e(c.words.get(pr.status, ""))}">{_e(pr.status)}</td>'
          f'<td class="n">{_patch_link(new) if new else (pr.new or "-")}</td>'
          f'<td>{_e(pr.subject)}'
          + (f'<details><summary>what changed</summary>{_udiff_html(pr.diff)}</details>'
             if pr.status == "!" and pr.diff.strip() else "") + '</td></tr>')
    w('</table>')


def skipped(rv: Review, c: model.Skips, w) -> None:
    if not c.skipped:
        w('<p>None: every entry of the manifest has a patch.</p>')
    else:
        w('<table><tr><th>entry</th><th>subject</th><th>why</th><th>in the cover letter</th></tr>')
        for s in c.skipped:
            cov = {True: "yes", False: "NO", None: "no cover letter"}[s.in_cover]
            why = (f"{s.verdict}: " if s.verdict else "") + s.reason
            w(f'<tr><td>{_e(s.id or "?")}</td><td>{_e(s.subject)}</td><td>{_e(why)}</td>'
              f'<td>{_e(cov)}</td></tr>')
        w('</table>')
    if c.verdicts is not None:
        w('<h3>Per-entry verdicts (ENTRIES)</h3><table><tr><th>verdict</th><th>subject</th>'
          '<th>evidence</th></tr>')
        for v in c.verdicts:
            w(f'<tr><td>{_e(v.status)}</td><td>{_e(v.subject)}</td>'
              f'<td class="small">{_e(" ".join(v.evidence))}</td></tr>')
        w('</table>')


def verify(rv: Review, c: model.Verify, w) -> None:
    w('<p>Baseline and patched kernel per configuration: the build, new compiler '
      'warnings, sparse warnings (baseline &rarr; patched).</p>')
    w('<table><tr><th>config</th><th>result</th><th>baseline</th><th>patched</th>'
      '<th>new warnings</th><th>gone</th><th>sparse</th><th>new sparse</th><th>time</th></tr>')
    for r in c.configs:
        if r.data is None:
            w(f'<tr><td>{_e(r.config)}</td><td colspan="8"><span class="nr">not run</span> '
              f'<span class="small">{_e(r.note)}</span></td></tr>')
            continue
        v = r.data
        w(f'<tr><td>{_e(r.config)}</td><td>{_status_html("ok" if v["ok"] else "FAILED")}</td>'
          f'<td>{_e(v["baseline"])}</td><td>{_e(v["patched"])}</td>'
          f'<td class="n">{len(v["new"])}</td><td class="n">{v["gone"]}</td>'
          f'<td>{_e(v["sparse"])}</td><td class="n">{len(v["sparse_new"])}</td>'
          f'<td>{_e(duration(v["seconds"], 1))}</td></tr>')
    w('</table>')
    for r in c.configs:
        if r.data is None:
            continue
        v = r.data
        w(f'<details><summary>{_e(r.config)}: where this result comes from, problems, new '
          f'warnings</summary>{_found_head(r.found)}')
        w(f'<p>Code, the whole series against the baseline: {_e(v["code"])}</p>')
        for pr in v["problems"]:
            w(f'<p class="fail">{_e(pr)}</p>')
        for x in v["new"] + v["sparse_new"]:
            w(f'<pre>{_e(x.get("text") or x)}</pre>')
        if not v["problems"] and not v["new"] and not v["sparse_new"]:
            w('<p>No problem, no new warning.</p>')
        w('</details>')
    if c.field_users is not None:
        rows = c.field_users.get("files") or []
        w(f'<h3>Users of struct page\'s slab members</h3><p>{len(rows)} file(s) used one '
          f'before the series; {len(c.field_users.get("left") or [])} still do after it.</p><table>'
          '<tr><th>file</th><th>uses</th><th>built by</th></tr>')
        for r in rows:
            w(f'<tr><td><code>{_e(r.get("file"))}</code></td><td class="n">{_e(r.get("uses"))}'
              f'</td><td>{_e(", ".join(r.get("built_by") or []) or "NOT BUILT: " + str(r.get("why_not")))}</td></tr>')
        w('</table>')
    if c.compiled is not None:
        _compiled(c.compiled, w)
    _bisect(c.bisect, w)


def _compiled(c: model.Compiled, w) -> None:
    """verify's changed-lines coverage (verify/compiled.py)."""
    d = c.data
    w(f'<h3>Changed lines the builds compiled</h3><p>{_status_html("ok" if d.get("ok") else "FAILED")} '
      f'{c.compiled} of {c.total} changed code lines '
      f'compiled by at least one of {_e(", ".join(d.get("builds") or []))}; '
      f'{d.get("allowed", 0)} allowed not to be; {d.get("missed", 0)} NOT compiled.</p>'
      '<table><tr><th>file</th><th>changed</th><th>compiled by (lines)</th>'
      '<th>not compiled</th></tr>')
    for x in d.get("files") or []:
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


def _bisect(f: R.Found | None, w) -> None:
    w('<h3>Per-patch builds (bisectability)</h3>')
    w(_found_head(f))
    if not model.this_series(f):
        return
    d = f.data
    configs = d.get("configs") or []
    w('<table><tr><th>config</th><th>result</th><th>checked</th><th>time</th>'
      '<th>first failure</th></tr>')
    for c in configs:
        ff = c.get("first_failure")
        w(f'<tr><td>{_e(c.get("config"))}</td><td>{_status_html("ok" if c.get("ok") else "FAILED")}'
          f'</td><td class="n">{c.get("patches_checked")}/{c.get("patches_total")}</td>'
          f'<td>{_e(duration(c.get("seconds"), 1))}</td><td>'
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
                t = (f'cached ({_e(duration(p.get("built_seconds"), 1))})'
                     if p.get("action") == "cached"
                     else f'{_e(duration(p.get("seconds"), 1))} {_e(p.get("action"))}')
                bad = _patch_run_marks(p)
                cells.append(f'<td class="{"fail" if bad[1] else "n"}">{t}{bad[0]}</td>')
        w(f'<tr><td class="n">{i}</td><td>{_e(cm.get("subject"))}</td>{"".join(cells)}</tr>')
    w('</table></details>')
    for c in configs:
        for line in model.run_lines(c):
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
                   and v in ("pass", "same") else f"boot: {v} {duration(b.get('seconds'), 1)}")
    return ("".join(f"<br>{_e(x)}" for x in out), failed)


def residue(rv: Review, c: model.Residue, w) -> None:
    w('<p>Uses of struct page left in the slab code after the series, classified by '
      '<code>cocci/residue.toml</code>.</p>')
    w(_found_head(c.found))
    if c.data is not None:
        d = c.data
        w(f'<p>Files checked: {_e(", ".join(d.get("files") or []) or "?")}.</p>')
        w('<table><tr><th>file</th><th>uses</th><th>allowed</th><th>NOT allowed</th></tr>')
        for path, u, a, n in c.counts:
            w(f'<tr><td><code>{_e(path)}</code></td><td class="n">{u}</td><td class="n">{a}</td>'
              f'<td class="n">{n}</td></tr>')
        w('</table>')
        nots = c.not_allowed
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
        if c.allowed_why:
            w('<details><summary>Allowed uses by reason</summary><table><tr><th>uses</th>'
              '<th>why</th></tr>')
            for k, n in c.allowed_why.most_common():
                w(f'<tr><td class="n">{n}</td><td>{_e(k)}</td></tr>')
            w('</table></details>')
        for e in d.get("unused_entries") or []:
            w(f'<p class="small">allowlist entry not used: {_e(e)}</p>')


def boot(rv: Review, c: list, w) -> None:
    w('<p>The patched kernel of each configuration booted in QEMU with the in-guest tests '
      '(KTAP).</p>')
    w('<table><tr><th>config</th><th>result</th><th>tests</th><th>time</th><th>accel</th>'
      '<th>command line</th></tr>')
    for r in c:
        if r.data is None:
            w(f'<tr><td>{_e(r.config)}</td><td colspan="5"><span class="nr">not run</span> '
              f'<span class="small">{_e(r.note)}</span></td></tr>')
            continue
        d = r.data
        w(f'<tr><td>{_e(r.config)}</td><td>{_status_html("pass" if d.get("passed") else "FAIL")}</td>'
          f'<td>{_e(model.boot_counts(d))}</td><td>{_e(duration(d.get("seconds"), 1))}</td>'
          f'<td>{_e(d.get("accel", "?"))}</td><td><code>{_e(d.get("cmdline", ""))}</code></td></tr>')
    w('</table>')
    for r in c:
        if r.data is None:
            continue
        d = r.data
        w(f'<details><summary>{_e(r.config)}: where this result comes from, failures, KTAP</summary>'
          f'{_found_head(r.found)}')
        for x in d.get("failures") or []:
            w(f'<pre class="fail">{_e(x)}</pre>')
        ktap = d.get("ktap") or r.found.extra.get("ktap")
        if ktap:
            w(f'<pre>{_e(ktap)}</pre>')
        w('</details>')


def notes(rv: Review, c: model.Notes, w) -> None:
    w(f'<p><strong>Attribution.</strong> {_e(c.attribution)}</p>')
    w(f'<p><strong>Results.</strong> {_e(c.provenance)}</p>')
    w('<p><strong>Counts.</strong> A hunk is one <code>@@</code> block of a patch; '
      '+/&minus; are the lines it adds and removes.  Per-file and per-series totals are sums '
      'over the patches (a line changed by two patches counts twice), so they are larger than '
      'the cover letter\'s diffstat of the whole series.</p>')
