"""Unit tests for boot.ktap (the KTAP parser)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import ktap  # noqa: E402
from boot.ktap import Status  # noqa: E402


def test_all_pass():
    r = ktap.parse("KTAP version 1\n1..2\nok 1 - first\nok 2 - second\n")
    assert r.ok
    assert r.errors == []
    assert [t.name for t in r.root.subtests] == ["first", "second"]
    assert r.counts.as_dict() == {"passed": 2, "failed": 0, "skipped": 0,
                                  "crashed": 0, "total": 2}
    assert r.failures() == []


def test_failure_with_reason():
    r = ktap.parse("KTAP version 1\n1..3\nok 1 - a\n"
                   "not ok 2 - b # copy_to_user left 3 of 8 bytes\nok 3 - c\n")
    assert not r.ok
    assert r.root.subtests[1].status is Status.FAIL
    assert r.root.subtests[1].directive == "copy_to_user left 3 of 8 bytes"
    assert r.counts.failed == 1 and r.counts.passed == 2
    assert r.failures() == ["b: not ok # copy_to_user left 3 of 8 bytes"]


def test_skip_counts_and_passes():
    r = ktap.parse("KTAP version 1\n1..3\nok 1 - a\nok 2 - b # SKIP needs 2 CPUs\n"
                   "not ok 3 - c # SKIP no memcg\n")
    assert r.ok
    assert r.counts.skipped == 2 and r.counts.passed == 1
    assert r.root.subtests[1].status is Status.SKIP


def test_nested_spaces_as_slabconv_init_prints():
    text = """KTAP version 1
# slabconv guest tests
1..2
    KTAP version 1
    # Subtest: slabconv_test
    1..3
    ok 1 - x
    ok 2 - y # SKIP nope
    ok 3 - z
    # slabconv_test: pass:2 fail:0 skip:1 total:3
ok 1 - slabconv_test
# validated 59 caches
ok 2 - slub_validate
# slabconv: end
"""
    r = ktap.parse(text)
    assert r.ok, r.errors
    suite = r.root.subtests[0]
    assert suite.name == "slabconv_test" and suite.plan == 3
    assert [t.name for t in suite.subtests] == ["x", "y", "z"]
    assert r.counts.as_dict() == {"passed": 3, "failed": 0, "skipped": 1,
                                  "crashed": 0, "total": 4}
    assert "validated 59 caches" in r.root.diagnostics


def test_nested_kunit_510_tabs():
    text = ("TAP version 14\n1..1\n\t# Subtest: example\n\t1..2\n"
            "\tok 1 - example_simple_test\n\tnot ok 2 - example_bad\n"
            "not ok 1 - example\n")
    r = ktap.parse(text)
    assert not r.ok
    ex = r.root.subtests[0]
    assert ex.name == "example" and len(ex.subtests) == 2
    assert r.counts.failed == 1 and r.counts.passed == 1
    assert r.failures() == ["example.example_bad: not ok"]


def test_parent_ok_but_child_failed_is_a_failure():
    text = ("KTAP version 1\n1..1\n    KTAP version 1\n    1..1\n"
            "    not ok 1 - inner\nok 1 - outer\n")
    r = ktap.parse(text)
    assert not r.ok
    assert r.root.subtests[0].status is Status.FAIL
    assert any("reported ok but subtests failed" in e for e in r.errors)


def test_parent_failure_of_its_own_counts_once():
    text = ("KTAP version 1\n1..1\n    KTAP version 1\n    1..1\n"
            "    ok 1 - inner\nnot ok 1 - outer # insmod failed\n")
    r = ktap.parse(text)
    assert not r.ok
    assert r.counts.passed == 1 and r.counts.failed == 1


def test_truncated_plan():
    r = ktap.parse("KTAP version 1\n1..3\nok 1 - a\nok 2 - b\n")
    assert not r.ok
    assert any("truncated: 2 of 3" in e for e in r.errors)


def test_truncated_inside_a_subtest():
    # The guest died while the module was printing: no parent result line.
    text = ("KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: slabconv_test\n"
            "    1..21\n    ok 1 - a\n    ok 2 - b\n")
    r = ktap.parse(text)
    assert not r.ok
    suite = r.root.subtests[0]
    assert suite.status is Status.CRASHED
    assert any("no result line" in e for e in r.errors)
    assert any("2 of 21" in e for e in r.errors)
    assert any("1 of 2" in e for e in r.errors)


def test_missing_plan():
    r = ktap.parse("KTAP version 1\nok 1 - a\n")
    assert not r.ok
    assert any("missing plan" in e for e in r.errors)


def test_more_results_than_plan():
    r = ktap.parse("KTAP version 1\n1..1\nok 1 - a\nok 2 - b\n")
    assert not r.ok


def test_misnumbered_result():
    r = ktap.parse("KTAP version 1\n1..2\nok 1 - a\nok 3 - b\n")
    assert not r.ok
    assert any("numbered 3, expected 2" in e for e in r.errors)


def test_no_ktap_at_all():
    r = ktap.parse("Linux version 5.10\nKernel panic - not syncing: oops\n")
    assert not r.ok
    assert r.errors == ["no KTAP output (no 'KTAP version' line)"]
    assert r.counts.total == 0


def test_empty_document():
    r = ktap.parse("KTAP version 1\n")
    assert not r.ok


def test_timestamps_prefix_and_interleaved_kernel_lines():
    log = """[    0.000000] Linux version 5.10.262
