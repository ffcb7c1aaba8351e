"""Parameter names, kinds and defaults of the tensor-level API as the official API reference pages
(``docs/zh/api``) give them: every documented parameter can be passed by its documented keyword, and
a call by keyword computes what the positional call computes (checked against torch)."""
import inspect

import pytest
import torch

import pypto

P = inspect.Parameter
_POS = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)

# name -> the documented leading positional parameters (in order), then documented keyword-only ones
_UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "cbrt", "ceil", "clone", "cos",
          "cosh", "erf", "erfc", "exp2", "expm1", "floor", "isfinite", "isnan", "log1p", "logical_not", "neg", "pack",
          "relu", "sigmoid", "sign", "signbit", "sin", "sinh", "tan", "tanh", "trunc"]
_BINARY = ["add", "sub", "mul", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "ceil_div", "eq", "ne", "lt", "le", "gt", "ge", "floor_div", "gcd", "hypot",
           "logical_and", "maximum", "minimum", "expand_exp_dif", "interleave", "copysign"]
SIGNATURES = {**{n: (["input"], []) for n in _UNARY}, **{n: (["input", "other"], []) for n in _BINARY},
              "where": (["condition", "input", "other"], []),
              "matmul": (["input", "mat2", "out_dtype"], ["a_trans", "b_trans", "c_matrix_nz", "extend_params"]),
              "permute": (["input", "perm"], []),
              "pad": (["input", "pad", "mode", "value"], []),
              "pow": (["input", "other", "precision_type"], []),
              "assemble": (["input", "offsets", "out", "parallel"], []),
              "view": (["input", "shape", "offsets"], ["valid_shape", "dtype"]),
              "reshape": (["input", "shape"], ["valid_shape", "inplace"]),
              "gather": (["input", "dim", "index"], []),
              "scatter": (["input", "dim", "index", "src"], ["reduce"]),
              "index_add": (["input", "dim", "index", "source"], ["alpha"]),
              "cast": (["input", "dtype", "mode", "satmode"], []),
              "clip": (["input", "min", "max"], []),
              "sum": (["input", "dim", "keepdim"], []),
              "topk": (["input", "k", "dim", "largest", "algo"], []),
              "transpose": (["input", "dim0", "dim1"], []),
              "gathermask": (["input", "pattern_mode"], []),
              "unpack": (["input", "dstDataType"], []),
              "is_loop_begin": (["scalar"], []), "is_loop_end": (["scalar"], []),
              "lrelu": (["input", "negative_slope"], []),
              "rms_norm": (["input", "gamma", "epsilon"], [])}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_documented_parameter_names(name):
    positional, keyword_only = SIGNATURES[name]
    params = inspect.signature(getattr(pypto, name)).parameters
    ours = [p.name for p in params.values() if p.kind in _POS]
    assert ours[:len(positional)] == positional
    for k in keyword_only:
        assert params[k].kind in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD), k


