"""Running one SmPL rule over a list of files, in place."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from base import paths
from base.log import info, SlabconvError
from base.proc import require_tool, tied
from . import isos


class SpatchCrash(SlabconvError):
    """spatch itself failed (a parse error, an exception, a non-zero exit):
    a rule that did not run, never a rule that does not fit the code.
    `origins`: the places of the user's rule files its message names
    (Origin), `output`: that message, with those places."""

    def __init__(self, message: str, origins=(), output: str = ""):
        super().__init__(message)
        self.origins = list(origins)
        self.output = output


# spatch reports problems in several shapes; keep the ones that name a place.
_ERR_PATTERNS = [
    re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), column (?P<col>\d+)'),
    re.compile(r'(?P<file>\S+\.(?:c|h|cocci)):(?P<line>\d+)(?::(?P<col>\d+))?'),
]


def spatch_version() -> str:
    exe = require_tool("spatch", "coccinelle")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"spatch version (\S+)", out)
    return m.group(1) if m else "unknown"


def error_places(output: str) -> list[str]:
    """'file:line' strings for every place spatch's output names."""
    places = []
    for pat in _ERR_PATTERNS:
        for m in pat.finditer(output):
            p = f"{m.group('file')}:{m.group('line')}"
            if p not in places:
                places.append(p)
    return places


def python_interpreter() -> str:
    """The Python that spatch's scripts run in.  Without --python, spatch
    asks `python3` on PATH where libpython is (five processes through
    /bin/sh, ldd and ldconfig), which under a version manager's shim (pyenv)
    costs 0.3 s per run and can pick an interpreter other than Debian's,
    whose coccilib the python3 package provides.  Debian's own comes first."""
    for cand in (os.environ.get("SLABCONV_SPATCH_PYTHON"), "/usr/bin/python3", sys.executable):
        if cand and os.access(cand, os.X_OK):
            return cand
    raise SlabconvError("no Python interpreter for spatch (set SLABCONV_SPATCH_PYTHON)")


def base_command() -> list[str]:
    """spatch and the options every run shares: the Python its scripts use,
    and the isomorphisms the rules use (regen/isos.py)."""
    return [require_tool("spatch", "coccinelle"), "--python", python_interpreter(),
            "--iso-file", str(isos.iso_file())]


def _command(rule: Path, tree: Path, files: list[str], mode: list[str],
             defines: dict[str, str] | None, options: list[str] | None, what: str) -> list[str]:
    """The spatch command line every rule runs with: --no-includes, a 120 s
    timeout per file, -D name=value (a value of "" gives -D name)."""
    missing = [f for f in files if not (tree / f).is_file()]
    if missing:
        raise SlabconvError(f"{what}: {rule.name}: file(s) not in the tree: {', '.join(missing)}")
    cmd = [*base_command(), "--sp-file", str(rule), "--no-includes", "--very-quiet", *mode, "--timeout", "120"]
    for k, v in (defines or {}).items():
        cmd += ["-D", f"{k}={v}" if v != "" else k]
    return cmd + list(options or []) + list(files)


_VERSION: str | None = None
JOBS = int(os.environ.get("SLABCONV_SPATCH_JOBS", os.cpu_count() or 1))   # spatch -j for several files


def _cache_key(rule: Path, tree: Path, files: list[str], defines, options) -> str:
    global _VERSION
    _VERSION = _VERSION or spatch_version()
    h = hashlib.sha256()
    for part in (rule.read_bytes(), repr(sorted((defines or {}).items())).encode(),
                 repr(list(options or [])).encode(), _VERSION.encode(),
                 isos.iso_file().name.encode()):
        h.update(part + b"\0")
    for f in files:
        h.update(f.encode() + b"\0" + (tree / f).read_bytes() + b"\0")
    return h.hexdigest()


# With $SLABCONV_SPATCH_CACHE=0, the store of one regen run alone (set by
# regen/series.py): the results of its entries applied ahead (regen/side.py)
STORE: Path | None = None


def _cache_dir() -> Path | None:
    """Where spatch results are kept ($SLABCONV_SPATCH_CACHE=0: none kept
    from one run to the next, STORE within one)."""
    if os.environ.get("SLABCONV_SPATCH_CACHE", "1") == "0":
        return STORE
    return paths.cache_dir("spatch")


