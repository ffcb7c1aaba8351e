"""Element-wise fusion: runs of consecutive element-wise tile ops become ONE loop over the valid window.

Unfused, every tile op is a pass over its tiles (loads and stores of a whole tile per op).  This pass
finds maximal runs of consecutive fusable statements in a statement list and emits one loop in which
each element's values flow through registers (``include/pto/fuse.h``: a generic lambda instantiated
for 8 AVX2 fp32 lanes and for a scalar tail).  Semantics are identical to the unfused code:

* fusable ops: those the op table marks ``fusable`` (trait of ``OpDef``; today ``add sub mul div
  maximum minimum`` with a tile or scalar rhs, ``neg abs exp sqrt rsqrt recip relu``, ``expands`` and the
  row/column broadcasts ``expand_{sub,div,mul,max,min}``), each computing its ``elementwise`` function
  (an ``fz::`` function of ``include/pto/fuse.h``); fp32, fp16, bf16 (computed in fp32, rounded to the
  dtype after every op, as the unfused ops do); flag and barrier syncs (``sync`` trait "flag"/"barrier":
  no-ops here) and ``set_validshape`` of a declared tile may be interleaved; a row reduction (``reduction``
  trait on rows: ``row_sum``, ``sum(dim=0)``) of a tile the group wrote, right after it, is
  accumulated in the same loop (8 lanes, pto::row_sum's order), and so is a ``row_max``/``row_min``
  (lane-wise, exact since the order does not matter; a row holding a NaN or reducing to a zero, where
  the sequential order decides, is reduced again from the tile, which the loop then always stores);
* compile-time legality: only whole declared tiles (no subviews, no tile-group slots), ND layout
  (one-column tiles and broadcast operands ``[R,1]``/``[1,C]`` may be DN: same addressing), one dtype; any two tiles of a group either do not
  share a byte or have identical geometry (space, address, shape, layout, dtype: the same element
  mapping), so element (r, c) of an op only ever depends on element (r, c) of its operands; broadcast
  operands are never written in the group; scalar operands and validshape expressions cannot fail;
* runtime guard: the group's set_validshapes are applied in program order without failing, and every
  destination's valid window (read at its op) must be the same, non-empty, and fit every operand's
  physical shape.  Otherwise the original per-op code runs (re-running the set_validshapes, which
  sets the same windows or fails with the original message), so every error message and edge case
  is unchanged.  A set_validshape of a tile already written in the run ends the run (its window
  would change between ops, and the fallback could not simply re-run the statements);
* GM traffic: a ``load`` into a tile the group reads and a ``store`` of a tile the group wrote (just
  after the group) join the loop: element (r, c) is read from / written to GM directly, without the
  copy through the tile.  Compile time: same dtype in GM and tile (no conversion), ND tile, rows and
  columns along ascending tensor axes, a plain store (no atomic, scale or ReLU), offsets that cannot
  fail.  The guard checks each window's bounds without failing (the fallback then reports it), a unit
  column stride, and that no stored window shares a byte with another loaded or stored window
  unless both map (r, c) to the same address (``x[:] = x + 1`` stays fused);
* stores to tiles: only the last value written to each distinct tile storage (earlier writes to the
  same storage are fully overwritten inside the group, since all windows are equal), and only if
  the tile is read again before the lowering's ``discard`` of it (:func:`_live_after`): a tile whose
  value only flows through the loop's registers never touches memory.

``PYPTO_CPU_FUSION=0`` turns the pass off (for measurements and differential tests).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ...dtypes import DataType
from ...ir import nodes as ir
from ...ir.layout import footprint_bytes
from ...ir.types import AtomicType, Layout, MemorySpace

if TYPE_CHECKING:
    from .codegen import KernelCodegen

DTYPES = {"FP32": "float", "FP16": "pto::half", "BF16": "pto::bf16"}
FAILING_SCALAR_OPS = frozenset({"/", "//", "%"})

#: operand kinds: a tile element (r, c), a row-broadcast value v[r, 0], a column-broadcast v[0, c], a scalar,
#: element (r, c) of a load's GM window
TILE, ROW, COL, SCALAR, GM = "tile", "row", "col", "scalar", "gm"


def is_nop(s: ir.OpStmt) -> bool:
    """Statements without run-time effect on the cpu: flags and barriers (program order already holds) and
    a discard (it only tells the fusion that a tile is dead)."""
    return s.op.sync in ("flag", "barrier") or s.op.name == "discard"


def enabled() -> bool:
    """Whether the fusion pass runs ($PYPTO_CPU_FUSION=0 turns it off)."""
    return os.environ.get("PYPTO_CPU_FUSION", "1") != "0"


@dataclass
class FusedOp:
    """One element-wise op of a group: its fz:: function and operands."""

    stmt: ir.OpStmt
    fn: str  # "load" for a fused GM load
    dst: ir.TileDecl
    operands: List[Tuple[str, Any]]  # (TILE|ROW|COL, TileDecl), (SCALAR, expression) or (GM, the load)


@dataclass
class FusedStore:
    """A plain ``store`` of a tile the group wrote, done from the loop's registers."""

    stmt: ir.OpStmt
    src: ir.TileDecl


