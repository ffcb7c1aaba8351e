"""``pypto.distributed``: kernels that communicate through symmetric ("shmem") tensors.

Semantics follow the official API pages (hicann/pypto ``docs/zh/api/distributed/``): a group is a
``torch.distributed`` process group named by ``group_name`` (its ``ProcessGroup.group_name``;
``get_hccl_comm_name`` under the NPU stand-in); its PEs are the group's ranks.
``create_shmem_tensor`` allocates one copy of a tensor on every PE (symmetric), ``shmem_put`` /
``shmem_get`` write / read a region of some PE's copy (``AtomicType.SET`` or ``ADD``),
``shmem_signal`` sets or adds signal counters of a region of a PE's copy on a target PE, and
``shmem_wait_until`` blocks until those counters compare true (then optionally clears them).
Each call records a statement in program order (see :mod:`.statement`); the transport is the
group's shared-memory heap (:mod:`pypto_pro.comm.heap`).  docs/distributed.md has the details.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from pypto_pro import dtypes as dt
from pypto_pro.comm.heap import ShmemSlot
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.types import AtomicType as _TileAtomic

from ..datatype import OpType
from ..frontend.tracer import caller_location, current_recorder
from ..graph import Node, gm_leaf
from ..ops.core import cast_node, materialize, node_of
from ..symbolic import SymbolicScalar, is_static, sym_min
from ..tensor import Tensor, wrap
from .atomic import AtomicType
from .statement import Comm

_SET, _ADD = 0, 1


class ShmemTensor:
    """A shared-memory tensor (or a view of one) while a kernel records: the allocation ``slot`` and
    the window ``offsets`` / ``shape`` (with its ``valid_shape``) within it."""

    def __init__(self, slot: ShmemSlot, offsets: Sequence[Any], shape: Sequence[Any], valid: Sequence[Any],
                 signal: bool = False):
        self.slot = slot
        self.offsets = list(offsets)
        self.view_shape = list(shape)
        self.valid = list(valid)
        self.signal = signal

    @property
    def shape(self) -> List[Any]:
        return list(self.view_shape)

    @property
    def dtype(self) -> dt.DataType:
        return self.slot.dtype

    @property
    def dim(self) -> int:
        return len(self.view_shape)

    def __repr__(self) -> str:
        return f"ShmemTensor({self.slot!r}, offsets={self.offsets}, shape={self.view_shape})"


# ---------------------------------------------------------------------------------------------- helpers
def _group(name, what: str) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= 128:
        raise KernelTypeError(f"pypto.distributed.{what}: group_name must be a str of 1 to 128 characters, "
                              f"got {name!r}")
    return name


def _n_pes(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise KernelTypeError(f"pypto.distributed.{what}: n_pes must be an int > 0, got {n!r}")
    return n


def _shmem(t, what: str, name: str = "src") -> ShmemTensor:
    if not isinstance(t, ShmemTensor):
        raise KernelTypeError(f"pypto.distributed.{what}: '{name}' must be a shared-memory tensor "
                              f"(create_shmem_tensor / create_shmem_signal), got {type(t).__name__}")
    return t


def _pe_value(v, what: str, name: str):
    if isinstance(v, bool) or not isinstance(v, (int, SymbolicScalar)):
        raise KernelTypeError(f"pypto.distributed.{what}: {name} must be an int or SymbolicScalar, got {v!r}")
    return v


def _atomic(v, what: str, name: str) -> int:
    if isinstance(v, AtomicType):
        return _ADD if v == AtomicType.ADD else _SET
    if isinstance(v, _TileAtomic):
        return _ADD if v == _TileAtomic.AtomicAdd else _SET
    raise KernelTypeError(f"pypto.distributed.{what}: {name} must be pypto.AtomicType.SET or ADD, got {v!r}")


def _pred(pred, what: str) -> None:
    """``pred`` lists tensors the op depends on; statements run in program order, so they are only checked."""
    if pred is None:
        return
    if not isinstance(pred, (list, tuple)):
        pred = [pred]
    for p in pred:
        if not isinstance(p, (Tensor, ShmemTensor)):
            raise KernelTypeError(f"pypto.distributed.{what}: pred must list tensors, got {type(p).__name__}")


def _window(src: ShmemTensor, shape, offsets, valid, what: str) -> ShmemTensor:
    """``src``'s window ``shape`` at ``offsets`` (relative to ``src``); checked where static."""
    if shape is None and offsets is None:
        return src
    shape = list(shape) if shape is not None else list(src.view_shape)
    offsets = list(offsets) if offsets is not None else [0] * len(shape)
    valid = list(valid) if valid is not None else list(shape)
    if not len(shape) == len(offsets) == len(valid) == src.dim:
        raise KernelTypeError(f"pypto.distributed.{what}: shape, offsets and valid_shape need {src.dim} entries "
                              f"(the shmem tensor's rank), got {len(shape)}, {len(offsets)}, {len(valid)}")
    for axis, (s, o, d) in enumerate(zip(shape, offsets, src.view_shape)):
        if not (is_static(s) and s > 0):
            raise KernelTypeError(f"pypto.distributed.{what}: shape must hold positive ints, got {shape}")
        if is_static(o) and is_static(d) and (o < 0 or o + s > d):
            raise KernelValueError(f"pypto.distributed.{what}: window [{o}, {o + s}) of axis {axis} is outside "
                                   f"the shmem tensor's {d}")
    absolute = [a + o for a, o in zip(src.offsets, offsets)]
    return ShmemTensor(src.slot, absolute, shape, valid, src.signal)


