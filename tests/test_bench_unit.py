"""make bench (cli/bench.py) wired with its heavy parts replaced: it
regenerates four times (warm-up, two with every spatch run made, one
cached), builds the matrix's kernels without verify's other checks, boots
them, and prints per-entry times, spatch peak memory and a line per guest
that flags one over the 30 s budget.  The real figures come from `make
bench`; here only what it prints and records from them is checked."""
import json
import types
from pathlib import Path

import pytest

from cli import bench


class _Res:
    def __init__(self, seconds, tmp):
        self.seconds = seconds
        self.entries = [types.SimpleNamespace(subject="mm: One", seconds=1.25),
                        types.SimpleNamespace(subject="mm/slub: Two", seconds=0.5)]
        self.worktree = types.SimpleNamespace(path=tmp, git=lambda *a: "")


def _guest(name, arch, seconds, verdict="pass"):
    from boot import ktap
    counts = ktap.parse("KTAP version 1\n1..1\nok 1 - a\n").counts
    return types.SimpleNamespace(spec=types.SimpleNamespace(name=name, arch=arch),
                                 seconds=seconds, verdict=verdict,
                                 boot=types.SimpleNamespace(accel="tcg", counts=counts))


@pytest.fixture
def faked(cache, tmp_path, monkeypatch):
    from regen import template, spatch
    import verify
    calls = {"regen": [], "verify": None, "plant": set()}
    times = iter([9.0, 51.5, 49.75, 4.9])          # warm-up, cold, cold, cached

    def regen_once(src, spatch_cache=True):
        calls["regen"].append(spatch_cache)
        return _Res(next(times), tmp_path)

    def verify_applied(ap, configs, **kw):
        calls["verify"] = (list(configs), kw)
        builds = [types.SimpleNamespace(
            config=c, baseline=types.SimpleNamespace(seconds=30.0), baseline_reused=True,
            patched=types.SimpleNamespace(seconds=12.0, ok=c not in calls["plant"]))
            for c in configs]
        return types.SimpleNamespace(primary=builds[0], builds=builds)

    def boot_matrix(g, name):
        m = types.SimpleNamespace(results=[
            _guest("slub", "x86_64", 6.2, "FAIL" if "guest" in calls["plant"] else "pass"),
            _guest("slub-i386", "i386", 31.0)], seconds=40.0, jobs=2, passed=True)
        return m, {}
    monkeypatch.setattr(bench, "_regen_once", regen_once)
    monkeypatch.setattr(template, "find_anchor", lambda *a: None)
    monkeypatch.setitem(spatch.PEAK, "rss_kb", 81920)
    monkeypatch.setitem(spatch.PEAK, "rule", "slab_fold.cocci")
    monkeypatch.setattr(bench, "source", lambda args, boot_configs=(): types.SimpleNamespace(
        version="5.10", source_id="linux-source-5.10_fake"))
    monkeypatch.setattr(bench, "apply_series", lambda src, d: types.SimpleNamespace(tree=tmp_path))
    monkeypatch.setattr(bench, "series_dir", lambda src, out: tmp_path)
    monkeypatch.setattr(bench, "verify_applied", verify_applied)
    monkeypatch.setattr(bench, "boot_matrix", boot_matrix)

    def variability_figures(ap, config):
        calls["variability"] = config
        return {"config": config, "symbols": 41, "flipped_configs": 9, "object_builds": 120,
                "not_flipped": 30, "failed": [14, 15] if "variability" in calls["plant"] else [],
                "cold": {"seconds": 1500.0, "analysis_seconds": 12.5,
                         "flip_build_seconds": 1400.0, "ok": True},
                "warm": {"seconds": 20.0, "analysis_seconds": 12.0, "flip_build_seconds": 3.0,
                         "ok": True},
                "load_before": [3.5, 3.0, 2.0], "load_after": [4.0, 3.5, 2.5]}
    monkeypatch.setattr(bench, "variability_figures", variability_figures)
    monkeypatch.setattr(verify.kconfig, "configure_named", lambda *a: None)
    monkeypatch.setattr(verify.kbuild, "build", lambda *a, **k: types.SimpleNamespace(
        ok="full" not in calls["plant"]))
    return calls


