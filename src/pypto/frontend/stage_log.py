"""``PYPTO_LOG`` lines for the tensor level's compile stages (recording, lowering).

INFO: one line per stage with its time and size, so a slow first call shows where the time went
(the cpu backend adds its own lines: C++ codegen at DEBUG, the kernel's compile and the runtime
library build at INFO).  DEBUG adds the recorded graph and the lowered tile program themselves.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable

from pypto_pro.ir import nodes as ir
from pypto_pro.log import logger

from ..graph import Branch, Graph, Loop, Store


def _statements(stmts: Iterable[Any]):
    for s in stmts:
        yield s
        if isinstance(s, Loop):
            yield from _statements(s.body)
        elif isinstance(s, Branch):
            yield from _statements((s.then or []) + (s.orelse or []))


def _node_count(graph: Graph) -> int:
    seen = set()
    stack = [n for s in _statements(graph.body) if isinstance(s, Store) for n in (s.dst, s.value)]
    while stack:
        n = stack.pop()
        if n.uid not in seen:
            seen.add(n.uid)
            stack.extend(n.inputs)
    return len(seen)


def recorded(name: str, graph: Graph, seconds: float) -> None:
    """The recording stage: statements and graph nodes of the kernel body."""
    if not logger.isEnabledFor(logging.INFO):
        return
    stores = sum(isinstance(s, Store) for s in _statements(graph.body))
    logger.info("recorded tensor kernel %s: %d statements, %d graph nodes, %d workspace tensors (%.1f ms)",
                name, stores, _node_count(graph), len(graph.temps), seconds * 1e3)
    if logger.isEnabledFor(logging.DEBUG):
        from .graph_text import format_graph

        logger.debug("tensor graph of %s:\n%s", name, format_graph(graph))


def lowered(name: str, program: Any, seconds: float) -> None:
    """The lowering stage: the tile kernel it produced."""
    if not logger.isEnabledFor(logging.INFO):
        return
    kernel = program.kernel
    ops = sum(isinstance(s, ir.OpStmt) for s in ir.walk(kernel.body))
    logger.info("lowered tensor kernel %s to a %s tile kernel: %d tile ops, %d tiles (%.1f ms)", name, kernel.kind,
                ops, len(kernel.tiles), seconds * 1e3)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("lowered tile program of %s:\n%s", name, program.text())

