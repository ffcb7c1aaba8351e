"""The call examples of the official op pages f..o (``docs/zh/api/operation/pypto-<op>.md`` in
hicann/pypto), run as ``@pypto.frontend.jit`` kernels and compared with the pages' printed results:
integers and BOOLs exactly, floats to half a unit in the last printed digit (or where a page prints
no result, against torch).  The documented parameter variants (scalar operands, dims, dtypes, matmul's
flags and extend_params) are checked too.

Pages with tests elsewhere: fillpad, gathermask, normal (test_random_and_fillpad.py,
test_acceptance_shape.py), index_add_ub and index_add__ub (test_quant_conv_and_experimental_ops.py); indexput_ is the
index_put_ page under an older file name.
"""
import math

import numpy as np
import pytest
import torch

import pypto

INF, NAN = math.inf, math.nan
BOTH = pytest.mark.both_backends


def assert_printed(got: torch.Tensor, printed, decimals: int) -> None:
    """``got`` equals the page's printed numbers to half a unit in their last digit."""
    want = torch.tensor(printed, dtype=torch.float64)
    assert got.shape == want.shape
    err = (got.double() - want).abs().max().item()
    assert err <= 0.5 * 10.0 ** -decimals, (got, printed)


def bools(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.bool)


# pypto-floor.md
@BOTH
def test_floor_page():
    @pypto.frontend.jit
    def floor_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.floor(x)

    x = torch.tensor([1.2, 4.3, 9.8, 16.5, 25.4])
    y = torch.empty(5)
    floor_page(x, y)
    assert_printed(y, [1.0, 4.0, 9.0, 16.0, 25.0], 1)


