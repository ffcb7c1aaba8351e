"""Quantization (the official ``pypto.quantize`` / ``pypto.dequantize`` / ``pypto.quant_mx`` pages),
composed from element-wise ops, so they fuse with their neighbours on every backend.

``quantize``: FP32 -> INT8 / UINT8, ``round(input * scale [+ zero_points])``;
``dequantize``: INT8 / INT16 (and UINT8) -> FP32, ``(float(input) [+ zero_points]) * scale``.
``scale`` / ``zero_points`` hold one value per row (``axis=-1``: shape ``input.shape[:-1]``) or per
column (``axis=-2``: ``input.shape[:-2] + input.shape[-1:]``), the page's "one dim less" form; the
same shape with the reduced axis kept as 1 (``[..., row, 1]`` / ``[..., 1, col]``, the form of the
dequantize page's example and of the official tests) is accepted too.
"""
from __future__ import annotations

from typing import Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.ir.types import RoundMode

from ..symbolic import format_dims
from ..tensor import Tensor
from .core import node_of, same_dim
from .elementwise import SaturationMode, add, cast, mul, sub
from .shape import unsqueeze


def _axis(axis, ndim: int, what: str) -> int:
    """``axis`` as -1 or -2 (the last two dims; a 1-D input only -1)."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise KernelTypeError(f"{what}: axis must be an int, got {axis!r}")
    a = axis - ndim if axis >= 0 else axis
    if a not in ((-1,) if ndim == 1 else (-1, -2)):
        allowed = "-1 (or 0)" if ndim == 1 else f"-1, -2 (or {ndim - 1}, {ndim - 2})"
        raise KernelValueError(f"{what}: axis must be {allowed} for a {ndim}-D input, got {axis}")
    return a


def _per_axis(factor, shape, axis: int, name: str, what: str) -> Tensor:
    """The FP32 ``scale`` / ``zero_points`` tensor seen with the reduced ``axis`` as a size-1 dim, so
    that it broadcasts over ``input``."""
    n = node_of(factor, f"{what} {name}")
    if n.dtype != dt.DT_FP32:
        raise KernelTypeError(f"{what}: {name} must be FP32, got {n.dtype.name}")
    nd = len(shape)
    reduced = list(shape)
    reduced[axis] = 1
    if n.ndim == nd and all(same_dim(a, b) for a, b in zip(n.shape, reduced)):
        return factor
    short = reduced[:nd + axis] + (reduced[nd + axis + 1:] if axis == -2 else [])
    if nd > 1 and n.ndim == nd - 1 and all(same_dim(a, b) for a, b in zip(n.shape, short)):
        return unsqueeze(factor, axis)
    forms = (f"{format_dims(short)} or " if nd > 1 else "") + format_dims(reduced)
    raise KernelTypeError(f"{what}: {name} of shape {format_dims(n.shape)} does not fit axis={axis} of an input of "
                          f"shape {format_dims(shape)} (expected {forms})")


def quantize(input, scale, otype: dt.DataType, axis: int, zero_points: Optional[Tensor] = None) -> Tensor:  # noqa: A002
    """``round(input * scale [+ zero_points])`` as ``otype`` (DT_INT8: symmetric, DT_UINT8: asymmetric,
    the page's pairing; either takes ``zero_points`` or None).  ``input`` FP32 of 1-4 dims; ``scale`` /
    ``zero_points`` FP32 per row (``axis=-1``) or per column (``axis=-2``), see the module docstring.

    Decisions where the page is silent: the product and sum are FP32 and rounded half to even (the
    official tests' ``torch.round``); values beyond the range of ``otype`` saturate to its minimum /
    maximum (-128..127, 0..255) instead of wrapping; NaN gives 0.  (The page's printed asymmetric
    example, ``[6, 3, 8, 1]`` for ``x + 5``, contradicts its formula with ``zero_points = -5``; the
    formula, which the official tests check, is what is implemented.)"""
    what = "pypto.quantize"
    n = node_of(input, f"{what} input")
    if n.dtype != dt.DT_FP32:
        raise KernelTypeError(f"{what}: input must be FP32, got {n.dtype.name}")
    if not 1 <= n.ndim <= 4:
        raise KernelTypeError(f"{what}: input must have 1-4 dims, got {n.ndim}")
    if otype not in (dt.DT_INT8, dt.DT_UINT8):
        raise KernelTypeError(f"{what}: otype must be pypto.DT_INT8 or pypto.DT_UINT8, got {otype!r}")
    a = _axis(axis, n.ndim, what)
    y = mul(input, _per_axis(scale, n.shape, a, "scale", what))
    if zero_points is not None:
        y = add(y, _per_axis(zero_points, n.shape, a, "zero_points", what))
    return cast(y, otype, RoundMode.CAST_RINT, SaturationMode.ON)


def dequantize(input, scale, otype: dt.DataType, axis: int, zero_points: Optional[Tensor] = None) -> Tensor:  # noqa: A002
    """``(float(input) [- zero_points]) * scale`` as FP32 (the only ``otype``): the inverse of
    :func:`quantize`.  ``input`` INT8 or INT16 (the page's types; UINT8, what ``quantize`` produces
    asymmetrically, is accepted too) of 1-4 dims; ``scale`` / ``zero_points`` FP32 per row
    (``axis=-1``) or per column (``axis=-2``).  The integer converts to FP32 exactly; the difference
    and the product are each rounded once in FP32.  (The page writes ``+ zero_points``; the official
    on-board test checks ``- zero_points``, which is what the hardware computes and is implemented.)"""
    what = "pypto.dequantize"
    n = node_of(input, f"{what} input")
    if n.dtype not in (dt.DT_INT8, dt.DT_INT16, dt.DT_UINT8):
        raise KernelTypeError(f"{what}: input must be INT8 or INT16 (or UINT8), got {n.dtype.name}")
    if not 1 <= n.ndim <= 4:
        raise KernelTypeError(f"{what}: input must have 1-4 dims, got {n.ndim}")
    if otype != dt.DT_FP32:
        raise KernelTypeError(f"{what}: otype must be pypto.DT_FP32, got {otype!r}")
    a = _axis(axis, n.ndim, what)
    y = cast(input, dt.DT_FP32)
    if zero_points is not None:
        y = sub(y, _per_axis(zero_points, n.shape, a, "zero_points", what))
    return mul(y, _per_axis(scale, n.shape, a, "scale", what))


def quant_mx(input, quant_dtype=dt.DT_FP8E4M3FN, mode=None, axis: int = -1, performance_mode: bool = True):  # noqa: A002
    """Official ``pypto.quant_mx``: MX (microscaling) quantization to FP8E4M3 / FP4_E2M1 elements with
    FP8E8M0 shared exponents.  Not implemented: the portable backends have no FP8/FP4 element
    conversion (the tile cast rejects FP8 and FP4 types), so it raises ``NotImplementedError``."""
    raise NotImplementedError("pypto.quant_mx (MX block-scaled FP8E4M3 / FP4_E2M1 outputs with FP8E8M0 scales: no "
                              "FP8/FP4 element conversion on the portable backends)")


__all__ = ["quantize", "dequantize", "quant_mx"]
