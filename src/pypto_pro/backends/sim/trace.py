"""Chrome-trace (Perfetto) events of a simulated launch: slices with what each instruction did, and flow
arrows for the synchronisation edges between them."""
from __future__ import annotations

from typing import Dict, List

from .instr import PIPES, Instr

#: what a flow arrow is called, by the waiting instruction's sync kind
_FLOW = {"wait": "flag", "lock": "mutex", "xwait": "cross-core event", "phase_mm": "Acc phase",
         "phase_st": "Acc phase"}


def _tid(ins: Instr) -> int:
    return PIPES.index("S" if ins.pipe == "ALL" else ins.pipe)


def _args(ins: Instr) -> Dict:
    """The slice's args: op, pipe, line and source, tiles/tensors touched, bytes, timing in cycles."""
    args: Dict = {"op": f"pl.{ins.op}", "pipe": ins.pipe, "cycles": ins.end - ins.start, "start_cycle": ins.start}
    if ins.loc is not None:
        args["line"] = f"{ins.loc.filename}:{ins.loc.lineno}"
        args["source"] = ins.loc.source_line.strip()
    if ins.accesses:
        args["tiles"] = sorted({f"{'write' if a.write else 'read'} {a.what} ({'GM' if a.gm else a.space})"
                                for a in ins.accesses})
        args["bytes"] = sum(a.nbytes for a in ins.accesses)
        args["bytes_written"] = sum(a.nbytes for a in ins.accesses if a.write)
    if ins.sync is not None:
        args["sync"] = repr(ins.sync[:2])
    return args


def _flow_name(ins: Instr) -> str:
    sync = ins.sync
    kind = _FLOW.get(sync[0], sync[0])
    if sync[0] == "wait":
        set_pipe, wait_pipe, event = sync[1]
        return f"flag {set_pipe}->{wait_pipe} event {event}"
    if sync[0] == "lock":
        return f"mutex {sync[1]}"
    if sync[0] == "xwait":
        return f"cross-core event {sync[1][0][2]}"
    return kind


def trace_events(report) -> List[Dict]:
    """The ``traceEvents`` list of :meth:`SimReport.save_trace`."""
    to_us = report.params.cycles_to_us
    events: List[Dict] = []
    for ci, label in enumerate(report.labels):
        events.append({"ph": "M", "name": "process_name", "pid": ci, "args": {"name": label}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": ci, "args": {"sort_index": ci}})
        for ti, p in enumerate(PIPES):
            events.append({"ph": "M", "name": "thread_name", "pid": ci, "tid": ti, "args": {"name": p}})
    flow = 0
    for ins in report.instructions:
        tid = _tid(ins)
        events.append({"ph": "X", "name": ins.op, "cat": ins.pipe, "pid": ins.core, "tid": tid,
                       "ts": to_us(ins.start), "dur": to_us(ins.end - ins.start), "args": _args(ins)})
        src = ins.after
        if src is None:
            continue
        flow += 1
        name = _flow_name(ins)
        # the start binds to the releasing slice (a point inside it), the end to the waiting one
        events.append({"ph": "s", "id": flow, "name": name, "cat": "sync", "pid": src.core, "tid": _tid(src),
                       "ts": to_us((src.start + src.end) / 2)})
        events.append({"ph": "f", "bp": "e", "id": flow, "name": name, "cat": "sync", "pid": ins.core,
                       "tid": tid, "ts": to_us(ins.start)})
    return events


__all__ = ["trace_events"]
