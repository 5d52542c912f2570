"""Configurations per kernel version and the reference runs, without a kernel
build: version overlays, configurations a tree cannot build (not applicable,
said with the reason), the reference plan, boots and their records (boot.run
faked)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from base import paths  # noqa: E402
from cli import apply, checks, reference  # noqa: E402
from base.log import SlabconvError  # noqa: E402
from regen.source import resolve, series_dir, Source  # noqa: E402
from tests.helpers import table_with  # noqa: E402
from verify import configtable, kconfig  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def fake_tree(root: Path, version: str, symbols=()) -> Path:
    """A tree with a Makefile of `version` and mm/Kconfig defining `symbols`."""
    major, minor = version.split(".")
    root.mkdir(parents=True)
    (root / "Makefile").write_text(f"VERSION = {major}\nPATCHLEVEL = {minor}\nSUBLEVEL = 0\n")
    (root / "Kconfig").write_text("source \"mm/Kconfig\"\n")
    (root / "mm").mkdir()
    (root / "mm" / "Kconfig").write_text(
        "".join(f"config {s}\n\tbool \"{s}\"\n\n" for s in symbols)
        + "config SLAB_MERGE_DEFAULT\n\tbool\n")   # SLAB_... must not count as SLAB
    return root


# ---- versions and overlays -------------------------------------------------

def test_tree_version(tmp_path):
    assert kconfig.tree_version(fake_tree(tmp_path / "t", "6.12")) == "6.12"
    assert kconfig.tree_version(tmp_path / "none") == ""


def test_overlay_follows_its_fragment_on_its_version_only():
    assert kconfig.config_fragments("kasan") == ["base-x86_64", "slub", "kasan"]
    assert kconfig.config_fragments("kasan", "5.10") == ["base-x86_64", "slub", "kasan"]
    f = kconfig.config_fragments("slub-nodebug", "6.12")
    assert f[:2] == ["base-x86_64", "slub"]
    assert Path(f[2]) == kconfig.CONFIGS_DIR / "6.12" / "slub.config"
    assert f[3:6] == ["slub-nodebug", "faultinject", "failslab"]
    # 6.12's tinyconfig selects SLUB_TINY: the slub fragment turns it off there
    req = kconfig.requested_values(f)
    assert req["CONFIG_SLUB_TINY"] == "n" and req["CONFIG_SLUB_DEBUG"] == "n"
    assert kconfig.requested_values(kconfig.config_fragments("slub", "6.12"))[
        "CONFIG_SLUB_DEBUG"] == "y"


def test_overlay_changes_the_build_key_of_its_version_only():
    import verify
    k510 = verify.build_key("slub", "id", version="5.10")
    assert k510 == verify.build_key("slub", "id")      # 5.10 keys as before
    assert verify.build_key("slub", "id", version="6.12") != k510
    d = kconfig.inputs_digest(kconfig.config_fragments("slub", "6.12"), "x86_64")
    assert d != kconfig.inputs_digest(kconfig.config_fragments("slub"), "x86_64")


def test_every_overlay_overrides_a_fragment_that_exists():
    for o in kconfig.CONFIGS_DIR.glob("*/*.config"):
        assert (kconfig.CONFIGS_DIR / o.name).is_file(), f"{o} overlays no fragment"
        assert kconfig.parse_config(o.read_text()), f"{o} sets nothing"


# ---- applicable or not -------------------------------------------------------

def test_allocators_by_kconfig(tmp_path):
    t510 = fake_tree(tmp_path / "a", "5.10", ["SLAB", "SLUB", "SLOB", "KASAN", "KASAN_GENERIC"])
    t612 = fake_tree(tmp_path / "b", "6.12", ["SLUB", "SLUB_TINY", "KASAN", "KASAN_GENERIC"])
    ok, na = kconfig.split_applicable(["slub", "slab", "slob", "slub-tiny", "kasan"], t510)
    assert ok == ["slub", "slab", "slob", "kasan"] and list(na) == ["slub-tiny"]
    assert "CONFIG_SLUB_TINY" in na["slub-tiny"] and "added in Linux 6.2" in na["slub-tiny"]
    ok, na = kconfig.split_applicable(["slub", "slab", "slob", "slub-tiny"], t612)
    assert ok == ["slub", "slub-tiny"]
    assert "not applicable to Linux 6.12" in na["slab"] and "CONFIG_SLAB " in na["slab"] + " "
    assert "removed in Linux 6.8" in na["slab"] and "removed in Linux 6.4" in na["slob"]


def test_configure_named_refuses_a_config_the_tree_lacks(tmp_path):
    t = fake_tree(tmp_path / "t", "6.12", ["SLUB"])
    with pytest.raises(kconfig.NotApplicable) as e:
        kconfig.configure_named(t, tmp_path / "o", "slob")
    assert e.value.exit_code == 2 and "CONFIG_SLOB" in str(e.value)
    assert not (tmp_path / "o").exists()          # nothing configured or built


def test_unknown_config_is_bad_usage(tmp_path):
    with pytest.raises(SlabconvError) as e:
        kconfig.applicable("nope", fake_tree(tmp_path / "t", "6.1"))
    assert e.value.exit_code == 2


def test_pipeline_drops_configs_the_tree_lacks(tmp_path, capsys):
    src = Source(fake_tree(tmp_path / "t", "6.12", ["SLUB"]), "6.12", "fake", True)
    assert apply.applicable_configs(src, ["slub", "slab", "slob"]) == ["slub"]
    err = capsys.readouterr().err
    assert "[verify] slab: not applicable" in err and "[verify] slob: not applicable" in err
    with pytest.raises(SlabconvError) as e:
        apply.applicable_configs(src, ["slab"])
    assert e.value.exit_code == 2


@pytest.mark.parametrize("version,have,lack", [
    ("5.10", {"slub", "slab", "slob", "kasan"}, {"slub-tiny"}),
    ("6.1", {"slub", "slab", "slob", "kasan"}, {"slub-tiny"}),
    ("6.12", {"slub", "slub-tiny", "kasan"}, {"slab", "slob"}),
])
@pytest.mark.network
@pytest.mark.slow
def test_real_trees(version, have, lack):
    """The packaged trees themselves (fetched into the cache when missing)."""
    ok, na = kconfig.split_applicable(sorted(have | lack), resolve(version, None).tree)
    assert set(ok) == have and set(na) == lack


# The configurations whose Kconfig dependencies differ between the packaged
# kernels (version overlays in verify/configs/<version>/) or that only
# verify's changed-lines coverage builds: each applicable one must resolve
# with every option it asks for, on every packaged kernel.
OVERLAID = ("kasan", "mm-users", "sparsemem-i386", "slab-kasan", "slob-numa", "layout-x86_64")


@pytest.mark.parametrize("version", ["5.10", "6.1", "6.12"])
@pytest.mark.network
@pytest.mark.slow
def test_overlaid_configs_resolve_on_every_packaged_kernel(version, tmp_path):
    tree = resolve(version, None).tree
    ok, na = kconfig.split_applicable(list(OVERLAID), tree)
    assert set(na) == ({"slab-kasan", "slob-numa"} if version == "6.12" else set())
    for c in ok:        # raises, naming the options Kconfig dropped, if one does not stick
        kconfig.configure_named(tree, tmp_path / c, c)
        cfg = (tmp_path / c / ".config").read_text()
        if c == "sparsemem-i386":
            assert "\nCONFIG_NUMA=y\n" in cfg and "\nCONFIG_SPARSEMEM=y\n" in cfg
            assert "\nCONFIG_NODES_SHIFT=6\n" in cfg   # the node does not fit in the flags
            assert "\nCONFIG_SPARSEMEM_VMEMMAP=y\n" not in cfg
            assert "\n# CONFIG_SLAB_FREELIST_RANDOM is not set\n" in cfg


# ---- where the series is read from ------------------------------------------

def test_series_dir(tmp_path, cache):
    s510 = Source(tmp_path, "5.10", "linux-source-5.10_x", True)
    assert series_dir(s510) == paths.GENERATED / "5.10"
    s61 = Source(tmp_path, "6.1", "linux-source-6.1_6.1.192-3", True)
    assert not (paths.GENERATED / "6.1" / "SOURCE").exists()
    assert series_dir(s61) == cache.resolve() / "out" / s61.source_id / "patches"
    assert series_dir(s61, str(tmp_path / "x")) == (tmp_path / "x").resolve()


# ---- the reference run (builds and boots faked) --------------------------------

class FakeBuild:
    def __init__(self, ok, image):
        self.ok, self.image, self.seconds, self.log = ok, image, 12.0, Path("/log")

    def failure_message(self, what="kernel build"):
        return f"{what} failed"


class FakeBoot:
    def __init__(self, passed, out_dir):
        from boot import ktap
        self.passed, self.seconds, self.out_dir = passed, 5.0, Path(out_dir)
        self.counts = ktap.parse("KTAP version 1\n1..2\nok 1 - a\n"
                                 + ("ok 2 - b\n" if passed else "not ok 2 - b\n")).counts
        self.module_tests = 26
        self.failures = [] if passed else ["ktap: not ok 2 - b"]
        self.ktap = "KTAP version 1\n"
        self.timed_out, self.findings = False, []

    def summary(self):
        return "PASS" if self.passed else "FAIL"


@pytest.fixture
def fake_ref(tmp_path, cache, monkeypatch):
    """A 6.12-like tree; build_one and boot.run faked (boot.run records its kwargs)."""
    import boot
    src = Source(fake_tree(tmp_path / "t", "6.12", ["SLUB", "SLUB_TINY"]), "6.12",
                 "linux-source-6.12_fake", True)
    built, booted = [], []

    def build_one(s, config, out_root, jobs=2):
        built.append(config)
        d = out_root / f"reference-{config}-x"
        return FakeBuild(config != "broken", d / "bzImage"), d, d / "tree", False

    def run(image, build_dir, src_dir, out_dir, **kw):
        booted.append((image, build_dir, src_dir, kw))
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "summary.json").write_text(json.dumps({"image": str(image)}))
        return FakeBoot("slabconv.inject=fail" not in kw.get("cmdline_extra", ""), out_dir)

    monkeypatch.setattr(reference, "build_one", build_one)
    monkeypatch.setattr(boot, "run", run)
    return src, built, booted


def test_plan_builds_what_applies_and_describes_each_guest(fake_ref):
    src, built, _ = fake_ref
    p = reference.plan(src, ["slub", "slab", "slob", "slub-tiny"])
    assert built == ["slub", "slub-tiny"]
    assert set(p.not_applicable) == {"slab", "slob"}
    g = {x.config: x for x in p.guests}
    name, image, bdir, s, config, kw = g["slub"].as_tuple()
    assert (name, config) == ("reference-slub", "slub")
    assert bdir.name == "o" and s == bdir.parent and image.name == "bzImage"
    assert kw["slub_debug"] == "FZPU" and kw["timeout"] == configtable.table().reference_timeout
    assert g["slub-tiny"].boot_kwargs["slub_debug"] is None   # SLUB_TINY has no slub_debug


def test_a_reference_guest_gets_its_configurations_timeout_and_at_least_the_floor():
    floor = configtable.table().reference_timeout
    assert reference.boot_kwargs("kasan")["timeout"] == configtable.get("kasan").timeout == 300
    assert reference.boot_kwargs("slub")["timeout"] == floor == 180
    assert all(reference.boot_timeout(c) == max(floor, configtable.get(c).timeout)
               for c in configtable.all_names())


def test_boots_are_recorded_as_reference_not_as_the_series(fake_ref, cache):
    from report import results as R
    src, _, booted = fake_ref
    p = reference.plan(src, ["slub"])
    boots = reference.boot_guests(p.guests, src)
    assert boots["slub"].passed and booted[0][3]["slub_debug"] == "FZPU"
    rec = R.latest("6.12", "boot-reference-slub")
    assert rec["series"] == "reference" and rec["patches"] == 0 and rec["reference"]
    assert rec["source"] == "linux-source-6.12_fake" and rec["data"]["passed"] is True
    assert R.latest("6.12", "boot-slub") is None
    run = Path(rec["data"]["run_dir"])
    assert (run.parent.name, run.name) == ("reference-6.12", "slub")
    assert (run.parent / "junit.xml").is_file()           # through the boot matrix


def test_a_failed_reference_boot_fails_the_run_and_is_named(fake_ref, monkeypatch, capsys):
    """Planted: a guest told to fail (inject=fail) fails the whole reference
    run (exit 1), and the summary names the configuration and the failure."""
    src, _, _ = fake_ref
    real = reference.boot_kwargs
    monkeypatch.setattr(reference, "boot_kwargs", lambda c: dict(
        real(c), cmdline_extra=(real(c)["cmdline_extra"] + " slabconv.inject=fail").strip()))
    import regen.source
    monkeypatch.setattr(regen.source, "resolve", lambda *a: src)
    args = type("A", (), dict(kernel="6.12", tree=None, deb_version=None,
                              config="slub,slab", jobs=2))
    assert reference.cmd_reference(args) == 1
    out = capsys.readouterr().out
    assert "reference 6.12 (linux-source-6.12_fake): FAIL" in out
    assert "slub       FAIL" in out and "ktap: not ok 2 - b" in out
    assert "slab       not applicable" in out
    s = json.loads((paths.cache_root() / "runs" / "reference-6.12.json").read_text())
    assert s["ok"] is False and s["configs"]["slub"]["status"] == "FAIL"
    assert s["configs"]["slab"]["status"] == "not applicable"


def test_a_build_failure_is_reported_not_booted(fake_ref, tmp_path, monkeypatch):
    src, _, booted = fake_ref
    table_with(tmp_path, monkeypatch, '[broken]\narch = "x86_64"\nallocator = "slub"\n'
                                      'fragments = ["base-x86_64", "slub"]\n')
    p = reference.plan(src, ["slub", "broken"])
    assert [g.config for g in p.guests] == ["slub"] and "broken" in p.failed
    s = reference.summary(src, p, reference.boot_guests(p.guests, src), 1.0)
    assert s["ok"] is False and s["configs"]["broken"]["status"] == "build FAILED"


def test_nothing_applicable_is_bad_usage(fake_ref, monkeypatch):
    src, built, _ = fake_ref
    import regen.source
    monkeypatch.setattr(regen.source, "resolve", lambda *a: src)
    args = type("A", (), dict(kernel="6.12", tree=None, deb_version=None,
                              config="slab,slob", jobs=2))
    with pytest.raises(SlabconvError) as e:
        reference.cmd_reference(args)
    assert e.value.exit_code == 2 and built == []


def test_review_does_not_list_reference_boots_as_the_series():
    from report.review import Review
    rv = Review.__new__(Review)
    rv.results = {"boot-slub": None, "boot-reference-slub": None, "boot-kasan": None}
    assert Review.configs(rv, "boot-", ("slub", "slab")) == ["slub", "slab", "kasan"]


# ---- the guest: what it tells init, and init's reading of it -------------------

def test_init_reads_the_module_allocator_line():
    """init.sh's sed expressions on the line the module prints (format kept in sync)."""
    src = (REPO / "boot" / "guest" / "slabconv_test.c").read_text()
    assert ('"# allocator %s, memcg_kmem %d, hardened_usercopy %d, slub_debug %d, '
            'slub_tiny %d, linux %d.%d\\n"') in src
    line = "# allocator SLUB, memcg_kmem 1, hardened_usercopy 1, slub_debug 0, slub_tiny 1, linux 6.12"
    init = (REPO / "boot" / "guest" / "init.sh").read_text()
    got = {}
    for var in ("ALLOC", "MEMCG_KMEM", "SLUB_DEBUG"):
        expr = next(x for x in init.splitlines() if x.startswith(f"{var}=$(sed -n "))
        sed = expr[len(f"{var}=$("):].split(" /tmp/mod.ktap")[0]
        got[var] = subprocess.run(["sh", "-c", sed], input=line + "\n", text=True,
                                  capture_output=True).stdout.strip()
    assert got == {"ALLOC": "SLUB", "MEMCG_KMEM": "1", "SLUB_DEBUG": "0"}


