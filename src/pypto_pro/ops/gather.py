"""Index- and pattern-driven selection on Vec tiles (API.md A5 "Also"): ``pl.gather``, ``pl.scatter``
and ``pl.gathermask``, following their official pages (whose kernels and measured rows are tests in
``tests/pro/test_official_tile_pages_math.py``).

* ``gather(out, src, idx, tmp, *, cmp_mode=0, offset=0)``: ``out[r, c] = src_flat[idx[r, c] + offset]``
  over ``out``'s valid window, ``src_flat`` being ``src``'s physical elements in row-major order.  The
  hardware leaves an index outside ``src`` undefined; here it is a ``KernelRuntimeError``.  ``tmp`` is
  the hardware's scratch (never read here); ``cmp_mode`` other than 0 is not implemented.
* ``scatter(out, src, idx)``: ``out_flat[idx[r, c]] = src[r, c]`` over ``src``'s valid window (its
  inverse); other elements of ``out`` keep their values; a repeated index keeps the last write in
  row-major order (the hardware leaves conflicts undefined); an index outside ``out`` raises.  Data
  and index widths pair as the hardware's: 32/64-bit data with INT32/UINT32, 8/16-bit with INT16/UINT16.
* ``gathermask(out, src, *, pattern_mode)``: ``out[:, j]`` is ``src[:, j*g + k]`` with ``(g, k)`` the
  pattern's group and kept column (1/2: every 2nd column from 0/1; 3..6: every 4th from 0..3; 7: all).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import MemorySpace
from .common import window

INDEX_TYPES = (dt.DT_INT16, dt.DT_UINT16, dt.DT_INT32, dt.DT_UINT32)
#: pattern_mode -> (group, kept column)
PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


def _check_flat(ctx, op: str, where: np.ndarray, shape, role: str) -> None:
    """Every flat index of ``where`` addresses one of the ``shape`` tile's physical elements."""
    rows, cols = shape
    bad = (where < 0) | (where >= rows * cols)
    if bad.any():
        r, col = (int(v[0]) for v in np.nonzero(bad))
        raise ctx.error(f"pl.{op}: index {int(where[r, col])} at ({r}, {col}) is outside {role}'s {rows}x{cols} "
                        "elements")


def _vec(c, a, names):
    for n in names:
        c.space(n, a[n], MemorySpace.Vec)


@op("gather", [Out("dst"), In("src"), In("idx"), Out("tmp"), Arg("cmp_mode", default=0, kw_only=True),
               Arg("offset", "scalar", default=0, kw_only=True)], "V")
class Gather:
    """pl.gather(dst, src, idx, tmp, *, cmp_mode=0, offset=0): dst[r, c] = src_flat[idx[r, c] + offset]
    (src's physical elements, row-major) over dst's valid window; tmp is scratch."""

    @staticmethod
    def check(c, a):
        _vec(c, a, ("dst", "src", "idx", "tmp"))
        c.same_dtype(dst=a["dst"], src=a["src"])
        c.dtype_in("idx", a["idx"], INDEX_TYPES)
        c.same_dtype(tmp=a["tmp"], idx=a["idx"])
        if a["cmp_mode"] != 0:
            raise NotImplementedError(f"pl.gather(cmp_mode={a['cmp_mode']!r}): only cmp_mode=0 (no comparison)")
        if a["dst"].decl is a["src"].decl:
            c.fail("gather cannot work in place")

    @staticmethod
    def run(ctx, a):
        d, s, idx = ctx.tile(a["dst"]), ctx.tile(a["src"]), ctx.tile(a["idx"])
        rows, cols = window(ctx, d, idx)
        where = idx.read(rows, cols).astype(np.int64) + int(ctx.scalar(a["offset"]))
        _check_flat(ctx, "gather", where, s.shape, "src")
        src_cols = s.shape[1]
        flat = s.read(int(where.max()) // src_cols + 1 if where.size else 0, src_cols).reshape(-1)
        d.write(flat[where], rows, cols)


def _scatter_index_types(dtype: dt.DataType):
    return (dt.DT_INT32, dt.DT_UINT32) if dtype.bits() >= 32 else (dt.DT_INT16, dt.DT_UINT16)


@op("scatter", [Out("dst"), In("src"), In("idx")], "V")
class Scatter:
    """pl.scatter(dst, src, idx): dst_flat[idx[r, c]] = src[r, c] over src's valid window (dst's physical
    elements, row-major); other dst elements keep their values."""

    @staticmethod
    def check(c, a):
        _vec(c, a, ("dst", "src", "idx"))
        c.same_dtype(dst=a["dst"], src=a["src"])
        c.dtype_in("idx", a["idx"], _scatter_index_types(a["src"].dtype))
        if a["dst"].decl is a["src"].decl:
            c.fail("scatter cannot work in place")

    @staticmethod
    def run(ctx, a):
        d, s, idx = ctx.tile(a["dst"]), ctx.tile(a["src"]), ctx.tile(a["idx"])
        rows, cols = window(ctx, s, idx)
        where = idx.read(rows, cols).astype(np.int64)
        _check_flat(ctx, "scatter", where, d.shape, "dst")
        dst_cols = d.shape[1]
        values = s.read(rows, cols)
        if not where.size:
            return
        span = int(where.max()) // dst_cols + 1  # the rows of dst the op writes: kept values elsewhere
        flat = d.read_unreported(span, dst_cols).reshape(-1)
        flat[where.reshape(-1)] = values.reshape(-1)  # numpy assigns in order: the last duplicate wins
        d.write(flat.reshape(span, dst_cols), span, dst_cols)


@op("gathermask", [Out("dst"), In("src"), Arg("pattern_mode", kw_only=True)], "V")
class GatherMask:
    """pl.gathermask(dst, src, *, pattern_mode): dst[:, j] = src[:, j*g + k] over dst's valid window,
    (g, k) = (2, 0) (2, 1) (4, 0) (4, 1) (4, 2) (4, 3) (1, 0) for pattern_mode 1..7."""

    @staticmethod
    def check(c, a):
        _vec(c, a, ("dst", "src"))
        c.same_dtype(dst=a["dst"], src=a["src"])
        mode = a["pattern_mode"]
        if isinstance(mode, bool) or mode not in PATTERNS:
            c.fail(f"pattern_mode must be a compile-time int in 1..7, got {mode!r}")
        if a["dst"].decl is a["src"].decl:
            c.fail("gathermask cannot work in place")

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["dst"]), ctx.tile(a["src"])
        group, first = PATTERNS[a["pattern_mode"]]
        rows, cols = d.valid
        need = (cols - 1) * group + first + 1 if cols else 0
        if rows > s.shape[0] or need > s.shape[1]:
            raise ctx.error(f"pl.gathermask(pattern_mode={a['pattern_mode']}): dst's valid window {rows}x{cols} "
                            f"needs {rows}x{need} of src, which is {s.shape[0]}x{s.shape[1]}")
        d.write(s.read(rows, need)[:, first::group], rows, cols)
