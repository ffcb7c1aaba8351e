"""Every vector op of the op table against numpy, per supported dtype (docs/language.md "Semantics of ops").

Tolerances.  The contract (docs/architecture.md "Semantics") is that fp16/bf16 are computed in
fp32 and rounded once per op and that integers wrap.  So every arithmetic op is compared
bit-exactly (NaN positions and the sign of zeros included) against numpy computing in fp32 (or
the int dtype) and rounding once to the tile dtype.  Only transcendental ops (exp, log, rsqrt)
get a tolerance: one unit in the last place of the tile dtype (2^-10 fp16, 2^-7 bf16) and 4 ulp
for fp32, because a C++ libm may differ from numpy's by an ulp before the final rounding.
Fused multiply-add ops use inputs whose products and sums are exact, so they are bit-exact
whether or not a backend contracts them into an FMA.
"""
import functools
import zlib

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import pypto_pro.language as pl

from .kernels import NP, Spec, assert_bits_equal, f32, random_array, rounded, run_vec, spec_of, ulp

R, C = 8, 64
FLOATS = [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32]
INTS = [pl.DT_INT8, pl.DT_INT16, pl.DT_INT32, pl.DT_INT64, pl.DT_UINT8, pl.DT_UINT16, pl.DT_UINT32, pl.DT_UINT64]
ARITH = INTS + FLOATS
NO_8BIT = [d for d in ARITH if d.bits() > 8]
BIT_TYPES = [pl.DT_INT8, pl.DT_INT16, pl.DT_INT32, pl.DT_UINT8, pl.DT_UINT16, pl.DT_UINT32]
SIGNED = [d for d in ARITH if d.kind != "uint"]
ROW_REDUCE = [pl.DT_INT16, pl.DT_INT32, pl.DT_INT64, pl.DT_UINT64, pl.DT_FP16, pl.DT_FP32]
F16_F32 = [pl.DT_FP16, pl.DT_FP32]
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)

#: the op x dtype matrices run whole on the interpreter and as a covering cross-section on cpu (every op and
#: every dtype at least once; tests/cpu_sampling.py); PYPTO_FULL_MATRIX=1 runs them whole on cpu too
pytestmark = pytest.mark.cpu_sample


def ids(dtypes):
    return [d.name for d in dtypes]


def rng_for(*key) -> np.random.Generator:
    """A generator seeded from the test's parameters (stable across processes, unlike hash())."""
    return np.random.default_rng(zlib.crc32(repr([str(k) for k in key]).encode()))


# ----------------------------------------------------------------------------------------------
# numpy references
# ----------------------------------------------------------------------------------------------
def c_div(a, b):
    """C integer division (truncates toward zero), wrapping to the dtype."""
    a64, b64 = a.astype(np.int64), np.asarray(b).astype(np.int64)
    q = (np.abs(a64) // np.abs(b64)) * np.sign(a64) * np.sign(b64)
    return q.astype(a.dtype)


BINARY = {
    "add": (lambda a, b: a + b, ARITH),
    "sub": (lambda a, b: a - b, ARITH),
    "mul": (lambda a, b: a * b, NO_8BIT),
    "div": (lambda a, b: a / b if a.dtype.kind == "f" else c_div(a, b),
            [d for d in NO_8BIT if d != pl.DT_BF16]),
    "maximum": (np.maximum, ARITH),
    "minimum": (np.minimum, ARITH),
    "and_": (np.bitwise_and, BIT_TYPES),
    "or_": (np.bitwise_or, BIT_TYPES),
}
TILE_ONLY = {"shl": np.left_shift, "shr": np.right_shift}


def binary_ref(name, a, b, dtype):
    fn = BINARY[name][0] if name in BINARY else TILE_ONLY.get(name, np.bitwise_xor)
    with np.errstate(all="ignore"):
        return rounded(fn(f32(a), f32(b) if isinstance(b, np.ndarray) else b), dtype)


def scalar_in(value, dtype):
    """A scalar operand as the op sees it: converted to the tile dtype, then to the compute dtype."""
    return f32(np.asarray(value).astype(NP[dtype]))[()]


# ----------------------------------------------------------------------------------------------
# one-op bodies (inlined into the generated kernels; cached so kernels are reused)
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def binary_body(name: str, rhs: str, value=None):
    """rhs: "tile", "const" (compile-time ``value``), "int"/"float" (runtime kernel argument)."""
    op = getattr(pl, name)
    if name == "xor":
        def body(o, i, s):
            op(o[0], i[0], i[1], o[1])
    elif rhs == "tile":
        def body(o, i, s):
            op(o[0], i[0], i[1])
    elif rhs == "const":
        def body(o, i, s):
            op(o[0], i[0], value)
    elif rhs == "int":
        def body(o, i, s):
            op(o[0], i[0], s[2])
    else:
        def body(o, i, s):
            op(o[0], i[0], s[3])
    return body


@functools.lru_cache(maxsize=None)
def unary_body(name: str):
    op = getattr(pl, name)

    def body(o, i, s):
        op(o[0], i[0])
    return body


def operands(name, dtype, rng, shape=(R, C)):
    a = random_array(rng, shape, dtype)
    if name in ("shl", "shr"):
        b = rng.integers(0, dtype.bits(), shape).astype(NP[dtype])
    else:
        b = random_array(rng, shape, dtype)
    if name == "div":
        b = np.where(b == 0, np.ones_like(b), b)
        if dtype.kind == "uint":
            b = np.maximum(b, 1).astype(b.dtype)
    return a, b


def run_binary(name, dtype, a, b, rhs="tile", value=None, si=0, sf=0.0):
    outs = [spec_of(a)] + ([spec_of(a)] if name == "xor" else [])
    ins = [a, b] if rhs == "tile" else [a]
    return run_vec(binary_body(name, rhs, value), ins, outs, si=si, sf=sf)[0]


BINARY_CASES = [(n, d) for n, (_, ds) in BINARY.items() for d in ds] + \
               [(n, d) for n in ("shl", "shr", "xor") for d in BIT_TYPES]


@pytest.mark.parametrize("name,dtype", BINARY_CASES, ids=[f"{n}-{d.name}" for n, d in BINARY_CASES])
def test_binary_tile_rhs(name, dtype):
    a, b = operands(name, dtype, rng_for(name, dtype))
    assert_bits_equal(run_binary(name, dtype, a, b), binary_ref(name, a, b, dtype), f"{name} {dtype.name}")


SCALAR_CASES = [(n, d) for n, (_, ds) in BINARY.items() for d in ds if d in (pl.DT_FP16, pl.DT_BF16, pl.DT_FP32,
                                                                              pl.DT_INT16, pl.DT_INT32)]


@pytest.mark.parametrize("name,dtype", SCALAR_CASES, ids=[f"{n}-{d.name}" for n, d in SCALAR_CASES])
def test_binary_scalar_rhs(name, dtype):
    """Compile-time and runtime scalars; the scalar is converted to the tile dtype first (so 0.1 acts as
    fp16(0.1) on an fp16 tile)."""
    a, _ = operands(name, dtype, rng_for(name, dtype, "s"))
    const = 3 if dtype.is_int() else 0.1
    want = binary_ref(name, a, scalar_in(const, dtype), dtype)
    assert_bits_equal(run_binary(name, dtype, a, None, "const", const), want, f"{name} const")
    if dtype.is_int():
        got = run_binary(name, dtype, a, None, "int", si=-5 if name != "div" else 7)
        want = binary_ref(name, a, scalar_in(-5 if name != "div" else 7, dtype), dtype)
    else:
        got = run_binary(name, dtype, a, None, "float", sf=1.3)
        want = binary_ref(name, a, scalar_in(np.float32(1.3), dtype), dtype)
    assert_bits_equal(got, want, f"{name} runtime scalar")


EDGES = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0, -1.0, 3.5, -2.25, 1e-3, 65504.0, -65504.0])


