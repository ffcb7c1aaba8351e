"""The instruction streams of a fast-path launch, built as :class:`Instr` records only when asked for.

The report's summary needs only the per-core totals the replay returns; its instruction list, trace,
timeline, profiles and advice need the records, which are then built from the replay's columns: the
same fields, accesses and sync meanings the recorder and replay.py give them on the interpreter engine.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ....ir import nodes as ir
from ..instr import Access, Instr
from ..recorder import SPACE_LABEL
from .plan import KernelPlan, W

ISSUE, START, END, AFTER, TICKET, VALUES = range(6)


class LazyStreams(Sequence):
    """``streams[ci]``: core ``ci``'s instructions, built from the replay's output on first access."""

    def __init__(self, plan: KernelPlan, kernel: ir.KernelIR, out: np.ndarray, core_start: Sequence[int],
                 labels: Sequence[str], tensors: Dict[int, np.ndarray], costs: Optional[np.ndarray] = None):
        self._plan, self._kernel, self._out = plan, kernel, out
        self._core_start = list(core_start)
        self._labels = list(labels)
        self._tensors = tensors
        self._costs = costs  # per record, where statements have runtime windows (else the plan's)
        self.counts = [self._core_start[i + 1] - self._core_start[i] for i in range(len(labels))]
        self._lists: Optional[List[List[Instr]]] = None

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, ci):
        return self.lists()[ci]

    def __iter__(self):
        return iter(self.lists())

    def lists(self) -> List[List[Instr]]:
        if self._lists is None:
            self._lists = self._build()
            self._out = self._costs = None
        return self._lists

    def _build(self) -> List[List[Instr]]:
        plan, out = self._plan, self._out
        gm: Dict[int, Tuple] = {}
        for p in plan.params:
            arr = self._tensors[p.index]
            gm[p.index] = (("G", arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.itemsize),
                           arr.itemsize, p.name, p.dtype.name)
        tile_accs: Dict[Tuple[int, int, bool], Access] = {}
        syncs: Dict[Tuple, Tuple] = {}
        flat: List[Instr] = []
        rows = out.tolist()
        costs = self._costs.tolist() if self._costs is not None else None
        streams: List[List[Instr]] = []
        for ci, label in enumerate(self._labels):
            regions: Dict[str, Tuple] = {}
            stream: List[Instr] = []
            for seq, k in enumerate(range(self._core_start[ci], self._core_start[ci + 1])):
                row = rows[k]
                vals = row[VALUES + 1:VALUES + W]
                p = plan.stmts[row[VALUES]]
                sync = p.sync
                if sync is not None and p.sync_value >= 0:
                    value = vals[p.sync_value]
                    if sync[0] == "xset":
                        key = ("xset", tuple((t, sync[1], value, ci) for t in plan.peers(sync[1], ci)))
                    elif sync[0] == "xwait":
                        key = ("xwait", tuple((ci, sync[1], value, t) for t in plan.peers(sync[1], ci)))
                    elif isinstance(sync[1], tuple):
                        key = (sync[0], sync[1][:2] + (value,))
                    else:
                        key = (sync[0], value)
                    sync = syncs.setdefault(key, key)
                ins = Instr(ci, seq, p.stmt.op.name, p.pipe, p.stmt.loc, sync, p.cost if costs is None else costs[k])
                accs = []
                for t in p.accesses:
                    r, c = t.dims(vals)
                    if r <= 0 or c <= 0:  # an empty window: no access
                        continue
                    if t.gm:
                        gregion, itemsize, name, dtype = gm[t.param.index]
                        nd = t.param.ndim
                        lo = tuple(vals[t.value:t.value + nd])
                        ext = [1] * nd
                        ext[-1] = c
                        if nd >= 2:
                            ext[-2] = r
                        hi = tuple(a + e for a, e in zip(lo, ext))
                        accs.append(Access(gregion, lo, hi, t.write, False, name, r * c * itemsize,
                                           r if nd >= 2 else 1, c, "GM", dtype, True))
                    else:
                        d = vals[t.value]
                        key = (ci, d, t.write, r, c)
                        acc = tile_accs.get(key)
                        if acc is None:
                            acc = tile_accs[key] = self._tile_access(ci, label, regions, d, t.write, r, c,
                                                                     t.rows < 0 or t.cols < 0)
                        accs.append(acc)
                if accs:
                    ins.accesses = accs
                ins.issue, ins.start, ins.end, ins.ticket = row[ISSUE], row[START], row[END], row[TICKET]
                stream.append(ins)
                flat.append(ins)
            streams.append(stream)
        for k, row in enumerate(rows):
            if row[AFTER] >= 0:
                flat[k].after = flat[row[AFTER]]
        return streams

    def _tile_access(self, ci: int, label: str, regions: Dict[str, Tuple], d: int, write: bool, rows: int, cols: int,
                     window: bool) -> Access:
        """The recorder's access of declaration ``d`` over rows x cols: its whole bytes, or (a valid window
        of an ND tile) the window's byte runs, one per row unless the rows are whole."""
        decl = self._kernel.tiles[d]
        space, lo, hi = self._plan.decl_bytes[d]
        region = regions.get(space)
        if region is None:
            region = regions[space] = ("L", ci, space, f"{SPACE_LABEL[space]} of {label}")
        es = decl.dtype.nbytes
        runs = None
        if window:
            pitch = decl.shape[1] * es
            if rows == 1 or cols == decl.shape[1]:
                hi = lo + ((rows - 1) * decl.shape[1] + cols) * es
            else:
                runs = tuple((lo + i * pitch, lo + i * pitch + cols * es) for i in range(rows))
                hi = runs[-1][1]
        acc = Access(region, (lo,), (hi,), write, False, decl.name, rows * cols * es, rows, cols, space,
                     decl.dtype.name, False)
        acc.runs = runs
        return acc
