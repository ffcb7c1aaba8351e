"""Which kernels the compiled fast path covers, and the static tables it runs on.

Covered: vector and cube kernels whose tile ops are GM <-> UB/L1/L0C loads and stores, element-wise
vector ops and casts, L1 -> L0A/L0B moves, matmul / matmul_acc, in-core flags, barriers and mutexes (what
auto_mutex inserts), on whole tiles of static shape whose bytes are one contiguous run (declared tiles or
tile-group slots; any layout), over plain GM arguments; any scalar control flow.  Everything else runs on
the interpreter engine.  For a covered kernel every fact of an executed op except its runtime values (which
slot a group reference picks, GM offsets, an event or mutex id) is known per statement: pipe, sync kind,
cost (costs.cost_of on the op's accesses) and the access templates, in the order the recorder records them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from ....ir import nodes as ir
from ....ir.layout import is_packed, tile_offsets
from ....ir.types import AtomicType, CrossCoreSyncMode, Layout, MemorySpace
from ..costs import CostParams, cost_of
from ..instr import PIPE_INDEX, Access, Instr
from ..recorder import SPACE_LABEL

#: must match simfast.h
W, TAB, MAXACC, MAXDIM, ACCW = 8, 32, 4, 6, 6
DATA, SET, WAIT, BAR, BAR_ALL, LOCK, UNLOCK, XSET, XWAIT = range(9)
ALL = 7

_UNARY = frozenset(("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "not_"))
_BINARY = frozenset(("add", "sub", "mul", "div", "and_", "or_", "shl", "shr"))
_MINMAX = frozenset(("maximum", "minimum"))
#: ops whose cpu-backend results are the interpreter's to the bit (tests/cpu/test_differential.py compares
#: them bit for bit; exp is one fp32 sequence on both, ops/fp32math.py); a kernel using any other op takes
#: its values from the interpreter (without the recorder) instead
CPU_EXACT = frozenset(("load", "store", "add", "sub", "mul", "div", "maximum", "minimum", "abs", "neg", "relu",
                       "sqrt", "exp", "expands", "and_", "or_", "shl", "shr", "not_"))
CPU_EXACT = CPU_EXACT | {"cast", "move", "matmul", "matmul_acc", "sum", "row_sum", "row_max", "row_min",
                         "expand_sub", "expand_mul", "expand_div", "expand_max", "expand_min"}
_EXPAND = frozenset(("expand_sub", "expand_mul", "expand_div", "expand_max", "expand_min"))
#: the on-chip memories the fast path models, in the order they are laid out in its flat per-core address space
SPACES = ("Vec", "Mat", "Left", "Right", "Acc")
#: the moves it models (equal shapes, no offset / fixpipe options): within one core
_MOVES = {("Mat", "Left"), ("Mat", "Right"), ("Vec", "Vec")}
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
    #: the window: a number, or -1 - k for record value k (a valid window's rows or cols at run time);
    #: a tile access with both numbers covers the whole tile
    rows: int
    cols: int

    def dims(self, vals) -> Tuple[int, int]:
        """rows, cols of an execution whose record values are ``vals``."""
        r, c = self.rows, self.cols
        return (r if r >= 0 else vals[-1 - r]), (c if c >= 0 else vals[-1 - c])


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
    #: the record value indices holding valid windows (rows, cols) at run time; empty: whole tiles
    dyn: List[int] = field(default_factory=list)
    #: the trace program runs the statement itself as well (set_validshape: later windows depend on it)
    execute: bool = False
    _costs: Dict[Tuple[int, ...], int] = field(default_factory=dict)

    def cost_at(self, params: CostParams, key: Tuple[int, ...]) -> int:
        """The cost of an execution whose values at ``dyn`` are ``key`` (cost_of on its accesses)."""
        found = self._costs.get(key)
        if found is None:
            vals = [0] * W
            for i, v in zip(self.dyn, key):
                vals[i] = v
            found = self._costs[key] = cost_of(params, _instr(self, vals))
        return found


@dataclass
class KernelPlan:
    stmts: List[StmtPlan]
    by_stmt: Dict[int, StmtPlan]
    decl_index: Dict[int, int]
    table: np.ndarray          # len(stmts) x TAB int64
    decls: np.ndarray          # per declaration: address in the flat on-chip space (SPACES in order), bytes
    #: per declaration: (space name, first byte, end byte) of the whole tile in its own memory (None: not modelled)
    decl_bytes: List[Optional[Tuple[str, int, int]]]
    chip_bytes: int            # size of the flat on-chip space
    params: List[ir.TensorParam]
    #: every data op is in CPU_EXACT: the cpu backend computes the values
    cpu_values: bool
    #: cores per block, and the first vector core's position in its block (the cube core comes first in a
    #: mix kernel, as on the interpreter: block b's cores are per_block * b + 0 .. per_block - 1)
    per_block: int = 1
    first_vector: int = 0
    #: the statements with a runtime window (their cost depends on it)
    windowed: List[StmtPlan] = field(default_factory=list)
    cost_params: Optional[CostParams] = None

    def record_costs(self, recs: np.ndarray) -> np.ndarray:
        """The cost of each trace record (rows of ``recs``: statement id, values): the table's, or for a
        statement with a runtime window the cost over that window (computed once per distinct window)."""
        stmt = recs[:, 0]
        costs = self.table[stmt, 2].copy()
        for p in self.windowed:
            sel = np.flatnonzero(stmt == p.index)
            if sel.size == 0:
                continue
            uniq, inverse = np.unique(recs[np.ix_(sel, [1 + i for i in p.dyn])], axis=0, return_inverse=True)
            costs[sel] = np.array([p.cost_at(self.cost_params, tuple(int(x) for x in k)) for k in uniq],
                                  np.int64)[inverse.reshape(-1)]
        return costs

    def labels(self, blocks: int) -> List[str]:
        """The cores' labels, as the interpreter names them."""
        own = [f"AIV{j - self.first_vector}" if j >= self.first_vector else "AIC" for j in range(self.per_block)]
        return [f"block {b} {name}" for b in range(blocks) for name in own]

    def peers(self, family: int, ci: int) -> List[int]:
        """The cores a cross-core set of ``family`` on core ``ci`` reaches (= those a wait there consumes
        from), as ops/sync.py's ``_sources`` picks them; empty where that is an error."""
        block, local = divmod(ci, self.per_block)
        first = block * self.per_block
        vectors = range(first + self.first_vector, first + self.per_block)
        if family == CrossCoreSyncMode.INTER_SUBBLOCK:
            return list(vectors) if local >= self.first_vector else []
        return list(vectors) if local < self.first_vector else list(range(first, first + self.first_vector))


