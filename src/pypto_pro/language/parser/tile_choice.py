"""A tile chosen at run time among several whole tiles: ``(t0, t1)[i]`` or an inlined helper that returns
different tiles from the branches of a runtime ``if``.

The candidates' declarations are gathered into one extra tile group (the union); the choice is a
:class:`~pypto_pro.ir.nodes.SlotRef` into it whose index the parser computes.  Every backend and the
auto_mutex pass already handle slot references, so a chosen tile behaves like a tile-group slot: the
interpreter and the C++ code select the declaration at run time, and auto_mutex locks the chosen slot's
mutex ids.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ... import dtypes as dt
from ...errors import KernelTypeError
from ...ir import nodes as ir


def _signature(decl: ir.TileDecl) -> Tuple:
    t = decl.ttype
    return (tuple(t.shape), t.dtype, t.target_memory, decl.layout)


class TileUnion:
    """The candidate tiles of one runtime choice; :meth:`index_of` places a whole-tile reference in it."""

    def __init__(self, name: str):
        self.name = name
        self.slots: List[ir.TileDecl] = []
        self.ids: List[List[int]] = []
        self.offsets: Dict[int, int] = {}  # id(group or declaration) -> its first slot in the union
        self.sources: List[object] = []    # the groups / lone declarations, in union order

    def index_of(self, parser, ref, node) -> ir.Expr:
        """The union index of ``ref`` (a tile or a slot of a group): a constant or a runtime expression."""
        if isinstance(ref, ir.SlotRef):
            group, index = ref.group, ir.BinOp("%", ref.index, ir.const(ref.group.depth), dt.DT_INT64)
        elif isinstance(ref, ir.DeclRef) and ref.tile.group is not None:
            group, index = ref.tile.group, ir.const(ref.tile.group.slots.index(ref.tile))
        elif isinstance(ref, ir.DeclRef):
            group, index = None, ir.const(0)
        else:
            raise parser.not_implemented("a runtime choice between tiles that are subviews (only whole tiles and "
                                         "tile-group slots can be chosen at run time)", node)
        source = group if group is not None else ref.tile
        key = id(source)
        if key not in self.offsets:
            decls = group.slots if group is not None else [ref.tile]
            ids = group.mutex_ids if group is not None else [[] for _ in decls]
            if self.slots and _signature(decls[0]) != _signature(self.slots[0]):
                raise parser.err(KernelTypeError, f"the tiles chosen at run time differ in shape, dtype, memory or "
                                 f"layout ({decls[0].name} and {self.slots[0].name})", node)
            if self.ids and [len(i) for i in ids[:1]] != [len(i) for i in self.ids[:1]]:
                raise parser.not_implemented("a runtime choice between tiles with and without mutex ids (or with "
                                             "different numbers of them)", node)
            self.offsets[key] = len(self.slots)
            self.sources.append(source)
            self.slots.extend(decls)
            self.ids.extend(list(i) for i in ids)
        offset = self.offsets[key]
        if isinstance(index, ir.Const):
            return ir.const(offset + index.value)
        return index if offset == 0 else ir.BinOp("+", index, ir.const(offset), dt.DT_INT64)

    def ref(self, parser, index: ir.Var) -> ir.TileRef:
        """The chosen tile, ``index`` holding its union index."""
        if len(self.sources) == 1 and isinstance(self.sources[0], ir.TileDecl):
            return ir.DeclRef(self.sources[0])
        if len(self.sources) == 1:
            return ir.SlotRef(self.sources[0], index)
        group = ir.TileGroupDecl(f"{self.name}_choice", list(self.slots), self.ids,
                                 ir.Var(f"{self.name}_choice_cursor", dt.DT_INT64),
                                 may_alias=True)  # a choice among tiles declared elsewhere
        parser.groups.append(group)
        return ir.SlotRef(group, index)


class TileSlot:
    """The merge slot of an inlined helper that returns tiles: the union and the variable holding the index."""

    def __init__(self, name: str):
        self.union = TileUnion(name)
        self.index = ir.Var(f"{name}_tile", dt.DT_INT64)
        self.made: Optional[ir.TileRef] = None

    def ref(self, parser) -> ir.TileRef:
        if self.made is None:
            self.made = self.union.ref(parser, self.index)
        return self.made


def choose_tile(parser, name: str, refs, index: ir.Var, node) -> ir.TileRef:
    """``refs[index]`` for a runtime ``index`` already checked to be in range."""
    union = TileUnion(name)
    positions = [union.index_of(parser, r, node) for r in refs]
    if all(isinstance(p, ir.Const) and p.value == k for k, p in enumerate(positions)):
        chosen = index
    else:
        from .structs import select_tree
        chosen = parser.new_var(f"{name}_tile", select_tree(index, positions), node)
    return union.ref(parser, chosen)


def _whole_tiles(*values) -> bool:
    return all(isinstance(v, (ir.DeclRef, ir.SlotRef)) for v in values) and \
        len({_signature(v.decl) for v in values}) == 1


def select_tile(parser, cond: ir.Expr, a, b, node):
    """``a if cond else b`` for two whole tiles of one type, else None."""
    if not _whole_tiles(a, b):
        return None
    union = TileUnion(parser.assign_target or "tiles")
    ia, ib = union.index_of(parser, a, node), union.index_of(parser, b, node)
    index = parser.new_var(f"{union.name}_tile", ir.Select(cond, ia, ib, dt.DT_INT64), node)
    return union.ref(parser, index)


def merge_branch_tiles(parser, name: str, a, b, then_body: list, else_body: list, node):
    """A name bound to different whole tiles by the two branches of a runtime ``if``: the tile chosen by the
    branch taken (each branch ends by setting the union index), else None."""
    if not _whole_tiles(a, b):
        return None
    union = TileUnion(name)
    index = ir.Var(f"{name}_tile", dt.DT_INT64)
    then_body.append(ir.Assign(parser.loc(node), index, union.index_of(parser, a, node)))
    else_body.append(ir.Assign(parser.loc(node), index, union.index_of(parser, b, node)))
    return union.ref(parser, index)
