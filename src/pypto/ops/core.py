"""Helpers shared by the op modules: operand coercion, broadcasting, dtype promotion, materialising."""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError
from pypto_pro.ir import nodes as ir

from ..frontend.tracer import current_recorder, recording, recording_location
from ..graph import Node, full_leaf
from ..symbolic import SymbolicScalar, format_dims, is_static
from ..tensor import Tensor, check_valid_regions, reported_shape, wrap

SCALAR_TYPES = (int, float, bool, SymbolicScalar)


def is_scalar(v) -> bool:
    return isinstance(v, SCALAR_TYPES)


def check_scalar_type(op: str, a, b) -> None:
    """The official arithmetic ops (``add sub mul div fmod remainder floor_div ceil_div`` and the
    operators built on them) refuse a Python float with an integer (or BOOL) tensor, in either
    position: ``KernelTypeError`` (a ``TypeError``); cast the tensor to a float dtype first."""
    for t, s in ((a, b), (b, a)):
        if isinstance(s, float) and isinstance(t, Tensor) and t.node is not None and not t.node.dtype.is_float():
            raise KernelTypeError(f"pypto.{op}: a float scalar ({s!r}) with a {t.node.dtype.name} tensor; use an "
                                  f"integer scalar or cast the tensor to a float dtype (pypto.cast)")


def node_of(t, what: str = "operand") -> Node:
    if isinstance(t, Tensor) and t.node is not None:
        return t.node
    kind = type(t)
    lib = kind.__module__.split(".")[0]
    if lib == "numpy" and getattr(t, "ndim", None) == 0:
        raise KernelTypeError(f"{what} must be a pypto tensor or a Python number, got numpy.{kind.__name__}: "
                              f"use a Python number (float(v) / int(v))")
    if lib in ("torch", "numpy") and hasattr(t, "shape"):
        raise KernelTypeError(f"{what} must be a pypto tensor, got a {lib}.{kind.__name__} from outside the "
                              f"kernel: pass it as a kernel argument (operands live in GM), or build it inside "
                              f"with pypto.full / pypto.arange")
    raise KernelTypeError(f"{what} must be a pypto tensor, got {kind.__name__}")


def immediate(d):
    """``d`` as an int when it is an immediate ``SymbolicScalar`` (``pypto.symbolic_scalar(4)``), else ``d``."""
    return d.concrete() if isinstance(d, SymbolicScalar) and d.is_immediate() else d


def stored_target(t, what: str) -> Node:
    """The node of ``t``, the target of an in-place op or an ``assemble``: it must be stored in GM (a
    kernel parameter, a ``pypto.tensor`` or a view of one), since the op writes there."""
    n = node_of(t, f"{what} target")
    if n.op != "gm":
        raise KernelTypeError(f"{what}: the target must be a kernel parameter, a pypto.tensor or a view")
    return n


def same_dim(a, b) -> bool:
    """Whether two dims are equal by construction: equal ints, or the same symbolic expression (the
    same DYNAMIC dim, or ``min(32, 64 - i*32)`` built twice)."""
    a, b = immediate(a), immediate(b)
    if is_static(a) and is_static(b):
        return a == b
    return a is b or (isinstance(a, SymbolicScalar) and isinstance(b, SymbolicScalar) and ir.same_expr(a.expr, b.expr))


def dims_agree(a, b) -> bool:
    """:func:`same_dim`, or two dims known only at run time: those are assumed equal where they meet
    (docs/tensor.md), as in :func:`broadcast_shape`."""
    return same_dim(a, b) or (not is_static(immediate(a)) and not is_static(immediate(b)))


