"""Ops found wrong by acceptance testing (docs/tensor.md "Ops", torch semantics), compared with torch:

* ``pow`` / ``**`` of negative bases (integer-valued float and negative exponents gave NaN), tensor
  exponents and scalar bases, and ``pow``'s ``precision_type`` argument;
* reductions of dtypes the row tile ops lack (BF16, 8-bit, UINT16/32, BOOL raised a tile-level type
  error), 16-bit float sums / means rounded once, integer sums and products in INT64;
* ``argmax`` / ``argmin`` over an axis longer than the vec tile, over dim 0 and over leading axes
  (raised ``NotImplementedError``): torch's first index of the extreme, NaN counting as the extreme;
* integer ``//``, ``%`` and ``fmod`` (gave FP32) and 8-bit integer products (a tile-level type error).

Tests marked ``both_backends`` run on the cpu backend as well; ``test_on_the_simulator`` runs one
kernel with every fix on sim (small shapes, no hazards).
"""
import math
import os

import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelRuntimeError, KernelTypeError

torch.manual_seed(0)
INF, NAN = math.inf, math.nan
D = pypto.DYNAMIC

#: bases with every special case of pow, then ordinary values (8 rows of 64)
SPECIAL = [-3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, INF, -INF, NAN, 1.5, -1.5, 7.0]
BASES = torch.cat([torch.tensor(SPECIAL), torch.randn(48) * 3]).repeat(8, 1)


