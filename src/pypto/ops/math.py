"""Math composed from the element-wise primitives (the tile ISA has exp/log/sqrt/recip, no
transcendental activations): sigmoid, tanh, erf, activations, pow, rounding, clip, ..."""
from __future__ import annotations

import math

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.ir.types import RoundMode

from ..symbolic import SymbolicScalar, is_static
from ..tensor import Tensor
from .core import check_scalar_type, is_scalar, node_of, promote
from .creation import full, full_like
from .shape import reshape
from .elementwise import (PrecisionType, abs, add, cast, check_precision, div, eq, exp, ge, gt, log, logical_and, logical_not,
                          logical_or, lt, maximum, minimum, mul, ne, neg, reciprocal, rsqrt, sqrt, sub, where)


def _f32(x) -> Tensor:
    """``x`` as FP32, the dtype the compositions compute in."""
    return cast(x, dt.DT_FP32) if node_of(x).dtype != dt.DT_FP32 else x


def _back(y: Tensor, like) -> Tensor:
    """The FP32 result ``y`` rounded once to ``like``'s dtype when that is a narrower float."""
    d = node_of(like).dtype
    return cast(y, d) if d.is_float() and d != dt.DT_FP32 else y


def sigmoid(input) -> Tensor:
    """``1 / (1 + exp(-x))`` computed in FP32."""
    return _back(reciprocal(add(exp(neg(_f32(input))), 1.0)), input)


def expand_exp_dif(input, other) -> Tensor:
    """``exp(x - other)`` with broadcasting (the official fused op of softmax-like kernels); FP16/BF16
    computed in FP32 and rounded once.  Both operands must have one float dtype."""
    a, b = node_of(input, "input"), node_of(other, "other")
    if a.dtype != b.dtype or not a.dtype.is_float():
        raise KernelTypeError(f"pypto.expand_exp_dif: input and other need the same float dtype, got "
                              f"{a.dtype.name} and {b.dtype.name}")
    return _back(exp(sub(_f32(input), _f32(other))), input)


def tanh(input) -> Tensor:
    """``2 * sigmoid(2x) - 1`` in FP32."""
    xf = _f32(input)
    return _back(sub(mul(reciprocal(add(exp(mul(xf, -2.0)), 1.0)), 2.0), 1.0), input)


def erf(input) -> Tensor:
    """Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7) from exp, recip and polynomials, in FP32.

    Only fusable element-wise ops (no compare/select, one division), so the CPU backend runs the
    whole composition as one vectorised loop.  The sign is ``clip(x * 2**149, -1, 1)`` (two exact
    power-of-two scalings): +-1 for every non-zero ``input`` (the smallest subnormal scales to 1), +-0 for
    +-0, NaN for NaN; ``|x| = inf`` gives ``t = 0`` and ``exp(-inf) = 0``, so erf(+-inf) = +-1."""
    xf = _f32(input)
    ax = abs(xf)
    t = reciprocal(add(mul(ax, 0.3275911), 1.0))
    poly = mul(t, add(mul(t, add(mul(t, add(mul(t, add(mul(t, 1.061405429), -1.453152027)), 1.421413741)),
                                   -0.284496736)), 0.254829592))
    y = sub(1.0, mul(poly, exp(neg(mul(ax, ax)))))
    s = minimum(maximum(mul(mul(xf, 2.0 ** 100), 2.0 ** 49), -1.0), 1.0)
    return _back(mul(y, s), input)


def erfc(input) -> Tensor:
    return _back(sub(1.0, erf(_f32(input))), input)


def sign(input) -> Tensor:
    """-1, 0 or 1 (same dtype)."""
    n = node_of(input)
    pos = where(gt(input, 0), 1.0 if n.dtype.is_float() else 1, 0.0 if n.dtype.is_float() else 0)
    return where(lt(input, 0), -1.0 if n.dtype.is_float() else -1, pos)


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


