"""The cpu-backend tests are skipped where there is no C++ compiler.  (Their build dir is the session's
persistent cache, set in tests/conftest.py.)  They compile at the users' -O level (marker ``shipped_opt``,
tests/conftest.py): the differential and fusion fuzzers and the vectorised paths check what users run."""
import pytest

from pypto_pro.backends import cpu
from pypto_pro.backends.cpu import clauncher


def pytest_collection_modifyitems(config, items):
    skip = None if cpu.available() else pytest.mark.skip(reason="no C++ compiler")
    for item in items:
        if "tests/cpu" in str(item.fspath):
            item.add_marker("shipped_opt")
            if skip is not None:
                item.add_marker(skip)


@pytest.fixture(scope="module")
def mod():
    """The C launcher extension module (tests of the C launch path skip where it cannot be built)."""
    if not clauncher.enabled() or clauncher.wait_built() is None:
        pytest.skip("no C launcher here (no Python headers or PYPTO_C_LAUNCHER=0)")
    return clauncher.wait_built()
