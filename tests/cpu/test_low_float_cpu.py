"""The 8-bit floats on the cpu backend (include/pto/lowfloat.h): FP8 E4M3FN / E5M2 / E8M0 and HF8 tiles.

Each path is checked bit for bit against the interpreter (the oracle) and, where the expectation is
cheap, against numpy: GM <-> Vec copies of every code, pl.cast into the formats under every rounding
mode and out of them into FP32/FP16/BF16/INT32, the cube path (load, move to Left/Right, matmul from
FP8 operands, mixed E4M3 x E5M2), the fixpipe into HF8, and element writes (setval) that round like
the interpreter's encode.  The kernels run on ``$PYPTO_BACKEND``-independent explicit backends, so a
kernel the cpu backend cannot emit fails here instead of falling back to the interpreter.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import dtypes as dt
from pypto_pro import lowprec
from pypto_pro.ops.casting import low_float_values

R, C = 8, 32
FORMATS = ["FP8E4M3FN", "FP8E5M2", "FP8E8M0", "HF8"]
MODES = [pl.RoundMode.CAST_RINT, pl.RoundMode.CAST_ROUND, pl.RoundMode.CAST_FLOOR, pl.RoundMode.CAST_CEIL,
         pl.RoundMode.CAST_TRUNC]
WIDE = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32}


def storage(name: str) -> np.dtype:
    """The numpy dtype of a GM tensor of format ``name`` (HF8: uint8 codes)."""
    return np.dtype(dt.by_name(name).np_dtype)


def codes_as(name: str, codes: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(codes.astype(np.uint8)).view(storage(name))


# --------------------------------------------------------------------------- casts and copies
def _cast_kernel(fmt, backend: str):
    """x (FP32) -> fmt under each mode; codes (fmt) -> FP32/FP16/BF16/INT32; codes copied through a Vec tile."""
    @pl.jit(backend=backend)
    def low_casts(x: pl.Tensor[[R, C], pl.DT_FP32], codes: pl.Tensor[[R, C], fmt],
                  enc: pl.Tensor[[len(MODES), R, C], fmt], copy: pl.Tensor[[R, C], fmt],
                  d32: pl.Tensor[[R, C], pl.DT_FP32], d16: pl.Tensor[[R, C], pl.DT_FP16],
                  dbf: pl.Tensor[[R, C], pl.DT_BF16], di: pl.Tensor[[R, C], pl.DT_INT32]):
        xa = pl.make_tile(pl.TileType([R, C], pl.DT_FP32), addr=0x0)
        lo = pl.make_tile(pl.TileType([R, C], fmt), addr=0x1000)
        c = pl.make_tile(pl.TileType([R, C], fmt), addr=0x2000)
        w32 = pl.make_tile(pl.TileType([R, C], pl.DT_FP32), addr=0x3000)
        w16 = pl.make_tile(pl.TileType([R, C], pl.DT_FP16), addr=0x4000)
        wbf = pl.make_tile(pl.TileType([R, C], pl.DT_BF16), addr=0x5000)
        wi = pl.make_tile(pl.TileType([R, C], pl.DT_INT32), addr=0x6000)
        with pl.section_vector():  # (bar_all: each step waits for the one before, for the sim)
            pl.load(xa, x, [0, 0])
            pl.load(c, codes, [0, 0])
            pl.system.bar_all()
            for i, m in enumerate(MODES):
                pl.cast(lo, xa, mode=m)
                pl.system.bar_all()
                pl.store(enc, lo, [i, 0, 0])
                pl.system.bar_all()
            pl.store(copy, c, [0, 0])
            pl.cast(w32, c, mode=pl.RoundMode.CAST_RINT)
            pl.cast(w16, c, mode=pl.RoundMode.CAST_RINT)
            pl.cast(wbf, c, mode=pl.RoundMode.CAST_RINT)
            pl.cast(wi, c, mode=pl.RoundMode.CAST_FLOOR)
            pl.system.bar_all()
            pl.store(d32, w32, [0, 0])
            pl.store(d16, w16, [0, 0])
            pl.store(dbf, wbf, [0, 0])
            pl.store(di, wi, [0, 0])
    return low_casts


_KERNELS = {}


def cast_kernel(name: str, backend: str):
    key = (name, backend)
    if key not in _KERNELS:
        _KERNELS[key] = _cast_kernel(dt.by_name(name), backend)
    return _KERNELS[key]


def run_casts(name: str, backend: str, x: np.ndarray, codes: np.ndarray):
    outs = dict(enc=np.zeros((len(MODES), R, C), storage(name)), copy=np.zeros((R, C), storage(name)),
                d32=np.zeros((R, C), np.float32), d16=np.zeros((R, C), np.float16),
                dbf=np.zeros((R, C), ml_dtypes.bfloat16), di=np.zeros((R, C), np.int32))
    cast_kernel(name, backend)(x, codes_as(name, codes), *outs.values())
    return outs


def interesting_floats(name: str, rng: np.random.Generator) -> np.ndarray:
    """R*C fp32 inputs around the format's grid: its values, their midpoints (ties), nudged ties, beyond its
    range, infinities, NaN, zeros of both signs and random magnitudes."""
    values = low_float_values(dt.by_name(name))
    grid = np.unique(values[np.isfinite(values)])
    mids = (grid[1:] + grid[:-1]) / 2
    pool = np.concatenate([grid, mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                           np.nextafter(mids.astype(np.float32), np.float32(-np.inf)),
                           [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, grid[-1] * 1.06, grid[0] * 1.06],
                           rng.standard_normal(64) * 10.0 ** rng.integers(-8, 6, 64)]).astype(np.float32)
    return rng.choice(pool, R * C).reshape(R, C).astype(np.float32)


def assert_same_bits(a: dict, b: dict):
    for key in a:
        assert np.array_equal(a[key].view(np.uint8), b[key].view(np.uint8)), key


@pytest.mark.parametrize("name", FORMATS)
def test_every_code_copies_and_decodes_like_the_interpreter(name):
    codes = np.arange(R * C, dtype=np.uint8).reshape(R, C)  # all 256 codes
    x = interesting_floats(name, np.random.default_rng(1))
    want, got = run_casts(name, "interp", x, codes), run_casts(name, "cpu", x, codes)
    assert_same_bits(want, got)
    assert_same_bits(want, run_casts(name, "sim", x, codes))  # (strict: a hazard would raise)
    assert np.array_equal(got["copy"].view(np.uint8), codes)
    values = low_float_values(dt.by_name(name)).reshape(R, C).astype(np.float32)
    assert np.array_equal(got["d32"], values, equal_nan=True)


@pytest.mark.parametrize("name", FORMATS)
def test_cast_rounding_matches_numpy_brute_force(name):
    """Nearest (ties even by code / away), floor, ceil, trunc on the grid, saturating; checked against a search
    over every code, independently of the interpreter's searchsorted."""
    x = interesting_floats(name, np.random.default_rng(2))
    got = run_casts(name, "cpu", x, np.zeros((R, C), np.uint8))["enc"].view(np.uint8)
    values = low_float_values(dt.by_name(name))
    finite = [c for c in range(256) if np.isfinite(values[c])]
    for mi, mode in enumerate(MODES):
        for v, code in zip(x.ravel().astype(np.float64), got[mi].ravel()):
            if np.isnan(v):
                continue
            out = values[code]
            if np.isinf(v) and np.isinf(out):
                assert name != "HF8" or mode not in (pl.RoundMode.CAST_RINT, pl.RoundMode.CAST_ROUND)
                continue
            lo = max([values[c] for c in finite if values[c] <= v], default=None)
            hi = min([values[c] for c in finite if values[c] >= v], default=None)
            lo = hi if lo is None else lo
            hi = lo if hi is None else hi
            assert out in (lo, hi), (name, mode, v, out)
            if mode == pl.RoundMode.CAST_FLOOR:
                assert out == lo
            elif mode == pl.RoundMode.CAST_CEIL:
                assert out == hi
            elif mode == pl.RoundMode.CAST_TRUNC:
                assert out == (lo if v >= 0 else hi)
            elif lo != hi and v - lo != hi - v:
                assert out == (lo if v - lo < hi - v else hi)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FORMATS), seed=st.integers(0, 2 ** 31 - 1),
       scale=st.sampled_from([1e-6, 1.0, 1e3, 1e5]))
