"""Per-arch cost model of the simulator: cycles per instruction on its pipe.

Every number here is an *estimate* (see docs/simulator.md for sources and assumptions), chosen
so that relative costs are plausible: GM traffic is expensive and latency-bound, on-chip moves
are cheap, vector work scales with bytes, cube work with MACs.  They do not promise hardware
timing.  The simulator's per-op cost rules live in its own table keyed by op name (:func:`op_costs`),
built from each op's ``cost`` class trait (``OpDef.cost``) through :data:`CLASS_COST`; an op without a
class costs the work of its pipe (:data:`_BY_PIPE`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Sequence

from .instr import Access, Instr


@dataclass(frozen=True)
class CostParams:
    """Throughputs (bytes or MACs per cycle, per core) and fixed latencies (cycles) of one arch."""

    clock_ghz: float
    gm_read_bytes_per_cycle: float     # MTE2: GM -> UB/L1, per core
    gm_write_bytes_per_cycle: float    # MTE3/FIX: UB/L0C -> GM, per core
    mte2_latency: int
    mte3_latency: int
    mte1_bytes_per_cycle: float        # L1 -> L0A/L0B
    mte1_latency: int
    fix_bytes_per_cycle: float         # L0C -> UB/GM through the fixpipe (output bytes)
    fix_latency: int
    vec_bytes_per_cycle: float         # vector unit, bytes of the widest operand
    vec_latency: int
    cube_macs_per_cycle: Dict[str, int] = field(default_factory=dict)  # by operand dtype name
    cube_latency: int = 32
    scalar_issue: int = 2              # cycles the scalar unit spends dispatching one instruction
    scalar_op: int = 16                # getval/setval and other scalar-pipe ops
    sync_cost: int = 1                 # flags, barriers, mutexes on their pipe
    cross_core_latency: int = 64       # set_cross_core -> visible to the waiting core
    sync_all_latency: int = 512        # grid barrier

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e3)


_CUBE_A23 = {"FP16": 4096, "BF16": 4096, "FP32": 1024, "INT8": 8192}
_CUBE_A5 = {"FP16": 4096, "BF16": 4096, "FP32": 1024, "INT8": 8192, "FP8E4M3FN": 8192, "FP8E5M2": 8192,
            "HF8": 8192}

PARAMS: Dict[str, CostParams] = {
    "a2": CostParams(clock_ghz=1.8, gm_read_bytes_per_cycle=32, gm_write_bytes_per_cycle=32, mte2_latency=300,
                     mte3_latency=120, mte1_bytes_per_cycle=256, mte1_latency=24, fix_bytes_per_cycle=128,
                     fix_latency=48, vec_bytes_per_cycle=256, vec_latency=16, cube_macs_per_cycle=_CUBE_A23),
    "a3": CostParams(clock_ghz=1.8, gm_read_bytes_per_cycle=32, gm_write_bytes_per_cycle=32, mte2_latency=300,
                     mte3_latency=120, mte1_bytes_per_cycle=256, mte1_latency=24, fix_bytes_per_cycle=128,
                     fix_latency=48, vec_bytes_per_cycle=256, vec_latency=16, cube_macs_per_cycle=_CUBE_A23),
    "a5": CostParams(clock_ghz=1.65, gm_read_bytes_per_cycle=40, gm_write_bytes_per_cycle=40, mte2_latency=280,
                     mte3_latency=110, mte1_bytes_per_cycle=256, mte1_latency=24, fix_bytes_per_cycle=128,
                     fix_latency=48, vec_bytes_per_cycle=256, vec_latency=14, cube_macs_per_cycle=_CUBE_A5),
}



Rule = Callable[[CostParams, Instr], int]


def _bytes(accs: Sequence[Access], *, write=None, gm=None) -> int:
    """The largest access (bytes) among those matching ``write`` and ``gm`` (None: any)."""
    most = 0
    for a in accs:
        if a.nbytes > most and (write is None or a.write == write) and (gm is None or a.gm == gm):
            most = a.nbytes
    return most


def _mte2(p: CostParams, ins: Instr) -> int:
    return p.mte2_latency + int(_bytes(ins.accesses, write=True) / p.gm_read_bytes_per_cycle)


def _to_gm_or_chip(p: CostParams, ins: Instr, chip_bw: float, latency: int) -> int:
    gm = _bytes(ins.accesses, write=True, gm=True)
    if gm:
        return latency + int(max(gm / p.gm_write_bytes_per_cycle, gm / chip_bw))
    return latency // 2 + int(_bytes(ins.accesses, write=True) / chip_bw)


def _mte3(p: CostParams, ins: Instr) -> int:
    return _to_gm_or_chip(p, ins, p.vec_bytes_per_cycle, p.mte3_latency)


def _fix(p: CostParams, ins: Instr) -> int:
    return _to_gm_or_chip(p, ins, p.fix_bytes_per_cycle, p.fix_latency)


def _mte1(p: CostParams, ins: Instr) -> int:
    return p.mte1_latency + int(_bytes(ins.accesses, write=True) / p.mte1_bytes_per_cycle)


def _vec(p: CostParams, ins: Instr, factor: int = 1) -> int:
    return p.vec_latency + int(factor * _bytes(ins.accesses) / p.vec_bytes_per_cycle)


def _passes(factor: int) -> Rule:
    """Vector work taking ``factor`` passes per element (transcendentals, division, reductions, ...)."""
    return lambda p, ins: _vec(p, ins, factor)


def _cube(p: CostParams, ins: Instr) -> int:
    left = [a for a in ins.accesses if a.space == "Left" and not a.write]
    right = [a for a in ins.accesses if a.space == "Right" and not a.write]
    if not left or not right:
        return p.cube_latency
    m, k = left[0].rows, left[0].cols
    n = right[0].cols
    rate = p.cube_macs_per_cycle.get(left[0].dtype, 1024)
    return p.cube_latency + int(m * k * n / rate)


def _scalar(p: CostParams, ins: Instr) -> int:
    return p.scalar_op


#: the COMM pipe (pypto.distributed): a fixed latency per transfer or signal (a round trip to another
#: device) plus the bytes moved at the inter-device link's rate (estimates: ~2 us, ~25 GB/s at 1.65 GHz)
COMM_LATENCY = 3000
COMM_BYTES_PER_CYCLE = 16


def _comm(p: CostParams, ins: Instr) -> int:
    return COMM_LATENCY + int(_bytes(ins.accesses) / COMM_BYTES_PER_CYCLE)


_BY_PIPE: Dict[str, Rule] = {
    "MTE2": _mte2, "MTE3": _mte3, "FIX": _fix, "MTE1": _mte1, "V": _vec, "M": _cube, "S": _scalar,
    "COMM": _comm,
}


def _by_pipe(p: CostParams, ins: Instr) -> int:
    """The work of the instruction's pipe (an op's pipe may depend on its arguments, e.g. store)."""
    rule = _BY_PIPE.get(ins.pipe)
    return rule(p, ins) if rule is not None else 1


#: the rule of each cost class of the op table (``OpDef.cost``); "" is the work of the op's pipe
CLASS_COST: Dict[str, Rule] = {
    "": _by_pipe,
    "transcendental": _passes(4),
    "divide": _passes(4),
    "reciprocal": _passes(2),
    "reduce": _passes(2),
    "permute": _passes(2),
    "sort": _passes(8),
    "random": _passes(10),
    "histogram": _passes(4),
    "descriptor": lambda p, ins: 1,     # no data work (set_validshape, discard, layout switches)
    "debug_io": lambda p, ins: 200,     # host output (printf, dump_data)
    "cache": lambda p, ins: 8,          # cache maintenance (dcci)
}

_OP_COSTS: Optional[Dict[str, Rule]] = None


def op_costs() -> Dict[str, Rule]:
    """The simulator's cost table: op name -> rule, one entry per op of the op table (built once)."""
    global _OP_COSTS
    if _OP_COSTS is None:
        from ... import ops as _ops  # noqa: F401  (fills the op table)
        from ...ir.optable import OPS
        _OP_COSTS = {name: CLASS_COST[op.cost] for name, op in OPS.items()}
    return _OP_COSTS


def cost_of(params: CostParams, ins: Instr) -> int:
    """Cycles ``ins`` occupies its pipe."""
    if ins.sync is not None and not ins.sync[0].startswith("phase_"):  # phased matmul/store still move data
        if ins.sync[0] == "sync_all":
            return params.sync_all_latency
        return params.sync_cost
    rule = (_OP_COSTS or op_costs()).get(ins.op, _by_pipe)
    return max(1, rule(params, ins))


def params_for(arch) -> CostParams:
    """The cost parameters of an :class:`~pypto_pro.arch.ArchSpec` (by name)."""
    try:
        return PARAMS[arch.name]
    except KeyError:
        raise NotImplementedError(f"simulator cost model for arch {arch.name!r}") from None