[    1.596068] slabconv-ktap: KTAP version 1
[    1.596068] slabconv-ktap: # Subtest: slabconv_test
[    1.596068] slabconv-ktap: 1..2
[    1.597000] random: crng init done
[    1.598000] slabconv-ktap: ok 1 - usercopy_kmalloc_8
[    1.599000] input: ImExPS/2 Generic Explorer Mouse
[    1.600068] slabconv-ktap: not ok 2 - usercopy_kmalloc_64 # round trip differs at byte 3 of 64
"""
    r = ktap.parse(log)
    assert r.lines[0] == "KTAP version 1"
    assert all(not x.startswith("[") for x in r.lines)
    assert [t.name for t in r.root.subtests] == ["usercopy_kmalloc_8", "usercopy_kmalloc_64"]
    assert r.root.name == "main"
    assert r.counts.failed == 1 and r.counts.passed == 1
    assert "round trip differs" in r.failures()[0]


def test_printk_caller_and_timestamp_stripped():
    r = ktap.parse("[    2.000000] [    T1] KTAP version 1\n[    2.1] [    T1] 1..1\n"
                   "[    2.2] [    T1] ok 1 - a\n")
    assert r.ok, r.errors


def test_prefix_empty_skips_prefixed_documents():
    # On the console the module's own (prefixed) document comes first; the
    # host's console fallback wants init's document, which starts in column 0.
    console = """[    1.5] slabconv-ktap: KTAP version 1
[    1.5] slabconv-ktap: 1..1
[    1.5] slabconv-ktap: ok 1 - inner
slabconv-init: insmod took 1.50 -> 1.64s
KTAP version 1
1..1
ok 1 - slabconv_test
"""
    r = ktap.parse(console, prefix="")
    assert r.ok
    assert [t.name for t in r.root.subtests] == ["slabconv_test"]


def test_crlf_and_trailing_garbage():
    r = ktap.parse("KTAP version 1\r\n1..1\r\nok 1 - a\r\n# slabconv: end\r\n\r\n")
    assert r.ok
    assert r.root.subtests[0].name == "a"


def test_a_second_document_is_not_ignored():
    r = ktap.parse("KTAP version 1\n1..1\nok 1 - a\nKTAP version 1\n1..1\nnot ok 1 - b\n")
    assert not r.ok and r.root.status is Status.FAIL
    assert any("a second KTAP document follows the first ('KTAP version 1', 3 line(s))" in e
               for e in r.errors), r.errors
    assert r.failures()


def test_todo_is_not_a_skip():
    r = ktap.parse("KTAP version 1\n1..3\nok 1 - a\nnot ok 2 - b # TODO not written yet\n"
                   "not ok 3 - c # XFAIL known\n")
    assert not r.ok
    assert [t.status for t in r.root.subtests] == [Status.PASS, Status.FAIL, Status.FAIL]
    assert r.counts.skipped == 0 and r.counts.failed == 2
    # ok # TODO passed
    r = ktap.parse("KTAP version 1\n1..1\nok 1 - a # TODO\n")
    assert r.ok and r.counts.passed == 1 and r.counts.skipped == 0


def test_planned_counts_the_leaves_every_plan_announces():
    text = """KTAP version 1
1..3
    KTAP version 1
    # Subtest: mod
    1..4
    ok 1 - x
    ok 2 - y # SKIP no
    ok 3 - z
    ok 4 - w
ok 1 - mod
ok 2 - b
"""
    r = ktap.parse(text)
    assert r.planned == 6                   # 4 in mod, b, and a third never printed
    assert r.counts.passed + r.counts.skipped == 5 < r.planned
    assert not r.ok                         # truncated, too


def test_indented_diagnostics_are_not_subtests():
    r = ktap.parse("KTAP version 1\n1..1\n    # note before\nok 1 - a\n    # trailing note\n")
    assert r.ok, r.errors
    assert len(r.root.subtests) == 1
    assert "trailing note" in r.root.diagnostics


def test_write_and_render(tmp_path):
    text = ("KTAP version 1\n1..2\n    KTAP version 1\n    1..2\n    ok 1 - a\n"
            "    not ok 2 - b # bad\nnot ok 1 - suite # 1 of 2 failed\nok 2 - other\n")
    r = ktap.parse(text)
    out = r.write(tmp_path / "results.ktap")
    assert out.read_text() == text
    shown = ktap.render(r)
    assert "FAIL  suite" in shown and "FAIL  b" in shown and "ok    other" in shown
    assert ktap.parse_file(out).counts.as_dict() == r.counts.as_dict()
