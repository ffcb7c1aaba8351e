"""Numpy evaluation of a recorded tensor graph (the golden side of pass verification).

The evaluator walks the graph's statements; each node is computed by its op's numpy reference in the
node op table (``pypto/nodeops.py``), in FP32 (or the integer type), rounded once to its dtype, like
the tile ops; the 16-bit float ops the official AutoCast computes in FP32 pass their FP32 values
on, as the lowering does (``pypto/lower/widening.py``)."""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from pypto_pro.arch import resolve_arch

from .graph import Branch, Graph, Loop, Node, Store
from .nodeops import NODE_OPS
from .lower.program import eval_expr
from .lower.widening import Widening
from .symbolic import SymbolicScalar, to_expr


class _Eval:
    def __init__(self, graph: Graph, user: Dict[int, np.ndarray], env: Dict[int, Any], arch: Optional[str]):
        self.env = env
        self.arrays: Dict[int, np.ndarray] = {}
        #: node uid -> value within the current statement (expressions are DAGs: gcd's unrolled steps)
        self.cache: Dict[int, np.ndarray] = {}
        self.widening = Widening({}, resolve_arch(arch).name)
        for b in graph.params:
            self.arrays[b.uid] = user[b.index]

    def scalar(self, v):
        if isinstance(v, SymbolicScalar):
            return eval_expr(v.expr, self.env)
        return v

    def buffer(self, buf) -> np.ndarray:
        arr = self.arrays.get(buf.uid)
        if arr is None:
            if buf.kind == "alias":
                arr = self.buffer(buf.base).reshape([int(self.scalar(d)) for d in buf.shape])
            else:
                arr = np.zeros([int(self.scalar(d)) for d in buf.shape], buf.dtype.require_numpy())
            self.arrays[buf.uid] = arr
        return arr

    def region(self, n: Node):
        a = n.attrs
        arr = self.buffer(a["buf"])
        index = [int(self.scalar(o)) for o in a["offsets"]]
        sl = list(index)
        for j, ax in enumerate(a["axes"]):
            sl[ax] = slice(index[ax], index[ax] + int(self.scalar(n.shape[j])))
        view = arr[tuple(sl)]
        kept = sorted(a["axes"])
        return view, [kept.index(ax) for ax in a["axes"]]

    def value(self, n: Node) -> np.ndarray:
        n = self.widening.resolve(n)
        hit = self.cache.get(n.uid)
        if hit is None:
            hit = self.cache[n.uid] = self._value(n)
        return hit

    def _value(self, n: Node) -> np.ndarray:
        ins = [self.value(i) for i in n.inputs]
        shape = [int(self.scalar(d)) for d in n.shape]
        with np.errstate(all="ignore"):
            return NODE_OPS[n.op].reference(self, n, ins, shape)

    def run(self, stmts) -> None:
        for s in stmts:
            if isinstance(s, Store):
                self.cache.clear()
                view, perm = self.region(s.dst)
                val = np.broadcast_to(self.value(s.value), [int(self.scalar(d)) for d in s.dst.shape])
                inv = np.argsort(perm)
                view[...] = np.transpose(val, inv).astype(view.dtype)
            elif isinstance(s, Loop):
                start, stop, step = (eval_expr(to_expr(e), self.env) for e in (s.start, s.stop, s.step))
                for i in range(start, stop, step):
                    self.env[s.var.uid] = i
                    self.run(s.body)
            elif isinstance(s, Branch):
                self.run((s.then if eval_expr(s.cond, self.env) else s.orelse) or [])
            elif hasattr(s, "reference"):  # a statement that evaluates itself (a value-dependent scalar read)
                s.reference(self)
            else:
                raise NotImplementedError(f"reference evaluation of {type(s).__name__} statements "
                                          "(pass verification of communicating kernels)")


def run_graph(graph: Graph, user: Dict[int, np.ndarray], dyn: Dict[int, int],
              arch: Optional[str] = None) -> Dict[int, np.ndarray]:
    """Execute ``graph`` on numpy for ``arch`` (its 16-bit float rules; None: ``$PYPTOPRO_JIT_ARCH``);
    returns the parameter arrays (modified in place) by argument index."""
    ev = _Eval(graph, user, dict(dyn), arch)
    ev.run(graph.body)
    return user


__all__ = ["run_graph"]
