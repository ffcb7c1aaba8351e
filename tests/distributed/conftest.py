"""One world of 4 processes for the whole distributed test session (see launcher.py)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from launcher import World  # noqa: E402


@pytest.fixture(scope="session")
def world():
    w = World(4)
    yield w
    w.close()
