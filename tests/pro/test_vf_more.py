"""More of the Reg/VF API (bitwise lanes, shifts by registers, composite ops, squeeze/unsqueeze, packing,
gather/scatter, mask transfers, DataBlock and unaligned transfers, AddrReg, histograms, INT4 registers):
our own kernels against numpy on every backend, and cpu bit-identical to interp."""
from __future__ import annotations

import os

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

BACKENDS = ["interp", "cpu", "sim"]
ROWS = 8


def _make(body):
    """A kernel: UB tiles a, b (fp32 [1, 64]), k (int32 [1, 64]), o (fp32 [ROWS, 64], preset to -1.0),
    scratch s (fp32 [4, 64], preset to 0); ``body(a, b, k, o, s)`` is a vector function."""
    @pl.jit()
    def kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], b: pl.Tensor[[1, 64], pl.DT_FP32], k: pl.Tensor[[1, 64], pl.DT_INT32],
               out: pl.Tensor[[ROWS, 64], pl.DT_FP32]):
        tf = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        ti = pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
        to = pl.TileType(shape=[ROWS, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        ts = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        ta = pl.make_tile(tf, addr=0, size=256)
        tb = pl.make_tile(tf, addr=256, size=256)
        tk = pl.make_tile(ti, addr=512, size=256)
        t_o = pl.make_tile(to, addr=1024, size=ROWS * 256)
        t_s = pl.make_tile(ts, addr=1024 + ROWS * 256, size=1024)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.load(tk, k, [0, 0])
            pl.expands(t_o, -1.0)
            pl.expands(t_s, 0.0)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(ta, tb, tk, t_o, t_s)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, t_o, [0, 0])
    return kernel


def _inputs():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((1, 64)) * 3).astype(np.float32)
    b = (rng.standard_normal((1, 64)) * 3).astype(np.float32)
    k = rng.integers(-40, 40, (1, 64)).astype(np.int32)
    return a, b, k


def _run(kernel, backend):
    a, b, k = _inputs()
    out = np.zeros((ROWS, 64), np.float32)
    old = os.environ.get("PYPTO_BACKEND")
    os.environ["PYPTO_BACKEND"] = backend
    try:
        kernel(a, b, k, out)
    finally:
        if old is None:
            del os.environ["PYPTO_BACKEND"]
        else:
            os.environ["PYPTO_BACKEND"] = old
    return a[0], b[0], k[0], out


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


# ----------------------------------------------------------------------------- lanes
@pl.vector_function
def _lanes(ta, tb, tk, o, s):
    every = vf.create_mask()
    x = vf.load_align(ta, 0)
    y = vf.load_align(tb, 0)
    n = vf.load_align(tk, 0)
    vf.store_align(o, vf.and_(x, y, every))
    vf.store_align(o + 64, vf.xor(x, y, every))
    vf.store_align(o + 128, vf.not_(x, every))
    vf.store_align(o + 192, vf.shift_left(n, vf.abs(n, every), every))
    vf.store_align(o + 256, vf.shift_right(n, vf.adds(n, 20, every), every))   # negative amounts: >= width
    vf.store_align(o + 320, vf.leaky_relu(x, 0.25, every))
    vf.store_align(o + 384, vf.prelu(x, y, every))
    acc = vf.load_align(tb, 0)
    acc = vf.axpy(x, 3.0, every)
    vf.store_align(o + 448, acc)


_lanes_kernel = _make(_lanes)


