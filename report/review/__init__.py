"""The review report: each rule beside the hunks it produced, and the results.

    ./slabconv review --kernel 5.10 [--output DIR] [--series DIR]
    make review

Reads, never runs anything: the manifest (cocci/series.toml, each
entry's TOML shown with its patch), the committed series
(generated-patches/<version>/: the numbered patches, the cover letter,
SOURCE, ENTRIES if regen wrote one), the rule files and templates (their
header comments, their whole text, the rules' test cases in
cocci/tests/<rule>/), and what the cache has recorded for this series:
the attribution (report/attribution.py, `make attribute`), the range-diff
(report/rangediff.py, `make range-diff`), the regen that wrote exactly
these bytes (report/reproduce.py: the byte-for-byte line), and the last
verify, per-patch, residue and boot results (report/results.py: a result
is shown only when it can be tied to this series; else "not run").
Writes review.html (static, self-contained: inline CSS, no script, no
network) and review.txt (the same without the hunks' text) into DIR
(default $SLABCONV_CACHE/review/<version>/).

    sources.py    rule files, templates, the members step; their hunks
    model.py      the Review (build()) and what each section says of it
    html_page.py  the page as HTML
    text_page.py  the page as text

Both renderings are made from SECTIONS: a section is its id (the page's
anchor), its title, the function of the model that gives its content, and
how each rendering shows that content.  A new section is one entry here.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import fetch
from base import atomic, paths
from base.cliutil import add_command as add_command_parser
from base.lock import locked
from base.log import info
from regen.source import kernel_version
from regen.worktree import tree_id
from . import html_page as H, model, text_page as T
from .model import Review, build


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    content: Callable[[Review], Any]       # what the model says in this section
    html: Callable                         # (review, content, write) -> None
    text: Callable                         # (review, content, write) -> None


SECTIONS = [
    Section("summary", "Summary", model.summary, H.summary, T.summary),
    Section("rules", "Rules and templates", model.rules, H.rules, T.rules),
    Section("files", "Files", model.files, H.files, T.files),
    Section("patches", "Patches", model.patches, H.patches, T.patches),
    Section("rangediff", "Range-diff", model.rangediff, H.rangediff, T.rangediff),
    Section("skipped", "Skipped entries", model.skipped, H.skipped, T.skipped),
    Section("verify", "Verify", model.verify, H.verify, T.verify),
    Section("residue", "Residue", model.residue, H.residue, T.residue),
    Section("boot", "Boot", model.boot, H.boot, T.boot),
    Section("notes", "How to read this page", model.notes, H.notes, T.notes),
]


def render_html(rv: Review) -> str:
    return H.page(rv, SECTIONS)


def render_text(rv: Review) -> str:
    return T.page(rv, SECTIONS)


def write(rv: Review, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    h, t = out / "review.html", out / "review.txt"
    page, text = render_html(rv), render_text(rv)
    # two runs writing the same report: each file whole, the pair from one run
    with locked(paths.cache_dir("locks") / f"review-{_path_key(out)}.lock",
                f"the review report {out}", stage="review"):
        atomic.write_text(h, page)
        atomic.write_text(t, text)
    return h, t


def _path_key(p: Path) -> str:
    return hashlib.sha256(str(Path(p).resolve()).encode()).hexdigest()[:16]


def cmd_review(args) -> int:
    version = fetch.kernel(args.kernel or paths.DEFAULT_KERNEL)
    series = Path(args.series).resolve() if args.series else None
    if series is None and args.tree:
        t = Path(args.tree).expanduser().resolve()
        version = kernel_version(t)
        series = paths.cache_root() / "out" / tree_id(t) / "patches"
    rv = build(version, series)
    out = Path(args.output).resolve() if args.output else paths.cache_dir("review", version)
    h, t = write(rv, out)
    info("review", f"{len(rv.patches)} patches, {len(rv.sources)} rules and templates, "
                   f"{len(rv.skipped)} skipped entries; results: "
                   + ", ".join(f"{label} {st}" for label, _, st in model.result_rows(rv)))
    print(h)
    print(t)
    return 0


def add_command(sub) -> None:
    p = add_command_parser(
        sub, "review", "write the review report (HTML and text): each rule beside its hunks, "
                       "skipped entries, the last results",
        "Write review.html and review.txt: each rule and template beside the hunks it\n"
        "made, the entries skipped and why, and the results recorded for this series.",
        "slabconv review --kernel 5.10 --output /tmp/review")
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
