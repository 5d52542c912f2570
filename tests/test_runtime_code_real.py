"""The per-patch object-code check and the runtime bisect on the real 5.10
tree: a planted series whose first patch adds compound_head() calls that
change no type (what a careless page_slab() does), then a patch that takes
them out again.

  * In kfree(), on a page that virt_to_head_page() already made a head
    page: extra work on a hot path.  The object-code check names patch 1,
    mm/slub.o and kfree with its byte delta.
  * In new_slab(), on allocate_slab()'s result, which is NULL when the page
    allocator fails: the kernel of patch 1 oopses under the guest's fault
    injection (compound_head() reads page->compound_head of NULL).  The
    object-code check names ___slab_alloc, into which new_slab() is
    inlined; the runtime bisect names patch 1 with the oops.

Patch 2 declares its code changes (the manifest's [[entry.code]] of a
real entry would), so it passes both checks: the checks fail for the
planted reason and pass once the defect is gone.  Each run plants new
commit ids, so nothing comes from the bisect state of an earlier run.
Nothing here skips: a missing tool or kernel is a failure.
"""
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from regen.manifest import CodeExpect  # noqa: E402
from regen.worktree import BASE_TAG  # noqa: E402
from base import paths  # noqa: E402
from cli import boots
from verify import bisect  # noqa: E402
from tests.test_verify_bisect_real import applied, git  # noqa: E402,F401 (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.network]

KFREE = "\tpage = virt_to_head_page(x);\n\tif (unlikely(!PageSlab(page))) {\n"
KFREE_BAD = ("\tpage = virt_to_head_page(x);\n\tpage = compound_head(page);\n"
             "\tif (unlikely(!PageSlab(page))) {\n")
NEW_SLAB = ("\treturn allocate_slab(s,\n"
            "\t\tflags & (GFP_RECLAIM_MASK | GFP_CONSTRAINT_MASK), node);\n")
NEW_SLAB_BAD = ("\treturn compound_head(allocate_slab(s,\n"
                "\t\tflags & (GFP_RECLAIM_MASK | GFP_CONSTRAINT_MASK), node));\n")
PLANTED = "mm/slub: Take compound_head() of pages that are head pages or NULL"
REMOVED = "mm/slub: Remove the planted compound_head() calls again"


def plant(ap, root: Path):
    clone = root / "repo"
    git(root, "clone", "-q", "--shared", "--no-checkout", ap.tree, clone)
    base = git(clone, "rev-parse", f"{BASE_TAG}^{{commit}}")
    slub = subprocess.run(["git", "-C", str(clone), "show", f"{base}:mm/slub.c"],
                          stdout=subprocess.PIPE, check=True).stdout.decode()
    assert slub.count(KFREE) == 1 and slub.count(NEW_SLAB) == 1, \
        "mm/slub.c changed: update the planted defect"
    bad = slub.replace(KFREE, KFREE_BAD).replace(NEW_SLAB, NEW_SLAB_BAD)
    blob = git(clone, "hash-object", "-w", "--stdin", input=bad.encode())
    idx = {"GIT_INDEX_FILE": str(root / "index")}
    git(clone, "read-tree", base, env=idx)
    git(clone, "update-index", "--cacheinfo", f"100644,{blob},mm/slub.c", env=idx)
    run = f"slabconv test run {time.time_ns()}"
    head = git(clone, "commit-tree", git(clone, "write-tree", env=idx), "-p", base, "-m",
               f"{PLANTED}\n\nPlanted defect ({run}).")
    head = git(clone, "commit-tree", f"{base}^{{tree}}", "-p", head, "-m", f"{REMOVED}\n\n{run}.")
    return clone, head


def expectations(subject):
    if subject == REMOVED:
        return [CodeExpect(["kfree", "___slab_alloc", "__kmem_cache_create"],
                           "the planted compound_head() calls go again")], {}
    return None, {}


def test_planted_compound_head_is_named_by_the_code_check_and_the_runtime_bisect(applied,
                                                                                  tmp_path):
    clone, head = plant(applied, tmp_path)
    r = bisect.check_series(clone, paths.cache_dir("build", applied.src.version), ["slub"],
                            base=BASE_TAG, head=head, baseline_src=applied.src.tree,
                            baseline_id=applied.ident, report_dir=tmp_path / "report",
                            runtime_configs=["slub"], guest=boots.patch_guest,
                            code=expectations)
    c = r.configs[0]
    assert [p.ok for p in c.patches] == [True, True], r.summary      # both build
    assert not r.ok
    # the object-code check: patch 1 changes kfree() and ___slab_alloc(), undeclared
    assert [p.index for p in c.code_failures] == [1], r.summary
    # (GCC's clones keep their suffix: ___slab_alloc.constprop.0)
    bad = {(u["object"], u["function"].split(".")[0])
           for u in c.patches[0].code["unexpected"]}
    assert bad == {("mm/slub.o", "kfree"), ("mm/slub.o", "___slab_alloc"),
                   ("mm/slub.o", "__kmem_cache_create")}, bad
    grown = {u["function"].split(".")[0]: u["new_size"] - u["old_size"]
             for u in c.patches[0].code["unexpected"]}
    assert grown["kfree"] > 0, grown
    assert any(p.startswith(f'patch 1/2 "{PLANTED}" changes the code of mm/slub.o: kfree')
               for p in r.problems), r.problems
    assert not c.patches[1].code["unexpected"], c.patches[1].code     # declared
    assert not c.patches[1].code["missing"], c.patches[1].code
    # the runtime bisect: patch 1's kernel oopses under fault injection, patch 2's passes
    assert [p.index for p in c.boot_failures] == [1], r.summary
    assert c.patches[1].boot["verdict"] == "pass", c.patches[1].boot
    b = c.patches[0].boot
    assert "NULL pointer dereference" in b["excerpt"], b
    assert any(p.startswith(f'patch 1/2 "{PLANTED}" builds but its kernel fails at run time '
                            "in config slub") for p in r.problems), r.problems
    assert "runtime: 1/2 kernels passed" in r.summary
