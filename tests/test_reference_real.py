"""A reference run on upstream's own struct slab (slow: builds and boots 6.1).

The packaged linux-source-6.1 (which has struct slab since 5.17), unpatched,
in the slub configuration, booted with the same guest module and init as the
patched 5.10 boots: every test must pass there too (the tests check slab
behaviour, not the series' text).  Then the planted defect: the same kernel
booted with slabconv.inject=fail must fail and name the module case.

Cost: a cold 6.1 slub build is 15-25 min on this shared 2-core machine
(empty ccache), ~1-3 min with ccache warm; the build is reused from the
cache afterwards (the key is the source); each boot 10-30 s under TCG.
"""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

pytestmark = [pytest.mark.slow, pytest.mark.network]


@pytest.fixture(scope="module")
def ref61():
    from slabconv import reference
    from slabconv.source import resolve
    src = resolve("6.1", None)
    p = reference.plan(src, ["slub", "slub-tiny"])
    assert "slub-tiny" in p.not_applicable          # SLUB_TINY came in 6.2
    assert not p.failed, p.failed
    (g,) = p.guests
    return src, g


def test_reference_6_1_slub_passes(ref61):
    from slabconv import reference
    from report import results as R
    import json
    src, g = ref61
    res = reference.boot_guests([g], src)["slub"]
    assert res.passed, res.summary()
    assert res.module_tests == 26
    assert res.counts.failed == 0 and res.counts.crashed == 0
    mod = res.ktap
    assert "# allocator SLUB, memcg_kmem 1, hardened_usercopy 1, slub_debug 1" in mod
    assert "linux 6.1" in mod
    # 6.1 has kmem_dump_obj(): the case runs instead of skipping as on 5.10
    assert re.search(r"ok \d+ - mem_dump_obj$", mod, re.M), mod
    # the init tests the allocator provides ran (SLUB with slub_debug: validate)
    assert re.search(r"^ok 2 - slub_validate$", mod, re.M)
    assert re.search(r"^ok 5 - memcg_slab_accounting$", mod, re.M)
    rec = json.loads((R.record_dir("6.1") / "boot-reference-slub.json").read_text())
    assert rec["series"] == "reference" and rec["data"]["passed"] is True


def test_reference_planted_failure_is_caught(ref61, tmp_path):
    """The same reference kernel told to fail module case 1 fails, named."""
    import boot
    _, g = ref61
    kw = dict(g.boot_kwargs)
    kw["cmdline_extra"] = (kw.get("cmdline_extra", "") + " slabconv.inject=fail").strip()
    res = boot.run(g.image, g.build_dir, g.src, tmp_path / "planted", **kw)
    assert not res.passed
    text = "\n".join(res.failures)
    assert "slabconv_test" in text, text
    assert re.search(r"not ok 1 - hardened_usercopy_config # planted failure", res.ktap)
