"""Trig / inverse / hyperbolic, cbrt, signbit, copysign, bitwise ops, triu/tril, prod, cumsum/cumprod,
axpy_, gcd and ceil_div against float64 numpy or torch.

Tolerances: FP32 results are compared with the float64 value in units of the FP32 spacing at the
reference (``ulp``); the bounds are the measured maxima of the compositions (docs/tensor.md) with a
little headroom, not the polynomial bounds alone, because every tile op rounds.  16-bit float
inputs are computed in FP32 and rounded once, so they must be within one 16-bit ulp of the exact
value (the FP32 error is far below half a 16-bit ulp; one rounding adds at most half, a tie can
land on either neighbour).  Integer ops are exact.
"""
import math

import numpy as np
import pytest
import torch

import pypto

torch.manual_seed(0)
INF, NAN = math.inf, math.nan


def run(fn, *args, out_shape=None, out_dtype=None, tile=(16, 64), spec=None):
    """``fn(*args)`` stored into a fresh output (shape/dtype of the first argument unless given)."""
    first = args[0]
    out = torch.empty(out_shape if out_shape is not None else first.shape, dtype=out_dtype or first.dtype)
    ann = spec or (lambda t: pypto.Tensor())

    if len(args) == 1:
        @pypto.frontend.jit
        def k1(a: ann(args[0]), y: ann(out)):
            pypto.set_vec_tile_shapes(*tile)
            y[:] = fn(a)

        k1(*args, out)
    else:
        @pypto.frontend.jit
        def k2(a: ann(args[0]), b: ann(args[1]), y: ann(out)):
            pypto.set_vec_tile_shapes(*tile)
            y[:] = fn(a, b)

        k2(*args, out)
    return out


def ulp_error(got: torch.Tensor, ref: np.ndarray) -> float:
    """Max |got - ref| in FP32 ulps of the reference (finite elements; NaN/inf must match exactly)."""
    g = got.double().numpy()
    fin = np.isfinite(ref)
    assert np.array_equal(np.isnan(g), np.isnan(ref)), "NaN positions differ"
    assert np.array_equal(g[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)]), "infinities differ"
    spacing = np.spacing(np.abs(ref[fin]).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(g[fin] - ref[fin]) / spacing)) if fin.any() else 0.0


def within_one_ulp(got: torch.Tensor, ref: np.ndarray, dtype: torch.dtype) -> None:
    """``got`` (16-bit) is one of the two dtype neighbours of the exact value ``ref``."""
    r = torch.from_numpy(ref)
    lo = r.to(dtype)
    up = torch.nextafter(lo.float(), torch.where(lo.double() < r, torch.tensor(math.inf), -torch.tensor(math.inf)))
    ok = (got.float() == lo.float()) | (got.float() == up.to(dtype).float()) | (torch.isnan(got) & torch.isnan(r))
    assert bool(ok.all()), f"max diff {float((got.double() - r).abs().nan_to_num().max())}"


# ---------------------------------------------------------------------------------- unary float math
W = torch.linspace(-20, 20, 24 * 80).reshape(24, 80)
UNIT = torch.linspace(-1, 1, 24 * 80).reshape(24, 80)
GE1 = torch.cat([torch.linspace(1, 3, 24 * 40), torch.logspace(0.5, 30, 24 * 40)]).reshape(24, 80)
WIDE = (torch.randn(24, 80) * torch.logspace(-30, 30, 24 * 80).reshape(24, 80)).float()

# name, pypto op, numpy float64 reference, input, max FP32 ulps
UNARY = [
    ("sin", pypto.sin, np.sin, W, 2), ("cos", pypto.cos, np.cos, W, 2),
    ("tan", pypto.tan, np.tan, W, 4), ("atan", pypto.atan, np.arctan, WIDE, 3),
    ("asin", pypto.asin, np.arcsin, UNIT, 4), ("acos", pypto.acos, np.arccos, UNIT, 4),
    ("asinh", pypto.asinh, np.arcsinh, WIDE, 5), ("acosh", pypto.acosh, np.arccosh, GE1, 4),
    ("atanh", pypto.atanh, np.arctanh, UNIT * 0.999, 5), ("cbrt", pypto.cbrt, np.cbrt, WIDE, 2),
]


