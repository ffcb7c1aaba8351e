"""Launch-time argument binding: torch tensors / numpy arrays -> zero-copy numpy views, checked.

Every mismatch (arity, rank, fixed dim, dtype, device, scalar type) raises ``KernelLaunchError``
naming the parameter with the expected and actual values, before anything runs.
"""
from __future__ import annotations

import weakref
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

from .. import dtypes as dt
from ..errors import KernelLaunchError, KernelLaunchValueError
from ..ir import nodes as ir
from ..ir.nodes import ScalarParam, Var
from ..ir.types import Layout
from .fastpath import torch_tensor_type
from .gm_format import FRACTAL_NZ, format_name, is_nz, mismatch_hint, npu_format_of, nz_shape_problem
from .tensor_checks import overlap_message, overlapping, torch_problem

_TORCH_VIEW = {  # torch dtypes numpy cannot hold directly: reinterpret through an int view
    "torch.bfloat16": ("int16", ml_dtypes.bfloat16),
    "torch.float8_e4m3fn": ("uint8", ml_dtypes.float8_e4m3fn),
    "torch.float8_e5m2": ("uint8", ml_dtypes.float8_e5m2),
}
if hasattr(ml_dtypes, "float8_e8m0fnu"):  # ml_dtypes >= 0.5
    _TORCH_VIEW["torch.float8_e8m0fnu"] = ("uint8", ml_dtypes.float8_e8m0fnu)
_TORCH_VIEW["torch.float4_e2m1fn_x2"] = ("uint8", np.uint8)  # two packed FP4 E2M1 codes per element


def is_torch_tensor(value) -> bool:
    """A torch tensor, of torch.Tensor or a subclass (nn.Parameter, a user's ``__torch_function__`` class),
    or another torch type that acts as one (without importing torch)."""
    tt = torch_tensor_type()
    if tt is not None and isinstance(value, tt):
        return True
    return type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "device")


def as_numpy(value, what: str) -> np.ndarray:
    """A numpy array sharing memory with ``value`` (torch CPU tensor or numpy array)."""
    if isinstance(value, np.ndarray):
        return value
    if is_torch_tensor(value):
        problem = torch_problem(value)
        if problem is not None:
            raise KernelLaunchError(f"{what}: {problem}")
        if not value.is_cpu:  # is_cpu, not device: the stand-in's NZ tensors report their NPU (npu/formats.py)
            raise KernelLaunchError(f"{what}: tensor is on device '{value.device}'; this build runs kernels on the "
                                    f"CPU — pass CPU tensors (tensor.cpu())")
        import torch

        t = value.detach()
        special = _TORCH_VIEW.get(str(t.dtype))
        if special is not None:
            int_dtype, np_dtype = special
            return t.view(getattr(torch, int_dtype)).numpy().view(np_dtype)
        try:
            return t.numpy()
        except TypeError as e:  # numpy has no such dtype (float8_e4m3fnuz, ...)
            name = str(t.dtype).replace("torch.", "")
            raise KernelLaunchError(f"{what}: torch dtype {name} has no PyPTO dtype ({e}); convert it to the "
                                    f"parameter's dtype with t.to(...), or pass its bytes (t.view(torch.uint8)) to "
                                    f"a UINT8 or 8-bit float parameter") from None
        except RuntimeError as e:
            raise KernelLaunchError(f"{what}: cannot share memory with this torch tensor ({e})") from None
    raise KernelLaunchError(f"{what}: expected a torch tensor or numpy array, got {type(value).__name__}")


def carried_as(arr: np.ndarray, dtype: Optional[dt.DataType]) -> np.ndarray:
    """``arr`` seen as ``dtype`` when it is a UINT8 carrier of an 8-bit float format, or an integer array of
    the same width and other signedness (docs/tensor.md "Calling": torch
    has no HF8/FP8 type on every version, so kernels take the bytes as ``uint8``); otherwise ``arr``.
    Zero-copy.  HF8 is stored as its uint8 codes (dtypes.DT_HF8), so its carrier is taken as is."""
    if dtype is not None and dt.is_packed_gm(dtype):
        return arr  # packed 4-bit codes: the bytes themselves (dtypes.PACKED_GM)
    if dtype is not None and arr.dtype == np.uint8 and dtype.kind == "float" and dtype.bits() == 8:
        if dtype.np_dtype is None:
            raise NotImplementedError(f"{dtype.name} tensor arguments (the format has no host type here, so its "
                                      f"values can be neither checked nor computed on)")
        return arr.view(dtype.np_dtype)
    want = dtype.np_dtype if dtype is not None else None
    if want is not None and arr.dtype != want and arr.dtype.kind in "iu" and np.dtype(want).kind in "iu" \
            and arr.dtype.itemsize == np.dtype(want).itemsize:
        # the same integer bits under the other signedness: torch has no uint16/32/64 tensors on most
        # versions, so UINT32 data travels as int32 (and the official launch passes raw pointers)
        return arr.view(want)
    return arr


