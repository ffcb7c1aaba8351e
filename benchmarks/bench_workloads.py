"""The workloads of issue 16 side by side with numpy and torch (docs/performance.md carries the table).

One run prints, per workload and thread count: our median time, numpy's (where numpy has the op;
element-wise numpy runs on one thread, its matmul on --threads OpenBLAS threads), torch eager's,
torch.compile's where the goal is stated against it, the ratio the goal is stated in, and GB/s or
GFLOP/s; every time is the median of --repeat samples, with the spread (min-max) in brackets.  ``--clock cpu`` measures the calling thread's CPU time
instead of wall time: on a machine shared with other jobs that is the steadier number for the
one-thread cases (both sides then run on the calling thread: our one-block launches and torch with
one intra-op thread); it is meaningless for more threads.

Allocations: torch and numpy return a fresh 16 MiB array per call.  With glibc's defaults such a block
is often an mmap that is unmapped on free, so the next call page-faults (and zeroes) all of it: torch's
softmax then takes 2-9 ms at random instead of 2.  The script re-executes itself with glibc malloc
tunables that keep such blocks on the heap (reused, no faults): the reference libraries are measured
at their best.  --fresh-pages keeps glibc's defaults.

Order: each workload measures ours, then numpy, then torch (``--torch-first``: torch, then ours, then
numpy), each after a 0.1 s pause: torch's OpenMP workers (libgomp) keep spinning on their cores for a
while after an op, and a launch of ours that starts meanwhile finds its second core busy.  Run both orders
to see whether the order matters on the machine at hand.

Usage: python benchmarks/bench_workloads.py [--repeat N] [--threads 1,2] [--clock wall|cpu] [--only NAME,..]
       [--fresh-pages] [--torch-first]
(``--only launch --threads ""``: the cached-launch row alone, without a thread table)
"""
import argparse
import ctypes
import glob
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

import pypto
import pypto_pro.language as pl

sys.path.insert(0, str(Path(__file__).parent))
from bench_cpu import mm_kernel, seed_add  # noqa: E402


@pypto.frontend.jit
def gelu_k(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 1024)
    y[:] = pypto.gelu(x)


@pypto.frontend.jit
def erf_k(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 1024)
    y[:] = pypto.erf(x)


@pypto.frontend.jit
def where_k(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 1024)
    y[:] = pypto.where(x > 0, x, 0.0)


@pypto.frontend.jit
def copy_k(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 1024)
    y[:] = x


@pypto.frontend.jit
def softmax_k(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 1024)
    y[:] = pypto.softmax(x, -1)


@pypto.frontend.jit
def rmsnorm_k(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 1024)
    y[:] = pypto.rms_norm(x, g, 1e-6)


@pypto.frontend.jit
def layernorm_k(x: pypto.Tensor(), g: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 1024)
    y[:] = pypto.layer_norm(x, g, b, 1e-5)


@pypto.frontend.jit
def chain_k(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 1024)
    y[:] = pypto.sigmoid((a * b + 1.0) * 0.5 - b) * a


@pypto.frontend.jit
def mlp_k(x: pypto.Tensor(), w1: pypto.Tensor(), w2: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(16, 512)
    pypto.set_cube_tile_shapes([256, 256], [32, 32], [256, 256])  # (128^3: ~1.25x torch; docs/performance.md)
    h = pypto.gelu(pypto.matmul(x, w1, pypto.DT_FP32))
    y[:] = pypto.rms_norm(pypto.matmul(h, w2, pypto.DT_FP32) + x, g, 1e-6)


def tile_select_kernel():
    R, C = 8, 1024

    @pl.jit(backend="cpu", name="bench_cmp_select")
    def cmp_select(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType([R, C], pl.DT_FP32), addr=0x0)
        o = pl.make_tile(pl.TileType([R, C], pl.DT_FP32), addr=0x8000)
        m = pl.make_tile(pl.TileType([R, C], pl.DT_UINT8), addr=0x10000)
        with pl.section_vector():
            for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
                pl.load(t, x, [i * R, 0])
                pl.gt(m, t, 0.0)
                pl.select(o, m, t, 0.0)
                pl.store(y, o, [i * R, 0])
    return cmp_select


def set_numpy_blas_threads(n: int) -> None:
    """numpy's bundled OpenBLAS: n threads for np.matmul (no threadpoolctl here; the wheel exports the setter)."""
    for lib in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "libscipy_openblas*.so")):
        dll = ctypes.CDLL(lib)
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(dll, name, None)
            if fn is not None:
                fn(ctypes.c_int(n))
                return


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_rms_norm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + eps) * g


def np_layer_norm(x, g, b, eps):
    m = x.mean(-1, keepdims=True)
    d = x - m
    return d / np.sqrt(np.mean(d * d, -1, keepdims=True) + eps) * g + b


def np_chain(a, b):
    return a / (1.0 + np.exp(-((a * b + 1.0) * 0.5 - b)))


