"""A mail-ready copy of a generated series: `slabconv mail`.

The copy is what `git send-email DIR/*.patch` sends: each patch a reply to
the cover letter (Message-Id, In-Reply-To, References), optional Cc: lines
from the baseline tree's get_maintainer.pl, and a cover letter with a
changelog against a previous generation (--previous REV) and the Testing
section below.

The series in generated-patches/ is what the rules make, byte for byte on
every machine, so it cannot carry the results of one machine's checks.  The
copy this module writes can: its cover letter gains a Testing section built
from the results the cache recorded for these patches (report/results.py:
matched by the series id, what the patches are by git patch-id and their
messages, never by name, identity or time), naming the series directory
they were recorded for.  A check that has no result for this series is said to be not run;
with no verify result at all there is nothing to state, and the copy is
refused unless --untested asks for a letter that says so.
"""
from __future__ import annotations

import re
import subprocess
import textwrap
import time
from pathlib import Path

import fetch
from base import atomic, paths
from base.cliutil import add_command as add_command_parser
from base.lock import locked
from base.log import info, SlabconvError
from regen.source import resolve
from verify import configtable
from verify.bisect import ConfigResult
from . import patches as P, results as R


WIDTH = 72
SHORTLOG_RE = re.compile(r"^\S.* \(\d+\):$")      # git shortlog's "Author (58):"
VMLINUX_DELTA_RE = re.compile(r"\((-?\+?\d+)\)\s*$")


