"""Which kernel tree a run works on: a packaged one (fetched) or the user's."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import fetch
from base import paths
from base.log import SlabconvError
from regen.worktree import tree_id


@dataclass
class Source:
    tree: Path          # never modified
    version: str        # "5.10"
    source_id: str      # package and version, or a hash of a user tree
    packaged: bool


def kernel_version(tree: Path) -> str:
    mk = tree / "Makefile"
    try:
        text = mk.read_text(errors="replace")
    except OSError:
        raise SlabconvError(f"{tree} is not a kernel tree (no Makefile)", exit_code=2)
    v = re.search(r"^VERSION\s*=\s*(\d+)", text, re.M)
    p = re.search(r"^PATCHLEVEL\s*=\s*(\d+)", text, re.M)
    if not (v and p and (tree / "mm" / "slub.c").is_file()):
        raise SlabconvError(f"{tree} is not a kernel tree (no VERSION/PATCHLEVEL or mm/slub.c)", 2)
    return f"{v.group(1)}.{p.group(1)}"


def pinned_deb_version(version: str) -> str | None:
    """The package version the committed series was generated from, if any."""
    f = paths.GENERATED / version / "SOURCE"
    if f.is_file():
        m = re.search(r"^source: linux-source-\S+_(\S+)$", f.read_text(), re.M)
        if m:
            return m.group(1)
    return None


def committed_identity(out: Path) -> str | None:
    """The identity the series in `out` was made with (its SOURCE file), if
    `out` is a committed series of the repository: regenerating it keeps
    that identity, so a checkout stays clean whoever runs regen."""
    f = Path(out) / "SOURCE"
    if Path(out).resolve().parent != paths.GENERATED.resolve() or not f.is_file():
        return None
    m = re.search(r"^identity: (.+)$", f.read_text(), re.M)
    return m.group(1).strip() if m else None


def resolve(version: str | None, tree: str | None, deb_version: str | None = None) -> Source:
    """TREE wins over KERNEL; a packaged kernel is pinned to the committed series' version
    unless deb_version says otherwise ("latest" for apt's candidate)."""
    if tree:
        t = Path(tree).expanduser().resolve()
        v = kernel_version(t)
        if version and version != v:
            raise SlabconvError(f"TREE={t} is Linux {v}, not KERNEL={version}", exit_code=2)
        return Source(t, v, tree_id(t), packaged=False)
    version = fetch.kernel(version or paths.DEFAULT_KERNEL)    # "latest": the newest offered
    if deb_version == "latest":
        deb_version = None
    elif deb_version is None:
        deb_version = pinned_deb_version(version)
    got = fetch.get_tree(version, deb_version=deb_version)
    return Source(got.path, version, f"linux-source-{version}_{got.deb_version}", packaged=True)


def series_dir(src: Source, output: str | None = None) -> Path:
    """Where the series of `src` is written and read: --output; for a packaged
    kernel whose series is committed (generated-patches/<version>/SOURCE, 5.10)
    that directory; otherwise (6.1, 6.12: kernels with struct slab already,
    whose series is not committed; a user's tree) the cache,
    $SLABCONV_CACHE/out/<source id>/patches/."""
    if output:
        return Path(output).resolve()
    if src.packaged and (paths.GENERATED / src.version / "SOURCE").is_file():
        return paths.GENERATED / src.version
    return paths.cache_root() / "out" / src.source_id / "patches"
