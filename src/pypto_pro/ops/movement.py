"""Data movement between GM and tiles and between tiles (docs/language.md "Semantics of ops").

``load``/``store`` move only the tile's valid window; an N-D tensor maps onto the 2-D tile through
``order`` (tile dim 0 -> axis order[0], dim 1 -> axis order[1], other axes pinned at their offset).
Every GM access is bounds-checked before anything is written: a window that leaves the tensor
raises ``KernelRuntimeError`` naming the axis and the fix (set the valid shape for tails).
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import TensorParam
from ..ir.optable import Arg, In, InOut, Out, op
from ..ir.types import AccToVecMode, AtomicType, Layout, MemorySpace
from . import fixpipe, gm_mx
from .common import write_result

M = MemorySpace


# --------------------------------------------------------------------------- GM windows
def _check_gm_args(c, tensor: TensorParam, tile, offsets, order, store: bool):
    if len(offsets) != tensor.ndim:
        c.fail(f"'offsets' has {len(offsets)} entries but tensor '{tensor.name}' has {tensor.ndim} axes")
    for i, o in enumerate(offsets):
        if isinstance(o, (int, float)) and not isinstance(o, bool):
            if o < 0:
                c.fail(f"offset {o} on axis {i} is negative")
            dim = tensor.dims[i]
            if isinstance(dim, int) and o >= dim:
                c.fail(f"offset {o} on axis {i} is outside tensor '{tensor.name}' (dim {dim})")
    if order is not None:
        if (not isinstance(order, (list, tuple)) or len(order) != 2 or len(set(order)) != 2
                or not all(isinstance(a, int) and -tensor.ndim <= a < tensor.ndim for a in order)):
            c.fail(f"'order' must name two distinct axes of the {tensor.ndim}-D tensor, got {order!r}")
        if store and _norm(order, tensor.ndim)[0] > _norm(order, tensor.ndim)[1]:
            c.fail("store order must be ascending (no transposed store)")
    if tensor.ndim == 1 and tile.static_shape is not None and tile.static_shape[0] != 1:
        c.fail(f"a 1-D tensor maps onto a [1, C] tile, got a {list(tile.static_shape)} tile")


def _norm(order, ndim):
    return [a % ndim for a in order]


def gm_window(ctx, arr: np.ndarray, param: TensorParam, offsets: List, order, rows: int, cols: int, what: str):
    """(index tuple, transposed) addressing a ``rows x cols`` window of ``arr``; raises when out of bounds."""
    ndim = arr.ndim
    offs = [int(ctx.scalar(o)) for o in offsets]
    if order is None:
        a0, a1 = (ndim - 2, ndim - 1) if ndim >= 2 else (None, 0)
    else:
        a0, a1 = _norm(order, ndim)
    if a0 is None and rows > 1:
        raise ctx.error(f"{what}: a 1-D tensor '{param.name}' cannot fill {rows} tile rows")
    index = []
    for ax in range(ndim):
        o, size = offs[ax], arr.shape[ax]
        ext = rows if ax == a0 else cols if ax == a1 else None
        if o < 0:
            raise ctx.error(f"{what}: offset {o} on axis {ax} of tensor '{param.name}' is negative")
        if ext is None:
            if o >= size:
                raise ctx.error(f"{what}: offset {o} on axis {ax} is outside tensor '{param.name}' of shape "
                                f"{list(arr.shape)}")
            index.append(o)
        else:
            if o + ext > size:
                raise ctx.error(
                    f"{what}: the tile window [{o}, {o + ext}) on axis {ax} exceeds tensor '{param.name}' of shape "
                    f"{list(arr.shape)}; for tails set the tile's valid shape (pl.set_validshape) before the access")
            index.append(slice(o, o + ext))
    return tuple(index), (a0 is not None and a0 > a1), ndim == 1


def gm_pieces(ctx, arr: np.ndarray, param: TensorParam, offsets: List, order, rows: int, cols: int, what: str):
    """``gm_window`` as a list of ``(index, first tile row, end tile row)`` pieces, plus ``transposed`` and
    ``one_d``.  Tile rows that run past the end of their axis continue on the next index of the axis
    outside it when that axis steps over the whole row axis (contiguous axes): GM is addressed by strides,
    so a ``[256, D]`` tile loaded at ``[b, s, 0, 0]`` with ``order=[2, 3]`` from ``[B, S, 64, D]`` reads
    64 heads of four consecutive positions ``s`` (official lightning indexer).  Elsewhere as gm_window."""
    ndim = arr.ndim
    a0, a1 = ((ndim - 2, ndim - 1) if ndim >= 2 else (None, 0)) if order is None else _norm(order, ndim)
    offs = [int(ctx.scalar(o)) for o in offsets]
    if (a0 is None or a1 is None or not 0 < a0 < a1 or len(offs) != ndim or rows <= 0 or offs[a0] < 0
            or offs[a0] + rows <= arr.shape[a0] or arr.strides[a0 - 1] != arr.shape[a0] * arr.strides[a0]):
        index, transposed, one_d = gm_window(ctx, arr, param, offsets, order, rows, cols, what)
        return [(index, 0, rows)], transposed, one_d
    size, pieces, r = arr.shape[a0], [], 0
    while r < rows:
        at = offs[a0] + r
        n = min(rows - r, size - at % size)
        sub = list(offs)
        sub[a0 - 1] += at // size
        sub[a0] = at % size
        index, transposed, one_d = gm_window(ctx, arr, param, sub, [a0, a1], n, cols, what)
        pieces.append((index, r, r + n))
        r += n
    return pieces, transposed, one_d


def _gm_read(ctx, arr, index, transposed, one_d):
    vals = arr[index]
    if one_d:
        vals = vals[None, :]
    return vals.T if transposed else vals


def _scaled_offsets(ctx, offsets, tile_shape, ndim, order):
    a0, a1 = (ndim - 2, ndim - 1) if order is None else _norm(order, ndim)
    out = list(offsets)
    if ndim >= 2:
        out[a0] = ctx.scalar(out[a0]) * tile_shape[0]
    out[a1] = ctx.scalar(out[a1]) * tile_shape[1]
    return out


# --------------------------------------------------------------------------- load
def reinterprets(tile_dtype: dt.DataType, tensor_dtype: dt.DataType) -> bool:
    """Whether a load/store between a tile and a GM tensor of these different dtypes copies the bits
    unchanged: loads and stores move b8/b16/b32/b64 data (load.md/store.md), so two dtypes of one width
    reinterpret each other (an INT32 mask tensor loaded into a UINT32 tile).  Packed 4-bit GM formats and
    4-bit tiles are excluded (their GM bytes hold two elements)."""
    return (tile_dtype != tensor_dtype and tile_dtype.bits() == tensor_dtype.bits() >= 8
            and not dt.is_packed_gm(tile_dtype) and not dt.is_packed_gm(tensor_dtype))


def _bits_as(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` reinterpreted, element by element, as ``dtype`` of the same width."""
    return values if values.dtype == dtype else values.view(dtype)