def whole_tile_bytes(decl: ir.TileDecl) -> Optional[Tuple[int, int]]:
    """[first, end) bytes of the whole of ``decl`` as the recorder computes them for a whole-tile access, or
    None when those bytes are not one contiguous run (the recorder then records byte runs)."""
    if len(decl.shape) != 2 or decl.addr < 0 or decl.space.name not in SPACES:
        return None
    rows, cols = decl.shape
    es = decl.dtype.nbytes
    offs = tile_offsets(rows, cols, decl.layout, decl.dtype, decl.space)
    if is_packed(decl.dtype, decl.space):  # two elements per byte: the recorder sees byte offsets (o // 2)
        lo = decl.addr + int(offs.item(0, 0)) // 2
        hi = decl.addr + int(offs.item(rows - 1, cols - 1)) // 2 + 1
        return (lo, hi) if hi - lo == -(-rows * cols // 2) and int(offs.max()) == rows * cols - 1 else None
    lo = decl.addr + int(offs.item(0, 0)) * es
    hi = decl.addr + (int(offs.item(rows - 1, cols - 1)) + 1) * es
    return (lo, hi) if hi - lo == rows * cols * es else None


def _whole_tile(kernel: ir.KernelIR, ref, what: str) -> List[ir.TileDecl]:
    if isinstance(ref, ir.DeclRef):
        decls = [ref.tile]
    elif isinstance(ref, ir.SlotRef):
        decls = list(ref.group.slots)
    else:
        raise NotCovered(f"{what}: a tile subview")
    for d in decls:
        if whole_tile_bytes(d) is None:
            raise NotCovered(f"{what}: tile {d.name} (its bytes are not one run of {'/'.join(SPACES)})")
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
    if kernel.kind not in ("vector", "cube", "mix"):
        raise NotCovered(f"a {kernel.kind} kernel")
    decl_index = {t.uid: i for i, t in enumerate(kernel.tiles)}
    tracked = _valid_tracked(kernel)
    plans: List[StmtPlan] = []
    for s in ir.walk(kernel.body):
        if not isinstance(s, ir.OpStmt):
            continue
        if any(isinstance(v, ir.TensorView) for v in _flat(s.args.values())):
            raise NotCovered(f"pl.{s.op.name}: a pl.make_tensor view")
        if s.result is not None:
            raise NotCovered(f"pl.{s.op.name}: an op with a scalar result")
        plans.append(_plan_stmt(kernel, s, len(plans), params, tracked))
    table = np.zeros((max(1, len(plans)), TAB), np.int64)
    for p in plans:
        row = table[p.index]
        row[0] = ALL if p.pipe == "ALL" else PIPE_INDEX[p.pipe]
        row[1], row[2] = p.kind, p.cost
        if p.kind in (SET, WAIT):
            row[3], row[4] = PIPE_INDEX[p.sync[1][0]], PIPE_INDEX[p.sync[1][1]]
        elif p.kind in (XSET, XWAIT):
            row[3] = p.sync[1]  # the event family (CrossCoreSyncMode value)
        row[5] = p.sync_value
        row[6] = len(p.accesses)
        for k, a in enumerate(p.accesses):
            row[7 + k * ACCW: 7 + (k + 1) * ACCW] = (int(a.gm), int(a.write), a.value,
                                                    a.param.index if a.gm else 0, a.rows, a.cols)
    base, chip = {}, 0
    for sp in SPACES:
        base[sp] = chip
        chip += int(kernel.arch.capacity.get(sp, 0))
    decls = np.zeros((max(1, len(kernel.tiles)), 4), np.int64)
    decl_bytes: List[Optional[Tuple[str, int, int]]] = []
    for i, t in enumerate(kernel.tiles):
        span = whole_tile_bytes(t)
        decl_bytes.append(None if span is None else (t.space.name, span[0], span[1]))
        if span is not None:
            # flat address, bytes, row pitch and element bytes (a window's byte runs, ND tiles)
            decls[i] = (base[t.space.name] + span[0], span[1] - span[0], t.shape[1] * t.dtype.nbytes,
                        t.dtype.nbytes)
    tparams = [p for p in kernel.params if isinstance(p, ir.TensorParam)]
    cpu_values = all(p.kind != DATA or p.stmt.op.name in CPU_EXACT for p in plans)
    per_block, first_vector = {"vector": (1, 0), "cube": (1, 1),
                                "mix": (1 + kernel.arch.vector_per_block, 1)}[kernel.kind]
    return KernelPlan(plans, {id(p.stmt): p for p in plans}, decl_index, table, decls, decl_bytes, chip, tparams,
                      cpu_values, per_block, first_vector, [p for p in plans if p.dyn], params)


def _valid_tracked(kernel: ir.KernelIR) -> set:
    """uids of the declarations whose valid window can differ from their shape: targets of set_validshape,
    and tiles declared with a valid_shape.  Only ND UB tiles are modelled so (their windows are byte runs)."""
    tracked = {t.uid for t in kernel.tiles
               if t.ttype.valid_shape is not None and list(t.ttype.valid_shape) != list(t.shape)}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.OpStmt) and s.op.name == "set_validshape":
            t = s.args["tile"]
            if isinstance(t, ir.TileGroupDecl):
                tracked.update(d.uid for d in t.slots)
            elif isinstance(t, ir.SlotRef):
                tracked.update(d.uid for d in t.group.slots)
            elif isinstance(t, ir.DeclRef):
                tracked.add(t.tile.uid)
            else:
                raise NotCovered("pl.set_validshape of a subview")
    for t in kernel.tiles:
        if t.uid in tracked and not _windowable(t):
            raise NotCovered(f"a valid shape on tile {t.name} (only ND UB tiles and [R, 1] columns)")
    return tracked


