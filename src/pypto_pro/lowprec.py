"""Exact codecs of the element formats numpy has no type for: HiFloat8 (HF8) and FP4 E1M2.

A tile or tensor of such a format stores its codes in a ``uint8`` array (one code per byte; 4-bit
codes in the low nibble of their byte); arithmetic decodes codes to fp32 and encodes results back
once.  Both directions are exact table look-ups: every code has one value, and every fp32 value
rounds to one code, so the interpreter and the compiled backends cannot disagree.

HiFloat8 (HF8) is Huawei's tapered 8-bit float: a sign bit, then a prefix-coded "dot" field that
says how many of the remaining bits are exponent (sign-magnitude) and how many are mantissa::

    dot  exponent bits  |exponent|   mantissa bits
    11   4 (s + 3)      8..15        1            (e=+15 with mantissa 1 is infinity)
    10   3 (s + 2)      4..7         2
    01   2 (s + 1)      2..3         3
    001  1 (s)          1            3
    0001 0              0            3
    0000 -              -            3: value 2^(m-23) for m=1..7 (the ladder below 2^-15);
                                        m=0 is zero (sign 0) or NaN (sign 1, code 0x80)

Values are ``(1 + mantissa/2^bits) * 2^exponent``.  The largest finite value is 2^15 = 32768.
fp32 -> HF8 rounds to the nearest finite value, ties away from zero (the A5's ROUND_A), and
saturates: magnitudes above 32768 (infinities included) become +-32768; NaN becomes 0x80; there
is no negative zero (-0.0 and negative values that round to zero encode as 0x00).

FP4 E1M2 (the MXFP4 mantissa format next to E2M1): sign bit, one exponent bit, two mantissa bits;
the magnitude of code ``c`` is ``(c & 7) / 4`` (0, 0.25, ..., 1.75).  Encoding rounds to nearest,
ties to even code, and saturates to +-1.75.
"""
from __future__ import annotations

import numpy as np

HF8_NAN_CODE = 0x80
HF8_MAX = 32768.0


def _hf8_magnitude(code7: int) -> float:
    """The value of the 7 bits after the sign (NaN for the infinity code)."""
    top = code7 >> 5
    if top == 3:
        e = (code7 >> 1) & 0xF
        m = code7 & 1
        if e == 0b0111 and m == 1:
            return float("inf")
        mag = 8 + (e & 7)
        return (1 + m / 2) * 2.0 ** (-mag if e >> 3 else mag)
    if top == 2:
        e = (code7 >> 2) & 7
        mag = 4 + (e & 3)
        return (1 + (code7 & 3) / 4) * 2.0 ** (-mag if e >> 2 else mag)
    if top == 1:
        e = (code7 >> 3) & 3
        mag = 2 + (e & 1)
        return (1 + (code7 & 7) / 8) * 2.0 ** (-mag if e >> 1 else mag)
    if code7 & 0x10:
        return (1 + (code7 & 7) / 8) * 2.0 ** (-1 if code7 & 0x08 else 1)
    if code7 & 0x08:
        return 1 + (code7 & 7) / 8
    m = code7 & 7
    return 0.0 if m == 0 else 2.0 ** (m - 23)


def _hf8_table() -> np.ndarray:
    table = np.empty(256, dtype=np.float64)
    for code in range(256):
        mag = _hf8_magnitude(code & 0x7F)
        table[code] = -mag if code & 0x80 else mag
    table[HF8_NAN_CODE] = np.nan
    return table


#: value of every HF8 code (float64; +-inf and NaN included)
HF8_VALUES = _hf8_table()
_HF8_VALUES32 = HF8_VALUES.astype(np.float32)
# the non-negative finite grid, ascending, and the code of each grid value
_pos = [c for c in range(128) if np.isfinite(HF8_VALUES[c])]
_pos.sort(key=lambda c: HF8_VALUES[c])
_HF8_GRID = np.array([HF8_VALUES[c] for c in _pos])
_HF8_GRID_CODES = np.array(_pos, dtype=np.uint8)
assert _HF8_GRID[-1] == HF8_MAX and len(set(_HF8_GRID)) == len(_HF8_GRID)


def hf8_decode(codes: np.ndarray) -> np.ndarray:
    """HF8 codes (``uint8``) -> fp32 values."""
    return _HF8_VALUES32[np.asarray(codes, dtype=np.uint8)]


def _nearest_code(mag: np.ndarray, grid: np.ndarray, codes: np.ndarray, ties_up: bool) -> np.ndarray:
    """Code of the grid value nearest to each non-negative ``mag`` (inside the grid's range)."""
    hi = np.clip(np.searchsorted(grid, mag, side="left"), 1, len(grid) - 1)
    lo = hi - 1
    below, above = mag - grid[lo], grid[hi] - mag
    pick_hi = below >= above if ties_up else (below > above) | ((below == above) & (hi % 2 == 0))
    return np.where(pick_hi, codes[hi], codes[lo])


