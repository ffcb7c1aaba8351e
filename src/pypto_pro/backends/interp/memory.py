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
from ...ir.layout import is_packed
from ...ir.types import Layout, MemorySpace

UNINIT_BYTE = 0xFF
#: every fp16 bit pattern's value in fp32 (see TileView.read_compute)
_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
#: fp16 bit patterns -> fp32 (numpy's bits): the table, or the compiled codec once enabled (interp/f16.py)
_f16_decode: Callable[[np.ndarray], np.ndarray] = _F16_TO_F32.take
_F16_MIN = 256


def set_f16_codec(decode: Callable[[np.ndarray], np.ndarray]) -> None:
    """Decode fp16 windows of at least 256 elements with ``decode`` (the same bits as the table)."""
    global _f16_decode
    _f16_decode = decode


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
    """A tile resolved at run time: typed memory at a byte address, offsets map and valid window.

    ``grid`` is a strided 2-D numpy view of the same elements when the layout is ND or DN (reads and
    writes are then plain slices); fractal layouts go through the offsets map."""

    __slots__ = ("buf", "space", "addr", "dtype", "offsets", "valid", "name", "hook", "_typed", "grid")

    def __init__(self, typed: np.ndarray, buf: np.ndarray, space: MemorySpace, addr: int, dtype: DataType,
                 offsets: np.ndarray, valid: Tuple[int, int], name: str, hook: Optional[AccessHook] = None,
                 grid: Optional[np.ndarray] = None):
        self._typed = typed
        self.buf = buf
        self.space = space
        self.addr = addr
        self.dtype = dtype
        self.offsets = offsets
        self.valid = valid
        self.name = name
        self.hook = hook
        self.grid = grid

    @classmethod
    def at(cls, buf: np.ndarray, space: MemorySpace, addr: int, dtype: DataType, offsets: np.ndarray,
           valid: Tuple[int, int], name: str, hook: Optional[AccessHook] = None, layout: Optional[Layout] = None
           ) -> "TileView":
        """The view of a declared tile, bounds-checked against its memory.  ``offsets`` count elements of
        ``dtype``; for 4-bit floats outside the Acc, half bytes (a :class:`PackedTileView`)."""
        if is_packed(dtype, space):
            return PackedTileView.packed_at(buf, space, addr, dtype, offsets, valid, name, hook)
        span = (int(offsets.max()) + 1) * dtype.nbytes if offsets.size else 0
        if addr < 0 or addr + span > buf.size:
            raise KernelMemoryError(
                f"tile {name} spans bytes [{addr}, {addr + span}) of {space.name}, which holds {buf.size} bytes")
        typed = buf[addr:addr + span].view(dtype.require_numpy())
        rows, cols = offsets.shape
        grid = None
        if layout == Layout.ND:
            grid = typed[:rows * cols].reshape(rows, cols)
        elif layout == Layout.DN:
            grid = typed[:rows * cols].reshape(cols, rows).T
        return cls(typed, buf, space, addr, dtype, offsets, valid, name, hook, grid)

    def flat(self, addr: int, dtype: DataType, count: int, name: str) -> "TileView":
        """``count`` elements of ``dtype`` at byte ``addr`` of this view's memory as one ``[1, count]`` ND
        row (how a register load or store addresses UB), bounds-checked like a declared tile."""
        return TileView.at(self.buf, self.space, addr, dtype, np.arange(count).reshape(1, count), (1, count), name,
                           self.hook, Layout.ND)

    def sub(self, r0: int, r1: int, c0: int, c1: int, valid: Tuple[int, int]) -> "TileView":
        """The subview ``[r0:r1, c0:c1]`` sharing this tile's memory."""
        grid = None if self.grid is None else self.grid[r0:r1, c0:c1]
        return TileView(self._typed, self.buf, self.space, self.addr, self.dtype, self.offsets[r0:r1, c0:c1],
                        valid, f"{self.name}[{r0}:{r1}, {c0}:{c1}]", self.hook, grid)

    def with_valid(self, valid: Tuple[int, int]) -> "TileView":
        return TileView(self._typed, self.buf, self.space, self.addr, self.dtype, self.offsets, valid, self.name,
                        self.hook, self.grid)

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
        if self.grid is not None:
            return self.grid[:r, :c].copy()
        return self._typed[self.offsets[:r, :c]]

    @property
    def storage_dtype(self) -> np.dtype:
        """The numpy dtype the elements are stored in (codes for formats numpy has no type for)."""
        return self._typed.dtype

    def write(self, values, rows: Optional[int] = None, cols: Optional[int] = None) -> None:
        """Store ``values`` (broadcast, cast to the tile dtype) into the top-left window."""
        r, c = self._window(rows, cols)
        if self.hook is not None:
            self.hook(self, True, (r, c))
        if type(values) is not np.ndarray or values.dtype != self._typed.dtype:
            values = np.asarray(values).astype(self._typed.dtype, copy=False)
        if self.grid is not None:
            self.grid[:r, :c] = values
        else:
            self._typed[self.offsets[:r, :c]] = values

    def read_unreported(self, rows: int, cols: int) -> np.ndarray:
        """Like :meth:`read`, without reporting the access: for ops that rewrite only some elements of
        a window and must keep the others (``scatter``), whose write then covers the window."""
        if self.grid is not None:
            return self.grid[:rows, :cols].copy()
        return self._typed[self.offsets[:rows, :cols]]

    def discard(self) -> None:
        """Refill every byte of the tile with the never-written pattern (no access is reported)."""
        self._typed.view(np.uint8)[:] = UNINIT_BYTE

    def read_compute(self, rows: Optional[int] = None, cols: Optional[int] = None) -> np.ndarray:
        """The window in the compute dtype (fp32 for 16/8-bit floats), a new array.

        fp16 goes through a table of all 65 536 fp16 values in fp32 (built by numpy's own cast, so the
        result is the same to the bit, NaN payloads included): about twice as fast as ``astype``."""
        dtype = self.dtype
        if dtype.codec is None and dtype.np_dtype == np.float16 and dtype.compute_np_dtype == np.float32:
            r, c = self._window(rows, cols)
            if self.hook is not None:
                self.hook(self, False, (r, c))
            window = self.grid[:r, :c] if self.grid is not None else self._typed[self.offsets[:r, :c]]
            if window.size >= _F16_MIN:
                return _f16_decode(window.view(np.uint16))
            return _F16_TO_F32.take(window.view(np.uint16))
        return dtype.decode(self.read(rows, cols))

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


