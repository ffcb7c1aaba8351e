"""Every implemented tensor op against torch, through the lowered tile program on the interpreter."""
import numpy as np
import pytest
import torch

import pypto

R, C = 24, 80


def run_unary(fn, x, out_dtype=None, tile=(16, 64)):
    out = torch.empty(x.shape, dtype=out_dtype or x.dtype)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = fn(a)

    k(x, out)
    return out


def run_binary(fn, x, y, out_shape=None, out_dtype=None):
    out = torch.empty(out_shape or torch.broadcast_shapes(x.shape, y.shape), dtype=out_dtype or x.dtype)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        o[:] = fn(a, b)

    k(x, y, out)
    return out


torch.manual_seed(0)
X = torch.randn(R, C)
POS = torch.rand(R, C) + 0.1

UNARY = [
    ("neg", lambda a: -a, torch.neg, X), ("abs", pypto.abs, torch.abs, X), ("exp", pypto.exp, torch.exp, X),
    ("log", pypto.log, torch.log, POS), ("sqrt", pypto.sqrt, torch.sqrt, POS), ("rsqrt", pypto.rsqrt, torch.rsqrt, POS),
    ("reciprocal", pypto.reciprocal, torch.reciprocal, POS), ("relu", pypto.relu, torch.relu, X),
    ("sigmoid", pypto.sigmoid, torch.sigmoid, X), ("tanh", pypto.tanh, torch.tanh, X),
    ("erf", pypto.erf, torch.erf, X), ("erfc", pypto.erfc, torch.erfc, X),
    ("gelu", pypto.gelu, torch.nn.functional.gelu, X), ("silu", pypto.silu, torch.nn.functional.silu, X),
    ("floor", pypto.floor, torch.floor, X * 3), ("ceil", pypto.ceil, torch.ceil, X * 3),
    ("trunc", pypto.trunc, torch.trunc, X * 3), ("round", pypto.round, torch.round, X * 3),
    ("sign", pypto.sign, torch.sign, X), ("clip", lambda a: pypto.clip(a, -0.5, 0.5), lambda a: a.clamp(-0.5, 0.5), X),
    ("pow3", lambda a: a ** 3, lambda a: a ** 3, X), ("lrelu", pypto.lrelu,
                                                       lambda a: torch.nn.functional.leaky_relu(a, 0.01), X),
    ("log2", pypto.log2, torch.log2, POS), ("exp2", pypto.exp2, torch.exp2, X), ("expm1", pypto.expm1, torch.expm1, X),
    ("log1p", pypto.log1p, torch.log1p, POS), ("scalar_rsub", lambda a: 2.0 - a, lambda a: 2.0 - a, X),
    ("scalar_rdiv", lambda a: 2.0 / a, lambda a: 2.0 / a, POS), ("chain", lambda a: (a * 2 + 1) / 3 - a,
                                                                  lambda a: (a * 2 + 1) / 3 - a, X),
]


