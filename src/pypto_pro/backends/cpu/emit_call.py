"""Emitters that are one ``pto::`` call: ``call("fn", tile("dst"), tile("src"))`` emits
``pto::fn(C, <dst>, <src>);`` for each statement of the op.

Most tile and register ops become a single call of their ``include/pto`` function whose arguments are
the op's operands, each spelled one of a few ways (a tile, a scalar, a flag, a register's address, ...).
An operand here is a function ``(codegen, op args) -> C++ text``; :func:`call` joins them, so an op's
emitter reads as the C++ call it produces.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Sequence

from ...ir import nodes as ir
from .codegen import KernelCodegen, c_type

Operand = Callable[[KernelCodegen, Dict[str, Any]], str]
Emitter = Callable[[KernelCodegen, ir.OpStmt], str]


def call(fn: str, *operands: Operand, types: Sequence[Operand] = (), core: bool = True) -> Emitter:
    """The emitter of ``pto::fn<types...>(C, operands...);`` (``core=False``: without the core context
    ``C``; no ``<...>`` without ``types``)."""

    def emit(g: KernelCodegen, s: ir.OpStmt) -> str:
        a = s.args
        targs = f"<{', '.join(t(g, a) for t in types)}>" if types else ""
        args = (["C"] if core else []) + [o(g, a) for o in operands]
        return f"pto::{fn}{targs}({', '.join(args)});"

    return emit


# ------------------------------------------------------------------ operands
def tile(name: str) -> Operand:
    """The tile operand ``name`` (a ``pto::Tile``)."""
    return lambda g, a: g.tile(a[name])


def scalar(name: str) -> Operand:
    """The scalar operand ``name`` as a C++ expression."""
    return lambda g, a: g.scalar(a[name])


def int64(name: str) -> Operand:
    """The scalar operand ``name`` converted to ``int64_t``."""
    return lambda g, a: f"(int64_t)({g.scalar(a[name])})"


def flag(name: str) -> Operand:
    """The compile-time truth of argument ``name``: ``true`` / ``false``."""
    return lambda g, a: "true" if a[name] else "false"


def number(name: str) -> Operand:
    """The compile-time argument ``name`` (an int or an int enum) as an integer literal."""
    return lambda g, a: str(int(a[name]))


def ctype(name: str) -> Operand:
    """The C++ element type of the tile operand ``name`` (a template argument)."""
    return lambda g, a: c_type(a[name].dtype)


def literal(text: str) -> Operand:
    """A fixed argument."""
    return lambda g, a: text


def chosen(name: str, table: Dict[Any, str]) -> Operand:
    """``table[<argument name>]``: a C++ spelling chosen by a compile-time argument."""
    return lambda g, a: table[a[name]]


__all__ = ["Operand", "call", "chosen", "ctype", "flag", "int64", "literal", "number", "scalar", "tile"]