def _load_check(c, a, tile_units: bool = False):
    c.space("dst", a["dst"], M.Vec, M.Mat)
    if a["dst"].dtype != a["src"].dtype and not reinterprets(a["dst"].dtype, a["src"].dtype):
        c.fail(f"tile dtype {a['dst'].dtype.name} differs from tensor '{a['src'].name}' dtype {a['src'].dtype.name} "
               f"(a load copies bits: only a dtype of the same width reinterprets them)")
    _check_gm_args(c, a["src"], a["dst"], a["offsets"], a["order"], store=False)
    if gm_mx.is_packed(a["src"]):
        gm_mx.check_packed_load(c, a, tile_units)
    elif gm_mx.is_mx_scale_load(a["dst"], a["src"]):
        gm_mx.check_mx_scale_load(c, a)


def _load_run(ctx, a, tile_units: bool):
    if gm_mx.is_packed(a["src"]):
        gm_mx.load_packed(ctx, a)
        return
    if gm_mx.is_mx_scale_load(a["dst"], a["src"]):
        gm_mx.load_mx_scale(ctx, a, tile_units, gm_window)
        return
    d = ctx.tile(a["dst"])
    arr = ctx.tensor(a["src"])
    rows, cols = d.valid
    offsets = _scaled_offsets(ctx, a["offsets"], d.shape, arr.ndim, a["order"]) if tile_units else a["offsets"]
    pieces, transposed, one_d = gm_pieces(ctx, arr, a["src"], offsets, a["order"], rows, cols,
                                          "pl.load_tile" if tile_units else "pl.load")
    if rows and cols:
        parts = []
        for index, _, _ in pieces:
            ctx.note_gm(a["src"], index, write=False)
            parts.append(_gm_read(ctx, arr, index, transposed, one_d))
        vals = parts[0] if len(parts) == 1 else np.concatenate(parts)
        if a["dst"].dtype != a["src"].dtype:
            vals = _bits_as(vals, d.storage_dtype)
        d.write(vals, rows, cols)


