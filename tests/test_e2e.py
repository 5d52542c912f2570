"""End to end on the default kernel (Debian's linux-source-5.10).

Regenerates the series from the rules and checks it is byte-identical to the
committed generated-patches/5.10/; applies the committed series with git am
to a fresh baseline tree; builds baseline and patched kernels (no new
compiler or sparse warnings); boots the patched kernel in QEMU and requires
every in-guest test to pass.  Nothing here is skipped: a missing tool or
kernel is a failure.
"""
import filecmp
import re
from pathlib import Path

import pytest

from regen import series
from regen.worktree import parse_identity
from base import paths
from cli import apply
from report.patches import read_source
from tests.helpers import assert_fault_injection_passed, boot_config
from tests.test_readability import assert_read_the_series
from regen.source import resolve

pytestmark = [pytest.mark.slow, pytest.mark.network]

COMMITTED = paths.GENERATED / paths.DEFAULT_KERNEL
# the checks tests/conftest.py's patched_kernel does not ask verify for
NOT_ASKED = ("per-patch", "object-code", "runtime", "compiled-lines")
# boot/guest/slabconv_test.c's copies that hardened usercopy must refuse
REJECTED_COPIES = ("usercopy_reject_past_end", "usercopy_reject_outside_window",
                   "usercopy_reject_freed_neighbour")


def subjects(patches) -> list[str]:
    """The commit subjects of the series' patch files, as git am makes them."""
    import email
    out = []
    for p in sorted(patches):
        subj = email.message_from_string(Path(p).read_text(errors="replace"))["Subject"]
        out.append(re.sub(r"^\[[^\]]*\]\s*", "", " ".join(str(subj).split())))
    return out


@pytest.fixture(scope="module")
def source():
    return resolve(paths.DEFAULT_KERNEL, None)


def test_committed_series_is_what_the_rules_produce(source, tmp_path, monkeypatch):
    meta = read_source(COMMITTED)
    assert meta, f"{COMMITTED}/SOURCE is missing"
    assert meta["source"] == source.source_id
    monkeypatch.setenv("SLABCONV_DATE", meta["date"])
    out = tmp_path / "series"
    series.regenerate(source.tree, source.source_id, version=source.version, output=out,
                      identity=parse_identity(meta["identity"]))
    committed = sorted(p.name for p in COMMITTED.iterdir())
    produced = sorted(p.name for p in out.iterdir())
    assert produced == committed
    match, mismatch, errors = filecmp.cmpfiles(COMMITTED, out, committed, shallow=False)
    assert not mismatch and not errors, (
        f"generated-patches/{source.version} is stale: {mismatch + errors} differ; run `make regen`")


def test_two_cold_regenerations_are_byte_identical(source, tmp_path, monkeypatch):
    """Determinism: with every spatch run made (no result cache) and commits
    streamed to a git fast-import beside the driver, two regenerations give
    the committed series byte for byte (dates and identity from SOURCE).
    How long they take is make bench's business, not a test's."""
    meta = read_source(COMMITTED)
    monkeypatch.setenv("SLABCONV_DATE", meta["date"])
    monkeypatch.setenv("SLABCONV_SPATCH_CACHE", "0")
    committed = sorted(p.name for p in COMMITTED.iterdir())
    for i in range(2):
        out = tmp_path / f"series{i}"
        series.regenerate(source.tree, source.source_id, version=source.version,
                          output=out, identity=parse_identity(meta["identity"]))
        assert sorted(p.name for p in out.iterdir()) == committed
        match, mismatch, errors = filecmp.cmpfiles(COMMITTED, out, committed, shallow=False)
        assert not mismatch and not errors, f"run {i + 1}: {mismatch + errors} differ"


