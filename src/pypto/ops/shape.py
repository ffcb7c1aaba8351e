"""Views and layout ops: slicing, ``view``, ``reshape``, ``transpose``, ``permute``, ``assemble``,
``concat``.  Views of stored tensors are free (a leaf with offsets / an axis mapping); the same
ops on an unstored expression first store it into a workspace buffer."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.dtypes import DataType
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.ops.gather import PATTERNS as GATHER_PATTERNS

from ..data_scalar import read_scalar, reads_scalar
from ..frontend.tracer import current_recorder
from ..graph import Node, full_leaf, gm_leaf
from ..symbolic import format_dims, is_static, sym_min
from ..tensor import Tensor, check_valid_regions, reported_shape
from .core import cast_node, immediate, is_scalar, materialize, node_of, norm_dim, out, same_dim, stored_target
from .indexing import alias, copy, gather, numel, reinterpret, scatter_


def _leaf(x) -> Node:
    return materialize(node_of(x))


def _slice_leaf(n: Node, starts: Sequence[Any], sizes: Sequence[Any], drop: Sequence[int] = ()) -> Node:
    a = n.attrs
    offsets = list(a["offsets"])
    for i, s in enumerate(starts):
        if not (is_static(s) and s == 0):
            offsets[a["axes"][i]] = offsets[a["axes"][i]] + s
    keep = [i for i in range(n.ndim) if i not in drop]
    return gm_leaf(a["buf"], offsets, [a["axes"][i] for i in keep], [sizes[i] for i in keep])


def getitem(x, key, valid_shape: Optional[Sequence[Any]] = None) -> Tensor:
    """``x[a:b, ..., i]``: a view (ints drop their axis; negative indices on fixed dims);
    ``x[dim:index_tensor]``: ``gather(x, dim, index_tensor)``.  ``valid_shape`` (the official
    ``x.__getitem__(key, valid_shape=...)``): the view's valid region, as ``pypto.view``'s, given for the
    result's axes or for every axis of ``x``."""
    if _is_tensor_index(key):
        return gather(x, key.start, key.stop)
    n = node_of(x)
    keys = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in keys):
        i = keys.index(Ellipsis)
        keys = keys[:i] + [slice(None)] * (n.ndim - len(keys) + 1) + keys[i + 1:]
    if len(keys) > n.ndim:
        raise KernelTypeError(f"too many indices ({len(keys)}) for a {n.ndim}-D tensor")
    keys += [slice(None)] * (n.ndim - len(keys))
    if isinstance(x, Tensor) and all(isinstance(k, slice) and k.start is None and k.stop is None and k.step is None
                                     for k in keys):
        return x
    starts, sizes, drop = [], [], []
    for i, (k, dim) in enumerate(zip(keys, n.shape)):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise NotImplementedError("pypto tensor slicing with a step")
            start = 0 if k.start is None else k.start
            stop = dim if k.stop is None else k.stop
            if is_static(start) and start < 0:
                start += _static(dim, "a negative slice start")
            if is_static(stop) and stop < 0:
                stop += _static(dim, "a negative slice stop")
            starts.append(start)
            if is_static(stop) and is_static(dim):
                sizes.append(min(stop, dim) - start)
            elif k.stop is not None and is_static(immediate(stop - start)) and immediate(stop - start) == 1:
                sizes.append(1)  # one index of a DYNAMIC dim ([0:1] of a [D, n] bias): one row, a broadcastable 1
            elif k.stop is not None:  # clipped at the end, as Python slices are (a loop's ragged last block);
                # min(stop - start, dim - start) keeps both sides affine for the workspace bounds
                sizes.append(immediate(sym_min(stop - start, dim - start)))
            else:
                sizes.append(stop - start)
        elif is_scalar(k) and not isinstance(k, (bool, float)):
            if is_static(k) and k < 0:
                k += _static(dim, "a negative index")
            starts.append(k)
            sizes.append(1)
            drop.append(i)
        else:
            raise NotImplementedError(f"pypto tensor indexing with {type(k).__name__} (gather by tensor index)")
    for s in sizes:
        if is_static(s) and s <= 0:
            raise KernelTypeError(f"empty slice {keys!r}")
    if valid_shape is not None:
        return _valid_window(x, starts, sizes, drop, list(valid_shape))
    if len(drop) == n.ndim and reads_scalar(n.dtype):  # GetTensorData: a value-dependent scalar
        return read_scalar(_leaf(x), starts)
    if len(drop) == n.ndim:  # x[i, j] of a float tensor: one element, as a [1] tensor (tensors here are 1-D+)
        drop = drop[:-1]
    return out(_slice_leaf(_leaf(x), starts, sizes, drop))


