"""A square ZN Mat tile's valid shape given in its NZ frame when it is moved into a Left tile.

A ZN ``[S, S]`` Mat tile holds the bytes of an NZ ``[S, S]`` one seen transposed (move.md compares ZN/NZ
pairs with transposed shapes).  Kernels that fill it by inserting NZ blocks (flash attention's P matrix,
kv rows by sq columns) set its valid shape in that NZ frame, ``[k, m]``, and the Left destination's as
``[m, k]``: the move then carries the destination's ``[m, k]`` window.  Here each AIV inserts half of ``d``
(an NZ ``[S, S/2]`` block), the cube keeps only ``K`` of the contraction axis and multiplies by the
identity, so the stored product is ``d^T`` with the columns from ``K`` on zero.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend  # noqa: F401

pytestmark = EVERY_BACKEND

S, HALF, K = 32, 16, 24
MAT, VEC, LEFT, RIGHT, ACC = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
F16, F32 = pl.DT_FP16, pl.DT_FP32


@pl.jit
def zn_square_partial_k(d: pl.Tensor[[S, S], F16], eye: pl.Tensor[[S, S], F16], out: pl.Tensor[[S, S], F32]):
    mats = pl.make_tile_group(type=pl.TileType(shape=[S, S], dtype=F16, target_memory=MAT, layout=pl.ZN,
                                               valid_shape=[-1, -1]), addrs=0x10000, mutex_ids=[0])
    with pl.section_vector():
        off = pl.get_subblock_idx() * HALF
        nd = pl.make_tile(pl.TileType(shape=[S, HALF], dtype=F16, target_memory=VEC), addr=0x0)
        nz = pl.make_tile(pl.TileType(shape=[S, HALF], dtype=F16, target_memory=VEC, layout=pl.NZ), addr=0x4000)
        target = mats.next()
        pl.load(nd, d, [0, off])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.move(nz, nd)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.insert(target, nz, [0, off])
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
        pl.set_validshape(right, [S, S])
        pl.move(right, e1)
        pl.set_validshape(right, [K, S])
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=3, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
        pl.set_validshape(source, [K, S])  # the NZ frame: K contraction rows by S output rows
        pl.set_validshape(left, [S, K])
        pl.move(left, source)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, left, right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(out, acc, [0, 0])


def test_square_zn_valid_in_nz_frame_selects_the_left_window(backend):
    rng = np.random.default_rng(11)
    d = rng.integers(-8, 9, (S, S)).astype(np.float16)
    out = np.zeros((S, S), np.float32)
    zn_square_partial_k(d, np.eye(S, dtype=np.float16), out)
    expected = d.T.astype(np.float32).copy()
    expected[:, K:] = 0
    np.testing.assert_array_equal(out, expected)
