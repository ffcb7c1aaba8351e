"""NPU storage formats under the CPU stand-in: ``torch_npu.Format``, ``npu_format_cast``, ``get_npu_format``.

A format cast on an NPU changes how a tensor is stored, never its logical values: the cast tensor has
the same shape, ``.cpu()`` returns the same values, and kernels address it with logical offsets
(:mod:`pypto_pro.runtime.gm_format`).  So the stand-in implements the cast exactly as a copy with the
same values that remembers its format: an :class:`NpuFormatTensor`.  That tag is what
``get_npu_format`` reads, what a launch checks against the kernel's declared format, and what makes
the tensor-level runtime present an NZ argument in its padded shape.

The tag lives on the tensor's storage, as the format does on the NPU: ``.to("npu")``, ``.npu()``,
in-place ops and views (``reshape``, ``view``, slices) keep it; ``.cpu()`` (a host copy, as on the
board) and any op that makes new storage (``clone``, arithmetic, casts) give a plain tensor in the
base format, with the logical values.

Formats: ND (2) and FRACTAL_NZ (29) are cast; the base format of a tensor's rank (NCHW for 4-D,
NCDHW for 5-D) is accepted as ND.  Every other ``torch_npu.Format`` (NC1HWC0, FRACTAL_Z, ...) is an
NPU-internal layout the stand-in does not model: casting to it raises :class:`NpuOnlyFacilityError`
naming the format.
"""
from __future__ import annotations

import enum
from typing import Any, Union

import torch

from pypto_pro.runtime.gm_format import FRACTAL_NZ, ND

from . import NpuOnlyFacilityError


class Format(enum.IntEnum):
    """``torch_npu.Format``: the ACL storage format numbers."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33
    NC = 35
    NCL = 47

    def __str__(self) -> str:
        return self.name


class NpuFormatTensor(torch.Tensor):
    """A tensor whose storage ``npu_format_cast`` tagged with an NPU format, holding the logical values.

    The format belongs to the storage, as on the NPU: views of the tensor (``reshape``, ``view``, slices)
    are ``NpuFormatTensor`` s in the same format, while ops that make new storage give plain tensors in
    the base format.  Its module reads ``torch_npu`` (the stand-in's name for it), so launches take it
    as a torch tensor."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        if isinstance(out, (tuple, list)):
            return type(out)(_keep_format(o) for o in out)
        return _keep_format(out)

    @property
    def _pypto_npu_format(self) -> int:
        """The format of the storage (what ``get_npu_format`` and the launch checks read)."""
        return _storage_format(self)

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        """``npu:N`` while the stand-in is active: a storage format exists only on the NPU, and official
        helpers read a tensor's format only when ``t.device.type == "npu"``.  The data stay on the CPU
        (``is_cpu`` is true, torch computes with it there, and device arguments naming the NPU mean the
        CPU), as for every tensor of the stand-in."""
        from . import is_active

        if is_active():
            from .torch_npu_module import current_device

            return torch.device("npu", current_device())
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.device.__get__(self)

    def cpu(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """A plain CPU copy of the logical values in the base format (what ``.cpu()`` gives on the board)."""
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.clone(self, memory_format=torch.contiguous_format)

    def __deepcopy__(self, memo: dict) -> "NpuFormatTensor":
        """A copy in the same format (``copy.deepcopy`` of a module's NZ weights)."""
        return _tagged(self.cpu(), self._pypto_npu_format)

    def __reduce_ex__(self, protocol: int):
        """Pickled as the tagged copy of its logical values."""
        return _tagged, (self.cpu(), self._pypto_npu_format)

    def __repr__(self, **kwargs: Any) -> str:  # noqa: D105
        fmt = Format(self._pypto_npu_format).name
        return f"NpuFormatTensor({fmt}, {torch.Tensor.__repr__(self.cpu())})"


def _storage_format(tensor: torch.Tensor):
    """The format tag of ``tensor``'s storage, or None (torch keeps one Python object per storage)."""
    with torch._C.DisableTorchFunctionSubclass():
        try:
            return getattr(tensor.untyped_storage(), "_pypto_npu_format", None)
        except (RuntimeError, NotImplementedError):  # tensors without a storage
            return None


def _keep_format(value: Any) -> Any:
    """An op's result seen as an ``NpuFormatTensor`` when it is a view of tagged storage."""
    if type(value) is torch.Tensor and _storage_format(value) is not None:
        return value.as_subclass(NpuFormatTensor)
    return value


NpuFormatTensor.__module__ = "torch_npu"


def base_format(tensor: torch.Tensor) -> int:
    """The format torch_npu gives a new tensor of this rank: NCHW for 4-D, NCDHW for 5-D, ND otherwise."""
    return {4: Format.NCHW, 5: Format.NCDHW}.get(tensor.dim(), Format.ND)


def get_npu_format(tensor: torch.Tensor) -> int:
    """``torch_npu.get_npu_format(t)``: the format ``npu_format_cast`` gave ``t``, else its base format."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"get_npu_format() takes a tensor, got {type(tensor).__name__}")
    tag = _storage_format(tensor)
    return int(tag) if tag is not None else int(base_format(tensor))


def _target(acl_format: Union[int, Format, torch.Tensor]) -> int:
    if isinstance(acl_format, torch.Tensor):
        return get_npu_format(acl_format)
    if isinstance(acl_format, bool) or not isinstance(acl_format, int):
        raise TypeError(f"npu_format_cast: the format must be an int or torch_npu.Format, got {acl_format!r}")
    return int(acl_format)


def npu_format_cast(tensor: torch.Tensor, acl_format: Union[int, Format, torch.Tensor]) -> torch.Tensor:
    """``torch_npu.npu_format_cast(t, fmt)``: ``t`` stored in format ``fmt`` -- the same logical values,
    tagged with ``fmt`` (``t`` itself when it is already in that format)."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"npu_format_cast() takes a tensor, got {type(tensor).__name__}")
    fmt = _target(acl_format)
    if fmt == get_npu_format(tensor):
        return tensor
    if fmt == base_format(tensor):
        fmt = int(base_format(tensor))
    elif fmt == FRACTAL_NZ:
        if tensor.dim() < 2:
            raise NpuOnlyFacilityError(f"torch_npu.npu_format_cast of a {tensor.dim()}-D tensor to FRACTAL_NZ",
                                       "FRACTAL_NZ stores the last two dims as fractals: cast tensors of 2 or "
                                       "more dims")
        if tensor.dtype in (torch.uint8, torch.bool):
            raise NpuOnlyFacilityError(f"torch_npu.npu_format_cast of a {tensor.dtype} tensor to FRACTAL_NZ",
                                       "torch_npu does not cast uint8 tensors to NZ (the official frontend notes "
                                       "it and skips their format check); keep such tensors ND")
    elif fmt != ND:
        name = Format(fmt).name if fmt in Format._value2member_map_ else "an unknown format"
        raise NpuOnlyFacilityError(f"torch_npu.npu_format_cast to {name} ({fmt})",
                                   "the CPU stand-in models ND (2) and FRACTAL_NZ (29) only")
    return _tagged(tensor, fmt)


def _tagged(tensor: torch.Tensor, fmt: int) -> NpuFormatTensor:
    """A contiguous copy of ``tensor``'s values tagged with format ``fmt``."""
    with torch._C.DisableTorchFunctionSubclass():
        copy = torch.Tensor.clone(tensor.detach(), memory_format=torch.contiguous_format)
        copy.untyped_storage()._pypto_npu_format = int(fmt)
    return copy.as_subclass(NpuFormatTensor)
