"""Trigonometric, inverse trigonometric and inverse hyperbolic functions, ``cbrt``, ``signbit``,
``copysign``: composed from the element-wise primitives in FP32 (the tile ISA has exp/log/sqrt/
recip only) and rounded once to a 16-bit float input dtype; integer inputs give FP32 (like torch).

* ``sin cos tan``: Cody-Waite reduction ``r = x - k pi/2`` (``k`` = round-to-nearest through
  INT32, ``pi/2`` split in four parts whose first three carry 12 bits) and polynomials on
  ``|r| <= pi/4`` fitted for minimax relative error (sin: 3.8e-9, cos: 1.2e-10), the quadrant
  ``k & 3`` choosing sign and function.  ``k = kh + kl`` (``kh`` a multiple of 2**12) keeps every
  product exact while ``|k| < 2**24``: the absolute error is ~1e-7 for ``|x| <= 1e6`` and <= 3e-6 up to ``2**22``; larger
  arguments (and +-inf) give NaN, where torch reduces exactly (Payne-Hanek; no bit access here).
* ``atan``: ``atan(t) = pi/2 - atan(1/t)`` for ``t > 1``, then ``pi/4 + atan((t-1)/(t+1))`` above
  ``tan(pi/8)``, and a degree-9 odd polynomial (minimax relative error 2.1e-8).  ``atan2``, ``asin``,
  ``acos`` reduce to the same core with ``sqrt((1-x)(1+x))``.
* ``asinh acosh atanh``: the log forms rewritten around an accurate ``log1p`` (``log(w) * u / (w-1)``
  with ``w = 1 + u``), switching to ``log(|x|) + ln 2`` for ``|x| > 2**12`` (no overflow of ``x*x``).
* ``cbrt``: ``exp(log|x| / 3)`` refined by one Newton step.
"""
from __future__ import annotations

import math

from pypto_pro import dtypes as dt
from pypto_pro.ir.types import RoundMode

from ..tensor import Tensor
from .bitwise import bitwise_and
from .core import is_scalar, node_of, promote
from .creation import full
from .elementwise import (abs, add, cast, div, eq, exp, gt, le, log, logical_and, logical_or, lt, maximum, minimum,
                          mul, ne, neg, reciprocal, sqrt, sub, where)
from .math import _back, _f32, log1p_f32

_HALF_PI = math.pi / 2
_LN2 = math.log(2.0)
_TAN_PI_8 = math.tan(math.pi / 8)
#: sin/cos/tan arguments beyond this give NaN (k * pi/2 is no longer reduced exactly)
_TRIG_LIMIT = 2.0 ** 22
#: beyond this, asinh/acosh are log(|x|) + ln 2 to FP32 precision
_LOG_ONLY = 2.0 ** 12

# minimax fits on |r| <= pi/4 (relative error): sin r = r + r^3 P(r^2), cos r = 1 - r^2/2 + r^4 Q(r^2)
_SIN = (-0.16666654609532594, 0.008332160759190323, -0.00019515282679451854)
_COS = (0.041666645682575935, -0.0013887316236513316, 2.4433155138300303e-05)
# atan t = t + t^3 A(t^2) on |t| <= tan(pi/8)
_ATAN = (-0.33332949137720896, 0.19977709952001813, -0.138776776240128, 0.08053718273344222)


def _split(value: float, bits: int, parts: int):
    """``value`` as a sum of ``parts`` floats, all but the last with ``bits`` significant bits."""
    out, rest = [], value
    for _ in range(parts - 1):
        m, e = math.frexp(rest)
        head = math.floor(m * 2 ** bits) / 2 ** bits * 2.0 ** e
        out.append(head)
        rest -= head
    out.append(rest)
    return tuple(out)


_PIO2 = _split(_HALF_PI, 12, 4)


def _poly(t: Tensor, coeffs) -> Tensor:
    """Horner: ``c0 + c1 t + c2 t^2 + ...`` (at least two coefficients)."""
    acc = add(mul(t, coeffs[-1]), coeffs[-2])
    for c in reversed(coeffs[:-2]):
        acc = add(mul(acc, t), c)
    return acc


def _in_domain(xf: Tensor, y: Tensor) -> Tensor:
    """``y`` where ``|x| <= 2**22`` (the reduction's range), NaN elsewhere (+-inf and NaN included)."""
    return where(le(abs(xf), _TRIG_LIMIT), y, float("nan"))


