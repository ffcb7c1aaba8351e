"""On-chip FP4 tiles hold two elements per byte (element offset o: the low nibble of byte o // 2 when o is
even, the high one when odd), so a UINT8 tile of half the columns at the same address sees exactly the
packed bytes: the MXFP4 quant path casts into FP4, moves the bytes as UINT8 and reads them back as FP4.

Expectations are numpy: E2M1 / E1M2 codes from the formats' fields, packed low nibble first.  Run on the
interpreter and the simulator (which must report no hazard); the cpu backend has no 4-bit tile type and
names the feature when asked for explicitly.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl

R, C = 16, 64
VEC = pl.MemorySpace.Vec


def e2m1_codes(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)


def pack(codes: np.ndarray) -> np.ndarray:
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def _cast_then_bytes(fp4, backend: str):
    """x (FP32) -cast-> FP4 tile; the UINT8 alias of its bytes is stored, and also read back as FP4 -> FP32."""
    @pl.jit(backend=backend)
    def fp4_bytes(x: pl.Tensor[[R, C], pl.DT_FP32], raw: pl.Tensor[[R, C // 2], pl.DT_UINT8],
                  back: pl.Tensor[[R, C], pl.DT_FP32], inj: pl.Tensor[[R, C // 2], pl.DT_UINT8],
                  dec: pl.Tensor[[R, C], pl.DT_FP32]):
        xf = pl.make_tile(pl.TileType([R, C], pl.DT_FP32, target_memory=VEC), addr=0x0)
        q = pl.make_tile(pl.TileType([R, C], fp4, target_memory=VEC), addr=0x2000)
        b = pl.make_tile(pl.TileType([R, C // 2], pl.DT_UINT8, target_memory=VEC), addr=0x2000)
        y = pl.make_tile(pl.TileType([R, C], pl.DT_FP32, target_memory=VEC), addr=0x4000)
        with pl.section_vector():  # (each step waits for the one before: bar_all)
            pl.load(xf, x, [0, 0])
            pl.system.bar_all()
            pl.cast(q, xf, mode=pl.RoundMode.CAST_RINT)
            pl.system.bar_all()
            pl.store(raw, b, [0, 0])
            pl.cast(y, q, mode=pl.RoundMode.CAST_RINT)
            pl.system.bar_all()
            pl.store(back, y, [0, 0])
            pl.system.bar_all()
            pl.load(b, inj, [0, 0])  # bytes in through the UINT8 alias, values out through the FP4 tile
            pl.system.bar_all()
            pl.cast(y, q, mode=pl.RoundMode.CAST_RINT)
            pl.system.bar_all()
            pl.store(dec, y, [0, 0])
    return fp4_bytes


@pytest.mark.parametrize("backend", ["interp", "sim"])
@pytest.mark.parametrize("fmt", ["e2m1", "e1m2"])
def test_fp4_tile_bytes_are_packed_low_nibble_first(backend, fmt):
    rng = np.random.default_rng(4)
    fp4 = pl.DT_FP4E2M1 if fmt == "e2m1" else pl.DT_FP4E1M2
    grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6]) if fmt == "e2m1" else np.arange(8) / 4
    codes = rng.integers(0, 16, (R, C)).astype(np.uint8)
    values = np.where(codes & 8, -grid[codes & 7], grid[codes & 7]).astype(np.float32)
    values[codes == 8] = 0.0  # -0 and +0 both encode to code 0 or 8; use +0 for an exact expectation
    codes[codes == 8] = 0
    inj_codes = rng.integers(0, 16, (R, C)).astype(np.uint8)
    raw, back = np.zeros((R, C // 2), np.uint8), np.zeros((R, C), np.float32)
    dec = np.zeros((R, C), np.float32)
    kernel = _cast_then_bytes(fp4, backend)
    kernel(values, raw, back, pack(inj_codes), dec)
    assert np.array_equal(raw, pack(codes))
    assert np.array_equal(back, values)
    want = np.where(inj_codes & 8, -grid[inj_codes & 7], grid[inj_codes & 7]).astype(np.float32)
    assert np.array_equal(dec, want)


def test_cpu_names_packed_fp4_tiles():
    with pytest.raises(NotImplementedError, match="FP4E2M1"):
        _cast_then_bytes(pl.DT_FP4E2M1, "cpu")(np.zeros((R, C), np.float32), np.zeros((R, C // 2), np.uint8),
                                                np.zeros((R, C), np.float32), np.zeros((R, C // 2), np.uint8),
                                                np.zeros((R, C), np.float32))
