"""Frozen launches of tensor-level kernels: the least work per repeated call.

The first call with given argument types, dtypes, shapes, strides and constant values goes
through the full path (binding, launch checks, cache lookup, workspace and alias binding).  After
it succeeded on a backend that prepares kernels, :func:`freeze` asks that backend for a repeater of
the launch (the protocol's ``frozen_call``; cpu: shapes, strides and dynamic-dim scalars written
once into the library's argument buffer): a later call with the same :func:`call_key` only supplies
the data pointers of its tensors (and of fresh zeroed workspaces, :func:`feeds`).  Every value the
full path checks is a function of the key, so skipping the checks cannot accept a call the full path
would reject.  A backend without ``frozen_call`` always takes the full path.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pypto_pro import backends
from pypto_pro.backends import Feeds
from pypto_pro.runtime.fastpath import torch_tensor_type

from ..graph import Buffer

_CONSTANT_TYPES = (int, float, bool, str, type(None))


def call_key(args: Sequence[Any]) -> Optional[Tuple]:
    """What decides a call's compiled variant and its binding: per tensor its type, dtype, shape,
    strides (and whether it is on the CPU); per constant its type and value.  None where a frozen
    launch does not apply (unhashable constants, other argument types)."""
    tt = torch_tensor_type()
    key: List[Any] = []
    append = key.append
    try:
        for a in args:
            t = type(a)
            if t is tt:
                append((a.dtype, a.shape, a.stride(), a.is_cpu))
            elif t is np.ndarray:  # writeable: a read-only array takes the checked path (args.check_writeable)
                append((a.dtype, a.shape, a.strides, a.flags.writeable))
            elif t in _CONSTANT_TYPES:
                append((t, a))
            elif t is tuple and all(type(v) in _CONSTANT_TYPES for v in a):
                append((t, tuple((type(v), v) for v in a)))
            else:
                return None
    except RuntimeError:  # a tensor without sizes or strides (nested, sparse): the full path says what is wrong
        return None
    return tuple(key)


def _pointer_source(buf: Buffer) -> Buffer:
    """The buffer whose data pointer ``buf`` starts at (aliases are zero-copy reshapes)."""
    while buf.kind == "alias":
        buf = buf.base
    return buf


def feeds(program) -> Feeds:
    """Where each GM parameter of ``program``'s kernel gets its data on a repeated call: the user
    argument it is (or is a zero-copy view of), or the fresh zeroed workspace it lies in.  The call
    passed every argument positionally, so a user tensor's parameter index is its position."""
    index_of: Dict[int, int] = {}  # id(buffer) -> the index of the first parameter bound to it
    for p, b in zip(program.kernel.params, program.buffers):
        index_of.setdefault(id(b), p.index)
    from_args: Dict[int, int] = {}
    zeroed: Dict[int, int] = {}
    for p, buf in zip(program.kernel.params, program.buffers):
        source = _pointer_source(buf)
        if source.kind == "param":
            from_args[p.index] = source.index
        else:
            zeroed[p.index] = index_of[id(source)]
    return Feeds(from_args, zeroed)


def freeze(backend: str, prepared: Any, program, arrays: Dict[int, np.ndarray], values: Dict[int, Any],
           block_dim: int) -> Optional[Callable[[Sequence[Any]], bool]]:
    """The backend's repeater of the call that bound ``arrays`` (kernel param index -> array) and
    ``values`` (Var uid -> value) for ``program``, ``prepared`` by ``backend`` (None where the backend
    has no ``frozen_call``: the call then always takes the full path)."""
    return backends.frozen_call(backend, prepared, arrays, values, block_dim, feeds(program))