@pytest.mark.parametrize("name,fn,ref,x,ulps", UNARY, ids=[u[0] for u in UNARY])
def test_unary_fp32_accuracy(name, fn, ref, x, ulps):
    err = ulp_error(run(fn, x), ref(x.double().numpy()))
    assert err <= ulps, f"{name}: {err} ulp"


@pytest.mark.both_backends
def test_unary_fp32_both_backends():
    outs = [torch.empty(24, 80) for _ in range(4)]

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), u: pypto.Tensor(), s: pypto.Tensor(), c: pypto.Tensor(), t: pypto.Tensor(),
          i: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        s[:] = pypto.sin(a)
        c[:] = pypto.acos(u)
        t[:] = pypto.atanh(u * 0.999)
        i[:] = pypto.cbrt(a) + pypto.asinh(a)

    k(W, UNIT, *outs)
    assert ulp_error(outs[0], np.sin(W.double().numpy())) <= 2
    assert ulp_error(outs[1], np.arccos(UNIT.double().numpy())) <= 4
    assert ulp_error(outs[2], np.arctanh((UNIT * 0.999).double().numpy())) <= 5
    w = W.double().numpy()
    torch.testing.assert_close(outs[3].double(), torch.from_numpy(np.cbrt(w) + np.arcsinh(w)), rtol=1e-6, atol=1e-6)


def test_sin_cos_large_arguments():
    """The split Cody-Waite reduction: ~1 FP32 ulp of absolute error up to |x| = 1e6, a few ulps up
    to 2**22; beyond that (and for +-inf) NaN."""
    for lo, hi, tol in ((-1e6, 1e6, 1.5e-7), (1e6, 2.0 ** 22, 4e-6)):
        x = torch.linspace(lo, hi, 32 * 64).reshape(32, 64)
        for fn, ref in ((pypto.sin, np.sin), (pypto.cos, np.cos)):
            assert np.max(np.abs(run(fn, x).double().numpy() - ref(x.double().numpy()))) < tol
    big = torch.tensor([[2.0 ** 22 + 1, -1e7, 1e30, INF, -INF, NAN, 3e38, 2.0 ** 22]])
    got = run(pypto.tan, big)
    assert torch.isnan(got[0, :7]).all() and torch.isfinite(got[0, 7])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("name,fn,ref,x,ulps", UNARY, ids=[u[0] for u in UNARY])
def test_unary_16bit_one_rounding(name, fn, ref, x, ulps, dtype):
    x = x.clamp(-6e4, 6e4).to(dtype) if dtype == torch.float16 else x.to(dtype)
    got = run(fn, x)
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
        within_one_ulp(got, ref(x.double().numpy()), dtype)


def test_integer_input_gives_fp32():
    x = torch.arange(-8, 8, dtype=torch.int32).reshape(2, 8)
    got = run(pypto.sin, x, out_dtype=torch.float32)
    assert ulp_error(got, np.sin(x.double().numpy())) <= 2


EDGE = torch.tensor([[0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 1.5, -1.5, 1e-30, -1e-30, 1e30, -1e30, 0.5, 2.0, 3e38]])
EDGE_UNARY = [("sin", pypto.sin, torch.sin), ("cos", pypto.cos, torch.cos), ("tan", pypto.tan, torch.tan),
              ("asin", pypto.asin, torch.asin), ("acos", pypto.acos, torch.acos), ("atan", pypto.atan, torch.atan),
              ("asinh", pypto.asinh, torch.asinh), ("acosh", pypto.acosh, torch.acosh),
              ("atanh", pypto.atanh, torch.atanh), ("cbrt", pypto.cbrt, lambda t: torch.sign(t) * t.abs() ** (1 / 3))]


@pytest.mark.parametrize("name,fn,ref", EDGE_UNARY, ids=[e[0] for e in EDGE_UNARY])
def test_unary_edge_cases(name, fn, ref):
    """0, +-inf, NaN, domain errors (-> NaN), tiny and huge values like torch (sin/cos/tan of 1e30
    and 3e38 are outside the reduction's range: NaN, see test_sin_cos_large_arguments)."""
    got = run(fn, EDGE)
    want = ref(EDGE.double()).float()
    if name in ("sin", "cos", "tan"):
        want[EDGE.abs() > 1e6] = NAN
    torch.testing.assert_close(got, want, rtol=3e-7, atol=1e-37, equal_nan=True)


