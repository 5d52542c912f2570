"""The layers: each package imports only the packages below it, at module
level; ./slabconv works from any directory and prints its version."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# lowest first (docs/ARCHITECTURE.md, "Layers")
LAYERS = ["base", "fetch", "regen", "boot", "verify", "report", "cli"]


def violations(root: Path) -> list[str]:
    """Every import of a package at or above the importing package's layer
    (its own package excepted), and every import of the project's packages
    inside a function or class body."""
    rank = {p: i for i, p in enumerate(LAYERS)}
    found = []
    for pkg in LAYERS:
        for f in sorted((root / pkg).rglob("*.py")):
            tree = ast.parse(f.read_text(), str(f))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    mods = [pkg] if node.level else [node.module.split(".")[0]]
                elif isinstance(node, ast.Import):
                    mods = [a.name.split(".")[0] for a in node.names]
                else:
                    continue
                where = f"{f.relative_to(root)}:{node.lineno}"
                for m in mods:
                    if m in rank and m != pkg and rank[m] > rank[pkg]:
                        found.append(f"{where}: {pkg} imports {m}, a layer above it")
                if node.col_offset and any(m in rank for m in mods):
                    found.append(f"{where}: import of {', '.join(mods)} inside a function")
    return found


def test_no_import_runs_up_or_hides_in_a_function():
    assert violations(REPO) == []


def test_a_planted_upward_and_local_import_is_found(tmp_path):
    for pkg in LAYERS:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "regen" / "x.py").write_text("from verify import gates\n")
    (tmp_path / "verify" / "y.py").write_text("def f():\n    from regen import x\n")
    (tmp_path / "report" / "z.py").write_text("from . import w\nfrom regen import x\n")
    assert violations(tmp_path) == [
        "regen/x.py:1: regen imports verify, a layer above it",
        "verify/y.py:2: import of regen inside a function",
    ]


def test_every_module_imports_alone():
    """Each module imports in a fresh interpreter: no circle is hidden by
    the order in which the others happened to be imported."""
    mods = [".".join(f.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            for pkg in LAYERS for f in sorted((REPO / pkg).rglob("*.py"))
            if f.name != "__main__.py"]
    code = ("import importlib, sys\nbad = []\n"
            f"for m in {mods!r}:\n"
            "    for k in [k for k in sys.modules if k.split('.')[0] in "
            f"{set(LAYERS)!r}]:\n"
            "        del sys.modules[k]\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except Exception as e:\n        bad.append(f'{m}: {e!r}')\n"
            "print('\\n'.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_launcher_from_another_directory(tmp_path):
    r = subprocess.run([str(REPO / "slabconv"), "--version"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith("slabconv ") and "(cocci/ " in line, line
    r = subprocess.run([str(REPO / "slabconv"), "regen", "--help"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "usage: slabconv regen" in r.stdout


def help_gaps(ap) -> list[str]:
    """Every subcommand of `ap` whose --help lacks a description, an example
    (`example:` then `  slabconv <name>`) or the exit codes."""
    import argparse
    from base.cliutil import EXIT_CODES
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    gaps = []
    for name, p in sub.choices.items():
        text = p.format_help()
        desc = (p.description or "").strip()
        if not desc or desc.splitlines()[0] not in text:
            gaps.append(f"{name}: no description")
        if f"example:\n  slabconv {name}" not in text:
            gaps.append(f"{name}: no example")
        if EXIT_CODES not in text:
            gaps.append(f"{name}: no exit codes")
    return gaps


def test_every_subcommand_says_what_it_does_with_an_example_and_the_exit_codes():
    import argparse
    from base.cliutil import add_command
    from cli import main
    ap = main.build_parser()
    assert help_gaps(ap) == []
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    assert {"fetch", "regen", "verify", "boot", "all", "bench", "layout", "checkpatch",
            "residue", "reference", "review", "mail", "range-diff", "attribute"} <= set(sub.choices)
    # planted: a subcommand without them, and one with all three
    sub.add_parser("bare", help="x")
    add_command(sub, "good", "x", "Does x.", "slabconv good --y")
    assert help_gaps(ap) == ["bare: no description", "bare: no example", "bare: no exit codes"]
