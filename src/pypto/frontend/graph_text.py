"""The recorded tensor graph as text (``kernel.graph_text(...)``, ``dump_pass_graph``).

The graph is a DAG: composed ops (``gelu``, ``softmax``, ...) use one value several times.  Each
computed value is printed once, on its own line with a name (``v3 = mul(v1, 0.5)  # FP32[16, 64]``),
before the first statement that needs it; later uses print the name.  The text therefore grows with
the number of nodes, not with the number of paths through the DAG.  GM reads print inline as
``buf@[offsets][shape]``.
"""
from __future__ import annotations

from typing import Any, Dict, List

from ..graph import Branch, Graph, Loop, Node, Store

#: node ops whose ``fn`` attribute names the computation (printed as that name)
_BY_FN = frozenset({"unary", "binary", "binary_scalar", "compare", "compare_scalar"})


def _shape(n: Node) -> str:
    return f"{n.dtype.name}[{', '.join(str(getattr(d, 'expr', d)) for d in n.shape)}]"


def _leaf(n: Node) -> str:
    a = n.attrs
    return f"{a['buf'].name}@{list(a['offsets'])}{list(n.shape)}"


class _Printer:
    def __init__(self) -> None:
        self.lines: List[str] = []
        self.names: Dict[int, str] = {}

    def ref(self, n: Node, pad: str) -> str:
        """The name (or inline text, for a GM read) of ``n``, printing its definition first if needed."""
        if n.op == "gm":
            return _leaf(n)
        name = self.names.get(n.uid)
        if name is not None:
            return name
        # iterative post-order: deep chains (nested composed ops) must not hit the recursion limit
        stack: List[Any] = [(n, False)]
        while stack:
            node, ready = stack.pop()
            if node.op == "gm" or node.uid in self.names:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((i, False) for i in reversed(node.inputs))
                continue
            name = f"v{len(self.names)}"
            self.names[node.uid] = name
            self.lines.append(f"{pad}{name} = {self.call(node)}  # {_shape(node)}")
        return self.names[n.uid]

    def operand(self, n: Node) -> str:
        return _leaf(n) if n.op == "gm" else self.names[n.uid]

    def call(self, n: Node) -> str:
        attrs = {k: v for k, v in n.attrs.items() if k != "buf"}
        args = [self.operand(i) for i in n.inputs]
        op = n.op
        if op in _BY_FN and "fn" in attrs:
            op = attrs.pop("fn")
            if "scalar" in attrs:
                scalar = repr(attrs.pop("scalar"))
                args = [scalar] + args if attrs.pop("reverse", False) else args + [scalar]
        args += [f"{k}={v!r}" for k, v in attrs.items()]
        return f"{op}({', '.join(args)})"

    def block(self, stmts, depth: int) -> None:
        pad = "  " * depth
        for s in stmts:
            if isinstance(s, Store):
                value = self.ref(s.value, pad)
                line = f"  # line {s.loc.lineno}" if getattr(s.loc, "lineno", None) else ""
                self.lines.append(f"{pad}{_leaf(s.dst) if s.dst.op == 'gm' else self.ref(s.dst, pad)} = "
                                  f"{value}{line}")
            elif isinstance(s, Loop):
                self.lines.append(f"{pad}loop {s.var!r} in range({s.start!r}, {s.stop!r}, {s.step!r}):")
                self.block(s.body, depth + 1)
            elif isinstance(s, Branch):
                self.lines.append(f"{pad}if {s.cond!r}:")
                self.block(s.then or [], depth + 1)
                self.lines.append(f"{pad}else:")
                self.block(s.orelse or [], depth + 1)
            else:  # a statement that describes itself (pypto.distributed's Comm)
                self.lines.append(f"{pad}{s.describe()}")


def format_graph(g: Graph) -> str:
    """A readable dump of the recorded tensor graph: one line per computed value and per statement."""
    p = _Printer()
    p.lines.append("graph(" + ", ".join(f"{b.name}: {b.dtype.name}{list(b.shape)}" for b in g.params) + ")")
    p.block(g.body, 1)
    return "\n".join(p.lines)
