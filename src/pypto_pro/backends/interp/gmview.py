"""GM tensor views (``pl.make_tensor``) on the interpreter: a numpy view of the root argument's memory.

A view addresses ``dims`` elements of its dtype with element ``strides``, ``byte_offset`` bytes past
the data of its root parameter (a ``pl.Ptr`` argument's flat bytes, or a GM tensor argument).  It is
rebuilt at each access from the values its dims/strides/offset Vars hold on the executing core, and
checked first: every element it can address must lie inside the root's memory, so a view can never
read or write outside the arguments (the hardware leaves that undefined; here it is a
``KernelRuntimeError`` naming the view, the line that made it and the byte ranges).
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np

from ...ir import nodes as ir


def root_bytes(root: np.ndarray) -> np.ndarray:
    """The bytes from ``root``'s first element to the end of its last one, as a flat uint8 array
    sharing its memory (``root`` has non-negative strides, as launch arguments do)."""
    if root.size == 0:
        return np.zeros(0, np.uint8)
    span = sum((n - 1) * s for n, s in zip(root.shape, root.strides)) + root.itemsize
    first = root[tuple(slice(0, 1) for _ in root.shape)].view(np.uint8)  # one element: always contiguous
    return np.lib.stride_tricks.as_strided(first, shape=(span,), strides=(1,))


def fitting_rows(dims, strides, offset: int, itemsize: int, size: int) -> int:
    """How many of ``dims[0]`` rows (each ``strides[0]`` elements apart) lie inside ``size`` bytes
    starting ``offset`` bytes in, the other axes whole (``pl.set_stride`` views)."""
    rest = sum((d - 1) * s for d, s in zip(dims[1:], strides[1:])) + 1  # elements of one row's span
    room = (size - offset) // itemsize - rest  # how far the first element of the last row may be
    if room < 0:
        return 0
    return dims[0] if strides[0] == 0 else min(dims[0], room // strides[0] + 1)


def view_layout(view: ir.TensorView, value: Callable) -> Tuple[list, list, int]:
    """(dims, element strides, byte offset) of ``view`` now; ``value`` evaluates an int or Var."""
    return ([int(value(d)) for d in view.dims], [int(value(s)) for s in view.strides], int(value(view.byte_offset)))


def view_array(view: ir.TensorView, root: np.ndarray, value: Callable, error: Callable) -> np.ndarray:
    """The numpy array ``view`` denotes now over ``root`` (the root argument's array); ``error(msg)``
    builds the exception raised when the view is malformed or reaches outside the root's memory."""
    dims, strides, offset = view_layout(view, value)
    itemsize = view.dtype.nbytes
    what = view.describe()
    if any(d < 1 for d in dims):
        raise error(f"{what} has shape {dims}; every dim must be >= 1")
    if any(s < 0 for s in strides):
        raise error(f"{what} has strides {strides}; strides must be >= 0 elements")
    if offset % itemsize:
        raise error(f"{what} starts {offset} bytes into '{view.base.name}', not a whole number of "
                    f"{view.dtype.name} elements ({itemsize} bytes)")
    data = root_bytes(root)
    if view.clamp_rows:
        dims[0] = fitting_rows(dims, strides, offset, itemsize, data.size)
        if dims[0] < 1:
            raise error(f"{what} (strides {strides}) has no row inside the {data.size} bytes of "
                        f"'{view.base.name}' from byte {offset}")
    need = (sum((d - 1) * s for d, s in zip(dims, strides)) + 1) * itemsize
    if offset < 0 or offset + need > data.size:
        raise error(f"{what} (shape {dims}, strides {strides}) spans bytes [{offset}, {offset + need}) of "
                    f"'{view.base.name}', which holds {data.size} bytes")
    return np.lib.stride_tricks.as_strided(data[offset:offset + need].view(view.dtype.np_dtype), shape=dims,
                                           strides=[s * itemsize for s in strides])
