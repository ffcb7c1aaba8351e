"""What to write instead, for the slips the tile parser rejects: a Python operator on tiles, and a
compile-time function (``np.exp``, ``math.sqrt``) given a tile or a runtime scalar.

Tiles have no operators here (as in the official parser, ``+ - * /`` are scalar arithmetic), so the
hint names the tile op with a destination; numpy/math functions run while parsing, so the hint
names the tile op of the same name, or says that there is no runtime scalar form.
"""
from __future__ import annotations

from typing import Optional

#: Python operator -> the tile op computing it element-wise (lhs/rhs a tile or a scalar)
_OPERATOR_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "&": "and_", "|": "or_", "^": "xor",
                 "<<": "shl", ">>": "shr"}
#: numpy/math names whose tile op is spelt differently
_RENAMED = {"absolute": "abs", "negative": "neg", "reciprocal": "recip", "multiply": "mul", "subtract": "sub",
            "divide": "div", "true_divide": "div", "fmax": "maximum", "fmin": "minimum"}


def tile_op(name: str) -> Optional[str]:
    """The ``pl.<op>`` that computes ``name`` on tiles, or None."""
    from ...ir.optable import OPS

    op = _RENAMED.get(name, name)
    return op if op in OPS else None


def operator_hint(op: str) -> str:
    """Message for ``tile <op> x``."""
    name = _OPERATOR_OPS.get(op)
    if name is None:
        return (f"operator '{op}' on tiles is not supported and has no tile op; compute it from the element-wise "
                f"tile ops (pl.add, pl.mul, pl.div, ...) with a destination tile")
    from ... import language as pl

    doc = (getattr(pl, name).__doc__ or "").strip()
    signature = doc.split(":", 1)[0] if doc.startswith(f"pl.{name}(") else f"pl.{name}(dst, lhs, rhs)"
    scalar = f" (rhs may be a scalar: pl.{name}(dst, t, 2.0))" if "tile or scalar" in doc.split("\n", 1)[0] else ""
    return f"operator '{op}' on tiles is not supported; call the tile op with a destination: {signature}{scalar}"


def compile_time_call_hint(name: str, on_tile: bool) -> str:
    """Extra advice for ``np.<name>(tile)`` / ``math.<name>(runtime scalar)``."""
    op = tile_op(name)
    if on_tile:
        if op is not None:
            return f"; on tiles use the tile op pl.{op}(dst, src)"
        return "; compute with tile ops (pl.exp, pl.mul, ...) that write a destination tile"
    if op is not None:
        return (f"; there is no runtime scalar {name}: put the value in a tile and use pl.{op}(dst, src), or "
                f"compute it on the host and pass it as a kernel argument")
    return f"; there is no runtime scalar {name}: compute it on the host and pass it as a kernel argument"
