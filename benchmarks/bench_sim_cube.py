"""Simulator time of cube and mix kernels: a K-loop matmul and an attention-style cube/vector pipeline.

* ``matmul``: C[1024, 1024] (fp32) = A[1024, 1024] @ B[1024, 1024] (fp16) in 128x64x128 tiles over
  8 blocks (AI cores); L1, L0A, L0B double-buffered and L0C per output tile, all tile groups under
  auto_mutex; K accumulated with matmul_acc, each output tile stored through the fixpipe.
* ``attention``: per block 64 query rows against 1024 keys in 64-key steps (8 blocks, head dim 64): the
  cube computes S = Q K^T into L0C and stores it to a GM workspace, then signals both AIVs
  (set_cross_core); each AIV takes its 32 rows, subtracts the row max, exponentiates, casts to fp16 and
  stores P, then signals the cube, which loads P and accumulates O += P V (matmul_acc).  Two-way
  cross-core events, row reductions with scratch tiles, casts, matmuls.

Both run end to end (``kernel[blocks](...)`` with its report, values checked against numpy) on the
compiled fast path (backends/sim/fast, the default for launches this big) and, with ``--engine``, on the
interpreter engine (``PYPTO_SIM_FAST=0``).  Reported per kernel: executed instructions, and the median
(min-max) of ``--repeat`` runs in wall and process CPU time, and instructions per CPU second.
Run: ``python benchmarks/bench_sim_cube.py [--repeat N] [--engine] [--only matmul|attention]``.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import numpy as np

import pypto_pro.language as pl
from pypto_pro.backends.sim.fast.lazy import LazyStreams

MS = pl.MemorySpace
P = pl.PipeType
FP16, FP32 = pl.DT_FP16, pl.DT_FP32

# ------------------------------------------------------------------------------------------- matmul
M = K = N = 1024
TM, TK, TN = 128, 64, 128


@pl.jit(backend="sim")
def kloop_matmul(a: pl.Tensor[[M, K], FP16], b: pl.Tensor[[K, N], FP16], c: pl.Tensor[[M, N], FP32]):
    a1 = pl.make_tile_group(type=pl.TileType([TM, TK], FP16, MS.Mat), addrs=0x0, mutex_ids=[0, 1])
    b1 = pl.make_tile_group(type=pl.TileType([TK, TN], FP16, MS.Mat), addrs=0x8000, mutex_ids=[2, 3])
    a0 = pl.make_tile_group(type=pl.TileType([TM, TK], FP16, MS.Left), addrs=0x0, mutex_ids=[4, 5])
    b0 = pl.make_tile_group(type=pl.TileType([TK, TN], FP16, MS.Right), addrs=0x0, mutex_ids=[6, 7])
    acc = pl.make_tile_group(type=pl.TileType([TM, TN], FP32, MS.Acc), addrs=0x0, mutex_ids=[8, 9])
    with pl.section_cube():
        for t in pl.range(pl.get_block_idx(), (M // TM) * (N // TN), pl.get_block_num()):
            i = t // (N // TN)
            j = t % (N // TN)
            ct = acc.next()
            for kk in pl.range(K // TK):
                at = a1.next()
                bt = b1.next()
                pl.load(at, a, [i * TM, kk * TK])
                pl.load(bt, b, [kk * TK, j * TN])
                al = a0.next()
                br = b0.next()
                pl.move(al, at)
                pl.move(br, bt)
                if kk == 0:
                    pl.matmul(ct, al, br)
                else:
                    pl.matmul_acc(ct, ct, al, br)
            pl.store(c, ct, [i * TM, j * TN])


# ---------------------------------------------------------------------------------------- attention
QB, D, SK, KB = 64, 64, 1024, 64   # query rows per block, head dim, keys, keys per step
HALF = QB // 2


def buf(shape, dtype, space, addr, mutex_id, layout=None):
    """A depth-1 tile group with its own mutex id: one buffer that auto_mutex orders."""
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, layout=layout), addrs=addr,
                              mutex_ids=[mutex_id]).current()


@pl.jit(backend="sim")
def attention(q: pl.Tensor[[pl.DYNAMIC, D], FP16], kt: pl.Tensor[[D, SK], FP16], v: pl.Tensor[[SK, D], FP16],
              s_work: pl.Tensor[[pl.DYNAMIC, KB], FP32], p_work: pl.Tensor[[pl.DYNAMIC, KB], FP16],
              o: pl.Tensor[[pl.DYNAMIC, D], FP32]):
    q1 = buf([QB, D], FP16, MS.Mat, 0x0, 0)
    k1 = buf([D, KB], FP16, MS.Mat, 0x2000, 1)
    p1 = buf([QB, KB], FP16, MS.Mat, 0x4000, 2)
    v1 = buf([KB, D], FP16, MS.Mat, 0x6000, 3)
    q0 = buf([QB, D], FP16, MS.Left, 0x0, 4)
    p0 = buf([QB, KB], FP16, MS.Left, 0x2000, 5)
    k0 = buf([D, KB], FP16, MS.Right, 0x0, 6)
    v0 = buf([KB, D], FP16, MS.Right, 0x2000, 7)
    s_acc = buf([QB, KB], FP32, MS.Acc, 0x0, 8)
    o_acc = buf([QB, D], FP32, MS.Acc, 0x4000, 9)
    with pl.section_cube():
        r = pl.get_block_idx() * QB
        pl.load(q1, q, [r, 0])
        pl.move(q0, q1)
        for j in pl.range(SK // KB):
            pl.load(k1, kt, [0, j * KB])
            pl.move(k0, k1)
            pl.matmul(s_acc, q0, k0)
            pl.store(s_work, s_acc, [r, 0])
            pl.system.set_cross_core(pipe=P.FIX, event_id=0)
            pl.system.wait_cross_core(pipe=P.MTE2, event_id=1)
            pl.load(p1, p_work, [r, 0])
            pl.load(v1, v, [j * KB, 0])
            pl.move(p0, p1)
            pl.move(v0, v1)
            if j == 0:
                pl.matmul(o_acc, p0, v0)
            else:
                pl.matmul_acc(o_acc, o_acc, p0, v0)
        pl.store(o, o_acc, [r, 0])

    s = buf([HALF, KB], FP32, MS.Vec, 0x0, 10)
    tmp = buf([HALF, KB], FP32, MS.Vec, 0x2000, 11)
    row = buf([HALF, 1], FP32, MS.Vec, 0x4000, 12, layout=pl.DN)
    p = buf([HALF, KB], FP16, MS.Vec, 0x5000, 13)
    with pl.section_vector():
        r = (pl.get_block_idx() // pl.get_subblock_num()) * QB + pl.get_subblock_idx() * HALF
        for j in pl.range(SK // KB):
            pl.system.wait_cross_core(pipe=P.MTE2, event_id=0)
            pl.load(s, s_work, [r, 0])
            pl.maximum(row, s, tmp, dim=0)
            pl.expand_sub(s, s, row, dim=0)
            pl.exp(s, s)
            pl.cast(p, s)
            pl.store(p_work, p, [r, 0])
            pl.system.set_cross_core(pipe=P.MTE3, event_id=1)


def _attention_expected(q, kt, v, blocks):
    """numpy model of the kernel's steps: fp32 S, row max, exp, fp16 P, P @ V summed per key step."""
    out = np.zeros((blocks * QB, D), np.float32)
    for j in range(SK // KB):
        s = q.astype(np.float32) @ kt[:, j * KB:(j + 1) * KB].astype(np.float32)
        p = np.exp(s - s.max(axis=1, keepdims=True)).astype(np.float16)
        out += p.astype(np.float32) @ v[j * KB:(j + 1) * KB].astype(np.float32)
    return out


def _cases(blocks: int):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((M, K)) * 0.1).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.1).astype(np.float16)
    q = (rng.standard_normal((blocks * QB, D)) * 0.3).astype(np.float16)
    kt = (rng.standard_normal((D, SK)) * 0.3).astype(np.float16)
    v = (rng.standard_normal((SK, D)) * 0.3).astype(np.float16)
    mm_ref = a.astype(np.float32) @ b.astype(np.float32)
    att_ref = _attention_expected(q, kt, v, blocks)
    return {
        "matmul": (kloop_matmul, lambda: (a, b, np.zeros((M, N), np.float32)), 2, mm_ref),
        "attention": (attention, lambda: (q, kt, v, np.zeros((blocks * QB, KB), np.float32),
                                          np.zeros((blocks * QB, KB), np.float16),
                                          np.zeros((blocks * QB, D), np.float32)), 5, att_ref),
    }


