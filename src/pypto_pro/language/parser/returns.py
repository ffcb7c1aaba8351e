"""``return`` anywhere in a kernel or an inlined helper.

A return in straight-line code (no runtime loop or branch around it) ends the Python-level walk of the
body: the parser just stops, and a helper's value stays a compile-time object (a tile, a tuple of
shapes).  A return inside runtime control flow cannot stop the walk, so it is lowered into the IR:

* the body gets a ``returned`` flag (set False where the body starts), and each helper a merge slot
  shaped like its return value (a variable per scalar, tuples/named tuples/structs of such slots);
* ``return v`` assigns the slot and the flag, and leaves the enclosing runtime loops of the body with
  ``break`` (after each inner loop that may have returned, ``if returned: break`` leaves the next one);
* statements after one that may have returned run under ``if not returned:``.

Inside a section, a kernel-level return is always of this kind: it ends the kernel for the cores that
run the section, while the other kind of core still runs what follows.  Nothing here needs backend
support; the lowering uses ``If``, ``Break`` and ``Assign`` only.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence

from ... import dtypes as dt
from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir
from .structs import NamedTuple, ScalarArray, StructValue
from .tile_choice import TileSlot


class ReturnOutside(Exception):
    """Raised by a lowered return: the rest of the current statement list is unreachable."""


class ReturnFrame:
    """One kernel body or one inlined helper call, and the state of its lowered returns."""

    def __init__(self, parser, name: str, helper: bool):
        self.name = name
        self.helper = helper
        self.depth = parser.runtime_depth
        self.loop_depth = parser.loop_depth
        self.section = parser.section
        self.block = parser.blocks[-1]
        self.at = len(self.block)  # where the flag is initialised, once a return needs it
        self.flag: Optional[ir.Var] = None
        self.count = 0  # lowered returns so far
        self.has_value: Optional[bool] = None
        self.slot: Any = None


def always_returns(stmts: Sequence[ast.stmt]) -> bool:
    """Whether a statement list ends in a return on every path (as written: a final return, or a final
    if whose branches both always return)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


