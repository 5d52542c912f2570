"""`slabconv verify` runs every check and gives one summary and one JSON
report (verify/gates.py, cli/checks.verify_applied).  The checks
themselves are tested on real trees elsewhere (test_checkpatch_real,
test_layout_real, test_verify_real, test_verify_bisect_*, test_residue,
test_field_users); here each is replaced by a recorded result so that the
wiring is tested in < 1 s: a planted checkpatch ERROR, a failed layout
assert, a new sparse warning, a failing patch, a changed line no build
compiled, a coverage build that fails and a slab field left after the
series each fail verify and are named in the summary and the report;
all passing is a PASS that still prints every figure."""
import argparse
import json

import pytest

from cli import apply, checks, pipeline
from verify import bisect, checkpatch as CP, compiled as CL, configtable, gates, kbuild
from verify import layout as LY, sparse
from verify import messages as MS, nullcheck as NC, readability as RD, whitespace as WS
from verify import warnings as W
import verify


def _build(tmp, n_warn=1):
    return kbuild.BuildResult(ok=True, seconds=42.0, warnings=[W.CompilerWarning("mm/x.c", "w")] * n_warn,
                              log=tmp / "log", image=None, compiled=7)


def _sparse(tmp, new=False):
    w = W.CompilerWarning("mm/slub.c", "context imbalance", tool="sparse")
    base = sparse.SparseRun(True, 1.0, ["mm/slub.c", "mm/usercopy.c"], [w] * 3, tmp / "b")
    extra = [W.CompilerWarning("mm/usercopy.c", "incorrect type in assignment", tool="sparse")]
    pat = sparse.SparseRun(True, 1.0, ["mm/slub.c", "mm/usercopy.c"], [w] * 3 + (extra if new else []),
                           tmp / "p")
    return sparse.SparseResult(ok=not new, new=extra if new else [], baseline=base, patched=pat,
                               seconds=2.0)


def _verify_result(tmp, config, new_sparse=False):
    r = verify.VerifyResult(ok=not new_sparse, config=config, baseline=_build(tmp),
                            patched=_build(tmp), new_warnings=[], sparse=_sparse(tmp, new_sparse),
                            report=tmp / f"{config}-report.json", patched_out=tmp)
    if new_sparse:
        r.problems.append("1 new sparse warning(s)")
    return r


def _bisect(tmp, fail_at=None, code_at=None, boot_at=None):
    commits = [("a" * 40, "mm: One"), ("b" * 40, "mm: Two"), ("c" * 40, "mm: Three")]
    ps = []
    for i, (sha, subj) in enumerate(commits, 1):
        ok = i != fail_at
        code = {"diffs": [], "unexpected": [], "missing": []}
        if i == code_at:
            code = {"diffs": [{"object": "mm/slub.o", "changed": [
                        {"function": "kfree", "old_size": 100, "new_size": 108}]}],
                    "unexpected": [{"object": "mm/slub.o", "function": "kfree",
                                    "change": "changed", "old_size": 100, "new_size": 108}],
                    "missing": []}
        boot = {"verdict": "FAIL" if i == boot_at else "pass", "failures":
                ["oops: BUG: kernel NULL pointer dereference"] if i == boot_at else [],
                "excerpt": "", "log": "console.log", "same_as": 0, "seconds": 6.0}
        ps.append(bisect.PatchResult(i, sha, subj, ["mm/slub.c"], action="objects", ok=ok,
                                     seconds=1.5 * i, built_seconds=1.5 * i,
                                     problem="" if ok else "does not build",
                                     code=code, boot=boot))
        if not ok:
            break
    c = bisect.ConfigResult("slub", patches=ps, n=3, runtime=True)
    c.ok = fail_at is None and not c.code_failures and not c.boot_failures
    return bisect.BisectResult(ok=c.ok, configs=[c], commits=commits)


def _checkpatch(tmp, error=False):
    warn = CP.Finding("WARNING", "BAD_SIGN_OFF", "Non-standard signature: Originally-by:")
    err = CP.Finding("ERROR", "TRAILING_WHITESPACE", "trailing whitespace", 40, "mm/slub.c", 3281)
    ps = [CP.PatchResult("0001-mm-One.patch", "mm: One", [warn], {"errors": 0, "warnings": 1}),
          CP.PatchResult("0002-mm-Two.patch", "mm: Two", [warn] + ([err] if error else []),
                         {"errors": int(error), "warnings": 1})]
    return CP.CheckpatchResult(ok=not error, tree=tmp, script=tmp / "checkpatch.pl", patches=ps)


