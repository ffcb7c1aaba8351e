"""``pypto.from_torch``: a host tensor seen as a ``pypto.Tensor``.

The result is a tensor annotation (shape, dtype, name, format) that also carries the torch tensor
(``.data``, shared memory, never copied).  It is what ``pypto.runtime._device_run_once_data_from_host``
binds to the parameters of a ``with pypto.function(...)`` program, and it may be passed to a
``@pypto.frontend.jit`` kernel in place of the torch tensor itself (the kernel then writes the torch
tensor's memory).
"""
from __future__ import annotations

from typing import Any, List, Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.runtime.args import as_numpy, carried_as, is_torch_tensor
from pypto_pro.runtime.gm_format import FRACTAL_NZ, npu_format_of, nz_aligned_shape

from . import state
from .tensor import DYNAMIC, Tensor, TileOpFormat

_count = state.FROM_TORCH_COUNT  # process-wide: state.py


def host_array(t: Tensor, what: str):
    """The numpy view of a ``from_torch`` tensor's data, seen as its declared dtype (same bytes)."""
    arr = carried_as(as_numpy(t.data, what), t.ann_dtype)
    want = t.ann_dtype.np_dtype if t.ann_dtype is not None else None
    if want is None and t.ann_dtype is not None and dt.from_numpy(arr.dtype) != t.ann_dtype:
        raise NotImplementedError(f"{what}: {t.ann_dtype.name} data (the format has no host type here)")
    return arr if want is None or arr.dtype == want else arr.view(want)


def from_torch(tensor: Any, name: str = "", *, dynamic_axis: Optional[List[int]] = None,
               tensor_format: Optional[str] = None, dtype: Optional[dt.DataType] = None) -> Tensor:
    """``pypto.from_torch(t, name="", *, dynamic_axis=None, tensor_format=None, dtype=None)``.

    ``dynamic_axis`` marks axes DYNAMIC in ``.shape`` (their size stays that of ``t``); ``dtype``
    re-declares the element type of the same bytes (an 8-bit float format in a ``uint8`` tensor, as
    kernels take them); ``tensor_format`` declares the storage format, by default the one
    ``torch_npu.npu_format_cast`` gave ``t`` (ND otherwise).  An NZ tensor's shape is its runtime shape:
    the last axis rounded up to C0 elements, the one before to 16 (frontend/nz_args.py).  An unnamed
    tensor gets a fresh name."""
    if not is_torch_tensor(tensor):
        raise KernelTypeError(f"pypto.from_torch takes a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_contiguous():
        raise KernelValueError("pypto.from_torch: the tensor must be contiguous (call .contiguous() first)")
    found = dt.from_numpy(as_numpy(tensor, "pypto.from_torch").dtype)
    if found is None:
        raise KernelTypeError(f"pypto.from_torch: unsupported torch dtype {tensor.dtype}")
    if dtype is not None and dtype != found:
        if not isinstance(dtype, dt.DataType):
            raise KernelTypeError(f"pypto.from_torch: dtype must be a pypto.DT_* type, got {dtype!r}")
        if dtype.bits() != found.bits():
            raise KernelValueError(f"pypto.from_torch: dtype {dtype.name} has {dtype.bits()}-bit elements, the "
                                   f"tensor {found.name} {found.bits()}-bit ones")
    if tensor_format is None:
        tensor_format = TileOpFormat.TILEOP_NZ if npu_format_of(tensor) == FRACTAL_NZ else TileOpFormat.TILEOP_ND
    shape: List[Any] = [int(d) for d in tensor.shape]
    if tensor_format == TileOpFormat.TILEOP_NZ:
        shape = nz_aligned_shape(shape, (dtype or found).nbytes)
    for axis in dynamic_axis or ():
        if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            raise KernelValueError(f"pypto.from_torch: dynamic_axis {axis!r} is not an axis of shape {shape}")
        shape[axis] = DYNAMIC
    if not name:
        name = f"from_torch_{_count[0]}"
        _count[0] += 1
    result = Tensor(shape or None, dtype or found, name, tensor_format)
    if not shape:
        result.ann_dims = []
    result.data = tensor
    return result


__all__ = ["from_torch", "host_array"]