# The largest resident set of a spatch run in this process (kB) and the
# rule it ran: `make bench` reports it.
PEAK = {"rss_kb": 0, "rule": ""}
_PEAK_LOCK = threading.Lock()


def _wait(p: subprocess.Popen, rule: Path) -> int:
    """Wait for a spatch process; return its exit code and note its peak
    memory (wait4's rusage: the run and the workers of -j)."""
    try:
        _, status, ru = os.wait4(p.pid, 0)
    except BaseException:
        p.kill()
        p.wait()
        raise
    p.returncode = os.waitstatus_to_exitcode(status)
    with _PEAK_LOCK:
        if ru.ru_maxrss > PEAK["rss_kb"]:
            PEAK.update(rss_kb=ru.ru_maxrss, rule=rule.name)
    return p.returncode


def _run(cmd: list[str], cwd: Path, rule: Path) -> tuple[int, str, str]:
    """Run spatch; return its exit code, stdout and stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(tied(cmd), cwd=cwd, stdout=out, stderr=err,
                             stdin=subprocess.DEVNULL)
        rc = _wait(p, rule)
        out.seek(0)
        err.seek(0)
        return rc, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def _failed(rc: int, output: str) -> bool:
    return rc != 0 or re.search(r"(parse error|Fatal error|EXN|exception)", output) is not None


def _apply_command(rule: Path, tree: Path, files: list[str], defines, options, what) -> list[str]:
    mode = ["--in-place", "--no-show-diff", "-D", "patch"]
    if len(files) > 1 and JOBS > 1:     # a patch rule treats each file on its own: one process each
        mode += ["-j", str(JOBS), "--chunksize", "1"]
    return _command(rule, tree, files, mode, defines, options, what)


def apply_rule(rule: Path, tree: Path, files: list[str], *, defines: dict[str, str] | None = None,
               options: list[str] | None = None, what: str = "") -> str:
    """Apply `rule` in place to `files` (relative to `tree`); return spatch's output.

    Raises SlabconvError (exit 1) with spatch's messages and the file:line they
    name when spatch fails or reports a parse error in the rule.

    Results are cached: the key is the rule's text, the defines and options,
    the spatch version and the content of every input file, so a hit is what
    spatch would produce again (only successful runs are kept).
    """
    cmd = _apply_command(rule, tree, files, defines, options, what)
    cache = _cache_dir()
    hit = None
    if cache is not None:
        key = _cache_key(rule, tree, files, defines, options)
        hit = cache / key[:2] / key
        datas = _cached(hit, len(files))
        if datas is not None:
            for f, data in zip(files, datas[1:]):
                if (tree / f).read_bytes() != data:
                    (tree / f).write_bytes(data)
            return datas[0].decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    rc, stdout, stderr = _run(cmd, tree, rule)
    out = stdout + stderr
    if _failed(rc, out):
        raise crash(what, rule, out)
    if hit is not None:
        _store(hit, out, [(tree / f).read_bytes() for f in files])
    return out


def _cached(hit: Path, n: int) -> list[bytes] | None:
    """A cached result: spatch's output, then the `n` files' contents; None
    when there is none.  An entry is a directory renamed into place whole
    (_store), so a run killed while storing one leaves only a temporary
    directory (`<key>.tmp<pid>-<thread>`), removed here once its writer is
    gone; an entry that is not whole (a file missing or not as its sizes
    say: an older slabconv, a disk that filled up) is removed and the run
    made again, each said on stderr."""
    for tmp in hit.parent.glob(f"{hit.name}.tmp*"):
        m = re.match(r".*\.tmp(\d+)-", tmp.name)
        if m and not _alive(int(m.group(1))):
            info("spatch", f"removing {tmp}: a result a killed run did not finish storing")
            shutil.rmtree(tmp, ignore_errors=True)
    if not hit.is_dir():
        return None
    try:
        done = (hit / "done").read_bytes()
        datas = [(hit / str(i)).read_bytes() for i in range(n)]
        sizes = (hit / "sizes").read_text().split() if (hit / "sizes").exists() else None
        if sizes is not None and sizes != [str(len(done))] + [str(len(d)) for d in datas]:
            raise ValueError("sizes differ")
        return [done, *datas]
    except (OSError, ValueError):
        info("spatch", f"removing {hit}: a cached result that is not whole; running spatch again")
        bad = hit.with_name(f"{hit.name}.bad{os.getpid()}-{threading.get_ident()}")
        try:
            hit.rename(bad)
        except OSError:
            return None
        shutil.rmtree(bad, ignore_errors=True)
        return None


def _store(hit: Path, out: str, datas: list[bytes]) -> None:
    """Store a result atomically: written into a temporary directory, then
    renamed into place (rename fails if another run stored it first)."""
    tmp = hit.with_name(f"{hit.name}.tmp{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        for i, data in enumerate(datas):
            (tmp / str(i)).write_bytes(data)
        (tmp / "done").write_text(out)
        (tmp / "sizes").write_text(" ".join(str(len(x)) for x in
                                            [(tmp / "done").read_bytes(), *datas]) + "\n")
        tmp.rename(hit)
    except OSError:                  # another run stored the same result first
        shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def report_rule(rule: Path, tree: Path, files: list[str], *, defines: dict[str, str] | None = None,
                options: list[str] | None = None, what: str = "") -> str:
    """Run a report-mode rule (`virtual report`) over `files` (relative to
    `tree`, which is only read); return what it prints on stdout.

    The same conventions as apply_rule (--no-includes, -D options, the same
    timeout and error reporting), with -D report and nothing written.
    """
    cmd = _command(rule, tree, files, ["-D", "report"], defines, options, what)
    cp = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, errors="replace")
    err = cp.stderr or ""
    bad = cp.returncode != 0 or re.search(r"(parse error|Fatal error|EXN|exception)", err)
    if bad:
        raise crash(what, rule, err or cp.stdout)
    return cp.stdout


def _merge_virtuals(texts: list[tuple[str, list]]) -> tuple[str, list[tuple[str, list]]]:
    """The `virtual` declarations of `texts` (each a text and the origin of
    each of its lines) merged into one header, and the texts without them,
    without blank lines at either end, each with its lines' origins."""
    virtuals: list[str] = []
    bodies = []
    for text, origins in texts:
        kept = []
        for line, origin in zip(text.splitlines(), origins):
            m = re.fullmatch(r"virtual\s+(.+)", line)
            if m:
                virtuals += [v for v in dict.fromkeys(x.strip() for x in m.group(1).split(","))
                             if v and v not in virtuals]
            else:
                kept.append((line, origin))
        while kept and not kept[0][0].strip():
            kept.pop(0)
        while kept and not kept[-1][0].strip():
            kept.pop()
        if not kept:
            kept = [("", None)]
        kept[0] = (kept[0][0].lstrip(), kept[0][1])
        kept[-1] = (kept[-1][0].rstrip(), kept[-1][1])
        bodies.append(("".join(line + "\n" for line, _ in kept), [o for _, o in kept]))
    return "".join(f"virtual {v}\n" for v in virtuals), bodies


