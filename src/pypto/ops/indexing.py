"""Indexing by index tensors (docs/tensor.md "Ops" "Indexing"): ``gather``, ``index_select``, ``scatter``,
``scatter_``, ``index_add``, ``index_add_``, ``index_put_``, ``scatter_update``, ``one_hot`` with
torch semantics.

Each op records one node whose value is stored into a GM buffer right away (``gather`` /
``index_select`` / ``scatter`` / ``index_add`` / ``one_hot`` into a workspace, the in-place ops into
their target); the lowering turns that store into an element pass of scalar reads and writes
(``pypto/lower/indexing.py``).  Indices must lie in ``[0, size)`` of the indexed dim; others raise
``KernelRuntimeError`` at run time.

``index_add`` / ``index_put_`` / ``scatter_update`` share one node, ``index_put``: for every
position ``c`` of the iteration space ``x.shape[:d] + [L] + x.shape[d+m:]`` (``L`` the length of
the ``m`` 1-D indices on dims ``d .. d+m-1``), ``x[c[:d], i0[c[d]], .., i{m-1}[c[d]], c[d+1:]]``
receives (``reduce=None``) or is increased by (``reduce="add"``) ``values[c]`` (broadcast) or a
scalar.  Writes happen in index order, so duplicates: the last wins / all accumulate in order.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, List, Optional, Sequence

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..datatype import SCATTER_MODE_REDUCE, ScatterMode
from ..frontend.tracer import current_recorder
from ..graph import Buffer, Node, full_leaf, gm_leaf
from ..symbolic import format_dims, is_static
from ..tensor import Tensor
from .core import (cast_node, is_full_leaf, is_scalar, materialize, node_of, norm_dim, out, same_dim,
                   stored_target)

INDEX_DTYPES = (dt.DT_INT32, dt.DT_INT64)
#: scatter ``reduce`` names -> the scalar operator combining the old element with the source value
SCATTER_REDUCE = {"add": "+", "multiply": "*"}


def _index(index, what: str) -> Node:
    """The index operand as a GM leaf (an INT32/INT64 tensor)."""
    n = node_of(index, f"{what} index")
    if n.dtype not in INDEX_DTYPES:
        raise KernelTypeError(f"{what}: the index must be an INT32 or INT64 tensor, got {n.dtype.name}")
    return materialize(n)


def _check_within(small, big, skip: Optional[int], what: str) -> None:
    """``small.shape[i] <= big.shape[i]`` for every axis but ``skip`` (where both are fixed)."""
    if len(small.shape) != len(big.shape):
        raise KernelTypeError(f"{what}: the index has {len(small.shape)} dims, the tensor {len(big.shape)}")
    for i, (a, b) in enumerate(zip(small.shape, big.shape)):
        if i != skip and is_static(a) and is_static(b) and a > b:
            raise KernelTypeError(f"{what}: index size {a} exceeds size {b} of dim {i}")


def gather(input, dim: int, index) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` (dim=0) / ``x[i][index[i][j]]`` (dim=1), N-D alike; out has
    ``index``'s shape and ``input``'s dtype."""
    xn = materialize(node_of(input))
    idx = _index(index, "pypto.gather")
    d = norm_dim(dim, xn.ndim)
    _check_within(idx, xn, d, "pypto.gather")
    return out(materialize(Node("gather", (xn, idx), idx.shape, xn.dtype, {"dim": d})))


def index_select(input, dim: int, index) -> Tensor:
    """The slices ``x[..., index[k], ...]`` of dim ``dim`` in the order of the 1-D ``index``."""
    xn = materialize(node_of(input))
    idx = _index(index, "pypto.index_select")
    if idx.ndim != 1:
        raise KernelTypeError(f"pypto.index_select: the index must be 1-D, got {idx.ndim} dims")
    d = norm_dim(dim, xn.ndim)
    shape = list(xn.shape)
    shape[d] = idx.shape[0]
    return out(materialize(Node("index_select", (xn, idx), tuple(shape), xn.dtype, {"dim": d})))


