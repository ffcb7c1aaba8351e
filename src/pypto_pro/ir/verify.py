"""The IR verifier: the structural rules every tile kernel obeys, whichever frontend built it.

Both frontends produce tile IR: the tile-level parser (``language/parser``) from a kernel's source and
the tensor-level lowering (``pypto/lower``) from a recorded graph.  :func:`verify` runs on every kernel
of both, after their passes, before any backend sees it, so a backend can rely on these rules:

* sections: an op runs on one side (``OpDef.side``: vector or cube); inside ``pl.section_vector()`` /
  ``pl.section_cube()`` it must be that section's side; outside every section its side must be the
  kernel's only side (:func:`kernel_kind`), and a kernel's sections and ops fit its ``kind``;
* placement: every tile lies in a memory of the arch, at an address aligned for that memory, with a
  size that holds the tile, inside the memory's capacity, in a layout legal for that memory and arch
  (:func:`check_tile_placement`); the slots of a tile group laid out from a base address do not share
  bytes (:func:`check_slots_apart`; explicit ``addrs=[...]`` may alias on purpose).

The parser calls the same rule functions while it parses (so that an error points at the offending
line the moment it is seen); the rules themselves live only here.  Errors are ``KernelError``
subclasses: ``KernelTypeError`` for a misplaced op or an illegal layout, ``KernelSyntaxError`` for a
kernel mixing sides without sections, ``KernelMemoryError`` for placement.
"""
from __future__ import annotations

import builtins
from typing import Dict, Iterable, List, Optional, Sequence

from ..errors import KernelMemoryError, KernelSyntaxError, KernelTypeError, SourceLoc
from . import nodes as ir
from .layout import footprint_bytes
from .types import Layout, MemorySpace, TileType

_SIDES = {"vector": {"vector"}, "cube": {"cube"}, "mix": {"vector", "cube"}}


# ------------------------------------------------------------------ sections
def check_side(stmt: ir.OpStmt, side: Optional[str], section: Optional[str]) -> None:
    """An op of ``side`` may not stand in a section of the other side."""
    if side is not None and section is not None and side != section:
        raise KernelTypeError(f"pl.{stmt.op.aliases[0]} runs on the {side} core; it cannot stand in "
                              f"pl.section_{section}()", loc=stmt.loc)


def kernel_kind(sections_seen: Iterable[str], sides_outside: Dict[str, ir.Stmt], kernel: str = "",
                loc: Optional[SourceLoc] = None) -> str:
    """The kind ("vector", "cube", "mix") of a kernel with these sections and these sides of ops outside
    every section (side -> the first such op); raises when an op outside the sections does not fit."""
    seen = set(sections_seen)
    if seen:
        kind = "vector" if seen == {"vector"} else "cube" if seen == {"cube"} else "mix"
        for side, stmt in sides_outside.items():
            if kind == "mix" or side != kind:
                raise KernelTypeError(
                    f"pl.{stmt.op.aliases[0]} runs on the {side} core but stands outside every section of a "
                    f"{kind} kernel; wrap it in pl.section_{side}()", loc=stmt.loc, kernel=kernel or None)
        return kind
    sides = set(sides_outside)
    if sides == {"vector", "cube"}:
        raise KernelSyntaxError("the kernel uses both cube and vector tiles without sections; wrap cube code in "
                                "pl.section_cube() and vector code in pl.section_vector()", loc=loc,
                                kernel=kernel or None)
    return sides.pop() if sides else "vector"


def _sections(kernel: ir.KernelIR) -> str:
    """Check every op against its section; return the kind the sections and ops imply."""
    seen: set = set()
    outside: Dict[str, ir.Stmt] = {}

    def visit(stmts: Sequence[ir.Stmt], section: Optional[str]) -> None:
        for s in stmts:
            if isinstance(s, ir.Section):
                if section is not None:
                    raise KernelSyntaxError("sections cannot be nested", loc=s.loc)
                seen.add(s.kind)
                visit(s.body, s.kind)
            elif isinstance(s, ir.OpStmt):
                side = s.op.side(s.args)
                check_side(s, side, section)
                if side is not None and section is None:
                    outside.setdefault(side, s)
            else:
                for body in _bodies(s):
                    visit(body, section)

    visit(kernel.body, None)
    return kernel_kind(seen, outside, kernel.name)


def _bodies(s: ir.Stmt) -> List[List[ir.Stmt]]:
    """The nested statement lists of a control-flow statement (ir.walk's order)."""
    if isinstance(s, ir.For):
        return [s.body]
    if isinstance(s, ir.If):
        return [s.then_body, s.else_body]
    if isinstance(s, ir.While):
        return [s.pre, s.body]
    return []


