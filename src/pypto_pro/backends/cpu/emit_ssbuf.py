"""C++ emission of the SSBUF ops ``ssbuf_put`` / ``ssbuf_get`` (ops/ssbuf.py; include/pto/ssbuf.h).

A store builds the struct image in a local byte array (padding 0) and copies its first ``nbytes`` into the
block's SSBUF; a load reads one field from it in the field's dtype."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ops.ssbuf import capacity
from .codegen import KernelCodegen, SCALAR_CTYPES, c_type
from .registry import register


def _put(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    n = a["nbytes"]
    lines = ["{", f"  uint8_t img_[{max(n, 1) + 8}] = {{0}};"]
    for value, (at, dtype) in zip(a["values"], a["fields"]):
        lines.append(f"  pto::ssbuf_field<{c_type(dtype)}>(img_, {at}, {g.scalar(value)});")
    lines += [f"  pto::ssbuf_put(C, (int64_t)({g.scalar(a['offset'])}), img_, {n}, {capacity(g.k.arch)});", "}"]
    return "\n".join(lines)


def _get(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    call = (f"pto::ssbuf_get<{c_type(a['dtype'])}>(C, (int64_t)({g.scalar(a['offset'])}), {a['at']}, "
            f"{a['nbytes']}, {capacity(g.k.arch)})")
    if s.result is None:
        return f"(void){call};"
    target = g.var(s.result)  # registers the variable and its kind
    return f"{target} = ({SCALAR_CTYPES[g.var_kinds[s.result.uid]]}){call};"


register("ssbuf_put", _put)
register("ssbuf_get", _get)
