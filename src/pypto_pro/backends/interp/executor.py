"""Sequential, per-core execution of a :class:`~pypto_pro.ir.nodes.KernelIR` on numpy.

Each core runs as a Python generator over the structured IR; a core only yields when it waits on
another one (cross-core events, ``sync_all``), so ping-pong pipelines between the cube core and
the vector cores of a block progress exactly as on hardware.  If every unfinished core waits, the
launch raises :class:`KernelDeadlockError`.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ...dtypes import DataType
from ...errors import KernelDeadlockError, KernelError, KernelRuntimeError
from ...ir import nodes as ir
from ...ir.layout import tile_offsets
from ...ir.optable import Wait, wait_location
from ...ir.types import MemorySpace
from ...ops.sync import _nop as _no_effect  # the reference semantics of in-core flags, barriers, mutexes
from .gmview import view_array
from .memory import CoreMemory, TileView

_BREAK = "break"
_CONTINUE = "continue"


@dataclass
class CoreState:
    """One AI core of the launch: identity, scalar variables, memories, valid windows."""

    kind: str  # "cube" or "vector"
    block: int
    sub: int
    block_idx: int
    block_num: int
    subblock_idx: int
    subblock_num: int
    memory: CoreMemory
    vars: Dict[int, Any] = field(default_factory=dict)
    valid: Dict[int, List[int]] = field(default_factory=dict)
    #: TileView of each declared tile on this core, built on first use (valid window as of then)
    views: Dict[int, TileView] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"block {self.block} {'AIC' if self.kind == 'cube' else f'AIV{self.sub}'}"


class LaunchState:
    """State shared by all cores of one launch: arguments, cross-core flags, barriers, output."""

    def __init__(self, kernel: ir.KernelIR, tensors: Dict[int, np.ndarray], block_dim: int,
                 log: Optional[Callable[[str], None]] = None):
        self.kernel = kernel
        self.tensors = tensors
        self.block_dim = block_dim
        self.cores: List[CoreState] = []
        self.flags: Dict[Tuple, int] = {}
        self.barriers: Dict[Tuple, int] = {}
        self.log = log or (lambda text: print(text, end=""))
        self.hook = None  # access hook for tracing backends (simulator)
        self.ssbuf: Dict[int, np.ndarray] = {}  # block -> its SSBUF bytes (ops/ssbuf.py)
        self.unicast_source: Dict[int, Any] = {}  # cube core id -> the AIV whose set its last UNICAST wait took

    def cores_of_block(self, block: int, kind: Optional[str] = None) -> List[CoreState]:
        return [c for c in self.cores if c.block == block and (kind is None or c.kind == kind)]


class ExecCtx:
    """What an op's reference ``run`` sees: the executing core, the statement and helpers."""

    __slots__ = ("interp", "core", "stmt", "launch")

    def __init__(self, interp: "Interpreter", core: CoreState, stmt: ir.OpStmt):
        self.interp = interp
        self.core = core
        self.stmt = stmt
        self.launch = interp.launch

    @property
    def arch(self):
        return self.launch.kernel.arch

    def error(self, message: str) -> KernelRuntimeError:
        return KernelRuntimeError(f"{message} (on {self.core.label})", loc=self.stmt.loc,
                                  kernel=self.launch.kernel.name)

    def scalar(self, value):
        return self.interp.eval(value, self.core) if isinstance(value, ir.Expr) else value

    def tensor(self, param: ir.TensorParam) -> np.ndarray:
        if isinstance(param, ir.TensorView):
            return view_array(param, self.launch.tensors[param.index], self.scalar, self.error)
        return self.launch.tensors[param.index]

    def tile(self, ref: ir.TileRef, core: Optional[CoreState] = None) -> TileView:
        """The view ``ref`` denotes on ``core`` (default: the executing core).  A slot index or subview bound
        is a scalar of the executing core, so for another core's tile (Vec->Mat insert, Acc->Vec move) it is
        evaluated here, not in the other core's variables."""
        if core is not None and core is not self.core:
            ref = self._pinned(ref)
        return self.interp.resolve_tile(ref, core or self.core, self.stmt)

    def _pinned(self, ref: ir.TileRef) -> ir.TileRef:
        """``ref`` with its runtime slot index and subview bounds replaced by their values on this core."""
        if isinstance(ref, ir.SlotRef):
            return ir.DeclRef(ref.group.slots[self.scalar(ref.index) % ref.group.depth])
        if isinstance(ref, ir.SubRef):
            valid = None if ref.valid is None else tuple(ir.const(int(self.scalar(x))) for x in ref.valid)
            return ir.SubRef(self._pinned(ref.base), *(ir.const(int(self.scalar(x)))
                                                         for x in (ref.r0, ref.r1, ref.c0, ref.c1)), valid)
        return ref

    def decl_of(self, ref: ir.TileRef) -> Optional[ir.TileDecl]:
        """The declaration a whole-tile reference denotes now (``None`` for subviews)."""
        if isinstance(ref, ir.DeclRef):
            return ref.tile
        if isinstance(ref, ir.SlotRef):
            return ref.group.slots[self.scalar(ref.index) % ref.group.depth]
        return None

    def note_gm(self, param: ir.TensorParam, index: Tuple, write: bool, atomic: bool = False) -> None:
        """Report a GM access (numpy ``index`` into ``param``'s array) to the launch observer, if any."""
        observer = self.interp.observer
        if observer is not None:
            observer.on_gm(self.core, param, index, write, atomic,
                           self.tensor(param) if isinstance(param, ir.TensorView) else None)

    @property
    def observed(self) -> bool:
        """Whether a tracing backend (the simulator) observes this launch (ops may then record more,
        such as the order of communication transfers)."""
        return self.interp.observer is not None

    def note_discard(self, view: TileView) -> None:
        """Report that ``view``'s contents became undefined (``discard``) to the observer, if any."""
        observer = self.interp.observer
        if observer is not None:
            observer.on_discard(self.core, view)

    def note_ssbuf(self, lo: int, hi: int, write: bool) -> None:
        """Report an access of bytes [lo, hi) of the executing core's block's SSBUF to the observer, if any."""
        observer = self.interp.observer
        if observer is not None:
            observer.on_ssbuf(self.core, lo, hi, write)

    def set_valid(self, decl: ir.TileDecl, rows: int, cols: int, core: Optional[CoreState] = None) -> None:
        (core or self.core).valid[decl.uid] = [rows, cols]

    def peers(self, kind: str) -> List[CoreState]:
        """The cores of the executing core's block of the given kind ("cube"/"vector")."""
        return self.launch.cores_of_block(self.core.block, kind)