def edge_pair(dtype):
    """Every edge value against every edge value: a [12*12/C.., C] pair of tiles."""
    a, b = np.meshgrid(EDGES, EDGES)
    a, b = a.ravel(), b.ravel()
    n = -(-a.size // C) * C
    pad = lambda x: np.resize(x, n).reshape(-1, C)  # noqa: E731
    return pad(a).astype(NP[dtype]), pad(b).astype(NP[dtype])


EDGE_CASES = [(n, d) for n in ("add", "sub", "mul", "div") for d in FLOATS if d in BINARY[n][1]]


@pytest.mark.parametrize("name,dtype", EDGE_CASES, ids=[f"{n}-{d.name}" for n, d in EDGE_CASES])
def test_binary_edge_values(name, dtype):
    """inf, nan and signed zeros follow IEEE in fp32 (e.g. -0 + -0 = -0, inf - inf = nan, 1 / -0 = -inf)."""
    a, b = edge_pair(dtype)
    assert_bits_equal(run_binary(name, dtype, a, b), binary_ref(name, a, b, dtype), f"{name} edges")


def test_maximum_minimum_infinities():
    """Element-wise maximum/minimum with infinities (NaN and the sign of zero are left unspecified)."""
    vals = np.array([np.inf, -np.inf, 1.0, -1.0, 0.5, 2.0] * 12, np.float32)[:C]
    a = np.stack([vals, vals[::-1]] * 4).astype(np.float32)
    b = np.roll(a, 1, axis=1)
    for name, fn in (("maximum", np.maximum), ("minimum", np.minimum)):
        assert_bits_equal(run_binary(name, pl.DT_FP32, a, b), fn(a, b), name)


@pytest.mark.parametrize("dtype", [pl.DT_INT8, pl.DT_INT16, pl.DT_UINT8, pl.DT_INT32], ids=ids([pl.DT_INT8,
                         pl.DT_INT16, pl.DT_UINT8, pl.DT_INT32]))
def test_integer_add_wraps(dtype):
    info = np.iinfo(NP[dtype])
    a = np.full((R, C), info.max, NP[dtype])
    b = np.ones((R, C), NP[dtype])
    assert_bits_equal(run_binary("add", dtype, a, b), np.full((R, C), info.min, NP[dtype]))


def test_signed_shr_is_arithmetic():
    a = np.full((R, C), -64, np.int16)
    b = np.full((R, C), 3, np.int16)
    assert_bits_equal(run_binary("shr", pl.DT_INT16, a, b), np.full((R, C), -8, np.int16))


def test_integer_div_truncates_toward_zero():
    a = np.tile(np.array([7, -7, 7, -7, 0, 9, -9, 1], np.int32), (R, C // 8))
    b = np.tile(np.array([2, 2, -2, -2, 5, 3, 4, 2], np.int32), (R, C // 8))
    want = np.tile(np.array([3, -3, -3, 3, 0, 3, -2, 0], np.int32), (R, C // 8))
    assert_bits_equal(run_binary("div", pl.DT_INT32, a, b), want)


# ----------------------------------------------------------------------------------------------
# unary
# ----------------------------------------------------------------------------------------------
UNARY = {
    "neg": (np.negative, SIGNED, True),
    "abs": (np.abs, SIGNED, True),
    "exp": (np.exp, F16_F32, False),
    "log": (np.log, F16_F32, False),
    "sqrt": (np.sqrt, F16_F32, True),
    "rsqrt": (lambda x: np.float32(1) / np.sqrt(x), F16_F32, False),
    "recip": (lambda x: np.float32(1) / x, F16_F32, True),
    "relu": (lambda x: np.maximum(x, np.zeros_like(x)), [pl.DT_FP16, pl.DT_FP32, pl.DT_INT32], True),
    "not_": (np.invert, BIT_TYPES, True),
}
UNARY_CASES = [(n, d) for n, (_, ds, _) in UNARY.items() for d in ds]


def unary_input(name, dtype, rng):
    if name in ("log", "sqrt", "rsqrt"):
        return rng.uniform(0.01, 100.0, (R, C)).astype(NP[dtype])
    if name == "exp":
        return rng.uniform(-8, 8, (R, C)).astype(NP[dtype])
    if name == "recip":
        return rng.choice([-1, 1], (R, C)) * rng.uniform(0.05, 50, (R, C)).astype(NP[dtype])
    return random_array(rng, (R, C), dtype)


def assert_within_ulp(got, want, dtype, n_ulp):
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = n_ulp * ulp(dtype) * np.maximum(np.abs(w), np.finfo(NP[dtype]).tiny)
    assert np.all(np.abs(g - w) <= tol), f"max rel err {np.max(np.abs(g - w) / np.abs(w))}"


@pytest.mark.parametrize("name,dtype", UNARY_CASES, ids=[f"{n}-{d.name}" for n, d in UNARY_CASES])
def test_unary(name, dtype):
    fn, _, exact = UNARY[name]
    x = unary_input(name, dtype, rng_for(name, dtype)).astype(NP[dtype])
    got = run_vec(unary_body(name), [x], [spec_of(x)])[0]
    with np.errstate(all="ignore"):
        want = rounded(fn(f32(x)), dtype)
    if exact:
        assert_bits_equal(got, want, name)
    else:
        assert_within_ulp(got, want, dtype, 4 if dtype == pl.DT_FP32 else 1)


UNARY_EDGES = {  # IEEE results, exact in every dtype
    "neg": ([np.inf, -np.inf, -0.0, 0.0, np.nan], [-np.inf, np.inf, 0.0, -0.0, np.nan]),
    "abs": ([np.inf, -np.inf, -0.0, np.nan, -3.0], [np.inf, np.inf, 0.0, np.nan, 3.0]),
    "sqrt": ([np.inf, 0.0, -0.0, -1.0, 4.0], [np.inf, 0.0, -0.0, np.nan, 2.0]),
    "recip": ([np.inf, -np.inf, 0.0, -0.0, 4.0], [0.0, -0.0, np.inf, -np.inf, 0.25]),
    "rsqrt": ([np.inf, 0.0, 4.0, -1.0, 0.25], [0.0, np.inf, 0.5, np.nan, 2.0]),
    "exp": ([-np.inf, np.inf, 0.0, -0.0, np.nan], [0.0, np.inf, 1.0, 1.0, np.nan]),
    "log": ([0.0, -0.0, np.inf, 1.0, -1.0], [-np.inf, -np.inf, np.inf, 0.0, np.nan]),
    "relu": ([np.inf, -np.inf, -0.0, -2.0, 3.0], [np.inf, 0.0, 0.0, 0.0, 3.0]),
}


@pytest.mark.parametrize("name", sorted(UNARY_EDGES))
@pytest.mark.parametrize("dtype", F16_F32, ids=ids(F16_F32))
def test_unary_edge_values(name, dtype):
    src, want = (np.resize(np.array(v, np.float64), (R, C)).astype(NP[dtype]) for v in UNARY_EDGES[name])
    got = run_vec(unary_body(name), [src], [spec_of(src)])[0]
    if name == "relu":  # relu(-0) may be either zero
        got, want = got + np.zeros((), got.dtype), want + np.zeros((), want.dtype)
        got = np.where(got == 0, np.zeros_like(got), got)
    assert_bits_equal(got, want, name)


@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32, pl.DT_INT16], ids=["FP16", "FP32", "INT16"])
def test_expands_fills_only_the_valid_window(dtype):
    def body(o, i, s):
        pl.set_validshape(o[0], [s[0], s[1]])
        pl.expands(o[0], 5)
        pl.set_validshape(o[0], [R, C])

    init = np.arange(R * C).reshape(R, C).astype(NP[dtype])
    got = run_vec(body, [], [Spec((R, C), dtype, init=True)], init=[init], vr=3, vc=40)[0]
    want = init.copy()
    want[:3, :40] = 5
    assert_bits_equal(got, want)


# ----------------------------------------------------------------------------------------------
# cast
# ----------------------------------------------------------------------------------------------
M = pl.RoundMode
MODES = [M.CAST_NONE, M.CAST_RINT, M.CAST_ROUND, M.CAST_FLOOR, M.CAST_CEIL, M.CAST_TRUNC]


@functools.lru_cache(maxsize=None)
def cast_body(mode):
    def body(o, i, s):
        pl.cast(o[0], i[0], mode=mode)
    return body


def run_cast(values, src, dst, mode):
    x = np.resize(np.asarray(values, np.float64), (1, 64)).astype(NP[src])
    return run_vec(cast_body(mode), [x], [Spec(x.shape, dst)])[0][0, :len(values)]


F2I = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.4, -0.6, 3.0, -3.0, 1e10, -1e10]
F2I_WANT = {  # CAST_NONE is defined as the hardware default CAST_RINT; out-of-range values saturate
    M.CAST_RINT: [0, 2, 2, 0, -2, -2, 0, -1, 3, -3, 2 ** 31 - 1, -2 ** 31],
    M.CAST_ROUND: [1, 2, 3, -1, -2, -3, 0, -1, 3, -3, 2 ** 31 - 1, -2 ** 31],
    M.CAST_FLOOR: [0, 1, 2, -1, -2, -3, 0, -1, 3, -3, 2 ** 31 - 1, -2 ** 31],
    M.CAST_CEIL: [1, 2, 3, 0, -1, -2, 1, 0, 3, -3, 2 ** 31 - 1, -2 ** 31],
    M.CAST_TRUNC: [0, 1, 2, 0, -1, -2, 0, 0, 3, -3, 2 ** 31 - 1, -2 ** 31],
}
F2I_WANT[M.CAST_NONE] = F2I_WANT[M.CAST_RINT]


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("src", FLOATS, ids=ids(FLOATS))
def test_cast_float_to_int32_ties(mode, src):
    values = F2I if src != pl.DT_FP16 else F2I[:10]  # 1e10 overflows fp16 itself
    got = run_cast(values, src, pl.DT_INT32, mode)
    assert_bits_equal(got, np.array(F2I_WANT[mode][:len(values)], np.int32), mode.name)


def test_cast_float_to_int_nan_is_zero_and_small_ints_saturate():
    got = run_cast([np.nan, np.inf, -np.inf, 300.0, -300.0], pl.DT_FP32, pl.DT_INT8, M.CAST_RINT)
    assert_bits_equal(got, np.array([0, 127, -128, 127, -128], np.int8))


H = 2.0 ** -11  # half an fp16 ulp at 1.0
F2H = [1 + H, 1 + 3 * H, -(1 + H), -(1 + 3 * H), 1 + H / 2, 1 + 1.5 * H, 65520.0, 70000.0, 1.5, -0.0]
F2H_WANT = {
    M.CAST_RINT: [1, 1 + 4 * H, -1, -(1 + 4 * H), 1, 1 + 2 * H, np.inf, np.inf, 1.5, -0.0],
    M.CAST_ROUND: [1 + 2 * H, 1 + 4 * H, -(1 + 2 * H), -(1 + 4 * H), 1, 1 + 2 * H, np.inf, np.inf, 1.5, -0.0],
    M.CAST_FLOOR: [1, 1 + 2 * H, -(1 + 2 * H), -(1 + 4 * H), 1, 1, 65504, 65504, 1.5, -0.0],
    M.CAST_CEIL: [1 + 2 * H, 1 + 4 * H, -1, -(1 + 2 * H), 1 + 2 * H, 1 + 2 * H, np.inf, np.inf, 1.5, -0.0],
    M.CAST_TRUNC: [1, 1 + 2 * H, -1, -(1 + 2 * H), 1, 1, 65504, 65504, 1.5, -0.0],
    M.CAST_ODD: [1 + 2 * H, 1 + 2 * H, -(1 + 2 * H), -(1 + 2 * H), 1 + 2 * H, 1 + 2 * H, 65504, 65504, 1.5, -0.0],
}
F2H_WANT[M.CAST_NONE] = F2H_WANT[M.CAST_RINT]


@pytest.mark.parametrize("mode", MODES + [M.CAST_ODD], ids=[m.name for m in MODES + [M.CAST_ODD]])
def test_cast_fp32_to_fp16_halfway_values(mode):
    got = run_cast(F2H, pl.DT_FP32, pl.DT_FP16, mode)
    assert_bits_equal(got, np.array(F2H_WANT[mode], np.float16), mode.name)


B = 2.0 ** -8  # half a bf16 ulp at 1.0
F2B = [1 + B, 1 + 3 * B, -(1 + B), 1 + B / 2, 3.0]
F2B_WANT = {
    M.CAST_RINT: [1, 1 + 4 * B, -1, 1, 3],
    M.CAST_ROUND: [1 + 2 * B, 1 + 4 * B, -(1 + 2 * B), 1, 3],
    M.CAST_FLOOR: [1, 1 + 2 * B, -(1 + 2 * B), 1, 3],
    M.CAST_CEIL: [1 + 2 * B, 1 + 4 * B, -1, 1 + 2 * B, 3],
    M.CAST_TRUNC: [1, 1 + 2 * B, -1, 1, 3],
}
F2B_WANT[M.CAST_NONE] = F2B_WANT[M.CAST_RINT]


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_cast_fp32_to_bf16_halfway_values(mode):
    got = run_cast(F2B, pl.DT_FP32, pl.DT_BF16, mode)
    assert_bits_equal(got, np.array(F2B_WANT[mode], np.float64).astype(NP[pl.DT_BF16]), mode.name)


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_cast_int32_to_fp16_ties(mode):
    want = {M.CAST_RINT: [2048, 2052, 65504, np.inf], M.CAST_ROUND: [2050, 2052, 65504, np.inf],
            M.CAST_FLOOR: [2048, 2050, 65504, 65504], M.CAST_CEIL: [2050, 2052, 65504, np.inf],
            M.CAST_TRUNC: [2048, 2050, 65504, 65504]}
    want[M.CAST_NONE] = want[M.CAST_RINT]
    got = run_cast([2049, 2051, 65504, 100000], pl.DT_INT32, pl.DT_FP16, mode)
    assert_bits_equal(got, np.array(want[mode], np.float16), mode.name)


@pytest.mark.parametrize("src", [pl.DT_FP16, pl.DT_BF16], ids=["FP16", "BF16"])
def test_cast_widening_is_exact(src):
    vals = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1.0 / 3, 65504.0 if src == pl.DT_FP16 else 3e38, 6e-8]
    want = np.array(vals, np.float64).astype(NP[src]).astype(np.float32)
    for mode in (M.CAST_RINT, M.CAST_FLOOR):
        assert_bits_equal(run_cast(vals, src, pl.DT_FP32, mode), want)


def test_cast_int_to_int_wraps():
    got = run_cast([300, -129, 127, -1], pl.DT_INT32, pl.DT_INT8, M.CAST_RINT)
    assert_bits_equal(got, np.array([44, 127, 127, -1], np.int8))


# ----------------------------------------------------------------------------------------------
# compare + select
# ----------------------------------------------------------------------------------------------
CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal}


@functools.lru_cache(maxsize=None)
def compare_body(name, scalar):
    op = getattr(pl, name)
    if scalar:
        def body(o, i, s):
            op(o[0], i[0], s[3])
            pl.select(o[1], o[0], i[0], i[1], o[2])
    else:
        def body(o, i, s):
            op(o[0], i[0], i[1])
            pl.select(o[1], o[0], i[0], i[1], o[2])
    return body


def unpacked(mask: np.ndarray, cols: int) -> np.ndarray:
    """Our mask layout: LSB-first bits, ceil(cols/8) bytes at the start of each mask row."""
    return np.unpackbits(mask[:, :-(-cols // 8)], axis=1, bitorder="little", count=cols).astype(bool)


@pytest.mark.parametrize("scalar", [False, True], ids=["tile", "scalar"])
@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32], ids=["FP16", "FP32"])
def test_compare_bitpacked_mask_and_select(name, dtype, scalar):
    rng = rng_for(name, dtype, scalar)
    a = rng.integers(-3, 4, (R, C)).astype(NP[dtype])
    b = rng.integers(-3, 4, (R, C)).astype(NP[dtype])
    outs = [Spec((R, C), pl.DT_UINT8), spec_of(a), spec_of(a)]
    mask, sel, _ = run_vec(compare_body(name, scalar), [a, b], outs, sf=1.0)
    pred = CMP[name](a, np.float32(1.0) if scalar else b)
    assert np.array_equal(unpacked(mask, C), pred)
    assert_bits_equal(sel, np.where(pred, a, b))


def test_select_with_scalar_rhs_and_int_data():
    def body(o, i, s):
        pl.gt(o[0], i[0], i[1])
        pl.select(o[1], o[0], i[0], -7, o[2])

    rng = rng_for("select")
    a, b = (rng.integers(-50, 50, (R, C)).astype(np.int32) for _ in range(2))
    _, sel, _ = run_vec(body, [a, b], [Spec((R, C), pl.DT_UINT8), spec_of(a), spec_of(a)])
    assert_bits_equal(sel, np.where(a > b, a, np.int32(-7)))


def test_compare_with_nan_is_false_except_ne():
    a = np.resize(np.array([np.nan, 1.0, np.nan, 0.0], np.float32), (R, C))
    b = np.resize(np.array([np.nan, np.nan, 1.0, -0.0], np.float32), (R, C))
    for name, fn in CMP.items():
        mask = run_vec(compare_body(name, False), [a, b],
                       [Spec((R, C), pl.DT_UINT8), spec_of(a), spec_of(a)])[0]
        assert np.array_equal(unpacked(mask, C), fn(a, b)), name


# ----------------------------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------------------------
def reduce_ref(kind, x, dim, dtype):
    """dim=0 reduces each row (numpy axis 1) -> [R,1]; dim=1 each column -> [1,C].  Sums run in the
    compute dtype, then round once: column sums top to bottom; row sums in the documented lane order
    (element c into lane c % 8, each lane left to right, lanes combined ((0+1)+(2+3))+((4+5)+(6+7)))."""
    axis = 1 if dim == 0 else 0
    xc = f32(x)
    with np.errstate(all="ignore"):
        if kind == "sum" and dim == 0:
            r = np.zeros((xc.shape[0], 1), xc.dtype)
            for i, row in enumerate(xc):
                lanes = [row[lane] for lane in range(min(8, len(row)))]
                for c in range(8, len(row)):
                    lanes[c % 8] = lanes[c % 8] + row[c]
                while len(lanes) > 1:
                    lanes = [lanes[j] + lanes[j + 1] if j + 1 < len(lanes) else lanes[j]
                             for j in range(0, len(lanes), 2)]
                r[i, 0] = lanes[0]
        elif kind == "sum":
            r = np.take(np.cumsum(xc, axis=axis, dtype=xc.dtype), [-1], axis=axis)
        elif kind == "max":
            r = np.max(xc, axis=axis, keepdims=True)
        elif kind == "min":
            r = np.min(xc, axis=axis, keepdims=True)
        else:
            fn = np.argmax if kind == "argmax" else np.argmin
            return np.expand_dims(fn(xc, axis=axis), axis).astype(np.int32)
    return rounded(r, dtype)


@functools.lru_cache(maxsize=None)
def reduce_body(spelling: str, dim: int):
    """spelling: "sum"/"maximum"/"minimum"/"argmax"/"argmin" (with dim=) or "row_*"/"col_*"."""
    op = getattr(pl, spelling)
    if spelling.startswith(("row_", "col_")):
        def body(o, i, s):
            op(o[0], i[0], i[1])
    else:
        def body(o, i, s):
            op(o[0], i[0], i[1], dim=dim)
    return body


def run_reduce(spelling, dim, x, kind, vr=None, vc=None):
    rows, cols = x.shape
    out_dtype = pl.DT_INT32 if kind.startswith("arg") else spec_of(x).dtype
    window = None if vr is None else ("r", "c")
    if dim == 0:
        out = Spec((rows, 1), out_dtype, layout=pl.DN, valid=None if vr is None else ("r", 1))
    else:
        out = Spec((1, cols), out_dtype, valid=None if vr is None else (1, "c"))
    ins = [spec_of(x, valid=window), spec_of(x)]
    return run_vec(reduce_body(spelling, dim), [x, x], [out], in_specs=ins, vr=vr or 1, vc=vc or 1)[0]


KINDS = {"sum": "sum", "max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin"}
REDUCE_CASES = [(k, dim, d) for k in KINDS for dim in (0, 1)
                for d in (ROW_REDUCE if dim == 0 and not k.startswith("arg") else [pl.DT_FP16, pl.DT_BF16,
                                                                                    pl.DT_FP32, pl.DT_INT32])
                if not (dim == 0 and d == pl.DT_BF16)]


@pytest.mark.parametrize("kind,dim,dtype", REDUCE_CASES, ids=[f"{k}-dim{m}-{d.name}" for k, m, d in REDUCE_CASES])
def test_reductions(kind, dim, dtype):
    rng = rng_for(kind, dim, dtype)
    x = random_array(rng, (16, C), dtype)
    want = reduce_ref(kind, x, dim, dtype)
    assert_bits_equal(run_reduce(KINDS[kind], dim, x, kind), want, "dim= spelling")
    spelled = ("row_" if dim == 0 else "col_") + kind
    assert_bits_equal(run_reduce(spelled, dim, x, kind), want, spelled)


def test_row_reduction_with_infinities_and_signed_zero():
    x = np.zeros((8, C), np.float32)
    x[0, 3], x[1, 5], x[2, :] = np.inf, -np.inf, -0.0
    x[3, 1], x[3, 2] = np.inf, -np.inf
    assert_bits_equal(run_reduce("sum", 0, x, "sum"), reduce_ref("sum", x, 0, pl.DT_FP32))
    assert_bits_equal(run_reduce("maximum", 0, x, "max")[:2], np.array([[np.inf], [0.0]], np.float32))
    assert_bits_equal(run_reduce("minimum", 0, x, "min")[:2], np.array([[0.0], [-np.inf]], np.float32))


def test_argmax_ties_take_the_first_index():
    """Decision (the official material states no tie rule): the first occurrence wins, as in numpy."""
    x = np.zeros((8, C), np.float32)
    x[:, 10] = x[:, 20] = 5.0
    x[:, 30] = x[:, 40] = -5.0
    assert np.all(run_reduce("argmax", 0, x, "argmax") == 10)
    assert np.all(run_reduce("argmin", 0, x, "argmin") == 30)


def test_dn_row_result_aliases_nd_row():
    """A DN [R,1] reduction result and an ND [1,R] tile at the same address hold the same values."""
    def body(o, i, s):
        col = pl.make_tile(pl.TileType([16, 1], pl.DT_FP32, layout=pl.DN), addr=0x20000)
        row = pl.make_tile(pl.TileType([1, 16], pl.DT_FP32), addr=0x20000)
        pl.sum(col, i[0], i[1], dim=0)
        pl.add(o[0], row, 0.0)

    x = random_array(rng_for("alias"), (16, C), pl.DT_FP32)
    got = run_vec(body, [x, x], [Spec((1, 16), pl.DT_FP32)])[0]
    assert_bits_equal(got, reduce_ref("sum", x, 0, pl.DT_FP32).T)


# ----------------------------------------------------------------------------------------------
# expand_*
# ----------------------------------------------------------------------------------------------
EXPAND = {"expand_max": np.maximum, "expand_min": np.minimum, "expand_mul": np.multiply,
          "expand_sub": np.subtract, "expand_div": np.divide}


@functools.lru_cache(maxsize=None)
def expand_body(name, dim):
    op = getattr(pl, name)

    def body(o, i, s):
        op(o[0], i[0], i[1], dim=dim)
    return body


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", sorted(EXPAND))
@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32], ids=["FP16", "FP32"])
def test_expand_ops(name, dim, dtype):
    rng = rng_for(name, dim, dtype)
    x = random_array(rng, (16, C), dtype)
    vshape = (16, 1) if dim == 0 else (1, C)
    v = rng.uniform(0.5, 4, vshape).astype(NP[dtype])
    vspec = spec_of(v, layout=pl.DN if dim == 0 else None)
    got = run_vec(expand_body(name, dim), [x, v], [spec_of(x)], in_specs=[spec_of(x), vspec])[0]
    with np.errstate(all="ignore"):
        assert_bits_equal(got, rounded(EXPAND[name](f32(x), f32(v)), dtype), name)


# ----------------------------------------------------------------------------------------------
# fused ops
# ----------------------------------------------------------------------------------------------
def small_ints(rng, dtype, shape=(R, C), lo=-8, hi=8):
    """Integer-valued inputs: every product/sum of a few of them is exact in fp16/bf16/fp32."""
    return rng.integers(lo, hi, shape, endpoint=True).astype(NP[dtype])


def relu(x):
    return np.where(x > 0, x, np.zeros_like(x))


@pytest.mark.parametrize("name,fn", [("add_relu", np.add), ("sub_relu", np.subtract)])
@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32, pl.DT_INT32],
                         ids=["FP16", "BF16", "FP32", "INT32"])
