"""Scan a guest console log for kernel failure reports.

Every report the kernel prints when something went wrong - panics, BUG:,
WARNING:, Oopses, general protection faults, hardened-usercopy reports,
SLUB and DEBUG_SLAB corruption reports, lockups, OOM, user-space segfaults - becomes a
Finding with a few lines of context.  A ``Call Trace:`` is a finding only
when it is not part of a report already found (or of an allowed place).

Lines that the slabconv guest itself prints (``slabconv-ktap: ``,
``slabconv-init: `` and mirrored KTAP result lines) are never findings:
their content travels through KTAP.

Expected reports.  KASAN reports are findings, except where a report is
expected, and there it is required:

* between the kernel lines ``slabconv-expect: begin kasan TYPE CACHE`` and
  ``slabconv-expect: end kasan`` that the guest module prints around a
  deliberate bad access, a ``BUG: KASAN: TYPE in ...`` report whose object
  ``belongs to the cache CACHE`` is accepted; a bracket without one (the
  report is missing, of another type, or names another cache) is a finding;
* inside the kernel's KASAN KUnit suite (from ``# Subtest: kasan`` to its
  ``ok N - kasan`` / ``not ok N - kasan`` line) KASAN reports are accepted:
  KUnit checks each against its expectation and fails the case otherwise
  (its KTAP is nested in the guest's document).

The same brackets with kind ``oom`` (``slabconv-expect: begin oom nomem
CACHE`` / ``slabconv-expect: end oom``, printed by the fault-injection
module around an allocation that fails without __GFP_NOWARN) accept the
allocator's out-of-memory report (``SLAB: Unable to allocate memory on
node`` / ``SLUB: ...``, each followed by ``  cache: NAME, ...``), require
one, and its cache must be CACHE; outside them SLAB's report is a finding.

The same brackets with kind ``usercopy`` (``slabconv-expect: begin
usercopy exposure CACHE`` / ``slabconv-expect: end usercopy``, printed by
the guest module around a copy hardened usercopy must reject) require
usercopy_abort()'s report, ``usercopy: Kernel memory exposure attempt
detected from ... 'CACHE' (offset N, size M)!``, naming CACHE; after it,
and in the bracket only, the ``kernel BUG at mm/usercopy.c`` that
usercopy_abort() raises and its oops are accepted.  A fallback warning
("Bad or missing usercopy whitelist?": the copy went ahead) or a report on
another cache is a finding.

Only kernel lines (with their printk timestamp; the guest always boots
with printk.time=1) open or close these regions, so the guest init's
mirrored KTAP cannot.  Any other kind of report inside them (a WARNING, an
Oops, a SLUB report, a panic) is still a finding.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .ktap import clean_line


# (kind, regex); order matters only for the kind reported on a line.
PATTERNS: list[tuple[str, re.Pattern]] = [(k, re.compile(r)) for k, r in [
    ("panic", r"Kernel panic - not syncing"),
    ("bug", r"\bkernel BUG at\b"),
    ("bug", r"\bBUG: "),
    ("slub", r"\bBUG \S+ \((?:Not tainted|Tainted[^)]*)\): "),
    ("slub", r"^FIX \S+: "),
    ("slub", r"Slab cache still has objects|slabs counted but counter|no slab for object"),
    # DEBUG_SLAB (mm/slab.c) reports; its BUG()s are "kernel BUG at mm/slab.c".
    ("slab", r"\bSlab corruption \((?:Not tainted|Tainted[^)]*)\): "),
    ("slab", r"\bslab error in \S+\(\): cache "),
    ("slab", r"\bslab: double free detected in cache "),
    ("slab", r"\bkfree_debugcheck: out of range ptr "),
    ("slab", r": redzone 1:0x[0-9a-f]+, redzone 2:0x[0-9a-f]+"),
    ("slab", r"\bnot aligned to ARCH_SLAB_MINALIGN="),
    ("slab", r"\bkmem_cache_create\(\S*\) integrity check failed"),
    ("oom", r"\bSLAB: Unable to allocate memory on node "),
    ("usercopy", r"\busercopy: |Bad or missing usercopy whitelist"),
    ("warning", r"\bWARNING: "),
    ("gpf", r"\bgeneral protection fault\b"),
    ("oops", r"\bOops\b"),
    ("oops", r"\bUnable to handle kernel\b"),
    ("lockup", r"soft lockup|hard LOCKUP|detected stalls? on CPU|rcu_\w+ detected stall"),
    ("hung", r"blocked for more than \d+ seconds"),
    ("oom", r"invoked oom-killer|Out of memory: "),
    ("list", r"\blist_(?:add|del) corruption\b"),
    ("ubsan", r"\bUBSAN: "),
    ("stack", r"stack-protector: |stack guard page was hit|Kernel stack is corrupted"),
    ("segfault", r"\bsegfault at [0-9a-f]+ ip\b|\btraps: \S+\[\d+\] (?:general protection|trap)"),
    ("call-trace", r"\bCall Trace:"),
    # DMA remapping faults (Intel: the fault handler's two lines; AMD: the
    # event log), which the IOMMU guest must never see.
    ("iommu-fault", r"\bDMAR: DRHD: handling fault status\b|\bDMAR: \[(?:DMA Read|DMA Write|INTR-REMAP)\] Request device\b"
                    r"|\bAMD-Vi: Event logged \[|\bIO_PAGE_FAULT\b"),
]]
# Our own output: its content is judged through KTAP, not here.
OURS = re.compile(r"^\s*(?:slabconv-(?:ktap|init|iommu-ktap|fi-ktap): |(?:not )?ok \d+\b|#)")
# How far after a report line its Call Trace may appear and still belong to it.
TRACE_WINDOW = 60
# Expected-report regions (see the module doc); kernel lines only.
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
EXPECT_BEGIN = re.compile(r"^slabconv-expect: begin (\S+) (\S+) (\S+)\s*$")
EXPECT_END = re.compile(r"^slabconv-expect: end (\S+)\s*$")
KASAN_REPORT = re.compile(r"\bBUG: KASAN: (.+?) in ")
KASAN_CACHE = re.compile(r"\bwhich belongs to the cache (\S+) of size\b")
# slab_out_of_memory() of SLAB (DEBUG_SLAB) and SLUB (SLUB_DEBUG); from
# 6.x SLUB says "on CPU N (of node M) on node K".
OOM_REPORT = re.compile(r"\bSL[AU]B: Unable to allocate memory on (?:node|CPU) ")
OOM_CACHE = re.compile(r"^\s*cache: ([^,\s]+), object size: ")
# usercopy_abort(): "usercopy: Kernel memory exposure attempt detected from
# SLUB object 'kmalloc-64' (offset 0, size 80)!"; its BUG() in mm/usercopy.c
USERCOPY_REPORT = re.compile(r"\busercopy: Kernel memory (exposure|overwrite) attempt detected "
                             r"(?:from|to) .*?'([^']+)' \(offset \d+, size \d+\)!")
USERCOPY_BUG = re.compile(r"\bkernel BUG at mm/usercopy\.c:\d+!")
# The trap of that BUG(): x86 says "invalid opcode: 0000 [#1] SMP", which no
# pattern matches; arm64 (a brk) says "Internal error: Oops - BUG: ... [#1]".
BUG_TRAP = re.compile(r"\bInternal error: Oops - BUG: [0-9a-f]+ \[#\d+\]")
KUNIT_SUITE = re.compile(r"^\s+# Subtest: (\S+)\s*$")
KUNIT_SUITE_END = re.compile(r"^(?:not )?ok \d+ (?:- )?(\S+)\s*$")   # 6.1+: no "- "
# KUnit suites whose cases provoke reports on purpose: suite -> report kind.
PROVOKING_SUITES = {"kasan": "kasan"}
# A kernel line that landed in the middle of a line user space was writing
# to the console (shared by printk and the guest init) starts a new segment.
MIDLINE_TS = re.compile(r"(?<=\S)(?=\[\s*\d+\.\d+\] )")


@dataclass
class Finding:
    kind: str
    line_no: int            # 1-based, in the console log
    line: str               # cleaned (timestamps stripped)
    excerpt: list[str] = field(default_factory=list)
    end_line: int = 0       # 1-based number of the excerpt's last line

    def describe(self, log_name: str = "console") -> str:
        body = "\n".join(f"    {x}" for x in self.excerpt)
        return f"{log_name}:{self.line_no}: [{self.kind}] {self.line.strip()}\n{body}"


@dataclass
class _Bracket:
    """An open slabconv-expect bracket."""
    kind: str               # "kasan"
    bug_type: str           # e.g. "use-after-free"
    cache: str              # e.g. "slabconv_kasan"
    start: int              # index of the begin line
    report: bool = False    # a report of the expected type was seen ...
    satisfied: bool = False  # ... and it named the expected cache
    failed: bool = False    # a finding was already made for this bracket


def scan_lines(lines: list[str], *, before: int = 3, after: int = 16,
               allow: Iterable[str] = ()) -> list[Finding]:
    """Return findings for lines (raw console lines, timestamps allowed).

    allow: regexes; a matching line is not a finding, and a Call Trace within
    TRACE_WINDOW lines after it is considered expected.  Expected KASAN
    reports: see the module doc.
    """
    allow_re = [re.compile(a) for a in allow]
    clean = [clean_line(x) for x in lines]
    found: list[Finding] = []
    last_report = -10 ** 9      # index of the last report or allowed line
    bracket: _Bracket | None = None
    suite: tuple[str, int] | None = None    # (name, index) of a provoking KUnit suite

    def finding(kind: str, i: int, text: str, lo: int | None = None) -> None:
        lo = max(0, i - before) if lo is None else max(0, lo)
        hi = min(len(clean), i + after + 1)
        while hi > i + 1 and not clean[hi - 1].strip():
            hi -= 1
        found.append(Finding(kind, i + 1, text, clean[lo:hi], hi))

    def report_names_cache(rx, kind: str, line: str, i: int) -> bool:
        """A line of the bracket's report that names a cache (rx): it must be
        the bracket's cache.  True when the line was such a line."""
        m = rx.search(line)
        if not m:
            return False
        if m.group(1) == bracket.cache:
            bracket.satisfied = True
        elif not bracket.failed:
            bracket.failed = True
            finding(kind, i, f"{line.strip()} (expected cache {bracket.cache})")
        return True

    def close(b: _Bracket, i: int, why: str, unterminated: bool = False) -> None:
        if b.failed:
            return
        if not b.satisfied:
            what = (f"no KASAN {b.bug_type} report on an object of cache {b.cache}"
                    if b.kind == "kasan" else
                    f"no 'Unable to allocate memory on node' report naming cache {b.cache}"
                    if b.kind == "oom" else
                    f"no usercopy {b.bug_type} report naming cache {b.cache}"
                    if b.kind == "usercopy" else f"no {b.kind} {b.bug_type} report")
            finding("expected", i, f"expected report missing: {what} {why}",
                    lo=min(b.start, i - before))
        elif unterminated:
            finding("expected", i, f"unterminated slabconv-expect bracket {why}",
                    lo=min(b.start, i - before))

    for i, raw, line in _segments(lines):
        if not line.strip():
            continue
        if KERNEL_LINE.match(raw):
            m = EXPECT_BEGIN.match(line)
            if m:
                if bracket is not None:
                    close(bracket, i, f"(bracket of line {bracket.start + 1} has no end)", True)
                bracket = _Bracket(*m.groups(), start=i)
                continue
            m = EXPECT_END.match(line)
            if m:
                if bracket is None:
                    finding("expected", i, f"{line.strip()} without its begin line")
                else:
                    close(bracket, i, f"between lines {bracket.start + 1} and {i + 1}")
                bracket = None
                continue
            m = KUNIT_SUITE.match(line)
            if m and m.group(1) in PROVOKING_SUITES:
                suite = (m.group(1), i)
            elif suite is not None and (m := KUNIT_SUITE_END.match(line)) \
                    and m.group(1) == suite[0]:
                suite = None
        if (bracket is not None and bracket.report and not bracket.satisfied
                and report_names_cache(KASAN_CACHE, "kasan", line, i)):
            continue
        if bracket is not None and bracket.kind == "oom":
            if OOM_REPORT.search(line):
                bracket.report = True
                last_report = i
                continue
            if (bracket.report and not bracket.satisfied
                    and report_names_cache(OOM_CACHE, "oom", line, i)):
                continue
        if bracket is not None and bracket.kind == "usercopy" and not bracket.failed:
            m = USERCOPY_REPORT.search(line)
            if m and not bracket.report:
                bracket.report = True
                last_report = i
                if m.group(1) == bracket.bug_type and m.group(2) == bracket.cache:
                    bracket.satisfied = True
                else:
                    bracket.failed = True
                    finding("usercopy", i, f"{line.strip()} (expected {bracket.bug_type} "
                                           f"from cache {bracket.cache})")
                continue
            if bracket.satisfied and (USERCOPY_BUG.search(line) or BUG_TRAP.search(line)):
                last_report = i         # the BUG() of the report just accepted, its trap
                continue
        if OURS.match(line):
            continue
        if any(a.search(line) for a in allow_re):
            last_report = i
            continue
        kind = next((k for k, rx in PATTERNS if rx.search(line)), None)
        if kind is None:
            continue
        m = KASAN_REPORT.search(line) if kind == "bug" else None
        if m:
            if bracket is not None and bracket.kind == "kasan" and not bracket.failed \
                    and m.group(1) == bracket.bug_type:
                bracket.report = True
                last_report = i
                continue
            if bracket is not None and bracket.kind == "kasan":
                bracket.failed = True       # another type: this finding says why
            elif suite is not None and PROVOKING_SUITES[suite[0]] == "kasan":
                last_report = i             # KUnit's case judges it
                continue
        if kind == "call-trace":
            if i - last_report <= TRACE_WINDOW:
                continue
        else:
            last_report = i
        finding(kind, i, line)
    if bracket is not None:
        close(bracket, len(lines) - 1,
              f"(bracket of line {bracket.start + 1} has no end: the log stops)", True)
    if suite is not None:
        finding("expected", len(lines) - 1,
                f"KUnit suite {suite[0]} (line {suite[1] + 1}) has no result line: "
                "the log stops inside it", lo=len(lines) - 1 - before)
    return found