@dataclass(frozen=True)
class Origin:
    """Where a line of a composed SmPL file comes from: a line of one of
    the user's rule files, and the instance (the part of
    compose_instances(), None in compose()) it belongs to."""
    rule: Path
    line: int
    instance: int | None = None

    def __str__(self) -> str:
        rel = os.path.relpath(self.rule)
        return f"{self.rule if rel.startswith('..') else rel}:{self.line}"


# A composed file's path -> the origin of each of its lines (None: a line
# the composition made); its name holds its content's digest.
_ORIGINS: dict[str, list] = {}


def _lines_of(rule: Path, instance: int | None = None) -> tuple[str, list]:
    """A rule file's text and the origin of each of its lines."""
    text = rule.read_text()
    return text, [Origin(rule, n, instance) for n in range(1, len(text.splitlines()) + 1)]


def _join(head: str, pieces: list[tuple[str, list]]) -> tuple[str, list]:
    """head, an empty line and the pieces (each ending with a newline) with
    an empty line between them; and the origin of each line of that."""
    origins: list = [None] * (head.count("\n") + 1)
    for k, (text, o) in enumerate(pieces):
        if len(o) != text.count("\n"):
            raise AssertionError("a composed piece needs one origin per line")
        origins += ([None] if k else []) + o
    return head + "\n" + "\n".join(t for t, _ in pieces), origins