def test_atan2_quadrants_zeros_infinities():
    y = torch.tensor([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 1.0, -1.0, INF, -INF, INF, INF, -INF, NAN, 1.0, 0.0, 3.0, -2.0])
    x = torch.tensor([0.0, 0.0, -0.0, -0.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, INF, -INF, -INF, 1.0, NAN, -2.0, 1e-3, 1e3])
    got = run(pypto.atan2, y.reshape(1, -1), x.reshape(1, -1))
    want = torch.atan2(y.double(), x.double()).float().reshape(1, -1)
    torch.testing.assert_close(got, want, rtol=3e-7, atol=0, equal_nan=True)
    assert torch.equal(torch.signbit(got[0, :4]), torch.signbit(want[0, :4]))


#: atan2's error bound (docs/tensor.md: 3.07 ulps at most over 3M random inputs of both tests' kinds)
ATAN2_ULPS = 3.5


@pytest.mark.both_backends
def test_atan2_broadcast_and_scalar():
    yv = torch.randn(24, 80) * 10
    xv = torch.randn(1, 80) * 10
    err = ulp_error(run(pypto.atan2, yv, xv), np.arctan2(yv.double().numpy(), xv.double().numpy()))
    assert err <= ATAN2_ULPS
    got = run(lambda a: pypto.atan2(a, -2.0), yv)
    assert ulp_error(got, np.arctan2(yv.double().numpy(), -2.0)) <= ATAN2_ULPS


def test_atan2_accuracy_all_quadrants():
    yv = torch.randn(32, 64) * torch.logspace(-3, 3, 32 * 64).reshape(32, 64)
    xv = torch.randn(32, 64) * torch.logspace(3, -3, 32 * 64).reshape(32, 64)
    assert ulp_error(run(pypto.atan2, yv, xv), np.arctan2(yv.double().numpy(), xv.double().numpy())) <= ATAN2_ULPS


# ---------------------------------------------------------------------------------- signbit / copysign
SIGNED = torch.tensor([[0.0, -0.0, 1.5, -1.5, INF, -INF, NAN, 1e-40, -1e-40, 3.0]])


@pytest.mark.both_backends
def test_signbit_copysign():
    got = run(pypto.signbit, SIGNED, out_dtype=torch.bool)
    assert torch.equal(got, torch.signbit(SIGNED))
    mags = torch.tensor([[2.0, 2.0, -3.0, 3.0, 1.0, 1.0, -5.0, 4.0, 4.0, -0.0]])
    got = run(pypto.copysign, mags, SIGNED)
    want = torch.copysign(mags, SIGNED)
    assert torch.equal(got, want)
    assert torch.equal(torch.signbit(got), torch.signbit(want))


def test_signbit_copysign_dtypes_and_scalars():
    ints = torch.tensor([[-3, 0, 5, -1]], dtype=torch.int32)
    assert torch.equal(run(pypto.signbit, ints, out_dtype=torch.bool), torch.signbit(ints))
    h = torch.tensor([[1.0, -2.0, 0.0, -0.0]], dtype=torch.float16)
    assert torch.equal(run(pypto.signbit, h, out_dtype=torch.bool), torch.signbit(h))
    assert torch.equal(run(lambda a: pypto.copysign(a, -1.0), h), torch.copysign(h, torch.tensor(-1.0)).half())
    got = run(pypto.copysign, ints, torch.tensor([[1.0, -1.0, -0.0, 2.0]]), out_dtype=torch.float32)
    assert torch.equal(got, torch.copysign(ints, torch.tensor([[1.0, -1.0, -0.0, 2.0]])))


# ---------------------------------------------------------------------------------- bitwise
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.uint8]


def _ints(dtype, shape=(24, 80), seed=0):
    g = torch.Generator().manual_seed(seed)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_binary(op, dtype):
    a, b = _ints(dtype), _ints(dtype, seed=1)
    assert torch.equal(run(getattr(pypto, op), a, b), getattr(torch, op)(a, b))
    assert torch.equal(run(getattr(pypto, op), a, b[:1]), getattr(torch, op)(a, b[:1]))
    assert torch.equal(run(lambda t: getattr(pypto, op)(t, 0x35), a), getattr(torch, op)(a, 0x35))


