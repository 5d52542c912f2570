"""The distcc plumbing of verify/kbuild.py without a farm: the environment
of a farm build (ccache in front, distcc as its prefix), -j sized to the
farm, and verify/distccwrap.sh, which compiles again locally whatever a
remote compile said something about (run here with a fake distcc)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from verify import kbuild

REPO = Path(__file__).resolve().parent.parent


def test_local_build_env_has_no_farm(monkeypatch, tmp_path):
    monkeypatch.delenv("DISTCC_HOSTS", raising=False)
    monkeypatch.delenv("CCACHE_PREFIX", raising=False)
    env = kbuild.build_env(tmp_path, tmp_path / "o")
    assert "CCACHE_PREFIX" not in env and "DISTCC_HOSTS" not in env
    assert kbuild.require_farm() == ""


def test_farm_build_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DISTCC_HOSTS", "  b1/8\n b2:3633/4 ")
    env = kbuild.build_env(tmp_path, tmp_path / "o")
    assert env["DISTCC_HOSTS"] == "b1/8 b2:3633/4"
    prefix = Path(env["CCACHE_PREFIX"])
    assert prefix.read_bytes() == kbuild.DISTCCWRAP.read_bytes()
    assert os.access(prefix, os.X_OK)
    assert env["DISTCC_LOG"] == str(tmp_path / "o" / kbuild.DISTCC_LOG_NAME)
    assert env["DISTCC_SKIP_LOCAL_RETRY"] == "1"
    assert env["CCACHE_DEPEND"] == "1"
    monkeypatch.setenv("CCACHE_NODEPEND", "1")
    assert "CCACHE_DEPEND" not in kbuild.build_env(tmp_path, tmp_path / "o")
    # CC= (recorded in every .cmd file and in the build keys) is a local build's
    monkeypatch.delenv("DISTCC_HOSTS")
    assert kbuild.compiler(True) == kbuild.compiler(True)
    assert "distcc" not in kbuild.compiler(True)


def test_jobs_sized_to_the_farm(monkeypatch):
    assert shutil.which("distcc"), "install the Debian package 'distcc' (make deps-test)"
    monkeypatch.setenv("SLABCONV_JOBS", "")
    monkeypatch.setenv("DISTCC_HOSTS", "b1/8 b2:3633/4")
    assert kbuild.build_jobs(2) == 12                      # distcc -j: the hosts' slots
    assert kbuild.build_jobs(2, farm=False) == 2
    monkeypatch.setenv("DISTCC_HOSTS", "b1/1")
    assert kbuild.build_jobs(2) == max(2, os.cpu_count())  # never below this machine
    monkeypatch.setenv("SLABCONV_JOBS", "5")                # JOBS= wins
    assert kbuild.build_jobs(2) == 5


def test_farm_is_checked_once_and_fails_naming_the_host(monkeypatch):
    monkeypatch.setattr(kbuild, "_probed", {"h1/4": "distcc host h1/4 could not compile"})
    monkeypatch.setenv("DISTCC_HOSTS", "h1/4")
    with pytest.raises(kbuild.SlabconvError) as e:
        kbuild.require_farm()
    assert e.value.exit_code == 3 and "h1/4" in str(e.value)


def test_host_specs_and_log_counts(tmp_path):
    assert kbuild._host_specs("--randomize a/4 b:1/2,lzo +zeroconf") == ["a/4", "b:1/2,lzo"]
    (tmp_path / kbuild.DISTCC_LOG_NAME).write_text(
        "distcc[1] compile ../mm/slub.c on 10.0.0.2/4 completed ok\n"
        "distcc[2] (dcc_build_somewhere) Warning: failed to distribute ../mm/util.c to "
        "10.0.0.3/4, running locally instead\n"
        "slabconv: diagnostics, compiled locally: mm/util.o (remote exit 0)\n")
    assert kbuild.distcc_counts(tmp_path) == {"local_fallbacks": 1, "local_recompiles": 1}


def _fake_distcc(bindir: Path, stderr: str, rc: int = 0) -> None:
    bindir.mkdir(exist_ok=True)
    f = bindir / "distcc"
    f.write_text("#!/bin/sh\n"
                 f"printf '%s' '{stderr}' >&2\n"
                 "echo remote >> \"$FAKE_LOG\"\n"
                 f"exit {rc}\n")
    f.chmod(0o755)


def _run_wrap(tmp_path, stderr: str, rc: int = 0):
    _fake_distcc(tmp_path / "bin", stderr, rc)
    log = tmp_path / "distcc.log"
    fake = tmp_path / "fake.log"
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}",
               DISTCC_LOG=str(log), FAKE_LOG=str(fake), TMPDIR=str(tmp_path))
    # the "compiler" the wrapper falls back to: prints its own diagnostic
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\necho 'x.c:1:5: warning: local [-Wlocal]' >&2\n"
                  "echo local >> \"$FAKE_LOG\"\nexit 0\n")
    cc.chmod(0o755)
    cp = subprocess.run(["sh", str(kbuild.DISTCCWRAP), str(cc), "-c", "x.c", "-o", "x.o"],
                        env=env, capture_output=True, text=True)
    leftovers = [p.name for p in tmp_path.glob("slabconv-distcc.*")]
    return (cp, fake.read_text().split(), log.read_text() if log.exists() else "",
            leftovers)


def test_wrapper_keeps_a_silent_remote_compile(tmp_path):
    cp, runs, log, left = _run_wrap(tmp_path, "")
    assert cp.returncode == 0 and cp.stderr == "" and runs == ["remote"] and log == ""
    assert not left


@pytest.mark.parametrize("stderr,rc", [("x.c:1:5: warning: this statement may fall through", 0),
                                       ("x.c:1:1: error: expected", 1)])
def test_wrapper_compiles_again_locally_what_the_remote_said_something_about(
        tmp_path, stderr, rc):
    cp, runs, log, left = _run_wrap(tmp_path, stderr, rc)
    assert runs == ["remote", "local"]
    assert cp.returncode == 0 and cp.stderr == "x.c:1:5: warning: local [-Wlocal]\n"
    assert log == f"slabconv: diagnostics, compiled locally: x.o (remote exit {rc})\n"
    assert not left


def _fake_remote_gcc(bindir: Path, ident: bytes, rc: int = 0) -> None:
    """A `distcc` whose "remote" gcc writes an object naming `ident`."""
    bindir.mkdir(exist_ok=True)
    f = bindir / "distcc"
    f.write_text("#!/bin/sh\nout=; prev=\nfor a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; "
                 "prev=$a; done\n"
                 f"[ {rc} -eq 0 ] || {{ echo 'cannot connect' >> \"$DISTCC_LOG\"; exit {rc}; }}\n"
                 f"printf '\\177ELF%s\\0' '{ident.decode()}' > \"$out\"\n")
    f.chmod(0o755)


@pytest.mark.parametrize("ident,rc,why", [
    (b"GCC: (Debian 11.3.0-5) 11.3.0", 0, "compiles with 'GCC: (Debian 11.3.0-5) 11.3.0'"),
    (b"", 110, "could not compile a probe"),
])
def test_a_host_with_another_gcc_or_down_stops_the_run(tmp_path, monkeypatch, ident, rc, why):
    _fake_remote_gcc(tmp_path / "bin", ident, rc)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(kbuild, "_probed", {})
    with pytest.raises(kbuild.SlabconvError) as e:
        kbuild.check_farm("good/4 other:3633/8")
    assert e.value.exit_code == 3 and why in str(e.value), str(e.value)
    assert str(e.value).startswith("distcc host good/4 ")          # the first host that fails
    with pytest.raises(kbuild.SlabconvError):       # remembered: not probed again
        kbuild.check_farm("good/4 other:3633/8")


def test_a_host_with_the_same_gcc_passes(tmp_path, monkeypatch):
    assert shutil.which("gcc"), "install the Debian package 'gcc'"
    c = tmp_path / "p.c"
    c.write_text("int p;\n")
    subprocess.run(["gcc", "-c", str(c), "-o", str(tmp_path / "p.o")], check=True)
    _fake_remote_gcc(tmp_path / "bin", kbuild._gcc_ident(tmp_path / "p.o").encode())
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(kbuild, "_probed", {})
    kbuild.check_farm("good/4 other:3633/8")
