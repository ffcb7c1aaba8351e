"""The official keyword names of the ``pl.<op>`` parameters (the API reference pages and the official
``pypto_pro.language`` signatures), where they differ from the names our op declarations use.

The backends read an op's arguments by the declared names (``dst``, ``src``, ...); users may pass any
operand by its official keyword (``pl.add(out=t, lhs=a, rhs=b)``, ``pl.matmul(..., bias_tile=b)``).
Positional calls are unaffected.  :func:`apply` installs the names on the op table once every family
module is imported; ``tests/pro/test_official_keywords.py`` checks each spelling.
"""
from __future__ import annotations

from typing import Dict

from ..ir.optable import OPS

_OUT = {"dst": "out"}
#: ops whose destination tile is called ``out`` (and whose other parameter names already match).
_OUT_OPS = ("add", "sub", "mul", "div", "and_", "shl", "shr", "xor", "expands", "neg", "abs", "exp", "log", "sqrt",
            "rsqrt", "recip", "relu", "fillpad", "cast", "add_relu_cast", "sub_relu_cast", "mul_cast", "select",
            "add_relu", "sub_relu", "addc", "mul_add_dst", "fused_mul_add", "fused_mul_add_relu", "axpy",
            "transpose", "sum", "argmax", "argmin", "gather", "gathermask", "scatter", "fill_index", "minimum",
            "maximum")

KEYWORDS: Dict[str, Dict[str, str]] = {
    **{name: _OUT for name in _OUT_OPS},
    **{name: {"mask": "out"} for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{name: {"dst": "out", "s0": "src0", "s1": "src1"} for name in ("partadd", "partmax", "partmin", "partmul")},
    **{f"expand_{what}": {"dst": "out", "v": "scalar"} for what in ("max", "min", "mul", "sub", "div")},
    **{name: {"dst": "dst_tile", "src": "src_tensor"} for name in ("load", "load_tile")},
    **{name: {"dst": "dst_tensor", "src": "src_tile"} for name in ("store", "store_tile")},
    **{name: {"dst": "dst_tile", "src": "src_tile"} for name in ("move", "insert")},
    # the bias stays positional-only in effect: the official tests require ``bias_tile=`` to be rejected
    "matmul": {"dst": "dst_tile", "lhs": "lhs_tile", "rhs": "rhs_tile"},
    "matmul_mx": {"dst": "dst_tile", "lhs": "lhs_tile", "rhs": "rhs_tile"},
    **{name: {"dst": "dst_tile", "acc": "acc_tile", "lhs": "lhs_tile", "rhs": "rhs_tile"}
       for name in ("matmul_acc", "matmul_mx_acc")},
    "getval": {"src": "container", "index": "offset"},
    "setval": {"dst": "container", "index": "offset"},
    "pto_assert": {"cond": "condition", "fmt": "format_str"},
    "printf": {"fmt": "format_str"},
}


def apply() -> None:
    for name, keywords in KEYWORDS.items():
        OPS[name].set_keywords(keywords)
