"""Operands of the paged-KV gathers (``pypto.experimental.gather_in_ub`` / ``gather_in_l1``).

The NPU reads these operands straight from GM, so two of their rules differ from the regular ops':

* **indices**: a tensor whose *declared* shape is ``[1, n]``.  Kernels pass a ``pypto.view(ids, [1,
  tile], [row, col], valid_shape=[1, cur])`` of a ``[tokens, topk]`` table, whose valid row count is
  only known at run time (``min(1, tokens - row)``); the gather reads the view's first row, the first
  ``cur`` (its valid column count) logical token ids.
* **source**: rows are addressed from the source view's first element through the whole GM tensor
  underneath, not only the view's rows (the NPU adds ``row * stride`` to the view's address).  Kernels
  pass a ``[tile, hidden]`` view at ``[0, 0]`` of the whole cache, and the page table sends the rows
  anywhere in the cache.  The columns are the view's valid columns.  A row past the end of the GM
  tensor raises ``KernelRuntimeError`` (``index_select``'s check).
"""
from __future__ import annotations

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError

from ..graph import gm_leaf
from ..symbolic import format_dims, is_static
from ..tensor import Tensor, reported_shape
from .core import immediate, materialize, node_of, out, same_dim
from .elementwise import add, cast, mul, sub
from .indexing import INDEX_DTYPES, index_select
from .math import floor_div
from .shape import reshape


def int_arg(v, what: str, name: str, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise KernelTypeError(f"{what}: {name} must be an int, got {v!r}")
    if v < low:
        raise KernelValueError(f"{what}: {name} must be >= {low}, got {v}")
    return v


def first_row(indices, dtypes, what: str, name: str) -> Tensor:
    """The 1-D valid part of the first row of ``indices``, a 2-D tensor declared ``[1, n]``."""
    i = node_of(indices, f"{what} {name}")
    decl = reported_shape(i)
    if i.dtype not in dtypes or i.ndim != 2 or not (is_static(decl[0]) and decl[0] == 1):
        kinds = "/".join(d.name.replace("DT_", "") for d in dtypes)
        raise KernelTypeError(f"{what}: {name} must be a [1, n] {kinds} tensor, got {format_dims(decl)} "
                              f"{i.dtype.name}")
    if not is_static(i.shape[0]):  # a view whose one row is clipped at run time: read that row
        leaf = materialize(i)
        a = leaf.attrs
        i = gm_leaf(a["buf"], a["offsets"], a["axes"], [1, i.shape[1]])
    return reshape(out(i), [i.shape[1]])


def paged_source(src, what: str) -> Tensor:
    """``src`` (2-D) seen from its first element to the last row of the GM tensor underneath, with its own
    valid columns (module docstring)."""
    s = node_of(src, f"{what} source")
    if s.ndim != 2:
        raise KernelTypeError(f"{what}: the source must be 2-D, got {s.ndim} dims")
    if s.op != "gm":
        return src
    a = s.attrs
    row_axis = a["axes"][0]
    start = a["offsets"][row_axis]
    total = a["buf"].shape[row_axis]
    rows = total if is_static(start) and start == 0 else immediate(total - start)
    return out(gm_leaf(a["buf"], a["offsets"], a["axes"], [rows, s.shape[1]]))


def paged_rows(indices, block_table, block_size, what: str) -> Tensor:
    """The 1-D INT32 row numbers holding the logical tokens ``indices`` (declared ``[1, n]``) through the
    page table ``block_table`` (declared ``[1, m]``, INT32) of ``block_size`` tokens per block: token
    ``t`` lives in row ``block_table[0, t // block_size] * block_size + t % block_size``."""
    tok = cast(first_row(indices, INDEX_DTYPES, what, "indices"), dt.DT_INT32)
    table = first_row(block_table, (dt.DT_INT32,), what, "block_table")
    bs = int_arg(block_size, what, "block_size")
    blk = floor_div(tok, bs)
    phys = index_select(table, 0, blk)
    return add(mul(phys, bs), sub(tok, mul(blk, bs)))


def paged_gather(src, indices, block_table, block_size, what: str) -> Tensor:
    """``[n, cols]``: the rows of ``src`` (module docstring) holding the logical tokens ``indices``.  Its
    shape is ``[declared n, declared cols]`` of ``indices`` and ``src``, its valid region their valid n and
    cols (the official result; ``pypto.reshape`` of it sees the declared shape)."""
    got = node_of(index_select(paged_source(src, what), 0, paged_rows(indices, block_table, block_size, what)))
    shape = (reported_shape(node_of(indices))[1], reported_shape(node_of(src))[1])
    if got.op != "gm" or all(same_dim(a, b) for a, b in zip(shape, got.shape)):
        return out(got)
    a = got.attrs
    clipped = gm_leaf(a["buf"], a["offsets"], a["axes"], got.shape)
    clipped.attrs["view_shape"] = shape
    return out(clipped)
