"""Reading a generated series: git format-patch files, the cover letter, ENTRIES.

Only the files are read (no git, no kernel tree): each numbered patch is an
mbox message whose body is the commit message, `---`, the diffstat and the
diff; the hunks are cut by the line counts of their `@@` headers, so a
line of the diff that looks like the mail signature (`-- `) is not taken
for it.
"""
from __future__ import annotations

import email
import email.policy
import re
from dataclasses import dataclass, field
from pathlib import Path

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
# regen/series.py generated_with(): one trailer, folded (continuation lines
# start with whitespace); read after unfolding.
GENERATED_WITH_RE = re.compile(r"^Generated-with: slabconv \((.*)\)\s*$", re.M)
FOLD_RE = re.compile(r"\n[ \t]+")
SUBJECT_PREFIX_RE = re.compile(r"^\[PATCH[^\]]*\]\s*")
NUMBERED_RE = re.compile(r"^(\d{4})-.*\.patch$")
# regen/series.py entries_report(): "STATUS(15) SUBJECT", evidence indented 16
ENTRIES_TOTAL_RE = re.compile(r"^\d+ applied, \d+ upstream, \d+ not applicable$")
SKIPPED_HEAD = "Steps of the original series that this kernel does not have"


@dataclass
class Hunk:
    header: str                  # the whole @@ line
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    context: str                 # what git printed after the second @@ (function)
    lines: list[str]             # the hunk's lines, with their ' ', '+', '-', '\' marks
    index: int = 0               # 1-based within its file diff

    @property
    def added(self) -> int:
        return sum(1 for ln in self.lines if ln.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for ln in self.lines if ln.startswith("-"))

    @property
    def text(self) -> str:
        return "\n".join([self.header] + self.lines)


@dataclass
class FileDiff:
    path: str                    # the file after the patch (before, if deleted)
    status: str = "modified"     # modified | new | deleted | renamed
    old_path: str = ""
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)


@dataclass
class Patch:
    number: int                  # from the file name (0001-...)
    name: str                    # file name
    subject: str                 # without the [PATCH n/m] prefix
    message: str                 # the commit message body (trailers included)
    sources: list[str]           # the Generated-with trailer, in order, duplicates removed
    files: list[FileDiff]
    author: str = ""
    date: str = ""
    # file -> the sources that could have changed it (the manifest's steps
    # that name the file); a file not in it: every source of the patch
    file_sources: dict = field(default_factory=dict)
    origin: str = "manifest"     # or "usage": the usage pass chose the conversions

    def sources_of(self, path: str) -> list[str]:
        return self.file_sources.get(path, self.sources)

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    @property
    def hunks(self) -> list[tuple[FileDiff, Hunk]]:
        return [(f, h) for f in self.files for h in f.hunks]

    @property
    def tag(self) -> str:
        return f"{self.number:04d}"


def source_key(item: str) -> tuple[str, str]:
    """One item of a Generated-with trailer -> (file it names, detail):
    'cocci/rules/x.cocci' -> ('cocci/rules/x.cocci', ''),
    'regen/members.py on struct page' -> ('regen/members.py', 'on struct page')."""
    item = item.strip()
    path, _, detail = item.partition(" ")
    return path, detail.strip()


def parse_generated_with(message: str) -> list[str]:
    """The files named by the message's Generated-with trailer(s) (folded
    or not), in order, each once."""
    out: list[str] = []
    for m in GENERATED_WITH_RE.finditer(FOLD_RE.sub(" ", message)):
        for item in m.group(1).split(","):
            if item.strip():
                key = source_key(item)[0]
                if key not in out:
                    out.append(key)
    return out


def _header_text(msg, name: str) -> str:
    v = msg.get(name)
    return " ".join(str(v).split()) if v is not None else ""