def lrelu(input, negative_slope: float = 0.01) -> Tensor:
    return where(ge(input, 0), input, mul(input, negative_slope))


def LReLU(input, negative_slope: float = 0.01) -> Tensor:  # noqa: N802,A002 - the official name
    """Official ``pypto.LReLU(input, negative_slope=0.01)`` (the older page's spelling of :func:`lrelu`):
    ``input`` where ``input >= 0``, else ``negative_slope * input``, with that page's checks: FP16, BF16
    or FP32 input of 2-4 dims (``KernelTypeError``) and a finite ``negative_slope >= 0``
    (``KernelValueError``).  The result is a new tensor (in place is not offered)."""
    n = node_of(input, "pypto.LReLU input")
    if n.dtype not in (dt.DT_FP16, dt.DT_BF16, dt.DT_FP32):
        raise KernelTypeError(f"pypto.LReLU: input must be FP16, BF16 or FP32, got {n.dtype.name}")
    if not 2 <= n.ndim <= 4:
        raise KernelTypeError(f"pypto.LReLU: input must have 2-4 dims, got {n.ndim}")
    if isinstance(negative_slope, bool) or not isinstance(negative_slope, (int, float)):
        raise KernelTypeError(f"pypto.LReLU: negative_slope must be a float, got {negative_slope!r}")
    if not math.isfinite(negative_slope) or negative_slope < 0:
        raise KernelValueError(f"pypto.LReLU: negative_slope must be a finite number >= 0, got {negative_slope!r}")
    return lrelu(input, float(negative_slope))


def prelu(input, weight) -> Tensor:
    """``input`` where ``x >= 0``, else ``weight * x`` with one weight per channel: the channel is dim 1 of a
    2-4-D input (torch's rule; a 1-element weight applies everywhere), the last dim of a 1-D one."""
    xn, wn = node_of(input), node_of(weight, "weight")
    if xn.ndim >= 2 and wn.ndim == 1 and not (is_static(wn.shape[0]) and wn.shape[0] == 1):
        weight = reshape(weight, [wn.shape[0]] + [1] * (xn.ndim - 2))  # broadcasts along dim 1
    return where(ge(input, 0), input, mul(input, weight))


def clip(input, min=None, max=None) -> Tensor:  # noqa: A002
    y = input
    if min is not None:
        y = maximum(y, min)
    if max is not None:
        y = minimum(y, max)
    return y


#: integer exponents up to this magnitude are products of repeated squares (``x*x`` and ``x*x*x`` are
#: torch's own formulas for 2 and 3); larger ones go through exp/log like other exponents
_SQUARING_MAX = 64


def pow(input, other, precision_type=PrecisionType.HIGH_PRECISION) -> Tensor:  # noqa: A001
    """``torch.pow(x, exponent)``: a tensor base with a scalar or tensor exponent, or a scalar base with
    a tensor exponent.  Floats are computed in FP32 (16-bit floats rounded once); an integer tensor to
    a non-negative integer power stays an integer tensor (wrapping like torch).  ``precision_type``:
    :func:`check_precision`."""
    check_precision("pow", precision_type)
    if is_scalar(input):
        return _pow_scalar_base(input, other)
    if isinstance(other, SymbolicScalar):  # a runtime value: an exponent tensor of one element
        other = full([1], other, dt.DT_INT32)
    if not is_scalar(other):
        return _pow_tensors(input, other)
    if not node_of(input).dtype.is_float() and not isinstance(other, float):
        return _int_power(input, int(other))
    return _back(_pow_f32_scalar(_f32(input), other), input)


def _squarings(x, k: int) -> Tensor:
    """``x ** k`` (``k >= 0``) by binary exponentiation in x's dtype; ``x ** 0`` is 1 everywhere (NaN too)."""
    if k == 0:
        return full_like(x, 1.0 if node_of(x).dtype.is_float() else 1)
    result, base = None, x
    while k:
        if k & 1:
            result = base if result is None else mul(result, base)
        k >>= 1
        if k:
            base = mul(base, base)
    return result