_LOAD_PARAMS = [Out("dst"), In("src", "tensor"), Arg("offsets", "index_list"), Arg("order", default=None, kw_only=True)]


@op("load", _LOAD_PARAMS, "MTE2")
class Load:
    """pl.load(dst, tensor, offsets, *, order=None): GM -> Vec/Mat tile (MTE2), element offsets per tensor axis;
    moves dst's valid window; ``order=[a0, a1]`` picks the tensor axes of tile rows/cols (descending = transposed)."""

    check = staticmethod(_load_check)

    @staticmethod
    def run(ctx, a):
        _load_run(ctx, a, tile_units=False)


@op("load_tile", [Out("dst"), In("src", "tensor"), Arg("tile_offsets", "index_list"),
                  Arg("order", default=None, kw_only=True)], "MTE2")
class LoadTile:
    """pl.load_tile(dst, tensor, tile_offsets, *, order=None): like load, with the two order axes' offsets in units
    of the tile's physical shape."""

    @staticmethod
    def check(c, a):
        _load_check(c, {**a, "offsets": [0] * len(a["tile_offsets"])}, tile_units=True)
        if len(a["tile_offsets"]) != a["src"].ndim:
            c.fail(f"'tile_offsets' needs {a['src'].ndim} entries")

    @staticmethod
    def run(ctx, a):
        _load_run(ctx, {**a, "offsets": a["tile_offsets"]}, tile_units=True)


# --------------------------------------------------------------------------- store
def _store_check(c, a, offsets_name):
    src, t = a["src"], a["dst"]
    gm_mx.reject_packed_store(c, t)
    c.space("src", src, M.Vec, M.Acc)
    if t.layout == Layout.NZ and src.space != M.Acc:
        c.fail(f"tensor '{t.name}' is an NZ GM tensor: it is written from an Acc tile (the fixpipe lays the "
               f"result out as fractals), not from a {src.space.name} tile")
    if src.space == M.Acc:
        fixpipe.check(c, src.dtype, t.dtype, a["relu_pre_mode"], a["scale"], phase=a["phase"])
    else:
        if src.dtype != t.dtype and not reinterprets(src.dtype, t.dtype):
            c.fail(f"tile dtype {src.dtype.name} differs from tensor '{t.name}' dtype {t.dtype.name}; cast first "
                   f"(a store copies bits: only a dtype of the same width reinterprets them)")
        if a["relu_pre_mode"] is not None or a["scale"] is not None:
            c.fail("relu_pre_mode/scale apply only to stores from an Acc tile")
    _check_gm_args(c, t, src, [0] * len(a[offsets_name]) if offsets_name == "tile_offsets" else a[offsets_name],
                   a["order"], store=True)
    if len(a[offsets_name]) != t.ndim:
        c.fail(f"'{offsets_name}' needs {t.ndim} entries")
    if AtomicType(a["atomic"]) not in (AtomicType.AtomicNone, AtomicType.AtomicAdd):
        c.fail(f"unknown atomic mode {a['atomic']!r}")


