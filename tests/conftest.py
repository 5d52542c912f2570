"""Shared pytest configuration for the slabconv test suite."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "network: needs the network (apt archives); deselect with -m 'not network'")
