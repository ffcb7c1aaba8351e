"""Which kernels the compiled fast path covers, and the static tables it runs on.

Covered: vector kernels whose tile ops are GM <-> UB loads and stores, element-wise vector ops, in-core
flags, barriers and mutexes (what auto_mutex inserts), on whole ND tiles of static shape (declared tiles
or tile-group slots), over plain GM arguments; any scalar control flow.  Everything else runs on the
interpreter engine.  For a covered kernel every fact of an executed op except its runtime values (which
slot a group reference picks, GM offsets, an event or mutex id) is known per statement: pipe, sync kind,
cost (costs.cost_of on the op's accesses) and the access templates, in the order the recorder records them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from ....ir import nodes as ir
from ....ir.types import AtomicType, Layout, MemorySpace
from ..costs import CostParams, cost_of
from ..instr import PIPE_INDEX, Access, Instr
from ..recorder import SPACE_LABEL

#: must match simfast.h
W, TAB, MAXACC, MAXDIM, ACCW = 8, 32, 4, 6, 6
DATA, SET, WAIT, BAR, BAR_ALL, LOCK, UNLOCK = range(7)
ALL = 7

_UNARY = frozenset(("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "not_"))
_BINARY = frozenset(("add", "sub", "mul", "div", "and_", "or_", "shl", "shr"))
_MINMAX = frozenset(("maximum", "minimum"))
#: ops whose cpu-backend results are the interpreter's to the bit (tests/cpu/test_differential.py compares
#: them bit for bit; exp is one fp32 sequence on both, ops/fp32math.py); a kernel using any other op takes
#: its values from the interpreter (without the recorder) instead
CPU_EXACT = frozenset(("load", "store", "add", "sub", "mul", "div", "maximum", "minimum", "abs", "neg", "relu",
                       "sqrt", "exp", "expands", "and_", "or_", "shl", "shr", "not_"))
_BARS = frozenset(("bar_m", "bar_mte1", "bar_mte2", "bar_mte3", "bar_fix", "bar_v"))


class NotCovered(Exception):
    """The kernel uses something the fast path does not model (the message says what)."""


@dataclass
class Template:
    """One access of a statement: a tile operand (value index of its declaration) or a GM window."""

    gm: bool
    write: bool
    value: int                         # record value index: the declaration, or the first GM offset
    param: Optional[ir.TensorParam]    # GM: the tensor
    rows: int
    cols: int


@dataclass
class StmtPlan:
    """What the fast path knows about one op statement."""

    index: int
    stmt: ir.OpStmt
    pipe: str
    kind: int
    cost: int
    sync: Optional[Tuple]               # the recorder's sync meaning, with None where a record value goes
    sync_value: int = -1                # record value index of the event / mutex id
    values: List[str] = field(default_factory=list)   # C++ expressions (filled by the trace codegen)
    refs: List[Union[ir.TileRef, object]] = field(default_factory=list)   # what each value denotes
    accesses: List[Template] = field(default_factory=list)


@dataclass
class KernelPlan:
    stmts: List[StmtPlan]
    by_stmt: Dict[int, StmtPlan]
    decl_index: Dict[int, int]
    table: np.ndarray          # len(stmts) x TAB int64
    decls: np.ndarray          # per declaration: addr, bytes
    params: List[ir.TensorParam]
    #: every data op is in CPU_EXACT: the cpu backend computes the values
    cpu_values: bool


def _whole_tile(kernel: ir.KernelIR, ref, what: str) -> List[ir.TileDecl]:
    if isinstance(ref, ir.DeclRef):
        decls = [ref.tile]
    elif isinstance(ref, ir.SlotRef):
        decls = list(ref.group.slots)
    else:
        raise NotCovered(f"{what}: a tile subview")
    for d in decls:
        vs = d.ttype.valid_shape
        if d.space != MemorySpace.Vec or d.layout != Layout.ND or len(d.shape) != 2 or d.addr < 0:
            raise NotCovered(f"{what}: tile {d.name} is not a UB tile in ND layout")
        if vs is not None and list(vs) != list(d.shape):
            raise NotCovered(f"{what}: tile {d.name} has a valid shape")
        if d.shape != decls[0].shape or d.dtype != decls[0].dtype:
            raise NotCovered(f"{what}: group slots of different types")
    return decls


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def build_plan(kernel: ir.KernelIR, params: CostParams) -> KernelPlan:
    """The plan of a kernel (with auto_mutex applied); raises :class:`NotCovered`."""
    if any(isinstance(s, ir.OpStmt) and s.pipe == "COMM" for s in ir.walk(kernel.body)):
        # pypto.distributed's transfers and signals: their cross-PE order is the engine's check
        raise NotCovered("communication ops (the COMM pipe of pypto.distributed)")
    if kernel.kind != "vector":
        raise NotCovered(f"a {kernel.kind} kernel (only vector kernels are covered)")
    decl_index = {t.uid: i for i, t in enumerate(kernel.tiles)}
    plans: List[StmtPlan] = []
    for s in ir.walk(kernel.body):
        if not isinstance(s, ir.OpStmt):
            continue
        if any(isinstance(v, ir.TensorView) for v in _flat(s.args.values())):
            raise NotCovered(f"pl.{s.op.name}: a pl.make_tensor view")
        if s.result is not None:
            raise NotCovered(f"pl.{s.op.name}: an op with a scalar result")
        plans.append(_plan_stmt(kernel, s, len(plans), params))
    table = np.zeros((max(1, len(plans)), TAB), np.int64)
    for p in plans:
        row = table[p.index]
        row[0] = ALL if p.pipe == "ALL" else PIPE_INDEX[p.pipe]
        row[1], row[2] = p.kind, p.cost
        if p.kind in (SET, WAIT):
            row[3], row[4] = PIPE_INDEX[p.sync[1][0]], PIPE_INDEX[p.sync[1][1]]
        row[5] = p.sync_value
        row[6] = len(p.accesses)
        for k, a in enumerate(p.accesses):
            row[7 + k * ACCW: 7 + (k + 1) * ACCW] = (int(a.gm), int(a.write), a.value,
                                                    a.param.index if a.gm else 0, a.rows, a.cols)
    decls = np.zeros((max(1, len(kernel.tiles)), 2), np.int64)
    for i, t in enumerate(kernel.tiles):
        decls[i] = (t.addr, t.shape[0] * t.shape[1] * t.dtype.nbytes) if len(t.shape) == 2 else (0, 0)
    tparams = [p for p in kernel.params if isinstance(p, ir.TensorParam)]
    cpu_values = all(p.kind != DATA or p.stmt.op.name in CPU_EXACT for p in plans)
    return KernelPlan(plans, {id(p.stmt): p for p in plans}, decl_index, table, decls, tparams, cpu_values)


def _plan_stmt(kernel: ir.KernelIR, s: ir.OpStmt, index: int, params: CostParams) -> StmtPlan:
    name, a = s.op.name, s.args
    pipe = s.pipe
    if name in ("sync_src", "sync_dst"):
        p = StmtPlan(index, s, pipe, SET if name == "sync_src" else WAIT, params.sync_cost,
                     ("set" if name == "sync_src" else "wait", (a["set_pipe"].value, a["wait_pipe"].value, None)))
        p.sync_value = _value(p, a["event_id"], "int")
        return p
    if name in ("mutex_lock", "mutex_unlock"):
        p = StmtPlan(index, s, pipe, LOCK if name == "mutex_lock" else UNLOCK, params.sync_cost,
                     ("lock" if name == "mutex_lock" else "unlock", None))
        p.sync_value = _value(p, a["mutex_id"], "int")
        return p
    if name in _BARS:
        return StmtPlan(index, s, pipe, BAR, params.sync_cost, ("bar",))
    if name == "bar_all":
        return StmtPlan(index, s, pipe, BAR_ALL, params.sync_cost, ("bar_all",))
    p = StmtPlan(index, s, pipe, DATA, 0, None)
    if name == "load":
        if a.get("order") is not None:
            raise NotCovered("pl.load with order=")
        decls = _whole_tile(kernel, a["dst"], "pl.load")
        _gm(p, a["src"], a["offsets"], decls[0], write=False)
        _tile(p, a["dst"], write=True)
    elif name == "store":
        if any(a.get(k) is not None for k in ("order", "phase", "relu_pre_mode", "scale")) or \
                AtomicType(a["atomic"]) != AtomicType.AtomicNone:
            raise NotCovered("pl.store with order/phase/relu/scale/atomic")
        decls = _whole_tile(kernel, a["src"], "pl.store")
        _tile(p, a["src"], write=False)
        _gm(p, a["dst"], a["offsets"], decls[0], write=True)
    elif name in _UNARY:
        _check_same(kernel, s, ("dst", "src"))
        _tile(p, a["src"], write=False)
        _tile(p, a["dst"], write=True)
    elif name in _BINARY or (name in _MINMAX and a.get("dim") is None):
        operands = ("dst", "lhs", "rhs") if isinstance(a["rhs"], ir.TileRef) else ("dst", "lhs")
        _check_same(kernel, s, operands)
        _tile(p, a["lhs"], write=False)
        if isinstance(a["rhs"], ir.TileRef):
            _tile(p, a["rhs"], write=False)
        _tile(p, a["dst"], write=True)
    elif name == "expands":
        _check_same(kernel, s, ("dst",))
        _tile(p, a["dst"], write=True)
    else:
        raise NotCovered(f"pl.{name}")
    p.cost = cost_of(params, _instr(p, kernel))
    return p


def _check_same(kernel, s: ir.OpStmt, names) -> None:
    shapes = {tuple(_whole_tile(kernel, s.args[n], f"pl.{s.op.name}")[0].shape) for n in names}
    if len(shapes) != 1:
        raise NotCovered(f"pl.{s.op.name} on tiles of different shapes")


def _value(p: StmtPlan, ref, kind: str) -> int:
    if len(p.refs) >= W - 1:
        raise NotCovered(f"pl.{p.stmt.op.name}: too many runtime values")
    p.refs.append((kind, ref))
    return len(p.refs) - 1


def _tile(p: StmtPlan, ref: ir.TileRef, write: bool) -> None:
    d = ref.decl
    p.accesses.append(Template(False, write, _value(p, ref, "tile"), None, d.shape[0], d.shape[1]))


def _gm(p: StmtPlan, param, offsets, decl: ir.TileDecl, write: bool) -> None:
    if not isinstance(param, ir.TensorParam) or param.ndim > MAXDIM or len(offsets) != param.ndim:
        raise NotCovered(f"pl.{p.stmt.op.name}: this GM operand")
    rows, cols = decl.shape
    if param.ndim == 1 and rows != 1:
        raise NotCovered(f"pl.{p.stmt.op.name}: a 1-D tensor into a tile of several rows")
    first = -1
    for o in offsets:
        v = _value(p, o, "int")
        first = v if first < 0 else first
    if len(p.accesses) >= MAXACC:
        raise NotCovered(f"pl.{p.stmt.op.name}: too many accesses")
    p.accesses.append(Template(True, write, first, param, rows, cols))


def _instr(p: StmtPlan, kernel: ir.KernelIR) -> Instr:
    """A stand-in instruction with the statement's accesses (first slot, GM at offset 0): for its cost."""
    ins = Instr(0, 0, p.stmt.op.name, p.pipe, p.stmt.loc)
    accs = []
    for t in p.accesses:
        if t.gm:
            es = t.param.dtype.nbytes
            accs.append(Access(("G",), (0,), (1,), t.write, False, t.param.name, t.rows * t.cols * es, t.rows, t.cols,
                               "GM", t.param.dtype.name, True))
        else:
            d = p.refs[t.value][1].decl
            accs.append(Access(("L",), (d.addr,), (d.addr + 1,), t.write, False, d.name,
                               t.rows * t.cols * d.dtype.nbytes, t.rows, t.cols, d.space.name, d.dtype.name, False))
    ins.accesses = accs
    return ins


__all__ = ["NotCovered", "KernelPlan", "StmtPlan", "build_plan", "SPACE_LABEL"]
