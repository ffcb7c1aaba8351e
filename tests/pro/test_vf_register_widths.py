"""Reg/VF semantics around element widths and pointers, with our own kernels against numpy on every
backend (cpu bit-identical to interp):

* a compare with ``cmp_dtype`` reads both registers as lanes of that type (a u16 register against a u32
  one, compared byte by byte); without it, ``b`` is read at ``a``'s type;
* ``select`` moves bits: ``src1`` is read at ``src0``'s width;
* a load with an explicit granularity (``BRC_B8``, ``BRC_B16``) moves elements of that width whatever the
  register's dtype (one byte repeated in every byte of a u32 register);
* a post-update transfer advances the pointer's cursor only: plain accesses of the same pointer address
  its base (the hardware keeps the cursor in a variable of its own);
* cumulative histograms count ``x <= base + n`` from 0 in both halves (BIN1 includes the values below 128).
"""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

from .on_every_backend import BACKENDS, EVERY_BACKEND, jit_on

pytestmark = EVERY_BACKEND
ROWS = 7
U8, U16, U32 = pl.DT_UINT8, pl.DT_UINT16, pl.DT_UINT32


@pl.vector_function
def _widths(ta, tk, o, s):
    all8 = vf.create_mask(dtype=U8)
    all16 = vf.create_mask(dtype=U16)
    every = vf.create_mask()
    words = vf.load_align(tk, 0, dtype=U16)              # k's bytes as 128 u16 lanes
    first = vf.load_align(tk, 0, dist=pl.LoadDist.BRC_B8)  # byte 0 of k in every byte of 64 u32 lanes
    same = vf.eq(words, first, all8, cmp_dtype=U8)       # byte-wise
    vf.store_align(o, vf.select(vf.full(1, dtype=U8), vf.full(0, dtype=U8), same), all8)            # row 0
    high = vf.gt(words, 0x8000, all16)
    vf.store_align(o + 64, vf.select(vf.full(0x1234, dtype=U16), vf.load_align(ta, 0), high), all16)  # row 1
    vf.store_align(o + 128, vf.load_align(tk, 3, dist=pl.LoadDist.BRC_B16, dtype=U32), every)          # row 2
    x = vf.load_align(ta, 0)
    vf.store(s, x, 16, post_update=True)
    vf.store(s, vf.muls(x, -1.0, every), 16, post_update=True)
    vf.store_align(o + 192, vf.load_align(s, 0), every)                                             # row 3
    hist = vf.full(0, dtype=U16)
    hist = vf.histograms(vf.load_align(tk, 0, dtype=U8), all8, bin_type=pl.BinType.BIN1)
    vf.store_align(o + 256, hist, all16)                                                            # row 4
    vf.store_align(o + 320, vf.load_align(tk, 1, dist=pl.LoadDist.BRC_B8, dtype=U32), every)           # row 5
    plain = vf.eq(vf.load_align(tk, 0, dtype=U32), vf.load_align(tk, 0, dtype=pl.DT_FP32), every)
    vf.store_align(o + 384, vf.select(vf.full(7, dtype=U32), vf.full(0, dtype=U32), plain), every)     # row 6


def widths_kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], k: pl.Tensor[[1, 64], pl.DT_INT32],
                  out: pl.Tensor[[ROWS, 64], pl.DT_FP32]):
    ta = pl.make_tile(pl.TileType([1, 64], pl.DT_FP32, pl.MemorySpace.Vec), addr=0, size=256)
    tk = pl.make_tile(pl.TileType([1, 64], pl.DT_INT32, pl.MemorySpace.Vec), addr=256, size=256)
    t_o = pl.make_tile(pl.TileType([ROWS, 64], pl.DT_FP32, pl.MemorySpace.Vec), addr=1024, size=ROWS * 256)
    t_s = pl.make_tile(pl.TileType([1, 64], pl.DT_FP32, pl.MemorySpace.Vec), addr=4096, size=256)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.load(tk, k, [0, 0])
        pl.expands(t_o, 0.0)
        pl.expands(t_s, 0.0)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        _widths(ta, tk, t_o, t_s)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, t_o, [0, 0])


def _inputs():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((1, 64)).astype(np.float32)
    raw = rng.choice(np.array([3, 3, 3, 90, 131, 200, 255], np.uint8), 256)
    k = raw.view(np.int32).reshape(1, 64)
    return a, k


def _run(backend):
    a, k = _inputs()
    out = np.full((ROWS, 64), np.nan, np.float32)
    jit_on(widths_kernel, backend)(a, k, out)
    return a, k, out


@pytest.mark.parametrize("backend", BACKENDS)
def test_register_widths_and_pointer_cursor(backend):
    a, k, out = _run(backend)
    kb = k.reshape(-1).view(np.uint8)
    raw = out.view(np.uint8)
    np.testing.assert_array_equal(raw[0], (kb == kb[0]).astype(np.uint8))
    words = kb.view(np.uint16)
    np.testing.assert_array_equal(raw[1].view(np.uint16), np.where(words > 0x8000, 0x1234, a.reshape(-1).view(np.uint16)))
    half = kb[12:14].view(np.uint16)[0]
    np.testing.assert_array_equal(raw[2].view(np.uint32), np.full(64, (int(half) << 16) | int(half), np.uint32))
    np.testing.assert_array_equal(out[3], np.concatenate([a[0, :16], -a[0, :16], np.zeros(32, np.float32)]))
    cum = np.cumsum(np.bincount(kb, minlength=256))
    np.testing.assert_array_equal(raw[4].view(np.uint16), cum[128:].astype(np.uint16))
    assert cum[127] > 0  # the BIN1 counts include values below 128
    np.testing.assert_array_equal(raw[5], np.full(256, kb[4], np.uint8))
    # without cmp_dtype, b is read at a's type: the same bits compare equal
    np.testing.assert_array_equal(raw[6].view(np.uint32), np.full(64, 7, np.uint32))


def test_cpu_bit_identical_to_interp():
    outs = [_run(be)[2] for be in ("interp", "cpu")]
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