def _windowable(t: ir.TileDecl) -> bool:
    """Whether a window of ``t``'s rows x cols is rows runs of cols elements, one row pitch apart (ND UB
    tiles; a DN [R, 1] column is one run, as an ND one)."""
    return t.space == MemorySpace.Vec and (t.layout == Layout.ND or (t.layout == Layout.DN and t.shape[1] == 1))


def _decls_of(ref) -> List[ir.TileDecl]:
    return list(ref.group.slots) if isinstance(ref, ir.SlotRef) else [ref.tile] if isinstance(ref, ir.DeclRef) else []


def _plan_stmt(kernel: ir.KernelIR, s: ir.OpStmt, index: int, params: CostParams, tracked: set) -> StmtPlan:
    p = _plan_op(kernel, s, index, params, tracked)
    if p.kind != DATA or s.op.name == "set_validshape":
        return p
    a = s.args
    refs = [r for _, r in p.refs if isinstance(r, (ir.DeclRef, ir.SlotRef))]
    if not any(d.uid in tracked for r in refs for d in _decls_of(r)):
        return p
    # the windows of the accesses, as the ops take them from the valid shapes at run time (ops/common.py
    # window: an element-wise op's is its destination's; load: the destination's, store: the source's; a
    # reduction reads its source's window and writes [rows, 1] / [1, cols]; a broadcast reads [rows, 1] /
    # [1, cols] of its vector; a scratch tile is written over its own valid window)
    name = s.op.name
    for r in refs:
        for d in _decls_of(r):
            if not _windowable(d):
                raise NotCovered(f"pl.{name}: a valid window over tile {d.name} (only ND UB tiles)")
    elementwise = name in _UNARY or name in ("cast", "expands") or name in _BINARY or \
        (name in _MINMAX and a.get("dim") is None)
    reduction = bool(s.op.reduction) or (name in _MINMAX and a.get("dim") is not None)
    if name in ("load", "store") or elementwise:
        wr, wc = _pair(p, a["src"] if name == "store" else a["dst"])
        for t in p.accesses:
            t.rows, t.cols = wr, wc
    elif reduction:
        src, dst, *tmp = p.accesses
        wr, wc = _pair(p, a["lhs"] if name in _MINMAX else a["src"])
        dim = s.op.reduce_dim if s.op.reduce_dim is not None else a["dim"]
        src.rows, src.cols = wr, wc
        dst.rows, dst.cols = (wr, 1) if dim == 0 else (1, wc)
        if tmp:
            tmp[0].rows, tmp[0].cols = _pair(p, p.refs[tmp[0].value][1])
    elif name in _EXPAND:
        src, v, dst = p.accesses
        wr, wc = _pair(p, a["dst"])
        src.rows, src.cols = dst.rows, dst.cols = wr, wc
        v.rows, v.cols = (wr, 1) if a["dim"] == 0 else (1, wc)
    else:
        raise NotCovered(f"pl.{name} on a tile with a valid shape")
    return p