def kernel(fn, n_in: int, tile=(8, 64)):
    """A jit kernel storing ``fn(*inputs)`` into its last argument."""
    if n_in == 1:
        @pypto.frontend.jit
        def k1(a: pypto.Tensor(), y: pypto.Tensor()):
            pypto.set_vec_tile_shapes(*tile)
            y[:] = fn(a)
        return k1

    @pypto.frontend.jit
    def k2(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = fn(a, b)
    return k2


def run(fn, *args, out_shape=None, out_dtype=None, tile=(8, 64)):
    """``fn(*args)`` computed by a kernel into a fresh output (the first argument's shape/dtype)."""
    y = torch.zeros(out_shape if out_shape is not None else args[0].shape, dtype=out_dtype or args[0].dtype)
    kernel(fn, len(args), tile)(*args, y)
    return y


def assert_pow(got: torch.Tensor, want: torch.Tensor, exact: torch.Tensor, ulps) -> None:
    """``got`` has torch's NaNs, infinities, zeros and signs (``want``), and its finite values are within
    ``ulps`` (a number or a per-element tensor) FP32 ulps of the float64 value ``exact``."""
    g, w = got.double(), want.double()
    assert torch.equal(torch.isnan(g), torch.isnan(w)), "NaN positions differ"
    num = ~torch.isnan(w)
    assert torch.equal(torch.signbit(g[num]), torch.signbit(w[num])), "signs differ"
    assert torch.equal(torch.isinf(g), torch.isinf(w)), "infinities differ"
    assert torch.equal(g == 0, w == 0), "zeros differ"
    fin = torch.isfinite(w) & (w != 0)
    spacing = np.spacing(np.maximum(np.abs(exact[fin].numpy()), 2.0 ** -126).astype(np.float32)).astype(np.float64)
    err = (g[fin] - exact[fin]).abs().numpy() / spacing
    bound = ulps[fin].numpy() if isinstance(ulps, torch.Tensor) else ulps
    assert np.all(err <= bound), f"{float(np.max(err - bound))} ulps beyond the bound"


def exp_log_ulps(exact: torch.Tensor) -> torch.Tensor:
    """The documented bound of the exp/log path: ``2 |ln(result)| + 3`` FP32 ulps (FP32 ``log`` and the
    product ``e * log`` each round by up to 2**-24 relative, scaled by ``|e log x| = |ln(result)|``)."""
    return 2 * exact.abs().clamp(min=1e-300).log().abs() + 3


# ============================================================================ item 1: pow
#: (exponent, FP32 ulp bound): integer powers by squaring (0.75 |e| + 1), others through exp/log
SCALAR_EXPONENTS = [(2.0, 0.5), (2, 0.5), (3, 1.5), (3.0, 1.5), (-1, 0.5), (-1.0, 0.5), (-2, 2.5), (0, 0), (0.0, 0),
                    (1, 0), (7.0, 6.3), (-7, 6.3), (64, 49), (0.5, 0.5), (-0.5, 1.5), (2.5, None), (-2.5, None),
                    (0.3, None), (65, None), (-65, None), (100.0, None), (1e30, None), (INF, None), (-INF, None),
                    (NAN, None)]


@pytest.mark.parametrize("e,ulps", SCALAR_EXPONENTS, ids=[repr(e) for e, _ in SCALAR_EXPONENTS])
def test_pow_scalar_exponent_of_negative_and_special_bases(e, ulps):
    """Integer-valued exponents (int or float, negative too) are integer powers of any base: x = -3
    gave NaN for ``x ** 2.0`` and ``x ** -1``.  Non-integer exponents of finite negative bases are NaN."""
    got = run(lambda a: a ** e, BASES)
    exact = BASES.double() ** e
    assert_pow(got, BASES ** e, exact, exp_log_ulps(exact) if ulps is None else ulps)


#: the exponent classes of a scalar ``pow`` (even / odd / negative integer powers by squaring, non-integer,
#: integer-valued odd and even beyond the squaring range, infinite): on cpu (one compile, its size the sum
#: of the chains) one exponent per class, on the interpreter (and with PYPTO_FULL_MATRIX=1) all of them
NEGATIVE_BASE_EXPONENTS = (2.0, -1, -2, 3.0, 2.5, 65, 1e30, -INF)
NEGATIVE_BASE_EXPONENTS_CPU = (2.0, -1, 2.5, 65, 1e30, -INF)


def full_matrix_or_interp() -> bool:
    """Whether this case runs on the interpreter (the tensor conftest sets the backend) or the whole
    matrix is asked for."""
    return os.environ.get("PYPTO_BACKEND") == "interp" or os.environ.get("PYPTO_FULL_MATRIX", "") not in ("", "0")


@pytest.mark.both_backends
def test_pow_negative_base_both_backends():
    exps = NEGATIVE_BASE_EXPONENTS if full_matrix_or_interp() else NEGATIVE_BASE_EXPONENTS_CPU

    @pypto.frontend.jit
    def powers(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        for i, e in enumerate(exps):
            o[i] = pypto.pow(x, e) if i % 2 else x ** e

    o = torch.zeros(len(exps), 8, 64)
    powers(BASES, o)
    for i, e in enumerate(exps):
        exact = BASES.double() ** e
        assert_pow(o[i], BASES ** e, exact, 2.5 if e in (2.0, -1, -2, 3.0) else exp_log_ulps(exact))
    assert o[0, 0, 0] == 9.0 and o[1, 0, 0] == pytest.approx(-1 / 3, rel=1e-7)  # the repro: x = -3


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("e", [2, 3.0, -1, -3, 2.5, 65])
def test_pow_16bit_rounded_once(dtype, e):
    """16-bit bases: computed in FP32 and rounded once, so within one 16-bit ulp of the exact value."""
    x = (BASES * 0.5).to(dtype)
    got = run(lambda a: a ** e, x)
    assert got.dtype == dtype
    exact = x.double() ** e
    lo = exact.to(dtype)
    hi = torch.nextafter(lo.float(), torch.where(lo.double() < exact, INF, -INF)).to(dtype)
    ok = (got == lo) | (got == hi) | (torch.isnan(got) & torch.isnan(exact))
    assert bool(ok.all())


TENSOR_EXPONENTS = torch.tensor([-3., -2., -1., 0., 1., 2., 3., 0.5, -0.5, INF, -INF, NAN, 2.5, 1e30, -1e30,
                                 33.]).repeat(8, 4)


@pytest.mark.both_backends
def test_pow_tensor_exponent_follows_torch():
    """Element-wise exponents: the base's sign for odd integer-valued elements, NaN for non-integer
    ones of finite negative bases, 1 for ``t == 0``, ``x == 1`` and ``(-1) ** +-inf``; also
    ``pypto.pow(x, t)`` and a scalar base (``2.0 ** t``, ``(-2.0) ** t``).  On cpu ``pypto.pow(x, u)``
    (the same lowering as ``x ** t``, other data) is left out of the one compile unless PYPTO_FULL_MATRIX=1."""
    t2 = BASES[torch.randperm(8)][:, torch.randperm(64)]
    outs = [torch.zeros(8, 64) for _ in range(4)]
    both_spellings = full_matrix_or_interp()

    @pypto.frontend.jit
    def powers(x: pypto.Tensor(), t: pypto.Tensor(), u: pypto.Tensor(), a: pypto.Tensor(), b: pypto.Tensor(),
               c: pypto.Tensor(), d: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        a[:] = x ** t
        if both_spellings:
            b[:] = pypto.pow(x, u)
        c[:] = 2.0 ** t
        d[:] = pypto.pow(-2.0, t)

    powers(BASES, TENSOR_EXPONENTS, t2, *outs)
    for got, x, t in ((outs[0], BASES, TENSOR_EXPONENTS), (outs[1], BASES, t2), (outs[2], 2.0, TENSOR_EXPONENTS),
                      (outs[3], -2.0, TENSOR_EXPONENTS)):
        if got is outs[1] and not both_spellings:
            continue
        want = torch.pow(x, t)
        exact = torch.pow(x if isinstance(x, float) else x.double(), t.double())
        assert_pow(got, want, exact, exp_log_ulps(exact))


def test_pow_tensor_exponent_dtypes():
    x16 = torch.rand(8, 64, dtype=torch.float16) + 0.5
    t16 = (torch.rand(8, 64) * 4 - 2).half()
    got = run(lambda a, b: a ** b, x16, t16)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got, x16 ** t16, rtol=1e-3, atol=0)
    xi = torch.randint(-4, 5, (8, 64), dtype=torch.int32)
    got = run(lambda a, b: a ** b, xi, t16.float(), out_dtype=torch.float32)
    exact = xi.double() ** t16.double()
    assert_pow(got, xi ** t16.float(), exact, exp_log_ulps(exact))
    with pytest.raises(NotImplementedError, match="integer tensor exponent"):
        run(lambda a, b: a ** b, xi, xi)
    with pytest.raises(NotImplementedError, match="integer scalar base"):
        run(lambda b: 2 ** b, xi)


@pytest.mark.both_backends
def test_pow_integer_tensors_stay_integers():
    """torch: an integer tensor to a non-negative int power stays an integer tensor (wrapping, 8-bit
    too); to a float power it becomes FP32; to a negative int power torch raises."""
    xi = torch.randint(-5, 6, (8, 64), dtype=torch.int32)
    x8 = torch.randint(-20, 20, (8, 64), dtype=torch.int8)
    o = torch.zeros(5, 8, 64, dtype=torch.int32)
    o8, of = torch.zeros(8, 64, dtype=torch.int8), torch.zeros(8, 64)

    @pypto.frontend.jit
    def powers(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor(), o8: pypto.Tensor(), of: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        for i, e in enumerate((0, 1, 2, 7, 31)):
            r = x ** e
            assert r.dtype == pypto.DT_INT32
            o[i] = r
        o8[:] = y ** 3
        r = x ** 2.0
        assert r.dtype == pypto.DT_FP32
        of[:] = r

    powers(xi, x8, o, o8, of)
    for i, e in enumerate((0, 1, 2, 7, 31)):
        assert torch.equal(o[i], xi ** e)
    assert torch.equal(o8, x8 ** 3) and torch.equal(of, xi ** 2.0)
    with pytest.raises(KernelTypeError, match="negative integer powers"):
        run(lambda a: a ** -1, xi)


def test_pow_precision_type_is_accepted():
    """B4 ``pow(b, o, precision_type)``: it selects NPU instruction sequences; results here are always
    the FP32 computation, so any int / enum value is accepted (positional or keyword) and other
    types are rejected.  ``div`` and ``exp`` take it the same way."""
    x = torch.randn(8, 64)
    for fn in (lambda a: pypto.pow(a, 2, precision_type=0), lambda a: pypto.pow(a, 2, 1),
               lambda a: pypto.div(a, 3.0, precision_type=1), lambda a: pypto.exp(a, precision_type=0)):
        got = run(fn, x)
        assert torch.isfinite(got).all()
    torch.testing.assert_close(run(lambda a: pypto.pow(a, 2, precision_type=0), x), x ** 2, rtol=0, atol=0)
    with pytest.raises(KernelTypeError, match="precision_type"):
        run(lambda a: pypto.pow(a, 2, precision_type="high"), x)


# ============================================================================ item 2: reduction dtypes
def _unsigned(dtype) -> bool:
    return dtype in (torch.uint8, torch.uint16, torch.uint32)


def _data(dtype, shape=(16, 128)):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    lo = 0 if _unsigned(dtype) else -100
    return torch.randint(lo, 100, shape, dtype=torch.int32).to(dtype)


def _within_one_ulp(got, exact, dtype):
    lo = exact.to(dtype)
    hi = torch.nextafter(lo.float(), torch.where(lo.double() < exact, INF, -INF)).to(dtype)
    assert bool(((got == lo) | (got == hi)).all()), f"max diff {float((got.double() - exact).abs().max())}"


REDUCE_DTYPES = [torch.bfloat16, torch.float16, torch.int8, torch.uint8, torch.int16, torch.uint16, torch.int32,
                 torch.uint32, torch.bool]
REDUCE_OPS = ["sum", "amax", "amin", "mean", "prod", "argmax", "argmin"]


@pytest.mark.parametrize("tile", [(16, 128), (8, 32)], ids=["in_tile", "multi_pass"])
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("dtype", REDUCE_DTYPES, ids=lambda d: str(d).split(".")[1])
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reductions_of_every_dtype_match_torch(op, dtype, dim, tile):
    """BF16 (and 8-bit, UINT16/32, BOOL) reductions over the last axis raised "pl.row_max: 'src' has
    dtype BF16"; now every dtype/axis/tile gives torch's result: max/min/arg* exactly, 16-bit float
    sums and means rounded once from FP32, integer/BOOL sums and products as INT64."""
    if dtype == torch.bool and op in ("mean", "argmax", "argmin"):
        pytest.skip("torch has no BOOL mean / argmax / argmin")
    x = _data(dtype)
    if op == "prod":  # float products within range; integer ones of 1, 2 (and -1): INT64 wraps like torch
        v = x.long() % 3
        x = (torch.rand(16, 128) + 0.5).to(dtype) if dtype.is_floating_point else (
            v.bool() if dtype == torch.bool else torch.where(v == 0, 1 if _unsigned(dtype) else -1, v).to(dtype))
    # torch's CPU kernels lack most ops on UINT16/32: the same values as INT64 give the same results
    ref = x.long() if dtype in (torch.uint16, torch.uint32) else x
    want = getattr(torch, op)(ref.double() if op == "mean" and not dtype.is_floating_point else ref, dim)
    out_dtype = {"argmax": torch.int32, "argmin": torch.int32, "amax": dtype, "amin": dtype}.get(op, want.dtype)
    if op == "mean" and not dtype.is_floating_point:
        out_dtype = torch.float32  # pypto's dtype (torch refuses integer means)
    got = run(lambda a: getattr(pypto, op)(a, dim), x, out_shape=want.shape, out_dtype=out_dtype, tile=tile)
    if op in ("sum", "mean") and dtype.is_floating_point:
        _within_one_ulp(got, getattr(torch, op)(x.double(), dim), dtype)
    elif op == "prod" and dtype.is_floating_point:
        _within_one_ulp(got, torch.prod(x.double(), dim), dtype)
    elif op == "mean":
        torch.testing.assert_close(got.double(), want, rtol=1e-6, atol=1e-6)
    else:
        assert torch.equal(got.long() if want.dtype == torch.int64 else got.to(want.dtype), want)


def test_reduction_result_dtypes():
    """torch's dtypes: integer and BOOL sums/products INT64, 16-bit floats keep theirs, max/min the
    input's, arg* INT32 here (the arg tile ops' index type; torch: INT64)."""
    seen = {}

    @pypto.frontend.jit
    def k(b: pypto.Tensor(), i8: pypto.Tensor(), m: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 128)
        seen.update(sum_bf16=pypto.sum(b, -1).dtype, mean_bf16=pypto.mean(b, 0).dtype,
                    sum_i8=pypto.sum(i8, -1).dtype, prod_i8=pypto.prod(i8, 0).dtype, sum_bool=pypto.sum(m).dtype,
                    amax_i8=pypto.amax(i8, -1).dtype, argmax_bf16=pypto.argmax(b, -1).dtype)
        y[:] = pypto.sum(i8, -1)

    x8 = torch.full((16, 128), 100, dtype=torch.int8)
    y = torch.zeros(16, dtype=torch.int64)
    k(torch.randn(16, 128).bfloat16(), x8, torch.rand(16, 128) > 0.5, y)
    assert seen == dict(sum_bf16=pypto.DT_BF16, mean_bf16=pypto.DT_BF16, sum_i8=pypto.DT_INT64,
                        prod_i8=pypto.DT_INT64, sum_bool=pypto.DT_INT64, amax_i8=pypto.DT_INT8,
                        argmax_bf16=pypto.DT_INT32)
    assert torch.equal(y, x8.sum(-1))  # 12800: no INT8 wrap-around


@pytest.mark.both_backends
def test_bf16_row_reductions_both_backends():
    """The repro (amax over dim=-1 of BF16) and its siblings, in one and in several passes."""
    x = torch.randn(16, 128).bfloat16()
    outs = [torch.zeros(16, dtype=torch.bfloat16) for _ in range(5)] + [torch.zeros(16, dtype=torch.int32)]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), d: pypto.Tensor(),
          e: pypto.Tensor(), f: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 128)
        a[:] = pypto.amax(x, -1)
        b[:] = pypto.amin(x, -1)
        f[:] = pypto.argmax(x, -1)
        pypto.set_vec_tile_shapes(8, 32)
        c[:] = pypto.sum(x, -1)
        d[:] = pypto.mean(x, -1)
        e[:] = pypto.amax(x, -1)

    k(x, *outs)
    assert torch.equal(outs[0], x.amax(-1)) and torch.equal(outs[1], x.amin(-1))
    assert torch.equal(outs[4], x.amax(-1)) and torch.equal(outs[5].long(), x.argmax(-1))
    _within_one_ulp(outs[2], x.double().sum(-1), torch.bfloat16)
    _within_one_ulp(outs[3], x.double().mean(-1), torch.bfloat16)


def test_bf16_var_rounded_once():
    x = torch.randn(16, 128).bfloat16()
    got = run(lambda a: pypto.var(a, -1), x, out_shape=(16,))
    _within_one_ulp(got, x.double().var(-1), torch.bfloat16)


# ============================================================================ item 3: multi-pass argmax
def _ties_and_nans():
    x = torch.randint(-3, 4, (16, 128)).float()
    x[2, 70], x[2, 100], x[5, 3] = NAN, NAN, NAN
    x[9, :], x[10, :] = -INF, INF
    x[11, 64:] = NAN
    x[:, 127] = 9.0  # a tie across the passes in row 12: the first one wins
    x[12, 5] = 9.0
    return x


ARG_CASES = [
    ("repro_dim0", torch.randn(16, 64), 0, (8, 64)),
    ("rows_16x128", torch.randn(16, 128), -1, (8, 64)),
    ("ties_nans_last", _ties_and_nans(), -1, (8, 32)),
    ("ties_nans_dim0", _ties_and_nans(), 0, (8, 64)),
    ("fp16_dim0", _ties_and_nans().half(), 0, (16, 64)),
    ("bf16_last", _ties_and_nans().bfloat16(), 1, (8, 32)),
    ("int8_ties", torch.randint(-5, 5, (16, 128), dtype=torch.int8), -1, (8, 32)),
    ("uint8_dim0", torch.randint(0, 5, (40, 100), dtype=torch.uint8), 0, (8, 32)),
    ("leading_axis", torch.randn(3, 5, 40), 0, (8, 32)),
    ("middle_axis", torch.randint(-2, 2, (4, 37, 70)).int(), 1, (8, 32)),
    ("one_d", torch.randint(-2, 2, (70,)).float(), 0, (32,)),
]


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("name,x,dim,tile", ARG_CASES, ids=[c[0] for c in ARG_CASES])
def test_argmax_over_any_axis_and_tile(name, x, dim, tile, fn):
    """docs/tensor.md "Lowering": tile shapes affect performance, not results.  Axes longer than the tile (and dim 0,
    leading axes, 1-D tensors) raised NotImplementedError; now a running best value / index is kept
    across the passes with torch's rule (first index of the extreme, NaN counts as the extreme)."""
    want = getattr(torch, fn)(x, dim)
    got = run(lambda a: getattr(pypto, fn)(a, dim), x, out_shape=want.shape or (1,), out_dtype=torch.int32, tile=tile)
    assert torch.equal(got.long().reshape(want.shape), want)


@pytest.mark.both_backends
def test_argmax_multi_pass_both_backends():
    x = _ties_and_nans()
    x3 = torch.randn(3, 5, 40)
    x3[1, 2, 7] = x3[2, 2, 7] = NAN
    outs = [torch.zeros(128, dtype=torch.int32), torch.zeros(16, dtype=torch.int32), torch.zeros(5, 40, dtype=torch.int32)]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), x3: pypto.Tensor(), a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        a[:] = pypto.argmax(x, 0)
        b[:] = pypto.argmin(x, -1)
        c[:] = pypto.argmax(x3, 0)

    k(x, x3, *outs)
    assert torch.equal(outs[0].long(), x.argmax(0)) and torch.equal(outs[1].long(), x.argmin(-1))
    assert torch.equal(outs[2].long(), x3.argmax(0))