def test_bench_prints_and_records_every_figure(faked, capsys):
    from base import paths
    from verify import configtable
    args = types.SimpleNamespace(config="slub", output=None)
    assert bench.cmd_bench(args) == 0
    out = capsys.readouterr().out
    assert faked["regen"] == [True, False, False, True]
    configs, kw = faked["verify"]
    assert configs[0] == "slub" and set(configs) == set(configtable.names("boot"))
    assert kw == dict(bisect_configs=(), layout=False, checkpatch=False, tree_gates=False)
    assert "best 49.75s of [51.5, 49.75]" in out
    assert "with spatch results cached: 4.90s" in out
    assert "spatch peak memory: 80.0 MB" in out and "slab_fold.cocci" in out
    assert "  1.25s  mm: One" in out and "  0.50s  mm/slub: Two" in out
    lines = {l.split()[0]: l for l in out.splitlines() if l.startswith("    slub")}
    assert "(over 30s)" in lines["slub-i386"] and "(over" not in lines["slub"]
    rec = json.loads((paths.cache_dir("runs") / "bench-5.10.json").read_text())
    assert rec["regen_seconds"] == [51.5, 49.75] and rec["regen_cached_seconds"] == 4.9
    assert rec["boot"]["slub-i386"]["seconds"] == 31.0 and rec["boot_passed"] is True
    assert rec["failed"] == [] and "FAILED" not in out
    assert faked["variability"] == "slub"
    assert ("variability builds (slub, added to the per-patch check): 41 symbols, 9 flipped "
            "configurations, 120 object builds (0 patches failing), 30 flips Kconfig refused; "
            "cold 25m00s (analysis 12.5s, flipped builds 23m20s), warm 20s") in out, out
    assert rec["variability"]["cold"]["seconds"] == 1500.0


@pytest.mark.parametrize("plant, named", [
    ("slab", "slab: the patched kernel does not build"),
    ("full", "the full build (fresh O=, no ccache) failed"),
    ("guest", "slub: FAIL"),
    ("variability", "variability builds: patches 14, 15 do not build with a symbol flipped "
                    "in slub"),
])
def test_bench_fails_when_a_build_or_a_guest_fails(faked, capsys, plant, named):
    """The figures are written all the same; the exit code says a step failed."""
    from base import paths
    faked["plant"].add(plant)
    assert bench.cmd_bench(types.SimpleNamespace(config="slub", output=None)) == 1
    assert f"  FAILED: {named}" in capsys.readouterr().out
    rec = json.loads((paths.cache_dir("runs") / "bench-5.10.json").read_text())
    assert rec["failed"] == [named]


def test_main_job_figures_against_their_goals(tmp_path, monkeypatch):
    import json as _json
    from cli import bench as _B
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path))
    runs = tmp_path / "runs"
    runs.mkdir()
    assert "no record in this cache" in _B.main_job_lines(_B.main_job_figures("5.10"))
    (runs / "all-5.10-cold.json").write_text(_json.dumps({"seconds": 1800.0, "ok": True, "cold": True}))
    (runs / "all-5.10.json").write_text(_json.dumps({"seconds": 95.0, "ok": True, "cold": False}))
    text = _B.main_job_lines(_B.main_job_figures("5.10"))
    assert "main job (from an empty cache): 30m00s, OVER the goal of 25m00s" in text
    assert "main job (warm, nothing changed): 1m35s, within the goal of 2m00s" in text
    # the last run was the cold one: no warm figure
    (runs / "all-5.10.json").write_text(_json.dumps({"seconds": 1800.0, "ok": True, "cold": True}))
    assert "warm, nothing changed): no record" in _B.main_job_lines(_B.main_job_figures("5.10"))
