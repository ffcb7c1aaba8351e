"""Reductions (sum, argmax/argmin), broadcasting ops (expand_*), expands, exp/recip/rsqrt, cast,
transpose, element access, valid windows, scalar min/max, gather/gathermask/scatter: their
documented meaning, checked on interp, cpu and sim with our own kernels and inputs.

References are numpy.  Transcendental ops get a tolerance of 2 fp32 ulp (the hardware is not
correctly rounded either; docs/language.md); everything else is compared exactly.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, Vec, backend, poison, run_on, vec_run  # noqa: F401

pytestmark = EVERY_BACKEND

F16, F32, I16, I32 = pl.DT_FP16, pl.DT_FP32, pl.DT_INT16, pl.DT_INT32


def steps(shape, first, inc, dtype=np.float32):
    k = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return (first + inc * k).astype(dtype)


# ------------------------------------------------------------------------------------------ argmax / argmin
def _argmax_rows(d, s, t):
    pl.argmax(d, s[0], t[0])


def _argmax_cols(d, s, t):
    pl.argmax(d, s[0], t[0], dim=1)


def _argmin_rows(d, s, t):
    pl.argmin(d, s[0], t[0])


def _argmin_cols(d, s, t):
    pl.argmin(d, s[0], t[0], dim=1)


ARG = {("max", 0): _argmax_rows, ("max", 1): _argmax_cols, ("min", 0): _argmin_rows, ("min", 1): _argmin_cols}


@pytest.mark.parametrize("which,dim", sorted(ARG))
def test_argmax_argmin_return_the_first_extreme(backend, which, dim):
    """dim=0: the column of each row's extreme ([R, 1] INT32); dim=1: the row of each column's
    ([1, C]).  Values that round to the same fp16 tie, and the first index wins."""
    rng = np.random.default_rng(17)
    x = (rng.integers(-40, 40, (24, 64)) * 0.5).astype(np.float16)  # many ties
    x[7] = 2000 + np.arange(64) * 0.25  # 2000.0 .. 2015.75 round to fp16 steps of 1: more ties
    out = Vec((24, 1) if dim == 0 else (1, 64), I32)
    got = vec_run(backend, ARG[which, dim], [x], out, scratch=[Vec(x.shape, F16)])
    ref = np.argmax if which == "max" else np.argmin
    want = ref(x.astype(np.float32), axis=1 - dim)
    np.testing.assert_array_equal(got.reshape(-1), want)


# ------------------------------------------------------------------------------------------ sum
def _sum_rows(d, s, t):
    pl.sum(d, s[0], t[0])


def _sum_cols(d, s, t):
    pl.sum(d, s[0], t[0], dim=1)


@pytest.mark.parametrize("dim", [0, 1])
def test_sum_of_rows_and_of_columns(backend, dim):
    x = steps((32, 96), -50, 0.125)  # exact partial sums whatever the order
    out = Vec((32, 1), F32, layout=pl.DN) if dim == 0 else Vec((1, 96), F32)
    got = vec_run(backend, _sum_rows if dim == 0 else _sum_cols, [x], out, scratch=[Vec(x.shape, F32)])
    np.testing.assert_array_equal(got, x.astype(np.float64).sum(axis=1 - dim, keepdims=True).astype(np.float32))


# ------------------------------------------------------------------------------------------ expand_*
def _expand(name, dim):
    op = getattr(pl, "expand_" + name)
    if dim == 0:
        def step(d, s, t):
            op(d, s[0], s[1])
    else:
        def step(d, s, t):
            op(d, s[0], s[1], dim=1)
    return step


EXPAND_OPS = {"div": (np.divide, np.float32), "mul": (np.multiply, np.float32), "sub": (np.subtract, np.float32),
              "max": (np.maximum, np.float16), "min": (np.minimum, np.float16)}
EXPAND_STEPS = {(name, dim): _expand(name, dim) for name in EXPAND_OPS for dim in (0, 1)}


@pytest.mark.parametrize("name,dim", sorted(EXPAND_STEPS))
def test_expand_ops_broadcast_a_row_or_column_vector(backend, name, dim):
    """dim=0: an [R, 1] vector, one value per row; dim=1: a [1, C] vector, one per column.  One fp32
    operation rounded once to the tile dtype."""
    np_op, dtype = EXPAND_OPS[name]
    pl_dtype = F32 if dtype == np.float32 else F16
    x = steps((16, 64), -7, 0.0625, dtype)
    vshape = (16, 1) if dim == 0 else (1, 64)
    v = steps(vshape, -2.75, 0.375, dtype)
    vspec = Vec(vshape, pl_dtype, layout=pl.DN if dim == 0 else None)
    got = vec_run(backend, EXPAND_STEPS[name, dim], [x, v], Vec(x.shape, pl_dtype),
                  src_specs=[Vec(x.shape, pl_dtype), vspec])
    with np.errstate(divide="ignore"):
        want = np_op(x.astype(np.float32), v.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(got, want)


def expands_fill(out: pl.Tensor[[8, 40], pl.DT_FP32], value: float):
    ring = pl.make_tile_group(type=pl.TileType([8, 40], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x200, mutex_ids=[3])
    with pl.section_vector():
        pl.expands(ring[0], value)
        pl.store(out, ring[0], [0, 0])


@pytest.mark.parametrize("value", [2.0, -0.1])
def test_expands_fills_the_tile(backend, value):
    out = run_on(expands_fill, backend, poison((8, 40), np.float32), value)[0]
    np.testing.assert_array_equal(out, np.full((8, 40), np.float32(value)))


# ------------------------------------------------------------------------------------------ exp, recip, rsqrt
def _exp(d, s, t):
    pl.exp(d, s[0])


def _recip(d, s, t):
    pl.recip(d, s[0])


def _rsqrt(d, s, t):
    pl.rsqrt(d, s[0])


TRANSCENDENTAL = {"exp": (_exp, np.exp, (-95, 95)), "recip": (_recip, np.reciprocal, (0.01, 300)),
                  "rsqrt": (_rsqrt, lambda x: 1 / np.sqrt(x), (0.01, 300))}


@pytest.mark.parametrize("op", sorted(TRANSCENDENTAL))
def test_exp_recip_rsqrt_within_two_ulp(backend, op):
    step, ref, (lo, hi) = TRANSCENDENTAL[op]
    x = np.random.default_rng(len(op)).uniform(lo, hi, (16, 64)).astype(np.float32)
    got = vec_run(backend, step, [x], Vec(x.shape, F32))
    with np.errstate(over="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float32)  # exp overflows to +inf beyond 88.72, as in fp32
    np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=1e-44)
    assert np.array_equal(np.isinf(got), np.isinf(want))


# ------------------------------------------------------------------------------------------ cast, transpose
def _widen(d, s, t):
    pl.cast(d, s[0], mode=pl.RoundMode.CAST_ROUND)


def _transpose(d, s, t):
    pl.transpose(d, s[0])


def test_fp16_to_fp32_cast_is_exact(backend):
    x = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float16) * np.float16(300)
    got = vec_run(backend, _widen, [x], Vec(x.shape, F32))
    np.testing.assert_array_equal(got, x.astype(np.float32))


def test_transpose_of_a_square_fp16_tile(backend):
    x = steps((32, 32), 0.5, 0.75, np.float16)
    got = vec_run(backend, _transpose, [x], Vec((32, 32), F16))
    np.testing.assert_array_equal(got, x.T)


# ------------------------------------------------------------------------------------------ element access
def copy_first_to_second(x: pl.Tensor[[16, 32], pl.DT_FP16]):
    ring = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP16, pl.MemorySpace.Vec), addrs=0, mutex_ids=[1])
    with pl.section_vector():
        t = ring[0]
        pl.load(t, x, [0, 0])
        first = t[0, 0]
        t[0, 1] = first
        t[2, 5] = t[1, 4]
        pl.store(x, t, [0, 0])


def test_tile_element_read_and_write(backend):
    x = steps((16, 32), 3, 0.5, np.float16)
    got = run_on(copy_first_to_second, backend, x)[0]
    want = x.copy()
    want[0, 1], want[2, 5] = x[0, 0], x[1, 4]
    np.testing.assert_array_equal(got, want)


def tensor_elements(v: pl.Tensor[[3], pl.DT_FP32]):
    v[2] = v[0]
    v[0] = v[1]


def test_gm_tensor_element_read_and_write(backend):
    got = run_on(tensor_elements, backend, np.array([1.25, -9.0, 4.0], np.float32))[0]
    np.testing.assert_array_equal(got, np.array([-9.0, -9.0, 1.25], np.float32))


# ------------------------------------------------------------------------------------------ valid windows
def window_of_a_tile(x: pl.Tensor[[32, 64], pl.DT_FP32], r: pl.DT_INT64, c: pl.DT_INT64,
                     y: pl.Tensor[[32, 64], pl.DT_FP32]):
    ring = pl.make_tile_group(type=pl.TileType([32, 64], pl.DT_FP32, pl.MemorySpace.Vec, valid_shape=[-1, -1]),
                              addrs=0x400, mutex_ids=[2])
    with pl.section_vector():
        t = ring.current()
        pl.set_validshape(t, [r, c])
        pl.load(t, x, [0, 0])
        pl.store(y, t, [0, 0])


def window_of_a_group(x: pl.Tensor[[48, 64], pl.DT_FP16], r: pl.DT_INT64, c: pl.DT_INT64,
                      y: pl.Tensor[[48, 64], pl.DT_FP16]):
    ring = pl.make_tile_group(type=pl.TileType([48, 64], pl.DT_FP16, valid_shape=[-1, -1]), addrs=0, mutex_ids=[0])
    pl.set_validshape(ring, [r, c])  # outside the section: applies to the group's tiles
    with pl.section_vector():
        t = ring.current()
        pl.load(t, x, [0, 0])
        pl.store(y, t, [0, 0])


@pytest.mark.cpu_sample
@pytest.mark.parametrize("on_group", [False, True], ids=["tile", "group"])
@pytest.mark.parametrize("r,c", [(1, 16), (19, 40), (32, 64)])
def test_set_validshape_limits_load_and_store(backend, on_group, r, c):
    fn, rows, dtype = (window_of_a_group, 48, np.float16) if on_group else (window_of_a_tile, 32, np.float32)
    x = steps((rows, 64), -3, 0.25, dtype)
    y = run_on(fn, backend, x, r, c, np.full((rows, 64), 5, dtype))[3]
    want = np.full((rows, 64), 5, dtype)
    want[:r, :c] = x[:r, :c]
    np.testing.assert_array_equal(y, want)


# ------------------------------------------------------------------------------------------ scalar min / max
def scalar_extremes(out: pl.Tensor[[1, 8], pl.DT_FP32], a: pl.DT_INT64, b: pl.DT_INT64, k: pl.DT_INT64):
    ring = pl.make_tile_group(type=pl.TileType([1, 8], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0])
    with pl.section_vector():
        t = ring[0]
        low = pl.min(a + 1, 50)
        high = pl.max(2, b - k)
        pl.expands(t, -1.0)
        t[0, 0] = low
        t[0, 1] = high
        t[0, 2] = max(low, high)
        t[0, 3] = min(low, high)
        t[0, 4] = pl.max(pl.const(-0.5, pl.DT_FP32), pl.const(0.75, pl.DT_FP32))
        t[0, 5] = pl.min(pl.const(-0.5, pl.DT_FP32), pl.const(0.75, pl.DT_FP32))
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("a,b,k", [(90, 3, 7), (10, 60, 1)])
def test_scalar_min_and_max(backend, a, b, k):
    out = run_on(scalar_extremes, backend, poison((1, 8), np.float32), a, b, k)[0][0]
    low, high = min(a + 1, 50), max(2, b - k)
    np.testing.assert_array_equal(out, [low, high, max(low, high), min(low, high), 0.75, -0.5, -1, -1])


# ------------------------------------------------------------------------------------------ gather / gathermask / scatter
def _gather(d, s, t):
    pl.gather(d, s[0], s[1], t[0])


def _gather_shifted(d, s, t):
    pl.gather(d, s[0], s[1], t[0], offset=24)


def test_gather_reads_the_flat_source(backend):
    """out[r, c] = src_flat[idx[r, c]]: here every element comes from another row, columns reversed."""
    src = steps((16, 64), -20, 0.125, np.float16)
    r, c = np.indices((16, 64))
    idx = (((r + 5) % 16) * 64 + 63 - c).astype(np.int32)
    got = vec_run(backend, _gather, [src, idx], Vec(src.shape, F16), scratch=[Vec(src.shape, I32)])
    np.testing.assert_array_equal(got, src.reshape(-1)[idx])


def test_gather_offset_and_an_index_past_the_source(backend):
    src = steps((8, 32), 1, 1.0)
    idx = np.random.default_rng(9).integers(0, 256 - 24, (8, 32)).astype(np.int32)
    got = vec_run(backend, _gather_shifted, [src, idx], Vec(src.shape, F32), scratch=[Vec(src.shape, I32)])
    np.testing.assert_array_equal(got, src.reshape(-1)[idx + 24])
    idx[6, 2] = 256 - 24
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.gather: index 256 at \(6, 2\) is outside src's 8x32"):
        vec_run(backend, _gather_shifted, [src, idx], Vec(src.shape, F32), scratch=[Vec(src.shape, I32)])


def _pattern(mode):
    def step(d, s, t):
        pl.gathermask(d, s[0], pattern_mode=mode)
    return step


PATTERNS = {1: np.s_[:, 0::2], 2: np.s_[:, 1::2], 3: np.s_[:, 0::4], 4: np.s_[:, 1::4], 5: np.s_[:, 2::4],
            6: np.s_[:, 3::4], 7: np.s_[:, :]}
PATTERN_STEPS = {m: _pattern(m) for m in PATTERNS}


PATTERN_CASES = [(m, np.int32) for m in sorted(PATTERNS)] + [(1, np.float16), (7, np.float16)]


@pytest.mark.parametrize("mode,dtype", PATTERN_CASES, ids=[f"{m}-{np.dtype(d).name}" for m, d in PATTERN_CASES])
def test_gathermask_pattern_modes(backend, mode, dtype):
    src = (np.arange(16 * 128).reshape(16, 128) % 2000 - 999).astype(dtype)
    want = src[PATTERNS[mode]]
    pl_dtype = F16 if dtype == np.float16 else I32
    got = vec_run(backend, PATTERN_STEPS[mode], [src], Vec(want.shape, pl_dtype))
    np.testing.assert_array_equal(got, want)


def _scatter(d, s, t):
    pl.scatter(d, s[0], s[1])


def test_scatter_permutes_into_the_flat_destination(backend):
    src = steps((16, 64), 7, 0.5)
    perm = np.random.default_rng(4).permutation(16 * 64).astype(np.int32).reshape(16, 64)
    out = np.zeros((16, 64), np.float32)  # every element is written; the zeros only give the tile its start
    got = vec_run(backend, _scatter, [src, perm], out)
    want = np.empty(16 * 64, np.float32)
    want[perm.reshape(-1)] = src.reshape(-1)
    np.testing.assert_array_equal(got, want.reshape(16, 64))


def test_scatter_keeps_the_rest_and_the_last_of_duplicates(backend):
    src = (np.arange(48).reshape(3, 16) * 7 - 100).astype(np.int16)
    idx = np.random.default_rng(8).integers(0, 96, (3, 16)).astype(np.int16)
    idx[2, 9] = idx[0, 4]  # written twice: the later one in row-major order stays
    start = np.full((6, 16), 321, np.int16)
    got = vec_run(backend, _scatter, [src, idx], start)
    want = start.reshape(-1).copy()
    for k, v in zip(idx.reshape(-1), src.reshape(-1)):
        want[k] = v
    np.testing.assert_array_equal(got, want.reshape(6, 16))
    idx[1, 1] = 96
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.scatter: index 96 at \(1, 1\) is outside dst's 6x16"):
        vec_run(backend, _scatter, [src, idx], start)