@pytest.mark.parametrize("name,fn,ref,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, ref, x):
    torch.testing.assert_close(run_unary(fn, x), ref(x), rtol=1e-5, atol=2e-6)


BINARY = [
    ("add", pypto.add, torch.add), ("sub", pypto.sub, torch.sub), ("mul", pypto.mul, torch.mul),
    ("div", pypto.div, torch.div), ("maximum", pypto.maximum, torch.maximum), ("minimum", pypto.minimum, torch.minimum),
    ("hypot", pypto.hypot, torch.hypot),
]


@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("yshape", [(R, C), (1, C), (R, 1), (C,), (1, 1)], ids=["same", "row", "col", "1d", "scalar"])
def test_binary_broadcast(name, fn, ref, yshape):
    y = torch.rand(yshape) + 0.5
    torch.testing.assert_close(run_binary(fn, X, y), ref(X, y), rtol=1e-5, atol=1e-6)


@pytest.mark.both_backends
def test_binary_lhs_broadcast():
    y = torch.rand(R, 1) + 0.5
    for fn, ref in ((pypto.sub, torch.sub), (pypto.div, torch.div), (pypto.add, torch.add)):
        torch.testing.assert_close(run_binary(fn, y, X + 3, out_shape=(R, C)), ref(y, X + 3))


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_to_bool(op):
    y = torch.round(X)
    got = run_binary(getattr(pypto, op), torch.round(X * 2) / 2, y, out_dtype=torch.bool)
    assert torch.equal(got, getattr(torch, op)(torch.round(X * 2) / 2, y))


@pytest.mark.both_backends
def test_where_and_logic():
    y = torch.randn(R, C)
    got = run_binary(lambda a, b: pypto.where(pypto.logical_and(a > 0, b > 0), a, b * 2), X, y)
    torch.testing.assert_close(got, torch.where((X > 0) & (y > 0), X, y * 2))
    got = run_unary(lambda a: pypto.where(a > 0.5, 1.0, a), X)
    torch.testing.assert_close(got, torch.where(X > 0.5, torch.tensor(1.0), X))


@pytest.mark.both_backends
def test_cast_fp16_bf16_int():
    torch.testing.assert_close(run_unary(lambda a: pypto.cast(a, pypto.DT_FP16), X, torch.float16), X.half())
    torch.testing.assert_close(run_unary(lambda a: pypto.cast(a, pypto.DT_BF16), X, torch.bfloat16), X.bfloat16())
    xi = X * 10
    torch.testing.assert_close(run_unary(lambda a: pypto.cast(a, pypto.DT_INT32), xi, torch.int32),
                               xi.int())  # CAST_NONE truncates like torch's .to()
    xb = X.bfloat16()
    torch.testing.assert_close(run_unary(pypto.exp, xb), torch.exp(xb.float()).bfloat16())


@pytest.mark.parametrize("fn,ref", [(pypto.sum, torch.sum), (pypto.amax, torch.amax), (pypto.amin, torch.amin)])
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("keepdim", [True, False])
@pytest.mark.parametrize("tile", [(32, 128), (16, 32)], ids=["in_tile", "multipass"])
def test_reductions(fn, ref, dim, keepdim, tile):
    x = torch.randn(2, R, C)
    want = ref(x, dim=dim, keepdim=keepdim)
    got = run_unary(lambda a: fn(a, dim, keepdim=keepdim), x, tile=tile) if False else None
    out = torch.empty(want.shape)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = fn(a, dim, keepdim=keepdim)

    k(x, out)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    assert got is None


@pytest.mark.both_backends
def test_mean_argmax():
    out = torch.empty(R, 1)
    idx = torch.empty(R, dtype=torch.int32)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), m: pypto.Tensor(), i: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 128)
        m[:] = pypto.mean(a, -1, keepdim=True)
        i[:] = pypto.argmax(a, -1)

    k(X, out, idx)
    torch.testing.assert_close(out, X.mean(-1, keepdim=True))
    assert torch.equal(idx, X.argmax(-1).int())


@pytest.mark.both_backends
def test_softmax_rmsnorm_layernorm():
    g = torch.rand(C) + 0.5
    b = torch.randn(C)
    outs = [torch.empty(R, C) for _ in range(3)]

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), gamma: pypto.Tensor(), beta: pypto.Tensor(), s: pypto.Tensor(), r: pypto.Tensor(),
          ln: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 128)
        s[:] = pypto.softmax(a, -1)
        r[:] = pypto.rms_norm(a, gamma, 1e-6)
        ln[:] = pypto.layer_norm(a, gamma, beta, 1e-5)

    k(X, g, b, *outs)
    torch.testing.assert_close(outs[0], torch.softmax(X, -1))
    torch.testing.assert_close(outs[1], X * torch.rsqrt(X.pow(2).mean(-1, keepdim=True) + 1e-6) * g)
    torch.testing.assert_close(outs[2], torch.nn.functional.layer_norm(X, (C,), g, b, 1e-5), rtol=1e-4, atol=1e-5)


