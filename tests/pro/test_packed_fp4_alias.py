"""A Vec tile of a 4-bit float type may not share bytes with a tile of another element type.

On the NPU such an alias reinterprets packed FP4 bytes (two elements per byte); here on-chip FP4 tiles
take one byte per element, so the alias is refused at declaration with a NotImplementedError naming
packed FP4 on-chip storage, instead of moving other bytes than the NPU would.  Separate addresses,
and FP4 tiles aliasing each other, stay accepted.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

VEC = pl.MemorySpace.Vec


def _kernel(fp4_addr: int, raw_dtype, raw_addr: int):
    def reinterpret(x: pl.Tensor[[32, 64], pl.DT_FP32]):
        with pl.section_vector():
            pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP4E2M1, target_memory=VEC), addr=fp4_addr)
            raw = pl.make_tile(pl.TileType(shape=[32, 32] if raw_dtype != pl.DT_FP32 else [32, 64], dtype=raw_dtype, target_memory=VEC), addr=raw_addr)
            pl.load(raw, x, [0, 0])
    return reinterpret


@pytest.mark.parametrize("raw_dtype", [pl.DT_UINT8, pl.DT_FP8E4M3FN])
def test_fp4_tile_aliased_as_bytes_is_not_implemented(raw_dtype):
    kernel = pl.jit(_kernel(0x1000, raw_dtype, 0x1000), backend="interp")
    with pytest.raises(NotImplementedError, match="packed FP4 on-chip storage is not implemented"):
        kernel(np.zeros((32, 64), np.float32))


def test_fp4_and_byte_tiles_apart_are_accepted():
    kernel = pl.jit(_kernel(0x0, pl.DT_FP32, 0x4000), backend="interp")
    x = np.zeros((32, 64), np.float32)
    kernel(x)
