"""Ops along an axis that are neither element-wise nor reductions: ``cumsum``/``cumprod`` (a
``scan`` node, lowered to a runtime loop over the axis with an accumulator tile,
``pypto/lower/lowerer.py: scan_pass``) and ``triu``/``tril`` (an element-wise select against
``iota`` row/column index nodes, so they fuse with their neighbours)."""
from __future__ import annotations

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..graph import Node
from ..symbolic import SymbolicScalar
from ..tensor import Tensor
from .core import node_of, norm_dim, out, stored_target
from .elementwise import cast, ge, le, logical_and, sub, where


def scan_dtype(dtype: dt.DataType) -> dt.DataType:
    """Accumulation dtype of a scan: FP32 for 16-bit floats (rounded back once at the end); INT64 for
    BOOL and integers narrower than 64 bits, which is also the result dtype (torch's rule, and the
    official cumsum page's: INT16/INT32 in, INT64 out); 64-bit integers keep theirs."""
    if dtype.is_float():
        return dt.DT_FP32
    if dtype == dt.DT_BOOL or dtype.bits() < 64:
        return dt.DT_INT64
    return dtype


def _scan(fn: str, x, dim: int) -> Tensor:
    n = node_of(x)
    if n.ndim == 0:
        raise KernelTypeError(f"pypto.cum{fn}: needs a tensor with at least one dim")
    axis = norm_dim(dim, n.ndim)
    work = scan_dtype(n.dtype)
    src = node_of(cast(x, work)) if n.dtype != work else n
    y = out(Node("scan", (src,), n.shape, work, {"fn": fn, "axis": axis}))
    return cast(y, n.dtype) if n.dtype.is_float() and n.dtype != work else y


def cumsum(input, dim: int) -> Tensor:
    """Running sum along ``dim`` (negative ok), accumulated in order; 16-bit floats in FP32 and
    rounded once; BOOL and integers give INT64 (as torch), wrapping only there."""
    return _scan("sum", input, dim)


def cumprod(input, dim: int) -> Tensor:
    """Running product along ``dim``; dtypes as :func:`cumsum`."""
    return _scan("prod", input, dim)


def _tri(name: str, x, diagonal: int, upper: bool) -> Tensor:
    """Keep ``col - row >= diagonal`` (triu) or ``<= diagonal`` (tril) of the last two dims, zero elsewhere."""
    n = node_of(x)
    if n.ndim < 2:
        raise KernelTypeError(f"pypto.{name}: needs a tensor with at least 2 dims, got {n.ndim}")
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, SymbolicScalar)):
        raise KernelTypeError(f"pypto.{name}: diagonal must be an int or a pypto symbolic scalar (e.g. a loop index "
                              f"expression), got {diagonal!r}")
    rows = out(Node("iota", (), (n.shape[-2], 1), dt.DT_INT32, {"axis": 0}))
    cols = out(Node("iota", (), (n.shape[-1],), dt.DT_INT32, {"axis": 0}))
    offset = sub(cols, rows)
    keep = ge(offset, diagonal) if upper else le(offset, diagonal)
    if n.dtype == dt.DT_BOOL:
        return logical_and(keep, x)
    return where(keep, x, 0.0 if n.dtype.is_float() else 0)


def triu(input, diagonal: int = 0) -> Tensor:
    """Upper triangle of the last two dims (elements with ``col - row >= diagonal``)."""
    return _tri("triu", input, diagonal, True)


def tril(input, diagonal: int = 0) -> Tensor:
    """Lower triangle of the last two dims (elements with ``col - row <= diagonal``)."""
    return _tri("tril", input, diagonal, False)


def triu_(x, diagonal: int = 0) -> Tensor:
    """In-place :func:`triu` of ``x`` (a kernel parameter, ``pypto.tensor`` or a view of one); returns ``x``."""
    return _in_place("pypto.triu_", x, triu(x, diagonal))


def tril_(x, diagonal: int = 0) -> Tensor:
    """In-place :func:`tril` of ``x`` (a kernel parameter, ``pypto.tensor`` or a view of one); returns ``x``."""
    return _in_place("pypto.tril_", x, tril(x, diagonal))


def _in_place(what: str, x, value: Tensor) -> Tensor:
    from .shape import setitem

    stored_target(x, what)
    setitem(x, slice(None), value)
    return x


__all__ = ["cumsum", "cumprod", "triu", "tril", "triu_", "tril_"]