def _dtype_name(arr: np.ndarray) -> str:
    found = dt.from_numpy(arr.dtype)
    return f"{found.name} ({arr.dtype})" if found else str(arr.dtype)


class ParamSpec:
    """A kernel parameter as declared: a tensor annotation, a scalar dtype, or a TilingData dataclass.

    A TilingData parameter (always the last one) is flattened: field k is the scalar at index
    ``index + k``, the numbering the parser gives its per-field scalar parameters."""

    def __init__(self, name: str, index: int, tensor=None, scalar: dt.DataType = None, tiling=None,
                 pointer: dt.DataType = None):
        self.name = name
        self.index = index
        self.tensor = tensor
        self.dtype = tensor.dtype if tensor is not None else pointer if pointer is not None else scalar
        self.tiling = tiling  # the dataclass, for TilingData parameters
        self.pointer = pointer  # the element type, for pl.Ptr parameters


def bind_arguments(kernel_name: str, params: Sequence[ParamSpec], args: Sequence[Any]
                   ) -> Tuple[Dict[int, np.ndarray], Dict[int, Any], Tuple]:
    """Check ``args`` against the declared parameters.

    Returns (tensor arrays by parameter index, scalar values by parameter index, STATIC-dims key)."""
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise KernelLaunchError(f"expected {len(params)} arguments ({names}), got {len(args)}", kernel=kernel_name)
    tensors: Dict[int, np.ndarray] = {}
    scalars: Dict[int, Any] = {}
    static: List[Tuple[str, Tuple[int, ...]]] = []
    for p, value in zip(params, args):
        what = f"argument '{p.name}'"
        if p.tensor is not None:
            try:
                arr = carried_as(as_numpy(value, what), p.dtype)
            except KernelLaunchError as e:
                raise e.attach(kernel=kernel_name)
            declared = list(p.tensor.dims)
            if declared and declared[-1] is Ellipsis:
                if arr.ndim < len(declared) - 1:
                    raise KernelLaunchError(f"{what}: expected at least {len(declared) - 1} dims, got shape "
                                            f"{list(arr.shape)}", kernel=kernel_name)
            elif arr.ndim != len(declared):
                raise KernelLaunchError(f"{what}: expected a {len(declared)}-D tensor {declared_str(declared)}, "
                                        f"got shape {list(arr.shape)}", kernel=kernel_name)
            if arr.dtype != dt.gm_np_dtype(p.dtype):
                packed = " (packed two per byte: a uint8 tensor)" if dt.is_packed_gm(p.dtype) else ""
                raise KernelLaunchError(f"{what}: expected dtype {p.dtype.name}{packed}, got {_dtype_name(arr)}",
                                        kernel=kernel_name)
            element_strides(arr, what, kernel_name)
            check_gm_format(kernel_name, what, p.tensor.layout == Layout.NZ, value, arr)
            static_dims = []
            for i, d in enumerate(declared):
                if d is Ellipsis:
                    static_dims.extend(arr.shape[i:])
                    break
                if isinstance(d, int):
                    if arr.shape[i] != d:
                        raise KernelLaunchError(f"{what}: dim {i} must be {d} (shape {declared_str(declared)}), got "
                                                f"shape {list(arr.shape)}", kernel=kernel_name)
                elif getattr(d, "name", "") == "STATIC":
                    static_dims.append(arr.shape[i])
            static.append((p.name, tuple(static_dims)))
            tensors[p.index] = arr
        elif p.pointer is not None:
            tensors[p.index] = bind_pointer(kernel_name, p, value)
        elif p.tiling is not None:
            scalars.update(bind_tiling(kernel_name, p, value))
        else:
            scalars[p.index] = check_scalar(kernel_name, p, value)
    return tensors, scalars, tuple(static)