def _layout(tmp, fail=False):
    a = LY.Assert(10, "SLAB_MATCH(flags, flags)", "offsetof(...) == offsetof(...)")
    combos = []
    for name in configtable.names("layout"):
        bad = fail and name == "layout-i386"
        c = LY.ComboResult(name, "i386" if "i386" in name else "x86_64", "nomemcg" not in name,
                           ok=not bad, status="assert failed" if bad else "ok", asserts=[a])
        if bad:
            c.failures = [LY.Failure(10, "SLAB_MATCH(flags, flags)", "...",
                                     'static assertion failed: "..."', sources=["mm/slub.c"])]
        combos.append(c)
    return LY.LayoutResult(ok=not fail, tree=tmp, asserts=[a], combos=combos)


def _nullcheck(tmp, finding=False):
    ps = [NC.PatchCheck(1, "a" * 40, "mm: One", ["mm/slub.c"]),
          NC.PatchCheck(2, "b" * 40, "mm: Two", ["mm/slub.c", "mm/slab.h"])]
    if finding:
        ps[1].findings = [NC.Finding(2, "mm: Two", "b" * 40, "mm/slub.c", 1829,
                                     "page_slab(allocate_slab(...))",
                                     "allocate_slab() returns NULL at mm/slub.c:1817")]
    return NC.NullcheckResult(tmp, "slabconv-baseline", "HEAD", "0" * 16, ps, seconds=1.0)


def _messages(finding=False):
    r = MS.MessagesResult(patches=2, names=5)
    if finding:
        r.findings = [MS.Finding("0002-mm-Two.patch", "alloc_slab_page", 3,
                                 "We can cast directly in alloc_slab_page()")]
    return r


def _whitespace(finding=False):
    r = WS.WhitespaceResult(patches=2, pairs=2, justified=1 + (not finding))
    if finding:
        r.findings = [WS.Finding("0002-mm-Two.patch", 3281, "mm/slub.c", "\t\tprior, counters,",
                                 "\t\t\t\tprior, counters,")]
    return r


class FakeResidue:
    files = ["mm/slub.c"]
    results = []
    not_allowed = []

    def counts(self, f):
        return (5, 5, 0)

    def summary(self, limit=None):
        return "residue"

    def to_dict(self):
        return {"ok": True}


@pytest.fixture
def world(tmp_path, monkeypatch):
    """verify_applied with every check replaced by a recorded result; `plant`
    says which one fails."""
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path / "cache"))
    plant = {}

    def check_build(base, tree, out_root, config, **kw):
        return _verify_result(tmp_path, config, new_sparse=plant.get("sparse") == config)

    def check_series(*a, **kw):
        return _bisect(tmp_path, fail_at=plant.get("bisect"), code_at=plant.get("code"),
                       boot_at=plant.get("boot"))

    def field_users_check(ap, results, extra_builds=None):
        seen["field_users_builds"] = dict(extra_builds or {})
        if plant.get("field_users_none"):       # struct page keeps its slab members
            from regen import field_users
            monkeypatch.setattr(field_users, "page_keeps_slab_members", lambda tree: True)
            return None
        return {"files": [{"file": "mm/user.c", "uses": 2, "built_by": ["slub"], "why_not": ""}],
                "left": ["mm/user.c"] if plant.get("field") else []}

    def compiled_lines_check(ap, results, coverage_configs, out_root, ident):
        seen["coverage"] = tuple(coverage_configs)
        f = CL.FileCoverage("mm/slub.c", 3, by={"slub": 2, "kasan": 3 - bool(plant.get("compiled"))})
        if plant.get("compiled"):
            f.missed = {2523: "\tif (node != NUMA_NO_NODE && slab_nid(slab) != node)"}
        failed = {"kasan": "the patched tree does not build: mm/kasan/common.o"} \
            if plant.get("coverage_build") else {}
        rep = CL.Report(["slub", "slab", "kasan"], [f])
        rep.build_dirs = {"kasan": tmp_path / "kasan-o"}
        return rep, failed

    seen = {}
    monkeypatch.setattr(checks, "compiled_lines_check", compiled_lines_check)
    monkeypatch.setattr(verify, "check_build", check_build)
    monkeypatch.setattr(bisect, "check_series", check_series)
    monkeypatch.setattr(checks, "field_users_check", field_users_check)
    real_residue_summary = checks.residue_summary

    def residue_summary(ap):
        if plant.get("residue_crash"):      # the real summary, its spatch run failing
            from base.log import SlabconvError
            from verify import residue

            def crash(*a, **k):
                raise SlabconvError("spatch: residue_page.cocci: exit 1")
            monkeypatch.setattr(residue, "check", crash)
            return real_residue_summary(ap)
        return FakeResidue()
    monkeypatch.setattr(checks, "residue_summary", residue_summary)
    monkeypatch.setattr(checks, "nullcheck_series",
                        lambda ap: _nullcheck(tmp_path, finding=plant.get("nullcheck", False)))
    monkeypatch.setattr(checks, "checkpatch_series",
                        lambda ap: _checkpatch(tmp_path, error=plant.get("checkpatch", False)))
    monkeypatch.setattr(checks, "messages_series", lambda ap: _messages(plant.get("messages")))
    monkeypatch.setattr(checks, "whitespace_series",
                        lambda ap: _whitespace(plant.get("whitespace")))
    monkeypatch.setattr(checks, "readability_series", lambda ap: RD.ReadabilityResult(patches=2))
    monkeypatch.setattr(LY, "check", lambda *a, **k: _layout(tmp_path, fail=plant.get("layout", False)))
    monkeypatch.setattr(checks, "record_verify", lambda *a: None)
    src = type("Src", (), {"version": "5.10", "source_id": "linux-source-5.10_test",
                           "tree": tmp_path})()
    ap = apply.Applied(src=src, tree=tmp_path, baseline_id="0" * 40,
                       patches=[tmp_path / "0001-mm-One.patch", tmp_path / "0002-mm-Two.patch"],
                       touched=["mm/slub.c"])
    ap.seen = seen
    return ap, plant