@dataclass
class RowReduce:
    """A row reduction (``row_sum`` / ``sum(dim=0)``, ``row_max``, ``row_min``) of a tile the group
    writes, fused as its last statement; ``kind`` is "sum", "max" or "min"."""

    stmt: ir.OpStmt
    src: ir.TileDecl
    dst: ir.TileDecl
    kind: str


@dataclass
class Group:
    """A maximal run of fusable statements (ops, no-ops and set_validshapes) with >= 2 ops, or with
    >= 1 op and a trailing row sum."""

    stmts: List[ir.Stmt]
    ops: List[FusedOp]
    dtype: DataType
    row_reduce: Optional[RowReduce] = None
    stores: List[FusedStore] = field(default_factory=list)
    #: storages (keys) whose last value is read after the group: only these are stored to tiles
    live: set = field(default_factory=set)


def _key(t: ir.TileDecl) -> tuple:
    """Storage identity: tiles with equal keys denote the same elements."""
    return (t.space, t.addr, tuple(t.shape), t.layout, t.dtype.name)


def _byte_range(t: ir.TileDecl) -> Tuple[int, int]:
    return t.addr, t.addr + footprint_bytes(t.shape[0], t.shape[1], t.layout, t.dtype, t.space)


def _cannot_fail(e) -> bool:
    """Whether evaluating scalar expression ``e`` can never call pto::fail (no division or modulo)."""
    if isinstance(e, ir.BinOp) and e.op in FAILING_SCALAR_OPS:
        return False
    return all(_cannot_fail(getattr(e, a)) for a in ("lhs", "rhs", "operand", "cond", "if_true", "if_false")
               if isinstance(getattr(e, a, None), ir.Expr))


def _decl(ref) -> Optional[ir.TileDecl]:
    return ref.tile if type(ref) is ir.DeclRef else None


def _tile_operand(ref) -> Optional[Tuple[str, ir.TileDecl]]:
    d = _decl(ref)
    return (TILE, d) if d is not None else None


def _rhs_operand(value) -> Optional[Tuple[str, Any]]:
    if isinstance(value, ir.TileRef):
        return _tile_operand(value)
    return (SCALAR, value) if _cannot_fail(value) else None


def as_fused(s: ir.OpStmt) -> Optional[FusedOp]:
    """The statement as a fusable op, or None (unsupported op, operand form or dtype)."""
    op, a = s.op, s.args
    if not op.fusable:
        return None
    dst = _decl(a["dst"])
    if dst is None or dst.dtype.name not in DTYPES:
        return None
    fn = op.elementwise
    if "lhs" in op.param_map:  # dst = lhs <fn> rhs (tile or scalar); with dim= it is a reduction, not fused
        if a.get("dim") is not None:
            return None
        ops = [_tile_operand(a["lhs"]), _rhs_operand(a["rhs"])]
    elif "v" in op.param_map:  # dst = src <fn> v[r, 0] (dim=0) or v[0, c] (dim=1)
        v = _decl(a["v"])
        ops = [_tile_operand(a["src"]), (ROW if a["dim"] == 0 else COL, v) if v is not None else None]
    elif "scalar" in op.param_map:  # dst = the scalar
        ops = [_rhs_operand(a["scalar"])]
    else:  # dst = <fn>(src)
        ops = [_tile_operand(a["src"])]
    if any(o is None for o in ops):
        return None
    return FusedOp(s, fn, dst, ops)


def gm_axes(order, ndim: int) -> Tuple[int, int]:
    """The tensor axes of tile rows and columns for a load/store ``order`` (rows -1: a 1-D tensor)."""
    if order is None:
        return (ndim - 2, ndim - 1) if ndim >= 2 else (-1, 0)
    return order[0] % ndim, order[1] % ndim


