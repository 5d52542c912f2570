"""make bench's runtime-bisect figures, from a recorded per-patch check."""
from cli import bench
from report import results


def test_runtime_figures_from_the_recorded_per_patch_check(tmp_path, monkeypatch):
    monkeypatch.setenv("SLABCONV_CACHE", str(tmp_path))
    assert bench.runtime_figures("5.10") == {}
    assert "no per-patch check with boots recorded" in bench.runtime_lines({})
    boot = {"verdict": "pass", "seconds": 6.0, "same_as": 0}
    patches = [{"index": i, "kernel_seconds": 10.0, "boot": dict(boot)} for i in range(1, 5)]
    patches[2]["boot"] = {"verdict": "same", "same_as": 2}
    patches[3]["boot"]["verdict"] = "FAIL"
    results.record("5.10", "bisect", {"series": "x"}, {"configs": [
        {"config": "slub", "runtime": True, "boot_seconds": 12.0, "patches": patches},
        {"config": "slob", "runtime": False, "patches": patches}]})
    f = bench.runtime_figures("5.10")
    assert f == {"slub": {"kernels": 3, "patches": 4, "passed": 2, "boot_wall_seconds": 12.0,
                          "boot_guest_seconds": 18.0, "kernel_seconds": 40.0}}
    text = bench.runtime_lines(f)
    assert ("slub: 2/3 kernels passed (4 patches); boots 12s wall (18s of guest time), "
            "linking and guest modules 40s: 52s added, within budget") in text
    f["slub"]["kernel_seconds"] = 700.0
    assert "OVER budget" in bench.runtime_lines(f)