def test_add_sub_relu(name, fn, dtype):
    """dst = relu(lhs op rhs); lhs is scratch (its contents afterwards are unspecified), rhs survives."""
    op = getattr(pl, name)

    def body(o, i, s):
        op(o[0], i[0], i[1])
        pl.add(o[1], i[1], 0)

    rng = rng_for(name, dtype)
    a = random_array(rng, (R, C), dtype)
    b = random_array(rng, (R, C), dtype)
    got, rhs_after = run_vec(body, [a, b], [spec_of(a), spec_of(a)])
    assert_bits_equal(got, rounded(relu(fn(f32(a), f32(b))), dtype))
    assert_bits_equal(rhs_after, b)


def test_add_relu_in_place_on_lhs():
    def body(o, i, s):
        pl.add_relu(i[0], i[0], i[1])
        pl.add(o[0], i[0], 0.0)

    rng = rng_for("inplace")
    a, b = (random_array(rng, (R, C), pl.DT_FP32) for _ in range(2))
    assert_bits_equal(run_vec(body, [a, b], [spec_of(a)])[0], relu(a + b))


@pytest.mark.parametrize("mode", [M.CAST_RINT, M.CAST_ROUND, M.CAST_TRUNC], ids=lambda m: m.name)
@pytest.mark.parametrize("name", ["add_relu_cast", "sub_relu_cast", "mul_cast"])
def test_fused_cast_ops(name, mode):
    """fp32 lhs/rhs -> fp16 dst, with halfway products/sums so the rounding mode matters."""
    op = getattr(pl, name)

    def body(o, i, s):
        op(o[0], i[0], i[1], target_type=pl.DT_FP16, mode=mode)

    rng = rng_for(name, mode)
    a = (1 + rng.integers(0, 64, (R, C)) * H).astype(np.float32)
    b = rng.integers(-2, 3, (R, C)).astype(np.float32) * (H if name != "mul_cast" else 1)
    if name == "mul_cast":
        b = np.where(b == 0, 3.0, b).astype(np.float32)
    exact = {"add_relu_cast": relu(a + b), "sub_relu_cast": relu(a - b), "mul_cast": a * b}[name]
    got = run_vec(body, [a, b], [Spec((R, C), pl.DT_FP16)])[0]
    assert_bits_equal(got, _cast_fp16(exact, mode), name)


