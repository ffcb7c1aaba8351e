"""Bitwise ops on integer tensors, integer ``gcd`` and ``ceil_div``.

The tile ISA has ``and_ or_ xor not_ shl shr`` for 8- to 32-bit integers (no 64-bit), so the
bitwise ops accept INT8/16/32 and UINT8/16/32 (and BOOL, as the logical ops); other dtypes raise
``KernelTypeError``.  Shifts follow torch: an amount outside ``[0, bits)`` shifts everything out
(0 for a left shift, the sign fill ``x >> (bits - 1)`` for a signed right shift, 0 for an
unsigned one), while the tile ops reject such amounts, so they are clamped before the tile op and
the result selected afterwards.
"""
from __future__ import annotations

from typing import Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..graph import Node
from ..tensor import Tensor
from .core import cast_node, check_scalar_type, is_scalar, node_of, out, promote
from .elementwise import abs, add, cast, div, ge, gt, logical_and, logical_not, logical_or, lt, mul, ne, sub, where
from .math import ceil
from .valid_region import elementwise_shape

BIT_DTYPES = (dt.DT_INT8, dt.DT_INT16, dt.DT_INT32, dt.DT_UINT8, dt.DT_UINT16, dt.DT_UINT32)


def _operands(name: str, a, b) -> Tuple[Node, Node]:
    """Both operands as nodes of their promoted integer dtype (a Python int becomes a ``full`` of the
    tensor's shape, so expressions derived from it are never 0-d)."""
    if is_scalar(a) and is_scalar(b):
        raise KernelTypeError(f"pypto.{name} needs at least one tensor operand")
    if is_scalar(a) or is_scalar(b):
        t, s = (b, a) if is_scalar(a) else (a, b)
        tn = node_of(t)
        if isinstance(s, float) or tn.dtype.is_float():
            raise KernelTypeError(f"pypto.{name} needs integer operands, got {tn.dtype.name} and {s!r}")
        sn = Node("full", (), tn.shape, tn.dtype, {"value": s})
        return (sn, tn) if is_scalar(a) else (tn, sn)
    x, y = node_of(a), node_of(b)
    dtype = promote(x.dtype, y.dtype)
    return cast_node(x, dtype), cast_node(y, dtype)


def _check(name: str, dtype: dt.DataType) -> None:
    if dtype not in BIT_DTYPES:
        raise KernelTypeError(f"pypto.{name}: the tile ISA has bitwise ops for 8- to 32-bit integers (and BOOL), "
                              f"not {dtype.name}")


def _binary(name: str, fn: str, a, b) -> Tensor:
    x, y = _operands(name, a, b)
    _check(name, x.dtype)
    shape = elementwise_shape(f"pypto.{name}", x, y)
    return out(Node("binary", (x, y), shape, x.dtype, {"fn": fn}))


def _is_bool(*vals) -> bool:
    return all(not is_scalar(v) and node_of(v).dtype == dt.DT_BOOL for v in vals)


def bitwise_and(input, other) -> Tensor:
    """``a & b`` (BOOL tensors: logical and)."""
    return logical_and(input, other) if _is_bool(input, other) else _binary("bitwise_and", "and_", input, other)


def bitwise_or(input, other) -> Tensor:
    """``a | b`` (BOOL tensors: logical or)."""
    return logical_or(input, other) if _is_bool(input, other) else _binary("bitwise_or", "or_", input, other)


def bitwise_xor(input, other) -> Tensor:
    """``a ^ b`` (BOOL tensors: ``(a or b) and not (a and b)``; comparing masks is not supported)."""
    if _is_bool(input, other):
        return logical_and(logical_or(input, other), logical_not(logical_and(input, other)))
    return _binary("bitwise_xor", "xor", input, other)


def bitwise_not(input) -> Tensor:
    """``~x`` (BOOL: logical not)."""
    n = node_of(input)
    if n.dtype == dt.DT_BOOL:
        return logical_not(input)
    _check("bitwise_not", n.dtype)
    return out(Node("unary", (n,), n.shape, n.dtype, {"fn": "not_"}))


