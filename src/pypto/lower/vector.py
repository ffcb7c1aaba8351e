"""Vector passes: one store (dst region <- expression) becomes one loop nest over tiles.

The pass iterates the destination's leading axes one index at a time and its last two axes in
``TR x TC`` tiles (tails through valid windows).  Inside the innermost loop the whole element-wise
expression is computed on tiles: each GM input is loaded once per tile, intermediate values stay
in UB, and the result is stored once.  Operands that broadcast along rows/cols are loaded as
``[1, TC]`` / ``[TR, 1]`` tiles and combined with ``expand_*`` ops; reductions whose reduced axis
fits in one tile are computed in the tile (``row_*``/``col_*``).  Everything else (matmuls, other
reductions, scalars computed from tensors) is first materialised by a pass of its own into a GM
workspace buffer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.optable import OPS
from pypto_pro.ir.types import Layout, RoundMode

from ..graph import ELEMENTWISE, Node, full_leaf
from ..symbolic import is_static, to_expr
from .builder import Builder, expr
from .widening import Widening, work_dtype

TR_ALIGN = 8  # rows of a full tile: [rows, 1] FP32 DN columns fill 32 bytes
TC_ALIGN = 32
_TILE_BUDGET = 1 << 14  # elements per full tile (64 KiB of FP32); passes that still overflow shrink rows


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _min(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return ir.BinOp("min", to_expr(a), to_expr(b), dt.DT_INT64)


def _add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return ir.BinOp("+", to_expr(a), to_expr(b), dt.DT_INT64)


def _mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return ir.BinOp("*", to_expr(a), to_expr(b), dt.DT_INT64)


def _sub(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return ir.BinOp("-", to_expr(a), to_expr(b), dt.DT_INT64)


def _ceil_div(a, b: int):
    if isinstance(a, int):
        return -(-a // b)
    return ir.BinOp("//", ir.BinOp("+", to_expr(a), ir.Const(b - 1), dt.DT_INT64), ir.Const(b), dt.DT_INT64)


def dim(d):
    """A dim as an int or an IR expression."""
    return d if is_static(d) else to_expr(d)


@dataclass
class Region:
    """The part of a pass's logical index space one iteration covers."""

    lead: List[Any]
    r0: Any
    vr: Any
    c0: Any
    vc: Any


@dataclass
class Val:
    """A computed operand: a tile of ``kind`` full/row/col, or a scalar (``kind == "one"``)."""

    ref: Any
    kind: str
    mask: bool = False