def test_casts_match_interpreter_on_random_inputs(name, seed, scale):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random((R, C)) < 0.5, interesting_floats(name, rng),
                 rng.standard_normal((R, C)) * scale).astype(np.float32)
    codes = rng.integers(0, 256, (R, C)).astype(np.uint8)
    assert_same_bits(run_casts(name, "interp", x, codes), run_casts(name, "cpu", x, codes))


# --------------------------------------------------------------------------- element writes
def _setval_kernel(fmt, backend: str, values):
    @pl.jit(backend=backend)
    def low_setval(out: pl.Tensor[[1, C], fmt], back: pl.Tensor[[1, C], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType([1, C], fmt), addr=0x0)
        with pl.section_vector():
            for i, v in enumerate(values):
                pl.setval(t, i, v)
            pl.store(out, t, [0, 0])
            for i in range(len(values)):
                pl.setval(back, [0, i], pl.getval(t, i))
    return low_setval


@pytest.mark.parametrize("name", FORMATS)
def test_setval_and_getval_round_like_the_interpreter(name):
    """setval encodes the value (HF8: its code, not the number wrapped to a byte), getval decodes it."""
    values = [1.0, -2.5, 0.3, 1000.0, -1e6, 3.0, 1.5, 6.0, 1e-30, 1e-42, 0.0, 464.0, 61440.0, 7, -3]
    outs = []
    for backend in ("interp", "cpu"):
        out, back = np.zeros((1, C), storage(name)), np.zeros((1, C), np.float32)
        _setval_kernel(dt.by_name(name), backend, values)(out, back)
        outs.append((out.view(np.uint8), back))
    assert np.array_equal(outs[0][0], outs[1][0])
    assert np.array_equal(outs[0][1], outs[1][1], equal_nan=True)
    n = len(values)
    want = dt.by_name(name).decode(dt.by_name(name).encode(np.array(values, np.float64)))
    assert np.array_equal(outs[1][1][0, :n], want.astype(np.float32), equal_nan=True)


# --------------------------------------------------------------------------- the cube path
M, K, N = 32, 64, 32


def _mm_kernel(a_dt, b_dt, out_dt, backend: str):
    @pl.jit(backend=backend, auto_mutex=True)
    def low_mm(a: pl.Tensor[[M, K], a_dt], b: pl.Tensor[[K, N], b_dt], out: pl.Tensor[[M, N], out_dt]):
        # one slot each with its own mutex: auto_mutex orders the pipes (the sim checks it)
        a1 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=a_dt, target_memory=pl.MemorySpace.Mat),
                                addrs=0x0, mutex_ids=[0]).current()
        b1 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=b_dt, target_memory=pl.MemorySpace.Mat),
                                addrs=0x4000, mutex_ids=[1]).current()
        a0 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=a_dt, target_memory=pl.MemorySpace.Left),
                                addrs=0x0, mutex_ids=[2]).current()
        b0 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=b_dt, target_memory=pl.MemorySpace.Right),
                                addrs=0x0, mutex_ids=[3]).current()
        c = pl.make_tile_group(type=pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
                               addrs=0x0, mutex_ids=[4]).current()
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(c, a0, b0)
            pl.store(out, c, [0, 0])
    return low_mm