def run(ap, **kw):
    kw.setdefault("coverage_configs", ("kasan",))
    return checks.verify_applied(ap, ("slub", "slab"), ("slub",), **kw)


def test_all_checks_pass_and_every_figure_is_printed(world, capsys):
    ap, _ = world
    r = run(ap)
    out = capsys.readouterr().out
    summary = out[out.index("==== verify:"):]
    assert r.ok and summary.rstrip().splitlines()[-1].startswith("verify: PASS")
    for needle in ("checkpatch ok", "messages ok", "whitespace ok", "nullcheck ok", "builds ok", "per-patch ok", "field-users ok", "residue ok",
                   "layout ok", "compiled-lines ok",
                   "compiled lines: 3 of 3 changed code lines compiled by a build "
                   "(slub, slab, kasan), 0 allowed not to be, 0 NOT compiled",
                   "0001 0 error(s), 1 warning(s): W:BAD_SIGN_OFF",        # checkpatch per patch
                   "slub          OK    baseline 42s, patched 42s",       # builds per config
                   "sparse: mm/slub.c 3 -> 3, mm/usercopy.c 0 -> 0",      # sparse per file
                   "mm: Three",                                           # per-patch times
                   "layout-i386-nomemcg", "1 asserts hold",               # layout per combo
                   "mm/slub.c                     5 uses",                # residue per file
                   "field users: 1 file(s)",
                   "nullcheck: OK: 0 finding(s)",
                   "whitespace: OK: 2 whitespace-only line pair(s) in 2 patches, 2 realigned"):
        assert needle in summary, needle
    rep = json.loads(r.report.read_text())
    assert rep["ok"] and set(rep["status"]) == set(gates.CHECKS)
    assert rep["builds"]["slab"]["sparse_per_file"][0] == {
        "file": "mm/slub.c", "baseline": 3, "patched": 3, "new": 0}
    assert [c["name"] for c in rep["layout"]["combos"]] == list(configtable.names("layout"))
    assert rep["checkpatch"]["counts"]["warning"] == 2
    assert rep["compiled_lines"]["ok"] and ap.seen["coverage"] == ("kasan",)
    # the field users' coverage also counts the coverage builds
    assert set(ap.seen["field_users_builds"]) == {"kasan"}
    assert str(r.report) in summary
    # the records (report/results.py) are the parts of the JSON report
    recs = r.records()
    assert recs["verify"]["ok"] is True and recs["verify"]["status"] == rep["status"]
    assert recs["verify-slab"] == rep["builds"]["slab"] and recs["bisect"] == rep["bisect"]
    assert recs["compiled-lines"] == rep["compiled_lines"] and recs["layout"] == rep["layout"]
    assert set(recs) == {"verify", "verify-slub", "verify-slab", "bisect", "compiled-lines",
                         "field-users", "residue", "layout", "checkpatch", "nullcheck",
                         "messages", "whitespace"}