def test_guest_version_guards():
    """The guards the reference kernels need are in the module, and every case
    that may not exist on a kernel says so with a SKIP, not by vanishing."""
    src = (REPO / "boot" / "guest" / "slabconv_test.c").read_text()
    assert '#define KASAN_UAF\t"slab-use-after-free"' in src
    assert "KERNEL_VERSION(6, 3, 0)" in src and "KERNEL_VERSION(6, 1, 0)" in src
    assert 'SKIPPED(c, "kmem_valid_obj()/mem_dump_obj() exist only from Linux 5.12")' in src
    cases = src.split("static const struct test_case cases[] = {")[1].split("};")[0]
    assert cases.count("{ \"") == 29            # no case dropped on any kernel
    assert "#if" not in cases                    # the table is the same everywhere
    iommu = (REPO / "boot" / "guest" / "slabconv_iommu.c").read_text()
    # 6.1 moved <linux/intel-iommu.h> into drivers/iommu/intel/ (the module
    # did not build for the 6.1 reference's iommu guest)
    assert "#if __has_include(<linux/intel-iommu.h>)" in iommu
    # 6.10: dma-iommu is called directly (dev->dma_iommu), not through
    # dma_map_ops; 5.15: the lazy DMA domain has its own type (DMA-FQ)
    assert "KERNEL_VERSION(6, 10, 0) && IS_ENABLED(CONFIG_IOMMU_DMA)" in iommu
    assert "#ifdef IOMMU_DOMAIN_DMA_FQ" in iommu
    # 6.2: ksize() no longer hands the caller the bytes past the request
    assert "LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0) ? n : k[0]" in src


