"""The documents: a README that is a manual, and one record of measurements.

Fails when a tracked file names a package archive or registry host (the
mirrors are the machine's own: fetch/mirrors.py); when the README is over 15 KB; when an environment variable
SLABCONV_* that product code (not tests/) names is missing from it; when a
Makefile target with a `## ` help text is missing from it; when a document
(README.md, docs/*.md, */README.md) speaks of how the work was organised
rather than of the project; when docs/MEASUREMENTS.md is not one table, or
has a row without a date; when a row of the README's figures table has no
date or a time that the record does not have on that date.  Each check is also run on a copy of the repository with a defect
planted, and must name it.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README_LIMIT = 15 * 1024

# Words that describe how the work was organised, not the project.
DIARY = [
    (re.compile(r"\bsessions?\b", re.I), "session"),
    (re.compile(r"\bissues?\s*#|\bissues?\s+(?:no\.\s*)?\d+\b", re.I), "issue number"),
    (re.compile(r"\bhelpers?\b", re.I), "helper"),
    (re.compile(r"\bthis stop\b", re.I), "this stop"),
    (re.compile(r"\bCEO\b"), "CEO"),
    (re.compile(r"\bbefore (?:this|these) (?:session|change|changes|day)\b", re.I),
     "before this change"),
    (re.compile(r"\bload(?: average)?(?: of)? \d", re.I), "machine load"),
]
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Hosts of package archives and registries: no file may name one (downloads
# use the machine's apt configuration or $SLABCONV_APT_MIRROR).  The
# patterns are assembled from pieces so that this file does not name the
# hosts it looks for, and so that a grep of the repository for them finds
# nothing, this file included: `any-host.` + `debian` + `.org` and the
# like, any subdomain ("deb.", "security.", "ftp.xx.", "snapshot.").
_DOT = r"\."
HOSTS = re.compile(
    r"\b(?:[a-z0-9-]+" + _DOT + r")+(?:" + "|".join([
        "debian" + _DOT + "(?:org|net)", "ubuntu" + _DOT + "com", "pythonhosted" + _DOT + "org",
        "npmjs" + _DOT + "(?:org|com)", "golang" + _DOT + "org"]) + r")\b"
    + r"|\b(?:pypi" + _DOT + "org|crates" + _DOT + "io|rubygems" + _DOT + "org)\b", re.I)
ENV = re.compile(r"\bSLABCONV_[A-Z0-9_]*[A-Z0-9]\b")
CODE_SUFFIXES = {".py", ".sh"}
NOT_PRODUCT = {".git", "tests", "docs", "generated-patches"}


def documents(root: Path) -> list[Path]:
    """README.md, docs/*.md and every <folder>/README.md."""
    out = [root / "README.md"]
    out += sorted((root / "docs").glob("*.md"))
    out += sorted(p for p in root.glob("*/README.md") if p.parent.name not in NOT_PRODUCT)
    return [p for p in out if p.is_file()]


def product_files(root: Path):
    """Product code: Python and shell files outside tests/, the Makefile,
    the launcher, and scripts/ and .ci/ scripts."""
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if not p.is_file() or rel.parts[0] in NOT_PRODUCT or "__pycache__" in rel.parts:
            continue
        if (p.suffix in CODE_SUFFIXES or p.name == "Makefile"
                or rel == Path("slabconv") or rel.parts[0] in ("scripts", ".ci")):
            yield p


def product_env_vars(root: Path) -> dict[str, str]:
    """SLABCONV_* names product code uses -> the first file that names it."""
    found: dict[str, str] = {}
    for p in product_files(root):
        for name in ENV.findall(p.read_text(errors="replace")):
            found.setdefault(name, str(p.relative_to(root)))
    return found


def help_targets(root: Path) -> list[str]:
    """Makefile targets with a `## ` help text (what `make help` lists)."""
    text = (root / "Makefile").read_text()
    return re.findall(r"^([a-z][a-z0-9-]*):.*## ", text, re.M)


def table_rows(text: str, header_first_cell: str) -> tuple[int, list[list[str]]]:
    """(number of tables in text, rows of the table whose first header cell
    is header_first_cell, as lists of cells)."""
    lines = text.splitlines()
    tables = sum(1 for ln in lines if re.match(r"^\|\s*-{3,}\s*\|", ln))
    rows: list[list[str]] = []
    for i, ln in enumerate(lines):
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if ln.startswith("|") and cells[0].lower() == header_first_cell \
                and i + 1 < len(lines) and re.match(r"^\|\s*-{3,}", lines[i + 1]):
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            break
    return tables, rows


