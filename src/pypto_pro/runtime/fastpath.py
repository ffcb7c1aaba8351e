"""Frozen per-signature launchers: the least per-call work for repeated launches on the cpu backend.

The first launch with given argument types, dtypes, shapes (and devices) goes through the full
checks of :mod:`.args`; it then freezes a closure that only copies data pointers, shapes, strides
and scalars into the kernel's argument buffer and calls the compiled library.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from .args import ParamSpec, check_scalar


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None


def arg_key(args: Sequence[Any]) -> Optional[Tuple]:
    """A hashable description of the arguments (None where a frozen launcher does not apply)."""
    tt = _torch_tensor_type()
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.dtype, a.shape))
        elif tt is not None and t is tt:
            key.append((a.dtype, a.shape, a.device))
        elif t is int or t is float or t is bool:
            key.append(t)
        else:
            return None
    return tuple(key)


def frozen_launcher(kernel_name: str, compiled, specs: Sequence[ParamSpec]) -> Callable:
    """A launcher for arguments with the key of the call that created it (already fully checked)."""
    gen = compiled.gen
    tensors = []
    scalars = []
    for p in specs:
        if p.tensor is not None:
            tensors.append((p.index, gen.tensor_slots[p.index]))
        else:
            slot, kind = gen.scalar_slots[p.index]
            scalars.append((p.index, slot, kind, p))
    tt = _torch_tensor_type()

    def launch(args, block_dim: int) -> None:
        buf, dbl, err = compiled.buffers()
        for i, slot in tensors:
            a = args[i]
            if type(a) is tt:
                shape, strides, ptr = a.shape, a.stride(), a.data_ptr()
            else:
                size = a.itemsize
                shape, strides, ptr = a.shape, [s // size for s in a.strides], a.ctypes.data
            nd = len(shape)
            buf[slot:slot + 1 + 2 * nd] = [ptr, *shape, *strides]
        for i, slot, kind, spec in scalars:
            v = check_scalar(kernel_name, spec, args[i])
            if kind == "f":
                dbl[slot] = v
            else:
                buf[slot] = int(v)
        compiled.call(buf, err, block_dim)

    return launch
