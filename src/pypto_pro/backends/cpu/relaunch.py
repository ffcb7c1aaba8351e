"""Frozen per-signature relaunchers of compiled kernels (the backend protocol's ``frozen_launcher``
and ``frozen_call``).

The runtime's first launch with given argument types, dtypes, shapes (devices, writeability) goes
through the full checks of :mod:`pypto_pro.runtime.args`; the relauncher frozen then only copies data
pointers, shapes, strides and scalars into the kernel's argument buffer and calls the compiled library.
A tensor-level call repeater (:func:`frozen_call`) writes shapes, strides and scalars once and per call
only the data pointers.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

from ...runtime.args import ParamSpec, check_scalar, element_strides, written_params
from ...runtime.fastpath import torch_tensor_type
from ...runtime.tensor_checks import overlapping


def _private_buffers(compiled) -> Tuple[Any, Any, Any, Any]:
    """An argument buffer of ``compiled``'s own (int64 slots, the same memory as doubles), an error
    record and a reference to it, for one frozen launcher: the compiled kernel's per-thread buffers
    stay free for other callers."""
    own = (ctypes.c_int64 * max(1, compiled.gen.nslots))()
    own_err = type(compiled.buffers()[2])()
    return own, (ctypes.c_double * len(own)).from_buffer(own), own_err, ctypes.byref(own_err)


def frozen_launcher(kernel_name: str, compiled, specs: Sequence[ParamSpec]) -> Callable:
    """A launcher for arguments with the key of the call that created it (already fully checked).

    The key fixes every tensor's type, dtype and shape, so the launcher owns a private argument
    buffer with the shapes (and contiguous strides) written once; per call it writes the data
    pointers, the strides of non-contiguous tensors and the scalars.  Other threads use the
    compiled kernel's per-thread buffers and write everything.  It returns False (nothing done) for a
    negative view or a written tensor whose elements share memory; a torch error (a sparse tensor has no data pointer)
    propagates: either way the caller takes the checked launch, which says what is wrong."""
    gen = compiled.gen
    tensors = []
    scalars = []
    written = written_params(compiled.kernel)
    for p in specs:
        if p.tensor is not None:
            tensors.append((p.index, gen.tensor_slots[p.index], f"argument '{p.name}'", p.index in written))
        else:
            slot, kind = gen.scalar_slots[p.index]
            scalars.append((p.index, slot, kind, p))
    tt = torch_tensor_type()
    own, own_dbl, own_err, own_ref = _private_buffers(compiled)
    owner = threading.get_ident()
    get_ident = threading.get_ident
    fn = compiled.fn
    state = {"shapes": False}
    contiguous = {}  # slot -> whether own holds that tensor's contiguous strides

    def write_scalars(buf, dbl, args) -> None:
        for i, slot, kind, spec in scalars:
            v = check_scalar(kernel_name, spec, args[i])
            if kind == "f":
                dbl[slot] = v
            else:
                buf[slot] = int(v)

    def refused(a, out: bool) -> bool:
        """Whether ``a`` is a negative view, or a tensor the kernel writes whose elements share memory
        (``expand``): the checked launch refuses both."""
        if type(a) is tt and a.is_neg():
            return True
        if not out:
            return False
        if type(a) is tt:
            return not a.is_contiguous() and overlapping(a.shape, a.stride())
        return not a.flags.c_contiguous and overlapping(a.shape, [s // a.itemsize for s in a.strides])

    def write_all(buf, dbl, args) -> None:
        for i, slot, what, _ in tensors:
            a = args[i]
            if type(a) is tt:
                shape, strides, ptr = a.shape, a.stride(), a.data_ptr()
            else:
                shape, strides, ptr = a.shape, element_strides(a, what, kernel_name), a.ctypes.data
            nd = len(shape)
            buf[slot:slot + 1 + 2 * nd] = [ptr, *shape, *strides]
        write_scalars(buf, dbl, args)

    def launch(args, block_dim: int) -> bool:
        if get_ident() != owner or not state["shapes"]:
            if any(refused(args[i], out) for i, _, _, out in tensors):
                return False
            if get_ident() != owner:
                buf, dbl, err = compiled.buffers()
                write_all(buf, dbl, args)
                compiled.call(buf, err, block_dim)
                return True
            write_all(own, own_dbl, args)  # first call on the owning thread: shapes and strides
            state["shapes"] = True
            for i, slot, _, _ in tensors:
                contiguous[slot] = False
        for i, slot, what, out in tensors:
            a = args[i]
            if type(a) is tt:
                if a.is_neg():  # its memory holds the negated values: the checked launch refuses it
                    return False
                own[slot] = a.data_ptr()
                if a.is_contiguous():
                    if contiguous[slot]:
                        continue
                    contiguous[slot] = True
                else:
                    contiguous[slot] = False
                    if out and overlapping(a.shape, a.stride()):
                        return False
                nd = a.dim()
                own[slot + 1 + nd:slot + 1 + 2 * nd] = a.stride()
            else:
                if refused(a, out):
                    return False
                own[slot] = a.ctypes.data
                nd = a.ndim
                own[slot + 1 + nd:slot + 1 + 2 * nd] = element_strides(a, what, kernel_name)
        if scalars:
            write_scalars(own, own_dbl, args)
        if compiled.log_sink is not None:
            compiled.call(own, own_err, block_dim)
        elif fn(own, block_dim, own_ref) != 0:
            compiled.raise_error(own_err)
        return True

    return launch


def frozen_call(compiled, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int,
                feeds) -> Callable[[Sequence[Any]], bool]:
    """A repeater of the checked launch of ``compiled`` with ``tensors`` (param index -> array) and
    ``scalars`` (Var uid -> value) for calls of the same key (:class:`pypto_pro.backends.Feeds`: where
    each tensor's data comes from).  A private argument buffer holds the shapes, strides and scalars;
    a call writes the data pointers of its arguments and of fresh zeroed workspaces, and runs the library."""
    gen = compiled.gen
    own, own_dbl, own_err, err_ref = _private_buffers(compiled)

    for index, slot in gen.tensor_slots.items():
        arr = tensors[index]
        size = arr.itemsize
        own[slot:slot + 1 + 2 * arr.ndim] = [arr.ctypes.data, *arr.shape, *[s // size for s in arr.strides]]
    user_slots: List[Tuple[int, int]] = [(gen.tensor_slots[i], pos) for i, pos in feeds.args.items()]
    temps = {ws: (tensors[ws].shape, tensors[ws].dtype) for ws in set(feeds.zeroed.values())}
    temp_slots: List[Tuple[int, int]] = [(gen.tensor_slots[i], ws) for i, ws in feeds.zeroed.items()]
    by_index = {p.index: p for p in compiled.kernel.params}
    for index, (slot, kind) in gen.scalar_slots.items():
        value = scalars[by_index[index].var.uid]
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
        """Run the kernel; False (nothing done) when called from another thread than the freezer or with
        a negative view (the full path reports it)."""
        if get_ident() != owner:
            return False
        for slot, pos in user_slots:
            a = args[pos]
            if type(a) is tt:
                if a.is_neg():  # a negative view's memory holds the negated values: the full path refuses it
                    return False
                own[slot] = a.data_ptr()
            else:
                own[slot] = a.ctypes.data
        keep = None  # the fresh zeroed workspaces, alive until the call returns
        if temps:
            keep = {ws: np.zeros(shape, dtype) for ws, (shape, dtype) in temps.items()}
            for slot, ws in temp_slots:
                own[slot] = keep[ws].ctypes.data
        if logged:
            compiled.call(own, own_err, block_dim)
        elif fn(own, block_dim, err_ref) != 0:
            compiled.raise_error(own_err)
        return True

    return launch
