"""The cost-model output of ``run_mode=pypto.RunMode.SIM`` launches: a swimlane file per process.

Officially a SIM run writes its simulated execution under ``./output/<run folder>``
(``$PYPTO_OUTPUT_DIR`` here, default ``./output``) (the folder name
holds the process id), the swimlane as ``CostModelSimulationOutput/merged_swimlane.json``, and
scripts read it from there.  Here a SIM launch's report is the simulator's timeline; every launch of
the process is appended to that file as Chrome-trace JSON (open it in https://ui.perfetto.dev),
one after the other in time, each launch's cores named ``<kernel>#<n> <core>``.  Launches on other
run modes (or picked by ``backend=`` / ``PYPTO_BACKEND``) write nothing.
"""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Dict, List, Optional

_LOCK = threading.Lock()
_EVENTS: List[Dict] = []
_STATE = {"launches": 0, "end_us": 0.0, "folder": None}
_PID_STRIDE = 1000  # the cores of launch n are trace processes n * 1000 + core


def run_folder() -> str:
    """This process's output folder, ``$PYPTO_OUTPUT_DIR/sim_<time>_<pid>`` (``./output`` by default, as
    officially; made on first use)."""
    if _STATE["folder"] is None:
        _STATE["folder"] = os.path.abspath(os.path.join(
            os.environ.get("PYPTO_OUTPUT_DIR", "output"), f"sim_{time.strftime('%Y%m%d_%H%M%S')}_{os.getpid()}"))
    return _STATE["folder"]


def record_sim_launch(kernel: str, report) -> Optional[str]:
    """Append ``report``'s timeline (if it has one) to the merged swimlane; return the file's path."""
    events_of = getattr(report, "trace_events", None)
    if events_of is None:
        return None
    with _LOCK:
        n = _STATE["launches"]
        shift, end = _STATE["end_us"], _STATE["end_us"]
        for e in events_of():
            e = dict(e, pid=n * _PID_STRIDE + int(e.get("pid", 0)))
            if "ts" in e:
                e["ts"] = e["ts"] + shift
                end = max(end, e["ts"] + e.get("dur", 0))
            if e.get("name") == "process_name":
                e["args"] = {"name": f"{kernel}#{n} {e['args']['name']}"}
            _EVENTS.append(e)
        _STATE["launches"], _STATE["end_us"] = n + 1, end
        path = os.path.join(run_folder(), "CostModelSimulationOutput", "merged_swimlane.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": _EVENTS, "displayTimeUnit": "ns"}, f)
        return path
