"""4-bit float arguments of tensor-level kernels (``DT_FP4_E2M1`` / ``DT_FP4_E2M1X2`` / ``DT_FP4_E1M2``).

Officially such a tensor is a ``uint8`` tensor of packed codes: two 4-bit values per byte, element
``2i`` in the low nibble of byte ``i`` of a row, so its last dim counts bytes while the kernel sees
the logical shape (the last dim doubled; ``view``/``shape`` count elements).  A tensor of one value per
element (``ml_dtypes.float4_e2m1fn``) is accepted too.

Inside the kernel the tensor holds one code per byte (the tile program's parameter is UINT8 codes of
the logical shape, lower/builder.py); tensor ops read values through ``ops/lowbits.to_fp32``.  The
codes are unpacked from the argument before the launch and, when the kernel changed them, packed back
into it afterwards.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro import lowprec
from pypto_pro.errors import KernelLaunchError


def is_fp4(dtype: Optional[dt.DataType]) -> bool:
    """Whether a parameter of ``dtype`` takes 4-bit codes (:data:`pypto_pro.dtypes.PACKED_GM`)."""
    return dtype is not None and dt.is_packed_gm(dtype)


def codes_of(arr: np.ndarray, dtype: dt.DataType, what: str, kernel: str) -> np.ndarray:
    """The argument ``arr`` of an FP4 parameter as one code per byte (``uint8``, the logical shape)."""
    if arr.dtype == np.uint8:
        if arr.ndim < 1:
            raise KernelLaunchError(f"{what}: a packed {dtype.name} tensor needs at least one dim", kernel=kernel)
        return lowprec.unpack_fp4(np.ascontiguousarray(arr), arr.shape[-1] * 2)
    if dtype.np_dtype is not None and arr.dtype == dtype.np_dtype and arr.dtype.itemsize == 1:
        return np.ascontiguousarray(arr).view(np.uint8) & np.uint8(0x0F)  # one value per element
    raise KernelLaunchError(f"{what}: expected dtype {dtype.name} (a uint8 tensor of packed codes, two per byte), "
                            f"got {arr.dtype}", kernel=kernel)


def write_back(arg: np.ndarray, codes: np.ndarray) -> None:
    """Store the kernel's codes into the caller's argument when they changed (packed for a uint8 one)."""
    if arg.dtype == np.uint8:
        packed = lowprec.pack_fp4(codes)
        if not np.array_equal(packed, arg):
            arg[...] = packed
    else:
        if not np.array_equal(arg.view(np.uint8) & np.uint8(0x0F), codes):
            arg.view(np.uint8)[...] = codes
