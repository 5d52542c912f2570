"""A KTAP parser in the spirit of the kernel's kunit_tool (kunit_parser.py).

* Kernel log timestamps (``[    1.234567] ``) and printk caller ids are
  stripped from every line.
* The document starts at the first ``KTAP version N`` (or ``TAP version N``)
  line; whatever precedes that text on its line (e.g. ``slabconv-ktap: ``)
  is taken as the prefix and stripped from later lines, and later lines
  without it are ignored, as kunit_tool does.  Pass ``prefix=""`` to insist
  on a document that starts in column 0.
* Subtests are nested by indentation (4 spaces, or a tab as KUnit 5.10
  prints): a more indented block precedes its parent's result line.
* Lines that are not KTAP (kernel messages on a shared console) are ignored.
* A missing plan, fewer or more results than planned, a subtest block
  without its result line (truncation) or an ``ok`` parent with failing
  subtests are errors, and make the document fail; so is a second document
  after the first (it would go unread).
* Only a ``# SKIP`` directive makes a skip; ``not ok ... # TODO`` fails.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from pathlib import Path

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
CALLER = re.compile(r"^\[\s*[TC]\d+\]\s?")
VERSION = re.compile(r"\b(K?TAP) version (\d+)\s*$")
PLAN = re.compile(r"^1\.\.(\d+)\s*(?:#.*)?$")
RESULT = re.compile(r"^(ok|not ok)\s+(\d+)\b\s*(?:-\s*)?([^#]*?)\s*(?:#\s?(.*))?$")
SUBTEST = re.compile(r"^#\s*Subtest:\s*(.*?)\s*$")


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    CRASHED = "crashed"     # no result line: truncated output / kernel died

    @property
    def ok(self) -> bool:
        return self in (Status.PASS, Status.SKIP)


@dataclass
class Test:
    name: str = ""
    number: int = 0
    status: Status = Status.CRASHED
    directive: str = ""        # text after "#" on the result line
    plan: int | None = None    # of its subtest document, if any
    subtests: list["Test"] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    has_document: bool = False

    def walk(self, path: str = ""):
        """Yield (dotted path, test) for this test and all below it."""
        here = f"{path}.{self.name}" if path else self.name
        yield here, self
        for t in self.subtests:
            yield from t.walk(here)


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    crashed: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped + self.crashed

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped,
                "crashed": self.crashed, "total": self.total}

    def __str__(self) -> str:
        return (f"{self.total} tests: {self.passed} passed, {self.failed} failed, "
                f"{self.skipped} skipped, {self.crashed} crashed")


@dataclass
class KtapResult:
    root: Test                  # the top-level document (name "main")
    lines: list[str]            # the extracted KTAP lines
    errors: list[str]           # every problem found, with its test path

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.lines else "")

    @property
    def ok(self) -> bool:
        return not self.errors and self.root.status.ok

    @property
    def counts(self) -> Counts:
        c = Counts()
        _count(self.root, c, top=True)
        return c

    @property
    def planned(self) -> int:
        """The leaf tests the documents' plans announce (a planned test that
        has a document of its own counts its own plan's)."""
        return _planned(self.root)

    def failures(self) -> list[str]:
        """One line per failed / crashed test and per structural error."""
        out = []
        for path, t in (pt for top in self.root.subtests for pt in top.walk()):
            if t.status is Status.FAIL and not any(
                    s.status in (Status.FAIL, Status.CRASHED) for s in t.subtests):
                out.append(f"{path}: not ok" + (f" # {t.directive}" if t.directive else ""))
            elif t.status is Status.CRASHED and not t.subtests:
                out.append(f"{path}: no result (crashed or truncated)")
        out += [e for e in self.errors if e not in out]
        return out

    def write(self, path: Path) -> Path:
        Path(path).write_text(self.text)
        return Path(path)


def _planned(t: Test) -> int:
    if t.plan is None:
        return sum(_planned(s) if s.has_document else 1 for s in t.subtests)
    shown = t.subtests[:t.plan]
    return (sum(_planned(s) if s.has_document else 1 for s in shown)
            + max(0, t.plan - len(shown)))


