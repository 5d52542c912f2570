"""The suite fails where a tool is missing; it never skips a check.

A check skipped when its tool is missing passes on a machine that cannot
run it.  tests/test_fetch.py needs dpkg-deb (it builds fake .deb files):
without it its tests must error, naming the package, not skip.  No test
module skips or expects a failure on its own (pytest.skip, skipif,
importorskip, xfail); a test that is skipped or xfails anyway fails the run
(tests/conftest.py), and a parametrize over an empty list (a glob that
matched nothing) is a collection error (pytest.ini)."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _environ() -> dict:
    """This process's environment for the pytest runs the tests start,
    without the options a user's PYTEST_ADDOPTS (or PYTEST_PLUGINS) would
    add to them: what they print is what these tests read."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}


def test_fetch_tests_fail_without_dpkg_deb(tmp_path):
    empty = tmp_path / "bin"            # a PATH without dpkg-deb (nor anything else)
    empty.mkdir()
    cp = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "tests/test_fetch.py", "-k", "test_debian_version_order and 259"],
                        cwd=REPO, env=dict(_environ(), PATH=str(empty)),
                        capture_output=True, text=True)
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0, out
    assert re.search(r"\b1 error\b", out) and "skipped" not in out, out
    assert "'dpkg-deb' not found; install the Debian package 'dpkg'" in out, out


SKIPS = re.compile(r"\bpytest\.(skip\b|mark\.skip|importorskip|xfail\b|mark\.xfail)")


@pytest.mark.parametrize("line", ["pytest.skip('x')", "@pytest.mark.skipif(True, reason='x')",
                                  "pytest.importorskip('x')", "pytest.xfail('x')",
                                  "@pytest.mark.xfail(reason='x')", "@pytest.mark.skip"])
def test_the_scan_sees_every_way_to_skip(line):
    assert SKIPS.search(line)


def test_no_test_module_skips():
    skips = []
    for f in sorted((REPO / "tests").glob("*.py")):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if SKIPS.search(line) and \
                    f.name != Path(__file__).name:
                skips.append(f"{f.name}:{n}: {line.strip()}")
    assert not skips, "\n".join(skips)


def _run_pytest(tmp_path, code: str) -> str:
    """A test file of `code` run by pytest with the suite's pytest.ini and
    tests/conftest.py (as a plugin); its output, and it must fail."""
    (tmp_path / "test_planted.py").write_text(textwrap.dedent(code))
    cp = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                         "-c", str(REPO / "pytest.ini"), "--rootdir", str(tmp_path),
                         "-p", "tests.conftest", str(tmp_path / "test_planted.py")],
                        cwd=REPO, env=dict(_environ(), PYTHONPATH=str(REPO)),
                        capture_output=True, text=True)
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0, out
    return out


def test_a_parametrize_over_an_empty_list_fails(tmp_path, request):
    assert request.config.getini("empty_parameter_set_mark") == "fail_at_collect"
    out = _run_pytest(tmp_path, """
        from pathlib import Path
        import pytest
        @pytest.mark.parametrize("case", sorted(Path("/nonexistent").glob("*.c")))
        def test_case(case):
            pass
    """)
    assert "Empty parameter set" in out and "1 error" in out, out


@pytest.mark.parametrize("how", ["pytest.skip('no tool')", "pytest.xfail('known')",
                                 "pytest.importorskip('no_such_module_here')"])
def test_a_test_that_skips_or_xfails_at_run_time_fails_the_run(tmp_path, how):
    out = _run_pytest(tmp_path, f"""
        import pytest
        def test_passes():
            pass
        def test_does_not_run():
            {how}
    """)
    assert "tests that did not run (the run fails)" in out, out
    assert "test_planted.py::test_does_not_run" in out, out


def test_a_declared_xfail_fails_the_run_even_when_it_passes(tmp_path):
    out = _run_pytest(tmp_path, """
        import pytest
        @pytest.mark.xfail(reason="known")
        def test_x():
            pass
    """)
    assert "XPASSED test_planted.py::test_x" in out, out


# an upper bound on how long something took: fails falsely on a loaded
# machine; time is `make bench`'s (a lower bound, "killed at its timeout,
# not before", is behaviour and stays)
TIME_LIMIT = re.compile(r"^\s*assert\b.*(?:monotonic\(\)|\bseconds\b|\belapsed\b|\bwall\b)[^<]*<(?!=)\s*[\d.]")


def time_limits(files) -> list[str]:
    return [f"{f.name}:{n}: {line.strip()}" for f in files
            for n, line in enumerate(f.read_text().splitlines(), 1) if TIME_LIMIT.search(line)]


def test_no_test_asserts_a_time_limit():
    assert not time_limits(sorted((REPO / "tests").glob("*.py"))), \
        "\n".join(time_limits(sorted((REPO / "tests").glob("*.py"))))


@pytest.mark.parametrize("line,limit", [
    ("    assert time.monotonic() - t0 < 0.5", True),
    ("    assert 10 <= r.seconds < 25", True),
    ("    assert net.forbidden() and seconds < 5", True),
    ("    assert 5.5 <= m2.seconds < 12, m2.seconds", True),
    ("    assert r.seconds >= 10           # the guest had its whole timeout", False),
    ("    assert len(cp.stdout.splitlines()) < 25", False),
])
def test_the_time_limit_scan(tmp_path, line, limit):
    f = tmp_path / "test_x.py"
    f.write_text(line + "\n")
    assert bool(time_limits([f])) is limit


