"""One world of 4 processes for the whole distributed test session (see shmem_world.py)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from shmem_world import World  # noqa: E402


def pytest_collection_modifyitems(items):
    """All distributed tests on one xdist worker (``--dist loadgroup``): one 4-process world, not one per worker."""
    for item in items:
        if "tests/distributed/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("distributed"))


@pytest.fixture(scope="session")
def world():
    w = World(4)
    yield w
    w.close()