# ---------------------------------------------------------------------------------- sin / cos / tan
def _reduce_pio2(xf: Tensor):
    """(k as INT32, r = x - k pi/2 with |r| <= pi/4).  ``k = kh + kl`` with ``kh`` a multiple of
    2**12 and ``|kl| <= 2**11``, so both multiply the 12-bit parts of pi/2 exactly."""
    k = cast(mul(xf, 1 / _HALF_PI), dt.DT_INT32, RoundMode.CAST_RINT)
    kf = cast(k, dt.DT_FP32)
    kh = mul(cast(cast(mul(kf, 2.0 ** -12), dt.DT_INT32, RoundMode.CAST_RINT), dt.DT_FP32), 2.0 ** 12)
    kl = sub(kf, kh)
    r = xf
    for part in _PIO2:
        r = sub(sub(r, mul(kh, part)), mul(kl, part))
    return k, r


def _sin_cos_r(r: Tensor):
    r2 = mul(r, r)
    s = add(r, mul(mul(r, r2), _poly(r2, _SIN)))
    c = add(sub(1.0, mul(r2, 0.5)), mul(mul(r2, r2), _poly(r2, _COS)))
    return s, c


def _quadrant_select(q, s: Tensor, c: Tensor) -> Tensor:
    """``sin(r + q pi/2)`` from ``s = sin r``, ``c = cos r``."""
    base = where(ne(bitwise_and(q, 1), 0), c, s)
    return where(ne(bitwise_and(q, 2), 0), neg(base), base)


def sin(input) -> Tensor:
    """``sin(r + k pi/2)`` (reduction and range in the module docstring)."""
    xf = _f32(input)
    k, r = _reduce_pio2(xf)
    s, c = _sin_cos_r(r)
    return _back(_in_domain(xf, _quadrant_select(k, s, c)), input)


def cos(input) -> Tensor:
    """``sin(r + (k + 1) pi/2)``."""
    xf = _f32(input)
    k, r = _reduce_pio2(xf)
    s, c = _sin_cos_r(r)
    return _back(_in_domain(xf, _quadrant_select(add(k, 1), s, c)), input)


def tan(input) -> Tensor:
    """``s / c`` in even quadrants, ``-c / s`` in odd ones."""
    xf = _f32(input)
    k, r = _reduce_pio2(xf)
    s, c = _sin_cos_r(r)
    odd = ne(bitwise_and(k, 1), 0)
    t = div(where(odd, neg(c), s), where(odd, s, c))
    return _back(_in_domain(xf, t), input)


# ---------------------------------------------------------------------------------- inverse trig
def _atan_unit(u: Tensor) -> Tensor:
    """``atan(u)`` for ``0 <= u <= 1`` (or NaN)."""
    mid = gt(u, _TAN_PI_8)
    v = where(mid, div(sub(u, 1.0), add(u, 1.0)), u)
    p = add(v, mul(mul(v, mul(v, v)), _poly(mul(v, v), _ATAN)))
    return where(mid, add(p, math.pi / 4), p)


def _atan_pos(t: Tensor) -> Tensor:
    """``atan(t)`` for ``t >= 0`` (inf -> pi/2)."""
    big = gt(t, 1.0)
    a = _atan_unit(where(big, reciprocal(t), t))
    return where(big, sub(_HALF_PI, a), a)


def atan(input) -> Tensor:
    """``sign(x) atan(|x|)``; +-inf -> +-pi/2."""
    xf = _f32(input)
    a = _atan_pos(abs(xf))
    return _back(where(lt(xf, 0), neg(a), a), input)


def _signbit_f(xf: Tensor) -> Tensor:
    """Sign bit of a float tensor (``-0.0`` included; NaN counts as positive)."""
    return logical_or(lt(xf, 0), logical_and(eq(xf, 0), lt(reciprocal(xf), 0)))


def _atan2_f(yf: Tensor, xf: Tensor) -> Tensor:
    """Quadrant-correct ``atan2`` on FP32 tensors with torch's zeros and infinities."""
    ax, ay = abs(xf), abs(yf)
    hi, lo = maximum(ax, ay), minimum(ax, ay)
    t = where(eq(ax, ay), 1.0, div(lo, hi))  # also inf/inf
    t = where(eq(hi, 0), 0.0, t)  # 0/0
    a = _atan_unit(t)
    a = where(gt(ay, ax), sub(_HALF_PI, a), a)
    a = where(_signbit_f(xf), sub(math.pi, a), a)
    return where(_signbit_f(yf), neg(a), a)


def atan2(y, x) -> Tensor:
    """``atan2(y, x)`` in ``[-pi, pi]``, torch semantics for signed zeros and infinities."""
    d = _float_result(y, x)
    yf, xf = _as(y, x, dt.DT_FP32), _as(x, y, dt.DT_FP32)
    r = _atan2_f(yf, xf)
    return cast(r, d) if d != dt.DT_FP32 else r


