"""Byte-addressed on-chip memories and typed tile views over them.

Each core owns one ``uint8`` buffer per memory space, sized by the arch and filled with 0xFF so
never-written floats read as NaN.  A :class:`TileView` is a dtype + element-offset map (from
:mod:`pypto_pro.ir.layout`) at a byte address, so tiles that overlap alias exactly as on hardware.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import numpy as np

from ...dtypes import DataType
from ...errors import KernelMemoryError
from ...ir.types import MemorySpace

UNINIT_BYTE = 0xFF


class CoreMemory:
    """The on-chip buffers of one core, allocated on first use up to the arch capacity."""

    def __init__(self, capacity: Dict[str, int]):
        self.capacity = capacity
        self.buffers: Dict[MemorySpace, np.ndarray] = {}

    def buffer(self, space: MemorySpace) -> np.ndarray:
        buf = self.buffers.get(space)
        if buf is None:
            size = self.capacity.get(space.name)
            if size is None:
                raise KernelMemoryError(f"memory space {space.name} does not exist on this arch")
            buf = np.full(size, UNINIT_BYTE, dtype=np.uint8)
            self.buffers[space] = buf
        return buf


AccessHook = Callable[["TileView", bool, Tuple[int, int]], None]


class TileView:
    """A tile resolved at run time: buffer, byte address, dtype, offsets map and valid window."""

    __slots__ = ("buf", "space", "addr", "dtype", "offsets", "valid", "name", "hook", "_typed")

    def __init__(self, buf: np.ndarray, space: MemorySpace, addr: int, dtype: DataType, offsets: np.ndarray,
                 valid: Tuple[int, int], name: str, hook: Optional[AccessHook] = None):
        self.buf = buf
        self.space = space
        self.addr = addr
        self.dtype = dtype
        self.offsets = offsets
        self.valid = valid
        self.name = name
        self.hook = hook
        esize = dtype.nbytes
        span = (int(offsets.max()) + 1) * esize if offsets.size else 0
        if addr < 0 or addr + span > buf.size:
            raise KernelMemoryError(
                f"tile {name} spans bytes [{addr}, {addr + span}) of {space.name}, "
                f"which holds {buf.size} bytes")
        self._typed = buf[addr:addr + span].view(dtype.require_numpy())

    @property
    def shape(self) -> Tuple[int, int]:
        return self.offsets.shape

    def _window(self, rows: Optional[int], cols: Optional[int]) -> Tuple[int, int]:
        vr, vc = self.valid
        return (vr if rows is None else rows), (vc if cols is None else cols)

    def read(self, rows: Optional[int] = None, cols: Optional[int] = None) -> np.ndarray:
        """Copy of the top-left ``rows x cols`` window (default: the valid window), storage dtype."""
        r, c = self._window(rows, cols)
        if self.hook is not None:
            self.hook(self, False, (r, c))
        return self._typed[self.offsets[:r, :c]]

    def write(self, values, rows: Optional[int] = None, cols: Optional[int] = None) -> None:
        """Store ``values`` (broadcast, cast to the tile dtype) into the top-left window."""
        r, c = self._window(rows, cols)
        if self.hook is not None:
            self.hook(self, True, (r, c))
        self._typed[self.offsets[:r, :c]] = np.asarray(values).astype(self._typed.dtype, copy=False)

    def read_compute(self, rows: Optional[int] = None, cols: Optional[int] = None) -> np.ndarray:
        """The window in the compute dtype (fp32 for 16/8-bit floats)."""
        return self.read(rows, cols).astype(self.dtype.compute_np_dtype)

    def byte_range(self, rows: Optional[int] = None, cols: Optional[int] = None) -> Tuple[int, int]:
        """[lo, hi) bytes covering the window (a superset for non-contiguous layouts)."""
        r, c = self._window(rows, cols)
        if r == 0 or c == 0:
            return (self.addr, self.addr)
        sub = self.offsets[:r, :c]
        es = self.dtype.nbytes
        return (self.addr + int(sub.min()) * es, self.addr + (int(sub.max()) + 1) * es)

    def __repr__(self) -> str:
        return f"<tile {self.name} {self.dtype.name}{list(self.shape)} @{self.space.name}+{self.addr} valid={self.valid}>"
