"""The 5.10 tree's own scripts/checkpatch.pl through verify/checkpatch.py:
a planted checkpatch ERROR fails the gate and names its patch, a clean
patch passes, a finding on a line the patch only carries over from 5.10 is
marked inherited, and a patch file that git tracks (the committed series)
is checked as a patch.  Needs the fetched linux-source-5.10 (marked network,
as the other tests on the packaged tree); the whole series is marked slow.
Nothing skips: a missing perl or tree is a failure."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slabconv import paths
from verify import checkpatch as C

pytestmark = pytest.mark.network

REPO = Path(__file__).resolve().parent.parent
SERIES = paths.GENERATED / "5.10"
CLEAN_SRC = "0008-mm-slub-Convert-process_slab-to-take-a-struct-slab.patch"
LINE = "+\tvoid *addr = slab_address(slab);\n"


@pytest.fixture(scope="module")
def tree():
    env = os.environ.get("SLABCONV_TEST_SRC")
    if env:
        return Path(env).resolve()
    from slabconv.source import resolve
    return resolve(paths.DEFAULT_KERNEL, None).tree


def _without_trailers(text: str) -> str:
    """The seed author's Originally-by: is a non-standard signature to
    checkpatch (a WARNING); without it this patch is clean."""
    return "".join(ln for ln in text.splitlines(keepends=True)
                   if not ln.startswith("Originally-by:"))


@pytest.fixture
def patches(tmp_path):
    text = _without_trailers((SERIES / CLEAN_SRC).read_text())
    assert LINE in text, "patch 0008 changed: update the planted defect"
    clean = tmp_path / "0001-clean.patch"
    clean.write_text(text)
    planted = tmp_path / "0002-planted.patch"
    planted.write_text(text.replace(LINE, LINE[:-1] + " \n", 1))
    return clean, planted


def test_planted_trailing_whitespace_fails_and_names_the_patch(tree, patches):
    clean, planted = patches
    r = C.check(tree, [clean, planted])
    assert not r.ok
    assert [p.patch for p in r.failed] == ["0002-planted.patch"]
    ok, bad = r.patches
    assert ok.findings == [] and ok.totals["errors"] == 0
    assert [(f.level, f.type, f.file) for f in bad.findings] == [
        ("ERROR", "TRAILING_WHITESPACE", "mm/slub.c")]
    f = bad.errors[0]
    assert f.excerpt[0] == "+^Ivoid *addr = slab_address(slab); $"   # checkpatch shows tabs and ends
    assert f.inherited is None
    assert "0002-planted.patch" in r.problems[0] and "TRAILING_WHITESPACE" in r.problems[0]
    assert "0001-clean.patch: clean" in r.summary()


def test_cli_exit_codes_and_json(tree, patches, tmp_path):
    clean, planted = patches
    out = tmp_path / "cp.json"
    cp = subprocess.run([sys.executable, "-m", "verify.checkpatch", "--tree", str(tree),
                         str(clean), str(planted), "--json", str(out)], cwd=REPO,
                        capture_output=True, text=True)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "0002-planted.patch: 1 error(s)" in cp.stdout
    assert "ERROR:TRAILING_WHITESPACE mm/slub.c:" in cp.stdout
    d = json.loads(out.read_text())
    assert d["ok"] is False and d["failed"] == ["0002-planted.patch"]
    cp = subprocess.run([sys.executable, "-m", "verify.checkpatch", "--tree", str(tree),
                         str(clean)], cwd=REPO, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_a_tracked_patch_is_checked_as_a_patch(tree):
    """generated-patches/ is tracked by the repository's git: run from there,
    checkpatch would check the .patch as a source file (every line "added":
    trailing whitespace on each blank context line)."""
    r = C.check(tree, [SERIES / CLEAN_SRC])
    p = r.patches[0]
    assert not [f for f in p.findings if f.type == "TRAILING_WHITESPACE"]
    assert [(f.level, f.type, f.message) for f in p.findings] == [
        ("WARNING", "BAD_SIGN_OFF", "Non-standard signature: Originally-by:")]
    assert all(not f.file for f in p.findings)        # all in the commit message


def test_the_generated_with_trailer_is_not_a_signature(tree, tmp_path):
    """A trailer named `...-by:` without an email address is a BAD_SIGN_OFF
    ERROR; the generator's Generated-with: trailer (folded to 75 columns)
    is neither that nor a long commit log line."""
    text = (SERIES / CLEAN_SRC).read_text()
    assert "\nGenerated-with: slabconv (" in text
    assert all(len(ln) <= 75 for ln in text.split("\n---\n")[0].splitlines()[4:])
    old = tmp_path / "0001-old-trailer.patch"
    old.write_text(text.replace("Generated-with: slabconv (", "Generated-by: slabconv (", 1))
    r = C.check(tree, [old, SERIES / CLEAN_SRC])
    assert [(f.type, f.message.split(":")[0]) for f in r.patches[0].errors] == [
        ("BAD_SIGN_OFF", "Unrecognized email address")]
    assert r.patches[1].errors == []


def test_a_complaint_carried_over_from_5_10_is_inherited(tree, tmp_path):
    """mm/slub.c 5.10: `slab_free(..., df.cnt,_RET_IP_);` (no space after the
    comma).  The generated patch that changes that call gives it the space
    (regen/tidy.py); planted back as 5.10 had it, the complaint is found
    carried over."""
    hits = [p for p in sorted(SERIES.glob("0*.patch"))
            if "+\t\t\t  df.cnt, _RET_IP_);" in p.read_text()]
    assert hits, "no patch changes the df.cnt, _RET_IP_ call any more: update the test"
    p = tmp_path / hits[0].name
    p.write_text(_without_trailers(hits[0].read_text()).replace(
        "+\t\t\t  df.cnt, _RET_IP_);", "+\t\t\t  df.cnt,_RET_IP_);"))
    r = C.check(tree, [p])
    sp = [f for f in r.patches[0].findings if f.type == "SPACING"]
    assert sp and sp[0].inherited, r.summary()
    assert "df.cnt,_RET_IP_" in sp[0].inherited and sp[0].inherited.startswith("mm/slub.c:")


@pytest.mark.slow
def test_the_committed_series_is_checked_patch_by_patch(tree):
    """Every patch is checked and its findings parsed (the counts agree with
    checkpatch's own totals).  Whether the series passes is the gate's
    business (python3 -m slabconv checkpatch), not this test's."""
    ps = C.series_patches(SERIES)
    r = C.check(tree, ps)
    assert [p.patch for p in r.patches] == [p.name for p in ps]
    for p in r.patches:
        assert p.totals["errors"] == len(p.errors) and p.totals["warnings"] == len(p.warnings)
        assert p.subject


def test_checkpatch_writes_nothing_into_the_tree(tree, tmp_path, monkeypatch):
    """Outside a git repository checkpatch.pl caches the CamelCase names of
    include/ in its current directory (.checkpatch-camelcase.date.*): the run
    must not happen in the kernel tree, which stays pristine."""
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    fake = tmp_path / "linux"
    for d in ("Documentation", "arch", "include", "drivers", "fs", "init", "ipc",
              "kernel", "lib"):
        (fake / d).mkdir(parents=True)
    for f in ("COPYING", "CREDITS", "Kbuild", "MAINTAINERS", "Makefile", "README"):
        (fake / f).write_text("")
    (fake / "scripts").symlink_to(tree / "scripts")
    text = _without_trailers((SERIES / CLEAN_SRC).read_text()).replace(
        LINE, "+\tint camelCaseName = 0;\n" + LINE, 1)
    p = tmp_path / "0001-camel.patch"
    p.write_text(text)
    r = C.check(fake, [p], strict=True)
    assert any(f.type == "CAMELCASE" for f in r.patches[0].findings), r.summary()
    assert not list(fake.glob(".checkpatch-camelcase*"))
    assert list((tmp_path / "cache" / "checkpatch").glob(".checkpatch-camelcase*"))
