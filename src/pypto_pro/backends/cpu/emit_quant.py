"""C++ emission of ``pl.quant`` and ``pl.dequant`` (``include/pto/quant.h``), attached to the op table
in the cpu registry (:mod:`.registry`)."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ir.types import QuantMode
from .codegen import KernelCodegen
from .registry import register


def _quant(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    head = f"{g.tile(a['out'])}, {g.tile(a['src'])}, {g.tile(a['scale'])}"
    if QuantMode(a["mode"]) == QuantMode.SYM:
        return f"pto::quant(C, {head}, nullptr);"
    return "\n".join(["{", f"  const auto o_ = {g.tile(a['offset'])};", f"  pto::quant(C, {head}, &o_);", "}"])


def _dequant(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    return (f"pto::dequant(C, {g.tile(a['out'])}, {g.tile(a['src'])}, {g.tile(a['scale'])}, "
            f"{g.tile(a['offset'])});")


register("quant", _quant)
register("dequant", _dequant)