def _gm_access_ok(s: ir.OpStmt, ref, param: ir.TensorParam) -> Optional[ir.TileDecl]:
    """The tile of a load/store that can read/write GM from the fused loop: a whole ND tile of the GM
    dtype, rows and columns along ascending tensor axes, offsets that cannot fail, not a
    ``pl.make_tensor`` view (checking one can fail, and the fused loop's checks run before any op's site
    is set)."""
    if isinstance(param, ir.TensorView):
        return None
    t = _decl(ref)
    a0, a1 = gm_axes(s.args["order"], param.ndim)
    if (t is None or t.layout != Layout.ND or t.dtype.name not in DTYPES or param.dtype.name != t.dtype.name
            or a0 >= a1 or not all(_cannot_fail(o) for o in s.args["offsets"])):
        return None
    return t


def as_load(s: ir.OpStmt) -> Optional[FusedOp]:
    """A ``load`` as a fused op: its tile gets element (r, c) of the GM window."""
    t = _gm_access_ok(s, s.args["dst"], s.args["src"]) if s.op.name == "load" else None
    return FusedOp(s, "load", t, [(GM, s)]) if t is not None else None


def as_store(s: ir.OpStmt) -> Optional[FusedStore]:
    """A plain ``store`` (no atomic, scale or ReLU) whose tile the fused loop can write to GM."""
    a = s.args
    if (s.op.name != "store" or a["scale"] is not None or a["relu_pre_mode"] is not None or a["phase"] is not None
            or AtomicType(a["atomic"]) != AtomicType.AtomicNone):
        return None
    t = _gm_access_ok(s, a["src"], a["dst"])
    return FusedStore(s, t) if t is not None else None


def _layout_ok(kind: str, t: ir.TileDecl) -> bool:
    """ND tiles; broadcast operands [R,1] / [1,C] and one-column tiles may also be DN (same addressing)."""
    if t.layout == Layout.ND:
        return kind == TILE or t.shape[1 if kind == ROW else 0] == 1
    if t.layout != Layout.DN:
        return False
    return t.shape[1] == 1 if kind in (TILE, ROW) else t.shape[0] == 1


@dataclass
class _Builder:
    """Accumulates a group, admitting an op only if the group stays legal.

    ``strict``: any two tiles must share no byte unless they have identical geometry.  Otherwise
    overlaps are admitted here and checked once the group's stored tiles are known
    (:func:`_memory_conflict`): a tile whose value only lives in registers may overlap anything (the
    lowering reuses a dead statistics tile's bytes for the next full tile)."""

    strict: bool = False
    dtype: Optional[DataType] = None
    shape: Optional[tuple] = None  # every destination's physical shape (its window is the group's)
    tiles: Dict[tuple, ir.TileDecl] = field(default_factory=dict)
    kinds: Dict[tuple, set] = field(default_factory=dict)  # storage -> how the group uses it
    written: set = field(default_factory=set)
    broadcast: set = field(default_factory=set)

    def admit(self, op: FusedOp) -> bool:
        uses = [(TILE, op.dst)] + [o for o in op.operands if o[0] not in (SCALAR, GM)]
        dtype = self.dtype or op.dst.dtype
        if self.shape is not None and tuple(op.dst.shape) != self.shape:
            return False  # another window (a statistics or broadcast tile): the guard would fail
        seen = dict(self.tiles)
        for kind, t in uses:
            if t.dtype.name != dtype.name or not _layout_ok(kind, t):
                return False
            if self.strict and not _disjoint_or_same(seen, t):
                return False
            seen.setdefault(_key(t), t)
        read_bcast = {_key(t) for kind, t in uses if kind in (ROW, COL)}
        dkey = _key(op.dst)
        if dkey in self.broadcast or dkey in read_bcast or read_bcast & self.written:
            return False
        self.dtype = dtype
        self.shape = tuple(op.dst.shape)
        self.tiles = seen
        for kind, t in uses:
            self.kinds.setdefault(_key(t), set()).add(kind)
        self.written.add(dkey)
        self.broadcast |= read_bcast
        return True

    def admit_row_reduce(self, s: ir.Stmt) -> Optional[RowReduce]:
        """``s`` as a row sum of a tile written in the group into an [R,1] tile, if legal.

        The [R,1] destination may be a row-broadcast operand of the group (softmax's statistics
        tile): row r's sum is stored after every element of row r, and only row r reads v[r].
        """
        kind = _row_reduce_kind(s) if type(s) is ir.OpStmt else None
        if kind is None:
            return None
        src, dst = _decl(s.args["src"]), _decl(s.args["dst"])
        if src is None or dst is None or _key(src) not in self.written or dst.dtype.name != self.dtype.name:
            return None
        if self.kinds.get(_key(dst), {ROW}) != {ROW} or not _layout_ok(ROW, dst):
            return None
        return RowReduce(s, src, dst, kind) if not self.strict or _disjoint_or_same(self.tiles, dst) else None


