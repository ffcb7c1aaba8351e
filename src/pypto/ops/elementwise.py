"""Element-wise primitives: binary arithmetic, unary math, comparisons, ``where``, ``cast``.

Binary ops broadcast like torch and promote mixed dtypes (floats win); a Python or symbolic
scalar operand stays a scalar (``x + 1`` keeps x's dtype, an int tensor with a float scalar
becomes FP32).  Comparisons give BOOL tensors.
"""
from __future__ import annotations

from enum import IntEnum

import ml_dtypes
import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError
from pypto_pro.ir.types import RoundMode

from ..graph import Node
from ..tensor import Tensor
from .core import broadcast_shape, cast_node, check_scalar_type, is_scalar, node_of, out, promote, same_dim, stored_target
from .valid_region import elementwise_shape

#: unary tile ops (``fn`` -> tile op name) available directly
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
_SWAP_CMP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _scalar_dtype(n: Node, s):
    if isinstance(s, float) and not n.dtype.is_float():
        return cast_node(n, dt.DT_FP32)
    return n


def binary(fn: str, a, b) -> Tensor:
    """``fn`` in add/sub/mul/div/maximum/minimum on tensors or scalars."""
    if is_scalar(a) and is_scalar(b):
        raise KernelTypeError(f"pypto.{fn} needs at least one tensor operand")
    if is_scalar(b) or is_scalar(a):
        t, s, rev = (a, b, False) if is_scalar(b) else (b, a, True)
        n = _scalar_dtype(node_of(t), s)
        if fn == "div" and not n.dtype.is_float():
            n = cast_node(n, dt.DT_FP32)
        return out(Node("binary_scalar", (n,), n.shape, n.dtype, {"fn": fn, "scalar": s, "reverse": rev}))
    x, y = node_of(a), node_of(b)
    dtype = promote(x.dtype, y.dtype)
    if dtype == dt.DT_BOOL and fn != "div":  # torch: + and maximum are or, * and minimum are and
        if fn == "sub":
            raise KernelTypeError("pypto.sub of two BOOL tensors is not supported (as in torch): use "
                                  "pypto.bitwise_xor, or cast first")
        return _logical("logical_or" if fn in ("add", "maximum") else "logical_and", a, b)
    if fn == "div" and not dtype.is_float():
        dtype = dt.DT_FP32
    shape = elementwise_shape(f"pypto.{fn}", x, y)
    return out(Node("binary", (cast_node(x, dtype), cast_node(y, dtype)), shape, dtype, {"fn": fn}))


def unary(fn: str, x) -> Tensor:
    n = node_of(x)
    if fn in ("exp", "log", "sqrt", "rsqrt", "recip") and not n.dtype.is_float():
        n = cast_node(n, dt.DT_FP32)
    return out(Node("unary", (n,), n.shape, n.dtype, {"fn": fn}))


def _comparable(n: Node) -> Node:
    """BOOL values are bit-packed masks, which the tile compares cannot read: compare them as 0/1."""
    return cast_node(n, dt.DT_FP32) if n.dtype == dt.DT_BOOL else n


def compare(fn: str, a, b) -> Tensor:
    if is_scalar(b) or is_scalar(a):
        t, s, f = (a, b, fn) if is_scalar(b) else (b, a, _SWAP_CMP[fn])
        n = _scalar_dtype(_comparable(node_of(t)), s)
        return out(Node("compare_scalar", (n,), n.shape, dt.DT_BOOL, {"fn": f, "scalar": s}))
    x, y = _comparable(node_of(a)), _comparable(node_of(b))
    dtype = promote(x.dtype, y.dtype)
    shape = elementwise_shape(f"pypto.{fn}", x, y)
    return out(Node("compare", (cast_node(x, dtype), cast_node(y, dtype)), shape, dt.DT_BOOL, {"fn": fn}))


def where(condition, input, other) -> Tensor:
    """``cond ? a : b`` (a/b tensors or scalars; at least one tensor)."""
    c = node_of(condition, "pypto.where condition")
    if c.dtype != dt.DT_BOOL:
        c = compare("ne", condition, 0).node
    if is_scalar(input) and is_scalar(other):
        dtype = dt.DT_FP32 if isinstance(input, float) or isinstance(other, float) else dt.DT_INT32
        input = out(Node("full", (), c.shape, dtype, {"value": input}))
    if is_scalar(input):
        return _where_swap(c, input, other)
    x = node_of(input)
    if is_scalar(other):
        shape = elementwise_shape("pypto.where", c, x)
        return out(Node("select", (c, x), shape, x.dtype, {"scalar": other}))
    y = node_of(other)
    dtype = promote(x.dtype, y.dtype)
    shape = elementwise_shape("pypto.where", c, x, y)
    return out(Node("select", (c, cast_node(x, dtype), cast_node(y, dtype)), shape, dtype, {}))


