"""Source-tree snapshots for builds: cheap copies, identities and diffs.

Builds never happen in the caller's trees.  check_build() makes a snapshot
of each tree (hard links: seconds for a 70 000-file kernel tree, no space),
and puts the O= directory *inside* the snapshot, one level down: Kbuild then
uses srctree=".." and every command line, dependency file and diagnostic path
is relative.  A copy of the baseline's O= directory therefore works
unchanged for the patched snapshot, where only the files that differ are
replaced (by real copies, newer than the objects): the patched build is
incremental.

Hard links are safe here because neither Kbuild (with O=) nor this module
ever writes into a snapshot's source files; a changed file is replaced by
unlinking it first.  A caller that edits its own tree *in place* (not via
git, patch or sed -i, which all replace files) after a snapshot was taken
would change the snapshot too: the tree identity (git HEAD or a stat
manifest) then changes as well, so a cached baseline is not reused.
"""
import hashlib
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

from base.log import SlabconvError


SKIP_TOP = {".git", ".pc"}          # never copied into a snapshot


def _git(path: Path, *args) -> str:
    cp = subprocess.run(["git", "-C", str(path), *args], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True, errors="replace")
    if cp.returncode != 0:
        raise OSError(f"git {' '.join(args)} failed in {path}")
    return cp.stdout


def identity(path) -> str:
    """A string that changes when the tree's content does.

    A git work tree: "git:<HEAD>" (+ a digest of uncommitted changes, if any).
    Anything else: "stat:<digest of every file's path, size and mtime>"."""
    path = Path(path).resolve()
    if (path / ".git").exists() and shutil.which("git"):
        try:
            head = _git(path, "rev-parse", "HEAD").strip()
            status = _git(path, "status", "--porcelain", "-uall")
            if not status.strip():
                return f"git:{head}"
            h = hashlib.sha256(status.encode())
            h.update(_git(path, "diff", "HEAD", "--binary").encode())
            for line in status.splitlines():
                if line.startswith("??"):
                    f = path / line[3:]
                    if f.is_file():
                        h.update(f.read_bytes())
            return f"git:{head}+dirty:{h.hexdigest()[:16]}"
        except OSError:
            pass
    h = hashlib.sha256()
    for rel, st in _walk(path):
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode:o}\n".encode())
    return f"stat:{h.hexdigest()[:24]}"


def _walk(root: Path, skip=()):
    """(relative path, lstat) of every non-directory under root, sorted."""
    root = str(root)
    skip_top = SKIP_TOP | set(skip)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in skip_top]
            filenames = [f for f in filenames if f not in skip_top]
        dirnames.sort()
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            rel = f if rel_dir == "." else os.path.join(rel_dir, f)
            yield rel, os.lstat(p)
        # symlinks to directories appear in dirnames: treat them as files
        for d in list(dirnames):
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                dirnames.remove(d)
                rel = d if rel_dir == "." else os.path.join(rel_dir, d)
                yield rel, os.lstat(p)


def _top_entries(src: Path, skip=()) -> list:
    return sorted(e for e in os.listdir(src) if e not in SKIP_TOP and e not in skip)


