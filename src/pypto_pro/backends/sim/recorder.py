"""Records, while the interpreter runs, each core's instruction stream with its memory accesses.

The interpreter defines the values; the recorder observes it (``Interpreter.observer`` and the
TileView access ``hook``) and builds, per core and in program order, :class:`Instr` records with
the byte ranges each op reads and writes (on-chip memory of a given core, with the exact byte runs
of a non-contiguous window, or a GM tensor box) and the sync semantics of sync ops.  It also checks
reads of on-chip bytes never written in this launch, which depend only on program order.

Speed: a launch executes the same few statements thousands of times, so everything that depends
only on the statement (op name, pipe, how to compute its sync meaning, the cost of a sync op) is
derived once into an :class:`_OpPlan`; per-buffer facts (owner core, region key) are cached the
same way, and the human-readable text of an access is only built when a hazard names it.  Records
that repeat (an on-chip access of the same bytes and window, a sync meaning) are shared objects:
fewer allocations, and fewer objects for Python's cycle collector to traverse afterwards.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from ...errors import KernelUninitError
from ...ir import nodes as ir
from ...ir.types import CrossCoreSyncMode, MemorySpace, SyncCoreType
from ...ops.scalar import _element_index
from ...ops.sync import _sources, flag_mode, unicast_wait, used_cores_of
from ...ops.vf import SPECULATIVE_READS
from ..interp.executor import ExecCtx, Interpreter
from .costs import CostParams, cost_of
from .instr import Access, Hazard, Instr
from .scratch import scratch_operands

SPACE_LABEL = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C"}
_SYNC_ALL_KINDS = {SyncCoreType.AIV_ONLY: ("vector",), SyncCoreType.AIC_ONLY: ("cube",),
                   SyncCoreType.MIX: ("vector", "cube")}

#: (core, stmt) -> the sync meaning of one execution (see :meth:`Recorder._sync_rule`)
SyncRule = Callable[[object, ir.OpStmt], Tuple]


class _OpPlan:
    """What the recorder derives once per statement: name, pipe, loc, sync rule, fixed cost, element access."""

    __slots__ = ("name", "pipe", "loc", "sync", "cost", "element_of", "scratch")

    def __init__(self, name: str, pipe: str, loc, sync: Optional[SyncRule], cost: Optional[int],
                 element_of: Optional[str], scratch: Tuple[str, ...] = ()):
        self.name = name
        self.pipe = pipe
        self.loc = loc
        self.sync = sync                  # None for ops without sync meaning
        self.cost = cost                  # cycles of a sync op (they do not depend on accesses); else None
        self.element_of = element_of      # getval/setval on a tile: the argument naming that tile
        self.scratch = scratch            # the scratch tile operands the op overwrites (scratch.py)


class _Buffer:
    """Per on-chip buffer: owner core, region key, bytes written so far and ranges known fully written."""

    __slots__ = ("ci", "space", "region", "written", "full", "accesses", "last_write")

    def __init__(self, ci: int, space: MemorySpace, label: str, size: int):
        self.ci = ci
        self.space = space
        # the label rides in the region key so that Access.text can name the memory lazily
        self.region = ("L", ci, space.name, f"{SPACE_LABEL.get(space.name, space.name)} of {label}")
        self.written = np.zeros(size, dtype=bool)
        #: contiguous [lo, hi) ranges already known to be fully written (until a discard)
        self.full: Set[Tuple[int, int]] = set()
        #: (lo, hi, write, rows, cols, tile name, dtype) -> the shared Access record
        self.accesses: Dict[Tuple, Access] = {}
        #: the Acc only: the bytes of the latest write, ``(lo, hi, element starts or None if contiguous)``
        self.last_write: Optional[Tuple[int, int, Optional[np.ndarray]]] = None


class Recorder:
    """Observer of one interpreter run; ``streams[i]`` is core ``i``'s instruction list afterwards."""

    def __init__(self, interp: Interpreter, params: CostParams, strict: bool, hazards: List[Hazard]):
        self.interp = interp
        self.params = params
        self.strict = strict
        self.hazards = hazards
        self.cores = interp.launch.cores
        self.index = {id(c): i for i, c in enumerate(self.cores)}
        self.streams: List[List[Instr]] = [[] for _ in self.cores]
        #: id(core) -> (core index, its stream)
        self._where: Dict[int, Tuple[int, List[Instr]]] = {id(c): (i, self.streams[i]) for i, c in enumerate(self.cores)}
        self.cur: Optional[Instr] = None
        self._pending: Dict[int, Instr] = {}
        self._plans: Dict[ir.OpStmt, _OpPlan] = {}
        self._buffers: Dict[int, _Buffer] = {}
        #: tensor param index -> (region key, array, shape, itemsize, name, dtype name)
        self._gm: Dict[int, Tuple] = {}
        #: tensor param index -> (region key, base address) of the parameters recorded as byte runs of their
        #: memory (see gm_memories); built at the first GM access
        self._memories: Optional[Dict[int, Tuple[Tuple, int]]] = None
        self._sync_all_gen: Dict[Tuple[int, int], int] = {}
        self._meanings: Dict[Tuple, Tuple] = {}
        self._nbytes: Dict[object, int] = {}  # element size by dtype (DataType.nbytes is computed per call)
        self._uninit_seen: set = set()
        self._window: Tuple[int, int] = (0, 0)  # the (rows, cols) window of the access being checked
        self._ssbuf: Dict[int, Tuple[Tuple, np.ndarray]] = {}  # block -> (region key, bytes written)
        self._gm_writes: List[Tuple[Access, np.ndarray, Tuple]] = []
        # per-op access adjustments
        self._element: Optional[Tuple[int, int]] = None  # getval/setval: the one element touched
        self._element_written = False  # ... and whether the op writes it (setval)
        interp.launch.hook = self.on_tile
        interp.observer = self

    # ------------------------------------------------------------------ executor callbacks
    def _plan_of(self, stmt: ir.OpStmt) -> _OpPlan:
        plan = self._plans[stmt] = self._plan(stmt)
        return plan

    def begin_op(self, core, stmt: ir.OpStmt) -> None:
        plan = self._plans.get(stmt) or self._plan_of(stmt)
        ci, stream = self._where[id(core)]
        sync = plan.sync
        ins = Instr(ci, len(stream), plan.name, plan.pipe, plan.loc, None if sync is None else sync(core, stmt))
        self.cur = ins
        self._pending[ci] = ins
        self._element = None
        if plan.element_of is not None:
            self._element_written = stmt.op.param_map[plan.element_of].role != "in"
            ctx = ExecCtx(self.interp, core, stmt)
            view = ctx.tile(stmt.args[plan.element_of])
            self._element = tuple(int(x) for x in _element_index(ctx, view.name, view.shape, stmt.args["index"]))

    def on_noop(self, core, stmt: ir.OpStmt) -> None:
        """An op the interpreter does not run (in-core flag, barrier, mutex; cache hint): it accesses
        nothing, so it is recorded in one call instead of begin_op/end_op (the hot path of auto_mutex
        kernels, whose lock/unlock ops are most of the instructions)."""
        plan = self._plans.get(stmt) or self._plan_of(stmt)
        ci, stream = self._where[id(core)]
        sync = plan.sync
        cost = plan.cost
        ins = Instr(ci, len(stream), plan.name, plan.pipe, plan.loc, None if sync is None else sync(core, stmt),
                    1 if cost is None else cost)
        if cost is None:
            ins.cost = cost_of(self.params, ins)
        stream.append(ins)

    def end_op(self, core, stmt: ir.OpStmt) -> None:
        ci, stream = self._where[id(core)]
        plan = self._plans[stmt]
        if plan.scratch:  # the op overwrites its scratch tiles on the hardware (scratch.py)
            ctx = ExecCtx(self.interp, core, stmt)
            for name in plan.scratch:
                view = ctx.tile(stmt.args[name])
                self.on_tile(view, True, view.valid)
        ins = self._pending.pop(ci)
        if ins.sync is not None and ins.sync[0] == "xwait_any":  # the AIV whose set a UNICAST wait took
            source = self.index[id(self.interp.launch.unicast_source[id(core)])]
            ins.sync = ("xwait", (ins.sync[1] + (source,),))
        if self._gm_writes:
            for acc, arr, index in self._gm_writes:
                acc.digest = hash(arr[index].tobytes())
            self._gm_writes.clear()
        cost = plan.cost
        ins.cost = cost if cost is not None else cost_of(self.params, ins)
        stream.append(ins)
        self.cur = None

    # ------------------------------------------------------------------ per-statement plans
    def _plan(self, stmt: ir.OpStmt) -> _OpPlan:
        name, args = stmt.op.name, stmt.args
        sync = self._sync_rule(stmt)
        cost = None
        if sync is not None and sync != self._phase:  # sync ops cost a fixed time (see costs.cost_of);
            # a phased matmul/store still moves its data at the op's cost
            cost = self.params.sync_all_latency if stmt.op.sync == "grid" else self.params.sync_cost
        element_of = None
        arg = stmt.op.element_of  # getval/setval and the SIMT threads' forms access one element
        if arg:
            element_of = arg if isinstance(args[arg], ir.TileRef) else None
        return _OpPlan(name, stmt.pipe, stmt.loc, sync, cost, element_of, scratch_operands(stmt))

    def _int_of(self, value) -> Callable[[object], int]:
        """``core -> int(value)``: an expression is evaluated on the core, a constant is returned as is."""
        if isinstance(value, ir.Expr):
            evaluate = self.interp.compiled(value)
            return lambda core: int(evaluate(core))
        constant = int(value)
        return lambda core: constant

    def _sync_rule(self, stmt: ir.OpStmt) -> Optional[SyncRule]:
        """How to compute the sync meaning of each execution of ``stmt`` (``None``: not a sync op).

        The meanings: ("set"|"wait", (set_pipe, wait_pipe, event)), ("bar",), ("bar_all",),
        ("lock"|"unlock", id), ("xset"|"xwait", counter keys), ("phase_mm"|"phase_st", tile, final),
        ("sync_all", (core_type, generation), members)."""
        op, a = stmt.op, stmt.args
        name = op.name
        if op.sync == "flag":
            kind = "set" if name == "sync_src" else "wait"
            pipes, event = (a["set_pipe"].value, a["wait_pipe"].value), self._int_of(a["event_id"])
            return lambda core, stmt: self._shared((kind, pipes + (event(core),)))
        if op.sync == "barrier":
            meaning = ("bar_all",) if name == "bar_all" else ("bar",)
            return lambda core, stmt: meaning
        if op.sync == "mutex":
            return self._mutex_rule("lock" if name == "mutex_lock" else "unlock", a["mutex_id"])
        if op.sync == "cross_core":
            return self._cross_core
        if op.phased and a.get("phase") is not None:
            ref = a["dst"] if name.startswith("matmul") else a["src"]
            if ref.space == MemorySpace.Acc:
                return self._phase
        if op.sync == "grid":
            return self._sync_all
        return None

    def _mutex_rule(self, kind: str, mutex_id) -> SyncRule:
        """(kind, id) of a mutex op; auto_mutex's runtime ids are expressions, evaluated per execution."""
        if not isinstance(mutex_id, ir.Expr):
            meaning = (kind, int(mutex_id))
            return lambda core, stmt: meaning
        evaluate = self.interp.compiled(mutex_id)
        by_id: Dict[int, Tuple] = {}

        def meaning_of(core, stmt) -> Tuple:
            mid = int(evaluate(core))
            found = by_id.get(mid)
            if found is None:
                found = by_id[mid] = (kind, mid)
            return found
        return meaning_of

    def _shared(self, meaning: Tuple) -> Tuple:
        """The one shared tuple equal to ``meaning``."""
        return self._meanings.setdefault(meaning, meaning)

    def _cross_core(self, core, stmt: ir.OpStmt) -> Tuple:
        a, ci = stmt.args, self.index[id(core)]
        mode = CrossCoreSyncMode(a["sync_mode"])
        event = int(self._eval(core, a["event_id"]))
        ctx = ExecCtx(self.interp, core, stmt)
        others = [self.index[id(c)] for c in _sources(ctx, mode)]
        family = flag_mode(mode).value
        if stmt.op.name == "set_cross_core":
            return ("xset", tuple((t, family, event, ci) for t in others))
        if unicast_wait(ctx, mode):  # the source is known once the wait is over (end_op)
            return ("xwait_any", (ci, family, event))
        return ("xwait", tuple((ci, family, event, s) for s in others))

    def _phase(self, core, stmt: ir.OpStmt) -> Tuple:
        name, a = stmt.op.name, stmt.args
        base = a["dst"] if name.startswith("matmul") else a["src"]
        while isinstance(base, ir.SubRef):
            base = base.base
        decl = ExecCtx(self.interp, core, stmt).decl_of(base)
        final = int(a["phase"]) == 1  # AccPhase.Final / STPhase.Final
        return ("phase_mm" if name.startswith("matmul") else "phase_st", decl.uid, final)

    def _sync_all(self, core, stmt: ir.OpStmt) -> Tuple:
        ci = self.index[id(core)]
        core_type = SyncCoreType(stmt.args["core_type"])
        gen_key = (ci, core_type.value)
        gen = self._sync_all_gen.get(gen_key, 0)
        self._sync_all_gen[gen_key] = gen + 1
        kinds = _SYNC_ALL_KINDS[core_type]
        members = tuple(i for i, c in enumerate(self.cores) if c.kind in kinds)
        used = used_cores_of(stmt.args)
        if used is not None:  # the interpreter has checked that this core is among them
            members = members[:int(self._eval(core, used))]
        return ("sync_all", (core_type.value, gen), members)

    def _eval(self, core, value):
        return self.interp.eval(value, core) if isinstance(value, ir.Expr) else value

    # ------------------------------------------------------------------ accesses
    def _buffer(self, buf: np.ndarray) -> _Buffer:
        """The bookkeeping of an on-chip buffer (found by identity among the cores' memories)."""
        found = self._buffers.get(id(buf))
        if found is None:
            for i, c in enumerate(self.cores):
                for space, b in c.memory.buffers.items():
                    if b is buf:
                        found = self._buffers[id(buf)] = _Buffer(i, space, c.label, buf.size)
        return found

    def label(self, ci: int) -> str:
        return self.cores[ci].label

    def on_tile(self, view, write: bool, window: Tuple[int, int]) -> None:
        """TileView hook: one read or write of ``window`` (rows, cols) of ``view``."""
        ins = self.cur
        r, c = window
        if ins is None or r <= 0 or c <= 0:
            return
        self._window = window
        mem = self._buffers.get(id(view.buf)) or self._buffer(view.buf)
        es = self._nbytes.get(view.dtype) or self._nbytes.setdefault(view.dtype, view.dtype.nbytes)
        offs = view.offsets
        if self._element is not None:
            if not write and self._element_written:  # setval: the element is written, not read
                return
            er, ec = self._element
            lo = view.addr + offs.item(er, ec) * es
            hi, r, c = lo + es, 1, 1
        else:
            lo = view.addr + offs.item(0, 0) * es
            hi = view.addr + (offs.item(r - 1, c - 1) + 1) * es
        nbytes = r * c * es
        starts = None
        if write and mem.space.name == "Acc":  # whose alignment padding a move out of the Acc may read
            mem.last_write = (lo, hi, None if hi - lo == nbytes else view.addr + offs[:r, :c].ravel() * es)
        if hi - lo == nbytes:
            if (lo, hi) not in mem.full:
                self._contiguous(mem, ins, view, write, lo, hi)
        else:
            starts = view.addr + offs[:r, :c].ravel() * es
            self._scattered(mem, ins, view, write, lo, hi, starts)
        key = (lo, hi, write, r, c, view.name, view.dtype)
        acc = mem.accesses.get(key)
        if acc is None:
            runs = None if starts is None else _byte_runs(starts, es)
            if runs is not None:
                lo, hi = runs[0][0], runs[-1][1]
            acc = mem.accesses[key] = Access(mem.region, (lo,), (hi,), write, False, view.name, nbytes, r, c,
                                             mem.space.name, view.dtype.name, False)
            acc.runs = runs
        _add_access(ins, acc)

    def _contiguous(self, mem: _Buffer, ins: Instr, view, write: bool, lo: int, hi: int) -> None:
        """Mark or check bytes [lo, hi) (uninitialised-read check) of a range not yet known to be written."""
        if write:
            mem.written[lo:hi] = True
        elif not mem.written[lo:hi].all():
            self._uninit(ins, view, mem, lo, hi)
            return
        mem.full.add((lo, hi))

    def _scattered(self, mem: _Buffer, ins: Instr, view, write: bool, lo: int, hi: int, starts: np.ndarray) -> None:
        """As :meth:`_contiguous` for a window whose elements start at byte offsets ``starts``."""
        if write:
            mem.written[(starts[:, None] + np.arange(view.dtype.nbytes)).ravel()] = True
        elif not mem.written[starts].all():
            self._uninit(ins, view, mem, lo, hi)

    def _uninit(self, ins: Instr, view, mem: _Buffer, lo: int, hi: int) -> None:
        if ins.op in SPECULATIVE_READS:  # a register load reads whole registers; masks decide what counts
            return
        if ins.op == "move" and mem.space.name == "Acc" and _acc_padding_only(view, mem, self._window):
            return
        key = (ins.loc, view.name)
        if key in self._uninit_seen:
            return
        self._uninit_seen.add(key)
        message = (f"pl.{ins.op} on {self.label(mem.ci)} reads tile {view.name} "
                   f"({SPACE_LABEL.get(mem.space.name, mem.space.name)} bytes [{lo}, {hi})), but some of these "
                   f"bytes were never written in this launch (load or compute into the tile first)\n"
                   f"  read at {ins.where()}")
        hazard = Hazard("uninit", message, [ins.loc] if ins.loc else [])
        if self.strict:
            raise KernelUninitError(message, kernel=self.interp.kernel.name)
        self.hazards.append(hazard)

    def on_discard(self, core, view) -> None:
        """An internal ``discard``: the tile's bytes count as never written again."""
        mem = self._buffers.get(id(view.buf)) or self._buffer(view.buf)
        lo, hi = view.byte_range(*view.shape)
        mem.written[lo:hi] = False
        mem.full = {(a, b) for a, b in mem.full if b <= lo or a >= hi}
        mem.last_write = None

    def on_ssbuf(self, core, lo: int, hi: int, write: bool) -> None:
        """SSBUF access hook (``ExecCtx.note_ssbuf``): bytes [lo, hi) of the block's shared scalar buffer, one
        memory region per block that its cores share; a read of bytes never stored is an uninitialised read."""
        ins = self.cur
        if ins is None:
            return
        found = self._ssbuf.get(core.block)
        if found is None:
            owner = self.index[id(self.interp.launch.cores_of_block(core.block)[0])]
            found = self._ssbuf[core.block] = (("L", owner, "SSBUF", f"SSBUF of block {core.block}"),
                                               np.zeros(self.interp.launch.ssbuf[core.block].size, dtype=bool))
        region, written = found
        if write:
            written[lo:hi] = True
        elif not written[lo:hi].all():
            self._uninit_bytes(ins, f"SSBUF bytes [{lo}, {hi}) of block {core.block}", "store them with "
                               "pl.ssbuf_store (and synchronise with set_cross_core / wait_cross_core) first")
        _add_access(ins, Access(region, (lo,), (hi,), write, False, "ssbuf", hi - lo, 1, hi - lo, "SSBUF", "UINT8",
                                False))

    def _uninit_bytes(self, ins: Instr, what: str, advice: str) -> None:
        key = (ins.loc, what)
        if key in self._uninit_seen:
            return
        self._uninit_seen.add(key)
        message = (f"pl.ssbuf_load on {self.label(ins.core)} reads {what}, but some of these bytes were never written "
                   f"in this launch ({advice})\n  read at {ins.where()}")
        if self.strict:
            raise KernelUninitError(message, kernel=self.interp.kernel.name)
        self.hazards.append(Hazard("uninit", message, [ins.loc] if ins.loc else []))

    def on_gm(self, core, param: ir.TensorParam, index: Tuple, write: bool, atomic: bool,
              view: Optional[np.ndarray] = None) -> None:
        """GM access hook (``ExecCtx.note_gm``): ``index`` is a numpy index of ints and slices into
        ``param``'s array (``view``, the array a ``pl.make_tensor`` view denotes now, for views)."""
        ins = self.cur
        if ins is None:
            return
        if self._memories is None:
            self._memories = gm_memories(self.interp.kernel, self.interp.launch.tensors)
        if view is not None or param.index in self._memories:
            self._on_bytes(ins, param, view if view is not None else self.interp.launch.tensors[param.index],
                           index, write, atomic)
            return
        found = self._gm.get(param.index)
        if found is None:
            arr = self.interp.launch.tensors[param.index]
            region = ("G", arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.itemsize)
            found = self._gm[param.index] = (region, arr, arr.shape, arr.itemsize, param.name, param.dtype.name)
        region, arr, shape, itemsize, name, dtype = found
        lo, hi = [], []
        elems = 1
        for ix, size in zip(index, shape):
            if type(ix) is slice:
                start, stop = ix.start, ix.stop
                if ix.step is not None or start is None or stop is None or start < 0 or stop > size:
                    start, stop, _ = ix.indices(size)
            else:
                start = int(ix)
                stop = start + 1
            lo.append(start)
            hi.append(stop)
            elems *= stop - start
        rows = hi[-2] - lo[-2] if len(lo) >= 2 else 1
        cols = hi[-1] - lo[-1] if lo else 1
        acc = Access(region, tuple(lo), tuple(hi), write, atomic, name, elems * itemsize, rows, cols, "GM", dtype, True)
        if ins.accesses:
            ins.accesses.append(acc)
        else:
            ins.accesses = [acc]
        if write and not atomic:
            self._gm_writes.append((acc, arr, index))

    def _on_bytes(self, ins, view: ir.TensorParam, arr: np.ndarray, index: Tuple, write: bool, atomic: bool) -> None:
        """An access through a view, or to an argument sharing memory with another, recorded as the byte runs
        it touches in the memory they share (one region per memory, :func:`gm_memories`), so that accesses
        through different views of one pointer, or through aliased arguments, meet."""
        region, base = self._memories[view.index]
        window = arr[tuple(ix if type(ix) is slice else slice(int(ix), int(ix) + 1) for ix in index)]
        start = window.__array_interface__["data"][0] - base
        starts = np.full((), start, np.int64)
        for n, st in zip(window.shape, window.strides):
            starts = np.add.outer(starts, np.arange(n, dtype=np.int64) * st)
        runs = _byte_runs(starts.reshape(-1), window.itemsize)
        rows = window.shape[-2] if window.ndim >= 2 else 1
        cols = window.shape[-1] if window.ndim else 1
        acc = Access(region, (runs[0][0],), (runs[-1][1],), write, atomic, view.name, window.nbytes, rows, cols,
                     "GM", view.dtype.name, True)
        if len(runs) > 1:
            acc.runs = runs
        _add_access(ins, acc)
        if write and not atomic:
            self._gm_writes.append((acc, arr, index))


