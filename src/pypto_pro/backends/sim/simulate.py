"""One simulated launch: interpret (values) while recording, replay on the pipe model, report."""
from __future__ import annotations

import contextlib
import gc
import os
import weakref
from typing import Any, Dict, List

import numpy as np

from ...ir.nodes import KernelIR
from ...passes.auto_mutex import insert_auto_mutex
from ..interp.executor import Interpreter
from . import fast
from .advice import TileInfo
from .costs import params_for
from .describe import race_hazard
from .instr import Hazard
from .options import SimOptions
from .recorder import Recorder
from .replay import Replay
from .report import SimReport

_LOCKED: "weakref.WeakKeyDictionary[KernelIR, KernelIR]" = weakref.WeakKeyDictionary()


def with_auto_mutex(kernel: KernelIR) -> KernelIR:
    """The kernel with auto_mutex locks inserted (cached per kernel object)."""
    if not kernel.auto_mutex:
        return kernel
    locked = _LOCKED.get(kernel)
    if locked is None:
        locked = _LOCKED[kernel] = insert_auto_mutex(kernel)
    return locked


@contextlib.contextmanager
def paused_cycle_collection():
    """Pause Python's cyclic garbage collector (restoring its previous state afterwards).

    A launch allocates one long-lived record per instruction and access; the collector would
    re-traverse all of them again and again (on benchmarks/bench_sim.py more than half of the
    interpretation plus recording time) while finding almost no garbage.  Reference counting still
    frees everything acyclic meanwhile; the few cycles (interpreter <-> recorder) wait for the next
    full collection.  Afterwards the surviving records (the report's) are moved straight to the
    oldest generation (``gc.freeze`` then ``gc.unfreeze``, which links them there without a
    traversal) instead of being traversed by the next young-generation collections, each of which
    would find them all alive (~10% of a launch on bench_sim.py).  Skipped when the program uses
    ``gc.freeze`` itself, whose frozen objects must stay frozen."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def resident_blocks(kernel: KernelIR) -> int:
    """How many blocks of ``kernel`` run at once (docs/language.md, docs/contract.md): a vector-only block is one AIV core,
    so ``vector_core_num`` of them fit; a cube or mix block needs an AI core (``core_num``)."""
    arch = kernel.arch
    return arch.vector_core_num if kernel.kind == "vector" else arch.core_num


def tile_infos(kernel: KernelIR) -> Dict[str, TileInfo]:
    """Tile name -> its group, depth and declaration line (what the report's advice names)."""
    def line(loc) -> str:
        return f"{os.path.basename(loc.filename)}:{loc.lineno}" if loc is not None else "?"

    infos = {t.name: TileInfo(None, 1, line(t.loc)) for t in kernel.tiles}
    for g in kernel.groups:
        for slot in g.slots:
            infos[slot.name] = TileInfo(g.name, g.depth, line(g.loc or slot.loc))
    return infos


def _priority(hazard: Hazard) -> int:
    """Root causes first: races between pipes or cores, then hangs, then same-pipe reuse."""
    if hazard.kind == "race":
        old, new = hazard.details
        return 0 if (old.core != new.core or old.pipe != new.pipe) else 2
    return 1


def _first(hazards: List[Hazard]) -> Hazard:
    best = min(hazards, key=_priority)
    if len(hazards) > 1:
        more = len(hazards) - 1
        best = Hazard(best.kind, f"{best.message}\n  ({more} more hazard{'s' if more > 1 else ''}; "
                      f"sim_options={{'strict': False}} lists them all in kernel.last_report.hazards)",
                      best.locs, best.details)
    return best


def simulate(kernel: KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int,
             options: SimOptions) -> SimReport:
    """Run one launch under the simulator; raises the first hazard in strict mode.

    Kernels the compiled fast path covers run there (:mod:`.fast`); any hazard, and every other kernel,
    runs on the interpreter engine below."""
    with paused_cycle_collection():
        locked = with_auto_mutex(kernel)
        use_fast = fast.enabled(options)
        if use_fast is None:
            use_fast = fast.worth_compiling(locked, tensors)
        if use_fast == "check":
            from .fast.check import run_checked

            def fast_run():
                done = fast.run_fast(kernel, locked, tensors, scalars, block_dim, resident_blocks(locked))
                return done if isinstance(done, str) else _fast_report(locked, block_dim, done)
            return run_checked(fast_run, lambda: _simulate(locked, tensors, scalars, block_dim, options),
                               locked.name, tensors, fast.HAZARD_REASONS)
        if use_fast:
            done = fast.run_fast(kernel, locked, tensors, scalars, block_dim, resident_blocks(locked))
            if not isinstance(done, str):
                return _fast_report(locked, block_dim, done)
        report = _simulate(locked, tensors, scalars, block_dim, options)
        fast.note_engine_launch(locked, sum(c["instructions"] for c in report.per_core))
        return report


def _fast_report(locked: KernelIR, block_dim: int, done) -> SimReport:
    streams, cycles, summaries, labels, blocks = done
    return SimReport(locked.name, locked.arch.name, block_dim, resident_blocks(locked), labels, blocks, streams,
                     params_for(locked.arch), cycles, [], tile_infos(locked), summaries, counts=streams.counts)


def _simulate(kernel: KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int,
              options: SimOptions) -> SimReport:
    params = params_for(kernel.arch)
    hazards: List[Hazard] = []
    interp = Interpreter(kernel, tensors, scalars, block_dim)
    recorder = Recorder(interp, params, options.strict, hazards)
    interp.run()
    cores = interp.launch.cores
    labels = [c.label for c in cores]

    def describe(old_acc, old_ins, acc, ins, inverted):
        return race_hazard(labels, old_acc, old_ins, acc, ins, inverted)

    capacity = resident_blocks(kernel)
    replay = Replay(recorder.streams, cores, params, capacity, hazards, describe)
    replay.run()
    if options.strict and hazards:
        raise _first(hazards).error(kernel.name)
    return SimReport(kernel.name, kernel.arch.name, block_dim, capacity, labels,
                     [c.block for c in cores], recorder.streams, params, replay.total_cycles, hazards,
                     tile_infos(kernel), [replay.core_summary(ci) for ci in range(len(cores))])


__all__ = ["simulate", "with_auto_mutex", "paused_cycle_collection", "resident_blocks"]
