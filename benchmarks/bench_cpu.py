"""CPU backend benchmarks, side by side in one run (medians; ratios; GB/s or GFLOP/s).

Run: ``python benchmarks/bench_cpu.py [--quick]``.  Results and the machine are recorded in
docs/performance.md.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import pypto_pro.language as pl

HERE = Path(__file__).parent


def _times(fn, repeat: int, number: int) -> list:
    """Seconds per call of ``fn`` for each of ``repeat`` rounds of ``number`` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return times


def median_time(fn, repeat: int = 7, number: int = 1) -> float:
    return statistics.median(_times(fn, repeat, number))


def best_time(fn, repeat: int = 7, number: int = 1) -> float:
    return min(_times(fn, repeat, number))


@pl.jit(backend="cpu")
def seed_add(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
             out: pl.Tensor[[64, 64], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tb = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    to = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        pl.load(ta.current(), a, [0, 0])
        pl.load(tb.current(), b, [0, 0])
        pl.add(to.current(), ta.current(), tb.current())
        pl.store(out, to.current(), [0, 0])


FR, FC = 16, 1024


@pl.jit(backend="cpu")
def fused(a: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32], b: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32],
          c: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32]):
    ta = pl.make_tile(pl.TileType([FR, FC], pl.DT_FP32), addr=0x0)
    tb = pl.make_tile(pl.TileType([FR, FC], pl.DT_FP32), addr=0x10000)
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), a.shape[0] // FR, pl.get_block_num()):
            pl.load(ta, a, [t * FR, 0])
            pl.load(tb, b, [t * FR, 0])
            pl.mul(ta, ta, tb)
            pl.load(tb, c, [t * FR, 0])
            pl.add(ta, ta, tb)
            pl.relu(ta, ta)
            pl.mul(ta, ta, 0.5)
            pl.store(out, ta, [t * FR, 0])


@pl.jit(backend="cpu")
def copy(a: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, FC], pl.DT_FP32]):
    ta = pl.make_tile(pl.TileType([FR, FC], pl.DT_FP32), addr=0x0)
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), a.shape[0] // FR, pl.get_block_num()):
            pl.load(ta, a, [t * FR, 0])
            pl.store(out, ta, [t * FR, 0])


SR, SC = 8, 4096