def _extent(arr: np.ndarray) -> Tuple[int, int]:
    """[first, last) address of the bytes ``arr`` spans."""
    lo = hi = arr.__array_interface__["data"][0]
    if arr.size == 0:
        return lo, lo
    for n, st in zip(arr.shape, arr.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + arr.itemsize


def gm_memories(kernel: ir.KernelIR, tensors: Dict[int, np.ndarray]) -> Dict[int, Tuple[Tuple, int]]:
    """The tensor parameters whose GM accesses are recorded as byte runs of a shared memory region:
    arguments whose bytes overlap another argument's (views of one torch/numpy buffer) and roots of
    ``pl.make_tensor`` views.  Maps each to (region key, base address) of the span of its overlap group;
    every other argument keeps element boxes of its own array (cheaper, exact for one array)."""
    viewed = {a.index for s in ir.walk(kernel.body) if isinstance(s, ir.OpStmt)
              for a in _flat(s.args.values()) if isinstance(a, ir.TensorView)}
    spans = sorted((_extent(arr) + (i,) for i, arr in tensors.items()), key=lambda t: t[0])
    groups: List[List] = []
    for lo, hi, i in spans:
        if groups and lo < groups[-1][1] and hi > groups[-1][0]:
            groups[-1][1] = max(groups[-1][1], hi)
            groups[-1][2].append(i)
        else:
            groups.append([lo, hi, [i]])
    out: Dict[int, Tuple[Tuple, int]] = {}
    for lo, hi, members in groups:
        if len(members) > 1 or any(i in viewed for i in members):
            region = ("G", lo, (hi - lo,), (1,), 1)
            for i in members:
                out[i] = (region, lo)
    return out


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _byte_runs(starts: np.ndarray, es: int) -> Tuple[Tuple[int, int], ...]:
    """The sorted, disjoint [lo, hi) byte runs covered by elements of ``es`` bytes starting at ``starts``."""
    starts = np.unique(starts)
    breaks = np.flatnonzero(np.diff(starts) != es) + 1
    firsts = np.concatenate(([0], breaks))
    lasts = np.concatenate((breaks - 1, [starts.size - 1]))
    return tuple((int(starts[f]), int(starts[l]) + es) for f, l in zip(firsts, lasts))


def _add_access(ins: Instr, acc: Access) -> None:
    if ins.accesses:
        ins.accesses.append(acc)
    else:
        ins.accesses = [acc]


__all__ = ["Recorder", "SPACE_LABEL"]


#: L0C alignment a move out of the Acc may read past what the matmul wrote: rows to the 16-row fractal,
#: columns to 32 (move.md: the framework aligns an Acc's valid columns up to 32 for a DualModeSplitN move)
ACC_ROW_ALIGN, ACC_COL_ALIGN = 16, 32


def _acc_padding_only(view, mem: "_Buffer", window: Tuple[int, int]) -> bool:
    """Whether a move out of the Acc (L0C) reads never-written bytes only in the alignment padding of what was
    written: the written elements of the window (all bytes written so far, or else those of the latest write
    into the Acc, since a reused slot may keep bytes of an earlier matmul of another shape beside them) form its
    top-left [wr, wc] rectangle and the window reaches at most to the next multiple of 16 rows and 32 columns
    beyond it.  The official framework reads that padding by design (a dual-split Acc -> Vec move of an aligned
    valid shape); it is not an uninitialised read.  Anything else (nothing written, holes inside the written
    part, a window reaching further) still is."""
    r, c = window
    es = view.dtype.nbytes
    starts = view.addr + view.offsets[:r, :c] * es
    if _padding_of(mem.written[starts], r, c):
        return True
    if mem.last_write is None:
        return False
    lo, hi, elems = mem.last_write
    latest = (starts >= lo) & (starts < hi) if elems is None else np.isin(starts, elems)
    return _padding_of(latest, r, c)


def _padding_of(done: np.ndarray, r: int, c: int) -> bool:
    """Whether the True elements of ``done`` (an [r, c] window) are its top-left rectangle, aligned to cover it."""
    rows, cols = np.flatnonzero(done.any(axis=1)), np.flatnonzero(done.any(axis=0))
    if rows.size == 0:
        return False
    wr, wc = int(rows[-1]) + 1, int(cols[-1]) + 1
    if not done[:wr, :wc].all():
        return False
    return r <= -(-wr // ACC_ROW_ALIGN) * ACC_ROW_ALIGN and c <= -(-wc // ACC_COL_ALIGN) * ACC_COL_ALIGN
