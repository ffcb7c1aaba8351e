"""Vector mask control (docs/language.md "Semantics of ops"): ``pl.set_mask_count``, ``pl.set_mask_norm``,
``pl.set_vec_mask`` and ``pl.reset_mask`` — scalar-pipe instructions that set the mode and the 128-bit
value of the vector mask register.

Tile-level vector ops (``pl.add``, ``pl.mul``, ...) set the mask themselves from their tiles' valid
windows, overriding whatever these instructions wrote (the official pages say so).  So on every backend
these ops change no tile value: they are checked (``set_vec_mask`` takes two 64-bit integers, compile-time
or runtime) and cost one scalar instruction on the simulator.  The one reader is ``vf.get_mask_spr``,
which the parser resolves to the latest of them in program text (language/vf/more.py).
"""
from __future__ import annotations

from ..ir.nodes import is_integral
from ..ir.optable import Arg, op
from .sync import _nop

_U64 = (-(1 << 63), (1 << 64) - 1)  # -1 (all ones) and unsigned values up to 2**64 - 1


def _mask_half(c, name: str, value) -> None:
    if isinstance(value, bool) or not is_integral(value):
        c.fail(f"{name} must be a 64-bit integer (compile-time or runtime), got {value!r}")
    if isinstance(value, int) and not _U64[0] <= value <= _U64[1]:
        c.fail(f"{name} {value} does not fit 64 bits")


def _set_vec_mask_check(c, a):
    _mask_half(c, "mask_high", a["mask_high"])
    _mask_half(c, "mask_low", a["mask_low"])


_NOTE = " Tile ops set the mask themselves, so this changes no tile result."

op("set_vec_mask", [Arg("mask_high", "scalar"), Arg("mask_low", "scalar")], "S", check=_set_vec_mask_check,
   doc="pl.set_vec_mask(mask_high, mask_low): the mask register's 128 bits (norm mode), or mask_low elements "
       "(count mode)." + _NOTE)(_nop)
op("set_mask_count", [], "S", check=lambda c, a: None,
   doc="pl.set_mask_count(): the mask register counts elements (set_vec_mask's mask_low)." + _NOTE)(_nop)
op("set_mask_norm", [], "S", check=lambda c, a: None,
   doc="pl.set_mask_norm(): the mask register is a 128-bit per-element mask (the default)." + _NOTE)(_nop)
op("reset_mask", [], "S", check=lambda c, a: None,
   doc="pl.reset_mask(): every element active (set_vec_mask(-1, -1))." + _NOTE)(_nop)