def _where_swap(c: Node, a, b) -> Tensor:
    """where(c, scalar, tensor) = where(not c, tensor, scalar)."""
    inv = Node("logical_not", (c,), c.shape, dt.DT_BOOL, {})
    y = node_of(b)
    shape = elementwise_shape("pypto.where", c, y)
    return out(Node("select", (inv, y), shape, y.dtype, {"scalar": a}))


def logical_not(input) -> Tensor:
    n = node_of(input)
    if n.dtype != dt.DT_BOOL:
        n = compare("ne", input, 0).node
    return out(Node("logical_not", (n,), n.shape, dt.DT_BOOL, {}))


def _logical(fn: str, a, b) -> Tensor:
    x, y = node_of(a), node_of(b)
    if x.dtype != dt.DT_BOOL:
        x = compare("ne", a, 0).node
    if y.dtype != dt.DT_BOOL:
        y = compare("ne", b, 0).node
    shape = elementwise_shape(f"pypto.{fn}", x, y)
    return out(Node(fn, (x, y), shape, dt.DT_BOOL, {}))


def logical_and(input, other) -> Tensor:
    return _logical("logical_and", input, other)


def logical_or(input, other) -> Tensor:
    return _logical("logical_or", input, other)


class SaturationMode(IntEnum):
    """``pypto.cast(..., satmode=)``: OFF lets out-of-range floats overflow to +-inf in a narrower float
    type and keeps the low bits of a float converted to an integer narrower than INT32 (via INT32);
    ON clamps to the target's range (largest finite float / integer min and max)."""

    OFF = 0
    ON = 1


def cast(input, dtype: dt.DataType, mode=0, satmode=SaturationMode.OFF) -> Tensor:
    """``pypto.cast(x, dtype, mode=CAST_NONE, satmode=SaturationMode.OFF)``: convert with a rounding mode
    (``pypto.CastMode``), saturating float overflow when ``satmode`` is ON."""
    if not isinstance(dtype, dt.DataType):
        raise KernelTypeError(f"pypto.cast: dtype must be a pypto.DT_* type, got {dtype!r}")
    if satmode not in (SaturationMode.OFF, SaturationMode.ON):
        raise KernelTypeError(f"pypto.cast: satmode must be a pypto.SaturationMode, got {satmode!r}")
    n = node_of(input)
    mode = _cast_mode(n.dtype, dtype, mode)
    if satmode == SaturationMode.ON and dtype.is_float() and n.dtype.is_float():
        top = float(ml_dtypes.finfo(dtype.require_numpy()).max)
        if top < float(ml_dtypes.finfo(n.dtype.require_numpy()).max):
            n = node_of(minimum(maximum(out(n), -top), top))
    elif satmode == SaturationMode.OFF and n.dtype.is_float() and dtype.is_int() and dtype.bits() < 32:
        # OFF keeps the low bits (the official page: FP16 300 -> INT8 44): convert to INT32, then narrow,
        # which wraps; ON saturates (the tile cast's float -> int rule)
        n = cast_node(n, dt.DT_INT32, int(mode))
    return out(cast_node(n, dtype, int(mode)))


def _cast_mode(src: dt.DataType, dst: dt.DataType, mode) -> RoundMode:
    """The rounding of a tensor-level cast (the official cast page): CAST_NONE is torch's ``.to()``,
    truncation for float -> integer and round-to-nearest-even otherwise; a mode the conversion does
    not have (CAST_ODD other than FP32 -> FP16) falls back to that default instead of failing."""
    mode = RoundMode(int(mode))
    odd_ok = src == dt.DT_FP32 and dst == dt.DT_FP16
    if mode == RoundMode.CAST_NONE or (mode == RoundMode.CAST_ODD and not odd_ok):
        return RoundMode.CAST_TRUNC if src.is_float() and not dst.is_float() else RoundMode.CAST_RINT
    return mode


def add(input, other, alpha=1) -> Tensor:
    check_scalar_type("add", input, other)
    return binary("add", input, other if alpha == 1 else mul(other, alpha))


def sub(input, other, alpha=1) -> Tensor:
    check_scalar_type("sub", input, other)
    return binary("sub", input, other if alpha == 1 else mul(other, alpha))


def mul(input, other) -> Tensor:
    check_scalar_type("mul", input, other)
    return binary("mul", input, other)


class PrecisionType(IntEnum):
    """``precision_type=`` of ``div``/``exp``/``pow``/``fmod``/``remainder``/``sqrt``/``rsqrt``/``reciprocal``
    (the values the official op pages pass); accepted and without effect here, see
    :func:`check_precision`."""

    INTRINSIC = 0
    HIGH_PRECISION = 1


def check_precision(op: str, precision_type) -> None:
    """``precision_type`` of ``div``/``exp``/``pow``/``sqrt``/... picks NPU instruction sequences (speed against
    accuracy); every backend here computes these ops in FP32 to the documented accuracy whatever it
    is, so any ``None``/int value (``IntEnum`` included) is accepted and other types are rejected."""
    if precision_type is not None and (isinstance(precision_type, bool) or not isinstance(precision_type, int)):
        raise KernelTypeError(f"pypto.{op}: precision_type must be None or an int (enum) value, got "
                              f"{precision_type!r}")


