"""Helpers only the tests use: one guest booted alone (the product boots
through the boot matrix, cli/boots.py) and a layout build copied for a
planted-defect check."""
from __future__ import annotations

import subprocess
from pathlib import Path

import boot
from base import paths
from base.log import SlabconvError
from cli import boots
from verify import layout, tree as T


def boot_config(vr, run_name: str, cmdline_extra: str = "", variant: str = ""):
    """Boot the patched kernel of one verified configuration (vr: a
    verify.VerifyResult) with the guest tests, in one of its variants, in
    cache/boot/runs/<run_name>/; the BootResult."""
    if variant not in boots.boot_variants(vr.config):
        raise SlabconvError(f"boot: configuration {vr.config} has no variant {variant!r}",
                            exit_code=2)
    res = boot.run(vr.patched.image, vr.patched_out, vr.patched_src,
                   paths.cache_dir("boot", "runs", run_name),
                   **boots.boot_args(vr.config, cmdline_extra),
                   **boots.variant_options(vr.config, variant))
    print(f"[{boots.boot_name(vr.config, variant)}] " + res.summary())
    return res


def seed_layout(from_root, to_root) -> Path:
    """to_root/layout = a copy of from_root/layout's builds (the source a
    hard-link snapshot, each O= dir a real copy with its absolute paths
    rewritten): a check of another tree under to_root then only rebuilds
    what differs."""
    src = Path(from_root).resolve() / layout.DIR_NAME / "tree"
    dst_work = Path(to_root).resolve() / layout.DIR_NAME
    dst = dst_work / "tree"
    if not (src / "Makefile").is_file():
        raise SlabconvError(f"no layout build in {from_root} to copy", exit_code=2)
    odirs = layout._o_dirs(src)
    T.snapshot(src, dst, skip=odirs)
    if (src.parent / layout.STAMP).is_file():
        (dst_work / layout.STAMP).write_text((src.parent / layout.STAMP).read_text())
    for o in odirs:
        subprocess.run(["cp", "-a", "--reflink=auto", str(src / o), str(dst / o)], check=True)
        T.relocate(dst / o, src, dst)
    return dst


def table_with(tmp_path, monkeypatch, extra: str) -> Path:
    """verify/configs.toml copied into tmp_path with `extra` (TOML) appended,
    its fragments beside it as in verify/; every consumer reads the copy
    until the test ends."""
    from verify import configtable
    d = Path(tmp_path) / "configtable"
    d.mkdir()
    (d / "configs").symlink_to(configtable.TABLE_FILE.parent / "configs")
    f = d / "configs.toml"
    f.write_text(configtable.TABLE_FILE.read_text() + "\n" + extra)
    monkeypatch.setattr(configtable, "TABLE_FILE", f)
    return f


def assert_fault_injection_passed(br, config: str) -> None:
    """Init test 10 ran its cases with failures injected and passed, not
    skipped (boot/README.md, "Fault injection"): the group, the module's
    document, the injected-failure counters and the caches afterwards PASS;
    every page-allocation case passes; the failslab cases pass where the
    allocator has should_failslab() (SLAB, SLUB), SKIP under SLOB."""
    from boot.ktap import Status
    fi = {t.name: t for t in br.results.root.subtests}["fault_injection"]
    assert fi.status is Status.PASS, (fi.status, fi.directive)
    parts = {t.name: t for t in fi.subtests}
    for name in ("slabconv_faultinj", "injected_failures", "caches_after"):
        assert parts[name].status is Status.PASS, (name, parts[name].status, parts[name].directive)
    cases = {t.name: t for t in parts["slabconv_faultinj"].subtests}
    for size in (64, 512, 1024, 4096, 16384):
        for kind in ("page_fail", "page_fail_atomic"):
            assert cases[f"{kind}_{size}"].status is Status.PASS, (kind, size)
    failslab = Status.SKIP if config == "slob" else Status.PASS
    for size in (64, 4096):
        for kind in ("failslab", "failslab_atomic"):
            assert cases[f"{kind}_{size}"].status is failslab, (kind, size)


def git(repo, *args) -> str:
    """git -C repo ARGS as a fixed test identity, with no user or system
    configuration; its stdout (a failure raises)."""
    import os
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@l", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@l", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ["PATH"]}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout
