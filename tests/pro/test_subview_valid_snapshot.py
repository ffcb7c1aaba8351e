"""A subview bound to a name is a tile of its own: its valid window is fixed when it is made.

``part = tile[r0:r1, c0:c1]`` clamps the bounds to the tile's valid window *as it is then*; a later
``pl.set_validshape(tile, ...)`` changes the whole tile's window but not ``part``'s.  A subview written
inline in an op's arguments is made at that op, so it sees the window current there.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND

ROWS, COLS = 16, 32
VEC = pl.MemorySpace.Vec


def _sync(a, b, event):
    pl.system.sync_src(set_pipe=a, wait_pipe=b, event_id=event)
    pl.system.sync_dst(set_pipe=a, wait_pipe=b, event_id=event)


def named_right_half(src: pl.Tensor[[ROWS, COLS], pl.DT_FP32], out: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    """The right half is named while the tile is whole; narrowing the tile to its left half afterwards
    leaves the named half's window at [ROWS, COLS / 2], so all of it is loaded, doubled and stored."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=VEC), addr=0)
        right = t[:, COLS // 2:]
        pl.set_validshape(t, [ROWS, COLS // 2])
        pl.load(right, src, [0, COLS // 2])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.add(right, right, right)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, right, [0, COLS // 2])


def named_after_narrowing(src: pl.Tensor[[ROWS, COLS], pl.DT_FP32], out: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                          valid_rows: pl.Scalar[pl.DT_INT32]):
    """A subview named after a runtime set_validshape is clamped by it: only ``valid_rows`` rows move,
    even after the tile is made whole again."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=VEC), addr=0)
        pl.set_validshape(t, [valid_rows, COLS])
        top = t[0:ROWS, 0:COLS // 2]
        pl.set_validshape(t, [ROWS, COLS])
        pl.load(top, src, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.MTE3, 0)
        pl.store(out, top, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_named_subview_keeps_window_of_its_creation(backend):
    src = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    out = np.full((ROWS, COLS), -1.0, np.float32)
    _, got = run_on(named_right_half, backend, src, out)
    want = out.copy()
    want[:, COLS // 2:] = 2 * src[:, COLS // 2:]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("valid_rows", [3, ROWS])
def test_named_subview_clamped_by_window_current_at_creation(backend, valid_rows):
    src = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    out = np.full((ROWS, COLS), -1.0, np.float32)
    _, got, _ = run_on(named_after_narrowing, backend, src, out, valid_rows)
    want = out.copy()
    want[:valid_rows, :COLS // 2] = src[:valid_rows, :COLS // 2]
    np.testing.assert_array_equal(got, want)


def set_window_of_named_subview(src: pl.Tensor[[ROWS, COLS], pl.DT_FP32], out: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                                start: pl.Scalar[pl.DT_INT32], count: pl.Scalar[pl.DT_INT32]):
    """Rows [start, start + count) move through a subview from row ``start`` whose window is set to
    ``count`` rows; the whole tile's window is untouched by it."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=VEC), addr=0)
        part = t[start:, :]
        pl.set_validshape(part, [count, COLS])
        pl.load(part, src, [start, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.MTE3, 0)
        pl.store(out, part, [start, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("start,count", [(0, ROWS), (5, 4), (ROWS - 1, 1)])
def test_set_validshape_of_named_subview(backend, start, count):
    src = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    out = np.full((ROWS, COLS), -1.0, np.float32)
    _, got, _, _ = run_on(set_window_of_named_subview, backend, src, out, start, count)
    want = out.copy()
    want[start:start + count] = src[start:start + count]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_validshape_of_named_subview_beyond_its_shape(backend):
    src = np.zeros((ROWS, COLS), np.float32)
    with pytest.raises(pl.KernelRuntimeError, match=r"valid shape \[4, 32\] is outside the subview's shape \[2, 32\]"):
        run_on(set_window_of_named_subview, backend, src, src.copy(), ROWS - 2, 4)


def test_set_validshape_of_unnamed_subview_is_rejected():
    def kernel(src: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
        with pl.section_vector():
            t = pl.make_tile(pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=VEC), addr=0)
            pl.set_validshape(t[0:4, :], [2, COLS])
            pl.load(t, src, [0, 0])

    with pytest.raises(pl.KernelError, match="bound to a name first"):
        run_on(kernel, "interp", np.zeros((ROWS, COLS), np.float32))
