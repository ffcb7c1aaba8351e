"""Element passes for ``gather`` / ``index_select`` / ``scatter`` (a store whose value is one of them).

Every element is a scalar-pipe ``getval`` of its index, a ``getval`` of the data element and a
``setval`` of the result, all in GM.  The iterations run along the indexed dim ``d`` in a runtime
loop; the other axes are spread over the workers (``Lowerer.spmd``).  A scatter only moves
elements along ``d``, so different workers write disjoint lines of the target and each line is
written in index order (duplicates: the last wins, or reduce in order), the same on every backend
and every block count.  The indexed axis is bounds-checked by the element access itself; when the
indexed tensor is a window of a larger buffer, an index outside the window is turned into -1 so
that the access raises ``KernelRuntimeError`` as well.

``index_put`` (index_add / index_put_ / scatter_update) iterates its space
``x.shape[:d] + [L] + x.shape[d+m:]`` the same way: the index position in the runtime loop, the
other axes over the workers, which again write disjoint parts of the target.
"""
from __future__ import annotations

from typing import Any, Callable, Collection, List

from pypto_pro import dtypes as dt
from pypto_pro.ir import nodes as ir

from ..graph import Node, Store
from ..ops.core import same_dim
from ..ops.indexing import SCATTER_REDUCE
from ..symbolic import is_static, to_expr
from .vector import _add, dim

def _covers_axis(leaf: Node, j: int) -> bool:
    """Whether logical axis ``j`` of ``leaf`` spans its whole buffer axis."""
    a = leaf.attrs
    ax = a["axes"][j]
    off = a["offsets"][ax]
    return is_static(off) and off == 0 and same_dim(leaf.shape[j], a["buf"].shape[ax])


def element_index(leaf: Node, coords: List[Any], checked: Collection[int] = ()) -> List[Any]:
    """Buffer position of logical element ``coords`` of ``leaf``; the coordinates ``checked`` are
    runtime indices to be validated against the leaf's size on their axes."""
    a = leaf.attrs
    pos = [dim(o) for o in a["offsets"]]
    for j, ax in enumerate(a["axes"]):
        p = _add(pos[ax], coords[j])
        if j in checked and not _covers_axis(leaf, j):
            c = to_expr(coords[j])
            inside = ir.BinOp("and", ir.BinOp(">=", c, ir.Const(0), dt.DT_BOOL),
                              ir.BinOp("<", c, to_expr(dim(leaf.shape[j])), dt.DT_BOOL), dt.DT_BOOL)
            p = ir.Select(inside, to_expr(p), ir.Const(-1), dt.DT_INT64)
        pos[ax] = p
    return pos


class ElementPass:
    """Scalar GM reads and writes of one element pass."""

    def __init__(self, lw):
        self.lw = lw
        self.b = lw.b

    def read(self, leaf: Node, coords: List[Any], checked: Collection[int] = ()) -> ir.Var:
        param = self.b.param(leaf.attrs["buf"])
        var = self.b.new_var("e", param.dtype)
        self.b.op("getval", result=var, src=param, index=element_index(leaf, coords, checked))
        return var

    def write(self, leaf: Node, coords: List[Any], value, checked: Collection[int] = ()) -> None:
        param = self.b.param(leaf.attrs["buf"])
        self.b.op("setval", dst=param, index=element_index(leaf, coords, checked), value=value)

    def run(self, shape: List[Any], d: int, body: Callable[[List[Any]], None], serial: bool) -> None:
        """``body(coords)`` for every element of ``shape``: axis ``d`` in a runtime loop, the other axes
        spread over the workers (all on worker 0, in order, when ``serial``)."""
        b = self.b
        coords: List[Any] = [0] * len(shape)
        loops = []
        for i, size in enumerate(shape):
            if i != d and not (is_static(size) and size == 1):
                coords[i] = b.new_var(f"x{i}_")
                loops.append((coords[i], dim(size)))

        def line() -> None:
            var = b.new_var(f"x{d}_")
            coords[d] = var
            stmts: List[ir.Stmt] = []
            with b.block(stmts):
                body(coords)
            b.append(ir.For(None, var, ir.Const(0), to_expr(dim(shape[d])), ir.Const(1), stmts))

        with b.work("vector"):
            self.lw.spmd(loops, line, serial)


def _reads_target(dst: Node, inputs) -> bool:
    """Whether one of ``inputs`` (GM leaves) is in ``dst``'s buffer: then the pass runs serially."""
    root = dst.attrs["buf"].root
    return any(i.attrs["buf"].root is root for i in inputs)