def samples(fn, repeat: int, clock) -> list:
    time.sleep(0.1)  # let the previous contender's spinning thread pool go idle
    fn()
    out = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return out


def fmt(s: list) -> str:
    return f"{statistics.median(s) * 1e3:8.3f} [{min(s) * 1e3:.3f}-{max(s) * 1e3:.3f}]"


def workloads(threads: int):
    torch.manual_seed(0)
    x = torch.randn(512, 1024)
    y = torch.empty_like(x)
    x2 = torch.randn(256, 1024)
    y2 = torch.empty_like(x2)
    a, b = torch.randn(4096, 1024), torch.randn(4096, 1024)
    yb = torch.empty_like(a)
    g, beta = torch.rand(1024) + 0.5, torch.randn(1024)
    gelu_ref = torch.nn.functional.gelu
    mb = 4 * 512 * 1024 * 2 / 1e9
    xn, x2n, an, bn, gn, betan = x.numpy(), x2.numpy(), a.numpy(), b.numpy(), g.numpy(), beta.numpy()
    yield ("exact gelu 512x1024", lambda: gelu_k(x, y), lambda: gelu_ref(x), "eager", mb, None, None)
    yield ("erf 512x1024", lambda: erf_k(x, y), lambda: torch.erf(x), "eager", mb, None, None)
    yield ("where(x>0,x,0) 512x1024", lambda: where_k(x, y), lambda: torch.where(x > 0, x, 0.0), "eager", mb, None,
           lambda: np.where(xn > 0, xn, np.float32(0)))
    sel = tile_select_kernel()
    yield ("tile compare+select 256x1024", lambda: sel[None, threads](x2, y2),
           lambda: torch.where(x2 > 0, x2, torch.zeros(())), "eager", 4 * 256 * 1024 * 2 / 1e9, None,
           lambda: np.where(x2n > 0, x2n, np.float32(0)))
    big = 4 * 4096 * 1024 * 2 / 1e9
    yield (COPY_ROW, lambda: copy_k(a, yb), lambda: yb.copy_(a), "eager", big, None, lambda: np.copyto(yb.numpy(), an))
    yield ("softmax 4096x1024", lambda: softmax_k(a, yb), lambda: torch.softmax(a, -1), "eager", big, None,
           lambda: np_softmax(an))
    yield ("rms_norm 4096x1024", lambda: rmsnorm_k(a, g, yb),
           lambda: torch.nn.functional.rms_norm(a, (1024,), g, 1e-6), "eager", big, None,
           lambda: np_rms_norm(an, gn, np.float32(1e-6)))
    yield ("layer_norm 4096x1024", lambda: layernorm_k(a, g, beta, yb),
           lambda: torch.nn.functional.layer_norm(a, (1024,), g, beta, 1e-5), "eager", big, None,
           lambda: np_layer_norm(an, gn, betan, np.float32(1e-5)))
    yield ("chain sigmoid((a*b+1)*.5-b)*a", lambda: chain_k(a, b, yb),
           lambda: torch.sigmoid((a * b + 1.0) * 0.5 - b) * a, "compile", 3 * 4 * 4096 * 1024 / 1e9, None,
           lambda: np_chain(an, bn))
    xm, w1, w2 = torch.randn(256, 512), torch.randn(512, 1024) * 0.05, torch.randn(1024, 512) * 0.05
    gm, ym = torch.rand(512) + 0.5, torch.empty(256, 512)
    mlp_ref = lambda: torch.nn.functional.rms_norm(gelu_ref(xm @ w1) @ w2 + xm, (512,), gm, 1e-6)  # noqa: E731
    yield ("MLP rms_norm(gelu(x@W1)@W2+x)", lambda: mlp_k(xm, w1, w2, gm, ym), mlp_ref, "eager", None,
           2 * 2 * 256 * 512 * 1024 / 1e9, None)
    for dt, tdt, s, tiles in ((pl.DT_FP16, torch.float16, 1024, (128, 128, 128)),
                              (pl.DT_FP16, torch.float16, 1024, (256, 32, 256)),
                              (pl.DT_FP32, torch.float32, 2048, (128, 128, 128)),
                              (pl.DT_FP32, torch.float32, 2048, (256, 64, 128))):
        am, bm, cm = torch.randn(s, s).to(tdt), torch.randn(s, s).to(tdt), torch.empty(s, s)
        af, bf = am.float(), bm.float()
        mm = mm_kernel(dt, *tiles)
        an_, bn_ = af.numpy(), bf.numpy()
        yield (f"matmul {s}^3 {dt.name} {'x'.join(map(str, tiles))}", lambda: mm[None, threads](am, bm, cm),
               lambda: torch.matmul(af, bf), "eager", None, 2 * s ** 3 / 1e9, lambda: np.matmul(an_, bn_))


