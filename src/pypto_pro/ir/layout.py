"""Element placement of tile layouts: logical ``[r, c]`` -> element offset from the tile base.

ND is row-major, DN column-major; the fractal layouts (NZ, ZN, ZZ, NN) split the tile into
blocks of ``r0 x c0`` elements whose contiguous run is 32 bytes (docs/language.md "Tiles"), so that e.g.
``Mat[N,K] NZ`` and ``Mat[K,N] ZN`` occupy the same bytes.  Every backend and the simulator use
this one function, so aliasing between tiles of different layouts means the same everywhere.

Footprint (the official slot rule: a group's slots are ``prod(shape) x element bytes`` apart):
NZ stacks its ``c0``-wide column panels, each as tall as the tile (``rows x c0`` elements, the
last 16-row fractal of a panel is not padded), and ZN, its transpose, its ``r0``-tall row panels,
each as wide as the tile.  So a ``[1, 128]`` FP16 NZ tile spans exactly 256 bytes; only the run
direction (32 bytes) rounds up.  ZZ and NN pad both ways, but the E8M0 scale tiles of MX matmul
use 32-byte fractals there (16 x 2 in ZZ, 2 x 16 in NN), so a ``[64, 2]`` ZZ scale spans 128 bytes.

4-bit floats are packed two per byte on chip (:func:`is_packed`): their offsets count half bytes and a
32-byte run holds 64 elements, so an FP4 ``[R, C]`` tile has the bytes of a UINT8 ``[R, C/2]`` tile of
the same layout (ND, NZ).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Tuple

import numpy as np

from .types import Layout

FRACTAL_ROWS = 16
FRACTAL_BYTES = 32


#: fractal bytes of the MX scale layouts (E8M0 in ZZ / NN)
SCALE_FRACTAL_BYTES = 32


def fractal_bytes(dtype, layout: Layout) -> int:
    """Bytes of one fractal block of a tile of ``dtype`` in ``layout``: 32 for E8M0 scales in ZZ/NN,
    else 0 (meaning the 16-row x 32-byte fractal)."""
    return SCALE_FRACTAL_BYTES if dtype.name == "FP8E8M0" and layout in (Layout.ZZ, Layout.NN) else 0


def fractal_dims(layout: Layout, elem_bytes: int, acc: bool = False, fractal: int = 0,
                 nibbles: bool = False) -> Tuple[int, int]:
    """(r0, c0) of one fractal block.  The L0C accumulator uses 16x16 blocks for every dtype; a
    ``fractal`` of 32 bytes (E8M0 scales) is 16 rows x one 2-element run.  ``nibbles``: 4-bit elements
    packed two per byte (a 32-byte run holds 64 of them)."""
    run = 2 * FRACTAL_BYTES if nibbles else max(1, FRACTAL_BYTES // elem_bytes)
    if acc:
        return FRACTAL_ROWS, FRACTAL_ROWS
    if fractal:
        run = max(1, fractal // FRACTAL_ROWS // elem_bytes)
    if layout in (Layout.NZ, Layout.ZZ):
        return FRACTAL_ROWS, run
    return run, FRACTAL_ROWS  # ZN, NN: the contiguous run goes down a column


@lru_cache(maxsize=512)
def element_offsets(rows: int, cols: int, layout: Layout, elem_bytes: int, acc: bool = False,
                    fractal: int = 0, nibbles: bool = False) -> np.ndarray:
    """A read-only ``[rows, cols]`` int64 array of element offsets for the given layout (``nibbles``:
    offsets in half bytes, for 4-bit elements packed two per byte, :func:`is_packed`)."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    if layout == Layout.ND:
        off = r * cols + c
    elif layout == Layout.DN:
        off = c * rows + r
    elif layout == Layout.NZ:  # column panels of c0 columns, each `rows` tall, row-major inside
        _, c0 = fractal_dims(layout, elem_bytes, acc, fractal, nibbles)
        off = (c // c0) * (rows * c0) + r * c0 + c % c0
    elif layout == Layout.ZN:  # row panels of r0 rows, each `cols` wide, column-major inside
        r0, _ = fractal_dims(layout, elem_bytes, acc, fractal, nibbles)
        off = (r // r0) * (cols * r0) + c * r0 + r % r0
    else:
        r0, c0 = fractal_dims(layout, elem_bytes, acc, fractal, nibbles)
        r1 = -(-rows // r0)
        c1 = -(-cols // c0)
        rb, ri, cb, ci = r // r0, r % r0, c // c0, c % c0
        block_rowmajor = layout in (Layout.ZN, Layout.ZZ)  # capital Z: blocks in row-major order
        block = rb * c1 + cb if block_rowmajor else cb * r1 + rb
        inner_rowmajor = layout in (Layout.NZ, Layout.ZZ)  # small z: row-major inside a block
        inner = ri * c0 + ci if inner_rowmajor else ci * r0 + ri
        off = block * (r0 * c0) + inner
    off = np.ascontiguousarray(np.broadcast_to(off, (rows, cols)))
    off.setflags(write=False)
    return off


def footprint_elems(rows: int, cols: int, layout: Layout, elem_bytes: int, acc: bool = False,
                    fractal: int = 0, nibbles: bool = False) -> int:
    """Number of elements a tile spans in memory (see the module docstring for the padding)."""
    if layout in (Layout.ND, Layout.DN):
        return rows * cols
    r0, c0 = fractal_dims(layout, elem_bytes, acc, fractal, nibbles)
    padded_rows = rows if layout == Layout.NZ else -(-rows // r0) * r0
    padded_cols = cols if layout == Layout.ZN else -(-cols // c0) * c0
    return padded_rows * padded_cols


def is_packed(dtype, space) -> bool:
    """Whether on-chip tiles of ``dtype`` in ``space`` hold two 4-bit elements per byte (element offset
    ``o`` is the low nibble of byte ``o // 2`` when ``o`` is even, the high one otherwise): the 4-bit
    floats (``dtypes.PACKED_GM``), as on the NPU, outside the accumulator."""
    from ..dtypes import is_packed_gm

    return is_packed_gm(dtype) and space.name != "Acc"


def tile_offsets(rows: int, cols: int, layout: Layout, dtype, space) -> np.ndarray:
    """The element offsets of a declared tile (:func:`element_offsets` with its dtype's element size, Acc
    fractals, scale fractals and nibble packing), in elements of ``dtype`` (half bytes when packed)."""
    acc = space.name == "Acc"
    return element_offsets(rows, cols, layout, dtype.nbytes, acc, fractal_bytes(dtype, layout),
                           is_packed(dtype, space))


def footprint_bytes(rows: int, cols: int, layout: Layout, dtype, space) -> int:
    """Bytes a declared tile spans from its address (:func:`footprint_elems` times the element size;
    packed 4-bit tiles take half a byte per element, rounded up)."""
    acc = space.name == "Acc"
    packed = is_packed(dtype, space)
    n = footprint_elems(rows, cols, layout, dtype.nbytes, acc, fractal_bytes(dtype, layout), packed)
    return -(-n // 2) if packed else n * dtype.nbytes
