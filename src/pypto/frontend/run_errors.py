"""Run-time errors of a lowered tensor-level kernel, told in tensor-level terms.

The backends check the tile kernel that :mod:`pypto.lower` made, so their messages name tile ops
(``pl.store``), tile windows and ``pl.set_validshape`` -- an API a ``@pypto.frontend.jit`` user
never wrote and cannot call.  :func:`speak_tensor_level` rewrites such a message in place: the
access becomes a read or write of the user's tensor, the advice is about ``pypto.view`` /
``pypto.assemble`` offsets and shapes, and the core that hit it (the lowering's choice) is dropped.
The kernel line stays: the lowering labels every tile op with the statement it came from.
"""
from __future__ import annotations

import re
from typing import Iterable

from pypto_pro.errors import KernelError

_WINDOW = re.compile(r"pl\.(\w+): the tile window \[(-?\d+), (-?\d+)\) on axis (\d+) exceeds tensor '([^']*)' of "
                     r"shape (\[[^\]]*\]); for tails set the tile's valid shape \(pl\.set_validshape\) before the "
                     r"access")
_OP_PREFIX = re.compile(r"^pl\.(\w+): ")
_CORE_SUFFIX = re.compile(r" \(on block \d+ (?:AIC|AIV\d?)\)$")

_READ_ADVICE = ("the offsets plus the shape of the pypto.view (or slice) read must stay inside the tensor; for a "
                "partial tail give the view a valid_shape that does")
_WRITE_ADVICE = ("the offsets of pypto.assemble (or of the slice assigned) plus the shape of the value written "
                 "(its valid_shape, for a clipped pypto.view) must stay inside the tensor")


def _direction(op: str) -> str:
    return "writing" if op.startswith("store") else "reading"


def _tensor(name: str, temps: Iterable[str]) -> str:
    if name in temps:
        return f"the intermediate '{name}' (a GM workspace the lowering made)"
    return f"tensor '{name}'"


def speak_tensor_level(err: KernelError, temps: Iterable[str] = ()) -> KernelError:
    """``err`` with its message in tensor-level terms (the same object, refreshed); ``temps`` are the
    names of workspace buffers the lowering created."""
    temps = set(temps)
    msg = err.message
    m = _WINDOW.search(msg)
    if m is not None:
        op, lo, hi, axis, name, shape = m.groups()
        advice = _WRITE_ADVICE if op.startswith("store") else _READ_ADVICE
        msg = (f"{_direction(op)} {_tensor(name, temps)}: elements [{lo}, {hi}) on axis {axis} are outside its "
               f"shape {shape}; {advice}") + msg[m.end():]
    else:
        m = _OP_PREFIX.match(msg)
        if m is not None and m.group(1).startswith(("load", "store")):
            msg = f"{_direction(m.group(1))} " + msg[m.end():]
    msg = _CORE_SUFFIX.sub("", msg)
    if msg != err.message:
        err.message = msg
        err.args = (err._render(),)
    return err