def test_argmax_dynamic_dims_and_keepdim():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([D, D], pypto.DT_FP32), a: pypto.Tensor([D, 1], pypto.DT_INT32),
          b: pypto.Tensor([1, D], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 32)
        a[:] = pypto.argmax(x, -1, keepdim=True)
        b[:] = pypto.argmin(x, 0, keepdim=True)

    for rows, cols in ((16, 100), (9, 33)):
        x = torch.randn(rows, cols)
        a, b = torch.zeros(rows, 1, dtype=torch.int32), torch.zeros(1, cols, dtype=torch.int32)
        k(x, a, b)
        assert torch.equal(a.long(), x.argmax(-1, keepdim=True)) and torch.equal(b.long(), x.argmin(0, keepdim=True))


def test_argmax_of_bool_is_rejected_like_torch():
    with pytest.raises(KernelTypeError, match="BOOL"):
        run(lambda a: pypto.argmax(a, -1), torch.rand(8, 64) > 0.5, out_shape=(8,), out_dtype=torch.int32)


# ============================================================================ item 4: integer division
INT_DTYPES = {torch.int8: pypto.DT_INT8, torch.int16: pypto.DT_INT16, torch.int32: pypto.DT_INT32,
              torch.int64: pypto.DT_INT64}


#: operand magnitudes: int32/int64 beyond 2**24, where a division in FP32 is no longer exact
INT_RANGES = {torch.int8: 100, torch.int16: 30000, torch.int32: 2 ** 30, torch.int64: 2 ** 40}