def _segments(lines: list[str]):
    """(index, raw part, cleaned text) for each line, split where a
    timestamped kernel message starts in the middle of a line."""
    for i, raw in enumerate(lines):
        for part in MIDLINE_TS.split(raw):
            yield i, part, clean_line(part)


def scan_text(text: str, **kw) -> list[Finding]:
    return scan_lines(text.replace("\r", "").split("\n"), **kw)


def scan(path: Path, **kw) -> list[Finding]:
    """Scan a console log file.  A missing file is a finding of its own
    (kind "no log"): nothing was scanned, which is not "no findings"."""
    p = Path(path)
    if not p.is_file():
        return [Finding("no log", 0, f"{p}: no console log: nothing was scanned")]
    return scan_text(p.read_text(errors="replace"), **kw)


def summarize(findings: list[Finding], *, limit: int = 8,
              log_name: str = "console") -> list[str]:
    """Failure strings for a BootResult: one per finding (excerpts merged
    when a finding lies inside the previous one's excerpt), at most limit."""
    out: list[str] = []
    shown_until = -1
    extra = 0
    for f in findings:
        if f.line_no <= shown_until:
            continue            # already visible in the previous excerpt
        if len(out) >= limit:
            extra += 1
            continue
        out.append(f.describe(log_name))
        shown_until = f.end_line
    if extra:
        out.append(f"... and {extra} more console findings")
    return out
