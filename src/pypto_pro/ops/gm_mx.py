"""GM -> Mat loads of MX matmul operands: packed FP4 mantissas and E8M0 scale pairs.

Packed FP4 (``dtypes.PACKED_GM``): a GM tensor holds two 4-bit codes per byte (element 2i in the low
nibble of byte i), so its shape, and the offset on its last axis, count bytes, while the tile
receives one logical element per position.  The element a tile position reads is addressed in
logical elements: ``base = sum(offset_i * logical_stride_i)`` (the last axis' byte offset doubled),
and tile ``[r, c]`` reads element ``base + r * s0 + c * s1``, where ``s0``/``s1`` are the logical
strides of the two ``order`` axes, or what ``pl.set_stride(t, [s0, s1])`` set.

MX scales: an E8M0 tensor whose last axis (length 2) is the physical "phase" of a scale pair,
loaded into an E8M0 Mat tile of layout ZZ (A scales ``[M, G]``: groups along columns) or NN (B
scales ``[G, N]``: groups along rows).  The tensor axis ``order`` assigns to the group direction
counts pairs, so tile group ``g`` reads pair ``offset + g // 2``, phase ``g % 2``: a ``[M, G/2, 2]``
tensor (order ``[0, 1]``, the default ``[ndim-3, ndim-2]``) or ``[G/2, N, 2]`` holds the logical
``[M, G]`` / ``[G, N]`` scales; a descending ``order`` reads the transposed storage.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import PackedStrides, TensorParam
from ..ir.types import Layout, MemorySpace


# --------------------------------------------------------------------------- packed FP4
def is_packed(param: TensorParam) -> bool:
    return dt.is_packed_gm(param.dtype)


def _order_axes(order, ndim: int):
    if order is None:
        return ndim - 2, ndim - 1
    return order[0] % ndim, order[1] % ndim


def check_packed_load(c, a, tile_units: bool) -> None:
    src = a["src"]
    if tile_units:
        c.fail(f"'{src.name}' is a packed {src.dtype.name} tensor whose last axis counts bytes; pl.load_tile "
               f"cannot scale tile offsets into it — use pl.load with the byte offset")
    if src.ndim < 2:
        c.fail(f"a packed {src.dtype.name} tensor needs at least 2 axes")


def load_packed(ctx, a) -> None:
    """pl.load from a packed 4-bit tensor (module docstring)."""
    d = ctx.tile(a["dst"])
    param: TensorParam = a["src"]
    packed = ctx.tensor(param.base if isinstance(param, PackedStrides) else param)
    rows, cols = d.valid
    ndim = packed.ndim
    dims = list(packed.shape[:-1]) + [packed.shape[-1] * 2]  # logical elements
    natural = [int(np.prod(dims[i + 1:], dtype=np.int64)) for i in range(ndim)]
    offs = [int(ctx.scalar(o)) for o in a["offsets"]]
    a0, a1 = _order_axes(a["order"], ndim)
    logical = offs[:-1] + [offs[-1] * 2]
    for ax, (o, size) in enumerate(zip(logical, dims)):
        if o < 0 or (o >= size and rows and cols):
            raise ctx.error(f"pl.load: offset {offs[ax]} on axis {ax} is outside packed tensor '{param.name}' of "
                            f"shape {list(packed.shape)} (bytes; {dims[ax]} {param.dtype.name} elements on this axis)"
                            if ax == ndim - 1 else
                            f"pl.load: offset {o} on axis {ax} is outside tensor '{param.name}' of shape "
                            f"{list(packed.shape)}")
    if isinstance(param, PackedStrides):
        s0, s1 = (int(ctx.scalar(s)) for s in param.tile_strides)
    else:
        s0, s1 = natural[a0], natural[a1]
        for ax, ext in ((a0, rows), (a1, cols)):
            if logical[ax] + ext > dims[ax]:
                raise ctx.error(f"pl.load: the tile window [{logical[ax]}, {logical[ax] + ext}) on axis {ax} exceeds "
                                f"packed tensor '{param.name}' of shape {list(packed.shape)} ({dims[ax]} "
                                f"{param.dtype.name} elements on that axis); for tails set the tile's valid shape")
    if not rows or not cols:
        return
    base = sum(o * s for o, s in zip(logical, natural))
    idx = base + np.arange(rows, dtype=np.int64)[:, None] * s0 + np.arange(cols, dtype=np.int64)[None, :] * s1
    total = packed.size * 2
    if idx.min() < 0 or idx.max() >= total:
        raise ctx.error(f"pl.load: the tile window reaches {param.dtype.name} element {int(idx.max())} of packed tensor "
                        f"'{param.name}' (strides [{s0}, {s1}]), which holds {total} elements")
    flat = packed.reshape(-1)
    byte = idx // 2
    codes = np.where(idx % 2 == 0, flat[byte] & 0x0F, flat[byte] >> 4).astype(np.uint8)
    ctx.note_gm(param, _byte_box(byte, packed.shape), write=False)
    d.write(codes.view(d.dtype.require_numpy()), rows, cols)


def _byte_box(byte: np.ndarray, shape) -> tuple:
    """The smallest index box of the packed array holding every flat ``byte`` (for access records)."""
    coords = np.unravel_index(byte.reshape(-1), shape)
    return tuple(slice(int(ax.min()), int(ax.max()) + 1) for ax in coords)


def reject_packed_store(c, tensor: TensorParam) -> None:
    if is_packed(tensor):
        raise NotImplementedError(f"pl.store into a packed {tensor.dtype.name} GM tensor ('{tensor.name}')")


# --------------------------------------------------------------------------- MX scales
def is_mx_scale_load(tile, tensor: TensorParam) -> bool:
    """A load that reads E8M0 scale pairs (module docstring): E8M0 into a ZZ/NN Mat tile."""
    return (tile.dtype == dt.DT_FP8E8M0 and tensor.dtype == dt.DT_FP8E8M0 and tile.space == MemorySpace.Mat
            and tile.layout in (Layout.ZZ, Layout.NN))


def check_mx_scale_load(c, a) -> None:
    src, order = a["src"], a["order"]
    if src.ndim < 3 or (isinstance(src.dims[-1], int) and src.dims[-1] != 2):
        c.fail(f"an E8M0 load into a {a['dst'].layout.name} Mat tile reads MX scale pairs: tensor '{src.name}' needs a "
               f"last axis of length 2 (the pair), e.g. [M, G/2, 2] or [G/2, N, 2], got dims {list(src.dims)}")
    if order is not None and any(ax % src.ndim == src.ndim - 1 for ax in order):
        c.fail("the last axis of an MX scale tensor is the pair axis; 'order' cannot select it")
    last = a["offsets"][-1] if "offsets" in a else 0
    if isinstance(last, int) and last != 0:
        c.fail(f"the offset on the pair axis of an MX scale tensor must be 0, got {last}")


def load_mx_scale(ctx, a, tile_units: bool, window) -> None:
    """pl.load / pl.load_tile of E8M0 scale pairs into a ZZ/NN Mat tile (module docstring)."""
    d = ctx.tile(a["dst"])
    arr = ctx.tensor(a["src"])
    rows, cols = d.valid
    ndim = arr.ndim
    group_rows = a["dst"].layout == Layout.NN
    a0, a1 = _order_axes(a["order"], ndim - 1)
    groups = rows if group_rows else cols
    pairs = -(-groups // 2)
    ext0, ext1 = (pairs, cols) if group_rows else (rows, pairs)
    offsets: List = list(a["offsets"])
    if tile_units:
        tr, tc = d.shape
        offsets[a0] = ctx.scalar(offsets[a0]) * ((tr + 1) // 2 if group_rows else tr)
        offsets[a1] = ctx.scalar(offsets[a1]) * (tc if group_rows else (tc + 1) // 2)
    if int(ctx.scalar(offsets[-1])) != 0:
        raise ctx.error(f"the offset on the pair axis of MX scale tensor '{a['src'].name}' must be 0")
    what = "pl.load_tile" if tile_units else "pl.load"
    index, transposed, _ = window(ctx, arr, a["src"], offsets, [a0, a1], ext0, ext1, what)
    if not rows or not cols:
        return
    index = index[:-1] + (slice(0, 2),)
    vals = arr[index]  # [axis min, axis max, 2]
    if transposed:
        vals = vals.transpose(1, 0, 2)
    if group_rows:  # [pairs, cols, 2] -> [pairs * 2, cols]
        vals = vals.transpose(0, 2, 1).reshape(pairs * 2, cols)[:rows]
    else:  # [rows, pairs, 2] -> [rows, pairs * 2]
        vals = vals.reshape(rows, pairs * 2)[:, :cols]
    ctx.note_gm(a["src"], index, write=False)
    d.write(vals, rows, cols)


__all__ = ["is_packed", "load_packed", "check_packed_load", "reject_packed_store", "is_mx_scale_load",
           "check_mx_scale_load", "load_mx_scale"]
