"""Loop-invariant tile loads: computed once before a pass's loop instead of in every iteration.

A vector pass loads each operand in every iteration of its loop nest (``lowerer.nest``/``spmd``), also
an operand whose GM window does not move with the loop, such as ``layer_norm``'s gamma and beta over
row tiles.  This pass runs over the lowered statements of one pass, after its addresses fit without
it, and moves such work in front of the loop:

* **what moves**: a top-level statement of the loop body that is a GM -> Vec load (pipe MTE2, reads a
  tensor, writes one tile), a vector data op (pipe V, tiles and scalars only, no random state), or the
  ``set_validshape`` of a tile that moves, whose scalar operands (offsets, valid shapes, scalars) use
  no variable the loop assigns, whose input tiles are themselves moved, and, for a load, whose GM
  tensor (by root buffer) nothing in the loop writes and no cross-core/grid sync lies in the loop;
* **tiles**: a tile moves only if every statement of the loop that writes it moves, its first use in an
  iteration writes it without reading it, everything else in the loop reads it only after its last
  write, and nothing outside the loop touches it; whole declared Vec tiles only;
* **capacity**: a moved tile read by the loop stays live over the whole loop, so its live interval is
  widened to the loop's before the pass's addresses are assigned again; tiles are taken greedily (each
  read tile with the tiles that compute it) and one whose addresses would no longer fit is left in
  the loop, so hoisting never changes the tile shapes or fails a pass;
* **code**: ``if start < stop: bar_all; <moved statements, with pipe flags>`` before the loop (a core
  with no iteration loads nothing, as before; ``bar_all`` orders the moved ops after everything
  earlier), the loop without them (its remaining flags still chain its pipes), then a ``discard`` of every moved
  tile the loop read: inside the loop no discard kills it (the next iteration reads it), after the
  loop its contents are dead; pipe flags left right after the loop body's ``bar_all`` with nothing
  to order any more are dropped.

Loops are visited innermost first; statements moved into a guarded prelude are not moved further.  A
loop that runs at most once on every core (a pass of one tile) is left alone.  Lowered loops count
upwards (``start < stop`` is "at least one iteration").
Results are unchanged: the moved ops compute the same values from the same inputs, once.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelMemoryError
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.optable import OPS
from pypto_pro.ir.types import MemorySpace, PipeType

#: cost classes of vector ops that are not a pure function of their operands
_STATEFUL = ("random", "debug_io", "cache")


def hoist_invariant_loads(b, stmts: List[ir.Stmt], tiles: List[ir.TileDecl]) -> None:
    """Move loop-invariant loads (and the vector ops on them) of the pass whose statements are
    ``stmts`` (a work section's body) and whose tiles are ``tiles`` out of its loops; ``tiles`` have
    addresses that fit (``b.assign_addresses``), and still do afterwards."""
    _visit(b, stmts, stmts, tiles)


def _visit(b, block: List[ir.Stmt], section: List[ir.Stmt], tiles: List[ir.TileDecl]) -> None:
    for s in list(block):
        if isinstance(s, ir.For):
            _visit(b, s.body, section, tiles)
            _hoist(b, block, s, section, tiles)
        elif isinstance(s, ir.If):
            _visit(b, s.then_body, section, tiles)
            _visit(b, s.else_body, section, tiles)


# ------------------------------------------------------------------ facts about statements
def _expr_vars(e, out: Set[int]) -> bool:
    """Add the Vars of ``e`` to ``out``; False for an expression kind this pass does not know."""
    if isinstance(e, ir.Var):
        out.add(e.uid)
    elif isinstance(e, ir.BinOp):
        return _expr_vars(e.lhs, out) and _expr_vars(e.rhs, out)
    elif isinstance(e, ir.UnOp):
        return _expr_vars(e.operand, out)
    elif isinstance(e, ir.Select):
        return _expr_vars(e.cond, out) and _expr_vars(e.if_true, out) and _expr_vars(e.if_false, out)
    elif isinstance(e, ir.Expr) and not isinstance(e, (ir.Const, ir.CoreQuery)):
        return False
    return True


def _arg_vars(value, out: Set[int]) -> bool:
    """The Vars an operand's value depends on (scalars, lists, tensor views' dims and strides)."""
    if isinstance(value, (list, tuple)):
        return all(_arg_vars(v, out) for v in value)
    if isinstance(value, ir.Expr):
        return _expr_vars(value, out)
    if isinstance(value, ir.TensorParam):
        parts = list(value.dims) + list(getattr(value, "strides", ()) or ())
        parts += list(getattr(value, "tile_strides", ()) or ()) + list(getattr(value, "offset_strides", ()) or ())
        parts.append(getattr(value, "byte_offset", 0))
        return all(_arg_vars(v, out) for v in parts)
    return True


def _tile_values(s: ir.OpStmt) -> List[object]:
    """The tile-like operand values of ``s`` (tile references and whole tile groups)."""
    out: List[object] = []
    for v in s.args.values():
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, (ir.TileRef, ir.TileGroupDecl)):
                out.append(x)
    return out


def _decls_of(value) -> List[ir.TileDecl]:
    return list(value.slots) if isinstance(value, ir.TileGroupDecl) else value.decls()


def _touched(stmts: List[ir.Stmt]) -> Dict[int, ir.TileDecl]:
    """Every tile the statements (nested ones included) name, by uid."""
    return {d.uid: d for s in ir.walk(stmts) if isinstance(s, ir.OpStmt) for v in _tile_values(s)
            for d in _decls_of(v)}


def _reads_writes(s: ir.Stmt) -> Tuple[Set[int], Set[int]]:
    """Tile uids a top-level statement of a loop body reads and writes; a nested statement, or an
    operand without a data-flow role (other than set_validshape's and discard's), counts as both."""
    if not isinstance(s, ir.OpStmt):
        touched = set(_touched([s]))
        return touched, set(touched)
    if s.op is OPS["discard"]:
        return set(), set()
    if s.op is OPS["set_validshape"]:
        return set(), {d.uid for v in _tile_values(s) for d in _decls_of(v)}
    roled = s.op.tile_operands(s.args)
    reads = {d.uid for role, ref in roled if role != "out" for d in ref.decls()}
    writes = {d.uid for role, ref in roled if role != "in" for d in ref.decls()}
    ids = {id(ref) for _, ref in roled}
    other = {d.uid for v in _tile_values(s) if id(v) not in ids for d in _decls_of(v)}
    return reads | other, writes | other


def _root(b, value: ir.TensorParam) -> Optional[int]:
    """The root buffer uid of a GM tensor operand (views share their root parameter's index)."""
    return b.buffers[value.index].root.uid if 0 <= value.index < len(b.buffers) else None


def _gm_operands(s: ir.OpStmt, roles) -> List[ir.TensorParam]:
    out = []
    for p in s.op.params:
        if p.role in roles or (p.name in s.op.writes_args and "out" in roles):
            value = s.args.get(p.name)
            out += [v for v in (value if isinstance(value, (list, tuple)) else [value])
                    if isinstance(v, ir.TensorParam)]
    return out


def _movable(s: ir.Stmt, variant: Set[int]) -> bool:
    """Whether ``s`` is of a kind this pass moves: a GM -> Vec load, a pure vector op or a
    set_validshape, on whole declared Vec tiles, with no operand that depends on ``variant`` Vars."""
    if not isinstance(s, ir.OpStmt) or s.result is not None or s.op.element_of or s.op.writes_args:
        return False
    values = _tile_values(s)
    if not values or any(not isinstance(v, ir.DeclRef) or v.tile.space != MemorySpace.Vec for v in values):
        return False
    used: Set[int] = set()
    if not all(_arg_vars(v, used) for v in s.args.values()) or used & variant:
        return False
    if s.op is OPS["set_validshape"]:
        return True
    if s.op.descriptor_only or s.op.sync:
        return False
    tensors = [(p.role, s.args.get(p.name)) for p in s.op.params if isinstance(s.args.get(p.name), ir.TensorParam)]
    if s.pipe == "MTE2":  # GM -> tile: reads tensors only, writes tiles only
        return bool(tensors) and all(role == "in" for role, _ in tensors) and \
            all(role == "out" for role, _ in s.op.tile_operands(s.args))
    return s.pipe == "V" and not tensors and s.op.cost not in _STATEFUL


# ------------------------------------------------------------------ one loop
class _Loop:
    """What one loop's body allows to move."""

    def __init__(self, b, loop: ir.For, section: List[ir.Stmt]):
        self.body = body = loop.body
        inner = list(ir.walk(body))
        variant: Set[int] = {loop.var.uid}
        written: Set[Optional[int]] = set()
        self.ok = True
        for s in inner:
            if isinstance(s, (ir.Assign, ir.For)):
                variant.add(s.var.uid)
            elif isinstance(s, ir.OpStmt):
                if s.result is not None:
                    variant.add(s.result.uid)
                if s.op.sync in ("grid", "cross_core", "mutex"):
                    written.add(None)  # other cores' writes may land between iterations
                written.update(_root(b, t) for t in _gm_operands(s, ("out", "inout")))
            elif not isinstance(s, (ir.If, ir.While, ir.Break, ir.Continue)):
                self.ok = False
        self.rw = [_reads_writes(s) for s in body]
        self.movable = []
        for s in body:
            m = _movable(s, variant)
            if m and s.op.pipe_of(s.args) == "MTE2":
                roots = {_root(b, t) for t in _gm_operands(s, ("in",))}
                m = None not in written and None not in roots and not roots & written
            self.movable.append(m)
        inner_ids = {id(s) for s in inner}
        outside = {d for s in ir.walk(section) if isinstance(s, ir.OpStmt) and id(s) not in inner_ids
                   for v in _tile_values(s) for d in (x.uid for x in _decls_of(v))}
        self.decls = _touched(body)
        self.cand = {u for u, d in self.decls.items() if d.space == MemorySpace.Vec and u not in outside}
        self._fixpoint()

    def moves(self, i: int, tiles: Set[int]) -> bool:
        """Whether statement ``i`` moves when ``tiles`` do: it writes some of them and reads and writes
        only them."""
        r, w = self.rw[i]
        return self.movable[i] and bool(w) and w <= tiles and r <= tiles

    def _valid(self, u: int, tiles: Set[int]) -> bool:
        """Whether tile ``u`` may move together with ``tiles``: every writer moves, the first data use
        writes it without reading it, staying statements and discards come after its last write."""
        rw, body = self.rw, self.body
        writers = [i for i, (_, w) in enumerate(rw) if u in w]
        if not writers or not all(self.moves(i, tiles) for i in writers):
            return False
        first = next((i for i, (r, w) in enumerate(rw)
                      if u in r or (u in w and not _is_op(body[i], "set_validshape"))), None)
        if first is None or u in rw[first][0]:
            return False  # it would read the previous iteration's value
        last = writers[-1]
        return not any((u in rw[i][0] and not self.moves(i, tiles)) or _is_discard_of(body[i], u)
                       for i in range(last))

    def _fixpoint(self) -> None:
        while True:
            drop = {u for u in self.cand if not self._valid(u, self.cand)}
            if not drop:
                return
            self.cand -= drop

    def closure(self, u: int) -> Set[int]:
        """``u`` with every tile the moving statements that write it read or write, transitively."""
        out: Set[int] = set()
        todo = [u]
        while todo:
            v = todo.pop()
            if v in out:
                continue
            out.add(v)
            for i, (r, w) in enumerate(self.rw):
                if v in w and self.moves(i, self.cand):
                    todo.extend(r | w)
        return out

    def read_in_loop(self, tiles: Set[int]) -> Set[int]:
        """The tiles of ``tiles`` that a statement staying in the loop (when ``tiles`` move) reads."""
        return {u for i, (r, _) in enumerate(self.rw) if not self.moves(i, tiles) for u in r & tiles}


def _hoist(b, block: List[ir.Stmt], loop: ir.For, section: List[ir.Stmt], tiles: List[ir.TileDecl]) -> None:
    if _at_most_one_trip(loop):
        return
    lp = _Loop(b, loop, section)
    if not lp.ok or not lp.cand:
        return
    roots = lp.read_in_loop(lp.cand)
    live = b._live
    known = [live[u] for u in lp.decls if u in live]
    if not roots or not known:
        return
    span = (min(iv[0] for iv in known), max(iv[1] for iv in known))
    original = {u: list(live[u]) for u in lp.cand if u in live}
    chosen: Set[int] = set()

    def widen(sel: Set[int]) -> None:
        for u, iv in original.items():
            live[u] = list(iv)
        for u in lp.read_in_loop(sel):
            if u in live:
                live[u] = [min(live[u][0], span[0]), max(live[u][1], span[1])]

    first_write = {u: min(i for i, (_, w) in enumerate(lp.rw) if u in w) for u in roots}
    for u in sorted(roots, key=first_write.get):  # greedily, in program order
        trial = chosen | lp.closure(u)
        if not all(lp._valid(v, trial) for v in trial):
            continue
        widen(trial)
        try:
            b.assign_addresses(tiles)
        except KernelMemoryError:
            continue
        chosen = trial
    widen(chosen)
    b.assign_addresses(tiles)
    if chosen:
        moved = [i for i in range(len(lp.body)) if lp.moves(i, chosen)]
        _rewrite(b, block, loop, moved, chosen, lp.read_in_loop(chosen))


def _nonnegative(e: ir.Expr) -> bool:
    if isinstance(e, ir.Const):
        return e.value >= 0
    if isinstance(e, ir.BinOp) and e.op in ("*", "+"):
        return _nonnegative(e.lhs) and _nonnegative(e.rhs)
    return isinstance(e, ir.CoreQuery)


def _at_most_one_trip(loop: ir.For) -> bool:
    """Whether ``loop`` runs at most once on any core (a pass of one tile): nothing to gain."""
    stop = loop.stop
    if not isinstance(stop, ir.Const):
        return False
    if isinstance(loop.start, ir.Const):
        return stop.value - loop.start.value <= 1
    return stop.value <= 1 and _nonnegative(loop.start)


def _is_op(s: ir.Stmt, name: str) -> bool:
    return isinstance(s, ir.OpStmt) and s.op is OPS[name]


def _is_discard_of(s: ir.Stmt, u: int) -> bool:
    return _is_op(s, "discard") and s.args["tile"].tile.uid == u


def _rewrite(b, block: List[ir.Stmt], loop: ir.For, moved: List[int], chosen: Set[int], kept: Set[int]) -> None:
    """``if start < stop: bar_all; <moved statements>`` before ``loop``, the moved statements (and the
    discards of moved tiles) out of its body, a discard of each tile in ``kept`` after it."""
    body = loop.body
    moved_ids = {id(body[i]) for i in moved}
    prelude: List[ir.Stmt] = [b._raw("bar_all")]
    stay: List[ir.Stmt] = []
    last = "ALL"
    for s in body:
        if id(s) in moved_ids:
            pipe = s.pipe
            if not s.op.descriptor_only and pipe not in ("S", last):
                if last != "ALL":  # one sync chain, as Builder._order makes it
                    src, dst = PipeType(last), PipeType(pipe)
                    prelude.append(b._raw("sync_src", set_pipe=src, wait_pipe=dst, event_id=0))
                    prelude.append(b._raw("sync_dst", set_pipe=src, wait_pipe=dst, event_id=0))
                last = pipe
            prelude.append(s)
        elif isinstance(s, ir.OpStmt) and s.op is OPS["discard"] and s.args["tile"].tile.uid in chosen:
            if s.args["tile"].tile.uid not in kept:
                prelude.append(s)
        else:
            stay.append(s)
    body[:] = _without_idle_flags(stay)
    guard = ir.If(None, ir.BinOp("<", loop.start, loop.stop, dt.DT_BOOL), prelude, [])
    discard = OPS["discard"]
    written: Dict[int, ir.TileDecl] = {}
    for s in prelude:
        if s.op is not discard:
            for _, ref in s.op.tile_operands(s.args, ("out", "inout")):
                written.update((d.uid, d) for d in ref.decls())
    after = [ir.OpStmt(None, discard, discard.bind((), {"tile": ir.DeclRef(d)}), None)
             for u, d in written.items() if u in kept]
    at = next(i for i, s in enumerate(block) if s is loop)
    block[at:at + 1] = [guard, loop, *after]


def _without_idle_flags(stmts: List[ir.Stmt]) -> List[ir.Stmt]:
    """``stmts`` without the pipe flags that follow a ``bar_all`` with no data op in between (left by
    the moved ops: after the barrier there is nothing on their pipe to wait for)."""
    out: List[ir.Stmt] = []
    idle = False
    for s in stmts:
        if isinstance(s, ir.OpStmt) and s.op.sync == "barrier":
            idle = True
        elif isinstance(s, ir.OpStmt) and s.op.sync == "flag":
            if idle:
                continue
        elif not (isinstance(s, ir.Assign) or (isinstance(s, ir.OpStmt) and s.op.descriptor_only)):
            idle = False
        out.append(s)
    return out
