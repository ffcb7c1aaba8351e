"""Which ``backend="sim"`` test cases run the simulator's compiled fast path, and which its engine.

The tile-level tests that run a kernel on every backend (a ``backend`` parameter: interp, cpu, sim) check on
sim that the launch is free of races, deadlocks and uninitialised reads and gives the right values.  With
the fast path on (the default, backends/sim/fast) each such kernel compiles a C++ trace program (~2 CPU-s,
the replay engine is compiled into every one); the interpreter engine runs these small test kernels in a
few milliseconds.  The two report the same (tests/sim/test_fast_path.py compares values, reports and
errors field by field), and a fast path that cannot build or cover a kernel hands it to the engine without
a failure, so these tests check the engine's verdict either way; what the fast path adds here is that its
trace program builds and runs for the kernel.

So: the first sim case of every test function (in collection order: the same on every xdist worker) keeps
the fast path, the other sim cases of that function run on the engine (``PYPTO_SIM_FAST=0`` for that test).
The simulator's own tests (tests/sim) are left alone.  ``PYPTO_FULL_MATRIX=1`` keeps the fast path
everywhere, as a user's launch would.
"""
from __future__ import annotations

import os
from typing import Dict, Tuple

import pytest

MARK = "sim_engine"


def _sim_case(item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return params.get("backend") == "sim"


def route_sim_cases(config, items) -> None:
    """Mark every sim case but the first of its test function with ``sim_engine``."""
    if os.environ.get("PYPTO_FULL_MATRIX", "") not in ("", "0"):
        return
    seen: Dict[Tuple[str, str], bool] = {}
    for item in items:
        if not _sim_case(item) or "/tests/sim/" in str(item.fspath).replace("\\", "/"):
            continue
        key = (str(item.fspath), item.originalname)
        if key in seen:
            item.add_marker(MARK)
        else:
            seen[key] = True


@pytest.fixture(autouse=True)
def _sim_engine_for_marked_cases(request, monkeypatch):
    """``PYPTO_SIM_FAST=0`` for the duration of a ``sim_engine`` test (read at each launch)."""
    if request.node.get_closest_marker(MARK) is not None:
        monkeypatch.setenv("PYPTO_SIM_FAST", "0")
