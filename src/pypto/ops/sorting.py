"""Sorting (docs/tensor.md "Ops" "Reductions"): ``argsort`` and ``topk`` with torch semantics.

Both record one ``argsort`` node (INT64 positions of the first ``k`` elements of every line along
``dim`` in sorted order), stored into a workspace right away; ``topk``'s values are a ``gather`` of
``x`` at those positions.  The order is stable: equal elements keep their index order (lower index
first), ascending and descending alike, like ``torch.sort(stable=True)``; NaN counts as larger than
every number (last ascending, first descending, as in torch).  The lowering
(``pypto/lower/sorting.py``) ranks every element by counting the elements ahead of it.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple, Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError

from ..graph import Node
from ..symbolic import is_static
from ..tensor import Tensor
from .core import materialize, node_of, norm_dim, out
from .indexing import gather


def _argsort_node(x, dim: Optional[int], k: Optional[int], descending: bool, what: str) -> Node:
    """INT64 positions of the first ``k`` (all when None) sorted elements of every line along ``dim``."""
    xn = materialize(node_of(x))
    if xn.dtype == dt.DT_BOOL:
        raise KernelTypeError(f"{what}: BOOL tensors cannot be sorted; cast them first")
    d = norm_dim(-1 if dim is None else dim, xn.ndim)
    size = xn.shape[d]
    if k is None:
        k = size
    elif isinstance(k, bool) or not isinstance(k, int) or k < 1 or (is_static(size) and k > size):
        raise KernelTypeError(f"{what}: k must be an int in [1, {size if is_static(size) else 'size'}], got {k!r}")
    shape = list(xn.shape)
    shape[d] = k
    return Node("argsort", (xn,), tuple(shape), dt.DT_INT64, {"dim": d, "k": k, "descending": bool(descending)})


def argsort(input, dim: Optional[int] = None, descending: bool = False) -> Tensor:
    """INT64 indices that sort ``input`` along ``dim`` (default: the last), stably."""
    return out(materialize(_argsort_node(input, dim, None, descending, "pypto.argsort")))


class TopK(NamedTuple):
    """What :func:`topk` returns (``values, indices = pypto.topk(...)`` or ``.values`` / ``.indices``)."""

    values: Tensor
    indices: Tensor


class TopKAlgo(IntEnum):
    """``pypto.topk(..., algo=)``: how the device selects (merge sort, or radix select on newer
    parts).  Both give the same sorted result; here one ranking algorithm serves both."""

    MERGE_SORT = 0
    RADIX_SELECT = 1


def topk(input, k: int, dim: Optional[int] = None, largest: bool = True, algo: TopKAlgo = TopKAlgo.MERGE_SORT) -> TopK:
    """``(values, indices)`` of the ``k`` largest (smallest) elements along ``dim`` (default: the
    last), sorted; ties: the lower index first.  ``indices`` are INT64.  With a DYNAMIC ``dim``, a
    ``k`` above the runtime size raises ``KernelRuntimeError``."""
    if algo not in tuple(TopKAlgo):
        raise KernelTypeError(f"pypto.topk: algo must be a pypto.TopKAlgo, got {algo!r}")
    xs = out(materialize(node_of(input)))
    indices = out(materialize(_argsort_node(xs, dim, k, largest, "pypto.topk")))
    d = norm_dim(-1 if dim is None else dim, node_of(xs).ndim)
    return TopK(gather(xs, d, indices), indices)


__all__ = ["TopKAlgo", "argsort", "topk"]
