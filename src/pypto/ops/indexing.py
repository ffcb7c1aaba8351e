"""Indexing by index tensors (API.md B4 "Indexing"): ``gather``, ``index_select``, ``scatter``,
``scatter_`` with torch semantics.

Each op records one node whose value is stored into a GM buffer right away (``gather`` /
``index_select`` / ``scatter`` into a workspace, ``scatter_`` into its target); the lowering turns
that store into an element pass of scalar reads and writes (``pypto/lower/indexing.py``).
Indices must lie in ``[0, size)`` of the indexed dim; others raise ``KernelRuntimeError`` at run time.
"""
from __future__ import annotations

from typing import Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..frontend.tracer import current_recorder
from ..graph import Node
from ..symbolic import is_static
from ..tensor import Tensor
from .core import cast_node, is_scalar, materialize, node_of, norm_dim, out

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


def gather(x, dim: int, index) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` (dim=0) / ``x[i][index[i][j]]`` (dim=1), N-D alike; out has
    ``index``'s shape and ``x``'s dtype."""
    xn = materialize(node_of(x))
    idx = _index(index, "pypto.gather")
    d = norm_dim(dim, xn.ndim)
    _check_within(idx, xn, d, "pypto.gather")
    return out(materialize(Node("gather", (xn, idx), idx.shape, xn.dtype, {"dim": d})))


def index_select(x, dim: int, index) -> Tensor:
    """The slices ``x[..., index[k], ...]`` of dim ``dim`` in the order of the 1-D ``index``."""
    xn = materialize(node_of(x))
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


def scatter(x, dim: int, index, src, *, reduce: Optional[str] = None) -> Tensor:
    """A new tensor: a copy of ``x`` with ``src`` scattered along ``dim`` (``reduce``: None, "add",
    "multiply"; duplicate indices: the last one wins, or all combine in index order)."""
    return out(materialize(_scatter_node(node_of(x), dim, index, src, reduce, "pypto.scatter")))


def scatter_(x, dim: int, index, src, *, reduce: Optional[str] = None) -> Tensor:
    """In-place :func:`scatter` into ``x`` (a kernel parameter, ``pypto.tensor`` or a view of one)."""
    xn = node_of(x, "pypto.scatter_ target")
    if xn.op != "gm":
        raise KernelTypeError("pypto.scatter_: the target must be a kernel parameter, a pypto.tensor or a view")
    current_recorder().store(xn, _scatter_node(xn, dim, index, src, reduce, "pypto.scatter_"))
    return x


__all__ = ["gather", "index_select", "scatter", "scatter_"]
