"""Computed tensors are values: a write into a buffer does not change a tensor computed from it
before, and writing into a computed tensor updates that tensor alone.

Recording builds expressions lazily -- ``b = a + 1`` is a node that reads ``a`` when the statement
that uses ``b`` runs -- while the official tensors are values: ``b`` holds ``a + 1`` as ``a`` was
then.  The two differ when ``a`` is written between (``for _ in range(2): b = a + 1; a[:] = a + 1``
unrolled by Python).  So each computed tensor remembers where it was made (the statement list and
position, and the tile shapes then in scope); when it must hold its value -- a store into a buffer
it reads is about to be recorded while the tensor is still referenced, or the kernel writes into
the tensor itself (``t = pypto.full(...); t[i:j, :] = v``) -- its expression is stored into a
workspace *at that point*, which is then what the tensor reads.  A store whose value is computed
from the tensor leaves it alone (it is read before the write, in the same pass), and views of a
buffer are aliases (they see the write).
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Dict, FrozenSet, List, Tuple

from ..graph import Buffer, Node, Store, _uids, full_leaf


class LiveValues:
    """The computed tensors a recording made (weakly held) with where each was made."""

    def __init__(self) -> None:
        #: id(tensor) -> (weak reference to it, where it was made); keyed by identity, since a Tensor's
        #: == records an element-wise comparison
        self.origins: Dict[int, Tuple["weakref.ref", Any]] = {}
        self._reads: Dict[int, FrozenSet[int]] = {}
        #: id(statement list) -> original positions where snapshots were inserted (to map later ones)
        self._inserted: Dict[int, List[int]] = {}

    def reset(self, tensors) -> None:
        """Only ``tensors`` are live (a pypto.loop body's next path starts from the loop's entry)."""
        keep = {id(t) for t in tensors}
        self.origins = {k: v for k, v in self.origins.items() if k in keep}

    def tensors(self) -> list:
        """The tracked tensors still referenced by the kernel."""
        alive = []
        for key, (ref, _) in list(self.origins.items()):
            t = ref()
            if t is None:
                del self.origins[key]
            else:
                alive.append(t)
        return alive

    def track(self, tensor, rec) -> None:
        stmts = rec.stack[-1]
        self.origins[id(tensor)] = (weakref.ref(tensor), (stmts, len(stmts), rec.vec_tile, rec.cube_tile))

    def _origin(self, tensor):
        entry = self.origins.pop(id(tensor), None)
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def reads(self, n: Node) -> FrozenSet[int]:
        """ids of the root buffers ``n`` reads (memoised per node)."""
        order: List[Node] = []  # post-order: every input before its users, each node once
        seen = {n.uid}
        stack = [(n, iter(n.inputs))]
        while stack:  # iterative DFS (graphs can be deep); revisiting shared inputs would be exponential
            m, inputs = stack[-1]
            for i in inputs:
                if i.uid not in self._reads and i.uid not in seen:
                    seen.add(i.uid)
                    stack.append((i, iter(i.inputs)))
                    break
            else:
                stack.pop()
                order.append(m)
        for m in order:
            if m.uid in self._reads:
                continue
            own = {id(m.attrs["buf"].root)} if m.op == "gm" and isinstance(m.attrs.get("buf"), Buffer) else set()
            for i in m.inputs:
                own |= self._reads.get(i.uid, frozenset())
            self._reads[m.uid] = frozenset(own)
        return self._reads[n.uid]

    def before_store(self, rec, dst: Node, value: Node) -> None:
        """Give their values to the live computed tensors that read ``dst``'s buffer and do not feed
        ``value``."""
        root = id(dst.attrs["buf"].root)
        stale = [t for t in self.tensors()
                 if t.node is not None and t.node.op != "gm" and root in self.reads(t.node)]
        if not stale:
            return
        feeding = _ancestors(value)
        for t in stale:
            if t.node.uid not in feeding:
                self.hold(rec, t)

    def hold(self, rec, tensor) -> Node:
        """Store ``tensor``'s expression into a workspace where the tensor was made; the tensor then
        reads that workspace (returned: a leaf of all of it)."""
        from ..tensor import check_valid_regions

        n = tensor.node
        if n.op == "gm":
            return n
        check_valid_regions(n)
        buf = rec.new_temp(n.shape, n.dtype)
        from .tracer import caller_location

        store = Store(full_leaf(buf), n, None, None, caller_location(), held=True)
        origin = self._origin(tensor)
        if origin is None:  # not made while recording this body: store it now
            rec.store(store.dst, n)
        else:
            stmts, count, store.vec_tile, store.cube_tile = origin
            done = self._inserted.setdefault(id(stmts), [])
            stmts.insert(count + sum(1 for q in done if q <= count), store)
            done.append(count)
            buf.root.version += 1
        tensor.node = full_leaf(buf)
        return tensor.node


def redirect(value: Node, old: Node, new: Node) -> Node:
    """``value`` with every read of ``old`` made a read of ``new`` (nodes on the way rebuilt, others kept).

    Writing into a computed tensor gives it a workspace (:meth:`LiveValues.hold`); the value being
    written was recorded before that and reads the tensor's old expression.  Until this write the
    workspace holds exactly that expression, so reading it instead is the same -- except in a
    ``pypto.loop`` body recorded once, where only the workspace carries the previous iteration's write
    (``acc = pypto.zeros(...)`` before the loop, ``acc[:] = acc + part`` in it)."""
    if old.uid not in _ancestors(value):
        return value
    done: Dict[int, Node] = {old.uid: new}
    stack = [value]
    while stack:  # iterative post-order: graphs can be deep
        m = stack[-1]
        if m.uid in done:
            stack.pop()
            continue
        todo = [i for i in m.inputs if i.uid not in done]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        inputs = tuple(done[i.uid] for i in m.inputs)
        done[m.uid] = m if all(a is b for a, b in zip(inputs, m.inputs)) else \
            dataclasses.replace(m, inputs=inputs, uid=next(_uids))
    return done[value.uid]


def _ancestors(n: Node) -> set:
    seen, todo = set(), [n]
    while todo:
        m = todo.pop()
        if m.uid not in seen:
            seen.add(m.uid)
            todo.extend(m.inputs)
    return seen
