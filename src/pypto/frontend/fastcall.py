"""Frozen launches of tensor-level kernels on the cpu backend: the least work per repeated call.

The first call with given argument types, dtypes, shapes, strides and constant values goes
through the full path (binding, launch checks, cache lookup, workspace and alias binding).  After
it succeeded on the compiled cpu backend, :func:`freeze` captures what that call resolved into an
argument buffer of the compiled library: shapes, strides and dynamic-dim scalars are written
once; a later call with the same :func:`call_key` only writes the data pointers of its tensors
(and of fresh zeroed workspaces) and calls the library.  Every value the full path checks is a
function of the key, so skipping the checks cannot accept a call the full path would reject.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

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
    return tuple(key)


def _pointer_source(buf: Buffer) -> Buffer:
    """The buffer whose data pointer ``buf`` starts at (aliases are zero-copy reshapes)."""
    while buf.kind == "alias":
        buf = buf.base
    return buf


def freeze(program, compiled, arrays: Dict[int, np.ndarray], values: Dict[int, Any],
           block_dim: int) -> Callable[[Sequence[Any]], bool]:
    """A launcher for calls with the key of the call that bound ``arrays`` (kernel param index ->
    array) and ``values`` (dim var uid -> value) for ``program`` compiled as ``compiled``.  The call
    passed every argument positionally, so a user tensor's parameter index is its position."""
    gen = compiled.gen
    n = max(1, gen.nslots)
    own = (ctypes.c_int64 * n)()
    own_dbl = (ctypes.c_double * n).from_buffer(own)
    own_err = type(compiled.buffers()[2])()
    err_ref = ctypes.byref(own_err)
    by_param = {p.index: p for p in program.kernel.params}

    user_slots: List[Tuple[int, int]] = []  # (slot, position in args)
    temps: Dict[int, Tuple[Tuple[int, ...], np.dtype]] = {}  # temp buffer uid -> (shape, dtype)
    temp_slots: List[Tuple[int, int]] = []  # (slot, temp buffer uid)
    for p, buf in zip(program.kernel.params, program.buffers):
        slot = gen.tensor_slots[p.index]
        arr = arrays[p.index]
        size = arr.itemsize
        own[slot:slot + 1 + 2 * arr.ndim] = [arr.ctypes.data, *arr.shape, *[s // size for s in arr.strides]]
        source = _pointer_source(buf)
        if source.kind == "param":
            user_slots.append((slot, source.index))
        else:
            base = arrays[next(q.index for q, b in zip(program.kernel.params, program.buffers) if b is source)]
            temps[source.uid] = (base.shape, base.dtype)
            temp_slots.append((slot, source.uid))
    for index, (slot, kind) in gen.scalar_slots.items():
        value = values[by_param[index].var.uid]
        if kind == "f":
            own_dbl[slot] = float(value)
        else:
            own[slot] = int(value)

    tt = torch_tensor_type()
    owner = threading.get_ident()
    get_ident = threading.get_ident
    fn = compiled.fn
    logged = compiled.log_sink is not None

    def launch(args: Sequence[Any]) -> bool:
        """Run the kernel; False (nothing done) when called from another thread than the freezer."""
        if get_ident() != owner:
            return False
        for slot, pos in user_slots:
            a = args[pos]
            own[slot] = a.data_ptr() if type(a) is tt else a.ctypes.data
        keep = None  # the fresh zeroed workspaces, alive until the call returns
        if temps:
            keep = {uid: np.zeros(shape, dtype) for uid, (shape, dtype) in temps.items()}
            for slot, uid in temp_slots:
                own[slot] = keep[uid].ctypes.data
        if logged:
            compiled.call(own, own_err, block_dim)
        elif fn(own, block_dim, err_ref) != 0:
            compiled.raise_error(own_err)
        return True

    return launch