@pl.jit(backend="cpu")
def softmax(x: pl.Tensor[[pl.DYNAMIC, SC], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, SC], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([SR, SC], pl.DT_FP32), addr=0x0)
    tmp = pl.make_tile(pl.TileType([SR, SC], pl.DT_FP32), addr=0x0)  # row ops never read tmp
    stat = pl.make_tile(pl.TileType([SR, 1], pl.DT_FP32, layout=pl.DN), addr=0x20000)
    with pl.section_vector():
        for blk in pl.range(pl.get_block_idx(), x.shape[0] // SR, pl.get_block_num()):
            pl.load(t, x, [blk * SR, 0])
            pl.maximum(stat, t, tmp, dim=0)
            pl.expand_sub(t, t, stat, dim=0)
            pl.exp(t, t)
            pl.sum(stat, t, tmp, dim=0)
            pl.expand_div(t, t, stat, dim=0)
            pl.store(y, t, [blk * SR, 0])


CR, CC = 32, 512


def chain_kernel(name: str):
    """y = sigmoid((a*b + 1)*0.5 - b) * a as nine tile ops, the shape of the tensor-level lowering."""

    @pl.jit(backend="cpu", name=name)
    def chain(a: pl.Tensor[[pl.DYNAMIC, CC], pl.DT_FP32], b: pl.Tensor[[pl.DYNAMIC, CC], pl.DT_FP32],
              y: pl.Tensor[[pl.DYNAMIC, CC], pl.DT_FP32]):
        ta = pl.make_tile(pl.TileType([CR, CC], pl.DT_FP32), addr=0x0)
        tb = pl.make_tile(pl.TileType([CR, CC], pl.DT_FP32), addr=0x10000)
        t = pl.make_tile(pl.TileType([CR, CC], pl.DT_FP32), addr=0x20000)
        with pl.section_vector():
            for i in pl.range(pl.get_block_idx(), a.shape[0] // CR, pl.get_block_num()):
                pl.load(ta, a, [i * CR, 0])
                pl.load(tb, b, [i * CR, 0])
                pl.mul(t, ta, tb)
                pl.add(t, t, 1.0)
                pl.mul(t, t, 0.5)
                pl.sub(t, t, tb)
                pl.neg(t, t)
                pl.exp(t, t)
                pl.add(t, t, 1.0)
                pl.recip(t, t)
                pl.mul(t, t, ta)
                pl.store(y, t, [i * CR, 0])
    return chain


def compiled_without_fusion(kernel, *args) -> None:
    """Launch ``kernel`` once so it is compiled with the element-wise fusion pass off ($PYPTO_CPU_FUSION=0)."""
    old = os.environ.get("PYPTO_CPU_FUSION")
    os.environ["PYPTO_CPU_FUSION"] = "0"
    try:
        kernel(*args)
    finally:
        if old is None:
            del os.environ["PYPTO_CPU_FUSION"]
        else:
            os.environ["PYPTO_CPU_FUSION"] = old


def mm_kernel(dt, TM: int = 128, TK: int = 128, TN: int = 128):
    """C = A @ B over TM x TN output tiles, K in TK steps through L1 (Mat) and L0 (Left/Right)."""

    @pl.jit(backend="cpu", name=f"mm_{dt.name}_{TM}x{TK}x{TN}")
    def mm(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt], b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt],
           c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        a1 = pl.make_tile(pl.TileType([TM, TK], dt, pl.MemorySpace.Mat), addr=0x0)
        b1 = pl.make_tile(pl.TileType([TK, TN], dt, pl.MemorySpace.Mat), addr=0x10000)
        a0 = pl.make_tile(pl.TileType([TM, TK], dt, pl.MemorySpace.Left), addr=0x0)
        b0 = pl.make_tile(pl.TileType([TK, TN], dt, pl.MemorySpace.Right), addr=0x0)
        acc = pl.make_tile(pl.TileType([TM, TN], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
        nt = n // TN
        with pl.section_cube():
            for t in pl.range(pl.get_block_idx(), (m // TM) * nt, pl.get_block_num()):
                i = t // nt
                j = t % nt
                for kk in pl.range(k // TK):
                    pl.load(a1, a, [i * TM, kk * TK])
                    pl.load(b1, b, [kk * TK, j * TN])
                    pl.move(a0, a1)
                    pl.move(b0, b1)
                    if kk == 0:
                        pl.matmul(acc, a0, b0)
                    else:
                        pl.matmul_acc(acc, acc, a0, b0)
                pl.store(c, acc, [i * TM, j * TN])
    return mm


def row(name, ours, theirs, label, unit_ours="", unit_theirs=""):
    print(f"{name:<44} {ours * 1e3:9.3f} ms {unit_ours:>14} | {label:<16} {theirs * 1e3:9.3f} ms {unit_theirs:>14} "
          f"| ratio {theirs / ours:5.2f}x")


def main(quick: bool) -> None:
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {os.uname().machine}, {cores} cores, torch {torch.__version__} ({torch.get_num_threads()} threads)")
    # --- launch overhead
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    o = torch.empty_like(a)
    k = seed_add[None, 1]
    t_ours = median_time(lambda: k(a, b, o), number=2000)
    t_torch = median_time(lambda: torch.add(a, b, out=o), number=2000)
    # on a shared machine the best of the repeats is the steadier number for microsecond timings
    b_ours = best_time(lambda: k(a, b, o), number=2000)
    b_torch = best_time(lambda: torch.add(a, b, out=o), number=2000)
    print(f"{'cached launch, seed Add 64x64 fp16':<44} {t_ours * 1e6:8.2f} us/launch (best {b_ours * 1e6:.2f}) | "
          f"torch.add {t_torch * 1e6:8.2f} us (best {b_torch * 1e6:.2f}) | ratio {t_torch / t_ours:5.2f}x")
    # --- cold compile / warm start
    with tempfile.TemporaryDirectory() as tmp:
        code = ("import time; t=time.perf_counter(); import sys; sys.path.insert(0, %r); "
                "import bench_cpu as m, torch; a=torch.rand(64,64,dtype=torch.float16); o=torch.empty_like(a); "
                "t1=time.perf_counter(); m.seed_add(a, a, o); print(time.perf_counter()-t1, time.perf_counter()-t)"
                % str(HERE))
        env = dict(os.environ, PYPTO_BUILD_DIR=tmp)
        cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.split()
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)  # runtime lib built
        warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.split()
        print(f"cold compile of seed Add (incl. runtime library): first launch {float(cold[0]):.2f} s")
        print(f"new process, warm cache: first launch {float(warm[0]) * 1e3:.0f} ms "
              f"(process incl. imports {float(warm[1]):.2f} s)")
    # --- fused elementwise vs copy
    n = (1 << 22) if quick else (1 << 24)
    rows = n // FC
    x = [torch.rand(rows, FC) for _ in range(3)]
    out = torch.empty(rows, FC)
    bd = cores
    t_copy = median_time(lambda: copy[None, bd](x[0], out), repeat=5)
    t_fused = median_time(lambda: fused[None, bd](x[0], x[1], x[2], out), repeat=5)
    assert torch.allclose(out, torch.relu(x[0] * x[1] + x[2]) * 0.5)
    eager = lambda: torch.mul(torch.relu(x[0] * x[1] + x[2]), 0.5, out=out)  # noqa: E731
    t_eager = median_time(eager, repeat=5)
    comp = torch.compile(lambda p, q, r: torch.relu(p * q + r) * 0.5)
    t_comp = median_time(lambda: comp(*x), repeat=5)
    gb = lambda bytes_, t: f"{bytes_ / t / 1e9:.1f} GB/s"  # noqa: E731
    row("tile copy (load/store), fp32", t_copy, t_copy, "(baseline)", gb(2 * 4 * n, t_copy), "")
    row("fused relu(a*b+c)*0.5 fp32", t_fused, t_eager, "torch eager", gb(4 * 4 * n, t_fused), gb(4 * 4 * n, t_eager))
    row("fused relu(a*b+c)*0.5 fp32", t_fused, t_comp, "torch.compile", "", gb(4 * 4 * n, t_comp))
    print(f"  fused bandwidth / copy bandwidth = {(4 * 4 * n / t_fused) / (2 * 4 * n / t_copy) * 100:.0f}%")
    # --- element-wise fusion: a 9-op chain with the fusion pass on and off (same run)
    c_on, c_off = chain_kernel("chain_fused"), chain_kernel("chain_unfused")
    c_ref = lambda p, q: torch.sigmoid((p * q + 1.0) * 0.5 - q) * p  # noqa: E731
    c_comp = torch.compile(c_ref)
    for cr in (256, n // CC):
        ca, cb, cy = torch.randn(cr, CC), torch.randn(cr, CC), torch.empty(cr, CC)
        compiled_without_fusion(c_off[None, bd], ca, cb, cy)
        t_on = median_time(lambda: c_on[None, bd](ca, cb, cy), repeat=15)
        assert torch.allclose(cy, c_ref(ca, cb), atol=1e-5)
        t_off = median_time(lambda: c_off[None, bd](ca, cb, cy), repeat=15)
        t_cc = median_time(lambda: c_comp(ca, cb), repeat=15)
        name, nbytes = f"9-op chain sigmoid((a*b+1)*.5-b)*a {cr}x{CC}", 3 * 4 * cr * CC
        row(name, t_on, t_off, "fusion off", gb(nbytes, t_on), gb(nbytes, t_off))
        row(name, t_on, t_cc, "torch.compile", "", gb(nbytes, t_cc))
    # --- softmax
    sr = 1024 if quick else 4096
    xs = torch.randn(sr, SC)
    ys = torch.empty_like(xs)
    t_sm = median_time(lambda: softmax[None, bd](xs, ys), repeat=5)
    assert torch.allclose(ys, torch.softmax(xs, 1), atol=1e-6)
    t_tsm = median_time(lambda: torch.softmax(xs, 1), repeat=5)
    row(f"row softmax {sr}x{SC} fp32", t_sm, t_tsm, "torch.softmax", gb(2 * 4 * sr * SC, t_sm), "")
    # --- matmul
    for dt, tdt in ((pl.DT_FP32, torch.float32), (pl.DT_FP16, torch.float16), (pl.DT_BF16, torch.bfloat16)):
        s = 512 if quick else 2048
        am = torch.randn(s, s).to(tdt)
        bm = torch.randn(s, s).to(tdt)
        cm = torch.empty(s, s)
        mm = mm_kernel(dt)
        t_mm = median_time(lambda: mm[None, bd](am, bm, cm), repeat=3)
        t_tmm = median_time(lambda: torch.matmul(am.float(), bm.float()), repeat=3)
        fl = lambda t: f"{2 * s ** 3 / t / 1e9:.1f} GFLOP/s"  # noqa: E731
        row(f"tile matmul {s}^3 {dt.name}->FP32", t_mm, t_tmm, "torch.matmul f32", fl(t_mm), fl(t_tmm))


if __name__ == "__main__":
    main("--quick" in sys.argv)