# ---- the residue gate on a kernel converted upstream ----------------------------

def test_residue_gate_counts_only_what_the_series_adds_on_a_converted_kernel():
    from verify.residue import Classified, Finding

    def nal(file, fn, text, line=1):
        return Classified(Finding(file, line, 0, "call", fn, text), False, "no allow entry", None)

    class RR:
        def __init__(self, xs):
            self.not_allowed = xs
    upstream = [nal("mm/slab.h", "slab_order", "compound_order(page)"),
                nal("mm/slob.c", "slob_page_alloc", "sp_page(x)")]
    after = [nal("mm/slab.h", "slab_order", "compound_order(page)", 90),   # moved: still theirs
             nal("mm/slob.c", "slob_page_alloc", "sp_page(x)"),
             nal("mm/slob.c", "slob_page_alloc", "sp_page(x)"),            # planted: one more
             nal("mm/slub.c", "kfree", "virt_to_page(x)->freelist")]        # planted: new
    got = checks.residue_gate(RR(after), RR(upstream))
    assert [(c.finding.file, c.finding.text) for c in got] == [
        ("mm/slob.c", "sp_page(x)"), ("mm/slub.c", "virt_to_page(x)->freelist")]
    # without a converted baseline (5.10) every use NOT allowed counts
    assert len(checks.residue_gate(RR(after))) == 4