def _valid_window(x, starts, sizes, drop, valid) -> Tensor:
    """``x[key]`` with a ``valid_shape``: ``pypto.view`` of the window, then the int-indexed axes dropped
    (``valid`` names the kept axes, or every axis with 1 on the dropped ones)."""
    if len(valid) == len(sizes) - len(drop):
        it = iter(valid)
        valid = [1 if i in drop else next(it) for i in range(len(sizes))]
    elif len(valid) != len(sizes):
        raise KernelTypeError(f"x[...] with valid_shape={valid}: give one entry per axis of the result "
                              f"({len(sizes) - len(drop)}) or of the tensor ({len(sizes)})")
    win = view(x, sizes, starts, valid_shape=valid)
    if not drop:
        return win
    keep = [i for i in range(len(sizes)) if i not in drop] or [len(sizes) - 1]
    return reshape(win, [sizes[i] for i in keep], valid_shape=[valid[i] for i in keep])


def _is_tensor_index(key) -> bool:
    """Whether ``key`` is the ``dim:index_tensor`` subscript (gather / scatter)."""
    return (isinstance(key, slice) and isinstance(key.stop, Tensor) and isinstance(key.start, int)
            and key.step is None)


def _static(d, what):
    if not is_static(d):
        raise KernelTypeError(f"{what} needs a fixed dim")
    return d


def setitem(x, key, value) -> None:
    """``x[...] = value``: store into a region of a stored tensor (a parameter or pypto.tensor);
    ``x[dim:index_tensor] = value``: ``scatter_(x, dim, index_tensor, value)``."""
    if _is_tensor_index(key):
        scatter_(x, key.start, key.stop, value)
        return
    n = node_of(x, "assignment target")
    if n.op != "gm" and isinstance(x, Tensor):
        # a computed tensor is a tensor too: writing into it first gives it a workspace holding its
        # value from where it was made (frontend/snapshots.py), which later reads see with the write
        before = n
        n = current_recorder().live.hold(current_recorder(), x)
        if isinstance(value, Tensor) and value.node is not None and n is not before:
            # the value read the tensor's old expression: it reads the workspace now (a loop's carry)
            from ..frontend.snapshots import redirect

            value = out(redirect(value.node, before, n))
    if n.op != "gm":
        raise KernelTypeError("only kernel parameters, pypto.tensor(...) buffers and their views can be assigned to")
    keys = key if isinstance(key, tuple) else (key,)
    region = getitem(x, tuple(_axis_kept(k) for k in keys))  # a[2, 3] = 5 writes a [1, 1] region
    dst = node_of(region)
    ints = _int_axes(keys, dst.ndim)
    if ints and not is_scalar(value) and node_of(value, "assignment value").ndim == dst.ndim - len(ints):
        for axis in ints:  # res[i, 1:4] = v with v [3]: v fills the region [1, 3] (its int axes restored)
            value = unsqueeze(value, axis)
    whole = isinstance(key, slice) and key.start is None and key.stop is None and key.step is None
    if not whole and not is_scalar(value) and _fits_inside(node_of(value, "assignment value"), dst):
        assemble(value, [0] * dst.ndim, region)
        return
    _store(dst, value, "assignment")


def _int_axes(keys, ndim: int) -> List[int]:
    """Positions, in the assigned region, of the int subscripts of ``keys`` (``...`` expanded)."""
    given = sum(1 for k in keys if k is not Ellipsis)
    axes, pos = [], 0
    for k in keys:
        if k is Ellipsis:
            pos += ndim - given
            continue
        if is_scalar(k) and not isinstance(k, (bool, float)):
            axes.append(pos)
        pos += 1
    return axes


def _axis_kept(k):
    """An int subscript as the length-1 slice at that index (``-1`` is the last element)."""
    if not is_scalar(k) or isinstance(k, (bool, float)):
        return k
    return slice(k, None if is_static(k) and k == -1 else k + 1)


