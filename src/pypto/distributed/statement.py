"""The recorded communication statement and its lowering into the tile IR.

A ``Comm`` statement sits in the tensor graph in program order, like a ``Store``.  It lowers to one
communication op (``pypto_pro/ops/comm.py``) executed by the first vector core, between two grid
barriers (``sync_all``): everything the kernel wrote to GM before the statement is complete on
every core when the transfer starts, and what it wrote (a ``shmem_get``'s destination) or waited
for (a signal, a barrier) holds for every core after it.  So ``pred=`` dependencies are always
honoured: every communication statement is ordered after all earlier statements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelError, SourceLoc
from pypto_pro.ir import nodes as ir

from ..graph import Node
from ..lower.builder import expr


@dataclass(eq=False)
class Comm:
    """``op`` (a comm tile op) with ``args``: graph leaves for its GM tensor operands ("src"/"dst"),
    ints/SymbolicScalars for scalars; ``pes`` is the recording's group -> PE variable map."""

    op: str
    args: Dict[str, Any]
    loc: Optional[SourceLoc]
    pes: Dict[str, ir.Var] = field(default_factory=dict)

    def describe(self) -> str:
        parts = []
        for k, v in self.args.items():
            if isinstance(v, Node):
                a = v.attrs
                v = f"{a['buf'].name}@{list(a['offsets'])}{list(v.shape)}"
            parts.append(f"{k}={v!r}" if not isinstance(v, str) else f"{k}={v}")
        return f"{self.op}({', '.join(parts)})"

    # ------------------------------------------------------------------ lowering
    def lower(self, lw) -> None:
        b = lw.b
        b.loc = self.loc
        try:
            self._pe_params(b)
            args: Dict[str, Any] = {}
            for k, v in self.args.items():
                if isinstance(v, Node):
                    args[k] = self._tensor(b, v)
                    args[k + "_offsets"] = [expr(o) for o in v.attrs["offsets"]]
                elif isinstance(v, (list, tuple)):
                    args[k] = [expr(x) for x in v]
                else:
                    args[k] = expr(v)
            last = b.blocks[-1][-1] if b.blocks[-1] else None
            if not (isinstance(last, ir.OpStmt) and last.op.name == "sync_all"):
                b.sync_all()  # earlier GM traffic of every core is complete
            stmt = b._raw(self.op, **args)
            first = ir.BinOp("==", ir.CoreQuery("block_idx"), ir.const(0), dt.DT_BOOL)
            b.append(ir.Section(None, "vector", [ir.If(None, first, [stmt], [])]))
            b.sync_all()  # its effect holds for every core
        except KernelError as e:
            raise e.attach(loc=self.loc, kernel=b.name)
        finally:
            b.loc = None

    @staticmethod
    def _tensor(b, n: Node) -> ir.TensorParam:
        buf = n.attrs["buf"]
        if tuple(n.attrs["axes"]) != tuple(range(len(buf.shape))):
            raise NotImplementedError("pypto.distributed: a transposed or int-indexed view as a shmem_put/get "
                                      "operand; pass a plain window (pypto.view) or a computed tensor")
        return b.param(buf)

    def _pe_params(self, b) -> None:
        """Every PE variable of the recording becomes a scalar kernel parameter (bound at launch)."""
        have = getattr(b, "comm_pes", None)
        if have is None:
            have = b.comm_pes = {}
            b.comm_callback = (ir.Var("comm_fn", dt.DT_INT64), ir.Var("comm_kernel", dt.DT_INT64))
        for group, var in self.pes.items():
            if var.uid not in have:
                have[var.uid] = (group, var)
