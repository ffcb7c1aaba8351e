"""Sorting (sort32, mrgsort, mrgsort2) and the byte-level gather ops (gatherb, histogram) on interp,
cpu and sim, against a Python statement of their documented meaning (docs/language.md; the
src/pypto_pro/ops/sorting.py and ops/gather.py docstrings): descending order with stable ties, NaN
ordered by its sign, true merges, 32-byte block gathers, cumulative histograms.  Inputs are random
with many ties and the special float values, over several shapes and dtypes.  Errors: a wrong dtype,
memory, layout or argument is a KernelTypeError when the kernel compiles; bad runtime sizes and
offsets are a KernelRuntimeError on every backend.
"""
import functools
import math

import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

V = pl.MemorySpace.Vec


def addrs(*nbytes):
    """Consecutive UB addresses (256-byte aligned) for tiles of ``nbytes`` each."""
    out, at = [], 0
    for n in nbytes:
        out.append(at)
        at += -(-n // 256) * 256
    return out


# ------------------------------------------------------------------------------ records and the reference order
UINT = {2: np.uint16, 4: np.uint32}


def records(values, idx):
    """8-byte records (value, pad, UINT32 index) of the 1-D ``values`` (a 16- or 32-bit numpy dtype)."""
    values = np.ascontiguousarray(values)
    idx = np.asarray(idx, dtype=np.uint32)
    if values.itemsize == 4:
        r = np.empty((values.size, 2), np.uint32)
        r[:, 0], r[:, 1] = values.view(np.uint32), idx
    else:
        r = np.zeros((values.size, 4), np.uint16)
        r[:, 0], r[:, 2], r[:, 3] = values.view(np.uint16), idx & 0xFFFF, idx >> 16
    return r.reshape(-1).view(values.dtype)


def unpack(flat):
    """(values, indices) of a 1-D record array; the padding word of 16-bit records must be 0."""
    flat = np.ascontiguousarray(flat)
    if flat.itemsize == 4:
        r = flat.view(np.uint32).reshape(-1, 2)
        return r[:, 0].copy().view(flat.dtype), r[:, 1]
    r = flat.view(np.uint16).reshape(-1, 4)
    assert not r[:, 1].any()
    return r[:, 0].copy().view(flat.dtype), r[:, 2].astype(np.uint32) | (r[:, 3].astype(np.uint32) << 16)


def keys_of(values):
    if values.dtype.kind in "iu":
        return [(0, int(v)) for v in values]
    out = []
    for v in values.astype(np.float32):  # exact for fp16/bf16; keeps the NaN's sign
        f = float(v)
        out.append((-1 if np.signbit(v) else 1, 0.0) if math.isnan(f) else (0, f))
    return out


def ref_sort_desc(values):
    """Stable descending order (positions) of ``values`` in the documented order."""
    k = keys_of(values)
    return sorted(range(len(values)), key=lambda i: k[i], reverse=True)


def ref_merge(lists, exhausted=False):
    """The documented merge of record arrays: the largest head wins, ties to the lower list; with
    ``exhausted``, stop once a list has no record left."""
    vals = [unpack(x)[0] for x in lists]
    ks = [keys_of(v) for v in vals]
    recs = [x.reshape(len(v), -1) for x, v in zip(lists, vals)]
    heads = [0] * len(lists)
    out = []
    while not (exhausted and any(len(v) == 0 for v in vals)):
        best = None
        for i in range(len(lists)):
            if heads[i] < len(vals[i]) and (best is None or ks[i][heads[i]] > ks[best][heads[best]]):
                best = i
        if best is None:
            break
        out.append(recs[best][heads[best]])
        heads[best] += 1
        if exhausted and heads[best] == len(vals[best]):
            break
    return np.asarray(out, dtype=recs[0].dtype).reshape(-1)


def ref_sort32(values, idx):
    """sort32 of a 2-D ``values`` (rows x cols): records per row, every 32 columns sorted."""
    rows, cols = values.shape
    idx = np.broadcast_to(idx, values.shape)
    out = []
    for r in range(rows):
        row = []
        for g0 in range(0, cols, 32):
            v, i = values[r, g0:g0 + 32], idx[r, g0:g0 + 32]
            order = ref_sort_desc(v)
            row.append(records(v[order], i[order]))
        out.append(np.concatenate(row))
    return np.stack(out)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.itemsize]) if a.itemsize in UINT else a.view(np.uint8)


def assert_same_bits(got, want):
    np.testing.assert_array_equal(bits(got), bits(np.asarray(want, dtype=got.dtype)))


