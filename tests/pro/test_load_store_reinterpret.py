"""Loads and stores copy bits: a tile of another dtype of the same width reinterprets them.

The official load/store move b8/b16/b32/b64 data, so an INT32 tensor loads into a UINT32 tile
(negative values become large unsigned ones), an FP32 tile stores its bit patterns into an INT32
tensor, and so on.  Different widths stay an error (a cast is needed for those).
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND

R, C = 8, 64
VEC = pl.MemorySpace.Vec


def _sync(a, b, event):
    pl.system.sync_src(set_pipe=a, wait_pipe=b, event_id=event)
    pl.system.sync_dst(set_pipe=a, wait_pipe=b, event_id=event)


def signed_as_unsigned(x: pl.Tensor[[R, C], pl.DT_INT32], out: pl.Tensor[[R, C], pl.DT_UINT32]):
    """INT32 bits loaded as UINT32, shifted right by one as unsigned, stored as UINT32."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_UINT32, target_memory=VEC), addr=0)
        one = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_UINT32, target_memory=VEC), addr=0x1000)
        pl.load(t, x, [0, 0])
        pl.expands(one, 1)
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.shr(t, t, one)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, t, [0, 0])


def float_bits_out(x: pl.Tensor[[R, C], pl.DT_FP32], out: pl.Tensor[[R, C], pl.DT_INT32]):
    """FP32 values, doubled, stored into an INT32 tensor as their bit patterns."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=VEC), addr=0)
        pl.load(t, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.add(t, t, t)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, t, [0, 0])


def half_bits_in(x: pl.Tensor[[R, C], pl.DT_INT16], out: pl.Tensor[[R, C], pl.DT_FP16]):
    """INT16 codes loaded as FP16 values and stored unchanged."""
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_FP16, target_memory=VEC), addr=0)
        pl.load(t, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.MTE3, 0)
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_int32_as_uint32(backend):
    x = np.random.default_rng(0).integers(-2**31, 2**31, (R, C), dtype=np.int32)
    _, got = run_on(signed_as_unsigned, backend, x, np.zeros((R, C), np.uint32))
    np.testing.assert_array_equal(got, x.view(np.uint32) >> 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_fp32_bits_into_int32(backend):
    x = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    _, got = run_on(float_bits_out, backend, x, np.zeros((R, C), np.int32))
    np.testing.assert_array_equal(got, (x + x).view(np.int32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_int16_codes_as_fp16(backend):
    x = np.random.default_rng(2).uniform(-100, 100, (R, C)).astype(np.float16).view(np.int16)
    _, got = run_on(half_bits_in, backend, x, np.zeros((R, C), np.float16))
    np.testing.assert_array_equal(got.view(np.int16), x)


def test_load_of_another_width_is_rejected():
    def widen(x: pl.Tensor[[R, C], pl.DT_INT16]):
        with pl.section_vector():
            t = pl.make_tile(pl.TileType(shape=[R, C], dtype=pl.DT_INT32, target_memory=VEC), addr=0)
            pl.load(t, x, [0, 0])

    with pytest.raises(pl.KernelTypeError, match="only a dtype of the same width reinterprets"):
        run_on(widen, "interp", np.zeros((R, C), np.int16))
