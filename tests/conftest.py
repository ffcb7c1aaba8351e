"""Fixtures shared across the test directories."""
import os

import pytest


@pytest.fixture(scope="module")
def private_build_dir(tmp_path_factory):
    """Compiled kernels of one test module go to a private build dir (unless ``PYPTO_BUILD_DIR`` is
    already set), as tests/cpu/conftest.py does for the whole cpu suite.  Modules opt in with
    ``pytestmark = pytest.mark.usefixtures("private_build_dir")``."""
    if "PYPTO_BUILD_DIR" in os.environ:
        yield
        return
    os.environ["PYPTO_BUILD_DIR"] = str(tmp_path_factory.mktemp("pypto-build"))
    yield
    del os.environ["PYPTO_BUILD_DIR"]
