"""fp32 operation sequences shared by the interpreter and the cpu backend, bit for bit.

The interpreter (the oracle) defines ``exp`` and float ``matmul`` by the same fp32 operation sequence
that the cpu backend compiles (include/pto/vector.h ``exp_f32``/``exp8_f32``, the cube's FMA chain and
the one addition of a product to its accumulator),
evaluated here with numpy, vectorised:

* :func:`fma32` is an exact fp32 fused multiply-add: the product of two fp32 values is exact in
  float64, the float64 sum's rounding error comes from an error-free TwoSum, and the sum is rounded
  to odd before the final rounding to fp32 (53 >= 24 + 2 bits, so the two roundings equal one).
* :func:`exp32` is Cody-Waite reduction ``x = n ln2 + r`` (ln2 split in two), a degree-6 polynomial
  (Cephes expf coefficients) by FMAs, and scaling by ``2^n`` in two exact steps: <= 1.01 ulp from
  the exact exponential over all fp32 inputs.
"""
from __future__ import annotations

import numpy as np

_F32 = np.float32
_HI, _LO = _F32(88.72283935546875), _F32(-103.97208404541015625)
_LOG2E = _F32(1.44269502162933349609375)
_LOW29, _MID29 = np.int64((1 << 29) - 1), np.int64(1 << 28)  # float64 bits below an fp32 mantissa; a midpoint
_EXP64, _TINY64 = np.int64(0x7FF << 52), np.int64((1023 - 126) << 52)  # exponent field; fp32's smallest normal
_C1, _C2 = _F32(0.693359375), _F32(-2.12194440e-4)
_P = tuple(_F32(v) for v in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                             1.6666665459e-1, 5.0000001201e-1))


def _round_sum(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``p + c`` rounded once to fp32, for float64 ``p`` (an exact fp32 product) and ``c`` (an fp32
    value).  Rounding the float64 sum to fp32 is already right unless that sum sits exactly on an fp32
    midpoint (low 29 mantissa bits 1 followed by zeros) or in the fp32 subnormal range; only those
    elements get a float64 TwoSum (the sum's exact error; no overflow: |p| < 2^257, |c| < 2^128) and,
    when inexact with an even last bit, a move of one float64 ulp towards the error (round to odd),
    after which the rounding to fp32 equals a single rounding of the exact value."""
    with np.errstate(all="ignore"):
        s = p + c
        bits = s.view(np.int64)
        suspect = ((bits & _LOW29) == _MID29) | ((bits & _EXP64) < _TINY64)
        if suspect.any():
            i = np.flatnonzero(suspect)
            ps, cs, ss = p.ravel()[i], c.ravel()[i], s.ravel()[i]
            bb = ss - ps
            e = (ps - (ss - bb)) + (cs - bb)
            fix = (e != 0) & ((ss.view(np.int64) & 1) == 0) & np.isfinite(e)
            s = s.copy()
            s.ravel()[i] = np.where(fix, np.nextafter(ss, np.copysign(np.inf, e)), ss)
        return s.astype(_F32)


def fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` for fp32 operands (arrays or scalars, broadcast), rounded once to fp32."""
    with np.errstate(all="ignore"):  # signalling NaNs warn in the casts
        p = np.multiply(np.asarray(a, _F32), np.asarray(b, _F32), dtype=np.float64)  # exact
        c64 = np.asarray(c, _F32).astype(np.float64)
    return _round_sum(*np.broadcast_arrays(p, c64))


def matmul32(x: np.ndarray, y: np.ndarray, base=None) -> np.ndarray:
    """``base + x @ y`` for fp32-representable ``x [M, K]``, ``y [K, N]`` as the cpu backend's cube:
    the product is one fp32 FMA chain over ``k = 0..K-1`` from +0 per result element, then added to
    ``base`` (fp32, broadcast to [M, N]: the accumulator of ``matmul_acc`` or the bias row) with one
    rounding, as the official reference interpreter adds each K block's product to its accumulator.
    Vectorised over the M x N block, one step per k."""
    with np.errstate(all="ignore"):
        x64 = np.asarray(x, _F32).astype(np.float64)
        y64 = np.asarray(y, _F32).astype(np.float64)
    m, k = x64.shape
    n = y64.shape[1]
    acc = np.zeros((m, n), _F32)
    p = np.empty((m, n), np.float64)
    with np.errstate(all="ignore"):
        for q in range(k):
            np.multiply(x64[:, q, None], y64[None, q, :], out=p)  # exact
            acc = _round_sum(p, acc.astype(np.float64))
        if base is not None:
            acc = np.add(np.broadcast_to(np.asarray(base, _F32), (m, n)), acc, dtype=_F32)
    return acc


def exp32(x) -> np.ndarray:
    """exp of fp32 values by the cpu backend's fp32 sequence (same bits; NaN gives ``x + x``)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        xc = np.clip(x, _F32(-110.0), _F32(89.0))
        fn = np.rint(xc * _LOG2E)
        r = fma32(fn, -_C1, xc)
        r = fma32(fn, -_C2, r)
        p = fma32(_P[0], r, _P[1])
        for coef in _P[2:]:
            p = fma32(p, r, coef)
        y = fma32(p, r * r, r) + _F32(1.0)
        n = np.nan_to_num(fn).astype(np.int32)
        n1 = n >> 1
        n2 = n - n1
        s1 = ((n1 + 127) << 23).astype(np.int32).view(_F32)
        s2 = ((n2 + 127) << 23).astype(np.int32).view(_F32)
        out = (y * s1) * s2
        out = np.where(x > _HI, _F32(np.inf), out)
        out = np.where(x < _LO, _F32(0.0), out)
        out = np.where(np.isnan(x), x + x, out)
    return out.astype(_F32, copy=False)
