"""Element-wise fusion: runs of consecutive element-wise tile ops become ONE loop over the valid window.

Unfused, every tile op is a pass over its tiles (loads and stores of a whole tile per op).  This pass
finds maximal runs of consecutive fusable statements in a statement list and emits one loop in which
each element's values flow through registers (``include/pto/fuse.h``: a generic lambda instantiated
for 8 AVX2 fp32 lanes and for a scalar tail).  Semantics are identical to the unfused code:

* fusable ops: ``add sub mul div maximum minimum`` (tile or scalar rhs), ``neg abs exp sqrt rsqrt recip
  relu``, ``expands`` and the row/column broadcasts ``expand_{sub,div,mul,max,min}``; fp32, fp16,
  bf16 (computed in fp32, rounded to the dtype after every op, as the unfused ops do);
  ``sync_src``/``sync_dst``/``bar_*`` (no-ops here) and ``set_validshape`` of a declared tile may be
  interleaved; a row sum (``row_sum``, ``sum(dim=0)``) of a tile the group wrote, right after it, is
  accumulated in the same loop (8 lanes, pto::row_sum's order);
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
* stores: only the last value written to each distinct tile storage (earlier writes to the same
  storage are fully overwritten inside the group, since all windows are equal).

``PYPTO_CPU_FUSION=0`` turns the pass off (for measurements and differential tests).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ...dtypes import DataType
from ...ir import nodes as ir
from ...ir.layout import footprint_elems
from ...ir.types import Layout, MemorySpace

if TYPE_CHECKING:
    from .codegen import KernelCodegen

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max", "minimum": "min"}
UNARY = {"neg": "neg", "abs": "abs", "exp": "exp", "sqrt": "sqrt", "rsqrt": "rsqrt", "recip": "recip",
         "relu": "relu"}
EXPAND = {"expand_sub": "sub", "expand_div": "div", "expand_mul": "mul", "expand_max": "max",
          "expand_min": "min"}
NOPS = frozenset({"sync_src", "sync_dst", "bar_m", "bar_mte1", "bar_mte2", "bar_mte3", "bar_fix", "bar_all",
                  "bar_v"})
DTYPES = {"FP32": "float", "FP16": "pto::half", "BF16": "pto::bf16"}
FAILING_SCALAR_OPS = frozenset({"/", "//", "%"})

#: operand kinds: a tile element (r, c), a row-broadcast value v[r, 0], a column-broadcast v[0, c], a scalar
TILE, ROW, COL, SCALAR = "tile", "row", "col", "scalar"


def enabled() -> bool:
    """Whether the fusion pass runs ($PYPTO_CPU_FUSION=0 turns it off)."""
    return os.environ.get("PYPTO_CPU_FUSION", "1") != "0"


@dataclass
class FusedOp:
    """One element-wise op of a group: its fz:: function and operands."""

    stmt: ir.OpStmt
    fn: str
    dst: ir.TileDecl
    operands: List[Tuple[str, Any]]  # (TILE|ROW|COL, TileDecl) or (SCALAR, expression)


@dataclass
class RowSum:
    """A row sum (``row_sum`` / ``sum(dim=0)``) of a tile the group writes, fused as its last statement."""

    stmt: ir.OpStmt
    src: ir.TileDecl
    dst: ir.TileDecl


@dataclass
class Group:
    """A maximal run of fusable statements (ops, no-ops and set_validshapes) with >= 2 ops, or with
    >= 1 op and a trailing row sum."""

    stmts: List[ir.Stmt]
    ops: List[FusedOp]
    dtype: DataType
    row_sum: Optional[RowSum] = None


def _key(t: ir.TileDecl) -> tuple:
    """Storage identity: tiles with equal keys denote the same elements."""
    return (t.space, t.addr, tuple(t.shape), t.layout, t.dtype.name)


def _byte_range(t: ir.TileDecl) -> Tuple[int, int]:
    n = footprint_elems(t.shape[0], t.shape[1], t.layout, t.dtype.nbytes, t.space == MemorySpace.Acc)
    return t.addr, t.addr + n * t.dtype.nbytes


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
    name, a = s.op.name, s.args
    if name not in BINARY and name not in UNARY and name not in EXPAND and name != "expands":
        return None
    dst = _decl(a["dst"])
    if dst is None or dst.dtype.name not in DTYPES:
        return None
    if name in BINARY:
        if a.get("dim") is not None:
            return None
        ops = [_tile_operand(a["lhs"]), _rhs_operand(a["rhs"])]
        fn = BINARY[name]
    elif name in UNARY:
        ops, fn = [_tile_operand(a["src"])], UNARY[name]
    elif name == "expands":
        ops, fn = [_rhs_operand(a["scalar"])], "splat"
    else:
        v = _decl(a["v"])
        ops = [_tile_operand(a["src"]), (ROW if a["dim"] == 0 else COL, v) if v is not None else None]
        fn = EXPAND[name]
    if any(o is None for o in ops):
        return None
    return FusedOp(s, fn, dst, ops)


def _layout_ok(kind: str, t: ir.TileDecl) -> bool:
    """ND tiles; broadcast operands [R,1] / [1,C] and one-column tiles may also be DN (same addressing)."""
    if t.layout == Layout.ND:
        return kind == TILE or t.shape[1 if kind == ROW else 0] == 1
    if t.layout != Layout.DN:
        return False
    return t.shape[1] == 1 if kind in (TILE, ROW) else t.shape[0] == 1


@dataclass
class _Builder:
    """Accumulates a group, admitting an op only if the group stays legal."""

    dtype: Optional[DataType] = None
    tiles: Dict[tuple, ir.TileDecl] = field(default_factory=dict)
    kinds: Dict[tuple, set] = field(default_factory=dict)  # storage -> how the group uses it
    written: set = field(default_factory=set)
    broadcast: set = field(default_factory=set)

    def admit(self, op: FusedOp) -> bool:
        uses = [(TILE, op.dst)] + [o for o in op.operands if o[0] != SCALAR]
        dtype = self.dtype or op.dst.dtype
        seen = dict(self.tiles)
        for kind, t in uses:
            if t.dtype.name != dtype.name or not _layout_ok(kind, t) or not _disjoint_or_same(seen, t):
                return False
            seen.setdefault(_key(t), t)
        read_bcast = {_key(t) for kind, t in uses if kind in (ROW, COL)}
        dkey = _key(op.dst)
        if dkey in self.broadcast or dkey in read_bcast or read_bcast & self.written:
            return False
        self.dtype = dtype
        self.tiles = seen
        for kind, t in uses:
            self.kinds.setdefault(_key(t), set()).add(kind)
        self.written.add(dkey)
        self.broadcast |= read_bcast
        return True

    def admit_row_sum(self, s: ir.Stmt) -> Optional[RowSum]:
        """``s`` as a row sum of a tile written in the group into an [R,1] tile, if legal.

        The [R,1] destination may be a row-broadcast operand of the group (softmax's statistics
        tile): row r's sum is stored after every element of row r, and only row r reads v[r].
        """
        if type(s) is not ir.OpStmt or not _is_row_sum(s):
            return None
        src, dst = _decl(s.args["src"]), _decl(s.args["dst"])
        if src is None or dst is None or _key(src) not in self.written or dst.dtype.name != self.dtype.name:
            return None
        if self.kinds.get(_key(dst), {ROW}) != {ROW} or not _layout_ok(ROW, dst):
            return None
        return RowSum(s, src, dst) if _disjoint_or_same(self.tiles, dst) else None


def _is_row_sum(s: ir.OpStmt) -> bool:
    name = s.op.name
    return name == "row_sum" or (name == "sum" and s.args.get("dim") == 0)


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
    if s.op.name in NOPS:
        return True
    if s.op.name == "set_validshape":
        return type(s.args["tile"]) is ir.DeclRef and all(_cannot_fail(x) for x in s.args["shape"])
    return False


def find_group(body: List[ir.Stmt], start: int) -> Optional[Group]:
    """The maximal fusable run starting at body[start] (trailing non-ops trimmed), if it has >= 2 ops
    or >= 1 op followed (after no-ops and set_validshapes only) by a row sum of one of its results.

    A set_validshape of a tile that is already a destination in the run ends the run: the windows
    would differ (the guard would fail), and it keeps every destination's window constant within the
    group, so the fallback can simply re-run the group's statements.
    """
    b = _Builder()
    stmts: List[ir.Stmt] = []
    ops: List[FusedOp] = []
    dsts: set = set()
    n_at_last_op = 0
    row_sum = None
    for s in body[start:]:
        op = as_fused(s) if type(s) is ir.OpStmt else None
        if op is not None:
            if not b.admit(op):
                break
            ops.append(op)
            dsts.add(op.dst.uid)
            stmts.append(s)
            n_at_last_op = len(stmts)
        elif _interleavable(s) and not (s.op.name == "set_validshape" and s.args["tile"].tile.uid in dsts):
            stmts.append(s)
        else:
            # only no-ops and set_validshapes of other tiles (the row sum's destination) in between
            if ops and all(t.op.name in NOPS or t.op.name == "set_validshape" for t in stmts[n_at_last_op:]):
                row_sum = b.admit_row_sum(s)
                if row_sum is not None:
                    stmts.append(s)
                    n_at_last_op = len(stmts)
            break
    if len(ops) < (1 if row_sum else 2):
        return None
    return Group(stmts[:n_at_last_op], ops, b.dtype, row_sum)


# ------------------------------------------------------------------ emission
BIG = 2**31 - 1


def _uses(grp: Group) -> List[Tuple[str, ir.TileDecl]]:
    """Every tile use of the group in program order (operands before the destination of each op)."""
    out = []
    for op in grp.ops:
        out += [o for o in op.operands if o[0] != SCALAR]
        out.append((TILE, op.dst))
    if grp.row_sum:
        out += [(TILE, grp.row_sum.src), (ROW, grp.row_sum.dst)]
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
    args = [o[1].name if o[0] != SCALAR else repr(o[1]).replace("\n", " ") for o in op.operands]
    line = f" (line {op.stmt.loc.lineno})" if op.stmt.loc else ""
    return f"{op.dst.name} = {op.stmt.op.name}({', '.join(args)}){line}"


def _summary(grp: Group) -> str:
    lines = [s.loc.lineno for s in grp.stmts if getattr(s, "loc", None)]
    where = f" (lines {min(lines)}-{max(lines)})" if lines else ""
    names = " ".join(op.stmt.op.name for op in grp.ops)
    tail = f" + {grp.row_sum.stmt.op.name}" if grp.row_sum else ""
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


def _emit_guard(g: "KernelCodegen", grp: Group) -> None:
    """Apply the set_validshapes and read every destination's window, in program order."""
    ops = {id(op.stmt): op for op in grp.ops}
    for s in grp.stmts:
        if s.op.name == "set_validshape":
            r, c = (g.scalar(x) for x in s.args["shape"])
            t = s.args["tile"].tile
            g.emit(f"ok_ = ok_ && pto::fz::try_valid(C, kTiles, {g.decl_index[t.uid]}, {r}, {c});"
                   f"  // set_validshape({t.name})")
        elif id(s) in ops:
            op = ops[id(s)]
            g.emit(f"ok_ = ok_ && w_.dst(C, {g.decl_index[op.dst.uid]});  // {_describe(op)}")
        elif grp.row_sum and s is grp.row_sum.stmt:
            rs = grp.row_sum
            g.emit(f"ok_ = ok_ && w_.dst(C, {g.decl_index[rs.src.uid]});  // {rs.dst.name} = "
                   f"{s.op.name}({rs.src.name}): its source window")


