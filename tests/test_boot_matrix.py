"""boot.matrix, boot.junit, boot.summary without a kernel: a fake QEMU whose
behaviour the guest's kernel command line chooses (so that guests booted in
parallel can behave differently), driven through the real boot.run()."""
import dataclasses
import stat
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boot  # noqa: E402
from base import arches  # noqa: E402
from boot import junit, matrix, qemu, summary  # noqa: E402
from base.log import SlabconvError  # noqa: E402

# fake=pass|slubbug|warn|hang|fail|sleepN (several: "fake=sleep2 fake=pass")
FAKE_QEMU = r"""#!/bin/sh
APPEND=""
prev=""
for a in "$@"; do
  case "$a" in file,id=ser0,path=*) CON=${a#file,id=ser0,path=} ;;
               file,id=ser1,path=*) KTAP=${a#file,id=ser1,path=} ;; esac
  [ "$prev" = -append ] && APPEND=$a
  prev=$a
done
echo "[    0.000000] Linux version fake" > "$CON"
: > "$KTAP"
ktap_doc() {
  cat >> "$KTAP" <<EOF
KTAP version 1
1..3
    KTAP version 1
    1..2
    ok 1 - kmalloc_sizes
    $1 2 - kfree_bulk
ok 1 - slabconv_test
ok 2 - slub_validate # SKIP no cache has a validate file
$1 3 - module_unload
# slabconv: end
EOF
}
for w in $APPEND; do
  case "$w" in
    fake=sleep*) sleep "${w#fake=sleep}" ;;
    fake=pass) ktap_doc ok; exit 0 ;;
    fake=fail) ktap_doc "not ok"; exit 0 ;;
    fake=slubbug)
      cat >> "$CON" <<EOF
[    3.100000] =============================================================================
[    3.100001] BUG slabconv_uc (Not tainted): Freepointer corrupt
[    3.100002] -----------------------------------------------------------------------------
[    3.100003] INFO: Slab 0x(____ptrval____) objects=21 used=21 fp=0x0000000000000008 flags=0x200
EOF
      ktap_doc ok; exit 0 ;;
    fake=hang) echo "[    1.000000] fake: hanging in init" >> "$CON"; sleep 300 & wait; exit 0 ;;
  esac
done
exit 0
"""


@pytest.fixture
def fake(tmp_path, monkeypatch, cache):
    script = tmp_path / "fake-qemu"
    script.write_text(FAKE_QEMU)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setitem(qemu.ARCHES, "fake", dataclasses.replace(
        arches.get("x86_64"), name="fake", qemu=str(script), machine="pc", qemu_package="none"))
    img = tmp_path / "bzImage"
    img.write_bytes(b"k")

    def spec(name, mode, timeout=30, **kw):
        return matrix.GuestSpec(name, "fake", img, tmp_path, tmp_path, config=name,
                                cmdline=mode, timeout=timeout,
                                options={"with_module": False, "busybox": Path("/bin/busybox")},
                                **kw)
    return spec


def test_pass_and_outputs(fake, tmp_path):
    m = matrix.run([fake("a", "fake=pass")], tmp_path / "m", jobs=2)
    assert m.passed, m.results[0].failures
    r = m.results[0]
    assert r.verdict == "pass" and r.boot.counts.passed == 3 and r.boot.counts.skipped == 1
    for f in ("results.ktap", "junit.xml", "summary.txt", "matrix.json"):
        assert (tmp_path / "m" / f).is_file(), f
    assert (tmp_path / "m" / "a" / "junit.xml").is_file()
    assert "Linux version fake" in (tmp_path / "m" / "a" / "console.log").read_text()
    doc = boot.ktap.parse((tmp_path / "m" / "results.ktap").read_text(), prefix="")
    assert doc.ok and [t.name for t in doc.root.subtests] == ["a"]
    assert [t.name for t in doc.root.subtests[0].subtests] == \
        ["slabconv_test", "slub_validate", "module_unload"]


