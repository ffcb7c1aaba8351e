"""C++ emission of the communication ops (``ops/comm.py``): a call back into Python.

Each op evaluates its run-time scalars and its GM operand's address/shape/strides into an array and
calls the kernel's comm callback (``pypto_pro/comm/callback.py``); a non-zero return fails the core
with the message the callback wrote.  The transport itself is the Python code the interpreter runs.
"""
from __future__ import annotations

from ...comm.callback import C_SIGNATURE, ERROR_BYTES, comm_stmts
from ...ir.optable import OPS
from .codegen import CpuNotImplemented
from .registry import register


def _emit(g, s) -> str:
    k = g.k
    callback = getattr(k, "comm_callback", None)
    if callback is None:
        raise CpuNotImplemented(k.name, f"pl.{s.op.name} outside a pypto.distributed kernel", s.loc)
    fn, handle = (g.scalar(v) for v in callback)
    index = next(i for i, t in enumerate(comm_stmts(k)) if t is s)
    values = []
    for p in s.op.params:
        v = s.args[p.name]
        if p.kind == "tensor":
            t = g.tensor(v)
            values.append(f"(int64_t)(intptr_t){t}.p")
            values += [f"{t}.shape[{i}]" for i in range(v.ndim)] + [f"{t}.stride[{i}]" for i in range(v.ndim)]
        elif p.kind == "scalar":
            values.append(f"(int64_t)({g.scalar(v)})")
        elif p.kind == "index_list" and v is not None:
            values += [f"(int64_t)({g.scalar(x)})" for x in v]
    return (f"{{ const int64_t a_[] = {{{', '.join(values) or '0'}}}; char e_[{ERROR_BYTES}]; "
            f"if ((({C_SIGNATURE})(intptr_t){fn})({handle}, {index}, a_, {len(values)}, e_, {ERROR_BYTES}) != 0) "
            f"pto::fail(C, \"%s\", e_); }}")


for _name, _op in OPS.items():
    if _op.pipe == "COMM":
        register(_name, _emit)
