"""``PYPTO_SIM_FAST=check``: every launch the fast path covers runs on both paths, which must agree.

A debugging and testing aid (slow: it compiles every covered kernel and runs the engine as well): the
launch runs on the fast path, the arguments are put back as they were, and the launch runs again on the
interpreter engine.  A launch the fast path finds clean must be clean on the engine, with the engine's
values to the bit and the report the engine's field by field
(every instruction's op, pipe, line, sync meaning, cost, times, ticket, the release it waited for and
its accesses; totals; the summary text).  A difference raises AssertionError naming the first one; the
engine's report is returned.  Running a test suite with it set checks the fast path on every kernel the
suite simulates.
"""
from __future__ import annotations

from typing import Callable, Collection, Dict

import numpy as np

from ....log import logger
from ..report import SimReport


def _instr(ins):
    accs = [(a.region, a.lo, a.hi, a.write, a.atomic, a.what, a.nbytes, a.rows, a.cols, a.space, a.dtype, a.gm,
             a.runs) for a in (ins.accesses or ())]
    after = None if ins.after is None else (ins.after.core, ins.after.seq)
    return (ins.core, ins.seq, ins.op, ins.pipe, ins.loc, ins.sync, ins.cost, ins.issue, ins.start, ins.end,
            ins.ticket, after, accs)


def compare_reports(fast: SimReport, slow: SimReport) -> None:
    """Raise AssertionError at the first field where the two reports differ."""
    if fast.total_cycles != slow.total_cycles:
        raise AssertionError(f"total cycles {fast.total_cycles} (fast path) != {slow.total_cycles} (engine)")
    if fast.per_core != slow.per_core:
        raise AssertionError(f"per-core summaries differ:\n  fast {fast.per_core}\n  engine {slow.per_core}")
    a, b = fast.instructions, slow.instructions
    if len(a) != len(b):
        raise AssertionError(f"{len(a)} instructions (fast path) != {len(b)} (engine)")
    for x, y in zip(a, b):
        fx, fy = _instr(x), _instr(y)
        if fx != fy:
            raise AssertionError(f"instruction differs:\n  fast   {fx}\n  engine {fy}")
    if str(fast) != str(slow):
        raise AssertionError("the report texts differ")


def run_checked(fast_run: Callable, engine_run: Callable[[], SimReport], name: str,
                tensors: Dict[int, np.ndarray], hazard_reasons: Collection[str]) -> SimReport:
    """``fast_run()`` -> a report, or the reason (a string) why the engine must run the launch, one of
    ``hazard_reasons`` when the fast path found a hazard; ``engine_run()`` -> the engine's report (it raises
    in strict mode)."""
    before = {i: a.copy() for i, a in tensors.items()}
    fast = fast_run()
    if isinstance(fast, str):
        report = engine_run()  # (raises the hazard in strict mode)
        if fast in hazard_reasons and not report.hazards:  # allowed: it only costs time (e.g. two cores
            # writing the same bytes to GM, which the engine, seeing the values, finds benign)
            logger.info("sim kernel %s: the fast path found %s, the engine nothing", name, fast)
        return report
    values = {i: a.copy() for i, a in tensors.items()}
    for i, a in tensors.items():
        a[...] = before[i]
    try:
        slow = engine_run()
    except Exception as e:
        raise AssertionError(f"sim kernel {name}: the fast path found the launch clean, the engine raised "
                             f"{type(e).__name__}: {e}") from e
    for i, a in tensors.items():
        if a.tobytes() != values[i].tobytes():
            raise AssertionError(f"sim kernel {name}: argument {i} differs between the fast path and the engine")
    compare_reports(fast, slow)
    return slow