@pytest.mark.parametrize("plant, named", [
    ({"checkpatch": True}, "0002-mm-Two.patch: 1 checkpatch error(s): TRAILING_WHITESPACE"),
    ({"layout": True}, "[layout] [layout-i386] assert failed: SLAB_MATCH(flags, flags)"),
    ({"messages": True}, "[messages] 0002-mm-Two.patch: the message names alloc_slab_page() "
                         "(line 3: \"We can cast directly in alloc_slab_page()\"), which the "
                         "patch does not touch"),
    ({"whitespace": True}, "[whitespace] 0002-mm-Two.patch: mm/slub.c:3281: only its whitespace "
                           "changed, and no moved parenthesis justifies it: 'prior, counters,'"),
    ({"nullcheck": True}, "[nullcheck] patch 0002 (mm: Two): mm/slub.c:1829: "
                          "page_slab(allocate_slab(...)) on a value that can be NULL"),
    ({"sparse": "slab"}, "[slab] 1 new sparse warning(s)"),
    ({"bisect": 2}, "patch 2/3 \"mm: Two\" fails in config slub"),
    ({"code": 2}, "patch 2/3 \"mm: Two\" changes the code of mm/slub.o: kfree (changed, "
                  "100 -> 108 bytes, +8) in config slub"),
    ({"boot": 3}, "patch 3/3 \"mm: Three\" builds but its kernel fails at run time in config "
                  "slub: FAIL: oops: BUG: kernel NULL pointer dereference"),
    ({"field": True}, "still used after the series in mm/user.c"),
    ({"compiled": True}, "1 changed code line(s) compiled by no build"),
    ({"coverage_build": True}, "[kasan] the patched tree does not build: mm/kasan/common.o"),
    ({"residue_crash": True}, "[residue] the check did not run: spatch: residue_page.cocci: exit 1"),
])
def test_each_planted_failure_fails_verify_and_is_named(world, capsys, plant, named):
    ap, planted = world
    planted.update(plant)
    r = run(ap)
    out = capsys.readouterr().out
    summary = out[out.index("==== verify:"):]
    assert not r.ok
    assert "verify: FAIL" in summary
    assert any(named in p for p in r.problems), r.problems
    assert named in summary
    rep = json.loads(r.report.read_text())
    assert rep["ok"] is False and "FAIL" in rep["status"].values()
    # the one verdict: exactly the planted check FAILs, in the summary, the
    # JSON report and the records the review and the mail read
    which = {"checkpatch": "checkpatch", "layout": "layout", "messages": "messages",
             "whitespace": "whitespace",
             "nullcheck": "nullcheck", "sparse": "builds", "bisect": "per-patch",
             "code": "object-code", "boot": "runtime", "field": "field-users",
             "compiled": "compiled-lines", "coverage_build": "compiled-lines",
             "residue_crash": "residue"}
    check = which[next(iter(plant))]
    assert [c for c, v in r.status().items() if v == "FAIL"] == [check], r.status()
    assert rep["status"] == r.status() and rep["problems"] == r.problems
    verdict = r.records()["verify"]
    assert verdict["ok"] is False and verdict["status"][check] == "FAIL"
    assert any(named in p for p in verdict["problems"])


def test_a_check_not_asked_for_is_listed_as_not_run(world, capsys):
    ap, planted = world
    planted["layout"] = True                      # would fail, but is not run
    r = checks.verify_applied(ap, ("slub",), (), layout=False, checkpatch=False)
    out = capsys.readouterr().out
    assert r.ok
    st = r.status()
    assert st["layout"].startswith("not run") and st["checkpatch"].startswith("not run")
    assert st["messages"] == st["whitespace"] == "not run: not asked for"
    assert st["per-patch"] == "not run: not asked for"
    assert st["compiled-lines"] == "not run: not asked for"
    assert "layout not run" in out and "per-patch builds: not asked for" in out


def test_the_per_patch_check_not_run_names_the_reason_it_was_given(world):
    """"--bisect-configs none" only where the command line said so (boot,
    bench and the tests ask for no per-patch check without it)."""
    ap, _ = world
    r = checks.verify_applied(ap, ("slub",), (), layout=False, checkpatch=False,
                              bisect_why=apply.bisect_why(argparse.Namespace(bisect_configs="none")))
    assert r.status()["per-patch"] == "not run: --bisect-configs none"
    assert apply.bisect_why(argparse.Namespace()) == "not asked for"
    assert apply.bisect_why(argparse.Namespace(bisect_configs="")) == "--bisect-configs ''"


