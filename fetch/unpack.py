"""Pristine kernel trees in the cache: layout, completeness markers, atomic unpack.

    src/<version>/.lock                                     flock for get_tree
    src/<version>/<debver>/linux-source-<version>/          the pristine tree
    src/<version>/<debver>/linux-source-<version>/.slabconv-complete
    src/<version>/<debver>/.unpack-*/                       in-progress (temp) dirs

A tree is unpacked in a temp dir next to its final place, checked, given
the marker, made read-only and renamed into place, so a tree at the final
path without the marker can only be the leftover of an older, interrupted
scheme or of manual meddling, and is removed and redone.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from base import paths
from base.log import info, SlabconvError
from base.proc import require_tool, run
from .apt import FetchError
from .suites import package_name


MARKER = ".slabconv-complete"


# -- layout -----------------------------------------------------------------
def version_dir(version: str) -> Path:
    return paths.cache_dir("src", version)


def tree_path(version: str, deb_version: str) -> Path:
    return paths.cache_root() / "src" / version / deb_version / package_name(version)


def read_marker(tree: Path) -> dict[str, str] | None:
    try:
        text = (tree / MARKER).read_text()
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            fields[k.strip()] = v.strip()
    return fields


def is_complete(tree: Path, deb_version: str) -> bool:
    m = read_marker(tree)
    return bool(m) and m.get("deb_version") == deb_version and tree.is_dir()


def compare_versions(a: str, b: str) -> int:
    """<0, 0, >0 as `dpkg --compare-versions` orders two Debian versions (a
    dpkg run is about 2 ms: for the few trees of the cache, not for lists)."""
    for op, r in (("lt", -1), ("gt", 1)):
        if subprocess.run(["dpkg", "--compare-versions", a, op, b]).returncode == 0:
            return r
    return 0


version_key = functools.cmp_to_key(compare_versions)


def complete_trees(version: str) -> list[tuple[str, Path]]:
    """(deb_version, path) of every complete tree of version, oldest first."""
    base = paths.cache_root() / "src" / version
    found = []
    if base.is_dir():
        for d in base.iterdir():
            if d.name.startswith(".") or not d.is_dir():
                continue
            t = d / package_name(version)
            if is_complete(t, d.name):
                found.append((d.name, t))
    return sorted(found, key=lambda e: version_key(e[0]))


# -- read-only trees ----------------------------------------------------------
def _chmod(path: str, clear: int = 0, add: int = 0) -> None:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return
    mode = stat.S_IMODE(st.st_mode)
    new = (mode & ~clear) | add
    if new != mode:
        os.chmod(path, new)


def make_read_only(top: Path, *, include_top: bool = True) -> None:
    """chmod -R a-w (symlinks untouched)."""
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            _chmod(os.path.join(root, name), clear=0o222)
    if include_top:
        _chmod(str(top), clear=0o222)


def remove_tree(path: Path) -> None:
    """rm -rf that also works on read-only trees."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    _chmod(str(path), add=0o700)
    for root, dirs, _files in os.walk(path):
        for d in dirs:
            p = os.path.join(root, d)
            if not os.path.islink(p):
                _chmod(p, add=0o700)
    shutil.rmtree(path)


def discard_partial(version: str, deb_version: str) -> None:
    """Remove an unmarked tree and stale temp dirs (caller holds the version lock)."""
    tree = tree_path(version, deb_version)
    parent = tree.parent
    if os.path.lexists(tree) and not is_complete(tree, deb_version):
        info("fetch", f"removing incomplete tree {tree} (no {MARKER} marker)")
        remove_tree(tree)
    if parent.is_dir():
        for d in parent.glob(".unpack-*"):
            info("fetch", f"removing leftover {d}")
            remove_tree(d)


