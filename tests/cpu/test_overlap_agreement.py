"""cpu and interpreter agree bit for bit where an op's output overlaps one of its inputs at another
address (the interpreter reads every operand before it writes; the C++ routines copy such an operand
first), on ``log`` (both compute in double and round once) and on the NaN a max/min reduction returns
(the first NaN of the row or column, sign and payload kept)."""
import functools

import numpy as np
import pytest

import pypto_pro.language as pl

FP32 = pl.DT_FP32


@functools.lru_cache(maxsize=None)
def on(fn, backend):
    return pl.jit(fn, backend=backend)


def agree(fn, *args):
    """Run ``fn`` on cpu and interp with private copies of ``args``; the arrays must match byte for byte."""
    outs = {}
    for backend in ("cpu", "interp"):
        copies = [a.copy() for a in args]
        on(fn, backend)(*copies)
        outs[backend] = copies
    for c, r in zip(outs["cpu"], outs["interp"]):
        assert np.array_equal(c.view(np.uint8), r.view(np.uint8)), f"cpu {c.ravel()[:8]} vs interp {r.ravel()[:8]}"
    return outs["interp"]


def tile(shape, addr, dtype=FP32, **kw):
    return pl.make_tile(pl.TileType(shape, dtype, **kw), addr=addr)


def expand_into_next_row(x: pl.Tensor[[9, 32], FP32], v: pl.Tensor[[8, 1], FP32], y: pl.Tensor[[9, 32], FP32]):
    t = tile([9, 32], 0)
    m = tile([8, 1], 4096, layout=pl.DN)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.load(m, v, [0, 0])
        pl.expand_sub(t[1:9, :], t[0:8, :], m, dim=0)
        pl.store(y, t, [0, 0])


def test_expand_reading_the_rows_it_writes():
    x = np.arange(9 * 32, dtype=np.float32).reshape(9, 32)
    y = agree(expand_into_next_row, x, np.full((8, 1), 100, np.float32), np.zeros((9, 32), np.float32))[2]
    np.testing.assert_array_equal(y[1:, 0], x[:8, 0] - 100)


def select_shifted_rhs(x: pl.Tensor[[8, 40], FP32], y: pl.Tensor[[8, 40], FP32]):
    t = tile([8, 40], 0)
    z = tile([8, 32], 2048)
    msk = tile([8, 32], 4096, pl.DT_UINT8)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.expands(z, 0.0)
        pl.gt(msk, z, 1.0)  # all false: select takes rhs
        pl.select(t[0:8, 1:33], msk, z, t[0:8, 0:32])
        pl.store(y, t, [0, 0])


def test_select_rhs_overlapping_dst_shifted():
    x = np.arange(8 * 40, dtype=np.float32).reshape(8, 40)
    y = agree(select_shifted_rhs, x, np.zeros_like(x))[1]
    np.testing.assert_array_equal(y[:, 1:33], x[:, 0:32])


def reduce_into_source(x: pl.Tensor[[8, 32], FP32], o: pl.Tensor[[8, 32], FP32], o2: pl.Tensor[[8, 32], FP32]):
    t = tile([8, 32], 0)
    tmp = tile([8, 32], 4096)
    r = tile([8, 1], 896, layout=pl.DN)  # the first 8 elements of t's last row
    u = tile([8, 32], 8192)
    c = tile([1, 32], 8192 + 32)  # u's row 0, 8 columns on
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.load(u, x, [0, 0])
        pl.sum(r, t, tmp, dim=0)
        pl.maximum(c, u, tmp, dim=1)
        pl.store(o, t, [0, 0])
        pl.store(o2, u, [0, 0])


def test_reductions_whose_result_overlaps_their_source():
    x = np.random.default_rng(0).random((8, 32), np.float32)
    o, o2 = agree(reduce_into_source, x, np.zeros_like(x), np.zeros_like(x))[1:]
    assert o[7, 7] == pytest.approx(x[7].sum(dtype=np.float64), rel=1e-6)  # row 7's sum, not row 7 partly summed
    np.testing.assert_array_equal(o2[0, 8:40 - 8], x.max(axis=0)[:24])


