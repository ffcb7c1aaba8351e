"""A move reads only the source bytes it copies, so the simulator does not report the rest as uninitialised.

A square ZN Mat tile moved into a Left tile with its valid shape given in the NZ frame (flash attention's
P matrix) copies the NZ-frame window; here the AIVs insert exactly that window (K rows of the NZ frame) and
the rest of the tile is never written.  The move used to read the declared-frame window as well.
"""
import numpy as np

import pypto_pro.language as pl

S, HALF, K = 32, 16, 16
MAT, VEC, LEFT, RIGHT, ACC = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
F16, F32 = pl.DT_FP16, pl.DT_FP32


@pl.jit(backend="sim", auto_mutex=True)
def partial_zn_into_left(d: pl.Tensor[[S, S], F16], eye: pl.Tensor[[S, S], F16], out: pl.Tensor[[S, S], F32]):
    mats = pl.make_tile_group(type=pl.TileType(shape=[S, S], dtype=F16, target_memory=MAT, layout=pl.ZN,
                                               valid_shape=[-1, -1]), addrs=0x10000, mutex_ids=[0])
    with pl.section_vector():
        off = pl.get_subblock_idx() * HALF
        nd = pl.make_tile_group(type=pl.TileType(shape=[S, HALF], dtype=F16, target_memory=VEC), addrs=0x0,
                                mutex_ids=[1])
        nz = pl.make_tile_group(type=pl.TileType(shape=[S, HALF], dtype=F16, target_memory=VEC, layout=pl.NZ,
                                                 valid_shape=[-1, -1]), addrs=0x4000, mutex_ids=[2])
        target = mats.next()
        pl.load(nd[0], d, [0, off])
        pl.set_validshape(nz[0], [S, HALF])
        pl.move(nz[0], nd[0])
        pl.set_validshape(nz[0], [K, HALF])  # only the K rows of the NZ frame go into the Mat tile
        pl.insert(target, nz[0], [0, off])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=3)

    with pl.section_cube():
        e1 = pl.make_tile(pl.TileType(shape=[S, S], dtype=F16, target_memory=MAT), addr=0x0)
        left = pl.make_tile(pl.TileType(shape=[S, S], dtype=F16, target_memory=LEFT, layout=pl.NZ,
                                        valid_shape=[-1, -1]), addr=0x0)
        right = pl.make_tile(pl.TileType(shape=[S, S], dtype=F16, target_memory=RIGHT, valid_shape=[-1, -1]),
                             addr=0x0)
        acc = pl.make_tile(pl.TileType(shape=[S, S], dtype=F32, target_memory=ACC), addr=0x0)
        source = mats.next()
        pl.load(e1, eye, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.set_validshape(right, [K, S])
        pl.move(right, e1)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=3, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
        pl.set_validshape(source, [K, S])  # NZ frame: the K written rows
        pl.set_validshape(left, [S, K])
        pl.move(left, source)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, left, right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(out, acc, [0, 0])


def test_a_nz_frame_move_reads_only_the_window_it_copies():
    rng = np.random.default_rng(5)
    d = rng.integers(-8, 9, (S, S)).astype(np.float16)
    out = np.zeros((S, S), np.float32)
    partial_zn_into_left(d, np.eye(S, dtype=np.float16), out)  # sim: no uninitialised read
    expected = d.T.astype(np.float32)[:, :K].copy()
    np.testing.assert_array_equal(out[:, :K], expected)
