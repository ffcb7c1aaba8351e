"""index_add(_), index_put_, scatter_update, one_hot, pad, atomic_add, topk, argsort against torch.

Integer and copy results are compared exactly.  Float accumulation (index_add, index_put_ with
accumulate, atomic_add) adds in index order in FP32 with one rounding per addition, as torch's CPU
kernels do; those comparisons allow 1e-6 relative error for the ``alpha`` scaling (rounded before
the addition here)."""
import pytest
import torch
import torch.nn.functional as F

import pypto

EXACT = {"rtol": 0, "atol": 0}
CLOSE = {"rtol": 1e-6, "atol": 1e-6}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def stable_sort(x, dim, descending):
    return torch.sort(x, dim=dim, descending=descending, stable=True)


# ---------------------------------------------------------------------------------------------- index_add
INDEX_ADD_CASES = [((6, 40), 0), ((6, 40), 1), ((6, 40), -1), ((3, 5, 36), 1), ((3, 5, 36), -3)]


@pytest.mark.parametrize("shape,dim", INDEX_ADD_CASES, ids=[f"{len(s)}d-dim{d}" for s, d in INDEX_ADD_CASES])
@pytest.mark.parametrize("itype", [torch.int32, torch.int64])
def test_index_add(shape, dim, itype):
    """Duplicate indices accumulate in index order; ``alpha`` scales the source."""
    g = gen(len(shape) * 10 + dim)
    x = torch.randn(shape, generator=g)
    size = shape[dim]
    index = torch.randint(0, size, (size + 3,), generator=g, dtype=itype)
    src_shape = list(shape)
    src_shape[dim] = size + 3
    src = torch.randn(src_shape, generator=g)
    out = torch.empty(shape)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.index_add(a, dim, i, s, alpha=0.5) * 2

    k(x, index, src, out)
    torch.testing.assert_close(out, torch.index_add(x, dim, index, src, alpha=0.5) * 2, **CLOSE)


@pytest.mark.both_backends
def test_index_add_inplace_int_exact():
    """``index_add_`` (also as a method) on INT32 data, many duplicates: exact."""
    g = gen(1)
    x = torch.randint(-50, 50, (8, 24), generator=g, dtype=torch.int32)
    index = torch.randint(0, 24, (40,), generator=g, dtype=torch.int64)
    src = torch.randint(-50, 50, (8, 40), generator=g, dtype=torch.int32)
    want = x.clone().index_add_(1, index, src, alpha=3)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        a.index_add_(1, i, s, alpha=3)

    k(x, index, src)
    torch.testing.assert_close(x, want, **EXACT)


