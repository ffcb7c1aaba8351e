"""Float matmul: the interpreter's reference is the cpu backend's fp32 FMA chain per K block, added to
the block's bias or accumulator (ops/fp32math.py ``matmul32``), so both give the same bits for any data -- random normal operands (whose partial sums
round at almost every step), FP32/FP16/BF16, with a bias, with K accumulated over matmul_acc blocks,
with a transposed (ZN) rhs, and with a row edge that pto_rt_sgemm pads."""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.ops.fp32math import matmul32

from tests.pro.kernels import run_matmul

CASES = [
    # m, k, n, operand dtype, extra kernel options
    (16, 64, 48, np.float32, {}),
    (13, 96, 80, np.float32, {"bias": True}),
    (32, 128, 32, np.float16, {"k_tile": 32}),
    (16, 64, 64, ml_dtypes.bfloat16, {"bias": True, "k_tile": 16}),
    (16, 32, 16, np.float32, {"transposed_b": True}),
    # fp32 relayout fast paths (whole 8 x 8 NZ <-> ZN blocks, NZ loads in 64-byte lines) and their edges:
    # K a multiple of 8 but not 16, and N/K not multiples of 8 (the general copy paths)
    (40, 72, 24, np.float32, {}),
    (24, 60, 20, np.float32, {"transposed_b": True}),
]


def _run(backend, monkeypatch, a, b, opts):
    monkeypatch.setenv("PYPTO_BACKEND", backend)
    bias = opts.get("bias")
    bias_values = (np.linspace(-3, 3, b.shape[0] if opts.get("transposed_b") else b.shape[1])
                   .astype(a.dtype)[None, :] if bias else None)
    kw = {k: v for k, v in opts.items() if k != "bias"}
    return run_matmul(a, b, pl.DT_FP32, pl.DT_FP32, bias_values=bias_values, **kw), bias_values


@pytest.mark.parametrize("m,k,n,dtype,opts", CASES)
def test_cpu_matmul_has_the_interpreter_bits(m, k, n, dtype, opts, monkeypatch):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = (rng.standard_normal((m, k)) * 3).astype(dtype)
    bshape = (n, k) if opts.get("transposed_b") else (k, n)
    b = rng.standard_normal(bshape).astype(dtype)
    ref, bias = _run("interp", monkeypatch, a, b, opts)
    got, _ = _run("cpu", monkeypatch, a, b, opts)
    assert np.array_equal(ref.view(np.uint32), got.view(np.uint32))
    # the interpreter's value: per K block (k_tile, else all of K) an FMA chain from +0, k ascending, added
    # with one rounding to the bias (first block) or to the accumulated value (matmul_acc blocks)
    bm = (b.T if opts.get("transposed_b") else b).astype(np.float32)
    step = opts.get("k_tile", k)
    want = None if bias is None else bias.astype(np.float32)
    for k0 in range(0, k, step):
        want = matmul32(a[:, k0:k0 + step].astype(np.float32), bm[k0:k0 + step], want)
    assert np.array_equal(ref.view(np.uint32), want.view(np.uint32))


def test_a_k_block_is_summed_from_zero_then_added_to_its_accumulator():
    """The product of a block is not continued from the accumulator's value: adding [1, -1] x [2^24, 2^24]
    to an accumulator of 1.0 gives 1 + (2^24 - 2^24) = 1 (a chain from 1 would lose the 1 at 2^24 + 1)."""
    a = np.array([[1.0, -1.0]], np.float32)
    b = np.array([[2.0 ** 24], [2.0 ** 24]], np.float32)
    assert matmul32(a, b, np.array([[1.0]], np.float32))[0, 0] == 1.0
    assert matmul32(a, b)[0, 0] == 0.0


def test_fma_chain_accuracy_against_the_exact_sum():
    """The documented bound: |chain - exact| <= K * 2^-24 * (|base| + sum_k |a b|)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((24, 256)).astype(np.float32)
    b = rng.standard_normal((256, 40)).astype(np.float32)
    base = rng.standard_normal((1, 40)).astype(np.float32)
    got = matmul32(a, b, base).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64) + base
    bound = 256 * 2.0 ** -24 * (np.abs(base) + np.abs(a).astype(np.float64) @ np.abs(b))
    assert np.all(np.abs(got - exact) <= bound)
    assert not np.array_equal(got, exact.astype(np.float32))  # it is not the once-rounded exact sum


def test_fma_chain_is_sequential_per_element():
    """One element by hand: c = fma(a[k], b[k], c) for k ascending, each step rounded to fp32."""
    from pypto_pro.ops.fp32math import fma32
    a = np.float32([[1.0, 2.0 ** -24, 2.0 ** -24]])
    b = np.float32([[1.0], [1.0], [1.0]])
    c = np.float32(0)
    for q in range(3):
        c = fma32(a[0, q], b[q, 0], c)
    got = matmul32(a, b)
    assert got[0, 0] == c == np.float32(1.0)  # each 2^-24 is a tie to even; exact sum is 1 + 2^-23