def gathers_into_their_operands(x: pl.Tensor[[8, 64], FP32], ix: pl.Tensor[[1, 64], pl.DT_INT32],
                                o: pl.Tensor[[8, 64], FP32], oi: pl.Tensor[[1, 64], pl.DT_INT32]):
    t = tile([8, 64], 0)
    d = tile([8, 32], 128)  # starts at t's column 32 (its rows are 32 wide, t's 64)
    i = tile([1, 64], 4096, pl.DT_INT32)
    j = tile([1, 56], 4096 + 32, pl.DT_INT32)  # i's columns 8..63
    tmp = tile([1, 64], 8192, pl.DT_INT32)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.load(i, ix, [0, 0])
        pl.gathermask(d, t, pattern_mode=1)  # t's even columns, written over t
        pl.gather(j, i, i, tmp)  # j[c] = i[i[c]]: operands overwritten as they are used
        pl.store(o, t, [0, 0])
        pl.store(oi, i, [0, 0])


def test_gathers_whose_output_overlaps_an_operand():
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    ix = (np.arange(64, dtype=np.int32) * 3) % 64
    o, oi = agree(gathers_into_their_operands, x, ix[None, :], np.zeros_like(x), np.zeros((1, 64), np.int32))[2:]
    np.testing.assert_array_equal(o[0, 32:64], x[0, 0:64:2])  # d's row 0 is t's row 0, columns 32 on
    np.testing.assert_array_equal(oi[0, 8:], ix[ix[:56]])


def log_of(x: pl.Tensor[[64, 512], FP32], y: pl.Tensor[[64, 512], FP32]):
    t = tile([64, 128], 0)
    with pl.section_vector():
        for j in pl.range(0, 4):
            for i in pl.range(0, 8):
                pl.load(t[0:8, :], x, [i * 8, j * 128])
                pl.log(t[0:8, :], t[0:8, :])
                pl.store(y, t[0:8, :], [i * 8, j * 128])


def test_log_is_computed_in_double_and_rounded_once():
    """numpy's fp32 log is an ulp off on ~5% of inputs (and host dependent); in double both agree."""
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 0x7F800000, (64, 512), dtype=np.uint32)  # every positive finite float
    bits[0, :6] = [0x3C4E1285, 0, 0x80000000, 0x7F800000, 0xFFC00000, 0x3F800000]
    x = bits.view(np.float32)
    y = agree(log_of, x, np.zeros_like(x))[1]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(y[1:], np.log(x[1:].astype(np.float64)).astype(np.float32))


def row_extremes(x: pl.Tensor[[8, 32], FP32], mx: pl.Tensor[[8, 1], FP32], mn: pl.Tensor[[1, 32], FP32]):
    t = tile([8, 32], 0)
    tmp = tile([8, 32], 1024)
    r = tile([8, 1], 2048, layout=pl.DN)
    c = tile([1, 32], 2080)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.maximum(r, t, tmp, dim=0)
        pl.minimum(c, t, tmp, dim=1)
        pl.store(mx, r, [0, 0])
        pl.store(mn, c, [0, 0])


@pytest.mark.parametrize("nan_bits", [0xFFC00000, 0x7FC00001, 0xFFA00000])
def test_max_min_reductions_return_the_first_nan_itself(nan_bits):
    x = np.ones((8, 32), np.float32)
    x.view(np.uint32)[3, 5] = nan_bits
    x.view(np.uint32)[3, 20] = 0x7FC00000  # a second NaN later in the row: the first one wins
    mx, mn = agree(row_extremes, x, np.zeros((8, 1), np.float32), np.zeros((1, 32), np.float32))[1:]
    assert mx.view(np.uint32)[3, 0] == nan_bits  # that NaN, sign and payload kept
    assert mn.view(np.uint32)[0, 5] == nan_bits
