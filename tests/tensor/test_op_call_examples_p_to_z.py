"""The "call example" sections of the official operation pages ``docs/zh/api/operation/pypto-<op>.md``
(ops ``p`` .. ``z``) and of the tensor pages ``docs/zh/api/tensor/pypto-Tensor-*.md`` (hicann/pypto),
run through our implementation as jit kernels and compared with the printed results.

Tolerances: half a unit in the last printed digit (``half(d)``); where the page prints 4-digit
inputs of a transcendental op, plus ``|f'(x)|`` times half a unit of the input (the page's outputs
come from the unprinted digits).  Integer and BOOL results are compared exactly.
"""
import math

import pytest
import torch

import pypto

D = pypto.DT_FP32


def half(decimals: int) -> float:
    """Half a unit in the last of ``decimals`` printed digits."""
    return 0.5 * 10.0 ** -decimals


def assert_printed(got: torch.Tensor, want, tol) -> None:
    """``got`` has the shape of the printed ``want`` and is within ``tol`` (scalar or per element)."""
    w = torch.tensor(want, dtype=torch.float64)
    assert tuple(got.shape) == tuple(w.shape), f"shape {tuple(got.shape)} != printed {tuple(w.shape)}"
    t = tol if isinstance(tol, torch.Tensor) else torch.full_like(w, tol)
    err = (got.double() - w).abs()
    assert torch.all(err <= t + 1e-9), f"got {got.tolist()}, page prints {want} (max err {err.max().item():.3g})"


def assert_exact(got: torch.Tensor, want, dtype=None) -> None:
    if dtype is not None:
        assert got.dtype == dtype
    assert got.tolist() == want, f"got {got.tolist()}, page prints {want}"


# ================================================================================ operation pages
# pypto-pad.md
@pytest.mark.both_backends
def test_pad_page():
    @pypto.frontend.jit
    def pad_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.pad(x, (0, 1, 0, 1), mode="constant", value=0.0)

    x = torch.tensor([0.0, 1.0, 2.0, 3.0]).reshape(1, 1, 2, 2)
    y = torch.full((1, 1, 3, 3), 7.0)
    pad_page(x, y)
    assert_exact(y, [[[[0.0, 1.0, 0.0], [2.0, 3.0, 0.0], [0.0, 0.0, 0.0]]]])


# pypto-pad.md (1-D right padding and the float values the page allows, -inf included)
def test_pad_page_variants():
    @pypto.frontend.jit
    def pad_page_1d(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.pad(x, (0, 2), value=float("-inf"))
        z[:] = pypto.pad(x, [0, 1], "constant", -1.0)

    x = torch.tensor([0.5, 1.5, 2.5])
    y, z = torch.zeros(5), torch.zeros(4)
    pad_page_1d(x, y, z)
    assert_exact(y, [0.5, 1.5, 2.5, -math.inf, -math.inf])
    assert_exact(z, [0.5, 1.5, 2.5, -1.0])


# pypto-pad.md (constraint: integer dtypes take integer values only, a float value raises ValueError)
@pytest.mark.parametrize("value", [0.5, float("-inf")])
def test_pad_page_integer_dtype_rejects_float_value(value):
    @pypto.frontend.jit
    def pad_page_int_float(x: pypto.Tensor(), y: pypto.Tensor(), v: float):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.pad(x, (0, 1), value=v)

    x, y = torch.tensor([[1, 2]], dtype=torch.int32), torch.zeros(1, 3, dtype=torch.int32)
    with pytest.raises(ValueError):
        pad_page_int_float(x, y, value)


# pypto-permute.md
@pytest.mark.both_backends
def test_permute_page():
    @pypto.frontend.jit
    def permute_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 3, 4)
        y[:] = pypto.permute(x, [3, 1, 0, 2])

    x_data = [[[[0.9586, -0.4325, 0.7582, -2.6209],
                [1.0931, -0.3324, -2.3653, -0.0324],
                [1.6083, 1.3619, -0.1481, 0.4394]],
               [[0.2353, -0.7177, -0.4954, 0.4158],
                [-0.9788, -1.4224, 0.2558, 1.5322],
                [-0.6645, 2.1023, 0.8968, 0.8690]]]]
    y_page = [[[[0.9586, 1.0931, 1.6083]], [[0.2353, -0.9788, -0.6645]]],
              [[[-0.4325, -0.3324, 1.3619]], [[-0.7177, -1.4224, 2.1023]]],
              [[[0.7582, -2.3653, -0.1481]], [[-0.4954, 0.2558, 0.8968]]],
              [[[-2.6209, -0.0324, 0.4394]], [[0.4158, 1.5322, 0.8690]]]]
    x = torch.tensor(x_data)
    y = torch.zeros(4, 2, 1, 3)
    permute_page(x, y)
    assert torch.equal(y, torch.tensor(y_page))  # a copy: the same float32 values


