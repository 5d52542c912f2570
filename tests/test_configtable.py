"""verify/configs.toml, the one table of kernel configurations: today's sets
per check, a configuration added to a copy reaches every consumer, and a
mistake in the file names the file and the line."""
import argparse
import types

import pytest

from base.log import SlabconvError
from cli import apply, boots, main, pipeline, prefetch, reference
from report import mail
from tests.helpers import table_with
from verify import configtable, kconfig, layout


def test_the_sets_each_check_takes():
    n = configtable.names
    assert n("verify") == ("slub", "slab", "slob")
    assert n("per-patch") == ("slub", "slub-nodebug", "slab", "slob")
    arm64 = ("arm64", "arm64-sw-tags", "arm64-sw-tags-slab")
    assert configtable.choices("per-patch") == n("per-patch") + ("kasan", "mm-users", "iommu",
                                                                 *arm64)
    for check in ("verify", "coverage", "boot", "reference"):
        assert configtable.choices(check)[-3:] == arm64, check
    assert {c: x.arch for c, x in configtable.table().configs.items()
            if x.arch == "arm64"} == dict.fromkeys(arm64, "arm64")
    assert configtable.get("arm64-sw-tags").requires == ("KASAN", "KASAN_SW_TAGS")
    assert configtable.get("arm64-sw-tags-slab").requires == ("SLAB", "KASAN", "KASAN_SW_TAGS")
    assert n("runtime") == ("slub", "slab")
    assert n("coverage") == ("slub-nodebug", "kasan", "iommu", "sparsemem-i386", "slab-kasan",
                             "slob-numa")
    assert n("boot") == ("slub", "slab", "slob", "slub-i386")
    assert n("reference") == ("slub", "slab", "slob", "slub-i386", "slub-tiny")
    assert n("main") == ("slub",) and configtable.primary("main") == "slub"
    assert n("layout") == ("layout-x86_64", "layout-x86_64-nomemcg", "layout-i386",
                           "layout-i386-nomemcg")
    t = configtable.table()
    assert {c for c, x in t.configs.items() if x.slub_debug} == {
        "slub", "slub-nodebug", "slub-i386", "iommu", "arm64"}
    assert {c: x.timeout for c, x in t.configs.items() if x.timeout != 120} == {
        "kasan": 300, "slub-i386": 180, "iommu": 180, "arm64": 300, "arm64-sw-tags": 600,
        "arm64-sw-tags-slab": 600}
    assert {c: x.cmdline for c, x in t.configs.items() if x.cmdline} == {
        "kasan": "kasan_multi_shot", "arm64-sw-tags": "kasan_multi_shot",
        "arm64-sw-tags-slab": "kasan_multi_shot"}
    assert {c for c, x in t.configs.items() if x.fault_injection} == {
        "slub", "slub-nodebug", "slab", "slob", "arm64"}
    assert kconfig.config_fragments("slub") == ["base-x86_64", "slub", "faultinject",
                                                "failslab", "slub-kunit"]
    assert configtable.get("slab").requires == ("SLAB",)


NEW = """
[slub-new]
arch = "i386"
allocator = "slub"
fragments = ["base-x86_64", "arch-i386", "slub", "faultinject", "failslab"]
requires = ["SLUB"]
checks = ["verify", "per-patch", "runtime", "coverage", "boot", "reference", "main", "layout"]
boot.slub_debug = true
boot.cmdline = "slabconv.new=1"
boot.qemu = ["-smp", "2"]
boot.timeout = 42.0
boot.variants = { "" = {}, two = { iommu = "intel" } }
"""