class ReturnsMixin:
    """The parser's handling of ``return`` (mixed into KernelParser)."""

    frames: List[ReturnFrame]

    # ------------------------------------------------------------------ frames
    def enter_frame(self, name: str, helper: bool) -> ReturnFrame:
        frame = ReturnFrame(self, name, helper)
        self.frames.append(frame)
        return frame

    def leave_frame(self, frame: ReturnFrame, fdef: ast.FunctionDef, node) -> Any:
        """The value of a helper call whose body ran to its end: the merge slot when returns were lowered."""
        self.frames.pop()
        if not frame.count or not frame.has_value:
            return None
        if not always_returns(fdef.body):
            raise self.err(KernelSyntaxError, f"{frame.name} returns a value inside runtime control flow but can "
                           f"also reach its end without a return; end it with a return", node)
        return self._materialized(frame.slot)

    def _materialized(self, slot):
        """The helper's value from its merge slot (a tile slot becomes the chosen tile)."""
        if isinstance(slot, TileSlot):
            return slot.ref(self)
        if isinstance(slot, NamedTuple):
            return NamedTuple(slot._names, [self._materialized(v) for v in slot])
        if isinstance(slot, (tuple, list)):
            return type(slot)(self._materialized(v) for v in slot)
        return slot

    # ------------------------------------------------------------------ statement lists
    def visit_body(self, stmts: Sequence[ast.stmt]) -> None:
        frame = self.frames[-1]
        for i, s in enumerate(stmts):
            before = frame.count
            try:
                self.visit_stmt(s)
            except ReturnOutside:
                return  # the rest of this list is dead code
            if frame.count == before:
                continue
            if self.loop_depth > frame.loop_depth:
                if not isinstance(s, ast.If):  # a loop that returned left only itself: leave this one too
                    self.emit(ir.If(self.loc(s), frame.flag, [ir.Break(self.loc(s))], []))
                continue  # the rest of this loop body runs only when nothing returned
            if i + 1 < len(stmts):
                self.guarded(frame, stmts[i + 1:], stmts[i + 1])
            return

    def guarded(self, frame: ReturnFrame, stmts: Sequence[ast.stmt], node) -> None:
        """Visit ``stmts`` under ``if not returned:``."""
        body = self.runtime_block(stmts)
        self.emit(ir.If(self.loc(node), ir.UnOp("not", frame.flag, dt.DT_BOOL), body, []))

    def visit_unrolled(self, body: Sequence[ast.stmt], values, bind) -> None:
        """The iterations of a compile-time unrolled loop; those after one that may have returned are guarded
        (inside a runtime loop the return's ``break`` already skips them)."""
        frame = self.frames[-1]
        start = frame.count
        for v in values:
            bind(v)
            if frame.count != start and self.loop_depth == frame.loop_depth:
                self.guarded(frame, body, body[0])
            else:
                self.visit_body(body)

    # ------------------------------------------------------------------ return
    def stmt_Return(self, node: ast.Return) -> None:
        frame = self.frames[-1]
        value = None if node.value is None else self.eval(node.value)
        if not frame.helper and value is not None:
            raise self.err(KernelSyntaxError, "a kernel cannot return a value; write results into an output "
                           "tensor", node)
        lowered = self.runtime_depth > frame.depth or (not frame.helper and self.section is not None)
        if not lowered:
            from . import _Return
            raise _Return(value)
        if frame.flag is None:
            frame.flag = ir.Var("returned" if not frame.helper else f"{frame.name}_returned", dt.DT_BOOL)
            frame.block.insert(frame.at, ir.Assign(self.loc(node), frame.flag, ir.const(False)))
        self._merge_value(frame, value, node)
        self.emit(ir.Assign(self.loc(node), frame.flag, ir.const(True)))
        if self.loop_depth > frame.loop_depth:
            self.emit(ir.Break(self.loc(node)))
        frame.count += 1
        raise ReturnOutside()

    def _merge_value(self, frame: ReturnFrame, value, node) -> None:
        has_value = value is not None
        if frame.has_value is None:
            frame.has_value = has_value
            if has_value:
                frame.slot = self._new_slot(frame, value, node)
        elif frame.has_value != has_value:
            raise self.err(KernelSyntaxError, f"{frame.name} returns a value on some paths and nothing on others",
                           node)
        if has_value:
            self._assign_slot(frame.slot, value, frame, node)

    def _new_slot(self, frame: ReturnFrame, value, node):
        """Variables shaped like ``value`` that every lowered return assigns."""
        from . import is_scalar
        if isinstance(value, NamedTuple):
            return NamedTuple(value._names, [self._new_slot(frame, v, node) for v in value])
        if isinstance(value, (tuple, list)):
            return type(value)(self._new_slot(frame, v, node) for v in value)
        if isinstance(value, StructValue):
            fields = {}
            for name, f in value.fields.items():
                if isinstance(f, ScalarArray):
                    fields[name] = ScalarArray(f"{frame.name}_ret_{name}",
                                               [ir.Var(f"{frame.name}_ret_{name}_{k}", f.dtype)
                                                for k in range(len(f))])
                else:
                    fields[name] = ir.Var(f"{frame.name}_ret_{name}", f.dtype)
            return StructValue(value.type_name, fields)
        if is_scalar(value):
            return ir.Var(f"{frame.name}_ret", self._var_dtype(value))
        if isinstance(value, (ir.DeclRef, ir.SlotRef)):
            return TileSlot(f"{frame.name}_ret")
        return value  # a tile, group, tensor...: every return must give this same object

    def _assign_slot(self, slot, value, frame: ReturnFrame, node) -> None:
        from . import is_scalar, to_expr
        mismatch = f"{frame.name} returns differently shaped values from its return statements"
        if isinstance(slot, (tuple, list)):
            if not isinstance(value, (tuple, list)) or len(value) != len(slot) or \
                    isinstance(slot, NamedTuple) != isinstance(value, NamedTuple) or \
                    (isinstance(slot, NamedTuple) and slot._names != value._names):
                raise self.err(KernelSyntaxError, mismatch, node)
            for s, v in zip(slot, value):
                self._assign_slot(s, v, frame, node)
        elif isinstance(slot, StructValue):
            if not isinstance(value, StructValue) or value.type_name != slot.type_name or \
                    list(value.fields) != list(slot.fields):
                raise self.err(KernelSyntaxError, f"{mismatch} (struct {slot.type_name} here)", node)
            for name, f in slot.fields.items():
                src = value.fields[name]
                if isinstance(f, ScalarArray):
                    for d, s in zip(f.elements, src.elements):
                        self.emit(ir.Assign(self.loc(node), d, s))
                else:
                    self.emit(ir.Assign(self.loc(node), f, src))
        elif isinstance(slot, ir.Var):
            if not is_scalar(value):
                raise self.err(KernelSyntaxError, mismatch, node)
            expr = to_expr(value)
            if expr.dtype.is_float() != slot.dtype.is_float() or \
                    (slot.dtype == dt.DT_BOOL) != (self._var_dtype(value) == dt.DT_BOOL):
                raise self.err(KernelTypeError, f"{frame.name} returns a {self._var_dtype(value).name} here but a "
                               f"{slot.dtype.name} elsewhere; convert one of them", node)
            self.emit(ir.Assign(self.loc(node), slot, expr))
        elif isinstance(slot, TileSlot):
            if not isinstance(value, ir.TileRef):
                raise self.err(KernelSyntaxError, mismatch, node)
            self.emit(ir.Assign(self.loc(node), slot.index, slot.union.index_of(self, value, node)))
        elif value is not slot:
            raise self.not_implemented(f"{frame.name} returns different {type(slot).__name__} objects from runtime "
                                       f"control flow (only scalars, tuples, pl.make_tuple and pl.struct values "
                                       f"are merged)", node)
