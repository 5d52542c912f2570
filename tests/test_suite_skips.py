"""The suite fails where a tool is missing; it never skips a check.

A check skipped when its tool is missing passes on a machine that cannot
run it.  tests/test_fetch.py needs dpkg-deb (it builds fake .deb files):
without it its tests must error, naming the package, not skip.  And no test
module skips on its own (pytest.skip, skipif, importorskip)."""
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_fetch_tests_fail_without_dpkg_deb(tmp_path):
    empty = tmp_path / "bin"            # a PATH without dpkg-deb (nor anything else)
    empty.mkdir()
    cp = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "tests/test_fetch.py", "-k", "test_debian_version_order and 259"],
                        cwd=REPO, env=dict(os.environ, PATH=str(empty)),
                        capture_output=True, text=True)
    out = cp.stdout + cp.stderr
    assert cp.returncode != 0, out
    assert re.search(r"\b1 error\b", out) and "skipped" not in out, out
    assert "'dpkg-deb' not found; install the Debian package 'dpkg'" in out, out


def test_no_test_module_skips():
    skips = []
    for f in sorted((REPO / "tests").glob("*.py")):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"\bpytest\.(skip\b|mark\.skip|importorskip)", line) and \
                    f.name != Path(__file__).name:
                skips.append(f"{f.name}:{n}: {line.strip()}")
    assert not skips, "\n".join(skips)
