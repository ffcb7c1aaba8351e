"""Inserting NZ Vec blocks into Mat tiles: offsets and bounds in the NZ frame of a ZN destination.

A ZN ``[R, C]`` Mat tile holds the bytes of an NZ ``[C, R]`` one; an NZ block inserted into it lands
transposed, and its ``[row, col]`` offset and the bounds check are in that NZ ``[C, R]`` frame
(move.md: ZN/NZ pairs compare transposed shapes).  Each AIV of the block inserts its half; the cube
then moves the Mat tile to Left and multiplies by the identity, so the stored product shows the
Mat tile's logical contents.  Tile-group slots chosen on the AIV are resolved with the AIV's cursor
even though the Mat tile belongs to the cube core.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError

BACKENDS = ["interp", "cpu", "sim"]
R, C = 32, 64  # the ZN Mat tile [R, C]; its NZ frame is [C, R]
HALF = R // 2
MAT, VEC, LEFT, RIGHT, ACC = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
F16, F32 = pl.DT_FP16, pl.DT_FP32


def transpose_insert_kernel(backend: str, how: str, depth: int = 1, col_step: int = HALF):
    """out[R, C] = (d^T) @ I, where each AIV inserts d[:, off:off + HALF] (an NZ [C, HALF] block) at
    [0, off] of a ZN [R, C] Mat tile; ``how`` is "insert" or "move" (a move with an offset inserts)."""

    @pl.jit(backend=backend)
    def zn_insert(d: pl.Tensor[[C, R], F16], eye: pl.Tensor[[C, C], F16], out: pl.Tensor[[R, C], F32]):
        mats = pl.make_tile_group(type=pl.TileType(shape=[R, C], dtype=F16, target_memory=MAT, layout=pl.ZN),
                                  addrs=0x10000, mutex_ids=list(range(depth)))
        with pl.section_vector():
            off = pl.get_subblock_idx() * col_step
            nd = pl.make_tile(pl.TileType(shape=[C, HALF], dtype=F16, target_memory=VEC), addr=0x0)
            nz = pl.make_tile(pl.TileType(shape=[C, HALF], dtype=F16, target_memory=VEC, layout=pl.NZ), addr=0x4000)
            target = mats.next()
            if depth > 1:
                target = mats.next()  # the AIV's cursor picks slot 1; the cube core's has not moved
            pl.load(nd, d, [0, pl.get_subblock_idx() * HALF])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.move(nz, nd)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            if how == "insert":
                pl.insert(target, nz, [0, off])
            else:
                pl.move(target, nz, [0, off])
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=3)

        with pl.section_cube():
            e1 = pl.make_tile(pl.TileType(shape=[C, C], dtype=F16, target_memory=MAT), addr=0x0)
            left = pl.make_tile(pl.TileType(shape=[R, C], dtype=F16, target_memory=LEFT), addr=0x0)
            right = pl.make_tile(pl.TileType(shape=[C, C], dtype=F16, target_memory=RIGHT), addr=0x0)
            acc = pl.make_tile(pl.TileType(shape=[R, C], dtype=F32, target_memory=ACC), addr=0x0)
            source = mats.next()
            if depth > 1:
                source = mats.next()
            pl.load(e1, eye, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
            pl.move(right, e1)
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=3, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
            pl.move(left, source)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
            pl.matmul(acc, left, right)
            pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
            pl.store(out, acc, [0, 0])

    return zn_insert


def _inputs():
    rng = np.random.default_rng(5)
    d = rng.integers(-8, 9, (C, R)).astype(np.float16)
    return d, np.eye(C, dtype=np.float16), np.zeros((R, C), np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["insert", "move"])
def test_nz_block_lands_transposed_at_an_nz_frame_offset(backend, how):
    d, eye, out = _inputs()
    transpose_insert_kernel(backend, how)(d, eye, out)
    np.testing.assert_array_equal(out, d.T.astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_slot_chosen_by_the_inserting_core(backend):
    d, eye, out = _inputs()
    transpose_insert_kernel(backend, "insert", depth=2)(d, eye, out)
    np.testing.assert_array_equal(out, d.T.astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["insert", "move"])
def test_block_past_the_nz_frame_is_out_of_bounds(backend, how):
    d, eye, out = _inputs()
    # AIV1 inserts its [64, 16] block at column 24 of the [64, 32] NZ frame: columns 24..40
    with pytest.raises(KernelRuntimeError, match=r"insert at \[0, 24\] of a 64x16 block leaves .* \[64, 32\]"):
        transpose_insert_kernel(backend, how, col_step=24)(d, eye, out)
