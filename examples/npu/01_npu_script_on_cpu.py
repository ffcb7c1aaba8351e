"""An NPU script run unchanged on the CPU through the torch_npu stand-in (``python -m pypto_pro.npu``).

``rows_on_npu.py`` is written the way Ascend programs are: ``import torch_npu``,
``torch.npu.set_device("npu:0")``, tensors on ``device="npu:0"``, ``.npu()``, a launch on
``torch.npu.current_stream()`` and ``torch.npu.synchronize()``.  It runs here as it is, in a fresh
interpreter, on the cpu backend and on the simulator.
"""
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def run(script: str, backend: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYPTO_BACKEND=backend)
    return subprocess.run([sys.executable, "-m", "pypto_pro.npu", str(HERE / script)], env=env,
                          capture_output=True, text=True, timeout=600)


def main() -> bool:
    ok = True
    for backend in ("cpu", "sim"):
        done = run("rows_on_npu.py", backend)
        print(f"   python -m pypto_pro.npu rows_on_npu.py ({backend}):",
              done.stdout.strip() or f"FAILED\n{done.stderr[-2000:]}")
        ok = ok and done.returncode == 0
    return ok
