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
                 labels: Sequence[str], tensors: Dict[int, np.ndarray]):
        self._plan, self._kernel, self._out = plan, kernel, out
        self._core_start = list(core_start)
        self._labels = list(labels)
        self._tensors = tensors
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
            self._out = None
        return self._lists

    def _build(self) -> List[List[Instr]]:
        plan, kernel, out = self._plan, self._kernel, self._out
        tiles = kernel.tiles
        gm: Dict[int, Tuple] = {}
        for p in plan.params:
            arr = self._tensors[p.index]
            gm[p.index] = (("G", arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.itemsize),
                           arr.itemsize, p.name, p.dtype.name)
        tile_accs: Dict[Tuple[int, int, bool], Access] = {}
        syncs: Dict[Tuple, Tuple] = {}
        flat: List[Instr] = []
        rows = out.tolist()
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
                ins = Instr(ci, seq, p.stmt.op.name, p.pipe, p.stmt.loc, sync, p.cost)
                accs = []
                for t in p.accesses:
                    if t.gm:
                        gregion, itemsize, name, dtype = gm[t.param.index]
                        nd = t.param.ndim
                        lo = tuple(vals[t.value:t.value + nd])
                        ext = [1] * nd
                        ext[-1] = t.cols
                        if nd >= 2:
                            ext[-2] = t.rows
                        hi = tuple(a + e for a, e in zip(lo, ext))
                        rows_ = t.rows if nd >= 2 else 1
                        accs.append(Access(gregion, lo, hi, t.write, False, name, t.rows * t.cols * itemsize, rows_,
                                           t.cols, "GM", dtype, True))
                    else:
                        d = vals[t.value]
                        key = (ci, d, t.write)
                        acc = tile_accs.get(key)
                        if acc is None:
                            decl = tiles[d]
                            space, lo, hi = plan.decl_bytes[d]
                            region = regions.get(space)
                            if region is None:
                                region = regions[space] = ("L", ci, space, f"{SPACE_LABEL[space]} of {label}")
                            acc = tile_accs[key] = Access(region, (lo,), (hi,), t.write, False, decl.name, hi - lo,
                                                          t.rows, t.cols, space, decl.dtype.name, False)
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