def test_hang_is_a_failure_with_the_console_tail(fake, tmp_path):
    m = matrix.run([fake("hangs", "fake=hang", timeout=3), fake("fine", "fake=pass")],
                   tmp_path / "m", jobs=2)
    r = m.by_name()
    assert not m.passed
    assert r["fine"].passed
    h = r["hangs"]
    assert h.verdict == "HANG" and h.boot.timed_out
    assert h.failures[0].startswith("hang/timeout: guest still running after 3s")
    assert "fake: hanging in init" in h.failures[0]
    assert h.seconds >= 3            # killed at its timeout, not before
    x = ET.fromstring((tmp_path / "m" / "junit.xml").read_text())
    case = x.find("./testsuite[@name='hangs']/testcase[@name='boot']")
    f = case.find("failure")
    assert f.get("type") == "hang/timeout" and "fake: hanging in init" in f.text
    text = (tmp_path / "m" / "summary.txt").read_text()
    assert "HANG" in text and "hangs: hang/timeout" in text


def test_each_guest_has_its_own_timeout(fake, tmp_path):
    m = matrix.run([fake("short", "fake=sleep6 fake=pass", timeout=2),
                    fake("long", "fake=sleep6 fake=pass", timeout=40)],
                   tmp_path / "m", jobs=2)
    r = m.by_name()
    assert r["short"].verdict == "HANG"
    assert r["long"].passed, r["long"].failures


def test_parallel_slots(fake, tmp_path):
    specs = [fake(f"g{i}", "fake=sleep3 fake=pass") for i in range(4)]
    m2 = matrix.run(specs, tmp_path / "m2", jobs=2)
    assert m2.passed
    # two at a time: at every guest's start at most one other was running,
    # and two guests overlapped
    def running_at(t, results):
        return sum(r.start <= t < r.end for r in results)
    assert max(running_at(r.start, m2.results) for r in m2.results) == 2
    a, b = m2.results[0], m2.results[1]
    assert a.start < b.end and b.start < a.end
    m1 = matrix.run(specs[:2], tmp_path / "m1", jobs=1)
    a, b = m1.results
    assert b.start >= a.end - 0.05          # one after another


def test_boot_fn_concurrency_limit(tmp_path):
    live, peak, lock = [0], [0], threading.Lock()

    class R:
        passed, timed_out, failures, ktap, seconds = True, False, [], "", 0.2
        counts = boot.ktap.Counts(1, 0, 0, 0)

    def fn(*a, **kw):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.2)
        with lock:
            live[0] -= 1
        return R()
    specs = [matrix.GuestSpec(f"g{i}", "x86_64", tmp_path, tmp_path, tmp_path) for i in range(6)]
    m = matrix.run(specs, tmp_path / "m", jobs=3, boot_fn=fn, write=False)
    assert m.passed and peak[0] == 3


def test_error_of_one_guest_does_not_stop_the_others(fake, tmp_path):
    bad = fake("bad", "fake=pass")
    bad.image = tmp_path / "missing-bzImage"
    m = matrix.run([bad, fake("good", "fake=pass")], tmp_path / "m", jobs=2)
    r = m.by_name()
    assert r["bad"].verdict == "ERROR" and "not found" in r["bad"].error
    assert r["good"].passed and not m.passed
    x = ET.fromstring((tmp_path / "m" / "junit.xml").read_text())
    assert x.find("./testsuite[@name='bad']/testcase[@name='boot']/failure").get("type") == "error"


def test_bad_specs(tmp_path):
    with pytest.raises(SlabconvError) as e:
        matrix.run([], tmp_path)
    assert e.value.exit_code == 2
    s = matrix.GuestSpec("x", "x86_64", tmp_path, tmp_path, tmp_path)
    with pytest.raises(SlabconvError) as e:
        matrix.run([s, s], tmp_path)
    assert "unique" in str(e.value) and e.value.exit_code == 2