def special_values(dtype, n, rng, pool=8):
    """``n`` values with many ties (integers from a small pool) and the special values: +-0, +-inf, +-NaN."""
    v = rng.integers(-pool // 2, pool // 2, n).astype(dtype)
    if np.dtype(dtype).kind == "f" and n >= 8:
        ubits = UINT[np.dtype(dtype).itemsize]
        sign = ubits(1) << ubits(8 * np.dtype(dtype).itemsize - 1)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
        neg_nan = (np.array([np.nan], dtype=dtype).view(ubits) | sign).view(dtype)
        where = rng.choice(n, 6, replace=False)
        v[where[:5]] = specials
        v[where[5]] = neg_nan[0]
    return v


# ================================================================================================== sorting
@functools.lru_cache(maxsize=None)
def sort32_case(dtype: str, rows: int, cols: int, vcols: int, idx_rows: int, with_tmp: bool):
    """A sort32 kernel: a rows x cols tile of ``dtype`` with ``vcols`` valid columns, idx with ``idx_rows``
    rows (1: shared), tmp when ``with_tmp``."""
    DT = getattr(pl, "DT_" + dtype)
    es = DT.nbytes
    rec = 8 // es
    a_src, a_idx, a_dst, a_tmp = addrs(rows * cols * es, idx_rows * cols * 4, rows * cols * 8, 32 * es)
    t_src = pl.TileType(shape=[rows, cols], dtype=DT, target_memory=V, valid_shape=[rows, vcols])
    t_idx = pl.TileType(shape=[idx_rows, cols], dtype=pl.DT_UINT32, target_memory=V, valid_shape=[idx_rows, vcols])
    t_dst = pl.TileType(shape=[rows, cols * rec], dtype=DT, target_memory=V, valid_shape=[rows, vcols * rec])
    t_tmp = pl.TileType(shape=[1, 32], dtype=DT, target_memory=V)

    def sort32_case_kernel(a: pl.Tensor[[rows, vcols], DT], ix: pl.Tensor[[idx_rows, vcols], pl.DT_UINT32],
                           out: pl.Tensor[[rows, vcols * rec], DT]):
        g_src = pl.make_tile_group(type=t_src, addrs=a_src, mutex_ids=[0])
        g_idx = pl.make_tile_group(type=t_idx, addrs=a_idx, mutex_ids=[1])
        g_dst = pl.make_tile_group(type=t_dst, addrs=a_dst, mutex_ids=[2])
        g_tmp = pl.make_tile_group(type=t_tmp, addrs=a_tmp, mutex_ids=[3])
        with pl.section_vector():
            s, i, d, t = g_src.current(), g_idx.current(), g_dst.current(), g_tmp.current()
            pl.load(s, a, [0, 0])
            pl.load(i, ix, [0, 0])
            if with_tmp:
                pl.sort32(d, s, i, t)
            else:
                pl.sort32(d, s, i)
            pl.store(out, d, [0, 0])
    return sort32_case_kernel


SORT32_CASES = [("FP32", 1, 32, 32, 1), ("FP16", 4, 64, 64, 1), ("FP32", 3, 128, 128, 3), ("FP16", 2, 64, 50, 2),
                ("FP32", 5, 64, 37, 1), ("FP16", 1, 256, 256, 1)]


@pytest.mark.parametrize("case", SORT32_CASES, ids=lambda c: "-".join(map(str, c)))
def test_sort32_random(backend, case):
    dtype, rows, cols, vcols, idx_rows = case
    np_dtype = {"FP16": np.float16, "FP32": np.float32}[dtype]
    rng = np.random.default_rng(rows * 1000 + vcols)
    a = special_values(np_dtype, rows * vcols, rng).reshape(rows, vcols)
    idx = rng.integers(0, 2**32, (idx_rows, vcols), dtype=np.uint64).astype(np.uint32)
    rec = 8 // np.dtype(np_dtype).itemsize
    kernel = sort32_case(dtype, rows, cols, vcols, idx_rows, vcols % 32 != 0)
    out = run_on(kernel, backend, a, idx, np.zeros((rows, vcols * rec), np_dtype))[2]
    assert_same_bits(out, ref_sort32(a, idx))


def test_sort32_tail_without_tmp_raises(backend):
    kernel = sort32_case("FP32", 1, 64, 40, 1, False)
    with pytest.raises(pl.KernelRuntimeError, match="pl.sort32: src's valid width 40 is not a multiple of 32; "
                                                    "the last group needs the tmp tile"):
        run_on(kernel, backend, np.zeros((1, 40), np.float32), np.zeros((1, 40), np.uint32), np.zeros((1, 80), np.float32))



@pytest.mark.parametrize("descending_ramp", [True, False], ids=["ramp", "specials"])
def test_sort32_one_group_of_fp16(backend, descending_ramp):
    """One row of 32 FP16 values into 32 records (dst 4x as wide); indices with both halves set."""
    rng = np.random.default_rng(29)
    a = (np.arange(32) * 0.75 - 6).astype(np.float16).reshape(1, 32) if descending_ramp else \
        special_values(np.float16, 32, rng).reshape(1, 32)  # the ramp ascends: sorting reverses it
    idx = (np.arange(32, dtype=np.uint32) * 131073 + 3).reshape(1, 32)
    out = run_on(sort32_case("FP16", 1, 32, 32, 1, False), backend, a, idx, np.zeros((1, 128), np.float16))[2]
    assert_same_bits(out, ref_sort32(a, idx))
    vals, ix = unpack(out[0])
    if descending_ramp:
        np.testing.assert_array_equal(vals, np.sort(a[0])[::-1])
    np.testing.assert_array_equal(np.sort(ix), np.sort(idx[0]))


def test_sort32_a_short_row_with_tmp(backend):
    """16 values (half a group): the tail is sorted with the help of tmp, one record per value."""
    a = special_values(np.float16, 16, np.random.default_rng(33)).reshape(1, 16)
    idx = np.arange(500, 516, dtype=np.uint32).reshape(1, 16)
    out = run_on(sort32_case("FP16", 1, 16, 16, 1, True), backend, a, idx, np.zeros((1, 64), np.float16))[2]
    assert_same_bits(out, ref_sort32(a, idx))


def sorted_blocks(np_dtype, nblocks, per, rng, sort=True, pool=8):
    """``nblocks`` blocks of ``per`` records (values with ties and specials, unique indices), each sorted."""
    out = []
    for b in range(nblocks):
        v = special_values(np_dtype, per, rng, pool) if np.dtype(np_dtype).kind == "f" else \
            rng.integers(-pool, pool, per).astype(np_dtype)
        i = np.arange(b * per, (b + 1) * per, dtype=np.uint32) + 1000
        order = ref_sort_desc(v) if sort else list(range(per))
        out.append(records(v[order], i[order]))
    return out


@functools.lru_cache(maxsize=None)
def mrgsort_case(dtype: str, cols: int, vcols: int, block_len: int):
    DT = getattr(pl, "DT_" + dtype)
    a0, a1 = addrs(cols * DT.nbytes, cols * DT.nbytes)
    tt = pl.TileType(shape=[1, cols], dtype=DT, target_memory=V, valid_shape=[1, vcols])

    def mrgsort_case_kernel(a: pl.Tensor[[1, vcols], DT], out: pl.Tensor[[1, vcols], DT]):
        g_src = pl.make_tile_group(type=tt, addrs=a0, mutex_ids=[0])
        g_dst = pl.make_tile_group(type=tt, addrs=a1, mutex_ids=[1])
        with pl.section_vector():
            s, d = g_src.current(), g_dst.current()
            pl.load(s, a, [0, 0])
            pl.mrgsort(d, s, block_len=block_len)
            pl.store(out, d, [0, 0])
    return mrgsort_case_kernel


MRGSORT_CASES = [("FP32", 512, 512, 64, True), ("FP16", 256, 256, 16, True), ("FP32", 256, 128, 32, False),
                 ("BF16", 128, 128, 32, True), ("INT32", 64, 64, 16, True), ("UINT16", 256, 256, 64, False)]
NP = {"FP16": np.float16, "FP32": np.float32, "INT32": np.int32, "UINT16": np.uint16, "INT16": np.int16}


@pytest.mark.parametrize("case", MRGSORT_CASES, ids=lambda c: "-".join(map(str, c)))
def test_mrgsort_random(backend, case):
    """Several groups of 4 blocks; sorted blocks, and unsorted ones (a true merge is still defined)."""
    dtype, cols, vcols, block_len, sort = case
    np_dtype = NP.get(dtype) or pl.DT_BF16.require_numpy()
    rec = 8 // np.dtype(np_dtype).itemsize
    per = block_len // rec
    groups = vcols // (4 * block_len)
    blocks = sorted_blocks(np_dtype, 4 * groups, per, np.random.default_rng(vcols + block_len), sort)
    a = np.concatenate(blocks).reshape(1, vcols)
    out = run_on(mrgsort_case(dtype, cols, vcols, block_len), backend, a, np.zeros((1, vcols), np_dtype))[1]
    want = np.concatenate([ref_merge(blocks[4 * g:4 * g + 4]) for g in range(groups)])
    assert_same_bits(out[0], want)


def test_mrgsort_partial_group_raises(backend):
    kernel = mrgsort_case("FP32", 128, 96, 16)
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.mrgsort: src's valid width 96 is not a multiple of "
                                                    r"4 \* block_len \(64\)"):
        run_on(kernel, backend, np.zeros((1, 96), np.float32), np.zeros((1, 96), np.float32))