def _cast_fp16(x: np.ndarray, mode) -> np.ndarray:
    """Reference fp32 -> fp16 rounding for values with at most one extra bit (ties are exact)."""
    x64 = x.astype(np.float64)
    down = x64.astype(np.float16)
    lo = np.where(down.astype(np.float64) > x64, np.nextafter(down, np.float16(-np.inf)), down)
    hi = np.where(lo.astype(np.float64) < x64, np.nextafter(lo, np.float16(np.inf)), lo)
    if mode == M.CAST_TRUNC:
        return np.where(x64 >= 0, lo, hi)
    if mode == M.CAST_RINT:
        return down
    tie = (x64 - lo) == (hi - x64)
    nearest = np.where((x64 - lo) < (hi - x64), lo, hi)
    return np.where(tie, np.where(x64 >= 0, hi, lo), nearest)


@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32], ids=["FP16", "BF16", "FP32"])
def test_three_operand_fused_ops(dtype):
    rng = rng_for("fused", dtype)
    a, b, c, d0 = (small_ints(rng, dtype) for _ in range(4))

    def body(o, i, s):
        pl.addc(o[0], i[0], i[1], i[2])
        pl.mul_add_dst(o[1], i[0], i[1])
        pl.fused_mul_add(o[2], i[0], i[1])

    outs = [spec_of(a), Spec((R, C), dtype, init=True), Spec((R, C), dtype, init=True)]
    addc, mad, fma = run_vec(body, [a, b, c], outs, init=[None, d0, d0])
    A, Bv, Cv, D = (f32(x) for x in (a, b, c, d0))
    assert_bits_equal(addc, rounded(A + Bv + Cv, dtype), "addc")
    assert_bits_equal(mad, rounded(f32(rounded(A * Bv, dtype)) + D, dtype), "mul_add_dst: dst = round(l*r) + dst")
    assert_bits_equal(fma, rounded(A * D + Bv, dtype), "fused_mul_add: dst = l*dst + r")


