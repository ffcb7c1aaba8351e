"""From a racy kernel to a clean, overlapped one, on the AI-Core simulator (docs/simulator.md).

1. ``gelu_racy`` computes y = x * sigmoid(1.702 x) in 16x256 tiles with hand-placed tiles and no syncs.
   It is correct on the interpreter (one core runs its program in order) but not on hardware, where
   the load (MTE2), the vector ops (V) and the store (MTE3) run concurrently.  The simulator stops it
   and names both lines and the sync to add.
2. ``gelu_pipelined`` uses two-deep tile groups (auto_mutex inserts the locks): clean, and the loads
   of tile i+1 overlap the compute and store of tile i.  Its timeline is written to a PNG (the path is
   printed; ``PYPTO_EXAMPLES_OUT`` chooses the folder) with a Perfetto trace next to it.
3. One speed comparison against torch: torch's time on this CPU next to the simulator's estimate for
   one a5 AI core group (an estimate from the cost model, not a measurement).
"""
import os
import re
import tempfile
import time

import numpy as np
import torch

import pypto_pro.language as pl
from pypto_pro.errors import KernelRaceError

R, C = 16, 256
TT = pl.TileType([R, C], pl.DT_FP32, pl.MemorySpace.Vec)
BLOCKS = 8


@pl.jit(backend="sim", auto_mutex=False)
def gelu_racy(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    t = pl.make_tile(TT, addr=0x0)
    s = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load(t, x, [i * R, 0])                  # MTE2 writes t
            pl.mul(s, t, -1.702)                      # V reads t: nothing waits for the load
            pl.exp(s, s)
            pl.add(s, s, 1.0)
            pl.div(s, t, s)
            pl.store(y, s, [i * R, 0])


@pl.jit(backend="sim")
def gelu_pipelined(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    gin = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    gout = pl.make_tile_group(type=TT, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            t = gin.next()
            s = gout.next()
            pl.load(t, x, [i * R, 0])
            pl.mul(s, t, -1.702)
            pl.exp(s, s)
            pl.add(s, s, 1.0)
            pl.div(s, t, s)
            pl.store(y, s, [i * R, 0])


def _line(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _reference(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(1.702 * x)


def main() -> bool:
    torch.manual_seed(0)
    x = torch.randn(BLOCKS * 32 * R, C)  # 32 tiles per core
    y = torch.empty_like(x)

    # 1. the race, stopped at its two lines
    try:
        gelu_racy[None, BLOCKS](x, y)
        print("racy kernel: no race reported -> FAILED")
        return False
    except KernelRaceError as e:
        lines = sorted({int(n) for n in re.findall(r"01_race_to_timeline\.py:(\d+)", e.message)})
        print("racy kernel, as the simulator reports it:\n  " + "\n  ".join(e.message.splitlines()[:8]))
        caught = lines == [_line("# MTE2 writes t"), _line("# V reads t")] and "sync_src(set_pipe=" in e.message
        print(f"race caught at lines {lines}: {'PASSED' if caught else 'FAILED'}")

    # 2. the pipelined kernel: clean; its timeline and trace
    start = time.perf_counter()
    gelu_pipelined[None, BLOCKS](x, y)
    sim_wall = time.perf_counter() - start
    report = gelu_pipelined.last_report
    correct = torch.allclose(y, _reference(x), rtol=1e-5, atol=1e-6) and report.hazards == []
    print(report)
    out = os.environ.get("PYPTO_EXAMPLES_OUT") or tempfile.gettempdir()
    trace = os.path.join(out, "gelu_pipelined_trace.json")
    report.save_trace(trace)
    try:
        png = os.path.join(out, "gelu_pipelined_timeline.png")
        drawn = report.save_timeline(png, max_cores=2)
        pictured = os.path.getsize(png) > 0
        print(f"timeline of {', '.join(drawn)}: {png}")
    except ImportError as e:  # matplotlib is the optional 'plot' extra
        pictured = True
        print(f"no timeline picture ({e})")
    print(f"Perfetto trace (open in https://ui.perfetto.dev): {trace}")

    # 3. one speed comparison against torch (CPU), next to the simulator's estimate for the device
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        _reference(x)
        runs.append(time.perf_counter() - start)
    torch_us = 1e6 * min(runs)
    npu_us = report.params.cycles_to_us(report.total_cycles)
    print(f"x * sigmoid(1.702 x) over {tuple(x.shape)} fp32: torch on this CPU {torch_us:.0f} us; simulated "
          f"{report.arch} with {BLOCKS} vector cores {npu_us:.0f} us (cost-model estimate); the simulation "
          f"itself took {sim_wall:.2f} s for {len(report.instructions)} instructions")
    ok = caught and correct and pictured
    print(f"pipelined kernel clean and correct, timeline written: {'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
