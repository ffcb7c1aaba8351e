"""What makes a tensor unusable as a kernel argument, said in words (docs/language.md "Launching").

A kernel reads and writes a GM tensor as plain strided memory: a data pointer, a shape and element
strides.  Torch tensors whose values are not that memory -- sparse, nested, quantized, meta,
conjugate or negative-bit views -- are refused with a message naming what to pass instead, and a
tensor the kernel writes must not have two elements at one address (``expand``, ``as_strided``), where
the result would depend on the order of the writes.  These checks run on the checked launch path
only; the frozen paths fall back to it when a tensor is not plain (:mod:`.fastpath`).
"""
from __future__ import annotations

from typing import Optional, Sequence


def torch_problem(t) -> Optional[str]:
    """Why the torch tensor ``t`` cannot be passed as kernel memory (None: it can, device aside)."""
    import torch

    if t.is_nested:
        return ("a nested tensor (torch.nested) has no single strided shape; pass one dense tensor, e.g. "
                "t.to_padded_tensor(0), or launch once per component")
    if t.layout is not torch.strided:
        return (f"a {str(t.layout).replace('torch.', '')} tensor: kernels read dense strided memory; pass "
                f"t.to_dense()")
    if t.is_quantized:
        return (f"a quantized tensor ({str(t.dtype).replace('torch.', '')}): kernels read plain numbers; pass "
                f"t.int_repr() for its integer codes (with t.q_scale() / t.q_zero_point() as scalars) or "
                f"t.dequantize() for its values")
    if t.is_meta:
        return "a tensor on device 'meta' has shape and dtype but no data; pass a CPU tensor holding the values"
    if t.is_conj():
        return ("a conjugate view (x.conj() of a complex tensor) whose memory holds the unconjugated values; "
                "pass t.resolve_conj()")
    if t.is_neg():
        return ("a negative view (torch._neg_view, z.conj().imag) whose memory holds the negated values; pass "
                "t.resolve_neg()")
    return None


def overlapping(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two elements of a tensor of ``shape`` and element ``strides`` may share an address.

    Sorted by stride, each dim of more than one element must step past the whole extent of the
    dims below it; a zero stride (``expand``) or an ``as_strided`` overlap fails that.  Layouts
    that interleave without overlapping fail it too (rare; reported the same way)."""
    if 0 in shape:
        return False
    extent = 1  # elements spanned by the dims sorted so far
    for size, stride in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n > 1), key=lambda d: d[1]):
        if stride < extent:
            return True
        extent = stride * (size - 1) + extent
    return False


def overlap_message(shape: Sequence[int], strides: Sequence[int]) -> str:
    return (f"the kernel writes this tensor, but its elements share memory (shape {list(shape)}, element strides "
            f"{list(strides)}: a zero stride from expand/broadcast_to or overlapping as_strided strides), so the "
            f"result would depend on the order of the writes; pass a tensor of its own (e.g. t.contiguous() or "
            f"torch.empty(shape)) and copy back what you need")
