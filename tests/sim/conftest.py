"""The simulator's tests compile at -O1, not the suite's -O0 (marker ``kernel_opt``, tests/conftest.py): its
fast path replays whole launches through a compiled trace program, whose run time -O0 would multiply."""
import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/sim/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.kernel_opt("-O1"))