def _pair(p: StmtPlan, ref) -> Tuple[int, int]:
    """Record values for the valid window (rows, cols) of ``ref`` at run time, as window codes."""
    r = _value(p, ref, "vrows")
    c = _value(p, ref, "vcols")
    p.dyn += [r, c]
    return -1 - r, -1 - c


def _plan_op(kernel: ir.KernelIR, s: ir.OpStmt, index: int, params: CostParams, tracked: set) -> StmtPlan:
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
    if name in ("set_cross_core", "wait_cross_core"):
        mode = CrossCoreSyncMode(a["sync_mode"])
        if mode not in (CrossCoreSyncMode.INTRA_BLOCK, CrossCoreSyncMode.INTER_SUBBLOCK):
            raise NotCovered(f"pl.system.{name} in mode {mode.name}")
        setting = name == "set_cross_core"
        # the sync meaning's core keys are runtime facts: lazy.py builds ("xset"/"xwait", keys) per record
        p = StmtPlan(index, s, pipe, XSET if setting else XWAIT, params.sync_cost,
                     ("xset" if setting else "xwait", mode.value))
        p.sync_value = _value(p, a["event_id"], "int")
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
    elif name in _UNARY or name == "cast":
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
    elif name == "move":
        if any(a.get(k) is not None for k in ("offset", "acc_to_vec_mode", "relu_pre_mode", "scale")) or \
                (a["src"].space.name, a["dst"].space.name) not in _MOVES:
            raise NotCovered("pl.move other than L1 -> L0A/L0B or UB -> UB of equal shapes")
        _check_same(kernel, s, ("dst", "src"))
        _tile(p, a["src"], write=False)
        _tile(p, a["dst"], write=True)
    elif name in ("matmul", "matmul_acc"):
        if a.get("phase") is not None or a.get("bias") is not None:
            raise NotCovered(f"pl.{name} with phase= or bias")
        (m, k), (k2, n), (m2, n2) = (tuple(_whole_tile(kernel, a[x], f"pl.{name}")[0].shape)
                                     for x in ("lhs", "rhs", "dst"))
        if name == "matmul_acc" and tuple(_whole_tile(kernel, a["acc"], f"pl.{name}")[0].shape) != (m, n):
            raise NotCovered(f"pl.{name} on tiles of these shapes")
        if (k, m, n) != (k2, m2, n2):
            raise NotCovered(f"pl.{name} on tiles of these shapes")
        _tile(p, a["lhs"], write=False)
        _tile(p, a["rhs"], write=False)
        if name == "matmul_acc":
            _tile(p, a["acc"], write=False)
        _tile(p, a["dst"], write=True)
    elif s.op.reduction or (name in _MINMAX and a.get("dim") is not None):
        # dst [R,1] (dim 0) or [1,C] from the whole src; the scratch tile (tmp, or a min/max's rhs) is written
        # whole after the result (scratch.py), as the recorder records it
        minmax = name in _MINMAX
        src, tmp = (a["lhs"], a["rhs"]) if minmax else (a["src"], a.get("tmp"))
        dim = s.op.reduce_dim if s.op.reduce_dim is not None else a["dim"]
        rows, cols = _whole_tile(kernel, src, f"pl.{name}")[0].shape
        want = (rows, 1) if dim == 0 else (1, cols)
        if tuple(_whole_tile(kernel, a["dst"], f"pl.{name}")[0].shape) != want:
            raise NotCovered(f"pl.{name} into a tile of another shape")
        _tile(p, src, write=False)
        _tile(p, a["dst"], write=True)
        if isinstance(tmp, ir.TileRef):
            _whole_tile(kernel, tmp, f"pl.{name}")
            _tile(p, tmp, write=True)
    elif name in _EXPAND:
        _check_same(kernel, s, ("dst", "src"))
        rows, cols = _whole_tile(kernel, a["src"], f"pl.{name}")[0].shape
        want = (rows, 1) if a["dim"] == 0 else (1, cols)
        if tuple(_whole_tile(kernel, a["v"], f"pl.{name}")[0].shape) != want:
            raise NotCovered(f"pl.{name} with a broadcast tile of another shape")
        _tile(p, a["src"], write=False)
        _tile(p, a["v"], write=False)
        _tile(p, a["dst"], write=True)
    elif name == "expands":
        _check_same(kernel, s, ("dst",))
        _tile(p, a["dst"], write=True)
    elif name == "set_validshape":
        p.execute = True  # (no accesses; the trace program applies it, so later windows see it)
    else:
        raise NotCovered(f"pl.{name}")
    p.cost = cost_of(params, _instr(p))
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


def _instr(p: StmtPlan, vals: Optional[List[int]] = None) -> Instr:
    """A stand-in instruction with the statement's accesses (first slot, GM at offset 0; the windows of an
    execution with record values ``vals``, as the recorder records them: none for an empty window): for
    its cost."""
    ins = Instr(0, 0, p.stmt.op.name, p.pipe, p.stmt.loc)
    accs = []
    for t in p.accesses:
        r, c = (t.rows, t.cols) if vals is None else t.dims(vals)
        if r <= 0 or c <= 0:
            continue
        if t.gm:
            es = t.param.dtype.nbytes
            accs.append(Access(("G",), (0,), (1,), t.write, False, t.param.name, r * c * es, r, c,
                               "GM", t.param.dtype.name, True))
        else:
            d = p.refs[t.value][1].decl
            accs.append(Access(("L",), (d.addr,), (d.addr + 1,), t.write, False, d.name,
                               r * c * d.dtype.nbytes, r, c, d.space.name, d.dtype.name, False))
    ins.accesses = accs
    return ins


__all__ = ["NotCovered", "KernelPlan", "StmtPlan", "build_plan", "SPACE_LABEL"]