def _int_power(x, k: int) -> Tensor:
    """An integer tensor to the integer power ``k`` (BOOL as INT64, torch's dtype for it)."""
    if k < 0:
        raise KernelTypeError(f"pypto.pow: integer tensors to negative integer powers ({k}) are not allowed, as in "
                              f"torch; cast the base to a float dtype first")
    return _squarings(cast(x, dt.DT_INT64) if node_of(x).dtype == dt.DT_BOOL else x, k)


def _exp_log(a, e) -> Tensor:
    """``exp(e * log(a))`` for ``a >= 0``: relative error about ``abs(e * log(a))`` FP32 ulps."""
    return exp(mul(log(a), e))


def _pow_f32_scalar(xf, e) -> Tensor:
    """FP32 ``xf ** e`` for a Python number ``e``, with torch's values: integer-valued exponents are
    integer powers of any base (squarings up to :data:`_SQUARING_MAX`, a reciprocal for negative ones;
    beyond that ``exp/log`` of ``abs(x)`` with the base's sign for odd ones), ``0.5``/``-0.5`` are
    sqrt/rsqrt, other exponents give NaN for finite negative bases."""
    if isinstance(e, int) or (math.isfinite(e) and e.is_integer()):
        k = int(e)
        if -_SQUARING_MAX <= k <= _SQUARING_MAX:
            p = _squarings(xf, k if k >= 0 else -k)
            return reciprocal(p) if k < 0 else p
        from .trig import signbit  # trig imports this module

        mag = _exp_log(abs(xf), float(k))
        return where(signbit(xf), neg(mag), mag) if k % 2 else mag
    if e != e:  # only 1 ** NaN is a number (x * NaN is NaN)
        return where(eq(xf, 1.0), 1.0, mul(xf, e))
    if math.isinf(e):
        return where(eq(abs(xf), 1.0), 1.0, _exp_log(abs(xf), e))
    if e in (0.5, -0.5):
        return sqrt(xf) if e > 0 else rsqrt(xf)
    return where(logical_and(lt(xf, 0.0), gt(xf, -math.inf)), math.nan, _exp_log(abs(xf), e))


def _pow_f32_tensors(xf, tf) -> Tensor:
    """FP32 ``xf ** tf`` element-wise with C99's (torch's) special cases: ``abs(x) ** t`` through
    exp/log, negated for a negative base (``-0.0`` too) and an odd integer exponent, NaN for a finite
    negative base and a non-integer exponent, 1 for ``t == 0``, ``x == 1`` and ``(-1) ** +-inf``."""
    from .trig import signbit  # trig imports this module

    mag = _exp_log(abs(xf), tf)
    tc = clip(tf, -2.0 ** 24, 2.0 ** 24)  # every float beyond 2**24 is an even integer: parity kept
    whole = eq(trunc(tc), tc)
    half = mul(tc, 0.5)
    odd = logical_and(whole, ne(trunc(half), half))
    y = where(logical_and(odd, signbit(xf)), neg(mag), mag)
    y = where(logical_and(logical_and(lt(xf, 0.0), gt(xf, -math.inf)), logical_not(whole)), math.nan, y)
    one = logical_or(logical_or(eq(tf, 0.0), eq(xf, 1.0)), logical_and(eq(xf, -1.0), eq(abs(tf), math.inf)))
    return where(one, 1.0, y)


def _pow_tensors(x, t) -> Tensor:
    """Tensor base and exponent: promoted like torch (a float result; integer pairs are not implemented)."""
    dtype = promote(node_of(x).dtype, node_of(t, "pypto.pow exponent").dtype)
    if not dtype.is_float():
        raise NotImplementedError("pypto.pow of an integer tensor to an integer tensor exponent (a runtime "
                                  "integer power); cast the base or the exponent to a float dtype")
    y = _pow_f32_tensors(_f32(x), _f32(t))
    return cast(y, dtype) if dtype != dt.DT_FP32 else y