def row_alignment(n: Node) -> int:
    """Tile rows of a pass computing ``n``: a multiple that makes every ``[rows, 1]`` DN column tile
    (row statistics, row broadcasts) fill whole 32-byte blocks for the narrowest dtype in ``n``
    (8 rows for FP32, 16 for FP16/BF16, 32 for 8-bit values and masks)."""
    narrowest, seen, stack = 8, set(), [n]
    while stack:
        m = stack.pop()
        if m.uid in seen:
            continue
        seen.add(m.uid)
        narrowest = min(narrowest, m.dtype.nbytes)
        stack.extend(m.inputs)
    return max(TR_ALIGN, 32 // narrowest)


def choose_tiles(vec_tile: Sequence[int], rank: int, row_align: int = TR_ALIGN) -> Tuple[int, int]:
    """(rows, cols) of a pass's full tiles: the vec tile shape aligned (rows to ``row_align``, columns
    to 32 elements), halved (rows first) until one tile holds at most the budget."""
    tc = _round_up(vec_tile[-1], TC_ALIGN)
    tr = 1
    if rank >= 2:
        tr = _round_up(vec_tile[-2] if len(vec_tile) >= 2 else 1, row_align)
        while tr * tc > _TILE_BUDGET and tr > row_align:
            tr = max(row_align, _round_up(tr // 2, row_align))
    while tr * tc > _TILE_BUDGET and tc > TC_ALIGN:
        tc = max(TC_ALIGN, _round_up(tc // 2, TC_ALIGN))
    return tr, tc


class Pass:
    """Tile evaluation of expressions over one pass shape."""

    def __init__(self, lw, shape: Sequence[Any], tr: int, tc: int, mats: Dict[int, Node]):
        self.lw = lw
        self.b: Builder = lw.b
        self.shape = list(shape)
        self.tr, self.tc = tr, tc
        self.mats = mats
        self.memo: Dict[Tuple, Val] = {}
        #: (node uid, shape) already planned with this pass as the probe
        self.planned: set = set()
        self.widening = Widening(mats, lw.b.arch.name)

    # -------------------------------------------------------------- classification
    def node_dims(self, n: Node, shape=None):
        shape = self.shape if shape is None else shape
        p, r = len(shape), n.ndim
        return [n.shape[i - (p - r)] if i - (p - r) >= 0 else 1 for i in range(p)]

    def kind(self, n: Node, shape=None) -> str:
        shape = self.shape if shape is None else shape
        nd = self.node_dims(n, shape)
        cols_b = _is_one(nd[-1]) and not _is_one(shape[-1])
        if len(shape) == 1:
            return "one" if cols_b else "full"
        rows_b = _is_one(nd[-2]) and not _is_one(shape[-2])
        return {(False, False): "full", (True, False): "row", (False, True): "col", (True, True): "one"}[
            (rows_b, cols_b)]

    def tile_for(self, kind: str, dtype: dt.DataType, region: Region):
        if kind == "full":
            t = self.b.tile(self.tr, self.tc, dtype)
            valid = [region.vr if len(self.shape) >= 2 else 1, region.vc]
        elif kind == "row":
            t = self.b.tile(1, self.tc, dtype)
            valid = [1, region.vc]
        else:
            t = self.b.tile(self.tr, 1, dtype, layout=Layout.DN)
            valid = [region.vr, 1]
        self.b.op("set_validshape", tile=t, shape=valid)
        return t

    # -------------------------------------------------------------- evaluation
    def eval(self, n: Node, region: Region, shape=None) -> Val:
        shape = self.shape if shape is None else shape
        key = (n.uid, id(region), tuple(map(repr, shape)))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        m = self.mats.get(n.uid)
        n = m if m is not None else self.widening.resolve(n)
        k = self.kind(n, shape)
        with self.b.at(n.loc):
            val = getattr(self, "e_" + n.op)(n, k, region, shape)
        self.memo[key] = val
        return val

    def operand(self, n: Node, kind: str, region: Region, shape) -> Val:
        """``n`` evaluated and broadcast to ``kind`` (a tile unless kind is "one")."""
        v = self.eval(n, region, shape)
        if v.kind == kind:
            return v
        return self.broadcast(v, kind, n.dtype, region)

    def broadcast(self, v: Val, kind: str, dtype: dt.DataType, region: Region) -> Val:
        if v.mask:
            v = self.mask_to_values(v, dt.DT_FP32, region)
            return self.values_to_mask(self.broadcast(v, kind, dt.DT_FP32, region), region)
        t = self.tile_for(kind, dtype, region)
        if v.kind == "one":
            self.b.op("expands", dst=t, scalar=v.ref)
            return Val(t, kind)
        self.b.op("expands", dst=t, scalar=_lowest(dtype))
        self.b.op("expand_max", dst=t, src=t, v=v.ref, dim=1 if v.kind == "row" else 0)
        return Val(t, kind)

    # -------------------------------------------------------------- leaves
    def leaf_window(self, n: Node, region: Region, shape):
        """(buffer offsets, order) of ``n``'s part of ``region``."""
        a = n.attrs
        buf, axes = a["buf"], a["axes"]
        offs = [dim(o) if not is_static(o) else o for o in a["offsets"]]
        p, r = len(shape), n.ndim
        nd = self.node_dims(n, shape)
        for j in range(r):
            i = j + (p - r)
            if _is_one(nd[i]) and not _is_one(shape[i]):
                continue
            if i == p - 1:
                start = region.c0
            elif i == p - 2:
                start = region.r0
            else:
                start = region.lead[i]
            offs[axes[j]] = _add(offs[axes[j]], start)
        if len(buf.shape) == 1:
            order = None
        elif r >= 2:
            order = [axes[-2], axes[-1]]
        else:
            other = [ax for ax in range(len(buf.shape)) if ax != axes[-1]]
            order = [other[-1], axes[-1]]
        if order is not None and order == [len(buf.shape) - 2, len(buf.shape) - 1]:
            order = None
        return offs, order

    def e_gm(self, n: Node, k: str, region: Region, shape) -> Val:
        param = self.b.param(n.attrs["buf"])
        offs, order = self.leaf_window(n, region, shape)
        # A 1-D tensor loads only into a [1, C] tile.  It is a "full" or "col" operand only under a
        # pass whose rows are 1 ([1, C] or [.., 1, 1]): then it is read as a row (a "col" one, of
        # size 1, as a scalar) and broadcast to the tile the pass uses.
        one_d = len(n.attrs["buf"].shape) == 1 and len(shape) >= 2
        read = {"full": "row", "col": "one"}.get(k, k) if one_d else k
        if read == "one":
            var = ir.Var(f"g{len(self.b.tiles)}", param.dtype)
            self.b.op("getval", result=var, src=param, index=offs)
            val = Val(var, "one") if n.dtype != dt.DT_BOOL else self.values_to_mask(
                self.broadcast(Val(var, "one"), "row", dt.DT_FP32, region), region)
        else:
            t = self.tile_for(read, param.dtype, region)
            self.b.op("load", dst=t, src=param, offsets=offs, order=order)
            val = Val(t, read)
            if n.dtype == dt.DT_BOOL:
                f = self.tile_for(read, dt.DT_FP16, region)
                self.b.op("cast", dst=f, src=t)
                val = self.values_to_mask(Val(f, read), region)
        return val if val.kind == k else self.broadcast(val, k, n.dtype, region)

    def e_full(self, n: Node, k: str, region: Region, shape) -> Val:
        value = expr(n.attrs["value"])
        if k == "one":
            return Val(value, "one")
        t = self.tile_for(k, n.dtype, region)
        self.b.op("expands", dst=t, scalar=value)
        return Val(t, k)

    def e_arange(self, n: Node, k: str, region: Region, shape) -> Val:
        start, step = n.attrs["start"], n.attrs["step"]
        t = self.tile_for(k if k != "one" else "row", n.dtype, region)
        self.b.op("fill_index", dst=t, start=0)
        if step != 1:
            self.b.op("mul", dst=t, lhs=t, rhs=step)
        first = ir.BinOp("+", to_expr(start), ir.BinOp("*", to_expr(region.c0), to_expr(step), dt.DT_INT64),
                         dt.DT_INT64) if not isinstance(region.c0, int) else start + region.c0 * step
        if not (isinstance(first, (int, float)) and first == 0):
            self.b.op("add", dst=t, lhs=t, rhs=first)
        return Val(t, "row" if k == "one" else k)

    def e_iota(self, n: Node, k: str, region: Region, shape) -> Val:
        """Index along ``n.attrs["axis"]`` (INT32): ``fill_index`` on a row tile (last pass axis) or a
        ``[TR, 1]`` column tile (second-to-last) plus the region's offset; a leading axis is a scalar."""
        p = len(shape)
        axis = n.attrs["axis"] + p - n.ndim
        if axis == p - 1 and k != "one":
            t = self.tile_for("row" if p >= 2 else "full", n.dtype, region)
            start = region.c0
        elif axis == p - 2 and k != "one":
            t = self.tile_for("col", n.dtype, region)
            start = region.r0
        else:
            start = region.c0 if axis == p - 1 else region.r0 if axis == p - 2 else region.lead[axis]
            return Val(start, "one")
        self.b.op("fill_index", dst=t, start=0)
        if not (isinstance(start, int) and start == 0):
            self.b.op("add", dst=t, lhs=t, rhs=start)
        v = Val(t, "row" if axis == p - 1 and p >= 2 else "col" if axis == p - 2 else "full")
        return v if v.kind == k else self.broadcast(v, k, n.dtype, region)

    # -------------------------------------------------------------- element-wise
    def e_cast(self, n: Node, k: str, region: Region, shape) -> Val:
        src = n.inputs[0]
        v = self.eval(src, region, shape)
        if v.mask:
            v = self.mask_to_values(v, dt.DT_FP32, region)
        if v.kind == "one":
            v = self.broadcast(v, "row", src.dtype if not src.dtype == dt.DT_BOOL else dt.DT_FP32, region)
        if n.dtype == dt.DT_BOOL:
            return self.values_to_mask(v, region)
        vt = v.ref.dtype
        if vt == n.dtype:
            return v
        t = self.tile_for(v.kind, n.dtype, region)
        mode = n.attrs.get("mode", 0) or RoundMode.CAST_RINT
        self.b.op("cast", dst=t, src=v.ref, mode=RoundMode(mode))
        return Val(t, v.kind)

    def e_expand(self, n: Node, k: str, region: Region, shape) -> Val:
        return self.operand(n.inputs[0], k, region, shape)

    def e_unary(self, n: Node, k: str, region: Region, shape) -> Val:
        fn = n.attrs["fn"]
        x = self.operand(n.inputs[0], k, region, shape)
        if k == "one":
            x = self.broadcast(x, "row", n.dtype, region)
        t = self.tile_for(x.kind, n.dtype, region)
        extra = {p.name: n.attrs[p.name] for p in OPS[fn].params if not p.role and p.name in n.attrs}  # philox's key
        self.b.op(fn, dst=t, src=x.ref, **extra)
        return Val(t, x.kind)

    def e_binary(self, n: Node, k: str, region: Region, shape) -> Val:
        fn = n.attrs["fn"]
        full = self._broadcast_addend(n, shape) if k == "full" else None
        if full is not None:
            return self.expand_add(n, full, region, shape)
        a, b = (self.eval(i, region, shape) for i in n.inputs)
        if k == "one":
            if a.kind == "one" and b.kind == "one":
                a = self.broadcast(a, "row", n.dtype, region)
            k = "row"
        if b.kind == "one" and _scalar_rhs(fn):
            a = a if a.kind == k else self.broadcast(a, k, n.dtype, region)
            return self.binary_tile(fn, a, b.ref, n.dtype, region)
        if a.kind == "one" and _scalar_rhs(fn) and OPS[fn].commutative:
            b = b if b.kind == k else self.broadcast(b, k, n.dtype, region)
            return self.binary_tile(fn, b, a.ref, n.dtype, region)
        expand = _expand_op(fn)
        if k == "full" and a.kind == "full" and b.kind in ("row", "col") and expand:
            t = self.tile_for(k, n.dtype, region)
            self.b.op(expand, dst=t, src=a.ref, v=b.ref, dim=1 if b.kind == "row" else 0)
            return Val(t, k)
        if k == "full" and b.kind == "full" and a.kind in ("row", "col") and expand and OPS[fn].commutative:
            t = self.tile_for(k, n.dtype, region)
            self.b.op(expand, dst=t, src=b.ref, v=a.ref, dim=1 if a.kind == "row" else 0)
            return Val(t, k)
        a = a if a.kind == k else self.broadcast(a, k, n.dtype, region)
        b = b if b.kind == k else self.broadcast(b, k, n.dtype, region)
        return self.binary_tile(fn, a, b.ref, n.dtype, region)

    def _broadcast_addend(self, n: Node, shape) -> Optional[int]:
        """For a float ``add`` of a full and a row/col operand: the index of the full input."""
        if (n.op != "binary" or n.attrs["fn"] != "add" or not n.dtype.is_float()
                or work_dtype(n, self.widening.arch) is not None):
            return None
        kinds = [self.kind(i, shape) for i in n.inputs]
        return kinds.index("full") if sorted(kinds) in (["full", "row"], ["col", "full"]) else None

    def negated(self, n: Node, dtype: dt.DataType, region: Region, shape) -> Val:
        """``-n`` for a row/col operand ``n`` (once per tile iteration)."""
        key = ("neg", n.uid, dtype.name, id(region), tuple(map(repr, shape)))
        hit = self.memo.get(key)
        if hit is None:
            small = self.operand(n, self.kind(n, shape), region, shape)
            t = self.tile_for(small.kind, dtype, region)
            self.b.op("neg", dst=t, src=small.ref)
            hit = self.memo[key] = Val(t, small.kind)
        return hit

    def negate_addends(self, value: Node, region: Region, shape) -> None:
        """Negate up front the GM row/col operands that ``value``'s element-wise adds add to full
        tiles (see :meth:`expand_add`), so that only full-window ops follow the full tiles' loads."""
        seen = set()
        stack = [value]
        while stack:
            n = stack.pop()
            if n.uid in seen or n.uid in self.mats:
                continue
            seen.add(n.uid)
            full = self._broadcast_addend(n, shape) if self.kind(n, shape) == "full" else None
            if full is not None and n.inputs[1 - full].op == "gm":
                self.negated(n.inputs[1 - full], n.dtype, region, shape)
            if n.op in ELEMENTWISE:
                stack.extend(n.inputs)

    def expand_add(self, n: Node, full_input: int, region: Region, shape) -> Val:
        """full + row/col broadcast without materialising the broadcast: the ISA has no expand_add,
        and ``x - (-v)`` is by definition the IEEE sum ``x + v`` (negation is exact).  The small
        operand is negated before the full one is computed, so the full chain and the expand_sub
        stay one run of same-window vector ops."""
        neg = self.negated(n.inputs[1 - full_input], n.dtype, region, shape)
        full = self.operand(n.inputs[full_input], "full", region, shape)
        t = self.tile_for("full", n.dtype, region)
        self.b.op("expand_sub", dst=t, src=full.ref, v=neg.ref, dim=1 if neg.kind == "row" else 0)
        return Val(t, "full")

    def binary_tile(self, fn: str, a: Val, rhs, dtype: dt.DataType, region: Region) -> Val:
        t = self.tile_for(a.kind, dtype, region)
        if fn == "xor":  # the only binary tile op with a scratch operand
            self.b.op(fn, dst=t, lhs=a.ref, rhs=rhs, tmp=self.tile_for(a.kind, dtype, region))
        else:
            self.b.op(fn, dst=t, lhs=a.ref, rhs=rhs)
        return Val(t, a.kind)

    def e_binary_scalar(self, n: Node, k: str, region: Region, shape) -> Val:
        fn, s, rev = n.attrs["fn"], expr(n.attrs["scalar"]), n.attrs["reverse"]
        x = self.operand(n.inputs[0], k, region, shape)
        if x.kind == "one":
            x = self.broadcast(x, "row", n.dtype, region)
        if not rev or OPS[fn].commutative:
            return self.binary_tile(fn, x, s, n.dtype, region)
        if fn == "sub":
            t = self.tile_for(x.kind, n.dtype, region)
            self.b.op("neg", dst=t, src=x.ref)
            self.b.op("add", dst=t, lhs=t, rhs=s)
            return Val(t, x.kind)
        t = self.tile_for(x.kind, n.dtype, region)
        self.b.op("expands", dst=t, scalar=s)
        self.b.op(fn, dst=t, lhs=t, rhs=x.ref)
        return Val(t, x.kind)

    # -------------------------------------------------------------- predicates
    def _cmp(self, fn: str, a: Val, rhs, region: Region) -> Val:
        m = self.tile_for(a.kind, dt.DT_UINT8, region)
        self.b.op(fn, mask=m, lhs=a.ref, rhs=rhs)
        return Val(m, a.kind, mask=True)

    def e_compare(self, n: Node, k: str, region: Region, shape) -> Val:
        k = "row" if k == "one" else k
        a = self.operand(n.inputs[0], k, region, shape)
        b = self.operand(n.inputs[1], k, region, shape)
        return self._cmp(n.attrs["fn"], a, b.ref, region)

    def e_compare_scalar(self, n: Node, k: str, region: Region, shape) -> Val:
        k = "row" if k == "one" else k
        a = self.operand(n.inputs[0], k, region, shape)
        return self._cmp(n.attrs["fn"], a, expr(n.attrs["scalar"]), region)

    def mask_to_values(self, v: Val, dtype: dt.DataType, region: Region) -> Val:
        ones = self.tile_for(v.kind, dtype, region)
        self.b.op("expands", dst=ones, scalar=1)
        t = self.tile_for(v.kind, dtype, region)
        self.b.op("select", dst=t, mask=v.ref, lhs=ones, rhs=0)
        return Val(t, v.kind)

    def values_to_mask(self, v: Val, region: Region) -> Val:
        return self._cmp("ne", v, 0, region)

    def e_logical_not(self, n: Node, k: str, region: Region, shape) -> Val:
        k = "row" if k == "one" else k
        v = self.mask_to_values(self.operand(n.inputs[0], k, region, shape), dt.DT_FP16, region)
        return self._cmp("eq", v, 0, region)

    def _logical(self, fn: str, n: Node, k: str, region: Region, shape) -> Val:
        k = "row" if k == "one" else k
        a = self.mask_to_values(self.operand(n.inputs[0], k, region, shape), dt.DT_FP16, region)
        b = self.mask_to_values(self.operand(n.inputs[1], k, region, shape), dt.DT_FP16, region)
        t = self.tile_for(k, dt.DT_FP16, region)
        self.b.op(fn, dst=t, lhs=a.ref, rhs=b.ref)
        return self.values_to_mask(Val(t, k), region)

    def e_logical_and(self, n, k, region, shape):
        return self._logical("mul", n, k, region, shape)

    def e_logical_or(self, n, k, region, shape):
        return self._logical("maximum", n, k, region, shape)

    def e_select(self, n: Node, k: str, region: Region, shape) -> Val:
        k = "row" if k == "one" else k
        c = self.operand(n.inputs[0], k, region, shape)
        a = self.operand(n.inputs[1], k, region, shape)
        if len(n.inputs) == 3:
            rhs = self.operand(n.inputs[2], k, region, shape).ref
        else:
            rhs = expr(n.attrs["scalar"])
        t = self.tile_for(k, n.dtype, region)
        self.b.op("select", dst=t, mask=c.ref, lhs=a.ref, rhs=rhs)
        return Val(t, k)

    # -------------------------------------------------------------- in-tile reductions
    def e_reduce(self, n: Node, k: str, region: Region, shape) -> Val:
        x = n.inputs[0]
        axis = n.attrs["axis"]
        last = x.ndim - 1
        sub_shape = list(shape)
        sub_shape[len(shape) - x.ndim + axis] = x.shape[axis]
        size = x.shape[axis]
        if axis == last and region.c0 == 0 and region.vc == size:
            sub = region
        elif axis != last and region.r0 == 0 and region.vr == size:
            sub = region
        elif axis == last:
            sub = Region(region.lead, region.r0, region.vr, 0, size)
        else:
            sub = Region(region.lead, 0, size, region.c0, region.vc)
        xv = self.operand(x, "full", sub, sub_shape)
        out = "col" if axis == last else "row"
        t = self.tile_for(out, n.dtype, region)
        prefix = "row_" if out == "col" else "col_"
        self.b.op(prefix + n.attrs["fn"], dst=t, src=xv.ref)
        return Val(t, out)


class ArgBest:
    """The running ``(best value, best index)`` tiles of a multi-pass argmax/argmin (a reduced axis
    longer than the tile, or a leading axis).  Each slice of the axis is reduced in the tile
    (``row_``/``col_`` max or min and arg op; a leading-axis slice is its own candidate, its index
    the loop variable) and replaces the running pair where torch prefers it: a strictly better value
    (ties keep the earlier index) or a NaN where the best is not NaN yet (NaN counts as the extreme,
    its first occurrence wins)."""

    def __init__(self, ps: Pass, fn: str, kind: str, dtype: dt.DataType, region: Region):
        self.ps, self.fn, self.kind, self.dtype, self.region = ps, fn, kind, dtype, region
        self.best = ps.tile_for(kind, dtype, region)
        ps.b.op("expands", dst=self.best, scalar=_lowest(dtype) if fn == "argmax" else _highest(dtype))
        self.idx = ps.tile_for(kind, dt.DT_INT32, region)
        ps.b.op("expands", dst=self.idx, scalar=0)

    def candidate(self, xv: Val, start) -> Tuple[Any, Any]:
        """(value, index) tiles of one slice ``xv`` whose first element has index ``start``."""
        ps, b, k, r = self.ps, self.ps.b, self.kind, self.region
        pos = ps.tile_for(k, dt.DT_INT32, r)
        if k == "full":
            b.op("expands", dst=pos, scalar=start)
            return xv.ref, pos
        prefix = "row_" if k == "col" else "col_"
        val = ps.tile_for(k, self.dtype, r)
        b.op(prefix + ("max" if self.fn == "argmax" else "min"), dst=val, src=xv.ref)
        b.op(prefix + self.fn, dst=pos, src=xv.ref)
        if not (isinstance(start, int) and start == 0):
            b.op("add", dst=pos, lhs=pos, rhs=start)
        return val, pos

    def combine(self, xv: Val, start) -> None:
        """Merge one slice into the running pair (all masks from the old best, then the selects)."""
        ps, b, r = self.ps, self.ps.b, self.region
        val, pos = self.candidate(xv, start)
        v = Val(val, self.kind)
        better = ps._cmp("gt" if self.fn == "argmax" else "lt", v, self.best, r).ref
        if not self.dtype.is_float():
            for cur, new in ((self.idx, pos), (self.best, val)):
                b.op("select", dst=cur, mask=better, lhs=new, rhs=cur)
            return
        nan = ps._cmp("ne", v, val, r).ref
        best_nan = ps._cmp("ne", Val(self.best, self.kind), self.best, r).ref
        for cur, new in ((self.idx, pos), (self.best, val)):
            t = ps.tile_for(self.kind, cur.dtype, r)
            b.op("select", dst=t, mask=better, lhs=new, rhs=cur)
            b.op("select", dst=t, mask=nan, lhs=new, rhs=t)
            b.op("select", dst=cur, mask=best_nan, lhs=cur, rhs=t)

    @property
    def tiles(self) -> List[Any]:
        """The running tiles, live across the loop over the axis (discarded after the index is stored)."""
        return [self.best.tile, self.idx.tile]


_EXPANDS: Dict[str, str] = {}


def _scalar_rhs(fn: str) -> bool:
    """Whether tile op ``fn`` takes a scalar right operand (the op table's ``rhs`` kind)."""
    op = OPS.get(fn)
    rhs = op.param_map.get("rhs") if op is not None else None
    return rhs is not None and rhs.kind == "tile_or_scalar"


def _expand_op(fn: str) -> Optional[str]:
    """The broadcast tile op (``expand_*``: src <f> v[r, 0] / v[0, c]) computing the element function of
    tile op ``fn``, from the op table's traits; None when there is none (add: the lowering adds a broadcast
    tile)."""
    if not _EXPANDS:
        _EXPANDS.update({op.elementwise: name for name, op in OPS.items() if op.elementwise and "v" in op.param_map})
    op = OPS.get(fn)
    return _EXPANDS.get(op.elementwise) if op is not None and op.elementwise else None


def _is_one(d) -> bool:
    return is_static(d) and d == 1


def _lowest(dtype: dt.DataType):
    if dtype.is_float():
        return float("-inf")
    return int(np.iinfo(dtype.require_numpy()).min)


def _highest(dtype: dt.DataType):
    """The largest value of ``dtype`` (inf for floats): the identity of a running minimum."""
    if dtype.is_float():
        return float("inf")
    return int(np.iinfo(dtype.require_numpy()).max)


def reduce_alignment(n: Node) -> int:
    """Tile rows of a reduction pass computing ``n``: :func:`row_alignment` of its input, and 32 for a
    running argmax/argmin (:class:`ArgBest`), whose comparison masks are 8-bit ``[rows, 1]`` tiles."""
    return 32 if n.attrs["fn"] in ("argmax", "argmin") else row_alignment(n.inputs[0])


def in_tile_reduce(n: Node, pass_shape: Sequence[Any], tr: int, tc: int) -> bool:
    """Whether a reduce node inside a pass can be computed in the tile."""
    x = n.inputs[0]
    axis = n.attrs["axis"]
    if x.ndim < 2 or len(pass_shape) < 2:
        return False
    size = x.shape[axis]
    if not is_static(size) or n.attrs["fn"] == "prod":  # no row_/col_ product tile op
        return False
    if axis == x.ndim - 1:
        return size <= tc
    if axis == x.ndim - 2:
        return size <= tr
    return False


def leaf_for(buf) -> Node:
    return full_leaf(buf)