def launch_row(repeat: int, clock) -> None:
    a, b = torch.rand(64, 64, dtype=torch.float16), torch.rand(64, 64, dtype=torch.float16)
    o = torch.empty_like(a)
    seed_add[None, 1](a, b, o)
    from pypto_pro.backends.cpu import clauncher

    clauncher.wait_built()
    seed_add[None, 1](a, b, o)
    n = 2000

    def ours():
        for _ in range(n):
            seed_add[None, 1](a, b, o)

    def theirs():
        for _ in range(n):
            torch.add(a, b, out=o)

    s_o = [t / n * 1e3 for t in samples(ours, repeat, clock)]
    s_t = [t / n * 1e3 for t in samples(theirs, repeat, clock)]
    r = statistics.median(s_o) / statistics.median(s_t)
    print(f"{'cached launch seed Add (us)':<34}{fmt(s_o)}  torch.add {fmt(s_t)}  ours/torch {r:5.2f}")


COPY_ROW = "copy 4096x1024 (memory floor)"
ROW_NORMS = ("softmax", "rms_norm", "layer_norm")


def floor_note(name: str, m_t: float, floors: dict) -> str:
    """For the rows whose goal is eager/ours >= 2: the time that goal needs, against this run's copy floor.

    softmax and the norms read 16 MiB and write 16 MiB, as the copy row does; a time below the fastest
    copy of the same bytes (ours or torch's, median) is out of reach of any kernel on this machine.
    """
    if name.split()[0] not in ROW_NORMS or COPY_ROW not in floors:
        return ""
    need, floor = m_t / 2, floors[COPY_ROW]
    return f"  (>= 2 needs <= {need * 1e3:.3f} ms: {need / floor:.2f}x the copy floor {floor * 1e3:.3f} ms)"


HEAP_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"


def run_part(args, clock, only: list, threads: int) -> None:
    """One thread count's table (or, with threads == 0, the launch row), in this process."""
    if threads == 0:
        torch.set_num_threads(1)
        launch_row(args.repeat, clock)
        return
    torch.set_num_threads(threads)
    set_numpy_blas_threads(threads)
    print(f"\n--- {threads} thread(s)")
    print(f"{'workload':<34}{'ours':>24}{'numpy':>24}{'torch':>26}  {'ratio':>22}  rate")
    floors = {}
    for name, ours, ref, against, gb, gflop, np_ref in workloads(threads):
        if only and not any(w in name for w in only):
            continue
        if against == "compile":
            ref = torch.compile(ref)
        s_t = samples(ref, args.repeat, clock) if args.torch_first else None
        s_o = samples(ours, args.repeat, clock)
        s_n = samples(np_ref, args.repeat, clock) if np_ref is not None else None
        if s_t is None:
            s_t = samples(ref, args.repeat, clock)
        m_o, m_t = statistics.median(s_o), statistics.median(s_t)
        ratio = f"ours/{against} {m_o / m_t:5.2f}" if against == "eager" else f"{against}/ours {m_t / m_o:5.2f}"
        if against == "eager" and name.split()[0] in ROW_NORMS:
            ratio = f"eager/ours {m_t / m_o:5.2f}"
        if name == COPY_ROW:
            floors[name] = min(m_o, m_t)
        rate = f"{gb / m_o:6.1f} GB/s" if gb else f"{gflop / m_o:6.1f} GFLOP/s vs {gflop / m_t:6.1f}"
        numpy_col = fmt(s_n) if s_n else f"{'-':>8}"
        print(f"{name:<34}{fmt(s_o)}  {numpy_col:>22}  {against:>7} {fmt(s_t)}  {ratio:>22}  {rate}"
              f"{floor_note(name, m_t, floors)}")


def main() -> None:
    if "--fresh-pages" not in sys.argv and os.environ.get("GLIBC_TUNABLES") != HEAP_TUNABLES:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "GLIBC_TUNABLES": HEAP_TUNABLES})
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--fresh-pages", action="store_true", help="glibc's default malloc (see the module doc)")
    parser.add_argument("--torch-first", action="store_true", help="measure torch before ours (see the module doc)")
    parser.add_argument("--part", type=int, default=None, help=argparse.SUPPRESS)  # internal: one table
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    only = [w for w in args.only.split(",") if w]
    if args.part is not None:
        run_part(args, clock, only, args.part)
        return
    print(f"torch {torch.__version__}, numpy {np.__version__}, clock: {args.clock}; times in ms: median [min-max] of "
          f"{args.repeat}; order: {'torch, ours, numpy' if args.torch_first else 'ours, numpy, torch'}; "
          f"malloc: {'glibc defaults' if args.fresh_pages else HEAP_TUNABLES}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    # The cpu backend sizes its worker pool once per process, from $PYPTO_NUM_THREADS at the first launch:
    # each thread count (and the one-thread launch row) runs in a process of its own.
    parts = ([0] if not only or any("launch" in w for w in only) else []) + \
        [int(t) for t in args.threads.split(",") if t.strip()]  # --threads "": the launch row alone
    for part in parts:
        env = {**os.environ, "PYPTO_NUM_THREADS": str(max(part, 1))}
        subprocess.run([sys.executable, *sys.argv, "--part", str(part)], env=env, check=True)


if __name__ == "__main__":
    main()