def emit_group(g: "KernelCodegen", grp: Group) -> None:
    """Emit the group: the guard, the fused loop, and the original code as the fallback."""
    fallback, first_site = _fallback(g, grp, g.indent + 2)
    g.fused_groups += 1
    g.emit(f"{{  // {_summary(grp)}")
    g.indent += 1
    g.emit("pto::fz::Window w_;")
    g.emit("bool ok_ = true;")
    _emit_guard(g, grp)
    rows, cols = _min_shape(grp)
    g.emit(f"if (ok_ && w_.fits({rows}, {cols})) {{  // one window for all, fits every operand")
    g.indent += 1
    g.emit(f"C.site = {first_site};  // nothing below can fail")
    _Loop(g, grp).emit()
    g.indent -= 1
    g.emit("} else {  // the original per-op code")
    g.lines += fallback
    g.emit("}")
    g.indent -= 1
    g.emit("}")


class _Loop:
    """The fused loop: pointers and scalars first, then one generic-lambda body per element."""

    def __init__(self, g: "KernelCodegen", grp: Group):
        self.g, self.grp = g, grp
        self.ct = DTYPES[grp.dtype.name]
        self.ptr: Dict[tuple, str] = {}
        self.value: Dict[tuple, str] = {}  # register holding each (kind, storage)'s current element
        self.body: List[str] = []

    def emit(self) -> None:
        g, ct = self.g, self.ct
        for _, t in _uses(self.grp):
            k = _key(t)
            if k not in self.ptr:
                self.ptr[k] = f"p{len(self.ptr)}_"
                g.emit(f"{ct}* const {self.ptr[k]} = C.ptr<{ct}>(kTiles[{g.decl_index[t.uid]}]);  // {t.name}")
        scalars = self._scalars()
        last = self._ops(scalars)
        for k, (v, tile) in last.items():
            self.body.append(f"fz::store({self._addr(TILE, k)}, {v});  // {tile}")
        rs = self.grp.row_sum
        if rs is None:
            g.emit(f"pto::fz::each(w_.vr, w_.vc, {self._flat()}, [&](auto lanes_, int64_t r_, int64_t c_) {{")
        else:
            out = self.ptr[_key(rs.dst)]
            g.emit(f"// {rs.dst.name}[r] = {rs.stmt.op.name} of the values returned for row r (pto::row_sum's lane order)")
            g.emit(f"pto::fz::each_row_sum(w_.vr, w_.vc, {out}, [&](auto lanes_, int64_t r_, int64_t c_) {{")
            self.body.append(f"return {self.value[(TILE, _key(rs.src))]};  // {rs.src.name}")
        g.indent += 1
        g.emit("using V = decltype(lanes_);  // pto::fz::P4 (32 columns), __m256 (8) or float (the tail)")
        g.emit("namespace fz = pto::fz;")
        for line in self.body:
            g.emit(line)
        g.indent -= 1
        g.emit("});")

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
        """A C++ condition under which the window is one contiguous run in every tile."""
        uses = _uses(self.grp)
        widths = {t.shape[1] for _, t in uses}
        if any(kind != TILE for kind, _ in uses) or len(widths) != 1:
            return "false"
        return f"w_.vc == {widths.pop()}"

    def _addr(self, kind: str, k: tuple) -> str:
        p = self.ptr[k]
        if kind == ROW:
            return f"{p} + r_"
        if kind == COL:
            return f"{p} + c_"
        return f"{p} + r_ * {k[2][1]} + c_"

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