def _shift(x, amt, left):
    out = []
    for v, s in zip(x.astype(np.int64), amt.astype(np.int64)):
        if s < 0 or s >= 32:
            out.append(0 if left or v >= 0 else -1)
        elif left:
            out.append(((v << s) & 0xFFFFFFFF) - ((((v << s) >> 31) & 1) << 32))
        else:
            out.append(v >> s)
    return np.array(out, np.int64).astype(np.int32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bitwise_shift_and_composite_lanes(backend):
    a, b, k, out = _run(_lanes_kernel, backend)
    np.testing.assert_array_equal(_bits(out[0]), _bits(a) & _bits(b))
    np.testing.assert_array_equal(_bits(out[1]), _bits(a) ^ _bits(b))
    np.testing.assert_array_equal(_bits(out[2]), ~_bits(a))
    np.testing.assert_array_equal(out[3].view(np.int32), _shift(k, np.abs(k), True))
    np.testing.assert_array_equal(out[4].view(np.int32), _shift(k, k + 20, False))
    np.testing.assert_array_equal(out[5], np.where(a >= 0, a, a * np.float32(0.25)))
    np.testing.assert_array_equal(out[6], np.where(a >= 0, a, a * b))
    np.testing.assert_array_equal(out[7], a * np.float32(3) + b)


# ----------------------------------------------------------------------------- counting and reducing
@pl.vector_function
def _counting(ta, tb, tk, o, s):
    every = vf.create_mask()
    x = vf.load_align(ta, 0)
    y = vf.load_align(tb, 0)
    u = vf.load_align(tk, 0, dtype=pl.DT_UINT32)
    lo, hi = vf.mull(u, vf.load_align(ta, 0, dtype=pl.DT_UINT32), every)
    vf.store_align(o, lo)
    vf.store_align(o + 64, hi)
    pos = vf.gt(x, 0.0, every)
    vf.store_align(o + 128, vf.squeeze(x, pos))
    vf.store_align(o + 192, vf.unsqueeze(pos, dtype=pl.DT_INT32))
    vf.store_align(o + 256, vf.pair_reduce_sum(x, every))
    vf.store_align(o + 320, vf.reduce_max(x, every, datablock=True))
    both = vf.and_(pos, vf.gt(y, 0.0, every), every)
    either = vf.select(both, vf.not_(pos, every), vf.create_mask(pattern=pl.MaskPattern.H))
    vf.store_align(o + 384, vf.abs(x, either), every)
    vf.store_align(o + 448, vf.full(5.0, every))
    vf.store_align(o + 448, vf.neg(y, vf.move(vf.or_(pos, both, every), vf.create_mask(pattern=pl.MaskPattern.Q))),
                   vf.move(vf.or_(pos, both, every), vf.create_mask(pattern=pl.MaskPattern.Q)))


_counting_kernel = _make(_counting)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mull_squeeze_unsqueeze_reductions_mask_logic(backend):
    a, b, k, out = _run(_counting_kernel, backend)
    prod = k.view(np.uint32).astype(np.uint64) * _bits(a).astype(np.uint64)
    np.testing.assert_array_equal(out[0].view(np.uint32), (prod & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(out[1].view(np.uint32), (prod >> 32).astype(np.uint32))
    pos = a > 0
    sq = np.zeros(64, np.float32)
    sq[:pos.sum()] = a[pos]
    np.testing.assert_array_equal(out[2], sq)
    np.testing.assert_array_equal(out[3].view(np.int32), np.concatenate([[0], np.cumsum(pos)[:-1]]))
    pair = np.zeros(64, np.float32)
    pair[:32] = a[0::2] + a[1::2]
    np.testing.assert_array_equal(out[4], pair)
    blk = np.zeros(64, np.float32)
    blk[0::8] = a.reshape(8, 8).max(1)
    np.testing.assert_array_equal(out[5], blk)
    half = np.arange(64) < 32
    either = np.where(half, pos & (b > 0), ~pos)
    np.testing.assert_array_equal(out[6], np.where(either, np.abs(a), 0))
    quarter = (np.arange(64) < 16) & pos
    np.testing.assert_array_equal(out[7], np.where(quarter, -b, 5.0))


# ----------------------------------------------------------------------------- UB transfers
@pl.vector_function
def _transfers(ta, tb, tk, o, s):
    every = vf.create_mask()
    x = vf.load_align(ta, 0)
    rev = vf.arange(0, index_order=pl.IndexOrder.DECREASE_ORDER, dtype=pl.DT_UINT32)  # 63 .. 0
    vf.store_align(o, vf.gather(ta, rev, every))                      # row 0: a reversed
    vf.scatter(o + 64, vf.load_align(tb, 0), rev, every)             # row 1: b reversed
    vf.store_align(o + 128, vf.load_align(ta, 0, dtype=pl.DT_UINT32), every, dist=pl.StoreDist.PACK)  # low halves
    vf.store_align(o + 192, x, vf.load_align(tb, 0), every, dist=pl.StoreDist.INTLV)  # rows 3-4: a0 b0 a1 b1 ...
    m = vf.gt(x, 0.0, every)
    vf.store_align(s, m)                                              # 32 bytes of mask bits
    vf.store_align(s + 8, m, dist=pl.StoreDist.PACK)                  # 16 bytes
    back = vf.create_mask()
    back = vf.load_align(s + 8, dist=pl.LoadDist.US)
    vf.store_align(o + 320, vf.abs(x, back), every)                   # row 5: |a| where a > 0, else 0
    blocks = vf.load_align(ta, vf.create_mask(pattern=pl.MaskPattern.H), block_stride=0,
                           data_copy_mode=pl.DataCopyMode.DATA_BLOCK_LOAD)
    vf.store_align(o + 384, blocks)                                   # row 6: a[0:8] x4, then 0
    for i in pl.range(0, 2):
        ar = vf.create_addr_reg(i, 32, dtype=pl.DT_FP32)
        u = vf.load(tb + 3)                                           # unaligned: b[3:67]
        vf.store(o + 451, u, count=13)                                # row 7[3:16] = b[3:16]
        v = vf.load_align(ta, ar)
        vf.store_align(s + 128, vf.muls(v, 2.0, every), every, ar)    # scratch row 2, halves from i


_transfers_kernel = _make(_transfers)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_scatter_pack_intlv_mask_and_block_transfers(backend):
    a, b, k, out = _run(_transfers_kernel, backend)
    np.testing.assert_array_equal(out[0], a[::-1])
    np.testing.assert_array_equal(out[1], b[::-1])
    low = (_bits(a) & 0xFFFF).astype(np.uint16)
    np.testing.assert_array_equal(out[2].view(np.uint16)[:64], low)
    z = np.empty(128, np.float32)
    z[0::2], z[1::2] = a, b
    np.testing.assert_array_equal(out[3:5].reshape(-1), z)
    np.testing.assert_array_equal(out[5], np.where(a > 0, np.abs(a), 0))
    np.testing.assert_array_equal(out[6], np.concatenate([np.tile(a[:8], 4), np.zeros(32, np.float32)]))
    row7 = np.full(64, -1.0, np.float32)
    row7[3:16] = b[3:16]
    np.testing.assert_array_equal(out[7], row7)


# ----------------------------------------------------------------------------- packing, INT4, histograms
@pl.vector_function
def _packing(ta, tb, tk, o, s):
    every = vf.create_mask()
    every16 = vf.create_mask(dtype=pl.DT_FP16)
    i32 = vf.load_align(tk, 0)
    u32 = vf.load_align(tk, 0, dtype=pl.DT_UINT32)
    p16 = vf.pack(u32, dtype=pl.DT_UINT16, part=pl.PackPart.UPPER)
    vf.store_align(o, vf.unpack(vf.load_align(tk, 0, dtype=pl.DT_INT16), dtype=pl.DT_INT32))   # row 0
    vf.store_align(o + 64, vf.unpack(p16, dtype=pl.DT_UINT32, part=pl.PackPart.UPPER))         # row 1
    h = vf.astype(vf.astype(i32, every, dtype=pl.DT_FP32), every, dtype=pl.DT_FP16, round_mode=pl.VFRoundMode.CAST_RINT)
    q = vf.astype(h, every16, dtype=pl.DT_INT4, round_mode=pl.VFRoundMode.CAST_ROUND, layout=pl.CastLayout.TWO)
    back = vf.astype(q, every16, dtype=pl.DT_INT16, layout=pl.CastLayout.TWO)
    vf.store_align(o + 128, vf.unpack(back, dtype=pl.DT_INT32))                               # row 2
    m = vf.mask_gen_with_reg_tensor(u32, offset=3)
    vf.store_align(o + 192, vf.select(vf.load_align(ta, 0), vf.load_align(tb, 0), m))         # row 3
    bytes8 = vf.load_align(tk, 0, dtype=pl.DT_UINT8)
    hist = vf.full(0, dtype=pl.DT_UINT16)
    hist = vf.histograms(vf.and_(bytes8, vf.full(7, dtype=pl.DT_UINT8), vf.create_mask(dtype=pl.DT_UINT8)),
                         vf.create_mask(dtype=pl.DT_UINT8), hist_type=pl.HistType.FREQUENCY)
    hist = vf.histograms(vf.and_(bytes8, vf.full(7, dtype=pl.DT_UINT8), vf.create_mask(dtype=pl.DT_UINT8)),
                         vf.create_mask(dtype=pl.DT_UINT8))
    vf.store_align(o + 256, hist)                                                             # rows 4-5 raw


_packing_kernel = _make(_packing)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pack_unpack_int4_mask_from_bits_histograms(backend):
    a, b, k, out = _run(_packing_kernel, backend)
    np.testing.assert_array_equal(out[0].view(np.int32), k.view(np.int16)[:64].astype(np.int32))
    np.testing.assert_array_equal(out[1].view(np.uint32), (k.view(np.uint32) & 0xFFFF))
    # 16-bit lane i holds k[i // 2] at even i and 0 at odd i (fp32 -> fp16 halves the lane width: ZERO layout)
    h = np.zeros(128, np.float32)
    h[0::2] = k
    q = np.clip(np.sign(h) * np.floor(np.abs(h) + 0.5), -8, 7).astype(np.int16)
    np.testing.assert_array_equal(out[2].view(np.int32), q[:64].astype(np.int32))
    word = np.frombuffer(k.view(np.uint32).tobytes()[24:32], dtype=np.uint8)
    bits = np.unpackbits(word, bitorder="little").astype(bool)
    np.testing.assert_array_equal(out[3], np.where(bits, a, b))
    v = np.frombuffer(k.tobytes(), np.uint8) & 7
    freq = np.bincount(v, minlength=128)[:128]
    hist = (freq + np.cumsum(freq)).astype(np.uint16)
    np.testing.assert_array_equal(out[4:6].reshape(-1).view(np.uint16)[:128], hist)


@pytest.mark.parametrize("kernel", [_lanes_kernel, _counting_kernel, _transfers_kernel, _packing_kernel])
def test_cpu_bit_identical_to_interp(kernel):
    outs = [_run(kernel, be)[3] for be in ("interp", "cpu")]
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
