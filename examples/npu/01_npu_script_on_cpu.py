"""An NPU script, run unchanged on the CPU through the torch_npu stand-in (``python -m pypto_pro.npu``).

``seed_000_add.py`` is seed 000's Add program exactly as the user printed it: ``import torch_npu``,
``torch.npu.set_device("npu:0")``, tensors on ``device="npu:0"``, ``torch.npu.synchronize()``.  As
printed, its kernel loads ``a`` into ``to`` instead of ``ta`` and then adds the never-written ``ta``:
on an NPU that silently adds whatever the buffer held.  Run on the simulator, the stand-in reports the
uninitialised read at its line.  ``add_on_npu.py`` is the same program with the load fixed and a check
of the result; it runs on the cpu backend.
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
    add_line = next(n for n, text in enumerate((HERE / "seed_000_add.py").read_text().splitlines(), 1)
                    if "pl.add(" in text)
    where = f"seed_000_add.py:{add_line}"
    seed = run("seed_000_add.py", "sim")
    caught = "KernelUninitError" in seed.stderr and where in seed.stderr
    print("   seed 000 as printed, on sim:", f"uninitialised read of ta reported at {where}"
          if caught else f"UNEXPECTED (rc={seed.returncode})\n{seed.stderr[-2000:]}")
    fixed = run("add_on_npu.py", "cpu")
    print("   fixed program, on cpu:", fixed.stdout.strip() or f"FAILED\n{fixed.stderr[-2000:]}")
    return caught and fixed.returncode == 0
