"""Sorting on Vec tiles (docs/language.md; the official pages sorting/sort32, mrgsort, mrgsort2):
``pl.sort32``, ``pl.mrgsort`` and ``pl.mrgsort2``.  Tested in
``tests/pro/test_sorting_and_byte_gather_semantics.py``.

A *record* is 8 bytes: the value (the tile dtype) in its first element, padding (a 16-bit value is
followed by a zero 16-bit word), then the UINT32 index (its raw bits, low half first for 16-bit
tiles).  So a record is 4 elements of a 16-bit tile and 2 of a 32-bit one.  All three ops sort
**descending**, and every comparison uses one order:

* floats compare by value, ``-0 == +0``; a NaN whose sign bit is clear sorts above ``+inf`` and one
  whose sign bit is set below ``-inf`` (the hardware's sign-magnitude order: it pads a short group
  with ``-NaN`` to sink it; ``np.nan`` is a positive NaN);
* **Decision (ties):** equal values keep their order -- the earlier column first in ``sort32``, and
  in a merge the head of the lower-numbered list first (list order = block order for ``mrgsort``,
  argument order ``src0, src1, *extra_srcs`` for ``mrgsort2``), so every sort here is stable.

* ``sort32(dst, src, idx, tmp=None)`` (FP16/FP32 src and dst, UINT32 idx): each row of src's valid
  window is cut into groups of 32 columns (the last may be shorter), each group is sorted and written
  as records to dst (row ``r``, records in column order: ``valid_cols * 8 / elem_bytes`` columns of
  dst).  Record ``k`` carries ``idx[r, c]`` of the value's column ``c``; an idx tile whose valid shape
  has one row serves every row.  **Decision:** a valid width that is not a multiple of 32 needs
  ``tmp`` (the page: the hardware pads the last group there) and raises ``KernelRuntimeError``
  without it; ``tmp`` is never read or written here, and dst gets exactly one record per valid
  value (the hardware writes a whole padded group).
* ``mrgsort(dst, src, *, block_len)`` (one-row tiles, any 16/32-bit dtype): src's valid width is a
  sequence of groups of 4 blocks of ``block_len`` elements (``block_len / (8 / elem_bytes)`` records
  each, each block sorted); each group is merged into one sorted list written at the same columns of
  dst.  **Decision:** a valid width that is not a multiple of ``4 * block_len`` raises
  ``KernelRuntimeError`` (the hardware would leave the rest unwritten).
* ``mrgsort2(src0, src1, dst, tmp, *extra_srcs, exhausted=False)`` (one-row FP16/FP32 tiles): the
  2..4 sources' valid windows (sorted records) are merged; dst's valid width selects how many
  records are written (the first ones).  With ``exhausted=True`` the merge stops as soon as one
  source has no record left (a source without records stops it at once), and only the records merged
  so far are written; the rest of dst keeps its values.  **Decision:** without ``exhausted``, a dst
  asking for more records than the sources hold raises ``KernelRuntimeError``.  ``tmp`` is the
  hardware's scratch (it merges everything there first): checked (dtype, one row, at least dst's
  columns) but never read or written here, so the page's kernel, whose tmp holds half of the merge,
  runs.

Merges are true merges (the largest head wins), so unsorted sources give a deterministic result
too.  A valid width that is not a whole number of records raises ``KernelRuntimeError``.  None of
the ops works in place (``mrgsort2``'s dst may be one of its sources; ``tmp`` may not).
"""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import Layout, MemorySpace

RECORD_BYTES = 8
SORT_GROUP = 32
F16_F32 = (dt.DT_FP16, dt.DT_FP32)
#: mrgsort's "b16, b32"
B16_B32 = (dt.DT_FP16, dt.DT_BF16, dt.DT_INT16, dt.DT_UINT16, dt.DT_FP32, dt.DT_INT32, dt.DT_UINT32)
_UINT_OF = {16: np.uint16, 32: np.uint32}


def record_elems(dtype: dt.DataType) -> int:
    """Elements of one 8-byte value-index record in a tile of ``dtype``."""
    return RECORD_BYTES // dtype.nbytes


def order_key(values: np.ndarray, dtype: dt.DataType) -> np.ndarray:
    """int64 keys whose order is the sort order of ``values`` (storage dtype): floats by sign and
    magnitude bits (so -0 == +0, +NaN above +inf, -NaN below -inf), integers by value."""
    values = np.ascontiguousarray(values)
    if not dtype.is_float():
        return values.astype(np.int64)
    width = dtype.bits()
    bits = values.view(_UINT_OF[width]).astype(np.int64)
    mag = bits & ((1 << (width - 1)) - 1)
    return np.where((bits >> (width - 1)) & 1, -mag, mag)


def _is_descending(keys: np.ndarray) -> bool:
    return bool(np.all(keys[1:] <= keys[:-1])) if keys.size > 1 else True


