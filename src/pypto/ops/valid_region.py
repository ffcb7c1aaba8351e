"""The shape an element-wise op computes on when an operand is a view clipped to its valid region.

A view taken with ``valid_shape`` (or clipped at its tensor's end) reports its requested shape but
holds data only in its valid region (tensor.py, "valid regions").  An element-wise op that meets
such a view and a full operand of the requested size computes on the valid region: the result's
valid extent on that axis is the clipped one, and the full operand is read over that region only.
Per axis, as the official valid-shape inference of element-wise ops does:

- an operand whose requested extent is 1 broadcasts: the result takes the other one's valid extent;
- a clipped operand meeting an unclipped one: the clipped (valid) extent;
- two clipped operands: the smaller valid extent (statically ``min``, else a run-time ``pypto.min``;
  where the official rule would take the first run-time extent, we never read past either region);
- no clipped operand: torch broadcasting of the shapes (:func:`broadcast_shape`).

Broadcast compatibility is checked on the requested shapes, so a view of shape 4 clipped to 3 and a
full operand of 4 agree, while two plain tensors of 3 and 4 still do not broadcast.
"""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from ..graph import Node
from ..symbolic import is_static, sym_min
from ..tensor import reported_shape
from .core import broadcast_dim, broadcast_shape, immediate, same_dim


def _is_one(d) -> bool:
    d = immediate(d)
    return is_static(d) and d == 1


def _aligned(shape: Sequence[Any], rank: int) -> list:
    return [1] * (rank - len(shape)) + list(shape)


def elementwise_shape(what: str, *operands: Node) -> Tuple[Any, ...]:
    """The shape (valid region) of an element-wise op on ``operands``: broadcasting of their shapes,
    where an operand clipped to a valid region narrows the result to that region."""
    first = operands[0].shape
    if all(len(n.shape) == len(first) and all(same_dim(a, b) for a, b in zip(n.shape, first)) for n in operands):
        return tuple(first)
    reported = [reported_shape(n) for n in operands]
    if all(r is n.shape for r, n in zip(reported, operands)):
        shape = first
        for n in operands[1:]:
            shape = broadcast_shape(shape, n.shape, what)
        return tuple(shape)
    valid, requested = first, reported[0]
    for n, r in zip(operands[1:], reported[1:]):
        rank = max(len(valid), len(n.shape))
        vx, vy = _aligned(valid, rank), _aligned(n.shape, rank)
        rx, ry = _aligned(requested, rank), _aligned(r, rank)
        requested = _requested_broadcast(rx, ry, what)
        valid = tuple(_axis(axis, vx, vy, rx, ry, what) for axis in range(rank))
    return valid


def _requested_broadcast(rx: list, ry: list, what: str) -> Tuple[Any, ...]:
    """The requested shapes broadcast, as unclipped views do: fixed extents must agree (or one be 1).
    An extent known only at run time is not required to equal the other side's requested extent: it
    may be a value computed on the clipped operand's valid region (``sum(v, -1)`` of a view ``v``
    of 8 rows clipped to ``l``: ``l`` rows), which :func:`_axis` reads over that region."""
    out = []
    for axis, (x, y) in enumerate(zip(rx, ry)):
        if is_static(immediate(x)) and is_static(immediate(y)):
            out.append(broadcast_dim(x, y, what, axis, rx, ry))
        else:
            out.append(y if _is_one(x) else x)
    return tuple(out)


def _axis(axis: int, vx: list, vy: list, rx: list, ry: list, what: str):
    """Axis ``axis`` of :func:`elementwise_shape` (the rules in the module docstring)."""
    a, b = vx[axis], vy[axis]
    if same_dim(a, b):
        return a
    one_x, one_y = _is_one(rx[axis]), _is_one(ry[axis])
    if one_x != one_y:  # one operand broadcasts along the axis
        return b if one_x else a
    clipped_x, clipped_y = not same_dim(rx[axis], a), not same_dim(ry[axis], b)
    if clipped_x and clipped_y:
        return immediate(sym_min(a, b))
    if clipped_x or clipped_y:  # the clipped extent; the smaller where the other is known only at run time
        keep, other = (a, b) if clipped_x else (b, a)
        return keep if is_static(immediate(other)) else immediate(sym_min(keep, other))
    return broadcast_dim(a, b, what, axis, vx, vy)


def common_k(kx, requested_x, ky, requested_y):
    """The K a matmul reduces over when its operands' K extents ``kx`` and ``ky`` differ: the valid
    K of the operand clipped to a valid region (requested extent ``requested_x`` / ``requested_y``),
    the smaller where both are; the other operand is read over that K only, so its part beyond the
    region contributes nothing (the padding counts as zero).  ``None`` when neither is clipped."""
    clipped_x, clipped_y = not same_dim(requested_x, kx), not same_dim(requested_y, ky)
    if clipped_x and clipped_y:
        return immediate(sym_min(kx, ky))
    if clipped_x and (same_dim(requested_x, ky) or not is_static(immediate(ky))):
        return kx
    if clipped_y and (same_dim(requested_y, kx) or not is_static(immediate(kx))):
        return ky
    return None
