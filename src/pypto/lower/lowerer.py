"""Tensor graph -> one tile kernel.

Statements are lowered in program order: a ``Store`` becomes a vector pass (after the passes that
materialise what it cannot compute in its tiles), a recorded ``pypto.loop`` becomes an IR ``For``
and a runtime ``if`` an IR ``If``.  Matmuls become cube passes (GM -> Mat -> Left/Right,
``matmul``/``matmul_acc`` over K, store from Acc through the fixpipe).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelError, KernelMemoryError, KernelSyntaxError
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.types import MemorySpace

from ..nodeops import NODE_OPS
from ..graph import ELEMENTWISE, Branch, Graph, Loop, Node, Store, full_leaf
from ..ops.core import dims_agree
from ..symbolic import is_static, to_expr
from .bounds import Bounds
from .builder import Builder
from .cube_fit import cube_tiles_error, fit_cube_tiles
from .element_passes import ELEMENT_PASSES
from .hoist import hoist_invariant_loads
from .spill import Spills
from .vector import (TC_ALIGN, ArgBest, Pass, Region, _ceil_div, _lowest, _min, _mul, _round_up, _sub,
                     choose_tiles, dim, in_tile_reduce, reduce_alignment, row_alignment)

_IDENTITY = {"sum": 0, "max": float("-inf"), "min": float("inf"), "prod": 1}
_COMBINE = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "mul"}
#: reductions without a row_/col_ tile op: combined one element of the axis at a time
_ELEMENTWISE_ONLY = ("prod",)


def _has_matmul(stmts) -> bool:
    seen = set()

    def node(n: Node) -> bool:
        if n.uid in seen:
            return False
        seen.add(n.uid)
        return n.op == "matmul" or any(node(i) for i in n.inputs)

    for s in stmts:
        if isinstance(s, Store) and node(s.value):
            return True
        if isinstance(s, Loop) and _has_matmul(s.body):
            return True
        if isinstance(s, Branch) and (_has_matmul(s.then or []) or _has_matmul(s.orelse or [])):
            return True
    return False


def _launch_vars(graph: Graph) -> set:
    """Uids of the Vars known at launch: the dynamic dims of the kernel's arguments."""
    return {to_expr(d).uid for p in graph.params for d in p.shape
            if not is_static(d) and isinstance(to_expr(d), ir.Var)}


def _elementwise_leaves(value: Node, mats: Dict[int, Node]) -> List[Node]:
    """The GM leaves (or materialised nodes) ``value`` reaches through element-wise nodes only, in
    first-use order: they are evaluated at the pass's own shape, so loading them up front is exact."""
    out: List[Node] = []
    seen = set()
    stack = [value]
    while stack:
        n = stack.pop()
        if n.uid in seen:
            continue
        seen.add(n.uid)
        if n.op == "gm" or n.uid in mats:
            out.append(n)
        elif n.op in ELEMENTWISE:
            stack.extend(reversed(n.inputs))
    return out


def _reads_own_output(dst: Node, value: Node, mats: Dict[int, Node]) -> bool:
    """Whether ``value`` reads ``dst``'s buffer through another window than the one it writes: then
    tiles depend on one another and the pass runs serially, in order, on one core."""
    root = dst.attrs["buf"].root
    window = (dst.attrs["buf"].uid, tuple(map(repr, dst.attrs["offsets"])), dst.attrs["axes"])
    seen = set()

    def visit(n: Node) -> bool:
        n = mats.get(n.uid, n)
        if n.uid in seen:
            return False
        seen.add(n.uid)
        if n.op == "gm":
            a = n.attrs
            return a["buf"].root is root and (a["buf"].uid, tuple(map(repr, a["offsets"])), a["axes"]) != window
        return any(visit(i) for i in n.inputs)

    return visit(value)


