"""The compare form of pl.gather (src/pypto_pro/ops/gather.py): gather(dst, src, k_value, cdst, tmp,
cmp_mode=4 (GT) / 0 (EQ), offset) collects, per row of src, the flat indices of the elements that compare
true with that row's threshold; cdst receives the bytes written per row."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelTypeError
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

ROWS, COLS, KCOLS = 4, 64, 8
VEC = pl.MemorySpace.Vec
GT, EQ = 4, 0


def vec(shape, dtype):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=VEC)


def kernel_of(src_dtype, cmp_mode, offset, dst_cols=COLS):
    """src [ROWS, COLS] and per-row thresholds k [1, KCOLS] in; indices [ROWS, dst_cols] and the byte
    counts [1, KCOLS] out."""
    def select_kernel(src: pl.Tensor[[ROWS, COLS], src_dtype], k: pl.Tensor[[1, KCOLS], pl.DT_UINT32],
                      idx: pl.Tensor[[ROWS, dst_cols], pl.DT_UINT32], cnt: pl.Tensor[[1, KCOLS], pl.DT_UINT32]):
        ts = pl.make_tile_group(type=vec([ROWS, COLS], src_dtype), addrs=0x0, mutex_ids=[0])
        tk = pl.make_tile_group(type=vec([1, KCOLS], pl.DT_UINT32), addrs=0x800, mutex_ids=[1])
        td = pl.make_tile_group(type=vec([ROWS, dst_cols], pl.DT_UINT32), addrs=0x1000, mutex_ids=[2])
        tc = pl.make_tile_group(type=vec([1, KCOLS], pl.DT_UINT32), addrs=0x2000, mutex_ids=[3])
        tt = pl.make_tile_group(type=vec([1, 64], pl.DT_UINT32), addrs=0x2100, mutex_ids=[4])
        with pl.section_vector():
            s, kv, d, c, t = ts.current(), tk.current(), td.current(), tc.current(), tt.current()
            pl.load(s, src, [0, 0])
            pl.load(kv, k, [0, 0])
            pl.expands(d, 0xFFFFFFFF)  # untouched positions keep this
            pl.expands(c, 7)  # and so do counts past src's rows
            pl.gather(d, s, kv, c, t, cmp_mode=cmp_mode, offset=offset)
            pl.store(idx, d, [0, 0])
            pl.store(cnt, c, [0, 0])
    return select_kernel


def expected(values_for_compare, ks, mode, offset, dst_cols):
    """(indices [ROWS, dst_cols] with 0xFFFFFFFF where nothing was written, byte counts per row)."""
    idx = np.full((ROWS, dst_cols), 0xFFFFFFFF, np.uint64)
    counts = []
    for r in range(ROWS):
        row = values_for_compare[r]
        hits = [c for c in range(COLS) if (row[c] > ks[r] if mode == GT else row[c] == ks[r])][:dst_cols]
        idx[r, :len(hits)] = [offset + r * COLS + c for c in hits]
        counts.append(4 * len(hits))
    return idx.astype(np.uint32), counts


def launch(backend, kernel, src, ks, dst_cols=COLS):
    k = np.zeros((1, KCOLS), np.uint32)
    k[0, :ROWS] = ks
    idx = np.zeros((ROWS, dst_cols), np.uint32)
    cnt = np.zeros((1, KCOLS), np.uint32)
    pl.jit(kernel, backend=backend)(src, k, idx, cnt)
    assert list(cnt[0, ROWS:]) == [7] * (KCOLS - ROWS)  # one count per row of src, nothing more
    return idx, list(cnt[0, :ROWS])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", [GT, EQ])
def test_fp32_rows_collect_their_own_hits(backend, mode):
    rng = np.random.default_rng(5)
    src = rng.integers(0, 12, (ROWS, COLS)).astype(np.float32)
    src[2, 5] = np.nan  # NaN compares false
    ks = [3, 7, 0, 11]
    idx, counts = launch(backend, kernel_of(pl.DT_FP32, mode, 100), src, ks)
    want_idx, want_counts = expected(src, ks, mode, 100, COLS)
    np.testing.assert_array_equal(idx, want_idx)
    assert counts == want_counts


@pytest.mark.parametrize("backend", BACKENDS)
def test_int16_compares_bit_patterns_unsigned(backend):
    src = np.tile(np.array([0, 10, 20, 30, -1, -32768, 20, 5], np.int16), (ROWS, COLS // 8))
    ks = [20, 20, 65535, 0]
    idx, counts = launch(backend, kernel_of(pl.DT_INT16, GT, 0), src, ks)
    unsigned = src.view(np.uint16).astype(np.int64)  # -1 is 0xFFFF > 20: the hardware's unsigned compare
    want_idx, want_counts = expected(unsigned, ks, GT, 0, COLS)
    np.testing.assert_array_equal(idx, want_idx)
    assert counts == want_counts
    assert counts[2] == 0  # nothing exceeds 0xFFFF


@pytest.mark.parametrize("backend", BACKENDS)
def test_fp16_equality_and_a_dst_narrower_than_the_hits(backend):
    src = np.zeros((ROWS, COLS), np.float16)  # every element equals k = 0 in row 0: 64 hits, 16 fit
    src[1:] = np.arange(COLS, dtype=np.float16) % 3
    ks = [0, 1, 2, 5]
    idx, counts = launch(backend, kernel_of(pl.DT_FP16, EQ, 3, dst_cols=16), src, ks, dst_cols=16)
    want_idx, want_counts = expected(src.astype(np.float32), ks, EQ, 3, 16)
    np.testing.assert_array_equal(idx, want_idx)
    assert counts == want_counts == [64, 4 * 16, 4 * 16, 0]


# ------------------------------------------------------------------------------------------- errors
def misuse(which):
    def bad(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
        s = pl.make_tile(vec([ROWS, COLS], pl.DT_FP32), addr=0)
        kf = pl.make_tile(vec([1, KCOLS], pl.DT_FP32), addr=0x800)
        k = pl.make_tile(vec([1, KCOLS], pl.DT_UINT32), addr=0x800)
        d = pl.make_tile(vec([ROWS, COLS], pl.DT_UINT32), addr=0x1000)
        c = pl.make_tile(vec([1, KCOLS], pl.DT_UINT32), addr=0x2000)
        t = pl.make_tile(vec([1, 64], pl.DT_UINT32), addr=0x2100)
        i = pl.make_tile(vec([ROWS, COLS], pl.DT_INT32), addr=0x2200)
        f = pl.make_tile(vec([ROWS, COLS], pl.DT_FP32), addr=0x3200)
        with pl.section_vector():
            if which == "mode":
                pl.gather(d, s, k, c, t, cmp_mode=2)
            elif which == "k_dtype":
                pl.gather(d, s, kf, c, t, cmp_mode=4)
            else:
                pl.gather(f, s, i, i, cmp_mode=4)
    return bad


@pytest.mark.parametrize("which,message", [
    ("mode", r"takes cmp_mode=0 \(EQ\) or cmp_mode=4 \(GT\), got 2"),
    ("k_dtype", r"'k_value' has dtype FP32; supported: UINT16, UINT32"),
    ("index_form", r"cmp_mode=4 needs the compare form"),
])
def test_misuse_is_a_kernel_type_error(which, message):
    with pytest.raises(KernelTypeError, match=message):
        pl.jit(misuse(which), backend="interp")(np.zeros((ROWS, COLS), np.float32))
