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