def _row_reduce_kind(s: ir.OpStmt) -> Optional[str]:
    """"sum", "max" or "min" for a fusable row reduction (each row to one value), else None."""
    op = s.op
    dim = op.reduce_dim if op.reduce_dim is not None else s.args.get("dim")
    return op.reduction if op.reduction in ("sum", "max", "min") and dim == 0 else None


def _disjoint_or_same(tiles: Dict[tuple, ir.TileDecl], t: ir.TileDecl) -> bool:
    """Whether ``t`` shares no byte with any tile in ``tiles`` except those of identical geometry."""
    lo, hi = _byte_range(t)
    for k, u in tiles.items():
        if k == _key(t) or u.space != t.space:
            continue
        ulo, uhi = _byte_range(u)
        if lo < uhi and ulo < hi:
            return False
    return True


def _interleavable(s: ir.Stmt) -> bool:
    """No-op syncs and set_validshape of a declared tile with expressions that cannot fail."""
    if type(s) is not ir.OpStmt:
        return False
    if is_nop(s):
        return True
    if s.op.name == "set_validshape":
        return type(s.args["tile"]) is ir.DeclRef and all(_cannot_fail(x) for x in s.args["shape"])
    return False


def find_group(body: List[ir.Stmt], start: int, end: Optional[int] = None, strict: bool = False
               ) -> Optional[Group]:
    """The maximal fusable run in body[start:end]: element-wise ops and loads (with no-ops and
    set_validshapes between them), then optionally a row sum of one of their results (after no-ops and
    set_validshapes only), then optionally stores of their results (after no-ops only).  None unless
    it fuses at least two statements, one of them not a load.

    A set_validshape of a tile that is already a destination in the run ends the run: the windows
    would differ (the guard would fail), and it keeps every destination's window constant within the
    group, so the fallback can simply re-run the group's statements.  A load whose tile nothing in the
    run reads or stores ends the run before it (its window is another one: a broadcast operand's).
    A group whose stored tiles overlap other tiles of the loop is formed again with ``strict`` rules.
    """
    b = _Builder(strict)
    stmts: List[ir.Stmt] = []
    ops: List[FusedOp] = []
    stores: List[FusedStore] = []
    dsts: set = set()
    n_fused = 0
    row_reduce = None
    for s in body[start:end]:
        if type(s) is not ir.OpStmt:
            break
        if row_reduce is None and not stores:
            op = as_fused(s) or as_load(s)
            if op is not None:
                if not b.admit(op):
                    break
                ops.append(op)
                dsts.add(op.dst.uid)
                stmts.append(s)
                n_fused = len(stmts)
                continue
            if _interleavable(s) and not (s.op.name == "set_validshape" and s.args["tile"].tile.uid in dsts):
                stmts.append(s)
                continue
            # only no-ops and set_validshapes of other tiles (the row sum's destination) in between
            if ops and all(is_nop(t) or t.op.name == "set_validshape" for t in stmts[n_fused:]):
                row_reduce = b.admit_row_reduce(s)
                if row_reduce is not None:
                    stmts.append(s)
                    n_fused = len(stmts)
                    continue
        if is_nop(s):
            stmts.append(s)
            continue
        store = as_store(s) if ops and all(is_nop(t) for t in stmts[n_fused:]) else None
        if store is None or store.src.uid not in dsts:
            break
        stores.append(store)
        stmts.append(s)
        n_fused = len(stmts)
    unread = _first_unread_load(ops, row_reduce, stores)
    if unread is not None:
        return None if unread is ops[0] else find_group(body, start, start + stmts.index(unread.stmt), strict)
    loads = sum(op.fn == "load" for op in ops)
    fused = len(ops) + len(stores) + (row_reduce is not None)
    if fused < 2 or fused == loads:
        return None
    grp = Group(stmts[:n_fused], ops, b.dtype, row_reduce, stores)
    grp.live = _live_after(_undiscarded(grp), body[start + n_fused:])
    if row_reduce is not None and row_reduce.kind != "sum":
        grp.live.add(_key(row_reduce.src))  # the exact fallback re-reads the row from the tile
    if not strict and _memory_conflict(grp):
        return find_group(body, start, end, strict=True)
    return grp