def test_committed_series_applies_builds_and_boots(patched_verify, patched_kernel):
    vr = patched_kernel
    assert len(vr.applied.patches) == len(list(COMMITTED.glob("[0-9]*.patch"))) - 1 > 0
    assert vr.patched is not None and vr.patched.ok, vr.summary
    assert not vr.new_warnings, vr.summary
    assert vr.sparse is not None and not vr.sparse.new, vr.summary
    assert vr.ok, vr.summary
    # every check of the verdict ran and passed: not "nothing to prove" (the
    # field users, were struct page to keep its slab members), not a residue
    # check that did not run; only those the fixture does not ask for
    # (tests/conftest.py: no per-patch builds, no coverage builds) are not run
    g, _ = patched_verify
    assert g.ok, g.summary()
    assert g.unproven(NOT_ASKED) == {}, g.summary()
    assert g.field_users is not None and g.field_users["files"], g.summary()
    assert g.residue is not None and g.residue.results, g.summary()
    # the whole series' code against the baseline's was compared (series_code)
    assert vr.code is not None and vr.code["objects_compared"] > 100, vr.code
    assert any(c["object"] == "mm/slub.o" for c in vr.code["objects_changed"]), vr.code
    # the readability report read the series' own functions, not nothing
    assert_read_the_series(g.readability, subjects(vr.applied.patches))
    br = boot_config(vr, "e2e")
    assert br.passed, br.summary()
    assert br.counts.failed == 0 and br.counts.passed >= 3, br.summary()
    # every test the guest plans ran: passed or skipped (none lost)
    assert br.counts.passed + br.counts.skipped == br.results.planned, br.summary()
    assert br.module_tests >= 10, br.summary()
    # the copies hardened usercopy must reject were made and rejected, not skipped
    for name in REJECTED_COPIES:
        assert re.search(rf"^\s*ok \d+ - {name}$", br.ktap, re.M), br.ktap


def test_changed_lines_the_slub_build_does_not_compile_are_named(patched_kernel):
    """verify/compiled.py on the real series and the slub build alone: most
    of mm/slub.c's changed lines are compiled, but the NUMA node check and
    the !CONFIG_SLUB_DEBUG stubs are not (the reason verify builds the
    coverage configurations), nor is any line of mm/slab.c; software
    tag-based KASAN (arm64 only) is allowed by verify/compiled.toml."""
    from verify import compiled
    vr = patched_kernel
    ap = apply.apply_series(vr.applied.src, COMMITTED)
    rep = compiled.check(ap.tree, compiled.changed_lines(ap.tree, ap.baseline_id, "HEAD"),
                         {"slub": vr.patched_out})
    files = {f.file: f for f in rep.files}
    assert not rep.errors, rep.errors
    slub = files["mm/slub.c"]
    assert slub.by["slub"] > 0.9 * slub.code, rep.summary()
    missed = [t.strip() for t in slub.missed.values()]
    assert "if (node != NUMA_NO_NODE && slab_nid(slab) != node)" in missed, missed
    assert any(t.startswith("static inline void setup_slab_debug(") or
               t.startswith("void setup_slab_debug(") for t in missed), missed
    assert files["mm/slab.c"].by["slub"] == 0 and len(files["mm/slab.c"].missed) > 100
    tags = files["mm/kasan/tags_report.c"]
    assert tags.allowed and not tags.missed
    assert not rep.ok and f"NOT COMPILED mm/slub.c:" in rep.summary(1000)


def test_every_allocator_builds_and_boots(allocator_kernel):
    """SLAB and SLOB kernels of the patched tree (the patched tree built
    alone: the warning gates of slab and slob are `make verify`'s), booted
    with the in-guest tests (no slub_debug: the allocator has its own
    checks)."""
    vr = allocator_kernel
    assert vr.config in ("slab", "slob")
    assert vr.patched is not None and vr.patched.ok, vr.summary
    assert vr.baseline is None and "warning gates were not run" in vr.summary
    assert vr.ok, vr.summary
    cfg = (vr.patched_out / ".config").read_text()
    assert f"\nCONFIG_{vr.config.upper()}=y\n" in cfg and "\nCONFIG_SLUB=y\n" not in cfg
    br = boot_config(vr, f"e2e-{vr.config}")
    assert br.passed, br.summary()
    assert br.counts.failed == 0 and br.counts.passed >= 3, br.summary()
    # every test the guest plans ran: passed or skipped (none lost)
    assert br.counts.passed + br.counts.skipped == br.results.planned, br.summary()
    assert br.module_tests >= 10, br.summary()
    assert "slub_debug" not in br.cmdline
    assert f"# allocator {vr.config.upper()}" in br.ktap
    assert_fault_injection_passed(br, vr.config)



def test_a_kernel_with_upstreams_conversion_gets_a_verdict_per_entry(tmp_path):
    """Debian's 6.1 has struct slab (upstream, 5.17): regen succeeds, every
    entry of the manifest is applied, found upstream (with evidence) or not
    applicable, and most of the series is found upstream."""
    from regen import upstream
    from regen.worktree import Identity
    src = resolve("6.1", None)
    res = series.regenerate(src.tree, src.source_id, version=src.version,
                            output=tmp_path / "series", identity=Identity("T", "t@example.org"))
    assert res.converted_at and res.converted_at.startswith("mm/slab.h:")
    manifest_entries = [e for e in series.manifest.load(paths.COCCI / series.MANIFEST).entries
                        if not e.skip]
    assert len(res.verdicts) == len(manifest_entries)
    status = {v[0]: v[2] for v in res.verdicts}
    assert all(v[3] for v in res.verdicts if v[2] != upstream.APPLIED), "evidence for each"
    assert sum(s == upstream.UPSTREAM for s in status.values()) >= 40
    for id in ("split-slab", "slub-check-slab", "slab", "memcg"):
        assert status[id] == upstream.UPSTREAM, res.verdicts
    assert (tmp_path / "series" / "ENTRIES").is_file()