def test_junit_console_finding_and_ktap_failures(fake, tmp_path):
    m = matrix.run([fake("bug", "fake=slubbug"), fake("fails", "fake=fail"),
                    fake("ok", "fake=pass")], tmp_path / "m", jobs=2)
    r = m.by_name()
    assert not r["bug"].passed and not r["fails"].passed and r["ok"].passed
    x = ET.fromstring((tmp_path / "m" / "junit.xml").read_text())
    assert x.tag == "testsuites"
    assert [s.get("name") for s in x.findall("testsuite")] == ["bug", "fails", "ok"]
    # the SLUB report: a console failure with its excerpt
    f = x.find("./testsuite[@name='bug']/testcase[@name='console']/failure")
    assert f is not None and "[slub]" in f.get("message")
    assert "Freepointer corrupt" in f.text and "objects=21 used=21" in f.text
    # nested KTAP tests are testcases, with the parent's path as classname
    ok = x.find("./testsuite[@name='ok']")
    names = {(c.get("classname"), c.get("name")) for c in ok.findall("testcase")}
    assert ("ok.slabconv_test", "kmalloc_sizes") in names
    assert ("ok", "slabconv_test") in names and ("ok", "boot") in names
    sk = ok.find("./testcase[@name='slub_validate']/skipped")
    assert sk is not None and sk.get("message") == "no cache has a validate file"
    assert ok.get("failures") == "0" and ok.get("skipped") == "1"
    assert int(ok.get("tests")) == len(ok.findall("testcase")) == 8
    fl = x.find("./testsuite[@name='fails']")
    failed = {c.get("name") for c in fl.findall("testcase") if c.find("failure") is not None}
    # 'ktap': the fake's slabconv_test is "ok" with a failed subtest
    assert failed == {"kfree_bulk", "slabconv_test", "module_unload", "ktap"}
    assert fl.find("./testcase[@name='slabconv_test']/failure").text.count("kfree_bulk")
    assert int(x.get("failures")) == sum(int(s.get("failures")) for s in x.findall("testsuite"))
    # per guest file: the same suite alone
    one = ET.fromstring((tmp_path / "m" / "bug" / "junit.xml").read_text())
    assert [s.get("name") for s in one.findall("testsuite")] == ["bug"]


def test_summary_fits_one_screen(fake, tmp_path):
    specs = [fake(n, "fake=pass") for n in ("slub", "slab", "slob", "slub-i386", "kasan",
                                            "memcg", "iommu")]
    specs[2].cmdline = "fake=fail"
    m = matrix.run(specs, tmp_path / "m", jobs=2)
    text = summary.render(m)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= 200
    assert lines[0].split()[:4] == ["config", "arch", "result", "pass"]
    row = next(x for x in lines if x.startswith("slob "))
    assert "FAIL" in row and row.endswith("slob/console.log")
    assert any(x.startswith("  slob: ") for x in lines)
    assert "6 of 7 guests passed" in lines[-2]


def test_busybox_per_arch():
    from boot import busybox
    assert busybox.elf_arch(busybox.for_arch("x86_64")) == (2, 62)     # ELFCLASS64, x86-64
    assert busybox.elf_arch(Path(__file__)) is None
    with pytest.raises(SlabconvError) as e:
        busybox.for_arch("sparc")
    assert e.value.exit_code == 2


def test_pipeline_guest_specs(tmp_path):
    from cli import apply, boots

    class B:
        ok, image = True, tmp_path / "bzImage"

    class VR:
        config, patched, patched_out, patched_src = "slub-i386", B(), tmp_path, tmp_path
    s = boots.guest_spec(VR())
    assert (s.name, s.arch, s.slub_debug) == ("slub-i386", "i386", "FZPU")
    VR.config = "kasan"
    s = boots.guest_spec(VR())
    assert s.slub_debug is None and "kasan_multi_shot" in s.cmdline and s.timeout > 120
    VR.config = "slob"
    assert boots.guest_spec(VR()).slub_debug is None
    assert apply.asked_configs(type("A", (), {"config": "+kasan"})(), "boot") == \
        ["slub", "slab", "slob", "slub-i386", "kasan"]
    assert apply.asked_configs(type("A", (), {"config": None})(), "boot") == \
        ["slub", "slab", "slob", "slub-i386"]
