"""Records, while the interpreter runs, each core's instruction stream with its memory accesses.

The interpreter defines the values; the recorder observes it (``Interpreter.observer`` and the
TileView access ``hook``) and builds, per core and in program order, :class:`Instr` records with
the byte ranges each op reads and writes (on-chip memory of a given core, or a GM tensor box) and
the sync semantics of sync ops.  It also checks reads of on-chip bytes never written in this launch,
which depend only on program order.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...errors import KernelUninitError
from ...ir import nodes as ir
from ...ir.types import CrossCoreSyncMode, MemorySpace, SyncCoreType
from ...ops.scalar import _element_index
from ...ops.sync import _sources
from ..interp.executor import ExecCtx, Interpreter
from .costs import CostParams, cost_of
from .instr import Access, Hazard, Instr

SPACE_LABEL = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C"}
_SYNC_ALL_KINDS = {SyncCoreType.AIV_ONLY: ("vector",), SyncCoreType.AIC_ONLY: ("cube",),
                   SyncCoreType.MIX: ("vector", "cube")}


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
        self.cur: Optional[Instr] = None
        self._pending: Dict[int, Instr] = {}
        self._owner: Dict[int, Tuple[int, MemorySpace]] = {}
        self._written: Dict[int, np.ndarray] = {}
        self._gm: Dict[int, Tuple] = {}
        self._sync_all_gen: Dict[Tuple[int, int], int] = {}
        self._uninit_seen: set = set()
        self._gm_writes: List[Tuple[Access, np.ndarray, Tuple]] = []
        # per-op access adjustments
        self._element: Optional[Tuple[int, int]] = None  # getval/setval: the one element touched
        self._skip_read_space: Optional[MemorySpace] = None  # read-modify-write artefacts of insert
        interp.launch.hook = self.on_tile
        interp.observer = self

    # ------------------------------------------------------------------ executor callbacks
    def begin_op(self, core, stmt: ir.OpStmt) -> None:
        ci = self.index[id(core)]
        ins = Instr(ci, len(self.streams[ci]), stmt.op.name, stmt.pipe, stmt.loc)
        ins.sync = self._sync(core, ci, stmt)
        self.cur = ins
        self._pending[ci] = ins
        self._element = None
        self._skip_read_space = None
        name = stmt.op.name
        if name in ("getval", "setval"):
            ref = stmt.args["src" if name == "getval" else "dst"]
            if isinstance(ref, ir.TileRef):
                ctx = ExecCtx(self.interp, core, stmt)
                view = ctx.tile(ref)
                self._element = tuple(int(x) for x in _element_index(ctx, view.name, view.shape,
                                                                      stmt.args["index"]))
        elif name in ("insert", "move") and stmt.args["dst"].space == MemorySpace.Mat:
            self._skip_read_space = MemorySpace.Mat

    def end_op(self, core, stmt: ir.OpStmt) -> None:
        ci = self.index[id(core)]
        ins = self._pending.pop(ci)
        for acc, arr, index in self._gm_writes:
            acc.digest = hash(np.ascontiguousarray(arr[index]).tobytes())
        self._gm_writes.clear()
        ins.cost = cost_of(self.params, ins)
        self.streams[ci].append(ins)
        self.cur = None

    # ------------------------------------------------------------------ sync semantics
    def _eval(self, core, value):
        return self.interp.eval(value, core) if isinstance(value, ir.Expr) else value

    def _sync(self, core, ci: int, stmt: ir.OpStmt) -> Optional[Tuple]:
        name, a = stmt.op.name, stmt.args
        if name in ("sync_src", "sync_dst"):
            key = (a["set_pipe"].value, a["wait_pipe"].value, int(self._eval(core, a["event_id"])))
            return ("set" if name == "sync_src" else "wait", key)
        if name == "bar_all":
            return ("bar_all",)
        if name.startswith("bar_"):
            return ("bar",)
        if name in ("mutex_lock", "mutex_unlock"):
            mid = int(self._eval(core, a["mutex_id"]))
            return ("lock" if name == "mutex_lock" else "unlock", mid)
        if name in ("set_cross_core", "wait_cross_core"):
            mode = CrossCoreSyncMode(a["sync_mode"])
            event = int(self._eval(core, a["event_id"]))
            others = [self.index[id(c)] for c in _sources(ExecCtx(self.interp, core, stmt), mode)]
            if name == "set_cross_core":
                return ("xset", tuple((t, mode.value, event, ci) for t in others))
            return ("xwait", tuple((ci, mode.value, event, s) for s in others))
        if name in ("matmul", "matmul_acc", "store", "store_tile") and a.get("phase") is not None:
            ref = a["dst"] if name.startswith("matmul") else a["src"]
            if ref.space == MemorySpace.Acc:
                base = ref
                while isinstance(base, ir.SubRef):
                    base = base.base
                decl = ExecCtx(self.interp, core, stmt).decl_of(base)
                final = int(a["phase"]) == 1  # AccPhase.Final / STPhase.Final
                return ("phase_mm" if name.startswith("matmul") else "phase_st", decl.uid, final)
        if name == "sync_all":
            core_type = SyncCoreType(a["core_type"])
            gen_key = (ci, core_type.value)
            gen = self._sync_all_gen.get(gen_key, 0)
            self._sync_all_gen[gen_key] = gen + 1
            kinds = _SYNC_ALL_KINDS[core_type]
            members = tuple(i for i, c in enumerate(self.cores) if c.kind in kinds)
            return ("sync_all", (core_type.value, gen), members)
        return None

    # ------------------------------------------------------------------ accesses
    def _owner_of(self, buf: np.ndarray) -> Tuple[int, MemorySpace]:
        found = self._owner.get(id(buf))
        if found is None:
            for i, c in enumerate(self.cores):
                for space, b in c.memory.buffers.items():
                    self._owner[id(b)] = (i, space)
            found = self._owner[id(buf)]
        return found

    def label(self, ci: int) -> str:
        return self.cores[ci].label

    def on_tile(self, view, write: bool, window: Tuple[int, int]) -> None:
        """TileView hook: one read or write of ``window`` (rows, cols) of ``view``."""
        ins = self.cur
        r, c = window
        if ins is None or r <= 0 or c <= 0:
            return
        if not write and self._skip_read_space is not None and view.space == self._skip_read_space:
            return
        ci, space = self._owner_of(view.buf)
        es = view.dtype.nbytes
        offs = view.offsets
        if self._element is not None:
            if not write and ins.op == "setval":
                return
            er, ec = self._element
            lo = view.addr + int(offs[er, ec]) * es
            hi, r, c = lo + es, 1, 1
        else:
            lo = view.addr + int(offs[0, 0]) * es
            hi = view.addr + (int(offs[r - 1, c - 1]) + 1) * es
        nbytes = r * c * es
        contiguous = hi - lo == nbytes
        written = self._written.get(id(view.buf))
        if written is None:
            written = self._written[id(view.buf)] = np.zeros(view.buf.size, dtype=bool)
        if write:
            if contiguous:
                written[lo:hi] = True
            else:
                starts = view.addr + offs[:r, :c].ravel() * es
                written[(starts[:, None] + np.arange(es)).ravel()] = True
        else:
            ok = written[lo:hi].all() if contiguous else written[view.addr + offs[:r, :c].ravel() * es].all()
            if not ok:
                self._uninit(ins, view, ci, space, lo, hi)
        text = f"tile {view.name} ({SPACE_LABEL.get(space.name, space.name)} of {self.label(ci)}, bytes [{lo}, {hi}))"
        ins.accesses.append(Access(("L", ci, space.name), (lo,), (hi,), write, False, view.name, nbytes, r, c,
                                   space.name, view.dtype.name, False, text))

    def _uninit(self, ins: Instr, view, ci: int, space: MemorySpace, lo: int, hi: int) -> None:
        key = (ins.loc, view.name)
        if key in self._uninit_seen:
            return
        self._uninit_seen.add(key)
        message = (f"pl.{ins.op} on {self.label(ci)} reads tile {view.name} "
                   f"({SPACE_LABEL.get(space.name, space.name)} bytes [{lo}, {hi})), but some of these bytes were "
                   f"never written in this launch (load or compute into the tile first)\n  read at {ins.where()}")
        hazard = Hazard("uninit", message, [ins.loc] if ins.loc else [])
        if self.strict:
            raise KernelUninitError(message, kernel=self.interp.kernel.name)
        self.hazards.append(hazard)

    def on_gm(self, core, param: ir.TensorParam, index: Tuple, write: bool, atomic: bool) -> None:
        """GM access hook (``ExecCtx.note_gm``): ``index`` is a numpy index of ints and slices."""
        ins = self.cur
        if ins is None:
            return
        arr = self.interp.launch.tensors[param.index]
        region = self._gm.get(param.index)
        if region is None:
            region = self._gm[param.index] = (
                "G", arr.__array_interface__["data"][0], tuple(arr.shape), tuple(arr.strides))
        lo, hi = [], []
        for ix, size in zip(index, arr.shape):
            if isinstance(ix, slice):
                start, stop, _ = ix.indices(size)
                lo.append(start)
                hi.append(stop)
            else:
                lo.append(int(ix))
                hi.append(int(ix) + 1)
        extents = [h - l for l, h in zip(lo, hi)]
        elems = int(np.prod(extents)) if extents else 1
        first = sum(l * s for l, s in zip(lo, arr.strides))
        last = sum((h - 1) * s for h, s in zip(hi, arr.strides)) + arr.itemsize
        box = ", ".join(f"{l}:{h}" for l, h in zip(lo, hi))
        text = f"tensor '{param.name}' [{box}] (GM bytes [{first}, {last}) of the tensor)"
        rows = extents[-2] if len(extents) >= 2 else 1
        acc = Access(region, tuple(lo), tuple(hi), write, atomic, param.name, elems * arr.itemsize,
                     rows, extents[-1] if extents else 1, "GM", param.dtype.name, True, text)
        ins.accesses.append(acc)
        if write and not atomic:
            self._gm_writes.append((acc, arr, index))


__all__ = ["Recorder", "SPACE_LABEL"]