def dates_of(cell: str) -> set[str]:
    """2026-12-05 -> {2026-12-05}; 2026-12-03/04 -> {2026-12-03, 2026-12-04}."""
    out = set()
    for m in re.finditer(r"(\d{4}-\d{2}-)(\d{2})((?:/\d{2})*)", cell):
        out.add(m.group(1) + m.group(2))
        out.update(m.group(1) + d for d in m.group(3).split("/") if d)
    return out


def unrecorded_figures(readme_rows: list[list[str]], meas_rows: list[list[str]]) -> list[str]:
    """Each time of the README's figures table ("21 min 15 s", "10.6 s",
    several split by , ; /) must be in a row of the record of one of its
    dates."""
    out = []
    for r in readme_rows:
        if len(r) < 3:
            continue
        dates = dates_of(r[2])
        same_day = [" | ".join(m) for m in meas_rows if m and m[0] in dates]
        for t in re.split(r"\s*[,;/]\s*", r[1]):
            if t and not any(t in m for m in same_day):
                out.append(f"README.md: figure {t!r} of {r[0]!r} is not in "
                           f"docs/MEASUREMENTS.md on {', '.join(sorted(dates)) or 'its date'}")
    return out


def tracked_files(root: Path) -> list[Path]:
    """The files git tracks under root, else (a copy) every file."""
    cp = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
    if cp.returncode == 0 and (root / ".git").exists():
        return [root / n for n in cp.stdout.decode().split("\0") if n]
    return sorted(p for p in root.rglob("*") if p.is_file())


def named_hosts(root: Path) -> list[str]:
    """"file:line: host" for each archive or registry host a tracked file names."""
    out = []
    for p in tracked_files(root):
        try:
            text = p.read_text(errors="replace")
        except (OSError, IsADirectoryError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in HOSTS.finditer(line):
                out.append(f"{p.relative_to(root)}:{n}: names the host {m.group(0)}")
    return out


def problems(root: Path) -> list[str]:
    """Every problem of the documents under root, one line each."""
    out: list[str] = named_hosts(root)
    readme = root / "README.md"
    text = readme.read_text()
    size = len(text.encode())
    if size > README_LIMIT:
        out.append(f"README.md: {size} bytes, over {README_LIMIT}")
    for name, where in sorted(product_env_vars(root).items()):
        if not re.search(rf"\b{name}\b", text):
            out.append(f"README.md: {name} (used in {where}) is not documented")
    for t in help_targets(root):
        if not re.search(rf"\bmake {re.escape(t)}(?![\w-])", text):
            out.append(f"README.md: target `make {t}` is not documented")
    for doc in documents(root):
        for n, ln in enumerate(doc.read_text().splitlines(), 1):
            for rx, what in DIARY:
                if rx.search(ln):
                    out.append(f"{doc.relative_to(root)}:{n}: {what}: {ln.strip()[:80]}")
    meas = root / "docs" / "MEASUREMENTS.md"
    mrows: list[list[str]] = []
    if not meas.is_file():
        out.append("docs/MEASUREMENTS.md is missing")
    else:
        tables, rows = table_rows(meas.read_text(), "date")
        mrows = rows
        if tables != 1:
            out.append(f"docs/MEASUREMENTS.md: {tables} tables, not one")
        if not rows:
            out.append("docs/MEASUREMENTS.md: no table with a date column")
        for r in rows:
            if not DATE.match(r[0]):
                out.append(f"docs/MEASUREMENTS.md: a row without a date: {' | '.join(r)[:80]}")
    fig = text.split("## Figures", 1)
    _, rows = table_rows(fig[1] if len(fig) > 1 else "", "step")
    if not rows:
        out.append("README.md: no figures table (## Figures, first column `step`)")
    for r in rows:
        if not any(re.match(r"^\d{4}-\d{2}-\d{2}", c) for c in r):
            out.append(f"README.md: a figure without a date: {' | '.join(r)[:80]}")
    out += unrecorded_figures(rows, mrows)
    return out


def test_the_documents_have_no_problem():
    assert problems(REPO) == []


def test_the_readme_names_the_test_command_and_ci():
    text = (REPO / "README.md").read_text()
    for s in ("make test", "make test-fast", "make bench", "bash .ci/run"):
        assert s in text
    assert "make test" in (REPO / ".ci" / "run").read_text()


# ---- planted defects: each check must fail, and name what it found ----------------

@pytest.fixture
def copy(tmp_path):
    """A copy of what the checks read (the documents, the Makefile, product
    code), files of its own; the same problems as the repository."""
    dst = tmp_path / "repo"
    for p in [*documents(REPO), *product_files(REPO)]:
        rel = p.relative_to(REPO)
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, dst / rel)
    assert problems(dst) == problems(REPO)
    return dst


