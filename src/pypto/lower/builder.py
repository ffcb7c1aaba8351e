"""Building a tile kernel programmatically: parameters, tiles, checked op statements, automatic
synchronisation and on-chip address assignment.

Every pass is SPMD: its tile iterations are spread over the launch's cores (see
:meth:`Builder.workers`).  Synchronisation (race freedom by construction): within a core, every
op whose pipe differs from the previous op's pipe is preceded by a ``sync_src``/``sync_dst`` flag
pair from that pipe, and every loop body, branch and loop exit starts with ``bar_all``; so each
core's instruction stream is one sync chain.  Between cores, a pass that reads or writes a GM
buffer an earlier pass wrote (or writes one an earlier pass read) since the last grid barrier
starts with ``sync_all`` (AIV_ONLY in vector kernels, MIX in mix kernels); a runtime loop body
ends with one if it touched GM, so iterations see each other's results.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Optional, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelMemoryError, KernelSyntaxError, SourceLoc
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.layout import footprint_elems
from pypto_pro.ir.optable import OPS, CheckCtx
from pypto_pro.ir.types import Layout, MemorySpace, PipeType, SyncCoreType, TileType, default_layout

from ..graph import Buffer
from ..symbolic import SymbolicScalar, is_static, to_expr
from .bounds import Bounds

class Builder:
    """Accumulates the statements, tiles and parameters of one lowered kernel."""

    def __init__(self, name: str, arch, mix: bool):
        self.name = name
        self.arch = arch
        self.mix = mix
        self.params: List[ir.TensorParam] = []
        self.param_of: Dict[int, ir.TensorParam] = {}
        self.buffers: List[Buffer] = []
        #: Vars standing for computed dims of workspace buffers -> the host expression giving their value
        self.dim_exprs: List[Tuple[ir.Var, ir.Expr]] = []
        self.tiles: List[ir.TileDecl] = []
        self.body: List[ir.Stmt] = []
        self.blocks: List[List[ir.Stmt]] = [self.body]
        self.frontier: Dict[str, Optional[str]] = {"vector": None, "cube": None}
        self.side: Optional[str] = None
        #: GM root buffers read / written since the last ``sync_all`` (all passes) and by the current pass
        self.pending: Tuple[frozenset, frozenset] = (frozenset(), frozenset())
        self._reads: set = set()
        self._writes: set = set()
        self._pos = 0
        #: the kernel line of the statement being lowered, attached to its ops so that run-time
        #: errors (bounds, divisions, the simulator's hazards) name it
        self.loc: Optional[SourceLoc] = None
        self._live: Dict[int, List[int]] = {}
        self._temp_count = 0
        #: launch-time bounds of loop-dependent workspace dims (set by the lowerer)
        self.bounds: Optional[Bounds] = None
        #: root workspace uid -> whether it is addressed in exact layout (see :meth:`_exact_layout`)
        self._exact_roots: Dict[int, bool] = {}
        self._views = 0

    # ------------------------------------------------------------------ GM parameters
    def param(self, buf: Buffer) -> ir.TensorParam:
        """The GM tensor ``buf`` is addressed through here: a kernel parameter, or for a workspace that a
        reshape sees with a loop-dependent inner extent, a view with the current iteration's exact dims
        (:meth:`_exact_view`)."""
        if buf.kind != "param" and self._exact_layout(buf.root):
            return self._exact_view(buf)
        return self._param(buf)

    def _param(self, buf: Buffer) -> ir.TensorParam:
        p = self.param_of.get(buf.uid)
        if p is not None:
            return p
        if buf.kind == "alias":
            self._check_alias(buf)
            self._param(buf.base)  # bound before its aliases (LoweredProgram.bind views the base's array)
        # two views of one tensor (say two reshapes of x) have the same name: the backends name
        # variables after parameters, so later ones get the parameter's position appended
        taken = {q.name for q in self.params}
        name, k = buf.name, len(self.params)
        while name in taken:
            name, k = f"{buf.name}_{k}", k + 1
        dims: List[Any] = []
        for i, d in enumerate(buf.shape):
            if is_static(d):
                dims.append(d)
            else:
                e = self._launch_dim(buf, to_expr(d))
                if isinstance(e, ir.Var):
                    dims.append(e)
                else:
                    v = ir.Var(f"{name}_d{i}", dt.DT_INT64)
                    self.dim_exprs.append((v, e))
                    dims.append(v)
        # BOOL masks and 4-bit float codes (one per byte: frontend/packed_fp4.py) are bytes to the tile program
        dtype = dt.DT_UINT8 if buf.dtype == dt.DT_BOOL or dt.is_packed_gm(buf.dtype) else buf.dtype
        p = ir.TensorParam(name, len(self.params), dtype, dims)
        self.params.append(p)
        self.buffers.append(buf)
        self.param_of[buf.uid] = p
        return p

    def _launch_dim(self, buf: Buffer, e: ir.Expr) -> ir.Expr:
        """The dim ``e`` of ``buf`` as an expression computable at launch: a workspace whose dim
        depends on a loop index (a loop-dependent view's extent) is allocated at its upper bound over
        the iterations; the passes still address it with the exact per-iteration shape."""
        if self.bounds is None or self.bounds.evaluable(e):
            return e
        bound = self.bounds.upper(e) if buf.kind != "param" else None
        if bound is None:
            raise KernelSyntaxError(f"the size of '{buf.name}' ({e!r}) depends on a run-time value that "
                                   "no launch-time bound is known for: give the view a static extent "
                                   "(pypto.view(x, [rows, ..], offsets)) or slice with a constant length",
                                   kernel=self.name)
        return ir.BinOp("max", bound, ir.Const(0), dt.DT_INT64)

    def _inexact_axes(self, buf: Buffer) -> List[int]:
        """The axes of ``buf`` allocated at a launch-time bound rather than their exact extent."""
        return [i for i, d in enumerate(buf.shape)
                if not is_static(d) and self.bounds is not None and not self.bounds.evaluable(to_expr(d))]

    def _leading(self, buf: Buffer) -> bool:
        """Whether ``buf``'s elements of one iteration are the leading elements of its allocation: its
        only inexact axis (if any) has nothing but size-1 axes before it."""
        axes = self._inexact_axes(buf)
        return not axes or (len(axes) == 1 and all(is_static(d) and d == 1 for d in buf.shape[:axes[0]]))

    def _alias_exact(self, buf: Buffer) -> bool:
        """A zero-copy reshape of a workspace allocated at a bound is its leading elements (see
        ``LoweredProgram.bind``): exact when both it and its root are :meth:`_leading`, or when the alias
        has its base's very dims (a same-width ``pypto.view(x, dtype=)``: allocated at the same bound)."""
        if len(buf.shape) == len(buf.base.shape) and all(repr(a) == repr(b) for a, b in zip(buf.shape, buf.base.shape)):
            return buf.base.kind != "alias" or self._alias_exact(buf.base)
        return self._leading(buf) and self._leading(buf.root)

    def _exact_layout(self, root: Buffer) -> bool:
        """Whether the workspace ``root`` and its aliases are addressed with each iteration's exact dims
        (row-major, dense, over the allocation at the bound): when one of its reshapes is not exact as
        leading elements (``[256, b, s]`` seen as ``[256, b * s]`` with ``b``, ``s`` clipped by loop
        indices)."""
        known = self._exact_roots.get(root.uid)
        if known is None:
            def aliases(b: Buffer):
                for a in b.aliases:
                    yield a
                    yield from aliases(a)
            known = root.kind == "temp" and any(not self._alias_exact(a) for a in aliases(root))
            self._exact_roots[root.uid] = known
        return known

    def _exact_view(self, buf: Buffer) -> ir.TensorView:
        """``buf`` (a workspace in exact layout, or an alias of one) as a view over its root's memory with
        the current dims (each at least 1: an empty extent addresses nothing), strides row-major; the
        dims and strides are Vars assigned here, before the op that uses the view."""
        root = self._param(buf.root)
        self._views += 1
        dims: List[Any] = []
        for d in buf.shape:
            if is_static(d):
                dims.append(int(d))
            else:
                v = ir.Var(f"{buf.name}_x{self._views}_d{len(dims)}", dt.DT_INT64)
                self.append(ir.Assign(None, v, ir.BinOp("max", to_expr(d), ir.Const(1), dt.DT_INT64)))
                dims.append(v)
        strides: List[Any] = [1]
        for d in reversed(dims[1:]):
            if isinstance(d, int) and isinstance(strides[0], int):
                strides.insert(0, d * strides[0])
            else:
                v = ir.Var(f"{buf.name}_x{self._views}_s{len(dims) - len(strides) - 1}", dt.DT_INT64)
                self.append(ir.Assign(None, v, ir.BinOp("*", to_expr(d), to_expr(strides[0]), dt.DT_INT64)))
                strides.insert(0, v)
        # BOOL masks and 4-bit float codes (one per byte: frontend/packed_fp4.py) are bytes to the tile program
        dtype = dt.DT_UINT8 if buf.dtype == dt.DT_BOOL or dt.is_packed_gm(buf.dtype) else buf.dtype
        return ir.TensorView(f"{buf.name}_x{self._views}", root.index, dtype, dims, Layout.ND, base=root,
                             strides=strides)

    def _check_alias(self, buf: Buffer) -> None:
        """A zero-copy reshape bound as its base's leading elements must be exact (workspaces that are not
        are addressed in exact layout instead, see :meth:`_exact_layout`)."""
        if not self._alias_exact(buf):
            axes = self._inexact_axes(buf) or self._inexact_axes(buf.root)
            raise KernelSyntaxError(f"cannot reshape '{buf.root.name}': the extent of axis {axes[-1]} of "
                                    f"'{buf.name}' depends on a pypto.loop index: take views of a fixed extent "
                                    "(pypto.view(x, shape, offsets)) inside the loop", kernel=self.name)

    def new_temp(self, shape, dtype: dt.DataType) -> Buffer:
        self._temp_count += 1
        return Buffer(f"lws{self._temp_count}", dtype, tuple(shape), "temp")

    # ------------------------------------------------------------------ tiles
    def tile(self, rows: int, cols: int, dtype: dt.DataType, space: MemorySpace = MemorySpace.Vec,
             layout: Optional[Layout] = None, name: str = "t") -> ir.DeclRef:
        layout = layout or default_layout(space, dtype, self.arch.name)
        tt = TileType([rows, cols], dtype, space, layout=layout)
        size = footprint_elems(rows, cols, layout, dtype.nbytes, space == MemorySpace.Acc) * dtype.nbytes
        decl = ir.TileDecl(f"{name}{len(self.tiles)}", tt, layout, -1, max(size, tt.nbytes))
        self.tiles.append(decl)
        return ir.DeclRef(decl)

    def _touch(self, ref) -> None:
        if isinstance(ref, ir.TileRef):
            for d in ref.decls():
                span = self._live.setdefault(d.uid, [self._pos, self._pos])
                span[1] = self._pos

    # ------------------------------------------------------------------ statements
    @contextlib.contextmanager
    def block(self, stmts: List[ir.Stmt]):
        self.blocks.append(stmts)
        try:
            yield stmts
        finally:
            self.blocks.pop()

    @contextlib.contextmanager
    def at(self, loc: Optional[SourceLoc]):
        """Label the ops emitted inside with ``loc`` (the line that computed the value they make);
        None keeps the current label."""
        prev = self.loc
        if loc is not None:
            self.loc = loc
        try:
            yield
        finally:
            self.loc = prev

    def append(self, stmt: ir.Stmt) -> None:
        self.blocks[-1].append(stmt)

    def _raw(self, name: str, result: Optional[ir.Var] = None, **kwargs) -> ir.OpStmt:
        opdef = OPS[name]
        args = opdef.bind((), kwargs)
        opdef.check(CheckCtx(opdef, self.arch), args)
        stmt = ir.OpStmt(self.loc, opdef, args, result)
        self._pos += 1
        for _, ref in opdef.tile_operands(args):
            self._touch(ref)
        return stmt

    def op(self, name: str, result: Optional[ir.Var] = None, **kwargs) -> ir.OpStmt:
        """Append a checked op on the current side, preceded by a flag pair when the pipe changes."""
        stmt = self._raw(name, result, **kwargs)
        for p in stmt.op.params:  # the GM buffers the op reads / writes, by the roles of its tensor operands
            value = kwargs.get(p.name)
            if p.role and isinstance(value, ir.TensorParam):
                uid = self.buffers[value.index].root.uid
                if p.role != "out":
                    self._reads.add(uid)
                if p.role != "in":
                    self._writes.add(uid)
        pipe = stmt.pipe
        if not stmt.op.descriptor_only and pipe != "S":
            self._order(pipe)
        self.append(stmt)
        return stmt

    def discard_after_last_use(self, tiles: List[ir.TileDecl]) -> None:
        """In the current statement list (one loop iteration's body), insert a ``discard`` of each Vec
        tile of ``tiles`` right after the statement that uses it last (a nested loop or branch counts
        as one statement): its contents are dead from there on, which lets the cpu backend keep values
        that only flow between fused ops in registers.  Not a use: live intervals (address reuse) are
        unchanged."""
        stmts = self.blocks[-1]
        wanted = {t.uid: t for t in tiles if t.space == MemorySpace.Vec}
        last: Dict[int, int] = {}
        for i, s in enumerate(stmts):
            for op in ir.walk([s]):
                if isinstance(op, ir.OpStmt):
                    for _, ref in op.op.tile_operands(op.args):
                        for d in ref.decls():
                            if d.uid in wanted:
                                last[d.uid] = i
        opdef = OPS["discard"]
        for uid, i in sorted(last.items(), key=lambda item: -item[1]):
            stmts.insert(i + 1, ir.OpStmt(None, opdef, opdef.bind((), {"tile": ir.DeclRef(wanted[uid])}), None))

    def _order(self, pipe: str) -> None:
        side = self.side or "vector"
        last = self.frontier[side]
        if last is not None and last not in ("ALL", pipe):
            src, dst = PipeType(last), PipeType(pipe)
            self.append(self._raw("sync_src", set_pipe=src, wait_pipe=dst, event_id=0))
            self.append(self._raw("sync_dst", set_pipe=src, wait_pipe=dst, event_id=0))
        self.frontier[side] = pipe

    def bar(self) -> None:
        """``bar_all`` inside the current work block: every later op waits for all earlier ones."""
        self.append(self._raw("bar_all"))
        self.frontier[self.side or "vector"] = "ALL"

    def barrier(self) -> None:
        """``bar_all`` on every core kind of the kernel (outside work sections)."""
        for side in self.sides():
            self.append(ir.Section(None, side, [self._raw("bar_all")]))
            self.frontier[side] = "ALL"

    def sides(self) -> List[str]:
        return ["vector", "cube"] if self.mix else ["vector"]

    def new_var(self, prefix: str, dtype=dt.DT_INT64) -> ir.Var:
        """A scalar variable named after the current statement position (readable lowered text)."""
        return ir.Var(f"{prefix}{self._pos}", dtype)

    def scalar(self, value, dtype=dt.DT_INT64) -> ir.Var:
        v = ir.Var(f"s{self._pos}", dtype)
        self.append(ir.Assign(None, v, to_expr(value)))
        return v

    # ------------------------------------------------------------------ SPMD work distribution
    def workers(self) -> Tuple[ir.Expr, ir.Expr]:
        """(this core's worker index, number of workers) on the current side: every vector core of the
        launch (``block_idx`` spans both AIVs of a mix block) or every cube core."""
        idx = ir.CoreQuery("block_idx")
        if self.side == "cube":
            return idx, ir.CoreQuery("block_num")
        return idx, ir.BinOp("*", ir.CoreQuery("block_num"), ir.CoreQuery("subblock_num"), dt.DT_INT64)

    def sync_all(self) -> None:
        """A grid barrier: every core of the launch waits for every other core's earlier work."""
        self.append(self._sync_all_stmt())
        self.frontier = {side: "ALL" for side in self.frontier}
        self.pending = (frozenset(), frozenset())

    def _sync_all_stmt(self) -> ir.OpStmt:
        return self._raw("sync_all", core_type=SyncCoreType.MIX if self.mix else SyncCoreType.AIV_ONLY)

    def flush(self) -> None:
        """``sync_all`` now if any pass since the last one touched GM (end of a loop body)."""
        if self.pending[0] or self.pending[1]:
            self.sync_all()

    # ------------------------------------------------------------------ work on one side
    @contextlib.contextmanager
    def work(self, side: str):
        """Statements of one pass on ``side``; preceded by ``sync_all`` when the pass depends on GM
        traffic of an earlier pass since the last grid barrier."""
        self._reads, self._writes = set(), set()
        stmts: List[ir.Stmt] = []
        prev = self.side
        self.side = side
        try:
            with self.block(stmts):
                yield stmts
        finally:
            self.side = prev
        reads, writes = self.pending
        if self._reads & writes or self._writes & (reads | writes):
            self.append(self._sync_all_stmt())  # ahead of the pass; its own flags follow the pass's ops
            reads, writes = frozenset(), frozenset()
        self.pending = (reads | self._reads, writes | self._writes)
        self.append(ir.Section(None, side, stmts))

    def snapshot(self):
        """State to roll a failed pass back to (see :meth:`restore`)."""
        return (len(self.blocks[-1]), len(self.tiles), dict(self.frontier), self.pending, len(self.params),
                len(self.dim_exprs))

    def restore(self, state) -> None:
        n_stmts, n_tiles, frontier, pending, n_params, n_dims = state
        del self.blocks[-1][n_stmts:]
        del self.tiles[n_tiles:]
        for buf in self.buffers[n_params:]:
            del self.param_of[buf.uid]
        del self.params[n_params:]
        del self.buffers[n_params:]
        del self.dim_exprs[n_dims:]
        self.frontier, self.pending = frontier, pending

    # ------------------------------------------------------------------ addresses
    def assign_addresses(self, tiles: List[ir.TileDecl]) -> None:
        """First-fit over live intervals per memory space (dead buffers are reused)."""
        by_space: Dict[MemorySpace, List[ir.TileDecl]] = {}
        for t in tiles:
            by_space.setdefault(t.space, []).append(t)
        for space, decls in by_space.items():
            cap = self.arch.capacity[space.name]
            align = self.arch.addr_align.get(space.name, 32)
            placed: List[Tuple[int, int, int, int]] = []  # (start, end, addr, size)
            for t in sorted(decls, key=lambda d: self._live.get(d.uid, [0, 0])[0]):
                lo, hi = self._live.get(t.uid, [0, 0])
                busy = sorted((a, a + s) for (s0, e0, a, s) in placed if not (e0 < lo or s0 > hi))
                addr = 0
                for a0, a1 in busy:
                    if addr + t.size <= a0:
                        break
                    addr = max(addr, -(-a1 // align) * align)
                if addr + t.size > cap:
                    raise KernelMemoryError(f"the lowered tiles need more than the {cap} bytes of {space.name} on "
                                            f"arch {self.arch.name}; use smaller tile shapes", kernel=self.name)
                t.addr = addr
                placed.append((lo, hi, addr, t.size))

    def kernel(self) -> ir.KernelIR:
        params: List[Any] = list(self.params)
        pes = getattr(self, "comm_pes", {})  # my_symbolic_pe variables: scalar parameters after the tensors
        for group, var in pes.values():
            params.append(ir.ScalarParam(var.name, len(params), var))
        callback = getattr(self, "comm_callback", None)  # (function, kernel handle) of compiled comm ops
        for var in callback or ():
            params.append(ir.ScalarParam(var.name, len(params), var))
        k = ir.KernelIR(name=self.name, arch=self.arch, params=params, body=self.body,
                        tiles=self.tiles, groups=[], kind="mix" if self.mix else "vector", auto_mutex=False,
                        filename="<lowered>")
        if pes or callback:
            k.comm_pes = {uid: group for uid, (group, _) in pes.items()}
            k.comm_callback = callback
        return k


def expr(value) -> Any:
    """A scalar operand for an op: numbers stay numbers, SymbolicScalars become IR expressions."""
    if isinstance(value, SymbolicScalar):
        return value.expr
    return value
