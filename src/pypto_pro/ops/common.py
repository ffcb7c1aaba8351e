"""Helpers shared by op definitions: value conversion, rounding, window checks."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ..dtypes import DataType
from ..ir.nodes import TileRef


def as_compute(values: np.ndarray, dtype: DataType) -> np.ndarray:
    """Values in the dtype arithmetic happens in (fp32 for 16/8-bit floats)."""
    return dtype.decode(values)


def scalar_value(ctx, value, dtype: DataType):
    """A scalar operand converted to the compute dtype of ``dtype`` (numpy scalar)."""
    v = ctx.scalar(value)
    return dtype.decode(dtype.encode(np.asarray(v)))[()]


def window(ctx, dst, *srcs) -> Tuple[int, int]:
    """The destination's valid window, checked to fit in every source's physical shape."""
    vr, vc = dst.valid
    for s in srcs:
        rows, cols = s.shape
        if vr > rows or vc > cols:
            raise ctx.error(f"operand {s.name} ({rows}x{cols}) is smaller than the destination's valid window "
                            f"{vr}x{vc}")
    return vr, vc


def write_result(view, values: np.ndarray, rows: Optional[int] = None, cols: Optional[int] = None) -> None:
    """Round computed values once into ``view``'s dtype and store them."""
    with np.errstate(all="ignore"):
        view.write(view.dtype.encode(values), rows, cols)


def operand(ctx, value, dtype: DataType, rows: int, cols: int):
    """A tile-or-scalar operand read as compute values over ``rows x cols``."""
    if isinstance(value, TileRef):
        return ctx.tile(value).read_compute(rows, cols)
    return scalar_value(ctx, value, dtype)