def origins_of(rule: Path) -> list:
    """The origin of each line of a composed SmPL file (None: a line the
    composition made)."""
    return _ORIGINS[str(rule)]


# The places spatch names in a SmPL file (the one given with --sp-file when
# no file is named): a parse error's `File "f", line N, column C`, a Python
# script's `line N, file "f"`, a check's `warning: line N:` and `minus and
# plus code starting on lines N and M`, and a rule named in `error: rule:`.
_SMPL_PLACES = [
    re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)'),
    re.compile(r'line (?P<line>\d+), file "(?P<file>[^"]+)"'),
    re.compile(r'^(?:warning|error): line (?P<line>\d+)\b', re.M),
    re.compile(r'\blines (?P<line>\d+) and (?P<line2>\d+)'),
]
_RULE_NAMED = re.compile(r'^error: (?P<rule>\w+): ', re.M)


def translate(rule: Path, output: str) -> tuple[list[Origin], str]:
    """The places of the user's rule files that spatch's `output` names in
    the SmPL file `rule` it ran, and the output with each such place given
    as file:line of the user's rule file."""
    composed = _ORIGINS.get(str(rule))
    found: list[Origin] = []

    def at(n: str) -> Origin | None:
        if composed is None:            # the user's own file
            o: Origin | None = Origin(rule, int(n))
        else:   # a line the composition made (or past the end): the user's line before it
            o = next((x for x in reversed(composed[:int(n)]) if x is not None), None)
        if o is not None and o not in found:
            found.append(o)
        return o

    def sub(m: re.Match) -> str:
        g = m.groupdict()
        if g.get("file") is not None and Path(g["file"]).name != rule.name:
            return m.group(0)           # a C file's place
        places = [at(g[k]) for k in ("line", "line2") if g.get(k)]
        if not all(places):
            return m.group(0)
        if g.get("file") is not None:
            return str(places[0])
        if len(places) == 2:
            return f"lines {places[0]} and {places[1]}"
        return m.group(0).replace(f"line {g['line']}", str(places[0]))

    for pat in _SMPL_PLACES:
        output = pat.sub(sub, output)
    text = rule.read_text(errors="replace") if rule.is_file() else ""
    for m in _RULE_NAMED.finditer(output):       # a rule's header line
        h = re.search(rf"^@(?:script:\w+\s+)?{re.escape(m.group('rule'))}\b", text, re.M)
        if h:
            at(str(text.count("\n", 0, h.start()) + 1))
    return found, output


def crash(what: str, rule: Path, output: str) -> SpatchCrash:
    """The error for a spatch run of `rule` that failed: at the places of
    the user's rule files its message names, with that message."""
    origins, shown = translate(rule, output.strip())
    where = f" at {', '.join(map(str, origins))}" if origins else \
        (f" at {', '.join(error_places(shown))}" if error_places(shown) else "")
    return SpatchCrash(f"{what}: spatch failed{where}:\n{shown}", origins, shown)


def _write_scratch(out: str, origins: list, stem: str, scratch: Path) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(out.encode()).hexdigest()[:12]
    path = scratch / f"{stem[:80]}-{digest}.cocci"
    if not path.is_file():
        tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
        tmp.write_text(out)
        tmp.replace(path)
    _ORIGINS[str(path)] = origins
    return path


def compose(rules: list[Path], scratch: Path, report_acted: bool = False) -> Path:
    """One SmPL file that runs `rules` in order (one spatch run instead of
    several: each rule still sees what the ones before it changed).  The
    `virtual` declarations are merged; rule names must be distinct across
    the files (they are in cocci/rules).  Written to `scratch`, named after
    its content.

    `report_acted`: right after each rule that transforms code, a script
    prints ACTED + its file's name when the rule matched (acted()); for
    rule files that run Python already (a script costs spatch about 0.3 s
    to start)."""
    head, bodies = _merge_virtuals([_marked(r) if report_acted else _lines_of(r) for r in rules])
    out, origins = _join(head, [(f"// ---- {r.name} ----\n{b}", [None] + o)
                                for r, (b, o) in zip(rules, bodies)])
    return _write_scratch(out, origins, "+".join(r.stem for r in rules), scratch)


ACTED = "slabconv-acted:"


def _transforming(text: str) -> list[dict]:
    return [r for r in _rules_of(text) if r["kind"] == "c"
            and re.search(r"^[-+]", text[r["body"][0]:r["body"][1]], re.M)]


