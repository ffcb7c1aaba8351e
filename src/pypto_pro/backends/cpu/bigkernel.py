"""Compile-time measures for big kernels (g++ CPU time of tensor-level model blocks).

A model block (a gated delta rule, a decode attention) lowers to one ``core_main`` of 20,000-35,000
lines; g++ -O3 spent about a minute of CPU on such a kernel (54 s for qwen3_next's 1.7 MB block,
82 s for glm_attention's 3.1 MB one), most of it optimising code that barely runs:

* **Fused loops, once per distinct loop.**  Every fused element-wise group carries its loop (the
  generic lambda that :func:`pto::fz::each` instantiates for 32-, 8- and 1-column steps); a block
  repeats the same few loops over and over (qwen3_next: 168 loops, 20 distinct; glm: 289, 26), each
  differing only in the pointers, GM windows and scalars it captures.  Each distinct loop becomes one
  function before ``core_main``, ``fused_loop_<n>(...)``, that takes those captured names as
  parameters, and every group calls it.  The loop's text is unchanged; the names it used now bind to
  parameters of the same types (values for ``const`` ones, references otherwise, as the lambda's
  ``[&]`` capture did), so it computes the same bits.
* **The glue at -Og.**  What remains in ``core_main`` and its outlined chunks is scalar control code
  (loop bounds, valid shapes, sites, the fused groups' guards) and one call per tile op or the
  per-op fallback of a fused group.  Those functions get ``__attribute__((optimize("Og")))``; the
  tile ops (``include/pto``) and the fused loops stay at the kernel's -O level, since g++ does not
  inline a function of a higher optimisation level into one of a lower level: each op is compiled
  once, out of line, at -O3.  The value-affecting flags (no FMA contraction, ``-fwrapv``, no
  strict aliasing) are command-line options and hold inside these functions as well.  (-O1 glue
  compiles a third slower; -O0 glue made qwen3_next's kernel run 15-20% longer.)

Both apply only to kernels whose body has at least :data:`BIG_LINES` lines
(``$PYPTO_CPU_BIG_KERNEL_LINES``; 0 turns them off); smaller kernels are emitted as before.
Measured in docs/performance.md ("Model blocks: compile time").
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Tuple

from . import outline

#: The body size (lines of ``core_main``) from which a kernel gets the big-kernel code shape.
BIG_LINES = 4000
_ENV = "PYPTO_CPU_BIG_KERNEL_LINES"

#: The attribute of the glue functions (``core_main`` and its outlined chunks) of a big kernel.
GLUE_ATTR = 'optimize("Og")'

#: Fused loops start with one of these calls (include/pto/fuse.h) and end with the line ``});``.
_LOOP_START = re.compile(r"^\s*pto::fz::each(?:_row_sum|_row_minmax<[^>]*>)?\(")
#: Names the fused loop code declares in its group (fusion.py: ``w_``, ``ah_``, ``m<i>_``, ``k<i>_``,
#: ``p<i>_``) or inside the lambda (``lanes_``, ``r_``, ``c_``): every name that ends in ``_``.
_NAME = re.compile(r"\b([A-Za-z]\w*_)\b")
_LAMBDA_OWN = {"lanes_", "r_", "c_"}
#: Declarations in a fused group, before its loop: ``T name = ...;`` or ``T a_, b_;``.
_DECL_INIT = re.compile(r"^\s*(?P<type>(?:const\s+)?[\w:]+(?:<[^<>;]*>)?(?:\s*\*\s*(?:const\s*)?)?)\s+"
                        r"(?P<name>[A-Za-z]\w*_)\s*=")
_DECL_LIST = re.compile(r"^\s*(?P<type>[\w:]+(?:<[^<>;]*>)?)\s+(?P<names>[A-Za-z]\w*_(?:\s*,\s*[A-Za-z]\w*_)*)\s*;")
_GROUP_OPEN = "// fused element-wise group"
#: What fused loops may use that ``core_main`` declares at its top (codegen.py): the fetch-ahead state.
_KERNEL_DECLS = {"ahead_": "pto::fz::Ahead"}


def big_lines() -> int:
    """The threshold: ``$PYPTO_CPU_BIG_KERNEL_LINES`` if set (0: never), else :data:`BIG_LINES`."""
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return BIG_LINES
    try:
        return max(0, int(raw))
    except ValueError:
        raise ValueError(f"{_ENV} must be a line count (0 turns the big-kernel code shape off), "
                         f"got {raw!r}") from None


def is_big(body: List[str]) -> bool:
    """Whether a kernel with this ``core_main`` body gets the big-kernel code shape."""
    limit = big_lines()
    return limit > 0 and len(body) >= limit


def _code(line: str) -> str:
    return line.split("//", 1)[0]


def _loop_end(lines: List[str], start: int) -> int:
    """The index after the fused loop that starts at ``lines[start]`` (its braces balance there)."""
    depth, i = 0, start
    while True:
        code = _code(lines[i])
        depth += code.count("{") - code.count("}")
        i += 1
        if depth == 0 and i > start:
            return i


def _declarations(lines: List[str], start: int) -> Dict[str, str]:
    """Name -> declared type of what the fused group around ``lines[start]`` declares before it."""
    found: Dict[str, str] = {}
    i = start - 1
    while i >= 0:
        line = lines[i]
        m = _DECL_INIT.match(_code(line))
        if m:
            found.setdefault(m.group("name"), " ".join(m.group("type").split()))
        m = _DECL_LIST.match(_code(line))
        if m:
            for name in re.split(r"\s*,\s*", m.group("names")):
                found.setdefault(name, m.group("type").strip())
        if _GROUP_OPEN in line:
            return found
        i -= 1
    return found


def _parameter(name: str, ctype: str) -> str:
    """The parameter that binds ``name`` as the lambda's by-reference capture did: a value for a const
    object (a scalar, a ``T* const``), else a reference."""
    if ctype.startswith("const ") or ctype.endswith("const"):
        return f"{ctype} {name}"
    return f"{ctype}& {name}"


def _signature(loop: List[str], decls: Dict[str, str]) -> Optional[List[Tuple[str, str]]]:
    """(name, parameter) for each group name the loop uses, in order of first use; None where one is
    not a declaration of its group (the loop then stays where it is)."""
    out: List[Tuple[str, str]] = []
    for line in loop:
        for name in _NAME.findall(_code(line)):
            if name in _LAMBDA_OWN or any(n == name for n, _ in out):
                continue
            if name not in decls:
                return None
            out.append((name, _parameter(name, decls[name])))
    return out


def share_loops(body: List[str]) -> Tuple[List[str], List[str]]:
    """Move every fused loop of ``body`` into a function, one per distinct loop; returns the function
    definitions (to go before ``core_main``) and the body with each loop replaced by its call."""
    functions: Dict[tuple, Tuple[str, List[str], List[Tuple[str, str]], List[int]]] = {}
    out: List[str] = []
    i = 0
    while i < len(body):
        line = body[i]
        if not _LOOP_START.match(line):
            out.append(line)
            i += 1
            continue
        end = _loop_end(body, i)
        indent = line[:len(line) - len(line.lstrip())]
        loop = [text[len(indent):] if text.startswith(indent) else text.lstrip() for text in body[i:end]]
        sig = _signature(loop, {**_KERNEL_DECLS, **_declarations(body, i)})
        if sig is None:
            out += body[i:end]
            i = end
            continue
        key = (tuple(_code(text).rstrip() for text in loop), tuple(p for _, p in sig))
        if key not in functions:
            functions[key] = (f"fused_loop_{len(functions)}", loop, sig, [])
        name, _, _, users = functions[key]
        users.append(len(out))
        out.append(f"{indent}{name}({', '.join(n for n, _ in sig)});  // the fused loop, defined above core_main")
        i = end
    defs: List[str] = []
    for name, loop, sig, users in functions.values():
        defs.append(f"// {name}: the fused loop of {len(users)} group(s); names in comments are the first one's")
        defs.append(f"static __attribute__((noinline)) void {name}({', '.join(p for _, p in sig)}) {{")
        defs += ["  " + text for text in loop]
        defs += ["}", ""]
    return defs, out


def glue_at_og(body: List[str]) -> List[str]:
    """``body`` with its outlined chunks (:mod:`.outline`) compiled at -Og like ``core_main``."""
    head = outline.LAMBDA_HEAD
    og = head.replace("noinline", f"noinline, {GLUE_ATTR}")
    return [line.replace(head, og, 1) if line.lstrip().startswith(head) else line for line in body]


def core_main_line(big: bool) -> str:
    """The line that opens ``core_main``."""
    attr = f"__attribute__(({GLUE_ATTR})) " if big else ""
    return f"static {attr}void core_main(pto::Core& C) {{"
