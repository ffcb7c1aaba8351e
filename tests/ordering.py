"""Run order for xdist: the test modules that take longest first.

``--dist loadgroup`` hands the workers one test (or one xdist_group) at a time in collection order, so a
slow module collected last (alphabetically: tests/tensor) leaves one core idle while the other finishes
it.  Under xdist the modules are put in order of their recorded total time, longest first (tests/durations.json:
seconds per module, written by ``tools/test_durations.py`` from a junit report of a whole run); the tests of
a module keep their order, so module-scoped fixtures are set up once as before.  A module missing from the
file counts as the median module.  Without xdist the order is left alone.  Reordering changes no test:
every test is independent of the others (xdist already runs them in any split).
"""
from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Dict

DURATIONS = Path(__file__).resolve().parent / "durations.json"


def recorded() -> Dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(DURATIONS.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def longest_modules_first(config, items) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    seconds = recorded()
    if not seconds:
        return
    default = statistics.median(seconds.values())
    root = Path(str(config.rootpath))

    def module(item) -> str:
        try:
            return Path(str(item.fspath)).resolve().relative_to(root).as_posix()
        except ValueError:
            return str(item.fspath)

    first = {}
    for i, item in enumerate(items):
        first.setdefault(module(item), i)
    items.sort(key=lambda it: (-seconds.get(module(it), default), first[module(it)]))
