"""The narrowed isomorphism file changes no rule (regen/isos.py).

Every rule file of cocci/ is parsed by spatch with standard.iso and with
the file cut down to cocci/isos.toml, under every set of -D options it is
run with: its rule tests' .args, the series' steps, and its modes with a
value for each virtual identifier.  Both parses must print the same rules.
Planted: a list without an isomorphism a rule uses is caught, naming that
rule; a name that standard.iso does not define is an error.
"""
import re
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from base import paths
from base.log import SlabconvError
from regen import isos, manifest

COCCI = paths.COCCI
RULES = sorted((COCCI / "rules").glob("*.cocci")) + [COCCI / "anchors" / "definition.cocci"]


def _options(rule: Path) -> list[tuple[str, ...]]:
    """The -D option lists `rule` runs with (values of identifiers are
    placeholders: an isomorphism applies to a pattern, not to a name)."""
    text = rule.read_text()
    modes = [m for m in ("patch", "report", "context")
             if re.search(rf"^virtual\b.*\b{m}\b", text, re.M)]
    idents = sorted(set(re.findall(r"virtual\.(\w+)", text)))
    values = [f"{v}=1" if v == "argpos" else f"{v}=x" for v in idents]
    flags: set[tuple[str, ...]] = {()}
    for args in (COCCI / "tests" / rule.stem).glob("*.args"):
        flags.add(tuple(sorted(a for a in shlex.split(args.read_text())
                               if a != "-D" and "=" not in a)))
    series = manifest.load(COCCI / "series.toml")
    for st in (s for e in series.entries for s in e.steps if s.kind == "rule"):
        if f"{rule.parent.name}/{rule.name}" in st.rules:
            flags.add(tuple(sorted(k for k, v in st.defines.items() if v == "")))
    out = []
    for mode in modes:
        for f in sorted(flags):
            out.append(tuple(x for a in (mode, *values, *f) for x in ("-D", a)))
    return out


CASES = [(r, o) for r in RULES for o in _options(r)]


def test_every_rule_parses_the_same_with_the_narrowed_file():
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda c: (c, isos.differs(c[0], list(c[1]))), CASES))
    bad = [f"{r.relative_to(COCCI)} {' '.join(o)}: {d}" for (r, o), d in found if d]
    assert not bad, "rules that need an isomorphism cocci/isos.toml lacks:\n" + "\n".join(bad)
    assert len(CASES) >= len(RULES)


def test_a_list_without_an_isomorphism_a_rule_uses_is_caught(tmp_path):
    # pgflags_nid.cocci tests flags & mask, which bitand_comm also reads mask & flags
    rule = COCCI / "rules" / "pgflags_nid.cocci"
    full = isos.standard().read_text()
    names = [n for n in isos.names() if n != "bitand_comm"]
    cut = tmp_path / "cut.iso"
    cut.write_text(isos.narrow(full, names))
    opts = [x for a in ("patch",) for x in ("-D", a)]
    assert isos.differs(rule, opts, cut), "a missing isomorphism went unseen"
    assert not isos.differs(rule, opts)


def test_a_name_standard_iso_lacks_is_an_error():
    with pytest.raises(SlabconvError, match="no_such_iso"):
        isos.narrow(isos.standard().read_text(), ["commeq", "no_such_iso"])


def test_the_narrowed_file_keeps_only_the_listed_isomorphisms():
    text = isos.iso_file().read_text()
    assert re.findall(r"^@\s*(\w+)\s*@", text, re.M) == \
        [n for n in re.findall(r"^@\s*(\w+)\s*@", isos.standard().read_text(), re.M)
         if n in isos.names()]
