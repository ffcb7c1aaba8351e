"""Low-precision formats: the HF8 / FP4 E1M2 codecs, HF8 tensors carried as uint8 codes through the
cube path (load, move, matmul, fixpipe store into HF8), and pl.cast to/from the 8/4-bit floats.

Expectations are numpy: the HF8 value of a code is derived here from the format's field table, and
the nearest-value rounding is checked against a brute-force search over all 256 codes.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import dtypes as dt
from pypto_pro import lowprec
from pypto_pro.ir.types import RoundMode
from pypto_pro.ops.casting import cast_values

pytestmark = [pytest.mark.usefixtures("private_build_dir")]
BACKENDS = ["interp", "cpu", "sim"]


# --------------------------------------------------------------------------- HF8 codec
@pytest.mark.parametrize("code,value", [
    (0x00, 0.0), (0x01, 2.0 ** -22), (0x07, 2.0 ** -16), (0x08, 1.0), (0x0F, 1.875),
    (0x10, 2.0), (0x18, 0.5), (0x20, 4.0), (0x28, 8.0), (0x30, 0.25), (0x38, 0.125),
    (0x40, 16.0), (0x4C, 128.0), (0x50, 2.0 ** -4), (0x5F, 1.75 * 2.0 ** -7),
    (0x60, 256.0), (0x6E, 2.0 ** 15), (0x6D, 1.5 * 2.0 ** 14), (0x70, 2.0 ** -8), (0x7F, 1.5 * 2.0 ** -15),
    (0x88, -1.0), (0xEE, -(2.0 ** 15)),
])
def test_hf8_decodes_field_table(code, value):
    assert lowprec.hf8_decode(np.uint8(code)) == np.float32(value)


def test_hf8_special_codes():
    assert np.isnan(lowprec.hf8_decode(np.uint8(0x80)))
    assert lowprec.hf8_decode(np.uint8(0x6F)) == np.inf
    assert lowprec.hf8_decode(np.uint8(0xEF)) == -np.inf
    finite = np.isfinite(lowprec.HF8_VALUES)
    assert finite.sum() == 253 and np.nanmax(np.abs(lowprec.HF8_VALUES[finite])) == 32768.0


def _brute_force_hf8(x: float) -> int:
    if np.isnan(x):
        return 0x80
    x = float(np.clip(x, -32768.0, 32768.0))
    best = None
    for code in range(256):
        v = lowprec.HF8_VALUES[code]
        if not np.isfinite(v) or (v == 0 and code != 0):
            continue
        key = (abs(v - x), -abs(v))  # nearest, then the larger magnitude (ties away from zero)
        if best is None or key < best[0]:
            best = (key, code)
    return best[1]


def test_hf8_encode_matches_brute_force_nearest_ties_away():
    rng = np.random.default_rng(3)
    grid = np.sort(lowprec.HF8_VALUES[np.isfinite(lowprec.HF8_VALUES)])
    mids = (grid[1:] + grid[:-1]) / 2
    xs = np.concatenate([rng.standard_normal(400) * 10.0 ** rng.integers(-7, 5, 400), mids, -mids,
                         [np.inf, -np.inf, np.nan, -0.0, 1e-30, -1e-30, 4e4, -4e4]]).astype(np.float32)
    got = lowprec.hf8_encode(xs)
    want = np.array([_brute_force_hf8(float(x)) for x in xs], dtype=np.uint8)
    assert np.array_equal(got, want)


def test_hf8_round_trips_every_finite_code():
    codes = np.arange(256, dtype=np.uint8)
    keep = np.isfinite(lowprec.HF8_VALUES)
    assert np.array_equal(lowprec.hf8_encode(lowprec.hf8_decode(codes[keep])), codes[keep])


def test_e1m2_codec():
    codes = np.arange(16, dtype=np.uint8)
    values = lowprec.e1m2_decode(codes)
    assert list(values[:8]) == [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    assert np.array_equal(values[9:], -values[1:8])
    assert list(lowprec.e1m2_encode(np.float32([0.125, 0.375, 9.0, -9.0, -0.3]))) == [0, 2, 7, 15, 9]


def test_fp4_pack_unpack():
    codes = np.arange(24, dtype=np.uint8).reshape(2, 12) % 16
    packed = lowprec.pack_fp4(codes)
    assert packed.shape == (2, 6) and packed[0, 0] == (codes[0, 0] | codes[0, 1] << 4)
    assert np.array_equal(lowprec.unpack_fp4(packed, 12), codes)


# --------------------------------------------------------------------------- casts
@pytest.mark.parametrize("dtype", [dt.DT_FP8E4M3FN, dt.DT_FP8E5M2, dt.DT_FP4E2M1])
def test_cast_to_ml_dtypes_formats_matches_rne_in_range(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(500) * 3).astype(np.float32)
    limit = float(ml_dtypes.finfo(dtype.np_dtype).max)
    x = x[np.abs(x) < limit]
    got = cast_values(x, dt.DT_FP32, dtype, RoundMode.CAST_RINT)
    assert np.array_equal(got.astype(np.float32), x.astype(dtype.np_dtype).astype(np.float32))


def test_cast_saturates_and_rounds_by_mode():
    e4m3 = dt.DT_FP8E4M3FN
    out = cast_values(np.float32([1000.0, -1000.0, 1.0625, 1.0625, 1.0625]), dt.DT_FP32, e4m3,
                      RoundMode.CAST_RINT).astype(np.float32)
    assert list(out[:3]) == [448.0, -448.0, 1.0]
    assert cast_values(np.float32([1.0625]), dt.DT_FP32, e4m3, RoundMode.CAST_ROUND).astype(np.float32)[0] == 1.125
    assert cast_values(np.float32([1.1]), dt.DT_FP32, e4m3, RoundMode.CAST_FLOOR).astype(np.float32)[0] == 1.0
    assert cast_values(np.float32([-1.1]), dt.DT_FP32, e4m3, RoundMode.CAST_TRUNC).astype(np.float32)[0] == -1.0
    hf8 = cast_values(np.float32([3.0e5, 1.0625]), dt.DT_FP32, dt.DT_HF8, RoundMode.CAST_RINT)
    assert list(dt.DT_HF8.decode(hf8)) == [32768.0, 1.125]


# --------------------------------------------------------------------------- HF8 through the cube path
T = 32


def _hf8_matmul_kernel(out_dtype, backend):
    @pl.jit(backend=backend, auto_mutex=True)
    def hf8_mm(a: pl.Tensor[[T, T], pl.DT_HF8], b: pl.Tensor[[T, T], pl.DT_HF8], out: pl.Tensor[[T, T], out_dtype]):
        a1 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_HF8, target_memory=pl.MemorySpace.Mat),
                                addrs=0, mutex_ids=[0])
        b1 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_HF8, target_memory=pl.MemorySpace.Mat),
                                addrs=0x4000, mutex_ids=[1])
        a0 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_HF8, target_memory=pl.MemorySpace.Left),
                                addrs=0, mutex_ids=[2])
        b0 = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_HF8, target_memory=pl.MemorySpace.Right),
                                addrs=0, mutex_ids=[3])
        c = pl.make_tile_group(type=pl.TileType(shape=[T, T], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
                               addrs=0, mutex_ids=[4])
        with pl.section_cube():
            ta, tb, la, rb, acc = a1.next(), b1.next(), a0.next(), b0.next(), c.next()
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.move(la, ta)
            pl.move(rb, tb)
            pl.matmul(acc, la, rb)
            pl.store(out, acc, [0, 0])

    return hf8_mm


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("out_name", ["FP32", "HF8"])
def test_hf8_matmul_from_uint8_codes(backend, out_name):
    rng = np.random.default_rng(11)
    # small integers: every product and sum is exact in FP32, so the expectation is exact
    a = lowprec.hf8_encode(rng.integers(-3, 4, (T, T)).astype(np.float32))
    b = lowprec.hf8_encode(rng.integers(-3, 4, (T, T)).astype(np.float32))
    exact = lowprec.hf8_decode(a).astype(np.float64) @ lowprec.hf8_decode(b).astype(np.float64)
    out = np.zeros((T, T), np.float32 if out_name == "FP32" else np.uint8)
    _hf8_matmul_kernel(dt.by_name(out_name), backend)(a, b, out)
    if out_name == "FP32":
        assert np.array_equal(out, exact.astype(np.float32))
    else:
        assert np.array_equal(out, lowprec.hf8_encode(exact.astype(np.float32)))


def test_hf8_argument_must_be_uint8_codes():
    kernel = _hf8_matmul_kernel(dt.DT_FP32, "interp")
    with pytest.raises(Exception, match="HF8"):
        kernel(np.zeros((T, T), np.float32), np.zeros((T, T), np.uint8), np.zeros((T, T), np.float32))
