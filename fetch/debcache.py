"""Verified .deb files in the cache (apt/<state>/debs/).

A .deb is only ever stored under its final name after its size and SHA256
matched the apt index.  Next to it, `<package>=<version>.info` records that
size and hash, so a later unpack (e.g. after the tree was deleted) can check
the file again without apt lists or network.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from base.log import info
from . import net
from .apt import DebInfo, FetchError, Repo


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def problem(path: Path, want: DebInfo) -> str | None:
    """Why path is not the package apt describes, or None if it is."""
    try:
        size = path.stat().st_size
    except OSError as e:
        return f"cannot stat: {e.strerror}"
    if size != want.size:
        kind = "truncated" if size < want.size else "too large"
        return f"{kind}: {size} bytes, apt index says {want.size}"
    sha = sha256_file(path)
    if sha != want.sha256:
        return f"SHA256 mismatch: got {sha}, apt index says {want.sha256}"
    return None


def _info_file(debs: Path, package: str, version: str) -> Path:
    return debs / f"{package}={version}.info"


def recorded_info(repo: Repo, package: str, version: str) -> DebInfo | None:
    """The DebInfo saved when package=version was last verified, if any."""
    f = _info_file(repo.debs_dir(), package, version)
    try:
        d = json.loads(f.read_text())
        return DebInfo(d["package"], d["version"], d["sha256"], int(d["size"]), d["filename"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _record(repo: Repo, want: DebInfo) -> None:
    f = _info_file(repo.debs_dir(), want.package, want.version)
    tmp = f.with_name(f.name + ".tmp")
    tmp.write_text(json.dumps(want.__dict__, indent=1) + "\n")
    os.replace(tmp, f)


def _clean_leftovers(debs: Path, package: str) -> None:
    """Remove download dirs of package left by a killed run (caller holds the lock)."""
    for d in debs.glob(f".download-{package}=*"):
        shutil.rmtree(d, ignore_errors=True)


def obtain(repo: Repo, want: DebInfo) -> Path:
    """A verified .deb for want: the cached one, or downloaded.

    A cached file that does not match is deleted first.  A download that
    fails or does not match (deleted at once) is tried again with the
    retries of fetch/net.py; after the last try FetchError (exit 4) says
    what was expected.
    """
    debs = repo.debs_dir()
    dest = debs / want.filename
    _clean_leftovers(debs, want.package)
    if dest.exists():
        bad = problem(dest, want)
        if bad is None:
            info("fetch", f"using cached {dest}")
            _record(repo, want)
            return dest
        info("fetch", f"cached {dest.name} is bad ({bad}); deleting it")
        dest.unlink()

    def download_and_check() -> Path:
        work = Path(tempfile.mkdtemp(prefix=f".download-{want.package}={want.version}-",
                                     dir=debs))
        try:
            got = repo.download(want.package, want.version, work)
            bad = problem(got, want)
            if bad is not None:
                got.unlink()                    # deleted; the next try starts afresh
                raise FetchError(f"{got.name}: {bad}", transient=True)
            os.replace(got, dest)
            _record(repo, want)
            return dest
        finally:
            shutil.rmtree(work, ignore_errors=True)

    return net.call(download_and_check, f"the download of {want.package}={want.version}")
