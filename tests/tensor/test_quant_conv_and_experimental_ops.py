"""The official op pages of ops added after the a..z page tests (hicann/pypto ``docs/zh/api/tensor_api/operation/``
and the older ``docs/api/operation/``): ``axpy``, ``LReLU``, ``quantize``, ``dequantize``, ``quant_mx``,
``digamma``, ``index_add__ub``, ``index_add_ub``, ``conv``, ``conv_backward_input`` and the
``pypto.experimental`` pages (``gather_in_ub``, ``gather_in_l1``, ``load``, ``transposed_batchmatmul``,
``online_softmax``, ``online_softmax_update``, ``set/get_operation_options``, ``set/get_operation_config``,
``assume_divisible``), plus the names that stay ``NotImplementedError`` (``quant_mx``, ``scaled_mm``,
``sort32``/``mrgsort``, the conv tile-shape setters).

Each page's example runs as a ``@pypto.frontend.jit`` kernel and is compared with the page's printed
numbers (integers exactly, floats to half a unit of the last printed digit); where a page prints no
numbers, or for the variants its parameter tables allow, the result is compared with torch on random
inputs.  Invalid arguments raise the project's errors.
"""
import math

import pytest
import torch
import torch.nn.functional as F

import pypto

BOTH = pytest.mark.both_backends
E = pypto.experimental
D = pypto.DYNAMIC
PT = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
#: the unit in the last place of each float dtype at 1.0 (a relative tolerance of one rounding)
ULP = {torch.float32: 2.0 ** -23, torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}


def assert_printed(got: torch.Tensor, printed, decimals: int) -> None:
    """``got`` equals the page's printed numbers to half a unit in their last digit."""
    want = torch.tensor(printed, dtype=torch.float64)
    assert tuple(got.shape) == tuple(want.shape)
    err = (got.double() - want).abs().max().item()
    assert err <= 0.5 * 10.0 ** -decimals, (got.tolist(), printed)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def recording_error(kernel, *args):
    """The exception a kernel raises while it is recorded (the args only fix the shapes)."""
    with pytest.raises(Exception) as info:
        kernel(*args)
    return info.value


# ================================================================================================ axpy (docs/api)
# pypto-axpy.md: the basic example (the returned tensor is the updated y, which shares y's memory)
@BOTH
def test_axpy_page():
    @pypto.frontend.jit
    def axpy_page(y: pypto.Tensor(), x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = pypto.axpy(y, x, alpha=2.0)

    y, x, out = torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[2.0, 3.0, 4.0]]), torch.empty(1, 3)
    axpy_page(y, x, out)
    assert out.tolist() == [[5.0, 8.0, 11.0]] and y.tolist() == [[5.0, 8.0, 11.0]]


# pypto-axpy.md: the broadcast, clone-backup, mixed FP32 + FP16 and BF16 examples
@BOTH
def test_axpy_page_variants():
    @pypto.frontend.jit
    def axpy_variants(yb: pypto.Tensor(), xb: pypto.Tensor(), yc: pypto.Tensor(), xc: pypto.Tensor(),
                      diff: pypto.Tensor(), ym: pypto.Tensor(), xm: pypto.Tensor(), yh: pypto.Tensor(),
                      xh: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.axpy(yb, xb, alpha=1.5)
        backup = pypto.clone(yc)
        result = pypto.axpy(yc, xc, alpha=2.0)
        diff[:] = pypto.sub(result, backup)
        pypto.axpy(ym, xm, alpha=1.0)
        pypto.axpy(yh, xh, alpha=2.0)

    g = gen(1)
    yb, xb = torch.randn(64, 64, generator=g), torch.randn(64, 1, generator=g)
    yc, xc = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
    ym, xm = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g).half()
    yh, xh = torch.randn(32, 32, generator=g).bfloat16(), torch.randn(32, 32, generator=g).bfloat16()
    want = [yb + 1.5 * xb, yc + 2.0 * xc, ym + xm.float(), (yh.float() + 2.0 * xh.float()).bfloat16()]
    yc0, diff = yc.clone(), torch.empty(32, 32)
    axpy_variants(yb, xb, yc, xc, diff, ym, xm, yh, xh)
    for got, w in zip((yb, yc, ym), want):
        torch.testing.assert_close(got, w, rtol=1e-6, atol=1e-6)
    assert torch.equal(yh, want[3])  # BF16: computed in FP32, rounded once
    torch.testing.assert_close(diff, yc - yc0, rtol=0, atol=0)


# pypto-axpy.md: random shapes of 1-4 dims (x broadcasting where it has 1s), FP16 y with alpha converted to FP16
@BOTH
@pytest.mark.parametrize("yshape, xshape, dtype, alpha", [
    ((128,), (128,), torch.float32, -0.75),
    ((4, 8, 16), (4, 1, 16), torch.float32, 3),
    ((2, 3, 4, 16), (1, 3, 1, 16), torch.float16, 0.1),
    ((16, 48), (16, 48), torch.bfloat16, 0.3),
])
def test_axpy_random(yshape, xshape, dtype, alpha):
    @pypto.frontend.jit
    def axpy_random(y: pypto.Tensor(), x: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*([16] * len(yshape)))
        pypto.axpy(y, x, alpha)

    g = gen(2)
    y, x = torch.randn(yshape, generator=g).to(dtype), torch.randn(xshape, generator=g).to(dtype)
    a = torch.tensor(alpha, dtype=dtype).item()  # the page: alpha takes y's dtype
    want = (y.float() + a * x.float()).to(dtype)
    axpy_random(y, x)
    torch.testing.assert_close(y.float(), want.float(), rtol=ULP[dtype], atol=1e-6)


def test_axpy_rejects():
    def kernel(body):
        @pypto.frontend.jit
        def k(y: pypto.Tensor(), x: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8)
            body(y, x)
        return k

    f32, f16 = torch.zeros(8, 8), torch.zeros(8, 8).half()
    axpy = pypto.axpy
    cases = [
        (lambda y, x: axpy(y, x), torch.zeros(8, 8, dtype=torch.int32), torch.zeros(8, 8, dtype=torch.int32),
         pypto.KernelTypeError, "FP32, FP16 or BF16"),
        (lambda y, x: axpy(y, x), f16, f32, pypto.KernelTypeError, "mixed dtypes"),
        (lambda y, x: axpy(y, x), torch.zeros(8, 1), f32, pypto.KernelTypeError, "does not broadcast"),
        (lambda y, x: axpy(y, x), f32, torch.zeros(8), pypto.KernelTypeError, "same number of dims"),
        (lambda y, x: axpy(y, x, alpha=True), f32, f32, pypto.KernelTypeError, "alpha"),
        (lambda y, x: axpy(y, x, alpha="2"), f32, f32, pypto.KernelTypeError, "alpha"),
        (lambda y, x: axpy(y + 1, x), f32, f32, pypto.KernelTypeError, "kernel parameter"),
        (lambda y, x: axpy(y.reshape([1, 1, 1, 8, 8]), x.reshape([1, 1, 1, 8, 8])), f32, f32,
         pypto.KernelTypeError, "1-4"),
    ]
    for body, y, x, err, text in cases:
        e = recording_error(kernel(body), y, x)
        assert isinstance(e, err) and text in str(e), (text, e)