def _store_run(ctx, a, tile_units: bool):
    s = ctx.tile(a["src"])
    arr = ctx.tensor(a["dst"])
    rows, cols = s.valid
    offsets = a["tile_offsets"] if tile_units else a["offsets"]
    if tile_units:
        offsets = _scaled_offsets(ctx, offsets, s.shape, arr.ndim, a["order"])
    what = "pl.store_tile" if tile_units else "pl.store"
    pieces, _, one_d = gm_pieces(ctx, arr, a["dst"], offsets, a["order"], rows, cols, what)
    if not rows or not cols:
        return
    tile_vals = s.read(rows, cols)
    for index, r0, r1 in pieces:
        _store_piece(ctx, a, s, arr, index, one_d, tile_vals[r0:r1])


def _store_piece(ctx, a, s, arr, index, one_d, vals):
    tdt = a["dst"].dtype
    if s.space == M.Acc:
        vals = fixpipe.apply(ctx, vals, tdt, a["relu_pre_mode"], a["scale"])
    elif s.dtype != tdt:
        vals = _bits_as(vals, arr.dtype)
    if one_d:
        vals = vals[0]
    ctx.note_gm(a["dst"], index, write=True, atomic=AtomicType(a["atomic"]) == AtomicType.AtomicAdd)
    if AtomicType(a["atomic"]) == AtomicType.AtomicAdd:
        with np.errstate(all="ignore"):
            total = arr[index].astype(tdt.compute_np_dtype) + vals.astype(tdt.compute_np_dtype)
        arr[index] = total.astype(arr.dtype)
    else:
        arr[index] = vals


def _store_pipe(a):
    return "FIX" if a["src"].space == M.Acc else "MTE3"


_STORE_KW = [Arg("relu_pre_mode", default=None, kw_only=True), In("scale", "any", default=None, kw_only=True),
             Arg("order", default=None, kw_only=True), Arg("atomic", default=AtomicType.AtomicNone, kw_only=True),
             Arg("phase", default=None, kw_only=True)]


@op("store", [Out("dst", "tensor"), In("src"), Arg("offsets", "index_list")] + _STORE_KW, _store_pipe, phased=True)
class Store:
    """pl.store(tensor, src, offsets, *, relu_pre_mode=None, scale=None, order=None, atomic=AtomicNone, phase=None):
    tile -> GM; Vec sources on MTE3, Acc sources through the fixpipe (FIX) with dtype conversion, optional ReLU and
    scale; AtomicAdd accumulates into the tensor."""

    @staticmethod
    def check(c, a):
        _store_check(c, a, "offsets")

    @staticmethod
    def run(ctx, a):
        _store_run(ctx, a, tile_units=False)


@op("store_tile", [Out("dst", "tensor"), In("src"), Arg("tile_offsets", "index_list")] + _STORE_KW, _store_pipe,
    phased=True)
class StoreTile:
    """pl.store_tile(tensor, src, tile_offsets, ...): store with offsets in units of the tile's physical shape."""

    @staticmethod
    def check(c, a):
        _store_check(c, a, "tile_offsets")

    @staticmethod
    def run(ctx, a):
        _store_run(ctx, a, tile_units=True)


# --------------------------------------------------------------------------- move / insert
_MOVE_PIPES = {
    (M.Mat, M.Left): "MTE1", (M.Mat, M.Right): "MTE1", (M.Mat, M.Bias): "MTE1",
    (M.Mat, M.ScaleLeft): "MTE1", (M.Mat, M.ScaleRight): "MTE1",
    (M.Acc, M.Vec): "FIX", (M.Mat, M.Scaling): "FIX", (M.Vec, M.Vec): "V", (M.Vec, M.Mat): "MTE3",
}


def _move_pipe(a):
    return _MOVE_PIPES.get((a["src"].space, a["dst"].space), "V")


def insert_transposes(dst, src) -> bool:
    """An NZ block inserted into a ZN Mat tile lands transposed: a ZN ``[R, C]`` tile holds the bytes of an
    NZ ``[C, R]`` one, and the insert's offset and bounds are in that NZ frame (move.md: ZN/NZ pairs compare
    transposed shapes)."""
    return dst.layout == Layout.ZN and src.layout == Layout.NZ


