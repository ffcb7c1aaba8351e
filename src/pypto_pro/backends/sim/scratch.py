"""Scratch operands: tiles an op may overwrite with intermediate values although it computes nothing
into them that the program reads (a reduction's ``tmp``, ``xor``'s ``tmp``, ``gather``'s ``tmp``, the
``tmp`` of ``maximum``/``minimum`` with ``dim=`` passed as ``rhs``).

The interpreter does not need them, so it does not touch them; on the hardware the op writes them.  The
simulator therefore records a *write* of each scratch operand's valid window by the op, so that another
pipe reading or writing that tile without a sync is a race (docs/simulator.md, "Scratch operands")."""
from __future__ import annotations

from typing import Tuple

from ...ir import nodes as ir


def scratch_operands(stmt: ir.OpStmt) -> Tuple[str, ...]:
    """The argument names of ``stmt`` that are scratch tiles (empty for most ops)."""
    args = stmt.args
    names = [p.name for p in stmt.op.params if p.name == "tmp" and isinstance(args.get(p.name), ir.TileRef)]
    if stmt.op.name in ("maximum", "minimum") and args.get("dim") is not None and isinstance(args.get("rhs"),
                                                                                             ir.TileRef):
        names.append("rhs")
    return tuple(names)


__all__ = ["scratch_operands"]