def parse_diff(text: str) -> list[FileDiff]:
    """The file diffs of a `git diff` text (anything before the first
    `diff --git` is ignored, as is anything after the last hunk)."""
    lines = text.split("\n")
    files: list[FileDiff] = []
    cur: FileDiff | None = None
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("diff --git "):
            m = re.match(r"^diff --git a/(.*?) b/(.*)$", ln)
            a, b = (m.group(1), m.group(2)) if m else ("", ln[len("diff --git "):])
            cur = FileDiff(b, old_path=a)
            files.append(cur)
            i += 1
            continue
        if cur is None:
            i += 1
            continue
        if ln.startswith("new file mode"):
            cur.status = "new"
        elif ln.startswith("deleted file mode"):
            cur.status = "deleted"
        elif ln.startswith("rename from "):
            cur.status, cur.old_path = "renamed", ln[len("rename from "):]
        elif ln.startswith("rename to "):
            cur.path = ln[len("rename to "):]
        elif ln.startswith("Binary files ") or ln == "GIT binary patch":
            cur.binary = True
        elif ln.startswith("--- ") and not cur.hunks:
            p = ln[4:]
            if p.startswith("a/"):
                cur.old_path = p[2:]
        elif ln.startswith("+++ ") and not cur.hunks:
            p = ln[4:]
            if p.startswith("b/"):
                cur.path = p[2:]
            elif p == "/dev/null":
                cur.path = cur.old_path
        else:
            m = HUNK_RE.match(ln)
            if m:
                old_len = int(m.group(2)) if m.group(2) is not None else 1
                new_len = int(m.group(4)) if m.group(4) is not None else 1
                body: list[str] = []
                old_seen = new_seen = 0
                i += 1
                while i < len(lines) and (old_seen < old_len or new_seen < new_len
                                          or lines[i].startswith("\\")):
                    b = lines[i]
                    if b.startswith("\\"):
                        body.append(b)
                    elif b.startswith("+"):
                        new_seen += 1
                        body.append(b)
                    elif b.startswith("-"):
                        old_seen += 1
                        body.append(b)
                    elif b.startswith(" ") or b == "":
                        old_seen += 1
                        new_seen += 1
                        body.append(b if b else " ")
                    else:
                        break           # truncated hunk: keep what there is
                    i += 1
                cur.hunks.append(Hunk(ln, int(m.group(1)), old_len, int(m.group(3)), new_len,
                                      m.group(5).strip(), body, len(cur.hunks) + 1))
                continue
        i += 1
    return files


def parse_patch(path: Path) -> Patch:
    data = path.read_bytes()
    msg = email.message_from_bytes(data, policy=email.policy.default)
    subject = SUBJECT_PREFIX_RE.sub("", _header_text(msg, "Subject"))
    payload = msg.get_payload(decode=True)
    body = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
    body = body.replace("\r\n", "\n")
    m = re.search(r"^---$", body, re.M)
    message = body[:m.start()].rstrip("\n") if m else body.split("\ndiff --git ", 1)[0].rstrip()
    d = body.find("\ndiff --git ")
    files = parse_diff(body[d + 1:]) if d >= 0 else []
    nm = NUMBERED_RE.match(path.name)
    number = int(nm.group(1)) if nm else 0
    return Patch(number, path.name, subject, message, parse_generated_with(message), files,
                 author=_header_text(msg, "From"), date=_header_text(msg, "Date"))


def numbered_patches(series_dir: Path) -> list[Path]:
    """The series' patch files in order, without the cover letter (as
    slabconv.pipeline.apply_series takes them)."""
    return sorted(p for p in Path(series_dir).glob("[0-9][0-9][0-9][0-9]-*.patch")
                  if not p.name.startswith("0000-"))


@dataclass
class Cover:
    subject: str = ""
    blurb: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (subject, reason)
    present: bool = False


def parse_cover(path: Path) -> Cover:
    """The cover letter: its subject, its text, and the steps it lists as
    not in this kernel (regen/series.py cover_blurb())."""
    if not path.is_file():
        return Cover()
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    payload = msg.get_payload(decode=True)
    body = (payload.decode("utf-8", "replace") if isinstance(payload, bytes)
            else str(payload)).replace("\r\n", "\n")
    subject = SUBJECT_PREFIX_RE.sub("", _header_text(msg, "Subject"))
    lines = body.split("\n")
    skipped: list[tuple[str, str]] = []
    blurb_end = len(lines)
    for i, ln in enumerate(lines):
        if ln.startswith(SKIPPED_HEAD):
            blurb_end = min(blurb_end, i)
            for x in lines[i + 1:]:
                if x.startswith("    ") and skipped:
                    s, r = skipped[-1]
                    skipped[-1] = (s, (r + " " + x.strip()).strip())
                elif x.startswith("  ") and x.strip():
                    skipped.append((x.strip(), ""))
                else:
                    break
            break
        if re.match(r"^\S.* \(\d+\):$", ln):        # "slabconv (58):" shortlog head
            blurb_end = min(blurb_end, i)
    blurb = "\n".join(lines[:blurb_end]).strip()
    return Cover(subject, blurb, skipped, True)


@dataclass
class Verdict:
    status: str                  # applied | upstream | not applicable
    subject: str
    evidence: list[str]


def parse_entries(path: Path) -> list[Verdict] | None:
    """The ENTRIES report regen writes on a kernel that has struct slab
    already (regen/series.py entries_report()); None when there is none."""
    if not path.is_file():
        return None
    out: list[Verdict] = []
    for ln in path.read_text(errors="replace").splitlines():
        if not ln.strip() or ENTRIES_TOTAL_RE.match(ln.strip()):
            continue
        if ln.startswith(" ") and out:
            out[-1].evidence.append(ln.strip())
        else:
            out.append(Verdict(ln[:15].strip(), ln[15:].strip(), []))
    for v in out:                # wrapped lines: one paragraph of evidence per entry
        v.evidence = [" ".join(v.evidence)] if v.evidence else []
    return out


def read_source(series_dir: Path) -> dict[str, str]:
    f = Path(series_dir) / "SOURCE"
    if not f.is_file():
        return {}
    return dict(line.split(": ", 1) for line in f.read_text().splitlines() if ": " in line)
