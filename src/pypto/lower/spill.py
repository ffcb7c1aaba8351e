"""Passes that do not fit on chip: fuse less.

A statement's value is computed by one fused pass: every intermediate of its element-wise DAG lives
in a tile at once.  When the tiles of a pass overflow a memory space even at its smallest tiles, the
lowering splits the pass instead of refusing the program: the pass's direct operands that are not
already GM reads become passes of their own, whose results go to GM workspace and which the pass then
reads back (each split pass may split again).  Results are unchanged: a spilled value is stored in its
own dtype, and the element-wise ops compute the same values in the same order whatever fuses (the
tile shapes a split pass gets back are the statement's, so a reduction keeps its order).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, Set

from ..graph import Node
from ..nodeops import NODE_OPS


class Spills:
    """The nodes (by uid) that the lowering computes in a pass of their own, chosen as passes overflow."""

    def __init__(self) -> None:
        self.uids: Set[int] = set()
        #: the spilled nodes whose own pass is being planned (there, the node is the pass's root)
        self._computing: Set[int] = set()

    def wanted(self, n: Node) -> bool:
        """Whether a pass reaching ``n`` reads it from a pass of its own (not when planning that pass)."""
        return n.uid in self.uids and n.uid not in self._computing

    @contextmanager
    def computing(self, n: Node) -> Iterator[None]:
        """While ``n``'s own pass is lowered."""
        self._computing.add(n.uid)
        try:
            yield
        finally:
            self._computing.discard(n.uid)

    def split(self, operands: Iterable[Node], done: Dict[int, Node]) -> bool:
        """Mark ``operands`` that are computed (not GM reads, not yet materialised) to be passes of their
        own; False when there is none left, i.e. the pass cannot be split further."""
        new = [n for n in operands if not NODE_OPS[n.op].leaf and n.uid not in done and n.uid not in self.uids]
        self.uids.update(n.uid for n in new)
        return bool(new)