# -- checks -----------------------------------------------------------------
def makefile_version(makefile: Path) -> str | None:
    """"VERSION.PATCHLEVEL" from a kernel top Makefile."""
    try:
        text = makefile.read_text(errors="replace")
    except OSError:
        return None
    v = re.search(r"^VERSION\s*=\s*(\d+)\s*$", text, re.M)
    p = re.search(r"^PATCHLEVEL\s*=\s*(\d+)\s*$", text, re.M)
    return f"{v.group(1)}.{p.group(1)}" if v and p else None


def check_kernel_tree(tree: Path, version: str) -> None:
    got = makefile_version(tree / "Makefile")
    if got is None:
        raise FetchError(f"{tree}: no kernel Makefile with VERSION/PATCHLEVEL")
    if got != version:
        raise FetchError(f"{tree}: Makefile says {got}, wanted {version}")
    if not (tree / "mm" / "slub.c").is_file():
        raise FetchError(f"{tree}: mm/slub.c missing; not a complete kernel tree")


# -- unpack -----------------------------------------------------------------
def _run(cmd, *, what: str) -> None:
    try:
        run(cmd, what=what)
    except SlabconvError as e:
        if e.exit_code == 3:
            raise
        raise FetchError(f"unpacking failed: {e}") from None


# A kernel .deb unpacks to ~9x its size (5.10: 122 MB -> 1.1 GB); the
# extracted tarball sits next to the tree until the tree is complete.
SPACE_FACTOR = 11


def _check_space(where: Path, deb: Path) -> None:
    need = deb.stat().st_size * SPACE_FACTOR
    free = shutil.disk_usage(where).free
    if free < need:
        raise FetchError(f"not enough disk space in {where} to unpack {deb.name}: "
                         f"{free / 1e9:.1f} GB free, about {need / 1e9:.1f} GB needed "
                         f"(set SLABCONV_CACHE to a bigger disk)")


def unpack(deb: Path, version: str, deb_version: str, sha256: str) -> Path:
    """Unpack the kernel tarball inside deb into its final, read-only place.

    The caller holds the version lock and has called discard_partial().
    """
    dpkg_deb = require_tool("dpkg-deb", "dpkg")
    tar = require_tool("tar", "tar")
    require_tool("xz", "xz-utils")
    final = tree_path(version, deb_version)
    final.parent.mkdir(parents=True, exist_ok=True)
    _check_space(final.parent, deb)
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
    t0 = time.monotonic()
    try:
        debroot = tmp / "deb"
        _run([dpkg_deb, "-x", deb, debroot], what=f"dpkg-deb -x {deb.name}")
        tarball = debroot / "usr" / "src" / f"{package_name(version)}.tar.xz"
        if not tarball.is_file():
            raise FetchError(f"{deb} does not contain usr/src/{tarball.name}")
        out = tmp / "tree"
        out.mkdir()
        info("fetch", f"extracting {tarball.name} ({tarball.stat().st_size / 1e6:.0f} MB)")
        _run([tar, "-xf", tarball, "-C", out, "--no-same-owner"],
             what=f"tar -xf {tarball.name}")
        remove_tree(debroot)          # the tarball is not needed any more
        tops = [p for p in out.iterdir()]
        if len(tops) != 1 or not tops[0].is_dir():
            raise FetchError(f"{tarball.name} should hold one top directory, has "
                             f"{', '.join(p.name for p in tops) or 'nothing'}")
        src = tops[0]
        check_kernel_tree(src, version)
        (src / MARKER).write_text(
            f"package={package_name(version)}\n"
            f"deb_version={deb_version}\n"
            f"sha256={sha256}\n"
            f"deb={deb.name}\n"
            f"unpacked={time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n")
        # Read-only everywhere except the top dir: renaming a directory to a
        # new parent needs write access to it (for "..") unless we are root.
        make_read_only(src, include_top=False)
        os.rename(src, final)
        _chmod(str(final), clear=0o222)
    finally:
        remove_tree(tmp)
    info("fetch", f"unpacked {final} in {time.monotonic() - t0:.1f}s")
    return final
