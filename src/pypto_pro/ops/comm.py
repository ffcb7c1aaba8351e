"""Communication ops: one-sided transfers, signals and barriers on a group's symmetric heap.

Internal ops (the tensor level's ``pypto.distributed`` lowers into them; no ``pl`` name).  They run
on the ``COMM`` pipe and work GM to GM: a ``shmem_put`` copies a region of a GM tensor into a PE's
copy of a shared-memory tensor (``AtomicType.SET``) or adds it there (``ADD``, atomic), a
``shmem_get`` copies a region of a PE's copy into a GM tensor.  Signals are ``int32`` counters, one
per element of the shared-memory tensor and source PE (see :mod:`pypto_pro.comm.heap`), so a wait
covers exactly the region that was signalled whatever the tile shapes.  The heap arrays come from
:func:`pypto_pro.comm.heap.bind`; the interpreter (and the simulator, whose values are the
interpreter's) runs these functions directly, the cpu backend calls them back (``emit_comm``).
"""
from __future__ import annotations

import operator
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ..comm import heap as H
from ..comm import order
from ..comm.heap import ShmemSlot
from ..ir.optable import Arg, In, Out, op

#: ``pypto.OpType`` values -> comparison
CMP = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge}
CMP_TEXT = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}
SET, ADD = 0, 1


def _check(c, a):
    slot = a["slot"]
    if not isinstance(slot, ShmemSlot):
        c.fail(f"'slot' must be a shared-memory tensor, got {slot!r}")
    for name in ("offsets", "extents", "src_offsets", "dst_offsets"):
        v = a.get(name)
        if v is not None and len(v) != len(slot.shape):
            c.fail(f"'{name}' needs {len(slot.shape)} entries (the shmem tensor's rank), got {len(v)}")
    if a.get("atomic", SET) not in (SET, ADD):
        c.fail(f"atomic must be AtomicType.SET or ADD, got {a.get('atomic')!r}")
    if a.get("cmp", 0) not in CMP:
        c.fail(f"cmp must be a pypto.OpType, got {a.get('cmp')!r}")


def _checking(ctx) -> bool:
    """Whether this launch runs under the simulator (which checks the order of transfers, order.py)."""
    return ctx.observed


def _ints(ctx, values: Sequence[Any]) -> List[int]:
    return [int(ctx.scalar(v)) for v in values]


def _box(ctx, slot: ShmemSlot, offsets, extents, what: str) -> Tuple[slice, ...]:
    """The region ``offsets``/``extents`` of the shmem tensor, bounds-checked."""
    offs, ext = _ints(ctx, offsets), _ints(ctx, extents)
    for axis, (o, e, d) in enumerate(zip(offs, ext, slot.shape)):
        if o < 0 or e < 0 or o + e > d:
            raise ctx.error(f"{what}: region [{o}, {o + e}) of axis {axis} is outside the shmem tensor "
                            f"{slot!r} (size {d})")
    return tuple(slice(o, o + e) for o, e in zip(offs, ext))


def _pe(ctx, slot: ShmemSlot, value, what: str, allow_all: bool = False) -> int:
    pe = int(ctx.scalar(value))
    if not (0 <= pe < slot.n_pes or (allow_all and pe == -1)):
        raise ctx.error(f"{what}: PE {pe} is outside the group '{slot.group}' of {slot.n_pes} PEs")
    return pe


def _gm_box(ctx, param, offsets, extents) -> Tuple[slice, ...]:
    offs, ext = _ints(ctx, offsets), _ints(ctx, extents)
    arr = ctx.tensor(param)
    for axis, (o, e, d) in enumerate(zip(offs, ext, arr.shape)):
        if o < 0 or o + e > d:
            raise ctx.error(f"region [{o}, {o + e}) of axis {axis} is outside GM tensor '{param.name}' (size {d})")
    return tuple(slice(o, o + e) for o, e in zip(offs, ext))


_PUT = [In("src", "tensor"), Arg("src_offsets", "index_list"), Arg("extents", "index_list"), Arg("slot"),
        Arg("pe", "scalar"), Arg("dst_offsets", "index_list"), Arg("atomic", default=SET)]


@op("shmem_put", _PUT, "COMM", internal=True, check=_check,
    doc="shmem_put(src, src_offsets, extents, slot, pe, dst_offsets, atomic): GM region -> PE pe's shmem copy.")