@pytest.mark.parametrize("where,sub", [("fetch/suites.py", "deb"), ("README.md", "security"),
                                       ("docs/OPERATIONS.md", "ftp.fr")])
def test_planted_mirror_host_fails(copy, where, sub):
    host = ".".join([sub, "debian", "org"])           # see HOSTS: never written whole
    f = copy / where
    f.write_text(f.read_text() + f"\n# http://{host}/debian bookworm main\n")
    n = len(f.read_text().splitlines())
    assert f"{where}:{n}: names the host {host}" in problems(copy)


def test_the_host_check_does_not_take_other_names():
    assert not HOSTS.search("mirror.invalid/debian 127.0.0.1 /usr/share/keyrings/"
                            "debian-archive-keyring.gpg ftpmaster@debian" + ".org")


def test_planted_readme_over_15_kb_fails(copy):
    r = copy / "README.md"
    r.write_text(r.read_text() + "\n" + "padding " * 2000)
    assert any("bytes, over" in p for p in problems(copy))


def test_planted_undocumented_variable_fails(copy):
    f = copy / "regen" / "planted_env.py"
    f.write_text('import os\nX = os.environ.get("SLABCONV_PLANTED_KNOB")\n')
    assert any("SLABCONV_PLANTED_KNOB" in p and "regen/planted_env.py" in p
               for p in problems(copy))


def test_planted_variable_dropped_from_the_readme_fails(copy):
    r = copy / "README.md"
    r.write_text(r.read_text().replace("SLABCONV_WORKTREES", "SLABCONV_WORK_TREES"))
    assert any("SLABCONV_WORKTREES" in p for p in problems(copy))


def test_a_variable_only_tests_read_is_not_demanded(copy):
    f = copy / "tests" / "planted_env.py"
    f.parent.mkdir(exist_ok=True)
    f.write_text('import os\nX = os.environ.get("SLABCONV_TEST_PLANTED")\n')
    assert problems(copy) == problems(REPO)


def test_planted_undocumented_target_fails(copy):
    m = copy / "Makefile"
    m.write_text(m.read_text() + "\nplanted-target: ## a target the README does not name\n\t@true\n")
    assert "README.md: target `make planted-target` is not documented" in problems(copy)


@pytest.mark.parametrize("where", ["README.md", "docs/RULES.md", "boot/README.md"])
@pytest.mark.parametrize("line", [
    "In session 20 the figures changed.",
    "This was fixed for issue 27.",
    "See issue #12 for the history.",
    "A helper measured it.",
    "Measured before this change.",
    "The figures of this stop.",
    "Measured at load 10-18 on the shared machine.",
])
def test_planted_diary_words_fail(copy, where, line):
    d = copy / where
    d.write_text(d.read_text() + "\n" + line + "\n")
    found = problems(copy)
    assert any(p.startswith(where + ":") and line[:40] in p for p in found), found


def test_planted_measurement_without_a_date_fails(copy):
    m = copy / "docs" / "MEASUREMENTS.md"
    text = m.read_text().rstrip("\n") + "\n| | vm2 | cold | a step | 12 s | |\n"
    m.write_text(text)
    assert any("a row without a date" in p for p in problems(copy))


def test_planted_second_measurement_table_fails(copy):
    m = copy / "docs" / "MEASUREMENTS.md"
    m.write_text(m.read_text() + "\n| step | time |\n| --- | --- |\n| x | 1 s |\n")
    assert any("2 tables, not one" in p for p in problems(copy))


def test_planted_readme_figure_not_in_the_record_fails(copy):
    r = copy / "README.md"
    text = r.read_text()
    figure = re.search(r"\| (\d+ min \d+ s) \| 20\d\d-", text).group(1)   # the first dated one
    assert "99 min 58 s" not in (copy / "docs" / "MEASUREMENTS.md").read_text()
    r.write_text(text.replace(f"| {figure} |", "| 99 min 58 s |", 1))
    assert any("'99 min 58 s'" in p and "not in docs/MEASUREMENTS.md" in p
               for p in problems(copy))


def test_planted_readme_figure_with_another_date_fails(copy):
    r = copy / "README.md"
    r.write_text(r.read_text().replace("| 92 min 36 s | 2026-12-04 |", "| 92 min 36 s | 2026-12-05 |"))
    assert any("'92 min 36 s'" in p for p in problems(copy))


def test_planted_readme_figure_without_a_date_fails(copy):
    r = copy / "README.md"
    text = r.read_text()
    i = text.index("## Figures")
    j = text.index("| main job `make`, empty cache |", i)
    r.write_text(text[:j] + "| a planted step | 1 s | | |\n" + text[j:])
    assert any("a figure without a date" in p for p in problems(copy))