@pytest.mark.both_backends
def test_shape_ops():
    x = torch.randn(4, 8, 32)
    outs = [torch.empty(8, 4, 32), torch.empty(4, 32, 8), torch.empty(32, 32), torch.empty(8, 8, 32),
            torch.empty(2, 8, 16)]

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), p: pypto.Tensor(), t: pypto.Tensor(), r: pypto.Tensor(), c: pypto.Tensor(),
          v: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 16, 32)
        p[:] = pypto.permute(a, [1, 0, 2])
        t[:] = pypto.transpose(a, 1, 2) * 2
        r[:] = pypto.reshape(a + 1, [32, 32])
        c[:] = pypto.concat([a, a * 3], 0)
        v[:] = pypto.view(a, [2, 8, 16], [1, 0, 8])

    k(x, *outs)
    torch.testing.assert_close(outs[0], x.permute(1, 0, 2))
    torch.testing.assert_close(outs[1], x.transpose(1, 2) * 2)
    torch.testing.assert_close(outs[2], (x + 1).reshape(32, 32))
    torch.testing.assert_close(outs[3], torch.cat([x, x * 3], 0))
    torch.testing.assert_close(outs[4], x[1:3, :, 8:24])


@pytest.mark.both_backends
def test_creation_and_assemble():
    out = torch.zeros(8, 64)
    ar = torch.empty(40, dtype=torch.int32)

    @pypto.frontend.jit
    def k(o: pypto.Tensor(), a: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.assemble(pypto.full([4, 64], 2.5, pypto.DT_FP32), [0, 0], o)
        o[4:8, :] = pypto.ones(4, 64) + pypto.zeros(4, 64)
        a[:] = pypto.arange(3, 123, 3)

    k(out, ar)
    assert torch.equal(out[:4], torch.full((4, 64), 2.5)) and torch.equal(out[4:], torch.ones(4, 64))
    assert torch.equal(ar, torch.arange(3, 123, 3, dtype=torch.int32))


@pytest.mark.parametrize("case", ["2d", "fp32", "batched", "bcast", "a_trans", "b_trans", "bias", "fp16_out"])
def test_matmul(case):
    torch.manual_seed(1)
    dtype = torch.float32 if case == "fp32" else torch.float16
    a = torch.randn(40, 48, dtype=dtype)
    b = torch.randn(48, 36, dtype=dtype)
    kw = {}
    if case == "batched":
        a, b = torch.randn(3, 40, 48, dtype=dtype), torch.randn(3, 48, 36, dtype=dtype)
    if case == "bcast":
        a, b = torch.randn(2, 40, 48, dtype=dtype), torch.randn(1, 48, 36, dtype=dtype)
    if case == "a_trans":
        a = a.t().contiguous()
        kw["a_trans"] = True
    if case == "b_trans":
        b = b.t().contiguous()
        kw["b_trans"] = True
    bias = torch.randn(1, 36)
    out_dtype = pypto.DT_FP16 if case == "fp16_out" else pypto.DT_FP32
    want_a = a.float().transpose(-1, -2) if case == "a_trans" else a.float()
    want_b = b.float().transpose(-1, -2) if case == "b_trans" else b.float()
    want = want_a @ want_b + (bias if case == "bias" else 0)
    out = torch.empty(want.shape, dtype=torch.float16 if case == "fp16_out" else torch.float32)
    if case == "bias":
        kw["extend_params"] = {"bias_tensor": None}

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), bb: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 32], [16, 32], [16, 32])
        pypto.set_vec_tile_shapes(16, 64)
        params = dict(kw)
        if "extend_params" in params:
            params["extend_params"] = {"bias_tensor": bb}
        o[:] = pypto.matmul(x, y, out_dtype, **params)

    k(a, b, bias, out)
    torch.testing.assert_close(out.float(), want, rtol=2e-3, atol=2e-3)


@pytest.mark.both_backends
def test_matmul_operator_returns_rhs_dtype():
    a, b = torch.randn(16, 32).half(), torch.randn(32, 16).half()
    out = torch.empty(16, 16, dtype=torch.float16)

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.set_vec_tile_shapes(16, 64)
        o[:] = x @ y

    k(a, b, out)
    torch.testing.assert_close(out, (a.float() @ b.float()).half(), rtol=2e-3, atol=2e-3)


