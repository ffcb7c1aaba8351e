"""Tensor-level arguments in the FRACTAL_NZ storage format (``torch_npu.npu_format_cast(t, 29)``).

The official launch reads each argument's format: a parameter declared with ``format=`` keeps that
format and an argument in the other one is refused (``ValueError``); an undeclared parameter takes the
argument's format.  An NZ argument is presented to the kernel in its padded runtime shape -- the last
axis rounded up to C0 elements, the one before to 16 -- whose padding holds zeros
(:func:`pypto_pro.runtime.gm_format.nz_aligned_shape`), and the kernel addresses it with logical
offsets.  Here GM tensors are logical arrays, so an NZ argument whose shape is already whole fractals
is passed as it is; a smaller one is passed as a zero-padded copy, and the kernel's writes to the
logical part are copied back after the run (what ``.cpu()`` of the NZ tensor shows on the board).
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from pypto_pro.errors import KernelLaunchValueError
from pypto_pro.runtime.gm_format import FRACTAL_NZ, mismatch_hint, npu_format_of, nz_aligned_shape

from ..tensor import Tensor, TileOpFormat


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def argument_format(value: Any) -> str:
    """The storage format a launch argument is in (``TileOpFormat``): a ``pypto.from_torch`` tensor's
    declared format, else the ``npu_format_cast`` tag of the tensor."""
    if isinstance(value, Tensor) and value.data is not None:
        return value.ann_format or TileOpFormat.TILEOP_ND
    return TileOpFormat.TILEOP_NZ if npu_format_of(value) == FRACTAL_NZ else TileOpFormat.TILEOP_ND


def resolve_format(kernel: str, pname: str, position: int, declared: Optional[str], value: Any) -> str:
    """The format the kernel sees parameter ``pname`` in: the declared one, which the argument must be in
    (``KernelLaunchValueError`` otherwise), or, undeclared, the argument's."""
    found = argument_format(value)
    if declared is None or declared == found:
        return found
    raise KernelLaunchValueError(
        f"argument '{pname}': the format of the {_ordinal(position + 1)} input tensor {found} does not match the format of its "
        f"input tensor definition {declared}; {mismatch_hint(declared == TileOpFormat.TILEOP_NZ)}", kernel=kernel)


def present(arr: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """(the array the kernel sees for an NZ argument, the argument to copy its logical part back to, or
    None when the argument is passed as it is)."""
    shape = nz_aligned_shape(arr.shape, arr.dtype.itemsize)
    if list(arr.shape) == shape:
        return arr, None
    padded = np.zeros(shape, arr.dtype)
    padded[tuple(slice(0, d) for d in arr.shape)] = arr
    return padded, arr


def write_back(pending: List[Tuple[np.ndarray, np.ndarray]]) -> None:
    """Copy each padded NZ array's logical part back to its argument (after the run)."""
    for padded, original in pending:
        original[...] = padded[tuple(slice(0, d) for d in original.shape)]