def test_mrgsort_four_long_fp16_blocks(backend):
    """4 sorted blocks of 256 FP16 elements (64 records) in one 1024-wide row become one sorted list."""
    blocks = sorted_blocks(np.float16, 4, 64, np.random.default_rng(37))
    a = np.concatenate(blocks).reshape(1, 1024)
    out = run_on(mrgsort_case("FP16", 1024, 1024, 256), backend, a, np.zeros((1, 1024), np.float16))[1]
    assert_same_bits(out[0], ref_merge(blocks))
    vals, ix = unpack(out[0])
    assert keys_of(vals) == sorted(keys_of(vals), reverse=True)
    np.testing.assert_array_equal(np.sort(ix), np.arange(1000, 1256))


@functools.lru_cache(maxsize=None)
def mrgsort2_case(dtype: str, lens: tuple, dcols: int, exhausted: bool, load_dst: bool):
    """mrgsort2 of len(lens) sources of lens[i] elements into a [1, dcols] dst (loaded first when
    ``load_dst``, so that unwritten columns keep the input's values)."""
    DT = getattr(pl, "DT_" + dtype)
    es = DT.nbytes
    tmp_cols = max(dcols, sum(lens))
    at = addrs(*[n * es for n in lens], dcols * es, tmp_cols * es)
    types = [pl.TileType(shape=[1, n], dtype=DT, target_memory=V) for n in lens]
    t_dst = pl.TileType(shape=[1, dcols], dtype=DT, target_memory=V)
    t_tmp = pl.TileType(shape=[1, tmp_cols], dtype=DT, target_memory=V)
    n = len(lens)

    def mrgsort2_case_kernel(s0: pl.Tensor[[1, lens[0]], DT], s1: pl.Tensor[[1, lens[1]], DT],
                             s2: pl.Tensor[[1, lens[-2]], DT], s3: pl.Tensor[[1, lens[-1]], DT],
                             out: pl.Tensor[[1, dcols], DT]):
        g0 = pl.make_tile_group(type=types[0], addrs=at[0], mutex_ids=[0])
        g1 = pl.make_tile_group(type=types[1], addrs=at[1], mutex_ids=[1])
        g2 = pl.make_tile_group(type=types[-2], addrs=at[n - 2], mutex_ids=[2])
        g3 = pl.make_tile_group(type=types[-1], addrs=at[n - 1], mutex_ids=[3])
        gd = pl.make_tile_group(type=t_dst, addrs=at[n], mutex_ids=[4])
        gt = pl.make_tile_group(type=t_tmp, addrs=at[n + 1], mutex_ids=[5])
        with pl.section_vector():
            t0, t1, t2, t3 = g0.current(), g1.current(), g2.current(), g3.current()
            d, t = gd.current(), gt.current()
            if load_dst:
                pl.load(d, out, [0, 0])
            pl.load(t0, s0, [0, 0])
            pl.load(t1, s1, [0, 0])
            if n == 2:
                pl.mrgsort2(t0, t1, d, t, exhausted=exhausted)
            elif n == 3:
                pl.load(t3, s3, [0, 0])
                pl.mrgsort2(t0, t1, d, t, t3, exhausted=exhausted)
            else:
                pl.load(t2, s2, [0, 0])
                pl.load(t3, s3, [0, 0])
                pl.mrgsort2(t0, t1, d, t, t2, t3, exhausted=exhausted)
            pl.store(out, d, [0, 0])
    return mrgsort2_case_kernel