@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32], ids=["FP16", "FP32"])
def test_fused_mul_add_relu(dtype):
    rng = rng_for("fmar", dtype)
    a, b, d0 = (small_ints(rng, dtype) for _ in range(3))

    def body(o, i, s):
        pl.fused_mul_add_relu(o[0], i[0], i[1])

    got = run_vec(body, [a, b], [Spec((R, C), dtype, init=True)], init=[d0])[0]
    assert_bits_equal(got, rounded(relu(f32(d0) * f32(a) + f32(b)), dtype))


@pytest.mark.parametrize("src,dst", [(pl.DT_FP16, pl.DT_FP16), (pl.DT_FP32, pl.DT_FP32), (pl.DT_FP16, pl.DT_FP32)],
                         ids=["FP16", "FP32", "FP16toFP32"])
def test_axpy(src, dst):
    """out = alpha*src + out, alpha converted to src's dtype (0.5 and -3 are exact everywhere)."""
    rng = rng_for("axpy", src, dst)
    x, y = small_ints(rng, src), small_ints(rng, dst)

    def body(o, i, s):
        pl.axpy(o[0], i[0], 0.5)
        pl.axpy(o[0], i[0], s[3])

    got = run_vec(body, [x], [Spec((R, C), dst, init=True)], init=[y], sf=-3.0)[0]
    assert_bits_equal(got, rounded(f32(y) + np.float32(0.5) * f32(x) - 3 * f32(x), dst))