def _fits_inside(val: Node, dst: Node) -> bool:
    """``x[slices] = v`` with a ``v`` that does not broadcast to the region but fits inside it (fixed
    dims, same rank): the official subscript assembles ``v`` at the region's start."""
    if val.ndim != dst.ndim or not all(is_static(d) for d in list(val.shape) + list(dst.shape)):
        return False
    broadcasts = all(v == d or v == 1 for v, d in zip(val.shape, dst.shape))
    return not broadcasts and all(v <= d for v, d in zip(val.shape, dst.shape))


def _store(dst: Node, value, what: str) -> None:
    """Record ``dst = value`` (a scalar, or a tensor broadcast to ``dst``'s region, cast to its dtype)."""
    if is_scalar(value):
        from .creation import full

        val = node_of(full(list(dst.shape), value, dst.dtype))
    else:
        val = cast_node(node_of(value, f"{what} value"), dst.dtype)
    from .core import broadcast_shape

    reported = reported_shape(val)
    if not (len(reported) == dst.ndim and all(same_dim(a, b) for a, b in zip(reported, dst.shape))):
        reported = val.shape  # a clipped view stored into a region of its valid shape (pypto.assemble)
    shape = broadcast_shape(dst.shape, reported, what)
    if len(shape) != len(dst.shape) or not all(same_dim(a, b) or not is_static(a) or not is_static(b)
                                             for a, b in zip(shape, dst.shape)):
        raise KernelTypeError(f"{what}: cannot store a tensor of shape {list(reported)} into a region of shape "
                              f"{list(dst.shape)}")
    _record(_written_region(dst, val, reported), val)


def _written_region(dst: Node, val: Node, reported: Sequence[Any]) -> Node:
    """The part of ``dst`` that storing ``val`` writes: ``dst`` narrowed to ``val``'s extent on each dim
    ``val`` is not broadcast along, where that extent may be smaller.  A clipped view (whose reported
    shape is dst's) writes its valid region only, as ``pypto.assemble`` does; a run-time extent stored
    into a region of another (``out[i:, ...] = x[i:i + 1, ...]`` in a ``pypto.loop``) writes the smaller
    of the two from the region's start, never reading past ``val`` nor writing past ``dst``."""
    lead = dst.ndim - val.ndim
    sizes = list(dst.shape)
    for i, (v, r) in enumerate(zip(val.shape, reported)):
        d = sizes[lead + i]
        if same_dim(d, v) or (is_static(r) and r == 1):
            continue
        sizes[lead + i] = v if is_static(v) and is_static(d) else sym_min(d, v)
    if all(same_dim(a, b) for a, b in zip(sizes, dst.shape)):
        return dst
    return _slice_leaf(dst, [0] * dst.ndim, sizes)


def _record(dst: Node, value: Node) -> None:
    """``current_recorder().store`` after checking that ``value`` computes within its views' valid regions."""
    check_valid_regions(value)
    current_recorder().store(dst, value)


def view(input, shape: Optional[Sequence[Any]] = None, offsets: Optional[Sequence[Any]] = None, *,
         valid_shape: Optional[Sequence[Any]] = None, dtype=None) -> Tensor:
    """``pypto.view(x, shape, offsets, valid_shape=None)``: the ``shape`` window of ``input`` at ``offsets``
    (a slice, not torch.view).  Its valid region, which ops compute on and ``assemble`` writes, is
    ``valid_shape`` (default ``shape``) clipped at the end of ``input``: statically, or at run time where a
    dim or offset is symbolic (boundary tiles of a DYNAMIC tensor).  ``.shape`` stays ``shape``.
    ``pypto.view(x, dtype=d)`` instead sees ``input``'s bytes as ``d`` (torch's ``x.view(d)``: the last dim
    scales by the ratio of the element sizes)."""
    if dtype is not None:
        if shape is not None or offsets is not None or valid_shape is not None:
            raise NotImplementedError("pypto.view with dtype= and a shape/offsets/valid_shape: take the window "
                                      "and the reinterpretation in two pypto.view calls")
        if not isinstance(dtype, DataType):
            raise KernelTypeError(f"pypto.view: dtype must be a pypto.DT_* type, got {dtype!r}")
        n = node_of(input)
        return input if dtype == n.dtype else out(reinterpret(n, dtype, "pypto.view(dtype=)"))
    n = node_of(input)
    if shape is None:
        raise KernelTypeError("pypto.view needs a shape")
    shape = list(shape)
    offsets = list(offsets) if offsets is not None else [0] * n.ndim
    valid = list(valid_shape) if valid_shape is not None else shape
    if not len(shape) == len(offsets) == len(valid) == n.ndim:
        raise KernelTypeError(f"pypto.view: shape, offsets and valid_shape need one entry per dim of the "
                              f"{n.ndim}-D input, got {len(shape)}, {len(offsets)} and {len(valid)}")
    base = _leaf(input)
    # an explicit valid_shape is taken as given (the official view does not clip it at its input's
    # valid region): it is clipped only where the memory under the input ends
    ends = _memory_ends(base, offsets) if valid_shape is not None else n.shape
    sizes = [_valid_extent(*args) for args in zip(range(n.ndim), shape, valid, offsets, ends)]
    leaf = _slice_leaf(base, offsets, sizes)
    if not all(same_dim(a, b) for a, b in zip(sizes, shape)):
        leaf.attrs["view_shape"] = tuple(shape)
    return out(leaf)