MRGSORT2_CASES = [("FP16", (64, 128, 32), 224, False, True), ("FP32", (32, 64, 96, 16), 208, False, True),
                  ("FP32", (64, 32, 64, 128), 96, False, True), ("FP16", (128, 64, 32, 64), 288, True, True),
                  ("FP32", (32, 64), 96, True, True), ("FP16", (32, 32, 64), 128, True, True),
                  ("FP32", (64, 32, 64), 160, False, False), ("FP16", (64, 128, 64), 256, True, False)]


@pytest.mark.parametrize("case", MRGSORT2_CASES, ids=lambda c: "-".join(map(str, c)))
def test_mrgsort2_random(backend, case):
    """2-, 3- and 4-way merges of lists of different lengths (ties across lists); with ``exhausted`` the
    merge stops when a list runs out and dst's other columns keep their values.  Unsorted lists
    (``sort`` False) still merge deterministically (the largest head wins)."""
    dtype, lens, dcols, exhausted, sort = case
    np_dtype = NP[dtype]
    rec = 8 // np.dtype(np_dtype).itemsize
    rng = np.random.default_rng(sum(lens) + dcols)
    lists = [sorted_blocks(np_dtype, 1, n // rec, rng, sort=sort, pool=6)[0] for n in lens]
    srcs = [x.reshape(1, -1) for x in lists]
    args = srcs[:2] + [srcs[-2], srcs[-1]]
    before = np.full((1, dcols), 3, np_dtype)
    out = run_on(mrgsort2_case(dtype, lens, dcols, exhausted, exhausted), backend, *args, before)[4]
    merged = ref_merge(lists, exhausted)
    want = before[0].copy()
    m = min(dcols, merged.size)
    want[:m] = merged[:m]
    assert_same_bits(out[0], want)
    if exhausted:
        assert merged.size < sum(lens)  # these cases do stop early


def test_mrgsort2_dst_longer_than_the_sources_raises(backend):
    kernel = mrgsort2_case("FP32", (32, 64), 128, False, False)
    s0, s1 = np.zeros((1, 32), np.float32), np.zeros((1, 64), np.float32)
    with pytest.raises(pl.KernelRuntimeError, match="pl.mrgsort2: dst's valid width asks for 64 records but the "
                                                    "sources hold 48"):
        run_on(kernel, backend, s0, s1, s0, s1, np.zeros((1, 128), np.float32))



def test_mrgsort2_two_fp32_lists_into_a_dst_as_long_as_one(backend):
    """Two sorted lists of 128 FP32 records each; dst holds 128 records: the largest half of the merge."""
    s0, s1 = sorted_blocks(np.float32, 2, 128, np.random.default_rng(41))
    out = run_on(mrgsort2_case("FP32", (256, 256), 256, False, False), backend, s0.reshape(1, 256),
                 s1.reshape(1, 256), s0.reshape(1, 256), s1.reshape(1, 256), np.zeros((1, 256), np.float32))[4]
    assert_same_bits(out[0], ref_merge([s0, s1])[:256])


# ============================================================================================ byte gathers
def ref_gatherb(src, offsets):
    raw = np.ascontiguousarray(src).view(np.uint8).reshape(-1)
    blocks = raw[offsets.astype(np.int64)[:, :, None] + np.arange(32)]
    return np.ascontiguousarray(blocks).view(src.dtype).reshape(offsets.shape[0], -1)


@functools.lru_cache(maxsize=None)
def gatherb_case(dtype: str, rows: int, cols: int, src_rows: int, src_valid_rows: int):
    """gatherb into a rows x cols out from a src_rows x cols src of which only src_valid_rows are loaded."""
    DT = getattr(pl, "DT_" + dtype)
    es = DT.nbytes
    nb = cols * es // 32
    ob = -(-nb * 4 // 32) * 32 // 4  # offsets tile columns, 32-byte rows
    a_src, a_off, a_out = addrs(src_rows * cols * es, rows * ob * 4, rows * cols * es)
    t_src = pl.TileType(shape=[src_rows, cols], dtype=DT, target_memory=V, valid_shape=[src_valid_rows, cols])
    t_off = pl.TileType(shape=[rows, ob], dtype=pl.DT_UINT32, target_memory=V, valid_shape=[rows, nb])
    t_out = pl.TileType(shape=[rows, cols], dtype=DT, target_memory=V)

    def gatherb_case_kernel(src: pl.Tensor[[src_valid_rows, cols], DT], offsets: pl.Tensor[[rows, nb], pl.DT_UINT32],
                            out: pl.Tensor[[rows, cols], DT]):
        g_src = pl.make_tile_group(type=t_src, addrs=a_src, mutex_ids=[0])
        g_off = pl.make_tile_group(type=t_off, addrs=a_off, mutex_ids=[1])
        g_out = pl.make_tile_group(type=t_out, addrs=a_out, mutex_ids=[2])
        with pl.section_vector():
            s, o, d = g_src.current(), g_off.current(), g_out.current()
            pl.load(s, src, [0, 0])
            pl.load(o, offsets, [0, 0])
            pl.gatherb(d, s, o)
            pl.store(out, d, [0, 0])
    return gatherb_case_kernel


GATHERB_CASES = [("FP32", 8, 64, 8, True), ("INT8", 4, 128, 16, False), ("UINT16", 16, 32, 4, True),
                 ("BF16", 8, 48, 8, False), ("INT32", 2, 8, 32, True)]


@pytest.mark.parametrize("case", GATHERB_CASES, ids=lambda c: "-".join(map(str, c)))
def test_gatherb_random(backend, case):
    """Random 32-byte blocks of src: 32-byte aligned offsets, or any byte offset (blocks straddling
    elements and rows); the bytes are copied exactly (NaN payloads included)."""
    dtype, rows, cols, src_rows, aligned = case
    np_dtype = NP.get(dtype) or {"INT8": np.int8, "BF16": pl.DT_BF16.require_numpy()}[dtype]
    rng = np.random.default_rng(rows * cols)
    src = rng.integers(0, 256, (src_rows, cols * np.dtype(np_dtype).itemsize), dtype=np.uint8).view(np_dtype)
    total = src.nbytes
    nb = cols * np.dtype(np_dtype).itemsize // 32
    offsets = rng.integers(0, total - 31, (rows, nb)).astype(np.uint32)
    if aligned:
        offsets = offsets // 32 * 32
    offsets[-1, -1] = total - 32  # the last block of src
    out = run_on(gatherb_case(dtype, rows, cols, src_rows, src_rows), backend, src, offsets,
              np.zeros((rows, cols), np_dtype))[2]
    assert_same_bits(out, ref_gatherb(src, offsets))


def test_gatherb_reads_only_the_rows_its_blocks_touch(backend):
    """src's rows 4..7 are never written: blocks inside rows 0..3 read no uninitialised byte (the strict
    simulator would raise), and a block in row 5 does."""
    kernel = gatherb_case("FP32", 4, 32, 8, 4)
    src = np.arange(4 * 32, dtype=np.float32).reshape(4, 32)
    offsets = np.array([[96, 0, 32, 64]] * 4, np.uint32) + np.arange(4, dtype=np.uint32)[:, None] * 128
    out = run_on(kernel, backend, src, offsets, np.zeros((4, 32), np.float32))[2]
    np.testing.assert_array_equal(out, ref_gatherb(src, offsets))
    if backend == "sim":
        offsets[1, 2] = 5 * 128
        with pytest.raises(pl.KernelUninitError):
            run_on(kernel, backend, src, offsets, np.zeros((4, 32), np.float32))


def test_gatherb_block_past_the_end_raises(backend):
    kernel = gatherb_case("FP32", 8, 64, 8, 8)
    src = np.zeros((8, 64), np.float32)
    offsets = np.zeros((8, 8), np.uint32)
    offsets[2, 5] = 8 * 64 * 4 - 31
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.gatherb: the 32-byte block at byte offset 2017 "
                                                    r"\(offsets\[2, 5\]\) reaches past src's 2048 bytes"):
        run_on(kernel, backend, src, offsets, np.zeros((8, 64), np.float32))



def test_gatherb_with_consecutive_offsets_copies_the_source(backend):
    src = (np.arange(32 * 128) % 1500 * 0.5 - 300).astype(np.float16).reshape(32, 128)
    offsets = (np.arange(32 * 8, dtype=np.uint32) * 32).reshape(32, 8)  # block c of row r: bytes of row r
    dst = run_on(gatherb_case("FP16", 32, 128, 32, 32), backend, src, offsets, np.zeros((32, 128), np.float16))[2]
    np.testing.assert_array_equal(dst, src)


def _ref_hist(src, idx, is_msb, wide):
    rows = src.shape[0]
    out = np.zeros((rows, 256), np.uint32)
    for r in range(rows):
        counts = [0] * 256
        for v in (int(x) for x in src[r]):
            if is_msb:
                counts[v >> (24 if wide else 8)] += 1
            elif wide:
                if (v >> 24, (v >> 16) & 255, (v >> 8) & 255) == tuple(int(x) for x in idx[:3, 0]):
                    counts[v & 255] += 1
            elif v >> 8 == int(idx[r, 0]):
                counts[v & 255] += 1
        out[r] = np.cumsum(counts)
    return out


@functools.lru_cache(maxsize=None)
def histogram_case(dtype: str, rows: int, cols: int, is_msb: bool):
    """histogram of a rows x cols tile; idx as the page describes: UINT16 -> [rows, 1] DN (a 32-row
    tile), UINT32 -> [3, 32] ND (3 rows, the filter in column 0)."""
    DT = getattr(pl, "DT_" + dtype)
    wide = dtype == "UINT32"
    ishape = [3, 32] if wide else [rows, 1]
    a_src, a_idx, a_dst = addrs(rows * cols * DT.nbytes, 32 * 32, rows * 256 * 4)
    t_src = pl.TileType(shape=[rows, cols], dtype=DT, target_memory=V)
    t_idx = (pl.TileType(shape=[3, 32], dtype=pl.DT_UINT8, target_memory=V) if wide else
             pl.TileType(shape=[-(-rows // 32) * 32, 1], dtype=pl.DT_UINT8, target_memory=V, layout=pl.DN,
                         valid_shape=[rows, 1]))
    t_dst = pl.TileType(shape=[rows, 256], dtype=pl.DT_UINT32, target_memory=V)

    def histogram_case_kernel(src: pl.Tensor[[rows, cols], DT], idx: pl.Tensor[ishape, pl.DT_UINT8],
                              out: pl.Tensor[[rows, 256], pl.DT_UINT32]):
        g_src = pl.make_tile_group(type=t_src, addrs=a_src, mutex_ids=[0])
        g_idx = pl.make_tile_group(type=t_idx, addrs=a_idx, mutex_ids=[1])
        g_dst = pl.make_tile_group(type=t_dst, addrs=a_dst, mutex_ids=[2])
        with pl.section_vector():
            s, i, d = g_src.current(), g_idx.current(), g_dst.current()
            pl.load(s, src, [0, 0])
            pl.load(i, idx, [0, 0])
            pl.histogram(d, s, i, is_msb=is_msb)
            pl.store(out, d, [0, 0])
    return histogram_case_kernel


HISTOGRAM_CASES = [("UINT16", 8, 64, False), ("UINT16", 3, 160, True), ("UINT32", 4, 64, True),
                   ("UINT32", 6, 40, False), ("UINT32", 2, 16, False)]


@pytest.mark.parametrize("case", HISTOGRAM_CASES, ids=lambda c: "-".join(map(str, c)))
def test_histogram_random(backend, case):
    dtype, rows, cols, is_msb = case
    rng = np.random.default_rng(rows * cols)
    wide = dtype == "UINT32"
    if wide:  # upper bytes from a small set, so the LSB filter keeps some elements
        up = rng.choice(np.array([0x12345, 0x12346, 0xFF0001, 0x12345], np.int64), (rows, cols))
        src = ((up << 8) | rng.integers(0, 256, (rows, cols))).astype(np.uint32)
        idx = np.zeros((3, 32), np.uint8)
        idx[:, 0] = [0x01, 0x23, 0x45]
    else:
        src = rng.integers(0, 1 << 16, (rows, cols)).astype(np.uint16)
        src[:, ::3] = (src[:, ::3] & 0xFF) | 0x4200  # a top byte that idx selects
        idx = np.full((rows, 1), 0x42, np.uint8)
        idx[1, 0] = src[1, 1] >> 8
    out = run_on(histogram_case(dtype, rows, cols, is_msb), backend, src, idx,
              np.zeros((rows, 256), np.uint32))[2]
    want = _ref_hist(src, idx, is_msb, wide)
    np.testing.assert_array_equal(out, want)
    if not is_msb:
        assert want[:, -1].min() > 0  # the filter keeps elements of every row


# ================================================================================================== errors
def sort32_bad_src_dtype(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_INT32, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=V), addr=256)
    i = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_UINT32, target_memory=V), addr=512)
    with pl.section_vector():
        pl.sort32(d, s, i)


def sort32_bad_idx_dtype(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_FP32, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=V), addr=256)
    i = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_INT32, target_memory=V), addr=512)
    with pl.section_vector():
        pl.sort32(d, s, i)