def measure(kernel, make, out_index, ref, blocks):
    """(instructions, total cycles, wall s, CPU s) of one launch, the output checked against ``ref``."""
    args = make()
    kernel.last_report = None
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    kernel[blocks](*args)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    report = kernel.last_report
    assert report.hazards == []
    on_fast = isinstance(report._streams, LazyStreams)
    assert on_fast == (os.environ["PYPTO_SIM_FAST"] == "1"), "the launch did not run where it was meant to"
    np.testing.assert_allclose(args[out_index], ref, rtol=2e-2, atol=2e-2)
    return sum(c["instructions"] for c in report.per_core), report.total_cycles, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--blocks", type=int, default=8, help="block_dim (AI cores)")
    parser.add_argument("--engine", action="store_true", help="the interpreter engine instead of the fast path")
    parser.add_argument("--only", default="matmul,attention", help="comma-separated: matmul, attention")
    args = parser.parse_args()
    os.environ["PYPTO_SIM_FAST"] = "0" if args.engine else "1"
    where = "interpreter engine" if args.engine else "fast path"
    for name, (kernel, make, out_index, ref) in _cases(args.blocks).items():
        if name not in args.only.split(","):
            continue
        measure(kernel, make, out_index, ref, args.blocks)  # warm up: parse, compile, numpy's first calls
        runs = [measure(kernel, make, out_index, ref, args.blocks) for _ in range(args.repeat)]
        count, cycles = runs[0][0], runs[0][1]
        walls, cpus = [r[2] for r in runs], [r[3] for r in runs]
        print(f"sim {name} ({where}), {args.blocks} blocks: {count} instructions, {cycles} cycles; median of "
              f"{args.repeat}: wall {statistics.median(walls):.3f} s ({min(walls):.3f}-{max(walls):.3f}), "
              f"CPU {statistics.median(cpus):.3f} s ({min(cpus):.3f}-{max(cpus):.3f}) = "
              f"{count / statistics.median(cpus):,.0f} instr/CPU-s, {count / statistics.median(walls):,.0f} "
              f"instr/wall-s")


if __name__ == "__main__":
    main()
