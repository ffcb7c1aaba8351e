"""``pypto.experimental``: the official experimental tensor-level API (hicann/pypto
``docs/zh/api/tensor_api/operation/pypto-experimental-*.md`` and ``config/pypto-experimental-*``).

The ops are compositions of the regular tensor ops (``index_select``, ``matmul``, element-wise
ops, reductions), so they run on every backend; the official pages' memory-placement words (UB,
L1, "B matrix") name where the NPU keeps the result and change no value here.

* ``gather_in_ub(param, indices, block_table, block_size, axis=-2)`` / ``gather_in_l1(src, indices,
  block_table, block_size, size, is_b_matrix, is_trans)``: the rows of a paged KV cache named by
  logical token ids: token ``t`` lives in row ``block_table[0, t // block_size] * block_size +
  t % block_size``.  ``gather_in_l1`` keeps the first ``size`` columns; its result is ``[n, size]``
  whatever ``is_b_matrix`` / ``is_trans`` say (they describe the L1 layout the following matmul
  reads; the official kernels pass the result on with ``b_trans=True``).  The operand rules of both
  (indices declared ``[1, n]`` whose one row may be clipped at run time; source rows addressed through
  the whole GM tensor under a source view) are in ``ops/paged.py``.
* ``load(src, offsets)``: ``src`` flattened, read at ``offsets`` (the result has ``offsets``' shape).
* ``transposed_batchmatmul(a, b, out_dtype)``: ``(M, B, K) x (B, K, N) -> (M, B, N)``.
* ``online_softmax`` / ``online_softmax_update``: one block of a column-wise online softmax.
* ``set/get_operation_options`` (and the older ``set/get_operation_config``), ``assume_divisible``,
  ``set/get_runtime_options``.
* ``shmem_load`` / ``shmem_store`` are ``pypto.distributed.shmem_get`` / ``shmem_put`` (docs/distributed.md).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError

from .frontend.tracer import current_recorder, recording
from .options import note_knob
from .ops.core import materialize, node_of, out, same_dim
from .ops.elementwise import add, cast, exp, maximum, mul, sub
from .ops.indexing import INDEX_DTYPES, index_select, numel
from .ops.paged import int_arg, paged_gather
from .ops.matmul import cube_side_vec_tiles, default_cube_tiles, matmul
from .ops.reduce import amax
from .ops.reduce import sum as _sum
from .ops.shape import permute, reshape, view
from .stubs import not_implemented
from .symbolic import SymbolicScalar, format_dims, is_static
from .tensor import Tensor
from . import state


# ----------------------------------------------------------------------------------------- paged gathers
def gather_in_ub(param, indices, block_table, block_size: int, axis: int = -2) -> Tensor:
    """``[k, hidden]``: row ``j`` is the row of the paged KV cache ``param`` ([tokens, hidden]) holding
    logical token ``indices[0, j]`` (module docstring).  ``axis`` must be -2 (or 0).  A token whose
    block or row lies outside the tables raises ``KernelRuntimeError`` (``index_select``'s check)."""
    what = "pypto.experimental.gather_in_ub"
    if isinstance(axis, bool) or axis not in (-2, 0):
        raise KernelValueError(f"{what}: only axis=-2 is supported, got {axis!r}")
    return paged_gather(param, indices, block_table, block_size, what)


def gather_in_l1(src, indices, block_table, block_size: int, size: int, is_b_matrix: bool = False,
                 is_trans: bool = False) -> Tensor:
    """``[n, size]``: the first ``size`` columns of the rows of ``src`` ([tokens, cols], FP32/FP16/BF16/
    INT8) holding the logical tokens ``indices[0, :]`` (module docstring; ``size <= cols``).
    ``is_b_matrix`` / ``is_trans`` are layout hints of the NPU's L1 copy (bools, no effect on values)."""
    what = "pypto.experimental.gather_in_l1"
    s = node_of(src, f"{what} src")
    if s.dtype not in (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16, dt.DT_INT8):
        raise KernelTypeError(f"{what}: src must be FP32, FP16, BF16 or INT8, got {s.dtype.name}")
    for name, v in (("is_b_matrix", is_b_matrix), ("is_trans", is_trans)):
        if not isinstance(v, bool):
            raise KernelTypeError(f"{what}: {name} must be a bool, got {v!r}")
    size = int_arg(size, what, "size")
    cols = s.shape[1]
    if is_static(cols) and size > cols:
        raise KernelValueError(f"{what}: size {size} exceeds the {cols} columns of src")
    with cube_side_vec_tiles("k", "k"):  # the NPU gathers straight into L1: official kernels set cube tiles only
        part = src if is_static(cols) and size == cols else view(src, [s.shape[0], size], [0, 0])
        return paged_gather(part, indices, block_table, block_size, what)


def load(src, offsets) -> Tensor:
    """``src`` flattened (row-major) read at ``offsets`` (2-D or 3-D INT32/INT64): a tensor of
    ``offsets``' shape and ``src``'s dtype.  An offset outside ``[0, src.numel())`` raises
    ``KernelRuntimeError``."""
    what = "pypto.experimental.load"
    s, o = node_of(src, f"{what} src"), node_of(offsets, f"{what} offsets")
    if o.dtype not in INDEX_DTYPES or o.ndim not in (2, 3):
        raise KernelTypeError(f"{what}: offsets must be a 2-D or 3-D INT32/INT64 tensor, got "
                              f"{format_dims(o.shape)} {o.dtype.name}")
    flat = reshape(src, [numel(s.shape)])
    got = index_select(flat, 0, reshape(offsets, [numel(o.shape)]))
    return reshape(got, list(o.shape))


# ----------------------------------------------------------------------------------------- matmul / softmax
def transposed_batchmatmul(tensor_a, tensor_b, out_dtype) -> Tensor:
    """``(M, B, K) x (B, K, N) -> (M, B, N)``: ``a`` permuted to ``(B, M, K)``, the batched product with
    ``b`` accumulated in FP32 and rounded once to ``out_dtype``, permuted back.  Inputs FP16 or BF16
    (the same dtype), ``out_dtype`` FP16 or BF16 (the page's types).  Cube tiles: those in scope, else
    ``matmul.DEFAULT_CUBE_TILES`` (the page sets none)."""
    what = "pypto.experimental.transposed_batchmatmul"
    a, b = node_of(tensor_a, f"{what} tensor_a"), node_of(tensor_b, f"{what} tensor_b")
    half = (dt.DT_FP16, dt.DT_BF16)
    if a.dtype not in half or b.dtype != a.dtype:
        raise KernelTypeError(f"{what}: tensor_a and tensor_b must both be FP16 or both BF16, got {a.dtype.name} "
                              f"and {b.dtype.name}")
    if out_dtype not in half:
        raise KernelTypeError(f"{what}: out_dtype must be pypto.DT_FP16 or pypto.DT_BF16, got {out_dtype!r}")
    if a.ndim != 3 or b.ndim != 3:
        raise KernelTypeError(f"{what}: tensor_a (M, B, K) and tensor_b (B, K, N) must be 3-D, got {a.ndim} and "
                              f"{b.ndim} dims")
    if not (same_dim(a.shape[1], b.shape[0]) and same_dim(a.shape[2], b.shape[1])):
        raise KernelTypeError(f"{what}: shapes {format_dims(a.shape)} (M, B, K) and {format_dims(b.shape)} (B, K, N) "
                              "do not match")
    with default_cube_tiles():
        c = out(materialize(node_of(matmul(permute(tensor_a, [1, 0, 2]), tensor_b, out_dtype))))
    return permute(c, [1, 0, 2])


def _fp32_2d(t, what: str, name: str):
    n = node_of(t, f"{what} {name}")
    if n.dtype != dt.DT_FP32 or n.ndim != 2:
        raise KernelTypeError(f"{what}: {name} must be a 2-D FP32 tensor, got {format_dims(n.shape)} {n.dtype.name}")
    return n


def online_softmax(scores, scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    """One block of a column-wise online softmax of ``scores`` ([k_len, q_len], FP32): with ``s = scores
    * scale``, returns ``(exp(s - column_max) as BF16, column_max [1, q_len] FP32, column_sum [1, q_len]
    FP32)``.  Decision (the page is silent): ``column_sum`` adds the FP32 exponentials, before their
    rounding to BF16."""
    what = "pypto.experimental.online_softmax"
    _fp32_2d(scores, what, "scores")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise KernelTypeError(f"{what}: scale must be a float, got {scale!r}")
    s = mul(scores, float(scale))
    m = amax(s, 0, keepdim=True)
    e = exp(sub(s, m))
    return cast(e, dt.DT_BF16), m, _sum(e, 0, keepdim=True)


def online_softmax_update(previous_max, previous_sum, previous_output, current_max, current_sum,
                          current_output) -> Tuple[Tensor, Tensor, Tensor]:
    """Merge two online-softmax states (FP32; maxima and sums [1, q_len], outputs [head_dim, q_len]):
    ``m = max(pm, cm)``, ``a = exp(pm - m)``, ``b = exp(cm - m)``; returns ``(m, ps * a + cs * b,
    po * a + co * b)`` (the unnormalised output; divide by the sum at the end)."""
    what = "pypto.experimental.online_softmax_update"
    stats = [_fp32_2d(t, what, name) for t, name in ((previous_max, "previous_max"), (previous_sum, "previous_sum"),
                                                      (current_max, "current_max"), (current_sum, "current_sum"))]
    po = _fp32_2d(previous_output, what, "previous_output")
    co = _fp32_2d(current_output, what, "current_output")
    if not all(same_dim(a, b) for a, b in zip(po.shape, co.shape)):
        raise KernelTypeError(f"{what}: current_output {format_dims(co.shape)} must have previous_output's shape "
                              f"{format_dims(po.shape)}")
    for n in stats:
        if not (is_static(n.shape[0]) and n.shape[0] == 1 and same_dim(n.shape[1], po.shape[1])):
            raise KernelTypeError(f"{what}: maxima and sums must be [1, {po.shape[1]}], got {format_dims(n.shape)}")
    m = maximum(previous_max, current_max)
    a, b = exp(sub(previous_max, m)), exp(sub(current_max, m))
    return (m, add(mul(previous_sum, a), mul(current_sum, b)),
            add(mul(previous_output, a), mul(current_output, b)))


# ----------------------------------------------------------------------------------------- options
#: operation options and their defaults.  Both ask the codegen to broadcast a [m, 1] operand inline
#: (a brcb-expanded row instead of a materialised [m, n] copy); the lowering here always does that
#: (row/column operands are [TR, 1] / [1, TC] tiles combined by expand ops), so either value is
#: accepted, read back, and changes nothing.
_OPERATION_DEFAULTS: Dict[str, bool] = {"combine_axis": False, "force_combine_axis": False}
_OPERATION_GLOBAL: Dict[str, bool] = state.OPERATION_OPTIONS  # process-wide: state.py


def _set_operation(what: str, values: Dict[str, Any]) -> None:
    given = {k: v for k, v in values.items() if v is not None}
    for k, v in given.items():
        if not isinstance(v, bool):
            raise ValueError(f"{what}: {k} must be a bool, got {v!r}")
    if recording():  # scoped to the kernel being recorded (the page: the current jit)
        rec = current_recorder()
        rec.operation_options = {**getattr(rec, "operation_options", {}), **given}
    else:
        _OPERATION_GLOBAL.update(given)


def set_operation_options(*, combine_axis: Optional[bool] = None, force_combine_axis: Optional[bool] = None) -> None:
    """``combine_axis`` (and the older ``force_combine_axis``): bools, see :data:`_OPERATION_DEFAULTS`.
    Inside a kernel the setting applies to that kernel only; outside, to every later one."""
    _set_operation("pypto.experimental.set_operation_options", dict(combine_axis=combine_axis,
                                                                     force_combine_axis=force_combine_axis))


def get_operation_options() -> Dict[str, Any]:
    """The operation options in scope (defaults filled in)."""
    got = {**_OPERATION_DEFAULTS, **_OPERATION_GLOBAL}
    if recording():
        got.update(getattr(current_recorder(), "operation_options", {}))
    return got


def set_operation_config(*, force_combine_axis: Optional[bool] = None, combine_axis: Optional[bool] = None) -> None:
    """The older name of :func:`set_operation_options` (docs/api/operation/pypto-experimental-set_operation_config.md)."""
    _set_operation("pypto.experimental.set_operation_config", dict(combine_axis=combine_axis,
                                                                    force_combine_axis=force_combine_axis))


def get_operation_config() -> Dict[str, Any]:
    """The older name of :func:`get_operation_options`."""
    return get_operation_options()


_RUNTIME_DEFAULTS: Dict[str, List[int]] = {"stitch_function_num_per_pool": [0, 0, 0]}
_RUNTIME_GLOBAL: Dict[str, List[int]] = state.RUNTIME_OPTIONS  # process-wide: state.py


def set_runtime_options(*, stitch_function_num_per_pool: Optional[Sequence[int]] = None) -> None:
    """``stitch_function_num_per_pool``: 3 ints in ``[0, 1024]`` sizing the NPU's three workspace
    sub-pools (``[0, 0, 0]``: off, the default).  Like the other NPU scheduling knobs (docs/tensor.md
    "Options") it cannot change results: it is recorded (``get_runtime_options`` reports it), logged
    once at INFO, and has no effect (workspaces are allocated per buffer, there are no pools to size).
    Not inside a kernel (the page's rule)."""
    what = "pypto.experimental.set_runtime_options"
    if recording():
        raise KernelTypeError(f"{what} must be called outside a kernel")
    if stitch_function_num_per_pool is None:
        return
    v = stitch_function_num_per_pool
    if not isinstance(v, (list, tuple)) or len(v) != 3 or any(
            isinstance(e, bool) or not isinstance(e, int) or not 0 <= e <= 1024 for e in v):
        raise ValueError(f"{what}: stitch_function_num_per_pool must be 3 ints in [0, 1024], got {v!r}")
    if list(v) != _RUNTIME_DEFAULTS["stitch_function_num_per_pool"]:
        note_knob("experimental.runtime", "stitch_function_num_per_pool", list(v))
    _RUNTIME_GLOBAL["stitch_function_num_per_pool"] = list(v)


def get_runtime_options() -> Dict[str, Any]:
    """The experimental runtime options (defaults filled in)."""
    return {k: list(_RUNTIME_GLOBAL.get(k, d)) for k, d in _RUNTIME_DEFAULTS.items()}


def reset() -> None:
    """Forget the process-wide experimental settings (called by ``pypto.reset_options``)."""
    _OPERATION_GLOBAL.clear()
    _RUNTIME_GLOBAL.clear()


def assume_divisible(expr, divisor: int) -> SymbolicScalar:
    """Declare that ``expr`` (a SymbolicScalar or an int) is a multiple of ``divisor`` (an int > 0);
    returns ``expr`` as a SymbolicScalar, its value unchanged.  A known value that is not a multiple,
    or ``divisor <= 0``, raises ``KernelValueError`` (a ``ValueError``).  The declaration is an
    optimisation hint the lowering here does not need; as on the NPU it is not checked at run time
    unless ``debug_options["runtime_debug_mode"] == 4``, where a launch whose sizes break it raises
    ``KernelRuntimeError`` (an expression of loop indices cannot be checked at launch and raises
    ``NotImplementedError`` there)."""
    what = "pypto.experimental.assume_divisible"
    if isinstance(divisor, bool) or not isinstance(divisor, int):
        raise KernelTypeError(f"{what}: divisor must be an int, got {divisor!r}")
    if divisor <= 0:
        raise KernelValueError(f"{what}: divisor must be positive, got {divisor}")
    if isinstance(expr, bool) or not isinstance(expr, (int, SymbolicScalar)):
        raise KernelTypeError(f"{what}: expr must be a SymbolicScalar or an int, got {expr!r}")
    s = expr if isinstance(expr, SymbolicScalar) else SymbolicScalar(expr)
    if s.is_concrete():
        if s.concrete() % divisor:
            raise KernelValueError(f"{what}: {s.concrete()} is not a multiple of {divisor}")
    elif recording():
        assumptions = current_recorder().session.assumptions
        if not any(e is s.expr and d == divisor for e, d in assumptions):
            assumptions.append((s.expr, divisor))
    return s


from .distributed import shmem_load, shmem_store  # noqa: E402 (multi-process shared memory)


__all__ = ["gather_in_ub", "gather_in_l1", "load", "transposed_batchmatmul", "online_softmax",
           "online_softmax_update", "set_operation_options", "get_operation_options", "set_operation_config",
           "get_operation_config", "set_runtime_options", "get_runtime_options", "assume_divisible",
           "shmem_load", "shmem_store"]

