"""The series' after-rules (`[series] after_rules`: slab_page_follow,
slab_page_local, page_slab_local): one spatch run after each entry with
rules, over the functions the entry changed.

They act on each function alone (a name defined twice in a file is left
alone), so a function they already left as it is needs no new run
(`WorkTree.settled`), and a run needs only the functions that changed
since, with every other definition of their names: those are copied into
a scratch file of their own, the rules run there, and each function's new
text replaces its old one.  A file with a changed part that is not a
function definition the driver can delimit is run whole.

A rule file's `acts-where` directives (regen/manifest.py) say where it can
change something; the run has only the files that can act on one of the
changed functions (all of them where a file has no such directive), in
their order.  A file left out is one whose directives hold nowhere in the
input, and no after-rule writes what another one's directives look for:
tests/test_rules.py checks the run of the files chosen against the run of
all of them on every after-rule case.
"""
from __future__ import annotations

from pathlib import Path

from . import comments, effects, manifest, spatch
from .worktree import WorkTree

SCRATCH = "after"           # under the work tree's scratch directory


def _functions(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, str]] | None:
    """The definitions to give the rules for the changed `spans` of `text`:
    (start, end, name) of the one definition in each span, and of every
    other definition of the same names, in the order of the text; None
    when a span holds no definition or several."""
    fns = [(s, e, n) for n, s, e, _ in comments.functions(text)]
    names = set()
    for a, b in spans:
        inside = [n for s, e, n in fns if a <= s and e <= b]
        if len(inside) != 1:
            return None
        names.add(inside[0])
    return [f for f in fns if f[2] in names]


def _extract(text: str, chosen: list[tuple[int, int, str]]) -> str:
    return "\n\n".join(text[s:e] for s, e, _ in chosen) + "\n"


def _splice(text: str, chosen: list[tuple[int, int, str]], done: str) -> str | None:
    """`text` with each chosen definition replaced by its counterpart in
    `done` (the scratch file after the run); None when the run did not
    leave the same definitions in the same order."""
    new = [(s, e, n) for n, s, e, _ in comments.functions(done)]
    if [n for _, _, n in new] != [n for _, _, n in chosen]:
        return None
    for (s, e, _), (s2, e2, _) in reversed(list(zip(chosen, new))):
        text = text[:s] + done[s2:e2] + text[e:]
    return text


def _holds(rule: Path):
    """Where `rule` can change a top-level unit (its acts-where directives;
    everywhere without one)."""
    acts = [d for d in manifest.directives(rule) if isinstance(d, manifest.ActsWhere)]
    return (lambda unit: any(d.holds(unit) for d in acts)) if acts else (lambda unit: True)


def wanted(rules: list[Path], texts: dict[str, str], settled: dict[str, str]
           ) -> tuple[list[Path], dict[str, list[tuple[int, int]]]]:
    """The rules of `rules` that can act on a top-level unit of `texts`
    that changed since `settled`, and those units' spans, by file."""
    units = {f: effects.changed_units(t, settled.get(f)) for f, t in texts.items()}
    chosen: list[Path] = []
    pending: dict[str, list[tuple[int, int]]] = {}
    for r in rules:
        holds = _holds(r)
        spans = {f: [(a, b) for a, b, u in us if holds(u)] for f, us in units.items()}
        if any(spans.values()):
            chosen.append(r)
            for f, sp in spans.items():
                if sp:
                    pending[f] = sorted(set(pending.get(f, [])) | set(sp))
    return chosen, pending


def run(series: manifest.Series, step: manifest.Step, wt: WorkTree, what: str) -> tuple[str, set[str] | None]:
    """Apply the after-rules `step` in the work tree.  Returns spatch's
    output ("" when no run was needed) and the names of the rule files that
    changed something (None: any of them may have)."""
    tree = wt.path
    texts = {f: (tree / f).read_text(errors="replace") for f in step.files if (tree / f).is_file()}
    rules, pending = wanted([series.root / r for r in step.rules], texts, wt.settled)
    if not pending:
        wt.settled.update(texts)
        return "", set()
    rule = spatch.compose(rules, wt.scratch, report_acted=True)
    chosen = {f: _functions(texts[f], spans) for f, spans in pending.items()}
    out = None
    if all(c is not None for c in chosen.values()):
        out = _run_extracted(rule, wt, texts, chosen, step.options, what)
    if out is None:                     # the files whole
        out = spatch.apply_rule(rule, tree, list(pending), options=step.options, what=what)
    wt.settled.update({f: (tree / f).read_text(errors="replace") for f in texts})
    return out, spatch.acted(out) if all(spatch.reports_acted(r) for r in rules) else None


def _run_extracted(rule: Path, wt: WorkTree, texts: dict[str, str],
                   chosen: dict[str, list], options, what: str) -> str | None:
    """Run the rules over the chosen definitions of each file in a scratch
    copy and put the results back; None (and nothing written) when a
    result cannot be put back."""
    root = wt.scratch / SCRATCH
    for f, c in chosen.items():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(_extract(texts[f], c))
    out = spatch.apply_rule(rule, root, list(chosen), options=options, what=what)
    new = {f: _splice(texts[f], c, (root / f).read_text(errors="replace")) for f, c in chosen.items()}
    if any(v is None for v in new.values()):
        return None
    for f, text in new.items():
        if text != texts[f]:
            (wt.path / f).write_text(text)
    return out
