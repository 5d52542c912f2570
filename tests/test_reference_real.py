"""A reference run through `slabconv reference` (slow: builds and boots).

The packaged linux-source-5.10, unpatched, in the slub configuration, built
and booted by cli.reference exactly as `make reference` builds and
boots 6.1 and 6.12 (upstream's own struct slab): the same guest module and
init as the patched boots, and every test must pass on a kernel that has
none of the series' text (the tests check slab behaviour).  Then the
planted defect: the same kernel booted with slabconv.inject=fail must fail
and name the module case.  SLUB_TINY (6.2) is not applicable to 5.10, with
the reason.

Cost: the unpatched 5.10 slub objects are the ones verify's baseline
compiled, so ccache makes the build a minute or two after the boot tests;
each boot 5-15 s under TCG.  The 6.1 and 6.12 references are `make
reference`'s (a cold 6.1 build alone is 15-25 min on 2 cores, more than
this suite can spend; their results are in the closing notes).
"""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

pytestmark = [pytest.mark.slow, pytest.mark.network]


@pytest.fixture(scope="module")
def ref510():
    from cli import reference
    from regen.source import resolve
    src = resolve("5.10", None)
    p = reference.plan(src, ["slub", "slub-tiny"])
    assert "slub-tiny" in p.not_applicable          # SLUB_TINY came in 6.2
    assert not p.failed, p.failed
    (g,) = p.guests
    return src, g


def test_reference_5_10_slub_passes(ref510):
    from cli import reference
    from report import results as R
    src, g = ref510
    res = reference.boot_guests([g], src)["slub"]
    assert res.passed, res.summary()
    assert res.module_tests >= 26
    assert res.counts.failed == 0 and res.counts.crashed == 0
    mod = res.ktap
    assert "# allocator SLUB, memcg_kmem 1, hardened_usercopy 1, slub_debug 1" in mod
    assert "linux 5.10" in mod
    # 5.10 has no kmem_dump_obj() (5.12): the case says so instead of passing
    assert re.search(r"ok \d+ - mem_dump_obj # SKIP .*5\.12", mod, re.M), mod
    # the init tests the allocator provides ran (SLUB with slub_debug: validate)
    assert re.search(r"^ok 2 - slub_validate$", mod, re.M)
    assert re.search(r"^ok 5 - memcg_slab_accounting$", mod, re.M)
    rec = R.latest("5.10", "boot-reference-slub")
    assert rec["series"] == "reference" and rec["data"]["passed"] is True


def test_reference_planted_failure_is_caught(ref510, tmp_path):
    """The same reference kernel told to fail module case 1 fails, named."""
    import boot
    _, g = ref510
    kw = dict(g.boot_kwargs)
    kw["cmdline_extra"] = (kw.get("cmdline_extra", "") + " slabconv.inject=fail").strip()
    res = boot.run(g.image, g.build_dir, g.src, tmp_path / "planted", **kw)
    assert not res.passed
    text = "\n".join(res.failures)
    assert "slabconv_test" in text, text
    assert re.search(r"not ok 1 - hardened_usercopy_config # planted failure", res.ktap)