# the pages' defaults (precision_type: INTRINSIC for exp/log/sqrt/rsqrt, HIGH_PRECISION for the rest)
DEFAULTS = [("exp", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("log", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("log2", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("log10", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("sqrt", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("rsqrt", "precision_type", pypto.PrecisionType.INTRINSIC),
            ("div", "precision_type", pypto.PrecisionType.HIGH_PRECISION),
            ("pow", "precision_type", pypto.PrecisionType.HIGH_PRECISION),
            ("fmod", "precision_type", pypto.PrecisionType.HIGH_PRECISION),
            ("remainder", "precision_type", pypto.PrecisionType.HIGH_PRECISION),
            ("reciprocal", "precision_type", pypto.PrecisionType.HIGH_PRECISION),
            ("amax", "keepdim", False), ("sum", "keepdim", False), ("lrelu", "negative_slope", 0.01),
            ("rms_norm", "epsilon", 1e-6), ("tril", "diagonal", 0), ("concat", "dim", 0),
            ("cast", "satmode", pypto.SaturationMode.OFF), ("topk", "largest", True)]


@pytest.mark.parametrize("name,param,value", DEFAULTS, ids=[f"{n}.{p}" for n, p, _ in DEFAULTS])
def test_documented_defaults(name, param, value):
    default = inspect.signature(getattr(pypto, name)).parameters[param].default
    assert default == value and type(default) is type(value)


def test_tensor_method_parameters():
    sig = inspect.signature
    assert list(sig(pypto.Tensor.move).parameters) == ["self", "other"]
    assert list(sig(pypto.Tensor.assemble).parameters) == ["self", "input", "offsets"]
    assert sig(pypto.Tensor.__getitem__).parameters["valid_shape"].kind is P.KEYWORD_ONLY
    assert list(sig(pypto.Tensor.__init__).parameters)[1:8] == ["shape", "dtype", "name", "format", "data_ptr",
                                                               "device", "ori_shape"]


def test_tensor_constructor_keeps_the_descriptive_arguments():
    t = pypto.Tensor([2, 8], pypto.DT_FP16, "w", pypto.TileOpFormat.TILEOP_ND, None, "npu:0", (2, 8))
    assert (t.data_ptr, t.device, t.ori_shape, t.name) == (None, "npu:0", (2, 8), "w")
    a = pypto.Tensor[[4, 4], pypto.DT_FP32, {"name": "a", "ori_shape": (16,)}]
    assert (a.name, a.ori_shape, a.device) == ("a", (16,), None)


@pytest.mark.both_backends
def test_keyword_calls_compute_the_positional_results():
    @pypto.frontend.jit
    def by_keyword(x: pypto.Tensor(), y: pypto.Tensor(), w: pypto.Tensor(), r: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.set_cube_tile_shapes([8, 8], [8, 8], [8, 8])
        s = pypto.add(input=x, other=y)
        m = pypto.where(condition=pypto.gt(input=x, other=y), input=s, other=pypto.mul(input=x, other=2.0))
        p = pypto.permute(input=pypto.pow(input=m, other=2), perm=[1, 0])
        q = pypto.matmul(input=p, mat2=w, out_dtype=pypto.DT_FP32)
        r[:] = pypto.maximum(input=q, other=pypto.exp(input=pypto.view(input=x, shape=[8, 8], offsets=[0, 0])))

    g = torch.Generator().manual_seed(3)
    x, y, w = (torch.rand(8, 8, generator=g) for _ in range(3))
    r = torch.zeros(8, 8)
    by_keyword(x, y, w, r)
    m = torch.where(x > y, x + y, x * 2.0)
    want = torch.maximum((m ** 2).T @ w, torch.exp(x))
    assert torch.allclose(r, want, rtol=1e-5, atol=1e-5)


@pytest.mark.both_backends
def test_pad_and_assemble_and_move_by_keyword():
    @pypto.frontend.jit
    def padded(x: pypto.Tensor(), out: pypto.Tensor(), acc: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.assemble(input=pypto.pad(input=x, pad=[0, 2], value=-1.0), offsets=[0, 0], out=out)
        acc.move(other=pypto.neg(input=x))

    x = torch.arange(12, dtype=torch.float32).reshape(2, 6)
    out, acc = torch.zeros(2, 8), torch.zeros(2, 6)
    padded(x, out, acc)
    assert torch.equal(out, torch.nn.functional.pad(x, (0, 2), value=-1.0))
    assert torch.equal(acc, -x)


@pytest.mark.both_backends
@pytest.mark.parametrize("key,valid,rows,cols", [((slice(0, 4), slice(2, 8)), [3, 5], 3, 5),
                                                 ((1, slice(0, 8)), [6], 1, 6),
                                                 ((1, slice(0, 8)), [1, 6], 1, 6)])
def test_getitem_valid_shape(key, valid, rows, cols):
    @pypto.frontend.jit
    def windowed(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        v = x.__getitem__(key, valid_shape=valid)
        y[:] = pypto.fillpad(pypto.add(v, 1.0), value=0.0)

    x = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    full = x[key]
    y = torch.full(full.shape, 9.0)
    windowed(x, y)
    want = torch.zeros(full.shape)
    want2, full2 = want.reshape(-1, full.shape[-1]), full.reshape(-1, full.shape[-1])
    want2[:rows, :cols] = full2[:rows, :cols] + 1.0
    assert torch.equal(y, want)


# ------------------------------------------------------------------ the pages' stated errors
def _trace(body, *args):
    @pypto.frontend.jit
    def stated_error(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        y[:] = body(x)

    stated_error(*args)


_INT = (torch.ones(2, 4, dtype=torch.int32), torch.ones(2, 4, dtype=torch.int32))
FLOAT_SCALAR_ON_INT = {"add": lambda x: pypto.add(x, 1.5), "sub": lambda x: pypto.sub(x, 0.5),
                       "mul": lambda x: pypto.mul(x, 2.0), "div": lambda x: pypto.div(x, 2.0),
                       "operator": lambda x: 1.5 - x, "fmod": lambda x: pypto.fmod(x, 2.0),
                       "remainder": lambda x: pypto.remainder(x, 2.0), "floor_div": lambda x: x // 2.0,
                       "ceil_div": lambda x: pypto.ceil_div(x, 2.0)}


@pytest.mark.parametrize("op", sorted(FLOAT_SCALAR_ON_INT))
def test_float_scalar_with_integer_tensor_is_a_type_error(op):
    with pytest.raises(TypeError, match="float scalar"):
        _trace(FLOAT_SCALAR_ON_INT[op], *_INT)


@pytest.mark.both_backends
def test_integer_scalar_with_integer_tensor_stays_integer():
    x, y = torch.arange(8, dtype=torch.int32).reshape(2, 4), torch.zeros(2, 4, dtype=torch.int32)
    _trace(lambda t: pypto.mul(pypto.add(t, 3), 2) - 1, x, y)
    assert torch.equal(y, (x + 3) * 2 - 1)


PAD_ERRORS = [((1,), ValueError), ((0, 1, 2), ValueError), ((0, 1, 0, 1, 0, 1), ValueError),
              ((0, -1), ValueError), ((1, 0, -2, 0), ValueError), ((0, 1.5), TypeError), ("01", TypeError)]


@pytest.mark.parametrize("pad,error", PAD_ERRORS, ids=[repr(p) for p, _ in PAD_ERRORS])
def test_pad_stated_errors(pad, error):
    x = torch.ones(1, 2, 4)
    with pytest.raises(error):
        _trace(lambda t: pypto.pad(t, pad), x, torch.zeros(1, 2, 4))


# error paths of renamed parameters still format their messages
@pytest.mark.parametrize("body,error,match", [
    (lambda t: pypto.permute(t, [0, 0]), pypto.KernelTypeError, "not a permutation"),
    (lambda t: pypto.fillpad(2.0), TypeError, "got float"),
    (lambda t: pypto.where(t > 0, t, "a"), TypeError, None),
], ids=["permute", "fillpad", "where"])
def test_error_messages_of_renamed_parameters(body, error, match):
    with pytest.raises(error, match=match):
        _trace(body, torch.ones(2, 4), torch.zeros(2, 4))