def _shift(name: str, fn: str, a, b) -> Tensor:
    """``a << b`` / ``a >> b`` with torch's result for amounts outside ``[0, bits)``."""
    x, s = _operands(name, a, b)
    _check(name, x.dtype)
    bits = x.dtype.bits()
    shape = elementwise_shape(f"pypto.{name}", x, s)
    signed_fill = fn == "shr" and x.dtype.kind != "uint"

    def tile_shift(amount: Node) -> Tensor:
        return out(Node("binary", (x, amount), shape, x.dtype, {"fn": fn}))

    if s.op == "full":  # a Python int amount: decided now
        k = s.attrs["value"]
        if 0 <= k < bits:
            return tile_shift(s)
        amount = Node("full", (), (), x.dtype, {"value": bits - 1})
        return tile_shift(amount) if signed_fill else sub(out(x), out(x))
    st = out(s)
    ok = logical_and(ge(st, 0), lt(st, bits))
    shifted = tile_shift(node_of(where(ok, st, bits - 1)))
    if signed_fill:
        return where(ok, shifted, tile_shift(Node("full", (), (), x.dtype, {"value": bits - 1})))
    return where(ok, shifted, 0)


def bitwise_left_shift(input, other) -> Tensor:
    return _shift("bitwise_left_shift", "shl", input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """Arithmetic (sign-filling) for signed dtypes, logical for unsigned ones."""
    return _shift("bitwise_right_shift", "shr", input, other)


# ---------------------------------------------------------------------------------- integer division
#: integer dtypes the ``div`` tile op lacks (8-bit): computed in INT16 and wrapped back
_WIDEN = {dt.DT_INT8: dt.DT_INT16, dt.DT_UINT8: dt.DT_INT16}


def _int_operands(name: str, a, b) -> Tuple[Tensor, Tensor, dt.DataType]:
    """Integer operands in the dtype the ``div`` tile op supports, plus the result dtype."""
    x, y = _operands(name, a, b)
    dtype = x.dtype
    if dtype == dt.DT_BOOL or not dtype.is_int():
        raise KernelTypeError(f"pypto.{name} needs integer tensors, got {dtype.name}")
    work = _WIDEN.get(dtype, dtype)
    return out(cast_node(x, work)), out(cast_node(y, work)), dtype


def _tdiv(x: Tensor, y: Tensor) -> Tensor:
    """C (truncating) integer division: the ``div`` tile op on integers."""
    a, b = node_of(x), node_of(y)
    return out(Node("binary", (a, b), elementwise_shape("div", a, b), a.dtype, {"fn": "div"}))


def ceil_div(input, other) -> Tensor:
    """``ceil(a / b)``.  Integers: exact integer arithmetic (truncating quotient, plus one when the
    remainder, which has the dividend's sign, is non-zero with the divisor's sign); a zero divisor raises
    ``KernelRuntimeError``.  Floats: ``ceil(a / b)`` (rounded through INT32 like ``pypto.ceil``)."""
    check_scalar_type("ceil_div", input, other)
    if not _is_float(input) and not _is_float(other):
        x, y, dtype = _int_operands("ceil_div", input, other)
        q = _tdiv(x, y)
        r = sub(x, mul(q, y))
        up = logical_or(logical_and(gt(r, 0), gt(y, 0)), logical_and(lt(r, 0), lt(y, 0)))
        return cast(where(up, add(q, 1), q), dtype)
    return ceil(div(input, other))


def _is_float(v) -> bool:
    return isinstance(v, float) or (not is_scalar(v) and node_of(v).dtype.is_float())


def _euclid_steps(dtype: dt.DataType) -> int:
    """Remainder steps that finish Euclid's algorithm for any operands of ``dtype`` (Lame: the worst
    case is two consecutive Fibonacci numbers, so count the Fibonacci numbers up to the maximum)."""
    top = 2 ** (dtype.bits() - (0 if dtype.kind == "uint" else 1))
    a, b, steps = 1, 2, 1
    while b <= top:
        a, b, steps = b, a + b, steps + 1
    return steps


def gcd(input, other) -> Tensor:
    """Greatest common divisor of integer tensors, like torch: non-negative, ``gcd(0, 0) = 0`` (and,
    as in torch, ``gcd(INT_MIN, 0) = INT_MIN``).  Euclid's algorithm unrolled a bounded number of times
    (:func:`_euclid_steps`: 45 for INT32); finished lanes keep their value (divisor 0 is replaced by
    1 before the division and the step's result discarded)."""
    x, y, dtype = _int_operands("gcd", input, other)
    if x.node.dtype.kind != "uint":
        x, y = abs(x), abs(y)
    for _ in range(_euclid_steps(dtype)):
        live = ne(y, 0)
        ys = where(live, y, 1)
        r = sub(x, mul(_tdiv(x, ys), ys))
        if r.node.dtype.kind != "uint":
            r = abs(r)
        x, y = where(live, y, x), where(live, r, 0)
    return cast(x, dtype)


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
           "ceil_div", "gcd"]
