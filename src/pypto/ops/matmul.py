"""``pypto.matmul``: 2-D and batched (batch broadcasting), ``a_trans``/``b_trans``, bias, ``out_dtype``.

Operands are read from GM by the cube path (unstored operands are stored first); transposed
operands are free (the load reads them transposed)."""
from __future__ import annotations

from typing import Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..graph import Node
from ..symbolic import is_static
from ..tensor import Tensor
from .core import broadcast_shape, materialize, node_of, out, same_dim
from .elementwise import add, cast
from .shape import reshape, transpose

_ACC = {"FP16": dt.DT_FP32, "BF16": dt.DT_FP32, "FP32": dt.DT_FP32, "INT8": dt.DT_INT32}


def matmul(a, b, out_dtype: Optional[dt.DataType] = None, *, a_trans: bool = False, b_trans: bool = False,
           c_matrix_nz: bool = False, extend_params: Optional[dict] = None) -> Tensor:
    """``[.., m, k] @ [.., k, n]``; ``out_dtype`` defaults to b's dtype (INT32 for INT8)."""
    if c_matrix_nz:
        raise NotImplementedError("pypto.matmul(c_matrix_nz=True)")
    x, y = node_of(a), node_of(b)
    if x.ndim < 2 or y.ndim < 2:
        raise KernelTypeError("pypto.matmul needs operands of rank >= 2")
    if x.dtype != y.dtype or x.dtype.name not in _ACC:
        raise KernelTypeError(f"pypto.matmul: unsupported operand dtypes {x.dtype.name} x {y.dtype.name}")
    if a_trans:
        x = node_of(transpose(a, -1, -2))
    if b_trans:
        y = node_of(transpose(b, -1, -2))
    x, y = materialize(x), materialize(y)
    if not same_dim(x.shape[-1], y.shape[-2]):
        raise KernelTypeError(f"pypto.matmul: inner dims differ ({x.shape[-1]} vs {y.shape[-2]})")
    out_dtype = out_dtype or (dt.DT_INT32 if x.dtype == dt.DT_INT8 else y.dtype)
    acc = _ACC[x.dtype.name]
    if acc == dt.DT_FP32 and out_dtype not in (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16):
        raise KernelTypeError(f"pypto.matmul: FP32 accumulation cannot produce {out_dtype.name}")
    batch = broadcast_shape(x.shape[:-2], y.shape[:-2], "pypto.matmul batch")
    shape = tuple(batch) + (x.shape[-2], y.shape[-1])
    params = dict(extend_params or {})
    bias = params.pop("bias_tensor", None)
    if params:
        raise NotImplementedError(f"pypto.matmul extend_params {sorted(params)}")
    if bias is None:
        return out(Node("matmul", (x, y), shape, out_dtype, {}))
    row = _bias_row(node_of(bias, "pypto.matmul bias_tensor"), acc, y.shape[-1])
    if row is not None:
        return out(Node("matmul", (x, y, row), shape, out_dtype, {}))
    mm = out(Node("matmul", (x, y), shape, acc, {}))
    return cast(add(mm, cast(bias, acc)), out_dtype)


def _bias_row(bias: Node, acc: dt.DataType, n) -> Optional[Node]:
    """``bias`` as a [1, n] row the cube adds while accumulating (the first K block's ``matmul`` with
    a Bias tile), or None when it is not one (another shape, or a dtype the Bias tile cannot take):
    then the bias is added by a vector op after the matmul."""
    if acc != dt.DT_FP32 or bias.dtype not in (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16) or not same_dim(bias.shape[-1], n):
        return None
    if not all(is_static(d) and d == 1 for d in bias.shape[:-1]):
        return None
    return node_of(reshape(out(materialize(bias)), [1, n]))


def bmm(a, b, out_dtype: Optional[dt.DataType] = None) -> Tensor:
    return matmul(a, b, out_dtype)