def note_equal_at_run_time(x, y, what: str, axis: int) -> None:
    """Record, in the recording session, that dims ``x`` and ``y`` (one at least known only at run time)
    meet on ``axis`` of ``what`` and must be equal there: every launch checks it for its sizes
    (``dim_agreements``, checked in frontend/jit.py) instead of computing on the shorter operand's
    extent, which would silently give a wrong answer."""
    if not recording():
        return
    exprs = tuple(d if is_static(d) else getattr(immediate(d), "expr", None) for d in (x, y))
    if any(e is None for e in exprs):
        return
    agreements = current_recorder().session.dim_agreements
    if not any(e[0] is exprs[0] and e[1] is exprs[1] for e in agreements):
        agreements.append((exprs[0], exprs[1], what, axis, recording_location()))


def broadcast_shape(a: Sequence[Any], b: Sequence[Any], what: str = "broadcast") -> Tuple[Any, ...]:
    """Torch broadcasting of two shapes.  Two DYNAMIC dims are taken to be equal (their runtime values
    must agree); a DYNAMIC dim meeting a fixed one other than 1 takes the fixed value."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    return tuple(broadcast_dim(x, y, what, axis, a, b) for axis, (x, y) in enumerate(zip(a, b)))


def broadcast_dim(x, y, what: str, axis: int, a: Sequence[Any], b: Sequence[Any]):
    """Axis ``axis`` of :func:`broadcast_shape` of the (rank-aligned) shapes ``a`` and ``b``."""
    if same_dim(x, y) or (is_static(y) and y == 1):
        return x
    if not is_static(x) and not is_static(y):
        note_equal_at_run_time(x, y, what, axis)
        return x
    if is_static(x) and x == 1:
        return y
    if not is_static(x) or not is_static(y):
        note_equal_at_run_time(x, y, what, axis)
        return x if is_static(x) else y  # a DYNAMIC dim meeting a fixed one: equal at run time
    raise KernelTypeError(f"{what}: shapes {format_dims(a)} and {format_dims(b)} do not broadcast")


def promote(a: dt.DataType, b: dt.DataType) -> dt.DataType:
    """Result dtype of a binary op on two tensors (floats win, then the wider type)."""
    if a == b:
        return a
    if a.is_float() != b.is_float():
        return a if a.is_float() else b
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    if a.is_float() and a.bits() == b.bits():
        return dt.DT_FP32
    return a if a.bits() >= b.bits() else b


def cast_node(n: Node, dtype: dt.DataType, mode: int = 0) -> Node:
    if n.dtype == dtype:
        return n
    return Node("cast", (n,), n.shape, dtype, {"dtype": dtype, "mode": mode})


def materialize(n: Node) -> Node:
    """Store ``n`` into a fresh workspace buffer now; returns a leaf reading the whole buffer (which
    reports the shape ``n`` reports: a value computed on a clipped view's region stays clipped)."""
    if n.op == "gm":
        return n
    check_valid_regions(n)
    rec = current_recorder()
    buf = rec.new_temp(n.shape, n.dtype)
    leaf = full_leaf(buf)
    rec.store(leaf, n, loc=n.loc)  # reported at the line that computed n, not the one that needs it
    whole = full_leaf(buf)
    reported = reported_shape(n)
    if reported is not n.shape:
        whole.attrs["view_shape"] = tuple(reported)
    return whole


def is_full_leaf(n: Node) -> bool:
    """A leaf reading a whole buffer in its natural axis order."""
    if n.op != "gm":
        return False
    a = n.attrs
    buf = a["buf"]
    return (tuple(a["axes"]) == tuple(range(len(buf.shape))) and all(is_static(o) and o == 0 for o in a["offsets"])
            and len(n.shape) == len(buf.shape) and all(same_dim(x, y) for x, y in zip(n.shape, buf.shape)))


def norm_dim(dim: int, ndim: int, what: str = "dim") -> int:
    if not isinstance(dim, int) or not -ndim <= dim < max(ndim, 1):
        raise KernelTypeError(f"{what}={dim!r} is out of range for a {ndim}-D tensor")
    return dim % max(ndim, 1)


def out(n: Node) -> Tensor:
    return wrap(n)


def dims_list(shape) -> List[Any]:
    return list(shape)