def _fixpipe_scale(s: float) -> float:
    """The scale the official page says the fixpipe uses: FP32 sign, exponent and top 10 mantissa bits."""
    bits = np.array([s], np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return float(bits.view(np.float32)[0])


@pytest.mark.both_backends
@pytest.mark.parametrize("case", ["dequant_relu", "dequant_bias", "quant_int8", "relu_only", "int_relu"])
def test_matmul_extend_params_scale_and_relu(case):
    """The official page's extend_params cases: INT8 x INT8 dequantized by ``scale`` (with ReLU, or with a
    bias added before the scale), FP16 x FP16 quantized to INT8 (round to nearest even, saturate), and
    ReLU alone.  The scale keeps 10 mantissa bits (0.2 -> 0.19995117...), so the reference uses it too."""
    torch.manual_seed(3)
    scale = 0.2 if case != "quant_int8" else 0.37
    if case.startswith("dequant") or case == "int_relu":
        a, b = torch.randint(-8, 8, (24, 48), dtype=torch.int8), torch.randint(-8, 8, (48, 40), dtype=torch.int8)
        acc = (a.int() @ b.int()).float()
    else:
        a, b = torch.randn(24, 48).half(), torch.randn(48, 40).half()
        acc = a.float() @ b.float()
    bias = torch.randint(-50, 50, (1, 40), dtype=torch.int32)
    params = {
        "dequant_relu": ({"scale": scale, "relu_type": pypto.ReLuType.RELU}, pypto.DT_BF16, torch.bfloat16),
        "dequant_bias": ({"scale": scale}, pypto.DT_FP16, torch.float16),
        "quant_int8": ({"scale": scale}, pypto.DT_INT8, torch.int8),
        "relu_only": ({"relu_type": pypto.ReLuType.RELU}, pypto.DT_FP32, torch.float32),
        "int_relu": ({"relu_type": pypto.ReLuType.RELU}, pypto.DT_INT32, torch.int32),
    }
    extend, out_dtype, torch_dtype = params[case]
    s = _fixpipe_scale(scale)
    want = {
        "dequant_relu": torch.relu(acc * s),
        "dequant_bias": (acc + bias.float()) * s,
        "quant_int8": torch.clamp(torch.round(acc * s), -128, 127),
        "relu_only": torch.relu(acc),
        "int_relu": torch.relu(acc),
    }[case]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), bb: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 32])
        pypto.set_vec_tile_shapes(16, 64)
        ext = dict(extend, bias_tensor=bb) if case == "dequant_bias" else extend
        o[:] = pypto.matmul(x, y, out_dtype, extend_params=ext)

    out = torch.empty(24, 40, dtype=torch_dtype)
    k(a, b, bias, out)
    tol = {torch.bfloat16: 8e-3, torch.float16: 1e-3, torch.float32: 1e-5, torch.int8: 0, torch.int32: 0}[torch_dtype]
    if torch_dtype == torch.int8:  # FP16 products summed in FP32 may differ in the last bits from torch's
        assert (out.float() - want).abs().max() <= 1 and (out.float() == want).float().mean() > 0.95
    else:
        torch.testing.assert_close(out.float(), want, rtol=tol, atol=tol)


def test_matmul_scale_keeps_ten_mantissa_bits():
    from pypto.ops.matmul import fixpipe_scale

    assert fixpipe_scale(0.2) == 0.199951171875 == _fixpipe_scale(0.2)
    assert fixpipe_scale(-1.5) == -1.5 and fixpipe_scale(1 + 2 ** -10) == 1 + 2 ** -10
    assert fixpipe_scale(1 + 2 ** -11) == 1.0


def test_matmul_extend_params_errors():
    a, b, o = torch.randn(16, 32).half(), torch.randn(32, 16).half(), torch.empty(16, 16, dtype=torch.int8)

    def kernel(ext, out_dtype=pypto.DT_INT8):
        """``ext``: the extend_params, a callable of the kernel's operands where it names one."""
        @pypto.frontend.jit
        def k(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor()):
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
            pypto.set_vec_tile_shapes(16, 16)
            z[:] = pypto.matmul(x, y, out_dtype, extend_params=ext(x, y) if callable(ext) else ext)
        return k

    with pytest.raises(pypto.KernelTypeError, match="INT8 needs extend_params scale"):
        kernel({})(a, b, o)
    with pytest.raises(pypto.KernelTypeError, match="relu_type must be a pypto.ReLuType"):
        kernel({"scale": 1.0, "relu_type": 7})(a, b, o)
    with pytest.raises(NotImplementedError, match="trans_mode"):
        kernel({"trans_mode": pypto.TransMode.CAST_ROUND}, pypto.DT_FP32)(a, b, torch.empty(16, 16))
    with pytest.raises(pypto.KernelTypeError, match=r"scale_tensor must be a \[1, 16\] UINT64/INT64 tensor"):
        kernel(lambda x, y: {"scale_tensor": y})(a, b, o)
    with pytest.raises(pypto.KernelTypeError, match="not both"):
        kernel(lambda x, y: {"scale": 1.0, "scale_tensor": y})(a, b, o)


