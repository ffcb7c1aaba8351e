"""Split a long kernel body into separately compiled functions (g++ compile time).

Every core runs one ``core_main``; a tensor-level model block (a decode attention with several matmuls,
softmax steps and their fallbacks) makes it tens of thousands of lines long.  g++'s dataflow passes
(live registers, reaching definitions, PRE, load CSE after reload) grow faster than linearly in the
size of one function: a 3 MB ``core_main`` took 154 s of compile CPU at -O3, nearly all of it in
those passes.  Cutting the body into chunks of about :data:`CHUNK_LINES` lines, each wrapped in a
lambda that g++ may not inline (``[&]() __attribute__((noinline)) { ... }();``), keeps every function
small.  The lambdas capture the kernel's scalars by reference, so the code inside is unchanged; only
a call per chunk is added (a chunk is hundreds of lines of tile ops, so the call costs nothing
measurable) and the results are the same bits.

A chunk is never cut where the cut would change meaning: a chunk holding ``break;``/``continue;``
(which would then leave the lambda rather than the kernel loop), or a declaration at the chunk's own
level (a name later statements may read), stays inline.
"""
from __future__ import annotations

import os
import re
from typing import List

#: The own size (lines not already inside an outlined chunk) at which a run of statements is outlined.
#: ``PYPTO_CPU_OUTLINE_LINES=0`` turns outlining off.
CHUNK_LINES = 400
_ENV = "PYPTO_CPU_OUTLINE_LINES"

#: How an outlined chunk opens (:mod:`.bigkernel` adds an attribute to it).
LAMBDA_HEAD = "[&]() __attribute__((noinline)) {"

_ESCAPE = re.compile(r"\b(break|continue|return|goto)\b\s*;")
_DECL = re.compile(r"^\s*(?:static\s+|const\s+|constexpr\s+)*(?:auto|bool|float|double|u?int(?:8|16|32|64)_t|"
                   r"pto::\w+(?:<[^;=]*>)?)\s*[&*]?\s+\w+\s*(?:=|\[|\{|;|\()")


def chunk_lines() -> int:
    """The outlining threshold: ``$PYPTO_CPU_OUTLINE_LINES`` if set (0: off), else :data:`CHUNK_LINES`."""
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return CHUNK_LINES
    try:
        return max(0, int(raw))
    except ValueError:
        raise ValueError(f"{_ENV} must be a line count (0 turns outlining off), got {raw!r}") from None


def _depth_zero(lines: List[str]) -> List[str]:
    """The lines of ``lines`` at brace depth 0 relative to the first line (the chunk's own level)."""
    out, depth = [], 0
    for line in lines:
        code = line.split("//", 1)[0]
        if depth == 0:
            out.append(code)
        depth += code.count("{") - code.count("}")
    return out


def can_outline(lines: List[str]) -> bool:
    """Whether ``lines`` (whole statements) can move into a lambda without changing their meaning."""
    text = "\n".join(line.split("//", 1)[0] for line in lines)
    if _ESCAPE.search(_strip_lambdas(text)):
        return False
    return not any(_DECL.match(code) for code in _depth_zero(lines))


def _strip_lambdas(text: str) -> str:
    """``text`` without the bodies of the lambdas it defines (a ``return`` there returns from the lambda)."""
    out, i = [], 0
    while True:
        j = min((p for p in (text.find("[&]", i), text.find("[=]", i)) if p >= 0), default=-1)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        k = text.find("{", j)
        if k < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        depth, m = 0, k
        while m < len(text):
            depth += {"{": 1, "}": -1}.get(text[m], 0)
            m += 1
            if depth == 0:
                break
        i = m


def wrap(lines: List[str], start: int, indent: str) -> int:
    """Move ``lines[start:]`` into a non-inlined lambda called in place; returns the lines added."""
    body = ["  " + line for line in lines[start:]]
    lines[start:] = [indent + LAMBDA_HEAD + "  // outlined: keeps each function small",
                     *body, indent + "}();"]
    return 2


class Chunker:
    """Outlines runs of statements of one statement list as their own size reaches the threshold.

    ``g.outlined`` counts the lines already inside outlined chunks, so a chunk's own size leaves out
    what nested lists outlined."""

    def __init__(self, g, limit: int):
        self.g, self.limit = g, limit
        self._reset()

    def _reset(self) -> None:
        self.start, self.inner = len(self.g.lines), self.g.outlined

    def after_statement(self) -> None:
        g = self.g
        if self.limit <= 0:
            return
        own = (len(g.lines) - self.start) - (g.outlined - self.inner)
        if own < self.limit:
            return
        if can_outline(g.lines[self.start:]):
            total = len(g.lines) - self.start
            added = wrap(g.lines, self.start, "  " * g.indent)
            g.outlined = self.inner + total + added
            g.outlined_chunks += 1
        self._reset()