def test_boot_leaves_out_the_tree_gates_and_says_so(world, capsys):
    """boot builds its kernels through verify_applied with tree_gates=False:
    the field users and the residue are not run (a slab field left after
    the series, which fails verify, does not fail it) and the summary and
    report say "not run"."""
    ap, planted = world
    planted["field"] = True
    r = checks.verify_applied(ap, ("slub",), (), layout=False, checkpatch=False,
                                tree_gates=False)
    out = capsys.readouterr().out
    assert r.ok and r.field_users is None and r.residue is None
    st = r.status()
    assert st["field-users"] == st["residue"] == st["nullcheck"] == "not run: not asked for"
    assert "field users: not run: not asked for" in out and "residue: not run" in out
    planted_run = checks.verify_applied(ap, ("slub",), (), layout=False, checkpatch=False)
    assert not planted_run.ok, "the same world fails when the tree gates run"


def test_sparse_counts_per_file(tmp_path):
    rows = gates.sparse_per_file(_sparse(tmp_path, new=True))
    assert rows == [("mm/slub.c", 3, 3, 0), ("mm/usercopy.c", 0, 1, 1)]
    assert gates.sparse_per_file(None) == []


def test_bisect_configs_accept_the_heavier_configurations():
    from verify import kconfig
    for c in configtable.choices("per-patch"):
        kconfig.config_arch(c)                # known (else exit 2)
    assert {"kasan", "iommu", "mm-users"} <= set(configtable.choices("per-patch"))
    args = type("A", (), {"bisect_configs": "slub,kasan,iommu"})()
    assert apply.bisect_configs(args) == ("slub", "kasan", "iommu")


def test_no_nullcheck_is_listed_as_not_run(world, capsys):
    ap, planted = world
    planted["nullcheck"] = True                   # would fail, but is not run
    r = run(ap, nullcheck=False)
    out = capsys.readouterr().out
    assert r.ok and r.nullcheck is None
    assert r.status()["nullcheck"] == "not run: --no-nullcheck"
    assert "nullcheck: --no-nullcheck" in out
    args = type("A", (), {"no_nullcheck": True})()
    assert apply.check_options(args)["nullcheck"] is False


def test_the_main_job_says_what_it_proved_and_what_is_left(world, capsys):
    """make (cmd_all) verifies slub only: its closing lines name the checks
    that passed, the boots, what it did not run, and the command for the rest."""
    ap, _ = world
    r = checks.verify_applied(ap, ("slub",), (), coverage_configs=None, runtime_configs=(),
                              bisect_why="--bisect-configs none")
    boot = type("B", (), {"passed": True, "counts": "58 tests: 51 passed"})()
    lines = pipeline.main_job_lines(r, {"slub": boot})
    assert lines[0].startswith("proved: checkpatch; messages; whitespace; nullcheck; builds;")
    assert "boot slub (58 tests: 51 passed)" in lines[0]
    assert "per-patch (not run: --bisect-configs none)" in lines[1]
    assert "builds in slab, slob" in lines[1] and "boots of slab, slob, slub-i386" in lines[1]
    assert lines[2].startswith("the rest: make verify")
    args = __import__("cli.main", fromlist=["x"]).build_parser().parse_args(["all"])
    assert (args.bisect_configs, args.runtime_configs, args.coverage_configs) == \
        ("none", "none", "none")
    assert apply.asked_configs(args, "main") == ["slub"]


@pytest.mark.parametrize("plant, check, status", [
    ({}, None, None),
    ({"residue_crash": True}, "residue", "FAIL"),
    ({"field_users_none": True}, "field-users",
     "nothing to prove (struct page keeps its slab members)"),
    ({"layout": True}, "layout", "FAIL"),
])
def test_unproven_names_every_check_that_did_not_run_and_pass(world, plant, check, status):
    """What test_e2e asserts of the real verdict: every check ran and
    passed.  A residue check that did not run and the field users' "nothing
    to prove" are named, as a FAIL is; a check that is not asked for must
    be "not run"."""
    ap, planted = world
    planted.update(plant)
    r = checks.verify_applied(ap, ("slub",), (), coverage_configs=None)
    asked_not = ("per-patch", "object-code", "runtime", "compiled-lines")
    got = r.unproven(asked_not)
    assert got == ({} if check is None else {check: status}), r.status()
    # a check that ran although it was not asked for is named too
    assert "residue" in r.unproven(asked_not + ("residue",))
