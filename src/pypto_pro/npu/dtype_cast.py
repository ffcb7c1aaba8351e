"""``torch_npu.npu_dtype_cast`` under the CPU stand-in: the NPU's element-type conversion, computed here.

On the NPU it is CANN's ``aclnnCast`` -- what torch_npu's own ``Tensor.to(dtype)`` runs -- so between
torch dtypes it is exactly ``Tensor.to(dtype)`` (a copy when the dtype is already ``dtype``).  It also
converts from and to HiFloat8, which has no torch dtype: ``torch_npu.hifloat8`` is ``torch.uint8`` here
and HF8 tensors hold their codes as ``uint8``, as they do under torch_npu.

* ``npu_dtype_cast(x, torch_npu.hifloat8)`` with a floating ``x`` (fp32, fp16, bf16): the HF8 codes of
  ``x``, rounding to nearest with ties away from zero and saturating, the hardware's conversion
  (:func:`pypto_pro.lowprec.hf8_encode`, the same rule kernels follow);
* ``npu_dtype_cast(codes, dtype, input_dtype=torch_npu.hifloat8)``: the values of the HF8 codes (exact,
  :func:`pypto_pro.lowprec.hf8_decode`) in ``dtype``.

Decision: since ``hifloat8`` is ``torch.uint8`` here, a cast of a floating tensor to ``torch.uint8`` through
``npu_dtype_cast`` means HF8 (the official programs use it only for HF8; ``Tensor.to(torch.uint8)`` is the
integer conversion).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from pypto_pro import lowprec

from . import NpuOnlyFacilityError

HIFLOAT8 = torch.uint8
"""``torch_npu.hifloat8``: HF8 codes live in ``uint8`` tensors."""

_HF8_SOURCES = (torch.float32, torch.float16, torch.bfloat16)


def _hf8_codes(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in _HF8_SOURCES:
        raise NpuOnlyFacilityError(f"torch_npu.npu_dtype_cast from {x.dtype} to hifloat8",
                                   "cast from float32, float16 or bfloat16")
    values = x.detach().to(torch.float32).contiguous().numpy()  # fp16/bf16 -> fp32 is exact
    return torch.from_numpy(lowprec.hf8_encode(values).reshape(values.shape))


def _hf8_values(codes: torch.Tensor) -> torch.Tensor:
    if codes.dtype != torch.uint8:
        raise TypeError(f"npu_dtype_cast(input_dtype=hifloat8) takes the uint8 codes of HF8 values, "
                        f"got a {codes.dtype} tensor")
    raw = codes.detach().contiguous().numpy()
    return torch.from_numpy(np.ascontiguousarray(lowprec.hf8_decode(raw).reshape(raw.shape)))


def npu_dtype_cast(input: torch.Tensor, dtype: torch.dtype, *, input_dtype: Optional[Any] = None) -> torch.Tensor:
    """``torch_npu.npu_dtype_cast(input, dtype, input_dtype=None)``: ``input`` converted to ``dtype``
    (HF8 from and to floats; torch dtypes as ``Tensor.to``); always a new tensor."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"npu_dtype_cast() takes a tensor, got {type(input).__name__}")
    if not isinstance(dtype, torch.dtype) or (input_dtype is not None and not isinstance(input_dtype, torch.dtype)):
        raise NpuOnlyFacilityError(f"torch_npu.npu_dtype_cast to {dtype!r} from {input_dtype!r}",
                                   "the CPU stand-in casts between torch dtypes and hifloat8 (torch.uint8 codes)")
    if input_dtype == HIFLOAT8 and dtype != HIFLOAT8:
        return _hf8_values(input).to(dtype)
    if dtype == HIFLOAT8 and input.dtype.is_floating_point:
        return _hf8_codes(input)
    return input.clone() if input.dtype == dtype else input.to(dtype)