def _pow_scalar_base(s, t) -> Tensor:
    """``s ** t`` for a Python float/int ``s`` and a tensor ``t``: the base as a tensor like ``t``."""
    if isinstance(s, SymbolicScalar) or not (isinstance(s, float) or node_of(t, "pypto.pow exponent").dtype.is_float()):
        raise NotImplementedError(f"pypto.pow of an integer scalar base ({s!r}) to an integer tensor exponent; "
                                  f"pass the base as a float")
    return _pow_tensors(full_like(_f32(t), float(s)), t)


#: float dtype -> the magnitude from which every value is an integer (2 ** mantissa bits)
_ALL_INTEGERS = {dt.DT_FP32: 2.0 ** 23, dt.DT_FP16: 2.0 ** 10, dt.DT_BF16: 2.0 ** 7}


def _round_via_int(x, mode) -> Tensor:
    """Float rounding by the INT32 cast's rounding ``mode``, only below :data:`_ALL_INTEGERS` (larger
    values are integers already, inf/NaN stay as they are); a zero result keeps x's sign (torch:
    ``ceil(-0.5) == -0.0``)."""
    n = node_of(x)
    if not n.dtype.is_float():
        return x
    if n.dtype not in _ALL_INTEGERS:  # 8-bit and smaller floats: in FP32
        return cast(_round_via_int(cast(x, dt.DT_FP32), mode), n.dtype)
    r = cast(cast(x, dt.DT_INT32, mode), n.dtype)
    return where(lt(abs(x), _ALL_INTEGERS[n.dtype]), where(eq(r, 0), mul(x, 0.0), r), x)


def floor(input) -> Tensor:
    return _round_via_int(input, RoundMode.CAST_FLOOR)


def ceil(input) -> Tensor:
    return _round_via_int(input, RoundMode.CAST_CEIL)


def trunc(input) -> Tensor:
    return _round_via_int(input, RoundMode.CAST_TRUNC)


def round(input, decimals: int = 0) -> Tensor:  # noqa: A001
    """Half to even, like torch.round (through INT32)."""
    if decimals:
        scale = 10.0 ** decimals
        return div(_round_via_int(mul(input, scale), RoundMode.CAST_RINT), scale)
    return _round_via_int(input, RoundMode.CAST_RINT)


def _int_division(name: str, a, b):
    """For integer operands (tensors or Python ints; BOOL excluded): ``(divisor, q, r, dtype)`` with the
    C (truncating) quotient and remainder of the ``div`` tile op (8-bit integers widened; a zero
    divisor raises ``KernelRuntimeError``) and the result dtype; None when an operand is a float."""
    from .bitwise import _int_operands, _is_float, _tdiv  # bitwise imports this module

    if _is_float(a) or _is_float(b) or any(not is_scalar(v) and node_of(v).dtype == dt.DT_BOOL for v in (a, b)):
        return None
    x, y, dtype = _int_operands(name, a, b)
    q = _tdiv(x, y)
    return y, q, sub(x, mul(q, y)), dtype


def _truncated_above_floor(r, y) -> Tensor:
    """Where the truncated quotient exceeds the floor: a non-zero remainder with the divisor's opposite sign."""
    return logical_or(logical_and(lt(r, 0), gt(y, 0)), logical_and(gt(r, 0), lt(y, 0)))


def floor_div(input, other) -> Tensor:
    """torch's ``//``: integers exactly in their dtype; floats ``floor(x / other)`` (through INT32)."""
    check_scalar_type("floor_div", input, other)
    ints = _int_division("floor_div", input, other)
    if ints is None:
        return floor(div(input, other))
    y, q, r, dtype = ints
    return cast(where(_truncated_above_floor(r, y), sub(q, 1), q), dtype)


