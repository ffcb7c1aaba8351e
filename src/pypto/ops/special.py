"""Special functions composed from the element-wise primitives in FP32 (rounded once to a 16-bit float
input dtype; integer inputs give FP32): ``digamma``."""
from __future__ import annotations

import math

from ..tensor import Tensor
from .elementwise import add, div, eq, log, logical_and, lt, mul, reciprocal, sub, where
from .math import _back, _f32, round
from .trig import signbit, tan

#: the asymptotic series of psi(y) - log(y) + 1/(2y) in powers of r2 = 1/y**2 (Bernoulli numbers
#: B_2k / 2k): -r2/12 + r2**2/120 - r2**3/252 + r2**4/240 - r2**5/132
_SERIES = (1.0 / 12, 1.0 / 120, 1.0 / 252, 1.0 / 240, 1.0 / 132)
#: recurrence steps: psi(x) = psi(x + 6) - sum(1 / (x + i), i < 6), so the series runs at y >= 6.5
_SHIFT = 6


def digamma(x) -> Tensor:
    """``psi(x) = d/dx ln Gamma(x)`` element-wise (the official ``pypto.digamma``), computed in FP32.

    ``x >= 0.5``: six recurrence steps up to ``y = x + 6`` and the asymptotic series there (truncation
    below 1e-11).  ``x < 0.5``: the reflection ``psi(x) = psi(1 - x) - pi / tan(pi x)``, with
    ``tan(pi x)`` taken at ``x - round(x)``, which is exact, so neither large ``|x|`` nor ``x`` near a pole
    loses precision.
    Poles as torch: ``digamma(+0) = -inf``, ``digamma(-0) = +inf``, a negative integer (every float
    below ``-2**23`` is one) and ``-inf`` give NaN; ``+inf`` gives ``+inf``, NaN stays NaN.  The error is
    a few FP32 ulps of the terms, so near the positive root (1.4616...) it is absolute (~5e-7),
    like torch's own FP32 recurrence."""
    xf = _f32(x)
    refl = lt(xf, 0.5)
    xr = where(refl, sub(1.0, xf), xf)
    acc = reciprocal(xr)
    for i in range(1, _SHIFT):
        acc = add(acc, reciprocal(add(xr, float(i))))
    y = add(xr, float(_SHIFT))
    r = reciprocal(y)
    r2 = mul(r, r)
    poly = _SERIES[-1]
    for c in reversed(_SERIES[:-1]):
        poly = sub(c, mul(r2, poly))
    psi = sub(sub(log(y), mul(r, 0.5)), mul(r2, poly))
    psi = sub(psi, acc)
    frac = sub(xf, round(xf))  # in [-0.5, 0.5] and exact (Sterbenz), so pi * frac keeps its precision
    res = where(refl, sub(psi, div(math.pi, tan(mul(frac, math.pi)))), psi)
    pole = logical_and(refl, eq(frac, 0.0))
    at_pole = where(eq(xf, 0.0), where(signbit(xf), math.inf, -math.inf), math.nan)
    return _back(where(pole, at_pole, res), x)


__all__ = ["digamma"]