def _marked(rule: Path) -> tuple[str, list]:
    """A rule file's text and line origins with, after each rule that
    transforms code, a script that prints ACTED + the file's name when that
    rule matched.  (Placed right after it: a script at the end of the file
    does not see the match of a rule followed by rules that inherit
    bindings no match produced.)"""
    text, origins = _lines_of(rule)
    if not reports_acted(rule):
        return text, origins
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    at = {text.count("\n", 0, r["body"][1]) + (r["body"][1] == len(text) and not text.endswith("\n")):
          r["name"] for r in _transforming(text)}
    out: list[str] = []
    out_origins: list = []
    for i in range(len(lines) + 1):
        if i in at:
            marker = ["\n", f"@script:python depends on {at[i]}@\n", "@@\n",
                      f'print("{ACTED}{rule.name}")\n', "\n"]
            out += marker
            out_origins += [None] * len(marker)
        if i < len(lines):
            out.append(lines[i])
            out_origins.append(origins[i])
    return "".join(out), out_origins


def acted(output: str) -> set[str]:
    """The names of the rule files of a compose(report_acted=True) run one
    of whose transforming rules matched (a file whose rules cannot all be
    named, see reports_acted(), never says)."""
    return set(re.findall(rf"^{ACTED}(\S+)$", output, re.M))


def reports_acted(rule: Path) -> bool:
    """Whether every rule of `rule` that transforms code has a name (a
    script can depend only on a named rule)."""
    names = [r["name"] for r in _transforming(rule.read_text())]
    return bool(names) and None not in names


# --- several instances of the rules in one run --------------------------------
MODES = {"patch", "context", "report", "org"}
_HEADER_WORDS = {"depends", "on", "extends", "using", "disable", "exists", "forall",
                 "ever", "never"}
HIT = "slabconv-hit:"


def _rules_of(text: str) -> list[dict]:
    """The rules of a SmPL file: header, kind, name, metavariable section
    and body, as (start, end) offsets into `text`.  A line `@...@` (also
    `@@`) starts a rule when no rule is open; the next `@@` line closes its
    metavariables; its body runs to the next rule."""
    rules = []
    offs = 0
    cur = None
    for line in text.splitlines(keepends=True):
        stripped = line.rstrip()
        is_at = re.fullmatch(r"@[^@\n]*@", stripped) is not None
        if is_at and (cur is None or "decls_end" in cur):
            if cur is not None:
                cur["body"] = (cur["body"][0], offs)
                rules.append(cur)
            words = stripped[1:-1].split()
            kind = "c"
            if words and ":" in words[0] and words[0].split(":")[0] in ("script", "initialize", "finalize"):
                kind = words[0].split(":")[0]
                words = words[1:]
            name = words[0] if words and words[0] not in _HEADER_WORDS else None
            cur = {"kind": kind, "name": name, "head": (offs, offs + len(stripped))}
        elif cur is not None and "decls_end" not in cur and stripped == "@@":
            cur["decls"] = (cur["head"][1], offs)
            cur["decls_end"] = True
            cur["body"] = (offs + len(stripped), len(text))
        offs += len(line)
    if cur is not None:
        if "decls_end" not in cur:
            raise SlabconvError(f"SmPL rule header '{text[cur['head'][0]:cur['head'][1]]}' "
                                f"has no '@@' line")
        cur["body"] = (cur["body"][0], len(text))
        rules.append(cur)
    return rules