@pytest.mark.both_backends
def test_bitwise_both_backends():
    a, b = _ints(torch.int32), _ints(torch.int32, seed=1)
    outs = [torch.empty_like(a) for _ in range(4)]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor(),
          o4: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        o1[:] = pypto.bitwise_xor(pypto.bitwise_and(x, y), pypto.bitwise_not(y))
        o2[:] = pypto.bitwise_or(x, 7)
        o3[:] = pypto.bitwise_left_shift(x, pypto.bitwise_and(y, 63))
        o4[:] = pypto.bitwise_right_shift(x, pypto.bitwise_and(y, 63))

    k(a, b, *outs)
    assert torch.equal(outs[0], (a & b) ^ ~b)
    assert torch.equal(outs[1], a | 7)
    assert torch.equal(outs[2], torch.bitwise_left_shift(a, b & 63))
    assert torch.equal(outs[3], torch.bitwise_right_shift(a, b & 63))


@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.bool], ids=str)
def test_bitwise_not(dtype):
    a = _ints(dtype) if dtype != torch.bool else torch.rand(24, 80) > 0.5
    assert torch.equal(run(pypto.bitwise_not, a), torch.bitwise_not(a))


def test_bitwise_bool():
    a, b = torch.rand(24, 80) > 0.5, torch.rand(24, 80) > 0.5
    for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert torch.equal(run(getattr(pypto, op), a, b), getattr(torch, op)(a, b))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_out_of_range_amounts(op, dtype):
    """Amounts outside [0, bits) (negative too) shift everything out, like torch."""
    a = _ints(dtype, (4, 80))
    bits = torch.iinfo(dtype).bits
    amounts = torch.arange(-8, bits + 8).repeat(4, 80)[:, :80].to(dtype if dtype != torch.uint8 else torch.int16)
    amounts = amounts.clamp(torch.iinfo(dtype).min, torch.iinfo(dtype).max).to(dtype)
    assert torch.equal(run(getattr(pypto, op), a, amounts), getattr(torch, op)(a, amounts))
    for k in (0, 3, bits - 1, bits, bits + 5):
        assert torch.equal(run(lambda t: getattr(pypto, op)(t, k), a), getattr(torch, op)(a, k)), k


def test_bitwise_rejects_floats_and_64bit():
    with pytest.raises(pypto.KernelError):
        run(pypto.bitwise_and, torch.ones(2, 8), torch.ones(2, 8))
    with pytest.raises(pypto.KernelError):
        run(pypto.bitwise_not, torch.ones(2, 8, dtype=torch.int64))


# ---------------------------------------------------------------------------------- gcd / ceil_div
@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32], ids=str)
def test_gcd(dtype):
    a, b = _ints(dtype, (8, 64)), _ints(dtype, (8, 64), seed=1)
    a[0, :4] = torch.tensor([0, 0, 12, torch.iinfo(dtype).min], dtype=dtype)
    b[0, :4] = torch.tensor([0, 9, 0, 0], dtype=dtype)
    a[1, :2] = torch.tensor([torch.iinfo(dtype).max, -6], dtype=dtype)
    b[1, :2] = torch.tensor([torch.iinfo(dtype).max - 1, 4], dtype=dtype)
    assert torch.equal(run(pypto.gcd, a, b, tile=(8, 64)), torch.gcd(a, b))


@pytest.mark.both_backends
def test_gcd_fibonacci_worst_case():
    """Consecutive Fibonacci numbers need the most Euclid steps (45 for INT32)."""
    fib = [1, 2]
    while fib[-1] + fib[-2] < 2 ** 31:
        fib.append(fib[-1] + fib[-2])
    a = torch.tensor([fib[-1], fib[-2], 1836311903, 0] + [6] * 28, dtype=torch.int32).reshape(1, 32)
    b = torch.tensor([fib[-2], fib[-1], 1134903170, 5] + [-9] * 28, dtype=torch.int32).reshape(1, 32)
    assert torch.equal(run(pypto.gcd, a, b, tile=(1, 32)), torch.gcd(a, b))


def test_gcd_int64_uint8_and_pass_verify():
    """INT64 (91 steps) and UINT8; the numpy reference evaluates the deep DAG once per node."""
    a = torch.tensor([[2 ** 62, -(3 ** 39), 0, 7, 12345678987654321, 5] + [6] * 26], dtype=torch.int64)
    b = torch.tensor([[2 ** 40 * 3, 3 ** 20 * 2, 0, -14, 98765432123456789, 0] + [-4] * 26], dtype=torch.int64)
    out = torch.empty_like(a)

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 32)
        o[:] = pypto.gcd(x, y)

    k(a, b, out)
    assert torch.equal(out, torch.gcd(a, b))
    u, v = _ints(torch.uint8, (4, 64)), _ints(torch.uint8, (4, 64), seed=3)
    assert torch.equal(run(pypto.gcd, u, v), torch.gcd(u, v))