def _record(op: str, args, rec=None) -> Tensor:
    rec = rec or current_recorder()
    pes = _pes(rec)
    rec.stack[-1].append(Comm(op, args, caller_location(), pes))
    return _token()


def _pes(rec) -> dict:
    pes = getattr(rec.session, "comm_pes", None)
    if pes is None:
        pes = rec.session.comm_pes = {}
    return pes


def _token() -> Tensor:
    """The dependency token an op returns (officially a tensor that only orders later ops)."""
    return wrap(Node("full", (), (1,), dt.DT_INT32, {"value": 0}))


# ---------------------------------------------------------------------------------------------- creation
def create_shmem_tensor(group_name: str, n_pes: int, dtype: dt.DataType, shape: List[int]) -> ShmemTensor:
    """A symmetric tensor of ``shape``/``dtype``: one copy on every PE of ``group_name``."""
    _group(group_name, "create_shmem_tensor")
    _n_pes(n_pes, "create_shmem_tensor")
    if not isinstance(dtype, dt.DataType) or dtype not in (dt.DT_INT32, dt.DT_FP16, dt.DT_FP32, dt.DT_BF16):
        raise KernelTypeError(f"pypto.distributed.create_shmem_tensor: dtype must be DT_INT32, DT_FP16, DT_FP32 "
                              f"or DT_BF16, got {dtype!r}")
    shape = [d.concrete() if isinstance(d, SymbolicScalar) and d.is_immediate() else d for d in shape]
    if not 2 <= len(shape) <= 4 or not all(is_static(d) and d > 0 for d in shape):
        raise KernelTypeError(f"pypto.distributed.create_shmem_tensor: shape must be 2 to 4 positive ints, "
                              f"got {shape}")
    rec = current_recorder()
    slot = _slot(group_name, n_pes, dtype, shape, rotating=bool(rec.loops))
    if slot.rotating:  # created in a loop body: a fresh tensor in every iteration (docs/distributed.md)
        _record("shmem_fresh", {"slot": slot}, rec)
    return ShmemTensor(slot, [0] * len(shape), shape, shape)


def create_shmem_signal(group_name: str, n_pes: int) -> ShmemTensor:
    """A signal tensor of ``group_name`` (for ``shmem_barrier_all`` and signals)."""
    _group(group_name, "create_shmem_signal")
    _n_pes(n_pes, "create_shmem_signal")
    return ShmemTensor(_slot(group_name, n_pes, dt.DT_INT32, [1, 1]), [0, 0], [1, 1], [1, 1], signal=True)


def _slot(group: str, n_pes: int, dtype, shape, rotating: bool = False) -> ShmemSlot:
    rec = current_recorder()
    count = getattr(rec, "shmem_count", 0)
    rec.shmem_count = count + 1
    key = f"{rec.session.kernel_name}/{count}/{dtype.name}{list(shape)}x{n_pes}{'r' if rotating else ''}"
    return ShmemSlot(group, key, dtype, tuple(int(d) for d in shape), n_pes, rotating)


def my_symbolic_pe(group_name: str) -> SymbolicScalar:
    """This process's PE in ``group_name`` (a run-time scalar: the kernel is the same on every PE)."""
    _group(group_name, "my_symbolic_pe")
    pes = _pes(current_recorder())
    var = pes.get(group_name)
    if var is None:
        var = pes[group_name] = ir.Var(f"pe_{''.join(c if c.isalnum() else '_' for c in group_name)}", dt.DT_INT64)
    return SymbolicScalar(var)


