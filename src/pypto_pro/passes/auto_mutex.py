"""The auto_mutex pass (docs/language.md): mutex locks around ops touching tile-group tiles.

For every data-touching op, each tile operand drawn from a tile group with mutex ids gets a
``mutex_lock(pipe=<op's pipe>, mutex_id=id)`` before the op and a ``mutex_unlock`` after it.
A slot chosen at run time locks dynamically: its id is a runtime expression selecting among
the group's ids (``mutex_ids`` lists the candidates).  Ids shared by several operands of one op
are locked once; when runtime ids of two operands may coincide, the second lock is guarded by
an ``If`` so no id is ever locked twice by the same op.

Skipped, as in the official compiler: descriptor-only ops (``set_validshape``), ``make_tile``
tiles and groups without ids, Acc operands of ``matmul*``/``store*`` that carry a ``phase``,
and ops on the ``ALL`` pipe.  Not covered by design (and caught by the simulator): same-pipe
write-after-write reuse without ``bar_<pipe>`` and anything cross-core.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..ir import nodes as ir
from ..ir.optable import OPS
from ..ir.types import MemorySpace, PipeType

IdValue = Union[int, ir.Expr]


@dataclasses.dataclass
class _Lock:
    """One id to lock for an op: a constant, or an expression over a runtime slot index."""

    value: IdValue
    candidates: Tuple[int, ...]
    guard: Optional[ir.Expr] = None


def _group_of(ref: ir.TileRef):
    """(group, slot index expression or int) of a tile reference, or ``None``."""
    if isinstance(ref, ir.SubRef):
        return _group_of(ref.base)
    if isinstance(ref, ir.SlotRef):
        if isinstance(ref.index, ir.Const):
            return ref.group, int(ref.index.value) % ref.group.depth
        return ref.group, ref.index
    if isinstance(ref, ir.DeclRef) and ref.tile.group is not None:
        return ref.tile.group, ref.tile.group.slots.index(ref.tile)
    return None


def _slot_id_expr(group: ir.TileGroupDecl, index: ir.Expr, pos: int) -> IdValue:
    """The mutex id at position ``pos`` of slot ``index % depth`` as an expression (or a constant)."""
    ids = [slot_ids[pos] for slot_ids in group.mutex_ids]
    if len(set(ids)) == 1:
        return ids[0]
    slot = ir.BinOp("%", index, ir.const(group.depth), index.dtype)
    step = ids[1] - ids[0]
    if all(i == ids[0] + k * step for k, i in enumerate(ids)):  # e.g. [0, 1] -> slot, [2, 3] -> slot + 2
        expr: ir.Expr = slot if step == 1 else ir.BinOp("*", slot, ir.const(step), index.dtype)
        return expr if ids[0] == 0 else ir.BinOp("+", expr, ir.const(ids[0]), index.dtype)
    expr = ir.const(ids[-1])
    for k in range(group.depth - 2, -1, -1):
        expr = ir.Select(ir.BinOp("==", slot, ir.const(k), ir.DT_BOOL), ir.const(ids[k]), expr, ir.DT_INT64)
    return expr


def _locks_for(stmt: ir.OpStmt) -> List[_Lock]:
    opdef = stmt.op
    if opdef.descriptor_only or opdef.sync == "mutex" or stmt.pipe == PipeType.ALL.value:
        return []
    # a phased op's Acc operand is synchronised by the phase protocol instead of a mutex
    phased = opdef.phased and stmt.args.get("phase") is not None
    locks: List[_Lock] = []
    seen_exprs: Dict[Tuple[int, int, int], bool] = {}
    for _, ref in opdef.tile_operands(stmt.args):
        if phased and ref.space == MemorySpace.Acc:
            continue
        found = _group_of(ref)
        if found is None:
            continue
        group, index = found
        if not group.mutex_ids or not group.mutex_ids[0]:
            continue
        for pos in range(len(group.mutex_ids[0])):
            if isinstance(index, int):
                value: IdValue = group.mutex_ids[index][pos]
            else:
                key = (id(group), id(index), pos)
                if key in seen_exprs:
                    continue
                seen_exprs[key] = True
                value = _slot_id_expr(group, index, pos)
            candidates = tuple(sorted({s[pos] for s in group.mutex_ids})) if not isinstance(value, int) else (value,)
            _add_lock(locks, value, candidates)
    return locks


def _add_lock(locks: List[_Lock], value: IdValue, candidates: Tuple[int, ...]) -> None:
    """Append ``value`` unless an earlier lock certainly takes the same id; guard possible overlaps."""
    differs: List[ir.Expr] = []
    for other in locks:
        if not set(other.candidates) & set(candidates):
            continue
        if isinstance(value, int) and isinstance(other.value, int):
            if value == other.value:
                return
            continue
        lhs = value if isinstance(value, ir.Expr) else ir.const(value)
        rhs = other.value if isinstance(other.value, ir.Expr) else ir.const(other.value)
        differs.append(ir.BinOp("!=", lhs, rhs, ir.DT_BOOL))
    guard = None
    for cond in differs:
        guard = cond if guard is None else ir.BinOp("and", guard, cond, ir.DT_BOOL)
    locks.append(_Lock(value, candidates, guard))


def _mutex_stmt(name: str, stmt: ir.OpStmt, lock: _Lock) -> ir.Stmt:
    dynamic = not isinstance(lock.value, int)
    args = {"pipe": PipeType(stmt.pipe), "mutex_id": lock.value, "mode": 0, "max_mutex_id": 2,
            "mutex_ids": list(lock.candidates) if dynamic else None}
    op_stmt = ir.OpStmt(stmt.loc, OPS[name], args)
    if lock.guard is None:
        return op_stmt
    return ir.If(stmt.loc, lock.guard, [op_stmt], [])


def _rewrite(stmts: Sequence[ir.Stmt]) -> List[ir.Stmt]:
    out: List[ir.Stmt] = []
    for s in stmts:
        if isinstance(s, ir.OpStmt):
            locks = _locks_for(s)
            out += [_mutex_stmt("mutex_lock", s, lk) for lk in locks]
            out.append(s)
            out += [_mutex_stmt("mutex_unlock", s, lk) for lk in reversed(locks)]
        elif isinstance(s, ir.For):
            out.append(dataclasses.replace(s, body=_rewrite(s.body)))
        elif isinstance(s, ir.If):
            out.append(dataclasses.replace(s, then_body=_rewrite(s.then_body), else_body=_rewrite(s.else_body)))
        elif isinstance(s, ir.While):
            out.append(dataclasses.replace(s, pre=_rewrite(s.pre), body=_rewrite(s.body)))
        elif isinstance(s, ir.Section):
            out.append(dataclasses.replace(s, body=_rewrite(s.body)))
        else:
            out.append(s)
    return out


def insert_auto_mutex(kernel: ir.KernelIR) -> ir.KernelIR:
    """A new kernel with auto_mutex locks inserted (the input is returned unchanged if
    ``kernel.auto_mutex`` is off).  The result has ``auto_mutex=False`` so the pass is idempotent."""
    if not kernel.auto_mutex:
        return kernel
    return dataclasses.replace(kernel, body=_rewrite(kernel.body), auto_mutex=False)