def _memory_ends(leaf: Node, offsets: Sequence[Any]) -> List[Any]:
    """Per axis of the gm ``leaf``, the extent from the leaf's start to the end of its buffer on that
    axis: the most a window at ``offsets`` (relative to the leaf) plus those offsets can reach."""
    a = leaf.attrs
    buf_shape = a["buf"].shape
    ends = []
    for i, d in enumerate(leaf.shape):
        ax = a["axes"][i]
        start = a["offsets"][ax]
        end = buf_shape[ax] if is_static(start) and start == 0 else buf_shape[ax] - start
        ends.append(d if same_dim(end, d) else immediate(end))
    return ends


def _valid_extent(axis: int, size, valid, offset, dim):
    """``min(valid, dim - offset)``: the view's valid extent on ``axis`` (an int when everything is
    fixed, else a runtime ``pypto.min``), after checking what is known while recording.  A run-time
    ``valid`` larger than the view's fixed ``size`` is cut to ``size`` (a window holds no more than its
    shape; the official kernels pass ``min(n - i * size, n)``, which exceeds ``size`` before the tail)."""
    what = f"pypto.view: axis {axis}"
    for name, v in (("shape", size), ("valid_shape", valid)):
        if is_static(v) and v <= 0:
            raise KernelTypeError(f"{what}: {name} must be positive, got {v}")
    if is_static(size) and is_static(valid) and valid > size:
        raise KernelTypeError(f"{what}: valid_shape {valid} exceeds the view's shape {size}")
    if is_static(offset) and (offset < 0 or is_static(dim) and offset >= dim):
        raise KernelTypeError(f"{what}: offset {offset} is outside the input's valid size {dim}")
    if not is_static(valid) and is_static(size):
        valid = sym_min(valid, size)
    return immediate(sym_min(valid, dim if is_static(offset) and offset == 0 else dim - offset))


def assemble(input, offsets=None, out=None, parallel: bool = False) -> None:
    """``pypto.assemble(src, offsets, dst)`` or ``assemble([(src, offsets), ...], dst)``: write src into dst."""
    if isinstance(input, list) and out is None:
        input, out = input, offsets
        for s, o in input:
            assemble(s, o, out)
        return
    s = node_of(input, "pypto.assemble source")
    d = stored_target(out, "pypto.assemble")
    _check_window(offsets, s.shape, d.shape, "pypto.assemble")
    _store(_slice_leaf(d, offsets, s.shape), input, "pypto.assemble")


def _check_window(offsets: Sequence[Any], sizes: Sequence[Any], shape: Sequence[Any], what: str) -> None:
    """The ``sizes`` window at ``offsets`` lies inside ``shape`` (where fixed; ``sizes`` is the source's
    valid region, so a view clipped at a tensor boundary fits where it was taken from)."""
    if len(offsets) != len(shape) or len(sizes) != len(shape):
        raise KernelTypeError(f"{what}: source ({len(sizes)} dims) and offsets ({len(offsets)}) must match the "
                              f"{len(shape)}-D dst")
    for o, size, full in zip(offsets, sizes, shape):
        if is_static(o) and (o < 0 or is_static(size) and is_static(full) and o + size > full):
            raise KernelTypeError(f"{what}: the source's valid region {format_dims(sizes)} at offsets {format_dims(offsets)} "
                                  f"leaves dst of shape {format_dims(shape)}")