@pytest.mark.parametrize("a_name,b_name,out_name", [
    ("FP8E4M3FN", "FP8E4M3FN", "FP32"), ("FP8E5M2", "FP8E5M2", "FP32"), ("FP8E4M3FN", "FP8E5M2", "FP32"),
    ("HF8", "HF8", "HF8"),
])
def test_matmul_from_8bit_operands_matches_interpreter(a_name, b_name, out_name):
    rng = np.random.default_rng(5)
    a_dt, b_dt, out_dt = dt.by_name(a_name), dt.by_name(b_name), dt.by_name(out_name)
    a = a_dt.encode((rng.standard_normal((M, K)) * 4).astype(np.float32))
    b = b_dt.encode((rng.standard_normal((K, N)) * 4).astype(np.float32))
    outs = []
    for backend in ("interp", "cpu", "sim"):  # (sim: strict, any hazard raises)
        out = np.zeros((M, N), storage(out_name))
        _mm_kernel(a_dt, b_dt, out_dt, backend)(a, b, out)
        outs.append(out)
    assert np.array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
    assert np.array_equal(outs[0].view(np.uint8), outs[2].view(np.uint8))
    exact = a_dt.decode(a).astype(np.float64) @ b_dt.decode(b).astype(np.float64)
    if out_name == "FP32":  # an fp32 FMA chain: within K half-ulps of the exact product
        assert np.allclose(outs[1], exact, rtol=1e-5, atol=1e-3)
    else:
        assert np.allclose(lowprec.hf8_decode(outs[1]), exact, rtol=0.26, atol=1e-3)  # 1 to 3 mantissa bits


def test_matmul_of_small_integers_is_exact():
    rng = np.random.default_rng(6)
    a8 = rng.integers(-8, 9, (M, K)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    b8 = rng.integers(-8, 9, (K, N)).astype(np.float32).astype(ml_dtypes.float8_e5m2)
    out = np.zeros((M, N), np.float32)
    _mm_kernel(dt.DT_FP8E4M3FN, dt.DT_FP8E5M2, dt.DT_FP32, "cpu")(a8, b8, out)
    assert np.array_equal(out, a8.astype(np.float64) @ b8.astype(np.float64))