def remove(path) -> None:
    """rm -rf (much faster than shutil.rmtree on a 70 000-file tree)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        subprocess.run(["rm", "-rf", "--", str(path)], check=False)
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)


def discard(paths, trash) -> "subprocess.Popen | None":
    """Move `paths` into the directory `trash` (same file system: a rename) and
    delete them with a background `rm -rf`; also deletes what an interrupted
    run left in `trash`.  The caller wait()s for the returned process."""
    trash = Path(trash)
    trash.mkdir(parents=True, exist_ok=True)
    for p in paths:
        p = Path(p)
        if p.exists():
            os.rename(p, trash / f"{p.name}-{time.time_ns()}")
    victims = [str(trash / e) for e in os.listdir(trash)]
    if not victims:
        return None
    return subprocess.Popen(["nice", "-n", "10", "rm", "-rf", "--", *victims],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def snapshot(src, dst, *, skip=()) -> Path:
    """dst = a hard-link copy of src (without .git and the `skip` top-level
    entries); a real copy if hard links are impossible (other file system)."""
    src, dst = Path(src).resolve(), Path(dst)
    remove(dst)
    dst.mkdir(parents=True)
    entries = [str(src / e) for e in _top_entries(src, skip)]
    if not entries:
        raise SlabconvError(f"{src} is empty", exit_code=2)
    cp = subprocess.run(["cp", "-al", *entries, str(dst)], stderr=subprocess.PIPE, text=True)
    if cp.returncode != 0:
        remove(dst)
        dst.mkdir(parents=True)
        cp = subprocess.run(["cp", "-a", "--reflink=auto", *entries, str(dst)],
                            stderr=subprocess.PIPE, text=True)
        if cp.returncode != 0:
            raise SlabconvError(f"cannot copy {src} to {dst}: {cp.stderr.strip()}")
    return dst


def _same_content(a: str, b: str, sa: os.stat_result, sb: os.stat_result) -> bool:
    if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
        return True
    if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
        return False
    if stat.S_ISLNK(sa.st_mode):
        return os.readlink(a) == os.readlink(b)
    if sa.st_size != sb.st_size or (sa.st_mode & 0o111) != (sb.st_mode & 0o111):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca = fa.read(1 << 20)
            cb = fb.read(1 << 20)
            if ca != cb:
                return False
            if not ca:
                return True


def diff_trees(a, b, *, skip_a=(), skip_b=()) -> tuple:
    """(changed, added, removed): relative paths whose content differs between
    trees a and b, that only b has, that only a has."""
    a, b = Path(a), Path(b)
    fa = dict(_walk(a, skip_a))
    fb = dict(_walk(b, skip_b))
    changed = [r for r in fb if r in fa and
               not _same_content(str(a / r), str(b / r), fa[r], fb[r])]
    added = [r for r in fb if r not in fa]
    removed = [r for r in fa if r not in fb]
    return sorted(changed), sorted(added), sorted(removed)


def overlay(base_snap, new_src, dst, *, skip=()) -> list:
    """dst = base_snap (hard links) with the files where new_src differs
    replaced by real copies (mtime now: newer than any object built from
    base_snap), added and removed.  Returns the changed paths (relative)."""
    base_snap, new_src, dst = Path(base_snap), Path(new_src).resolve(), Path(dst)
    changed, added, removed = diff_trees(base_snap, new_src, skip_a=skip)
    snapshot(base_snap, dst, skip=skip)
    return _apply(dst, new_src, changed, added, removed)


def sync(dst, new_src, *, skip=()) -> list:
    """Bring the snapshot dst (its `skip` top-level entries, O= dirs, left
    alone) to new_src's content in place: the files whose content differs
    are replaced by real copies (mtime now), added and removed; a file with
    the same content keeps its timestamp, so an incremental build in dst
    rebuilds exactly what the difference touches.  Returns the changed paths."""
    dst, new_src = Path(dst), Path(new_src).resolve()
    changed, added, removed = diff_trees(dst, new_src, skip_a=skip)
    return _apply(dst, new_src, changed, added, removed)


def _apply(dst: Path, new_src: Path, changed, added, removed) -> list:
    for rel in removed:
        p = dst / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    for rel in changed + added:
        s, d = new_src / rel, dst / rel
        if d.is_symlink() or d.exists():
            if d.is_dir() and not d.is_symlink():
                shutil.rmtree(d)
            else:
                d.unlink()               # never write through a hard link
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.is_symlink():
            os.symlink(os.readlink(s), d)
        else:
            shutil.copyfile(s, d)        # new inode, mtime = now
            shutil.copymode(s, d)
    return sorted(changed + added + removed)


def relocate(out, old_root, new_root) -> int:
    """Rewrite the absolute paths `old_root` -> `new_root` in the dependency
    and command files (*.cmd, *.d) of a copied O= directory, keeping their
    timestamps.  Kbuild's own files are relative (srctree=".."), but the tools/
    builds (objtool) record absolute paths: without this, a copied O= dir
    rebuilds objtool and then, objtool being newer, every object.
    Returns the number of files rewritten."""
    old_b, new_b = str(old_root).encode(), str(new_root).encode()
    n = 0
    for dirpath, _, filenames in os.walk(out):
        for f in filenames:
            if not (f.endswith(".cmd") or f.endswith(".d")):
                continue
            p = os.path.join(dirpath, f)
            if os.path.islink(p):
                continue
            with open(p, "rb") as fh:
                data = fh.read()
            if old_b not in data:
                continue
            st = os.stat(p)
            os.unlink(p)                 # a copy, but never write through links
            with open(p, "wb") as fh:
                fh.write(data.replace(old_b, new_b))
            os.chmod(p, stat.S_IMODE(st.st_mode))
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            n += 1
    return n
