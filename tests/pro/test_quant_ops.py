"""pl.quant / pl.dequant (src/pypto_pro/ops/quant.py): per-row INT8/UINT8 quantisation of FP32 tiles and
its inverse, on every backend, against numpy expectations written from the documented formulas."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError, KernelTypeError
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

R, C = 16, 64
VEC = pl.MemorySpace.Vec


def vec(shape, dtype):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=VEC)


def sym_kernel(x: pl.Tensor[[R, C], pl.DT_FP32], s: pl.Tensor[[R, 1], pl.DT_FP32], q: pl.Tensor[[R, C], pl.DT_INT8]):
    tx = pl.make_tile_group(type=vec([R, C], pl.DT_FP32), addrs=0x0, mutex_ids=[0])
    ts = pl.make_tile_group(type=vec([R, 1], pl.DT_FP32), addrs=0x1000, mutex_ids=[1])
    tq = pl.make_tile_group(type=vec([R, C], pl.DT_INT8), addrs=0x1400, mutex_ids=[2])
    with pl.section_vector():
        a, b, o = tx.current(), ts.current(), tq.current()
        pl.load(a, x, [0, 0])
        pl.load(b, s, [0, 0])
        pl.quant(o, a, b)
        pl.store(q, o, [0, 0])


def asym_kernel(x: pl.Tensor[[R, C], pl.DT_FP32], s: pl.Tensor[[R, 8], pl.DT_FP32],
                z: pl.Tensor[[R, 1], pl.DT_FP32], q: pl.Tensor[[R, C], pl.DT_UINT8]):
    # the scale tile is [R, 8]: only its column 0 is a parameter
    tx = pl.make_tile_group(type=vec([R, C], pl.DT_FP32), addrs=0x0, mutex_ids=[0])
    ts = pl.make_tile_group(type=vec([R, 8], pl.DT_FP32), addrs=0x1000, mutex_ids=[1])
    tz = pl.make_tile_group(type=vec([R, 1], pl.DT_FP32), addrs=0x1400, mutex_ids=[2])
    tq = pl.make_tile_group(type=vec([R, C], pl.DT_UINT8), addrs=0x1800, mutex_ids=[3])
    with pl.section_vector():
        a, b, c, o = tx.current(), ts.current(), tz.current(), tq.current()
        pl.load(a, x, [0, 0])
        pl.load(b, s, [0, 0])
        pl.load(c, z, [0, 0])
        pl.quant(o, a, b, mode=pl.QuantMode.ASYM, offset=c)
        pl.store(q, o, [0, 0])


def dequant_kernel_of(src_dtype):
    def dequant_kernel(q: pl.Tensor[[R, C], src_dtype], s: pl.Tensor[[R, 1], pl.DT_FP32],
                       z: pl.Tensor[[R, 1], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32]):
        tq = pl.make_tile_group(type=vec([R, C], src_dtype), addrs=0x0, mutex_ids=[0])
        ts = pl.make_tile_group(type=vec([R, 1], pl.DT_FP32), addrs=0x800, mutex_ids=[1])
        tz = pl.make_tile_group(type=vec([R, 1], pl.DT_FP32), addrs=0xC00, mutex_ids=[2])
        ty = pl.make_tile_group(type=vec([R, C], pl.DT_FP32), addrs=0x1000, mutex_ids=[3])
        with pl.section_vector():
            a, b, c, o = tq.current(), ts.current(), tz.current(), ty.current()
            pl.load(a, q, [0, 0])
            pl.load(b, s, [0, 0])
            pl.load(c, z, [0, 0])
            pl.dequant(o, a, b, c)
            pl.store(y, o, [0, 0])
    return dequant_kernel


def expect_quant(x, scale, lo, hi, offset=None):
    q = np.rint((x * scale).astype(np.float32))
    if offset is not None:
        q = np.rint((q + offset).astype(np.float32))
    return np.where(np.isnan(q), 0, np.clip(q, lo, hi))


def special_rows(rng):
    x = (rng.standard_normal((R, C)) * 40).astype(np.float32)
    x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.5]  # ties go to even (scale 1 in row 0)
    x[1, :4] = [np.nan, np.inf, -np.inf, 1e30]                   # NaN -> 0, saturation
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_symmetric_quant_rounds_half_to_even_and_saturates(backend):
    rng = np.random.default_rng(1)
    x = special_rows(rng)
    s = (rng.random((R, 1)) * 4 + 0.01).astype(np.float32)
    s[0:2] = 1.0
    q = np.zeros((R, C), np.int8)
    pl.jit(sym_kernel, backend=backend)(x, s, q)
    want = expect_quant(x, s, -128, 127)
    assert list(q[0, :8]) == [0, 2, 2, 0, -2, -2, 126, -128]
    assert list(q[1, :4]) == [0, 127, -128, 127]
    np.testing.assert_array_equal(q, want.astype(np.int8))


@pytest.mark.parametrize("backend", BACKENDS)
def test_asymmetric_quant_adds_the_zero_point_after_rounding(backend):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((R, C)) * 30).astype(np.float32)
    s = np.full((R, 8), np.nan, np.float32)  # columns past 0 are never read
    s[:, 0] = rng.random(R) * 3 + 0.1
    z = rng.integers(0, 256, (R, 1)).astype(np.float32)
    z[3, 0] = 100.5  # a fractional zero point: the sum is rounded again (half to even)
    x[3, :2] = [0.0, 1.0 / s[3, 0]]
    q = np.zeros((R, C), np.uint8)
    pl.jit(asym_kernel, backend=backend)(x, s, z, q)
    want = expect_quant(x, s[:, :1], 0, 255, z)
    np.testing.assert_array_equal(q, want.astype(np.uint8))
    assert q[3, 0] == 100  # rint(0) + 100.5 = 100.5 -> 100


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src_dtype,np_dtype", [(pl.DT_INT8, np.int8), (pl.DT_INT16, np.int16)])
def test_dequant_subtracts_then_scales(backend, src_dtype, np_dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(np_dtype)
    q = rng.integers(info.min, info.max + 1, (R, C)).astype(np_dtype)
    s = (rng.random((R, 1)) * 0.1).astype(np.float32)
    z = rng.standard_normal((R, 1)).astype(np.float32)
    y = np.zeros((R, C), np.float32)
    pl.jit(dequant_kernel_of(src_dtype), backend=backend)(q, s, z, y)
    np.testing.assert_array_equal(y, ((q.astype(np.float32) - z).astype(np.float32) * s).astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_quant_then_dequant_round_trips_within_half_a_step(backend):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((R, C)) * 3).astype(np.float32)
    step = (np.abs(x).max(axis=1, keepdims=True) / 127).astype(np.float32)
    q = np.zeros((R, C), np.int8)
    pl.jit(sym_kernel, backend=backend)(x, (1 / step).astype(np.float32), q)
    y = np.zeros((R, C), np.float32)
    pl.jit(dequant_kernel_of(pl.DT_INT8), backend=backend)(q, step, np.zeros((R, 1), np.float32), y)
    assert np.all(np.abs(y - x) <= step * 0.5 + 1e-6)


_SYM = {}


def _sym(backend):
    if backend not in _SYM:
        _SYM[backend] = pl.jit(sym_kernel, backend=backend)
    return _SYM[backend]


@pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")
@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.floats(1e-3, 1e3))
def test_cpu_is_bit_identical_to_the_interpreter(seed, magnitude):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((R, C)) * magnitude).astype(np.float32)
    s = (rng.random((R, 1)) * 2).astype(np.float32)
    got = {}
    for backend in ("interp", "cpu"):
        q = np.zeros((R, C), np.int8)
        _sym(backend)(x, s, q)
        got[backend] = q
    np.testing.assert_array_equal(got["cpu"], got["interp"])
    np.testing.assert_array_equal(got["cpu"], expect_quant(x, s, -128, 127).astype(np.int8))


# ------------------------------------------------------------------------------------------- errors
def asym_without_offset(x: pl.Tensor[[R, C], pl.DT_FP32]):
    a = pl.make_tile(vec([R, C], pl.DT_FP32), addr=0)
    s = pl.make_tile(vec([R, 1], pl.DT_FP32), addr=0x1000)
    o = pl.make_tile(vec([R, C], pl.DT_UINT8), addr=0x1400)
    with pl.section_vector():
        pl.quant(o, a, s, mode=pl.QuantMode.ASYM)


def sym_into_uint8(x: pl.Tensor[[R, C], pl.DT_FP32]):
    a = pl.make_tile(vec([R, C], pl.DT_FP32), addr=0)
    s = pl.make_tile(vec([R, 1], pl.DT_FP32), addr=0x1000)
    o = pl.make_tile(vec([R, C], pl.DT_UINT8), addr=0x1400)
    with pl.section_vector():
        pl.quant(o, a, s)


def short_scale(x: pl.Tensor[[R, C], pl.DT_FP32]):
    a = pl.make_tile(vec([R, C], pl.DT_INT8), addr=0)
    s = pl.make_tile(vec([R // 2, 1], pl.DT_FP32), addr=0x1000)
    o = pl.make_tile(vec([R, C], pl.DT_FP32), addr=0x1400)
    with pl.section_vector():
        pl.dequant(o, a, s, s)


@pytest.mark.parametrize("kernel,message", [
    (asym_without_offset, r"ASYM needs the zero-point tile"),
    (sym_into_uint8, r"'out' must be INT8 in SYM mode"),
    (short_scale, r"'scale' has 8 rows but 'out' has 16"),
])
def test_misuse_is_a_kernel_type_error(kernel, message):
    with pytest.raises(KernelTypeError, match=message):
        pl.jit(kernel, backend="interp")(np.zeros((R, C), np.float32))


def scale_rows_from_valid_window(x: pl.Tensor[[R, C], pl.DT_FP32], q: pl.Tensor[[R, C], pl.DT_INT8],
                                 n: pl.DT_INT32):
    # dst's valid window is 16 rows; a scale subview of n rows (known at run time only) cannot supply them
    a = pl.make_tile(vec([R, C], pl.DT_FP32), addr=0)
    s = pl.make_tile(vec([R, 1], pl.DT_FP32), addr=0x1000)
    o = pl.make_tile(vec([R, C], pl.DT_INT8), addr=0x1400)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.expands(s, 1.0)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.quant(o, a, s[0:n, 0:1])


@pytest.mark.parametrize("backend", ["interp", pytest.param("cpu", marks=pytest.mark.skipif(
    not cpu.available(), reason="no C++ compiler"))])
def test_a_scale_with_too_few_rows_is_a_runtime_error(backend):
    with pytest.raises(KernelRuntimeError, match=r"fewer rows than the destination's valid window"):
        pl.jit(scale_rows_from_valid_window, backend=backend)(np.zeros((R, C), np.float32), np.zeros((R, C), np.int8),
                                                             4)
