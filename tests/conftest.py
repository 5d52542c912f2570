import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def pytest_configure(config):
    config.addinivalue_line("markers", "network: needs the Debian archive (apt)")
    config.addinivalue_line("markers", "slow: builds or boots a kernel (minutes)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private slabconv cache for one test."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SLABCONV_CACHE", str(d))
    return d


@pytest.fixture(scope="session")
def patched_kernel():
    """The committed 5.10 series applied with git am and built by verify
    (baseline and patched, builds cached in the slabconv cache).  Returns the
    VerifyResult; the e2e and boot integration tests share it."""
    from slabconv import paths, pipeline
    from slabconv.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = pipeline.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    vr = pipeline.verify_applied(ap)
    vr.applied = ap
    return vr


def _committed_series_built(config: str):
    """The committed 5.10 series applied with git am and built by verify in
    one configuration (baseline and patched, warning gates, field users and
    residue; no per-patch, layout or checkpatch checks).  The VerifyResult,
    with .applied."""
    from slabconv import paths, pipeline
    from slabconv.source import resolve
    src = resolve(paths.DEFAULT_KERNEL, None)
    ap = pipeline.apply_series(src, paths.GENERATED / paths.DEFAULT_KERNEL)
    vr = pipeline.verify_applied(ap, (config,), bisect_configs=(), layout=False,
                                 checkpatch=False)
    vr.applied = ap
    return vr


@pytest.fixture(scope="session")
def kasan_kernel():
    """The committed 5.10 series built by verify in the kasan configuration
    (generic KASAN on SLUB, the KASAN KUnit suite built in): baseline and
    patched, no new compiler or sparse warnings.  Returns the VerifyResult."""
    return _committed_series_built("kasan")


@pytest.fixture(scope="session")
def iommu_kernel():
    """The committed 5.10 series built by verify in the iommu configuration
    (the Intel and AMD IOMMU drivers, a virtio-blk disk driver): baseline
    and patched.  Returns the VerifyResult; tests/test_boot_iommu.py boots it.
    SLABCONV_TEST_IOMMU_TREE=<a patched tree with its build in o/> uses
    that build instead (development: no baseline build, no warning gate)."""
    import os
    from types import SimpleNamespace
    from verify import kbuild
    if os.environ.get("SLABCONV_TEST_IOMMU_TREE"):
        tree = Path(os.environ["SLABCONV_TEST_IOMMU_TREE"])
        image = kbuild.image_path(tree / "o", "x86_64")
        return SimpleNamespace(config="iommu", patched_src=tree, patched_out=tree / "o",
                               patched=SimpleNamespace(ok=image.is_file(), image=image),
                               ok=True, new_warnings=[], sparse=None, summary=str(tree),
                               others={}, series_record=None)
    return _committed_series_built("iommu")
