"""Index- and pattern-driven selection on Vec tiles (docs/language.md): ``pl.gather``, ``pl.scatter``,
``pl.gathermask``, ``pl.gatherb`` and ``pl.histogram``, following their official pages (tested in
``tests/pro/test_math_and_gather_semantics.py`` and, for gatherb and histogram,
``tests/pro/test_sorting_and_byte_gather_semantics.py``).

* ``gather(out, src, idx, tmp, *, cmp_mode=0, offset=0)``: ``out[r, c] = src_flat[idx[r, c] + offset]``
  over ``out``'s valid window, ``src_flat`` being ``src``'s physical elements in row-major order.  The
  hardware leaves an index outside ``src`` undefined; here it is a ``KernelRuntimeError``.  ``tmp`` is
  the hardware's scratch (never read here); ``cmp_mode`` must stay 0 in this form.
* ``gather(dst, src, k_value, cdst, tmp, *, cmp_mode, offset=0)`` (the compare form, five tiles; they
  bind to the parameters ``dst, src, idx, tmp, scratch``): for each row ``r`` of src's valid window,
  the flat indices ``offset + r * src_cols + c`` of the elements ``src[r, c]`` that compare true with
  ``k = k_value_flat[r]`` -- ``cmp_mode=4`` (``pl.CmpMode.GT``): ``src > k``, ``cmp_mode=0`` (EQ):
  ``src == k`` -- are written in column order to ``dst[r, 0:n]``, and ``cdst_flat[r]`` receives ``4 * n``,
  the bytes written (the hardware's convention).  dst is INT32/UINT32, src INT16/UINT16/INT32/UINT32/
  FP16/FP32, k_value UINT16/UINT32, cdst INT32/UINT32; ``tmp`` is scratch.  **Decisions:** float sources
  compare in FP32 with k converted to FP32; integer sources compare their bit patterns as unsigned
  numbers with k (as the 950 implementation does); at most dst's valid width of indices is written
  per row (n counts those) and dst's other elements keep their values; other cmp_modes, which the
  hardware does not have, are a KernelTypeError.
* ``scatter(out, src, idx)``: ``out_flat[idx[r, c]] = src[r, c]`` over ``src``'s valid window (its
  inverse); other elements of ``out`` keep their values; a repeated index keeps the last write in
  row-major order (the hardware leaves conflicts undefined); an index outside ``out`` raises.  Data
  and index widths pair as the hardware's: 32/64-bit data with INT32/UINT32, 8/16-bit with INT16/UINT16.
* ``gathermask(out, src, *, pattern_mode)``: ``out[:, j]`` is ``src[:, j*g + k]`` with ``(g, k)`` the
  pattern's group and kept column (1/2: every 2nd column from 0/1; 3..6: every 4th from 0..3; 7: all).
* ``gatherb(out, src, offsets)`` (8/16/32-bit data, UINT32 offsets, row-major out and src):
  ``out[r, 32*c/e : 32*(c+1)/e]`` (``e`` = element bytes) is the 32 bytes of src starting at byte
  ``offsets[r, c]``, src's bytes being its physical elements in row-major order.  **Decision:** any byte
  offset whose block lies inside src works (the bytes are copied as they are, even across elements); a
  block reaching past src's last byte raises ``KernelRuntimeError`` (undefined on hardware), as does a
  valid width of out that is not a whole number of 32-byte blocks.  The simulator counts the rows of
  src the blocks touch as read.
* ``histogram(dst, src, idx, *, is_msb)`` (UINT16/UINT32 src, UINT8 idx, UINT32 dst with at least 256
  columns): for each row of src's valid window, ``dst[r, b]`` is the number of its elements whose
  selected byte is ``<= b`` -- the cumulative histogram, as the page's printed rows show (``dst[r, 255]``
  counts every element that passed the filter).  ``is_msb=True`` selects the top byte (bits 15-8 or
  31-24), no filter, idx not read.  ``is_msb=False`` selects bits 7-0 of the elements whose upper bytes
  match idx: UINT16 keeps row ``r``'s elements with top byte ``idx[r, 0]`` (idx ``[rows, 1]``, DN on the
  page); UINT32 keeps those with bits 31-24 = ``idx[0, 0]``, 23-16 = ``idx[1, 0]`` and 15-8 =
  ``idx[2, 0]`` (idx has 3 rows), one filter for every row.  Columns of dst past 255 are not written.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import Layout, MemorySpace
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


#: the compare form's cmp_mode values (pl.CmpMode.EQ, pl.CmpMode.GT) and their names
CMP_MODES = {0: "EQ", 4: "GT"}
CMP_SOURCES = (dt.DT_INT16, dt.DT_UINT16, dt.DT_INT32, dt.DT_UINT32, dt.DT_FP16, dt.DT_FP32)
CMP_INDEX = (dt.DT_INT32, dt.DT_UINT32)


def is_compare_form(args) -> bool:
    """Whether a bound ``gather`` call is the five-tile compare form."""
    return args.get("scratch") is not None


@op("gather", [Out("dst"), In("src"), In("idx"), Out("tmp"), Out("scratch", default=None),
               Arg("cmp_mode", default=0, kw_only=True), Arg("offset", "scalar", default=0, kw_only=True)], "V", cost="permute")
class Gather:
    """pl.gather(dst, src, idx, tmp, *, cmp_mode=0, offset=0): dst[r, c] = src_flat[idx[r, c] + offset]
    (src's physical elements, row-major) over dst's valid window; tmp is scratch.
    pl.gather(dst, src, k_value, cdst, tmp, *, cmp_mode, offset=0): per row r, the flat indices
    (offset + r * src_cols + c) of src's elements > k (cmp_mode=4) or == k (cmp_mode=0), k = k_value_flat[r],
    into dst[r, :n]; cdst_flat[r] = 4 * n."""

    @staticmethod
    def check(c, a):
        if is_compare_form(a):
            _check_compare(c, a)
            return
        _vec(c, a, ("dst", "src", "idx", "tmp"))
        c.same_dtype(dst=a["dst"], src=a["src"])
        c.dtype_in("idx", a["idx"], INDEX_TYPES)
        c.same_dtype(tmp=a["tmp"], idx=a["idx"])
        if a["cmp_mode"] != 0:
            c.fail(f"cmp_mode={a['cmp_mode']!r} needs the compare form gather(dst, src, k_value, cdst, tmp, "
                   f"cmp_mode=...); the index form takes cmp_mode=0")
        c.not_in_place(a["dst"], a["src"])

    @staticmethod
    def run(ctx, a):
        if is_compare_form(a):
            _run_compare(ctx, a)
            return
        d, s, idx = ctx.tile(a["dst"]), ctx.tile(a["src"]), ctx.tile(a["idx"])
        rows, cols = window(ctx, d, idx)
        where = idx.read(rows, cols).astype(np.int64) + int(ctx.scalar(a["offset"]))
        _check_flat(ctx, "gather", where, s.shape, "src")
        src_cols = s.shape[1]
        flat = s.read(int(where.max()) // src_cols + 1 if where.size else 0, src_cols).reshape(-1)
        d.write(flat[where], rows, cols)


def _check_compare(c, a) -> None:
    names = {"dst": "dst", "src": "src", "idx": "k_value", "tmp": "cdst", "scratch": "tmp"}
    for param, shown in names.items():
        if a[param].space != MemorySpace.Vec:
            c.fail(f"'{shown}' must be a Vec tile, got a {a[param].space.name} tile")
    mode = a["cmp_mode"]
    if isinstance(mode, bool) or int(mode) not in CMP_MODES:
        c.fail(f"the compare form takes cmp_mode=0 (EQ) or cmp_mode=4 (GT), got {mode!r}")
    a["cmp_mode"] = int(mode)
    for param, allowed in (("dst", CMP_INDEX), ("src", CMP_SOURCES), ("idx", (dt.DT_UINT16, dt.DT_UINT32)),
                           ("tmp", CMP_INDEX)):
        if a[param].dtype not in allowed:
            c.fail(f"'{names[param]}' has dtype {a[param].dtype.name}; supported: "
                   f"{', '.join(d.name for d in allowed)}")
    if a["dst"].decl is a["src"].decl:
        c.fail("the compare form cannot write its indices over src")


def compare_hits(values: np.ndarray, k, src_dtype: dt.DataType, mode: int) -> np.ndarray:
    """Which of ``values`` (one row of src, stored dtype) compare true with threshold ``k`` (an int)."""
    if src_dtype.is_float():
        x, kk = values.astype(np.float32), np.float32(k)
    else:
        x = values.view(src_dtype.require_numpy()).astype(np.int64) & ((1 << src_dtype.bits()) - 1)
        kk = np.int64(k)
    return x > kk if CMP_MODES[mode] == "GT" else x == kk


def _run_compare(ctx, a) -> None:
    d, s, kt, cnt = (ctx.tile(a[n]) for n in ("dst", "src", "idx", "tmp"))
    rows, cols = s.valid
    src_cols = s.shape[1]
    dst_cols = d.valid[1]
    if rows > d.shape[0]:
        raise ctx.error(f"pl.gather: dst {d.name} has {d.shape[0]} rows, fewer than src's {rows} valid rows")
    for what, view in (("k_value", kt), ("cdst", cnt)):
        if rows > view.shape[0] * view.shape[1]:
            raise ctx.error(f"pl.gather: {what} {view.name} holds {view.shape[0] * view.shape[1]} values, fewer "
                            f"than src's {rows} valid rows (one per row)")
    x = s.read(rows, cols)
    k_rows = -(-rows // kt.shape[1]) if rows else 0
    ks = kt.read(k_rows, kt.shape[1]).reshape(-1)[:rows].astype(np.int64)
    base = int(ctx.scalar(a["offset"]))
    out = d.read_unreported(rows, dst_cols) if rows and dst_cols else np.zeros((rows, dst_cols), d.dtype.require_numpy())
    counts = []
    for r in range(rows):
        hits = np.nonzero(compare_hits(x[r], int(ks[r]), s.dtype, a["cmp_mode"]))[0][:dst_cols]
        out[r, :len(hits)] = (base + r * src_cols + hits).astype(np.int64)
        counts.append(len(hits) * d.dtype.nbytes)
    d.write(out, rows, dst_cols)
    c_rows = -(-rows // cnt.shape[1]) if rows else 0
    flat = cnt.read_unreported(c_rows, cnt.shape[1]).reshape(-1)
    flat[:rows] = counts
    cnt.write(flat.reshape(c_rows, cnt.shape[1]), c_rows, cnt.shape[1])


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
        c.not_in_place(a["dst"], a["src"])

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
        c.not_in_place(a["dst"], a["src"])

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


GATHERB_BLOCK = 32
#: "b8, b16, b32": every 1-, 2- or 4-byte dtype (the bytes are moved, never interpreted)
GATHERB_TYPES = tuple(d for d in dt.ALL_DTYPES if d.bits() in (8, 16, 32))


def _row_major(c, a, names):
    for n in names:
        if a[n].layout != Layout.ND:
            c.fail(f"'{n}' must be a row-major (pl.ND) tile, got layout {a[n].layout.name}")


@op("gatherb", [Out("out"), In("src"), In("offsets")], "V", cost="permute")
class GatherB:
    """pl.gatherb(out, src, offsets): out's row r, block c (32 bytes) = the 32 bytes of src at byte
    offsets[r, c] (src's physical elements, row-major)."""

    @staticmethod
    def check(c, a):
        _vec(c, a, ("out", "src", "offsets"))
        _row_major(c, a, ("out", "src"))
        c.dtype_in("src", a["src"], GATHERB_TYPES)
        c.same_dtype(out=a["out"], src=a["src"])
        c.dtype_in("offsets", a["offsets"], (dt.DT_UINT32,))
        c.not_in_place(a["out"], a["src"])

    @staticmethod
    def run(ctx, a):
        d, s, off = ctx.tile(a["out"]), ctx.tile(a["src"]), ctx.tile(a["offsets"])
        es = s.dtype.nbytes
        per = GATHERB_BLOCK // es
        rows, cols = d.valid
        if rows <= 0 or cols <= 0:
            return
        if cols % per:
            raise ctx.error(f"pl.gatherb: out's valid width {cols} is not a whole number of 32-byte blocks "
                            f"({per} {s.dtype.name} elements each)")
        nb = cols // per
        if rows > off.shape[0] or nb > off.shape[1]:
            raise ctx.error(f"pl.gatherb: offsets ({off.shape[0]}x{off.shape[1]}) is smaller than the "
                            f"{rows}x{nb} blocks of out's valid window")
        where = off.read(rows, nb).astype(np.int64)
        src_rows, src_cols = s.shape
        total = src_rows * src_cols * es
        bad = where + GATHERB_BLOCK > total
        if bad.any():
            r, col = (int(v[0]) for v in np.nonzero(bad))
            raise ctx.error(f"pl.gatherb: the 32-byte block at byte offset {int(where[r, col])} (offsets[{r}, {col}]) "
                            f"reaches past src's {total} bytes")
        row_bytes = src_cols * es
        touched = np.zeros(src_rows + 1, np.int64)  # +1 at each block's first row, -1 after its last
        np.add.at(touched, where.reshape(-1) // row_bytes, 1)
        np.add.at(touched, (where.reshape(-1) + GATHERB_BLOCK - 1) // row_bytes + 1, -1)
        used = np.cumsum(touched[:-1]) > 0
        data = np.zeros(total, np.uint8)
        r0 = None
        for r in range(src_rows + 1):  # read each run of touched rows once (the simulator sees exactly those)
            if r < src_rows and used[r]:
                r0 = r if r0 is None else r0
            elif r0 is not None:
                part = s.sub(r0, r, 0, src_cols, (r - r0, src_cols)).read()
                data[r0 * row_bytes:r * row_bytes] = np.ascontiguousarray(part).view(np.uint8).reshape(-1)
                r0 = None
        blocks = data[where[:, :, None] + np.arange(GATHERB_BLOCK)]
        d.write(np.ascontiguousarray(blocks).view(s.dtype.require_numpy()).reshape(rows, cols), rows, cols)


HIST_BINS = 256


@op("histogram", [Out("dst"), In("src"), In("idx"), Arg("is_msb", kw_only=True)], "V", cost="histogram")
class Histogram:
    """pl.histogram(dst, src, idx, *, is_msb): dst[r, b] = how many elements of src's row r have their
    selected byte <= b (top byte, or the low byte of the elements whose upper bytes match idx)."""

    @staticmethod
    def check(c, a):
        _vec(c, a, ("dst", "src", "idx"))
        _row_major(c, a, ("dst", "src"))
        c.dtype_in("dst", a["dst"], (dt.DT_UINT32,))
        c.dtype_in("src", a["src"], (dt.DT_UINT16, dt.DT_UINT32))
        c.dtype_in("idx", a["idx"], (dt.DT_UINT8,))
        if not isinstance(a["is_msb"], (bool, np.bool_)):
            c.fail(f"is_msb must be a compile-time bool, got {a['is_msb']!r}")
        shape = a["dst"].static_shape
        if shape is not None and shape[1] < HIST_BINS:
            c.fail(f"'dst' needs at least {HIST_BINS} columns (one per byte value), got shape {list(shape)}")

    @staticmethod
    def run(ctx, a):
        d, s, ix = ctx.tile(a["dst"]), ctx.tile(a["src"]), ctx.tile(a["idx"])
        rows, cols = s.valid
        if rows <= 0:
            return
        if rows > d.shape[0] or d.shape[1] < HIST_BINS:
            raise ctx.error(f"pl.histogram: dst ({d.shape[0]}x{d.shape[1]}) cannot hold {rows}x{HIST_BINS} bins")
        msb = bool(a["is_msb"])
        wide = s.dtype == dt.DT_UINT32
        need = 0 if msb else (3 if wide else rows)
        if need > ix.shape[0]:
            raise ctx.error(f"pl.histogram: idx has {ix.shape[0]} rows; {need} are needed")
        v = s.read(rows, cols).astype(np.int64) if cols > 0 else np.zeros((rows, 0), np.int64)
        top = v >> (24 if wide else 8)
        if msb:
            byte, keep = top, np.ones(v.shape, bool)
        else:
            byte = v & 0xFF
            f = ix.read(need, 1)[:, 0].astype(np.int64)
            if wide:
                keep = (top == f[0]) & (((v >> 16) & 0xFF) == f[1]) & (((v >> 8) & 0xFF) == f[2])
            else:
                keep = top == f[:, None]
        flat = (byte + HIST_BINS * np.arange(rows)[:, None])[keep]
        counts = np.bincount(flat, minlength=rows * HIST_BINS).reshape(rows, HIST_BINS)
        d.write(np.cumsum(counts, axis=1).astype(np.uint32), rows, HIST_BINS)