def broadcast_coords(leaf: Node, coords: List[Any]) -> List[Any]:
    """The coordinates of ``leaf`` (right-aligned, size-1 dims broadcast) at position ``coords``."""
    lead = len(coords) - leaf.ndim
    return [0 if is_static(size) and size == 1 else coords[lead + j] for j, size in enumerate(leaf.shape)]


def gather_pass(lw, s: Store) -> None:
    """``dst`` <- gather / index_select of ``n.inputs = (x, index)`` along ``n.attrs["dim"]``."""
    dst, n = s.dst, s.value
    x, index = n.inputs
    d = n.attrs["dim"]
    ep = ElementPass(lw)

    def body(coords: List[Any]) -> None:
        k = ep.read(index, coords if n.op == "gather" else [coords[d]])
        src = list(coords)
        src[d] = k
        ep.write(dst, coords, ep.read(x, src, checked=(d,)))

    ep.run(list(n.shape), d, body, serial=_reads_target(dst, n.inputs))


def _same_window(a: Node, b: Node) -> bool:
    return a is b or (a.op == b.op == "gm" and a.attrs["buf"] is b.attrs["buf"]
                      and tuple(map(repr, a.attrs["offsets"])) == tuple(map(repr, b.attrs["offsets"]))
                      and a.attrs["axes"] == b.attrs["axes"])


def _copy_base(lw, s: Store) -> None:
    """``dst`` <- ``n.inputs[0]`` (a vector pass unless it already is ``dst``): the tensor an in-place
    element pass then updates."""
    if not _same_window(s.value.inputs[0], s.dst):
        lw.vector_pass(s.dst, s.value.inputs[0], s.vec_tile, s.cube_tile)


def _calc_dtype(lw, dst: Node) -> dt.DataType:
    """The scalar type combining elements of ``dst`` (FP32 for floats, INT64 for integers)."""
    return dt.DT_FP32 if lw.b.param(dst.attrs["buf"]).dtype.is_float() else dt.DT_INT64


def scatter_pass(lw, s: Store) -> None:
    """``dst`` <- ``n.inputs[0]``, then the elements of the source (``n.inputs[2]`` or the scalar
    ``n.attrs["value"]``) written / combined at the indices."""
    dst, n = s.dst, s.value
    index = n.inputs[1]
    _copy_base(lw, s)
    d, reduce = n.attrs["dim"], n.attrs["reduce"]
    ep = ElementPass(lw)
    calc = _calc_dtype(lw, dst)

    def body(coords: List[Any]) -> None:
        k = ep.read(index, coords)
        value = ep.read(n.inputs[2], coords) if len(n.inputs) == 3 else to_expr(n.attrs["value"])
        target = list(coords)
        target[d] = k
        if reduce is not None:
            value = ir.BinOp(SCATTER_REDUCE[reduce], ep.read(dst, target, checked=(d,)), value, calc)
        ep.write(dst, target, value, checked=(d,))

    ep.run(list(index.shape), d, body, serial=_reads_target(dst, n.inputs[1:]))


def index_put_pass(lw, s: Store) -> None:
    """``dst`` <- ``n.inputs[0]``, then for every position ``c`` of ``n.attrs["space"]`` the value
    (``values[c]`` broadcast, or the scalar) written / added at ``c`` with coordinate ``d`` replaced
    by the ``m`` indices read at ``c[d]`` (see ``pypto.ops.indexing``)."""
    dst, n = s.dst, s.value
    d, m, reduce = n.attrs["dim"], n.attrs["count"], n.attrs["reduce"]
    indices = n.inputs[1:1 + m]
    values = n.inputs[1 + m] if len(n.inputs) > 1 + m else None
    _copy_base(lw, s)
    ep = ElementPass(lw)
    calc = _calc_dtype(lw, dst)
    checked = range(d, d + m)

    def body(coords: List[Any]) -> None:
        picked = [ep.read(i, broadcast_coords(i, [coords[d]])) for i in indices]
        target = list(coords[:d]) + picked + list(coords[d + 1:])
        value = ep.read(values, broadcast_coords(values, coords)) if values is not None else to_expr(
            n.attrs["value"])
        if reduce is not None:
            value = ir.BinOp(SCATTER_REDUCE[reduce], ep.read(dst, target, checked), value, calc)
        ep.write(dst, target, value, checked)

    ep.run(list(n.attrs["space"]), d, body, serial=_reads_target(dst, n.inputs[1:]))
