"""A tile's valid shape may be empty (0 rows or 0 columns): accesses through it move nothing.

A dual-split Acc -> Vec move of a tail of at most 16 columns gives AIV1 a share of nothing, and kernels
set AIV1's valid shape to ``[rows, 0]`` and still issue the store (at the column just past the tail).
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError

from .on_every_backend import EVERY_BACKEND, backend, run_on  # noqa: F401

pytestmark = EVERY_BACKEND

R, C = 8, 32


def store_first_cols(x: pl.Tensor[[R, C], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32], n: pl.DT_INT32):
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                                         valid_shape=[-1, -1]), addr=0x0)
            pl.set_validshape(t, [R, n])
            pl.load(t, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(y, t, [0, C - n])


@pytest.mark.parametrize("n", [0, 5])
def test_an_empty_valid_window_moves_nothing(backend, n):
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    y = run_on(store_first_cols, backend, x, np.full((R, C), -1, np.float32), n)[1]
    want = np.full((R, C), -1, np.float32)
    want[:, C - n:] = x[:, :n]
    np.testing.assert_array_equal(y, want)


def test_a_negative_valid_shape_is_still_an_error(backend):
    x = np.zeros((R, C), np.float32)
    with pytest.raises(KernelRuntimeError, match=r"valid shape \[8, -1\] is outside"):
        run_on(store_first_cols, backend, x, x.copy(), -1)
