"""Element placement of tile layouts: logical ``[r, c]`` -> element offset from the tile base.

ND is row-major, DN column-major; the fractal layouts (NZ, ZN, ZZ, NN) split the tile into
blocks of ``r0 x c0`` elements whose contiguous run is 32 bytes (API.md A3), so that e.g.
``Mat[N,K] NZ`` and ``Mat[K,N] ZN`` occupy the same bytes.  Every backend and the simulator use
this one function, so aliasing between tiles of different layouts means the same everywhere.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Tuple

import numpy as np

from .types import Layout

FRACTAL_ROWS = 16
FRACTAL_BYTES = 32


def fractal_dims(layout: Layout, elem_bytes: int, acc: bool = False) -> Tuple[int, int]:
    """(r0, c0) of one fractal block.  The L0C accumulator uses 16x16 blocks for every dtype."""
    run = max(1, FRACTAL_BYTES // elem_bytes)
    if acc:
        return FRACTAL_ROWS, FRACTAL_ROWS
    if layout in (Layout.NZ, Layout.ZZ):
        return FRACTAL_ROWS, run
    return run, FRACTAL_ROWS  # ZN, NN: the contiguous run goes down a column


@lru_cache(maxsize=512)
def element_offsets(rows: int, cols: int, layout: Layout, elem_bytes: int, acc: bool = False) -> np.ndarray:
    """A read-only ``[rows, cols]`` int64 array of element offsets for the given layout."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    if layout == Layout.ND:
        off = r * cols + c
    elif layout == Layout.DN:
        off = c * rows + r
    else:
        r0, c0 = fractal_dims(layout, elem_bytes, acc)
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


def footprint_elems(rows: int, cols: int, layout: Layout, elem_bytes: int, acc: bool = False) -> int:
    """Number of elements a tile spans in memory (fractal layouts pad to whole blocks)."""
    if layout in (Layout.ND, Layout.DN):
        return rows * cols
    r0, c0 = fractal_dims(layout, elem_bytes, acc)
    return (-(-rows // r0) * r0) * (-(-cols // c0) * c0)
