"""The isomorphisms the rules use: Coccinelle's standard.iso narrowed to them.

spatch applies every isomorphism of its iso file to every rule while it
parses the rule (`x == NULL` also matches `!x`, ...), before it looks at
any C code.  An isomorphism that does not apply to a rule's pattern leaves
the parsed rule as it was, so it changes nothing the rule matches in any
code; it only costs the time of trying it, 0.05 to 0.1 s of every run.
cocci/isos.toml names the isomorphisms that apply to some rule of cocci/
(or that a rule names in `disable`), and every run uses standard.iso cut
down to them (iso_file(), in the cache; standard.iso itself is read from
Coccinelle's installation, never copied).

What proves it: differs() parses a rule with both files (spatch
--parse-cocci prints the rule as the isomorphisms left it) and names the
rules whose parse is not the same; tests/test_isos.py runs it on every
rule file of cocci/ with the defines the series gives it.  A rule that
needs an isomorphism the list lacks fails there, naming it.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tomllib
from pathlib import Path

from base import paths
from base.log import SlabconvError
from base.proc import require_tool

LIST = paths.COCCI / "isos.toml"

# an isomorphism: its kind on a line (Expression, Statement, ...), then `@ name @`
_START = re.compile(r"^([A-Z]\w*)[ \t]*\n@[ \t]*(\w+)[ \t]*@[ \t]*$", re.M)

_FILE: Path | None = None


def names() -> list[str]:
    """The isomorphisms cocci/isos.toml keeps."""
    with LIST.open("rb") as f:
        return list(tomllib.load(f)["keep"])


@functools.cache
def standard() -> Path:
    """Coccinelle's standard.iso: where $COCCINELLE_HOME or the installation
    (the directory of the standard.h spatch reports reading) has it."""
    home = os.environ.get("COCCINELLE_HOME")
    if home and (Path(home) / "standard.iso").is_file():
        return Path(home) / "standard.iso"
    cp = subprocess.run([require_tool("spatch", "coccinelle"), "--parse-cocci", os.devnull],
                        capture_output=True, text=True, errors="replace")
    m = re.search(r"init_defs_builtins: (\S+)/standard\.h", cp.stdout + cp.stderr)
    if m and (Path(m.group(1)) / "standard.iso").is_file():
        return Path(m.group(1)) / "standard.iso"
    raise SlabconvError("cannot find Coccinelle's standard.iso (set COCCINELLE_HOME to the "
                        "directory that holds it)")


def narrow(text: str, keep: list[str]) -> str:
    """The isomorphism file `text` with only the isomorphisms named in
    `keep` (each from its kind line to the next one's); a name it does not
    define is an error."""
    starts = list(_START.finditer(text))
    found = [m.group(2) for m in starts]
    missing = [n for n in keep if n not in found]
    if missing:
        raise SlabconvError(f"{LIST}: {', '.join(missing)}: no such isomorphism in this "
                            f"Coccinelle's standard.iso")
    out = []
    for m, nxt in zip(starts, starts[1:] + [None]):
        if m.group(2) in keep:
            out.append(text[m.start():nxt.start() if nxt else len(text)].rstrip() + "\n\n")
    return "".join(out)


def iso_file() -> Path:
    """standard.iso narrowed to names(), written once into the cache (named
    after its content)."""
    global _FILE
    if _FILE is not None and _FILE.is_file():
        return _FILE
    text = narrow(standard().read_text(errors="replace"), names())
    d = paths.cache_dir("iso")
    path = d / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.iso"
    if not path.is_file():
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(path)
    _FILE = path
    return path


def _parsed(rule: Path, iso: Path, defines: list[str]) -> str:
    cp = subprocess.run([require_tool("spatch", "coccinelle"), "--parse-cocci", str(rule),
                         "--iso-file", str(iso), *defines],
                        capture_output=True, text=True, errors="replace")
    return cp.stdout + cp.stderr


def differs(rule: Path, defines: list[str], iso: Path | None = None) -> list[str]:
    """The rules of `rule` (spatch -D options `defines`) that parse
    differently with `iso` (default: iso_file()) than with standard.iso:
    the header line of each, or the whole message when one of the parses
    failed.  Empty: the narrowed file changes nothing in `rule`."""
    full = _parsed(rule, standard(), defines)
    cut = _parsed(rule, iso or iso_file(), defines)
    if full == cut:
        return []
    a, b = _by_rule(full), _by_rule(cut)
    bad = [x[0] for x, y in zip(a, b) if x != y]
    return bad if bad and len(a) == len(b) else [cut.strip()[-400:]]


def _by_rule(parsed: str) -> list[tuple[str, str]]:
    """spatch --parse-cocci's output cut at each rule's `@...@` line:
    (that line, what follows it)."""
    parts = re.split(r"^(@[^@\n]*@)$", parsed, flags=re.M)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