def merge_records(lists: Sequence[np.ndarray], dtype: dt.DataType, exhausted: bool) -> np.ndarray:
    """Merge record arrays ``lists`` (each ``(n_i, rec)``): the largest head wins, a tie goes to the
    lower-numbered list; with ``exhausted`` the merge stops once a list has no record left."""
    rec = lists[0].shape[1]
    keys = [order_key(x[:, 0], dtype) for x in lists]
    sizes = [len(k) for k in keys]
    if exhausted and min(sizes) == 0:
        return np.empty((0, rec), lists[0].dtype)
    allrec = np.concatenate(lists)
    if all(_is_descending(k) for k in keys):
        # sorted lists: the merge is the stable sort by (-key, list, position)
        lid = np.concatenate([np.full(n, i) for i, n in enumerate(sizes)])
        order = np.lexsort((lid, -np.concatenate(keys)))
        out = allrec[order]
        if exhausted:
            where = np.empty(len(order), np.int64)
            where[order] = np.arange(len(order))
            starts = np.cumsum([0] + sizes)
            cut = min(int(where[starts[i + 1] - 1]) for i in range(len(sizes))) + 1
            out = out[:cut]
        return out
    # unsorted lists: the merge itself
    starts = np.cumsum([0] + sizes)
    heads = [0] * len(lists)
    picks: List[int] = []
    lk = [k.tolist() for k in keys]
    while True:
        best = -1
        for i, k in enumerate(lk):
            if heads[i] < sizes[i] and (best < 0 or k[heads[i]] > lk[best][heads[best]]):
                best = i
        if best < 0:
            break
        picks.append(int(starts[best]) + heads[best])
        heads[best] += 1
        if exhausted and heads[best] == sizes[best]:
            break
    return allrec[np.asarray(picks, dtype=np.int64)]


def _vec_nd(c, a, names) -> None:
    """Vec tiles in row-major (ND) layout, as the pages require."""
    for n in names:
        t = a[n]
        c.space(n, t, MemorySpace.Vec)
        if t.layout != Layout.ND:
            c.fail(f"'{n}' must be a row-major (pl.ND) tile, got layout {t.layout.name}")


def _one_row(c, name: str, tile) -> None:
    shape = tile.static_shape
    if shape is not None and shape[0] != 1:
        c.fail(f"'{name}' must be a one-row tile, got shape {list(shape)}")


def _records_of(ctx, op_name: str, role: str, cols: int, dtype: dt.DataType) -> int:
    """Records in ``cols`` elements; raises unless they are whole records."""
    rec = record_elems(dtype)
    if cols % rec:
        raise ctx.error(f"pl.{op_name}: {role}'s valid width {cols} is not a whole number of 8-byte records "
                        f"({rec} {dtype.name} elements each)")
    return cols // rec


