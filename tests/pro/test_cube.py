"""Cube ops (docs/language.md): matmul / matmul_acc per dtype pair, bias, K accumulation, fixpipe stores
(relu_pre_mode, scale, narrowing) and the static errors of the cube path.

Exactness: with integer-valued inputs every product and partial sum is exact in the FP32/INT32
accumulator, so those results are compared bit-exactly whatever the summation order.  Random
real-valued inputs are compared against a float64 product with a bound of K * 2^-22 * sum|a||b|
(the worst case of FP32 accumulation), since the order of accumulation is a backend choice.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelTypeError

from .kernels import ACC, BIAS, LEFT, MAT, RIGHT, assert_bits_equal, matmul_kernel, run_matmul

FP16, BF16, FP32, INT8, INT32 = pl.DT_FP16, pl.DT_BF16, pl.DT_FP32, pl.DT_INT8, pl.DT_INT32
NP = {FP16: np.float16, BF16: ml_dtypes.bfloat16, FP32: np.float32, INT8: np.int8}
FLOAT_INPUTS = [FP16, BF16, FP32]


def int_valued(rng, shape, dtype, lo=-4, hi=4):
    return rng.integers(lo, hi, shape, endpoint=True).astype(NP[dtype])


def exact_product(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("dtype", FLOAT_INPUTS, ids=lambda d: d.name)
@pytest.mark.parametrize("mkn", [(16, 32, 16), (32, 64, 48), (64, 128, 32)])
def test_float_matmul_exact_on_integer_data(dtype, mkn):
    m, k, n = mkn
    rng = np.random.default_rng(m + k + n)
    a, b = int_valued(rng, (m, k), dtype), int_valued(rng, (k, n), dtype)
    c = run_matmul(a, b, FP32, FP32)
    assert_bits_equal(c, exact_product(a, b).astype(np.float32))


@pytest.mark.parametrize("dtype", FLOAT_INPUTS, ids=lambda d: d.name)
def test_float_matmul_random_data_within_fp32_accumulation_bound(dtype):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 64)).astype(NP[dtype])
    b = rng.standard_normal((64, 32)).astype(NP[dtype])
    c = run_matmul(a, b, FP32, FP32)
    bound = 64 * 2.0 ** -22 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(c - exact_product(a, b)) <= bound)


def test_int8_matmul_accumulates_in_int32():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 32)).astype(np.int8)
    c = run_matmul(a, b, INT32, INT32)
    assert_bits_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))


@pytest.mark.parametrize("dtype,acc", [(FP16, FP32), (BF16, FP32), (FP32, FP32), (INT8, INT32)],
                         ids=["FP16", "BF16", "FP32", "INT8"])
def test_k_loop_accumulation_with_matmul_acc(dtype, acc):
    rng = np.random.default_rng(2)
    a, b = int_valued(rng, (32, 128), dtype), int_valued(rng, (128, 32), dtype)
    c = run_matmul(a, b, acc, acc, k_tile=32)
    want = exact_product(a, b)
    assert_bits_equal(c, want.astype(np.int32 if acc == INT32 else np.float32))


def test_transposed_b_with_k_loop():
    rng = np.random.default_rng(3)
    a, bt = int_valued(rng, (16, 64), FP16), int_valued(rng, (32, 64), FP16)
    c = run_matmul(a, bt, FP32, FP32, transposed_b=True, k_tile=32)
    assert_bits_equal(c, exact_product(a, bt.T).astype(np.float32))


@pytest.mark.parametrize("dtype", [FP16, BF16, FP32], ids=lambda d: d.name)
def test_bias_is_broadcast_over_rows(dtype):
    """bias: [1,N] GM -> Mat -> Bias (FP16/BF16 upcast to FP32), added to every row; with a K loop only
    the first block adds it."""
    rng = np.random.default_rng(4)
    a, b = int_valued(rng, (16, 64), dtype), int_valued(rng, (64, 32), dtype)
    bias = int_valued(rng, (1, 32), dtype, -100, 100)
    for k_tile in (None, 32):
        c = run_matmul(a, b, FP32, FP32, bias_values=bias, k_tile=k_tile)
        assert_bits_equal(c, (exact_product(a, b) + bias.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("out", [FP16, BF16], ids=lambda d: d.name)
def test_store_from_acc_narrows_fp32_once(out):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = run_matmul(a, b, FP32, out)
    assert_bits_equal(c, exact_product(a, b).astype(np.float32).astype(NP[out]))


def test_store_relu_pre_mode():
    rng = np.random.default_rng(6)
    a, b = int_valued(rng, (16, 32), FP16), int_valued(rng, (32, 16), FP16)
    c = run_matmul(a, b, FP32, FP16, relu=True)
    assert_bits_equal(c, np.maximum(exact_product(a, b), 0).astype(np.float16))


@pytest.mark.parametrize("runtime", [False, True], ids=["const_scale", "runtime_scale"])
def test_store_scale_fp32_acc(runtime):
    rng = np.random.default_rng(8)
    a, b = int_valued(rng, (16, 32), FP16), int_valued(rng, (32, 16), FP16)
    kw = {"runtime_scale": True, "s": 0.25} if runtime else {"scale": 0.25}
    c = run_matmul(a, b, FP32, FP32, relu=True, **kw)
    assert_bits_equal(c, np.maximum(exact_product(a, b) * 0.25, 0).astype(np.float32))


def test_int32_acc_dequantised_to_fp16_with_scale():
    rng = np.random.default_rng(9)
    a = rng.integers(-20, 20, (16, 32)).astype(np.int8)
    b = rng.integers(-20, 20, (32, 16)).astype(np.int8)
    c = run_matmul(a, b, INT32, FP16, scale=0.5)
    assert_bits_equal(c, (exact_product(a, b) * 0.5).astype(np.float32).astype(np.float16))


def test_int32_acc_quantised_to_int8_saturates():
    rng = np.random.default_rng(10)
    a = rng.integers(-20, 20, (16, 32)).astype(np.int8)
    b = rng.integers(-20, 20, (32, 16)).astype(np.int8)
    c = run_matmul(a, b, INT32, INT8, scale=0.125)
    want = np.clip(np.rint(exact_product(a, b) * 0.125), -128, 127).astype(np.int8)
    assert_bits_equal(c, want)


# ----------------------------------------------------------------------------------------------
# static errors
# ----------------------------------------------------------------------------------------------
def expect_type_error(kernel, args, match):
    with pytest.raises(KernelTypeError, match=match) as e:
        kernel(*args)
    assert "test_cube.py" in str(e.value) or "kernels.py" in str(e.value)


def dummies(M, K, N, dtype, out, b_dtype=None):
    b_dtype = b_dtype or dtype
    return (np.zeros((M, K), NP[dtype]), np.zeros((K, N), NP[b_dtype]), np.zeros((1, N), NP[dtype]),
            np.zeros((M, N), np.int32 if out == INT32 else np.float32), 0.0)


def test_mixed_operand_dtypes_are_rejected():
    expect_type_error(matmul_kernel(16, 32, 16, FP16, FP32, FP32, b_dtype=BF16),
                      dummies(16, 32, 16, FP16, FP32, BF16), "unsupported operand dtypes")


def test_wrong_accumulator_dtype_is_rejected():
    expect_type_error(matmul_kernel(16, 32, 16, FP16, FP16, FP32), dummies(16, 32, 16, FP16, FP32),
                      "accumulates in FP32")


def test_lhs_outside_left_is_rejected():
    expect_type_error(matmul_kernel(16, 32, 16, FP16, FP32, FP32, lhs_space=RIGHT),
                      dummies(16, 32, 16, FP16, FP32), "must be a Left tile")


def test_fixpipe_rejects_unsupported_output_dtype():
    with pytest.raises(KernelTypeError, match="fixpipe"):
        matmul_kernel(16, 32, 16, FP16, FP32, INT8)(np.zeros((16, 32), np.float16), np.zeros((32, 16), np.float16),
                                                    np.zeros((1, 16), np.float16), np.zeros((16, 16), np.int8), 0.0)


def test_int32_to_fp16_without_scale_is_rejected():
    with pytest.raises(KernelTypeError, match="needs a scale"):
        matmul_kernel(16, 32, 16, INT8, INT32, FP16)(np.zeros((16, 32), np.int8), np.zeros((32, 16), np.int8),
                                                     np.zeros((1, 16), np.int8), np.zeros((16, 16), np.float16), 0.0)


@pl.jit
def inner_dim_mismatch(c: pl.Tensor[[16, 16], pl.DT_FP32]):
    a0 = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, LEFT), addr=0)
    b0 = pl.make_tile(pl.TileType([48, 16], pl.DT_FP16, RIGHT), addr=0)
    acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, ACC), addr=0)
    with pl.section_cube():
        pl.matmul(acc, a0, b0)
        pl.store(c, acc, [0, 0])


@pl.jit
def bias_not_fp32(c: pl.Tensor[[16, 16], pl.DT_FP32]):
    a0 = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, LEFT), addr=0)
    b0 = pl.make_tile(pl.TileType([32, 16], pl.DT_FP16, RIGHT), addr=0)
    bias = pl.make_tile(pl.TileType([1, 16], pl.DT_FP16, BIAS), addr=0)
    acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, ACC), addr=0)
    with pl.section_cube():
        pl.matmul(acc, a0, b0, bias)


@pl.jit
def store_from_mat(c: pl.Tensor[[16, 16], pl.DT_FP16]):
    m = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, MAT), addr=0)
    with pl.section_cube():
        pl.store(c, m, [0, 0])


@pl.jit
def move_left_to_mat(c: pl.Tensor[[16, 16], pl.DT_FP16]):
    m = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, MAT), addr=0)
    left = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, LEFT), addr=0)
    with pl.section_cube():
        pl.move(m, left)


@pl.jit
def matmul_in_vector_section(c: pl.Tensor[[16, 16], pl.DT_FP32]):
    a0 = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, LEFT), addr=0)
    b0 = pl.make_tile(pl.TileType([32, 16], pl.DT_FP16, RIGHT), addr=0)
    acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, ACC), addr=0)
    with pl.section_vector():
        pl.matmul(acc, a0, b0)


@pytest.mark.parametrize("kernel,match", [
    (inner_dim_mismatch, "inner dimensions differ"),
    (bias_not_fp32, "bias tile must be FP32"),
    (store_from_mat, "must be a Vec/Acc tile"),
    (move_left_to_mat, "no move path Left -> Mat"),
    (matmul_in_vector_section, "runs on the cube core"),
], ids=lambda x: getattr(x, "name", None) or "")
def test_cube_shape_and_space_errors(kernel, match):
    c = np.zeros((16, 16), np.float16 if kernel in (store_from_mat, move_left_to_mat) else np.float32)
    with pytest.raises(KernelTypeError, match=match) as e:
        kernel(c)
    assert "test_cube.py:" in str(e.value)
    assert "pl." in str(e.value).splitlines()[-1]  # the offending source line
