"""Reductions with torch-style ``dim`` / ``keepdim`` and the normalisation composites."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..graph import Node
from ..symbolic import is_static
from ..tensor import Tensor
from .core import cast_node, node_of, norm_dim, out
from .elementwise import add, div, exp, mul, reciprocal, rsqrt, sub
from .math import _back, _f32
from .shape import reshape


#: dtypes the row reduction tile ops (``row_max`` ...) lack -> the narrowest type holding every value
_WIDER = {dt.DT_BOOL: dt.DT_INT16, dt.DT_INT8: dt.DT_INT16, dt.DT_UINT8: dt.DT_INT16, dt.DT_UINT16: dt.DT_INT32,
          dt.DT_UINT32: dt.DT_INT64, dt.DT_BF16: dt.DT_FP32}


def _work_dtype(fn: str, dtype: dt.DataType) -> dt.DataType:
    """The dtype a reduction computes in.  ``sum``/``prod`` accumulate like torch: 16-bit floats in
    FP32 (rounded once at the end, however many passes the reduction takes), integers and BOOL in
    INT64 (torch's result dtype).  ``max``/``min``/``argmax``/``argmin`` compare exactly in any type
    that holds every value, so dtypes the row tile ops lack are compared in a wider one."""
    if fn in ("sum", "prod"):
        if dtype.is_float():
            return dt.DT_FP32
        return dt.DT_INT64
    return _WIDER.get(dtype, dtype)


def _result_dtype(fn: str, dtype: dt.DataType, work: dt.DataType) -> dt.DataType:
    """torch's result dtype: INT32 indices here (the arg tile ops' type), the input's dtype for
    floats and for max/min, INT64 (the work dtype) for integer sums and products."""
    if fn in ("argmax", "argmin"):
        return dt.DT_INT32
    return dtype if dtype.is_float() or fn in ("max", "min") else work


def _converted(n: Node, dtype: dt.DataType, fn: str) -> Node:
    """``n`` as ``dtype``.  A conversion between a 16-bit float and FP32 is the one the official
    AutoCast inserts around its row reductions: marked, so that it joins a chain of ops computed in
    FP32 where the arch's table lists the reduction (``pypto/lower/widening.py``)."""
    c = cast_node(n, dtype)
    if c is not n and {n.dtype, dtype} & {dt.DT_FP16, dt.DT_BF16} and dt.DT_FP32 in (n.dtype, dtype):
        c.attrs["autocast"] = ("reduce", fn)
    return c


def _dims(dim, ndim: int) -> list:
    """The dims a reduction combines: ``dim`` as a list; None or an empty sequence (``dim=()`` /
    ``dim=[]``, torch's spelling of "no dim given") is every dim."""
    if isinstance(dim, int):
        return [dim]
    return list(range(ndim)) if dim is None or len(dim) == 0 else list(dim)


def _reduce(fn: str, x, dim, keepdim: bool) -> Tensor:
    """Reduce ``dim`` (an int, a sequence, or None for every dim) with ``fn``, computed in
    :func:`_work_dtype` and converted once to :func:`_result_dtype`."""
    n = node_of(x)
    dims = _dims(dim, n.ndim)
    axes = sorted({norm_dim(d, n.ndim) for d in dims})
    if fn in ("argmax", "argmin"):
        if len(axes) != 1:
            raise KernelTypeError(f"pypto.{fn} reduces one dim, got dim={dim!r}")
        if n.dtype == dt.DT_BOOL:
            raise KernelTypeError(f"pypto.{fn}: BOOL input (torch has no BOOL {fn} either); cast it to an integer "
                                  f"dtype first")
    work = _work_dtype(fn, n.dtype)
    cur = _converted(n, work, fn)
    for ax in reversed(axes):
        shape = list(cur.shape)
        shape[ax] = 1
        dtype = dt.DT_INT32 if fn in ("argmax", "argmin") else work
        cur = Node("reduce", (cur,), tuple(shape), dtype, {"fn": fn, "axis": ax})
    t = out(_converted(cur, _result_dtype(fn, n.dtype, work), fn))
    if not keepdim:
        # a full reduction keeps one axis of size 1: tensors here are at least 1-D, and a [1] value
        # broadcasts wherever torch's 0-d result would
        t = reshape(t, [d for i, d in enumerate(cur.shape) if i not in axes] or [1])
    return t