def reshape(input, shape: Sequence[Any], *, valid_shape=None, inplace: bool = False) -> Tensor:
    """The elements of ``input`` in logical row-major order seen with another shape (torch semantics):
    zero-copy on a whole stored tensor, a copy of a transposed / permuted / sliced one.  ``inplace`` is
    accepted (contiguous tensors are never copied anyway)."""
    n = node_of(input)
    shape = _infer_dim(list(shape), n.shape)
    if valid_shape is not None and not (len(valid_shape) == len(shape) and
                                        all(same_dim(v, d) for v, d in zip(valid_shape, shape))):
        return _reshape_valid(input, n, shape, list(valid_shape))
    reported = reported_shape(n)
    if len(shape) == n.ndim and all(same_dim(a, b) for a, b in zip(shape, reported)):
        return input if isinstance(input, Tensor) else out(n)
    have, want = numel(n.shape), numel(shape)
    if is_static(have) and is_static(want) and have != want:
        region = "" if reported is n.shape else f" (the valid region of a view of shape {format_dims(reported)})"
        raise KernelTypeError(f"pypto.reshape: cannot reshape {format_dims(n.shape)}{region}, {have} elements, into "
                              f"{format_dims(shape)}, {want} elements")
    if reported is not n.shape and not is_static(have) and is_static(want) and _fixed_numel(reported) == want:
        return out(alias(_padded(n, reported), shape))
    return out(alias(n, shape))


def _fixed_numel(shape) -> Optional[int]:
    return numel(shape) if all(is_static(d) for d in shape) else None


def _padded(n: Node, shape: Sequence[Any]) -> Node:
    """A workspace of the fixed ``shape`` of a value clipped at run time to its valid region ``n.shape``,
    holding ``n`` at its start: what a reshape of the whole declared shape reads (the NPU keeps a clipped
    value in a tile of its declared shape).  Elements outside the valid region are unspecified, as on
    the NPU: zeros at first, then what an earlier iteration of an enclosing loop left (the same on
    every backend)."""
    rec = current_recorder()
    buf = rec.new_temp(tuple(shape), n.dtype)
    rec.store(gm_leaf(buf, [0] * len(shape), range(len(shape)), n.shape), n, loc=n.loc)
    return full_leaf(buf)


def _reshape_valid(x, n: Node, shape: List[Any], valid: List[Any]) -> Tensor:
    """``pypto.reshape(x, shape, valid_shape=valid)`` of a clipped view: the data (``x``'s valid region,
    row-major) seen as ``valid``, reporting ``shape`` (a view of ``shape`` clipped to ``valid``, as
    ``pypto.view(..., valid_shape=)`` gives)."""
    if len(valid) != len(shape):
        raise KernelTypeError(f"pypto.reshape: valid_shape {format_dims(valid)} and shape {format_dims(shape)} "
                              f"differ in rank")
    # a run-time valid extent is at most the fixed shape (as in pypto.view): that bounds its workspace
    valid = [immediate(sym_min(v, d) if not is_static(immediate(v)) and is_static(d) else v)
             for v, d in zip(valid, shape)]
    for v, d in zip(valid, shape):
        if is_static(v) and is_static(d) and v > d:
            raise KernelTypeError(f"pypto.reshape: valid_shape {format_dims(valid)} exceeds the shape "
                                  f"{format_dims(shape)}")
    have, want = numel(n.shape), numel(valid)
    if is_static(have) and is_static(want) and have != want:
        raise KernelTypeError(f"pypto.reshape: the valid region {format_dims(n.shape)}, {have} elements, cannot "
                              f"be seen as valid_shape {format_dims(valid)}, {want} elements")
    r = alias(n, valid)
    r.attrs["view_shape"] = tuple(shape)
    return out(r)


