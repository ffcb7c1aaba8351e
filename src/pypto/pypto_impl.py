"""``pypto.pypto_impl``: the few entry points of the official native module that programs call directly.

* ``SetGlobalConfig({"<group>.<key>": value})`` sets options in the root scope, under every
  ``set_*_options`` value and kept by ``pypto.reset_options()`` (the official test harness sets
  ``pass.enable_slice`` there);
* ``Reset()`` forgets the functions recorded with ``with pypto.function(...)``;
* ``DeviceInit()`` / ``DeviceFini()``: ``pypto.runtime._device_init`` / ``_device_fini``;
* ``GetNPUArch()`` / ``SetNPUArch(name)``: ``pypto.platform.npuarch``;
* ``LogTopFolder()``: the folder this process writes build products and dumps to;
* ``TileL1Info`` / ``TileL0Info``: the convolution tile records of ``pypto.set_conv_tile_shapes``
  (immediate ``SymbolicScalar`` fields are their ints);
* ``ConvReLuType``: ``pypto.ConvReLuType``;
* ``Element``: ``pypto.Element``; ``ScalarAddS`` / ``ScalarSubS`` / ``ScalarMulS`` / ``ScalarDivS`` /
  ``ScalarMaxS(operand, element, reverse_operand=False)``: ``operand (op) element`` elementwise, or
  ``element (op) operand`` when ``reverse_operand`` (what helpers decorated with
  ``pypto.operation.op_wrapper`` call).
"""
from __future__ import annotations

import os
from typing import Any, Dict

from .options import set_root_options as _set_root_options
from .element import Element  # noqa: F401 (pypto_impl.Element(dtype, value), the native spelling)
from .ops import elementwise as _elementwise
from .ops.conv import ConvReLuType  # noqa: F401 (the official tests name it here too)
from pypto_pro.errors import KernelTypeError
from .symbolic import SymbolicScalar
from .frontend.graph_function import PROGRAM as _PROGRAM
from .platform import get_npu_arch as GetNPUArch  # noqa: F401,N812 (the official spelling)
from .platform import set_npu_arch as SetNPUArch  # noqa: F401,N812


def SetGlobalConfig(config: Dict[str, Any]) -> None:  # noqa: N802 (the official name)
    """Root-scope options, ``{"pass.enable_slice": True, ...}`` (validated like ``set_*_options``)."""
    _set_root_options(config)


def Reset() -> None:  # noqa: N802
    """Forget every recorded ``pypto.function`` (the official ``Program::Reset``)."""
    _PROGRAM.reset()


def DeviceInit() -> None:  # noqa: N802
    _PROGRAM.reset()


def DeviceFini() -> None:  # noqa: N802
    _PROGRAM.reset()


def _scalar_op(name: str, op):
    def scalar_op(operand, value, reverse_operand: bool = False):
        if not isinstance(reverse_operand, bool):
            raise KernelTypeError(f"pypto_impl.{name}: reverse_operand must be a bool, got {reverse_operand!r}")
        return op(value, operand) if reverse_operand else op(operand, value)
    scalar_op.__name__ = scalar_op.__qualname__ = name
    scalar_op.__doc__ = (f"``{name}(operand, value, reverse_operand=False)``: ``{op.__name__}(operand, value)``, "
                         f"or ``{op.__name__}(value, operand)`` when ``reverse_operand``.")
    return scalar_op


ScalarAddS = _scalar_op("ScalarAddS", _elementwise.add)
ScalarSubS = _scalar_op("ScalarSubS", _elementwise.sub)
ScalarMulS = _scalar_op("ScalarMulS", _elementwise.mul)
ScalarDivS = _scalar_op("ScalarDivS", _elementwise.div)
ScalarMaxS = _scalar_op("ScalarMaxS", _elementwise.maximum)


def LogTopFolder() -> str:  # noqa: N802
    """Where build products and dumps go: ``$PYPTO_BUILD_DIR`` (else ``./build``)."""
    return os.path.abspath(os.environ.get("PYPTO_BUILD_DIR", "build"))


class _TileInfo:
    """Named positive int fields, compared and printed by value."""

    FIELDS: tuple = ()

    def __init__(self, **fields: int):
        unknown = set(fields) - set(self.FIELDS)
        missing = set(self.FIELDS) - set(fields)
        if unknown or missing:
            raise TypeError(f"{type(self).__name__} takes {', '.join(self.FIELDS)}"
                            + (f"; unknown {sorted(unknown)}" if unknown else "")
                            + (f"; missing {sorted(missing)}" if missing else ""))
        for name in self.FIELDS:
            value = fields[name]
            if isinstance(value, SymbolicScalar) and value.is_concrete():  # SymbolicScalar(32): an immediate
                value = value.concrete()
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{type(self).__name__}.{name} must be a positive int, got {value!r}")
            setattr(self, name, value)

    def key(self) -> tuple:
        return tuple(getattr(self, n) for n in self.FIELDS)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.key() == self.key()

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self.key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)}' for n in self.FIELDS)})"


class TileL1Info(_TileInfo):
    """The L1 tile of a convolution (input/output heights and widths, channels, batch)."""

    FIELDS = ("tileHin", "tileHout", "tileWin", "tileWout", "tileCinFmap", "tileCinWeight", "tileN", "tileBatch")


class TileL0Info(_TileInfo):
    """The L0 tile of a convolution."""

    FIELDS = ("tileH", "tileW", "tileK", "tileN")