def sum(input, dim: Union[int, Sequence[int], None] = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _reduce("sum", input, dim, keepdim)


def amax(input, dim=None, keepdim: bool = False) -> Tensor:
    return _reduce("max", input, dim, keepdim)


def amin(input, dim=None, keepdim: bool = False) -> Tensor:
    return _reduce("min", input, dim, keepdim)


def argmax(input, dim: int = -1, keepdim: bool = False) -> Tensor:
    return _reduce("argmax", input, dim, keepdim)


def argmin(input, dim: int = -1, keepdim: bool = False) -> Tensor:
    return _reduce("argmin", input, dim, keepdim)


def _count(n: Node, dims):
    """How many elements a reduction over ``dims`` combines: an int, or a SymbolicScalar when one of
    the dims is DYNAMIC (known at run time)."""
    dims = _dims(dims, n.ndim)
    total = 1
    for d in dims:
        total = total * n.shape[norm_dim(d, n.ndim)]
    return total


def _per(total: Tensor, count) -> Tensor:
    """``total / count`` in FP32 (an integer total converted first): times the reciprocal for a static
    count (one rounding of 1/count, the same for every element), divided by a run-time count."""
    total = total if node_of(total).dtype.is_float() else _f32(total)
    return mul(total, 1.0 / count) if is_static(count) else div(total, count)


def mean(x, dim=None, keepdim: bool = False) -> Tensor:
    """``sum / count`` in FP32 for float inputs (16-bit floats rounded once at the end, like torch);
    integer inputs give FP32 (torch refuses them).  A DYNAMIC dim divides by its run-time size."""
    xf = _f32(x) if node_of(x).dtype.is_float() else x
    return _back(_per(sum(xf, dim, keepdim), _count(node_of(x), dim)), x)


def var(input, dim=None, correction: int = 1, keepdim: bool = False, *, unbiased: Optional[bool] = None) -> Tensor:
    """``sum((x - mean)^2) / (count - correction)``, in FP32 like :func:`mean`; torch's older
    ``unbiased=True/False`` spelling is ``correction=1/0``."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    xf = _f32(input) if node_of(input).dtype.is_float() else input
    d = sub(xf, mean(xf, dim, keepdim=True))
    return _back(_per(sum(mul(d, d), dim, keepdim), _count(node_of(input), dim) - correction), input)


def softmax(input, dim: int = -1) -> Tensor:
    """FP32 ``exp(x - amax) * (1 / sum(exp(x - amax)))`` along ``dim``, cast back.

    One reciprocal per row and a multiply per element, as torch's CPU softmax computes it (the
    quotient ``e / s`` would cost a division per element: a third of a fused softmax's time on AVX2);
    the two differ by at most 1.5 ulp."""
    xf = _f32(input)
    e = exp(sub(xf, amax(xf, dim, keepdim=True)))
    return _back(mul(e, reciprocal(sum(e, dim, keepdim=True))), input)


def rms_norm(input, gamma=None, epsilon: float = 1e-6) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * gamma`` over the last dim, in FP32."""
    xf = _f32(input)
    y = mul(xf, rsqrt(add(mean(mul(xf, xf), -1, keepdim=True), epsilon)))
    if gamma is not None:
        y = mul(y, _f32(gamma))
    return _back(y, input)


def layer_norm(x, weight=None, bias=None, epsilon: float = 1e-5, dim: int = -1) -> Tensor:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over ``dim`` (biased variance), in FP32."""
    xf = _f32(x)
    d = sub(xf, mean(xf, dim, keepdim=True))
    y = mul(d, rsqrt(add(mean(mul(d, d), dim, keepdim=True), epsilon)))
    if weight is not None:
        y = mul(y, _f32(weight))
    if bias is not None:
        y = add(y, _f32(bias))
    return _back(y, x)


def prod(input, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """Product over ``dim`` (all dims when None).  No product tile reduction exists, so the lowering
    multiplies one element of the axis at a time into an accumulator tile (in order); 16-bit floats
    accumulate in FP32 and round once, integers and BOOL give INT64 like torch (wrapping there)."""
    return _reduce("prod", input, dim, keepdim)