def sort32_mat_src(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[16, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat), addr=0)
    d = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=V), addr=256)
    i = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_UINT32, target_memory=V), addr=512)
    with pl.section_vector():
        pl.sort32(d, s, i)


def mrgsort_bad_block_len(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP16, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP16, target_memory=V), addr=256)
    with pl.section_vector():
        pl.mrgsort(d, s, block_len=6)


def mrgsort_two_rows(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[2, 64], dtype=pl.DT_FP32, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[2, 64], dtype=pl.DT_FP32, target_memory=V), addr=1024)
    with pl.section_vector():
        pl.mrgsort(d, s, block_len=8)


def mrgsort_int8(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_INT8, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_INT8, target_memory=V), addr=256)
    with pl.section_vector():
        pl.mrgsort(d, s, block_len=8)


T64 = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=V)


def mrgsort2_five_sources(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    a, b, c = pl.make_tile(T64, addr=0), pl.make_tile(T64, addr=256), pl.make_tile(T64, addr=512)
    d, t = pl.make_tile(T64, addr=768), pl.make_tile(T64, addr=1024)
    with pl.section_vector():
        pl.mrgsort2(a, b, d, t, c, a, b)


def mrgsort2_int32(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    ti = pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=V)
    a, b = pl.make_tile(ti, addr=0), pl.make_tile(ti, addr=256)
    d, t = pl.make_tile(ti, addr=768), pl.make_tile(ti, addr=1024)
    with pl.section_vector():
        pl.mrgsort2(a, b, d, t)


def mrgsort2_small_tmp(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    a, b, d = pl.make_tile(T64, addr=0), pl.make_tile(T64, addr=256), pl.make_tile(T64, addr=768)
    t = pl.make_tile(pl.TileType(shape=[1, 32], dtype=pl.DT_FP32, target_memory=V), addr=1024)
    with pl.section_vector():
        pl.mrgsort2(a, b, d, t)


def mrgsort2_tmp_is_a_source(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    a, b, d = pl.make_tile(T64, addr=0), pl.make_tile(T64, addr=256), pl.make_tile(T64, addr=768)
    with pl.section_vector():
        pl.mrgsort2(a, b, d, b)


def mrgsort2_runtime_exhausted(x: pl.Tensor[[8, 32], pl.DT_FP32], flag: pl.DT_INT32):
    a, b = pl.make_tile(T64, addr=0), pl.make_tile(T64, addr=256)
    d, t = pl.make_tile(T64, addr=768), pl.make_tile(T64, addr=1024)
    with pl.section_vector():
        pl.mrgsort2(a, b, d, t, exhausted=flag > 0)


def gatherb_int32_offsets(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=V), addr=1024)
    o = pl.make_tile(pl.TileType(shape=[8, 8], dtype=pl.DT_INT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.gatherb(d, s, o)


def gatherb_dtype_mismatch(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=V), addr=0)
    d = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_INT32, target_memory=V), addr=1024)
    o = pl.make_tile(pl.TileType(shape=[8, 8], dtype=pl.DT_UINT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.gatherb(d, s, o)


def gatherb_dn_src(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=V, layout=pl.DN), addr=0)
    d = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=V), addr=1024)
    o = pl.make_tile(pl.TileType(shape=[8, 8], dtype=pl.DT_UINT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.gatherb(d, s, o)


def histogram_int16_src(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_INT16, target_memory=V), addr=0)
    i = pl.make_tile(pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=V, layout=pl.DN), addr=1024)
    d = pl.make_tile(pl.TileType(shape=[8, 256], dtype=pl.DT_UINT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.histogram(d, s, i, is_msb=True)


def histogram_narrow_dst(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_UINT16, target_memory=V), addr=0)
    i = pl.make_tile(pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=V, layout=pl.DN), addr=1024)
    d = pl.make_tile(pl.TileType(shape=[8, 128], dtype=pl.DT_UINT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.histogram(d, s, i, is_msb=True)


def histogram_int32_dst(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_UINT16, target_memory=V), addr=0)
    i = pl.make_tile(pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=V, layout=pl.DN), addr=1024)
    d = pl.make_tile(pl.TileType(shape=[8, 256], dtype=pl.DT_INT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.histogram(d, s, i, is_msb=False)


def histogram_is_msb_int(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    s = pl.make_tile(pl.TileType(shape=[8, 32], dtype=pl.DT_UINT16, target_memory=V), addr=0)
    i = pl.make_tile(pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=V, layout=pl.DN), addr=1024)
    d = pl.make_tile(pl.TileType(shape=[8, 256], dtype=pl.DT_UINT32, target_memory=V), addr=2048)
    with pl.section_vector():
        pl.histogram(d, s, i, is_msb=1)


TYPE_ERRORS = {
    "sort32 INT32 src": (sort32_bad_src_dtype, r"pl.sort32: 'src' has dtype INT32; supported: FP16, FP32"),
    "sort32 INT32 idx": (sort32_bad_idx_dtype, r"pl.sort32: 'idx' has dtype INT32; supported: UINT32"),
    "sort32 Mat src": (sort32_mat_src, r"pl.sort32: 'src' must be a Vec tile, got a Mat tile"),
    "mrgsort block_len": (mrgsort_bad_block_len, r"pl.mrgsort: block_len must be a compile-time positive int, a "
                                                 r"multiple of 4 \(FP16 elements per 8-byte record\), got 6"),
    "mrgsort two rows": (mrgsort_two_rows, r"pl.mrgsort: 'src' must be a one-row tile, got shape \[2, 64\]"),
    "mrgsort INT8": (mrgsort_int8, r"pl.mrgsort: 'src' has dtype INT8; supported: FP16, BF16, INT16, UINT16, FP32"),
    "mrgsort2 five sources": (mrgsort2_five_sources, r"pl.mrgsort2: takes 2 to 4 sources .*got 5"),
    "mrgsort2 INT32": (mrgsort2_int32, r"pl.mrgsort2: 'src0' has dtype INT32; supported: FP16, FP32"),
    "mrgsort2 small tmp": (mrgsort2_small_tmp, r"pl.mrgsort2: 'tmp' has 32 columns, fewer than dst's 64"),
    "mrgsort2 tmp is a source": (mrgsort2_tmp_is_a_source, r"pl.mrgsort2: 'tmp' cannot be the same tile as 'src1'"),
    "mrgsort2 runtime exhausted": (mrgsort2_runtime_exhausted, r"pl.mrgsort2: 'exhausted' must be a compile-time "
                                                               r"value"),
    "gatherb INT32 offsets": (gatherb_int32_offsets, r"pl.gatherb: 'offsets' has dtype INT32; supported: UINT32"),
    "gatherb dtype mismatch": (gatherb_dtype_mismatch, r"pl.gatherb: 'src' has dtype FP32 but 'out' has INT32"),
    "gatherb DN src": (gatherb_dn_src, r"pl.gatherb: 'src' must be a row-major \(pl.ND\) tile, got layout DN"),
    "histogram INT16 src": (histogram_int16_src, r"pl.histogram: 'src' has dtype INT16; supported: UINT16, UINT32"),
    "histogram 128 bins": (histogram_narrow_dst, r"pl.histogram: 'dst' needs at least 256 columns"),
    "histogram INT32 dst": (histogram_int32_dst, r"pl.histogram: 'dst' has dtype INT32; supported: UINT32"),
    "histogram is_msb=1": (histogram_is_msb_int, r"pl.histogram: is_msb must be a compile-time bool, got 1"),
}


@pytest.mark.parametrize("case", list(TYPE_ERRORS))
def test_type_errors(case):
    fn, match = TYPE_ERRORS[case]
    extra = [1] if "flag" in fn.__code__.co_varnames else []
    with pytest.raises(pl.KernelTypeError, match=match):
        pl.jit(fn, backend="interp")(np.zeros((8, 32), np.float32), *extra)


def test_histogram_counts_are_cumulative(backend):
    """Row 0 has one element with each top byte 0..15: counts 1, 2, ..., 16, then 16 up to bin 255.
    Row 1 has all 16 elements in bin 0x80: 0 below it, 16 from it on."""
    src = np.zeros((2, 16), np.uint16)
    src[0] = (np.arange(16) << 8) | 0x5A
    src[1] = 0x8000 + np.arange(16)
    idx = np.zeros((2, 1), np.uint8)
    out = run_on(histogram_case("UINT16", 2, 16, True), backend, src, idx, np.zeros((2, 256), np.uint32))[2]
    np.testing.assert_array_equal(out[0], np.minimum(np.arange(1, 257), 16))
    np.testing.assert_array_equal(out[1], np.where(np.arange(256) >= 0x80, 16, 0))