def shmem_view(src: ShmemTensor, shape: Optional[List[int]] = None, offsets: Optional[List[Any]] = None, *,
               valid_shape: Optional[List[Any]] = None) -> ShmemTensor:
    """The window ``shape`` at ``offsets`` of ``src`` (valid region ``valid_shape``)."""
    return _window(_shmem(src, "shmem_view"), shape, offsets, valid_shape, "shmem_view")


# ---------------------------------------------------------------------------------------------- transfers
def shmem_put(src: Tensor, offsets: List[Any], dst: ShmemTensor, dst_pe, *, put_op=AtomicType.SET,
              pred: Optional[List[Tensor]] = None) -> Tensor:
    """Write ``src`` into PE ``dst_pe``'s copy of ``dst`` at ``offsets`` (SET) or add it there (ADD)."""
    return _put("shmem_put", src, offsets, dst, dst_pe, put_op, pred, convert=True)


def _put(what, src, offsets, dst, dst_pe, put_op, pred, convert: bool) -> Tensor:
    """``shmem_put`` converts ``src`` to ``dst``'s dtype (the official multi-group test puts BF16 into an
    FP32 tensor); ``shmem_store``'s page requires equal dtypes."""
    dst = _shmem(dst, what, "dst")
    _pred(pred, what)
    n = node_of(src, f"pypto.distributed.{what} src")
    if n.dtype != dst.dtype:
        if not convert:
            raise KernelTypeError(f"pypto.distributed.{what}: src has dtype {n.dtype.name} but dst "
                                  f"{dst.dtype.name}; they must be equal")
        n = cast_node(n, dst.dtype)
    n = n if n.op == "gm" else materialize(n)
    if n.ndim != dst.dim:
        raise KernelTypeError(f"pypto.distributed.{what}: src is {n.ndim}-D but dst is {dst.dim}-D")
    offsets = list(offsets) if offsets is not None else [0] * dst.dim
    if len(offsets) != dst.dim:
        raise KernelTypeError(f"pypto.distributed.{what}: offsets need {dst.dim} entries, got {len(offsets)}")
    for axis, (e, o, d) in enumerate(zip(n.shape, offsets, dst.view_shape)):
        if is_static(e) and is_static(o) and is_static(d) and (o < 0 or o + e > d):
            raise KernelValueError(f"pypto.distributed.{what}: src (extent {e}) at offset {o} of axis {axis} does "
                                   f"not fit dst ({d})")
    region = [a + o for a, o in zip(dst.offsets, offsets)]
    return _record("shmem_put", {"src": n, "extents": list(n.shape), "slot": dst.slot,
                                 "pe": _pe_value(dst_pe, what, "dst_pe"), "dst_offsets": region,
                                 "atomic": _atomic(put_op, what, "put_op")})


def shmem_get(src: ShmemTensor, src_pe, shape: Optional[List[int]] = None, offsets: Optional[List[Any]] = None, *,
              valid_shape: Optional[List[Any]] = None, pred: Optional[List[Tensor]] = None) -> Tensor:
    """A local tensor holding the window ``shape`` at ``offsets`` of PE ``src_pe``'s copy of ``src``."""
    return _get("shmem_get", src, src_pe, shape, offsets, valid_shape, pred)


def _get(what, src, src_pe, shape, offsets, valid_shape, pred) -> Tensor:
    src = _shmem(src, what)
    _pred(pred, what)
    win = _window(src, shape, offsets, valid_shape, what)
    rec = current_recorder()
    buf = rec.new_temp(win.view_shape, win.dtype)
    nd = len(win.view_shape)
    extents = [min(v, s) if is_static(v) else sym_min(v, s) for v, s in zip(win.valid, win.view_shape)]
    leaf = gm_leaf(buf, [0] * nd, range(nd), extents)
    _record("shmem_get", {"dst": leaf, "extents": extents, "slot": win.slot, "pe": _pe_value(src_pe, what, "src_pe"),
                          "src_offsets": win.offsets}, rec)
    result = gm_leaf(buf, [0] * nd, range(nd), extents)
    if any(not (is_static(a) and a == b) for a, b in zip(extents, win.view_shape)):
        result.attrs["view_shape"] = tuple(win.view_shape)
    return wrap(result)