@pytest.mark.both_backends
@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64], ids=str)
def test_ceil_div_int(dtype):
    a = torch.arange(-12, 12, dtype=dtype).repeat(8, 1)
    b = torch.tensor([1, 2, 3, 5, -1, -2, -3, -5], dtype=dtype).reshape(8, 1)
    want = -torch.div(-a.long(), b.long(), rounding_mode="floor")
    assert torch.equal(run(pypto.ceil_div, a, b, out_shape=(8, 24)), want.to(dtype))
    assert torch.equal(run(lambda t: pypto.ceil_div(t, 4), a), (-torch.div(-a.long(), 4, rounding_mode="floor")).to(dtype))


def test_ceil_div_float():
    a = torch.randn(24, 80) * 50
    b = torch.rand(24, 80) + 0.25
    assert torch.equal(run(pypto.ceil_div, a, b), torch.ceil(a / b))


# ---------------------------------------------------------------------------------- triu / tril
@pytest.mark.both_backends
@pytest.mark.parametrize("diagonal", [0, 1, -2, 40, -100])
def test_triu_tril(diagonal):
    x = torch.randn(3, 40, 72)
    assert torch.equal(run(lambda a: pypto.triu(a, diagonal), x, tile=(1, 16, 32)), torch.triu(x, diagonal))
    assert torch.equal(run(lambda a: pypto.tril(a, diagonal), x, tile=(1, 16, 32)), torch.tril(x, diagonal))


def test_triu_tril_fused_int_and_dynamic():
    x = torch.arange(50 * 70, dtype=torch.int32).reshape(50, 70)
    got = run(lambda a: pypto.tril(a * 2, 3) + 1, x, tile=(32, 64))
    assert torch.equal(got, torch.tril(x * 2, 3) + 1)
    spec = lambda t: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)  # noqa: E731
    xf = torch.randn(37, 45)
    assert torch.equal(run(lambda a: pypto.triu(a, -1), xf, spec=spec), torch.triu(xf, -1))
    b = torch.rand(20, 20) > 0.5
    assert torch.equal(run(pypto.tril, b), torch.tril(b))


# ---------------------------------------------------------------------------------- prod
X3 = torch.rand(5, 24, 40) + 0.5


@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (2, False), (-1, True), (-2, False), (None, True)])
def test_prod_dims(dim, keepdim):
    """All dims (None) with keepdim: a 0-d result cannot be stored yet (like pypto.sum's)."""
    x = X3 if dim is not None else 1 + (X3 - 1) / 64  # 4800 factors near 1 stay in FP32 range
    want = x.double().prod(dim, keepdim=keepdim) if dim is not None else x.double().prod().reshape(1, 1, 1)
    got = run(lambda a: pypto.prod(a, dim, keepdim), x, out_shape=want.shape, tile=(1, 16, 32))
    rtol = 2e-6 * (x.shape[dim] if dim is not None else x.numel()) ** 0.5  # ~sqrt(n) roundings of 2**-24
    torch.testing.assert_close(got.double(), want, rtol=rtol, atol=0)


@pytest.mark.both_backends
def test_prod_dynamic_int_fp16():
    """DYNAMIC dims with keepdim=True (keepdim=False reshapes, and reshape rejects DYNAMIC dims today)."""
    spec = lambda t: pypto.Tensor([pypto.DYNAMIC] * t.dim(), {torch.float32: pypto.DT_FP32,  # noqa: E731
                                                              torch.int32: pypto.DT_INT32,
                                                              torch.float16: pypto.DT_FP16}[t.dtype])
    x = torch.rand(30, 70) + 0.5
    got = run(lambda a: pypto.prod(a, -1, keepdim=True), x, out_shape=(30, 1), spec=spec, tile=(16, 32))
    torch.testing.assert_close(got, x.prod(-1, keepdim=True), rtol=1e-5, atol=0)
    xi = torch.randint(-3, 4, (30, 7), dtype=torch.int32)
    got = run(lambda a: pypto.prod(a, 0, keepdim=True), xi, out_shape=(1, 7), spec=spec)
    assert torch.equal(got, xi.prod(0, keepdim=True).int())
    xh = (torch.rand(16, 12) + 0.5).half()
    got = run(lambda a: pypto.prod(a, 1), xh, out_shape=(16,))
    assert torch.equal(got, xh.float().prod(1).half())


