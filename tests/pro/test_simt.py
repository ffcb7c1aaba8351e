"""SIMT API (``pl.simt``): our own kernels against numpy, on every backend."""
from __future__ import annotations

import os

import numpy as np
import pytest

import pypto_pro.language as pl

BACKENDS = ["interp", "cpu", "sim"]


def _run(kernel, backend, *args, grid=None):
    old = os.environ.get("PYPTO_BACKEND")
    os.environ["PYPTO_BACKEND"] = backend
    try:
        (kernel[None, grid] if grid else kernel)(*args)
    finally:
        if old is None:
            del os.environ["PYPTO_BACKEND"]
        else:
            os.environ["PYPTO_BACKEND"] = old


def _mte2_to_v(eid=0):
    pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=eid)
    pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=eid)


def _v_to_mte3(eid=1):
    pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=eid)
    pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=eid)


# ----------------------------------------------------------------------------- a reversed copy with a callee
@pl.simt.function
def _square_plus(v, c):
    return v * v + c


@pl.simt.function(max_threads=128)
def _reverse_square(dst, src, n, c):
    i = pl.simt.linear_thread_idx()
    if i < n:
        dst[0, n - 1 - i] = _square_plus(src[0, i], c)


@pl.jit()
def _reverse_kernel(a: pl.Tensor[[1, 128], pl.DT_FP32], out: pl.Tensor[[1, 128], pl.DT_FP32], n: pl.DT_INT32,
                    c: pl.DT_FP32):
    tt = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    src = pl.make_tile(tt, addr=0, size=512)
    dst = pl.make_tile(tt, addr=512, size=512)
    with pl.section_vector():
        pl.load(src, a, [0, 0])
        pl.expands(dst, -1.0)
        _mte2_to_v()
        pl.simt.launch(_reverse_square, threads=128, args=(dst, src, n, c))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 77, 128])
def test_per_thread_ub_access_and_callee(backend, n):
    a = np.linspace(-3, 3, 128, dtype=np.float32).reshape(1, 128)
    out = np.zeros((1, 128), np.float32)
    _run(_reverse_kernel, backend, a, out, n, 0.5)
    want = np.full(128, -1.0, np.float32)
    want[:n] = (a[0, :n] * a[0, :n] + np.float32(0.5))[::-1]
    np.testing.assert_array_equal(out[0], want)


# ----------------------------------------------------------------------------- 3-D blocks, thread context, GM
@pl.simt.function(max_threads=64)
def _coords(dst):
    t = pl.simt.thread_idx()
    d = pl.simt.block_dim()
    i = pl.simt.linear_thread_idx()
    b = pl.simt.block_idx()
    g = pl.simt.grid_dim()
    dst[b.x, i] = t.x * 1000 + t.y * 100 + t.z * 10 + d.x * d.y * d.z + g.x * 100000 + pl.simt.warp_size() * 0


@pl.jit()
def _coords_kernel(out: pl.Tensor[[3, 64], pl.DT_INT32]):
    with pl.section_vector():
        pl.simt.launch(_coords, threads=(4, 2, 8), args=(out,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_thread_coordinates_in_gm(backend):
    out = np.full((3, 64), -5, np.int32)
    _run(_coords_kernel, backend, out, grid=3)
    i = np.arange(64)
    x, y, z = i % 4, (i // 4) % 2, i // 8
    row = x * 1000 + y * 100 + z * 10 + 64 + 300000
    np.testing.assert_array_equal(out, np.stack([row] * 3))


# ----------------------------------------------------------------------------- valid shape seen by threads
@pl.simt.function(max_threads=256)
def _pack_valid(dst, src):
    i = pl.simt.linear_thread_idx()
    rows = src.valid_shape[0]
    cols = src.valid_shape[1]
    if i < rows * cols:
        dst[0, i] = src[i // cols, i % cols] * 2.0   # the valid window, packed row by row


@pl.jit()
def _pack_kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[1, 128], pl.DT_FP32]):
    ts = pl.TileType(shape=[8, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    td = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    src = pl.make_tile(ts, addr=0, size=512)
    dst = pl.make_tile(td, addr=512, size=512)
    with pl.section_vector():
        pl.set_validshape(src, [a.shape[0], a.shape[1]])
        pl.load(src, a, [0, 0])
        pl.expands(dst, 0.0)
        _mte2_to_v()
        pl.simt.launch(_pack_valid, threads=(16, 16), args=(dst, src))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 5), (8, 16), (7, 9)])
def test_valid_shape_in_threads(backend, shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    out = np.full((1, 128), 9.0, np.float32)
    _run(_pack_kernel, backend, a, out)
    n = a.size
    np.testing.assert_array_equal(out[0, :n], 2 * a.reshape(-1))
    np.testing.assert_array_equal(out[0, n:], 0.0)


# ----------------------------------------------------------------------------- errors
def test_launch_errors():
    @pl.simt.function
    def helper(dst):
        dst[0, 0] = 1.0

    @pl.jit()
    def not_launchable(out: pl.Tensor[[1, 8], pl.DT_FP32]):
        with pl.section_vector():
            pl.simt.launch(helper, threads=8, args=(out,))

    with pytest.raises(pl.KernelTypeError, match="max_threads"):
        not_launchable(np.zeros((1, 8), np.float32))

    @pl.simt.function(max_threads=8)
    def small(dst):
        dst[0, pl.simt.linear_thread_idx()] = 1.0

    @pl.jit()
    def too_many(out: pl.Tensor[[1, 16], pl.DT_FP32]):
        with pl.section_vector():
            pl.simt.launch(small, threads=(4, 4), args=(out,))

    with pytest.raises(pl.KernelTypeError, match="exceed"):
        too_many(np.zeros((1, 16), np.float32))

    @pl.jit()
    def outside(out: pl.Tensor[[1, 8], pl.DT_FP32]):
        with pl.section_vector():
            out[0, pl.simt.linear_thread_idx()] = 1.0

    with pytest.raises(pl.KernelSyntaxError, match="inside a SIMT function"):
        outside(np.zeros((1, 8), np.float32))
