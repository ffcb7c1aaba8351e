"""Human-readable hazard messages for races, naming both accesses and how to order them."""
from __future__ import annotations

from .instr import DMA_PIPES, Access, Hazard, Instr


def _side(acc: Access, ins: Instr, label: str) -> str:
    verb = "atomic add" if acc.atomic else ("write" if acc.write else "read")
    return f"{verb} by pl.{ins.op} on pipe {ins.pipe} of {label}: {acc.text}\n    at {ins.where()}"


def race_hazard(labels, old_acc: Access, old_ins: Instr, acc: Access, ins: Instr, inverted: bool = False) -> Hazard:
    """The hazard for two conflicting accesses that are unordered, or (``inverted``) that the syncs order
    against program order; the earlier one in program order first."""
    if old_ins.core == ins.core and old_ins.seq > ins.seq:
        old_acc, old_ins, acc, ins = acc, ins, old_acc, old_ins
    if inverted:
        message = (f"data race: the syncs run two accesses to the same bytes in the opposite of program order "
                   f"(the second ran at cycle {ins.start}, the first at cycle {old_ins.start}), so the hardware "
                   f"does not compute what the program says\n"
                   f"  {_side(old_acc, old_ins, labels[old_ins.core])}\n"
                   f"  {_side(acc, ins, labels[ins.core])}\n"
                   f"  check the set/wait pairs and phase= flags between them: a phase=Final matmul must be the "
                   f"last write of its Acc tile before the Final store")
        locs = [loc for loc in (old_ins.loc, ins.loc) if loc is not None]
        return Hazard("race", message, locs, details=(old_ins, ins))
    if old_ins.core != ins.core:
        advice = ("they run on different cores: order them with pl.system.set_cross_core/wait_cross_core "
                  "or pl.system.sync_all")
    elif old_ins.pipe == ins.pipe and ins.pipe in DMA_PIPES:
        advice = (f"two {ins.pipe} transfers to the same bytes may complete out of order: insert "
                  f"pl.system.bar_{ins.pipe.lower()}() between them (auto_mutex does not cover same-pipe reuse)")
    else:
        advice = (f"add pl.system.sync_src(set_pipe=pl.PipeType.{old_ins.pipe}, wait_pipe=pl.PipeType.{ins.pipe}, "
                  f"event_id=...) after the first and the matching pl.system.sync_dst before the second "
                  f"(or use a tile group with mutex ids under auto_mutex)")
    message = (f"data race: two accesses to the same bytes, at least one a write, with no sync between them\n"
               f"  {_side(old_acc, old_ins, labels[old_ins.core])}\n"
               f"  {_side(acc, ins, labels[ins.core])}\n"
               f"  {advice}")
    locs = [loc for loc in (old_ins.loc, ins.loc) if loc is not None]
    return Hazard("race", message, locs, details=(old_ins, ins))
