"""The recorded tensor graph: expression nodes, GM buffers and the statement tree.

Expressions are pure DAG nodes (``Node``) evaluated lazily where they are stored; statements
(``Store``, ``Loop``, ``Branch``) keep program order.  GM memory is a ``Buffer`` (a kernel
parameter, a workspace temporary, or a reshaped alias of either); a ``gm`` leaf node reads a
region of a buffer through an axis mapping, which makes slicing, ``transpose`` and ``permute`` of
stored tensors free.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pypto_pro.dtypes import DataType
from pypto_pro.ir import nodes as ir

_uids = itertools.count()

#: ops whose output element depends only on the same element of their inputs (after broadcasting)
ELEMENTWISE = frozenset({"unary", "binary", "binary_scalar", "compare", "compare_scalar", "select", "cast", "expand"})


@dataclass(eq=False)
class Buffer:
    """GM memory: ``kind`` is "param" (kernel argument ``index``), "temp" (workspace) or "alias"
    (``base`` seen with another shape, zero-copy)."""

    name: str
    dtype: DataType
    shape: Tuple[Any, ...]
    kind: str
    index: int = -1
    base: Optional["Buffer"] = None
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0

    @property
    def root(self) -> "Buffer":
        return self.base.root if self.base is not None else self

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class Node:
    """A tensor expression: ``op`` with ``inputs``, logical ``shape`` (ints / SymbolicScalars), ``dtype``."""

    op: str
    inputs: Tuple["Node", ...]
    shape: Tuple[Any, ...]
    dtype: DataType
    attrs: Dict[str, Any] = field(default_factory=dict)
    uid: int = field(default_factory=lambda: next(_uids))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"%{self.uid}:{self.op}"


def gm_leaf(buf: Buffer, offsets: Sequence[Any], axes: Sequence[int], shape: Sequence[Any]) -> Node:
    """A read of ``buf``: logical axis ``i`` is buffer axis ``axes[i]``; other buffer axes stay pinned at
    ``offsets``; the region starts at ``offsets`` (one per buffer axis)."""
    return Node("gm", (), tuple(shape), buf.dtype,
                {"buf": buf, "offsets": tuple(offsets), "axes": tuple(axes), "version": buf.root.version})


def full_leaf(buf: Buffer) -> Node:
    return gm_leaf(buf, [0] * len(buf.shape), range(len(buf.shape)), buf.shape)


# ----------------------------------------------------------------------------------------------
# statements
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Store:
    """``dst`` (a gm leaf: the written region) receives ``value`` broadcast to its shape."""

    dst: Node
    value: Node
    vec_tile: Tuple[int, ...]
    cube_tile: Optional[Dict[str, Any]]
    loc: Optional[Any] = None


@dataclass(eq=False)
class Loop:
    var: ir.Var
    start: Any
    stop: Any
    step: Any
    body: List[Any]
    name: str = ""


@dataclass(eq=False)
class Branch:
    """A runtime ``if``: ``then``/``orelse`` are None until a recording path explored them."""

    cond: Any
    then: Optional[List[Any]] = None
    orelse: Optional[List[Any]] = None


@dataclass(eq=False)
class Graph:
    """What one recording produced."""

    params: List[Buffer]
    body: List[Any]
    temps: List[Buffer]


def format_graph(g: Graph) -> str:
    """A readable dump of the recorded tensor graph (``dump_pass_graph``)."""
    lines = ["graph(" + ", ".join(f"{b.name}: {b.dtype.name}{list(b.shape)}" for b in g.params) + ")"]
    seen: Dict[int, str] = {}

    def expr(n: Node) -> str:
        if n.uid in seen:
            return seen[n.uid]
        if n.op == "gm":
            a = n.attrs
            text = f"{a['buf'].name}@{list(a['offsets'])}{list(n.shape)}"
        else:
            extra = {k: v for k, v in n.attrs.items() if k not in ("buf",)}
            text = f"{n.op}({', '.join(expr(i) for i in n.inputs)}{', ' + repr(extra) if extra else ''})"
        seen[n.uid] = text
        return text

    def block(stmts, depth):
        pad = "  " * depth
        for s in stmts:
            if isinstance(s, Store):
                lines.append(f"{pad}{expr(s.dst)} = {expr(s.value)}")
            elif isinstance(s, Loop):
                lines.append(f"{pad}loop {s.var!r} in range({s.start!r}, {s.stop!r}, {s.step!r}):")
                block(s.body, depth + 1)
            elif isinstance(s, Branch):
                lines.append(f"{pad}if {s.cond!r}:")
                block(s.then or [], depth + 1)
                lines.append(f"{pad}else:")
                block(s.orelse or [], depth + 1)
            else:  # a statement that describes itself (pypto.distributed's Comm)
                lines.append(f"{pad}{s.describe()}")

    block(g.body, 1)
    return "\n".join(lines)