def _scatter_node(xn: Node, dim: int, index, src, reduce: Optional[str], what: str) -> Node:
    """``x`` with ``src[i][j]`` written at ``[index[i][j]][j]`` (dim=0), N-D alike; ``src`` a tensor at
    least as large as ``index`` (cast to ``x``'s dtype) or a scalar."""
    if isinstance(reduce, ScatterMode):
        reduce = SCATTER_MODE_REDUCE[reduce]
    if reduce is not None and reduce not in SCATTER_REDUCE:
        raise KernelTypeError(f"{what}: reduce must be None, 'add' or 'multiply', got {reduce!r}")
    idx = _index(index, what)
    d = norm_dim(dim, xn.ndim)
    _check_within(idx, xn, d, what)
    attrs = {"dim": d, "reduce": reduce}
    if is_scalar(src):
        attrs["value"] = src
        return Node("scatter", (xn, idx), xn.shape, xn.dtype, attrs)
    sn = materialize(cast_node(node_of(src, f"{what} src"), xn.dtype))
    _check_within(idx, sn, None, what)
    return Node("scatter", (xn, idx, sn), xn.shape, xn.dtype, attrs)


def scatter(input, dim: int, index, src, *, reduce: Optional[str] = None) -> Tensor:
    """A new tensor: a copy of ``input`` with ``src`` scattered along ``dim`` (``reduce``: None, "add",
    "multiply"; duplicate indices: the last one wins, or all combine in index order)."""
    return out(materialize(_scatter_node(node_of(input), dim, index, src, reduce, "pypto.scatter")))


def scatter_(input, dim: int, index, src, *, reduce: Optional[str] = None) -> Tensor:
    """In-place :func:`scatter` into ``input``.  A kernel parameter, ``pypto.tensor`` or a view of one is
    written in GM; a computed value (``pypto.full(...)``, an op's result) has no storage to write, so the
    handle ``input`` is rebound to the scattered value, as the official graph makes the op's output the
    tensor's next version (uses of ``input`` afterwards see it; views taken before keep the old value)."""
    if isinstance(input, Tensor) and input.node is not None and input.node.op != "gm":
        input.node = _scatter_node(input.node, dim, index, src, reduce, "pypto.scatter_")
        return input
    xn = stored_target(input, "pypto.scatter_")
    current_recorder().store(xn, _scatter_node(xn, dim, index, src, reduce, "pypto.scatter_"))
    return input


# ---------------------------------------------------------------------------------------- index_put family
def copy(n: Node) -> Node:
    """A whole-buffer leaf of a new workspace holding ``n``'s elements in logical order (an identity
    cast, so that a stored tensor is copied too, not just re-read)."""
    return materialize(Node("cast", (n,), n.shape, n.dtype, {"dtype": n.dtype, "mode": 0}))


def contiguous(n: Node) -> Node:
    """``n`` as a leaf reading a whole buffer in natural order (copied into a workspace otherwise)."""
    n = materialize(n)
    return n if is_full_leaf(n) else copy(n)


def alias(n: Node, shape: Sequence[Any]) -> Node:
    """The elements of ``n`` in row-major order seen with ``shape`` (zero-copy on contiguous tensors).
    An alias covers its whole base, so it is made an alias of the root buffer (bound first at launch).

    A reshape of a whole kernel parameter whose element count may differ at run time (the leading
    dim taken from another DYNAMIC dim: ``reshape(k, [q.shape[0], hidden], inplace=True)``) sees the
    parameter's memory, as the official in-place reshape does (same address, no size check): the
    alias buffer spans every whole row of that memory, and the returned leaf reads the requested
    ``shape`` of it.  A ``pypto.view`` with an explicit ``valid_shape`` may then reach the rows past
    ``shape`` that the memory holds (see ``ops/shape.py: view``)."""
    base = contiguous(n).attrs["buf"].root
    memory = _memory_shape(n, base, shape)
    buf = Buffer(f"{base.name}_r", n.dtype, tuple(memory or shape), "alias", base=base)  # n: maybe a dtype view
    return full_leaf(buf) if memory is None else gm_leaf(buf, [0] * len(shape), range(len(shape)), shape)