def _in_fp32(formula, x, other) -> Tensor:
    """A float ``fmod``/``remainder`` computed in FP32 and rounded once to the result dtype: the
    official tensor level computes both in FP32 for FP16 and BF16 operands, on every arch."""
    tensors = [node_of(v).dtype for v in (x, other) if not is_scalar(v)]
    dtype = promote(*tensors) if len(tensors) == 2 else tensors[0]
    if dtype not in (dt.DT_FP16, dt.DT_BF16):
        return formula(x, other)
    y = formula(*(v if is_scalar(v) else _f32(v) for v in (x, other)))
    return cast(y, dtype)


def remainder(input, other, precision_type=PrecisionType.HIGH_PRECISION) -> Tensor:
    """torch's ``%``: the sign of the divisor; integers exactly, floats ``x - floor(x / other) * other``;
    ``precision_type``: :func:`check_precision`."""
    check_precision("remainder", precision_type)
    check_scalar_type("remainder", input, other)
    ints = _int_division("remainder", input, other)
    if ints is None:
        return _in_fp32(lambda a, b: sub(a, mul(floor(div(a, b)), b)), input, other)
    y, _, r, dtype = ints
    return cast(where(_truncated_above_floor(r, y), add(r, y), r), dtype)


def fmod(input, other, precision_type=PrecisionType.HIGH_PRECISION) -> Tensor:
    """The sign of the dividend: integers exactly (C's ``%``), floats ``x - trunc(x / other) * other``;
    ``precision_type``: :func:`check_precision`."""
    check_precision("fmod", precision_type)
    check_scalar_type("fmod", input, other)
    ints = _int_division("fmod", input, other)
    if ints is None:
        return _in_fp32(lambda a, b: sub(a, mul(trunc(div(a, b)), b)), input, other)
    return cast(ints[2], ints[3])


def exp2(input) -> Tensor:
    """``2 ** input`` as ``exp(input * ln 2)`` (integers give FP32)."""
    x = input if node_of(input).dtype.is_float() else cast(input, dt.DT_FP32)
    return exp(mul(x, 0.6931471805599453))


def expm1(input) -> Tensor:
    return sub(exp(input), 1.0)


def log2(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``log(x) / ln 2``; ``precision_type``: :func:`check_precision`."""
    check_precision("log2", precision_type)
    return mul(log(input), 1.4426950408889634)


def log10(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``log(x) / ln 10``; ``precision_type``: :func:`check_precision`."""
    check_precision("log10", precision_type)
    return mul(log(input), 0.4342944819032518)


def log1p(input) -> Tensor:
    """``log(1 + x)`` in FP32, accurate for tiny ``input`` too: ``log(w) * x / (w - 1)`` with ``w = 1 + x``
    corrects the rounding of ``w`` (``input`` itself where ``w`` rounds to 1; +inf stays +inf)."""
    u = _f32(input)
    return _back(log1p_f32(u), input)


def log1p_f32(u: Tensor) -> Tensor:
    """:func:`log1p` of an FP32 tensor (also the core of asinh/acosh/atanh)."""
    w = add(u, 1.0)
    y = where(eq(w, 1.0), u, mul(log(w), div(u, sub(w, 1.0))))
    return where(eq(u, float("inf")), u, y)


def hypot(input, other) -> Tensor:
    return sqrt(add(mul(input, input), mul(other, other)))


def isnan(input) -> Tensor:
    return ne(input, input)


def isfinite(input) -> Tensor:
    """Finite: ``x - x == 0`` (NaN and inf give NaN)."""
    return logical_not(ne(sub(input, input), 0))


def sinh(input) -> Tensor:
    return mul(sub(exp(input), exp(neg(input))), 0.5)


def cosh(input) -> Tensor:
    return mul(add(exp(input), exp(neg(input))), 0.5)