# ----------------------------------------------------------------------------------------------
# part ops
# ----------------------------------------------------------------------------------------------
PART = {"partadd": np.add, "partmax": np.maximum, "partmin": np.minimum, "partmul": np.multiply}


@pytest.mark.parametrize("small", [0, 1], ids=["s0_small", "s1_small"])
@pytest.mark.parametrize("name", sorted(PART))
def test_part_ops(name, small):
    """Both valid -> op, one valid -> copy of it; dst covers the union of the two windows."""
    op = getattr(pl, name)

    def body(o, i, s):
        op(o[0], i[0], i[1])

    rng = rng_for(name, small)
    a, b = (random_array(rng, (16, C), pl.DT_FP32) for _ in range(2))
    specs = [spec_of(a), spec_of(b)]
    specs[small] = spec_of(a, valid=(5, 24))
    got = run_vec(body, [a, b], [spec_of(a)], in_specs=specs)[0]
    want = (b if small == 0 else a).copy()
    want[:5, :24] = PART[name](a[:5, :24], b[:5, :24])
    assert_bits_equal(got, want)


# ----------------------------------------------------------------------------------------------
# transpose, element access, fill_index, fillpad
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32, pl.DT_INT32], ids=["FP16", "FP32", "INT32"])
def test_transpose_over_valid_window(dtype):
    def body(o, i, s):
        pl.transpose(o[0], i[0])

    x = random_array(rng_for("t", dtype), (16, 32), dtype)
    got = run_vec(body, [x], [Spec((32, 16), dtype, valid=("c", "r"))], in_specs=[spec_of(x, valid=("r", "c"))],
                  vr=11, vc=29, fill=0)[0]
    want = np.zeros((32, 16), NP[dtype])
    want[:29, :11] = x[:11, :29].T
    assert_bits_equal(got, want)


