"""Tile footprints and group slots (ir/layout.py): slots of a group are ``prod(shape) x element
bytes`` apart, and a tile spans exactly that when its layout pads nothing: NZ column panels and ZN
row panels are as tall / wide as the tile, E8M0 scales in ZZ / NN use 32-byte (16 x 2 / 2 x 16)
fractals.  Checked on the layout function and end to end: a group of small bias-like NZ tiles
rotates through slots 256 bytes apart without corrupting each other, on every backend.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import dtypes as dt
from pypto_pro.ir.layout import element_offsets, footprint_elems, fractal_bytes
from pypto_pro.ir.types import Layout

pytestmark = [pytest.mark.usefixtures("private_build_dir")]


@pytest.mark.parametrize("rows,cols,layout,eb,expect", [
    (1, 128, Layout.NZ, 2, 128),       # a [1, 128] FP16 NZ bias: one row of 8 panels
    (8, 32, Layout.NZ, 2, 256),
    (16, 8, Layout.NZ, 2, 256),        # the 32-byte run pads 8 -> 16 columns
    (128, 1, Layout.ZN, 2, 128),       # ZN is the transpose of NZ
    (8, 32, Layout.ZZ, 2, 512),        # ZZ pads whole 16-row blocks
    (64, 64, Layout.NZ, 4, 64 * 64),
])
def test_footprint(rows, cols, layout, eb, expect):
    assert footprint_elems(rows, cols, layout, eb) == expect


def test_nz_offsets_are_column_panels_of_the_tile_height():
    off = element_offsets(3, 32, Layout.NZ, 2)
    # panel p holds columns [16p, 16p+16) as 3 rows of 16 contiguous elements
    assert off[0, 0] == 0 and off[0, 15] == 15 and off[1, 0] == 16 and off[2, 15] == 47
    assert off[0, 16] == 48 and off[2, 31] == 95
    assert sorted(off.ravel()) == list(range(96))


def test_nz_and_zn_of_transposed_shapes_share_bytes():
    for rows, cols in [(3, 32), (24, 48), (1, 128)]:
        nz = element_offsets(rows, cols, Layout.NZ, 2)
        zn = element_offsets(cols, rows, Layout.ZN, 2)
        assert np.array_equal(nz, zn.T)


def test_e8m0_scale_fractals_are_32_bytes():
    e8m0 = dt.DT_FP8E8M0
    assert fractal_bytes(e8m0, Layout.ZZ) == 32 and fractal_bytes(e8m0, Layout.NZ) == 0
    assert fractal_bytes(dt.DT_UINT8, Layout.ZZ) == 0
    assert footprint_elems(64, 2, Layout.ZZ, 1, fractal=32) == 128
    assert footprint_elems(2, 64, Layout.NN, 1, fractal=32) == 128
    zz = element_offsets(32, 2, Layout.ZZ, 1, fractal=32)
    assert list(zz[:2].ravel()) == [0, 1, 2, 3] and zz[16, 0] == 32  # 16 x 2 blocks, row-major
    nn = element_offsets(2, 32, Layout.NN, 1, fractal=32)
    assert list(nn[:, 0]) == [0, 1] and nn[0, 1] == 2 and nn[0, 16] == 32  # 2 x 16 blocks, column-major


N = 128


def _bias_rows_kernel(backend):
    """Loads two [1, N] FP16 rows into both slots of a NZ Mat group (slots 256 bytes apart) before
    using either, then per slot: Mat -> Bias (FP32) and ``zeros @ zeros + bias`` -> out rows."""
    @pl.jit(backend=backend, auto_mutex=True)
    def bias_rows(rows: pl.Tensor[[2, N], pl.DT_FP16], zeros: pl.Tensor[[16, N], pl.DT_FP16],
                  out: pl.Tensor[[32, N], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType(shape=[1, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
                               addrs=0x8000, mutex_ids=[0, 1])
        za = pl.make_tile_group(type=pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0, mutex_ids=[2])[0]
        zb = pl.make_tile_group(type=pl.TileType([16, N], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x1000,
                                mutex_ids=[3])[0]
        left = pl.make_tile_group(type=pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Left), addrs=0,
                                  mutex_ids=[4])[0]
        right = pl.make_tile_group(type=pl.TileType([16, N], pl.DT_FP16, pl.MemorySpace.Right), addrs=0,
                                   mutex_ids=[5])[0]
        bias = pl.make_tile_group(type=pl.TileType([1, N], pl.DT_FP32, pl.MemorySpace.Bias), addrs=0,
                                  mutex_ids=[6])[0]
        acc = pl.make_tile_group(type=pl.TileType([16, N], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0,
                                 mutex_ids=[7])[0]
        with pl.section_cube():
            pl.load(za, zeros, [0, 0])
            pl.load(zb, zeros, [0, 0])
            pl.load(g[0], rows, [0, 0])
            pl.load(g[1], rows, [1, 0])
            pl.move(left, za)
            pl.move(right, zb)
            for i in pl.range(2):
                pl.move(bias, g[i])
                pl.matmul(acc, left, right, bias)
                pl.store(out, acc, [i * 16, 0])

    return bias_rows


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_small_nz_slots_256_bytes_apart_keep_their_data(backend):
    rng = np.random.default_rng(2)
    rows = rng.integers(-50, 50, (2, N)).astype(np.float16)
    out = np.full((32, N), np.nan, np.float32)
    kernel = _bias_rows_kernel(backend)
    kernel(rows, np.zeros((16, N), np.float16), out)
    want = np.repeat(rows.astype(np.float32), 16, axis=0)
    assert np.array_equal(out, want)
    if backend == "sim":
        assert not kernel.last_report.hazards