def test_a_configuration_with_boot_variants_is_built_once_and_booted_in_each(fake_ref, monkeypatch):
    """iommu is booted Intel strict, Intel lazy and AMD (its boot variants)
    in the reference run too: one build, three guests, each named and
    summarised."""
    from verify import kconfig
    src, built, booted = fake_ref
    monkeypatch.setattr(kconfig, "split_applicable", lambda configs, tree: (list(configs), {}))
    p = reference.plan(src, ["slub", "iommu"])
    assert built == ["slub", "iommu"]
    assert [g.key for g in p.guests] == ["slub", "iommu", "iommu-lazy", "iommu-amd"]
    assert [g.name for g in p.guests] == ["reference-slub", "reference-iommu",
                                          "reference-iommu-lazy", "reference-iommu-amd"]
    boots = reference.boot_guests(p.guests, src)
    assert set(boots) == {"slub", "iommu", "iommu-lazy", "iommu-amd"}
    modes = sorted(kw.get("iommu") or "" for *_, kw in booted)
    assert modes == ["", "amd", "intel", "intel-strict"]
    s = reference.summary(src, p, boots, 1.0)
    assert s["ok"] and set(s["configs"]) == {"slub", "iommu", "iommu-lazy", "iommu-amd"}


def _init_block(start: str, end: str, after: str = "") -> str:
    init = (REPO / "boot" / "guest" / "init.sh").read_text()
    i = init.index(start, init.index(after) if after else 0)
    return init[i:init.index(end, i)]