# pypto-floor.md: integer inputs (DT_INT32, DT_INT16) come back unchanged
def test_floor_page_integers():
    @pypto.frontend.jit
    def floor_page_ints(a: pypto.Tensor(), b: pypto.Tensor(), ya: pypto.Tensor(), yb: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        ya[:] = pypto.floor(a)
        yb[:] = pypto.floor(b)

    a = torch.tensor([[1, -2, 2 ** 31 - 1, -2 ** 31]], dtype=torch.int32)
    b = torch.tensor([[1, -2, 32767, -32768]], dtype=torch.int16)
    ya, yb = torch.empty_like(a), torch.empty_like(b)
    floor_page_ints(a, b, ya, yb)
    assert torch.equal(ya, a) and torch.equal(yb, b)


# pypto-floor_div.md
@BOTH
def test_floor_div_page():
    @pypto.frontend.jit
    def floor_div_page(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor(), out_s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.floor_div(a, b)
        out_s[:] = pypto.floor_div(a, 4)  # `other` may be an int

    a = torch.tensor([[2, 4, 6]], dtype=torch.int32)
    b = torch.tensor([[4, 2, 5]], dtype=torch.int32)
    out, out_s = torch.empty(1, 3, dtype=torch.int32), torch.empty(1, 3, dtype=torch.int32)
    floor_div_page(a, b, out, out_s)
    assert out.tolist() == [[0, 2, 1]]
    assert out_s.tolist() == [[0, 1, 1]]


# pypto-floor_div.md: the broadcast case of the page's tiling section ([m, n] by [m, 1])
def test_floor_div_page_broadcast():
    @pypto.frontend.jit
    def floor_div_page_bc(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.floor_div(a, b)

    a = torch.tensor([[2, 4, 6], [-7, 7, 9]], dtype=torch.int32)
    b = torch.tensor([[4], [2]], dtype=torch.int32)
    out = torch.empty(2, 3, dtype=torch.int32)
    floor_div_page_bc(a, b, out)
    assert out.tolist() == torch.floor_divide(a, b).tolist() == [[0, 1, 1], [-4, 3, 4]]


# pypto-fmod.md (the default mode, HIGH_PRECISION, INTRINSIC and a float `other`)
@BOTH
def test_fmod_page():
    @pypto.frontend.jit
    def fmod_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(),
                  o3: pypto.Tensor(), o4: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.fmod(a, b)
        o2[:] = pypto.fmod(a, b, pypto.PrecisionType.HIGH_PRECISION)
        o3[:] = pypto.fmod(a, b, pypto.PrecisionType.INTRINSIC)
        o4[:] = pypto.fmod(a, 3.0)

    a = torch.tensor([[7.0, 8.0, 9.0]])
    b = torch.tensor([[3.0, 3.0, 3.0]])
    outs = [torch.empty(1, 3) for _ in range(4)]
    fmod_page(a, b, *outs)
    for o in outs:
        assert_printed(o, [[1.0, 2.0, 0.0]], 1)


# pypto-full.md (y1: a float value with valid_shape)
@BOTH
def test_full_page():
    @pypto.frontend.jit
    def full_page(y1: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.full([2, 2], 1.0, pypto.DT_FP32, valid_shape=[pypto.symbolic_scalar(2), pypto.symbolic_scalar(2)])

    y1 = torch.zeros(2, 2)
    full_page(y1)
    assert_printed(y1, [[1.0, 1.0], [1.0, 1.0]], 1)


#: an INT32 pypto.Element in a scalar position (the cpu backend used to print it into the C++ as its repr)
INT_ELEMENT_BACKENDS = ["interp", "cpu"]


# pypto-full.md (y2: an INT32 Element with valid_shape, y3: without)
@pytest.mark.parametrize("pypto_backend", INT_ELEMENT_BACKENDS)
def test_full_page_element(pypto_backend):
    @pypto.frontend.jit
    def full_page_element(y2: pypto.Tensor(), y3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        two = [pypto.symbolic_scalar(2), pypto.symbolic_scalar(2)]
        y2[:] = pypto.full([2, 2], pypto.Element(pypto.DT_INT32, 1), pypto.DT_INT32, valid_shape=two)
        y3[:] = pypto.full([2, 2], pypto.Element(pypto.DT_INT32, 1), pypto.DT_INT32)

    y2, y3 = torch.zeros(2, 2, dtype=torch.int32), torch.zeros(2, 2, dtype=torch.int32)
    full_page_element(y2, y3)
    assert y2.tolist() == y3.tolist() == [[1, 1], [1, 1]]


# pypto-gather.md
@BOTH
def test_gather_page():
    @pypto.frontend.jit
    def gather_page(x: pypto.Tensor(), index: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.gather(x, 0, index)

    x = torch.arange(15, dtype=torch.int32).reshape(3, 5)
    index = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], dtype=torch.int32)
    y = torch.empty(3, 4, dtype=torch.int32)
    gather_page(x, index, y)
    assert y.tolist() == [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]]


# pypto-gcd.md (a tensor and an int `other`)
@BOTH
def test_gcd_page():
    @pypto.frontend.jit
    def gcd_page(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        z[:] = pypto.gcd(x, y)
        c[:] = pypto.gcd(x, 2)

    x = torch.tensor([[9, 9, 9], [6, 6, 6]], dtype=torch.int32)
    y = torch.tensor([[1, 2, 3], [1, 2, 3]], dtype=torch.int32)
    z, c = torch.empty(2, 3, dtype=torch.int32), torch.empty(2, 3, dtype=torch.int32)
    gcd_page(x, y, z, c)
    assert z.tolist() == [[1, 1, 3], [1, 2, 3]]
    assert c.tolist() == [[1, 1, 1], [2, 2, 2]]


# The compare pages (ge, gt, le, lt, ne) share one example: a = [1, 2, 3], b = [2, 2, 2].  Since b is
# all 2.0, the documented scalar forms of `other` (a float, an Element) must give the same result.
CMP_A, CMP_B = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 2.0, 2.0])


def _check_compare(kernel, printed):
    outs = [torch.zeros(3, dtype=torch.bool) for _ in range(3)]
    kernel(CMP_A, CMP_B, *outs)
    for o in outs:
        assert o.tolist() == printed


# pypto-ge.md
@BOTH
def test_ge_page():
    @pypto.frontend.jit
    def ge_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o1[:] = pypto.ge(a, b)
        o2[:] = pypto.ge(a, 2.0)
        o3[:] = pypto.ge(a, pypto.Element(pypto.DT_FP32, 2.0))

    _check_compare(ge_page, [False, True, True])


# pypto-gt.md
@BOTH
def test_gt_page():
    @pypto.frontend.jit
    def gt_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o1[:] = pypto.gt(a, b)
        o2[:] = pypto.gt(a, 2.0)
        o3[:] = pypto.gt(a, pypto.Element(pypto.DT_FP32, 2.0))

    _check_compare(gt_page, [False, False, True])


# pypto-le.md
@BOTH
def test_le_page():
    @pypto.frontend.jit
    def le_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o1[:] = pypto.le(a, b)
        o2[:] = pypto.le(a, 2.0)
        o3[:] = pypto.le(a, pypto.Element(pypto.DT_FP32, 2.0))

    _check_compare(le_page, [True, True, False])


# pypto-lt.md
@BOTH
def test_lt_page():
    @pypto.frontend.jit
    def lt_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o1[:] = pypto.lt(a, b)
        o2[:] = pypto.lt(a, 2.0)
        o3[:] = pypto.lt(a, pypto.Element(pypto.DT_FP32, 2.0))

    _check_compare(lt_page, [True, False, False])


# pypto-ne.md
@BOTH
def test_ne_page():
    @pypto.frontend.jit
    def ne_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o1[:] = pypto.ne(a, b)
        o2[:] = pypto.ne(a, 2.0)
        o3[:] = pypto.ne(a, pypto.Element(pypto.DT_FP32, 2.0))

    _check_compare(ne_page, [True, False, True])


# pypto-ge.md / gt / le / lt / ne: the broadcast case of the pages' tiling sections ([m, n] by [m, 1])
def test_compare_pages_broadcast_other():
    @pypto.frontend.jit
    def compare_pages_bc(a: pypto.Tensor(), b: pypto.Tensor(), ge: pypto.Tensor(), gt: pypto.Tensor(),
                         le: pypto.Tensor(), lt: pypto.Tensor(), ne: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        ge[:] = pypto.ge(a, b)
        gt[:] = pypto.gt(a, b)
        le[:] = pypto.le(a, b)
        lt[:] = pypto.lt(a, b)
        ne[:] = pypto.ne(a, b)

    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = torch.tensor([[2.0], [5.0]])
    outs = [torch.zeros(2, 3, dtype=torch.bool) for _ in range(5)]
    compare_pages_bc(a, b, *outs)
    for o, fn in zip(outs, (torch.ge, torch.gt, torch.le, torch.lt, torch.ne)):
        assert torch.equal(o, fn(a, b))


# pypto-hypot.md
@BOTH
def test_hypot_page():
    @pypto.frontend.jit
    def hypot_page(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        out[:] = pypto.hypot(a, b)

    out = torch.empty(2)
    hypot_page(torch.tensor([3.0, 5.0]), torch.tensor([4.0, 12.0]), out)
    assert_printed(out, [5.0, 13.0], 1)


# pypto-index_add_.md (in place, with alpha=1 and with the default alpha)
@BOTH
def test_index_add__page():
    @pypto.frontend.jit
    def index_add__page(x1: pypto.Tensor(), x2: pypto.Tensor(), source: pypto.Tensor(), index: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        pypto.index_add_(x1, 0, index, source, alpha=1)
        pypto.index_add_(x2, 0, index, source)

    x1, x2 = torch.zeros(2, 3, dtype=torch.int32), torch.zeros(2, 3, dtype=torch.int32)
    source = torch.ones(3, 3, dtype=torch.int32)
    index = torch.tensor([0, 1, 0], dtype=torch.int32)
    index_add__page(x1, x2, source, index)
    assert x1.tolist() == x2.tolist() == [[2, 2, 2], [1, 1, 1]]


# pypto-index_add.md (the non-in-place version; its page refers to index_add_'s example)
@BOTH
def test_index_add_page():
    @pypto.frontend.jit
    def index_add_page(x: pypto.Tensor(), source: pypto.Tensor(), index: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.index_add(x, 0, index, source)

    x = torch.zeros(2, 3, dtype=torch.int32)
    source = torch.ones(3, 3, dtype=torch.int32)
    index = torch.tensor([0, 1, 0], dtype=torch.int32)
    y = torch.empty(2, 3, dtype=torch.int32)
    index_add_page(x, source, index, y)
    assert y.tolist() == [[2, 2, 2], [1, 1, 1]]
    assert x.tolist() == [[0, 0, 0], [0, 0, 0]]


# pypto-index_put_.md (accumulate=True positionally, then the default accumulate=False)
@BOTH
def test_index_put__page():
    @pypto.frontend.jit
    def index_put__page(x1: pypto.Tensor(), x2: pypto.Tensor(), indices0: pypto.Tensor(), values: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        pypto.index_put_(x1, (indices0,), values, True)
        pypto.index_put_(x2, (indices0,), values)

    x = torch.tensor([[1, 1, 1], [1, 1, 1], [0, 0, 0]], dtype=torch.int32)
    x1, x2 = x.clone(), x.clone()
    indices0 = torch.tensor([1, 2], dtype=torch.int32)
    values = torch.tensor([[0, 1, 0], [0, 2, 0]], dtype=torch.int32)
    index_put__page(x1, x2, indices0, values)
    assert x1.tolist() == [[1, 1, 1], [1, 2, 1], [0, 2, 0]]
    assert x2.tolist() == [[1, 1, 1], [0, 1, 0], [0, 2, 0]]


# pypto-index_select.md (dim 0, dim 1, and the documented negative dim -1 == 1)
@BOTH
def test_index_select_page():
    @pypto.frontend.jit
    def index_select_page(x: pypto.Tensor(), indices: pypto.Tensor(), out1: pypto.Tensor(), out2: pypto.Tensor(),
                          out3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out1[:] = pypto.index_select(x, 0, indices)
        out2[:] = pypto.index_select(x, 1, indices)
        out3[:] = pypto.index_select(x, -1, indices)

    x = torch.tensor([[0.1427, 0.0231, -0.5414, -1.0009],
                      [-0.4664, 0.2647, -0.1228, -1.1068],
                      [-1.1734, -0.6571, 0.7230, -0.6004]])
    indices = torch.tensor([0, 2], dtype=torch.int32)
    out1, out2, out3 = torch.empty(2, 4), torch.empty(3, 2), torch.empty(3, 2)
    index_select_page(x, indices, out1, out2, out3)
    assert_printed(out1, [[0.1427, 0.0231, -0.5414, -1.0009], [-1.1734, -0.6571, 0.7230, -0.6004]], 4)
    assert_printed(out2, [[0.1427, -0.5414], [-0.4664, -0.1228], [-1.1734, 0.7230]], 4)
    assert torch.equal(out3, out2)


# pypto-interleave.md
@BOTH
def test_interleave_page():
    @pypto.frontend.jit
    def interleave_page(inp: pypto.Tensor(), other: pypto.Tensor(), out0: pypto.Tensor(), out1: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o0, o1 = pypto.interleave(inp, other)
        out0[:] = o0
        out1[:] = o1

    inp = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    other = inp + 10
    out0, out1 = torch.empty(2, 4), torch.empty(2, 4)
    interleave_page(inp, other, out0, out1)
    assert_printed(out0, [[0.0, 10.0, 1.0, 11.0], [4.0, 14.0, 5.0, 15.0]], 1)
    assert_printed(out1, [[2.0, 12.0, 3.0, 13.0], [6.0, 16.0, 7.0, 17.0]], 1)


PAGE_SPECIALS = torch.tensor([[1.0, NAN, 3.0], [INF, 1.0, 1.0], [1.0, 1.0, -INF]])


# pypto-isfinite.md (plus the page's integer rule: every element is finite)
@BOTH
def test_isfinite_page():
    @pypto.frontend.jit
    def isfinite_page(x: pypto.Tensor(), xi: pypto.Tensor(), out: pypto.Tensor(), out_i: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.isfinite(x)
        out_i[:] = pypto.isfinite(xi)

    out, out_i = torch.zeros(3, 3, dtype=torch.bool), torch.zeros(3, 3, dtype=torch.bool)
    xi = torch.tensor([[0, -1, 2 ** 31 - 1], [-2 ** 31, 5, 6], [7, 8, 9]], dtype=torch.int32)
    isfinite_page(PAGE_SPECIALS, xi, out, out_i)
    assert out.tolist() == [[True, False, True], [False, True, True], [True, True, False]]
    assert bool(out_i.all())


# pypto-isnan.md
@BOTH
def test_isnan_page():
    @pypto.frontend.jit
    def isnan_page(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.isnan(x)

    out = torch.ones(3, 3, dtype=torch.bool)
    isnan_page(PAGE_SPECIALS, out)
    assert out.tolist() == [[False, True, False], [False, False, False], [False, False, False]]


LOG_X = torch.tensor([1.0, 2.0, 3.0])


# pypto-log.md
@BOTH
def test_log_page():
    @pypto.frontend.jit
    def log_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.log(x)

    y = torch.empty(3)
    log_page(LOG_X, y)
    assert_printed(y, [0.0000, 0.6931, 1.0986], 4)


# pypto-log10.md
@BOTH
def test_log10_page():
    @pypto.frontend.jit
    def log10_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.log10(x)

    y = torch.empty(3)
    log10_page(LOG_X, y)
    assert_printed(y, [0.0000, 0.3010, 0.4771], 4)


# pypto-log2.md
@BOTH
def test_log2_page():
    @pypto.frontend.jit
    def log2_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.log2(x)

    y = torch.empty(3)
    log2_page(LOG_X, y)
    # The page prints log2(3) = 1.58496... cut to 1.5849 (not rounded), so one unit of the 4th decimal.
    assert_printed(y, [0.0000, 1.0000, 1.5849], 4 - math.log10(2))


# pypto-log.md / log10 / log2: the pages' FP16 "high precision" and "intrinsic" mode calls.  No result is
# printed for them, so the FP32 results (printed above) must hold to FP16 precision (half an ulp near 1.6 is 5e-4,
# plus the page's 4-digit rounding).
@pytest.mark.parametrize("op, printed", [("log", [0.0, 0.6931, 1.0986]), ("log10", [0.0, 0.3010, 0.4771]),
                                         ("log2", [0.0, 1.0, 1.5849])])
def test_log_pages_precision_type(op, printed):
    fn = getattr(pypto, op)

    @pypto.frontend.jit
    def log_pages_precision_type(x: pypto.Tensor(), y1: pypto.Tensor(), y2: pypto.Tensor(), name: str):
        pypto.set_vec_tile_shapes(32)
        y1[:] = fn(x, pypto.PrecisionType.HIGH_PRECISION)
        y2[:] = fn(x, pypto.PrecisionType.INTRINSIC)

    y1, y2 = torch.empty(3, dtype=torch.float16), torch.empty(3, dtype=torch.float16)
    log_pages_precision_type(LOG_X.half(), y1, y2, op)
    assert_printed(y1, printed, 3 - math.log10(2))
    assert_printed(y2, printed, 3 - math.log10(2))


# pypto-log1p.md
@BOTH
def test_log1p_page():
    @pypto.frontend.jit
    def log1p_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.log1p(x)

    # The page's 1e-99 in an FP32 tensor is 0.0 (below FP32's range), and so is the printed result.
    x = torch.tensor([1e-99])
    y = torch.full((1,), NAN)
    log1p_page(x, y)
    assert y.tolist() == torch.tensor([1e-99]).tolist() == [0.0]


# pypto-log1p.md: what the example shows, log1p(x) == x for a tiny x, with FP32-representable inputs
def test_log1p_page_tiny_inputs():
    @pypto.frontend.jit
    def log1p_page_tiny(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.log1p(x)

    x = torch.tensor([1e-20, 1e-30, 3e-8, 1e-7, -1e-7])
    y = torch.empty(5)
    log1p_page_tiny(x, y)
    torch.testing.assert_close(y, torch.log1p(x), rtol=4e-7, atol=0)


# pypto-logical_and.md (BOOL operands, broadcasting [2] with [2, 2])
@BOTH
def test_logical_and_page():
    @pypto.frontend.jit
    def logical_and_page(x: pypto.Tensor(), y1: pypto.Tensor(), y2: pypto.Tensor(), z1: pypto.Tensor(),
                         z2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        z1[:] = pypto.logical_and(x, y1)
        z2[:] = pypto.logical_and(x, y2)

    x, y1 = bools([True, False]), bools([True, True])
    y2 = bools([[True, False], [False, True]])
    z1, z2 = torch.ones(2, dtype=torch.bool), torch.ones(2, 2, dtype=torch.bool)
    logical_and_page(x, y1, y2, z1, z2)
    assert z1.tolist() == [True, False]
    assert z2.tolist() == [[True, False], [False, False]]


# pypto-logical_and.md: numeric operands count as non-zero, and the two dtypes may differ
def test_logical_and_page_numeric_mixed_dtypes():
    @pypto.frontend.jit
    def logical_and_page_mixed(a: pypto.Tensor(), b: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        z[:] = pypto.logical_and(a, b)

    a = torch.tensor([[1.5, 0.0, -2.0, 0.0, -0.0]])
    b = torch.tensor([[3, 5, 0, 0, 7]], dtype=torch.int32)
    z = torch.ones(1, 5, dtype=torch.bool)
    logical_and_page_mixed(a, b, z)
    assert z.tolist() == [[True, False, False, False, False]]


# pypto-logical_not.md
@BOTH
def test_logical_not_page():
    @pypto.frontend.jit
    def logical_not_page(a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.logical_not(a)

    out = torch.zeros(5, dtype=torch.bool)
    logical_not_page(torch.arange(5, dtype=torch.int32), out)
    assert out.tolist() == [True, False, False, False, False]


# pypto-lrelu.md (the default slope, and an Element slope as the page recommends)
@BOTH
def test_lrelu_page():
    @pypto.frontend.jit
    def lrelu_page(a: pypto.Tensor(), out: pypto.Tensor(), out_e: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.lrelu(a)
        out_e[:] = pypto.lrelu(a, pypto.Element(pypto.DT_FP32, 0.25))

    a = torch.tensor([[-1.0, 0.0, 1.0]])
    out, out_e = torch.empty(1, 3), torch.empty(1, 3)
    lrelu_page(a, out, out_e)
    assert_printed(out, [[-0.01, 0.0, 1.0]], 2)
    assert out_e.tolist() == [[-0.25, 0.0, 1.0]]


# ------------------------------------------------------------------------------------------ matmul
# pypto-matmul.md prints no results: each documented call (shapes, dtypes, out_dtype, a_trans/b_trans,
# extend_params) is compared with torch.  Small integer-valued inputs keep every product and sum exact.

def _ints(shape, dtype, lo=-4, hi=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def _cut_scale(s: float) -> float:
    """The page's rule for `scale`: the FP32 sign, exponent and top 10 mantissa bits take part."""
    return float((np.array([s], np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)[0])


# pypto-matmul.md: basic BF16 -> BF16, batched FP16, batch broadcasting FP32, INT8 -> INT32
@BOTH
def test_matmul_page_basic_batched_broadcast():
    @pypto.frontend.jit
    def matmul_page_basic(a1: pypto.Tensor(), b1: pypto.Tensor(), a2: pypto.Tensor(), b2: pypto.Tensor(),
                          a3: pypto.Tensor(), b3: pypto.Tensor(), out1: pypto.Tensor(), out2: pypto.Tensor(),
                          out3: pypto.Tensor(), a4: pypto.Tensor(), b4: pypto.Tensor(), out4: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 64])
        pypto.set_vec_tile_shapes(1, 16, 64)
        out1[:] = pypto.matmul(a1, b1, pypto.DT_BF16)
        out2[:] = pypto.matmul(a2, b2, pypto.DT_FP16)
        out3[:] = pypto.matmul(a3, b3, pypto.DT_FP32)
        out4[:] = pypto.matmul(a4, b4, pypto.DT_INT32)  # the page's dtype table: INT8 x INT8 -> INT32

    a1, b1 = _ints((16, 32), torch.bfloat16, seed=1), _ints((32, 64), torch.bfloat16, seed=2)
    a2, b2 = _ints((2, 16, 32), torch.float16, seed=3), _ints((2, 32, 16), torch.float16, seed=4)
    a3, b3 = _ints((1, 32, 64), torch.float32, seed=5), _ints((3, 64, 16), torch.float32, seed=6)
    out1 = torch.empty(16, 64, dtype=torch.bfloat16)
    out2 = torch.empty(2, 16, 16, dtype=torch.float16)
    out3 = torch.empty(3, 32, 16)
    a4, b4 = _ints((16, 32), torch.int8, -128, 128, seed=19), _ints((32, 64), torch.int8, -128, 128, seed=20)
    out4 = torch.empty(16, 64, dtype=torch.int32)
    matmul_page_basic(a1, b1, a2, b2, a3, b3, out1, out2, out3, a4, b4, out4)
    assert torch.equal(out1, (a1.float() @ b1.float()).bfloat16())
    assert torch.equal(out2, (a2.float() @ b2.float()).half())
    assert torch.equal(out3, a3 @ b3)
    assert torch.equal(out4, a4.int() @ b4.int())


# pypto-matmul.md: a_trans (input stored [K, M]) and b_trans (mat2 stored [N, K])
@BOTH
def test_matmul_page_transposed_operands():
    @pypto.frontend.jit
    def matmul_page_trans(at: pypto.Tensor(), b: pypto.Tensor(), a: pypto.Tensor(), bt: pypto.Tensor(),
                          o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        o1[:] = pypto.matmul(at, b, pypto.DT_FP32, a_trans=True)
        o2[:] = pypto.matmul(a, bt, pypto.DT_FP32, b_trans=True)
        o3[:] = pypto.matmul(at, bt, pypto.DT_FP32, a_trans=True, b_trans=True)

    a, b = _ints((16, 32), torch.float16, seed=7), _ints((32, 64), torch.float16, seed=8)
    at, bt = a.t().contiguous(), b.t().contiguous()
    outs = [torch.empty(16, 64) for _ in range(3)]
    matmul_page_trans(at, b, a, bt, *outs)
    want = a.float() @ b.float()
    for o in outs:
        assert torch.equal(o, want)


# pypto-matmul.md: bias_tensor [1, n] FP16 with FP16 inputs and an FP32 result
@BOTH
def test_matmul_page_bias():
    @pypto.frontend.jit
    def matmul_page_bias(a: pypto.Tensor(), b: pypto.Tensor(), bias: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={'bias_tensor': bias})

    a, b = _ints((16, 32), torch.float16, seed=9), _ints((32, 64), torch.float16, seed=10)
    bias = (torch.arange(64, dtype=torch.float16) * 0.5 - 16).reshape(1, 64)
    out = torch.empty(16, 64)
    matmul_page_bias(a, b, bias, out)
    assert torch.equal(out, a.float() @ b.float() + bias.float())


# pypto-matmul.md: dequantization INT8 x INT8 -> BF16 by `scale` 0.2, without and with RELU
@BOTH
def test_matmul_page_dequant_scale():
    @pypto.frontend.jit
    def matmul_page_dequant(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(16, 64)  # a scaled store is a vector pass here (docs/tensor.md)
        o1[:] = pypto.matmul(a, b, pypto.DT_BF16, extend_params={'scale': 0.2})
        o2[:] = pypto.matmul(a, b, pypto.DT_BF16, extend_params={'scale': 0.2, 'relu_type': pypto.ReLuType.RELU})

    a, b = _ints((16, 32), torch.int8, -8, 8, seed=11), _ints((32, 64), torch.int8, -8, 8, seed=12)
    o1, o2 = torch.empty(16, 64, dtype=torch.bfloat16), torch.empty(16, 64, dtype=torch.bfloat16)
    matmul_page_dequant(a, b, o1, o2)
    # acc * 0.199951171875 is exact in FP32 (|acc| < 2**12, 11 significant bits), so one rounding to BF16
    want = (a.int() @ b.int()).float() * _cut_scale(0.2)
    assert torch.equal(o1, want.bfloat16())
    assert torch.equal(o2, torch.relu(want).bfloat16())


# pypto-matmul.md: per-channel dequantization by a [1, 64] UINT64 scale_tensor with RELU -> BF16
@BOTH
def test_matmul_page_dequant_scale_tensor():
    @pypto.frontend.jit
    def matmul_page_dequant_st(a: pypto.Tensor(), b: pypto.Tensor(), st: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(16, 64)  # a scaled store is a vector pass here (docs/tensor.md)
        out[:] = pypto.matmul(a, b, pypto.DT_BF16, extend_params={'scale_tensor': st, 'relu_type': pypto.ReLuType.RELU})

    a, b = _ints((16, 32), torch.int8, -8, 8, seed=13), _ints((32, 64), torch.int8, -8, 8, seed=14)
    scales = torch.linspace(0.01, 0.5, 64)
    # the FP32 bits of each scale in the low 32 bits, as torch_npu.npu_trans_quant_param packs them
    st = (scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF).to(torch.uint64).reshape(1, 64)
    out = torch.empty(16, 64, dtype=torch.bfloat16)
    matmul_page_dequant_st(a, b, st, out)
    cut = torch.tensor([_cut_scale(float(s)) for s in scales], dtype=torch.float64)
    want = torch.relu((a.int() @ b.int()).double() * cut)
    torch.testing.assert_close(out.double(), want, rtol=2 ** -8, atol=0)


# pypto-matmul.md: quantization FP16 x FP16 -> INT8 by `scale` 0.2 (round to nearest even, saturate)
@BOTH
def test_matmul_page_quant_scale():
    @pypto.frontend.jit
    def matmul_page_quant(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(16, 64)  # a scaled store is a vector pass here (docs/tensor.md)
        out[:] = pypto.matmul(a, b, pypto.DT_INT8, extend_params={'scale': 0.2})

    a, b = _ints((16, 32), torch.float16, -6, 7, seed=15), _ints((32, 64), torch.float16, -6, 7, seed=16)
    out = torch.empty(16, 64, dtype=torch.int8)
    matmul_page_quant(a, b, out)
    want = torch.clamp(torch.round((a.float() @ b.float()).double() * _cut_scale(0.2)), -128, 127)
    assert torch.equal(out.double(), want)


# pypto-matmul.md: quantization FP32 x FP32 -> INT8 by a UINT64 scale_tensor with RELU
@BOTH
def test_matmul_page_quant_scale_tensor():
    @pypto.frontend.jit
    def matmul_page_quant_st(a: pypto.Tensor(), b: pypto.Tensor(), st: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(16, 64)  # a scaled store is a vector pass here (docs/tensor.md)
        out[:] = pypto.matmul(a, b, pypto.DT_INT8, extend_params={'scale_tensor': st, 'relu_type': pypto.ReLuType.RELU})

    a, b = _ints((16, 32), torch.float32, -6, 7, seed=17), _ints((32, 64), torch.float32, -6, 7, seed=18)
    scales = torch.linspace(0.05, 2.0, 64)
    st = (scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF).to(torch.uint64).reshape(1, 64)
    out = torch.empty(16, 64, dtype=torch.int8)
    matmul_page_quant_st(a, b, st, out)
    cut = torch.tensor([_cut_scale(float(s)) for s in scales], dtype=torch.float64)
    want = torch.clamp(torch.round(torch.relu((a @ b).double() * cut)), -128, 127)
    assert torch.equal(out.double(), want)


# pypto-maximum.md (tensors, an int scalar on either side)
@BOTH
def test_maximum_page():
    @pypto.frontend.jit
    def maximum_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.maximum(a, b)
        o2[:] = pypto.maximum(a, 3)
        o3[:] = pypto.maximum(3, a)

    a = torch.tensor([0, 2, 4], dtype=torch.int32)
    b = torch.tensor([3, 1, 3], dtype=torch.int32)
    outs = [torch.zeros(3, dtype=torch.int32) for _ in range(3)]
    maximum_page(a, b, *outs)
    assert outs[0].tolist() == [3, 2, 4]
    assert outs[1].tolist() == outs[2].tolist() == [3, 3, 4]


# pypto-maximum.md (an INT32 Element operand)
@pytest.mark.parametrize("pypto_backend", INT_ELEMENT_BACKENDS)
def test_maximum_page_element(pypto_backend):
    @pypto.frontend.jit
    def maximum_page_element(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.maximum(a, pypto.Element(pypto.DT_INT32, 3))

    o = torch.zeros(3, dtype=torch.int32)
    maximum_page_element(torch.tensor([0, 2, 4], dtype=torch.int32), o)
    assert o.tolist() == [3, 3, 4]


# pypto-minimum.md (tensors, an int scalar on either side)
@BOTH
def test_minimum_page():
    @pypto.frontend.jit
    def minimum_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.minimum(a, b)
        o2[:] = pypto.minimum(a, 1)
        o3[:] = pypto.minimum(1, a)

    a = torch.tensor([0, 2, 4], dtype=torch.int32)
    b = torch.tensor([3, 1, 3], dtype=torch.int32)
    outs = [torch.zeros(3, dtype=torch.int32) for _ in range(3)]
    minimum_page(a, b, *outs)
    assert outs[0].tolist() == [0, 1, 3]
    assert outs[1].tolist() == outs[2].tolist() == [0, 1, 1]


# pypto-minimum.md (an INT32 Element operand)
@pytest.mark.parametrize("pypto_backend", INT_ELEMENT_BACKENDS)
def test_minimum_page_element(pypto_backend):
    @pypto.frontend.jit
    def minimum_page_element(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.minimum(a, pypto.Element(pypto.DT_INT32, 1))

    o = torch.zeros(3, dtype=torch.int32)
    minimum_page_element(torch.tensor([0, 2, 4], dtype=torch.int32), o)
    assert o.tolist() == [0, 1, 1]


# pypto-mul.md (tensors; an int scalar with a float tensor; an int scalar with an int tensor)
@BOTH
def test_mul_page():
    @pypto.frontend.jit
    def mul_page(x: pypto.Tensor(), y: pypto.Tensor(), xi: pypto.Tensor(), z: pypto.Tensor(), z2: pypto.Tensor(),
                 zi: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        z[:] = pypto.mul(x, y)
        z2[:] = pypto.mul(x, 2)
        zi[:] = pypto.mul(xi, 3)

    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    xi = torch.tensor([[1, 2, 3], [-1, -2, -3]], dtype=torch.int32)
    z, z2, zi = torch.empty(2, 3), torch.empty(2, 3), torch.empty(2, 3, dtype=torch.int32)
    mul_page(x, x.clone(), xi, z, z2, zi)
    assert_printed(z, [[1.0, 4.0, 9.0], [1.0, 4.0, 9.0]], 1)
    assert z2.tolist() == [[2.0, 4.0, 6.0], [2.0, 4.0, 6.0]]
    assert zi.tolist() == [[3, 6, 9], [-3, -6, -9]]


# pypto-neg.md
@BOTH
def test_neg_page():
    @pypto.frontend.jit
    def neg_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.neg(x)

    y = torch.empty(5)
    neg_page(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), y)
    assert_printed(y, [-1.0, -2.0, -3.0, -4.0, -5.0], 1)


# pypto-one_hot.md (INT64 result of shape input.shape + [num_classes])
@BOTH
def test_one_hot_page():
    @pypto.frontend.jit
    def one_hot_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.one_hot(x, 5)

    y = torch.full((3, 5), -1, dtype=torch.int64)
    one_hot_page(torch.tensor([0, 2, 4], dtype=torch.int32), y)
    assert y.tolist() == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]]


# pypto-one_hot.md: the result dtype is INT64
def test_one_hot_page_dtype():
    seen = {}

    @pypto.frontend.jit
    def one_hot_page_dtype(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.one_hot(x, 5)
        seen["dtype"], seen["shape"] = r.dtype, list(r.shape)
        y[:] = r

    one_hot_page_dtype(torch.tensor([0, 2, 4], dtype=torch.int32), torch.empty(3, 5, dtype=torch.int64))
    assert seen == {"dtype": pypto.DT_INT64, "shape": [3, 5]}


# pypto-ones.md (sizes as varargs with the default FP32, as a list with dtype=DT_INT32)
@BOTH
def test_ones_page():
    seen = {}

    @pypto.frontend.jit
    def ones_page(x1: pypto.Tensor(), x2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 3)
        r1 = pypto.ones(2, 3)
        r2 = pypto.ones([2, 3], dtype=pypto.DT_INT32)
        seen["dtypes"] = (r1.dtype, r2.dtype)
        x1[:] = r1
        x2[:] = r2

    x1, x2 = torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.int32)
    ones_page(x1, x2)
    assert seen["dtypes"] == (pypto.DT_FP32, pypto.DT_INT32)
    assert_printed(x1, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], 0)
    assert x2.tolist() == [[1, 1, 1], [1, 1, 1]]