# --- stand-ins (tests/conftest.py STAND_INS) ---------------------------------

def test_every_test_variable_is_a_listed_stand_in():
    from conftest import STAND_INS
    read = set()
    for f in sorted((REPO / "tests").glob("*.py")):
        if f.name not in ("test_docs.py", Path(__file__).name):   # planted names there
            read |= set(re.findall(r"\bSLABCONV_TEST_[A-Z0-9_]+", f.read_text()))
    assert read and read <= set(STAND_INS), sorted(read - set(STAND_INS))


def _run_with(tmp_path, **env) -> subprocess.CompletedProcess:
    (tmp_path / "test_planted.py").write_text("def test_passes():\n    pass\n")
    clean = {k: v for k, v in _environ().items() if not k.startswith("SLABCONV_TEST_")
             and k != "CI"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(REPO / "pytest.ini"), "--rootdir", str(tmp_path),
                           "-p", "tests.conftest", str(tmp_path / "test_planted.py")],
                          cwd=REPO, env=dict(clean, PYTHONPATH=str(REPO), **env),
                          capture_output=True, text=True)


@pytest.mark.parametrize("var", ["SLABCONV_TEST_IOMMU_TREE", "SLABCONV_TEST_BZIMAGE",
                                 "SLABCONV_TEST_SRC", "SLABCONV_TEST_SERIES_REPO"])
def test_a_stand_in_is_named_in_the_closing_lines_and_fails_ci(tmp_path, var):
    cp = _run_with(tmp_path, **{var: "/planted/stand-in"})
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, out
    tail = out.splitlines()[-6:]
    assert any("stand-ins: this run did not test the suite's own components" in l for l in tail), out
    assert any(l.startswith(f"{var}=/planted/stand-in: ") for l in tail), out
    cp = _run_with(tmp_path, CI="true", **{var: "/planted/stand-in"})
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0 and "CI=true with stand-ins set" in out and var in out, out
    cp = _run_with(tmp_path, CI="true")
    assert cp.returncode == 0 and "stand-in" not in cp.stdout + cp.stderr


def _ci_run(tmp_path, **env) -> tuple[subprocess.CompletedProcess, bool]:
    """.ci/run with a `make` that only records that it ran."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    ran = tmp_path / "make-ran"
    ran.unlink(missing_ok=True)
    (bin_dir / "make").write_text(f"#!/bin/sh\necho \"$@ CI=$CI\" > {ran}\n")
    (bin_dir / "make").chmod(0o755)
    clean = {k: v for k, v in _environ().items() if not k.startswith("SLABCONV_TEST_")}
    cp = subprocess.run(["bash", str(REPO / ".ci" / "run")], capture_output=True, text=True,
                        env=dict(clean, PATH=f"{bin_dir}:{os.environ['PATH']}", **env))
    return cp, ran.is_file() and ran.read_text()


def test_ci_refuses_to_run_with_a_stand_in(tmp_path):
    cp, ran = _ci_run(tmp_path, SLABCONV_TEST_SRC="/planted/tree")
    assert cp.returncode == 1 and not ran, cp.stderr
    assert "SLABCONV_TEST_SRC=/planted/tree" in cp.stderr
    cp, ran = _ci_run(tmp_path)
    assert cp.returncode == 0 and ran == "test CI=true\n", (cp.stderr, ran)


# --- the checkout (tests/conftest.py: the session's checkout guard) -----------

def _checkout_copy(tmp_path) -> Path:
    """A clone of the project with this checkout's pytest.ini and
    tests/conftest.py: a planted write goes there, not into this checkout."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(REPO), str(clone)], check=True)
    for f in ("pytest.ini", "tests/conftest.py"):
        (clone / f).write_bytes((REPO / f).read_bytes())
    subprocess.run(["git", "-C", str(clone), "commit", "-q", "-a", "--allow-empty",
                    "-m", "this checkout's conftest"], check=True,
                   env=dict(_environ(), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))
    return clone


def _run_in(clone: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_planted.py").write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(clone / "pytest.ini"), "--rootdir", str(tmp_path),
                           "-p", "tests.conftest", str(tmp_path / "test_planted.py")],
                          cwd=clone, env=dict(_environ(), PYTHONPATH=str(clone)),
                          capture_output=True, text=True)


@pytest.mark.parametrize("how", ["kept", "removed again"])
def test_a_test_that_writes_into_the_checkout_fails_the_run(tmp_path, how):
    clone = _checkout_copy(tmp_path)
    cp = _run_in(clone, tmp_path, f"""
        from pathlib import Path
        def test_writes():
            p = Path({str(clone / "cocci" / ".planted-write")!r})
            p.write_text("x")
            {"pass" if how == "kept" else "p.unlink()"}
    """)
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0 and "the run changed the checkout" in out, out
    assert ("cocci/.planted-write" if how == "kept" else "cocci/ (a file made or removed in it)") \
        in out, out


def test_the_checkout_guard_passes_a_run_that_writes_to_its_temporary_directory(tmp_path):
    clone = _checkout_copy(tmp_path)
    cp = _run_in(clone, tmp_path, """
        def test_writes(tmp_path):
            (tmp_path / "x").write_text("x")
    """)
    assert cp.returncode == 0 and "changed the checkout" not in cp.stdout, cp.stdout + cp.stderr
