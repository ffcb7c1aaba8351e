"""Shared fixtures of the cpu-backend tests: a private build dir per session, skip without a compiler."""
import os

import pytest

from pypto_pro.backends import cpu


def pytest_collection_modifyitems(config, items):
    if not cpu.available():
        skip = pytest.mark.skip(reason="no C++ compiler")
        for item in items:
            if "tests/cpu" in str(item.fspath):
                item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _build_dir(tmp_path_factory):
    if "PYPTO_BUILD_DIR" not in os.environ:
        os.environ["PYPTO_BUILD_DIR"] = str(tmp_path_factory.getbasetemp().parent / "pypto-build")
    yield
