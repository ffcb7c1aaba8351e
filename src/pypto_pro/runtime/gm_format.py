"""Storage formats of GM tensor arguments: ND, and FRACTAL_NZ as ``torch_npu.npu_format_cast`` makes it.

On an NPU a tensor cast to FRACTAL_NZ keeps its logical shape and values (``.cpu()`` gives them back);
only its storage is fractal.  Kernels address such a tensor with logical offsets: the tile level's
``pl.load`` / ``pl.store`` on a ``pl.Tensor[..., pl.NZ]`` parameter, the tensor level's views and
``matmul`` on a ``format=TILEOP_NZ`` one.  So the portable backends, whose GM tensors are logical
arrays, give every kernel the logical values and compute exactly what the board computes -- provided
the argument's format is the one the kernel declares.  Where the board would read one format's bytes as
the other (an ND tensor given to an NZ parameter, an NZ one to an ND parameter or to a raw ``pl.Ptr``),
the launch raises :class:`~pypto_pro.errors.KernelLaunchValueError` instead of guessing.

A tensor's format is the tag the CPU stand-in of ``torch_npu`` (:mod:`pypto_pro.npu.formats`) puts on
the tensors ``npu_format_cast`` returns; every other tensor and array is in its base format (ND here).
This module does not import torch.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

ND = 2
"""``torch_npu.Format.ND``."""
FRACTAL_NZ = 29
"""``torch_npu.Format.FRACTAL_NZ``."""

#: fractal rows of an NZ tensor (its outer axis pads to a multiple of this)
NZ_ROWS = 16
#: bytes of one fractal row (its inner axis pads to a multiple of ``32 // itemsize`` elements: C0)
NZ_ROW_BYTES = 32


def npu_format_of(value: Any) -> Optional[int]:
    """The NPU format tag of a launch argument (``torch_npu.Format`` number), or None for an untagged
    tensor or array (its base format).  Cheap: plain torch tensors and numpy arrays have no tag."""
    return getattr(value, "_pypto_npu_format", None)


def is_nz(value: Any) -> bool:
    """Whether ``value`` is a tensor cast to FRACTAL_NZ."""
    return npu_format_of(value) == FRACTAL_NZ


def nz_c0(itemsize: int) -> int:
    """Elements per fractal row (C0) of an NZ tensor of ``itemsize``-byte elements."""
    return max(1, NZ_ROW_BYTES // max(1, itemsize))


def nz_aligned_shape(shape: Sequence[int], itemsize: int) -> List[int]:
    """The shape an NZ tensor of logical ``shape`` has on the board's runtime: the last axis rounded up
    to C0 elements, the one before it to 16 (the official launch presents this padded shape to
    tensor-level kernels; the padding holds zeros).  Tensors of fewer than 2 dims are unchanged."""
    out = [int(d) for d in shape]
    if len(out) < 2:
        return out
    c0 = nz_c0(itemsize)
    out[-1] = -(-out[-1] // c0) * c0
    out[-2] = -(-out[-2] // NZ_ROWS) * NZ_ROWS
    return out


def format_name(fmt: Optional[int]) -> str:
    """``'FRACTAL_NZ'`` / ``'ND'`` / the number, for messages."""
    return {FRACTAL_NZ: "FRACTAL_NZ", ND: "ND", None: "ND"}.get(fmt, f"format {fmt}")


def mismatch_hint(declared_nz: bool) -> str:
    """What to do when an argument's format is not the declared one."""
    if declared_nz:
        return ("the parameter is declared NZ: cast the tensor with torch_npu.npu_format_cast(t, 29) "
                "(torch_npu.Format.FRACTAL_NZ) before the launch; an ND tensor's bytes would be read as "
                "fractal storage on the NPU")
    return ("the parameter is declared ND: pass an ND tensor (torch_npu.npu_format_cast(t, 2), or the tensor "
            "before its cast), or declare the parameter NZ; an NZ tensor's fractal storage would be read as "
            "row-major data on the NPU")


def nz_param_problem(dtype: Any, dims: Sequence[Any]) -> str:
    """Why a tile-level ``pl.Tensor[dims, dtype, pl.NZ]`` parameter cannot be NZ ("" when it can).

    The official code generator lowers NZ GM tensors of 2 dims only, whose rows are a multiple of 16 and
    whose columns a multiple of C0 (32 bytes of 8/16/32/64-bit elements); dims known only at launch are
    checked then (:func:`nz_shape_problem`)."""
    if dtype.bits() < 8 or dtype.bits() > 64:
        return f"an NZ GM tensor of {dtype.name} (NZ tensors hold 8-, 16-, 32- or 64-bit elements)"
    if len(dims) != 2:
        return f"an NZ GM tensor must have 2 dims, got {len(dims)}"
    return nz_shape_problem([d if isinstance(d, int) else None for d in dims], dtype.nbytes)


def nz_shape_problem(shape: Sequence[Optional[int]], itemsize: int) -> str:
    """Why an NZ tile-level tensor of this 2-D shape is refused ("" when it is whole fractals; ``None``
    dims are not checked): the kernel's logical tensor must be exactly its fractal storage, with no padding."""
    rows, cols = shape
    c0 = nz_c0(itemsize)
    if (rows is not None and rows % NZ_ROWS) or (cols is not None and cols % c0):
        return (f"an NZ GM tensor of shape [{rows}, {cols}] needs rows divisible by {NZ_ROWS} and columns by "
                f"C0 = {c0} ({NZ_ROW_BYTES} bytes of {itemsize}-byte elements)")
    return ""