def _infer_dim(shape: List[Any], dims: Sequence[Any]) -> List[Any]:
    """``shape`` with its ``-1`` entry (if any) replaced by the size that keeps the element count."""
    inferred = [j for j, d in enumerate(shape) if is_static(d) and d == -1]  # (`-1 in shape` is symbolic)
    if len(inferred) > 1:
        raise KernelTypeError(f"pypto.reshape: only one dim can be -1, got {format_dims(shape)}")
    if inferred:
        known = numel([_static(d, "reshape with -1") for j, d in enumerate(shape) if j != inferred[0]])
        shape[inferred[0]] = numel([_static(d, "reshape with -1") for d in dims]) // known
    return shape


def _only_full_valid_shape(valid_shape, shape: Sequence[Any], what: str) -> None:
    """A ``valid_shape`` smaller than the result's shape would leave a padded result (not supported)."""
    if valid_shape is not None and (len(valid_shape) != len(shape) or
                                    not all(same_dim(v, d) for v, d in zip(valid_shape, shape))):
        raise NotImplementedError(f"{what}(valid_shape={format_dims(valid_shape)}) different from the shape "
                                  f"{format_dims(shape)}: take a pypto.view(..., valid_shape=) of the result instead")


def unsqueeze(input, dim: int) -> Tensor:
    n = node_of(input)
    d = norm_dim(dim, n.ndim + 1)
    shape = list(n.shape)
    shape.insert(d, 1)
    return reshape(input, shape)


def squeeze(x, dim: Optional[int] = None) -> Tensor:
    n = node_of(x)
    dims = [i for i, d in enumerate(n.shape) if is_static(d) and d == 1] if dim is None else [norm_dim(dim, n.ndim)]
    return reshape(x, [d for i, d in enumerate(n.shape) if i not in dims])


def permute(input, perm: Sequence[int]) -> Tensor:
    n = node_of(input)
    perm = [norm_dim(d, n.ndim) for d in perm]
    if sorted(perm) != list(range(n.ndim)):
        raise KernelTypeError(f"pypto.permute: {perm} is not a permutation of {n.ndim} dims")
    leaf = _leaf(input)
    a = leaf.attrs
    moved = gm_leaf(a["buf"], a["offsets"], [a["axes"][d] for d in perm], [leaf.shape[d] for d in perm])
    if "view_shape" in a:  # a clipped view stays clipped, on its permuted axes
        moved.attrs["view_shape"] = tuple(a["view_shape"][d] for d in perm)
    return out(moved)


def transpose(input, dim0: int = -2, dim1: int = -1) -> Tensor:
    n = node_of(input)
    d0, d1 = norm_dim(dim0, n.ndim), norm_dim(dim1, n.ndim)
    order = list(range(n.ndim))
    order[d0], order[d1] = order[d1], order[d0]
    return permute(input, order)


def clone(input) -> Tensor:
    """A copy of ``input`` in a new workspace buffer (later writes to ``input`` do not change it)."""
    return out(copy(node_of(input)))


def expand_clone(input, shape: Sequence[Any], *, valid_shape=None) -> Tensor:
    """Broadcast size-1 dims to ``shape``."""
    n = node_of(input)
    from .core import broadcast_shape

    full_shape = broadcast_shape(n.shape, shape, "pypto.expand_clone")
    _only_full_valid_shape(valid_shape, full_shape, "pypto.expand_clone")
    return out(Node("expand", (n,), full_shape, n.dtype, {}))


def concat(tensors: List[Any], dim: int = 0) -> Tensor:
    """Concatenate along ``dim`` into a workspace buffer."""
    nodes = [node_of(t) for t in tensors]
    d = norm_dim(dim, nodes[0].ndim)
    total = 0
    for m in nodes:
        total = total + m.shape[d]
    shape = list(nodes[0].shape)
    shape[d] = total
    rec = current_recorder()
    buf = rec.new_temp(shape, nodes[0].dtype)
    off: Any = 0
    for m in nodes:
        starts = [0] * len(shape)
        starts[d] = off
        dst = gm_leaf(buf, starts, range(len(shape)), m.shape)
        _record(dst, cast_node(m, buf.dtype))
        off = off + m.shape[d]
    return out(full_leaf(buf))


