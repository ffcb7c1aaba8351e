"""The cpu-backend tests are skipped where there is no C++ compiler.  (Their build dir is the session's
persistent cache, set in tests/conftest.py.)"""
import pytest

from pypto_pro.backends import cpu


def pytest_collection_modifyitems(config, items):
    if not cpu.available():
        skip = pytest.mark.skip(reason="no C++ compiler")
        for item in items:
            if "tests/cpu" in str(item.fspath):
                item.add_marker(skip)
