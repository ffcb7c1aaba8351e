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


def slot(shape, space, addr, mutex):
    """One FP16 tile with its own mutex id."""
    return pl.make_tile_group(type=pl.TileType(shape, F16, space), addrs=addr, mutex_ids=[mutex])[0]


@pl.jit(backend="sim", auto_mutex=True)
def extract_the_loaded_half(a: pl.Tensor[[32, 64], F16], b: pl.Tensor[[64, 32], F16], c: pl.Tensor[[32, 32], F32]):
    wide, b1 = slot([32, 128], MAT, 0x0, 0), slot([64, 32], MAT, 0x8000, 1)
    a0, b0 = slot([32, 64], LEFT, 0x0, 2), slot([64, 32], RIGHT, 0x0, 3)
    acc = pl.make_tile_group(type=pl.TileType([32, 32], F32, ACC), addrs=0x0, mutex_ids=[4])[0]
    with pl.section_cube():
        right_half = wide[:, 64:128]
        pl.load(right_half, a, [0, 0])  # columns 0..63 of the wide tile are never written
        pl.load(b1, b, [0, 0])
        pl.move(a0, wide, offset=[0, 64])
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.store(c, acc, [0, 0])


def test_an_extracting_move_reads_only_its_window():
    rng = np.random.default_rng(6)
    a = rng.integers(-4, 5, (32, 64)).astype(np.float16)
    b = rng.integers(-4, 5, (64, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    extract_the_loaded_half(a, b, c)  # sim: no uninitialised read of columns 0..63
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
