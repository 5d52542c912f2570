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

from base.log import SlabconvError
from regen import after, manifest, spatch

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


# What a case defines or declares: functions (definitions and prototypes),
# struct / union / enum tags with a body, enumerators, macros.
_FN = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^()]*\))*\)\s*(?:\{|;)",
                 re.M)
_TAG = re.compile(r"\b(?:struct|union|enum)\s+(\w+)\s*\{")
_ENUM = re.compile(r"\benum\s+\w*\s*\{([^}]*)\}", re.S)
_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)


def defined_names(code: str) -> set[str]:
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    code = re.sub(r"//[^\n]*", "", code)
    out = {m.group(1) for m in _FN.finditer(code)} | set(_TAG.findall(code)) \
        | set(_MACRO.findall(code))
    for body in _ENUM.findall(code):
        out |= {m.group(1) for part in body.split(",")
                for m in [re.match(r"\s*([A-Za-z_]\w*)", part)] if m}
    return out - {"if", "for", "while", "switch", "return", "sizeof"}


def test_defined_names():
    code = """/* void not_me(void); */
#define M(x) x
struct s { int a; };
enum e { E_A, E_B = 2,
\tE_C };
static inline int f(const struct page *p,
\t\t    int (*cb)(void)) { return 0; }
void g(void);
int x = h(1);
"""
    assert defined_names(code) == {"M", "s", "e", "E_A", "E_B", "E_C", "f", "g"}


@pytest.fixture(scope="module")
def names_in_5_10():
    """Which of the names the cases define occur anywhere in the 5.10 tree
    (one grep over its .c and .h files)."""
    from base import paths
    from regen.source import resolve
    tree = resolve(paths.DEFAULT_KERNEL, None).tree
    names = sorted(set().union(*(defined_names(c.read_text()) for c in CASES)))
    cp = subprocess.run(["grep", "-rhowE", "--include=*.c", "--include=*.h", "|".join(names), "."],
                        cwd=tree, capture_output=True, text=True)
    assert cp.returncode in (0, 1), cp.stderr
    return set(cp.stdout.split())


@pytest.mark.network
@pytest.mark.parametrize("rule", RULES, ids=lambda p: p.stem)
def test_every_rule_has_a_case_with_code_that_5_10_does_not_have(rule, names_in_5_10):
    """Regeneration on a newer or locally changed tree is worth more than a
    rebase only if the rules convert code the hand series never saw: each
    rule is tested on some (a new caller, a new user of a member, a later
    kernel's helper).  Proved by the code, not by a case's name or comment:
    some case defines or declares a function (or struct, enumerator, macro)
    whose name occurs nowhere in the 5.10 tree."""
    cases = sorted((COCCI / "tests" / rule.stem).glob("*.c"))
    new = {c.name: sorted(defined_names(c.read_text()) - names_in_5_10) for c in cases}
    assert any(new.values()), (
        f"{rule.name}: no case in cocci/tests/{rule.stem}/ defines a name that 5.10 lacks: "
        f"{ {c.name: sorted(defined_names(c.read_text())) for c in cases} }")


@pytest.mark.parametrize("rule", PATCH_RULES, ids=lambda p: p.stem)
def test_every_patch_rule_has_a_case_it_must_leave_unchanged(rule):
    """A rule is proved to convert only what it should by a case whose
    expected output is its input (and that it does not refuse)."""
    cases = sorted((COCCI / "tests" / rule.stem).glob("*.c"))
    same = [c.name for c in cases if c.with_suffix(".res").is_file()
            and c.with_suffix(".res").read_text() == c.read_text()
            and not c.with_suffix(".out").is_file()]
    assert same, f"{rule.name}: no case in cocci/tests/{rule.stem}/ that it must leave unchanged"


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_case(case, tmp_path):
    rule = COCCI / "rules" / f"{case.parent.name}.cocci"
    assert rule.is_file(), f"test dir {case.parent.name} has no rule file"
    if is_report_rule(rule):
        return check_report_case(rule, case, tmp_path)
    return check_patch_case(rule, case, tmp_path)


