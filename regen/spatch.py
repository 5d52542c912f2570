"""Running one SmPL rule over a list of files, in place."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from slabconv.log import SlabconvError
from slabconv.proc import require_tool

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


def _command(rule: Path, tree: Path, files: list[str], mode: list[str],
             defines: dict[str, str] | None, options: list[str] | None, what: str) -> list[str]:
    """The spatch command line every rule runs with: --no-includes, a 120 s
    timeout per file, -D name=value (a value of "" gives -D name)."""
    exe = require_tool("spatch", "coccinelle")
    missing = [f for f in files if not (tree / f).is_file()]
    if missing:
        raise SlabconvError(f"{what}: {rule.name}: file(s) not in the tree: {', '.join(missing)}")
    cmd = [exe, "--sp-file", str(rule), "--no-includes", "--very-quiet", *mode, "--timeout", "120"]
    for k, v in (defines or {}).items():
        cmd += ["-D", f"{k}={v}" if v != "" else k]
    return cmd + list(options or []) + list(files)


_VERSION: str | None = None


def _cache_key(rule: Path, tree: Path, files: list[str], defines, options) -> str:
    global _VERSION
    _VERSION = _VERSION or spatch_version()
    h = hashlib.sha256()
    for part in (rule.read_bytes(), repr(sorted((defines or {}).items())).encode(),
                 repr(list(options or [])).encode(), _VERSION.encode()):
        h.update(part + b"\0")
    for f in files:
        h.update(f.encode() + b"\0" + (tree / f).read_bytes() + b"\0")
    return h.hexdigest()


def _cache_dir() -> Path | None:
    """Where spatch results are kept ($SLABCONV_SPATCH_CACHE=0 turns it off)."""
    if os.environ.get("SLABCONV_SPATCH_CACHE", "1") == "0":
        return None
    from slabconv import paths
    return paths.cache_dir("spatch")


def apply_rule(rule: Path, tree: Path, files: list[str], *, defines: dict[str, str] | None = None,
               options: list[str] | None = None, what: str = "") -> str:
    """Apply `rule` in place to `files` (relative to `tree`); return spatch's output.

    Raises SlabconvError (exit 1) with spatch's messages and the file:line they
    name when spatch fails or reports a parse error in the rule.

    Results are cached: the key is the rule's text, the defines and options,
    the spatch version and the content of every input file, so a hit is what
    spatch would produce again (only successful runs are kept).
    """
    cmd = _command(rule, tree, files, ["--in-place", "-D", "patch"], defines, options, what)
    cache = _cache_dir()
    hit = None
    if cache is not None:
        key = _cache_key(rule, tree, files, defines, options)
        hit = cache / key[:2] / key
        if (hit / "done").is_file():
            for i, f in enumerate(files):
                data = (hit / str(i)).read_bytes()
                if (tree / f).read_bytes() != data:
                    (tree / f).write_bytes(data)
            return (hit / "done").read_text()
    cp = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, errors="replace")
    out = (cp.stdout or "") + (cp.stderr or "")
    bad = cp.returncode != 0 or re.search(r"(parse error|Fatal error|EXN|exception)", out)
    if bad:
        places = error_places(out)
        where = f" at {', '.join(places)}" if places else ""
        raise SlabconvError(f"{what}: spatch failed on {rule.name}{where}:\n{out.strip()}")
    if hit is not None:
        tmp = hit.with_name(f"{hit.name}.tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(files):
            (tmp / str(i)).write_bytes((tree / f).read_bytes())
        (tmp / "done").write_text(out)
        try:
            tmp.rename(hit)
        except OSError:              # another run stored the same result first
            shutil.rmtree(tmp, ignore_errors=True)
    return out


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
        places = error_places(err)
        where = f" at {', '.join(places)}" if places else ""
        raise SlabconvError(f"{what}: spatch failed on {rule.name}{where}:\n"
                            f"{(err or cp.stdout).strip()}")
    return cp.stdout


def compose(rules: list[Path], scratch: Path) -> Path:
    """One SmPL file that runs `rules` in order (one spatch run instead of
    several: each rule still sees what the ones before it changed).  The
    `virtual` declarations are merged; rule names must be distinct across
    the files (they are in cocci/rules).  Written to `scratch`, named after
    its content."""
    import hashlib
    virtuals: list[str] = []
    bodies = []
    for r in rules:
        text = r.read_text()
        for m in re.finditer(r"^virtual\s+(.+)$", text, re.M):
            for v in (x.strip() for x in m.group(1).split(",")):
                if v and v not in virtuals:
                    virtuals.append(v)
        body = re.sub(r"^virtual\s+.+$\n?", "", text, flags=re.M)
        bodies.append(f"// ---- {r.name} ----\n{body.strip()}\n")
    out = "".join(f"virtual {v}\n" for v in virtuals) + "\n" + "\n".join(bodies)
    scratch.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(out.encode()).hexdigest()[:12]
    path = scratch / f"{'+'.join(r.stem for r in rules)}-{digest}.cocci"
    if not path.is_file():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(out)
        tmp.replace(path)
    return path
