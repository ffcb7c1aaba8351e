"""Tensor creation: ``pypto.tensor`` (a workspace buffer), ``full``/``zeros``/``ones``, ``arange``."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..frontend.tracer import current_recorder, recording
from ..graph import Node, full_leaf
from ..symbolic import SymbolicScalar
from ..tensor import Tensor
from .core import node_of, out, same_dim


def _shape(fn: str, size) -> list:
    """``size`` (``zeros(2, 3)`` or ``zeros([2, 3])``) as a list of dims, checked."""
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, SymbolicScalar)):
            hint = " (pass the dtype as dtype=...)" if any(isinstance(x, dt.DataType) for x in shape) else ""
            raise KernelTypeError(f"pypto.{fn}: sizes must be ints or symbolic dims, got {d!r}{hint}")
    return shape


def _tensor(shape: Optional[Sequence[Any]] = None, dtype: Optional[dt.DataType] = None, name: str = "",
            format: Optional[str] = None) -> Tensor:  # noqa: A002 - the official keyword
    if not recording():
        return Tensor(shape, dtype, name, format)
    unbound = Tensor(None, dtype, name, format)  # checks the format (NZ GM tensors) and dtype (FP64)
    if shape is None and dtype is None:  # `r = pypto.tensor()`; `r.move(expr)` gives it its value
        return unbound
    if shape is None or dtype is None:
        raise KernelTypeError("pypto.tensor(shape, dtype) inside a kernel needs both the shape and the dtype "
                              "(or neither: pypto.tensor() takes its value from a later r.move(expr))")
    t = out(full_leaf(current_recorder().new_temp(list(shape), dtype, name)))
    t.name = name
    return t


class _TensorFactory(type):
    """``pypto.tensor`` is called like a function and, as officially, is also the tensor type
    (``isinstance(t, pypto.tensor)``, ``pypto.tensor[...]`` annotations)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        return _tensor(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)

    def __getitem__(cls, item: Any) -> Tensor:
        return Tensor[item]


class tensor(metaclass=_TensorFactory):  # noqa: N801 - the official name
    """``pypto.tensor(shape=None, dtype=None, name="", format=None)`` (``format``: the declared storage
    format; None, as officially, lets a parameter take its argument's).

    Inside a kernel: an uninitialised GM tensor (workspace) that the kernel writes with ``t[...] = ...``;
    without shape and dtype, a name for a value that ``t.move(expr)`` (or ``t[:] = expr``) supplies.
    Outside: a tensor declaration -- a parameter annotation (``x: pypto.tensor()`` in the official
    examples, shape and dtype inferred where omitted) or a parameter of ``with pypto.function(...)``."""


def full(size: Sequence[Any], fill_value, dtype: Optional[dt.DataType] = None, *, valid_shape=None) -> Tensor:
    """A ``size`` tensor of ``fill_value`` (the official keyword).  With ``valid_shape`` only that region
    holds data: like a clipped ``pypto.view``, ``.shape`` reports ``size`` and ops compute on ``.valid_shape``."""
    value = fill_value
    dtype = dtype or (dt.DT_FP32 if isinstance(value, float) else dt.DT_INT32)
    shape = _shape("full", (size,))
    attrs = {"value": value}
    if valid_shape is not None:
        valid = _shape("full", (valid_shape,))
        if len(valid) != len(shape):
            raise KernelTypeError(f"pypto.full: valid_shape {valid} needs one dim per dim of size {shape}")
        if not all(same_dim(v, d) for v, d in zip(valid, shape)):
            attrs["view_shape"] = tuple(shape)
        shape = valid
    return out(Node("full", (), tuple(shape), dtype, attrs))


def zeros(*size, dtype: Optional[dt.DataType] = None) -> Tensor:
    return full(_shape("zeros", size), 0.0, dtype or dt.DT_FP32)


def ones(*size, dtype: Optional[dt.DataType] = None) -> Tensor:
    return full(_shape("ones", size), 1.0, dtype or dt.DT_FP32)


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
