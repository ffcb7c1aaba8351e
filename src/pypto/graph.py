"""The recorded tensor graph: expression nodes, GM buffers and the statement tree.

Expressions are pure DAG nodes (``Node``) evaluated lazily where they are stored; statements
(``Store``, ``Loop``, ``Branch``) keep program order.  GM memory is a ``Buffer`` (a kernel
parameter, a workspace temporary, or a reshaped alias of either); a ``gm`` leaf node reads a
region of a buffer through an axis mapping, which makes slicing, ``transpose`` and ``permute`` of
stored tensors free.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pypto_pro.dtypes import DataType
from pypto_pro.ir import nodes as ir

from . import state

_uids = state.GRAPH_UIDS  # process-wide: state.py

from .nodeops import ELEMENTWISE, NODE_OPS  # noqa: F401  (ELEMENTWISE: re-exported for the lowering)


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
    #: the aliases made of this buffer (the lowering picks the root's layout knowing all of them)
    aliases: List["Buffer"] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.base is not None:
            self.base.aliases.append(self)

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
    #: the kernel line that computed it (recorded nodes other than GM reads; None otherwise): the
    #: lowering labels the tile ops of the node with it, so a value materialised for a later
    #: statement is reported at the line that wrote it
    loc: Optional[Any] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in NODE_OPS:
            raise ValueError(f"node op {self.op!r} is not declared in pypto/nodeops.py")
        if self.op != "gm" and self.loc is None:
            from .frontend.tracer import recording_location

            self.loc = recording_location(skip=3)  # past __post_init__ and the generated __init__

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
    #: a computed tensor's value stored where it was made (frontend/snapshots.py), inserted after the
    #: fact: one recording path may hold it where another does not
    held: bool = False


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
