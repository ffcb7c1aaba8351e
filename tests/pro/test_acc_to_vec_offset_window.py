"""Acc -> Vec moves with an offset, on interp, cpu and sim, with our own kernels.

The moved window is ``[offset, offset + dst valid)`` (move.md), ``dst valid`` being the valid shape the AIC
holds for the Vec tile.  On the AIC that shape names the whole window before a dual mode splits it between
the AIVs, so it may be up to twice the tile on each axis.  The window must lie in the Acc's declared shape
and may reach past the Acc's valid window (bytes the matmul wrote are moved as they are).

Inputs are small integers, so every product and partial sum is exact in fp32; results compare exactly.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend, poison, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F16, F32 = pl.DT_FP16, pl.DT_FP32
S = pl.MemorySpace
P = pl.PipeType
M, K, N = 64, 32, 128


def ints(shape, seed):
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float16)


def product(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def _cube_product(a, b):
    """a @ b into an [M, N] accumulator (inlined into the kernels below)."""
    a1 = pl.make_tile(pl.TileType([M, K], F16, S.Mat), addr=0x0, size=M * K * 2)
    b1 = pl.make_tile(pl.TileType([K, N], F16, S.Mat), addr=0x8000, size=K * N * 2)
    a0 = pl.make_tile(pl.TileType([M, K], F16, S.Left), addr=0x0, size=M * K * 2)
    b0 = pl.make_tile(pl.TileType([K, N], F16, S.Right), addr=0x0, size=K * N * 2)
    acc = pl.make_tile(pl.TileType([M, N], F32, S.Acc), addr=0x0, size=M * N * 4)
    pl.load(a1, a, [0, 0])
    pl.load(b1, b, [0, 0])
    pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
    pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
    pl.move(a0, a1)
    pl.move(b0, b1)
    pl.system.sync_src(set_pipe=P.MTE1, wait_pipe=P.M, event_id=1)
    pl.system.sync_dst(set_pipe=P.MTE1, wait_pipe=P.M, event_id=1)
    pl.matmul(acc, a0, b0)
    pl.system.sync_src(set_pipe=P.M, wait_pipe=P.FIX, event_id=2)
    pl.system.sync_dst(set_pipe=P.M, wait_pipe=P.FIX, event_id=2)
    return acc


def halves_by_rows(a: pl.Tensor[[M, K], F16], b: pl.Tensor[[K, N], F16], out: pl.Tensor[[M, N], F32]):
    """Both column halves of the product, each split by rows between the AIVs; the second half is moved
    with offset [0, 64] while the Acc's valid window is only its first 64 columns."""
    lo = pl.make_tile(pl.TileType([M // 2, N], F32, S.Vec), addr=0x0, size=M // 2 * N * 4)
    hi = pl.make_tile(pl.TileType([M // 2, N], F32, S.Vec), addr=0x10000, size=M // 2 * N * 4)
    with pl.section_cube():
        acc = _cube_product(a, b)
        pl.set_validshape(acc, [M, N // 2])
        pl.set_validshape(lo, [M, N // 2])   # on the AIC: the whole window, twice the tile's rows
        pl.move(lo, acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
        pl.set_validshape(hi, [M, N // 2])
        pl.move(hi, acc, [0, N // 2], acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
        pl.system.set_cross_core(pipe=P.FIX, event_id=3)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=P.MTE3, event_id=3)
        top = pl.get_subblock_idx() * (M // 2)
        pl.set_validshape(lo, [M // 2, N // 2])  # each AIV's share
        pl.set_validshape(hi, [M // 2, N // 2])
        pl.store(out, lo, [top, 0])
        pl.store(out, hi, [top, N // 2])


def test_dual_split_window_at_an_offset_past_the_acc_valid_columns(backend):
    a, b = ints((M, K), 1), ints((K, N), 2)
    out = run_on(halves_by_rows, backend, a, b, poison((M, N), np.float32))[2]
    np.testing.assert_array_equal(out, product(a, b))


def block_of_product(a: pl.Tensor[[M, K], F16], b: pl.Tensor[[K, N], F16], out: pl.Tensor[[M, N], F32],
                     r: pl.DT_INT64, c: pl.DT_INT64, rows: pl.DT_INT64, cols: pl.DT_INT64):
    """The [rows, cols] block of the product at [r, c], moved to AIV0 and stored at out[0:rows, 0:cols]."""
    v = pl.make_tile(pl.TileType([M, N], F32, S.Vec), addr=0x0, size=M * N * 4)
    with pl.section_cube():
        acc = _cube_product(a, b)
        pl.set_validshape(v, [rows, cols])
        pl.move(v, acc, [r, c], acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)  # block move
        pl.system.set_cross_core(pipe=P.FIX, event_id=3)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=P.MTE3, event_id=3)
        if pl.get_subblock_idx() == 0:
            pl.set_validshape(v, [rows, cols])
            pl.store(out, v, [0, 0])


@pytest.mark.parametrize("r, c, rows, cols", [(16, 32, 16, 32), (0, 0, M, N), (48, 96, 16, 32), (8, 16, 40, 96)])
def test_single_mode_window_is_offset_plus_the_aic_valid_shape(backend, r, c, rows, cols):
    a, b = ints((M, K), 3), ints((K, N), 4)
    out = run_on(block_of_product, backend, a, b, poison((M, N), np.float32), r, c, rows, cols)[2]
    np.testing.assert_array_equal(out[:rows, :cols], product(a, b)[r:r + rows, c:c + cols])


def test_window_leaving_the_acc_is_refused_with_its_extent(backend):
    a, b = ints((M, K), 5), ints((K, N), 6)
    with pytest.raises(pl.KernelRuntimeError) as e:
        run_on(block_of_product, backend, a, b, poison((M, N), np.float32), 32, 0, 40, N)
    text = str(e.value)
    assert ("move window [32:72, 0:128] (offset + the valid shape of v on the AIC) leaves accumulator acc of "
            "shape [64, 128]") in text, text
    assert "# block move" in text


def too_wide(a: pl.Tensor[[M, K], F16], b: pl.Tensor[[K, N], F16], out: pl.Tensor[[M, N], F32],
             rows: pl.DT_INT64):
    v = pl.make_tile(pl.TileType([M // 2, N], F32, S.Vec), addr=0x0, size=M // 2 * N * 4)
    with pl.section_cube():
        pl.set_validshape(v, [rows, N])  # AIC-side window
    with pl.section_vector():
        pl.set_validshape(v, [rows, N])  # AIV-side valid shape
        pl.expands(v, 0.0)
        pl.store(out, v, [0, 0])


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_aic_vec_window_is_bounded_by_twice_the_tile_and_an_aiv_by_the_tile(backend, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", backend)
    a, b = ints((M, K), 7), ints((K, N), 8)
    with pytest.raises(pl.KernelRuntimeError, match=r"valid shape \[65, 128\] is outside tile v of shape \[32, 128\] "
                                                    r"\(on the AIC a Vec tile's window may be up to twice its shape\)"):
        run_on(too_wide, backend, a, b, poison((M, N), np.float32), 65)
    with pytest.raises(pl.KernelRuntimeError, match=r"valid shape \[64, 128\] is outside tile v of shape \[32, 128\]"
                                                    r" \(on block 0 AIV"):
        run_on(too_wide, backend, a, b, poison((M, N), np.float32), 64)
