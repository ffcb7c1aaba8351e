"""Math composed from the element-wise primitives (the tile ISA has exp/log/sqrt/recip, no
transcendental activations): sigmoid, tanh, erf, activations, pow, rounding, clip, ..."""
from __future__ import annotations

from pypto_pro import dtypes as dt
from pypto_pro.ir.types import RoundMode

from ..tensor import Tensor
from .core import is_scalar, node_of
from .elementwise import (abs, add, cast, div, exp, ge, gt, log, logical_not, lt, maximum, minimum, mul, ne, neg,
                          reciprocal, sqrt, sub, where)


def _f32(x) -> Tensor:
    return cast(x, dt.DT_FP32) if node_of(x).dtype != dt.DT_FP32 else x


def _back(y: Tensor, like) -> Tensor:
    d = node_of(like).dtype
    return cast(y, d) if d.is_float() and d != dt.DT_FP32 else y


def sigmoid(x) -> Tensor:
    """``1 / (1 + exp(-x))`` computed in FP32."""
    return _back(reciprocal(add(exp(neg(_f32(x))), 1.0)), x)


def tanh(x) -> Tensor:
    """``2 * sigmoid(2x) - 1`` in FP32."""
    xf = _f32(x)
    return _back(sub(mul(reciprocal(add(exp(mul(xf, -2.0)), 1.0)), 2.0), 1.0), x)


def erf(x) -> Tensor:
    """Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7) from exp, recip and polynomials, in FP32."""
    xf = _f32(x)
    ax = abs(xf)
    t = reciprocal(add(mul(ax, 0.3275911), 1.0))
    poly = mul(t, add(mul(t, add(mul(t, add(mul(t, add(mul(t, 1.061405429), -1.453152027)), 1.421413741)),
                                   -0.284496736)), 0.254829592))
    y = sub(1.0, mul(poly, exp(neg(mul(ax, ax)))))
    return _back(mul(y, sign(xf)), x)


def erfc(x) -> Tensor:
    return _back(sub(1.0, erf(_f32(x))), x)


def sign(x) -> Tensor:
    """-1, 0 or 1 (same dtype)."""
    n = node_of(x)
    pos = where(gt(x, 0), 1.0 if n.dtype.is_float() else 1, 0.0 if n.dtype.is_float() else 0)
    return where(lt(x, 0), -1.0 if n.dtype.is_float() else -1, pos)


def silu(x) -> Tensor:
    """``x * sigmoid(x)``."""
    xf = _f32(x)
    return _back(mul(xf, sigmoid(xf)), x)


def gelu(x, approximate: str = "none") -> Tensor:
    """GELU: exact form ``0.5 x (1 + erf(x / sqrt 2))`` or ``approximate="tanh"``."""
    xf = _f32(x)
    if approximate == "tanh":
        inner = mul(add(xf, mul(mul(mul(xf, xf), xf), 0.044715)), 0.7978845608028654)
        return _back(mul(mul(xf, 0.5), add(tanh(inner), 1.0)), x)
    return _back(mul(mul(xf, 0.5), add(erf(mul(xf, 0.7071067811865476)), 1.0)), x)


def swiglu(gate, up) -> Tensor:
    """``silu(gate) * up``."""
    return _back(mul(silu(_f32(gate)), _f32(up)), gate)


def lrelu(x, negative_slope: float = 0.01) -> Tensor:
    return where(ge(x, 0), x, mul(x, negative_slope))


def prelu(x, weight) -> Tensor:
    return where(ge(x, 0), x, mul(x, weight))


def clip(x, min=None, max=None) -> Tensor:  # noqa: A002
    y = x
    if min is not None:
        y = maximum(y, min)
    if max is not None:
        y = minimum(y, max)
    return y


def pow(x, exponent) -> Tensor:  # noqa: A001
    """Integer exponents by repeated multiplication, others as ``exp(e * log(x))`` (x > 0)."""
    if isinstance(exponent, int) and not isinstance(exponent, bool) and 0 <= exponent <= 16:
        if exponent == 0:
            return add(mul(x, 0), 1)
        result, base, e = None, x, exponent
        while e:
            if e & 1:
                result = base if result is None else mul(result, base)
            e >>= 1
            if e:
                base = mul(base, base)
        return result
    if isinstance(exponent, float) and exponent == 0.5:
        return sqrt(x)
    if is_scalar(exponent):
        return _back(exp(mul(log(_f32(x)), exponent)), x)
    return _back(exp(mul(log(_f32(x)), _f32(exponent))), x)


def _round_via_int(x, mode) -> Tensor:
    n = node_of(x)
    if not n.dtype.is_float():
        return x
    return cast(cast(x, dt.DT_INT32, mode), n.dtype)


def floor(x) -> Tensor:
    """Rounds through INT32 (|x| < 2**31)."""
    return _round_via_int(x, RoundMode.CAST_FLOOR)


def ceil(x) -> Tensor:
    return _round_via_int(x, RoundMode.CAST_CEIL)


def trunc(x) -> Tensor:
    return _round_via_int(x, RoundMode.CAST_TRUNC)


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001
    """Half to even, like torch.round (through INT32)."""
    if decimals:
        scale = 10.0 ** decimals
        return div(_round_via_int(mul(x, scale), RoundMode.CAST_RINT), scale)
    return _round_via_int(x, RoundMode.CAST_RINT)


def floor_div(x, other) -> Tensor:
    return floor(div(x, other))


def remainder(x, other) -> Tensor:
    """``x - floor(x / other) * other`` (sign of the divisor, like torch)."""
    return sub(x, mul(floor(div(x, other)), other))


def fmod(x, other) -> Tensor:
    """``x - trunc(x / other) * other`` (sign of the dividend)."""
    return sub(x, mul(trunc(div(x, other)), other))


def exp2(x) -> Tensor:
    return exp(mul(x, 0.6931471805599453))


def expm1(x) -> Tensor:
    return sub(exp(x), 1.0)


def log2(x) -> Tensor:
    return mul(log(x), 1.4426950408889634)


def log10(x) -> Tensor:
    return mul(log(x), 0.4342944819032518)


def log1p(x) -> Tensor:
    return log(add(x, 1.0))


def hypot(a, b) -> Tensor:
    return sqrt(add(mul(a, a), mul(b, b)))


def isnan(x) -> Tensor:
    return ne(x, x)


def isfinite(x) -> Tensor:
    """Finite: ``x - x == 0`` (NaN and inf give NaN)."""
    return logical_not(ne(sub(x, x), 0))


def sinh(x) -> Tensor:
    return mul(sub(exp(x), exp(neg(x))), 0.5)


def cosh(x) -> Tensor:
    return mul(add(exp(x), exp(neg(x))), 0.5)