@pytest.mark.both_backends
def test_index_add_dynamic():
    """DYNAMIC rows in the tensor and the index: one compilation serves every size."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), i: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
          s: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), o: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.index_add(a + 1, 0, i, s)

    g = gen(2)
    for rows, n in ((5, 9), (37, 3)):
        x, src = torch.randn(rows, 32, generator=g), torch.randn(n, 32, generator=g)
        index = torch.randint(0, rows, (n,), generator=g, dtype=torch.int32)
        out = torch.empty(rows, 32)
        k(x, index, src, out)
        torch.testing.assert_close(out, torch.index_add(x + 1, 0, index, src), **EXACT)
    assert k.compile_count == 1


# ---------------------------------------------------------------------------------------------- index_put_
@pytest.mark.both_backends
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_one_index(accumulate):
    """One index on dim 0 (rows); with accumulate, duplicates add up in order."""
    g = gen(3)
    x = torch.randn(10, 40, generator=g)
    index = torch.randperm(10, generator=g)[:6].to(torch.int32) if not accumulate else torch.tensor(
        [3, 9, 3, 0, 3, 9], dtype=torch.int32)
    values = torch.randn(6, 40, generator=g)
    want = x.clone().index_put_((index.long(),), values, accumulate=accumulate)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), v: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.index_put_(a, (i,), v, accumulate)

    k(x, index, values)
    torch.testing.assert_close(x, want, **EXACT)


@pytest.mark.parametrize("case", ["full", "partial", "scalar", "broadcast_values", "broadcast_index"])
def test_index_put_cases(case):
    """All dims indexed (element updates), a prefix of the dims, scalar and broadcast values, and a
    length-1 index broadcast against the others."""
    g = gen(4)
    x = torch.randn(5, 6, 8, generator=g)
    i0 = torch.tensor([4, 0, 2, 4], dtype=torch.int64)
    i1 = torch.tensor([1, 5, 5, 1], dtype=torch.int32)
    i2 = torch.tensor([7, 0, 3, 7], dtype=torch.int64)
    indices = {"full": (i0, i1, i2), "partial": (i0, i1), "scalar": (i0, i1), "broadcast_values": (i0, i1),
               "broadcast_index": (i0, i1[:1])}[case]
    values = {"full": torch.randn(4, generator=g), "partial": torch.randn(4, 8, generator=g), "scalar": 2.5,
              "broadcast_values": torch.randn(8, generator=g), "broadcast_index": torch.randn(4, 8, generator=g)}[case]
    want = x.clone().index_put_(tuple(i.long() for i in indices), torch.as_tensor(values), accumulate=True)
    m = len(indices)
    padded = list(indices) + [i0] * (3 - m)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), j0: pypto.Tensor(), j1: pypto.Tensor(), j2: pypto.Tensor(), v: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 8, 8)
        pypto.index_put_(a, (j0, j1, j2)[:m], v if torch.is_tensor(values) else values, accumulate=True)

    k(x, *padded, values if torch.is_tensor(values) else torch.zeros(1))
    torch.testing.assert_close(x, want, **CLOSE)


# ---------------------------------------------------------------------------------------------- scatter_update
@pytest.mark.both_backends
def test_scatter_update_official_2d_4d():
    """The two official examples: ``[b*s, d]`` rows and ``[blocks, block_size, 1, d]`` cache blocks."""
    x2 = torch.zeros(8, 3, dtype=torch.int32)
    idx = torch.tensor([[1, 2], [4, 5]], dtype=torch.int64)
    src2 = torch.arange(1, 13, dtype=torch.int32).reshape(4, 3)
    x4 = torch.zeros(2, 6, 1, 3, dtype=torch.int32)
    idx4 = torch.tensor([[1, 8], [4, 10]], dtype=torch.int64)
    src4 = torch.arange(1, 13, dtype=torch.int32).reshape(2, 2, 1, 3)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor(), b: pypto.Tensor(), j: pypto.Tensor(),
          t: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.scatter_update(a, -2, i, s)
        pypto.scatter_update(b, -2, j, t)

    k(x2, idx, src2, x4, idx4, src4)
    want2 = torch.zeros(8, 3, dtype=torch.int32)
    want2[idx.flatten()] = src2
    want4 = torch.zeros(12, 3, dtype=torch.int32)
    want4[idx4.flatten()] = src4.reshape(4, 3)
    torch.testing.assert_close(x2, want2, **EXACT)
    torch.testing.assert_close(x4, want4.reshape(2, 6, 1, 3), **EXACT)


def test_scatter_update_dynamic_fp16():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP16), i: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32),
          s: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.scatter_update(a, -2, i, s)

    g = gen(5)
    for rows, b in ((12, 2), (40, 5)):
        x = torch.randn(rows, 64, generator=g).half()
        idx = torch.randperm(rows, generator=g)[:4 * b].reshape(b, 4).to(torch.int32)
        src = torch.randn(4 * b, 64, generator=g).half()
        want = x.clone()
        want[idx.flatten().long()] = src
        k(x, idx, src)
        torch.testing.assert_close(x, want, **EXACT)
    assert k.compile_count == 1


# ---------------------------------------------------------------------------------------------- one_hot
@pytest.mark.both_backends
@pytest.mark.parametrize("shape,itype", [((7,), torch.int32), ((3, 5), torch.int64)])
def test_one_hot(shape, itype):
    g = gen(6)
    x = torch.randint(0, 9, shape, generator=g, dtype=itype)
    out = torch.empty(*shape, 9, dtype=torch.int64)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8, 16)
        o[:] = pypto.one_hot(a, 9)

    k(x, out)
    torch.testing.assert_close(out, F.one_hot(x.long(), 9), **EXACT)


def test_one_hot_dynamic_then_cast():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT64), o: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.cast(pypto.one_hot(a, 4), pypto.DT_FP32) * 2

    for n in (3, 45):
        x = torch.arange(n) % 4
        out = torch.empty(n, 4)
        k(x, out)
        torch.testing.assert_close(out, F.one_hot(x, 4).float() * 2, **EXACT)
    assert k.compile_count == 1


# ---------------------------------------------------------------------------------------------- pad
PAD_CASES = [((6, 40), (2, 3, 1, 2)), ((6, 40), (0, 5)), ((6, 40), (3, 2, 2, 0)), ((40,), (4, 1)),
             ((2, 3, 20), (1, 1, 0, 2))]


@pytest.mark.parametrize("shape,padding", PAD_CASES, ids=[str(p) for _, p in PAD_CASES])
def test_pad(shape, padding):
    """Torch order (last dim first)."""
    x = torch.randn(shape, generator=gen(7))
    want = F.pad(x, padding, value=-1.5)
    out = torch.empty(want.shape)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 16, 32)
        o[:] = pypto.pad(a * 1, padding, mode="constant", value=-1.5)

    k(x, out)
    torch.testing.assert_close(out, want, **EXACT)


@pytest.mark.both_backends
def test_pad_dynamic_int():
    """DYNAMIC rows, INT32 data, default value 0."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 30], pypto.DT_INT32), o: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.pad(a, (0, 2, 1, 0)) + 1

    g = gen(8)
    for rows in (4, 33):
        x = torch.randint(-9, 9, (rows, 30), generator=g, dtype=torch.int32)
        out = torch.empty(rows + 1, 32, dtype=torch.int32)
        k(x, out)
        torch.testing.assert_close(out, F.pad(x, (0, 2, 1, 0)) + 1, **EXACT)
    assert k.compile_count == 1


