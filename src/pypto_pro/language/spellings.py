"""The official instruction-level spellings of ops we define once under their API name.

The official frontend also accepts the PTO instruction an API call lowers to: ``pl.muls(dst, src,
2.0)`` is ``pl.mul`` with a scalar right-hand side, ``pl.row_expand_sub(dst, src, v)`` is
``pl.expand_sub(..., dim=0)``.  Each spelling here is the base op plus what the spelling fixes: a
``dim``, or that the right-hand side is a scalar.  Misuse is a KernelTypeError naming the spelling.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

from ..errors import KernelSyntaxError, KernelTypeError
from ..ir.optable import OPS

#: spelling -> (op, fixed dim or None, whether the third operand must be a scalar)
SPELLINGS = {
    **{f"{base}s": (op, None, True) for base, op in
       (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"), ("and", "and_"), ("max", "maximum"),
        ("min", "minimum"))},
    **{f"{side}_expand_{what}": (f"expand_{what}", dim, False)
       for side, dim in (("row", 0), ("col", 1)) for what in ("max", "min", "mul", "sub", "div")},
}


def _adapter(name: str, dim: Optional[int], scalar_rhs: bool) -> Callable:
    def adapt(args, kwargs, is_tile):
        kwargs = dict(kwargs)
        if dim is not None:
            if "dim" in kwargs:
                raise KernelTypeError(f"pl.{name} fixes dim={dim}; it takes no 'dim' argument")
            kwargs["dim"] = dim
        if scalar_rhs:
            rhs = args[2] if len(args) > 2 else kwargs.get("rhs")
            if rhs is not None and is_tile(rhs):
                raise KernelTypeError(f"pl.{name} takes a scalar as its third operand, got a tile; for two tiles "
                                      f"use pl.{name[:-1]}")
        return list(args), kwargs

    return adapt


def _stub(name: str, opname: str, dim: Optional[int], scalar_rhs: bool):
    opdef = OPS[opname]

    def stub(*args, **kwargs):
        raise KernelSyntaxError(f"pl.{name}() can only be called inside a @pl.jit kernel")

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = (f"pl.{name}: pl.{opdef.aliases[0]}" + (f" with dim={dim}" if dim is not None else "")
                    + (" with a scalar right-hand side" if scalar_rhs else "") + ".\n\n" + opdef.doc)
    stub.__pto_op__ = opdef
    stub.__pto_adapt__ = _adapter(name, dim, scalar_rhs)
    return stub


def build_spellings() -> Dict[str, Callable]:
    """{spelling: stub} for the ``pl`` namespace."""
    return {name: _stub(name, *spec) for name, spec in SPELLINGS.items()}