def _put(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    pe = _pe(ctx, slot, a["pe"], "shmem_put")
    src_box = _gm_box(ctx, a["src"], a["src_offsets"], a["extents"])
    dst_box = _box(ctx, slot, a["dst_offsets"], a["extents"], "shmem_put")
    ctx.note_gm(a["src"], src_box, False)
    data = np.asarray(ctx.tensor(a["src"])[src_box])
    dtype = slot.dtype.require_numpy()
    if data.dtype != dtype:
        data = data.view(dtype) if data.dtype.itemsize == np.dtype(dtype).itemsize else data
    with b.seg.lock():
        if a["atomic"] == ADD:
            b.data[pe].add(dst_box, data)
        else:
            b.data[pe][dst_box] = data
        if _checking(ctx):
            order.on_put(b, pe, dst_box, ctx.stmt.loc)


_GET = [Out("dst", "tensor"), Arg("dst_offsets", "index_list"), Arg("extents", "index_list"), Arg("slot"),
        Arg("pe", "scalar"), Arg("src_offsets", "index_list")]


@op("shmem_get", _GET, "COMM", internal=True, check=_check,
    doc="shmem_get(dst, dst_offsets, extents, slot, pe, src_offsets): PE pe's shmem copy -> GM region.")
def _get(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    pe = _pe(ctx, slot, a["pe"], "shmem_get")
    src_box = _box(ctx, slot, a["src_offsets"], a["extents"], "shmem_get")
    dst_box = _gm_box(ctx, a["dst"], a["dst_offsets"], a["extents"])
    if _checking(ctx):
        order.check_get(b, pe, src_box, ctx.stmt.loc)
    ctx.note_gm(a["dst"], dst_box, True)
    arr = ctx.tensor(a["dst"])
    src = b.data[pe][src_box]
    arr[dst_box] = src if src.dtype == arr.dtype else src.view(arr.dtype)


_SIGNAL = [Arg("slot"), Arg("target_pe", "scalar"), Arg("src_pe", "scalar"), Arg("offsets", "index_list"),
           Arg("extents", "index_list"), Arg("value", "scalar"), Arg("atomic", default=SET)]


@op("shmem_signal", _SIGNAL, "COMM", internal=True, check=_check,
    doc="shmem_signal(slot, target_pe, src_pe, offsets, extents, value, atomic): set/add the signal counters "
        "of region offsets/extents of src_pe's copy, on target_pe (-1: every PE).")
def _signal(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    target = _pe(ctx, slot, a["target_pe"], "shmem_signal", allow_all=True)
    src = _pe(ctx, slot, a["src_pe"], "shmem_signal")
    box = _box(ctx, slot, a["offsets"], a["extents"], "shmem_signal")
    value = int(ctx.scalar(a["value"]))
    with b.seg.lock():
        for pe in (range(slot.n_pes) if target == -1 else (target,)):
            if _checking(ctx):
                order.on_signal(b, pe)
            if a["atomic"] == ADD:
                b.signals[pe].add((src, *box), np.int32(value))
            else:
                b.signals[pe][(src, *box)] = value


_WAIT = [Arg("slot"), Arg("src_pe", "scalar"), Arg("offsets", "index_list"), Arg("extents", "index_list"),
         Arg("cmp", default=0), Arg("value", "scalar", default=0), Arg("clear", default=False)]


@op("shmem_wait", _WAIT, "COMM", internal=True, check=_check,
    doc="shmem_wait(slot, src_pe, offsets, extents, cmp, value, clear): block until every signal counter of "
        "the region (from src_pe, on this PE) compares true with value; then zero them if clear.")
def _wait(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    src = _pe(ctx, slot, a["src_pe"], "shmem_wait_until")
    box = _box(ctx, slot, a["offsets"], a["extents"], "shmem_wait_until")
    value = int(ctx.scalar(a["value"]))
    compare = CMP[int(a["cmp"])]
    mine, where = b.signals[b.me], (src, *box)
    region = ", ".join(f"{s.start}:{s.stop}" for s in box)
    b.seg.wait(lambda: bool(np.all(compare(mine[where], value))),
               f"the signal of [{region}] of {slot!r} from PE {src} to become {CMP_TEXT[int(a['cmp'])]} {value}")
    if _checking(ctx):
        order.on_wait(b)
    if a["clear"]:
        with b.seg.lock():
            mine[where] = 0


@op("shmem_barrier", [Arg("slot")], "COMM", internal=True, check=_check,
    doc="shmem_barrier(slot): every PE of the slot's group has arrived (counters of a signal tensor).")
def _barrier(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    b.barrier_epoch += 1
    epoch, me = b.barrier_epoch, b.me
    first = (0,) * len(slot.shape)
    with b.seg.lock():
        if _checking(ctx):
            order.on_barrier_arrive(b)
        for pe in range(slot.n_pes):
            b.signals[pe].add((me, *first), np.int32(1))
    mine, arrivals = b.signals[me], (slice(None), *first)
    b.seg.wait(lambda: bool(np.all(mine[arrivals] >= epoch)),
               f"every PE of group '{slot.group}' to reach barrier {epoch} on {slot!r}")
    if _checking(ctx):
        order.on_barrier_leave(b)


@op("shmem_fresh", [Arg("slot")], "COMM", internal=True, check=_check,
    doc="shmem_fresh(slot): the creation point of a shmem tensor created in a loop body: a fresh, zero tensor.")
def _fresh(ctx, a):
    H.bind(a["slot"]).fresh()


_CLEAR = [Arg("slot"), Arg("offsets", "index_list"), Arg("extents", "index_list"), Arg("what", default="data")]


@op("shmem_clear", _CLEAR, "COMM", internal=True, check=_check,
    doc="shmem_clear(slot, offsets, extents, what): zero this PE's data region ('data') or all its signals.")
def _clear(ctx, a):
    slot = a["slot"]
    b = H.bind(slot)
    if a["what"] == "signal":
        with b.seg.lock():
            b.signals[b.me][...] = 0
        b.barrier_epoch = 0
        return
    box = _box(ctx, slot, a["offsets"], a["extents"], "shmem_clear_data")
    b.data[b.me][box] = 0


def op_bytes(name: str, args: Dict[str, Any], scalar) -> int:
    """Bytes a comm op moves (the simulator's cost per byte)."""
    slot = args["slot"]
    if name in ("shmem_put", "shmem_get", "shmem_clear"):
        ext = [int(scalar(e)) for e in args["extents"]] if args.get("extents") is not None else list(slot.shape)
        return int(np.prod(ext)) * slot.dtype.nbytes
    return 4 * slot.n_pes if name == "shmem_barrier" else 4
