"""A mail-ready copy of a generated series: `slabconv mail`.

The series in generated-patches/ is what the rules make, byte for byte on
every machine, so it cannot carry the results of one machine's checks.  The
copy this module writes can: its cover letter gains a Testing section built
from the results the cache recorded for exactly these patch files
(report/results.py: matched by the digest of the patches, never by name or
time).  A check that has no result for this series is said to be not run;
with no verify result at all there is nothing to state, and the copy is
refused unless --untested asks for a letter that says so.
"""
from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

from slabconv import paths
from slabconv.log import SlabconvError, info

from . import results as R

WIDTH = 72
SHORTLOG_RE = re.compile(r"^\S.* \(\d+\):$")      # git shortlog's "Author (58):"
VMLINUX_DELTA_RE = re.compile(r"\((-?\+?\d+)\)\s*$")


def _wrap(text: str, first: str = "  ", rest: str = "    ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False)


def _para(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False)


def _this(results: dict, name: str):
    f = results.get(name)
    return f.data if f is not None and f.status == R.THIS and isinstance(f.data, dict) else None


def _configs(results: dict, prefix: str) -> list[str]:
    from slabconv.pipeline import DEFAULT_CONFIGS
    names = [n[len(prefix):] for n in results if n.startswith(prefix)]
    names = [n for n in names if not n.startswith("reference-")]
    order = list(DEFAULT_CONFIGS)
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
    from verify.bisect import ConfigResult
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
        static.append(f"commit messages: {d.get('names', '?')} function names, "
                      f"{len(d.get('findings') or [])} not touched by their patch")
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
                       ("layout", "the layout asserts"),
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
            "None recorded: the cache has no result for these patch files. "
            "Run `make verify` and `make boot` before sending.")) + "\n"
    days = sorted({w[:10] for w in when})
    head += _para(
        f"Results recorded by slabconv for exactly these patch files (series {series_id}"
        + (f", {source}" if source else "") + ")"
        + (f", {days[0]}" if len(days) == 1 else f", {days[0]} to {days[-1]}" if days else "")
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


def write(series_dir: Path, out: Path, version: str, untested: bool = False) -> list[Path]:
    """Copy the series into `out` (replaced) with the Testing section in its
    cover letter; returns the files written."""
    from . import patches as P
    files = P.numbered_patches(series_dir)
    cover = series_dir / "0000-cover-letter.patch"
    if not files or not cover.is_file():
        raise SlabconvError(f"no series with a cover letter in {series_dir}: run `make regen`",
                            exit_code=2)
    source = P.read_source(series_dir).get("source", "")
    sid = R.series_id(files)
    rs = R.Series(version, sid, source, [P.parse_patch(f).subject for f in files],
                  {fd.path for f in files for fd in P.parse_patch(f).files})
    found = R.find(rs)
    lines, _ = testing(found)
    if not any(n.startswith("verify-") and f.status == R.THIS for n, f in found.items()) \
            and not untested:
        raise SlabconvError(
            f"the cache has no verify result for these {len(files)} patches (series {sid}): "
            "run `make verify` first, or pass --untested for a letter that says so")
    text = section(found, sid, source)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.patch"):
        old.unlink()
    (out / cover.name).write_text(with_testing(cover.read_text(), text))
    written = [out / cover.name]
    for f in files:
        shutil.copyfile(f, out / f.name)
        written.append(out / f.name)
    return written


def cmd_mail(args) -> int:
    version = args.kernel or paths.DEFAULT_KERNEL
    series = Path(args.series).resolve() if args.series else paths.GENERATED / version
    out = Path(args.output).resolve() if args.output else paths.cache_dir("mail", version)
    files = write(series, out, version, untested=args.untested)
    info("mail", f"{len(files) - 1} patches and the cover letter with its Testing section "
                 f"-> {out}")
    print(out)
    return 0


def add_command(sub) -> None:
    p = sub.add_parser("mail", help="write a mail-ready copy of the series whose cover letter "
                                    "states the recorded test results")
    p.add_argument("--kernel", "-k", default=None,
                   help=f"kernel version of the series (default {paths.DEFAULT_KERNEL})")
    p.add_argument("--series", default=None,
                   help="the series directory (default generated-patches/<version>/)")
    p.add_argument("--output", "-o", default=None,
                   help="where to write it (default $SLABCONV_CACHE/mail/<version>/)")
    p.add_argument("--untested", action="store_true",
                   help="write it even when no verify result of this series is recorded "
                        "(the letter says so)")
    p.set_defaults(func=cmd_mail)