def atomic_add(src, offsets: Sequence[Any], dst) -> None:
    """``dst[offsets : offsets + src.shape] += src`` in place (the sum cast to ``dst``'s dtype).  Each
    element is owned by one core for the whole statement, so no hardware atomics are needed."""
    s = node_of(src, "pypto.atomic_add src")
    d = node_of(dst, "pypto.atomic_add dst")
    _check_window(offsets, s.shape, d.shape, "pypto.atomic_add")
    key = tuple(slice(o, o + size) for o, size in zip(offsets, s.shape))
    setitem(dst, key, getitem(dst, key) + src)


def _pad_amounts(pad: Sequence[int], ndim: int) -> List[tuple]:
    """``(before, after)`` per dim from torch's ``(last_before, last_after[, prev_before, prev_after])``.
    As the official page states: 2 or 4 non-negative ints (``ValueError`` otherwise; ``TypeError``
    for entries that are not ints)."""
    if not isinstance(pad, (list, tuple)) or any(isinstance(p, bool) or not isinstance(p, int) for p in pad):
        raise KernelTypeError(f"pypto.pad: pad must be a sequence of ints, got {pad!r}")
    if len(pad) not in (2, 4) or len(pad) > 2 * ndim:
        raise KernelValueError(f"pypto.pad: pad takes 2 entries (the last dim) or 4 (the last two dims) of a tensor "
                               f"with at least as many dims, got {len(pad)} for {ndim} dims")
    if any(p < 0 for p in pad):
        raise KernelValueError(f"pypto.pad: negative padding is not supported, got {list(pad)}")
    amounts = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        amounts[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return amounts


def pad(input, pad: Sequence[int], mode: str = "constant", value=0) -> Tensor:
    """A new tensor: ``input`` with ``pad[2i]`` / ``pad[2i+1]`` elements of ``value`` before / after
    dim ``-1-i`` (torch order).  Only ``mode="constant"``."""
    if mode != "constant":
        raise NotImplementedError(f"pypto.pad(mode={mode!r}): only mode='constant'")
    n = node_of(input)
    if not n.dtype.is_float() and isinstance(value, float):
        raise KernelValueError(f"pypto.pad: a {n.dtype.name} tensor takes an int pad value, got {value!r}")
    return pad_axes(input, _pad_amounts(pad, n.ndim), value)


def pad_axes(input, amounts: Sequence[tuple], value=0) -> Tensor:
    """``input`` with ``amounts[i] = (before, after)`` elements of ``value`` on its last ``len(amounts)``
    axes (non-negative; any number of axes: ``pypto.pad``'s checked form and conv's 3-D padding)."""
    n = node_of(input)
    amounts = [(0, 0)] * (n.ndim - len(amounts)) + list(amounts)
    shape = [size + lo + hi if lo or hi else size for size, (lo, hi) in zip(n.shape, amounts)]
    return _filled_with(shape, n.dtype, value, n, [lo for lo, _ in amounts])


def fillpad(input, mode: str = "constant", value=0) -> Tensor:
    """``pypto.fillpad(input, mode="constant", value=0)``: a tensor of ``input``'s shape holding its
    valid region and ``value`` everywhere beyond it (the padding of a view with a ``valid_shape``, or
    of one clipped at its tensor's end).  ``value`` is converted to the dtype; the official example's
    ``"-inf"`` string is accepted.  Only ``mode="constant"``, as officially."""
    if mode != "constant":
        raise NotImplementedError(f"pypto.fillpad(mode={mode!r}): only mode='constant'")
    if not isinstance(input, Tensor):
        raise TypeError(f"pypto.fillpad: input must be a pypto.Tensor, got {type(input).__name__}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise KernelTypeError(f"pypto.fillpad: value {value!r} is not a number") from None
    n = node_of(input)
    if not n.dtype.is_float() and isinstance(value, float) and not math.isfinite(value):
        raise KernelValueError(f"pypto.fillpad: {value!r} has no {n.dtype.name} value")
    return _filled_with(reported_shape(n), n.dtype, value, n, [0] * n.ndim)


def _filled_with(shape, dtype: DataType, value, inner: Node, dst_starts) -> Tensor:
    """A new tensor of ``shape``: ``value`` everywhere, then ``inner`` written at ``dst_starts``."""
    rec = current_recorder()
    buf = rec.new_temp(shape, dtype)
    from .creation import full

    rec.store(full_leaf(buf), node_of(full(shape, value, dtype)))
    _record(gm_leaf(buf, dst_starts, range(len(shape)), inner.shape), inner)
    return out(full_leaf(buf))


def interleave(input, other) -> Tuple[Tensor, Tensor]:
    """``pypto.interleave(input, other)``: the stream ``input[0], other[0], input[1], other[1], ...``
    along the last dim, split at its middle into two tensors of ``input``'s shape."""
    xn, on = node_of(input), node_of(other)
    _same_operands(xn, on, "pypto.interleave")
    n = _static(xn.shape[-1], "pypto.interleave")
    stream = reshape(concat([unsqueeze(input, -1), unsqueeze(other, -1)], -1), list(xn.shape[:-1]) + [2 * n])
    return stream[..., :n], stream[..., n:]


def deinterleave(input, other=None) -> Tuple[Tensor, Tensor]:
    """``pypto.deinterleave(input, other=None)``: the elements at the even and at the odd positions of
    the last dim of ``input`` (or of ``input`` followed by ``other``): the inverse of
    :func:`interleave`."""
    xn = node_of(input)
    if other is not None:
        _same_operands(xn, node_of(other), "pypto.deinterleave")
    stream = input if other is None else concat([input, other], -1)
    total = _static(node_of(stream).shape[-1], "pypto.deinterleave")
    if total % 2:
        raise KernelTypeError(f"pypto.deinterleave: the interleaved last dim must be even, got {total}")
    pairs = reshape(stream, list(xn.shape[:-1]) + [total // 2, 2])
    return pairs[..., 0], pairs[..., 1]


def gathermask(input, pattern_mode: int) -> Tensor:
    """``pypto.gathermask(self, pattern_mode)``: the last dim's elements kept by a built-in pattern:
    1/2 the first/second of every 2, 3..6 the first..fourth of every 4, 7 all of them."""
    n = node_of(input)
    if pattern_mode == 7:
        return clone(input)
    if isinstance(pattern_mode, bool) or pattern_mode not in GATHER_PATTERNS:
        raise KernelValueError(f"pypto.gathermask: pattern_mode must be an int in 1..7, got {pattern_mode!r}")
    group, kept = GATHER_PATTERNS[pattern_mode]  # the tile op's table (group, kept column)
    last = _static(n.shape[-1], "pypto.gathermask")
    if last % group:
        raise KernelTypeError(f"pypto.gathermask: pattern_mode {pattern_mode} needs a last dim divisible by {group}, "
                              f"got {last}")
    return reshape(input, list(n.shape[:-1]) + [last // group, group])[..., kept]


def pack(input) -> Tensor:
    """``pypto.pack(self)``: ``input`` flattened to 1-D with its bytes seen as UINT8 (little-endian, as the
    official example: INT32 0x03040506 packs to 6 5 4 3); zero-copy on a whole stored tensor."""
    n = node_of(input)
    return view(reshape(input, [numel(n.shape)]), dtype=dt.DT_UINT8)


def unpack(input, dstDataType: DataType) -> Tensor:  # noqa: N803 - the official keyword
    """``pypto.unpack(self, dstDataType)``: a 1-D UINT8 tensor's bytes seen as ``dstDataType`` (the
    inverse of :func:`pack`); the byte count must divide by the element size."""
    n = node_of(input)
    if n.dtype != dt.DT_UINT8 or n.ndim != 1:
        raise KernelTypeError(f"pypto.unpack: the input must be a 1-D DT_UINT8 tensor, got {format_dims(n.shape)} "
                              f"{n.dtype.name}")
    return view(input, dtype=dstDataType)


def _same_operands(a: Node, b: Node, what: str) -> None:
    """One dtype and shape (two DYNAMIC dims are taken to be equal, as in broadcasting)."""
    if a.dtype != b.dtype or a.ndim != b.ndim or any(
            is_static(p) and is_static(q) and p != q for p, q in zip(a.shape, b.shape)):
        raise KernelTypeError(f"{what}: both tensors need one shape and dtype, got {format_dims(a.shape)} "
                              f"{a.dtype.name} and {format_dims(b.shape)} {b.dtype.name}")


__all__ = ["getitem", "setitem", "view", "assemble", "reshape", "unsqueeze", "squeeze", "permute", "transpose",
           "clone", "expand_clone", "concat", "atomic_add", "pad", "fillpad", "interleave", "deinterleave", "gathermask",
           "pack", "unpack"]