def test_getval_setval_and_subscript_syntax():
    def body(o, i, s):
        pl.add(o[0], i[0], 0.0)
        v = i[0][1, 2]
        o[0][0, 0] = v + 1.0
        w = pl.getval(i[0], 7)
        pl.setval(o[0], 3, w * 2.0)
        o[0][s[0], s[1]] = i[0][2, s[1]]
        pl.setval(o[0], [1, 5], pl.getval(i[0], [3, 3]))

    x = random_array(rng_for("getval"), (8, 32), pl.DT_FP32)
    got = run_vec(body, [x], [spec_of(x)], vr=4, vc=9)[0]
    want = x.copy()
    want[0, 0] = x[1, 2] + 1
    want[0, 3] = x[0, 7] * 2
    want[4, 9] = x[2, 9]
    want[1, 5] = x[3, 3]
    assert_bits_equal(got, want)


def test_getval_on_fp16_tile_returns_the_stored_value():
    def body(o, i, s):
        pl.expands(o[0], 0.0)
        o[0][0, 1] = i[0][0, 0]

    x = np.full((1, 16), 1 / 3, np.float16)
    assert_bits_equal(run_vec(body, [x], [spec_of(x)])[0][0, 1], x[0, 0])


@pytest.mark.parametrize("dtype", [pl.DT_INT32, pl.DT_FP32, pl.DT_INT16], ids=["INT32", "FP32", "INT16"])
def test_fill_index(dtype):
    def body(o, i, s):
        pl.fill_index(o[0], s[2])
        pl.fill_index(o[1], 3)

    got1, got2 = run_vec(body, [], [Spec((1, 32), dtype), Spec((4, 32), dtype)], si=100)
    assert_bits_equal(got1, (100 + np.arange(32)).reshape(1, 32).astype(NP[dtype]))
    assert_bits_equal(got2, (3 + np.arange(128)).reshape(4, 32).astype(NP[dtype]))


PADS = {pl.TilePad.zero: (0, 0), pl.TilePad.max: (np.inf, np.iinfo(np.int32).max),
        pl.TilePad.min: (-np.inf, np.iinfo(np.int32).min)}


@pytest.mark.parametrize("pad", list(PADS), ids=lambda p: p.name)
@pytest.mark.parametrize("dtype", [pl.DT_FP32, pl.DT_FP16, pl.DT_INT32], ids=["FP32", "FP16", "INT32"])
def test_fillpad_normal(pad, dtype):
    """Decision (the official material is silent): float max/min pads are +-inf, int pads the dtype's max/min."""
    def body(o, i, s):
        pl.fillpad(o[0], i[0])

    x = random_array(rng_for("fp", pad, dtype), (8, 32), dtype)
    got = run_vec(body, [x], [Spec((8, 32), dtype, pad=pad)], in_specs=[spec_of(x, valid=("r", "c"))],
                  vr=3, vc=17)[0]
    want = np.full((8, 32), PADS[pad][0 if dtype.is_float() else 1]).astype(NP[dtype])
    want[:3, :17] = x[:3, :17]
    assert_bits_equal(got, want)