def _memory_conflict(grp: Group) -> bool:
    """Whether a tile the loop stores shares a byte with another storage the loop reads or stores.
    (Element (r, c) of a tile storage is then only ever read before it is written, in the same
    iteration, as in the per-op order; tiles that stay in registers touch no memory.)"""
    reads: Dict[tuple, ir.TileDecl] = {}
    written: set = set()
    for op in grp.ops:
        for kind, t in op.operands:
            if kind in (ROW, COL) or (kind == TILE and _key(t) not in written):
                reads[_key(t)] = t
        written.add(_key(op.dst))
    stored = {_key(op.dst): op.dst for op in grp.ops if _key(op.dst) in grp.live}
    if grp.row_reduce:
        stored[_key(grp.row_reduce.dst)] = grp.row_reduce.dst
    touched = {**reads, **stored}
    return any(k != u and _overlaps(t, other) for k, t in stored.items() for u, other in touched.items())


def _undiscarded(grp: Group) -> Dict[tuple, ir.TileDecl]:
    """The storages the group writes that no discard inside the group kills after their last write
    (inside the loop, later ops read values from registers, never from these storages)."""
    out: Dict[tuple, ir.TileDecl] = {}
    writes = {id(op.stmt): op.dst for op in grp.ops}
    for s in grp.stmts:
        if id(s) in writes:
            out[_key(writes[id(s)])] = writes[id(s)]
        elif s.op.name == "discard":
            for k in [k for k, d in out.items() if _covers(s.args["tile"].tile, d)]:
                del out[k]
    return out


def _covers(t: ir.TileDecl, d: ir.TileDecl) -> bool:
    """Whether every byte of ``d`` is a byte of ``t``."""
    (tlo, thi), (lo, hi) = _byte_range(t), _byte_range(d)
    return t.space == d.space and tlo <= lo and hi <= thi


def _first_unread_load(ops: List[FusedOp], row_reduce: Optional[RowReduce], stores: List[FusedStore]):
    """The first fused load whose tile no later op, row sum or store of the run reads as a tile."""
    for i, op in enumerate(ops):
        if op.fn != "load":
            continue
        k = _key(op.dst)
        later = [t for o in ops[i + 1:] for kind, t in o.operands if kind == TILE]
        later += [s.src for s in stores] + ([row_reduce.src] if row_reduce else [])
        if all(_key(t) != k for t in later):
            return op
    return None


def _overlaps(a: ir.TileDecl, b: ir.TileDecl) -> bool:
    (alo, ahi), (blo, bhi) = _byte_range(a), _byte_range(b)
    return a.space == b.space and alo < bhi and blo < ahi


def _live_after(written: Dict[tuple, ir.TileDecl], rest: List[ir.Stmt]) -> set:
    """The storages in ``written`` whose contents may be read after the group (``rest`` follows it).

    A storage is dead once a ``discard`` covering its bytes comes before any statement that reads
    them; anything else conservatively keeps it live: an op reading a tile that overlaps it, control
    flow, the end of the statement list.  (Ops that only write overlapping bytes read nothing of it.)"""
    live: set = set()
    pending = dict(written)
    for s in rest:
        if not pending:
            break
        if type(s) is ir.Assign:
            continue
        if type(s) is not ir.OpStmt:
            break
        if s.op.name == "discard":
            for k in [k for k, d in pending.items() if _covers(s.args["tile"].tile, d)]:
                del pending[k]
            continue
        read = [d for _, ref in s.op.tile_operands(s.args, ("in", "inout")) for d in ref.decls()]
        for k in [k for k, d in pending.items() if any(_overlaps(d, u) for u in read)]:
            live.add(k)
            del pending[k]
    return live | set(pending)


# ------------------------------------------------------------------ emission
BIG = 2**31 - 1


def _uses(grp: Group) -> List[Tuple[str, ir.TileDecl]]:
    """Every tile use of the group in program order (operands before the destination of each op)."""
    out = []
    for op in grp.ops:
        out += [o for o in op.operands if o[0] not in (SCALAR, GM)]
        out.append((TILE, op.dst))
    if grp.row_reduce:
        out += [(TILE, grp.row_reduce.src), (ROW, grp.row_reduce.dst)]
    return out