@op("sort32", [Out("dst"), In("src"), In("idx"), Out("tmp", default=None)], "V", cost="sort")
class Sort32:
    """pl.sort32(dst, src, idx, tmp=None): every 32-column group of src's rows sorted descending into
    8-byte (value, idx) records in dst; tmp is required when the valid width is not a multiple of 32."""

    @staticmethod
    def check(c, a):
        _vec_nd(c, a, ("dst", "src", "idx"))
        c.dtype_in("src", a["src"], F16_F32)
        c.same_dtype(dst=a["dst"], src=a["src"])
        c.dtype_in("idx", a["idx"], (dt.DT_UINT32,))
        if a["tmp"] is not None:
            c.space("tmp", a["tmp"], MemorySpace.Vec)
            c.same_dtype(tmp=a["tmp"], src=a["src"])
        c.not_in_place(a["dst"], a["src"])

    @staticmethod
    def run(ctx, a):
        d, s, ix = ctx.tile(a["dst"]), ctx.tile(a["src"]), ctx.tile(a["idx"])
        rows, cols = s.valid
        if rows <= 0 or cols <= 0:
            return
        if cols % SORT_GROUP and a["tmp"] is None:
            raise ctx.error(f"pl.sort32: src's valid width {cols} is not a multiple of 32; the last group "
                            "needs the tmp tile")
        rec = record_elems(s.dtype)
        if rows > d.shape[0] or cols * rec > d.shape[1]:
            raise ctx.error(f"pl.sort32: dst ({d.shape[0]}x{d.shape[1]}) cannot hold {rows}x{cols * rec} "
                            f"elements of records ({rows}x{cols} values, {rec} {s.dtype.name} elements each)")
        shared = ix.valid[0] == 1
        irows = 1 if shared else rows
        if irows > ix.shape[0] or cols > ix.shape[1]:
            raise ctx.error(f"pl.sort32: idx ({ix.shape[0]}x{ix.shape[1]}) is smaller than the {irows}x{cols} "
                            "indices needed")
        values = s.read(rows, cols)
        index = np.broadcast_to(ix.read(irows, cols).astype(np.uint32), (rows, cols))
        key = order_key(values, s.dtype)
        group = np.broadcast_to(np.arange(cols) // SORT_GROUP, (rows, cols))
        order = np.lexsort((-key, group), axis=-1)
        vbits = np.take_along_axis(values, order, axis=1).view(_UINT_OF[s.dtype.bits()])
        ibits = np.take_along_axis(index, order, axis=1)
        if rec == 2:
            out = np.stack([vbits, ibits], axis=-1)
        else:
            zero = np.zeros_like(vbits)
            out = np.stack([vbits, zero, (ibits & 0xFFFF).astype(np.uint16), (ibits >> 16).astype(np.uint16)], -1)
        d.write(out.reshape(rows, cols * rec).view(s.dtype.require_numpy()), rows, cols * rec)


@op("mrgsort", [Out("dst"), In("src"), Arg("block_len", kw_only=True)], "V", cost="sort")
class MrgSort:
    """pl.mrgsort(dst, src, *, block_len): each group of 4 sorted blocks of block_len elements (8-byte
    records) of src's one row merged into one sorted list at the same columns of dst."""

    @staticmethod
    def check(c, a):
        _vec_nd(c, a, ("dst", "src"))
        c.dtype_in("src", a["src"], B16_B32)
        c.same_dtype(dst=a["dst"], src=a["src"])
        _one_row(c, "src", a["src"])
        c.same_shape(dst=a["dst"], src=a["src"])
        bl, rec = a["block_len"], record_elems(a["src"].dtype)
        if isinstance(bl, bool) or not isinstance(bl, int) or bl <= 0 or bl % rec:
            c.fail(f"block_len must be a compile-time positive int, a multiple of {rec} ({a['src'].dtype.name} "
                   f"elements per 8-byte record), got {bl!r}")
        c.not_in_place(a["dst"], a["src"])

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["dst"]), ctx.tile(a["src"])
        bl, rec = a["block_len"], record_elems(s.dtype)
        cols = s.valid[1] if s.valid[0] > 0 else 0
        if cols % (4 * bl):
            raise ctx.error(f"pl.mrgsort: src's valid width {cols} is not a multiple of 4 * block_len "
                            f"({4 * bl}): it merges groups of 4 blocks")
        if cols == 0:
            return
        if cols > d.shape[1]:
            raise ctx.error(f"pl.mrgsort: dst (1x{d.shape[1]}) is narrower than src's valid width {cols}")
        per = bl // rec
        groups = s.read(1, cols).reshape(cols // (4 * bl), 4, per, rec)
        out = np.concatenate([merge_records(list(g), s.dtype, False) for g in groups])
        d.write(out.reshape(1, cols), 1, cols)


@op("mrgsort2", [In("src0"), In("src1"), Out("dst"), Out("tmp"), In("extra_srcs", "tile_list", var=True),
                 Arg("exhausted", default=False, kw_only=True)], "V", cost="sort")
class MrgSort2:
    """pl.mrgsort2(src0, src1, dst, tmp, *extra_srcs, exhausted=False): 2..4 sorted one-row record
    lists merged; the first dst.valid_cols / record elements records written to dst."""

    @staticmethod
    def check(c, a):
        extra = list(a["extra_srcs"])
        if len(extra) > 2:
            c.fail(f"takes 2 to 4 sources (src0, src1 and at most 2 extra_srcs), got {2 + len(extra)}")
        names = {"src0": a["src0"], "src1": a["src1"], "dst": a["dst"], "tmp": a["tmp"]}
        names.update({f"extra_srcs[{i}]": t for i, t in enumerate(extra)})
        _vec_nd(c, names, list(names))
        c.dtype_in("src0", a["src0"], F16_F32)
        c.same_dtype(**names)
        for n, t in names.items():
            _one_row(c, n, t)
        exhausted = a["exhausted"]
        if not isinstance(exhausted, (bool, np.bool_)):
            c.fail(f"exhausted must be a compile-time bool, got {exhausted!r}")
        ts, ds = a["tmp"].static_shape, a["dst"].static_shape
        if ts is not None and ds is not None and ts[1] < ds[1]:
            c.fail(f"'tmp' has {ts[1]} columns, fewer than dst's {ds[1]}")
        for n in ["src0", "src1"] + [f"extra_srcs[{i}]" for i in range(len(extra))]:
            if names[n].decl is a["tmp"].decl:
                c.fail(f"'tmp' cannot be the same tile as '{n}'")

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        srcs = [ctx.tile(t) for t in [a["src0"], a["src1"]] + list(a["extra_srcs"])]
        dtype, rec = d.dtype, record_elems(d.dtype)
        lists = []
        for i, s in enumerate(srcs):
            cols = s.valid[1] if s.valid[0] > 0 else 0
            role = f"src{i}" if i < 2 else f"extra_srcs[{i - 2}]"
            n = _records_of(ctx, "mrgsort2", role, cols, dtype)
            lists.append(s.read(1, cols).reshape(n, rec) if n else np.empty((0, rec), dtype.require_numpy()))
        want = _records_of(ctx, "mrgsort2", "dst", d.valid[1] if d.valid[0] > 0 else 0, dtype)
        total = sum(len(x) for x in lists)
        exhausted = bool(a["exhausted"])
        if not exhausted and want > total:
            raise ctx.error(f"pl.mrgsort2: dst's valid width asks for {want} records but the sources hold "
                            f"{total}")
        merged = merge_records(lists, dtype, exhausted)
        n = min(want, len(merged))
        if n:
            d.write(merged[:n].reshape(1, n * rec), 1, n * rec)
