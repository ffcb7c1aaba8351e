"""Tensor-level kernels vs torch eager and torch.compile, side by side (medians, ratios).

Runs on whatever backend is the default (``PYPTO_BACKEND`` overrides); prints one table per
size: a mid size where launch overhead still counts and a large one where memory traffic and the
per-element work decide.
Usage: python benchmarks/bench_tensor.py [--repeat N] [--sizes 256x512,4096x1024]
"""
import argparse
import statistics
import time

import torch

import pypto
from pypto_pro.backends.cpu.workers import cpu_workers
from pypto_pro.runtime.jit import select_backend


@pypto.frontend.jit
def chain(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor(), tile: tuple = (32, 512)):
    pypto.set_vec_tile_shapes(*tile)
    y[:] = pypto.sigmoid((a * b + 1.0) * 0.5 - b) * a


@pypto.frontend.jit
def softmax(x: pypto.Tensor(), y: pypto.Tensor(), tile: tuple = (32, 512)):
    pypto.set_vec_tile_shapes(*tile)
    y[:] = pypto.softmax(x, -1)


@pypto.frontend.jit
def rmsnorm(x: pypto.Tensor(), g: pypto.Tensor(), y: pypto.Tensor(), tile: tuple = (32, 512)):
    pypto.set_vec_tile_shapes(*tile)
    y[:] = pypto.rms_norm(x, g, 1e-6)


@pypto.frontend.jit
def layernorm(x: pypto.Tensor(), g: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor(), tile: tuple = (32, 512)):
    pypto.set_vec_tile_shapes(*tile)
    y[:] = pypto.layer_norm(x, g, b, 1e-5)


@pypto.frontend.jit
def ffn(x: pypto.Tensor(), w1: pypto.Tensor(), w2: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_cube_tile_shapes([128, 128], [128, 256], [128, 256])
    pypto.set_vec_tile_shapes(32, 256)
    h = pypto.relu(pypto.matmul(x, w1, pypto.DT_FP32))
    y[:] = pypto.matmul(pypto.cast(h, pypto.DT_FP16), w2, pypto.DT_FP32)


def median_time(fn, repeat: int) -> float:
    """Median wall time of ``fn`` after a warm-up call.  Starts with a short sleep: thread pools of
    the contender measured just before (torch's OpenMP workers) keep spinning for a while after
    their last task and would steal the cores from this one."""
    time.sleep(0.2)
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def vec_tile(C: int) -> tuple:
    """Whole rows (reductions in one pass), 32 KB of FP32 per tile."""
    return (max(1, 8192 // C), C)


def cases(R: int, C: int):
    t = vec_tile(C)
    torch.manual_seed(0)
    a, b = torch.randn(R, C), torch.randn(R, C)
    g, beta = torch.rand(C) + 0.5, torch.randn(C)
    y = torch.empty(R, C)
    x16 = torch.randn(128, 256).half()
    w1, w2 = (torch.randn(256, 512) * 0.05).half(), (torch.randn(512, 256) * 0.05).half()
    y2 = torch.empty(128, 256)
    yield ("fused chain", lambda: chain(a, b, y, t), lambda: torch.sigmoid((a * b + 1.0) * 0.5 - b) * a)
    yield ("softmax", lambda: softmax(a, y, t), lambda: torch.softmax(a, -1))
    yield ("rmsnorm", lambda: rmsnorm(a, g, y, t), lambda: torch.nn.functional.rms_norm(a, (C,), g, 1e-6))
    yield ("layernorm", lambda: layernorm(a, g, beta, y, t),
           lambda: torch.nn.functional.layer_norm(a, (C,), g, beta, 1e-5))
    yield ("ffn relu", lambda: ffn(x16, w1, w2, y2),
           lambda: torch.relu(x16.float() @ w1.float()).half().float() @ w2.float())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="256x512,4096x1024", help="comma-separated RxC of the vector cases")
    args = parser.parse_args()
    print(f"backend: {select_backend(None)} (at most {cpu_workers()} cpu blocks per launch), "
          f"torch threads: {torch.get_num_threads()}")
    for size in args.sizes.split(","):
        R, C = (int(v) for v in size.split("x"))
        print(f"\n{R}x{C} FP32, vec tile {vec_tile(C)} (ffn: 128x256x512 FP16)")
        report(cases(R, C), args.repeat)


def report(case_list, repeat: int) -> None:
    """One table row per case: medians and ratios (> 1: pypto is faster)."""
    print(f"{'case':<14}{'pypto ms':>10}{'eager ms':>10}{'compile ms':>12}{'eager/pypto':>13}{'compile/pypto':>15}")
    for name, ours, ref in case_list:
        compiled = torch.compile(ref)
        try:
            t_ours = median_time(ours, repeat)
        except Exception as e:  # noqa: BLE001 - report the backend failure and go on
            print(f"{name:<14}  pypto failed on this backend: {type(e).__name__}: {str(e).splitlines()[0][:80]}")
            continue
        t_eager = median_time(ref, repeat)
        t_comp = median_time(compiled, repeat)
        print(f"{name:<14}{t_ours * 1e3:>10.3f}{t_eager * 1e3:>10.3f}{t_comp * 1e3:>12.3f}"
              f"{t_eager / t_ours:>13.2f}{t_comp / t_ours:>15.2f}")


if __name__ == "__main__":
    main()
