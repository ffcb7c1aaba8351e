"""Tensor creation: ``pypto.tensor`` (a workspace buffer), ``full``/``zeros``/``ones``, ``arange``."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pypto_pro import dtypes as dt

from ..frontend.tracer import current_recorder
from ..graph import Node, full_leaf
from ..tensor import Tensor
from .core import node_of, out


def tensor(shape: Sequence[Any], dtype: dt.DataType, name: str = "") -> Tensor:
    """An uninitialised GM tensor (workspace) that kernels write with ``t[...] = ...``."""
    return out(full_leaf(current_recorder().new_temp(list(shape), dtype, name)))


def full(size: Sequence[Any], value, dtype: Optional[dt.DataType] = None, *, valid_shape=None) -> Tensor:
    dtype = dtype or (dt.DT_FP32 if isinstance(value, float) else dt.DT_INT32)
    shape = list(valid_shape) if valid_shape is not None else list(size)
    return out(Node("full", (), tuple(shape), dtype, {"value": value}))


def zeros(*size, dtype: Optional[dt.DataType] = None) -> Tensor:
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return full(shape, 0.0, dtype or dt.DT_FP32)


def ones(*size, dtype: Optional[dt.DataType] = None) -> Tensor:
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return full(shape, 1.0, dtype or dt.DT_FP32)


def full_like(x, value) -> Tensor:
    n = node_of(x)
    return full(list(n.shape), value, n.dtype)


def zeros_like(x) -> Tensor:
    return full_like(x, 0)


def ones_like(x) -> Tensor:
    return full_like(x, 1)


def arange(start, end=None, step=1, dtype: Optional[dt.DataType] = None) -> Tensor:
    """``arange(end)`` / ``arange(start, end[, step])`` as a 1-D tensor (static bounds)."""
    if end is None:
        start, end = 0, start
    n = -(-(end - start) // step)
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dtype = dtype or (dt.DT_FP32 if is_float else dt.DT_INT32)
    return out(Node("arange", (), (int(n),), dtype, {"start": start, "step": step}))