# ---------------------------------------------------------------------------------------------- signals
def shmem_signal(src: ShmemTensor, src_pe, signal: int, shape: Optional[List[int]] = None,
                 offsets: Optional[List[Any]] = None, *, target_pe, sig_op=AtomicType.SET,
                 pred: Optional[List[Tensor]] = None) -> Tensor:
    """Set (or add) ``signal`` to the counters of the window of PE ``src_pe``'s copy of ``src``, on PE
    ``target_pe`` (``-1``: on every PE)."""
    what = "shmem_signal"
    src = _shmem(src, what)
    _pred(pred, what)
    if isinstance(signal, bool) or not isinstance(signal, (int, SymbolicScalar)):
        raise KernelTypeError(f"pypto.distributed.{what}: signal must be an int, got {signal!r}")
    win = _window(src, shape, offsets, None, what)
    return _record("shmem_signal", {"slot": win.slot, "target_pe": _pe_value(target_pe, what, "target_pe"),
                                    "src_pe": _pe_value(src_pe, what, "src_pe"), "offsets": win.offsets,
                                    "extents": win.view_shape, "value": signal,
                                    "atomic": _atomic(sig_op, what, "sig_op")})


def shmem_wait_until(src: ShmemTensor, src_pe, cmp_value: int = 0, shape: Optional[List[int]] = None,
                     offsets: Optional[List[Any]] = None, *, cmp=OpType.EQ, clear_signal: bool = False,
                     pred: Optional[List[Tensor]] = None) -> Tensor:
    """Block until every counter of the window (signalled from ``src_pe``, on this PE) compares true
    with ``cmp_value``; then zero them when ``clear_signal``."""
    what = "shmem_wait_until"
    src = _shmem(src, what)
    _pred(pred, what)
    if not isinstance(cmp, OpType):
        raise KernelTypeError(f"pypto.distributed.{what}: cmp must be a pypto.OpType, got {cmp!r}")
    if isinstance(cmp_value, bool) or not isinstance(cmp_value, (int, SymbolicScalar)):
        raise KernelTypeError(f"pypto.distributed.{what}: cmp_value must be an int, got {cmp_value!r}")
    if not isinstance(clear_signal, bool):
        raise KernelTypeError(f"pypto.distributed.{what}: clear_signal must be a bool, got {clear_signal!r}")
    win = _window(src, shape, offsets, None, what)
    return _record("shmem_wait", {"slot": win.slot, "src_pe": _pe_value(src_pe, what, "src_pe"),
                                  "offsets": win.offsets, "extents": win.view_shape, "cmp": int(cmp),
                                  "value": cmp_value, "clear": clear_signal})


def shmem_barrier_all(src: ShmemTensor, pred: Optional[List[Tensor]] = None) -> Tensor:
    """Every PE of ``src``'s group reaches this point before any continues."""
    src = _shmem(src, "shmem_barrier_all")
    _pred(pred, "shmem_barrier_all")
    return _record("shmem_barrier", {"slot": src.slot})


def shmem_clear_data(src: ShmemTensor, shape: Optional[List[int]] = None, offsets: Optional[List[Any]] = None, *,
                     pred: Optional[List[Tensor]] = None) -> Tensor:
    """Zero the window of this PE's copy of ``src``."""
    src = _shmem(src, "shmem_clear_data")
    _pred(pred, "shmem_clear_data")
    win = _window(src, shape, offsets, None, "shmem_clear_data")
    return _record("shmem_clear", {"slot": win.slot, "offsets": win.offsets, "extents": win.view_shape,
                                   "what": "data"})


def shmem_clear_signal(src: ShmemTensor, *, pred: Optional[List[Tensor]] = None) -> Tensor:
    """Zero every signal counter of this PE's copy of ``src``."""
    src = _shmem(src, "shmem_clear_signal")
    _pred(pred, "shmem_clear_signal")
    return _record("shmem_clear", {"slot": src.slot, "what": "signal"})


def shmem_load(src: ShmemTensor, src_pe, shape: Optional[List[int]] = None, offsets: Optional[List[Any]] = None, *,
               pred: Optional[List[Tensor]] = None, valid_shape: Optional[List[Any]] = None) -> Tensor:
    """``pypto.experimental.shmem_load``: :func:`shmem_get` under its experimental name."""
    return _get("shmem_load", src, src_pe, shape, offsets, valid_shape, pred)


def shmem_store(src: Tensor, offsets: List[Any], dst: ShmemTensor, dst_pe, *, put_op=AtomicType.SET,
                pred: Optional[List[Tensor]] = None) -> Tensor:
    """``pypto.experimental.shmem_store``: :func:`shmem_put` under its experimental name."""
    return _put("shmem_store", src, offsets, dst, dst_pe, put_op, pred, convert=False)


__all__ = ["AtomicType", "ShmemTensor", "create_shmem_signal", "create_shmem_tensor", "my_symbolic_pe",
           "shmem_barrier_all", "shmem_clear_data", "shmem_clear_signal", "shmem_get", "shmem_put",
           "shmem_signal", "shmem_view", "shmem_wait_until"]