def element_strides(arr: np.ndarray, what: str, kernel_name: str) -> List[int]:
    """``arr``'s strides in elements, as kernels address tensors.  A byte stride that is not a whole
    number of elements (a numpy view built with a byte offset) raises KernelLaunchError on every
    backend."""
    size = arr.itemsize
    strides = []
    for st in arr.strides:
        if st % size:
            raise KernelLaunchError(f"{what}: stride {st} bytes is not a multiple of the element size {size}; kernels "
                                    f"address whole elements: pass an array with element-aligned strides (e.g. "
                                    f"np.ascontiguousarray, copying results back)", kernel=kernel_name)
        strides.append(st // size)
    return strides


class NullPointer(np.ndarray):
    """The memory of a ``None`` passed for a ``pl.Ptr`` parameter: no elements (every access is out of
    bounds), and the address 0 (:func:`pointer_address`)."""


def pointer_address(arr: np.ndarray) -> int:
    """The address a ``pl.Ptr`` argument's pointer holds in the kernel: its host data address, 0 for None."""
    return 0 if isinstance(arr, NullPointer) else int(arr.ctypes.data)


def bind_pointer(kernel_name: str, p: ParamSpec, value) -> np.ndarray:
    """The memory of a ``pl.Ptr[dtype]`` argument: any C-contiguous tensor or array, its bytes seen as a
    flat run of ``dtype`` elements (a view, no copy); ``None`` is the null pointer (officially optional
    inputs are passed so), which holds no element."""
    what = f"argument '{p.name}'"
    if value is None:
        return np.empty(0, p.pointer.np_dtype).view(NullPointer)
    if is_nz(value):
        raise KernelLaunchValueError(f"{what}: a pl.Ptr parameter reads the argument's bytes, and the bytes of a "
                                     f"FRACTAL_NZ tensor on the NPU are its fractal storage, which the portable "
                                     f"backends do not lay out; pass an ND tensor (torch_npu.npu_format_cast(t, 2)) "
                                     f"or declare a pl.Tensor[..., pl.NZ] parameter", kernel=kernel_name)
    try:
        arr = as_numpy(value, what)
    except KernelLaunchError as e:
        raise e.attach(kernel=kernel_name)
    if not arr.flags.c_contiguous:
        raise KernelLaunchError(f"{what}: a pl.Ptr argument must be contiguous memory, got a strided view of shape "
                                f"{list(arr.shape)} (pass .contiguous() / np.ascontiguousarray)", kernel=kernel_name)
    size = p.pointer.nbytes
    if arr.nbytes % size:
        raise KernelLaunchError(f"{what}: {arr.nbytes} bytes are not a whole number of {p.pointer.name} elements "
                                f"({size} bytes each)", kernel=kernel_name)
    return arr.reshape(-1).view(np.uint8).view(p.pointer.np_dtype)


def check_gm_format(kernel_name: str, what: str, declared_nz: bool, value, arr: np.ndarray) -> None:
    """The argument's storage format (its ``npu_format_cast`` tag, :mod:`.gm_format`) is the one its tile-level
    parameter declares, and an NZ one is whole fractals; ``KernelLaunchValueError`` otherwise (the board
    would read one format's bytes as the other: the official launch passes the pointer unchecked)."""
    fmt = npu_format_of(value)
    if declared_nz != (fmt == FRACTAL_NZ):
        raise KernelLaunchValueError(f"{what}: a {format_name(fmt)} tensor given to a parameter declared "
                                     f"{'pl.NZ' if declared_nz else 'pl.ND'}; {mismatch_hint(declared_nz)}",
                                     kernel=kernel_name)
    if declared_nz:
        problem = nz_shape_problem(arr.shape, arr.dtype.itemsize)
        if problem:
            raise KernelLaunchValueError(f"{what}: {problem}", kernel=kernel_name)


def bind_tiling(kernel_name: str, p: ParamSpec, value) -> Dict[int, Any]:
    """The checked field values of a TilingData argument, keyed by their flattened scalar index."""
    from ..language.annotations import tiling_fields, tiling_slots

    if not isinstance(value, p.tiling):
        raise KernelLaunchError(f"argument '{p.name}': expected a {p.tiling.__name__} instance, got "
                                f"{type(value).__name__}", kernel=kernel_name)
    for f in tiling_fields(p.tiling):
        if f.length is not None:
            items = getattr(value, f.name)
            if not isinstance(items, (list, tuple)) or len(items) != f.length:
                got = f"{len(items)} elements" if isinstance(items, (list, tuple)) else type(items).__name__
                raise KernelLaunchValueError(f"argument '{p.name}.{f.name}': expected a list of {f.length} values "
                                        f"(declared {f.dtype.name}[{f.length}]), got {got}", kernel=kernel_name)
    out = {}
    for k, (label, dtype, field, element) in enumerate(tiling_slots(p.tiling)):
        spec = ParamSpec(f"{p.name}.{label}", p.index + k, scalar=dtype)
        item = getattr(value, field)
        out[p.index + k] = check_scalar(kernel_name, spec, item if element is None else item[element])
    return out


def declared_str(declared) -> str:
    return "[" + ", ".join("..." if d is Ellipsis else str(getattr(d, "name", d)) for d in declared) + "]"


def check_scalar(kernel_name: str, p: ParamSpec, value):
    what = f"argument '{p.name}'"
    if isinstance(value, np.generic):
        value = value.item()
    if is_torch_tensor(value) and value.ndim == 0:
        value = value.item()
    d = p.dtype
    if d.kind == "bool":
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise KernelLaunchError(f"{what}: expected a bool, got {value!r}", kernel=kernel_name)
        return bool(value)
    if d.is_float():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise KernelLaunchError(f"{what}: expected a number ({d.name}), got {type(value).__name__}",
                                    kernel=kernel_name)
        return float(np.asarray(value, dtype=d.require_numpy()).astype(np.float32))
    if not isinstance(value, int):
        raise KernelLaunchError(f"{what}: expected an int ({d.name}), got {type(value).__name__}", kernel=kernel_name)
    info = np.iinfo(d.require_numpy())
    if info.min < 0 and info.max < value < 2 * (info.max + 1):
        # the unsigned bit pattern of a signed scalar (e.g. struct.unpack("I", <float bytes>) passed as INT32):
        # the launch ABI passes the bits, as ctypes' c_int32 does officially
        value -= 2 * (info.max + 1)
    if not info.min <= value <= info.max:
        bits = d.bits()
        raise KernelLaunchError(f"{what}: {value} does not fit {d.name} (values in [{info.min}, {info.max}], or an "
                                f"unsigned {bits}-bit pattern below 2**{bits})", kernel=kernel_name)
    return int(value)


def runtime_scalars(params: Sequence[Any], tensors: Dict[int, np.ndarray], scalars_by_index: Dict[int, Any]
                    ) -> Dict[int, Any]:
    """Values of every runtime Var of a parsed kernel: scalar parameters, DYNAMIC dims and the addresses
    of the pointer parameters whose value the kernel uses."""
    values: Dict[int, Any] = {}
    for p in params:
        if isinstance(p, ScalarParam):
            values[p.var.uid] = scalars_by_index[p.index]
        else:
            arr = tensors[p.index]
            for i, d in enumerate(p.dims):
                if isinstance(d, Var):
                    values[d.uid] = int(arr.shape[i])
            if getattr(p, "address", None) is not None:
                values[p.address.uid] = pointer_address(arr)
    return values


_WRITTEN: "weakref.WeakKeyDictionary[ir.KernelIR, FrozenSet[int]]" = weakref.WeakKeyDictionary()


def written_params(kernel: ir.KernelIR) -> FrozenSet[int]:
    """Indices of the GM tensor parameters ``kernel`` may write (computed once per parsed kernel).

    A parameter is written when it is the operand of an op's "out"/"inout" role (store, store_tile,
    setval, atomic stores, ...) or one of sync_all's workspaces, on any path through the kernel."""
    found = _WRITTEN.get(kernel)
    if found is None:
        indices = set()
        for s in ir.walk(kernel.body):
            if not isinstance(s, ir.OpStmt):
                continue
            names = [p.name for p in s.op.params if p.role in ("out", "inout")]
            names += s.op.writes_args  # e.g. sync_all's SOFT-mode workspaces hold its counters
            for name in names:
                value = s.args.get(name)
                for v in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(v, ir.TensorParam):
                        indices.add(v.index)
        found = _WRITTEN[kernel] = frozenset(indices)
    return found


def check_writeable(kernel: ir.KernelIR, tensors: Dict[int, np.ndarray]) -> None:
    """Reject a read-only array (``np.broadcast_to`` views, ``setflags(write=False)``) or one whose elements
    share memory (``expand``) bound to a parameter the kernel writes, before anything runs (docs/contract.md
    "Errors"); such inputs are fine."""
    written = written_params(kernel)
    for p in kernel.tensor_params:
        if p.index not in written:
            continue
        arr = tensors[p.index]
        if not arr.flags.writeable:
            raise KernelLaunchError(f"argument '{p.name}': the kernel writes this tensor, but the array is "
                                    f"read-only (numpy writeable=False); pass a writeable array, e.g. a copy",
                                    kernel=kernel.name)
        if not arr.flags.c_contiguous:
            strides = [st // arr.itemsize for st in arr.strides]
            if overlapping(arr.shape, strides):
                raise KernelLaunchError(f"argument '{p.name}': {overlap_message(arr.shape, strides)}",
                                        kernel=kernel.name)
