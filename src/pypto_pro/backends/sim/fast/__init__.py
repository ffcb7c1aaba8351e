"""The simulator's compiled fast path: the same launch, the same report, without the Python engine's loops.

For a covered kernel (:mod:`.plan`) a launch runs in three steps:

1. the **trace program** (:mod:`.tracegen`, C++) runs the kernel's control flow and scalars and records every
   executed tile op with its runtime values;
2. the **compiled replay** (``simfast.h``) schedules those records on the pipe model and checks races,
   uninitialised reads, GM bounds, deadlocks and mutex misuse exactly as replay.py / shadow.py would;
3. if the launch is clean, the **values** come from the cpu backend's compiled kernel when every op of the
   kernel gives the interpreter's bits there (:data:`.plan.CPU_EXACT`, exp included: it is one
   fp32 sequence on both), else from the interpreter run without the recorder; the report is built from the
   replay's columns, its instruction records only when asked for (:mod:`.lazy`).

Whenever something is not clean (any hazard, a bound error, a failing scalar op) or not covered, nothing
has been written yet and the launch runs on the interpreter engine, which raises or reports exactly as
before; the reason is logged at INFO.

Compiling a trace program takes seconds, which a small launch (a unit test's kernel: the engine runs it in
milliseconds) never repays.  So by default (:func:`worth_compiling`) a kernel takes the fast path once a
launch passes GM arguments of at least :data:`MIN_BYTES` in all, or once one of its launches ran at least
:data:`MIN_INSTRUCTIONS` instructions on the engine, or when its trace program is built already.
``PYPTO_SIM_FAST=1`` / ``sim_options={"fast": True}`` always takes it, ``PYPTO_SIM_FAST=0`` /
``{"fast": False}`` never.
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from ....ir import nodes as ir
from ....log import logger
from ....runtime.args import element_strides, pointer_address
from ..costs import params_for
from ..recorder import gm_memories
from .lazy import LazyStreams
from ..instr import PIPES
from .plan import MAXDIM, W, KernelPlan, NotCovered, build_plan

#: the pipes the compiled simulator models (simfast.h NP), in instr.PIPES order
FAST_PIPES = PIPES[:7]

_STATUS = {1: "a race", 2: "an uninitialised read", 3: "a GM access out of bounds", 4: "a deadlock",
           5: "a failing scalar operation", 6: "a mutex never released", 7: "an unlock of a mutex not held",
           9: "a cross-core event with no core to reach"}
#: more records than this run on the interpreter engine (memory: ~170 bytes per record)
MAX_RECORDS = 8_000_000
#: the replay keeps a vector clock of (core x pipe) entries per core and pipe: above this many blocks the
#: clocks alone would take more than ~100 MiB (the interpreter engine needs as much, but only when it runs)
MAX_BLOCKS = 512
#: by default, launches with at least this many bytes of tensor arguments take the fast path ...
MIN_BYTES = 1 << 20
#: ... and so do all later launches of a kernel one of whose engine launches ran this many instructions
#: (about a quarter of a second on the engine)
MIN_INSTRUCTIONS = 20_000


class _Prepared:
    __slots__ = ("plan", "lib", "gen_slots", "reason", "values", "f16")

    def __init__(self, plan=None, lib=None, gen_slots=None, reason: Optional[str] = None):
        self.plan, self.lib, self.gen_slots, self.reason = plan, lib, gen_slots, reason
        self.values = None
        self.f16: Optional[bool] = None


_prepared: "weakref.WeakKeyDictionary[ir.KernelIR, _Prepared]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_logged: set = set()
#: kernels (with auto_mutex applied) whose engine launches were big enough to repay a compile
_big: "weakref.WeakSet[ir.KernelIR]" = weakref.WeakSet()


def enabled(options) -> Union[None, bool, str]:
    """True: always the fast path; False: never; None: where it pays (:func:`worth_compiling`); "check":
    both paths, which must agree (:mod:`.check`)."""
    env = os.environ.get("PYPTO_SIM_FAST", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    if env == "check":
        return "check"
    return getattr(options, "fast", None)


#: the reasons run_fast gives when the fast path found a hazard (the engine must report it)
HAZARD_REASONS = frozenset(("a race", "an uninitialised read", "a deadlock", "a mutex never released",
                            "an unlock of a mutex not held"))


def worth_compiling(locked: ir.KernelIR, tensors: Dict[int, np.ndarray]) -> bool:
    """Whether this launch should take the fast path by default: its trace program exists already, the
    launch moves at least MIN_BYTES of arguments, or an earlier engine launch was big."""
    return (locked in _prepared or locked in _big
            or sum(int(a.nbytes) for a in tensors.values()) >= MIN_BYTES)


def note_engine_launch(locked: ir.KernelIR, instructions: int) -> None:
    """An engine launch of ``locked`` ran ``instructions`` instructions: a big one makes later launches
    take the fast path."""
    if instructions >= MIN_INSTRUCTIONS:
        _big.add(locked)


def _note(kernel: ir.KernelIR, reason: str) -> None:
    key = (kernel.name, reason)
    if key not in _logged:
        _logged.add(key)
        logger.info("sim kernel %s: the interpreter engine runs it (%s)", kernel.name, reason)


def _prepare(kernel: ir.KernelIR, locked: ir.KernelIR) -> _Prepared:
    found = _prepared.get(locked)
    if found is not None:
        return found
    with _lock:
        found = _prepared.get(locked)
        if found is not None:
            return found
        try:
            found = _build(kernel, locked)
        except NotCovered as e:
            found = _Prepared(reason=f"the compiled simulator does not cover {e}")
        except NotImplementedError as e:
            found = _Prepared(reason=f"the compiled simulator does not cover it: {e}")
        except Exception as e:  # noqa: BLE001  (a build problem must not fail a launch the engine can run)
            found = _Prepared(reason=f"the compiled simulator could not be built: {type(e).__name__}: {e}")
        _prepared[locked] = found
        if found.reason is None:
            logger.info("sim kernel %s: compiled simulator ready (%d op statements)", kernel.name,
                        len(found.plan.stmts))
        return found


def _build(kernel: ir.KernelIR, locked: ir.KernelIR) -> _Prepared:
    from ...cpu import prepare as cpu_prepare
    from ...cpu.toolchain import find_toolchain
    from .tracegen import TraceCodegen, build

    tc = find_toolchain()
    if tc is None:
        raise NotImplementedError("no C++ compiler")
    plan = build_plan(locked, params_for(locked.arch))
    values = None
    if plan.cpu_values:
        try:
            values = cpu_prepare(kernel)
        except NotImplementedError as e:  # the interpreter computes the values
            logger.info("sim kernel %s: values from the interpreter (%s)", kernel.name, e)
    lib = build(locked, plan, tc)
    gen = TraceCodegen(locked, plan).generate()
    prepared = _Prepared(plan, lib, (gen.tensor_slots, gen.scalar_slots, gen.nslots))
    prepared.values = values
    return prepared


def _pack(prepared: _Prepared, kernel: ir.KernelIR, tensors, scalars) -> np.ndarray:
    tensor_slots, scalar_slots, nslots = prepared.gen_slots
    args = np.zeros(max(1, nslots), np.int64)
    for p in kernel.params:
        if isinstance(p, ir.TensorParam):
            arr = tensors[p.index]
            slot = tensor_slots[p.index]
            args[slot] = pointer_address(arr)
            strides = element_strides(arr, f"argument '{p.name}'", kernel.name)
            for i, (n, st) in enumerate(zip(arr.shape, strides)):
                args[slot + 1 + i] = n
                args[slot + 1 + p.ndim + i] = st
        else:
            slot, kind = scalar_slots[p.index]
            value = scalars[p.var.uid]
            if kind == "f":
                args[slot:slot + 1].view(np.float64)[0] = float(value)
            else:
                args[slot] = int(value)
    return args


def _values(prepared: _Prepared, kernel: ir.KernelIR, tensors, scalars, block_dim: int) -> None:
    """Compute the launch's values: the cpu backend's compiled kernel where its results are the interpreter's
    to the bit, else the interpreter itself (the oracle), without the recorder."""
    if prepared.values is not None:
        from ...cpu.launcher import run_compiled

        run_compiled(prepared.values, tensors, scalars, block_dim)
        return
    from ...interp import f16
    from ...interp.executor import Interpreter

    if prepared.f16 is None:
        prepared.f16 = f16.enable()  # fp16 conversions in compiled code, numpy's bits
    Interpreter(kernel, tensors, scalars, block_dim).run()


def run_fast(kernel: ir.KernelIR, locked: ir.KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any],
             block_dim: int, capacity: int) -> Union[str, Tuple]:
    """Run the launch on the fast path: ``(streams, total cycles, summaries, labels, blocks)``, or the reason
    (a string) why the interpreter engine must run it instead (then nothing has been written)."""
    prepared = _prepare(kernel, locked)
    if prepared.reason is not None:
        _note(kernel, prepared.reason)
        return prepared.reason
    if gm_memories(locked, tensors):
        reason = "arguments share memory"
        _note(kernel, reason)
        return reason
    if block_dim > MAX_BLOCKS:
        reason = f"more than {MAX_BLOCKS} blocks"
        _note(kernel, reason)
        return reason
    plan: KernelPlan = prepared.plan
    args = _pack(prepared, locked, tensors, scalars)
    lib = prepared.lib
    n = lib.trace(args.ctypes.data, block_dim, plan.per_block, plan.first_vector, MAX_RECORDS)
    if n < 0:
        reason = "a failing scalar operation" if n == -1 else "too many instructions"
        _note(kernel, reason)
        return reason
    ptable = np.zeros((max([p.index for p in plan.params], default=0) + 1, 1 + MAXDIM), np.int64)
    for p in plan.params:
        arr = tensors[p.index]
        ptable[p.index, 0] = arr.ndim
        ptable[p.index, 1:1 + arr.ndim] = arr.shape
    params = params_for(locked.arch)
    out = np.empty((max(1, n), 5 + W), np.int64)
    ncores = block_dim * plan.per_block
    cores = np.zeros((max(1, ncores), 10), np.int64)
    misc = np.zeros(3, np.int64)
    topology = np.array([plan.per_block, plan.first_vector, params.cross_core_latency], np.int64)
    costs = None
    if plan.windowed and n > 0:  # costs over runtime windows
        buf = (ctypes.c_int64 * (n * W)).from_address(lib.records())
        costs = plan.record_costs(np.frombuffer(buf, np.int64).reshape(n, W))
    lib.replay(plan.table.ctypes.data, plan.decls.ctypes.data, ptable.ctypes.data, topology.ctypes.data, capacity,
               params.scalar_issue, None if costs is None else costs.ctypes.data, plan.chip_bytes, out.ctypes.data,
               cores.ctypes.data, misc.ctypes.data)
    status = int(misc[1])
    if status != 0:
        reason = _STATUS.get(status, f"status {status}")
        logger.info("sim kernel %s: %s found; the interpreter engine reports it", kernel.name, reason)
        return reason
    _values(prepared, kernel, tensors, scalars, block_dim)
    labels = plan.labels(block_dim)
    core_start = cores[:ncores, 9].tolist() + [n]
    summaries = []
    for c in range(ncores):
        row = cores[c].tolist()
        busy = {p: row[i] for i, p in enumerate(FAST_PIPES)}
        busy.update({p: 0 for p in PIPES if p not in busy})  # COMM: kernels with it run on the engine
        summaries.append((busy, row[7], row[8]))
    streams = LazyStreams(plan, locked, out[:n], core_start, labels, tensors, costs)
    return streams, int(misc[0]), summaries, labels, [ci // plan.per_block for ci in range(ncores)]

