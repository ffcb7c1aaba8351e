"""A name bound to a tile in only one branch of a runtime ``if`` (and to another tile before it) is merged
into "the tile of the branch taken" only where the code after the ``if`` reads the name: a merge that
nothing reads would make the other branch read the old tile's slot index, which that core may never have
set (a tile-group slot taken in the other section), and the interpreter and the simulator refuse such a
read.  Where the name is read after the ``if``, the branch taken decides the tile."""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend, run_on  # noqa: F401

pytestmark = EVERY_BACKEND
ROW = pl.TileType([1, 8], pl.DT_INT32)


def rebound_only_inside_branch(out: pl.Tensor[[8], pl.DT_INT32], n: int):
    """``t`` first names a slot the cube section takes, then, on the AIV, a slot taken under ``if i > 0``;
    nothing reads ``t`` after that ``if``."""
    ring = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0, 1])
    other = pl.make_tile_group(type=ROW, addrs=0x100, mutex_ids=[2, 3])
    with pl.section_cube():
        t = other.next()
    with pl.section_vector():
        for i in pl.range(n):
            if i > 0:
                t = ring.next()
                pl.expands(t, i * 10)
                out[i] = t[0, 0]


def test_unread_branch_binding_reads_no_foreign_slot_index(backend):
    out, _ = run_on(rebound_only_inside_branch, backend, np.full(8, -1, np.int32), 5)
    assert out.tolist() == [-1, 10, 20, 30, 40, -1, -1, -1]


def branch_chooses_tile(out: pl.Tensor[[2, 8], pl.DT_INT32], flag: int):
    """``t`` is ``a`` unless the branch rebinds it to ``b``; it is read after the ``if``."""
    a = pl.make_tile(ROW, addr=0x0)
    b = pl.make_tile(ROW, addr=0x100)
    with pl.section_vector():
        pl.expands(a, 1)
        pl.expands(b, 2)
        t = a
        if flag > 0:
            t = b
        pl.adds(t, t, 40)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, a, [0, 0])
        pl.store(out, b, [1, 0])


@pytest.mark.parametrize("flag, expected", [(0, [41, 2]), (1, [1, 42])])
def test_name_read_after_if_is_the_taken_branchs_tile(backend, flag, expected):
    out, _ = run_on(branch_chooses_tile, backend, np.zeros((2, 8), np.int32), flag)
    assert out[:, 0].tolist() == expected and (out == out[:, :1]).all()