def nz_frame_valid(src, dst) -> bool:
    """Whether a square ZN source's valid shape may be given in its NZ frame when moved into a non-ZN tile
    of the same declared shape (move.md compares ZN/NZ pairs with transposed shapes): there a source valid
    ``[r, c]`` that is the transpose of the destination's ``[c, r]`` names the destination's window."""
    s, d = src.static_shape, dst.static_shape
    return (src.layout == Layout.ZN and dst.layout != Layout.ZN and s is not None and d is not None
            and tuple(s) == tuple(d) and s[0] == s[1])


def is_insert(a) -> bool:
    """Whether a ``pl.move`` with an offset is an insert: its source, seen in the destination's frame,
    fits inside a larger destination (move.md)."""
    s, d = a["src"].static_shape, a["dst"].static_shape
    if a.get("offset") is None or s is None or d is None or a["dst"].space != M.Mat:
        return False
    if insert_transposes(a["dst"], a["src"]):
        d = (d[1], d[0])
    return (s[0] <= d[0] and s[1] <= d[1] and tuple(s) != tuple(d) and a.get("acc_to_vec_mode") is None
            and a.get("relu_pre_mode") is None and a.get("scale") is None)


@op("move", [Out("dst"), In("src"), Arg("offset", "index_list", default=None),
             Arg("acc_to_vec_mode", default=None, kw_only=True), Arg("relu_pre_mode", default=None, kw_only=True),
             In("scale", "any", default=None, kw_only=True)], _move_pipe)
class Move:
    """pl.move(dst, src, offset=None, *, acc_to_vec_mode=None, relu_pre_mode=None, scale=None): tile -> tile.
    Paths: Mat->Left/Right/Bias (MTE1), Acc->Vec (FIX, fixpipe conversion into the AIV's UB), Vec->Vec (V),
    Vec->Mat (MTE3, into the block's L1), Mat->Scaling (FIX).  Equal shapes copy, swapped shapes transpose;
    with ``offset=[r, c]`` a smaller dst extracts ``dst[i,j] = src[r+i, c+j]`` and a smaller src is inserted."""

    @staticmethod
    def check(c, a):
        src, dst = a["src"], a["dst"]
        pair = (src.space, dst.space)
        if pair == (M.Mat, M.Vec):
            raise NotImplementedError("pl.move Mat -> Vec")
        if pair not in _MOVE_PIPES:
            legal = ", ".join(f"{s.name}->{d.name}" for s, d in _MOVE_PIPES)
            c.fail(f"no move path {src.space.name} -> {dst.space.name}; legal paths: {legal}")
        if src.space == M.Acc:
            fixpipe.check(c, src.dtype, dst.dtype, a["relu_pre_mode"], a["scale"],
                          acc_to_vec_mode=a["acc_to_vec_mode"])
            if a["acc_to_vec_mode"] is not None:
                a["acc_to_vec_mode"] = AccToVecMode(a["acc_to_vec_mode"])
        else:
            if a["acc_to_vec_mode"] is not None or a["relu_pre_mode"] is not None or a["scale"] is not None:
                c.fail("acc_to_vec_mode/relu_pre_mode/scale apply only to moves from an Acc tile")
            upcast = pair == (M.Mat, M.Bias) and src.dtype in (dt.DT_FP16, dt.DT_BF16) and dst.dtype == dt.DT_FP32
            if src.dtype != dst.dtype and not upcast:
                c.fail(f"dtypes differ ({src.dtype.name} -> {dst.dtype.name}); only Mat->Bias upcasts FP16/BF16 "
                       f"to FP32")
        s, d = src.static_shape, dst.static_shape
        if a["offset"] is not None:
            if len(a["offset"]) != 2:
                c.fail("'offset' is [row, col] in source coordinates")
            if s is not None and d is not None and not is_insert(a) and (d[0] > s[0] or d[1] > s[1]):
                c.fail(f"extracting a {list(d)} tile from a {list(s)} tile")
        elif (s is not None and d is not None and tuple(s) != tuple(d) and tuple(s) != (d[1], d[0])
              and tuple(d) != _split_share(a["acc_to_vec_mode"], s) and src.space != M.Acc):
            # an Acc source's valid window (each AIV's share of it) must fit the Vec tile: checked per launch
            c.fail(f"shapes {list(s)} -> {list(d)} are neither equal nor transposed; pass offset= to extract/insert")

    @staticmethod
    def run(ctx, a):
        if is_insert(a):
            _insert(ctx, a["dst"], a["src"], a["offset"])
            return
        s = ctx.tile(a["src"])
        if s.space == M.Acc:
            _acc_to_vec(ctx, a, s, s.read() if a["offset"] is None else _acc_window(ctx, a, s))
            return
        targets = ctx.peers("cube") if (s.space, a["dst"].space) == (M.Vec, M.Mat) else [ctx.core]
        if not targets:
            raise ctx.error("Vec -> Mat needs the block's cube core; this kernel has none")
        for core in targets:
            d = ctx.tile(a["dst"], core)
            _write_moved(ctx, a, d, s)