def _float_result(a, b) -> dt.DataType:
    """Result dtype of a binary float function: promoted, integers -> FP32."""
    if is_scalar(a):
        d = node_of(b).dtype
    elif is_scalar(b):
        d = node_of(a).dtype
    else:
        d = promote(node_of(a).dtype, node_of(b).dtype)
    return d if d.is_float() else dt.DT_FP32


def _as(v, other, dtype: dt.DataType) -> Tensor:
    """``v`` as a ``dtype`` tensor (a scalar becomes a ``full`` with ``other``'s shape)."""
    if is_scalar(v):
        return full(list(node_of(other).shape), float(v), dtype)
    return cast(v, dtype) if node_of(v).dtype != dtype else v


def _one_minus_sq(xf: Tensor) -> Tensor:
    """``1 - x^2`` as ``(1 - x)(1 + x)`` (no cancellation near |x| = 1)."""
    return mul(sub(1.0, xf), add(xf, 1.0))


def asin(input) -> Tensor:
    """``atan(x / sqrt(1 - x^2))``; |x| > 1 -> NaN."""
    xf = _f32(input)
    t = div(abs(xf), sqrt(_one_minus_sq(xf)))
    a = _atan_pos(t)
    return _back(where(lt(xf, 0), neg(a), a), input)


def acos(input) -> Tensor:
    """``atan2(sqrt(1 - x^2), x)``; |x| > 1 -> NaN."""
    xf = _f32(input)
    return _back(_atan2_f(sqrt(_one_minus_sq(xf)), xf), input)


# ---------------------------------------------------------------------------------- inverse hyperbolic
def asinh(input) -> Tensor:
    """``sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))``; ``log|x| + ln 2`` for large |x|."""
    xf = _f32(input)
    a = abs(xf)
    a2 = mul(a, a)
    small = log1p_f32(add(a, div(a2, add(sqrt(add(a2, 1.0)), 1.0))))
    r = where(gt(a, _LOG_ONLY), add(log(a), _LN2), small)
    return _back(where(lt(xf, 0), neg(r), r), input)


def acosh(input) -> Tensor:
    """``log1p((x - 1) + sqrt((x - 1)(x + 1)))``; ``log x + ln 2`` for large x; x < 1 -> NaN."""
    xf = _f32(input)
    d = sub(xf, 1.0)
    small = log1p_f32(add(d, sqrt(mul(d, add(xf, 1.0)))))
    r = where(gt(xf, _LOG_ONLY), add(log(xf), _LN2), small)
    return _back(where(lt(xf, 1.0), float("nan"), r), input)


def atanh(input) -> Tensor:
    """``sign(x) / 2 * log1p(2|x| / (1 - |x|))``; +-1 -> +-inf, |x| > 1 -> NaN."""
    xf = _f32(input)
    a = abs(xf)
    r = mul(log1p_f32(div(add(a, a), sub(1.0, a))), 0.5)
    return _back(where(lt(xf, 0), neg(r), r), input)


# ---------------------------------------------------------------------------------- cbrt, sign bits
def cbrt(input) -> Tensor:
    """``exp(log|x| / 3)`` plus one Newton step ``y - (y - |x| / y^2) / 3``; 0, inf, NaN pass through."""
    xf = _f32(input)
    a = abs(xf)
    y = exp(mul(log(a), 1.0 / 3.0))
    y = sub(y, mul(sub(y, div(a, mul(y, y))), 1.0 / 3.0))
    y = where(logical_and(gt(a, 0), lt(a, float("inf"))), y, a)
    return _back(where(lt(xf, 0), neg(y), y), input)


def signbit(input) -> Tensor:
    """BOOL: the sign bit (``-0.0`` -> True; NaN -> False: its sign is not observable without a bit view)."""
    n = node_of(input)
    if n.dtype.is_float():
        return _signbit_f(input)
    if n.dtype == dt.DT_BOOL:
        return lt(cast(input, dt.DT_INT32), 0)
    return lt(input, 0)


def copysign(input, other) -> Tensor:
    """``|a|`` with the sign bit of ``other`` (floats; integer operands give FP32, like torch)."""
    d = _float_result(input, other)
    mag = abs(_as(input, other, d))
    if is_scalar(other):
        return neg(mag) if math.copysign(1.0, float(other)) < 0 else mag
    return where(_signbit_f(_as(other, input, d)), neg(mag), mag)


__all__ = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "cbrt", "signbit",
           "copysign"]
