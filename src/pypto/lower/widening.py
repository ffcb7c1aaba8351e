"""Element-wise nodes computed in a wider type than their own (docs/tensor.md "Precision").

Two reasons, one mechanism (the node rebuilt in the work type between conversions):

* the tile op lacks the node's dtype: BF16 math other than neg/abs (FP32), 8-bit integer products
  (INT16), 8/16-bit integer relu (INT32).  Each such node converts its inputs and its result, so it
  rounds (floats) or wraps like torch (integers) once per node;
* FP16 ``add`` / ``sub`` / ``mul`` (tensor-tensor and tensor-scalar): the official tensor level
  computes them in FP32 (its AutoCast pass), and a chain of them passes the FP32 values on, so
  ``((a * (a + b)) - b) * b`` in FP16 is rounded once, where the value leaves the chain (stored, or
  read by another op).  A value materialised into a GM workspace between two of them is stored, so
  the chain is cut there.
"""
from __future__ import annotations

from typing import Dict, Optional

from pypto_pro import dtypes as dt

from ..graph import Node

#: FP16 functions the official tensor level computes in FP32 (binary and binary_scalar nodes)
FP16_IN_FP32 = frozenset({"add", "sub", "mul"})


def chained(n: Node) -> bool:
    """An FP16 add/sub/mul: computed in FP32, passing its FP32 value to a chained consumer."""
    return n.dtype == dt.DT_FP16 and n.op in ("binary", "binary_scalar") and n.attrs.get("fn") in FP16_IN_FP32


def work_dtype(n: Node) -> Optional[dt.DataType]:
    """The type ``n`` is computed in when that is not its own dtype (None otherwise)."""
    fn, d = n.attrs.get("fn"), n.dtype
    if chained(n):
        return dt.DT_FP32
    if d == dt.DT_BF16 and (fn == "div" or n.op == "unary" and fn not in ("neg", "abs")):
        return dt.DT_FP32
    if d.is_int() and d.bits() == 8 and fn == "mul":
        return dt.DT_INT16
    if d.is_int() and d.bits() < 32 and fn == "relu":
        return dt.DT_INT32
    return None


def _cast(n: Node, dtype: dt.DataType) -> Node:
    return Node("cast", (n,), n.shape, dtype, {"dtype": dtype, "mode": 0})


class Widening:
    """The rebuilt nodes of one vector pass, made once per node so that the pass's evaluation memo
    (keyed by node) shares them between the consumers of a value.  ``stored`` holds the uids of the
    nodes the pass reads from GM workspaces (never chained through)."""

    def __init__(self, stored: Dict[int, Node]):
        self.stored = stored
        self._made: Dict[tuple, Node] = {}

    def narrowed(self, n: Node) -> Node:
        """``n`` as its own dtype: the wide value converted back (one rounding)."""
        key = ("narrow", n.uid)
        if key not in self._made:
            self._made[key] = _cast(self.wide(n), n.dtype)
        return self._made[key]

    def wide(self, n: Node) -> Node:
        """``n`` computed in :func:`work_dtype`, its inputs widened."""
        key = ("wide", n.uid)
        if key not in self._made:
            work = work_dtype(n)
            ins = tuple(self._widened(i, work, chained(n)) for i in n.inputs)
            self._made[key] = Node(n.op, ins, n.shape, work, dict(n.attrs))
        return self._made[key]

    def _widened(self, i: Node, work: dt.DataType, chain: bool) -> Node:
        if chain and chained(i) and i.uid not in self.stored:
            return self.wide(i)  # the FP32 value of the chain, not rounded to FP16 in between
        key = ("cast", i.uid, work.name)
        if key not in self._made:
            self._made[key] = _cast(i, work)
        return self._made[key]