class Interpreter:
    """Runs one launch of a kernel."""

    def __init__(self, kernel: ir.KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any],
                 block_dim: int, log: Optional[Callable[[str], None]] = None):
        self.kernel = kernel
        self.launch = LaunchState(kernel, tensors, block_dim, log)
        self.scalars = scalars  # Var uid -> value (scalar params and dynamic dims)
        self._compiled: Dict[int, Callable[[CoreState], Any]] = {}
        #: optional tracer (the simulator): ``begin_op(core, stmt)`` and ``end_op(core, stmt)`` around each
        #: op, ``on_gm(...)`` for GM accesses, and instead of all that ``on_noop(core, stmt)`` for the ops
        #: that do nothing here (in-core flags, barriers, mutexes; cache hints), which are then not run
        self.observer = None
        self._make_cores(block_dim)

    # ------------------------------------------------------------------ setup
    def _make_cores(self, block_dim: int) -> None:
        arch = self.kernel.arch
        kind = self.kernel.kind
        for b in range(block_dim):
            if kind in ("cube", "mix"):
                self._add_core("cube", b, 0, b, block_dim, 0, 1)
            if kind == "vector":
                self._add_core("vector", b, 0, b, block_dim, 0, 1)
            elif kind == "mix":
                n = arch.vector_per_block
                for s in range(n):
                    self._add_core("vector", b, s, b * n + s, block_dim, s, n)

    def _add_core(self, kind, block, sub, block_idx, block_num, subblock_idx, subblock_num) -> None:
        core = CoreState(kind, block, sub, block_idx, block_num, subblock_idx, subblock_num,
                         CoreMemory(self.kernel.arch.capacity))
        core.vars.update(self.scalars)
        for t in self.kernel.tiles:
            vs = t.ttype.valid_shape or [-1, -1]
            core.valid[t.uid] = [t.shape[0] if vs[0] == -1 else vs[0], t.shape[1] if vs[1] == -1 else vs[1]]
        for g in self.kernel.groups:
            core.vars[g.cursor.uid] = g.depth - 1
        self.launch.cores.append(core)

    # ------------------------------------------------------------------ scheduling
    def run(self) -> None:
        """Run every core to completion, interleaving them only where they wait on each other."""
        pending = [(core, self._exec_body(core, self.kernel.body)) for core in self.launch.cores]
        waiting: Dict[int, Wait] = {}
        while pending:
            progressed = False
            still = []
            for core, gen in pending:
                w = waiting.get(id(gen))
                if w is not None:
                    if not w.ready():
                        still.append((core, gen))
                        continue
                    del waiting[id(gen)]  # the core re-checks ready() and consumes the event itself
                    progressed = True
                try:
                    w = next(gen)
                    waiting[id(gen)] = w
                    still.append((core, gen))
                    progressed = True
                except StopIteration:
                    progressed = True
            pending = still
            if pending and not progressed:
                waits = [waiting[id(gen)] for _, gen in pending]
                lines = [f"  {core.label} waits for {w.what}{wait_location(w.loc)}" for (core, _), w in zip(pending, waits)]
                raise KernelDeadlockError("every remaining core is blocked:\n" + "\n".join(lines),
                                          loc=next((w.loc for w in waits if w.loc is not None), None),
                                          kernel=self.kernel.name)

    # ------------------------------------------------------------------ statements
    def _exec_body(self, core: CoreState, stmts: List[ir.Stmt]):
        for s in stmts:
            t = type(s)
            if t is ir.OpStmt:
                observer = self.observer
                try:
                    if observer is not None:
                        if s.op.run is _no_effect:  # nothing to compute: the observer only records it
                            observer.on_noop(core, s)
                            continue
                        observer.begin_op(core, s)
                    result = s.op.run(ExecCtx(self, core, s), s.args)
                    if isinstance(result, Wait):
                        while not result.ready():
                            yield result
                        result = result.done()
                    if observer is not None:
                        observer.end_op(core, s)
                except KernelError as e:
                    raise e.attach(loc=s.loc, kernel=self.kernel.name)
                if s.result is not None:
                    core.vars[s.result.uid] = result
            elif t is ir.Assign:
                core.vars[s.var.uid] = self._coerce(self._eval_at(s, s.value, core), s.var.dtype)
            elif t is ir.For:
                start, stop, step = (self._eval_at(s, e, core) for e in (s.start, s.stop, s.step))
                if step == 0:
                    raise KernelRuntimeError("pl.range step is 0", loc=s.loc, kernel=self.kernel.name)
                i = start
                while (i < stop) if step > 0 else (i > stop):
                    core.vars[s.var.uid] = i
                    sig = yield from self._exec_body(core, s.body)
                    if sig == _BREAK:
                        break
                    i += step
            elif t is ir.If:
                body = s.then_body if self._eval_at(s, s.cond, core) else s.else_body
                sig = yield from self._exec_body(core, body)
                if sig:
                    return sig
            elif t is ir.While:
                while True:
                    yield from self._exec_body(core, s.pre)
                    if not self._eval_at(s, s.cond, core):
                        break
                    sig = yield from self._exec_body(core, s.body)
                    if sig == _BREAK:
                        break
            elif t is ir.Section:
                if s.kind == core.kind:
                    sig = yield from self._exec_body(core, s.body)
                    if sig:
                        return sig
            elif t is ir.Break:
                return _BREAK
            elif t is ir.Continue:
                return _CONTINUE
            else:  # pragma: no cover - the parser emits nothing else
                raise TypeError(f"unknown statement {s!r}")
        return None

    # ------------------------------------------------------------------ expressions
    def _eval_at(self, s: ir.Stmt, e, core: CoreState):
        """``e``, an expression of statement ``s`` itself (not of an op): a failure (a division or
        modulo by zero) names the kernel and ``s``'s line."""
        try:
            return self.eval(e, core)
        except KernelError as err:
            raise err.attach(loc=s.loc, kernel=self.kernel.name)

    @staticmethod
    def _coerce(value, dtype: DataType):
        if dtype.kind == "float":
            return to_f32(value)
        if dtype.kind == "bool":
            return bool(value)
        return int(value)

    def eval(self, e, core: CoreState):
        """The value of scalar expression ``e`` on ``core`` (compiled to a closure on first use)."""
        fn = self._compiled.get(id(e))
        if fn is None:
            fn = self.compiled(e)
        return fn(core)

    def compiled(self, e) -> Callable[[CoreState], Any]:
        """The closure ``core -> value of e`` that :meth:`eval` calls (for observers evaluating ``e`` often)."""
        fn = self._compiled.get(id(e))
        if fn is None:
            fn = self._compiled[id(e)] = self._compile(e)
        return fn

    def _compile(self, e) -> Callable[[CoreState], Any]:
        """A closure computing ``e`` from a core's variables: tree walking is done once, not per use."""
        t = type(e)
        if t is ir.Const:
            value = e.value
            return lambda core: value
        if t is ir.Var:
            uid, name, kernel = e.uid, e.name, self.kernel.name

            def read(core):
                try:
                    return core.vars[uid]
                except KeyError:
                    raise KernelRuntimeError(f"variable '{name}' is read before it is assigned",
                                             kernel=kernel) from None
            return read
        if t is ir.CoreQuery:
            what = e.what
            return lambda core: getattr(core, what)
        if t is ir.Select:
            cond = self._compile(e.cond)
            if type(e.if_true) is ir.Const and type(e.if_false) is ir.Const:  # e.g. auto_mutex's id choice
                yes_value, no_value = e.if_true.value, e.if_false.value
                return lambda core: yes_value if cond(core) else no_value
            yes, no = self._compile(e.if_true), self._compile(e.if_false)
            return lambda core: yes(core) if cond(core) else no(core)
        if t is ir.UnOp:
            v = self._compile(e.operand)
            unary = _UNARY[e.op]
            return lambda core: unary(v(core))
        if t is ir.BinOp:
            a, b, op, dtype = self._compile(e.lhs), self._compile(e.rhs), e.op, e.dtype
            if op == "and":
                return lambda core: bool(a(core)) and bool(b(core))
            if op == "or":
                return lambda core: bool(a(core)) or bool(b(core))
            fast = _EXACT_INT_OPS.get(op) if dtype.kind != "float" else None
            if fast is None and op == "%" and dtype.kind != "float" and type(e.rhs) is ir.Const and e.rhs.value:
                fast = operator.mod  # what _binop computes for a non-zero modulus
            if fast is not None:
                if type(e.rhs) is ir.Const:  # x + 1, i % 2, ...: one closure call less
                    rhs = e.rhs.value
                    if type(e.lhs) is ir.Var:  # and one more when x is a variable
                        uid = e.lhs.uid

                        def var_op_const(core):
                            try:
                                x = core.vars[uid]
                            except KeyError:
                                x = a(core)  # raises "read before it is assigned"
                            return fast(x, rhs)
                        return var_op_const
                    return lambda core: fast(a(core), rhs)
                return lambda core: fast(a(core), b(core))
            return lambda core: _binop(op, a(core), b(core), dtype)
        raise TypeError(f"cannot evaluate {e!r}")

    # ------------------------------------------------------------------ tiles
    def resolve_tile(self, ref: ir.TileRef, core: CoreState, stmt: Optional[ir.Stmt] = None) -> TileView:
        t = type(ref)
        if t is ir.DeclRef:
            return self._view(ref.tile, core)
        if t is ir.SlotRef:
            slot = self.eval(ref.index, core) % ref.group.depth
            return self._view(ref.group.slots[slot], core)
        if t is ir.SubRef:
            base = self.resolve_tile(ref.base, core, stmt)
            r0, r1, c0, c1 = (self.eval(x, core) for x in (ref.r0, ref.r1, ref.c0, ref.c1))
            rows, cols = base.shape
            if not (0 <= r0 < r1 <= rows and 0 <= c0 < c1 <= cols):
                raise KernelRuntimeError(
                    f"subview [{r0}:{r1}, {c0}:{c1}] is outside tile {base.name} of shape [{rows}, {cols}]",
                    loc=stmt.loc if stmt else None, kernel=self.kernel.name)
            if ref.valid is None:
                vr, vc = base.valid
                valid = (max(0, min(r1, vr) - r0), max(0, min(c1, vc) - c0))
            else:
                valid = tuple(int(self.eval(x, core)) for x in ref.valid)
            return base.sub(r0, r1, c0, c1, valid)
        raise TypeError(f"not a tile reference: {ref!r}")

    def _view(self, decl: ir.TileDecl, core: CoreState) -> TileView:
        vr, vc = core.valid[decl.uid]
        cached = core.views.get(decl.uid)
        if cached is None:
            offsets = tile_offsets(decl.shape[0], decl.shape[1], decl.layout, decl.dtype, decl.space)
            cached = TileView.at(core.memory.buffer(decl.space), decl.space, decl.addr, decl.dtype, offsets,
                                 (vr, vc), decl.name, self.launch.hook, decl.layout)
            core.views[decl.uid] = cached
        return cached if cached.valid == (vr, vc) else cached.with_valid((vr, vc))


