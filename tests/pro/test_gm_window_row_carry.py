"""Tile rows that run past the end of their GM axis continue on the next index of the axis outside it.

GM is addressed by strides: a tile loaded with ``order=[2, 3]`` from a ``[B, S, H, D]`` tensor whose rows
outnumber ``H`` reads the heads of the following positions ``s`` (the axes are contiguous), as the
official lightning-indexer kernel does with ``[256, D]`` query tiles over 64 heads.  Stores write the same
way.  A window that runs past the tensor's last position is still an error.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError

from .on_every_backend import EVERY_BACKEND, backend, run_on  # noqa: F401

pytestmark = EVERY_BACKEND

B, S, H, D = 2, 4, 8, 16
ROWS = 2 * H  # two positions' heads per tile


def rows_over_heads(x: pl.Tensor[[B, S, H, D], pl.DT_FP32], y: pl.Tensor[[B, S, H, D], pl.DT_FP32],
                    s0: pl.DT_INT32):
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            t = pl.make_tile(pl.TileType(shape=[ROWS, D], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                             addr=0x0)
            pl.load(t, x, [1, s0, 0, 0], order=[2, 3])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(y, t, [0, s0 + 1, 0, 0], order=[2, 3])


def test_rows_past_the_head_axis_continue_on_the_next_positions(backend):
    x = np.arange(B * S * H * D, dtype=np.float32).reshape(B, S, H, D)
    y = np.zeros_like(x)
    y = run_on(rows_over_heads, backend, x, y, 1)[1]
    want = np.zeros_like(x)
    want[0, 2:4] = x[1, 1:3]
    np.testing.assert_array_equal(y, want)


def test_rows_past_the_last_position_are_still_an_error(backend):
    x = np.zeros((B, S, H, D), np.float32)
    with pytest.raises(KernelRuntimeError, match="outside tensor 'x'|exceeds tensor 'x'"):
        run_on(rows_over_heads, backend, x, np.zeros_like(x), 3)