@pytest.mark.parametrize("release, sanity, expect", [
    ("6.1.0-slabconv", "0", ("", "validates only those", "2 cache(s) without consistency checks")),
    ("5.10.0-slabconv", "0", ("validate write failed for: a b", "", "")),   # 5.10 validates all
    ("6.12.0-slabconv", "1", ("validate write failed for: a b", "", "")),   # a debug cache fails
])
def test_init_validate_on_kernels_that_validate_debug_caches_only(tmp_path, release, sanity,
                                                                  expect):
    """init.sh's validate test (test 2) with a fake /sys/kernel/slab whose
    writes fail: from 5.17 a cache without consistency checks refuses
    validate (EINVAL), which is said, not failed; on 5.10, or on a debug
    cache, a failed write is a failure."""
    slab = tmp_path / "slab"
    for c in ("a", "b"):
        (slab / c / "validate").mkdir(parents=True)       # writing to it fails
        (slab / c / "sanity_checks").write_text(sanity + "\n")
    block = _init_block("# ---- 2: SLUB validate", "ERR=$(slab_reports")
    script = (f'uname() {{ echo "{release}"; }}\nusleep() {{ :; }}\nktap() {{ echo "KTAP $*"; }}\n'
              + block.replace("/sys/kernel/slab", str(slab))
              + '\necho "R2=$R2"\necho "S2=$S2"\n')
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout
    r2 = out.split("R2=")[1].splitlines()[0]
    s2 = out.split("S2=")[1].splitlines()[0]
    assert r2 == expect[0]
    assert (expect[1] in s2) if expect[1] else s2 == ""
    assert expect[2] in out


@pytest.mark.parametrize("result", ["ok 1 - kasan", "ok 1 kasan"])
def test_init_finds_the_kasan_suite_result_with_or_without_the_dash(result):
    """5.10's KUnit prints "ok 1 - kasan", 6.1's "ok 1 kasan": init.sh's
    extraction of the suite (test 8) and the console scan take both."""
    block = _init_block("kunit_lift() {", "# kunit_nest ",
                        after="# ---- 8: the kernel's KASAN KUnit suite")
    pipeline_sh = block + "\nkunit_lift kasan\n"
    dmesg = ("[    3.0]     # Subtest: kasan\n[    3.0]     1..1\n"
             "[    3.1]     ok 1 kmalloc_oob_right\n"
             f"[    3.2] # kasan: pass:1 fail:0 skip:0 total:1\n[    3.2] {result}\n")
    out = subprocess.run(["sh", "-c", pipeline_sh], input=dmesg, capture_output=True,
                         text=True).stdout
    assert f"RESULT {result}" in out and "ok 1 kmalloc_oob_right" in out
    from boot import console
    text = ("[    3.0] KTAP version 1\n[    3.0] 1..1\n" + dmesg)
    assert console.scan_text(text) == []
