"""Simulator wall time of a SwiGLU tile kernel over [4096, 4096] fp16, values included.

``out = silu(gate) * up`` with ``silu(g) = g / (1 + exp(-g))``, streamed in 32x512 fp16 tiles over
16 blocks (vector cores): three tile groups of depth 2 (gate, up, out; 192 KiB of UB) under
auto_mutex, so the load of tile i+1 overlaps the compute and store of tile i.  Per tile: two loads,
five vector ops (neg, exp, add 1, div, mul, computed in place in the out slot), one store, plus the
mutex ops auto_mutex inserts: 1024 tiles, 30 720 executed instructions.  By default the launch runs on
the compiled fast path (backends/sim/fast; exp makes it take the values from the interpreter, whose fp16
conversions are then compiled); ``--engine`` runs it on the interpreter engine (``PYPTO_SIM_FAST=0``).

Reported: the median (and the spread) of ``--repeat`` runs (default 5) of the ``kernel[blocks](...)``
call (interpreter values, recording, replay, report), in wall time and in process CPU time (the
machine may be shared; CPU time is the steadier of the two).  The output is checked against a numpy
model of the same fp16 steps.  Run: ``python benchmarks/bench_sim_swiglu.py [--repeat N] [--blocks B]``.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import numpy as np

import pypto_pro.language as pl

N = 4096
R, C = 32, 512
TT = pl.TileType([R, C], pl.DT_FP16)
TILE_BYTES = R * C * 2


@pl.jit(backend="sim")
def swiglu(gate: pl.Tensor[[N, N], pl.DT_FP16], up: pl.Tensor[[N, N], pl.DT_FP16],
           out: pl.Tensor[[N, N], pl.DT_FP16]):
    gg = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    gu = pl.make_tile_group(type=TT, addrs=2 * TILE_BYTES, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=TT, addrs=4 * TILE_BYTES, mutex_ids=[4, 5])
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), (N // R) * (N // C), pl.get_block_num()):
            r = (t // (N // C)) * R
            c = (t % (N // C)) * C
            tg = gg.next()
            tu = gu.next()
            to = go.next()
            pl.load(tg, gate, [r, c])
            pl.load(tu, up, [r, c])
            pl.neg(to, tg)
            pl.exp(to, to)
            pl.add(to, to, 1.0)
            pl.div(to, tg, to)
            pl.mul(to, to, tu)
            pl.store(out, to, [r, c])


def expected(g: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The same steps in numpy: each op computed in fp32 and rounded to fp16 once."""
    h = np.float16
    with np.errstate(all="ignore"):
        t = (-g.astype(np.float32)).astype(h)
        t = np.exp(t.astype(np.float32)).astype(h)
        t = (t.astype(np.float32) + np.float32(1)).astype(h)
        t = (g.astype(np.float32) / t.astype(np.float32)).astype(h)
        return (t.astype(np.float32) * u.astype(np.float32)).astype(h)


def measure(g: np.ndarray, u: np.ndarray, blocks: int):
    """(instructions, total cycles, wall seconds, CPU seconds) of one launch."""
    out = np.zeros_like(g)
    swiglu.last_report = None  # free the previous launch's records before timing
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    swiglu[blocks](g, u, out)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    report = swiglu.last_report
    assert report.hazards == []
    assert np.array_equal(out, expected(g, u)), "values differ from the numpy model"
    return len(report.instructions), report.total_cycles, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--blocks", type=int, default=16, help="block_dim (vector cores)")
    parser.add_argument("--engine", action="store_true", help="the interpreter engine instead of the fast path")
    args = parser.parse_args()
    os.environ["PYPTO_SIM_FAST"] = "0" if args.engine else "1"
    rng = np.random.default_rng(0)
    g = rng.standard_normal((N, N), dtype=np.float32).astype(np.float16)
    u = rng.standard_normal((N, N), dtype=np.float32).astype(np.float16)
    measure(g, u, args.blocks)  # warm up: parse, check and compile the kernel, numpy's first calls
    runs = [measure(g, u, args.blocks) for _ in range(args.repeat)]
    count, cycles = runs[0][0], runs[0][1]
    walls, cpus = [r[2] for r in runs], [r[3] for r in runs]
    print(f"sim swiglu ({'interpreter engine' if args.engine else 'fast path'}) [{N}, {N}] fp16, {R}x{C} tiles, {args.blocks} blocks: {count} instructions, "
          f"{cycles} cycles; median of {args.repeat}: wall {statistics.median(walls):.2f} s "
          f"(min {min(walls):.2f}, max {max(walls):.2f}), CPU {statistics.median(cpus):.2f} s "
          f"(min {min(cpus):.2f}) = {count / statistics.median(cpus):,.0f} instr/CPU-s")


if __name__ == "__main__":
    main()
