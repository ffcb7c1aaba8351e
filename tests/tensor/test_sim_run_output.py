"""run_mode=pypto.RunMode.SIM launches append their simulated timeline to
./output/<folder with the pid>/CostModelSimulationOutput/merged_swimlane.json (frontend/sim_output.py)."""
import json
import os

import torch

import pypto
from pypto.frontend import sim_output


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def doubled_on_sim(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    y[:] = x * 2.0


@pypto.frontend.jit
def tripled(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    y[:] = x * 3.0


def test_sim_launches_write_the_merged_swimlane(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_OUTPUT_DIR", raising=False)  # the default: ./output
    monkeypatch.setattr(sim_output, "_EVENTS", [])
    monkeypatch.setattr(sim_output, "_STATE", {"launches": 0, "end_us": 0.0, "folder": None})
    x, y = torch.randn(16, 32), torch.empty(16, 32)
    tripled(x, y)  # not a SIM run: nothing written
    assert not (tmp_path / "output").exists()
    doubled_on_sim(x, y)
    torch.testing.assert_close(y, x * 2.0)
    folders = os.listdir(tmp_path / "output")
    assert len(folders) == 1 and str(os.getpid()) in folders[0]
    path = tmp_path / "output" / folders[0] / "CostModelSimulationOutput" / "merged_swimlane.json"
    first = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in first if e["ph"] == "X"]
    assert slices and all(e["dur"] >= 0 for e in slices)
    names = [e["args"]["name"] for e in first if e.get("name") == "process_name"]
    assert names and all(n.startswith("doubled_on_sim#0 ") for n in names)
    doubled_on_sim(torch.randn(16, 32), y)  # a second launch is appended after the first in time
    merged = json.loads(path.read_text())["traceEvents"]
    later = [e for e in merged[len(first):] if e["ph"] == "X"]
    assert later and min(e["ts"] for e in later) >= max(e["ts"] + e["dur"] for e in slices)