class Lowerer:
    """Lowers one recorded graph into ``self.b`` (a :class:`Builder`)."""

    def __init__(self, graph: Graph, name: str, arch):
        self.graph = graph
        self.b = Builder(name, arch, mix=_has_matmul(graph.body))
        self.b.bounds = Bounds.of_graph(_launch_vars(graph), graph.body)
        #: node uid -> workspace leaf of what the current statement already materialised (a node used
        #: twice, like softmax's row max, is computed by one pass)
        self.done: Dict[int, Node] = {}
        #: nodes computed in a pass of their own because a pass fusing them overflowed (lower/spill.py)
        self.spills = Spills()
        for p in graph.params:
            self.b.param(p)

    def run(self) -> Builder:
        self.stmts(self.graph.body)
        return self.b

    # ------------------------------------------------------------------ statements
    def stmts(self, stmts: List[Any]) -> None:
        for s in stmts:
            if isinstance(s, Store):
                self.store(s)
            elif isinstance(s, Loop):
                self.loop(s)
            elif isinstance(s, Branch):
                self.branch(s)
            else:  # a statement that lowers itself (pypto.distributed's Comm)
                s.lower(self)

    def loop(self, s: Loop) -> None:
        """A runtime loop; its body ends with ``sync_all`` when it touched GM, so every iteration
        (and the code after the loop) sees the previous iteration's results on every core."""
        b = self.b
        before = b.pending
        body: List[ir.Stmt] = []
        with b.block(body):
            b.barrier()
            self.stmts(s.body)
            b.flush()
        b.append(ir.For(None, s.var, s.start, s.stop, s.step, body))
        b.pending = before  # zero trips: the state before the loop; otherwise flushed
        b.barrier()

    def branch(self, s: Branch) -> None:
        """A runtime ``if`` (uniform over cores: conditions depend on dims and loop indices only)."""
        b = self.b
        before = b.pending
        bodies, after = [], [before]
        for part in (s.then, s.orelse):
            b.pending = before
            out: List[ir.Stmt] = []
            with b.block(out):
                b.barrier()
                self.stmts(part or [])
            bodies.append(out)
            after.append(b.pending)
        b.append(ir.If(None, s.cond, bodies[0], bodies[1]))
        b.pending = (frozenset().union(*(r for r, _ in after)), frozenset().union(*(w for _, w in after)))
        b.barrier()

    def store(self, s: Store) -> None:
        self.done.clear()  # earlier statements may have changed what their materialisations read
        self.b.loc = s.loc
        try:
            if s.value.op in ELEMENT_PASSES:  # indexing / sorting: scalar element passes
                ELEMENT_PASSES[s.value.op](self, s)
            elif _stores_straight(s.dst, s.value):
                self.matmul_pass(s.value, s.cube_tile, s.vec_tile, into=s.dst)
            else:
                self.vector_pass(s.dst, s.value, s.vec_tile, s.cube_tile)
        except KernelError as e:  # name the kernel line of the statement
            raise e.attach(loc=s.loc, kernel=self.b.name)
        finally:
            self.b.loc = None

    # ------------------------------------------------------------------ planning
    def plan(self, n: Node, shape: Sequence[Any], tr: int, tc: int, vec_tile, cube_tile, mats: Dict[int, Node],
             probe: Pass) -> None:
        if n.uid in mats or NODE_OPS[n.op].leaf:
            return
        key = (n.uid, tuple(map(repr, shape)))
        if key in probe.planned:  # a shared subexpression (deep DAGs such as gcd's unrolled steps)
            return
        probe.planned.add(key)
        if n.uid in self.done:
            mats[n.uid] = self.done[n.uid]
            return
        if n.op == "matmul":
            with self.b.at(n.loc):  # a value materialised for this statement: its own line
                mats[n.uid] = self.done[n.uid] = self.matmul_pass(n, cube_tile, vec_tile)
            return
        if n.op == "scan":
            with self.b.at(n.loc):
                mats[n.uid] = self.done[n.uid] = self.scan_pass(n, vec_tile, cube_tile)
            return
        if self.spills.wanted(n):
            with self.b.at(n.loc), self.spills.computing(n):
                mats[n.uid] = self.done[n.uid] = self.materialize(n, vec_tile, cube_tile)
            return
        kind = probe.kind(n, shape)
        if kind == "one" and len(shape) >= 1 and not all(is_static(d) and d == 1 for d in shape):
            with self.b.at(n.loc):
                mats[n.uid] = self.done[n.uid] = self.materialize(n, vec_tile, cube_tile)
            return
        if n.op == "reduce":
            if in_tile_reduce(n, shape, tr, tc):
                x = n.inputs[0]
                sub = list(shape)
                sub[len(shape) - x.ndim + n.attrs["axis"]] = x.shape[n.attrs["axis"]]
                self.plan(x, sub, tr, tc, vec_tile, cube_tile, mats, probe)
            else:
                with self.b.at(n.loc):
                    mats[n.uid] = self.done[n.uid] = self.reduce_pass(n, vec_tile, cube_tile)
            return
        for i in n.inputs:
            self.plan(i, shape, tr, tc, vec_tile, cube_tile, mats, probe)

    def materialize(self, n: Node, vec_tile, cube_tile) -> Node:
        buf = self.b.new_temp(n.shape, n.dtype)
        self.vector_pass(full_leaf(buf), n, vec_tile, cube_tile)
        return full_leaf(buf)

    # ------------------------------------------------------------------ loop nests
    def nest(self, shape: Sequence[Any], tr: int, tc: int, body: Callable[[Region], None],
             skip: Sequence[int] = (), serial: bool = False) -> None:
        """Iterations over ``shape`` (leading axes by index, last two by tiles) around ``body(region)``,
        spread over the workers (all on worker 0 when ``serial``)."""
        b = self.b
        p = len(shape)
        lead: List[Any] = [0] * max(p - 2, 0)
        loops: List[tuple] = []
        for i in range(max(p - 2, 0)):
            if i in skip or (is_static(shape[i]) and shape[i] == 1):
                continue
            v = ir.Var(f"l{i}_{len(b.tiles)}", dt.DT_INT64)
            lead[i] = v
            loops.append((v, dim(shape[i])))
        rows = shape[-2] if p >= 2 else 1
        cols = shape[-1]
        r0: Any = 0
        vr: Any = dim(rows)
        if p >= 2 and p - 2 not in skip:
            nt = _ceil_div(dim(rows), tr)
            if not (is_static(nt) and nt == 1):
                v = ir.Var(f"rt{len(b.tiles)}", dt.DT_INT64)
                loops.append((v, nt))
                r0 = _mul(v, tr)
                vr = _min(tr, _sub(dim(rows), r0))
        elif p >= 2:
            vr = 1
        c0: Any = 0
        vc: Any = dim(cols)
        if p - 1 not in skip:
            nt = _ceil_div(dim(cols), tc)
            if not (is_static(nt) and nt == 1):
                v = ir.Var(f"ct{len(b.tiles)}", dt.DT_INT64)
                loops.append((v, nt))
                c0 = _mul(v, tc)
                vc = _min(tc, _sub(dim(cols), c0))
        else:
            vc = 1
        # a tail's valid extent is used by every op of the iteration: computed once into a variable
        hoisted: List[tuple] = []  # (Var, expression)

        def hoist(name: str, extent):
            if not isinstance(extent, ir.BinOp):
                return extent
            hoisted.append((ir.Var(f"{name}{len(b.tiles)}", dt.DT_INT64), extent))
            return hoisted[-1][0]

        region = Region(lead, r0, hoist("vr", vr), c0, hoist("vc", vc))

        def iteration() -> None:
            for var, value in hoisted:
                b.append(ir.Assign(None, var, value))
            body(region)

        self.spmd(loops, iteration, serial)

    def spmd(self, loops: List[tuple], body: Callable[[], None], serial: bool = False) -> None:
        """One flat loop over the iterations of ``loops`` ((Var, count), outermost first) spread over
        the workers: ``for t in range(worker, total, workers)``, the loop Vars decoded from ``t``.
        ``serial``: ``range(worker * total, total)``, i.e. every iteration on worker 0, in order."""
        b = self.b
        total: Any = 1
        for _, count in loops:
            total = _mul(total, count)
        worker, workers = b.workers()
        if serial:
            worker, workers = _mul(worker, total), 1
        flat = ir.Var(f"w{len(b.tiles)}", dt.DT_INT64)
        stmts: List[ir.Stmt] = []
        with b.block(stmts):
            b.bar()
            rest: Any = flat
            for k, (var, count) in enumerate(reversed(loops)):
                last = k == len(loops) - 1
                b.append(ir.Assign(None, var, to_expr(rest) if last else
                                   ir.BinOp("%", to_expr(rest), to_expr(count), dt.DT_INT64)))
                if not last:
                    rest = ir.BinOp("//", to_expr(rest), to_expr(count), dt.DT_INT64)
            body()
        b.append(ir.For(None, flat, to_expr(worker), to_expr(total), to_expr(workers), stmts))
        b.bar()

    # ------------------------------------------------------------------ vector passes
    def vector_pass(self, dst: Node, value: Node, vec_tile, cube_tile) -> None:
        if vec_tile is None:
            vec_tile = fixpipe_tiles(value, cube_tile)
        if value.op == "matmul" and dst.attrs["buf"].dtype == value.dtype:
            mats = {value.uid: self.matmul_pass(value, cube_tile, vec_tile)}
            value = mats[value.uid]
        shape = list(dst.shape)
        align = row_alignment(value)
        tr, tc = first_tiles = _vector_tiles(vec_tile, len(shape), align)
        while True:
            state, done = self.b.snapshot(), dict(self.done)
            try:
                mats: Dict[int, Node] = {}
                self.plan(value, shape, tr, tc, vec_tile, cube_tile, mats, Pass(self, shape, tr, tc, mats))
                self.emit_pass(dst, value, shape, tr, tc, mats)
                return
            except KernelMemoryError:
                self.b.restore(state)
                self.done = done
                # smaller tiles (rows first, then columns; planned again, since what fuses depends on
                # the tile): results are unchanged
                if tr > align:
                    tr = max(align, _round_up(tr // 2, align))
                elif tc > TC_ALIGN:
                    tc = max(TC_ALIGN, _round_up(tc // 2, TC_ALIGN))
                elif self.spills.split(value.inputs, self.done):  # fuse less, at the statement's tiles
                    tr, tc = first_tiles
                else:
                    raise

    def emit_pass(self, dst: Node, value: Node, shape, tr: int, tc: int, mats: Dict[int, Node]) -> None:
        """The loop nest of one vector pass; on-chip addresses assigned at the end."""
        first = len(self.b.tiles)
        with self.b.work("vector") as section:
            ps = Pass(self, shape, tr, tc, mats)

            leaves = _elementwise_leaves(value, mats)

            def body(region: Region) -> None:
                # loads first, so that the computation after them is one run of vector ops: broadcast
                # operands (and the negated broadcast addends) before full tiles, so that the full
                # loads sit next to the ops that read them (the cpu backend fuses such loads into the
                # ops' loop)
                kinds = {leaf.uid: ps.kind(leaf, shape) for leaf in leaves}
                for leaf in leaves:
                    if kinds[leaf.uid] in ("row", "col"):
                        ps.eval(leaf, region, shape)
                ps.negate_addends(value, region, shape)
                for leaf in leaves:
                    if kinds[leaf.uid] == "full":
                        ps.eval(leaf, region, shape)
                v = ps.operand(value, "full", region, shape)
                want = self.b.param(dst.attrs["buf"]).dtype
                if v.mask:
                    v = ps.mask_to_values(v, dt.DT_FP16, region)
                    if want != dt.DT_FP16:
                        t = ps.tile_for("full", want, region)
                        self.b.op("cast", dst=t, src=v.ref)
                        v = type(v)(t, "full")
                if v.kind == "one" or v.ref.dtype != want:
                    v = ps.eval(Node("cast", (value,), value.shape, dst.attrs["buf"].dtype,
                                     {"dtype": dst.attrs["buf"].dtype, "mode": 0}), region, shape)
                    if v.kind != "full":
                        v = ps.broadcast(v, "full", v.ref.dtype, region)
                self.store_tile(ps, dst, v.ref, region, shape)
                self.b.discard_after_last_use(self.b.tiles[body_first:])

            body_first = len(self.b.tiles)
            self.nest(shape, tr, tc, body, serial=_reads_own_output(dst, value, mats))
        self.place_tiles(section, first)

    def place_tiles(self, section: List[ir.Stmt], first: int) -> None:
        """On-chip addresses for the tiles of the vector pass whose work section is ``section``
        (raises KernelMemoryError when they do not fit), then its loop-invariant loads moved out of
        its loops where they still fit (lower/hoist.py)."""
        self.b.assign_addresses(self.b.tiles[first:])
        hoist_invariant_loads(self.b, section, self.b.tiles[first:])

    def store_tile(self, ps: Pass, dst: Node, tile, region: Region, shape) -> None:
        param = self.b.param(dst.attrs["buf"])
        offs, order = ps.leaf_window(dst, region, shape)
        if order is not None and order[0] > order[1]:
            raise NotImplementedError("storing into a transposed view (store the transposed value instead)")
        self.b.op("store", dst=param, src=tile, offsets=offs, order=order)

    # ------------------------------------------------------------------ reductions and scans
    def _identity(self, fn: str, dtype: dt.DataType):
        if dtype.is_float() or fn in ("sum", "prod"):
            return _IDENTITY[fn]
        return _lowest(dtype) if fn == "max" else -_lowest(dtype) - 1

    @staticmethod
    def _axis_step(region: Region, axis: int, p: int, xshape, tr: int, tc: int, var: ir.Var, single: bool):
        """(trip count, sub-region) of the loop along ``axis`` inside one iteration of a nest that
        skipped ``axis``: one element per trip when ``single`` (or for a leading axis), else one tile."""
        size = dim(xshape[axis])
        if axis == p - 1:
            if single:
                return size, Region(region.lead, region.r0, region.vr, var, 1)
            start = _mul(var, tc)
            return _ceil_div(size, tc), Region(region.lead, region.r0, region.vr, start, _min(tc, _sub(size, start)))
        if axis == p - 2:
            if single:
                return size, Region(region.lead, var, 1, region.c0, region.vc)
            start = _mul(var, tr)
            return _ceil_div(size, tr), Region(region.lead, start, _min(tr, _sub(size, start)), region.c0, region.vc)
        lead = list(region.lead)
        lead[axis] = var
        return size, Region(lead, region.r0, region.vr, region.c0, region.vc)

    def reduce_pass(self, n: Node, vec_tile, cube_tile) -> Node:
        """Materialise ``reduce(x, axis)`` when the reduced axis does not fit one tile (or the
        reduction has no tile op: ``prod`` multiplies one element of the axis at a time; argmax/argmin
        keep a running best value and index, :class:`ArgBest`)."""
        x = n.inputs[0]
        axis = n.attrs["axis"]
        p = x.ndim
        align = reduce_alignment(n)
        tr, tc = first_tiles = _vector_tiles(vec_tile, p, align)
        while True:
            state, done = self.b.snapshot(), dict(self.done)
            try:
                return self._reduce_pass(n, tr, tc, vec_tile, cube_tile)
            except KernelMemoryError:
                self.b.restore(state)
                self.done = done
                # smaller tiles along a kept axis (the reduced axis keeps its tiles, and so its order
                # of combination), then fewer fused ops: results are unchanged
                if axis != p - 2 and p >= 2 and tr > align:
                    tr = max(align, _round_up(tr // 2, align))
                elif axis != p - 1 and tc > TC_ALIGN:
                    tc = max(TC_ALIGN, _round_up(tc // 2, TC_ALIGN))
                elif self.spills.split([x], self.done):
                    tr, tc = first_tiles
                else:
                    raise

    def _reduce_pass(self, n: Node, tr: int, tc: int, vec_tile, cube_tile) -> Node:
        """:meth:`reduce_pass` at tiles ``tr`` x ``tc``."""
        x = n.inputs[0]
        axis, fn = n.attrs["axis"], n.attrs["fn"]
        xshape = list(x.shape)
        p = len(xshape)
        mats: Dict[int, Node] = {}
        probe = Pass(self, xshape, tr, tc, mats)
        self.plan(x, xshape, tr, tc, vec_tile, cube_tile, mats, probe)
        buf = self.b.new_temp(n.shape, n.dtype)
        leaf = full_leaf(buf)
        b = self.b
        first = len(b.tiles)
        single = fn in _ELEMENTWISE_ONLY
        with b.work("vector") as section:
            ps = Pass(self, xshape, tr, tc, mats)
            oshape = list(n.shape)

            def body(region: Region) -> None:
                kind = "full" if single else "col" if axis == p - 1 else "row" if axis == p - 2 else "full"
                out_region = Region(list(region.lead), region.r0, region.vr if axis != p - 2 else 1, region.c0,
                                    region.vc if axis != p - 1 else 1)
                if fn in ("argmax", "argmin"):
                    var = ir.Var(f"rk{len(b.tiles)}", dt.DT_INT64)
                    count, sub = self._axis_step(region, axis, p, xshape, tr, tc, var, False)
                    best = ArgBest(ps, fn, kind, x.dtype, region)
                    start = sub.c0 if axis == p - 1 else sub.r0 if axis == p - 2 else var
                    self.axis_loop(ps, var, count, lambda: best.combine(ps.operand(x, "full", sub, xshape), start))
                    self.store_tile(Pass(self, oshape, tr, tc, {}), leaf, best.idx, out_region, oshape)
                    b.discard_after_last_use(best.tiles)
                    return
                acc = ps.tile_for(kind, n.dtype, region)
                b.op("expands", dst=acc, scalar=self._identity(fn, n.dtype))
                var = ir.Var(f"rk{len(b.tiles)}", dt.DT_INT64)
                count, sub = self._axis_step(region, axis, p, xshape, tr, tc, var, single)
                def combine_slice() -> None:
                    xv = ps.operand(x, "full", sub, xshape)
                    if kind == "full":
                        part = xv.ref
                    else:
                        part = ps.tile_for(kind, n.dtype, region)
                        b.op(("row_" if kind == "col" else "col_") + fn, dst=part, src=xv.ref)
                    b.op(_COMBINE[fn], dst=acc, lhs=acc, rhs=part)

                self.axis_loop(ps, var, count, combine_slice)
                ops = Pass(self, oshape, tr, tc, {})
                self.store_tile(ops, leaf, acc, out_region, oshape)
                b.discard_after_last_use([acc.tile])

            self.nest(xshape, tr, tc, body, skip=(axis,))
        self.place_tiles(section, first)
        return full_leaf(buf)

    def axis_loop(self, ps: Pass, var: ir.Var, count, one_slice: Callable[[], None]) -> None:
        """``for var in range(count)`` around ``one_slice()``, one slice of the walked axis per
        iteration (fresh memo; the slice's tiles are discarded after their last use, the accumulator
        made before the loop is not), between barriers."""
        b = self.b
        stmts: List[ir.Stmt] = []
        first = len(b.tiles)
        with b.block(stmts):
            b.bar()
            ps.memo.clear()
            one_slice()
            b.discard_after_last_use(b.tiles[first:])
        b.append(ir.For(None, var, ir.Const(0), to_expr(count), ir.Const(1), stmts))
        b.bar()

    def scan_pass(self, n: Node, vec_tile, cube_tile) -> Node:
        """Materialise ``scan(x, axis)`` (cumsum / cumprod): each iteration of the nest over the other
        axes walks ``axis`` in a runtime loop, combining one slice into an accumulator tile and storing
        the running value, so element ``k`` is ``x[0] op x[1] op ... op x[k]`` in that order."""
        x = n.inputs[0]
        axis, fn = n.attrs["axis"], n.attrs["fn"]
        xshape = list(x.shape)
        p = len(xshape)
        tr, tc = _vector_tiles(vec_tile, p, row_alignment(x))
        mats: Dict[int, Node] = {}
        self.plan(x, xshape, tr, tc, vec_tile, cube_tile, mats, Pass(self, xshape, tr, tc, mats))
        buf = self.b.new_temp(n.shape, n.dtype)
        leaf = full_leaf(buf)
        b = self.b
        first = len(b.tiles)
        with b.work("vector") as section:
            ps = Pass(self, xshape, tr, tc, mats)
            ops = Pass(self, xshape, tr, tc, {})

            def body(region: Region) -> None:
                acc = ps.tile_for("full", n.dtype, region)
                b.op("expands", dst=acc, scalar=self._identity(fn, n.dtype))
                var = ir.Var(f"sk{len(b.tiles)}", dt.DT_INT64)
                count, sub = self._axis_step(region, axis, p, xshape, tr, tc, var, True)
                def combine_and_store_slice() -> None:
                    xv = ps.operand(x, "full", sub, xshape)
                    b.op(_COMBINE[fn], dst=acc, lhs=acc, rhs=xv.ref)
                    self.store_tile(ops, leaf, acc, sub, xshape)

                self.axis_loop(ps, var, count, combine_and_store_slice)
                b.discard_after_last_use([acc.tile])

            self.nest(xshape, tr, tc, body, skip=(axis,))
        self.place_tiles(section, first)
        return full_leaf(buf)

    # ------------------------------------------------------------------ matmul
    def matmul_pass(self, n: Node, cube_tile, vec_tile, into: Optional[Node] = None) -> Node:
        """The cube loop nest of ``n``; its Acc tiles are stored into ``into`` (a gm leaf of n's shape
        and dtype) or else into a fresh workspace, which is returned as a gm leaf."""
        if cube_tile is None:
            raise KernelSyntaxError("call pypto.set_cube_tile_shapes(m=[..], k=[..], n=[..]) before pypto.matmul",
                                    kernel=self.b.name)
        a, bnode, bias = (*n.inputs, None) if len(n.inputs) == 2 else n.inputs
        b = self.b
        acc_dtype = dt.DT_INT32 if a.dtype == dt.DT_INT8 else dt.DT_FP32
        leaf = into if into is not None else full_leaf(b.new_temp(n.shape, n.dtype))
        buf = leaf.attrs["buf"]
        k_align = 16 if a.dtype.nbytes <= 2 else 8
        tm = _round_up(cube_tile["m"][0], 16)
        tk = _round_up(cube_tile["k"][0], k_align)
        tn = _round_up(cube_tile["n"][0], 16)
        bias_dtype = bias.dtype if bias is not None else None
        fit = fit_cube_tiles(b.arch, tm, tk, tn, k_align, a.dtype, bnode.dtype, acc_dtype, bias_dtype)
        if fit is None:
            raise cube_tiles_error(b.arch, tm, tk, tn, a.dtype, bnode.dtype, acc_dtype, bias_dtype, b.name)
        tm, tk, tn = fit
        shape = list(n.shape)
        K = dim(a.shape[-1])
        first = len(b.tiles)
        with b.work("cube"):
            mat_a = b.tile(tm, tk, a.dtype, MemorySpace.Mat, name="ma")
            mat_b = b.tile(tk, tn, bnode.dtype, MemorySpace.Mat, name="mb")
            left = b.tile(tm, tk, a.dtype, MemorySpace.Left, name="l")
            right = b.tile(tk, tn, bnode.dtype, MemorySpace.Right, name="r")
            acc = b.tile(tm, tn, acc_dtype, MemorySpace.Acc, name="acc")
            if bias is not None:  # a [1, N] row, GM -> Mat -> Bias (upcast to FP32)
                mat_bias = b.tile(1, tn, bias.dtype, MemorySpace.Mat, name="mbias")
                bias_tile = b.tile(1, tn, dt.DT_FP32, MemorySpace.Bias, name="bias")
            probe = Pass(self, shape, tm, tn, {})

            def operand_window(node: Node, lead, r0, c0, rows_axis_len):
                region = Region(lead, r0, 0, c0, 0)
                pshape = list(shape[:-2]) + [node.shape[-2], node.shape[-1]]
                return probe.leaf_window(node, region, pshape)

            def body(region: Region) -> None:
                vm, vn = region.vr, region.vc
                b.op("set_validshape", tile=acc, shape=[vm, vn])
                first_args = {}
                if bias is not None:
                    for t in (mat_bias, bias_tile):
                        b.op("set_validshape", tile=t, shape=[1, vn])
                    offs, order = operand_window(bias, region.lead, 0, region.c0, None)
                    b.op("load", dst=mat_bias, src=b.param(bias.attrs["buf"]), offsets=offs, order=order)
                    b.op("move", dst=bias_tile, src=mat_bias)
                    first_args["bias"] = bias_tile
                kv = ir.Var(f"kt{len(b.tiles)}", dt.DT_INT64)
                k0 = _mul(kv, tk)
                vk = _min(tk, _sub(K, k0))
                stmts: List[ir.Stmt] = []
                with b.block(stmts):
                    b.bar()
                    for t, shp in ((mat_a, [vm, vk]), (left, [vm, vk]), (mat_b, [vk, vn]), (right, [vk, vn])):
                        b.op("set_validshape", tile=t, shape=shp)
                    offs_a, order_a = operand_window(a, region.lead, region.r0, k0, None)
                    offs_b, order_b = operand_window(bnode, region.lead, k0, region.c0, None)
                    b.op("load", dst=mat_a, src=b.param(a.attrs["buf"]), offsets=offs_a, order=order_a)
                    b.op("load", dst=mat_b, src=b.param(bnode.attrs["buf"]), offsets=offs_b, order=order_b)
                    b.op("move", dst=left, src=mat_a)
                    b.op("move", dst=right, src=mat_b)
                    first_k = ir.BinOp("==", kv, ir.Const(0), dt.DT_BOOL)
                    b._order("M")
                    then, other = [], []
                    with b.block(then):
                        b.op("matmul", dst=acc, lhs=left, rhs=right, **first_args)
                    with b.block(other):
                        b.op("matmul_acc", dst=acc, acc=acc, lhs=left, rhs=right)
                    b.append(ir.If(None, first_k, then, other))
                b.append(ir.For(None, kv, ir.Const(0), to_expr(_ceil_div(K, tk)), ir.Const(1), stmts))
                b.bar()
                offs, order = probe.leaf_window(leaf, region, shape)
                b.op("store", dst=b.param(buf), src=acc, offsets=offs, order=order)

            self.nest(shape, tm, tn, body)
        b.assign_addresses(b.tiles[first:])
        return leaf


def fixpipe_tiles(value: Node, cube_tile) -> Optional[Tuple[int, int]]:
    """The vector tiles of a matmul's epilogue when no ``set_vec_tile_shapes`` is in scope: a product
    that ``pypto.matmul`` itself biases, scales, ReLUs or converts on its way out (marked ``fixpipe``;
    the NPU's fixpipe does that to each [m, n] accumulator tile, so the official kernels set only cube
    tiles), stored as it is or converted, is computed by a vector pass over tiles of the cube's L0
    m x n shape.  None otherwise: other vector work needs ``set_vec_tile_shapes``."""
    if cube_tile is None:
        return None
    n = value
    while not n.attrs.get("fixpipe") and n.op == "cast":
        n = n.inputs[0]
    return (cube_tile["m"][0], cube_tile["n"][0]) if n.attrs.get("fixpipe") else None


def _vector_tiles(vec_tile, rank: int, row_align: int):
    """``choose_tiles`` for a statement that needs vector passes: the vec tile must have been set."""
    if vec_tile is None:
        raise KernelSyntaxError("call pypto.set_vec_tile_shapes(...) before this statement: it needs vector "
                                "tiles (only a matmul stored straight into a tensor runs on cube tiles alone)")
    return choose_tiles(vec_tile, rank, row_align)


def _stores_straight(dst: Node, value: Node) -> bool:
    """``dst[...] = matmul(...)`` that the cube pass can store from its Acc tiles directly: same shape
    and dtype, a plain (untransposed) window of dst, and dst not one of the operands."""
    if value.op != "matmul" or dst.op != "gm" or dst.dtype != value.dtype or dst.ndim != value.ndim:
        return False
    if not all(dims_agree(a, b) for a, b in zip(dst.shape, value.shape)):
        return False
    root = dst.attrs["buf"].root
    if any(x.op != "gm" or x.attrs["buf"].root is root for x in value.inputs):
        return False
    axes, rank = dst.attrs["axes"], len(dst.attrs["buf"].shape)
    return rank == 1 or (axes[-1] == rank - 1 and (dst.ndim == 1 or axes[-2] == rank - 2))