def div(input, other, precision_type=PrecisionType.HIGH_PRECISION) -> Tensor:
    """``x / other`` (true division: integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("div", precision_type)
    check_scalar_type("div", input, other)
    return binary("div", input, other)


def maximum(input, other) -> Tensor:
    return binary("maximum", input, other)


def minimum(input, other) -> Tensor:
    return binary("minimum", input, other)


def neg(input) -> Tensor:
    return unary("neg", input)


def abs(input) -> Tensor:  # noqa: A001
    return unary("abs", input)


def exp(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``e ** x`` (integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("exp", precision_type)
    return unary("exp", input)


def log(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``log(x)`` (integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("log", precision_type)
    return unary("log", input)


def sqrt(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``sqrt(x)`` (integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("sqrt", precision_type)
    return unary("sqrt", input)


def rsqrt(input, precision_type=PrecisionType.INTRINSIC) -> Tensor:
    """``1 / sqrt(x)`` (integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("rsqrt", precision_type)
    return unary("rsqrt", input)


def reciprocal(input, precision_type=PrecisionType.HIGH_PRECISION) -> Tensor:
    """``1 / x`` (integers give FP32); ``precision_type``: :func:`check_precision`."""
    check_precision("reciprocal", precision_type)
    return unary("recip", input)


def relu(input) -> Tensor:
    return unary("relu", input)


def eq(input, other) -> Tensor: return compare("eq", input, other)
def ne(input, other) -> Tensor: return compare("ne", input, other)
def lt(input, other) -> Tensor: return compare("lt", input, other)
def le(input, other) -> Tensor: return compare("le", input, other)
def gt(input, other) -> Tensor: return compare("gt", input, other)
def ge(input, other) -> Tensor: return compare("ge", input, other)


def axpy_(y, x, alpha=1.0) -> Tensor:
    """In place ``y += alpha * x`` (``y`` a kernel parameter, ``pypto.tensor`` or a view of one; ``x``
    broadcasts to it).  Float ``y`` is updated in FP32 and rounded once to its dtype."""
    from .shape import setitem

    yn = stored_target(y, "pypto.axpy_")
    if yn.dtype.is_float():
        y32 = cast(y, dt.DT_FP32) if yn.dtype != dt.DT_FP32 else y
        x32 = cast(x, dt.DT_FP32) if node_of(x).dtype != dt.DT_FP32 else x
        setitem(y, slice(None), add(y32, mul(x32, alpha)))
    else:
        setitem(y, slice(None), add(y, mul(x, alpha)))
    return y


_AXPY_DTYPES = (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16)


def axpy(y, x, alpha=1.0) -> Tensor:
    """Official ``pypto.axpy(y, x, alpha=1.0)``: ``y = alpha * x + y`` in place, returns ``y`` (the
    :func:`axpy_` update, with the official page's checks).  ``y`` and ``x`` are FP32/FP16/BF16 of the
    same dtype, or an FP32 ``y`` with an FP16 ``x``; both have the same number of dims (1-4); ``x``
    broadcasts to ``y``'s shape, ``y`` never broadcasts; ``alpha`` an int or float, converted to ``y``'s
    dtype first (the page's rule: 0.1 acts as FP16's 0.0999755859375 for an FP16 ``y``).  ``y`` is updated
    in FP32 and rounded once to its dtype (the page: BF16 is computed in FP32)."""
    what = "pypto.axpy"
    yn = stored_target(y, what)
    xn = node_of(x, f"{what} x")
    if yn.dtype not in _AXPY_DTYPES or xn.dtype not in _AXPY_DTYPES:
        raise KernelTypeError(f"{what}: y and x must be FP32, FP16 or BF16, got {yn.dtype.name} and {xn.dtype.name}")
    if xn.dtype != yn.dtype and not (yn.dtype == dt.DT_FP32 and xn.dtype == dt.DT_FP16):
        raise KernelTypeError(f"{what}: mixed dtypes only as FP32 y with FP16 x, got {yn.dtype.name} y with "
                              f"{xn.dtype.name} x")
    if not 1 <= yn.ndim <= 4 or xn.ndim != yn.ndim:
        raise KernelTypeError(f"{what}: y and x need the same number of dims (1-4), got {yn.ndim} and {xn.ndim}")
    shape = broadcast_shape(xn.shape, yn.shape, what)
    if any(not same_dim(a, b) for a, b in zip(shape, yn.shape)):
        raise KernelTypeError(f"{what}: y does not broadcast; x of shape {list(xn.shape)} does not fit y of shape "
                              f"{list(yn.shape)}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise KernelTypeError(f"{what}: alpha must be an int or float, got {alpha!r}")
    return axpy_(y, x, float(np.asarray(alpha, dtype=yn.dtype.require_numpy())))