def hf8_encode(values: np.ndarray) -> np.ndarray:
    """fp32 values -> HF8 codes: nearest, ties away from zero, saturating; NaN -> 0x80."""
    x = np.asarray(values, dtype=np.float32).astype(np.float64)
    nan = np.isnan(x)
    mag = np.minimum(np.abs(np.where(nan, 0.0, x)), HF8_MAX)
    code = _nearest_code(mag, _HF8_GRID, _HF8_GRID_CODES, ties_up=True)
    negative = (x < 0) & (code != 0)
    code = np.where(negative, code | 0x80, code)
    return np.where(nan, HF8_NAN_CODE, code).astype(np.uint8)


#: magnitudes of FP4 E1M2 codes 0..7
_E1M2_GRID = np.arange(8, dtype=np.float64) / 4
_E1M2_VALUES32 = np.concatenate([_E1M2_GRID, -_E1M2_GRID]).astype(np.float32)


def e1m2_decode(codes: np.ndarray) -> np.ndarray:
    """FP4 E1M2 codes (low nibble of ``uint8``) -> fp32 values."""
    return _E1M2_VALUES32[np.asarray(codes, dtype=np.uint8) & 0x0F]


def e1m2_encode(values: np.ndarray) -> np.ndarray:
    """fp32 values -> FP4 E1M2 codes: nearest, ties to the even code, saturating at +-1.75; NaN -> 0."""
    x = np.asarray(values, dtype=np.float32).astype(np.float64)
    x = np.where(np.isnan(x), 0.0, x)
    mag = np.minimum(np.abs(x), _E1M2_GRID[-1])
    code = _nearest_code(mag, _E1M2_GRID, np.arange(8, dtype=np.uint8), ties_up=False)
    return np.where(np.signbit(x), code | 0x08, code).astype(np.uint8)


def unpack_fp4(packed: np.ndarray, cols: int) -> np.ndarray:
    """Packed 4-bit codes (``[..., ceil(cols/2)]`` bytes, element 2i in the low nibble of byte i, 2i+1
    in the high nibble) -> one code per byte ``[..., cols]``."""
    packed = np.asarray(packed, dtype=np.uint8)
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = packed & 0x0F
    out[..., 1::2] = packed >> 4
    return out[..., :cols]


def pack_fp4(codes: np.ndarray) -> np.ndarray:
    """The inverse of :func:`unpack_fp4` (an odd last dimension is padded with a zero code)."""
    codes = np.asarray(codes, dtype=np.uint8) & 0x0F
    if codes.shape[-1] % 2:
        codes = np.concatenate([codes, np.zeros(codes.shape[:-1] + (1,), np.uint8)], axis=-1)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


# --------------------------------------------------------------------------- rounding to any <= 8-bit float
def format_values(decode, nbits: int) -> np.ndarray:
    """The value of every code of a format of ``nbits`` (``decode`` maps uint8 codes to fp32)."""
    return np.asarray(decode(np.arange(1 << nbits, dtype=np.uint8)), dtype=np.float64)


def round_to_format(x: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    """Codes of the float format whose code ``c`` has value ``values[c]`` nearest to ``x`` (float64)
    under ``mode``: "rint" (nearest, ties to the even code), "round" (nearest, ties away from zero),
    "floor", "ceil", "trunc".  Finite values beyond the largest finite value saturate to it; an
    infinity stays infinite where the format has one and saturates otherwise; NaN maps to the
    format's NaN code (code 0 where it has none).  Negative results that are zero take the +0 code."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(values)
    codes = np.nonzero(finite)[0]
    order = np.lexsort((codes, values[codes]))  # by value; -0 and +0 tie: the lower code (+0) first
    grid, grid_codes = values[codes][order], codes[order].astype(np.uint8)
    keep = np.concatenate([[True], grid[1:] != grid[:-1]])
    grid, grid_codes = grid[keep], grid_codes[keep]
    xs = np.clip(np.where(np.isnan(x), 0.0, x), grid[0], grid[-1])
    hi = np.clip(np.searchsorted(grid, xs, side="left"), 1, len(grid) - 1)
    lo = hi - 1
    exact_hi = grid[hi] == xs
    below, above = xs - grid[lo], grid[hi] - xs
    if mode == "floor":
        pick_hi = exact_hi
    elif mode == "ceil":
        pick_hi = np.ones_like(exact_hi)
    elif mode == "trunc":
        pick_hi = exact_hi | (xs < 0)
    elif mode == "round":
        pick_hi = (below > above) | ((below == above) & (xs > 0))
    else:
        pick_hi = (below > above) | ((below == above) & (grid_codes[hi] % 2 == 0))
    pick_hi = np.where(grid[lo] == xs, False, exact_hi | pick_hi)
    out = np.where(pick_hi, grid_codes[hi], grid_codes[lo])
    pos_inf, neg_inf = np.nonzero(values == np.inf)[0], np.nonzero(values == -np.inf)[0]
    if len(pos_inf):
        out = np.where(x == np.inf, pos_inf[0], out)
    if len(neg_inf):
        out = np.where(x == -np.inf, neg_inf[0], out)
    nan = np.nonzero(np.isnan(values))[0]
    return np.where(np.isnan(x), nan[0] if len(nan) else 0, out).astype(np.uint8)
