"""Reg/VF API (``@pl.vector_function``, ``vf.*``): our own kernels against numpy, on every backend."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

BACKENDS = ["interp", "cpu", "sim"]
W = 128  # columns of the UB tiles (two fp32 registers per row)


@pl.vector_function
def _normalise_rows(src, dst, nrows, ncols: pl.DT_INT64):
    """dst[r, :n] = src[r, :n] / sum(src[r, :n] ** 2) with a masked tail register."""
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    for r in pl.range(0, nrows):
        acc = vf.full(0.0, every)
        for k in pl.range(0, (ncols + 63) // 64):
            live = vf.update_mask(ncols - k * 64)
            x = vf.load_align(src, [r, k * 64])
            acc = vf.add(acc, vf.reduce_sum(vf.mul(x, x, live), live), every)
        total = vf.full(acc, every)
        for k in pl.range(0, (ncols + 63) // 64):
            live = vf.update_mask(ncols - k * 64)
            x = vf.load_align(src, r * W + k * 64)
            vf.store_align(dst + (r * W + k * 64), vf.div(x, total, live), live)


@pl.jit()
def _normalise_kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                      out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
    tt = pl.TileType(shape=[4, W], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    t_in = pl.make_tile(tt, addr=0, size=4 * W * 4)
    t_out = pl.make_tile(tt, addr=4 * W * 4, size=4 * W * 4)
    with pl.section_vector():
        pl.set_validshape(t_in, [a.shape[0], a.shape[1]])
        pl.set_validshape(t_out, [a.shape[0], a.shape[1]])
        pl.load(t_in, a, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        _normalise_rows(t_in, t_out, a.shape[0], a.shape[1])
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, t_out, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 64), (3, 100), (4, 128)])
def test_masked_row_normalise(backend, shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    _run(_normalise_kernel, backend, a, out)
    np.testing.assert_allclose(out, a / (a * a).sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def _run(kernel, backend, *args):
    import os
    old = os.environ.get("PYPTO_BACKEND")
    os.environ["PYPTO_BACKEND"] = backend
    try:
        kernel(*args)
    finally:
        if old is None:
            del os.environ["PYPTO_BACKEND"]
        else:
            os.environ["PYPTO_BACKEND"] = old


@pl.vector_function
def _lanes(a_t, b_t, o0, o1, o2, o3):
    m = vf.create_mask(pattern=pl.MaskPattern.VL16, dtype=pl.DT_FP32)
    x = vf.load_align(a_t, 0)
    y = vf.load_align(b_t, 0)
    vf.store_align(o0, vf.max(x, y, m), m)                       # 16 lanes only; the rest keeps 7
    big = vf.gt(x, y, vf.create_mask())
    vf.store_align(o1, vf.select(vf.exp_sub(x, y, big), vf.abs(y), big))
    s = vf.muls(x, 0.5, vf.create_mask())
    vf.store_align(o2, vf.reduce_max(s, vf.create_mask()))
    h = vf.astype(x, vf.create_mask(), dtype=pl.DT_FP16, layout=pl.CastLayout.ONE)
    back = vf.astype(h, vf.create_mask(dtype=pl.DT_FP16), dtype=pl.DT_FP32, layout=pl.CastLayout.ONE)
    e, o = vf.de_interleave(x, y)
    vf.store_align(o3, vf.add(back, vf.sub(e, o, vf.create_mask()), vf.create_mask()))


@pl.jit()
def _lanes_kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], b: pl.Tensor[[1, 64], pl.DT_FP32],
                  out: pl.Tensor[[4, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    to = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile(tt, addr=0, size=256)
    tb = pl.make_tile(tt, addr=256, size=256)
    t_out = pl.make_tile(to, addr=512, size=1024)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.load(tb, b, [0, 0])
        pl.expands(t_out, 7.0)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        _lanes(ta, tb, t_out, t_out + 64, t_out + 128, t_out + 192)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, t_out, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_compare_select_cast_permute(backend):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 64)).astype(np.float32)
    b = rng.standard_normal((1, 64)).astype(np.float32)
    out = np.zeros((4, 64), np.float32)
    _run(_lanes_kernel, backend, a, b, out)
    x, y = a[0], b[0]
    np.testing.assert_array_equal(out[0, :16], np.maximum(x, y)[:16])
    np.testing.assert_array_equal(out[0, 16:], 7.0)
    np.testing.assert_allclose(out[1], np.where(x > y, np.exp(x - y), np.abs(y)), rtol=1e-6)
    assert out[2, 0] == np.max(x * np.float32(0.5)) and not out[2, 1:].any()
    z = np.concatenate([x, y])
    np.testing.assert_allclose(out[3], x.astype(np.float16).astype(np.float32) + (z[0::2] - z[1::2]), rtol=1e-6)


def test_cpu_matches_interp_bitwise():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((1, 64)) * 4).astype(np.float32)
    b = (rng.standard_normal((1, 64)) * 4).astype(np.float32)
    outs = {}
    for be in ("interp", "cpu"):
        outs[be] = np.zeros((4, 64), np.float32)
        _run(_lanes_kernel, be, a, b, outs[be])
    # row 1 holds exp: the same fp32 sequence on both (docs/performance.md, "Decision: exp")
    np.testing.assert_array_equal(outs["interp"].view(np.uint32), outs["cpu"].view(np.uint32))


def test_vf_outside_kernel_and_unimplemented():
    with pytest.raises(pl.KernelSyntaxError):
        vf.add(1, 2, 3)

    @pl.vector_function
    def uses_hybrid_rounding(t):
        vf.astype(vf.load_align(t, 0), vf.create_mask(), dtype=pl.DT_FP16, round_mode=pl.VFRoundMode.CAST_HYBRID)

    @pl.jit()
    def k(a: pl.Tensor[[1, 64], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0,
                         size=256)
        with pl.section_vector():
            uses_hybrid_rounding(t)

    with pytest.raises(NotImplementedError, match="CAST_HYBRID"):
        k(np.zeros((1, 64), np.float32))


# ----------------------------------------------------------------------------- value semantics of register names
@pl.vector_function
def _bump(r):
    r = vf.adds(r, 1.0, vf.create_mask())  # rebinding a parameter leaves the caller's register alone
    return r


@pl.vector_function
def _aliases(src, o0, o1, o2, o3):
    every = vf.create_mask()
    a = vf.load_align(src, 0)
    b = a
    b = vf.muls(b, 2.0, every)             # a keeps its value
    vf.store_align(o0, a)
    vf.store_align(o1, b)
    acc = vf.full(0.0, every)
    prev = acc
    for _ in pl.range(0, 3):
        prev = acc                         # a snapshot, not a second name for acc
        acc = vf.add(acc, a, every)
    vf.store_align(o2, vf.sub(acc, prev, every))   # == a
    c = _bump(a)
    half = vf.create_mask(pattern=pl.MaskPattern.H)
    d = c
    d = vf.adds(a, 100.0, half, mode=pl.MergeMode.MERGING)  # lanes outside `half` keep d's old value (c)
    vf.store_align(o3, vf.add(vf.sub(d, c, every), a, every))


@pl.jit()
def _aliases_kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[4, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    to = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile(tt, addr=0, size=256)
    t_out = pl.make_tile(to, addr=256, size=1024)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        _aliases(ta, t_out, t_out + 64, t_out + 128, t_out + 192)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, t_out, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_name_never_changes_another(backend):
    a = np.arange(64, dtype=np.float32).reshape(1, 64) - 20
    out = np.zeros((4, 64), np.float32)
    _run(_aliases_kernel, backend, a, out)
    x = a[0]
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], 2 * x)
    np.testing.assert_array_equal(out[2], x)
    # first half: (a + 100) - (a + 1) + a; second half: c - c + a
    np.testing.assert_array_equal(out[3], np.where(np.arange(64) < 32, x + 99, x))


@pl.vector_function
def _two_streams(src, dst):
    every = vf.create_mask()
    second = dst + 128                         # the address now: advancing dst later does not move it
    for i in pl.range(0, 2):
        x = vf.load_align(src, i * 64)
        vf.store_align(dst, x, every, 64, post_update=True)
        vf.store_align(second, vf.muls(x, -1.0, every), every, 64, post_update=True)


@pl.jit()
def _two_streams_kernel(a: pl.Tensor[[1, 128], pl.DT_FP32], out: pl.Tensor[[1, 256], pl.DT_FP32]):
    ta = pl.make_tile(pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0,
                      size=512)
    t_out = pl.make_tile(pl.TileType(shape=[1, 256], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=512,
                         size=1024)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        _two_streams(ta, t_out)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, t_out, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_pointer_from_advancing_pointer_is_a_snapshot(backend):
    a = np.arange(128, dtype=np.float32).reshape(1, 128) + 1
    out = np.zeros((1, 256), np.float32)
    _run(_two_streams_kernel, backend, a, out)
    np.testing.assert_array_equal(out[0, :128], a[0])
    np.testing.assert_array_equal(out[0, 128:], -a[0])