def test_a_configuration_added_to_the_table_reaches_every_consumer(tmp_path, monkeypatch, capsys):
    table_with(tmp_path, monkeypatch, NEW)
    # kconfig: arch, fragments, what the tree must have
    assert kconfig.config_arch("slub-new") == "i386" and "slub-new" in kconfig.config_names()
    assert kconfig.config_fragments("slub-new")[1] == "arch-i386"
    tree = tmp_path / "t"
    (tree / "init").mkdir(parents=True)
    (tree / "init" / "Kconfig").write_text("config SLUB\n")
    assert kconfig.applicable("slub-new", tree) == (True, "")
    # every check's default set on the command line
    none = types.SimpleNamespace(config=None)
    for check in ("verify", "boot", "reference", "main"):
        assert "slub-new" in apply.asked_configs(none, check), check
    assert "slub-new" in apply.bisect_configs(types.SimpleNamespace())
    assert "slub-new" in apply.check_options(types.SimpleNamespace())["runtime_configs"]
    args = main.build_parser().parse_args(["verify"])
    for opt in ("bisect_configs", "runtime_configs", "coverage_configs"):
        assert "slub-new" in getattr(args, opt).split(","), opt
    p = argparse.ArgumentParser()
    layout.add_arguments(p)
    assert "slub-new" in p.parse_args([]).configs.split(",")
    # the guest: arch, boot arguments, QEMU options, timeout, variants
    assert boots.boot_args("slub-new") == {"slub_debug": "FZPU",
                                           "cmdline_extra": "slabconv.new=1"}
    assert boots.boot_variants("slub-new") == ["", "two"]
    assert boots.variant_options("slub-new", "two") == {"iommu": "intel"}
    spec = boots.kernel_spec("slub-new", "/bz", "/o", "/s", name="x")
    assert (spec.arch, spec.timeout, spec.qemu_extra) == ("i386", 42.0, ("-smp", "2"))
    assert reference.boot_timeout("slub-new") == 180       # the reference floor
    assert prefetch.guest_arches(apply.asked_configs(none, "boot")) == ["i386", "x86_64"]
    # the main job's closing lines and the mail's order
    g = types.SimpleNamespace(status=lambda: {}, builds=[types.SimpleNamespace(config="slub")])
    lines = pipeline.main_job_lines(g, {})
    assert "slub-new" in lines[1].split("builds in ")[1]
    found = {f"verify-{c}": None for c in ("zz", "slub-new", "slub")}
    assert mail._configs(found, "verify-") == ["slub", "slub-new", "zz"]


@pytest.mark.parametrize("extra, message", [
    ('[bad]\narch = "arm"\nallocator = "slub"\nfragments = ["slub"]\n', "arch 'arm' is not one"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["slub"]\ncolour = 1\n',
     "unknown key(s) colour"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["nosuch"]\n', "nosuch.config"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["slub"]\nchecks = ["boots"]\n',
     "unknown check(s) boots"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["slub"]\nchecks = ["runtime"]\n',
     "fragments need faultinject"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["slub"]\nboot.variants = '
     '{ lazy = {} }\n', 'one of them ""'),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\n', "no fragments"),
    ('[bad]\narch = "x86_64"\nallocator = "slub"\nfragments = ["slub"]\nobjects = -3\n',
     "objects must be a whole number"),
])
def test_a_mistake_names_the_file_and_the_line(tmp_path, monkeypatch, extra, message):
    f = table_with(tmp_path, monkeypatch, extra)
    line = f.read_text().splitlines().index("[bad]") + 1
    with pytest.raises(SlabconvError) as e:
        configtable.get("slub")
    assert str(e.value).startswith(f"{f}:{line}: [bad] ") and message in str(e.value), e.value
    assert e.value.exit_code == 2


def test_a_syntax_error_and_an_unknown_name(tmp_path, monkeypatch):
    with pytest.raises(SlabconvError, match="unknown kernel config 'nope'"):
        configtable.get("nope")
    f = table_with(tmp_path, monkeypatch, "[broken\n")
    with pytest.raises(SlabconvError) as e:
        configtable.table()
    assert str(e.value).startswith(f"{f}: ") and "line" in str(e.value)
