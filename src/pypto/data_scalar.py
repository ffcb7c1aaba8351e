"""Value-dependent scalars: ``x[i, j]`` (every axis indexed by an int or a SymbolicScalar) on an integer
tensor reads that element as a run-time ``SymbolicScalar`` (officially ``GetTensorData``).

The read is a statement in program order (:class:`ScalarRead`), like a ``Store``: it sees every write
recorded before it, and the scalar it defines can then be a loop bound, a view offset or valid size,
a runtime ``if`` condition, or an operand of further scalar arithmetic.  It lowers to one ``getval``
(the tile IR's scalar load from GM) on every core kind of the kernel, after a grid barrier when an
earlier pass wrote the tensor, so every core holds the same value (runtime branches and loop trip
counts stay uniform over cores).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

from pypto_pro.dtypes import DataType
from pypto_pro.errors import KernelError, SourceLoc
from pypto_pro.ir import nodes as ir

from .graph import Node
from .symbolic import SymbolicScalar, to_expr


def reads_scalar(dtype: DataType) -> bool:
    """Whether a fully indexed tensor of ``dtype`` gives a run-time scalar (integer tensors: the
    official ``GetTensorData`` takes DT_INT32; every integer width is accepted here) rather than a
    one-element tensor (the other dtypes, kept as a ``[1]`` tensor)."""
    return dtype.kind in ("int", "uint")


@dataclass(eq=False)
class ScalarRead:
    """``var`` = the element of ``leaf``'s buffer at ``position`` (one index per buffer axis)."""

    var: ir.Var
    leaf: Node
    position: List[Any]
    loc: Optional[SourceLoc]

    def describe(self) -> str:
        return f"{self.var.name} = {self.leaf.attrs['buf'].name}{list(self.position)!r}"

    def lower(self, lw) -> None:
        b = lw.b
        b.loc = self.loc
        try:
            param = b.param(self.leaf.attrs["buf"])
            index = [to_expr(p) if isinstance(p, SymbolicScalar) else p for p in self.position]
            for side in b.sides():  # every core kind holds the value
                with b.work(side):
                    b.op("getval", result=self.var, src=param, index=index)
        except KernelError as e:
            raise e.attach(loc=self.loc, kernel=b.name)
        finally:
            b.loc = None

    def reference(self, ev) -> None:
        """The numpy evaluation (pass verification): bind the element's value."""
        arr = ev.buffer(self.leaf.attrs["buf"])
        pos = tuple(int(ev.scalar(p)) for p in self.position)
        ev.env[self.var.uid] = int(arr[pos])


def read_scalar(leaf: Node, starts: Sequence[Any]) -> SymbolicScalar:
    """Record the read of the element of the gm leaf ``leaf`` at ``starts`` (one per logical axis)."""
    from .frontend.tracer import caller_location, current_recorder

    rec = current_recorder()
    a = leaf.attrs
    position = list(a["offsets"])
    for axis, s in zip(a["axes"], starts):
        position[axis] = position[axis] + s
    var = rec.new_var(f"{a['buf'].name}_val")
    var.dtype = leaf.dtype
    rec.stack[-1].append(ScalarRead(var, leaf, position, caller_location()))
    return SymbolicScalar(var)


__all__ = ["ScalarRead", "read_scalar", "reads_scalar"]
