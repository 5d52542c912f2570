"""A user's branch of 5.10 with slab code of its own, through `slabconv
regen --tree`: code that uses the slab members of struct page in a way no
rule converts stops regen before "mm: Remove slab from struct page", with
exit 1, every use named (file, line, function, member), and no series
written (issue 22, item 2).

The branch is made from the pristine packaged tree: a hard-linked copy
(no 1 GB copy; the pristine files are never written: a changed file is
unlinked and written anew) with the user's code appended to the files.
regen then copies it into a work tree of its own, as for any TREE=.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from slabconv import paths  # noqa: E402
from slabconv.source import resolve  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.network]


def user_branch(root: Path, additions: dict[str, str]) -> Path:
    """A copy of the pristine 5.10 tree at root/linux with `additions`
    (file -> code appended to it)."""
    src = resolve(paths.DEFAULT_KERNEL, None)
    tree = root / "linux"
    subprocess.run(["cp", "-al", str(src.tree), str(tree)], check=True)
    for f, code in additions.items():
        p = tree / f
        text = p.read_text()
        p.unlink()                      # a hard link to the pristine file: never write it
        p.write_text(text + code)
    return tree


def line_of(tree: Path, f: str, needle: str) -> int:
    lines = (tree / f).read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if needle in ln)


# a struct page reached through a member of the user's own struct: no rule
# converts the member's type, so these stay uses of struct page's fields
HOLDER_SLUB = """
struct slabconv_user_holder {
\tstruct page *pg;
};

unsigned int slabconv_user_held_inuse(struct slabconv_user_holder *h);
unsigned int slabconv_user_held_inuse(struct slabconv_user_holder *h)
{
\treturn h->pg->inuse;
}
"""
HOLDER_LIB = """
struct slabconv_user_cache_ref {
\tstruct page *pg;
};

void *slabconv_user_cache_of(struct slabconv_user_cache_ref *r);
void *slabconv_user_cache_of(struct slabconv_user_cache_ref *r)
{
\treturn r->pg->slab_cache;
}
"""


def test_an_unconverted_use_stops_regen_with_its_place(tmp_path):
    tree = user_branch(tmp_path, {"mm/slub.c": HOLDER_SLUB, "lib/dump_stack.c": HOLDER_LIB})
    out = tmp_path / "series"
    env = dict(os.environ, SLABCONV_IDENTITY="slabconv <slabconv@localhost>")
    cp = subprocess.run([sys.executable, "-m", "slabconv", "regen", "--tree", str(tree),
                         "--output", str(out)], cwd=REPO, env=env, capture_output=True,
                        text=True)
    assert cp.returncode == 1, cp.stderr[-3000:]
    err = cp.stderr
    assert "slabconv: error:" in err and "'remove-slab-from-page'" in err, err[-3000:]
    slub = line_of(tree, "mm/slub.c", "return h->pg->inuse;")
    lib = line_of(tree, "lib/dump_stack.c", "return r->pg->slab_cache;")
    assert f"mm/slub.c:{slub}: slabconv_user_held_inuse(): page->inuse" in err, err[-3000:]
    assert f"lib/dump_stack.c:{lib}: slabconv_user_cache_of(): page->slab_cache" in err
    assert not out.exists(), "no series is written"
    drop(tree)


def drop(tree: Path) -> None:
    """Remove the branch and the work tree regen made of it in the cache
    (1.6 GB per branch)."""
    from regen.worktree import _rmtree, tree_id
    work = paths.cache_root() / "work" / paths.DEFAULT_KERNEL / tree_id(tree)
    if work.exists():
        _rmtree(work)
    shutil.rmtree(tree)
