"""Exact FP32 values of 8-bit float tensors (FP8 E4M3FN / E5M2, E8M0 scales) decoded from their bytes,
and of 4-bit float tensors (FP4 E2M1 / E1M2) from their codes.

The compiled cpu backend has no C++ storage type for these formats, so tensor-level ops that only need
their values (``pypto.scaled_mm``) read the bytes as UINT8 (a bit reinterpretation) and rebuild each
value with integer arithmetic: the FP32 bit pattern for normal numbers and the special codes,
``mantissa * 2**-k`` for subnormals.  Every FP8/E8M0 value is exactly representable in FP32, so the
result equals a direct conversion on every backend.
"""
from __future__ import annotations

from pypto_pro import dtypes as dt

from ..tensor import Tensor
from ..graph import Buffer, gm_leaf
from .core import materialize, node_of, out
from .elementwise import cast, where
from .shape import view

#: format -> (exponent bits, mantissa bits, exponent bias)
_FORMATS = {"FP8E4M3FN": (4, 3, 7), "FP8E5M2": (5, 2, 15)}
_NAN_BITS = 0x7FC00000
_INF_BITS = 0x7F800000


def _bits_as_fp32(bits) -> Tensor:
    return view(bits, dtype=dt.DT_FP32)


#: 4-bit formats: value of each code 0..15 (E2M1: sign, 2 exponent bits, 1 mantissa bit; E1M2: sign, 1, 2)
_FP4_MAGNITUDES = {"FP4E2M1": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0),
                   "FP4E1M2": (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75)}
_FP4_MAGNITUDES["FP4"] = _FP4_MAGNITUDES["FP4E2M1"]


def _fp4_codes(x) -> Tensor:
    """The codes of a 4-bit float tensor, one per element, as UINT8: a tensor-level FP4 tensor holds
    one code per byte (frontend/packed_fp4.py), so this is the same memory seen as bytes."""
    n = materialize(node_of(x))
    buf = n.attrs["buf"]
    seen = Buffer(f"{buf.name}_codes", dt.DT_UINT8, buf.shape, "alias", base=buf)
    return out(gm_leaf(seen, n.attrs["offsets"], n.attrs["axes"], n.shape))


def _fp4_to_fp32(x, name: str) -> Tensor:
    """A 4-bit float tensor's values: the magnitude of the low three bits by table (a chain of selects),
    negated where the sign bit (bit 3) is set (code 8 is -0.0)."""
    code = cast(_fp4_codes(x), dt.DT_INT32)
    mag_code = code % 8
    table = _FP4_MAGNITUDES[name]
    mag = cast(mag_code, dt.DT_FP32) * table[1]  # codes 0 and 1 (both formats are linear there)
    for c in range(2, 8):
        if table[c] != c * table[1]:
            mag = where(mag_code == c, table[c], mag)
    return mag * (1.0 - 2.0 * cast(code // 8, dt.DT_FP32))


def to_fp32(x) -> Tensor:
    """``x`` (FP8E4M3FN, FP8E5M2 or FP8E8M0) as FP32, exactly.

    An FP8 code's exponent and mantissa fields, moved to the top of an FP32 bit pattern, read as FP32
    with bias 127 instead of the format's: multiplying by ``2**(127 - bias)`` gives the value, for
    subnormals too (FP32's subnormal step scales to the format's).  The sign bit goes to bit 31
    (``-2**31`` is an INT32); NaN / infinity codes are set as FP32 bit patterns first."""
    name = node_of(x).dtype.name
    if name in _FP4_MAGNITUDES:
        return _fp4_to_fp32(x, name)
    code = cast(view(x, dtype=dt.DT_UINT8), dt.DT_INT32)
    if name == "FP8E8M0":  # 2**(e - 127); e = 0 is 2**-127 (an FP32 subnormal), e = 255 is NaN
        bits = where(code == 0, 1 << 22, where(code == 255, _NAN_BITS, code * (1 << 23)))
        return _bits_as_fp32(bits)
    ebits, mbits, bias = _FORMATS[name]
    mag = code % 128
    bits = mag * (1 << (23 - mbits)) + (code // 128) * -(1 << 31)
    top = (1 << (ebits + mbits)) - 1  # the largest magnitude code
    if name == "FP8E4M3FN":  # no infinities; S.1111.111 is NaN
        bits = where(mag == top, _NAN_BITS, bits)
    else:  # exponent all ones: infinity (mantissa 0) or NaN, signed
        special = where(mag == top - (1 << mbits) + 1, _INF_BITS, _NAN_BITS) + (code // 128) * -(1 << 31)
        bits = where(mag > top - (1 << mbits), special, bits)
    return _bits_as_fp32(bits) * float(2.0 ** (127 - bias))


#: the formats :func:`to_fp32` decodes
DECODED = frozenset(_FORMATS) | {"FP8E8M0"} | frozenset(_FP4_MAGNITUDES)
