"""gather / index_select / scatter / scatter_ (and the ``x[dim:index]`` subscripts) against torch."""
import pytest
import torch

import pypto

SHAPES = {2: (6, 40), 3: (3, 5, 36)}
CASES = [(r, d, it) for r in (2, 3) for d in range(r) for it in (torch.int32, torch.int64)]
IDS = [f"{r}d-dim{d}-{str(it)[6:]}" for r, d, it in CASES]


def gen(seed=0):
    g = torch.Generator().manual_seed(seed)
    return g


def index_shape(shape, d, sizes_d):
    """An index shape no larger than ``shape`` on the other axes (torch allows smaller)."""
    out = [max(1, s - 1) for s in shape]
    out[d] = sizes_d
    return tuple(out)


def unique_index(shape, d, n, dtype, g):
    """``n`` distinct positions along ``d`` per line (scatter without duplicate targets)."""
    keys = torch.rand(shape, generator=g).argsort(dim=d)
    return keys.narrow(d, 0, n).contiguous().to(dtype)


def run_gather(x, d, idx, **jit_kw):
    out = torch.empty(idx.shape, dtype=x.dtype)

    @pypto.frontend.jit(**jit_kw)
    def k(a: pypto.Tensor(), i: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.gather(a, d, i)

    k(x, idx, out)
    return out


@pytest.mark.parametrize("rank,d,itype", CASES, ids=IDS)
def test_gather(rank, d, itype):
    g = gen(rank * 10 + d)
    x = torch.randn(SHAPES[rank], generator=g)
    ishape = index_shape(SHAPES[rank], d, SHAPES[rank][d] + 3)
    idx = torch.randint(0, SHAPES[rank][d], ishape, generator=g, dtype=itype)
    torch.testing.assert_close(run_gather(x, d, idx), torch.gather(x, d, idx.long()), rtol=0, atol=0)


@pytest.mark.parametrize("rank,d,itype", CASES, ids=IDS)
def test_index_select(rank, d, itype):
    g = gen(rank * 10 + d + 1)
    x = torch.randn(SHAPES[rank], generator=g)
    idx = torch.randint(0, SHAPES[rank][d], (7,), generator=g, dtype=itype)
    want = torch.index_select(x, d, idx.long())
    out = torch.empty(want.shape)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.index_select(a, d, i)

    k(x, idx, out)
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pytest.mark.parametrize("rank,d,itype", CASES, ids=IDS)
def test_scatter(rank, d, itype):
    g = gen(rank * 10 + d + 2)
    shape = SHAPES[rank]
    x = torch.randn(shape, generator=g)
    idx = unique_index(index_shape(shape, d, shape[d]), d, max(1, shape[d] - 2), itype, g)
    src = torch.randn(shape, generator=g)  # larger than the index: only its leading part is used
    out = torch.empty(shape)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.scatter(a, d, i, s)

    k(x, idx, src, out)
    torch.testing.assert_close(out, torch.scatter(x, d, idx.long(), src), rtol=0, atol=0)


@pytest.mark.both_backends
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_inplace_reduce(reduce):
    """``scatter_`` writes its target; with reduce, duplicate indices combine in index order."""
    g = gen(5)
    x = torch.randn(8, 24, generator=g)
    idx = torch.randint(0, 8, (5, 24), generator=g, dtype=torch.int32)
    if reduce is None:
        idx = unique_index((8, 24), 0, 5, torch.int32, g)
    src = torch.randn(5, 24, generator=g)
    want = x.clone().scatter_(0, idx.long(), src) if reduce is None else x.clone().scatter_reduce_(
        0, idx.long(), src, "sum" if reduce == "add" else "prod")

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        a.scatter_(0, i, s, reduce=reduce)

    k(x, idx, src)
    torch.testing.assert_close(x, want, rtol=1e-6, atol=1e-6)


@pytest.mark.both_backends
def test_scatter_inplace_into_a_computed_value():
    """``scatter_`` into a value made in the kernel (``pypto.full``, an op's result) rebinds the handle to
    the scattered value: later uses see it, a view taken before keeps the old value (a mask built from
    top-k indices, as model blocks do)."""
    g = gen(7)
    idx = unique_index((4, 8), 1, 2, torch.int32, g)
    x = torch.randn(4, 8, generator=g)
    mask_out, before_out, scaled_out = torch.empty(4, 8), torch.empty(4, 8), torch.empty(4, 8)

    @pypto.frontend.jit
    def k(i: pypto.Tensor(), a: pypto.Tensor(), m: pypto.Tensor(), before: pypto.Tensor(),
          scaled: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 8)
        mask = pypto.full([4, 8], 0.0, pypto.DT_FP32)
        old = mask + 0.0
        mask.scatter_(1, i, 1.0)
        m[:] = mask
        before[:] = old
        doubled = a * 2.0
        pypto.scatter_(doubled, 1, i, -1.0)
        scaled[:] = doubled

    k(idx, x, mask_out, before_out, scaled_out)
    want_mask = torch.zeros(4, 8).scatter_(1, idx.long(), 1.0)
    torch.testing.assert_close(mask_out, want_mask, rtol=0, atol=0)
    torch.testing.assert_close(before_out, torch.zeros(4, 8), rtol=0, atol=0)
    torch.testing.assert_close(scaled_out, (x * 2).scatter_(1, idx.long(), -1.0), rtol=0, atol=0)


def test_scatter_scalar_value_and_subscripts():
    """``x[dim:index]`` gathers, ``x[dim:index] = v`` scatters in place (tensor or scalar source)."""
    g = gen(6)
    x = torch.randn(6, 32, generator=g)
    idx = unique_index((6, 32), 1, 4, torch.int64, g)
    gathered = torch.empty(6, 4)
    y = torch.randn(6, 32, generator=g)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), o: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = a[1:i]
        a[1:i] = o * 2
        b[1:i] = 7.5

    want_x = x.clone().scatter_(1, idx, torch.gather(x, 1, idx) * 2)
    want_y = y.clone().scatter_(1, idx, 7.5)
    want_g = torch.gather(x, 1, idx)
    k(x, idx, gathered, y)
    torch.testing.assert_close(gathered, want_g, rtol=0, atol=0)
    torch.testing.assert_close(x, want_x, rtol=0, atol=0)
    torch.testing.assert_close(y, want_y, rtol=0, atol=0)


