"""``torch_npu.npu_trans_quant_param`` on the CPU: FP32 quantisation scales (and offsets) -> the INT64 words a
fixpipe per-channel scale tile holds.  Unlike the CANN compute operators this is a fixed bit-level format
conversion (aclnnTransQuantParamV2), so the stand-in computes it (see :func:`pypto_pro.ops.fixpipe.trans_quant_words`).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from ..ops.fixpipe import trans_quant_words


def npu_trans_quant_param(scale: Any, offset: Optional[Any] = None, round_mode: Optional[int] = None):
    """FP32 ``scale`` ([t] or [1, n]) and optional ``offset`` -> INT64 words: ``(bits(scale) & 0xFFFFE000) |
    1 << 46``, an offset rounded, clamped to [-256, 255] and kept as 9 bits at bit 37."""
    if round_mode not in (None, 0):
        raise NotImplementedError("torch_npu.npu_trans_quant_param(round_mode=1): FP32 -> FP19 rounding of the "
                                  "scale (only the truncating round_mode=0 is modelled)")
    s = _float_array(scale, "scale")
    o = None if offset is None else _float_array(offset, "offset")
    if s.ndim not in (1, 2) or (s.ndim == 2 and s.shape[0] != 1):
        raise ValueError(f"npu_trans_quant_param: scale must have shape (t,) or (1, n), got {list(s.shape)}")
    return torch.from_numpy(np.ascontiguousarray(trans_quant_words(s, o)))  # npu tensors live on the CPU here


def _float_array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        if value.dtype != torch.float32:
            raise TypeError(f"npu_trans_quant_param: {what} must be a float32 tensor, got {value.dtype}")
        return value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)