# ---------------------------------------------------------------------------------- cumsum / cumprod
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_dims(op, dim):
    x = torch.rand(3, 20, 40) + 0.5
    got = run(lambda a: getattr(pypto, op)(a, dim), x, tile=(1, 16, 32))
    torch.testing.assert_close(got, getattr(torch, op)(x.double(), dim).float(), rtol=1e-5, atol=1e-6)


@pytest.mark.both_backends
def test_scan_dynamic_fused_and_dtypes():
    spec = lambda t: pypto.Tensor([pypto.DYNAMIC] * t.dim(), {torch.float32: pypto.DT_FP32,  # noqa: E731
                                                              torch.int32: pypto.DT_INT32,
                                                              torch.float16: pypto.DT_FP16}[t.dtype])
    x = torch.randn(37, 50)
    got = run(lambda a: pypto.cumsum(a * 2, 1) + 1, x, spec=spec, tile=(16, 32))
    torch.testing.assert_close(got, torch.cumsum(x.double() * 2, 1).float() + 1, rtol=1e-5, atol=1e-5)
    xi = torch.randint(-5, 6, (9, 33), dtype=torch.int32)
    assert torch.equal(run(lambda a: pypto.cumsum(a, 0), xi, spec=spec), torch.cumsum(xi, 0).int())
    assert torch.equal(run(lambda a: pypto.cumprod(a, -1), xi[:, :6]), torch.cumprod(xi[:, :6], -1).int())
    xh = torch.randn(12, 40).half()
    got = run(lambda a: pypto.cumsum(a, -1), xh, spec=spec)
    assert torch.equal(got, torch.cumsum(xh.float(), -1).half())


def test_scan_1d_and_8bit():
    x = torch.randn(100)
    torch.testing.assert_close(run(lambda a: pypto.cumsum(a, 0), x), torch.cumsum(x, 0), rtol=1e-5, atol=1e-5)
    x8 = torch.randint(-3, 4, (4, 10), dtype=torch.int8)
    assert torch.equal(run(lambda a: pypto.cumsum(a, 1), x8, out_dtype=torch.int32), torch.cumsum(x8, 1).int())


# ---------------------------------------------------------------------------------- axpy_
@pytest.mark.both_backends
def test_axpy_():
    y0, x = torch.randn(24, 80), torch.randn(1, 80)
    y = y0.clone()

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.axpy_(a, b, 0.5)
        a[:] = a * 2

    k(y, x)
    torch.testing.assert_close(y, (y0 + 0.5 * x) * 2)
    yh = torch.randn(24, 80).half()
    want = (yh.float() + 3.0 * x).half()

    @pypto.frontend.jit
    def k2(a: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        a.axpy_(b, alpha=3.0)

    k2(yh, x)
    assert torch.equal(yh, want)


# ---------------------------------------------------------------------------------- reference / errors
def test_pass_verify_covers_new_nodes():
    """The numpy reference evaluates iota, scan, prod, the bitwise and integer-division nodes."""
    x = torch.rand(16, 40) + 0.5
    xi = _ints(torch.int32, (16, 40))
    outs = [torch.empty(16, 40), torch.empty(16), torch.empty(16, 40, dtype=torch.int32)]

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True, "pass_verify_error_tol": 1e-5})
    def k(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o1[:] = pypto.triu(pypto.cumprod(a, 0), 2) + pypto.sin(a)
        o2[:] = pypto.prod(a, -1)
        o3[:] = pypto.bitwise_xor(pypto.bitwise_right_shift(b, 3), pypto.ceil_div(b, 7))

    k(x, xi, *outs)
    assert torch.equal(outs[2], torch.bitwise_xor(xi >> 3, -torch.div(-xi, 7, rounding_mode="floor")))


def test_remaining_not_implemented():
    from pypto.ops import _NOT_IMPLEMENTED

    for name in ("sin", "cumsum", "triu", "bitwise_and", "axpy_", "gcd", "ceil_div", "prod", "gathermask", "pack",
                 "unpack", "fillpad", "uniform", "normal"):
        assert name not in _NOT_IMPLEMENTED
    with pytest.raises(NotImplementedError, match="pypto.sort32"):
        pypto.sort32()