def _memory_shape(n: Node, base: Buffer, shape: Sequence[Any]) -> Optional[List[Any]]:
    """``shape`` with its leading dim replaced by the number of whole rows in the memory of ``base``,
    when ``n`` is the whole kernel parameter ``base`` and that number is not ``shape[0]`` by
    construction (rows of fixed size on both sides); None otherwise (the alias is exactly ``shape``)."""
    from .core import is_full_leaf, same_dim

    rest_b, rest_s = base.shape[1:], list(shape[1:])
    if (base.kind != "param" or n.dtype != base.dtype or not is_full_leaf(n) or n.attrs["buf"] is not base
            or not shape or not all(is_static(d) for d in list(rest_b) + rest_s)):
        return None
    row_b, row_s = numel(rest_b), numel(rest_s)
    if row_s == 0 or row_b % row_s:
        return None
    lead = base.shape[0] if row_b == row_s else base.shape[0] * (row_b // row_s)
    if same_dim(lead, shape[0]):
        return None
    return [lead] + rest_s


def reinterpret(n: Node, dtype, what: str) -> Node:
    """``n``'s bytes seen as ``dtype`` (torch's ``x.view(dtype)``): the last dim scales by the ratio of
    the element sizes, zero-copy (an alias of the root buffer, like :func:`alias`)."""
    old, new = n.dtype.nbytes, dtype.nbytes
    if dt.DT_BOOL in (n.dtype, dtype) or n.dtype.bits() % 8 or dtype.bits() % 8:
        raise KernelTypeError(f"{what}: cannot reinterpret {n.dtype.name} as {dtype.name} (BOOL tensors are bit "
                              "masks here, and sub-byte formats have no whole bytes per element)")
    last = n.shape[-1]
    if new > old and not (is_static(last) and last * old % new == 0):
        raise KernelTypeError(f"{what}: the last dim ({last} x {old} bytes) must be a fixed multiple of "
                              f"{new} bytes to be seen as {dtype.name}")
    if old == new:  # same width: the same window of the (stored) buffer seen as dtype, no copy
        n = materialize(n)
        buf = n.attrs["buf"]
        seen = Buffer(f"{buf.name}_{dtype.name.lower()}", dtype, buf.shape, "alias", base=buf)
        return gm_leaf(seen, n.attrs["offsets"], n.attrs["axes"], n.shape)
    shape = tuple(n.shape[:-1]) + ((last * old // new) if new > old else last * (old // new),)
    base = contiguous(n).attrs["buf"].root
    if len(base.shape) != n.ndim or not all(same_dim(a, b) for a, b in zip(base.shape, n.shape)):
        base = copy(n).attrs["buf"]  # a part of a buffer (or another shape of it): its own workspace first
    return full_leaf(Buffer(f"{base.name}_{dtype.name.lower()}", dtype, shape, "alias", base=base))


def numel(dims: Sequence[Any]) -> Any:
    """The element count of ``dims`` (symbolic when a dim is)."""
    return functools.reduce(operator.mul, dims, 1) if dims else 1


def _check_fits(shape: Sequence[Any], space: Sequence[Any], what: str, exact: bool = False) -> None:
    """``shape`` broadcasts to ``space`` (equals it where both are fixed when ``exact``)."""
    bad = len(shape) > len(space)
    if not bad:
        for a, b in zip(shape, space[len(space) - len(shape):]):
            if is_static(a) and is_static(b) and a != b and (exact or a != 1):
                bad = True
    if bad or (exact and len(shape) != len(space)):
        raise KernelTypeError(f"{what}: values of shape {format_dims(shape)} do not fit the indexed region "
                              f"{format_dims(space)}")


def _common_length(lengths: List[Any], what: str) -> Any:
    """The broadcast length of 1-D index tensors: length-1 ones repeat, the others must agree (two
    DYNAMIC lengths are taken to be equal)."""
    longer = [n for n in lengths if not (is_static(n) and n == 1)]
    if not longer:
        return 1
    for n in longer[1:]:
        if is_static(n) and is_static(longer[0]) and n != longer[0]:
            raise KernelTypeError(f"{what}: index tensors of lengths {lengths} do not broadcast")
    return longer[0]


def _index_put_node(xn: Node, d: int, indices: List[Node], values, reduce: Optional[str], what: str,
                    exact: bool = False) -> Node:
    """``x`` with ``values`` written / added at the ``len(indices)`` 1-D indices on dims ``d, d+1, ..``
    (see the module docstring); ``values`` a scalar or a tensor broadcasting to the iteration space."""
    m = len(indices)
    for i in indices:
        if i.ndim != 1:
            raise NotImplementedError(f"{what} with a {i.ndim}-D index tensor (only 1-D index tensors)")
    length = _common_length([i.shape[0] for i in indices], what)
    space = tuple(xn.shape[:d]) + (length,) + tuple(xn.shape[d + m:])
    attrs = {"dim": d, "count": m, "reduce": reduce, "space": space}
    if is_scalar(values):
        attrs["value"] = values
        return Node("index_put", (xn, *indices), xn.shape, xn.dtype, attrs)
    vn = materialize(cast_node(node_of(values, f"{what} values"), xn.dtype))
    _check_fits(vn.shape, space, what, exact)
    return Node("index_put", (xn, *indices, vn), xn.shape, xn.dtype, attrs)


def _index_add_node(xn: Node, dim: int, index, source, alpha, what: str) -> Node:
    """``x`` with ``alpha * source[.., k, ..]`` added to ``x[.., index[k], ..]`` along ``dim``."""
    d = norm_dim(dim, xn.ndim)
    idx = _index(index, what)
    if idx.ndim != 1:
        raise KernelTypeError(f"{what}: the index must be 1-D, got {idx.ndim} dims")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise KernelTypeError(f"{what}: alpha must be an int or float, got {alpha!r}")
    if isinstance(alpha, float) and not xn.dtype.is_float():
        raise KernelTypeError(f"{what}: alpha must be an int for the integer tensor of dtype {xn.dtype.name}")
    sn = node_of(source, f"{what} source")
    if sn.ndim != xn.ndim:
        raise KernelTypeError(f"{what}: source has {sn.ndim} dims, the tensor {xn.ndim}")
    src = out(sn) if alpha == 1 else out(sn) * alpha
    return _index_put_node(xn, d, [idx], src, "add", what, exact=True)


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """A new tensor: ``input`` with ``alpha * source`` added along ``dim`` at the rows named by the 1-D
    ``index`` (``source.shape[dim] == len(index)``, other dims as ``input``); duplicates accumulate in
    index order (float: one rounding per addition, computed in FP32)."""
    xn = node_of(input)
    return out(materialize(_index_add_node(xn, dim, index, source, alpha, "pypto.index_add")))


def index_add_(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """In-place :func:`index_add` into ``input`` (a kernel parameter, ``pypto.tensor`` or a view); returns ``input``."""
    xn = stored_target(input, "pypto.index_add_")
    current_recorder().store(xn, _index_add_node(xn, dim, index, source, alpha, "pypto.index_add_"))
    return input


_UB_DTYPES = (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16, dt.DT_INT16, dt.DT_INT32)


def _check_ub(x, index, source, what: str) -> None:
    """The official ``index_add__ub`` / ``index_add_ub`` operand rules on top of ``index_add``'s: ``x``
    FP32/FP16/BF16/INT16/INT32 of 1-5 dims, ``source`` of the same dtype and dims, a 1-D INT32/INT64
    ``index``."""
    xn, sn = node_of(x, f"{what} input"), node_of(source, f"{what} source")
    if xn.dtype not in _UB_DTYPES:
        raise KernelTypeError(f"{what}: input must be FP32, FP16, BF16, INT16 or INT32, got {xn.dtype.name}")
    if not 1 <= xn.ndim <= 5:
        raise KernelTypeError(f"{what}: input must have 1-5 dims, got {xn.ndim}")
    if sn.dtype != xn.dtype:
        raise KernelTypeError(f"{what}: source must have input's dtype {xn.dtype.name}, got {sn.dtype.name}")
    if node_of(index, f"{what} index").ndim != 1:
        raise KernelTypeError(f"{what}: the index must be 1-D")


def index_add__ub(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """Official ``pypto.index_add__ub``: the NPU's UB-resident variant of :func:`index_add_` (its extra
    constraints are tiling rules of the NPU's buffer: the indexed dim uncut); here it is
    :func:`index_add_` with the page's operand checks (:func:`_check_ub`).  In place, returns ``input``."""
    _check_ub(input, index, source, "pypto.index_add__ub")
    return index_add_(input, dim, index, source, alpha=alpha)


def index_add_ub(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """Official ``pypto.index_add_ub``: the out-of-place form of :func:`index_add__ub` (a new tensor,
    as :func:`index_add`)."""
    _check_ub(input, index, source, "pypto.index_add_ub")
    return index_add(input, dim, index, source, alpha=alpha)


def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    """``x[indices] = values`` (``+=`` with ``accumulate``) in place for a tuple of 1-D INT32/INT64
    index tensors on the leading dims (one per dim, equal lengths or length 1); ``values`` (a scalar
    or a tensor, cast to ``input``'s dtype) broadcast to ``[L] + x.shape[len(indices):]``.  Duplicates:
    the last write wins, or all accumulate in index order.  Returns ``input``."""
    what = "pypto.index_put_"
    xn = stored_target(input, what)
    if not isinstance(indices, (tuple, list)) or not indices:
        raise KernelTypeError(f"{what}: indices must be a non-empty tuple of index tensors")
    if len(indices) > xn.ndim:
        raise KernelTypeError(f"{what}: {len(indices)} index tensors for a {xn.ndim}-D tensor")
    if any(i is None for i in indices):
        raise NotImplementedError(f"{what} with None in indices (an unindexed leading dim)")
    nodes = []
    for i in indices:
        n = node_of(i, f"{what} index")
        if n.dtype == dt.DT_BOOL:
            raise NotImplementedError(f"{what} with a BOOL mask index")
        nodes.append(_index(i, what))
    reduce = "add" if accumulate else None
    current_recorder().store(xn, _index_put_node(xn, 0, nodes, values, reduce, what))
    return input


def scatter_update(input, dim: int, index, src) -> Tensor:
    """Official ``pypto.scatter_update`` in place: row ``index.flatten()[k]`` of ``input`` seen as
    ``[rows, d]`` (all dims but the last flattened; official: ``[b*s, d]`` or ``[blocks, block_size, 1, d]``)
    becomes row ``k`` of ``src`` seen the same way.  ``dim`` must be -2 (the official default).
    Duplicates: the last wins.  Returns ``input``."""
    what = "pypto.scatter_update"
    xn = stored_target(input, what)
    if xn.ndim < 2 or norm_dim(dim, xn.ndim) != xn.ndim - 2:
        raise KernelTypeError(f"{what}: only dim=-2 (update rows) of a tensor with at least 2 dims is supported, "
                              f"got dim={dim} for {xn.ndim} dims")
    idx = _index(index, what)
    sn = node_of(src, f"{what} src")
    if sn.ndim < 2 or not (same_dim(sn.shape[-1], xn.shape[-1]) or not is_static(sn.shape[-1])
                           or not is_static(xn.shape[-1])):
        raise KernelTypeError(f"{what}: src rows must have x's last dim {xn.shape[-1]}")
    rows, length = numel(sn.shape[:-1]), numel(idx.shape)
    if is_static(rows) and is_static(length) and rows != length:
        raise KernelTypeError(f"{what}: src has {rows} rows for {length} indices")
    if xn.ndim > 2 and not is_full_leaf(xn):
        raise KernelTypeError(f"{what}: a tensor with more than 2 dims must be a whole kernel parameter or "
                              "pypto.tensor (its rows are flattened in place)")
    last = xn.shape[-1]
    xr = xn if xn.ndim == 2 else alias(xn, [numel(xn.shape[:-1]), last])
    flat_idx = idx if idx.ndim == 1 else alias(idx, [length])
    rows_src = materialize(cast_node(sn, xn.dtype))
    rows_src = rows_src if rows_src.ndim == 2 else alias(rows_src, [rows, sn.shape[-1]])
    current_recorder().store(xr, _index_put_node(xr, 0, [flat_idx], out(rows_src), None, what))
    return input


def one_hot(input, num_classes: int = -1) -> Tensor:
    """INT64 one-hot encoding of the INT32/INT64 tensor ``input``: shape ``x.shape + [num_classes]``, 1 at
    ``[..., x[...]]``, 0 elsewhere; a class outside ``[0, num_classes)`` raises ``KernelRuntimeError``.
    ``num_classes=-1`` (torch: infer from the data) cannot size a compiled kernel's output."""
    what = "pypto.one_hot"
    if num_classes == -1:
        raise KernelTypeError(f"{what}: num_classes=-1 (infer the count from the data) is not possible in a "
                              "compiled kernel; pass the number of classes")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise KernelTypeError(f"{what}: num_classes must be a positive int, got {num_classes!r}")
    idx = _index(input, what)
    shape = tuple(idx.shape) + (num_classes,)
    zeros = Node("full", (), shape, dt.DT_INT64, {"value": 0})
    pos = alias(idx, list(idx.shape) + [1])
    attrs = {"dim": len(shape) - 1, "reduce": None, "value": 1}
    return out(materialize(Node("scatter", (zeros, pos), shape, dt.DT_INT64, attrs)))


__all__ = ["gather", "index_select", "scatter", "scatter_", "index_add", "index_add_", "index_add__ub",
           "index_add_ub", "index_put_",
           "scatter_update", "one_hot"]
