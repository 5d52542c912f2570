"""The fault-injection guest's plumbing without a kernel: init.sh's
test_meminit suite (test 11) and SLUB KUnit suite (test 12) from made-up
boot logs, the module's case table, and the nesting of test 10's KTAP.
The guest checks themselves are tests/test_boot_qemu.py's and
tests/test_boot_faultinj.py's (slow)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from boot import ktap, module  # noqa: E402
from tests import helpers  # noqa: E402

INIT = (REPO / "boot" / "guest" / "init.sh").read_text()
MODULE_C = (REPO / "boot" / "guest" / "slabconv_faultinj.c").read_text()


def block(start: str, end: str) -> str:
    i = INIT.index(start)
    return INIT[i:INIT.index(end, i)]


def run_sh(script: str) -> str:
    cp = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout


MEMINIT_OK = """test_meminit: all 11 tests in test_pages passed
test_meminit: all 40 tests in test_kvmalloc passed
test_meminit: all 70 tests in test_kmemcache passed
test_meminit: all 10 tests in test_rcu_persistent passed
test_meminit: all 131 tests passed!
"""
MEMINIT_POISONED = """mem auto-init: SLAB_POISON will take precedence over init_on_alloc/init_on_free
mem auto-init: stack:all(zero), heap alloc:on, heap free:off
test_meminit: all 11 tests in test_pages passed
test_meminit: test_kvmalloc failed 14 out of 40 times
test_meminit: test_kmemcache failed 20 out of 70 times
test_meminit: all 10 tests in test_rcu_persistent passed
test_meminit: failures: 34 out of 131
"""


def meminit(tmp_path, log: str, alloc="SLUB", modline="") -> str:
    (tmp_path / "meminit.log").write_text(log)
    (tmp_path / "fi.ktap").write_text(modline)
    body = block("# ---- 11: lib/test_meminit.c", "# ---- 12:")
    body = body.replace("/tmp/boot-meminit.log", str(tmp_path / "meminit.log"))
    body = body.replace("/tmp/fi-mod.ktap", str(tmp_path / "fi.ktap"))
    return run_sh(f'ktap() {{ echo "$*"; }}\nALLOC={alloc}\n' + body)


def test_meminit_all_passed(tmp_path):
    out = meminit(tmp_path, MEMINIT_OK)
    assert out.rstrip().endswith("ok 11 - test_meminit")
    assert "    test_meminit: all 131 tests passed!" not in out     # a comment, not a line
    assert "    # test_meminit: all 131 tests passed!" in out
    r = ktap.parse("KTAP version 1\n1..1\n" + out.replace("ok 11 -", "ok 1 -"))
    assert r.ok and r.counts.passed == 4


def test_meminit_poisoned_functions_skip_with_the_kernels_reason(tmp_path):
    out = meminit(tmp_path, MEMINIT_POISONED)
    assert "    ok 1 - test_pages\n" in out and "    ok 4 - test_rcu_persistent\n" in out
    assert re.search(r"    ok 2 - test_kvmalloc # SKIP slab poisoning \(slub_debug=P\) takes "
                     r"precedence .*\(test_meminit: failed 14 out of 40 times\)", out), out
    assert "    ok 3 - test_kmemcache # SKIP" in out
    assert out.rstrip().endswith("ok 11 - test_meminit")


def test_meminit_failure_without_a_reason_fails(tmp_path):
    log = MEMINIT_POISONED.replace("mem auto-init: SLAB_POISON will take precedence "
                                   "over init_on_alloc/init_on_free\n", "")
    out = meminit(tmp_path, log)
    assert "    not ok 2 - test_kvmalloc # failed 14 out of 40 times" in out
    assert out.rstrip().endswith("not ok 11 - test_meminit # test_kvmalloc failed 14 out of 40 times")
    # test_pages is never excused
    out = meminit(tmp_path, MEMINIT_POISONED.replace(
        "all 11 tests in test_pages passed", "test_pages failed 3 out of 11 times"))
    assert "not ok 11 - test_meminit # test_pages failed 3 out of 11 times" in out


@pytest.mark.parametrize("alloc,modline,why", [
    ("SLAB", "# faultinj: allocator SLAB, fail_page_alloc 1, failslab 1, debugfs 1, "
             "oom_report 1, debug_slab 1, test_meminit 1, slub_kunit 0, armed 'page', linux 5.10\n",
     "DEBUG_SLAB poisons every cache"),
    ("SLOB", "", "SLOB zeroes its blocks only for __GFP_ZERO"),
])
def test_meminit_reasons_of_slab_and_slob(tmp_path, alloc, modline, why):
    log = "\n".join(x for x in MEMINIT_POISONED.splitlines()
                    if "SLAB_POISON" not in x) + "\n"
    out = meminit(tmp_path, log, alloc, modline)
    assert f"    ok 2 - test_kvmalloc # SKIP {why}" in out
    assert out.rstrip().endswith("ok 11 - test_meminit")


def test_meminit_missing(tmp_path):
    out = meminit(tmp_path, "")
    assert out.strip() == "ok 11 - test_meminit # SKIP CONFIG_TEST_MEMINIT is not built in"
    modline = ("# faultinj: allocator SLUB, fail_page_alloc 1, failslab 1, debugfs 1, "
               "oom_report 1, debug_slab 0, test_meminit 1, slub_kunit 0, armed 'page', linux 5.10\n")
    out = meminit(tmp_path, "", modline=modline)
    assert out.strip().startswith("not ok 11 - test_meminit # CONFIG_TEST_MEMINIT=y but no")


SLUB_KUNIT = """[    1.10]     KTAP version 1
[    1.10]     # Subtest: slub_test
[    1.10]     1..5
[    1.20]     ok 1 test_clobber_zone
[    1.30]     ok 2 test_next_pointer
[    1.40]     ok 3 test_first_word
[    1.50]     ok 4 test_clobber_50th_byte
[    1.60]     ok 5 test_clobber_redzone_free
[    1.60] # slub_test: pass:5 fail:0 skip:0 total:5
[    1.60] # Totals: pass:5 fail:0 skip:0 total:5
[    1.60] ok 1 slub_test
"""


def slub_kunit(tmp_path, log: str, release="6.1.0", modline="") -> str:
    (tmp_path / "boot.log").write_text(log)
    (tmp_path / "fi.ktap").write_text(modline)
    funcs = block("kunit_lift() {", "dmesg | kunit_lift kasan")
    body = block("# ---- 12: the kernel's SLUB KUnit suite", '\nfinish "$(uptime_s)"')
    body = body.replace("/tmp/boot-dmesg.log", str(tmp_path / "boot.log"))
    body = body.replace("/tmp/fi-mod.ktap", str(tmp_path / "fi.ktap"))
    body = body.replace("/tmp/slub-kunit.out", str(tmp_path / "slub-kunit.out"))
    funcs = funcs.replace("/tmp/kunit.ktap", str(tmp_path / "kunit.ktap"))
    kmaj, kmin = release.split(".")[:2]
    return run_sh(f'ktap() {{ echo "$*"; }}\nKV={release}\nKMAJ={kmaj}\nKMIN={kmin}\n'
                  + funcs + body)


def test_slub_kunit_suite_is_nested(tmp_path):
    out = slub_kunit(tmp_path, SLUB_KUNIT)
    assert out.rstrip().endswith("ok 12 - slub_kunit")
    assert "    ok 5 test_clobber_redzone_free" in out
    r = ktap.parse("KTAP version 1\n1..1\n" + out.replace("ok 12 -", "ok 1 -"))
    assert r.ok and r.counts.passed == 5
    bad = SLUB_KUNIT.replace("    ok 3 test_first_word", "    not ok 3 test_first_word")
    assert slub_kunit(tmp_path, bad).rstrip().endswith(
        "not ok 12 - slub_kunit # 1 of 5 KUnit cases failed")


def test_slub_kunit_missing(tmp_path):
    assert slub_kunit(tmp_path, "", "5.10.262").strip() == \
        "ok 12 - slub_kunit # SKIP lib/slub_kunit.c came in Linux 5.14 (this is 5.10.262)"
    assert slub_kunit(tmp_path, "", "6.12.0").strip() == \
        "ok 12 - slub_kunit # SKIP CONFIG_SLUB_KUNIT_TEST is not built in"
    modline = "# faultinj: allocator SLUB, fail_page_alloc 1, slub_kunit 1, armed 'page', linux 6.1\n"
    assert slub_kunit(tmp_path, "", "6.1.0", modline).strip().startswith(
        "not ok 12 - slub_kunit # CONFIG_SLUB_KUNIT_TEST=y but no KUnit suite")


def test_module_is_built_and_packed():
    assert "slabconv_faultinj" in module.MODULES
    assert "slabconv_faultinj.c" in module.SOURCES
    assert "slabconv_faultinj.o" in (REPO / "boot" / "guest" / "Kbuild").read_text()


def test_case_table_covers_sizes_orders_and_contexts():
    rows = re.findall(r'\{ "(\w+?)(?:_%lu)?", (t_\w+), (\d+), (true|false), (PHASE_\w+) \}',
                      MODULE_C)
    names = [(n, int(a)) for n, _, a, _, _ in rows]
    for size in (64, 512, 1024, 4096, 16384):
        assert ("page_fail", size) in names and ("page_fail_atomic", size) in names
    assert {p for *_, p in rows} == {"PHASE_PAGE", "PHASE_SLAB"}
    # the page phase first (at insmod), the failslab phase after it (run=)
    phases = [p for *_, p in rows]
    assert phases == sorted(phases, key=lambda p: p != "PHASE_PAGE")
    assert len(rows) == 16
    # the only allocations that may warn are in the bracketed report case
    assert MODULE_C.count("alloc_run_gfp(s, objs, n, cap, false, true, true, &null)") == 1


def test_init_arms_the_task_filter_first_and_the_probability_last():
    fi = block("# ---- 10: fault injection", "# <<< slabconv-faultinj section <<<")
    for attr in ("FPA", "FSL"):
        m = re.search(r"fi_set \$" + attr + r" (task-filter=Y .*?probability=100)\)", fi, re.S)
        assert m, attr
        knobs = m.group(1).replace("\\\n", " ").split()
        assert knobs[0] == "task-filter=Y" and knobs[-1] == "probability=100"
        assert "verbose=1" in knobs and "ignore-gfp-wait=N" in knobs
    assert "min-order=0" in fi
    assert 'fi_disarm() { fi_set "$1" probability=0 ' in fi


def _fi_document(alloc: str, group: str = "ok 1 - fault_injection",
                 injected: str = "ok 2 - injected_failures", skip_failslab: bool = False) -> str:
    """Init test 10's KTAP as init.sh writes it (its fsub nesting, the
    module's document one level deeper), with the module's 16 cases."""
    cases = ([f"page_fail_{s}" for s in (64, 512, 1024, 4096, 16384)]
             + [f"page_fail_atomic_{s}" for s in (64, 512, 1024, 4096, 16384)]
             + ["page_fail_report_1024", "kmalloc_pages"])
    slab_cases = [f"{k}_{s}" for k in ("failslab", "failslab_atomic") for s in (64, 4096)]
    mod = ["KTAP version 1", f"# faultinj: allocator {alloc}", f"1..{len(cases) + 4}"]
    mod += [f"ok {i} - {c}" for i, c in enumerate(cases, 1)]
    mod += [f"ok {i} - {c}" + (" # SKIP no should_failslab()" if skip_failslab else "")
            for i, c in enumerate(slab_cases, len(cases) + 1)]
    doc = ["KTAP version 1", "1..1", "    KTAP version 1", "    1..4"]
    doc += [f"        {l}" for l in mod]
    doc += ["    ok 1 - slabconv_faultinj", f"    {injected}",
            "    ok 3 - oom_report # SKIP no report", "    ok 4 - caches_after", group]
    return "\n".join(doc) + "\n"


def _boot(text: str):
    from types import SimpleNamespace
    return SimpleNamespace(results=ktap.parse(text, prefix=""))


@pytest.mark.parametrize("config,doc", [
    ("slab", dict(alloc="SLAB")),
    ("slob", dict(alloc="SLOB", skip_failslab=True)),
])
def test_the_fault_injection_assertion_passes_a_group_that_passed(config, doc):
    helpers.assert_fault_injection_passed(_boot(_fi_document(**doc)), config)


@pytest.mark.parametrize("config,doc", [
    ("slab", dict(alloc="SLAB", group="ok 1 - fault_injection # SKIP CONFIG_FAIL_PAGE_ALLOC "
                                      "and CONFIG_FAILSLAB are not set")),
    ("slab", dict(alloc="SLAB", injected="ok 2 - injected_failures # SKIP nothing was armed")),
    ("slab", dict(alloc="SLAB", skip_failslab=True)),       # failslab not run under SLAB
    ("slob", dict(alloc="SLOB")),                           # failslab "passed" under SLOB
])
def test_the_fault_injection_assertion_fails_a_group_that_did_not_run(config, doc):
    with pytest.raises(AssertionError):
        helpers.assert_fault_injection_passed(_boot(_fi_document(**doc)), config)