# ------------------------------------------------------------------ placement
def check_tile_placement(ttype: TileType, layout: Layout, addr: int, size: int, arch, what: str) -> None:
    """A tile of ``ttype`` in ``layout`` at byte ``addr`` of its memory, ``size`` bytes large, on ``arch``."""
    space = ttype.target_memory.name
    cap = arch.capacity.get(space)
    if cap is None:
        raise KernelMemoryError(f"{what}: memory {space} does not exist on arch {arch.name}")
    align = arch.addr_align.get(space, 1)
    if addr < 0 or addr % align:
        raise KernelMemoryError(f"{what}: address {addr:#x} of a {space} tile must be a non-negative multiple of "
                                f"{align} bytes")
    if (arch.name == "a5" and layout in (Layout.ZZ, Layout.NN)
            and ttype.target_memory in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc)):
        raise KernelTypeError(f"{what}: layout {layout.name} is not legal for a {space} tile on arch a5 (a5's Left "
                              f"tiles are NZ; ZZ/NN are the a2/a3 fractals: @pl.jit(arch=\"a3\"))")
    packed = -(-ttype.shape[0] * ttype.shape[1] * ttype.dtype.bits() // 8)  # 4-bit types: two per byte
    if isinstance(size, bool) or not isinstance(size, int) or size < packed:
        raise KernelMemoryError(f"{what}: size={size!r} is smaller than the tile: a {ttype.shape[0]}x"
                                f"{ttype.shape[1]} {ttype.dtype.name} tile needs {packed} bytes")
    end = addr + builtins.max(size, tile_span(ttype, layout))
    if end > cap:
        raise KernelMemoryError(f"{what}: a {ttype.shape[0]}x{ttype.shape[1]} {ttype.dtype.name} tile at {addr:#x} "
                                f"ends at byte {end}, beyond the {cap}-byte {space} of arch {arch.name}")


def tile_span(ttype: TileType, layout: Layout) -> int:
    """Bytes a tile occupies from its address (fractal layouts pad their runs, ir/layout.py)."""
    return footprint_bytes(ttype.shape[0], ttype.shape[1], layout, ttype.dtype, ttype.target_memory)


def check_slots_apart(ttype: TileType, slots: Sequence[ir.TileDecl], what: str) -> None:
    """Slots of one group must not share bytes.  Slot i of a base address sits at ``base + i x
    prod(shape) x element bytes`` (no rounding), but a fractal tile whose 32-byte runs (or ZZ/NN blocks)
    are padded occupies more than that (ir/layout.py), so its slots would overlap and corrupt each other:
    rejected instead of computing wrong numbers."""
    span = tile_span(ttype, slots[0].layout)
    ordered = sorted(slots, key=lambda d: d.addr)
    for lo, hi in zip(ordered, ordered[1:]):
        if lo.addr + span > hi.addr:
            raise KernelMemoryError(f"{what}: slots {lo.name} and {hi.name} overlap: a {ttype.shape[0]}x"
                                    f"{ttype.shape[1]} {ttype.dtype.name} {ttype.target_memory.name} tile in layout "
                                    f"{lo.layout.name} occupies {span} bytes (its fractal runs are padded to 32 "
                                    f"bytes), but the slots are {hi.addr - lo.addr} bytes apart; use a shape of whole "
                                    f"32-byte runs or pass addrs=[...] at least {span} bytes apart")


def _placement(kernel: ir.KernelIR) -> None:
    for t in kernel.tiles:
        try:
            check_tile_placement(t.ttype, t.layout, t.addr, t.size, kernel.arch, f"tile {t.name}")
        except (KernelMemoryError, KernelTypeError) as e:
            raise e.attach(loc=t.loc)
    for g in kernel.groups:
        if g.may_alias:
            continue
        try:
            check_slots_apart(g.slots[0].ttype, g.slots, f"tile group {g.name}")
        except KernelMemoryError as e:
            raise e.attach(loc=g.loc)


# ------------------------------------------------------------------ entry
def verify(kernel: ir.KernelIR) -> ir.KernelIR:
    """Check ``kernel`` against every rule above; returns it (raises the first violation)."""
    try:
        implied = _sections(kernel)
        if not _SIDES[implied] <= _SIDES[kernel.kind]:
            raise KernelTypeError(f"a {kernel.kind} kernel holds {implied} work (its sections and ops need a "
                                  f"{implied} kernel)")
        _placement(kernel)
    except (KernelMemoryError, KernelSyntaxError, KernelTypeError) as e:
        raise e.attach(kernel=kernel.name)
    return kernel