class PackedTileView(TileView):
    """A tile of a 4-bit float format: two elements per byte, as on the NPU (``ir/layout.is_packed``), so
    it aliases a ``UINT8`` tile of half the columns exactly (the MXFP4 quant path moves such bytes).

    ``nibbles`` are the element offsets in half bytes (element offset ``o`` is the low nibble of byte
    ``o // 2`` when ``o`` is even); :attr:`offsets` are the byte offsets ``o // 2``, what the access hooks
    and byte ranges see.  Reads return one code per element in the dtype's storage type (its low nibble),
    writes replace only the nibbles of the window."""

    __slots__ = ("nibbles",)

    @classmethod
    def packed_at(cls, buf: np.ndarray, space: MemorySpace, addr: int, dtype: DataType, nibbles: np.ndarray,
                  valid: Tuple[int, int], name: str, hook: Optional[AccessHook] = None) -> "PackedTileView":
        span = int(nibbles.max()) // 2 + 1 if nibbles.size else 0
        if addr < 0 or addr + span > buf.size:
            raise KernelMemoryError(
                f"tile {name} spans bytes [{addr}, {addr + span}) of {space.name}, which holds {buf.size} bytes")
        view = cls(buf[addr:addr + span], buf, space, addr, dtype, nibbles // 2, valid, name, hook)
        view.nibbles = nibbles
        return view

    def _derived(self, nibbles: np.ndarray, valid: Tuple[int, int], name: str) -> "PackedTileView":
        view = PackedTileView(self._typed, self.buf, self.space, self.addr, self.dtype, nibbles // 2, valid, name,
                              self.hook)
        view.nibbles = nibbles
        return view

    def sub(self, r0: int, r1: int, c0: int, c1: int, valid: Tuple[int, int]) -> "PackedTileView":
        return self._derived(self.nibbles[r0:r1, c0:c1], valid, f"{self.name}[{r0}:{r1}, {c0}:{c1}]")

    def with_valid(self, valid: Tuple[int, int]) -> "PackedTileView":
        return self._derived(self.nibbles, valid, self.name)

    @property
    def storage_dtype(self) -> np.dtype:
        return self.dtype.np_dtype

    def _codes(self, rows: int, cols: int) -> np.ndarray:
        nib = self.nibbles[:rows, :cols]
        codes = (self._typed[nib >> 1] >> ((nib & 1) << 2).astype(np.uint8)) & np.uint8(0x0F)
        return codes.astype(np.uint8).view(self.dtype.np_dtype)

    def read(self, rows: Optional[int] = None, cols: Optional[int] = None) -> np.ndarray:
        r, c = self._window(rows, cols)
        if self.hook is not None:
            self.hook(self, False, (r, c))
        return self._codes(r, c)

    def read_unreported(self, rows: int, cols: int) -> np.ndarray:
        return self._codes(rows, cols)

    def write(self, values, rows: Optional[int] = None, cols: Optional[int] = None) -> None:
        r, c = self._window(rows, cols)
        if self.hook is not None:
            self.hook(self, True, (r, c))
        storage = self.dtype.np_dtype
        values = np.asarray(values)
        if values.dtype != storage:
            values = values.astype(storage)
        codes = np.broadcast_to(values.view(np.uint8) & np.uint8(0x0F), (r, c))
        nib = self.nibbles[:r, :c]
        for parity in (0, 1):  # one pass per nibble: no byte is written twice in a pass
            pick = (nib & 1) == parity
            at = nib[pick] >> 1
            keep = np.uint8(0xF0 if parity == 0 else 0x0F)
            self._typed[at] = (self._typed[at] & keep) | (codes[pick] << np.uint8(4 * parity))
