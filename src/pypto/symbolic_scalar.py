"""``pypto.symbolic_scalar``: the module of the official symbolic scalar types (``SymInt``).

``pypto.symbolic_scalar`` the package attribute is :class:`~pypto.symbolic.SymbolicScalar` itself (the
official alias, called as ``pypto.symbolic_scalar(8)``); ``from pypto.symbolic_scalar import SymInt``
reads this module.
"""
from __future__ import annotations

from typing import Union

from .symbolic import SymbolicScalar

#: an int or a symbolic scalar: what dims, offsets and loop bounds may be
SymInt = Union[int, SymbolicScalar]


def ceildiv(a: SymInt, b: SymInt) -> SymInt:
    """``ceil(a / b)`` for positive ``b``: ints fold, symbolic values build ``(a + b - 1) // b``."""
    if isinstance(b, int) and not isinstance(b, SymbolicScalar) and b <= 0:
        raise ValueError(f"pypto.ceildiv: the divisor must be positive, got {b}")
    return (a + b - 1) // b


__all__ = ["SymInt", "SymbolicScalar", "ceildiv"]
