"""``pypto.Element(dtype, value)``: a scalar with a declared dtype (docs/tensor.md "Ops" ``where``).

An Element is a Python ``float`` / ``int`` / ``bool`` subclass carrying ``dtype``, so every op that
takes a scalar operand takes an Element unchanged; its value is converted to the dtype once, at
construction (an FP16 Element holds the FP16-rounded value, an INT8 one the wrapped integer).
"""
from __future__ import annotations

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError


class Element:
    """``pypto.Element(pypto.DT_FP32, 3)``: ``.dtype`` and ``.value`` (read-only)."""

    _dtype: dt.DataType

    @property
    def dtype(self) -> dt.DataType:
        """The declared dtype (read-only, as officially)."""
        return self._dtype

    def __new__(cls, dtype: dt.DataType, value):
        if not isinstance(dtype, dt.DataType):
            raise KernelTypeError(f"pypto.Element: dtype must be a pypto DataType, got {type(dtype).__name__}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            if not (isinstance(value, bool) and dtype == dt.DT_BOOL):
                raise KernelTypeError(f"pypto.Element: value must be an int or a float, got {value!r}")
        if dtype == dt.DT_BOOL:
            return _element(_BoolElement, dtype, int(bool(value)))
        rounded = np.array(value).astype(dtype.require_numpy())
        if dtype.is_float():
            return _element(_FloatElement, dtype, float(rounded))
        return _element(_IntElement, dtype, int(rounded))

    @property
    def value(self):
        """The plain Python number."""
        return self._python_type(self)

    def __repr__(self) -> str:
        return f"pypto.Element({self.dtype.name}, {self.value!r})"


class _FloatElement(Element, float):
    _python_type = float


class _IntElement(Element, int):
    _python_type = int


class _BoolElement(Element, int):
    """bool cannot be subclassed: a 0/1 int with dtype BOOL."""

    _python_type = bool


def _element(cls, dtype: dt.DataType, value):
    """An instance of ``cls`` (an Element over a Python number type) holding ``value``."""
    number_type = float if cls is _FloatElement else int
    obj = number_type.__new__(cls, value)
    obj._dtype = dtype
    return obj
