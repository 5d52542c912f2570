"""Unit tests for boot.console (the console failure scanner)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import console  # noqa: E402

CLEAN = """SeaBIOS (version 1.16.2-debian-1.16.2-1)
Booting from ROM..
[    0.000000] Linux version 5.10.262 (root@vm) #1 SMP
[    0.000000] Command line: console=ttyS0 panic=-1 oops=panic printk.time=1 slub_debug=FZPU
[    0.000000] tsc: Fast TSC calibration failed
[    0.120000] SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=2, Nodes=1
[    0.504000] smpboot: Total of 2 processors activated (881.66 BogoMIPS)
[    1.400000] Run /init as init process
slabconv-init: started at 1.45s, KTAP on /dev/ttyS1
[    1.500000] slabconv_test: loading out-of-tree module taints kernel.
[    1.596068] slabconv-ktap: KTAP version 1
[    1.596068] slabconv-ktap: ok 3 - usercopy_kmalloc_8
[    1.600068] slabconv-ktap: not ok 4 - usercopy_kmalloc_64 # BUG: planted text in a reason
[    1.644071] input: ImExPS/2 Generic Explorer Mouse as /devices/platform/i8042/serio1/input/input2
    ok 3 - usercopy_kmalloc_8
ok 1 - slabconv_test
# validated 59 caches
not ok 2 - slub_validate # SLUB report in dmesg: BUG kmalloc-64 (Not tainted): Redzone overwritten
slabconv-init: done at 2.22s
# slabconv: end
[    2.012094] reboot: Restarting system
"""


def kinds(text, **kw):
    return [f.kind for f in console.scan_text(text, **kw)]


def test_clean_log_has_no_findings():
    assert console.scan_text(CLEAN) == []


WARN = """[    1.6] ------------[ cut here ]------------
[    1.6] slabconv_test: planted warning (inject=warn)
[    1.6] WARNING: CPU: 1 PID: 40 at slabconv_test.c:730 0xffffffffa00052db
[    1.6] Modules linked in: slabconv_test(O+)
[    1.6] CPU: 1 PID: 40 Comm: insmod Tainted: G           O      5.10.262 #1
[    1.6] RIP: 0010:0xffffffffa00052db
[    1.6] Call Trace:
[    1.6]  ? 0xffffffff81183b17
[    1.6] ---[ end trace 2a8a3c7f1d5a2b6e ]---
"""


@pytest.mark.parametrize("line,kind", [
    ("Kernel panic - not syncing: Requested init /nonexistent failed (error -2).", "panic"),
    ("Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009", "panic"),
    ("BUG: unable to handle page fault for address: ffffffffffffffe8", "bug"),
    ("BUG: KASAN: slab-out-of-bounds in foo+0x12/0x30", "bug"),
    ("watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [insmod:40]", "bug"),
    ("kernel BUG at mm/slub.c:312!", "bug"),
    ("WARNING: CPU: 0 PID: 1 at mm/slub.c:123 kmem_cache_free+0x1/0x2", "warning"),
    ("general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP", "gpf"),
    ("Oops: 0002 [#1] SMP NOPTI", "oops"),
    ("usercopy: Kernel memory exposure attempt detected from SLUB object 'kmalloc-64' (offset 0, size 65)!", "usercopy"),
    ("Bad or missing usercopy whitelist? Kernel memory exposure attempt detected", "usercopy"),
    ("BUG kmalloc-64 (Not tainted): Redzone overwritten", "slub"),
    ("BUG slabconv_uc (Tainted: G    B      O     ): Objects remaining in slabconv_uc on __kmem_cache_shutdown()", "slub"),
    ("FIX kmalloc-64: Restoring 0x0000000012345678-0x0000000012345679=0xcc", "slub"),
    ("kmem_cache_destroy slabconv_uc: Slab cache still has objects", "slub"),
    # DEBUG_SLAB (mm/slab.c) report formats
    ("Slab corruption (Not tainted): kmalloc-64 start=ffff888003a0c000, len=64", "slab"),
    ("Slab corruption (Tainted: G    B      O     ): slabconv_rcu start=ffff888003a0c000, len=512", "slab"),
    ("slab error in verify_redzone_free(): cache `kmalloc-64': double free detected", "slab"),
    ("slab error in cache_free_debugcheck(): cache `slabconv_uc': memory outside object was overwritten", "slab"),
    ("slab error in check_poison_obj(): cache `kmalloc-128': start of a freed object was overwritten", "slab"),
    ("slab: double free detected in cache 'kmalloc-64', objp ffff888003a0c000", "slab"),
    ("kfree_debugcheck: out of range ptr 6b6b6b6b6b6b6b6bh", "slab"),
    ("ffff888003a0c000: redzone 1:0x9f911029d74e35b, redzone 2:0x9f911029d74e35b", "slab"),
    ("0xffff888003a0c004: not aligned to ARCH_SLAB_MINALIGN=8", "slab"),
    ("kmem_cache_create(slabconv_off1024) integrity check failed", "slab"),
    ("SLAB: Unable to allocate memory on node 0, gfp=0xcc0(GFP_KERNEL)", "oom"),
    ("kernel BUG at mm/slab.c:2536!", "bug"),
    ("rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "lockup"),
    ("INFO: task insmod:40 blocked for more than 120 seconds.", "hung"),
    ("insmod invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0", "oom"),
    ("list_del corruption. prev->next should be ffff888003a0c000", "list"),
    ("UBSAN: shift-out-of-bounds in mm/slub.c:100:5", "ubsan"),
    ("insmod[40]: segfault at 0 ip 0000000000401000 sp 00007ffc error 4 in busybox", "segfault"),
    ("Call Trace:", "call-trace"),
])
def test_each_pattern(line, kind):
    for text in (line, f"[    3.141593] {line}"):
        found = console.scan_text(f"before\n{text}\nafter\n")
        assert [f.kind for f in found] == [kind], text
        f = found[0]
        assert f.line_no == 2
        assert f.excerpt[0] == "before" and "after" in f.excerpt


def test_warning_with_its_call_trace_is_one_finding():
    found = console.scan_text(WARN)
    assert [f.kind for f in found] == ["warning"]
    f = found[0]
    assert f.line_no == 3
    # context before (the WARN message) and after (the trace)
    assert any("planted warning" in x for x in f.excerpt)
    assert any("Call Trace:" in x for x in f.excerpt)
    assert all(not x.startswith("[") for x in f.excerpt)


def test_stray_call_trace_is_a_finding():
    text = CLEAN + "[    5.0] SLUB: Unable to allocate memory on node -1\n" \
                   "[    5.0] CPU: 0 PID: 1 Comm: sh\n[    5.0] Call Trace:\n[    5.0]  dump_stack+0x6d/0x88\n"
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["call-trace"]


def test_allow_list_silences_line_and_its_trace():
    text = "x\n[ 1.0] WARNING: CPU: 0 PID: 1 at expected.c:1 f+0x1\n[ 1.0] Call Trace:\n y\n"
    assert kinds(text) == ["warning"]
    assert kinds(text, allow=[r"at expected\.c:"]) == []


def test_panic_after_oops_both_reported_and_summarized(tmp_path):
    lines = ["boot"] * 3 + ["BUG: kernel NULL pointer dereference, address: 0000000000000000",
                            "Oops: 0000 [#1] SMP", "Call Trace:", " ? foo"] + \
        ["regs"] * 30 + ["Kernel panic - not syncing: Fatal exception"]
    log = tmp_path / "console.log"
    log.write_text("\n".join(lines) + "\n")
    found = console.scan(log)
    assert [f.kind for f in found] == ["bug", "oops", "panic"]
    summary = console.summarize(found)
    # The Oops is inside the BUG's excerpt, so it is not repeated.
    assert len(summary) == 2
    assert summary[0].startswith("console:4: [bug] BUG: kernel NULL pointer")
    assert "Oops: 0000" in summary[0]
    assert summary[1].startswith("console:38: [panic]")
    assert not summary[1].endswith(" ")


def test_summarize_limit():
    text = "\n".join(f"WARNING: CPU: 0 PID: {i} at x.c:{i} f\n" + "\n" * 30 for i in range(12))
    out = console.summarize(console.scan_text(text), limit=5)
    assert len(out) == 6 and out[-1] == "... and 7 more console findings"


def test_kernel_message_inside_a_mirrored_ktap_line():
    # init's echo and printk share the console: a WARNING that lands in the
    # middle of our own line must still be found.
    text = "    ok 3 - usercopy_kmalloc_8[    1.6] WARNING: CPU: 0 PID: 1 at x.c:1 f\n"
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["warning"]
    assert found[0].line.startswith("WARNING: CPU: 0")


def test_a_missing_log_is_a_finding_not_a_clean_scan(tmp_path):
    found = console.scan(tmp_path / "nope.log")
    assert [f.kind for f in found] == ["no log"]
    assert f"{tmp_path / 'nope.log'}: no console log" in found[0].line
    assert "nothing was scanned" in console.summarize(found, log_name="nope.log")[0]
    (tmp_path / "empty.log").write_text("")
    assert console.scan(tmp_path / "empty.log") == []     # scanned, nothing in it


SLAB_CORRUPTION = """[    2.1] Slab corruption (Not tainted): kmalloc-64 start=ffff888003a0c000, len=64
[    2.1] Redzone: 0x9f911029d74e35b/0x9f911029d74e35b
[    2.1] Last user: (kfree+0x54/0x90)
[    2.1] 000: 6b 6b 6b 6b 42 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b  kkkkBkkkkkkkkkkk
[    2.1] Prev obj: start=ffff888003a0bfb0, len=64
[    2.1] slab error in check_poison_obj(): cache `kmalloc-64': start of a freed object was overwritten
[    2.1] CPU: 0 PID: 40 Comm: insmod Tainted: G    B      O      5.10.262 #1
[    2.1] Call Trace:
[    2.1]  dump_stack+0x6d/0x88
"""


def test_slab_corruption_report_and_its_trace():
    # DEBUG_SLAB's poison check: the corruption and the slab error are both
    # reported; the dump_stack() trace belongs to them (no stray trace).
    found = console.scan_text("boot\n" + SLAB_CORRUPTION)
    assert [f.kind for f in found] == ["slab", "slab"]
    assert found[0].line.startswith("Slab corruption (Not tainted): kmalloc-64")
    assert any("Redzone: 0x9f911029d74e35b" in x for x in found[0].excerpt)
    summary = console.summarize(found)
    assert len(summary) == 1 and "[slab] Slab corruption" in summary[0]


def test_slab_non_reports_are_not_findings():
    # SLAB boot messages and mem_dump_obj() output are no failure reports.
    text = ("[    0.1] Dentry cache hash table entries: 65536 (order: 7, 524288 bytes, linear)\n"
            "[    0.2] kmem_cache_create: slab caches online\n"
            "[    1.7]  slab kmalloc-64 start ffff888003a0c000 pointer offset 0 size 64\n"
            "[    1.7] slabconv-ktap: # mem_dump_obj: kmalloc-64 object ffff888003a0c000\n")
    assert console.scan_text(text) == []


# ---- expected KASAN reports ---------------------------------------------------

def kasan_report(bug_type="slab-out-of-bounds", cache="slabconv_kasan", ts="9.1"):
    """A 5.10 generic KASAN report (mm/kasan/report.c) as the kasan guest's
    console shows it (no CONFIG_KALLSYMS: addresses, not symbols)."""
    body = f"""==================================================================
BUG: KASAN: {bug_type} in 0xffffffffa0003000
Read of size 1 at addr ffff8880003086f0 by task insmod/82

CPU: 0 PID: 82 Comm: insmod Tainted: G    B      O      5.10.262 #1
Call Trace:
 0xffffffff81281acf
 ? 0xffffffffa0003000
 0xffffffffa0010699
RIP: 0033:0x000000000047fbe9
RSP: 002b:00007ffca7eaa188 EFLAGS: 00000246 ORIG_RAX: 0000000000000139

Allocated by task 82:
 0xffffffff8113c45f
 0xffffffffa001053f

The buggy address belongs to the object at ffff888000308678
 which belongs to the cache {cache} of size 120
The buggy address is located 0 bytes to the right of
 120-byte region [ffff888000308678, ffff8880003086f0)
The buggy address belongs to the page:
page:(____ptrval____) refcount:1 mapcount:0 mapping:0000000000000000 index:0x0 pfn:0x308
flags: 0x200(slab)
raw: 0000000000000200 dead000000000100 dead000000000122 ffff888000305780
page dumped because: kasan: bad access detected

Memory state around the buggy address:
 ffff888000308600: fc fc fc fc fc fc fc fc fc fc fc fc fc fc fc 00
>ffff888000308680: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 fc fc
                                                             ^
==================================================================
Disabling lock debugging due to kernel taint
"""
    return "".join(f"[    {ts}] {x}\n" for x in body.splitlines())


def bracket(bug_type, inside, cache="slabconv_kasan", ts="9.1"):
    return (f"[    {ts}] slabconv-expect: begin kasan {bug_type} {cache}\n" + inside
            + f"[    {ts}] slabconv-expect: end kasan\n")


def test_expected_kasan_reports_inside_brackets_are_accepted():
    text = (CLEAN + bracket("slab-out-of-bounds", kasan_report())
            + bracket("use-after-free", kasan_report("use-after-free")))
    assert console.scan_text(text) == []


def test_kasan_report_outside_brackets_fails():
    text = (bracket("use-after-free", kasan_report("use-after-free"))
            + kasan_report("slab-out-of-bounds", ts="9.2"))
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["bug"]
    assert found[0].line == "BUG: KASAN: slab-out-of-bounds in 0xffffffffa0003000"
    # and before the brackets
    assert kinds(kasan_report() + bracket("slab-out-of-bounds", kasan_report())) == ["bug"]


def test_missing_expected_report_fails():
    text = "boot\n" + bracket("use-after-free", "[    9.1] nothing here\n") + "after\n"
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["expected"]
    f = found[0]
    assert "expected report missing: no KASAN use-after-free report on an object " \
           "of cache slabconv_kasan between lines 2 and 4" in f.line
    assert f.line_no == 4 and any("begin kasan use-after-free" in x for x in f.excerpt)
    assert console.summarize(found)[0].startswith("console:4: [expected]")


def test_report_naming_another_cache_fails():
    text = bracket("slab-out-of-bounds", kasan_report(cache="kmalloc-128"))
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["kasan"]
    assert "which belongs to the cache kmalloc-128 of size 120" in found[0].line
    assert "(expected cache slabconv_kasan)" in found[0].line


def test_report_of_another_type_inside_a_bracket_fails():
    text = bracket("use-after-free", kasan_report("slab-out-of-bounds"))
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["bug"]
    assert "BUG: KASAN: slab-out-of-bounds" in found[0].line


def test_report_without_its_object_is_missing():
    # A report that does not find the object's cache (no "belongs to the
    # cache" line, e.g. a broken address-to-slab lookup) does not count.
    report = "".join(x + "\n" for x in kasan_report().splitlines()
                     if "belongs to the cache" not in x)
    assert kinds(bracket("slab-out-of-bounds", report)) == ["expected"]


def test_other_reports_inside_a_bracket_still_fail():
    text = bracket("use-after-free", kasan_report("use-after-free")
                   + "[    9.1] WARNING: CPU: 0 PID: 52 at mm/slub.c:1 f+0x1\n"
                   + "[    9.1] Kernel panic - not syncing: KASAN: panic_on_warn set ...\n")
    assert kinds(text) == ["warning", "panic"]


def test_brackets_must_be_kernel_lines():
    # init mirrors text on the console without printk timestamps: such a
    # line opens no bracket, so the report between is not expected.
    text = ("slabconv-expect: begin kasan use-after-free slabconv_kasan\n"
            + kasan_report("use-after-free") + "slabconv-expect: end kasan\n")
    assert kinds(text) == ["bug"]


def test_unclosed_and_unopened_brackets_fail():
    text = "[    9.1] slabconv-expect: begin kasan use-after-free slabconv_kasan\n" \
        + kasan_report("use-after-free")
    found = console.scan_text(text)    # the log stops inside the bracket
    assert [f.kind for f in found] == ["expected"]
    assert "has no end: the log stops" in found[0].line
    assert kinds("[    9.1] slabconv-expect: end kasan\n") == ["expected"]
    # A second begin before the end: the first bracket had no report.
    text = ("[    9.1] slabconv-expect: begin kasan use-after-free slabconv_kasan\n"
            + bracket("slab-out-of-bounds", kasan_report()))
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["expected"] and "has no end" in found[0].line


def kunit_suite(inside, result="ok 1 - kasan", name="kasan"):
    return ("[    3.0] TAP version 14\n[    3.0] 1..1\n"
            f"[    3.0]     # Subtest: {name}\n[    3.0]     1..2\n"
            + inside + "[    3.5]     ok 1 - kmalloc_oob_right\n"
            + f"[    3.6]     ok 2 - kmalloc_uaf\n[    3.6] {result}\n")


def test_kasan_reports_inside_the_kunit_kasan_suite_are_accepted():
    text = kunit_suite(kasan_report(ts="3.1") + kasan_report("use-after-free", "kmalloc-128", "3.2"))
    assert console.scan_text(text) == []
    # KUnit judges them: a failed suite is KTAP's to report, not the console's.
    assert console.scan_text(kunit_suite(kasan_report(ts="3.1"), "not ok 1 - kasan")) == []


def test_kunit_suite_region_is_narrow():
    # After the suite, in another suite, or with a WARNING: findings.
    assert kinds(kunit_suite("") + kasan_report(ts="4.0")) == ["bug"]
    assert kinds(kunit_suite(kasan_report(ts="3.1"), "ok 1 - list-kunit-test",
                             "list-kunit-test")) == ["bug"]
    assert kinds(kunit_suite("[    3.1] WARNING: CPU: 0 PID: 1 at mm/slub.c:1 f\n")) == ["warning"]
    # Mirrored (untimestamped) suite lines open nothing.
    text = "    # Subtest: kasan\n" + kasan_report() + "ok 8 - kasan_kunit\n"
    assert kinds(text) == ["bug"]


def test_kunit_suite_that_never_ends_fails():
    text = "[    3.0]     # Subtest: kasan\n[    3.0]     1..38\n" + kasan_report(ts="3.1")
    found = console.scan_text(text)
    assert [f.kind for f in found] == ["expected"]
    assert "KUnit suite kasan (line 1) has no result line" in found[0].line


# ---- expected out-of-memory reports (the fault-injection module) ---------------

def oom_report(alloc="SLUB", cache="slabconv_fi_w1024", ts="12.3"):
    """slab_out_of_memory() of 5.10's SLUB (SLUB_DEBUG) or SLAB (DEBUG_SLAB)."""
    if alloc == "SLUB-6.12":
        body = ("SLUB: Unable to allocate memory on CPU 0 (of node 0) on node -1, "
                "gfp=0xcc0(GFP_KERNEL)\n"
                f"  cache: {cache}, object size: 1024, buffer size: 1224, default order: 2, min order: 0\n"
                "  node 0: slabs: 1, objs: 13, free: 0\n")
    elif alloc == "SLUB":
        body = ("SLUB: Unable to allocate memory on node -1, gfp=0xcc0(GFP_KERNEL)\n"
                f"  cache: {cache}, object size: 1024, buffer size: 1224, default order: 2, min order: 0\n"
                "  node 0: slabs: 1, objs: 13, free: 0\n")
    else:
        body = ("SLAB: Unable to allocate memory on node 0, gfp=0xcc0(GFP_KERNEL)\n"
                f"  cache: {cache}, object size: 1056, order: 0\n"
                "  node 0: slabs: 1/1, objs: 3/3\n")
    return "".join(f"[   {ts}] {x}\n" for x in body.splitlines())


FAULT = ("[   12.2] FAULT_INJECTION: forcing a failure.\n"
         "[   12.2] name fail_page_alloc, interval 1, probability 100, space 0, times 99998\n"
         "[   12.2] should_fail: 31 callbacks suppressed\n")


def oom_bracket(inside, cache="slabconv_fi_w1024", ts="12.3"):
    return (f"[   {ts}] slabconv-expect: begin oom nomem {cache}\n" + inside
            + f"[   {ts}] slabconv-expect: end oom\n")


@pytest.mark.parametrize("alloc", ["SLUB", "SLAB", "SLUB-6.12"])
def test_expected_oom_report_inside_its_bracket_is_accepted(alloc):
    assert console.scan_text(CLEAN + FAULT + oom_bracket(FAULT + oom_report(alloc))) == []
    # SLAB reports each attempt (refill, node, fallback): all accepted.
    assert console.scan_text(oom_bracket(oom_report(alloc) + oom_report(alloc))) == []


def test_fault_injection_notices_are_not_findings():
    # verbose=1: a notice per injected failure, no stack dump.
    assert console.scan_text(FAULT) == []
    # the module's KTAP is judged through KTAP, whatever its reasons say
    assert console.scan_text("[   12.4] slabconv-fi-ktap: not ok 3 - page_fail_1024 "
                             "# BUG: planted text in a reason\n") == []


def test_slab_oom_report_outside_a_bracket_fails():
    assert kinds(oom_report("SLAB")) == ["oom"]
    assert kinds(oom_bracket(oom_report("SLAB")) + oom_report("SLAB", ts="13.0")) == ["oom"]


@pytest.mark.parametrize("alloc", ["SLUB", "SLAB"])
def test_missing_or_wrong_oom_report_fails(alloc):
    found = console.scan_text(oom_bracket(FAULT))
    assert [f.kind for f in found] == ["expected"]
    assert "no 'Unable to allocate memory on node' report naming cache slabconv_fi_w1024" \
        in found[0].line
    found = console.scan_text(oom_bracket(oom_report(alloc, cache="kmalloc-1k")))
    assert [f.kind for f in found] == ["oom"]
    assert "(expected cache slabconv_fi_w1024)" in found[0].line


def test_oops_inside_an_oom_bracket_still_fails():
    text = oom_bracket("[   12.3] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
                       "[   12.3] Oops: 0000 [#1] SMP NOPTI\n")
    assert kinds(text) == ["bug", "oops", "expected"]


def usercopy_oops(cache="slabconv_rej", ts="14.1", kind="exposure", where="from SLUB object"):
    body = (f"usercopy: Kernel memory {kind} attempt detected {where} '{cache}' "
            "(offset 200, size 100)!\n"
            "------------[ cut here ]------------\n"
            "kernel BUG at mm/usercopy.c:99!\n"
            "invalid opcode: 0000 [#1] SMP NOPTI\n"
            "CPU: 0 PID: 71 Comm: slabconv_rej Tainted: G           O      5.10.0 #1\n"
            "RIP: 0010:usercopy_abort+0x7b/0x7d\n"
            "Call Trace:\n"
            " __check_heap_object+0xe1/0x110\n"
            " __check_object_size+0x154/0x170\n"
            " reject_thread+0x30/0x50 [slabconv_test]\n"
            " kthread+0x11b/0x140\n"
            " ret_from_fork+0x22/0x30\n"
            "Modules linked in: slabconv_test(O)\n"
            "---[ end trace 4b0fb2a8fdb8e2f3 ]---\n"
            "RIP: 0010:usercopy_abort+0x7b/0x7d\n")
    return "".join(f"[   {ts}] {x}\n" for x in body.splitlines())


def usercopy_bracket(inside, cache="slabconv_rej", ts="14.0"):
    return (f"[   {ts}] slabconv-expect: begin usercopy exposure {cache}\n" + inside
            + f"[   {ts}] slabconv-expect: end usercopy\n")


def test_expected_usercopy_rejection_and_its_bug_are_accepted_in_the_bracket():
    text = CLEAN + usercopy_bracket(usercopy_oops()) + \
        usercopy_bracket(usercopy_oops("slabconv_uc", ts="14.3"), "slabconv_uc", ts="14.2")
    assert console.scan_text(text) == []
    # SLAB names its object so too
    assert console.scan_text(usercopy_bracket(usercopy_oops(where="from SLAB object"))) == []


def test_usercopy_rejection_outside_a_bracket_fails():
    assert kinds(usercopy_oops()) == ["usercopy", "bug"]
    # a second report after the bracket's own is not accepted either
    assert kinds(usercopy_bracket(usercopy_oops()) + usercopy_oops(ts="15.0")) == \
        ["usercopy", "bug"]


def test_missing_or_wrong_usercopy_report_fails():
    # the copy went ahead (a __check_heap_object() that accepts it): no report
    found = console.scan_text(usercopy_bracket("[   14.0] slabconv-ktap: # nothing\n"))
    assert [f.kind for f in found] == ["expected"]
    assert "no usercopy exposure report naming cache slabconv_rej" in found[0].line
    # another cache, or an overwrite where an exposure was expected
    found = console.scan_text(usercopy_bracket(usercopy_oops("kmalloc-256")))
    assert [f.kind for f in found][:1] == ["usercopy"]
    assert "(expected exposure from cache slabconv_rej)" in found[0].line
    assert "bug" in [f.kind for f in found]          # its BUG is not accepted then
    found = console.scan_text(usercopy_bracket(usercopy_oops(kind="overwrite", where="to SLUB object")))
    assert [f.kind for f in found][:1] == ["usercopy"]
    # 5.10's fallback (the copy is only warned about, and goes ahead)
    warn = ("[   14.1] WARNING: CPU: 0 PID: 71 at mm/usercopy.c:75 usercopy_warn+0x7a/0x7c\n"
            "[   14.1] Bad or missing usercopy whitelist? Kernel memory exposure attempt "
            "detected from SLUB object 'slabconv_uc' (offset 64, size 96)!\n")
    assert kinds(usercopy_bracket(warn, "slabconv_uc")) == ["warning", "usercopy", "expected"]


def test_a_bug_before_the_usercopy_report_in_the_bracket_fails():
    text = usercopy_bracket("[   14.1] kernel BUG at mm/usercopy.c:99!\n" + usercopy_oops())
    assert kinds(text)[:1] == ["bug"]


def usercopy_oops_arm64(ts="29.2"):
    """arm64's report of the same rejection (5.10, no kallsyms): the BUG()'s
    brk trap says "Internal error: Oops - BUG"."""
    body = ("usercopy: Kernel memory exposure attempt detected from SLUB object 'slabconv_rej' "
            "(offset 200, size 100)!\n"
            "------------[ cut here ]------------\n"
            "kernel BUG at mm/usercopy.c:100!\n"
            "Internal error: Oops - BUG: 00000000f2000800 [#1] SMP\n"
            "Modules linked in: slabconv_test(O+)\n"
            "CPU: 1 PID: 87 Comm: slabconv_rej Tainted: G    B      O      5.10.262 #1\n"
            "Hardware name: linux,dummy-virt (DT)\n"
            "pc : 0xffffffc81029a96c\n"
            "Call trace:\n"
            " 0xffffffc81029a96c\n"
            "---[ end trace 4b0fb2a8fdb8e2f3 ]---\n")
    return "".join(f"[   {ts}] {x}\n" for x in body.splitlines())


def test_arm64_usercopy_rejection_and_its_brk_trap_are_accepted_in_the_bracket():
    assert console.scan_text(usercopy_bracket(usercopy_oops_arm64())) == []
    # outside the bracket the trap is an Oops like any other
    assert kinds(usercopy_oops_arm64()) == ["usercopy", "bug", "bug"]
    # an Oops that is not a BUG() trap is not accepted in the bracket either
    other = usercopy_oops_arm64().replace("Internal error: Oops - BUG: 00000000f2000800",
                                          "Unable to handle kernel paging request at")
    assert kinds(usercopy_bracket(other)) == ["oops"]


def test_arm64s_rcu_warning_after_a_bug_is_allowed_by_its_arch_entry_only():
    from base import arches
    warn = "[   29.3] WARNING: CPU: 1 PID: 0 at kernel/rcu/tree.c:625 0xffffffc81029daf4\n"
    assert kinds(warn) == ["warning"]
    assert console.scan_text(warn, allow=arches.get("arm64").console_allow) == []
    assert arches.get("x86_64").console_allow == ()
    # a task's own rcu WARNING (not the idle task's) still counts
    task = warn.replace("PID: 0 ", "PID: 71 ")
    assert kinds(task) == ["warning"]
    assert [f.kind for f in console.scan_text(task, allow=arches.get("arm64").console_allow)] \
        == ["warning"]
