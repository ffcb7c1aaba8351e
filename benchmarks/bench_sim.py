"""Simulator throughput: tile instructions per second, end to end and for the pipe-model replay.

A double-buffered add (auto_mutex tile groups, 8x64 fp32 tiles) streams a DYNAMIC number of rows
over a few cores; every executed op (load, add, store, the mutex ops auto_mutex inserts) counts as
one instruction: 4000 tiles on 4 blocks are 64 000 instructions, 48 000 of them mutex ops.
"end to end" is the ``kernel[blocks](...)`` call with its report: on the compiled fast path
(backends/sim/fast: trace program, C++ replay with the race checks, values from the cpu backend), and
with ``--engine`` also on the interpreter engine (``PYPTO_SIM_FAST=0``: the interpreter computing the
values, the recording, the Python replay), whose replay alone is timed too.  Each is measured
``--repeat`` times (default 5) in wall time and in process CPU time; the median, the best and the worst
are printed (on a shared machine the CPU time is the steadier).
Run: ``python benchmarks/bench_sim.py [--repeat N] [--engine]``.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import numpy as np

import pypto_pro.language as pl
from pypto_pro.backends.interp.executor import Interpreter
from pypto_pro.backends.sim.costs import params_for
from pypto_pro.backends.sim.describe import race_hazard
from pypto_pro.backends.sim.recorder import Recorder
from pypto_pro.backends.sim.replay import Replay
from pypto_pro.backends.sim.simulate import paused_cycle_collection, resident_blocks, with_auto_mutex
from pypto_pro.runtime.args import bind_arguments, runtime_scalars

R, C = 8, 64
TT = pl.TileType([R, C], pl.DT_FP32)


@pl.jit(backend="sim")
def stream_add(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32],
               z: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    gx = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    gy = pl.make_tile_group(type=TT, addrs=0x1000, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=TT, addrs=0x2000, mutex_ids=[4, 5])
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            tx = gx.next()
            ty = gy.next()
            to = go.next()
            pl.load(tx, x, [t * R, 0])
            pl.load(ty, y, [t * R, 0])
            pl.add(to, tx, ty)
            pl.store(z, to, [t * R, 0])


def measure(tiles: int = 4000, blocks: int = 4, engine: bool = False):
    """(instructions, end-to-end wall s, end-to-end CPU s, replay wall s, replay CPU s); the replay only
    with ``engine`` (the interpreter engine's Python replay), else 0."""
    os.environ["PYPTO_SIM_FAST"] = "0" if engine else "1"
    x = np.ones((tiles * R, C), np.float32)
    y = np.ones_like(x)
    z = np.zeros_like(x)
    stream_add.last_report = None  # start from a collected heap: no garbage of the previous run to free
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    stream_add[blocks](x, y, z)
    end_to_end, end_to_end_cpu = time.perf_counter() - t0, time.process_time() - c0
    assert np.all(z == 2) and stream_add.last_report.hazards == []
    count = len(stream_add.last_report.instructions)
    if not engine:
        return count, end_to_end, end_to_end_cpu, 0.0, 0.0
    # replay alone, on a fresh recording of the same launch
    specs = stream_add.signature()
    tensors, scalars, key = bind_arguments(stream_add.name, specs, (x, y, z))
    kir = with_auto_mutex(next(iter(stream_add._variants.values())))
    interp = Interpreter(kir, tensors, runtime_scalars(kir.params, tensors, scalars), blocks)
    recorder = Recorder(interp, params_for(kir.arch), True, [])
    interp.run()
    labels = [c.label for c in interp.launch.cores]
    replay = Replay(recorder.streams, interp.launch.cores, params_for(kir.arch), resident_blocks(kir), [],
                    lambda *a: race_hazard(labels, *a))
    with paused_cycle_collection():
        t0, c0 = time.perf_counter(), time.process_time()
        replay.run()
        replay_s, replay_cpu = time.perf_counter() - t0, time.process_time() - c0
    return count, end_to_end, end_to_end_cpu, replay_s, replay_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs; the median, best and worst are reported")
    parser.add_argument("--engine", action="store_true", help="also time the interpreter engine")
    args = parser.parse_args()
    for engine in ((False, True) if args.engine else (False,)):
        measure(200, engine=engine)  # warm up (compile, caches)
        runs = [measure(engine=engine) for _ in range(args.repeat)]
        count = runs[0][0]

        def rate(column: int, what: str) -> str:
            times = [r[column] for r in runs]
            med, best, worst = statistics.median(times), min(times), max(times)
            return (f"{what} median {med:.3f} s = {count / med:,.0f} instr/s "
                    f"(best {best:.3f} s = {count / best:,.0f}, worst {worst:.3f} s)")

        name = "interpreter engine" if engine else "fast path"
        print(f"sim ({name}): {count} tile instructions, {args.repeat} runs")
        print(f"  end to end: {rate(1, 'wall')}; {rate(2, 'CPU')}")
        if engine:
            print(f"  replay alone (pipe model + race checks): {rate(3, 'wall')}; {rate(4, 'CPU')}")
    os.environ.pop("PYPTO_SIM_FAST", None)


if __name__ == "__main__":
    main()
