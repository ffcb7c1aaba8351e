"""Values keep the contents they were computed from: a tensor computed from a buffer that the kernel
overwrites later is stored into a workspace first.

Recording builds expressions lazily -- ``b = a + 1`` is a node that reads ``a`` when the statement
that uses ``b`` runs -- while the official tensors are values: ``b`` holds ``a + 1`` as ``a`` was
then.  The two differ when ``a`` is written between (``for _ in range(2): b = a + 1; a[:] = a + 1``
unrolled by Python).  So before a store into a buffer, every live tensor (a Python object still
referenced by the kernel) whose expression reads that buffer is materialized now, unless the value
being stored is computed from it (then it is read before the write, in the same pass).  Views of
the buffer are aliases (they see the write) and are left alone.
"""
from __future__ import annotations

import weakref
from typing import Dict, FrozenSet, List

from ..graph import Buffer, Node


class LiveValues:
    """The computed tensors a recording made, weakly held, and which buffers each one reads."""

    def __init__(self) -> None:
        self.tensors: "weakref.WeakSet" = weakref.WeakSet()
        self._reads: Dict[int, FrozenSet[int]] = {}

    def reset(self, tensors) -> None:
        """Only ``tensors`` are live (a pypto.loop body's next path starts from the loop's entry)."""
        self.tensors = weakref.WeakSet(tensors)

    def track(self, tensor) -> None:
        self.tensors.add(tensor)

    def reads(self, n: Node) -> FrozenSet[int]:
        """ids of the root buffers ``n`` reads (memoised per node)."""
        order: List[Node] = []
        todo = [n]
        while todo:  # post-order without recursion: graphs can be deep
            m = todo.pop()
            if m.uid in self._reads:
                continue
            order.append(m)
            todo.extend(i for i in m.inputs if i.uid not in self._reads)
        for m in reversed(order):
            if m.uid in self._reads:
                continue
            own = {id(m.attrs["buf"].root)} if m.op == "gm" and isinstance(m.attrs.get("buf"), Buffer) else set()
            for i in m.inputs:
                own |= self._reads.get(i.uid, frozenset())
            self._reads[m.uid] = frozenset(own)
        return self._reads[n.uid]

    def before_store(self, dst: Node, value: Node) -> None:
        """Materialize the live computed tensors that read ``dst``'s buffer and do not feed ``value``."""
        root = id(dst.attrs["buf"].root)
        stale = [t for t in list(self.tensors)
                 if t.node is not None and t.node.op != "gm" and root in self.reads(t.node)]
        if not stale:
            return
        feeding = _ancestors(value)
        from ..ops.core import materialize

        for t in stale:
            if t.node.uid not in feeding:
                t.node = materialize(t.node)


def _ancestors(n: Node) -> set:
    seen, todo = set(), [n]
    while todo:
        m = todo.pop()
        if m.uid not in seen:
            seen.add(m.uid)
            todo.extend(m.inputs)
    return seen