def _count(t: Test, c: Counts, top: bool = False) -> None:
    if t.subtests:
        for s in t.subtests:
            _count(s, c)
        # A parent that failed for a reason of its own still counts once.
        if not top and t.status in (Status.FAIL, Status.CRASHED) and all(
                s.status.ok for s in t.subtests):
            if t.status is Status.FAIL:
                c.failed += 1
            else:
                c.crashed += 1
        return
    if top:
        return
    if t.status is Status.PASS:
        c.passed += 1
    elif t.status is Status.SKIP:
        c.skipped += 1
    elif t.status is Status.FAIL:
        c.failed += 1
    else:
        c.crashed += 1


def clean_line(raw: str) -> str:
    line = raw.rstrip("\r\n").replace("\r", "")
    line = TIMESTAMP.sub("", line, count=1)
    line = CALLER.sub("", line, count=1)
    return line


def extract(text: str, prefix: str | None = None) -> list[str]:
    """Return the KTAP lines of the first document in text (see module doc)."""
    out: list[str] = []
    started = False
    for raw in text.split("\n"):
        line = clean_line(raw)
        if not started:
            m = VERSION.search(line)
            if not m:
                continue
            found = line[:m.start()]
            if prefix is not None and found.strip() != prefix.strip():
                continue
            prefix = found
            started = True
            out.append(line[m.start():])
            continue
        if prefix:
            if line.startswith(prefix):
                out.append(line[len(prefix):])
            elif line.startswith(prefix.rstrip()) and not line[len(prefix.rstrip()):].strip():
                out.append("")
        else:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def _indent(line: str) -> tuple[int, str]:
    expanded = line.replace("\t", "    ")
    body = expanded.lstrip(" ")
    return len(expanded) - len(body), body.rstrip()


def _is_ktap(body: str) -> bool:
    return bool(VERSION.match(body) or PLAN.match(body) or RESULT.match(body)
                or body.startswith("#"))


def _apply_result(t: Test, m: re.Match) -> None:
    t.number = int(m.group(2))
    t.name = m.group(3).strip() or t.name or f"test{t.number}"
    t.directive = (m.group(4) or "").strip()
    word = t.directive.split(" ", 1)[0].upper() if t.directive else ""
    # Only SKIP is a skip.  TODO (and XFAIL) mark a test expected to fail;
    # no slabconv guest plants one, so its "not ok" is a failure like any.
    if word == "SKIP":
        t.status = Status.SKIP
    elif m.group(1) == "ok":
        t.status = Status.PASS
    else:
        t.status = Status.FAIL


class _Parser:
    def __init__(self, lines: list[str]):
        self.items = [(i, b) for i, b in map(_indent, lines) if b and _is_ktap(b)]
        self.pos = 0

    def peek(self):
        return self.items[self.pos] if self.pos < len(self.items) else None

    def block(self, indent: int, doc: Test) -> None:
        """Parse the document at `indent` into doc (its header, plan, tests)."""
        seen_version = False
        while (item := self.peek()) is not None:
            ind, body = item
            if ind < indent:
                break
            if ind > indent:
                # A subtest document; its result line follows at our indent.
                child = Test()
                self.block(ind, child)
                nxt = self.peek()
                m = RESULT.match(nxt[1]) if nxt and nxt[0] == indent else None
                if m:
                    self.pos += 1
                    _apply_result(child, m)
                elif not child.has_document:
                    # Stray indented diagnostics, not a subtest.
                    doc.diagnostics += child.diagnostics
                    continue
                else:
                    child.status = Status.CRASHED
                    child.number = len(doc.subtests) + 1
                    child.name = child.name or f"test{child.number}"
                    child.errors.append("subtest has no result line (truncated?)")
                doc.subtests.append(child)
                continue
            self.pos += 1
            if VERSION.match(body):
                if seen_version or doc.subtests or doc.plan is not None:
                    # A second document at this level: stop here.
                    self.pos -= 1
                    break
                seen_version = True
            elif (m := SUBTEST.match(body)) is not None:
                doc.name = doc.name or m.group(1)
            elif (m := PLAN.match(body)) is not None:
                if doc.plan is not None:
                    doc.errors.append(f"second plan line '{body}'")
                else:
                    doc.plan = int(m.group(1))
            elif (m := RESULT.match(body)) is not None:
                t = Test()
                _apply_result(t, m)
                doc.subtests.append(t)
            elif body.startswith("#"):
                doc.diagnostics.append(body[1:].strip())
        # Indented diagnostics alone do not make a subtest document.
        doc.has_document = doc.has_document or seen_version or \
            doc.plan is not None or bool(doc.subtests)