def _min_shape(grp: Group) -> Tuple[int, int]:
    """The largest window every operand's physical shape can hold (broadcast operands bound one axis)."""
    rows = cols = BIG
    for kind, t in _uses(grp):
        if kind != COL:
            rows = min(rows, t.shape[0])
        if kind != ROW:
            cols = min(cols, t.shape[1])
    return rows, cols


def _describe(op: FusedOp) -> str:
    """``t2 = mul(t0, t1)`` (plus the kernel line) for comments."""
    if op.fn == "load":
        args = [op.stmt.args["src"].name]
    else:
        args = [o[1].name if o[0] != SCALAR else repr(o[1]).replace("\n", " ") for o in op.operands]
    line = f" (line {op.stmt.loc.lineno})" if op.stmt.loc else ""
    return f"{op.dst.name} = {op.stmt.op.name}({', '.join(args)}){line}"


def _summary(grp: Group) -> str:
    lines = [s.loc.lineno for s in grp.stmts if getattr(s, "loc", None)]
    where = f" (lines {min(lines)}-{max(lines)})" if lines else ""
    names = " ".join(op.stmt.op.name for op in grp.ops)
    tail = f" + {grp.row_reduce.stmt.op.name}" if grp.row_reduce else ""
    tail += " + store" * len(grp.stores)
    return f"fused element-wise group{where}: {len(grp.ops)} ops in one pass: {names}{tail}"


def _fallback(g: "KernelCodegen", grp: Group, indent: int) -> Tuple[List[str], int]:
    """The group's original per-op code (at ``indent``) and the site of its first op."""
    saved_lines, saved_indent = g.lines, g.indent
    g.lines, g.indent = [], indent
    first = -1
    for s in grp.stmts:
        if s is grp.ops[0].stmt:
            first = len(g.sites)
        g.stmt(s)
    out = g.lines
    g.lines, g.indent = saved_lines, saved_indent
    return out, first


def _gm_run(g: "KernelCodegen", s: ir.OpStmt, tile: ir.TileDecl, param: ir.TensorParam, run: str) -> str:
    """Guard line: ``tile``'s window (read in program order) and its GM window ``run`` of ``s``, if legal."""
    a0, a1 = gm_axes(s.args["order"], param.ndim)
    offs = ", ".join(g.scalar(o) for o in s.args["offsets"])
    return (f"{{ const int64_t o_[] = {{{offs}}}; ok_ = ok_ && w_.dst(C, {g.decl_index[tile.uid]}) && "
            f"pto::fz::gm_run({g.tensor(param)}, o_, {a0}, {a1}, w_, {run}); }}")


def _emit_guard(g: "KernelCodegen", grp: Group, runs: Dict[int, str]) -> None:
    """Apply the set_validshapes and read every destination's window in program order; find the GM
    windows of the fused loads and stores, and check that the stores overlap nothing else."""
    ops = {id(op.stmt): op for op in grp.ops}
    stores = {id(st.stmt): st for st in grp.stores}
    for s in grp.stmts:
        if s.op.name == "set_validshape":
            r, c = (g.scalar(x) for x in s.args["shape"])
            t = s.args["tile"].tile
            g.emit(f"ok_ = ok_ && pto::fz::try_valid(C, kTiles, {g.decl_index[t.uid]}, {r}, {c});"
                   f"  // set_validshape({t.name})")
        elif id(s) in ops and ops[id(s)].fn == "load":
            op = ops[id(s)]
            g.emit(_gm_run(g, s, op.dst, s.args["src"], runs[id(s)]) + f"  // {_describe(op)}")
        elif id(s) in ops:
            op = ops[id(s)]
            g.emit(f"ok_ = ok_ && w_.dst(C, {g.decl_index[op.dst.uid]});  // {_describe(op)}")
        elif id(s) in stores:
            st = stores[id(s)]
            g.emit(_gm_run(g, s, st.src, s.args["dst"], runs[id(s)]) + f"  // store({s.args['dst'].name}, "
                   f"{st.src.name})")
        elif grp.row_reduce and s is grp.row_reduce.stmt:
            rs = grp.row_reduce
            g.emit(f"ok_ = ok_ && w_.dst(C, {g.decl_index[rs.src.uid]});  // {rs.dst.name} = "
                   f"{s.op.name}({rs.src.name}): its source window")
    names = list(runs.values())
    for st in grp.stores:
        mine = runs[id(st.stmt)]
        for other in names[:names.index(mine)]:
            g.emit(f"ok_ = ok_ && pto::fz::apart({mine}, {other}, w_);  // no partial overlap")


