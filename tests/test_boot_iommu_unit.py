"""The IOMMU guest's plumbing, without a kernel: QEMU arguments, the disk
image and its checksum, the boot variants of the iommu configuration, the
console's DMA-fault findings and the nesting of test 9's KTAP.  The guest
checks themselves are tests/test_boot_iommu.py's (slow)."""
import hashlib
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boot import console, iommu, ktap, qemu  # noqa: E402
from cli import boots  # noqa: E402
from base.log import SlabconvError  # noqa: E402


def test_strict_guest_devices_and_parameters(cache):
    args, params = iommu.setup("intel-strict")
    devices = [args[i + 1] for i, a in enumerate(args) if a == "-device"]
    assert devices[0] == "intel-iommu,intremap=off"          # before what it translates
    assert devices[1].startswith("virtio-blk-pci,") and "iommu_platform=on" in devices[1]
    assert "disable-legacy=on" in devices[1]
    drive = args[args.index("-drive") + 1]
    assert "readonly=on" in drive and "format=raw" in drive
    image = Path(drive.split("file=", 1)[1].split(",if=")[0])
    assert image.stat().st_size == iommu.DISK_MIB << 20
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    assert params.split() == ["intel_iommu=on,strict", "slabconv.iommu=intel",
                              f"slabconv.iommu_disk={digest}"]
    # lazy: the same devices, the flush queue left on
    args2, params2 = iommu.setup("intel")
    assert args2 == args and params2.split()[0] == "intel_iommu=on"


def test_disk_pattern_blocks_differ():
    data = iommu.pattern(64 << 10)
    blocks = {data[i:i + 4096] for i in range(0, len(data), 4096)}
    assert len(data) == 64 << 10 and len(blocks) == 16
    assert iommu.pattern(4096) == data[:4096]                  # reproducible


def test_unknown_iommu_is_bad_usage():
    with pytest.raises(SlabconvError) as e:
        iommu.setup("arm-smmu")
    assert e.value.exit_code == 2


def test_qemu_devices_go_before_the_kernel():
    cmd = qemu.command(Path("/k"), Path("/i"), "console=ttyS0", console_log=Path("/c"),
                       ktap_log=Path("/t"), devices=["-device", "intel-iommu,intremap=off"])
    assert cmd.index("intel-iommu,intremap=off") < cmd.index("-kernel")
    assert cmd[-2:] == ["-append", "console=ttyS0"]
    plain = qemu.command(Path("/k"), Path("/i"), "", console_log=Path("/c"), ktap_log=Path("/t"))
    assert "-device" not in plain and "-drive" not in plain


def test_iommu_configuration_boots_strict_lazy_and_amd(monkeypatch, tmp_path):
    from verify.gates import Gates
    assert boots.boot_variants("slub") == [""]
    assert boots.boot_variants("iommu") == ["", "lazy", "amd"]
    calls = []

    def fake_run(image, out_dir_build, src, out, **kw):
        calls.append((Path(out).name, kw))
        doc = "KTAP version 1\n1..1\nok 1 - fake\n"
        return boot.BootResult(passed=True, ktap=doc, console_log=Path(out) / "console.log",
                               seconds=1.0, failures=[], counts=ktap.parse(doc).counts)

    import boot
    from boot import ktap
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path))
    built = SimpleNamespace(ok=True, image=Path("/bz"))
    vr = SimpleNamespace(config="iommu", patched=built, patched_out=Path("/o"),
                         patched_src=Path("/s"))
    res = boots.boot_all(Gates("5.10", "linux-source-5.10_test", 1, builds=[vr]), "t")
    assert list(res) == ["iommu", "iommu-lazy", "iommu-amd"]
    assert all(r.passed for r in res.values())
    # the matrix boots every variant, each in its own run directory
    assert sorted((n, kw["iommu"], kw["slub_debug"]) for n, kw in calls) == [
        ("iommu", "intel-strict", "FZPU"), ("iommu-amd", "amd", "FZPU"),
        ("iommu-lazy", "intel", "FZPU")]


def test_console_names_dma_remapping_faults(tmp_path):
    log = tmp_path / "console.log"
    log.write_text(
        "[    3.1] slabconv-iommu-ktap: not ok 5 - pagetables_no_leak # 1024 pages missing\n"
        "[    3.2] DMAR: DRHD: handling fault status reg 2\n"
        "[    3.2] DMAR: [DMA Read] Request device [00:03.0] PASID ffffffff fault addr "
        "7fe00000 [fault reason 06] PTE Read access is not set\n")
    kinds = [(f.kind, f.line_no) for f in console.scan(log)]
    assert kinds == [("iommu-fault", 2), ("iommu-fault", 3)]


IOMMU_DOC = """KTAP version 1
1..1
    KTAP version 1
    1..4
    ok 1 - dmar_active
    ok 2 - disk_dma
        KTAP version 1
        1..5
        ok 1 - iommu_enabled
        ok 2 - device_translated
        ok 3 - pagetables_built
        ok 4 - pagetables_freed_on_unmap
        {leak} 5 - pagetables_no_leak{why}
    {leak} 3 - pagetables{why3}
    ok 4 - no_dmar_faults
{leak} 1 - iommu{why9}
"""


def test_test9_nesting_carries_a_leak_to_the_top():
    good = ktap.parse(IOMMU_DOC.format(leak="ok", why="", why3="", why9=""))
    assert good.ok and good.counts.passed == 8
    bad = ktap.parse(IOMMU_DOC.format(
        leak="not ok", why=" # 1024 pages missing (leaked; tolerance 32)",
        why3=" # 1 of 5 slabconv_iommu cases failed", why9=" # pagetables failed"))
    assert not bad.ok
    assert bad.failures() == [
        "iommu.pagetables.pagetables_no_leak: not ok # 1024 pages missing (leaked; tolerance 32)"]