def _check(t: Test, path: str, errors: list[str], root: bool = False) -> None:
    """Consistency checks, bottom-up; fills errors and fixes up statuses."""
    for i, s in enumerate(t.subtests, 1):
        if s.number and s.number != i:
            s.errors.append(f"result numbered {s.number}, expected {i}")
        _check(s, f"{path}.{s.name}" if path else s.name, errors)
    if t.has_document:
        if t.plan is None:
            t.errors.append("missing plan (1..N)" if t.subtests else "no plan and no tests")
        elif len(t.subtests) < t.plan:
            t.errors.append(f"truncated: {len(t.subtests)} of {t.plan} planned results")
        elif len(t.subtests) > t.plan:
            t.errors.append(f"{len(t.subtests)} results but plan is 1..{t.plan}")
    for s in t.subtests:
        if s.errors and s.status.ok:
            s.status = Status.FAIL
    if t.has_document and t.status is not Status.CRASHED:
        bad = [s for s in t.subtests if not s.status.ok]
        if (bad or t.errors) and t.status.ok:
            if t.status is Status.PASS and bad and not root:
                t.errors.append("reported ok but subtests failed: "
                                + ", ".join(s.name for s in bad))
            t.status = Status.FAIL
    for e in t.errors:
        errors.append(f"{path or 'ktap'}: {e}")


def parse(text: str, prefix: str | None = None) -> KtapResult:
    """Parse the first KTAP document found in text (a log or a KTAP file)."""
    lines = extract(text, prefix)
    root = Test(name="main", has_document=True, status=Status.PASS)
    errors: list[str] = []
    if not lines:
        root.status = Status.CRASHED
        return KtapResult(root, lines, ["no KTAP output (no 'KTAP version' line)"])
    p = _Parser(lines)
    first = p.peek()
    p.block(first[0] if first else 0, root)
    root.name = "main"
    _check(root, "", errors, root=True)
    rest = p.peek()
    if rest is not None:        # never ignored: its results would go unseen
        errors.append(f"a second KTAP document follows the first ('{rest[1]}', "
                      f"{len(p.items) - p.pos} line(s)): it is not parsed")
        root.status = Status.FAIL
    if any(not s.status.ok for s in root.subtests):
        root.status = Status.FAIL
    return KtapResult(root, lines, errors)


def parse_file(path: Path, prefix: str | None = None) -> KtapResult:
    return parse(Path(path).read_text(errors="replace"), prefix)


def render(result: KtapResult, max_lines: int = 40) -> str:
    """A short human summary: each top-level test, and any failing test below."""
    out: list[str] = []
    marks = {Status.PASS: "ok", Status.SKIP: "skip", Status.FAIL: "FAIL",
             Status.CRASHED: "CRASH"}

    def emit(t: Test, depth: int) -> None:
        sub = ""
        if t.subtests:
            c = Counts()
            _count(t, c, top=True)
            sub = f"  ({c})"
        why = f"  # {t.directive}" if t.directive and t.status is not Status.PASS else ""
        out.append(f"{'    ' * depth}{marks[t.status]:5} {t.name}{sub}{why}")
        for s in t.subtests:
            if not s.status.ok:
                emit(s, depth + 1)

    for t in result.root.subtests:
        emit(t, 0)
    if len(out) > max_lines:
        out = out[:max_lines] + [f"... {len(out) - max_lines} more lines"]
    return "\n".join(out)
