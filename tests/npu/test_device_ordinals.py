"""A bare device ordinal (``torch.zeros(..., device=0)``) names the current accelerator, which under
torch_npu is the NPU: the stand-in maps it to the CPU like ``"npu:0"``.  Runs in a fresh interpreter
(the stand-in changes torch process-wide)."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.every_backend

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + "/src"

SCRIPT = """
    import torch, torch_npu
    torch.npu.set_device(0)
    z = torch.zeros((4, 8), dtype=torch.float32, device=0)
    e = torch.empty(3, device=0).uniform_(-1, 1)
    x = torch.ones(2).to(device="npu:0")
    assert z.device.type == e.device.type == x.device.type == "cpu"
    assert not z.any() and e.shape == (3,)
    print("ordinals ok")
"""


def test_a_bare_device_ordinal_means_the_npu(tmp_path):
    path = tmp_path / "ordinals.py"
    path.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYPTO_BUILD_DIR"] = os.environ.get("PYPTO_BUILD_DIR") or str(tmp_path / "build")
    run = subprocess.run([sys.executable, "-m", "pypto_pro.npu", str(path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "ordinals ok" in run.stdout