def instance(text: str, part: str, unit: str) -> tuple[str, list[str]]:
    """`text` (one rule file) renamed so that it can run next to other
    instances of itself in one spatch run: rule names and Python globals get
    the suffix `unit` (one per file and instance), virtual names (and the
    metavariables bound to them, `identifier virtual.fn` binds fn) get the
    suffix `part` (shared by the files of one conversion, which take the
    same -D values).  Returns the text and the renamed names of the rules
    that transform code (to report whether the instance matched)."""
    rules = _rules_of(text)
    names = {r["name"] for r in rules if r["name"]}
    virt = set(re.findall(r"virtual\.(\w+)", text))
    for m in re.finditer(r"^virtual\s+(.+)$", text, re.M):
        virt |= {v.strip() for v in m.group(1).split(",") if v.strip()}
    virt -= MODES
    pyglobals: set[str] = set()
    for r in rules:
        if r["kind"] == "initialize":
            body = text[r["body"][0]:r["body"][1]]
            pyglobals |= set(re.findall(r"^(\w+)\s*=", body, re.M))
            pyglobals |= set(re.findall(r"^def\s+(\w+)", body, re.M))
    clash = (names | virt) & pyglobals
    if clash:
        raise SlabconvError(f"cannot compose: {', '.join(sorted(clash))} is both a rule name "
                            f"and a virtual or Python global")

    def sub(pattern_names: set[str], suffix: str, chunk: str, dotted: bool = False) -> str:
        if not pattern_names:
            return chunk
        alt = "|".join(sorted(map(re.escape, pattern_names), key=len, reverse=True))
        pat = rf"\b({alt})\b(?=\.)" if dotted else rf"\b({alt})\b"
        return re.sub(pat, lambda m: m.group(1) + suffix, chunk)

    out = []
    pos = 0
    for r in rules:
        out.append(sub(virt, part, text[pos:r["head"][0]]))       # virtual lines, comments
        head = sub(virt, part, sub(names, unit, text[r["head"][0]:r["head"][1]]))
        if r["kind"] == "c" and not r["name"]:      # name it, to report its matches
            r["name"] = f"anon{len(out)}"
            head = f"@{r['name']}{unit} {head[1:].lstrip()}" if head != "@@" \
                else f"@{r['name']}{unit}@"
        out.append(head)
        decls = text[r["decls"][0]:r["decls"][1]]
        decls = sub(pyglobals, unit, sub(virt, part, sub(names, unit, decls, dotted=True)))
        out.append(decls)
        out.append(text[r["decls"][1]:r["body"][0]])              # the @@ line
        body = text[r["body"][0]:r["body"][1]]
        out.append(sub(pyglobals, unit, sub(virt, part, body)))
        pos = r["body"][1]
    out.append(sub(virt, part, text[pos:]))
    transforming = [r["name"] + unit for r in rules
                    if r["kind"] == "c" and r["name"]
                    and re.search(r"^[-+]", text[r["body"][0]:r["body"][1]], re.M)]
    return "".join(out), transforming


def compose_instances(parts: list[tuple[list[Path], dict[str, str], bool]],
                      scratch: Path) -> tuple[Path, dict[str, str]]:
    """One SmPL file that runs several conversions, each a chain of rule
    files with its own -D values, in order: the instances are renamed apart
    (see instance()), and their defines are returned renamed the same way.
    After each instance whose flag is true a script prints HIT + its index
    when one of the transforming rules of its first file matched, so that
    the driver can tell which step did nothing (a Python script costs
    spatch about 0.3 s to start: the driver asks only where it has no
    cheaper check)."""
    texts: list[tuple[str, list]] = []
    defines: dict[str, str] = {}
    stems = []
    for i, (rules, defs, report) in enumerate(parts):
        part = f"_{i}"
        hits: list[str] = []
        for j, r in enumerate(rules):
            own, origins = _lines_of(r, i)
            text, transforming = instance(own, part, f"_{i}_{j}")
            texts.append((f"// ---- instance {i}: {r.name} ----\n{text}", [None] + origins))
            if j == 0:
                hits = transforming
            stems.append(r.stem)
        if hits and report:
            texts.append((f"@script:python depends on {' || '.join(hits)}@\n@@\n"
                          f"print(\"{HIT}{i}\")\n", [None] * 3))
        defines.update({f"{k}{part}": v for k, v in defs.items()})
    head, bodies = _merge_virtuals(texts)
    out, origins = _join(head, bodies)
    return _write_scratch(out, origins, "+".join(dict.fromkeys(stems)) + f"-x{len(parts)}",
                          scratch), defines


REFUSE = "SLABCONV-REFUSE:"     # a rule's line: a conversion it will not make, and where


def refusals(output: str) -> list[str]:
    """What a rule refused to convert ("file:line: why"), from its output."""
    return [l[len(REFUSE):].strip() for l in output.splitlines() if l.startswith(REFUSE)]


def hits(output: str) -> set[int]:
    """The instances that matched, from a compose_instances() run's output."""
    return {int(m) for m in re.findall(rf"^{HIT}(\d+)$", output, re.M)}