# ---------------------------------------------------------------------------------------------- atomic_add
@pytest.mark.both_backends
def test_atomic_add_windows_and_loop():
    """Overlapping windows accumulate; a runtime loop adds one source row per iteration."""
    g = gen(9)
    dst = torch.randn(8, 40, generator=g)
    src = torch.randn(3, 16, generator=g)
    rows = torch.randn(4, 40, generator=g)
    acc = torch.zeros(1, 40)
    want = dst.clone()
    want[2:5, 4:20] += src
    want[3:6, 4:20] += src

    @pypto.frontend.jit
    def k(s: pypto.Tensor(), d: pypto.Tensor(), r: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.atomic_add(s, [2, 4], d)
        pypto.atomic_add(s, [3, 4], d)
        for i in pypto.loop(4):
            pypto.atomic_add(r[i:i + 1, :], [0, 0], o)

    k(src, dst, rows, acc)
    torch.testing.assert_close(dst, want, **CLOSE)
    torch.testing.assert_close(acc, rows[0:1] + rows[1:2] + rows[2:3] + rows[3:4], **CLOSE)


# ---------------------------------------------------------------------------------------------- topk / argsort
def run_sort(x, k, dim, flag, jit_kw=None):
    """(values, indices) of ``topk(x, k, dim, largest=flag)`` and ``argsort(x, dim, descending=flag)``."""
    d = dim % x.ndim
    vshape = list(x.shape)
    vshape[d] = k
    vals, inds = torch.empty(vshape, dtype=x.dtype), torch.empty(vshape, dtype=torch.int64)
    order = torch.empty(x.shape, dtype=torch.int64)

    @pypto.frontend.jit(**(jit_kw or {}))
    def kern(a: pypto.Tensor(), v: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 16, 64)
        tv, ti = pypto.topk(a, k, dim, flag)
        v[:] = tv
        i[:] = ti
        s[:] = pypto.argsort(a, dim, descending=flag)

    kern(x, vals, inds, order)
    return vals, inds, order


SORT_CASES = [((6, 33), -1, True), ((6, 33), 1, False), ((20, 7), 0, True), ((3, 4, 17), 1, False),
              ((3, 4, 17), -1, True)]


@pytest.mark.parametrize("shape,dim,flag", SORT_CASES, ids=[f"{s}-dim{d}-{f}" for s, d, f in SORT_CASES])
def test_topk_argsort_ties(shape, dim, flag):
    """Few distinct values (many ties): the lower index comes first, like torch's stable sort."""
    x = torch.randint(0, 5, shape, generator=gen(10)).float()
    k = 3
    vals, inds, order = run_sort(x, k, dim, flag)
    want = stable_sort(x, dim, flag)
    torch.testing.assert_close(vals, want.values.narrow(dim, 0, k), **EXACT)
    torch.testing.assert_close(inds, want.indices.narrow(dim, 0, k), **EXACT)
    torch.testing.assert_close(order, stable_sort(x, dim, flag).indices, **EXACT)


@pytest.mark.both_backends
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
@pytest.mark.parametrize("flag", [True, False])
def test_topk_argsort_dtypes_nan(dtype, flag):
    """FP32/FP16 with NaN (larger than every number, as in torch) and INT32 data."""
    g = gen(11)
    x = (torch.randn(5, 24, generator=g) * 100).to(dtype)
    x[0, 3] = x[0, 7] = x[1, 1]
    if dtype.is_floating_point:
        x[2, 5] = x[2, 9] = float("nan")
        x[3, 0] = float("inf")
        x[3, 1] = float("-inf")
    vals, inds, order = run_sort(x, 6, -1, flag)
    want = stable_sort(x, -1, flag)
    torch.testing.assert_close(vals, want.values[:, :6], equal_nan=True, **EXACT)
    torch.testing.assert_close(inds, want.indices[:, :6], **EXACT)
    torch.testing.assert_close(order, want.indices, **EXACT)
    if dtype == torch.float32:  # torch.topk itself agrees where the values are distinct
        tv, _ = torch.topk(x, 6, largest=flag)
        torch.testing.assert_close(vals, tv, equal_nan=True, **EXACT)


@pytest.mark.both_backends
def test_topk_dynamic_sorted_dim():
    """A DYNAMIC sorted dim: one compilation; k above the runtime size raises KernelRuntimeError."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32), v: pypto.Tensor([4, 5], pypto.DT_FP32),
          i: pypto.Tensor([4, 5], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(8, 64)
        tv, ti = pypto.topk(a, 5, largest=False)
        v[:] = tv
        i[:] = ti

    g = gen(12)
    for n in (5, 70):
        x = torch.randn(4, n, generator=g)
        vals, inds = torch.empty(4, 5), torch.empty(4, 5, dtype=torch.int64)
        k(x, vals, inds)
        want = stable_sort(x, -1, False)
        torch.testing.assert_close(vals, want.values[:, :5], **EXACT)
        torch.testing.assert_close(inds, want.indices[:, :5], **EXACT)
    assert k.compile_count == 1
    with pytest.raises(pypto.KernelRuntimeError):
        k(torch.randn(4, 3), torch.empty(4, 5), torch.empty(4, 5, dtype=torch.int64))


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.both_backends
@pytest.mark.parametrize("op", ["index_add", "index_put_", "index_put_full", "scatter_update", "one_hot",
                                "one_hot_negative", "index_add_view"])
def test_out_of_range_index_raises(op):
    x = torch.zeros(6, 32)
    idx = torch.tensor([1, 6, 0], dtype=torch.int32)
    if op == "one_hot_negative":
        idx = torch.tensor([1, -1, 0], dtype=torch.int32)
    if op == "index_add_view":  # inside the buffer, outside the 4-row view
        idx = torch.tensor([1, 4, 0], dtype=torch.int32)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        if op == "index_add":
            o[:] = pypto.index_add(a, 0, i, s)
        elif op == "index_add_view":
            pypto.index_add_(a[:4], 0, i, s)
        elif op == "index_put_":
            pypto.index_put_(a, (i,), s)
        elif op == "index_put_full":
            pypto.index_put_(a, (i, i), 1.0)
        elif op == "scatter_update":
            pypto.scatter_update(a, -2, i, s)
        else:
            o[:3, :6] = pypto.cast(pypto.one_hot(i, 6), pypto.DT_FP32)

    with pytest.raises(pypto.KernelRuntimeError, match="outside|out of range"):
        k(x, idx, torch.ones(3, 32), torch.zeros(6, 32))


def test_pass_verify():
    """The numpy reference evaluates index_put / argsort / one_hot nodes (enable_pass_verify)."""
    x = torch.randint(0, 4, (6, 20), generator=gen(13)).float()
    vals, inds, order = run_sort(x, 4, -1, True, {"verify_options": {"enable_pass_verify": True}})
    torch.testing.assert_close(order, stable_sort(x, -1, True).indices, **EXACT)

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.index_put_(a, (i,), s, accumulate=True)
        o[:] = pypto.cast(pypto.one_hot(i, 6), pypto.DT_FP32) + pypto.pad(s[:, :4], (0, 2))

    y, idx, src, out = torch.zeros(6, 20), torch.tensor([5, 0, 5], dtype=torch.int64), torch.ones(3, 20), \
        torch.empty(3, 6)
    k(y, idx, src, out)
    torch.testing.assert_close(y, torch.zeros(6, 20).index_put_((idx,), src, accumulate=True), **EXACT)
    torch.testing.assert_close(out, F.one_hot(idx, 6).float() + F.pad(src[:, :4], (0, 2)), **EXACT)
    with pytest.raises(pypto.KernelRuntimeError, match="out of range"):
        k(y, idx + 1, src, out)


def _trace_error(body):
    """Record ``body(a, i2, s)`` on a [6, 32] FP32 ``a``, a [2, 3] INT32 ``i2`` and a [3, 32] FP32 ``s``."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i2: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        body(a, i2, s)

    k(torch.zeros(6, 32), torch.zeros(2, 3, dtype=torch.int32), torch.ones(3, 32))


TYPE_ERRORS = {
    "index_add 2-D index": (lambda a, i2, s: pypto.index_add_(a, 0, i2, s), "1-D"),
    "index_add source shape": (lambda a, i2, s: pypto.index_add_(a, 0, i2[0], s[:, :8]), "do not fit"),
    "index_add float alpha on int": (lambda a, i2, s: pypto.index_add_(i2, 0, i2[0], i2, alpha=0.5), "alpha"),
    "index_add float index": (lambda a, i2, s: pypto.index_add_(a, 0, s[0], s), "INT32 or INT64"),
    "index_put_ too many": (lambda a, i2, s: pypto.index_put_(a, (i2[0], i2[0], i2[0]), 1.0), "3 index tensors"),
    "index_put_ values": (lambda a, i2, s: pypto.index_put_(a, (i2[0],), s[:, :5]), "do not fit"),
    "index_put_ expression": (lambda a, i2, s: pypto.index_put_(a * 2, (i2[0],), 1.0), "target"),
    "scatter_update dim": (lambda a, i2, s: pypto.scatter_update(a, 1, i2, s), "dim=-2"),
    "one_hot -1": (lambda a, i2, s: pypto.one_hot(i2, -1), "num_classes=-1"),
    "one_hot float": (lambda a, i2, s: pypto.one_hot(a, 4), "INT32 or INT64"),
    "pad odd": (lambda a, i2, s: pypto.pad(a, (1, 2, 3)), "2 entries"),
    "pad negative": (lambda a, i2, s: pypto.pad(a, (-20, -20)), "negative"),
    "topk k": (lambda a, i2, s: pypto.topk(a, 33), "k must be"),
    "topk dim": (lambda a, i2, s: pypto.topk(a, 2, dim=2), "out of range"),
    "argsort bool": (lambda a, i2, s: pypto.argsort(a > 0), "BOOL"),
    "atomic_add window": (lambda a, i2, s: pypto.atomic_add(s, [4, 0], a), "leaves dst"),
}


@pytest.mark.parametrize("case", list(TYPE_ERRORS))
def test_type_errors(case):
    body, match = TYPE_ERRORS[case]
    with pytest.raises(pypto.KernelTypeError, match=match):
        _trace_error(body)


NOT_IMPLEMENTED = {
    "pad reflect": (lambda a, i2, s: pypto.pad(a, (1, 1), mode="reflect"), "mode='reflect'"),
    "index_put_ bool mask": (lambda a, i2, s: pypto.index_put_(a, (a > 0,), 1.0), "BOOL mask"),
    "index_put_ 2-D index": (lambda a, i2, s: pypto.index_put_(a, (i2,), 1.0), "2-D index"),
    "index_put_ None": (lambda a, i2, s: pypto.index_put_(a, (None, i2[0]), 1.0), "None"),
}


@pytest.mark.parametrize("case", list(NOT_IMPLEMENTED))
def test_not_implemented_cases(case):
    body, match = NOT_IMPLEMENTED[case]
    with pytest.raises(NotImplementedError, match=match):
        _trace_error(body)


@pytest.mark.parametrize("name", ["sort32", "mrgsort"])
def test_still_not_implemented(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(pypto, name)()
