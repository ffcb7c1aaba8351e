"""A readable text form of the tile IR (``kernel.ir_text()``), for debugging and golden tests."""
from __future__ import annotations

from typing import List

from . import nodes as ir


def _arg(value) -> str:
    if isinstance(value, ir.TensorParam):
        return value.name
    if isinstance(value, ir.TileGroupDecl):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(_arg(v) for v in value) + "]"
    if hasattr(value, "name") and hasattr(value, "value") and not isinstance(value, ir.Expr):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def format_stmts(stmts: List[ir.Stmt], indent: int = 1) -> List[str]:
    pad = "  " * indent
    out: List[str] = []
    for s in stmts:
        if isinstance(s, ir.OpStmt):
            args = ", ".join(f"{k}={_arg(v)}" for k, v in s.args.items()
                             if v is not None and not (isinstance(v, (list, tuple)) and not v and k == "args"))
            head = f"{s.result!r} = " if s.result is not None else ""
            out.append(f"{pad}{head}{s.op.name}[{s.pipe}]({args})")
        elif isinstance(s, ir.Assign):
            out.append(f"{pad}{s.var!r} = {s.value!r}")
        elif isinstance(s, ir.For):
            out.append(f"{pad}for {s.var!r} in range({s.start!r}, {s.stop!r}, {s.step!r}):")
            out += format_stmts(s.body, indent + 1)
        elif isinstance(s, ir.If):
            out.append(f"{pad}if {s.cond!r}:")
            out += format_stmts(s.then_body, indent + 1)
            if s.else_body:
                out.append(f"{pad}else:")
                out += format_stmts(s.else_body, indent + 1)
        elif isinstance(s, ir.While):
            out += format_stmts(s.pre, indent)
            out.append(f"{pad}while {s.cond!r}:")
            out += format_stmts(s.body, indent + 1)
            out += format_stmts(s.pre, indent + 1)
        elif isinstance(s, ir.Section):
            out.append(f"{pad}section_{s.kind}:")
            out += format_stmts(s.body, indent + 1)
        else:
            out.append(f"{pad}{type(s).__name__.lower()}")
    return out


def format_kernel(k: ir.KernelIR) -> str:
    params = ", ".join(
        f"{p.name}: {p.dtype.name}{list(d if isinstance(d, int) else repr(d) for d in p.dims)}"
        if isinstance(p, ir.TensorParam) else f"{p.name}: {p.dtype.name}" for p in k.params)
    lines = [f"kernel {k.name}({params})  # arch={k.arch.name} kind={k.kind} auto_mutex={k.auto_mutex}"]
    for t in k.tiles:
        lines.append(f"  tile {t.name}: {t.dtype.name}{t.shape} {t.space.name}/{t.layout.name} @ {t.addr:#x}")
    lines += format_stmts(k.body)
    return "\n".join(lines)