def test_fillpad_expand_and_inplace():
    def body(o, i, s):
        pl.fillpad(o[0], i[0], mode=pl.FillPadMode.EXPAND)
        padded = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32, pad=pl.TilePad.min), addr=0x30000)
        pl.add(padded, i[0], 0.0)
        pl.fillpad(padded, padded, mode=pl.FillPadMode.INPLACE)
        pl.add(o[1], padded, 0.0)

    x = random_array(rng_for("fpe"), (8, 32), pl.DT_FP32)
    big, inplace = run_vec(body, [x], [Spec((16, 64), pl.DT_FP32, pad=pl.TilePad.zero), Spec((8, 32), pl.DT_FP32)],
                           in_specs=[spec_of(x, valid=(6, 20))])
    want = np.zeros((16, 64), np.float32)
    want[:6, :20] = x[:6, :20]
    assert_bits_equal(big, want)
    # the add covered only the 8x32 tile's own (full) window; INPLACE keeps it all
    assert_bits_equal(inplace[:6, :20], x[:6, :20])


# ----------------------------------------------------------------------------------------------
# property tests (hypothesis): random ops, dtypes, physical shapes and runtime valid windows
# ----------------------------------------------------------------------------------------------
def aligned_shape(dtype):
    """Physical tile shapes obeying the ND Vec rule cols * elem_bytes % 32 == 0."""
    per = 32 // dtype.nbytes
    return st.tuples(st.sampled_from([1, 8, 16, 24]), st.sampled_from([per, 2 * per, 64 if per <= 64 else per]))


@st.composite
def elementwise_case(draw):
    name = draw(st.sampled_from(sorted(BINARY) + ["shl", "shr"] + ["neg", "abs", "relu", "sqrt", "recip"]))
    if name in BINARY:
        dtypes = BINARY[name][1]
    elif name in ("shl", "shr"):
        dtypes = BIT_TYPES
    else:
        dtypes = UNARY[name][1]
    dtype = draw(st.sampled_from(dtypes))
    rows, cols = draw(aligned_shape(dtype))
    vr, vc = draw(st.integers(1, rows)), draw(st.integers(1, cols))
    seed = draw(st.integers(0, 2 ** 16))
    return name, dtype, (rows, cols), (vr, vc), seed


@functools.lru_cache(maxsize=None)
def windowed_body(name):
    """Narrow dst to the runtime window, run the op, widen again so the store shows untouched elements."""
    op = getattr(pl, name)
    if name in UNARY:
        def body(o, i, s):
            pl.set_validshape(o[0], [s[0], s[1]])
            op(o[0], i[0])
            pl.set_validshape(o[0], [i[0].shape[0], i[0].shape[1]])
    else:
        def body(o, i, s):
            pl.set_validshape(o[0], [s[0], s[1]])
            op(o[0], i[0], i[1])
            pl.set_validshape(o[0], [i[0].shape[0], i[0].shape[1]])
    return body


@SETTINGS
@given(elementwise_case())
def test_property_elementwise_over_valid_window(case):
    name, dtype, shape, (vr, vc), seed = case
    rng = np.random.default_rng(seed)
    if name in UNARY:
        x = random_array(rng, shape, dtype, 0.25 if name in ("sqrt", "recip") else -8.0)
        ins, fn = [x], UNARY[name][0]
    else:
        x, y = operands(name, dtype, rng, shape)
        ins = [x, y]
    init = random_array(rng, shape, dtype)
    got = run_vec(windowed_body(name), ins, [Spec(shape, dtype, init=True)], init=[init], vr=vr, vc=vc)[0]
    want = init.copy()
    with np.errstate(all="ignore"):
        if name in UNARY:
            full = rounded(fn(f32(x)), dtype)
        else:
            full = binary_ref(name, x, y, dtype)
    want[:vr, :vc] = full[:vr, :vc]
    assert_bits_equal(got, want, f"{name} {dtype.name} {shape} window {vr}x{vc}")


@st.composite
def reduction_case(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    dim = draw(st.sampled_from([0, 1]))
    dtypes = ROW_REDUCE if dim == 0 and not kind.startswith("arg") else [pl.DT_FP16, pl.DT_FP32, pl.DT_INT32]
    dtype = draw(st.sampled_from(dtypes))
    per = 32 // dtype.nbytes
    rows = draw(st.sampled_from([16, 32] if dim == 0 else [1, 8, 16, 24]))
    if dim == 0 and dtype.nbytes * rows % 32:
        rows = 32
    cols = draw(st.sampled_from([per, 2 * per, 64]))
    return kind, dim, dtype, (rows, cols), (draw(st.integers(1, rows)), draw(st.integers(1, cols))), \
        draw(st.integers(0, 2 ** 16))


@SETTINGS
@given(reduction_case())
def test_property_reductions_over_valid_window(case):
    kind, dim, dtype, shape, (vr, vc), seed = case
    x = random_array(np.random.default_rng(seed), shape, dtype)
    got = run_reduce(KINDS[kind], dim, x, kind, vr=vr, vc=vc)
    want = reduce_ref(kind, x[:vr, :vc], dim, dtype)
    got = got[:vr] if dim == 0 else got[:, :vc]
    assert_bits_equal(got, want, f"{kind} dim={dim} {dtype.name} {shape} window {vr}x{vc}")


@pytest.mark.parametrize("mode,want", [(M.CAST_RINT, 1.0), (M.CAST_FLOOR, 1.0), (M.CAST_CEIL, 1 + 2.0 ** -7),
                                       (M.CAST_TRUNC, 1.0), (M.CAST_ROUND, 1.0)], ids=lambda x: getattr(x, "name", ""))
def test_cast_fp16_to_bf16_honours_the_mode(mode, want):
    """fp16 -> bf16 narrows the significand (11 -> 8 bits), so it rounds like any narrowing cast."""
    got = run_cast([1 + 2.0 ** -10, -(1 + 2.0 ** -10)], pl.DT_FP16, pl.DT_BF16, mode)
    neg = {M.CAST_FLOOR: -(1 + 2.0 ** -7), M.CAST_CEIL: -1.0}.get(mode, -want)
    assert_bits_equal(got, np.array([want, neg]).astype(NP[pl.DT_BF16]), mode.name)
