"""A tile chosen at run time among whole tiles (docs/language.md, "Structs and tuples" and "return"): a
tuple of tiles at a runtime index, a conditional expression between tiles, a name bound to different tiles
by the branches of a runtime ``if``.  Under auto_mutex the chosen tile's mutex ids are locked, so the
simulator sees no race."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelSyntaxError

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")


def choices(x: pl.Tensor[[8, 64], pl.DT_FP32], y: pl.Tensor[[8, 64], pl.DT_FP32],
            z: pl.Tensor[[3, 8, 64], pl.DT_FP32], which: int):
    tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ga = pl.make_tile_group(type=tt, addrs=[0x0, 0x800], mutex_ids=[0, 1])
    gb = pl.make_tile_group(type=tt, addrs=[0x1000], mutex_ids=[2])
    out_grp = pl.make_tile_group(type=tt, addrs=[0x2000], mutex_ids=[3])
    with pl.section_vector():
        a = ga[1]
        b = gb.next()
        c = out_grp[0]
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        by_index = (b, a)[which]                    # a tuple at a runtime index
        pl.add(c, by_index, by_index)
        pl.store(z, c, [0, 0, 0])
        by_cond = a if which == 1 else b            # a conditional expression
        pl.mul(c, by_cond, by_cond)
        pl.store(z, c, [1, 0, 0])
        picked = b                                  # different tiles from the two branches
        if which == 0:
            picked = a
        pl.sub(c, picked, by_index)
        pl.store(z, c, [2, 0, 0])


CHOICES = {b: pl.jit(backend=b)(choices) for b in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", [0, 1])
def test_tiles_chosen_at_run_time(backend, which):
    x = np.linspace(-3, 3, 8 * 64, dtype=np.float32).reshape(8, 64)
    y = np.cos(x).astype(np.float32)
    z = np.zeros((3, 8, 64), np.float32)
    CHOICES[backend](x, y, z, which)
    by_index = (y, x)[which]
    by_cond = x if which == 1 else y
    picked = x if which == 0 else y
    assert z[0].tolist() == (by_index + by_index).tolist()
    assert z[1].tolist() == (by_cond * by_cond).tolist()
    assert z[2].tolist() == (picked - by_index).tolist()


def mismatched(x: pl.Tensor[[8, 64], pl.DT_FP32], which: int):
    t1 = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    t2 = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile(t1, addr=0x0)
    b = pl.make_tile(t2, addr=0x1000)
    with pl.section_vector():
        c = a if which == 0 else b
        pl.load(c, x, [0, 0])


def test_tiles_of_different_types_cannot_be_chosen_at_run_time():
    with pytest.raises(KernelSyntaxError, match="choose between scalars or between whole tiles of one type"):
        pl.jit(backend="interp")(mismatched)(np.zeros((8, 64), np.float32), 0)