# pypto-pow.md
@pytest.mark.both_backends
def test_pow_page():
    @pypto.frontend.jit
    def pow_page(x: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.pow(x, 2)
        z[:] = pypto.pow(x, b)

    x = torch.tensor([[1.0, 2.0], [-3.0, 4.0]])
    b = torch.tensor([[2.0, 2.0], [1.0, 1.0]])
    y, z = torch.zeros(2, 2), torch.zeros(2, 2)
    pow_page(x, b, y, z)
    assert_printed(y, [[1.0, 4.0], [9.0, 16.0]], half(1))
    assert_printed(z, [[1.0, 4.0], [-3.0, 4.0]], half(1))


# pypto-pow.md (result dtypes: int exponent keeps the dtype, float exponent of INT32 gives FP32, the
# promotion table for two tensors; precision_type HIGH_PRECISION / INTRINSIC)
def test_pow_page_dtypes_and_precision_types():
    seen = {}

    @pypto.frontend.jit
    def pow_page_dtypes(xi: pypto.Tensor(), xh: pypto.Tensor(), xb: pypto.Tensor(), xf: pypto.Tensor(),
                        o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor(), o4: pypto.Tensor(),
                        o5: pypto.Tensor(), o6: pypto.Tensor(), o7: pypto.Tensor(), o8: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        exprs = {
            "int32 ** 2": pypto.pow(xi, 2),
            "int32 ** 2.0": pypto.pow(xi, 2.0),
            "fp16 ** 2.0": pypto.pow(xh, 2.0),
            "fp16 ** bf16": pypto.pow(xh, xb),
            "fp32 ** fp16": pypto.pow(xf, xh),
            "int32 ** fp16": pypto.pow(xi, xh),
            "fp16 ** fp16 HIGH": pypto.pow(xh, xh, pypto.PrecisionType.HIGH_PRECISION),
            "fp32 ** fp32 INTRINSIC": pypto.pow(xf, xf, pypto.PrecisionType.INTRINSIC),
        }
        for name, e in exprs.items():
            seen[name] = e.dtype
        for o, e in zip((o1, o2, o3, o4, o5, o6, o7, o8), exprs.values()):
            o[:] = e

    xi = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    xh, xb, xf = xi.half(), xi.bfloat16(), xi.float()
    outs = [torch.zeros(2, 2, dtype=t) for t in (torch.int32, torch.float32, torch.float16, torch.float32,
                                                  torch.float32, torch.float16, torch.float16, torch.float32)]
    pow_page_dtypes(xi, xh, xb, xf, *outs)
    assert seen == {"int32 ** 2": pypto.DT_INT32, "int32 ** 2.0": pypto.DT_FP32, "fp16 ** 2.0": pypto.DT_FP16,
                    "fp16 ** bf16": pypto.DT_FP32, "fp32 ** fp16": pypto.DT_FP32, "int32 ** fp16": pypto.DT_FP16,
                    "fp16 ** fp16 HIGH": pypto.DT_FP16, "fp32 ** fp32 INTRINSIC": pypto.DT_FP32}
    # no printed values for these calls: x ** 2 and x ** x of 1..4, exact in FP16; FP32 results of the
    # exp/log path within docs/tensor.md's bound (2 |ln 256| + 3 FP32 ulps < 4e-4 at 256)
    squares, selfpow = [[1, 4], [9, 16]], [[1, 4], [27, 256]]
    assert_exact(outs[0], squares)
    assert_printed(outs[1], squares, 1e-5)
    assert_exact(outs[2], squares)
    for o in (outs[3], outs[4], outs[7]):
        assert_printed(o, selfpow, 4e-4)
    assert_exact(outs[5], selfpow)
    assert_exact(outs[6], selfpow)


# pypto-prelu.md (example 1: 1-D input, one shared weight; example 2: 2-D input, a weight per channel)
@pytest.mark.both_backends
def test_prelu_page():
    @pypto.frontend.jit
    def prelu_page(x1: pypto.Tensor(), w1: pypto.Tensor(), x2: pypto.Tensor(), w2: pypto.Tensor(),
                   o1: pypto.Tensor(), o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.prelu(x1, w1)
        o2[:] = pypto.prelu(x2, w2)

    x1, w1 = torch.tensor([-2.0, 1.0, -3.0, 0.5]), torch.tensor([0.25])
    x2, w2 = torch.tensor([[-2.0, 1.0, -3.0], [0.5, -1.0, 2.0]]), torch.tensor([0.25, 0.5, 0.1])
    o1, o2 = torch.zeros(4), torch.zeros(2, 3)
    prelu_page(x1, w1, x2, w2, o1, o2)
    assert_printed(o1, [-0.5, 1.0, -0.75, 0.5], half(2))
    assert_printed(o2, [[-0.5, 1.0, -0.3], [0.5, -0.5, 2.0]], half(1))


# pypto-prod.md (keepdim=True as on the page; keepdim=False drops the axis)
@pytest.mark.both_backends
def test_prod_page():
    @pypto.frontend.jit
    def prod_page(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.prod(x, -1, True)
        z[:] = pypto.prod(x, -1)

    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    y, z = torch.zeros(2, 1), torch.zeros(2)
    prod_page(x, y, z)
    assert_printed(y, [[6.0], [6.0]], half(1))
    assert_printed(z, [6.0, 6.0], half(1))


# pypto-reciprocal.md (example 1)
@pytest.mark.both_backends
def test_reciprocal_page():
    @pypto.frontend.jit
    def reciprocal_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.reciprocal(x)

    x, y = torch.tensor([-0.4595, -2.1219, -1.4314, 0.7298]), torch.zeros(4)
    reciprocal_page(x, y)
    assert_printed(y, [-2.1763, -0.4713, -0.6986, 1.3702], half(4))


# pypto-reciprocal.md (examples 2 and 3: the precision_type argument)
def test_reciprocal_page_precision_type():
    @pypto.frontend.jit
    def reciprocal_page_precision(xh: pypto.Tensor(), xf: pypto.Tensor(), yh: pypto.Tensor(), yf: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        yh[:] = pypto.reciprocal(xh, pypto.PrecisionType.HIGH_PRECISION)
        yf[:] = pypto.reciprocal(xf, pypto.PrecisionType.INTRINSIC)

    yh, yf = torch.zeros(1, dtype=torch.float16), torch.zeros(1)
    reciprocal_page_precision(torch.tensor([4.0]).half(), torch.tensor([4.0]), yh, yf)
    assert_exact(yh, [0.25])
    assert_exact(yf, [0.25])


# pypto-relu.md
@pytest.mark.both_backends
def test_relu_page():
    @pypto.frontend.jit
    def relu_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.relu(x)

    x, y = torch.tensor([[-2.0, 0.0, 3.0]]), torch.full((1, 3), 9.0)
    relu_page(x, y)
    assert_exact(y, [[0.0, 0.0, 3.0]])


# pypto-remainder.md (the example, the FP16 HIGH_PRECISION and FP32 INTRINSIC calls, scalar operands,
# INT32 with an integer scalar; the result keeps the input dtype)
def test_remainder_page():
    @pypto.frontend.jit
    def remainder_page(a: pypto.Tensor(), b: pypto.Tensor(), ah: pypto.Tensor(), bh: pypto.Tensor(),
                       ai: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor(),
                       o4: pypto.Tensor(), o5: pypto.Tensor(), o6: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.remainder(a, b)
        r2 = pypto.remainder(ah, bh, pypto.PrecisionType.HIGH_PRECISION)
        assert r2.dtype == pypto.DT_FP16
        o2[:] = r2
        o3[:] = pypto.remainder(a, b, pypto.PrecisionType.INTRINSIC)
        o4[:] = pypto.remainder(a, -3.0)
        o5[:] = pypto.remainder(10.0, b)
        r6 = pypto.remainder(ai, -3)
        assert r6.dtype == pypto.DT_INT32
        o6[:] = r6

    a, b = torch.tensor([7.0, 8.0, 9.0]), torch.tensor([-3.0, -3.0, -3.0])
    o = [torch.zeros(3), torch.zeros(3, dtype=torch.float16), torch.zeros(3), torch.zeros(3), torch.zeros(3),
         torch.zeros(3, dtype=torch.int32)]
    remainder_page(a, b, a.half(), b.half(), a.int(), *o)
    for got in o[:4]:
        assert_printed(got, [-2.0, -1.0, 0.0], half(1))
    assert_printed(o[4], [-2.0, -2.0, -2.0], half(1))
    assert_exact(o[5], [-2, -1, 0])


# pypto-reshape.md (example 1 without its positional valid_shape [2, 1], which the signature makes
# keyword-only and its printed y ignores; example 2:
# inplace=True in a loop(1) of its own, then the add in another loop)
@pytest.mark.both_backends
def test_reshape_page():
    @pypto.frontend.jit
    def reshape_page(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor(), w: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.reshape(x, [4, 1])
        y[:] = r
        z[:] = pypto.add(r, 1.0)
        for _ in pypto.loop(1, name="reshape_inplace", idx_name="tmp_loop"):
            x_1 = x.reshape([4], inplace=True)
        for _ in pypto.loop(1, name="loop", idx_name="loop"):
            w[:] = pypto.add(x_1, 1.0)

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    y, z, w = torch.zeros(4, 1), torch.zeros(4, 1), torch.zeros(4)
    reshape_page(x, y, z, w)
    assert_exact(y, [[1.0], [2.0], [3.0], [4.0]])
    assert_exact(z, [[2.0], [3.0], [4.0], [5.0]])
    assert_exact(w, [2.0, 3.0, 4.0, 5.0])


# pypto-round.md
def test_round_page():
    @pypto.frontend.jit
    def round_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.round(x, decimals=1)

    x, y = torch.tensor([[1.21, 2.35], [3.65, 4.76]]), torch.zeros(2, 2)
    round_page(x, y)
    assert_printed(y, [[1.2, 2.4], [3.6, 4.8]], half(1))


# pypto-rsqrt.md
def test_rsqrt_page():
    @pypto.frontend.jit
    def rsqrt_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.rsqrt(x)

    x, y = torch.tensor([[1.0, 4.0], [16.0, 9.0]]), torch.zeros(2, 2)
    rsqrt_page(x, y)
    assert_printed(y, [[1.0, 0.5], [0.25, 0.33333]], torch.tensor([[half(1), half(1)], [half(2), half(5)]]))


# pypto-rsqrt.md (the HIGH_PRECISION and INTRINSIC calls on FP16)
def test_rsqrt_page_precision_type():
    @pypto.frontend.jit
    def rsqrt_page_precision(x: pypto.Tensor(), y1: pypto.Tensor(), y2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.rsqrt(x, pypto.PrecisionType.HIGH_PRECISION)
        y2[:] = pypto.rsqrt(x, pypto.PrecisionType.INTRINSIC)

    x = torch.tensor([[1.0, 4.0], [16.0, 9.0]]).half()
    y1, y2 = torch.zeros(2, 2, dtype=torch.float16), torch.zeros(2, 2, dtype=torch.float16)
    rsqrt_page_precision(x, y1, y2)
    for y in (y1, y2):
        assert_printed(y, [[1.0, 0.5], [0.25, 0.33333]], 2.5e-4)  # one FP16 ulp at 1/3


# pypto-scatter_.md (in place on the kernel parameter x; returns x)
@pytest.mark.both_backends
def test_scatter__page():
    @pypto.frontend.jit
    def scatter__page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o = pypto.scatter_(x, 0, y, 2.0)
        assert o.shape == [3, 5]

    x, y = torch.zeros(3, 5), torch.tensor([[1, 2], [0, 1]], dtype=torch.int64)
    scatter__page(x, y)
    assert_exact(x, [[2.0, 0, 0, 0, 0], [2.0, 2.0, 0, 0, 0], [0, 2.0, 0, 0, 0]])


# pypto-scatter.md (the non-inplace form; its page points at the scatter_ example)
@pytest.mark.both_backends
def test_scatter_page():
    @pypto.frontend.jit
    def scatter_page(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.scatter(x, 0, y, 2.0)

    x, y = torch.zeros(3, 5), torch.tensor([[1, 2], [0, 1]], dtype=torch.int64)
    o = torch.full((3, 5), 9.0)
    scatter_page(x, y, o)
    assert_exact(o, [[2.0, 0, 0, 0, 0], [2.0, 2.0, 0, 0, 0], [0, 2.0, 0, 0, 0]])
    assert_exact(x, [[0.0] * 5] * 3)


# pypto-scatter_update.md (the 2-D and the 4-D example)
@pytest.mark.both_backends
def test_scatter_update_page():
    @pypto.frontend.jit
    def scatter_update_page(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor(),
                            x4: pypto.Tensor(), y4: pypto.Tensor(), z4: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        x = pypto.scatter_update(x, -2, y, z)
        x4 = pypto.scatter_update(x4, -2, y4, z4)

    x, y = torch.zeros(8, 3, dtype=torch.int32), torch.tensor([[1, 2], [4, 5]], dtype=torch.int64)
    z = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], dtype=torch.int32)
    x4, y4 = torch.zeros(2, 6, 1, 3, dtype=torch.int32), torch.tensor([[1, 8], [4, 10]], dtype=torch.int64)
    z4 = z.reshape(2, 2, 1, 3).clone()
    scatter_update_page(x, y, z, x4, y4, z4)
    assert_exact(x, [[0, 0, 0], [1, 2, 3], [4, 5, 6], [0, 0, 0], [7, 8, 9], [10, 11, 12], [0, 0, 0], [0, 0, 0]])
    assert_exact(x4, [[[[0, 0, 0]], [[1, 2, 3]], [[0, 0, 0]], [[0, 0, 0]], [[7, 8, 9]], [[0, 0, 0]]],
                      [[[0, 0, 0]], [[0, 0, 0]], [[4, 5, 6]], [[0, 0, 0]], [[10, 11, 12]], [[0, 0, 0]]]])


# pypto-sigmoid.md
@pytest.mark.both_backends
def test_sigmoid_page():
    @pypto.frontend.jit
    def sigmoid_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sigmoid(x)

    x, y = torch.tensor([-3.0, 0.0, 2.0, 5.0]), torch.zeros(4)
    sigmoid_page(x, y)
    assert_printed(y, [0.0474, 0.5000, 0.8808, 0.9933], half(4))


# pypto-sign.md
def test_sign_page():
    @pypto.frontend.jit
    def sign_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sign(x)

    x, y = torch.tensor([-5.0, 0.0, 5.0, 10.0, -2.0]), torch.zeros(5)
    sign_page(x, y)
    assert_exact(y, [-1.0, 0.0, 1.0, 1.0, -1.0])


# pypto-signbit.md (the result is DT_BOOL)
@pytest.mark.both_backends
def test_signbit_page():
    @pypto.frontend.jit
    def signbit_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.signbit(x)
        assert r.dtype == pypto.DT_BOOL
        y[:] = r

    x, y = torch.tensor([-5.0, 0.0, 5.0, 10.0, -2.0]), torch.zeros(5, dtype=torch.bool)
    signbit_page(x, y)
    assert_exact(y, [True, False, False, False, True])


# pypto-sin.md (4-digit inputs: |cos x| <= 1 times half a unit of the input on top)
@pytest.mark.both_backends
def test_sin_page():
    @pypto.frontend.jit
    def sin_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sin(x)

    x, y = torch.tensor([-0.5461, 0.1347, -2.7266, -0.2746]), torch.zeros(4)
    sin_page(x, y)
    assert_printed(y, [-0.5194, 0.1343, -0.4032, -0.2711], half(4) + half(4))


# pypto-sinh.md
def test_sinh_page():
    @pypto.frontend.jit
    def sinh_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sinh(x)

    x, y = torch.tensor([0.0, 1.0, 2.0, -1.0]), torch.zeros(4)
    sinh_page(x, y)
    assert_printed(y, [0.0000, 1.1752, 3.6269, -1.1752], half(4))


# pypto-softmax.md
@pytest.mark.both_backends
def test_softmax_page():
    @pypto.frontend.jit
    def softmax_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.softmax(x, -1)

    x, y = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), torch.zeros(2, 3)
    softmax_page(x, y)
    assert_printed(y, [[0.0900, 0.2447, 0.6652], [0.0900, 0.2447, 0.6652]], half(4))


# pypto-sqrt.md
def test_sqrt_page():
    @pypto.frontend.jit
    def sqrt_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sqrt(x)

    x, y = torch.tensor([1.0, 4.0, 9.0, 16.0, 25.0]), torch.zeros(5)
    sqrt_page(x, y)
    assert_exact(y, [1.0, 2.0, 3.0, 4.0, 5.0])


# pypto-sqrt.md (the HIGH_PRECISION and INTRINSIC calls on FP16)
def test_sqrt_page_precision_type():
    @pypto.frontend.jit
    def sqrt_page_precision(x: pypto.Tensor(), y1: pypto.Tensor(), y2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.sqrt(x, pypto.PrecisionType.HIGH_PRECISION)
        y2[:] = pypto.sqrt(x, pypto.PrecisionType.INTRINSIC)

    x = torch.tensor([1.0, 4.0, 9.0, 16.0, 25.0]).half()
    y1, y2 = torch.zeros(5, dtype=torch.float16), torch.zeros(5, dtype=torch.float16)
    sqrt_page_precision(x, y1, y2)
    assert_exact(y1, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert_exact(y2, [1.0, 2.0, 3.0, 4.0, 5.0])


# pypto-sub.md (the example; an int scalar with a float tensor is converted to the tensor's float dtype)
@pytest.mark.both_backends
def test_sub_page():
    @pypto.frontend.jit
    def sub_page(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor(), w: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        z[:] = pypto.sub(x, y)
        r = pypto.sub(y, 1)
        assert r.dtype == pypto.DT_FP32
        w[:] = r

    x, y = torch.full((2, 3), 9.0), torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    z, w = torch.zeros(2, 3), torch.zeros(2, 3)
    sub_page(x, y, z, w)
    assert_exact(z, [[8.0, 7.0, 6.0], [8.0, 7.0, 6.0]])
    assert_exact(w, [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])


# pypto-sum.md (the example, and the two sums of the (2, 3) matrix its text describes: [5, 7, 9], [6, 15])
@pytest.mark.both_backends
def test_sum_page():
    @pypto.frontend.jit
    def sum_page(x: pypto.Tensor(), m: pypto.Tensor(), y: pypto.Tensor(), s0: pypto.Tensor(), s1: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.sum(x, -1, True)
        s0[:] = pypto.sum(m, 0)
        s1[:] = pypto.sum(m, 1)

    x, m = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y, s0, s1 = torch.zeros(2, 1), torch.zeros(3), torch.zeros(2)
    sum_page(x, m, y, s0, s1)
    assert_exact(y, [[6.0], [6.0]])
    assert_exact(s0, [5.0, 7.0, 9.0])
    assert_exact(s1, [6.0, 15.0])


# pypto-tan.md (inputs are 4-digit roundings of 0, pi/4, pi/3: + |1 + tan^2| (<= 4) times half a unit)
def test_tan_page():
    @pypto.frontend.jit
    def tan_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.tan(x)

    x, y = torch.tensor([0.0000, 0.7854, 1.0472, -0.7854]), torch.zeros(4)
    tan_page(x, y)
    assert_printed(y, [0.0000, 1.0000, 1.7321, -1.0000], torch.tensor([1.0, 3.0, 5.0, 3.0]) * half(4))


# pypto-tanh.md
@pytest.mark.both_backends
def test_tanh_page():
    @pypto.frontend.jit
    def tanh_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.tanh(x)

    x, y = torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0]), torch.zeros(5)
    tanh_page(x, y)
    assert_printed(y, [-0.9951, -0.7616, 0.0000, 0.7616, 0.9951], half(4))


# pypto-topk.md (a named tuple (values, indices); MERGE_SORT as on the page, RADIX_SELECT the same)
@pytest.mark.both_backends
def test_topk_page():
    @pypto.frontend.jit
    def topk_page(x: pypto.Tensor(), v: pypto.Tensor(), i: pypto.Tensor(), v2: pypto.Tensor(), i2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y = pypto.topk(x, 2, -1, True, pypto.TopKAlgo.MERGE_SORT)
        v[:] = y[0]
        i[:] = y[1]
        r = pypto.topk(x, 2, dim=-1, largest=True, algo=pypto.TopKAlgo.RADIX_SELECT)
        v2[:] = r.values
        i2[:] = r.indices

    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    v, v2 = torch.zeros(2, 2), torch.zeros(2, 2)
    i, i2 = torch.zeros(2, 2, dtype=torch.int64), torch.zeros(2, 2, dtype=torch.int64)
    topk_page(x, v, i, v2, i2)
    for vals, idx in ((v, i), (v2, i2)):
        assert_exact(vals, [[3.0, 2.0], [3.0, 2.0]])
        assert_exact(idx, [[2, 1], [2, 1]])


# pypto-transpose.md
@pytest.mark.both_backends
def test_transpose_page():
    @pypto.frontend.jit
    def transpose_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.transpose(x, 0, 1)

    x = torch.tensor([[1.0028, -0.9893, 0.5809], [-0.1669, 0.7299, 0.4942]])
    y = torch.zeros(3, 2)
    transpose_page(x, y)
    assert torch.equal(y, torch.tensor([[1.0028, -0.1669], [-0.9893, 0.7299], [0.5809, 0.4942]]))


# pypto-tril.md
@pytest.mark.both_backends
def test_tril_page():
    @pypto.frontend.jit
    def tril_page(x: pypto.Tensor(), out: pypto.Tensor(), diagonal: int):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.tril(x, diagonal)

    x = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.int32)
    out = torch.full((3, 3), -1, dtype=torch.int32)
    tril_page(x, out, 0)
    assert_exact(out, [[1, 0, 0], [4, 5, 0], [7, 8, 9]], torch.int32)


# pypto-triu.md
@pytest.mark.both_backends
def test_triu_page():
    @pypto.frontend.jit
    def triu_page(x: pypto.Tensor(), out: pypto.Tensor(), diagonal: int):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = pypto.triu(x, diagonal)

    x = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.int32)
    out = torch.full((3, 3), -1, dtype=torch.int32)
    triu_page(x, out, 0)
    assert_exact(out, [[1, 2, 3], [0, 5, 6], [0, 0, 9]], torch.int32)


# pypto-trunc.md
def test_trunc_page():
    @pypto.frontend.jit
    def trunc_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.trunc(x)

    x, y = torch.tensor([[3.9, 4.1], [-16.8, 9.9]]), torch.zeros(2, 2)
    trunc_page(x, y)
    assert_exact(y, [[3.0, 4.0], [-16.0, 9.0]])


# pypto-unsqueeze.md
@pytest.mark.both_backends
def test_unsqueeze_page():
    @pypto.frontend.jit
    def unsqueeze_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.unsqueeze(x, 0)
        assert r.shape == [1, 2, 3]
        y[:] = r

    x, y = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), torch.zeros(1, 2, 3)
    unsqueeze_page(x, y)
    assert_exact(y, [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])


# pypto-var.md
@pytest.mark.both_backends
def test_var_page():
    @pypto.frontend.jit
    def var_page(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.var(x, 1, correction=1, keepdim=True)
        assert r.dtype == pypto.DT_FP32 and r.shape == [2, 1]
        y[:] = r

    x, y = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), torch.zeros(2, 1)
    var_page(x, y)
    assert_printed(y, [[1.0], [1.0]], half(0))  # printed "1."


# pypto-view.md (example 1: a window; example 2: valid_shape, the rows beyond it are not written;
# example 3: dtype=DT_INT8 reinterprets the FP32 bytes)
@pytest.mark.both_backends
def test_view_page():
    @pypto.frontend.jit
    def view_page(x1: pypto.Tensor(), x2: pypto.Tensor(), x3: pypto.Tensor(),
                  y1: pypto.Tensor(), y2: pypto.Tensor(), y3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y1[:] = pypto.view(x1, [4, 4], [0, 4])
        v2 = pypto.view(x2, [4, 4], [2, 4], valid_shape=[2, 4])
        assert v2.shape == [4, 4]
        y2[:] = v2
        y3[:] = pypto.view(x3, dtype=pypto.DT_INT8)

    x1 = torch.tensor([[1, 1, 2, 2, 3, 3, 4, 4]] * 4, dtype=torch.float32)
    x2 = torch.tensor([[1, 1, 2, 2, 3, 3, 4, 4]] * 2 + [[1, 1, 2, 2, 5, 5, 6, 6]] * 2, dtype=torch.float32)
    x3 = torch.tensor([[0.9405094, 0.20237109], [0.99819463, 0.13246714]])
    y1, y2, y3 = torch.zeros(4, 4), torch.zeros(4, 4), torch.zeros(2, 8, dtype=torch.int8)
    view_page(x1, x2, x3, y1, y2, y3)
    assert_exact(y1, [[3.0, 3.0, 4.0, 4.0]] * 4)
    assert_exact(y2, [[5.0, 5.0, 6.0, 6.0]] * 2 + [[0.0] * 4] * 2)
    assert_exact(y3, [[57, -59, 112, 63, 94, 58, 79, 62], [-81, -119, 127, 63, 119, -91, 7, 62]], torch.int8)


# pypto-where.md (out1: three tensors; out2: scalar operands; out3: a broadcast [2] input and a float;
# an Element operand of the tensor's dtype)
@pytest.mark.both_backends
def test_where_page():
    @pypto.frontend.jit
    def where_page(cond1: pypto.Tensor(), a1: pypto.Tensor(), b1: pypto.Tensor(), cond2: pypto.Tensor(),
                   a2: pypto.Tensor(), h: pypto.Tensor(), out1: pypto.Tensor(), out2: pypto.Tensor(),
                   out3: pypto.Tensor(), out4: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out1[:] = pypto.where(cond1, a1, b1)
        out2[:] = pypto.where(cond1, 1, 0)
        r3 = pypto.where(cond2, a2, 0.0)
        assert r3.shape == [2, 2] and r3.dtype == pypto.DT_FP32
        out3[:] = r3
        r4 = pypto.where(cond1, h, pypto.Element(pypto.DT_FP16, 1.0))
        assert r4.dtype == pypto.DT_FP16
        out4[:] = r4

    cond1 = torch.tensor([True, False, True, False])
    a1, b1 = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([10.0, 20.0, 30.0, 40.0])
    cond2, a2 = torch.tensor([[True, False], [False, True]]), torch.tensor([1.0, 2.0])
    h = torch.tensor([5.0, 6.0, 7.0, 8.0]).half()
    out1, out2, out3 = torch.zeros(4), torch.zeros(4), torch.zeros(2, 2)
    out4 = torch.zeros(4, dtype=torch.float16)
    where_page(cond1, a1, b1, cond2, a2, h, out1, out2, out3, out4)
    assert_exact(out1, [1.0, 20.0, 3.0, 40.0])
    assert_exact(out2, [1.0, 0.0, 1.0, 0.0])
    assert_exact(out3, [[1.0, 0.0], [0.0, 2.0]])
    assert_exact(out4, [5.0, 1.0, 7.0, 1.0])


# pypto-zeros.md (size as varargs with the default DT_FP32, as a tuple with dtype=DT_INT32)
@pytest.mark.both_backends
def test_zeros_page():
    @pypto.frontend.jit
    def zeros_page(x1: pypto.Tensor(), x2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 3)
        z1 = pypto.zeros(2, 3)
        z2 = pypto.zeros((2, 3), dtype=pypto.DT_INT32)
        assert z1.dtype == pypto.DT_FP32 and z2.dtype == pypto.DT_INT32
        assert z1.shape == [2, 3] and z2.shape == [2, 3]
        x1[:] = z1
        x2[:] = z2

    x1, x2 = torch.full((2, 3), 5.0), torch.full((2, 3), 5, dtype=torch.int32)
    zeros_page(x1, x2)
    assert_exact(x1, [[0.0] * 3] * 2)
    assert_exact(x2, [[0] * 3] * 2)


# pypto-rms_norm.md (the page's digits are cut, not rounded: 0.730297 is printed 0.7302, so one unit)
@pytest.mark.both_backends
def test_rms_norm_page():
    @pypto.frontend.jit
    def rms_norm_page(x: pypto.Tensor(), gamma: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = pypto.rms_norm(x, gamma)

    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    y = torch.zeros(2, 4)
    rms_norm_page(x, torch.ones(4), y)
    assert_printed(y, [[0.3651, 0.7302, 1.0954, 1.4605], [0.7580, 0.9097, 1.0613, 1.2129]], 2 * half(4))


# ================================================================================ tensor pages
# pypto-Tensor_constructor.md (the annotation forms of the page as kernel parameters; pypto.tensor with a
# name inside a kernel; a TILEOP_NZ declaration reads back, docs/tensor.md "Calling")
def test_tensor_constructor_page():
    n = pypto.SymbolicScalar("N")
    empty = pypto.Tensor()
    t1 = pypto.Tensor(shape=(4, 4), dtype=pypto.DT_FP32)
    t2 = pypto.Tensor(shape=[8, 16, 32], dtype=pypto.DT_INT32)
    named = pypto.Tensor(shape=(4, 4), dtype=pypto.DT_FP32, name="input_tensor")
    dyn = pypto.Tensor(shape=[n, 4, 8], dtype=pypto.DT_FP32)
    assert named.name == "input_tensor" and t2.dtype == pypto.DT_INT32 and t1.shape == [4, 4]
    nz = pypto.Tensor(shape=(4, 32), dtype=pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ)
    assert nz.format == pypto.TileOpFormat.TILEOP_NZ and t1.format == pypto.TileOpFormat.TILEOP_ND
    seen = {}

    @pypto.frontend.jit
    def tensor_constructor_page(a: empty, b: t1, c: t2, d: named, e: dyn, o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4, 8)
        t3 = pypto.tensor((4, 4), pypto.DT_FP32)
        t4 = pypto.tensor((4, 4), pypto.DT_FP32, name="my_tensor")
        seen["t4"] = (t3.shape, t4.shape, t4.dtype)
        t3[:] = b + d
        t4[:] = t3 * 2.0
        o[:] = t4 + a

    e = torch.zeros(3, 4, 8)
    b, d, a = torch.ones(4, 4), torch.full((4, 4), 2.0), torch.full((4, 4), 0.5)
    o = torch.zeros(4, 4)
    tensor_constructor_page(a, b, torch.zeros(8, 16, 32, dtype=torch.int32), d, e, o)
    assert seen["t4"] == ([4, 4], [4, 4], pypto.DT_FP32)
    assert_exact(o, [[6.5] * 4] * 4)


# pypto-Tensor_constructor.md (tensor4: pypto.tensor with a name inside a kernel keeps it)
def test_tensor_constructor_page_name_in_kernel():
    seen = {}

    @pypto.frontend.jit
    def tensor_constructor_page_name(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4)
        t4 = pypto.tensor((4, 4), pypto.DT_FP32, name="my_tensor")
        seen["name"] = t4.name
        t4[:] = x
        o[:] = t4

    tensor_constructor_page_name(torch.ones(4, 4), torch.zeros(4, 4))
    assert seen["name"] == "my_tensor"


# pypto-Tensor-shape.md
def test_tensor_shape_page():
    seen = {}

    @pypto.frontend.jit
    def tensor_shape_page(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        t = pypto.tensor((16, 32), pypto.DT_FP32)
        seen["out"] = t.shape
        t[:] = x + 1.0
        o[:] = t

    x, o = torch.zeros(16, 32), torch.zeros(16, 32)
    tensor_shape_page(x, o)
    assert seen["out"] == [16, 32]
    assert torch.equal(o, torch.ones(16, 32))


# pypto-Tensor-{permute,reshape,round,remainder,sigmoid,sin,softmax,sub,sum,topk,transpose,tril,triu,trunc,
# unsqueeze,view}.md: the method forms, each page referring to its op page, whose example data they run
F32 = torch.float32
METHOD_PAGES = {  # page: (method call, input, printed result, tolerance)
    "permute": (lambda x: x.permute([1, 0]), [[1.0028, -0.9893], [-0.1669, 0.7299]],
                [[1.0028, -0.1669], [-0.9893, 0.7299]], half(4)),
    "reshape": (lambda x: x.reshape([4, 1]), [[1.0, 2.0], [3.0, 4.0]], [[1.0], [2.0], [3.0], [4.0]], 0.0),
    "round": (lambda x: x.round(1), [[1.21, 2.35], [3.65, 4.76]], [[1.2, 2.4], [3.6, 4.8]], half(1)),
    "remainder": (lambda x: x.remainder(-3.0), [7.0, 8.0, 9.0], [-2.0, -1.0, 0.0], half(1)),
    "sigmoid": (lambda x: x.sigmoid(), [-3.0, 0.0, 2.0, 5.0], [0.0474, 0.5000, 0.8808, 0.9933], half(4)),
    "sin": (lambda x: x.sin(), [-0.5461, 0.1347, -2.7266, -0.2746], [-0.5194, 0.1343, -0.4032, -0.2711],
            2 * half(4)),
    "softmax": (lambda x: x.softmax(-1), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                [[0.0900, 0.2447, 0.6652], [0.0900, 0.2447, 0.6652]], half(4)),
    "sub": (lambda x: x.sub(1.0), [[9.0, 9.0, 9.0], [9.0, 9.0, 9.0]], [[8.0, 8.0, 8.0], [8.0, 8.0, 8.0]], 0.0),
    "sum": (lambda x: x.sum(-1, True), [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[6.0], [6.0]], 0.0),
    "topk": (lambda x: x.topk(2, -1, True)[0], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[3.0, 2.0], [3.0, 2.0]], 0.0),
    "transpose": (lambda x: x.transpose(0, 1), [[1.0028, -0.9893, 0.5809], [-0.1669, 0.7299, 0.4942]],
                  [[1.0028, -0.1669], [-0.9893, 0.7299], [0.5809, 0.4942]], half(4)),
    "tril": (lambda x: x.tril(0), torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.int32),
             [[1, 0, 0], [4, 5, 0], [7, 8, 9]], 0),
    "triu": (lambda x: x.triu(), torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.int32),
             [[1, 2, 3], [0, 5, 6], [0, 0, 9]], 0),
    "trunc": (lambda x: x.trunc(), [[3.9, 4.1], [-16.8, 9.9]], [[3.0, 4.0], [-16.0, 9.0]], 0.0),
    "unsqueeze": (lambda x: x.unsqueeze(0), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                  [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], 0.0),
    "view": (lambda x: x.view([4, 4], [0, 4]), [[1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]] * 4,
             [[3.0, 3.0, 4.0, 4.0]] * 4, 0.0),
}


@pytest.mark.parametrize("page", sorted(METHOD_PAGES))
def test_tensor_method_pages(page):
    fn, x, want, tol = METHOD_PAGES[page]
    x = x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=F32)

    def body(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = fn(a)

    body.__name__ = f"tensor_method_page_{page}"  # one kernel name per page (the build cache key)
    kernel = pypto.frontend.jit(body)
    o = torch.zeros(torch.tensor(want).shape, dtype=x.dtype)
    kernel(x, o)
    if tol == 0:
        assert_exact(o, want, x.dtype)
    else:
        assert_printed(o, want, tol)


# pypto-Tensor-scatter.md, pypto-Tensor-scatter_.md, pypto-Tensor-scatter_update.md (the op pages' examples)
def test_tensor_scatter_method_pages():
    @pypto.frontend.jit
    def tensor_scatter_methods(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor(), u: pypto.Tensor(),
                               i: pypto.Tensor(), s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = x.scatter(0, y, 2.0)
        x.scatter_(0, y, 2.0)
        u.scatter_update(-2, i, s)

    x, y = torch.zeros(3, 5), torch.tensor([[1, 2], [0, 1]], dtype=torch.int64)
    o = torch.zeros(3, 5)
    u, i = torch.zeros(8, 3, dtype=torch.int32), torch.tensor([[1, 2], [4, 5]], dtype=torch.int64)
    s = torch.arange(1, 13, dtype=torch.int32).reshape(4, 3)
    tensor_scatter_methods(x, y, o, u, i, s)
    want = [[2.0, 0, 0, 0, 0], [2.0, 2.0, 0, 0, 0], [0, 2.0, 0, 0, 0]]
    assert_exact(o, want)
    assert_exact(x, want)
    assert_exact(u, [[0, 0, 0], [1, 2, 3], [4, 5, 6], [0, 0, 0], [7, 8, 9], [10, 11, 12], [0, 0, 0], [0, 0, 0]])


# pypto-Tensor-where.md (where(self, condition, y): self where condition holds, else y)
def test_tensor_where_method_page():
    @pypto.frontend.jit
    def tensor_where_method(x: pypto.Tensor(), c: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = x.where(c, y)

    o = torch.zeros(4)
    tensor_where_method(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([True, False, True, False]),
                        torch.tensor([10.0, 20.0, 30.0, 40.0]), o)
    assert_exact(o, [1.0, 20.0, 3.0, 40.0])


# pypto-Tensor-reciprocal.md, pypto-Tensor-rsqrt.md, pypto-Tensor-sqrt.md (method forms with precision_type)
def test_tensor_precision_type_method_pages():
    @pypto.frontend.jit
    def tensor_precision_methods(x: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = x.reciprocal(pypto.PrecisionType.HIGH_PRECISION)
        o2[:] = x.rsqrt(pypto.PrecisionType.INTRINSIC)
        o3[:] = x.sqrt(pypto.PrecisionType.HIGH_PRECISION)

    x = torch.tensor([1.0, 4.0, 16.0, 25.0])
    o1, o2, o3 = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    tensor_precision_methods(x, o1, o2, o3)
    assert_printed(o1, [1.0, 0.25, 0.0625, 0.04], 1e-7)
    assert_printed(o2, [1.0, 0.5, 0.25, 0.2], 1e-7)
    assert_exact(o3, [1.0, 2.0, 4.0, 5.0])


# pypto-Tensor-tril_.md / pypto-Tensor-triu_.md: in-place forms (no example on the pages; torch's semantics)
@pytest.mark.both_backends
def test_tensor_tril_triu_in_place_methods():
    @pypto.frontend.jit
    def tri_in_place(a: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 16)
        a.tril_(1)
        pypto.triu_(b, -1)

    x = torch.arange(1.0, 49.0).reshape(3, 16)
    a, b = x.clone(), x.clone()
    tri_in_place(a, b)
    assert torch.equal(a, x.tril(1)) and torch.equal(b, x.triu(-1))
