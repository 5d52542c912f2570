"""Each make target installs its own group of Debian packages only
(scripts/install-deps.sh): regen and review install neither QEMU nor
chromium; `make test` (CI: .ci/run on a fresh machine) installs every
package any group has; a farm (DISTCC=) adds distcc to the build targets.
`make -n` prints the commands without running them."""
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "install-deps.sh"
GROUPS = ("core", "build", "boot", "distcc", "browser", "test", "all")


def listed(*groups) -> set:
    cp = subprocess.run(["sh", str(SCRIPT), "--list", *groups], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    return set(cp.stdout.split())


def make_n(target: str, *args) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DISTCC_HOSTS", "MAKEFLAGS")}
    cp = subprocess.run(["make", "-n", "-C", str(REPO), target, *args], env=env,
                        capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout


def installed_by(target: str, *args) -> set:
    """The packages `make TARGET` would make sure of."""
    out = make_n(target, *args)
    calls = [line.split("install-deps.sh", 1)[1].split() for line in out.splitlines()
             if "install-deps.sh" in line]
    assert calls, f"make {target} does not run scripts/install-deps.sh:\n{out}"
    return set().union(*(listed(*c) for c in calls))


def help_targets() -> list:
    text = (REPO / "Makefile").read_text()
    return [t for t in re.findall(r"^([a-z-]+):.*## ", text, re.M)
            if t != "help" and not t.startswith("deps")]


@pytest.mark.parametrize("target", ["regen", "review", "mail", "range-diff", "attribute",
                                    "checkpatch", "residue", "fetch"])
def test_source_only_targets_install_no_qemu_compiler_or_browser(target):
    pkgs = installed_by(target)
    assert "coccinelle" in pkgs and "git" in pkgs
    assert not pkgs & {"qemu-system-x86", "chromium", "busybox-static", "gcc", "distcc"}, pkgs


@pytest.mark.parametrize("target", ["verify", "boot", "reference", "bench", "all"])
def test_build_and_boot_targets(target):
    pkgs = installed_by(target)
    assert {"gcc", "ccache", "sparse", "qemu-system-x86", "busybox-static"} <= pkgs
    assert not pkgs & {"chromium", "distcc"}, pkgs
    assert "distcc" in installed_by(target, "DISTCC=build1/8,build2/8")


def test_layout_builds_but_does_not_boot():
    pkgs = installed_by("layout")
    assert "gcc" in pkgs and "qemu-system-x86" not in pkgs


@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_the_suite_installs_every_group(target):
    every = listed(*GROUPS)
    assert installed_by(target) == every
    assert {"distcc", "chromium", "python3-pil", "python3-pytest", "qemu-system-x86"} <= every


def test_every_target_installs_something_and_groups_nest():
    for t in help_targets():
        installed_by(t)
    assert listed("core") < listed("build") < listed("boot") < listed("test")
    assert listed("all") == listed("test")
    cp = subprocess.run(["sh", str(SCRIPT), "--list", "nope"], capture_output=True, text=True)
    assert cp.returncode == 2 and "unknown group" in cp.stderr


def make_var(var: str, *args) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DISTCC_HOSTS", "MAKEFLAGS")}
    cp = subprocess.run(["make", "-s", "-C", str(REPO), "--eval",
                         f"print-var: ; @echo \"[$${var}]\"", "print-var", *args],
                        env=env, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout.strip()


def test_distcc_variable_sets_the_farm_and_leaves_jobs_to_it():
    assert make_var("DISTCC_HOSTS", "DISTCC=b1/8,b2:3633/4") == "[b1/8 b2:3633/4]"
    assert make_var("SLABCONV_JOBS", "DISTCC=b1/8") == "[]"          # kbuild: distcc -j
    assert make_var("SLABCONV_JOBS", "DISTCC=b1/8", "JOBS=12") == "[12]"
    assert make_var("SLABCONV_JOBS") == f"[{len(os.sched_getaffinity(0))}]"        # local: nproc
    assert make_var("DISTCC_HOSTS") == "[]"


def test_every_arch_of_the_table_has_its_compiler_and_qemu_in_the_groups():
    """The cross compiler of each architecture verify/configs.toml builds is
    in `build`, its QEMU in `boot` (base/arches.py names them); planted: an
    architecture whose packages the groups lack is named."""
    from base import arches
    from verify import configtable

    def gaps(archs) -> list:
        return [f"{a.name}: {g} lacks {p}" for a in archs for g in ("build", "boot")
                for p in a.packages(g) if p not in listed(g)]

    used = {c.arch for c in configtable.table().configs.values()}
    assert "arm64" in used
    assert gaps(arches.get(a) for a in sorted(used)) == []
    assert {"gcc-aarch64-linux-gnu", "qemu-system-arm"} <= installed_by("boot")
    import dataclasses
    fake = dataclasses.replace(arches.get("arm64"), name="riscv64",
                               toolchain_package="gcc-riscv64-linux-gnu",
                               qemu_package="qemu-system-misc")
    assert gaps([fake]) == ["riscv64: build lacks gcc-riscv64-linux-gnu",
                            "riscv64: boot lacks qemu-system-misc"]