def test_regen_on_a_users_branch_converts_its_local_changes(source, tmp_path):
    """--tree: a kernel git tree on a branch of its own with local slab code
    that uses the old API (a new line in a function the series converts, a
    new caller of a converted function): regenerated on top of it, both are
    converted, and the user's tree is not touched."""
    import subprocess
    from regen.worktree import Identity
    from regen.source import resolve as resolve_tree
    user = tmp_path / "linux"
    subprocess.run(["cp", "-R", str(source.tree), str(user)], check=True)
    subprocess.run(["chmod", "-R", "u+w", str(user)], check=True)
    slub = user / "mm" / "slub.c"
    text = slub.read_text()
    text = text.replace("\tint max_objects;\n\n\tfp = page->freelist;\n",
                        "\tint max_objects;\n\n\tif (page->inuse > page->objects)\n\t\treturn 0;\n"
                        "\tfp = page->freelist;\n", 1)
    text += ("\nstatic int __maybe_unused local_check(struct kmem_cache *s, struct page *page)\n"
             "{\n\treturn check_slab(s, page);\n}\n")
    slub.write_text(text)
    git = ["git", "-C", str(user), "-c", "user.name=U", "-c", "user.email=u@example.org"]
    subprocess.run(git + ["init", "-q", "-b", "my-branch"], check=True)
    subprocess.run(git + ["add", "-A", "-f", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "local work"], check=True)
    before = slub.read_bytes()
    src = resolve_tree(None, str(user))
    res = series.regenerate(src.tree, src.source_id, version=src.version,
                            output=tmp_path / "series", identity=Identity("T", "t@example.org"),
                            workdir=tmp_path / "work")
    after = (res.worktree.path / "mm" / "slub.c").read_text()
    assert "\tif (slab->inuse > slab->objects)\n\t\treturn 0;\n" in after
    # check_slab() took a struct slab at its patch (the call wrapped in
    # page_slab()); the usage pass then converted local_check()'s parameter,
    # which only flowed into it, and its callers
    assert "static int __maybe_unused local_check(struct kmem_cache *s, struct slab *slab)\n" \
           "{\n\treturn check_slab(s, slab);\n}\n" in after
    usage = [e for e in res.entries if e.origin == "usage"]
    assert [e.conversions for e in usage] == [["local_check(): parameter page (mm/slub.c)"]]
    assert slub.read_bytes() == before
    assert subprocess.run(git + ["status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""


def test_kasan_guest_builds_and_boots(kasan_kernel):
    """The kasan configuration (generic KASAN on SLUB, lib/test_kasan.c's
    KUnit suite built in), the patched tree built alone (its warning gates
    are `slabconv verify --config kasan`'s); booted with kasan_multi_shot, the
    module's two deliberate bad reads are reported in their brackets with the
    right bug type and cache (init test 7 and the console scanner), the KUnit
    suite passes (test 8), memcg accounting works both ways (test 5), and
    no other KASAN report appears."""
    from boot.ktap import Status
    vr = kasan_kernel
    assert vr.patched is not None and vr.patched.ok, vr.summary
    assert vr.baseline is None and "warning gates were not run" in vr.summary
    assert vr.ok, vr.summary
    br = boot_config(vr, "e2e-kasan")
    assert br.passed, br.summary()
    assert "kasan_multi_shot" in br.cmdline and "slub_debug" not in br.cmdline
    tests = {t.name: t for t in br.results.root.subtests}
    for name in ("slabconv_test", "slub_validate", "memcg_slab_accounting",
                 "module_unload", "kasan_slab_reports", "kasan_kunit"):
        assert tests[name].status is Status.PASS, (name, br.summary())
    assert "# slab-out-of-bounds on slabconv_kasan reported" in br.ktap
    assert "# use-after-free on slabconv_kasan reported" in br.ktap
    kunit = tests["kasan_kunit"]
    assert kunit.plan == len(kunit.subtests) >= 38, br.summary()
    log = br.console_log.read_text(errors="replace")
    assert log.count("which belongs to the cache slabconv_kasan of size 120") == 2
    assert log.count("slabconv-expect: begin kasan") == 2
