"""Data movement (docs/language.md "Semantics of ops"): load/store addressing, tails, subviews, aliasing, move paths,
insert, fillpad, bounds checks and zero-copy torch/numpy arguments."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError
from pypto_pro.ops.fp32math import matmul32

from .kernels import assert_bits_equal, run_matmul

FP32, FP16, BF16 = pl.DT_FP32, pl.DT_FP16, pl.DT_BF16
V, MAT, LEFT, RIGHT, ACC = (pl.MemorySpace.Vec, pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                            pl.MemorySpace.Acc)


def arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# load / store addressing
# ----------------------------------------------------------------------------------------------
@pl.jit
def copy_2d(x: pl.Tensor[[40, 96], pl.DT_FP32], out: pl.Tensor[[40, 96], pl.DT_FP32], r: int, c: int,
            orow: int, ocol: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [r, c])
        pl.store(out, t, [orow, ocol])


@pytest.mark.parametrize("r,c,orow,ocol", [(0, 0, 0, 0), (5, 7, 32, 64), (32, 64, 1, 3), (13, 0, 0, 33)])
def test_load_store_2d_offsets(r, c, orow, ocol):
    x = arange((40, 96))
    out = np.zeros_like(x)
    copy_2d(x, out, r, c, orow, ocol)
    want = np.zeros_like(x)
    want[orow:orow + 8, ocol:ocol + 32] = x[r:r + 8, c:c + 32]
    assert_bits_equal(out, want)


@pl.jit
def copy_3d(x: pl.Tensor[[3, 20, 64], pl.DT_FP16], out: pl.Tensor[[3, 20, 64], pl.DT_FP16], b: int, r: int,
            c: int):
    t = pl.make_tile(pl.TileType([4, 16], pl.DT_FP16), addr=0)
    with pl.section_vector():
        pl.load(t, x, [b, r, c])
        pl.store(out, t, [2 - b, r + 1, c])


def test_load_store_3d_pins_the_outer_axis():
    x = arange((3, 20, 64), np.float16)
    out = np.zeros_like(x)
    copy_3d(x, out, 1, 6, 40)
    want = np.zeros_like(x)
    want[1, 7:11, 40:56] = x[1, 6:10, 40:56]
    assert_bits_equal(out, want)
    out[:] = 0
    copy_3d(x, out, 0, 0, 0)
    want[:] = 0
    want[2, 1:5, 0:16] = x[0, 0:4, 0:16]
    assert_bits_equal(out, want)


@pl.jit
def order_3d(x: pl.Tensor[[16, 4, 32], pl.DT_FP32], out: pl.Tensor[[16, 32], pl.DT_FP32], mid: int):
    t = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, mid, 0], order=[0, 2])
        pl.store(out, t, [0, 0])


def test_load_order_maps_tile_rows_to_an_outer_axis():
    x = arange((16, 4, 32))
    out = np.zeros((16, 32), np.float32)
    order_3d(x, out, 2)
    assert_bits_equal(out, x[:, 2, :])


@pl.jit
def transposed_load(x: pl.Tensor[[64, 48], pl.DT_FP32], out: pl.Tensor[[16, 32], pl.DT_FP32], k0: int, m0: int):
    t = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [k0, m0], order=[1, 0])
        pl.store(out, t, [0, 0])


def test_transposed_load():
    """order=[1,0] on a 2-D [K,M] tensor into [M,K]: tile[m,k] = T[k0+k, m0+m]."""
    x = arange((64, 48))
    out = np.zeros((16, 32), np.float32)
    transposed_load(x, out, 8, 20)
    assert_bits_equal(out, x[8:40, 20:36].T)


@pl.jit
def copy_1d(x: pl.Tensor[[200], pl.DT_INT32], out: pl.Tensor[[200], pl.DT_INT32], o: int, n: int):
    t = pl.make_tile(pl.TileType([1, 64], pl.DT_INT32, valid_shape=[1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [1, n])
        pl.load(t, x, [o])
        pl.store(out, t, [o + 1])


def test_load_store_1d_tensor_into_a_row_tile():
    x = np.arange(200, dtype=np.int32)
    out = np.zeros_like(x)
    copy_1d(x, out, 100, 37)
    want = np.zeros_like(x)
    want[101:138] = x[100:137]
    assert_bits_equal(out, want)


@pl.jit
def tile_units(x: pl.Tensor[[32, 128], pl.DT_FP16], out: pl.Tensor[[32, 128], pl.DT_FP16], i: int, j: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP16, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [5, 20])  # offsets scale by the physical shape, not the valid one
        pl.load_tile(t, x, [i, j])
        pl.store_tile(out, t, [j, i])


def test_load_tile_store_tile_scale_by_the_physical_shape():
    x = arange((32, 128), np.float16)
    out = np.zeros_like(x)
    tile_units(x, out, 2, 3)
    want = np.zeros_like(x)
    want[24:29, 64:84] = x[16:21, 96:116]
    assert_bits_equal(out, want)


@pl.jit
def tile_units_3d(x: pl.Tensor[[2, 16, 64], pl.DT_FP32], out: pl.Tensor[[2, 16, 64], pl.DT_FP32], b: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load_tile(t, x, [b, 1, 1])
        pl.store_tile(out, t, [1 - b, 0, 1])


def test_load_tile_keeps_other_axes_absolute():
    x = arange((2, 16, 64))
    out = np.zeros_like(x)
    tile_units_3d(x, out, 1)
    want = np.zeros_like(x)
    want[0, 0:8, 32:64] = x[1, 8:16, 32:64]
    assert_bits_equal(out, want)


@pl.jit
def atomic_add(x: pl.Tensor[[64, 32], pl.DT_FP32], out: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(t, x, [b * 8, 0])
        pl.store(out, t, [0, 0], atomic=pl.AtomicType.AtomicAdd)
        pl.store(out, t, [0, 0], atomic=pl.AtomicType.AtomicAdd)


def test_atomic_add_accumulates_over_cores_into_initialised_output():
    x = arange((64, 32)) / 8
    out = np.full((8, 32), 100.0, np.float32)
    atomic_add[None, 8](x, out)
    assert_bits_equal(out, 100 + 2 * x.reshape(8, 8, 32).sum(0))


@pl.jit
def tails(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
    m = x.shape[0]
    n = x.shape[1]
    t = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        for i in pl.range(0, m, 16):
            for j in pl.range(0, n, 32):
                pl.set_validshape(t, [pl.min(m - i, 16), pl.min(n - j, 32)])
                pl.load(t, x, [i, j])
                pl.mul(t, t, 2.0)
                pl.store(out, t, [i, j])


@pytest.mark.parametrize("shape", [(37, 70), (16, 32), (1, 1), (17, 33)])
def test_tails_via_valid_windows(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.full(shape, np.nan, np.float32)
    tails(x, out)
    assert_bits_equal(out, 2 * x)


@pl.jit
def stale_outside_window(x: pl.Tensor[[8, 32], pl.DT_FP32], y: pl.Tensor[[8, 32], pl.DT_FP32],
                         out: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.set_validshape(t, [3, 5])
        pl.load(t, y, [0, 0])
        pl.set_validshape(t, [8, 32])
        pl.store(out, t, [0, 0])


def test_only_the_valid_window_moves():
    x, y = arange((8, 32)), -arange((8, 32))
    out = np.zeros_like(x)
    stale_outside_window(x, y, out)
    want = x.copy()
    want[:3, :5] = y[:3, :5]
    assert_bits_equal(out, want)


# ----------------------------------------------------------------------------------------------
# subviews and aliasing
# ----------------------------------------------------------------------------------------------
@pl.jit
def subviews(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[16, 64], pl.DT_FP32],
             part: pl.Tensor[[16, 64], pl.DT_FP32], r0: int, r1: int):
    t = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.mul(t[2:6, 8:24], t[2:6, 8:24], 10.0)
        pl.add(t[r0:r1, 32:], t[r0:r1, 32:], 1000.0)
        pl.store(out, t, [0, 0])
        pl.store(part, t[r0:r1, 8:40], [1, 2])


def test_subviews_share_the_parent_buffer():
    x = arange((16, 64))
    out, part = np.zeros_like(x), np.zeros_like(x)
    subviews(x, out, part, 3, 11)
    want = x.copy()
    want[2:6, 8:24] *= 10
    want[3:11, 32:] += 1000
    assert_bits_equal(out, want)
    wpart = np.zeros_like(x)
    wpart[1:9, 2:34] = want[3:11, 8:40]
    assert_bits_equal(part, wpart)


@pl.jit
def subview_window(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [10, 40])
        pl.load(t, x, [0, 0])
        pl.store(out, t[4:16, 30:64], [0, 0])


def test_subview_valid_window_intersects_the_parent():
    x = arange((16, 64))
    out = np.zeros_like(x)
    subview_window(x, out)
    want = np.zeros_like(x)
    want[:6, :10] = x[4:10, 30:40]
    assert_bits_equal(out, want)


@pl.jit
def dn_nd_alias(col: pl.Tensor[[32, 1], pl.DT_FP16], row: pl.Tensor[[1, 32], pl.DT_FP16]):
    dn = pl.make_tile(pl.TileType([32, 1], pl.DT_FP16, layout=pl.DN), addr=0x100)
    nd = pl.make_tile(pl.TileType([1, 32], pl.DT_FP16), addr=0x100)
    with pl.section_vector():
        pl.load(dn, col, [0, 0])
        pl.store(row, nd, [0, 0])


def test_dn_column_and_nd_row_at_one_address_alias():
    col = arange((32, 1), np.float16)
    row = np.zeros((1, 32), np.float16)
    dn_nd_alias(col, row)
    assert_bits_equal(row, col.T)


# ----------------------------------------------------------------------------------------------
# move paths
# ----------------------------------------------------------------------------------------------
@pl.jit
def vec_to_vec(x: pl.Tensor[[16, 32], pl.DT_FP32], out: pl.Tensor[[32, 16], pl.DT_FP32],
               part: pl.Tensor[[4, 8], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    b = pl.make_tile(pl.TileType([32, 16], pl.DT_FP32), addr=0x1000)
    c = pl.make_tile(pl.TileType([4, 8], pl.DT_FP32), addr=0x2000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.move(b, a)
        pl.move(c, a, [5, 20])
        pl.store(out, b, [0, 0])
        pl.store(part, c, [0, 0])


def test_vec_to_vec_move_transposes_swapped_shapes_and_extracts_with_offset():
    x = arange((16, 32))
    out, part = np.zeros((32, 16), np.float32), np.zeros((4, 8), np.float32)
    vec_to_vec(x, out, part)
    assert_bits_equal(out, x.T)
    assert_bits_equal(part, x[5:9, 20:28])


def test_mat_to_left_right_with_transposed_operand():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (32, 64)).astype(np.float16)
    bt = rng.integers(-4, 5, (48, 64)).astype(np.float16)
    c = run_matmul(a, bt, FP32, FP32, transposed_b=True)
    assert_bits_equal(c, a.astype(np.float32) @ bt.T.astype(np.float32))


def acc_to_vec_kernel(mode, out_dtype):
    """Cube: A @ B into Acc, move to the AIVs' UB with ``mode`` (fp32 -> out_dtype); each AIV stores what
    it received (its share of rows or columns) after a cross-core event."""
    M, K, N = 32, 32, 64
    share = {pl.AccToVecMode.DualModeSplitM: (M // 2, N), pl.AccToVecMode.DualModeSplitN: (M, N // 2)}.get(
        mode, (M, N))
    step = {pl.AccToVecMode.DualModeSplitM: (M // 2, 0), pl.AccToVecMode.DualModeSplitN: (0, N // 2)}.get(
        mode, (0, 0))
    receiver = 1 if mode == pl.AccToVecMode.SingleModeVec1 else 0
    both = mode in (pl.AccToVecMode.DualModeSplitM, pl.AccToVecMode.DualModeSplitN)

    @pl.jit
    def kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               c: pl.Tensor[[M, N], out_dtype]):
        a1 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, MAT), addr=0)
        b1 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, MAT), addr=0x10000)
        a0 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, LEFT), addr=0)
        b0 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, RIGHT), addr=0)
        acc = pl.make_tile(pl.TileType([M, N], pl.DT_FP32, ACC), addr=0)
        v = pl.make_tile(pl.TileType([M, N], out_dtype, V, valid_shape=[-1, -1]), addr=0)
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.move(v, acc, acc_to_vec_mode=mode)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=3)
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=3)
            pl.set_validshape(v, [share[0], share[1]])
            if both or sub == receiver:
                pl.store(c, v, [sub * step[0], sub * step[1]])

    return kernel


MODES = [pl.AccToVecMode.SingleModeVec0, pl.AccToVecMode.SingleModeVec1, pl.AccToVecMode.DualModeSplitM,
         pl.AccToVecMode.DualModeSplitN]


@pytest.mark.parametrize("out_dtype", [FP16, BF16, FP32], ids=["FP16", "BF16", "FP32"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_acc_to_vec_move_converts_and_splits(mode, out_dtype):
    rng = np.random.default_rng(int(mode))
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    npd = {FP16: np.float16, FP32: np.float32, BF16: __import__("ml_dtypes").bfloat16}[out_dtype]
    c = np.zeros((32, 64), npd)
    acc_to_vec_kernel(mode, out_dtype)(a, b, c)
    # every backend: the cube is one fp32 FMA chain over k per element (fp16 products are exact in fp32)
    acc = matmul32(a.astype(np.float32), b.astype(np.float32))
    assert_bits_equal(c, acc.astype(npd))


@pl.jit
def vec_to_mat(x: pl.Tensor[[32, 32], pl.DT_FP16], eye: pl.Tensor[[32, 32], pl.DT_FP16],
               c: pl.Tensor[[32, 32], pl.DT_FP32]):
    v = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16), addr=0)
    a1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0)
    e1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0x8000)
    a0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, LEFT), addr=0)
    e0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, RIGHT), addr=0)
    acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, ACC), addr=0)
    with pl.section_vector():
        pl.load(v, x, [0, 0])
        pl.mul(v, v, 2.0)
        pl.move(a1, v)
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
    with pl.section_cube():
        pl.load(e1, eye, [0, 0])
        pl.move(e0, e1)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=1)
        pl.move(a0, a1)
        pl.matmul(acc, a0, e0)
        pl.store(c, acc, [0, 0])


def test_vec_to_mat_move_reaches_the_cube_core():
    x = arange((32, 32), np.float16) / 64
    c = np.zeros((32, 32), np.float32)
    vec_to_mat(x, np.eye(32, dtype=np.float16), c)
    assert_bits_equal(c, 2 * x.astype(np.float32))


@pl.jit
def insert_kernel(x: pl.Tensor[[16, 32], pl.DT_FP16], eye: pl.Tensor[[64, 64], pl.DT_FP16],
                  c: pl.Tensor[[64, 64], pl.DT_FP32]):
    v = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16), addr=0)
    vnz = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, layout=pl.NZ), addr=0x1000)
    a1 = pl.make_tile(pl.TileType([64, 64], pl.DT_FP16, MAT), addr=0)
    e1 = pl.make_tile(pl.TileType([64, 64], pl.DT_FP16, MAT), addr=0x8000)
    a0 = pl.make_tile(pl.TileType([64, 64], pl.DT_FP16, LEFT), addr=0)
    e0 = pl.make_tile(pl.TileType([64, 64], pl.DT_FP16, RIGHT), addr=0)
    acc = pl.make_tile(pl.TileType([64, 64], pl.DT_FP32, ACC), addr=0)
    with pl.section_cube():
        pl.expands(a1, 0.0)
        pl.load(e1, eye, [0, 0])
        pl.move(e0, e1)
        pl.system.set_cross_core(pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=1)
        pl.move(a0, a1)
        pl.matmul(acc, a0, e0)
        pl.store(c, acc, [0, 0])
    with pl.section_vector():
        pl.load(v, x, [0, 0])
        pl.move(vnz, v)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
        pl.insert(a1, vnz, [16 * pl.get_subblock_idx() + 16, 32])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)


def test_insert_vec_nz_block_into_mat():
    x = arange((16, 32), np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    insert_kernel(x, np.eye(64, dtype=np.float16), c)
    want = np.zeros((64, 64), np.float32)
    want[16:32, 32:64] = x
    want[32:48, 32:64] = x
    assert_bits_equal(c, want)


@pl.jit
def mat_fillpad(a: pl.Tensor[[32, 32], pl.DT_FP16], eye: pl.Tensor[[32, 32], pl.DT_FP16],
                c: pl.Tensor[[32, 32], pl.DT_FP32]):
    raw = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT, valid_shape=[-1, -1]), addr=0)
    padded = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT, pad=pl.TilePad.zero), addr=0x4000)
    e1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0x8000)
    a0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, LEFT), addr=0)
    e0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, RIGHT), addr=0)
    acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, ACC), addr=0)
    with pl.section_cube():
        pl.set_validshape(raw, [5, 20])
        pl.load(raw, a, [0, 0])
        pl.fillpad(padded, raw)
        pl.load(e1, eye, [0, 0])
        pl.move(e0, e1)
        pl.move(a0, padded)
        pl.matmul(acc, a0, e0)
        pl.store(c, acc, [0, 0])


def test_fillpad_on_mat_zeroes_outside_the_window():
    a = arange((32, 32), np.float16)
    c = np.full((32, 32), np.nan, np.float32)
    mat_fillpad(a, np.eye(32, dtype=np.float16), c)
    want = np.zeros((32, 32), np.float32)
    want[:5, :20] = a[:5, :20]
    assert_bits_equal(c, want)


# ----------------------------------------------------------------------------------------------
# bounds checks
# ----------------------------------------------------------------------------------------------
@pl.jit
def oob(x: pl.Tensor[[20, 64], pl.DT_FP32], out: pl.Tensor[[20, 64], pl.DT_FP32], lr: int, lc: int, sr: int,
        sc: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [lr, lc])
        pl.store(out, t, [sr, sc])


@pytest.mark.parametrize("args,what", [((13, 0, 0, 0), "pl.load"), ((0, 40, 0, 0), "pl.load"),
                                       ((0, 0, 13, 0), "pl.store"), ((0, 0, 0, 33), "pl.store"),
                                       ((0, 0, -1, 0), "pl.store")])
def test_out_of_bounds_gm_access_raises_without_writing(args, what):
    x = arange((20, 64))
    out = np.full_like(x, 7.0)
    with pytest.raises(KernelRuntimeError) as e:
        oob(x, out, *args)
    assert what in str(e.value) and "test_movement.py" in str(e.value)
    assert_bits_equal(out, np.full_like(x, 7.0))


@pl.jit
def oob_pinned(x: pl.Tensor[[2, 8, 32], pl.DT_FP32], out: pl.Tensor[[8, 32], pl.DT_FP32], b: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [b, 0, 0])
        pl.store(out, t, [0, 0])


def test_out_of_bounds_pinned_axis_raises():
    with pytest.raises(KernelRuntimeError, match="axis 0"):
        oob_pinned(arange((2, 8, 32)), np.zeros((8, 32), np.float32), 2)


# ----------------------------------------------------------------------------------------------
# torch tensors: dtypes, strides, zero-copy
# ----------------------------------------------------------------------------------------------
@pl.jit
def scale_bf16(x: pl.Tensor[[16, 64], pl.DT_BF16], out: pl.Tensor[[16, 64], pl.DT_BF16]):
    t = pl.make_tile(pl.TileType([16, 64], pl.DT_BF16), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.mul(t, t, 3.0)
        pl.store(out, t, [0, 0])


def test_torch_bf16_tensors():
    x = torch.randn(16, 64).to(torch.bfloat16)
    out = torch.zeros(16, 64, dtype=torch.bfloat16)
    scale_bf16(x, out)
    assert torch.equal(out, (x.float() * 3).to(torch.bfloat16))


@pl.jit
def strided_copy(x: pl.Tensor[[16, 32], pl.DT_FP32], out: pl.Tensor[[16, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.add(t, t, 1.0)
        pl.store(out, t, [0, 0])


def test_torch_non_contiguous_views_are_read_and_written_in_place():
    base_in = torch.arange(32 * 16, dtype=torch.float32).reshape(32, 16)
    x = base_in.t()  # [16, 32], strides (1, 16)
    big = torch.zeros(16, 64)
    out = big[:, ::2]  # every other column: a strided view
    strided_copy(x, out)
    assert torch.equal(big[:, ::2], x + 1)
    assert torch.equal(big[:, 1::2], torch.zeros(16, 32))


def test_numpy_strided_output_is_written_in_place():
    x = arange((16, 32))
    big = np.zeros((32, 32), np.float32)
    strided_copy(x, big[::2])
    assert_bits_equal(big[::2], x + 1)
    assert_bits_equal(big[1::2], np.zeros((16, 32), np.float32))