@pytest.mark.both_backends
@pytest.mark.parametrize("out_dtype", ["FP16", "INT8"])
def test_matmul_per_channel_scale_tensor(out_dtype):
    """``extend_params={"scale_tensor": s}`` (the official per-channel dequant/quant): s is [1, n]
    INT64/UINT64 whose low 32 bits hold each channel's FP32 scale; the fixpipe uses sign, exponent and
    10 mantissa bits of it, then ReLU, then one rounding."""
    torch.manual_seed(5)
    a, b = torch.randint(-8, 8, (24, 48), dtype=torch.int8), torch.randint(-8, 8, (48, 40), dtype=torch.int8)
    scales = (torch.rand(40) * 0.3 + 0.01).float()
    packed = scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF  # the low word; the high one 0
    packed = packed.reshape(1, 40)
    cut = torch.tensor([_fixpipe_scale(float(v)) for v in scales])
    acc = (a.int() @ b.int()).float()
    want = torch.relu(acc * cut)
    dtype = {"FP16": (pypto.DT_FP16, torch.float16), "INT8": (pypto.DT_INT8, torch.int8)}[out_dtype]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), st: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 32])
        pypto.set_vec_tile_shapes(16, 64)
        o[:] = pypto.matmul(x, y, dtype[0], extend_params={"scale_tensor": st, "relu_type": pypto.ReLuType.RELU})

    out = torch.empty(24, 40, dtype=dtype[1])
    k(a, b, packed, out)
    if out_dtype == "INT8":
        assert torch.equal(out.float(), torch.clamp(torch.round(want), -128, 127))
    else:
        torch.testing.assert_close(out.float(), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["sort32", "mrgsort"])
def test_unimplemented_ops_raise_by_name(name):
    @pypto.frontend.jit
    def k(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        o[:] = getattr(pypto, name)(a, 0)

    with pytest.raises(NotImplementedError, match=name):
        k(torch.randn(8, 64), torch.empty(8, 64))


@pypto.frontend.jit
def bool_compares(a: pypto.Tensor(), b: pypto.Tensor(), eq: pypto.Tensor(), ne: pypto.Tensor(), lt: pypto.Tensor(),
                  is_true: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 64)
    ma, mb = a > 0, b > 0
    eq[:] = ma == mb
    ne[:] = ma != mb
    lt[:] = ma < mb
    is_true[:] = ma == True  # noqa: E712


@pytest.mark.both_backends
def test_comparing_bool_tensors_compares_their_truth_values():
    a, b = torch.randn(8, 64), torch.randn(8, 64)
    outs = [torch.empty(8, 64, dtype=torch.bool) for _ in range(4)]
    bool_compares(a, b, *outs)
    ma, mb = a > 0, b > 0
    for got, want in zip(outs, (ma == mb, ma != mb, ma < mb, ma)):
        assert torch.equal(got, want)


@pypto.frontend.jit
def dynamic_and_full_reductions(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                                rows: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32),
                                total: pypto.Tensor([1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    rows[:] = pypto.sum(x, -1)
    total[:] = pypto.amax(x)


@pytest.mark.both_backends
def test_reductions_without_keepdim_over_dynamic_dims_and_over_everything():
    for n in (8, 19):
        x, rows, total = torch.randn(n, 64), torch.empty(n), torch.empty(1)
        dynamic_and_full_reductions(x, rows, total)
        torch.testing.assert_close(rows, x.sum(-1))
        assert total.item() == x.max().item()


def test_creation_sizes_are_checked():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = x + pypto.ones([8, 32], pypto.DT_FP32)  # dtype must be a keyword

    with pytest.raises(pypto.KernelTypeError, match="dtype="):
        k(torch.randn(8, 32), torch.empty(8, 32))