def to_f32(value) -> float:
    """``value`` rounded to fp32 (overflow to +-inf is the fp32 semantics, not an error)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


_UNARY = {"-": lambda v: -v, "not": lambda v: not v, "~": lambda v: ~int(v), "float": to_f32,
          "int": int, "bool": bool}
#: integer ops whose Python result needs no rounding (comparisons give bools)
_EXACT_INT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "==": operator.eq, "!=": operator.ne,
                  "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "min": min, "max": max}


def _binop(op: str, a, b, dtype: DataType):
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        if b == 0:
            raise KernelRuntimeError("scalar division by zero")
        return to_f32(a / b)
    elif op == "//":
        if b == 0:
            raise KernelRuntimeError("scalar division by zero")
        r = math.floor(a / b) if isinstance(a, float) or isinstance(b, float) else a // b
    elif op == "%":
        if b == 0:
            raise KernelRuntimeError("scalar modulo by zero")
        r = a % b
    elif op == "<<":
        r = int(a) << int(b)
    elif op == ">>":
        r = int(a) >> int(b)
    elif op == "&":
        r = int(a) & int(b)
    elif op == "|":
        r = int(a) | int(b)
    elif op == "^":
        r = int(a) ^ int(b)
    elif op == "min":
        r = min(a, b)
    elif op == "max":
        r = max(a, b)
    elif op == "==":
        return a == b
    elif op == "!=":
        return a != b
    elif op == "<":
        return a < b
    elif op == "<=":
        return a <= b
    elif op == ">":
        return a > b
    elif op == ">=":
        return a >= b
    else:
        raise TypeError(op)
    if dtype.kind == "float":
        return to_f32(r)
    return r


def run_kernel(kernel: ir.KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int,
               log: Optional[Callable[[str], None]] = None) -> Interpreter:
    """Execute one launch; returns the finished interpreter (for inspection by tools)."""
    interp = Interpreter(kernel, tensors, scalars, block_dim, log)
    interp.run()
    return interp
