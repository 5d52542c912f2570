"""The boot matrix on one screen: a row per guest, the failures below.

    config     arch    result  pass fail skip  boot+test  log
    slub       x86_64  pass      30    0    3     7.1s    slub/console.log
    slub-i386  i386    HANG       0    0    0   120.0s    slub-i386/console.log
      hang/timeout: guest still running after 120s (killed); ...

Then the matrix's wall time, the number of guests at a time, and where the
KTAP, JUnit XML and full console logs are.  At most `width` columns of
failure text per guest, `per_guest` lines of it.
"""
from __future__ import annotations

COLUMNS = ("config", "arch", "result", "pass", "fail", "skip", "boot+test", "log")


def _rel(path, root) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _row(r, root) -> list[str]:
    c = r.boot.counts if r.boot is not None else None
    n = (lambda v: str(v)) if c is not None else (lambda v: "-")
    return [r.spec.name, r.spec.arch, r.verdict,
            n(c.passed if c else 0), n((c.failed + c.crashed) if c else 0),
            n(c.skipped if c else 0), f"{r.seconds:.1f}s", _rel(r.console_log, root)]


def render(m, *, per_guest: int = 3, width: int = 110) -> str:
    rows = [list(COLUMNS)] + [_row(r, m.out_root) for r in m.results]
    w = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    right = {3, 4, 5, 6}
    lines = []
    for row in rows:
        cells = [row[i].rjust(w[i]) if i in right else row[i].ljust(w[i])
                 for i in range(len(w))]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    for r in m.results:
        if r.passed:
            continue
        shown = 0
        for f in r.failures:
            first = f.splitlines()[0] if f else ""
            if shown >= per_guest:
                break
            lines.append(f"  {r.spec.name}: {first}"[:width])
            shown += 1
        if len(r.failures) > shown:
            lines.append(f"  {r.spec.name}: ... {len(r.failures) - shown} more "
                         f"(in {_rel(r.out_dir, m.out_root)}/junit.xml)"[:width])
    npass = sum(1 for r in m.results if r.passed)
    lines.append(f"boot matrix: {'PASS' if m.passed else 'FAIL'}, {npass} of "
                 f"{len(m.results)} guests passed in {m.seconds:.1f}s wall time "
                 f"({m.jobs} at a time)")
    lines.append(f"in {m.out_root}: results.ktap, junit.xml, <guest>/console.log (full)")
    return "\n".join(lines)
