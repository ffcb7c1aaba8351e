"""Element-wise nodes computed in a wider type than their own (docs/tensor.md "Precision").

Two reasons, one mechanism (the node rebuilt in the work type between conversions):

* the official tensor level computes some 16-bit float ops in FP32 (its AutoCast graph pass), per
  arch: :data:`AUTOCAST` lists them, per dtype and arch.  Such an op reads the FP32 value of a
  listed producer of its own dtype directly, so a chain of listed ops rounds once, where the value
  leaves the chain (stored, or read by an op outside the list).  A value read back from a GM
  workspace, or lifted to a higher rank (officially a reshape), is read rounded;
* the tile op lacks the node's dtype: BF16 math other than neg/abs (FP32), 8-bit integer products
  (INT16), 8/16-bit integer relu (INT32).  Each such node converts its inputs and its result, so it
  rounds (floats) or wraps like torch (integers) once per node.

Reductions spell their conversions as ``cast`` nodes (``pypto/ops/reduce.py``); those carry
``attrs["autocast"] = ("reduce", fn)`` and join a chain where the table lists that reduction.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from pypto_pro import dtypes as dt

from ..graph import Node

Family = Tuple[str, Optional[str]]  # (node op, element function or None)


def _fam(op: str, *fns: Optional[str]) -> FrozenSet[Family]:
    return frozenset((op, f) for f in fns)


_ARITH = ("add", "sub", "mul")
_REDUCE = _fam("reduce", "sum", "max", "min", "prod", "argmax", "argmin")

#: FP16 (both archs): add/sub/mul and their scalar forms (officially also fmod's scalar form on a3,
#: and fmod/remainder everywhere by explicit conversions: ``pypto/ops/math.py`` computes 16-bit
#: fmod/remainder in FP32 on every arch)
_FP16 = _fam("binary", *_ARITH) | _fam("binary_scalar", *_ARITH)

#: BF16 on A2/A3: arithmetic, max/min, where, the unary math and the row reductions
_BF16_A3 = (_fam("binary", *_ARITH, "div", "maximum", "minimum")
            | _fam("binary_scalar", *_ARITH, "div", "maximum", "minimum")
            | _fam("unary", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "abs", "neg")
            | _fam("select", None) | _REDUCE)

#: BF16 on 950 (DAV_3510): no neg, log, max/min or where (those compute in BF16 there)
_BF16_A5 = (_fam("binary", *_ARITH, "div") | _fam("binary_scalar", *_ARITH, "div")
            | _fam("unary", "exp", "sqrt", "rsqrt", "recip", "relu", "abs") | _REDUCE)

#: (dtype, arch family) -> the node families the official AutoCast pass computes in FP32
AUTOCAST: Dict[Tuple[dt.DataType, str], FrozenSet[Family]] = {
    (dt.DT_FP16, "a3"): _FP16, (dt.DT_FP16, "a5"): _FP16,
    (dt.DT_BF16, "a3"): _BF16_A3, (dt.DT_BF16, "a5"): _BF16_A5,
}


def arch_family(arch_name: str) -> str:
    """``a5`` for the 950 (DAV_3510), ``a3`` for A2/A3 (DAV_2201)."""
    return "a5" if arch_name == "a5" else "a3"


def family(n: Node) -> Family:
    """The table key of ``n``; an autocast conversion of a reduction is keyed as that reduction."""
    if n.op == "cast" and n.attrs.get("autocast"):
        return n.attrs["autocast"]
    return n.op, n.attrs.get("fn")


def promoted(n: Node, arch: str) -> bool:
    """Whether the official AutoCast computes ``n`` (a node of a 16-bit float dtype) in FP32."""
    return family(n) in AUTOCAST.get((n.dtype, arch), ()) and n.op != "cast"


def work_dtype(n: Node, arch: str) -> Optional[dt.DataType]:
    """The type ``n`` is computed in when that is not its own dtype (None otherwise)."""
    fn, d = n.attrs.get("fn"), n.dtype
    if promoted(n, arch):
        return dt.DT_FP32
    if d == dt.DT_BF16 and (fn == "div" and n.op in ("binary", "binary_scalar")
                            or n.op == "unary" and fn not in ("neg", "abs")):
        return dt.DT_FP32
    if d.is_int() and d.bits() == 8 and fn == "mul":
        return dt.DT_INT16
    if d.is_int() and d.bits() < 32 and fn == "relu":
        return dt.DT_INT32
    return None


def _cast(n: Node, dtype: dt.DataType) -> Node:
    return Node("cast", (n,), n.shape, dtype, {"dtype": dtype, "mode": 0})


class Widening:
    """The rebuilt nodes of one vector pass (or of the reference evaluation), made once per node so
    that the evaluation memo (keyed by node) shares them between the consumers of a value.
    ``stored`` holds the uids of the nodes read from GM workspaces (never chained through); ``arch``
    is ``"a3"`` or ``"a5"`` (:func:`arch_family`)."""

    def __init__(self, stored: Dict[int, Node], arch: str):
        self.stored = stored
        self.arch = arch_family(arch)
        self._made: Dict[tuple, Node] = {}

    def resolve(self, n: Node) -> Node:
        """The node to evaluate for ``n``: ``n`` itself, or its rebuilt form (``n`` computed in its
        work type and rounded once; an autocast conversion to FP32 of a chained value: that value
        unrounded)."""
        if work_dtype(n, self.arch) is not None:
            return self.narrowed(n)
        if n.op == "cast" and n.dtype == dt.DT_FP32 and n.attrs.get("autocast") and self._chains_into(n):
            src = self._chain_source(n.inputs[0])
            if src is not None:
                return src
        return n

    def narrowed(self, n: Node) -> Node:
        """``n`` as its own dtype: the wide value converted back (one rounding)."""
        key = ("narrow", n.uid)
        if key not in self._made:
            self._made[key] = _cast(self.wide(n), n.dtype)
        return self._made[key]

    def wide(self, n: Node) -> Node:
        """``n`` computed in :func:`work_dtype`, its inputs of its own dtype widened."""
        key = ("wide", n.uid)
        if key not in self._made:
            work = work_dtype(n, self.arch)
            chain = promoted(n, self.arch)
            ins = tuple(self._widened(i, n, work, chain) for i in n.inputs)
            self._made[key] = Node(n.op, ins, n.shape, work, dict(n.attrs))
        return self._made[key]

    def _chains_into(self, conv: Node) -> bool:
        """An autocast conversion to FP32 stands for a listed reduction of its input's dtype."""
        src = conv.inputs[0]
        return conv.attrs["autocast"] in AUTOCAST.get((src.dtype, self.arch), ())

    def _chain_source(self, i: Node) -> Optional[Node]:
        """The FP32 node holding ``i``'s value before its rounding, where ``i`` ends a chain link
        (a listed op, or the autocast conversion back from a listed reduction); None otherwise."""
        if i.uid in self.stored:
            return None
        if promoted(i, self.arch):
            return self.wide(i)
        if (i.op == "cast" and i.attrs.get("autocast") and i.inputs[0].dtype == dt.DT_FP32
                and i.attrs["autocast"] in AUTOCAST.get((i.dtype, self.arch), ())
                and i.inputs[0].uid not in self.stored):
            return i.inputs[0]
        return None

    def _widened(self, i: Node, n: Node, work: dt.DataType, chain: bool) -> Node:
        if i.dtype != n.dtype:  # a where condition: not converted
            return i
        if chain and i.ndim == n.ndim:  # a lower-rank operand is officially reshaped first: rounded
            src = self._chain_source(i)
            if src is not None:
                return src  # the FP32 value of the chain, not rounded in between
        key = ("cast", i.uid, work.name)
        if key not in self._made:
            self._made[key] = _cast(i, work)
        return self._made[key]