@pytest.mark.both_backends
def test_composition_with_elementwise():
    """Element-wise work before and after each indexing op (barriers between the dependent passes)."""
    g = gen(7)
    x = torch.randn(16, 48, generator=g)
    gi = torch.randint(0, 48, (16, 20), generator=g, dtype=torch.int64)
    si = unique_index((16, 48), 1, 20, torch.int32, g)
    sel = torch.randint(0, 16, (10,), generator=g, dtype=torch.int32)
    out = torch.empty(16, 48)
    out2 = torch.empty(10, 48)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), j: pypto.Tensor(), s: pypto.Tensor(), o: pypto.Tensor(),
          o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        gathered = pypto.exp(pypto.gather(a * 2 + 1, 1, i)) - 1
        o[:] = pypto.scatter(pypto.relu(a), 1, j, gathered) * 3
        o2[:] = pypto.index_select(o + a, 0, s) / 2

    k(x, gi, si, sel, out, out2)
    gathered = torch.exp(torch.gather(x * 2 + 1, 1, gi)) - 1
    want = torch.scatter(torch.relu(x), 1, si.long(), gathered) * 3
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out2, torch.index_select(want + x, 0, sel.long()) / 2, rtol=1e-5, atol=1e-5)


@pytest.mark.both_backends
def test_dynamic_dim():
    """A DYNAMIC row count: one compilation serves every size."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), i: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_INT32),
          o: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), s: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.gather(a, 1, i) + 1
        s[:] = pypto.scatter(a, 1, i, o)

    g = gen(8)
    for rows in (5, 37):
        x = torch.randn(rows, 32, generator=g)
        idx = unique_index((rows, 32), 1, 8, torch.int32, g)
        out, sc = torch.empty(rows, 8), torch.empty(rows, 32)
        k(x, idx, out, sc)
        want = torch.gather(x, 1, idx.long()) + 1
        torch.testing.assert_close(out, want, rtol=0, atol=0)
        torch.testing.assert_close(sc, torch.scatter(x, 1, idx.long(), want), rtol=0, atol=0)
    assert k.compile_count == 1


@pytest.mark.both_backends
@pytest.mark.parametrize("op", ["gather", "gather_view", "index_select", "scatter", "negative"])
def test_out_of_range_index_raises(op):
    g = gen(9)
    x = torch.randn(8, 32, generator=g)
    idx = torch.randint(0, 6, (4, 32) if op != "index_select" else (4,), generator=g, dtype=torch.int32)
    idx.view(-1)[3] = -1 if op == "negative" else (6 if op == "gather_view" else 8)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        if op == "index_select":
            o[:] = pypto.index_select(a, 0, i)
        elif op == "scatter":
            a.scatter_(0, i, o)
        elif op == "gather_view":  # the index stays inside the buffer but leaves the 6-row window
            o[:] = pypto.gather(a[:6], 0, i)
        else:
            o[:] = pypto.gather(a, 0, i)

    with pytest.raises(pypto.KernelRuntimeError, match="outside|out of range"):
        k(x, idx, torch.zeros(4, 32))


def test_pass_verify():
    """The numpy reference of the graph evaluates the indexing ops (enable_pass_verify)."""
    g = gen(10)
    x = torch.randn(6, 40, generator=g)
    idx = torch.randint(0, 40, (6, 12), generator=g, dtype=torch.int64)
    torch.testing.assert_close(run_gather(x, 1, idx, verify_options={"enable_pass_verify": True}),
                               torch.gather(x, 1, idx), rtol=0, atol=0)
    with pytest.raises(pypto.KernelRuntimeError, match="out of range"):
        run_gather(x, 1, idx + 40, verify_options={"enable_pass_verify": True})


def test_type_errors():
    x = torch.randn(6, 32)

    @pypto.frontend.jit
    def bad_dtype(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        o[:] = pypto.gather(a, 0, a)

    with pytest.raises(pypto.KernelTypeError, match="INT32 or INT64"):
        bad_dtype(x, torch.empty(6, 32))

    @pypto.frontend.jit
    def bad_reduce(a: pypto.Tensor(), i: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        a.scatter_(0, i, 1.0, reduce="mean")

    with pytest.raises(pypto.KernelTypeError, match="reduce"):
        bad_reduce(x, torch.zeros(2, 32, dtype=torch.int32))


@pytest.mark.both_backends
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32])
def test_data_dtypes_and_1d(dtype):
    """Non-FP32 data moves bit-exactly; 1-D tensors index along their only axis."""
    g = gen(11)
    x = (torch.randn(40, generator=g) * 50).to(dtype)
    idx = torch.randint(0, 40, (24,), generator=g, dtype=torch.int64)
    pos = unique_index((40,), 0, 24, torch.int32, g)
    out, sc = torch.empty(24, dtype=dtype), torch.empty(40, dtype=dtype)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), i: pypto.Tensor(), p: pypto.Tensor(), o: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(64)
        o[:] = pypto.gather(a, 0, i)
        s[:] = pypto.scatter(a, 0, p, o)

    k(x, idx, pos, out, sc)
    want = torch.gather(x, 0, idx)
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    torch.testing.assert_close(sc, torch.scatter(x, 0, pos.long(), want), rtol=0, atol=0)