def check_patch_case(rule: Path, case: Path, tmp_path: Path) -> None:
    """The rule run as the driver runs it on a copy named <case>.c: the
    result must be <case>.res, and the refusals it prints exactly the
    lines of <case>.out (none without one)."""
    expected = case.with_suffix(".res")
    assert expected.is_file(), f"{case} has no .res"
    args_file = case.with_suffix(".args")
    args = shlex.split(args_file.read_text()) if args_file.is_file() else []
    work = tmp_path / case.name
    shutil.copy(case, work)
    cp = subprocess.run([*spatch.base_command(), "--sp-file", str(rule), "-D", "patch", *args, "--no-includes",
                         "--very-quiet", "--in-place", case.name], cwd=tmp_path,
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "parse error" not in cp.stdout + cp.stderr
    assert work.read_text() == expected.read_text(), (
        f"{rule.name} on {case.name} differs from {expected.name}")
    check_refusals(rule, case, cp.stdout)


def refusal_lines(output: str) -> str:
    return "".join(l + "\n" for l in output.splitlines() if l.startswith(spatch.REFUSE))


def check_refusals(rule: Path, case: Path, output: str) -> None:
    """What the patch rule refused: exactly the lines of <case>.out, or
    nothing when the case has none."""
    out = case.with_suffix(".out")
    want = out.read_text() if out.is_file() else ""
    got = refusal_lines(output)
    assert got == want, (f"{rule.name} on {case.name}: refused\n{got or '(nothing)'}\n"
                         f"expected{' (' + out.name + ')' if out.is_file() else ''}:\n"
                         f"{want or '(nothing)'}")


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
    from regen import callers, usage    # the usage pass's own fold, outside mm/; the
    used.add(usage.ROUNDTRIP)           # rules for uses in files an entry does not list
    used |= {callers.PARAM_RULE, callers.RETURN_RULE, callers.PAGE_PARAM_RULE}
    # the generic conversions, which the usage pass uses when no entry names one
    used |= {r for rules in manifest.CONVERSIONS.values() for r in rules}
    for rule in PATCH_RULES:
        assert f"rules/{rule.name}" in used, f"{rule.name} is not used by cocci/series.toml"
    checks = "".join(p.read_text() for d in ("verify", "regen") for p in (REPO / d).glob("*.py"))
    # a report rule that a locals-first directive of a used rule runs
    first = {d.rule for r in used if r.endswith(".cocci") and (COCCI / r).is_file()
             for d in manifest.directives(COCCI / r) if isinstance(d, manifest.LocalsFirst)}
    for rule in REPORT_RULES:
        assert rule.name in checks or f"rules/{rule.name}" in first, (
            f"report rule {rule.name} is not used by verify/ or regen/, nor by a "
            f"locals-first directive of a rule the manifest uses")
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


AFTER_RULES = [COCCI / r for r in manifest.load(COCCI / "series.toml").after_rules]
AFTER_CASES = [c for r in AFTER_RULES for c in sorted((COCCI / "tests" / r.stem).glob("*.c"))]


@pytest.mark.parametrize("case", AFTER_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_after_rules_name_exactly_the_files_that_acted(case, tmp_path):
    """The after-rules run as one composed spatch run whose markers name the
    rule files that changed something (regen's "Generated by:" lines): on
    each of their cases, exactly the files whose own run, in the same
    order, changes the code."""
    assert all(spatch.reports_acted(r) for r in AFTER_RULES)
    alone = tmp_path / "alone.c"
    shutil.copy(case, alone)
    want = set()
    for r in AFTER_RULES:
        before = alone.read_text()
        spatch.apply_rule(r, tmp_path, [alone.name], what=r.name)
        if alone.read_text() != before:
            want.add(r.name)
    together = tmp_path / "together.c"
    shutil.copy(case, together)
    composed = spatch.compose(AFTER_RULES, tmp_path / "scratch", report_acted=True)
    out = spatch.apply_rule(composed, tmp_path, [together.name], what="after-rules")
    assert together.read_text() == alone.read_text()
    assert spatch.acted(out) == want


@pytest.mark.parametrize("case", AFTER_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_after_rules_over_the_changed_functions_alone_match_the_whole_file(case, tmp_path):
    """regen/after.py gives the after-rules only the functions that want
    them (and every other definition of their names), in a scratch file,
    and puts the results back: on each of their cases, the same text as
    the run over the whole file."""
    composed = spatch.compose(AFTER_RULES, tmp_path / "scratch", report_acted=True)
    whole = tmp_path / "whole.c"
    shutil.copy(case, whole)
    out_whole = spatch.apply_rule(composed, tmp_path, [whole.name], what="whole")
    text = case.read_text()
    _, pending = after.wanted(AFTER_RULES, {"c": text}, {})
    chosen = after._functions(text, pending.get("c", []))
    assert chosen is not None, "every case is made of function definitions"
    part = tmp_path / "part.c"
    part.write_text(after._extract(text, chosen))
    out_part = spatch.apply_rule(composed, tmp_path, [part.name], what="part")
    assert after._splice(text, chosen, part.read_text()) == whole.read_text()
    assert spatch.acted(out_part) == spatch.acted(out_whole)


@pytest.mark.parametrize("case", AFTER_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_after_rules_their_directives_choose_do_what_all_of_them_do(case, tmp_path):
    """regen/after.py runs only the after-rule files whose acts-where
    directives hold on a changed function: on each of their cases, the
    same text and the same files named as all of them, and none of the
    files left out would have changed anything."""
    chosen, pending = after.wanted(AFTER_RULES, {"c": case.read_text()}, {})
    everything = tmp_path / "all.c"
    shutil.copy(case, everything)
    out_all = spatch.apply_rule(spatch.compose(AFTER_RULES, tmp_path / "s1", report_acted=True),
                                tmp_path, [everything.name], what="all")
    if not chosen:
        assert everything.read_text() == case.read_text() and not spatch.acted(out_all)
        return
    some = tmp_path / "some.c"
    shutil.copy(case, some)
    out_some = spatch.apply_rule(spatch.compose(chosen, tmp_path / "s2", report_acted=True),
                                 tmp_path, [some.name], what="chosen")
    assert some.read_text() == everything.read_text()
    assert spatch.acted(out_some) == spatch.acted(out_all)


def test_an_acts_where_directive_counts_the_same_first_group(tmp_path):
    rule = tmp_path / "r.cocci"
    rule.write_text("// slabconv: acts-where 2 \\bpage_slab\\((\\w+)\\)\n"
                    "// slabconv: acts-where 1 ^\\s*x = 1;\n@@\n@@\n")
    acts = manifest.directives(rule)
    assert [a.count for a in acts] == [2, 1]
    holds = after._holds(rule)
    assert holds("f(page_slab(a)); g(page_slab(a));")
    assert not holds("f(page_slab(a)); g(page_slab(b));")
    assert holds("int f(void)\n{\n  x = 1;\n}")
    rule.write_text("// slabconv: acts-where 2 (unclosed\n")
    with pytest.raises(SlabconvError, match=r"r.cocci:1: acts-where"):
        manifest.directives(rule)


def test_the_after_rules_give_up_extracting_what_is_not_one_definition():
    text = "int a;\nstatic int f(void)\n{\n\treturn 0;\n}\n"
    assert after._functions(text, [(0, 6)]) is None             # a declaration
    assert after._functions(text, [(0, len(text))]) == [(7, len(text) - 1, "f")]
    # a result whose definitions are not the ones given cannot be put back
    chosen = after._functions(text, [(6, len(text))])
    assert after._splice(text, chosen, "static int g(void)\n{\n\treturn 1;\n}\n") is None
    # every definition of a chosen name goes with it (the rules skip a name
    # defined twice)
    two = "#ifdef X\nstatic int f(void)\n{\n\treturn 1;\n}\n#else\nstatic int f(void)\n{\n\treturn 0;\n}\n#endif\n"
    first = two.index("}") + 1
    assert [n for _, _, n in after._functions(two, [(0, first)])] == ["f", "f"]


def test_a_patch_rules_refusals_are_checked_against_the_cases_out(tmp_path):
    """A case with a .out must be refused exactly so; a case without one
    must not be refused at all (check_refusals, on every patch rule case)."""
    rule = COCCI / "rules" / "slab_return.cocci"
    case = tmp_path / "c.c"
    line = f"{spatch.REFUSE} c.c:3: f() returns p, which can be NULL there"
    check_refusals(rule, case, "noise\n")
    with pytest.raises(AssertionError, match="c.c:3"):
        check_refusals(rule, case, line + "\n")
    case.with_suffix(".out").write_text(line + "\n")
    check_refusals(rule, case, "noise\n" + line + "\n")
    with pytest.raises(AssertionError, match=r"\(nothing\)"):
        check_refusals(rule, case, "noise\n")


def _planted_case(tmp_path: Path, name: str, out: str | None) -> Path:
    """cocci/tests/slab_return/<name> with its .res and .args, copied to a
    directory of its own, with <out> as its .out (None: no .out)."""
    d = tmp_path / "cases"
    d.mkdir()
    src = COCCI / "tests" / "slab_return" / name
    for suffix in (".c", ".res", ".args"):
        shutil.copy(src.with_suffix(suffix), d / src.with_suffix(suffix).name)
    if out is not None:
        (d / name).with_suffix(".out").write_text(out)
    run = tmp_path / "run"
    run.mkdir()
    return d / f"{name}.c"


@pytest.mark.parametrize("name,out", [
    ("new_refuse", None),                                        # a refusal no .out expects
    ("new_refuse", ""),                                          # the same, with an empty .out
    ("new_code", "SLABCONV-REFUSE: new_code.c:1: planted\n"),   # an expected refusal missing
])
def test_a_patch_case_whose_refusals_differ_from_its_out_fails(tmp_path, name, out):
    case = _planted_case(tmp_path, name, out)
    with pytest.raises(AssertionError, match=r": refused\n"):
        check_patch_case(COCCI / "rules" / "slab_return.cocci", case, tmp_path / "run")


def test_the_refusing_cases_are_checked_against_their_out(tmp_path):
    outs = sorted(p.stem for p in (COCCI / "tests" / "slab_return").glob("new_refuse*.out"))
    assert outs == ["new_refuse", "new_refuse_call"]
    for name in outs:
        d = tmp_path / name
        d.mkdir()
        check_patch_case(COCCI / "rules" / "slab_return.cocci",
                         COCCI / "tests" / "slab_return" / f"{name}.c", d)