def _int_operands(dtype):
    a = torch.randint(-INT_RANGES[dtype], INT_RANGES[dtype], (8, 64), dtype=torch.int64).to(dtype)
    b = torch.randint(-9, 10, (8, 64), dtype=dtype)
    b[b == 0] = 3
    return a, b


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: str(d).split(".")[1])
def test_integer_floor_division_and_remainders_stay_integers(dtype):
    """torch: ``int // int``, ``int % int`` and ``fmod`` are exact integer ops in the operands' dtype
    (``//`` and ``%`` gave FP32, inexact beyond 2**24); with a Python int too; a float operand
    still gives a float result."""
    a, b = _int_operands(dtype)
    seen = []

    def record(r):
        seen.append(r.dtype)
        return r

    for fn, tfn in ((lambda p, q: p // q, lambda p, q: p // q), (lambda p, q: p % q, lambda p, q: p % q),
                    (pypto.fmod, torch.fmod), (pypto.floor_div, torch.floor_divide),
                    (lambda p, q: p // -7 + q * 0, lambda p, q: p // -7), (lambda p, q: p % 7 + q * 0,
                                                                           lambda p, q: p % 7)):
        got = run(lambda p, q: record(fn(p, q)), a, b)
        assert seen[-1] == INT_DTYPES[dtype] and torch.equal(got, tfn(a, b))
    assert torch.equal(run(lambda p, q: p * q, a, b), a * b)  # 8-bit products wrap like torch
    f = 2.0 ** torch.randint(-3, 4, (8, 64)) * (torch.randint(0, 2, (8, 64)) * 2 - 1)  # exact FP32 quotients
    got = run(lambda p, q: record(p // q), a, f, out_dtype=torch.float32)
    assert seen[-1] == pypto.DT_FP32 and torch.equal(got, a // f)


@pytest.mark.both_backends
def test_integer_division_both_backends():
    a, b = _int_operands(torch.int32)
    outs = [torch.zeros(8, 64, dtype=torch.int32) for _ in range(3)]

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), q: pypto.Tensor(), r: pypto.Tensor(), f: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        q[:] = a // b
        r[:] = a % b
        f[:] = pypto.fmod(a, b)

    k(a, b, *outs)
    assert torch.equal(outs[0], a // b) and torch.equal(outs[1], a % b) and torch.equal(outs[2], torch.fmod(a, b))


def test_integer_division_by_zero_raises():
    a = torch.ones(8, 64, dtype=torch.int32)
    with pytest.raises(KernelRuntimeError):
        run(lambda p, q: p // q, a, torch.zeros(8, 64, dtype=torch.int32))


# ============================================================================ the simulator
def test_on_the_simulator(monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "sim")
    x = _ties_and_nans()[:, :64]
    xb = torch.randn(16, 64).bfloat16()
    ai = _int_operands(torch.int32)[0]
    p, s = torch.zeros(16, 64), torch.zeros(16, dtype=torch.bfloat16)
    am, q = torch.zeros(64, dtype=torch.int32), torch.zeros(8, 64, dtype=torch.int32)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), xb: pypto.Tensor(), ai: pypto.Tensor(), p: pypto.Tensor(), s: pypto.Tensor(),
          am: pypto.Tensor(), q: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        p[:] = x ** -3.0
        s[:] = pypto.amax(xb, -1)
        am[:] = pypto.argmax(x, 0)
        q[:] = ai // -7

    k(x, xb, ai, p, s, am, q)
    exact = x.double() ** -3
    assert_pow(p, x ** -3.0, exact, 2.5)
    assert torch.equal(s, xb.amax(-1)) and torch.equal(am.long(), x.argmax(0)) and torch.equal(q, ai // -7)
    assert not k.last_report.hazards


# ============================================================================ var / full spellings
@pytest.mark.both_backends
def test_var_unbiased_spelling_and_full_with_valid_shape():
    """``var(unbiased=False)`` is ``correction=0`` (torch's older spelling); ``full(size, v,
    valid_shape=)`` reports ``size`` as its shape and holds data in the valid region only."""
    x = torch.randn(8, 64)
    o, v1, v0 = torch.zeros(8, 64), torch.zeros(8), torch.zeros(8)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), o: pypto.Tensor(), v1: pypto.Tensor(), v0: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        f = pypto.full([8, 64], 2.0, pypto.DT_FP32, valid_shape=[4, 64])
        assert f.shape == [8, 64] and f.valid_shape == [4, 64]
        pypto.assemble(f, [0, 0], o)
        v1[:] = pypto.var(x, -1, unbiased=True)
        v0[:] = pypto.var(x, -1, unbiased=False)

    k(x, o, v1, v0)
    assert torch.equal(o[:4], torch.full((4, 64), 2.0)) and not o[4:].any()
    torch.testing.assert_close(v1, x.var(-1, unbiased=True))
    torch.testing.assert_close(v0, x.var(-1, unbiased=False))


@pytest.mark.both_backends
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_expand_exp_dif(dtype):
    """The official page's two samples: exp(x - y) with a trailing-axis and a full broadcast."""
    x = torch.tensor([[1., 2, 3], [4, 5, 6]]).to(dtype)
    for y in (torch.tensor([[1.], [2]]).to(dtype), torch.tensor([[1.]]).to(dtype)):
        o = torch.zeros(2, 3, dtype=dtype)

        @pypto.frontend.jit
        def k(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            o[:] = pypto.expand_exp_dif(x, y)

        k(x, y, o)
        want = torch.exp(x.float() - y.float()).to(dtype)  # in FP32, rounded once
        torch.testing.assert_close(o, want, rtol=2.5e-7 if dtype == torch.float32 else 0, atol=0)  # exp: within 1 ulp each
    with pytest.raises(KernelTypeError, match="same float dtype"):
        @pypto.frontend.jit
        def mixed(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            o[:] = pypto.expand_exp_dif(x, y)

        mixed(x.float(), torch.ones(2, 1, dtype=torch.float16), torch.zeros(2, 3))


# ============================================================================ official op pages
@pytest.mark.both_backends
def test_prelu_weight_is_per_channel_dim_1():
    """pypto-prelu.md: for 2-4-D inputs the 1-D weight has one entry per channel, dim 1 (torch's rule)."""
    for shape, c in (((2, 4, 4), 4), ((2, 3, 4), 3), ((2, 3, 2, 8), 3)):
        x = torch.randn(*shape)
        w = torch.rand(c) * 0.5
        o = torch.zeros(*shape)

        @pypto.frontend.jit
        def k(x: pypto.Tensor(), w: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(*([2] * (len(shape) - 1)), 16)
            o[:] = pypto.prelu(x, w)

        k(x, w, o)
        torch.testing.assert_close(o, torch.nn.functional.prelu(x, w), rtol=0, atol=0)


@pytest.mark.both_backends
def test_cast_to_narrow_int_satmode_off_keeps_low_bits():
    """pypto-cast.md: FP16 [300, -300, 50] -> INT8 gives [44, -44, 50] with satmode OFF; ON saturates."""
    x = torch.tensor([[300., -300, 50, 127.6, -129, 0.5, 2.5, 1e4]], dtype=torch.float16)
    off, on = torch.zeros(1, 8, dtype=torch.int8), torch.zeros(1, 8, dtype=torch.int8)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), off: pypto.Tensor(), on: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 32)
        off[:] = pypto.cast(x, pypto.DT_INT8, satmode=pypto.SaturationMode.OFF)
        on[:] = pypto.cast(x, pypto.DT_INT8, satmode=pypto.SaturationMode.ON)

    k(x, off, on)
    trunc = torch.trunc(x.float()).to(torch.int64)  # CAST_NONE truncates float -> int (the page's table)
    assert off.tolist() == [[int(v) - 256 * ((int(v) + 128) // 256) for v in trunc[0]]]
    assert on.tolist() == [trunc.clamp(-128, 127).tolist()[0]]


def test_official_enum_names_and_topk_fields():
    x = torch.tensor([[1., 5, 3, 4]])
    v, i, r = torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.int64), torch.zeros(1, 4)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), v: pypto.Tensor(), i: pypto.Tensor(), r: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 32)
        top = pypto.topk(x, 2, -1)
        v[:] = top.values
        i[:] = pypto.topk(x, 2, -1, True, pypto.TopKAlgo.RADIX_SELECT).indices  # the page's positional form
        r[:] = pypto.fmod(x, 3.0, precision_type=pypto.PrecisionType.HIGH_PRECISION)

    k(x, v, i, r)
    assert v.tolist() == [[5., 4.]] and i.tolist() == [[1, 3]] and r.tolist() == [[1., 2., 0., 1.]]
    assert pypto.symbolic_scalar(7).concrete() == 7
    with pytest.raises(KernelTypeError, match="TopKAlgo"):
        pypto.topk(pypto.Tensor([1, 4], pypto.DT_FP32), 2, algo="bitonic")


@pytest.mark.both_backends
def test_integer_scans_give_int64():
    """pypto-cumsum.md: INT16/INT32 in, INT64 out (as torch): 3 x 2^30 does not wrap."""
    x = torch.full((3, 2), 2 ** 30, dtype=torch.int32)
    s, p = torch.zeros(3, 2, dtype=torch.int64), torch.zeros(3, 2, dtype=torch.int64)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), s: pypto.Tensor(), p: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.cumsum(x, 0)
        assert r.dtype == pypto.DT_INT64
        s[:] = r
        p[:] = pypto.cumprod(x // (2 ** 29), 0)

    k(x, s, p)
    assert torch.equal(s, torch.cumsum(x, 0)) and torch.equal(p, torch.cumprod(x // 2 ** 29, 0))


@pytest.mark.both_backends
def test_bool_arithmetic_is_logic_as_in_torch():
    """torch: BOOL + BOOL and maximum are or, * and minimum are and (a BOOL result); BOOL - BOOL is an error."""
    @pypto.frontend.jit
    def bool_ops(x: pypto.Tensor([40], pypto.DT_BOOL), y: pypto.Tensor([40], pypto.DT_BOOL),
                 o: pypto.Tensor([40], pypto.DT_BOOL), p: pypto.Tensor([40], pypto.DT_BOOL),
                 q: pypto.Tensor([40], pypto.DT_BOOL), r: pypto.Tensor([40], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(64)
        o[:] = x + y
        p[:] = x * y
        q[:] = pypto.maximum(x, y)
        r[:] = pypto.minimum(x, y)

    x, y = torch.rand(40) > 0.5, torch.rand(40) > 0.5
    outs = [torch.zeros(40, dtype=torch.bool) for _ in range(4)]
    bool_ops(x, y, *outs)
    for got, want in zip(outs, (x + y, x * y, torch.maximum(x, y), torch.minimum(x, y))):
        assert torch.equal(got, want)

    @pypto.frontend.jit
    def bool_sub(x: pypto.Tensor([40], pypto.DT_BOOL), y: pypto.Tensor([40], pypto.DT_BOOL),
                 o: pypto.Tensor([40], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(64)
        o[:] = x - y

    with pytest.raises(KernelTypeError, match="sub of two BOOL tensors"):
        bool_sub(x, y, outs[0])