def _split_share(mode, shape) -> Optional[tuple]:
    """The shape of AIV0's share of a full ``shape`` accumulator under a dual acc_to_vec ``mode`` (None for the
    single modes): a Vec tile of that shape receives each AIV's share at its top-left, as a full-size one does."""
    rows, cols = shape
    if mode == AccToVecMode.DualModeSplitM:
        return ((rows + 1) // 2, cols)
    if mode == AccToVecMode.DualModeSplitN:
        return (rows, min(cols, -(-cols // 32) * 32 // 2)) if cols > 16 else (rows, cols)
    return None


def _write_moved(ctx, a, d, s):
    """Write into ``d`` the part of ``s`` the move copies; only that part is read (the simulator sees the
    reads, so reading more than is copied would report bytes nobody uses as uninitialised)."""
    if a["offset"] is not None:
        r0, c0 = (int(ctx.scalar(x)) for x in a["offset"])
        rows, cols = d.valid
        if r0 < 0 or c0 < 0 or r0 + rows > s.shape[0] or c0 + cols > s.shape[1]:
            raise ctx.error(f"move window [{r0}:{r0 + rows}, {c0}:{c0 + cols}] leaves source {s.name} "
                            f"of shape {list(s.shape)}")
        write_result(d, s.sub(r0, r0 + rows, c0, c0 + cols, (rows, cols)).read(), rows, cols)
        return
    if tuple(s.shape) != tuple(d.shape):  # the check allows only equal or transposed shapes here
        vals = s.read().T
    elif nz_frame_valid(a["src"], a["dst"]) and tuple(s.valid) == tuple(d.valid)[::-1] != tuple(d.valid):
        vals = s.read(*d.valid)
    else:
        vals = s.read()
    write_result(d, vals, vals.shape[0], vals.shape[1])


def _acc_to_vec(ctx, a, s, vals):
    vecs = sorted(ctx.peers("vector"), key=lambda core: core.sub)
    if not vecs:
        raise ctx.error("Acc -> Vec needs the block's vector cores; this kernel has none (use sections for a mix "
                        "kernel)")
    out = fixpipe.apply(ctx, vals, a["dst"].dtype, a["relu_pre_mode"], a["scale"])
    mode = a["acc_to_vec_mode"] or AccToVecMode.SingleModeVec0
    rows, cols = out.shape
    parts = []
    if mode == AccToVecMode.SingleModeVec0:
        parts = [(0, out)]
    elif mode == AccToVecMode.SingleModeVec1:
        parts = [(1, out)]
    elif mode == AccToVecMode.DualModeSplitM:
        half = (rows + 1) // 2
        parts = [(0, out)] if rows == 1 else [(0, out[:half]), (1, out[half:])]
    else:
        half = -(-cols // 32) * 32 // 2
        parts = [(0, out)] if cols <= 16 else [(0, out[:, :half]), (1, out[:, half:])]
    for sub, part in parts:
        if sub >= len(vecs):
            raise ctx.error(f"acc_to_vec_mode {mode.name} targets AIV{sub}, which this block does not have")
        d = ctx.tile(a["dst"], vecs[sub])
        if part.shape[0] > d.shape[0] or part.shape[1] > d.shape[1]:
            raise ctx.error(f"Acc -> Vec: a {list(part.shape)} share does not fit tile {d.name} {list(d.shape)}")
        d.write(part, part.shape[0], part.shape[1])


def _acc_window(ctx, a, s):
    """The accumulator window an Acc -> Vec move with ``offset`` copies: ``[offset, offset + dst valid)``
    (move.md), the destination's valid shape being the one the AIC set, i.e. the whole window before a dual
    mode splits it between the AIVs.  The window must lie in the Acc's declared shape; it may reach past
    the Acc's valid window (the simulator reports bytes there that nothing wrote)."""
    r0, c0 = (int(ctx.scalar(x)) for x in a["offset"])
    rows, cols = _aic_valid(ctx, a["dst"])
    if r0 < 0 or c0 < 0 or r0 + rows > s.shape[0] or c0 + cols > s.shape[1]:
        raise ctx.error(f"move window [{r0}:{r0 + rows}, {c0}:{c0 + cols}] (offset + the valid shape of "
                        f"{a['dst']} on the AIC) leaves accumulator {s.name} of shape {list(s.shape)}")
    return s.sub(r0, r0 + rows, c0, c0 + cols, (rows, cols)).read()


def _aic_valid(ctx, ref) -> tuple:
    """The valid shape the executing (cube) core holds for the Vec tile ``ref``: its own descriptor's."""
    decl = ctx.decl_of(ref)
    if decl is None:
        return tuple(ctx.tile(ref).valid)
    return tuple(ctx.core.valid.get(decl.uid, decl.shape))


def _insert(ctx, dst_ref, src_ref, offset):
    """Write ``src``'s valid window into ``dst`` at ``offset`` (transposed into a ZN destination); only the
    bytes of that window are accessed, so inserts of disjoint windows do not conflict."""
    s = ctx.tile(src_ref)
    vals = s.read()
    r0, c0 = (int(ctx.scalar(x)) for x in offset)
    targets = ctx.peers("cube") if s.space == M.Vec and dst_ref.space == M.Mat else [ctx.core]
    if not targets:
        raise ctx.error("insert into Mat needs the block's cube core; this kernel has none")
    transposed = insert_transposes(dst_ref, src_ref)
    rows, cols = vals.shape
    for core in targets:
        d = ctx.tile(dst_ref, core)
        frame = (d.shape[1], d.shape[0]) if transposed else d.shape  # offsets are in the NZ frame of a ZN dst
        if r0 < 0 or c0 < 0 or r0 + rows > frame[0] or c0 + cols > frame[1]:
            view = " (the NZ view of a ZN tile)" if transposed else ""
            raise ctx.error(f"insert at [{r0}, {c0}] of a {rows}x{cols} block leaves {d.name} of shape "
                            f"{list(frame)}{view}")
        if transposed:
            d.sub(c0, c0 + cols, r0, r0 + rows, (cols, rows)).write(vals.T)
        else:
            d.sub(r0, r0 + rows, c0, c0 + cols, (rows, cols)).write(vals)


@op("insert", [InOut("dst"), In("src"), Arg("offset", "index_list")], "MTE3")
class Insert:
    """pl.insert(dst_mat, src_vec_nz, [row, col]) (MTE3): dst[row+i, col+j] = src[i, j] over src's valid window;
    src must be an NZ Vec tile (convert with pl.move first); a ZN destination receives the transpose."""

    @staticmethod
    def check(c, a):
        c.space("dst", a["dst"], M.Mat)
        c.space("src", a["src"], M.Vec)
        if a["src"].layout != Layout.NZ:
            c.fail("the source must be an NZ Vec tile; convert it with pl.move(nz_tile, nd_tile) first")
        c.same_dtype(dst=a["dst"], src=a["src"])
        if len(a["offset"]) != 2:
            c.fail("'offset' is [row, col]")

    @staticmethod
    def run(ctx, a):
        _insert(ctx, a["dst"], a["src"], a["offset"])


__all__ = ["gm_window", "is_insert", "insert_transposes", "nz_frame_valid"]
