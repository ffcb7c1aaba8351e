"""``pypto.scaled_mm``: the MX (microscaling) matrix product ``(mat_a * scale_a) @ (mat_b * scale_b)``.

Every run of 32 consecutive K elements of a row of ``mat_a`` (a column of ``mat_b``) shares one
E8M0 scale (a power of two).  The scales come as ``[M, ceil(K / 64), 2]`` for ``mat_a`` and
``[ceil(K / 64), N, 2]`` for ``mat_b`` (``scale_*_trans``: ``[ceil(K / 64), M, 2]`` / ``[N, ceil(K / 64), 2]``):
K group ``g`` is ``[g // 2, g % 2]`` of the last two scale axes.

Lowering: each operand is decoded into FP32 from its bytes (``ops/lowbits.py``: the compiled backend has
no FP8 storage type) and dequantised one K group at a time (an FP8 value times a power of two is exact
in FP32); the groups are concatenated along K, and the two FP32 matrices go through
``pypto.matmul`` with the same transposes, ``out_dtype`` and ``extend_params`` (bias, scale,
scale_tensor, relu_type act on the FP32 accumulator, as the MX cube's fixpipe does).  So each product
term is exact and the accumulation is the cube's FP32 accumulation.
"""
from __future__ import annotations

from typing import Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..symbolic import is_static
from ..tensor import Tensor, reported_shape
from .core import materialize, node_of, out
from .lowbits import DECODED, to_fp32
from .matmul import cube_side_vec_tiles, matmul
from .shape import concat, transpose

#: K elements that share one scale
MX_GROUP = 32
_INPUTS = ("FP8E4M3FN", "FP8E5M2", "FP4E2M1", "FP4", "FP4E1M2")


def _dequantised(x, scale, k_axis: int, k_first_scale: bool, what: str) -> Tensor:
    """``x`` in FP32 with each K group multiplied by its scale.  ``k_axis`` is x's K axis (-1 or -2);
    the scale's K-group axis is its first (``k_first_scale``) or second axis."""
    n, s = node_of(x), node_of(scale)
    if n.dtype.name not in _INPUTS:
        raise KernelTypeError(f"pypto.scaled_mm: {what} must be FP8E4M3, FP8E5M2, FP4_E2M1 or FP4_E1M2, got "
                              f"{n.dtype.name}")
    if s.dtype.name != "FP8E8M0" or s.ndim != 3:
        raise KernelTypeError(f"pypto.scaled_mm: scale of {what} must be a 3-D DT_FP8E8M0 tensor, got "
                              f"{s.dtype.name} of rank {s.ndim}")
    k = n.shape[k_axis]  # K of the data; a clipped view's requested extent when that is run-time
    if not is_static(k):
        k = reported_shape(n)[k_axis]
    if not is_static(k):
        raise NotImplementedError("pypto.scaled_mm with a K extent known only at run time")
    k_groups = s.shape[0] if k_first_scale else s.shape[1]
    if is_static(k_groups) and k_groups * 2 * MX_GROUP < k:
        if is_static(n.shape[k_axis]):
            raise KernelTypeError(f"pypto.scaled_mm: the scale of {what} has {k_groups} x 2 groups of {MX_GROUP}, "
                                  f"fewer than K={k} needs")
        k = k_groups * 2 * MX_GROUP  # the data ends where its (equally clipped) scale does
    if n.dtype.name not in DECODED:
        raise NotImplementedError(f"pypto.scaled_mm with {n.dtype.name} operands (FP4 inputs)")
    with cube_side_vec_tiles("m" if what == "mat_a" else "k", "k" if what == "mat_a" else "n"):
        stored = [out(materialize(node_of(to_fp32(t)))) for t in (x, scale)]  # decoded once, sliced for free
        return _grouped(*stored, n.ndim, k, k_axis, k_first_scale)


def _grouped(x, scale, ndim: int, k: int, k_axis: int, k_first_scale: bool) -> Tensor:
    """The K groups of ``x`` (FP32) times their scales (FP32), concatenated along K.  A group's scales
    are a 2-D window of ``scale`` shaped to broadcast over the group: ``[outer, 1]`` when K is x's last
    axis, ``[1, outer]`` otherwise (views, no reshape)."""
    pieces = []
    lead = [slice(None)] * (ndim - 2)
    for g in range((k + MX_GROUP - 1) // MX_GROUP):
        window = slice(g * MX_GROUP, min(k, (g + 1) * MX_GROUP))
        part = x[tuple(lead + ([slice(None), window] if k_axis == -1 else [window, slice(None)]))]
        j, h = g // 2, g % 2
        if k_axis == -1:
            factor = scale[j, :, h:h + 1] if k_first_scale else scale[:, j, h:h + 1]
        else:
            factor = scale[j:j + 1, :, h] if k_first_scale else transpose(scale[:, j:j + 1, h], 0, 1)
        pieces.append(part * factor)
    return pieces[0] if len(pieces) == 1 else concat(pieces, dim=ndim + k_axis)


def scaled_mm(mat_a, mat_b, out_dtype: dt.DataType, scale_a, scale_b, *, a_trans: bool = False,
              b_trans: bool = False, scale_a_trans: bool = False, scale_b_trans: bool = False,
              c_matrix_nz: bool = False, extend_params: Optional[dict] = None) -> Tensor:
    """``(mat_a * scale_a) @ (mat_b * scale_b)`` with MX scales (see the module docstring)."""
    if c_matrix_nz:
        raise NotImplementedError("pypto.scaled_mm(c_matrix_nz=True): an NZ result (officially only c_matrix_nz=False "
                                  "is supported)")
    a_deq = _dequantised(mat_a, scale_a, -2 if a_trans else -1, scale_a_trans, "mat_a")
    b_deq = _dequantised(mat_b, scale_b, -1 if b_trans else -2, not scale_b_trans, "mat_b")
    return matmul(a_deq, b_deq, out_dtype, a_trans=a_trans, b_trans=b_trans, extend_params=extend_params)