def _wrap(text: str, first: str = "  ", rest: str = "    ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)


def _para(text: str) -> list[str]:
    """A paragraph; a word longer than a line (a path) stays whole."""
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def _this(results: dict, name: str):
    f = results.get(name)
    return f.data if f is not None and f.status == R.THIS and isinstance(f.data, dict) else None


def _configs(results: dict, prefix: str) -> list[str]:
    names = [n[len(prefix):] for n in results if n.startswith(prefix)]
    names = [n for n in names if not n.startswith("reference-")]
    order = list(configtable.names("verify"))
    return sorted(names, key=lambda c: (order.index(c) if c in order else len(order), c))


def _bytes(delta) -> str:
    return f"{int(delta):+d} bytes" if delta else "no change"


def _code(code: dict | None) -> str:
    """The whole series' code against the baseline, in words."""
    if not code:
        return "generated code not compared"
    m = VMLINUX_DELTA_RE.search(str(code.get("vmlinux") or ""))
    ch = code.get("objects_changed") or []
    if not ch:
        return "no change in generated code"
    return (f"vmlinux {_bytes(m.group(1)) if m else code.get('vmlinux')}, code changed in "
            + ", ".join(f"{o['object']} {o['delta']:+d}" for o in ch[:6])
            + (f" and {len(ch) - 6} more objects" if len(ch) > 6 else ""))


def _tests(d: dict) -> str:
    c = d.get("counts") or {}
    if not isinstance(c, dict):
        return str(c)
    return (f"{c.get('total', '?')} in-guest tests, {c.get('passed', '?')} passed, "
            f"{c.get('failed', '?')} failed, {c.get('skipped', '?')} skipped")


def testing(results: dict) -> tuple[list[str], list[str]]:
    """The Testing section's lines, and the checks with no result for this
    series (`results`: report.results.find() of the series)."""
    out: list[str] = []
    not_run: list[str] = []

    verify = [(c, _this(results, f"verify-{c}")) for c in _configs(results, "verify-")]
    built = [(c, d) for c, d in verify if d is not None]
    not_run += [f"the {c} build" for c, d in verify if d is None]
    if built:
        out.append("Baseline and patched kernels built (x86_64 unless the name says):")
        for c, d in built:
            sp = d.get("sparse") or {}
            sp_line = (f"sparse {len((sp.get('baseline') or {}).get('warnings') or [])} -> "
                       f"{len((sp.get('patched') or {}).get('warnings') or [])} warnings, "
                       f"{len(sp.get('new') or [])} new" if sp else "sparse not run")
            out += _wrap(f"{c}: {'ok' if d.get('ok') else 'FAILED'}; "
                         f"{len(d.get('new_warnings') or [])} new compiler warnings; {sp_line}; "
                         f"{_code(d.get('code'))}")

    b = _this(results, "bisect")
    if b is None:
        not_run.append("the per-patch check (every patch built, its object code compared, "
                       "its kernel booted)")
    else:
        out += [""] * bool(out) + ["Every patch built on its own (per-patch check):"]
        for c in map(ConfigResult.from_dict, b.get("configs") or []):
            f = c.first_failure
            out += _wrap(f"{c.config}: {len(c.patches)} of {c.n} patches built"
                         + (f", patch {f.index} fails: {f.problem}" if f else ""))
            for line in (c.code_line(), c.runtime_line()):
                if line:
                    out += _wrap(line.split(": ", 1)[1], "    ", "      ")

    boots = [(c, _this(results, f"boot-{c}")) for c in _configs(results, "boot-")]
    booted = [(c, d) for c, d in boots if d is not None]
    not_run += [f"the {c} boot" for c, d in boots if d is None]
    if booted:
        out += [""] * bool(out)
        out.append("Patched kernels booted under QEMU; the guest tests cover slab caches,")
        out.append("hardened usercopy, memcg accounting, fault injection and test_meminit:")
        for c, d in booted:
            out += _wrap(f"{c}: {'passed' if d.get('passed') else 'FAILED'}; {_tests(d)}"
                         f" ({d.get('accel', '?')}, {float(d.get('seconds') or 0):.0f}s)")

    static = []
    d = _this(results, "checkpatch")
    if d is not None:
        n = d.get("counts") or {}
        static.append(f"checkpatch{' --strict' if d.get('strict') else ''}: "
                      f"{n.get('error', '?')} errors, {n.get('warning', '?')} warnings, "
                      f"{n.get('check', '?')} checks")
    d = _this(results, "messages")
    if d is not None:
        unchecked = len(d.get("unchecked") or [])
        static.append(f"commit messages: {d.get('names', '?')} function names and "
                      f"{d.get('claims', '?')} claims (absent, signature) checked, "
                      f"{len(d.get('findings') or [])} findings"
                      + (f", {unchecked} claims not checked" if unchecked else ""))
    d = _this(results, "whitespace")
    if d is not None:
        static.append(f"whitespace-only line changes: {d.get('pairs', '?')}, "
                      f"{d.get('justified', '?')} of them realigned with a parenthesis a rename "
                      f"moved, {len(d.get('findings') or [])} not justified")
    d = _this(results, "layout")
    if d is not None:
        static.append(f"struct slab layout asserts: {'ok' if d.get('ok') else 'FAILED'} in "
                      f"{len(d.get('combos') or [])} configurations")
    d = _this(results, "nullcheck")
    if d is not None:
        n = d.get("counts") or {}
        static.append(f"NULL-safety check: {n.get('findings', '?')} findings in "
                      f"{n.get('patches', '?')} patches"
                      + (f", {n['errors']} errors" if n.get("errors") else ""))
    d = _this(results, "residue")
    if d is not None:
        static.append(f"struct page uses left in the slab code: "
                      f"{len(d.get('not_allowed') or [])} not allowed")
    for name, what in (("checkpatch", "checkpatch"), ("messages", "the commit message check"),
                       ("whitespace", "the whitespace check"), ("layout", "the layout asserts"),
                       ("nullcheck", "the NULL-safety check"), ("residue", "the residue check")):
        if _this(results, name) is None:
            not_run.append(what)
    if static:
        out += [""] * bool(out) + ["Static checks:"]
        for s in static:
            out += _wrap(s)
    return out, not_run


def section(results: dict, series_id: str, source: str) -> str:
    lines, not_run = testing(results)
    when = sorted(f.recorded for f in results.values() if f.status == R.THIS and f.recorded)
    head = ["Testing", "-------"]
    if not lines:
        return "\n".join(head + _para(
            "None recorded: the cache has no result for these patches. "
            "Run `make verify` and `make boot` before sending.")) + "\n"
    days = sorted({w[:10] for w in when})
    origins = list(dict.fromkeys(f.origin_line for f in results.values()
                                 if f.status == R.THIS and f.origin_line))
    head += _para(
        f"Results recorded by slabconv for these patches (series {series_id}: the same "
        f"code by git patch-id and the same messages"
        + (f", {source}" if source else "") + ")"
        + (f", {days[0]}" if len(days) == 1 else f", {days[0]} to {days[-1]}" if days else "")
        + (", on the series in " + "; ".join(origins) if origins else "")
        + ":")
    tail = []
    if not_run:
        tail = [""] + _para("Not run for these patches: " + "; ".join(not_run) + ".")
    return "\n".join(head + [""] + lines + tail) + "\n"


def with_testing(cover: str, text: str) -> str:
    """The cover letter with `text` before its shortlog."""
    lines = cover.split("\n")
    at = next((i for i, ln in enumerate(lines) if SHORTLOG_RE.match(ln)), None)
    if at is None:
        raise SlabconvError("the cover letter has no shortlog ('Name (N):' line) to put the "
                            "Testing section before")
    return "\n".join(lines[:at] + text.rstrip("\n").split("\n") + [""] + lines[at:])


# ---------------------------------------------------------------------------
# changes against the previous generation of the series

def _diff_body(text: str) -> str:
    """A patch file's diff, without what moves when nothing changed: blob
    ids, hunk line numbers, the diffstat and the signature."""
    _, _, rest = text.partition("\n---\n")
    at = rest.find("\ndiff --git ")
    body = rest[at:] if at >= 0 else rest
    body = body.rsplit("\n-- \n", 1)[0]
    body = re.sub(r"^index [0-9a-f]+\.\.[0-9a-f]+.*$", "", body, flags=re.M)
    return re.sub(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", "@@", body, flags=re.M)


def _subject(text: str) -> str:
    m = re.search(r"^Subject: (?:\[[^\]]*\]\s*)?(.*(?:\n .*)*)", text, re.M)
    return " ".join(m.group(1).split()) if m else ""


def previous_series(rev: str, version: str) -> dict[str, str]:
    """subject -> patch text of the series committed at git revision `rev`
    of this repository."""
    rel = f"generated-patches/{version}/"
    try:
        names = subprocess.run(["git", "-C", str(paths.REPO), "ls-tree", "--name-only", rev, rel],
                               capture_output=True, text=True, check=True).stdout.split()
    except subprocess.CalledProcessError as e:
        raise SlabconvError(f"--previous {rev}: git ls-tree failed: "
                            f"{(e.stderr or '').strip().splitlines()[-1:]}", exit_code=2)
    out = {}
    for n in names:
        base = n.rsplit("/", 1)[-1]
        if not re.match(r"^\d{4}-", base) or base.startswith("0000-"):
            continue
        text = subprocess.run(["git", "-C", str(paths.REPO), "show", f"{rev}:{n}"],
                              capture_output=True, text=True, check=True).stdout
        out[_subject(text)] = text
    if not out:
        raise SlabconvError(f"--previous {rev}: no series in {rel} at that revision", exit_code=2)
    return out


def changelog(previous: dict[str, str], files: list[Path], label: str) -> str:
    """The cover letter's changes against `previous` (subject -> text):
    patches new, dropped, and changed in their diff."""
    now = {_subject(f.read_text()): f.read_text() for f in files}
    new = [s for s in now if s not in previous]
    dropped = [s for s in previous if s not in now]
    changed = [s for s in now if s in previous and _diff_body(now[s]) != _diff_body(previous[s])]
    msg = [s for s in now if s in previous and s not in changed
           and now[s].split("\n---\n")[0].split("\n", 4)[-1]
           != previous[s].split("\n---\n")[0].split("\n", 4)[-1]]
    lines = [f"Changes since {label}", "-" * len(f"Changes since {label}")]
    if not (new or dropped or changed or msg):
        return "\n".join(lines + ["None: the same patches."]) + "\n"
    for head, items in (("New", new), ("Dropped", dropped), ("Code changed", changed),
                        ("Message changed only", msg)):
        if items:
            lines.append(f"{head} ({len(items)}):")
            lines += [f"  {s}" for s in items]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# mail headers: Cc from get_maintainer.pl, threading

def maintainers(tree: Path, patch: Path) -> list[str]:
    """The baseline tree's scripts/get_maintainer.pl on one patch (no git:
    the packaged tree has none), a list of "Name <address>" and lists."""
    script = tree / "scripts" / "get_maintainer.pl"
    if not script.is_file():
        raise SlabconvError(f"{tree} has no scripts/get_maintainer.pl", exit_code=2)
    cp = subprocess.run(["perl", str(script), "--no-rolestats", "--no-git", "--no-git-fallback",
                         "--no-tree", str(patch)], cwd=tree, capture_output=True, text=True)
    if cp.returncode != 0:
        raise SlabconvError(f"get_maintainer.pl failed on {patch.name}: "
                            f"{(cp.stderr.strip().splitlines() or ['?'])[-1]}")
    return [ln.strip() for ln in cp.stdout.splitlines() if ln.strip()]


def _headers(text: str, extra: list[str]) -> str:
    """`text` (an mbox message) with `extra` header lines after its Subject."""
    head, sep, body = text.partition("\n\n")
    lines = head.split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Subject: "))
    at += 1
    while at < len(lines) and lines[at].startswith(" "):
        at += 1
    return "\n".join(lines[:at] + extra + lines[at:]) + sep + body


def _cc(addresses: list[str]) -> list[str]:
    return [f"Cc: {a}" for a in addresses]


def message_ids(series_id: str, n: int, sender: str, stamp: str) -> list[str]:
    """Message-Id of each of n+1 mails (the cover letter first): unique per
    series and per run, in the domain of the sender's address."""
    domain = sender.rsplit("@", 1)[-1].rstrip(">") or "localhost"
    return [f"<{stamp}.{series_id}-{i}@{domain}>" for i in range(n + 1)]


def write(series_dir: Path, out: Path, version: str, untested: bool = False, *,
          previous: str | None = None, cc_tree: Path | None = None,
          thread: bool = True, stamp: str | None = None) -> list[Path]:
    """Copy the series into `out` (replaced) with the Testing section in its
    cover letter, a changelog against the series at git revision `previous`,
    Cc: lines from `cc_tree`'s get_maintainer.pl, and threading headers
    (each patch a reply to the cover letter); returns the files written."""
    files = P.numbered_patches(series_dir)
    cover = series_dir / "0000-cover-letter.patch"
    if not files or not cover.is_file():
        raise SlabconvError(f"no series with a cover letter in {series_dir}: run `make regen`",
                            exit_code=2)
    source = P.read_source(series_dir).get("source", "")
    sid = R.series_id(files)
    rs = R.Series(version, sid, source)
    found = R.find(rs)
    lines, _ = testing(found)
    if not any(n.startswith("verify-") and f.status == R.THIS for n, f in found.items()) \
            and not untested:
        raise SlabconvError(
            f"the cache has no verify result for these {len(files)} patches (series {sid}): "
            "run `make verify` first, or pass --untested for a letter that says so")
    text = section(found, sid, source)
    if previous:
        text = changelog(previous_series(previous, version), files, f"the series at {previous}") \
            + "\n" + text
    cover_text = with_testing(cover.read_text(), text)
    texts = [f.read_text() for f in files]
    if cc_tree is not None:
        per = [maintainers(Path(cc_tree), f) for f in files]
        texts = [_headers(t, _cc(a)) for t, a in zip(texts, per)]
        cover_text = _headers(cover_text, _cc(list(dict.fromkeys(a for x in per for a in x))))
    if thread:
        sender = re.search(r"^From: (.*(?:\n .*)*)", cover_text, re.M).group(1)
        ids = message_ids(sid, len(files), " ".join(sender.split()),
                          stamp or time.strftime("%Y%m%d%H%M%S", time.gmtime()))
        cover_text = _headers(cover_text, [f"Message-Id: {ids[0]}"])
        texts = [_headers(t, [f"Message-Id: {ids[i]}", f"In-Reply-To: {ids[0]}",
                              f"References: {ids[0]}"])
                 for i, t in enumerate(texts, 1)]
    import hashlib
    out.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(str(Path(out).resolve()).encode()).hexdigest()[:16]
    # two runs writing the same copy: one after the other, each file whole
    with locked(paths.cache_dir("locks") / f"mail-{key}.lock", f"the mail copy {out}",
                stage="mail"):
        for old in out.glob("*.patch"):
            old.unlink()
        atomic.write_text(out / cover.name, cover_text)
        written = [out / cover.name]
        for f, t in zip(files, texts):
            atomic.write_text(out / f.name, t)
            written.append(out / f.name)
    return written


def cmd_mail(args) -> int:
    version = fetch.kernel(args.kernel or paths.DEFAULT_KERNEL)
    series = Path(args.series).resolve() if args.series else paths.GENERATED / version
    out = Path(args.output).resolve() if args.output else paths.cache_dir("mail", version)
    cc_tree = None
    if args.cc_maintainers:
        cc_tree = resolve(version, args.tree).tree
    files = write(series, out, version, untested=args.untested, previous=args.previous,
                  cc_tree=cc_tree, thread=not args.no_thread)
    info("mail", f"{len(files) - 1} patches and the cover letter with its Testing section "
                 f"-> {out}")
    print(out)
    return 0


def add_command(sub) -> None:
    p = add_command_parser(
        sub, "mail", "write a mail-ready copy of the series whose cover letter states the "
                     "recorded test results",
        "Write a mail-ready copy of the series: threading headers, Cc lines, the\n"
        "changes since a previous version, and a Testing section from the results the\n"
        "cache recorded for these patches (the same code and messages, whatever their\n"
        "identity and date; refused when there are none, unless --untested).",
        "slabconv mail --kernel 5.10 --previous v1 --cc-maintainers")
    p.add_argument("--kernel", "-k", default=None,
                   help=f"kernel version of the series (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--series", default=None,
                   help="the series directory (default generated-patches/<version>/)")
    p.add_argument("--output", "-o", default=None,
                   help="where to write it (default $SLABCONV_CACHE/mail/<version>/)")
    p.add_argument("--previous", default=None, metavar="REV",
                   help="list the changes against the series committed at this git revision "
                        "of slabconv (e.g. HEAD~5, v1) in the cover letter")
    p.add_argument("--cc-maintainers", action="store_true",
                   help="Cc: lines from the baseline tree's scripts/get_maintainer.pl")
    p.add_argument("--tree", default=None,
                   help="the baseline tree for --cc-maintainers (default: the packaged one)")
    p.add_argument("--no-thread", action="store_true",
                   help="no Message-Id/In-Reply-To headers (git send-email threads by itself)")
    p.add_argument("--untested", action="store_true",
                   help="write it even when no verify result of this series is recorded "
                        "(the letter says so)")
    p.set_defaults(func=cmd_mail)