def emit_group(g: "KernelCodegen", grp: Group) -> None:
    """Emit the group: the guard, the fused loop, and the original code as the fallback."""
    fallback, first_site = _fallback(g, grp, g.indent + 2)
    g.fused_groups += 1
    g.emit(f"{{  // {_summary(grp)}")
    g.indent += 1
    g.emit("pto::fz::Window w_;")
    g.emit("bool ok_ = true;")
    ct = DTYPES[grp.dtype.name]
    runs = {id(op.stmt): f"m{i}_" for i, op in enumerate([o for o in grp.ops if o.fn == "load"] + grp.stores)}
    if runs:
        g.emit(f"pto::fz::Run<{ct}> {', '.join(runs.values())};  // the GM windows of fused loads and stores")
    _emit_guard(g, grp, runs)
    rows, cols = _min_shape(grp)
    g.emit(f"if (ok_ && w_.fits({rows}, {cols})) {{  // one window for all, fits every operand")
    g.indent += 1
    g.emit(f"C.site = {first_site};  // nothing below can fail")
    _Loop(g, grp, runs).emit()
    g.indent -= 1
    g.emit("} else {  // the original per-op code")
    g.lines += fallback
    g.emit("}")
    g.indent -= 1
    g.emit("}")


class _Loop:
    """The fused loop: pointers and scalars first, then one generic-lambda body per element."""

    def __init__(self, g: "KernelCodegen", grp: Group, runs: Dict[int, str]):
        self.g, self.grp, self.runs = g, grp, runs
        self.ct = DTYPES[grp.dtype.name]
        self.ptr: Dict[tuple, str] = {}
        self.used: set = set()  # storages the loop reads or writes
        self.widths: set = set()  # their row lengths (ND tiles)
        self.value: Dict[tuple, str] = {}  # register holding each (kind, storage)'s current element
        self.body: List[str] = []

    def emit(self) -> None:
        g, ct = self.g, self.ct
        tiles: Dict[tuple, ir.TileDecl] = {}
        for _, t in _uses(self.grp):
            if _key(t) not in self.ptr:
                self.ptr[_key(t)] = f"p{len(self.ptr)}_"
                tiles[_key(t)] = t
        scalars = self._scalars()
        last = self._ops(scalars)
        for k, (v, tile) in last.items():
            if k in self.grp.live:
                self.body.append(f"fz::store({self._addr(TILE, k)}, {v});  // {tile}")
        for st in self.grp.stores:
            v = last[_key(st.src)][0]
            self.body.append(f"fz::store_gm({self.runs[id(st.stmt)]}, {self._gm_addr(st.stmt)}, {v});  "
                             f"// store({st.stmt.args['dst'].name}, {st.src.name})")
        rs = self.grp.row_reduce
        if rs is not None:
            self.body.append(f"return {self.value[(TILE, _key(rs.src))]};  // {rs.src.name}")
            self.used.add(_key(rs.dst))
        for k, t in tiles.items():  # the tiles the loop reads or writes
            if k in self.used:
                g.emit(f"{ct}* const {self.ptr[k]} = C.ptr<{ct}>(kTiles[{g.decl_index[t.uid]}]);  // {t.name}")
        self._ahead()
        # the body captures by value: the loop function keeps its copy in registers (fuse.h Body)
        fetch = "pto::fz::NoAhead()" if self._loads() else f"pto::fz::fetching(ahead_, {2 if self.grp.stores else 1})"
        body = f"{fetch}, [=](auto lanes_, int64_t r_, int64_t c_) {{"
        if rs is None:
            g.emit(f"pto::fz::each(w_.vr, w_.vc, {self._flat()}, {body}")
        else:
            out = self.ptr[_key(rs.dst)]
            g.emit(f"// {rs.dst.name}[r] = {rs.stmt.op.name} of the values returned for row r (pto::{rs.stmt.op.name}'s result)")
            if rs.kind == "sum":
                g.emit(f"pto::fz::each_row_sum(w_.vr, w_.vc, {out}, {body}")
            else:
                k = _key(rs.src)
                g.emit(f"pto::fz::each_row_minmax<pto::R{rs.kind.capitalize()}>(w_.vr, w_.vc, {out}, {self.ptr[k]}, "
                       f"{k[2][1]}, {body}")
        g.indent += 1
        g.emit("using V = decltype(lanes_);  // pto::fz::P4 (32 columns), __m256 (8) or float (the tail)")
        g.emit("namespace fz = pto::fz;")
        for line in self.body:
            g.emit(line)
        g.indent -= 1
        g.emit("});")
        for st in self.grp.stores:
            g.emit(f"pto::fz::end_stores({self.runs[id(st.stmt)]});  // order streamed stores")

    def _ahead(self) -> None:
        """Overlap the next row tile's GM reads with this one's work (fuse.h ``note_ahead``): a group
        with fused loads notes the window each load will read next; a group without loads (the
        arithmetic, or the streaming stores, which leave the read side of the memory idle) fetches
        the noted window as it runs."""
        g = self.g
        g.uses_ahead = True
        if not self._loads():
            g.emit("// the loop fetches the window a load group noted in ahead_ (a line or two per step)")
            return
        for op in self.grp.ops:
            if op.fn == "load":
                g.emit(f"pto::fz::note_ahead(ahead_, C.ptr<{self.ct}>(kTiles[{g.decl_index[op.dst.uid]}]), "
                       f"{self.runs[id(op.stmt)]}, w_);  // fetched by the next group without GM")

    def _loads(self) -> bool:
        return any(op.fn == "load" for op in self.grp.ops)

    def _scalars(self) -> Dict[int, str]:
        """Scalar operands converted like pto::scal<T> (id of the expression -> C++ local)."""
        out = {}
        for op in self.grp.ops:
            for kind, e in op.operands:
                if kind == SCALAR and id(e) not in out:  # the parser shares constant nodes
                    out[id(e)] = name = f"k{len(out)}_"
                    self.g.emit(f"const float {name} = pto::scal<{self.ct}>({self.g.scalar(e)});")
        return out

    def _flat(self) -> str:
        """A C++ condition under which the window is one contiguous run in every tile and GM window
        the loop touches."""
        if any(kind in (ROW, COL) for kind, _ in _uses(self.grp)) or len(self.widths) > 1:
            return "false"
        conds = [f"w_.vc == {w}" for w in self.widths]
        conds += [f"({run}.st0 == w_.vc || w_.vr == 1)" for run in self.runs.values()]
        return " && ".join(conds) or "true"

    def _addr(self, kind: str, k: tuple) -> str:
        p = self.ptr[k]
        self.used.add(k)
        if kind == ROW:
            return f"{p} + r_"
        if kind == COL:
            return f"{p} + c_"
        self.widths.add(k[2][1])
        return f"{p} + r_ * {k[2][1]} + c_"

    def _gm_addr(self, s: ir.OpStmt) -> str:
        run = self.runs[id(s)]
        return f"{run}.p + r_ * {run}.st0 + c_"

    def _operand(self, kind: str, x, scalars: Dict[int, str]) -> str:
        """The register holding an operand's element (loading it on first use)."""
        if kind == SCALAR:
            return f"fz::splat<V>({scalars[id(x)]})"
        k = (kind, _key(x))
        if k not in self.value:
            name = f"x{len(self.value)}"
            if kind == ROW:
                load = f"fz::splat<V>(fz::load<float>({self._addr(ROW, k[1])}))"
            else:
                load = f"fz::load<V>({self._addr(kind, k[1])})"
            self.body.append(f"const V {name} = {load};  // {x.name}{'[r, 0]' if kind == ROW else ''}")
            self.value[k] = name
        return self.value[k]

    def _ops(self, scalars: Dict[int, str]) -> Dict[tuple, Tuple[str, str]]:
        """One statement per op; returns each written storage's last register (and tile name)."""
        last: Dict[tuple, Tuple[str, str]] = {}
        for i, op in enumerate(self.grp.ops):
            if op.fn == "load":
                expr = f"fz::load<V>({self._gm_addr(op.stmt)})"
            else:
                args = [self._operand(kind, x, scalars) for kind, x in op.operands]
                if op.fn == "splat":
                    expr = args[0]
                else:
                    expr = f"fz::{op.fn}({', '.join(args)})"
                    if self.ct != "float":
                        expr = f"fz::round<{self.ct}>({expr})"
            name = f"v{i}"
            self.body.append(f"const V {name} = {expr};  // {_describe(op)}")
            self.value[(TILE, _key(op.dst))] = name
            last[_key(op.dst)] = (name, op.dst.name)
        return last
