"""Dtype conversion with the hardware rounding modes (``pl.RoundMode``).

CAST_RINT rounds to nearest-even, CAST_ROUND to nearest with ties away from zero, FLOOR/CEIL/TRUNC
as named, CAST_ODD (FP32->FP16) rounds to odd; CAST_NONE is the hardware default, which we define
as CAST_RINT.  Float -> int conversions saturate and map NaN to 0; int -> int conversions wrap like C.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from .. import lowprec
from ..dtypes import DataType
from ..ir.types import RoundMode


def _codes_as(codes: np.ndarray, dtype: DataType) -> np.ndarray:
    """uint8 codes seen as the ml_dtypes storage type of ``dtype`` (one element per byte)."""
    return codes.view(dtype.np_dtype)


def _round_int(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    if mode in (RoundMode.CAST_RINT, RoundMode.CAST_NONE, RoundMode.CAST_ODD):
        return np.rint(x)
    if mode == RoundMode.CAST_ROUND:
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == RoundMode.CAST_FLOOR:
        return np.floor(x)
    if mode == RoundMode.CAST_CEIL:
        return np.ceil(x)
    return np.trunc(x)


def _nextafter(y: np.ndarray, direction: float) -> np.ndarray:
    """nextafter for any float dtype, 16-bit ones (incl. bf16) via their bit patterns."""
    if y.dtype.itemsize >= 4 and y.dtype.kind == "f":
        return np.nextafter(y, np.array(direction, dtype=y.dtype))
    bits = y.view(np.uint16).astype(np.int32)
    neg = (bits & 0x8000) != 0
    mag = bits & 0x7FFF
    toward_bigger_mag = (direction > 0) != neg
    new_mag = np.where(toward_bigger_mag, mag + 1, mag - 1)
    zero = mag == 0
    new_bits = np.where(zero, np.where(direction > 0, 0x0001, 0x8001), (bits & 0x8000) | new_mag)
    out = new_bits.astype(np.uint16).view(y.dtype)
    wide = y.astype(np.float32)
    # NaN stays NaN and an infinity stepping outward stays infinite; inward it becomes the largest
    # finite value (needed by FLOOR/CEIL/TRUNC/ODD on overflow).
    keep = np.isnan(wide) | (np.isinf(wide) & toward_bigger_mag)
    return np.where(keep, y, out)


def _float_round(x: np.ndarray, target: np.dtype, mode: RoundMode) -> np.ndarray:
    """Round float64 values to a narrower float dtype with ``mode``."""
    y = x.astype(target)
    if mode in (RoundMode.CAST_RINT, RoundMode.CAST_NONE):
        return y
    yd = y.astype(np.float64)
    with np.errstate(all="ignore"):
        up = _nextafter(y, np.inf)
        down = _nextafter(y, -np.inf)
    exact = (yd == x) | ~np.isfinite(x)
    lower = np.where(yd <= x, y, down)
    upper = np.where(yd >= x, y, up)
    if mode == RoundMode.CAST_FLOOR:
        r = lower
    elif mode == RoundMode.CAST_CEIL:
        r = upper
    elif mode == RoundMode.CAST_TRUNC:
        r = np.where(x >= 0, lower, upper)
    elif mode == RoundMode.CAST_ROUND:
        dl = x - lower.astype(np.float64)
        du = upper.astype(np.float64) - x
        away = np.where(x >= 0, upper, lower)
        r = np.where(dl < du, lower, np.where(du < dl, upper, away))
        # ties-away overflows exactly where ties-even does (|x| >= max + half an ulp): keep RNE's inf
        r = np.where(np.isinf(yd), y, r)
    elif mode == RoundMode.CAST_ODD:
        lo_bits = lower.view(np.uint16 if target.itemsize == 2 else np.uint32)
        r = np.where((lo_bits & 1) == 1, lower, upper)
    else:
        raise ValueError(mode)
    return np.where(exact, y, r).astype(target)


_MODE_NAMES = {RoundMode.CAST_RINT: "rint", RoundMode.CAST_NONE: "rint", RoundMode.CAST_ROUND: "round",
               RoundMode.CAST_FLOOR: "floor", RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_TRUNC: "trunc"}


def is_low_float(dtype: DataType) -> bool:
    """An 8-bit or 4-bit float format (FP8 E4M3/E5M2/E8M0, HF8, FP4 E2M1/E1M2)."""
    return dtype.is_float() and dtype.bits() <= 8 and dtype.np_dtype is not None


def low_float_values(dtype: DataType) -> np.ndarray:
    """The value of every code of a low float format."""
    if dtype.codec is not None:
        return lowprec.format_values(dtype.codec[0], dtype.bits())
    return lowprec.format_values(lambda codes: codes.view(dtype.np_dtype).astype(np.float32), dtype.bits())


def cast_values(values: np.ndarray, src: DataType, dst: DataType, mode: RoundMode) -> np.ndarray:
    """Convert stored ``values`` of dtype ``src`` to dtype ``dst`` storage with rounding ``mode``.

    Low float formats (8/4 bits) are read exactly as fp32 and written by rounding on the format's
    own value grid (:func:`lowprec.round_to_format`: saturating; HF8 rounds ties away from zero
    under every nearest mode, as the hardware only has that one)."""
    values = np.asarray(values)
    if is_low_float(src):
        values, src = src.decode(values), dt.DT_FP32
    if is_low_float(dst):
        if mode == RoundMode.CAST_ODD:
            raise ValueError("CAST_ODD exists only for FP32 -> FP16")
        name = _MODE_NAMES[mode]
        if dst.name == "HF8" and name in ("rint", "round"):
            return dst.encode(values)
        with np.errstate(all="ignore"):
            codes = lowprec.round_to_format(values.astype(np.float64), low_float_values(dst), name)
        return codes if dst.codec is not None else _codes_as(codes, dst)
    target = dst.require_numpy()
    if src.kind == "bool" or dst.kind == "bool":
        return values.astype(target)
    with np.errstate(all="ignore"):
        if dst.is_float():
            x = values.astype(np.float64)
            if src.is_float() and src.bits() < dst.bits():  # widening is exact (fp16 <-> bf16 is not)
                return values.astype(np.float32).astype(target)
            if src.is_int() and np.all(x.astype(target).astype(np.float64) == x):
                return x.astype(target)
            return _float_round(x, target, mode)
        # integer destination
        if src.is_float():
            x = _round_int(values.astype(np.float64), mode)
            info = np.iinfo(target)
            x = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
            return x.astype(target)
        return values.astype(target)