# ================================================================================================ LReLU (docs/api)
# pypto-LReLU.md: the example (default slope 0.01)
@BOTH
def test_lrelu_upper_page():
    @pypto.frontend.jit
    def lrelu_upper_page(a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.LReLU(a)

    out = torch.empty(1, 3)
    lrelu_upper_page(torch.tensor([[-1.0, 0.0, 1.0]]), out)
    assert_printed(out, [[-0.01, 0.0, 1.0]], 2)


@BOTH
@pytest.mark.parametrize("shape, dtype, slope", [((6, 40), torch.float32, 0.2), ((2, 3, 33), torch.float16, 0.01),
                                                 ((2, 2, 3, 17), torch.bfloat16, 0.0), ((5, 9), torch.float32, 3)])
def test_lrelu_upper_random(shape, dtype, slope):
    @pypto.frontend.jit
    def lrelu_upper_random(a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*([16] * len(shape)))
        out[:] = pypto.LReLU(a, slope)

    a = torch.randn(shape, generator=gen(3)).to(dtype)
    out = torch.empty(shape, dtype=dtype)
    lrelu_upper_random(a, out)
    want = F.leaky_relu(a.float(), slope).to(dtype)
    torch.testing.assert_close(out.float(), want.float(), rtol=ULP[dtype], atol=0)


def test_lrelu_upper_rejects():
    for x, slope, err in [(torch.zeros(8), 0.1, pypto.KernelTypeError), (torch.zeros(2, 2, dtype=torch.int32), 0.1,
                                                                          pypto.KernelTypeError),
                          (torch.zeros(2, 2), -0.1, pypto.KernelValueError), (torch.zeros(2, 2), math.nan,
                                                                              pypto.KernelValueError),
                          (torch.zeros(2, 2), math.inf, pypto.KernelValueError), (torch.zeros(2, 2), True,
                                                                                  pypto.KernelTypeError)]:
        @pypto.frontend.jit
        def k(a: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8)
            out[:] = pypto.LReLU(a, slope)

        assert isinstance(recording_error(k, x, torch.empty_like(x)), err), (x.shape, slope)


# ================================================================================================ quantize
# pypto-quantize.md: the example.  y1 (symmetric) is the printed result.  The printed y2, [6, 3, 8, 1] per row,
# is x - zero_points, which contradicts the page's formula round(x * scale + zero_points) (the official tests
# check the formula); the formula is implemented, and x - 5 lies below UINT8's range, so it saturates to 0.
@BOTH
def test_quantize_page():
    @pypto.frontend.jit
    def quantize_page(x: pypto.Tensor(), scale: pypto.Tensor(), zp: pypto.Tensor(), y1: pypto.Tensor(),
                      y2: pypto.Tensor(), y3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.quantize(x, scale, pypto.DT_INT8, -1, None)
        y2[:] = pypto.quantize(x, scale, pypto.DT_UINT8, -1, zp)
        y3[:] = pypto.quantize(x, scale, pypto.DT_UINT8, -1, pypto.neg(zp))  # x + 5: the printed digits

    x = torch.tensor([[1.1, -2.2, 3.3, -4.4]] * 3)
    scale, zp = torch.ones(3), torch.full((3,), -5.0)
    y1 = torch.empty(3, 4, dtype=torch.int8)
    y2, y3 = torch.empty(3, 4, dtype=torch.uint8), torch.empty(3, 4, dtype=torch.uint8)
    quantize_page(x, scale, zp, y1, y2, y3)
    assert y1.tolist() == [[1, -2, 3, -4]] * 3
    assert y2.tolist() == [[0, 0, 0, 0]] * 3
    assert y3.tolist() == [[6, 3, 8, 1]] * 3


def quantize_ref(x, scale, zp, axis, dtype):
    """round-half-even(x * scale [+ zp]) clamped to ``dtype``'s range; scale/zp one per row/column."""
    def per(t):
        return t.unsqueeze(axis) if t.dim() < x.dim() else t
    y = x * per(scale)
    if zp is not None:
        y = y + per(zp)
    info = torch.iinfo(dtype)
    return torch.round(y).clamp(info.min, info.max).to(dtype)


@BOTH
@pytest.mark.parametrize("shape, axis, keep, dtype, asym", [
    ((37,), -1, True, torch.int8, False),
    ((6, 40), -1, False, torch.int8, False),
    ((6, 40), -2, False, torch.uint8, True),
    ((2, 5, 24), 2, True, torch.uint8, True),
    ((2, 3, 4, 20), 2, False, torch.int8, True),
])
def test_quantize_random(shape, axis, keep, dtype, asym):
    a = axis - len(shape) if axis >= 0 else axis
    sshape = list(shape)
    if keep:
        sshape[a] = 1
    else:
        del sshape[a]

    @pypto.frontend.jit
    def quantize_random(x: pypto.Tensor(), scale: pypto.Tensor(), zp: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*([8] * len(shape)))
        y[:] = pypto.quantize(x, scale, PTI[dtype], axis, zp if asym else None)

    g = gen(4)
    x = torch.randn(shape, generator=g) * 3
    scale = torch.rand(sshape, generator=g) * 40 + 1  # some products leave the INT8 / UINT8 range
    zp = torch.randint(-20, 120, sshape, generator=g).float()
    scale.view(-1)[:4] = 1.0  # the first four elements: ties (half to even) and NaN
    x.view(-1)[:4] = torch.tensor([2.5, -3.5, 0.5, math.nan])
    y = torch.empty(shape, dtype=dtype)
    quantize_random(x, scale, zp, y)
    want = quantize_ref(x, scale, zp if asym else None, a, dtype)
    want[torch.isnan(x)] = 0  # NaN quantizes to 0 (documented decision)
    assert torch.equal(y, want)


PTI = {torch.int8: pypto.DT_INT8, torch.uint8: pypto.DT_UINT8, torch.int16: pypto.DT_INT16}


# pypto-dequantize.md: the example (its scale / zero_points are [3, 1]; the one-dim-less [3] form works too)
@BOTH
def test_dequantize_page():
    @pypto.frontend.jit
    def dequantize_page(x: pypto.Tensor(), scale: pypto.Tensor(), zp: pypto.Tensor(), s1: pypto.Tensor(),
                        y1: pypto.Tensor(), y2: pypto.Tensor(), y3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.dequantize(x, scale, pypto.DT_FP32, -1, None)
        y2[:] = pypto.dequantize(x, scale, pypto.DT_FP32, -1, zp)
        y3[:] = pypto.dequantize(x, s1, pypto.DT_FP32, 1, pypto.reshape(zp, [3]))

    x = torch.tensor([[1, 2, 3, 4]] * 3, dtype=torch.int8)
    scale, zp, s1 = torch.ones(3, 1), torch.full((3, 1), -2.0), torch.ones(3)
    y1, y2, y3 = torch.empty(3, 4), torch.empty(3, 4), torch.empty(3, 4)
    dequantize_page(x, scale, zp, s1, y1, y2, y3)
    assert y1.tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
    # (x - zero_points) * scale, as the official on-board test checks (the page prints x + zero_points)
    assert y2.tolist() == [[3.0, 4.0, 5.0, 6.0]] * 3 and y3.tolist() == y2.tolist()


@BOTH
@pytest.mark.parametrize("shape, axis, dtype, asym", [((40,), -1, torch.int16, True), ((6, 40), -2, torch.int8, False),
                                                      ((2, 5, 24), -1, torch.uint8, True),
                                                      ((2, 3, 4, 20), -2, torch.int16, True)])
def test_dequantize_random(shape, axis, dtype, asym):
    sshape = list(shape)
    sshape[axis] = 1

    @pypto.frontend.jit
    def dequantize_random(x: pypto.Tensor(), scale: pypto.Tensor(), zp: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*([8] * len(shape)))
        y[:] = pypto.dequantize(x, scale, pypto.DT_FP32, axis, zp if asym else None)

    g = gen(5)
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max + 1, shape, generator=g, dtype=torch.int64).to(dtype)
    scale, zp = torch.rand(sshape, generator=g), torch.randint(-50, 50, sshape, generator=g).float()
    y = torch.empty(shape)
    dequantize_random(x, scale, zp, y)
    want = ((x.float() - zp) if asym else x.float()) * scale
    assert torch.equal(y, want)


# quantize then dequantize with the reciprocal scale: back to within half a step
@BOTH
def test_quantize_dequantize_round_trip():
    @pypto.frontend.jit
    def round_trip(x: pypto.Tensor(), scale: pypto.Tensor(), inv: pypto.Tensor(), zp: pypto.Tensor(),
                   back: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        q = pypto.quantize(x, scale, pypto.DT_UINT8, -1, zp)
        back[:] = pypto.dequantize(q, inv, pypto.DT_FP32, -1, zp)

    g = gen(6)
    x = torch.rand(8, 64, generator=g) * 2 - 1
    scale = torch.full((8,), 100.0)
    zp = torch.full((8,), 127.0)
    back = torch.empty(8, 64)
    round_trip(x, scale, 1 / scale, zp, back)
    assert (back - x).abs().max().item() <= 0.5 / 100 + 1e-6


def test_quantize_rejects():
    def run(body, x, *extra, out_dtype=torch.int8):
        @pypto.frontend.jit
        def k(x: pypto.Tensor(), s: pypto.Tensor(), y: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8)
            y[:] = body(x, s)
        return recording_error(k, x, *extra, torch.empty(x.shape, dtype=out_dtype))

    x = torch.zeros(4, 8)
    q, dq = pypto.quantize, pypto.dequantize
    assert isinstance(run(lambda a, s: q(a, s, pypto.DT_INT8, -1), x.half(), torch.ones(4)), pypto.KernelTypeError)
    assert isinstance(run(lambda a, s: q(a, s, pypto.DT_INT16, -1), x, torch.ones(4)), pypto.KernelTypeError)
    assert isinstance(run(lambda a, s: q(a, s, pypto.DT_INT8, -3), x, torch.ones(4)), pypto.KernelValueError)
    assert isinstance(run(lambda a, s: q(a, s, pypto.DT_INT8, -2), torch.zeros(8), torch.ones(1)),
                      pypto.KernelValueError)  # a 1-D input: only axis -1
    e = run(lambda a, s: q(a, s, pypto.DT_INT8, -1), x, torch.ones(8))  # a column scale for axis=-1
    assert isinstance(e, pypto.KernelTypeError) and "does not fit axis=-1" in str(e)
    assert isinstance(run(lambda a, s: q(a, s, pypto.DT_INT8, -1), x, torch.ones(4).half()), pypto.KernelTypeError)
    xi = torch.zeros(4, 8, dtype=torch.int32)
    assert isinstance(run(lambda a, s: dq(a, s, pypto.DT_FP32, -1), xi, torch.ones(4), out_dtype=torch.float32),
                      pypto.KernelTypeError)
    xi8 = torch.zeros(4, 8, dtype=torch.int8)
    assert isinstance(run(lambda a, s: dq(a, s, pypto.DT_FP16, -1), xi8, torch.ones(4), out_dtype=torch.float16),
                      pypto.KernelTypeError)
    assert isinstance(run(lambda a, s: dq(a, s, pypto.DT_FP32, True), xi8, torch.ones(4), out_dtype=torch.float32),
                      pypto.KernelTypeError)


# pypto-quant_mx.md: MX formats (FP8E4M3 / FP4_E2M1 elements, FP8E8M0 scales) are not available here
def test_quant_mx_not_implemented():
    @pypto.frontend.jit
    def quant_mx_page(x: pypto.Tensor(), q: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 64)
        q[:] = pypto.quant_mx(x)[0]

    e = recording_error(quant_mx_page, torch.zeros(8, 64), torch.zeros(8, 64))
    assert isinstance(e, NotImplementedError) and "pypto.quant_mx" in str(e)


# ================================================================================================ digamma
# pypto-digamma.md: the example
@BOTH
def test_digamma_page():
    @pypto.frontend.jit
    def digamma_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.digamma(x)

    y = torch.empty(4)
    digamma_page(torch.tensor([0.5, 1.0, 2.0, 3.0]), y)
    assert_printed(y, [-1.9635, -0.5772, 0.4228, 0.9228], 4)


# FP32 / FP16 against torch over the real line (poles excluded), and the special values as torch
@BOTH
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_digamma_random(dtype):
    @pypto.frontend.jit
    def digamma_random(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.digamma(x)

    g = gen(7)
    x = torch.cat([torch.rand(4, 64, generator=g) * 60 - 30, torch.rand(2, 64, generator=g) * 4 - 2,
                   10.0 ** (torch.rand(2, 64, generator=g) * 12 - 6)]).to(dtype)
    y = torch.empty_like(x)
    digamma_random(x, y)
    want = torch.digamma(x.double())
    if dtype == torch.float32:  # a few FP32 ulps of the terms: relative, plus absolute near the root 1.46
        assert ((y.double() - want).abs() <= 4e-6 * want.abs() + 1e-6).all()
    else:
        torch.testing.assert_close(y.double(), want.to(dtype).double(), rtol=2 * ULP[dtype], atol=2e-3)


@BOTH
def test_digamma_special_values():
    @pypto.frontend.jit
    def digamma_special(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        y[:] = pypto.digamma(x)

    x = torch.tensor([0.0, -0.0, -1.0, -7.0, -1e30, math.inf, -math.inf, math.nan, 1e30, -2.5])
    y = torch.empty_like(x)
    digamma_special(x, y)
    torch.testing.assert_close(y, torch.digamma(x), equal_nan=True, rtol=1e-6, atol=0)


# ================================================================================================ index_add__ub
# pypto-index_add__ub.md: the example (alpha given and default); pypto-index_add_ub.md (its out-of-place form)
@BOTH
def test_index_add__ub_page():
    @pypto.frontend.jit
    def index_add__ub_page(x: pypto.Tensor(), x2: pypto.Tensor(), source: pypto.Tensor(), index: pypto.Tensor(),
                           y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.index_add__ub(x, 0, index, source, alpha=1)
        y[:] = r
        pypto.index_add__ub(x2, 0, index, source)
        z[:] = pypto.index_add_ub(x2, 0, index, source, alpha=2)

    x, x2 = torch.zeros(2, 3, dtype=torch.int32), torch.zeros(2, 3, dtype=torch.int32)
    source, index = torch.ones(3, 3, dtype=torch.int32), torch.tensor([0, 1, 0], dtype=torch.int32)
    y, z = torch.empty(2, 3, dtype=torch.int32), torch.empty(2, 3, dtype=torch.int32)
    index_add__ub_page(x, x2, source, index, y, z)
    assert x.tolist() == [[2, 2, 2], [1, 1, 1]] and y.tolist() == x.tolist() and x2.tolist() == x.tolist()
    assert z.tolist() == [[6, 6, 6], [3, 3, 3]]  # x2 unchanged by the out-of-place form


@BOTH
@pytest.mark.parametrize("shape, dim, count, dtype, alpha", [((7, 12), 1, 5, torch.float32, 0.5),
                                                             ((4, 6, 16), 0, 9, torch.float16, 1),
                                                             ((3, 5, 4, 8), -2, 6, torch.int16, 3),
                                                             ((2, 3, 4, 5, 8), 3, 7, torch.int32, -2)])
def test_index_add_ub_random(shape, dim, count, dtype, alpha):
    @pypto.frontend.jit
    def index_add_ub_random(x: pypto.Tensor(), index: pypto.Tensor(), source: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*([4] * min(len(shape), 4)))
        y[:] = pypto.index_add_ub(x, dim, index, source, alpha=alpha)
        pypto.index_add__ub(x, dim, index, source, alpha=alpha)

    g = gen(8)
    sshape = list(shape)
    sshape[dim] = count
    if dtype.is_floating_point:
        x, source = torch.randn(shape, generator=g).to(dtype), torch.randn(sshape, generator=g).to(dtype)
    else:
        x, source = torch.randint(-50, 50, shape, generator=g).to(dtype), torch.randint(-9, 9, sshape, generator=g).to(dtype)
    index = torch.randint(0, shape[dim], (count,), generator=g, dtype=torch.int32)
    want = x.double().index_add(dim, index.long(), source.double(), alpha=alpha)
    y = torch.empty_like(x)
    index_add_ub_random(x, index, source, y)
    tol = 4 * ULP[dtype] if dtype.is_floating_point else 0
    for got in (y, x):
        torch.testing.assert_close(got.double(), want.to(dtype).double(), rtol=tol, atol=tol)


def test_index_add_ub_rejects():
    def run(x, index, source, fn=pypto.index_add__ub):
        @pypto.frontend.jit
        def k(x: pypto.Tensor(), index: pypto.Tensor(), source: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 4)
            fn(x, 0, index, source)
        return recording_error(k, x, index, source)

    idx = torch.zeros(2, dtype=torch.int32)
    assert "FP32, FP16, BF16, INT16 or INT32" in str(run(torch.zeros(4, 4, dtype=torch.int8), idx,
                                                         torch.zeros(2, 4, dtype=torch.int8)))
    assert "dtype" in str(run(torch.zeros(4, 4), idx, torch.zeros(2, 4).half(), pypto.index_add_ub))
    assert "1-D" in str(run(torch.zeros(4, 4), idx.reshape(1, 2), torch.zeros(2, 4)))
    assert "1-5 dims" in str(run(torch.zeros(1, 1, 1, 1, 4, 4), idx, torch.zeros(1, 1, 1, 1, 4, 4)))


# ================================================================================================ conv
def conv_ref(x, w, strides, paddings, dilations, groups=1, bias=None, relu=False):
    """torch's convolution in float64 (the page's paddings: a (before, after) pair per spatial dim)."""
    nsp = x.dim() - 2
    flat = []
    for i in reversed(range(nsp)):
        flat += [paddings[2 * i], paddings[2 * i + 1]]
    fn = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
    y = fn(F.pad(x.double(), flat), w.double(), None if bias is None else bias.double(), stride=strides,
           dilation=dilations, groups=groups)
    return y.relu() if relu else y


def conv_kernel(dtype, strides, paddings, dilations, groups=1, bias=False, relu=False, vec=(8, 8, 8, 8), cube=True):
    @pypto.frontend.jit
    def conv_k(x: pypto.Tensor(), w: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*vec)
        if cube:  # else: the default cube tiles of the composition (the page sets conv tiles only)
            pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        params = {}
        if bias:
            params["bias_tensor"] = b
        if relu:
            params["relu_type"] = pypto.ConvReLuType.RELU
        out[:] = pypto.conv(x, w, PT[dtype], strides=strides, paddings=paddings, dilations=dilations, groups=groups,
                            extend_params=params or None)
    return conv_k


def check_conv(xs, ws, dtype, strides, paddings, dilations, groups=1, bias=False, relu=False, seed=9, cube=True):
    g = gen(seed)
    x, w = torch.randn(xs, generator=g).to(dtype), torch.randn(ws, generator=g).to(dtype)
    b = torch.randn(ws[0], generator=g).to(dtype)
    want = conv_ref(x, w, strides, paddings, dilations, groups, b if bias else None, relu)
    out = torch.empty(want.shape, dtype=dtype)
    conv_kernel(dtype, strides, paddings, dilations, groups, bias, relu, (8,) * min(len(xs), 4), cube)(x, w, b, out)
    # FP32 accumulation (another order than float64) and one rounding to the dtype
    scale = conv_ref(x.abs(), w.abs(), strides, paddings, dilations, groups, b.abs() if bias else None)
    err = (out.double() - want).abs()
    assert (err <= ULP[dtype] * want.abs() + 1e-6 * scale + 1e-6).all(), err.max().item()


# pypto-conv.md: its three examples (2-D 1x1, 2-D with bias and RELU, 3-D), against torch (the page prints shapes)
@BOTH
def test_conv_page_examples():
    check_conv((1, 32, 8, 16), (32, 32, 1, 1), torch.float16, [1, 1], [0, 0, 0, 0], [1, 1], cube=False)
    check_conv((1, 32, 8, 16), (32, 32, 1, 1), torch.float16, [1, 1], [0, 0, 0, 0], [1, 1], bias=True, relu=True,
               cube=False)
    check_conv((1, 96, 2, 16, 16), (32, 96, 1, 1, 1), torch.float16, [1, 1, 1], [0] * 6, [1, 1, 1], cube=False)


@BOTH
@pytest.mark.parametrize("xs, ws, dtype, strides, paddings, dilations, groups, bias, relu", [
    ((2, 3, 17), (5, 3, 3), torch.float32, [2], [1, 2], [2], 1, True, False),
    ((2, 4, 9, 10), (6, 4, 3, 3), torch.float32, [2, 1], [1, 1, 2, 0], [1, 2], 1, True, True),
    ((1, 4, 9, 10), (6, 2, 3, 2), torch.float16, [2, 3], [1, 0, 1, 1], [1, 1], 2, False, False),
    ((1, 6, 7, 8), (6, 1, 3, 3), torch.bfloat16, [1, 1], [1, 1, 1, 1], [1, 1], 6, True, False),
    ((1, 2, 5, 6, 6), (3, 2, 2, 3, 3), torch.float32, [1, 2, 1], [1, 0, 0, 1, 1, 1], [1, 1, 2], 1, False, True),
])
def test_conv_random(xs, ws, dtype, strides, paddings, dilations, groups, bias, relu):
    check_conv(xs, ws, dtype, strides, paddings, dilations, groups, bias, relu)


def test_conv_rejects():
    def err(xs, ws, dtype=torch.float32, out_dtype=None, strides=(1, 1), paddings=(0, 0, 0, 0), dilations=(1, 1),
            **kw):
        @pypto.frontend.jit
        def k(x: pypto.Tensor(), w: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8, 8, 8)
            out[:] = pypto.conv(x, w, out_dtype or PT[dtype], list(strides), list(paddings), list(dilations), **kw)
        x, w = torch.zeros(xs, dtype=dtype), torch.zeros(ws, dtype=dtype)
        return recording_error(k, x, w, torch.zeros(4))

    s = (1, 4, 8, 8), (4, 4, 3, 3)
    assert isinstance(err((4, 8), (4, 8)), pypto.KernelTypeError)
    assert isinstance(err(*s, out_dtype=pypto.DT_FP16), pypto.KernelTypeError)
    assert isinstance(err((1, 4, 8, 8), (4, 4, 3)), pypto.KernelTypeError)
    assert isinstance(err(*s, dtype=torch.int32, out_dtype=pypto.DT_INT32), pypto.KernelTypeError)
    assert isinstance(err(*s, strides=(1,)), pypto.KernelTypeError)
    assert isinstance(err(*s, strides=(0, 1)), pypto.KernelValueError)
    assert isinstance(err(*s, dilations=(64, 1)), pypto.KernelValueError)
    assert isinstance(err(*s, paddings=(3, 0, 0, 0)), pypto.KernelValueError)  # pad >= kernel extent 3
    assert isinstance(err((1, 4, 8, 8), (6, 2, 3, 3), groups=3), pypto.KernelValueError)
    assert isinstance(err((1, 4, 2, 2), (4, 4, 3, 3)), pypto.KernelValueError)  # input smaller than the kernel
    assert isinstance(err(*s, transposed=True), NotImplementedError)
    assert isinstance(err(*s, output_paddings=[1, 1]), NotImplementedError)
    assert isinstance(err(*s, extend_params={"scale": 0.5}), NotImplementedError)
    assert isinstance(err(*s, extend_params={"relu_type": 7}), pypto.KernelTypeError)
    assert isinstance(err(*s, extend_params={"bias_tensor": None, "other": 1}), NotImplementedError)


# pypto-conv_backward_input.md: the example (FP16, 3x3, pad 1), against torch's input gradient
def conv_bp_check(gs, ws, input_size, dtype, strides, paddings, dilations, seed=10, cube=True):
    @pypto.frontend.jit
    def conv_bp(grad: pypto.Tensor(), w: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 16, 16, 16)
        if cube:
            pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        out[:] = pypto.conv_backward_input(grad, input_size, w, PT[dtype], strides=strides, paddings=paddings,
                                           dilations=dilations)

    g = gen(seed)
    grad, w = torch.randn(gs, generator=g).to(dtype), torch.randn(ws, generator=g).to(dtype)
    want = torch.nn.grad.conv2d_input(input_size, w.double(), grad.double(), stride=strides,
                                      padding=(paddings[0], paddings[2]), dilation=dilations)
    scale = torch.nn.grad.conv2d_input(input_size, w.double().abs(), grad.double().abs(), stride=strides,
                                       padding=(paddings[0], paddings[2]), dilation=dilations)
    out = torch.empty(input_size, dtype=dtype)
    conv_bp(grad, w, out)
    err = (out.double() - want).abs()
    assert (err <= ULP[dtype] * want.abs() + 1e-6 * scale + 1e-6).all(), err.max().item()


@BOTH
def test_conv_backward_input_page():
    conv_bp_check((1, 16, 5, 32), (16, 16, 3, 3), (1, 16, 5, 32), torch.float16, [1, 1], [1, 1, 1, 1], [1, 1],
                  cube=False)


@BOTH
@pytest.mark.parametrize("gs, ws, input_size, dtype, strides, paddings, dilations", [
    ((2, 4, 4, 5), (4, 3, 3, 2), (2, 3, 8, 11), torch.float16, [2, 2], [1, 1, 0, 0], [1, 1]),
    ((1, 4, 3, 4), (4, 2, 2, 3), (1, 2, 11, 7), torch.bfloat16, [3, 2], [0, 0, 1, 1], [2, 1]),
])
def test_conv_backward_input_random(gs, ws, input_size, dtype, strides, paddings, dilations):
    conv_bp_check(gs, ws, input_size, dtype, strides, paddings, dilations)


def test_conv_backward_input_rejects():
    def err(input_size=(1, 4, 5, 5), dtype=torch.float16, paddings=(1, 1, 1, 1), **kw):
        @pypto.frontend.jit
        def k(grad: pypto.Tensor(), w: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8, 8, 8)
            out[:] = pypto.conv_backward_input(grad, input_size, w, PT[dtype], [1, 1], list(paddings), [1, 1], **kw)
        return recording_error(k, torch.zeros(1, 4, 5, 5, dtype=dtype), torch.zeros(4, 4, 3, 3, dtype=dtype),
                               torch.zeros(4))

    assert isinstance(err(dtype=torch.float32), pypto.KernelTypeError)
    assert isinstance(err(groups=2), NotImplementedError)
    assert isinstance(err(paddings=(1, 0, 1, 1)), NotImplementedError)
    assert isinstance(err(input_size=(1, 4, 6, 5)), pypto.KernelValueError)  # Hout 5 comes from Hin 5 only
    assert isinstance(err(input_size=(1, 3, 5, 5)), pypto.KernelValueError)


# pypto-set_convbp_input_tile_shapes.md: the NPU's conv-backward tile objects are not offered (conv tiles with
# the vec / cube tile shapes)
def test_convbp_tile_shape_setters_not_implemented():
    for fn in (pypto.set_convbp_input_tile_shapes, pypto.get_convbp_input_tile_shapes):
        with pytest.raises(NotImplementedError, match="pypto.conv"):
            fn()


# ================================================================================================ experimental
# pypto-experimental-gather_in_ub.md: the example (block_size 2, page table [0, 2, 1])
PARAM = torch.tensor([[0.0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33], [40, 41, 42, 43],
                      [50, 51, 52, 53]])


@BOTH
def test_gather_in_ub_page():
    @pypto.frontend.jit
    def gather_in_ub_page(param: pypto.Tensor(), indices: pypto.Tensor(), block_table: pypto.Tensor(),
                          out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = E.gather_in_ub(param, indices, block_table, 2, -2)

    out = torch.empty(3, 4)
    gather_in_ub_page(PARAM, torch.tensor([[0, 4, 3]], dtype=torch.int32), torch.tensor([[0, 2, 1]], dtype=torch.int32),
                      out)
    assert out.tolist() == [[0, 1, 2, 3], [20, 21, 22, 23], [50, 51, 52, 53]]


def paged_rows(indices, block_table, block_size):
    tok = indices.reshape(-1).long()
    return block_table.reshape(-1).long()[tok // block_size] * block_size + tok % block_size


# pypto-experimental-gather_in_l1.md: the example's shapes (src [16, 32], 32 indices, page table of 4 blocks of 2,
# size 16), FP16 / BF16 / INT8 sources, INT64 indices; is_b_matrix / is_trans change no value
@BOTH
@pytest.mark.parametrize("dtype, idx_dtype, flags", [(torch.float32, torch.int32, (False, False)),
                                                     (torch.float16, torch.int64, (True, True)),
                                                     (torch.int8, torch.int32, (True, False))])
def test_gather_in_l1_page(dtype, idx_dtype, flags):
    @pypto.frontend.jit
    def gather_in_l1_page(src: pypto.Tensor(), offset: pypto.Tensor(), block_table: pypto.Tensor(),
                          out: pypto.Tensor(), out_all: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = E.gather_in_l1(src, offset, block_table, 2, 16, *flags)
        out_all[:] = E.gather_in_l1(src, offset, block_table, 2, 32, *flags)

    g = gen(11)
    src = torch.randint(-100, 100, (16, 32), generator=g).to(dtype)
    offset = torch.randint(0, 8, (1, 32), generator=g).to(idx_dtype)
    block_table = torch.randperm(8, generator=g)[:4].to(torch.int32).reshape(1, 4)
    out, out_all = torch.empty(32, 16, dtype=dtype), torch.empty(32, 32, dtype=dtype)
    gather_in_l1_page(src, offset, block_table, out, out_all)
    rows = paged_rows(offset, block_table, 2)
    assert torch.equal(out_all, src[rows]) and torch.equal(out, src[rows, :16])


# gather_in_ub on a bigger paged cache (BF16, block size 4), and a token beyond the page table
@BOTH
def test_gather_in_ub_random_and_out_of_range():
    @pypto.frontend.jit
    def gather_in_ub_random(param: pypto.Tensor(), indices: pypto.Tensor(), block_table: pypto.Tensor(),
                            out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = E.gather_in_ub(param, indices, block_table, 4, -2)

    g = gen(12)
    param = torch.randn(48, 40, generator=g).bfloat16()
    block_table = torch.randperm(12, generator=g)[:10].to(torch.int32).reshape(1, 10)
    indices = torch.randint(0, 40, (1, 24), generator=g, dtype=torch.int32)
    out = torch.empty(24, 40, dtype=torch.bfloat16)
    gather_in_ub_random(param, indices, block_table, out)
    assert torch.equal(out, param[paged_rows(indices, block_table, 4)])
    indices[0, 5] = 40  # logical block 10: beyond the 10-entry page table
    with pytest.raises(pypto.KernelRuntimeError):
        gather_in_ub_random(param, indices, block_table, out)


def test_gather_in_rejects():
    def err(body, param=PARAM, indices=torch.zeros(1, 3, dtype=torch.int32), table=torch.zeros(1, 3, dtype=torch.int32)):
        @pypto.frontend.jit
        def k(p: pypto.Tensor(), i: pypto.Tensor(), t: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            out[:] = body(p, i, t)
        return recording_error(k, param, indices, table, torch.zeros(3, 4))

    assert isinstance(err(lambda p, i, t: E.gather_in_ub(p, i, t, 2, -1)), pypto.KernelValueError)
    assert isinstance(err(lambda p, i, t: E.gather_in_ub(p, i, t, 0, -2)), pypto.KernelValueError)
    assert isinstance(err(lambda p, i, t: E.gather_in_ub(p, i, t, 2, -2), indices=torch.zeros(3, dtype=torch.int32)),
                      pypto.KernelTypeError)
    assert isinstance(err(lambda p, i, t: E.gather_in_ub(p, i, t, 2, -2), table=torch.zeros(1, 3, dtype=torch.int64)),
                      pypto.KernelTypeError)
    assert isinstance(err(lambda p, i, t: E.gather_in_l1(p, i, t, 2, 5, False, False)), pypto.KernelValueError)
    assert isinstance(err(lambda p, i, t: E.gather_in_l1(p, i, t, 2, 2, 1, False)), pypto.KernelTypeError)
    assert isinstance(err(lambda p, i, t: E.gather_in_l1(p, i, t, 2, 2, False, False), param=PARAM.int()),
                      pypto.KernelTypeError)


# pypto-experimental-load.md: the example (offsets into the flattened source)
@BOTH
def test_load_page():
    @pypto.frontend.jit
    def load_page(src: pypto.Tensor(), offsets: pypto.Tensor(), dst: pypto.Tensor(), dst3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4)
        dst[:] = E.load(src, offsets)
        dst3[:] = E.load(src, pypto.reshape(offsets, [2, 1, 3]))

    src = torch.tensor([[2.2, 3], [7.3, 1], [-1.5, 100.2]])
    offsets = torch.tensor([[2, 5, 3], [1, 2, 0]], dtype=torch.int32)
    dst, dst3 = torch.empty(2, 3), torch.empty(2, 1, 3)
    load_page(src, offsets, dst, dst3)
    assert_printed(dst, [[7.3, 100.2, 1], [3, 7.3, 2.2]], 1)
    assert torch.equal(dst3.reshape(2, 3), dst)
    offsets[1, 1] = 6
    with pytest.raises(pypto.KernelRuntimeError):
        load_page(src, offsets, dst, dst3)


def test_load_rejects():
    @pypto.frontend.jit
    def k(src: pypto.Tensor(), offsets: pypto.Tensor(), dst: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4)
        dst[:] = E.load(src, offsets)

    assert isinstance(recording_error(k, torch.zeros(3, 2), torch.zeros(6, dtype=torch.int32), torch.zeros(6)),
                      pypto.KernelTypeError)
    assert isinstance(recording_error(k, torch.zeros(3, 2), torch.zeros(2, 3), torch.zeros(2, 3)),
                      pypto.KernelTypeError)


# pypto-experimental-transposed_batchmatmul.md: the example's shapes ((16, 2, 32) x (2, 32, 64) -> (16, 2, 64)), FP16
# without cube tile shapes (as the page), and BF16 inputs with an FP16 result under given cube tiles
@BOTH
@pytest.mark.parametrize("dtype, out_dtype", [(torch.float16, torch.float16), (torch.bfloat16, torch.float16)])
def test_transposed_batchmatmul_page(dtype, out_dtype):
    @pypto.frontend.jit
    def transposed_bmm(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 2, 64)
        if dtype == torch.bfloat16:
            pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
        c[:] = E.transposed_batchmatmul(a, b, PT[out_dtype])

    g = gen(13)
    a, b = torch.randn(16, 2, 32, generator=g).to(dtype), torch.randn(2, 32, 64, generator=g).to(dtype)
    c = torch.empty(16, 2, 64, dtype=out_dtype)
    transposed_bmm(a, b, c)
    want = (a.double().permute(1, 0, 2) @ b.double()).permute(1, 0, 2)
    err = (c.double() - want).abs()
    assert (err <= ULP[out_dtype] * want.abs() + 1e-5).all(), err.max().item()


def test_transposed_batchmatmul_rejects():
    def err(a, b, out_dtype=pypto.DT_FP16):
        @pypto.frontend.jit
        def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
            pypto.set_vec_tile_shapes(16, 2, 64)
            c[:] = E.transposed_batchmatmul(a, b, out_dtype)
        return recording_error(k, a, b, torch.zeros(4))

    h = torch.float16
    assert isinstance(err(torch.zeros(16, 2, 32), torch.zeros(2, 32, 64)), pypto.KernelTypeError)
    assert isinstance(err(torch.zeros(16, 2, 32, dtype=h), torch.zeros(2, 32, 64, dtype=torch.bfloat16)),
                      pypto.KernelTypeError)
    assert isinstance(err(torch.zeros(16, 2, 32, dtype=h), torch.zeros(2, 32, 64, dtype=h), pypto.DT_FP32),
                      pypto.KernelTypeError)
    assert isinstance(err(torch.zeros(16, 2, 32, dtype=h), torch.zeros(3, 32, 64, dtype=h)), pypto.KernelTypeError)
    assert isinstance(err(torch.zeros(2, 32, dtype=h), torch.zeros(32, 64, dtype=h)), pypto.KernelTypeError)


# pypto-experimental-online_softmax.md / online_softmax_update.md: the examples' shapes; two blocks of scores
# merged by the update and normalised give softmax over the whole column, and the attention output P^T V
@BOTH
def test_online_softmax_pages():
    @pypto.frontend.jit
    def online_softmax_pages(s1: pypto.Tensor(), s2: pypto.Tensor(), v1: pypto.Tensor(), v2: pypto.Tensor(),
                             e1: pypto.Tensor(), m1: pypto.Tensor(), l1: pypto.Tensor(), m: pypto.Tensor(),
                             l: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(64, 64)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
        p1, cm1, cs1 = E.online_softmax(s1, 0.125)
        p2, cm2, cs2 = E.online_softmax(s2, 0.125)
        e1[:] = p1
        m1[:] = cm1
        l1[:] = cs1
        o1 = pypto.matmul(v1, p1, pypto.DT_FP32, a_trans=True)  # [head_dim, q_len]
        o2 = pypto.matmul(v2, p2, pypto.DT_FP32, a_trans=True)
        um, us, uo = E.online_softmax_update(cm1, cs1, o1, cm2, cs2, o2)
        m[:] = um
        l[:] = us
        o[:] = uo

    g = gen(14)
    k_len, q_len, hd = 64, 128, 32
    s1, s2 = torch.randn(k_len, q_len, generator=g) * 4, torch.randn(k_len, q_len, generator=g) * 4
    v1, v2 = torch.randn(k_len, hd, generator=g).bfloat16(), torch.randn(k_len, hd, generator=g).bfloat16()
    e1 = torch.empty(k_len, q_len, dtype=torch.bfloat16)
    m1, l1, m, l = (torch.empty(1, q_len) for _ in range(4))
    o = torch.empty(hd, q_len)
    online_softmax_pages(s1, s2, v1, v2, e1, m1, l1, m, l, o)
    x1 = s1.double() * 0.125
    want_m1 = x1.amax(0, keepdim=True)
    want_e1 = torch.exp(x1 - want_m1)
    torch.testing.assert_close(m1.double(), want_m1, rtol=0, atol=0)
    torch.testing.assert_close(e1.double(), want_e1.bfloat16().double(), rtol=ULP[torch.bfloat16], atol=0)
    torch.testing.assert_close(l1.double(), want_e1.sum(0, keepdim=True), rtol=1e-5, atol=0)
    s = torch.cat([s1, s2]).double() * 0.125
    torch.testing.assert_close(m.double(), s.amax(0, keepdim=True), rtol=0, atol=0)
    torch.testing.assert_close(l.double(), torch.exp(s - s.amax(0, keepdim=True)).sum(0, keepdim=True), rtol=1e-5,
                               atol=0)
    p = torch.softmax(s, 0)  # [k, q]: the exponentials were rounded to BF16 before P^T V
    want_o = torch.cat([v1, v2]).double().T @ p
    torch.testing.assert_close((o / l).double(), want_o, rtol=0, atol=2e-2)


def test_online_softmax_rejects():
    def err(body, *args):
        @pypto.frontend.jit
        def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(8, 8)
            out[:] = body(a, b)[0]
        return recording_error(k, *args, torch.zeros(4))

    assert isinstance(err(lambda a, b: E.online_softmax(a, 0.5), torch.zeros(8, 8).half(), torch.zeros(1)),
                      pypto.KernelTypeError)
    assert isinstance(err(lambda a, b: E.online_softmax(a, "0.5"), torch.zeros(8, 8), torch.zeros(1)),
                      pypto.KernelTypeError)
    assert isinstance(err(lambda a, b: E.online_softmax_update(a, a, b, a, a, b), torch.zeros(1, 8),
                          torch.zeros(4, 16)), pypto.KernelTypeError)  # q_len 8 vs 16
    assert isinstance(err(lambda a, b: E.online_softmax_update(a, a, b, a, a, pypto.reshape(b, [8, 2])),
                          torch.zeros(1, 4), torch.zeros(4, 4)), pypto.KernelTypeError)


# pypto-experimental-set_operation_options.md / get_operation_options.md, and the older set/get_operation_config
# pages: combine_axis (inline tail-axis broadcast) is what the lowering always does, so either value is accepted
# and read back; a setting inside a kernel applies to that kernel; pypto.reset_options forgets them
@BOTH
def test_operation_options_pages():
    assert E.get_operation_options() == {"combine_axis": False, "force_combine_axis": False}
    E.set_operation_options(combine_axis=True)
    assert E.get_operation_options()["combine_axis"] is True
    E.set_operation_config(force_combine_axis=False)
    assert E.get_operation_config() == {"combine_axis": True, "force_combine_axis": False}
    seen = {}

    @pypto.frontend.jit
    def combine_axis_kernel(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 128)
        E.set_operation_options(combine_axis=False)
        seen.update(E.get_operation_options())
        out[:] = a + b  # the page's (32, 1) + (32, 128)

    g = gen(15)
    a, b, out = torch.randn(32, 1, generator=g), torch.randn(32, 128, generator=g), torch.empty(32, 128)
    combine_axis_kernel(a, b, out)
    assert torch.equal(out, a + b) and seen["combine_axis"] is False
    assert E.get_operation_options()["combine_axis"] is True  # outside the kernel: unchanged
    with pytest.raises(ValueError):
        E.set_operation_options(combine_axis=1)
    pypto.reset_options()
    assert E.get_operation_options() == {"combine_axis": False, "force_combine_axis": False}


# pypto-experimental-assume_divisible.md: the example (a view's valid_shape from a DYNAMIC dim declared a multiple
# of the tile), ints, and the errors; with runtime_debug_mode=4 a launch breaking the contract raises
@BOTH
def test_assume_divisible_page():
    @pypto.frontend.jit
    def assume_divisible_page(a: pypto.Tensor([D, 128], pypto.DT_FP32), o: pypto.Tensor([D, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 128)
        tile_m = 64
        valid_m = E.assume_divisible(a.shape[0], tile_m)
        for i in pypto.loop(0, a.shape[0], tile_m):
            tile = pypto.view(a, [tile_m, 128], [i, 0], valid_shape=[valid_m.min(tile_m), 128])
            pypto.assemble(tile * 2.0, [i, 0], o)

    for rows in (64, 192):
        a = torch.randn(rows, 128, generator=gen(rows))
        o = torch.zeros(rows, 128)
        assume_divisible_page(a, o)
        assert torch.equal(o, a * 2)
    a, o = torch.randn(100, 128), torch.zeros(100, 128)
    assume_divisible_page(a, o)  # not checked by default (the page: a contract without a run-time check)
    pypto.set_debug_options(runtime_debug_mode=4)
    with pytest.raises(pypto.KernelRuntimeError, match="100 is not a multiple of 64"):
        assume_divisible_page(a, o)
    assume_divisible_page(torch.randn(128, 128), torch.zeros(128, 128))


def test_assume_divisible_values_and_errors():
    s = E.assume_divisible(128, 64)
    assert isinstance(s, pypto.SymbolicScalar) and s.concrete() == 128
    sym = pypto.SymbolicScalar(256)
    assert E.assume_divisible(sym, 16) is sym
    with pytest.raises(ValueError):
        E.assume_divisible(100, 64)
    with pytest.raises(ValueError):
        E.assume_divisible(128, 0)
    with pytest.raises(pypto.KernelTypeError):
        E.assume_divisible(128.0, 64)
    with pytest.raises(pypto.KernelTypeError):
        E.assume_divisible(128, 2.0)


# ================================================================================================ not implemented
# sort32 / mrgsort (no tensor-level page; the NPU's sorted-block layout).  (pypto.scaled_mm: tests/tensor/
# test_scaled_mm.py; pypto.distributed and shmem_load/store: tests/distributed.)
def test_remaining_names_not_implemented():
    for fn, name in [(pypto.sort32, "pypto.sort32"), (pypto.mrgsort, "pypto.mrgsort")]:
        with pytest.raises(NotImplementedError, match=name):
            fn()
