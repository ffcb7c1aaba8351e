"""``torch.topk`` under the stand-in returns its k entries sorted, whatever ``sorted=`` asks.

``sorted=False`` leaves the order of the k entries to the implementation.  torch's CPU kernel then
returns them in a heap order, while official programs compare a kernel's sorted top-k against
``torch.topk(..., sorted=False)`` computed on the NPU (the glm_v4_5 expert selection does) and pass on the
board: the NPU's order for ``sorted=False`` is the sorted one.  Sorting is one of the orders torch's contract
allows, so the stand-in asks for it always; ``sorted=True`` calls are unchanged.
"""
from __future__ import annotations

import functools
from typing import Any

import torch

_original_function = torch.topk
_original_method = torch.Tensor.topk


@functools.wraps(_original_function)
def _topk(input: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True,
          **kwargs: Any) -> Any:
    return _original_function(input, k, dim, largest, True, **kwargs)


@functools.wraps(_original_method)
def _tensor_topk(self: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    return _original_method(self, k, dim, largest, True)


def install() -> None:
    """Make ``torch.topk`` and ``Tensor.topk`` return sorted entries (process-wide, idempotent)."""
    torch.topk = _topk
    torch.Tensor.topk = _tensor_topk
