"""Transfers into another core's memory (Vec -> Mat insert/move, Acc -> Vec move) whose destination is a slot
of a tile group picked by a runtime index: the index is a scalar of the core that issues the transfer, so a
variable that only the sending section assigns selects the slot (docs/language.md, "Cross-core transfers")."""
import numpy as np
import pytest

import pypto_pro.language as pl

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")
MAT, LEFT, RIGHT, ACC = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc
P = pl.PipeType


def order(first, then):
    """Inlined: later ``then`` work waits for earlier ``first`` work (flag 0)."""
    pl.system.sync_src(set_pipe=first, wait_pipe=then, event_id=0)
    pl.system.sync_dst(set_pipe=first, wait_pipe=then, event_id=0)


def vec_to_mat_slot(x: pl.Tensor[[32, 32], pl.DT_FP16], eye: pl.Tensor[[32, 32], pl.DT_FP16],
                    out: pl.Tensor[[32, 32], pl.DT_FP32], seed: int):
    """Each AIV inserts its 16 rows (times 3) into the Mat slot ``(seed + 1) % 2`` that only it computes; the
    cube computes the same slot itself and multiplies it by the identity."""
    mats = pl.make_tile_group(type=pl.TileType([32, 32], pl.DT_FP16, MAT), addrs=[0, 0x800], depth=2)
    e1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0x1000)
    with pl.section_vector():
        sub = pl.get_subblock_idx()
        v = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16), addr=0)
        vnz = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, layout=pl.NZ), addr=0x1000)
        pick = (seed + 1) % 2
        pl.load(v, x, [16 * sub, 0])
        order(P.MTE2, P.V)
        pl.mul(v, v, 3.0)
        pl.move(vnz, v)
        order(P.V, P.MTE3)
        pl.insert(mats[pick], vnz, [16 * sub, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
    with pl.section_cube():
        a0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, LEFT), addr=0)
        e0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, RIGHT), addr=0)
        acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, ACC), addr=0)
        mine = (seed + 1) % 2
        pl.load(e1, eye, [0, 0])
        order(P.MTE2, P.MTE1)
        pl.move(e0, e1)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=1)
        pl.move(a0, mats[mine])
        order(P.MTE1, P.M)
        pl.matmul(acc, a0, e0)
        order(P.M, P.FIX)
        pl.store(out, acc, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_insert_into_a_slot_chosen_by_the_vector_core(backend, seed):
    x = (np.arange(32 * 32).reshape(32, 32) % 61 - 30).astype(np.float16) / 8
    out = np.full((32, 32), np.nan, np.float32)
    pl.jit(backend=backend)(vec_to_mat_slot)(x, np.eye(32, dtype=np.float16), out, seed)
    assert out.tolist() == (3 * x.astype(np.float32)).tolist()


def acc_to_vec_slot(a: pl.Tensor[[32, 32], pl.DT_FP16], eye: pl.Tensor[[32, 32], pl.DT_FP16],
                    out: pl.Tensor[[32, 32], pl.DT_FP32], seed: int):
    """The cube moves A @ I into AIV0's UB slot ``seed % 3`` that only it computes; AIV0 stores the slot it
    computes itself; the other slots stay as AIV0 filled them."""
    vecs = pl.make_tile_group(type=pl.TileType([32, 32], pl.DT_FP32), addrs=[0, 0x1000, 0x2000], depth=3)
    with pl.section_cube():
        a1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0)
        e1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, MAT), addr=0x1000)
        a0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, LEFT), addr=0)
        e0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, RIGHT), addr=0)
        acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, ACC), addr=0)
        slot = seed % 3
        pl.load(a1, a, [0, 0])
        pl.load(e1, eye, [0, 0])
        order(P.MTE2, P.MTE1)
        pl.move(a0, a1)
        pl.move(e0, e1)
        order(P.MTE1, P.M)
        pl.matmul(acc, a0, e0)
        order(P.M, P.FIX)
        pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=2)
        pl.move(vecs[slot], acc)
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=3)
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            for k in range(3):
                pl.expands(vecs[k], -1.0)
        pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=2)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=3)
        if pl.get_subblock_idx() == 0:
            pl.store(out, vecs[seed % 3], [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 4, 5])
def test_acc_to_vec_move_into_a_slot_chosen_by_the_cube(backend, seed):
    a = (np.arange(32 * 32).reshape(32, 32) % 37 - 18).astype(np.float16) / 4
    out = np.full((32, 32), np.nan, np.float32)
    pl.jit(backend=backend)(acc_to_vec_slot)(a, np.eye(32, dtype=np.float16), out, seed)
    assert out.tolist() == a.astype(np.float32).tolist()
