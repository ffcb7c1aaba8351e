"""Public ``pl.<op>`` names generated from the op table.

Each stub carries the op's signature and docstring for help() and IDEs, and raises when called
outside a kernel; the parser recognises stubs by their ``__pto_op__`` attribute.
"""
from __future__ import annotations

import types
from typing import Dict

from ..errors import KernelSyntaxError
from ..ir.optable import OPS, OpDef


def make_stub(opdef: OpDef, public_name: str):
    def stub(*args, **kwargs):
        raise KernelSyntaxError(f"pl.{public_name}() can only be called inside a @pl.jit kernel")

    leaf = public_name.rsplit(".", 1)[-1]
    stub.__name__ = leaf
    stub.__qualname__ = leaf
    stub.__doc__ = opdef.doc
    stub.__signature__ = opdef.public_signature
    stub.__pto_op__ = opdef
    return stub


def build_namespaces() -> Dict[str, object]:
    """{name: stub} for top-level ops plus ``system``/``mutex`` sub-namespaces."""
    top: Dict[str, object] = {}
    subs: Dict[str, types.SimpleNamespace] = {}
    for opdef in OPS.values():
        if opdef.internal:
            continue
        for alias in opdef.aliases:
            if "." in alias:
                ns, leaf = alias.split(".", 1)
                setattr(subs.setdefault(ns, types.SimpleNamespace()), leaf, make_stub(opdef, alias))
            else:
                top[alias] = make_stub(opdef, alias)
    top.update(subs)
    return top
