"""Views and layout ops: slicing, ``view``, ``reshape``, ``transpose``, ``permute``, ``assemble``,
``concat``.  Views of stored tensors are free (a leaf with offsets / an axis mapping); the same
ops on an unstored expression first store it into a workspace buffer."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from pypto_pro.errors import KernelTypeError

from ..frontend.tracer import current_recorder
from ..graph import Buffer, Node, full_leaf, gm_leaf
from ..symbolic import SymbolicScalar, is_static
from ..tensor import Tensor
from .core import cast_node, is_full_leaf, is_scalar, materialize, node_of, norm_dim, out, same_dim
from .indexing import gather, scatter_


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


def getitem(x, key) -> Tensor:
    """``x[a:b, ..., i]``: a view (ints drop their axis; negative indices on fixed dims);
    ``x[dim:index_tensor]``: ``gather(x, dim, index_tensor)``."""
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
            if is_static(stop) and is_static(dim) and stop > dim:
                stop = dim
            starts.append(start)
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
    return out(_slice_leaf(_leaf(x), starts, sizes, drop))


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
    if n.op != "gm":
        raise KernelTypeError("only kernel parameters, pypto.tensor(...) buffers and their views can be assigned to")
    dst = node_of(getitem(x, key))
    if is_scalar(value):
        from .creation import full

        val = node_of(full(list(dst.shape), value, dst.dtype))
    else:
        val = cast_node(node_of(value, "assigned value"), dst.dtype)
    from .core import broadcast_shape

    shape = broadcast_shape(dst.shape, val.shape, "assignment")
    if len(shape) != len(dst.shape) or not all(same_dim(a, b) or not is_static(a) or not is_static(b)
                                             for a, b in zip(shape, dst.shape)):
        raise KernelTypeError(f"cannot assign a tensor of shape {list(val.shape)} to a region of shape "
                              f"{list(dst.shape)}")
    current_recorder().store(dst, val)


def view(x, shape: Optional[Sequence[Any]] = None, offsets: Optional[Sequence[Any]] = None, *,
         valid_shape: Optional[Sequence[Any]] = None, dtype=None) -> Tensor:
    """``pypto.view(x, shape, offsets, valid_shape=None)``: a slice of ``shape`` at ``offsets``; with
    ``valid_shape`` only that region is valid (computed and stored)."""
    if dtype is not None:
        raise NotImplementedError("pypto.view(x, dtype=...) (bit reinterpretation)")
    n = node_of(x)
    if shape is None:
        raise KernelTypeError("pypto.view needs a shape")
    offsets = list(offsets) if offsets is not None else [0] * n.ndim
    if len(shape) != n.ndim or len(offsets) != n.ndim:
        raise KernelTypeError(f"pypto.view: shape/offsets need {n.ndim} entries")
    sizes = list(valid_shape) if valid_shape is not None else list(shape)
    return out(_slice_leaf(_leaf(x), offsets, sizes))


def assemble(src, offsets=None, dst=None, parallel: bool = False) -> None:
    """``pypto.assemble(src, offsets, dst)`` or ``assemble([(src, offsets), ...], dst)``: write src into dst."""
    if isinstance(src, list) and dst is None:
        src, dst = src, offsets
        for s, o in src:
            assemble(s, o, dst)
        return
    s = node_of(src)
    key = tuple(slice(o, o + d) for o, d in zip(offsets, s.shape))
    setitem(dst, key, src)


def reshape(x, shape: Sequence[Any], *, valid_shape=None, inplace: bool = False) -> Tensor:
    """Same elements in row-major order with another shape (zero-copy on stored contiguous tensors)."""
    n = node_of(x)
    shape = list(shape)
    inferred = [j for j, d in enumerate(shape) if is_static(d) and d == -1]  # (`-1 in shape` is symbolic)
    if inferred:
        i = inferred[0]
        known = 1
        total = 1
        for d in n.shape:
            total *= _static(d, "reshape with -1")
        for j, d in enumerate(shape):
            if j != i:
                known *= _static(d, "reshape with -1")
        shape[i] = total // known
    if len(shape) == n.ndim and all(same_dim(a, b) for a, b in zip(shape, n.shape)):
        return x if isinstance(x, Tensor) else out(n)
    leaf = n if is_full_leaf(n) else materialize(n)
    base = leaf.attrs["buf"]
    alias = Buffer(f"{base.name}_r", base.dtype, tuple(shape), "alias", base=base)
    return out(full_leaf(alias))


def unsqueeze(x, dim: int) -> Tensor:
    n = node_of(x)
    d = norm_dim(dim, n.ndim + 1)
    shape = list(n.shape)
    shape.insert(d, 1)
    return reshape(x, shape)


def squeeze(x, dim: Optional[int] = None) -> Tensor:
    n = node_of(x)
    dims = [i for i, d in enumerate(n.shape) if is_static(d) and d == 1] if dim is None else [norm_dim(dim, n.ndim)]
    return reshape(x, [d for i, d in enumerate(n.shape) if i not in dims])


def permute(x, dims: Sequence[int]) -> Tensor:
    n = node_of(x)
    dims = [norm_dim(d, n.ndim) for d in dims]
    if sorted(dims) != list(range(n.ndim)):
        raise KernelTypeError(f"pypto.permute: {dims} is not a permutation of {n.ndim} dims")
    leaf = _leaf(x)
    a = leaf.attrs
    return out(gm_leaf(a["buf"], a["offsets"], [a["axes"][d] for d in dims], [leaf.shape[d] for d in dims]))


def transpose(x, dim0: int = -2, dim1: int = -1) -> Tensor:
    n = node_of(x)
    d0, d1 = norm_dim(dim0, n.ndim), norm_dim(dim1, n.ndim)
    order = list(range(n.ndim))
    order[d0], order[d1] = order[d1], order[d0]
    return permute(x, order)


def clone(x) -> Tensor:
    n = node_of(x)
    return out(node_of(materialize(Node("cast", (n,), n.shape, n.dtype, {"dtype": n.dtype, "mode": 0}))))


def expand_clone(x, shape: Sequence[Any], *, valid_shape=None) -> Tensor:
    """Broadcast size-1 dims to ``shape``."""
    n = node_of(x)
    from .core import broadcast_shape

    full_shape = broadcast_shape(n.shape, shape, "pypto.expand_clone")
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
        rec.store(dst, cast_node(m, buf.dtype))
        off = off + m.shape[d]
    return out(full_leaf(buf))


def atomic_add(src, offsets: Sequence[Any], dst) -> None:
    """``dst[offsets : offsets + src.shape] += src`` in place (the sum cast to ``dst``'s dtype).  Each
    element is owned by one core for the whole statement, so no hardware atomics are needed."""
    s = node_of(src, "pypto.atomic_add src")
    d = node_of(dst, "pypto.atomic_add dst")
    if len(offsets) != d.ndim or s.ndim != d.ndim:
        raise KernelTypeError(f"pypto.atomic_add: src ({s.ndim} dims) and offsets ({len(offsets)}) must match the "
                              f"{d.ndim}-D dst")
    for o, size, full in zip(offsets, s.shape, d.shape):
        if is_static(o) and (o < 0 or is_static(size) and is_static(full) and o + size > full):
            raise KernelTypeError(f"pypto.atomic_add: the window at offsets {list(offsets)} of size "
                                  f"{list(s.shape)} leaves dst of shape {list(d.shape)}")
    key = tuple(slice(o, o + size) for o, size in zip(offsets, s.shape))
    setitem(dst, key, getitem(dst, key) + src)


def _pad_amounts(padding: Sequence[int], ndim: int) -> List[tuple]:
    """``(before, after)`` per dim from torch's ``(last_before, last_after, prev_before, ...)``."""
    if len(padding) % 2 or len(padding) > 2 * ndim:
        raise KernelTypeError(f"pypto.pad: padding needs an even number of entries, at most {2 * ndim}, got "
                              f"{len(padding)}")
    if any(isinstance(p, bool) or not isinstance(p, int) for p in padding):
        raise KernelTypeError(f"pypto.pad: padding entries must be ints, got {list(padding)}")
    amounts = [(0, 0)] * ndim
    for i in range(len(padding) // 2):
        amounts[ndim - 1 - i] = (padding[2 * i], padding[2 * i + 1])
    return amounts


def pad(x, padding: Sequence[int], mode: str = "constant", value=0) -> Tensor:
    """A new tensor: ``x`` with ``padding[2i]`` / ``padding[2i+1]`` elements of ``value`` before / after
    dim ``-1-i`` (torch order; negative amounts crop).  Only ``mode="constant"``."""
    if mode != "constant":
        raise NotImplementedError(f"pypto.pad(mode={mode!r}): only mode='constant'")
    n = node_of(x)
    amounts = _pad_amounts(padding, n.ndim)
    shape, starts, sizes, dst_starts = [], [], [], []
    for size, (lo, hi) in zip(n.shape, amounts):
        total = size + lo + hi if lo or hi else size
        if is_static(total) and total <= 0:
            raise KernelTypeError(f"pypto.pad: padding {list(padding)} leaves no elements of dim size {size}")
        shape.append(total)
        starts.append(max(-lo, 0))
        dst_starts.append(max(lo, 0))
        sizes.append(size + min(lo, 0) + min(hi, 0) if lo < 0 or hi < 0 else size)
    if any(is_static(s) and s <= 0 for s in sizes):
        raise KernelTypeError(f"pypto.pad: padding {list(padding)} crops away every element")
    rec = current_recorder()
    buf = rec.new_temp(shape, n.dtype)
    from .creation import full

    rec.store(full_leaf(buf), node_of(full(shape, value, n.dtype)))
    inner = n if not any(starts) and all(same_dim(a, b) for a, b in zip(sizes, n.shape)) else _slice_leaf(
        _leaf(x), starts, sizes)
    rec.store(gm_leaf(buf, dst_starts, range(len(shape)), sizes), inner)
    return out(full_leaf(buf))


__all__ = ["getitem", "setitem", "view", "assemble", "reshape", "unsqueeze", "squeeze", "permute", "transpose",
           "clone", "expand_clone", "concat", "atomic_add", "pad", "SymbolicScalar"]
