"""Coccinelle-style rule tests: cocci/tests/<rule>/<case>.c -> <case>.res or .out.

A patch rule (`virtual patch`) is run as the driver runs it (spatch -D patch
--no-includes, plus the -D options in <case>.args), on a copy, and must
produce exactly the .res file.  A case whose .res equals its .c proves the
rule leaves that code alone.

A patch rule that refuses a conversion prints "SLABCONV-REFUSE: <file>:<line>:
..." (the driver stops with it); a case that must be refused has the lines
it prints in <case>.out (file names "<case>.c"), and a case without one
must be refused nowhere.

A report rule (`virtual report`, e.g. residue_page.cocci) is run with
-D report on a copy named <case>.c in an empty directory, and what it
prints must be exactly <case>.out (file names in it are "<case>.c").  An
empty .out proves the rule reports nothing there.
"""
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from regen import manifest, spatch

REPO = Path(__file__).resolve().parent.parent
COCCI = REPO / "cocci"
RULES = sorted((COCCI / "rules").glob("*.cocci"))
CASES = sorted(c for c in (COCCI / "tests").glob("*/*.c") if c.parent.name != "anchors")


def is_report_rule(rule: Path) -> bool:
    """A rule that reports (virtual report) and does not patch."""
    text = rule.read_text()
    return "virtual report" in text and "virtual patch" not in text


PATCH_RULES = [r for r in RULES if not is_report_rule(r)]
REPORT_RULES = [r for r in RULES if is_report_rule(r)]


def test_spatch_is_installed():
    assert shutil.which("spatch"), "spatch (Debian package coccinelle) is required"


# A case's name (new_*) or its comment says that the code is not 5.10's.
NEW_CODE = re.compile(r"(?i)not in 5\.10|new code|5\.10 does not|5\.10 has no|"
                      r"not exist in 5\.10|of 6\.12")


@pytest.mark.parametrize("rule", RULES, ids=lambda p: p.stem)
def test_every_rule_has_a_case_with_code_that_5_10_does_not_have(rule):
    """Regeneration on a newer or locally changed tree is worth more than a
    rebase only if the rules convert code the hand series never saw: each
    rule is tested on some (a new caller, a new user of a member, a later
    kernel's form of a declaration)."""
    cases = sorted((COCCI / "tests" / rule.stem).glob("*.c"))
    assert any(c.stem.startswith("new") or NEW_CODE.search(c.read_text()) for c in cases), (
        f"{rule.name}: no case in cocci/tests/{rule.stem}/ with code that 5.10 does not have")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_case(case, tmp_path):
    rule = COCCI / "rules" / f"{case.parent.name}.cocci"
    assert rule.is_file(), f"test dir {case.parent.name} has no rule file"
    if is_report_rule(rule):
        return check_report_case(rule, case, tmp_path)
    expected = case.with_suffix(".res")
    assert expected.is_file(), f"{case} has no .res"
    args_file = case.with_suffix(".args")
    args = shlex.split(args_file.read_text()) if args_file.is_file() else []
    work = tmp_path / case.name
    shutil.copy(case, work)
    cp = subprocess.run([*spatch.base_command(), "--sp-file", str(rule), "-D", "patch", *args, "--no-includes",
                         "--very-quiet", "--in-place", str(work)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "parse error" not in cp.stdout + cp.stderr
    assert work.read_text() == expected.read_text(), (
        f"{rule.name} on {case.name} differs from {expected.name}")


def check_report_case(rule: Path, case: Path, tmp_path: Path) -> None:
    expected = case.with_suffix(".out")
    assert expected.is_file(), f"{case} has no .out (the report rule's expected output)"
    args_file = case.with_suffix(".args")
    args = shlex.split(args_file.read_text()) if args_file.is_file() else []
    shutil.copy(case, tmp_path / case.name)
    cp = subprocess.run([*spatch.base_command(), "--sp-file", str(rule), "-D", "report", *args, "--no-includes",
                         "--very-quiet", case.name], cwd=tmp_path, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "parse error" not in cp.stderr
    assert cp.stdout == expected.read_text(), (
        f"{rule.name} on {case.name} differs from {expected.name}:\n{cp.stdout}")


@pytest.mark.parametrize("rule", PATCH_RULES, ids=lambda p: p.stem)
def test_every_rule_has_cases_that_change_code(rule):
    cases = sorted((COCCI / "tests" / rule.stem).glob("*.c"))
    assert cases, f"{rule.name} has no test cases in cocci/tests/{rule.stem}/"
    assert any(c.read_text() != c.with_suffix(".res").read_text() for c in cases), \
        f"no test case of {rule.name} shows it changing anything"


@pytest.mark.parametrize("rule", REPORT_RULES, ids=lambda p: p.stem)
def test_every_report_rule_has_cases_that_report_and_cases_that_do_not(rule):
    cases = sorted((COCCI / "tests" / rule.stem).glob("*.c"))
    assert cases, f"{rule.name} has no test cases in cocci/tests/{rule.stem}/"
    outs = [c.with_suffix(".out").read_text() for c in cases if c.with_suffix(".out").is_file()]
    assert any(outs), f"no test case of {rule.name} shows it reporting anything"
    assert "" in outs, f"no test case of {rule.name} shows it leaving code alone (empty .out)"


@pytest.mark.parametrize("rule", RULES, ids=lambda p: p.stem)
def test_rule_header(rule):
    """Kernel scripts/coccinelle style: description, Confidence, Options, virtual patch
    (or virtual report for a report rule)."""
    text = rule.read_text()
    assert text.startswith("// SPDX-License-Identifier:")
    assert "\n/// " in text
    assert "// Confidence:" in text and "// Options:" in text
    assert "virtual patch" in text or "virtual report" in text


def test_every_rule_and_template_is_used_by_the_manifest():
    """Patch rules and templates by cocci/series.toml; report rules by a check
    or a pass of regen (verify/*.py or regen/*.py names them)."""
    series = manifest.load(COCCI / "series.toml")
    used = {r for e in series.entries for s in e.steps for r in (s.rules or [s.path])}
    from regen import usage        # the usage pass's own fold, outside mm/
    used.add(usage.ROUNDTRIP)
    for rule in PATCH_RULES:
        assert f"rules/{rule.name}" in used, f"{rule.name} is not used by cocci/series.toml"
    checks = "".join(p.read_text() for d in ("verify", "regen") for p in (REPO / d).glob("*.py"))
    for rule in REPORT_RULES:
        assert rule.name in checks, f"report rule {rule.name} is not used by verify/ or regen/"
    for t in (COCCI / "templates").glob("*.h"):
        assert f"templates/{t.name}" in used, f"{t.name} is not used by cocci/series.toml"


@pytest.mark.parametrize("symbol,line", [
    ("page", 2), ("slab_state", 6), ("page_to_nid", 11), ("compound_order", 15), ("nothere", None)])
def test_anchor_rule_locates_declarations(symbol, line):
    """cocci/anchors/definition.cocci (report mode) on cocci/tests/anchors/kinds.c."""
    case = COCCI / "tests" / "anchors" / "kinds.c"
    cp = subprocess.run([*spatch.base_command(), "--sp-file", str(COCCI / "anchors" / "definition.cocci"),
                         "-D", "report", "-D", f"anchor={symbol}", "--no-includes",
                         "--very-quiet", str(case)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    found = [int(l.rsplit(":", 1)[1]) for l in cp.stdout.splitlines() if l.startswith("ANCHOR ")]
    assert found == ([line] if line else [])
