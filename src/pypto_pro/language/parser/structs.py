"""Scalar aggregates of tile kernels: ``pl.struct``, ``pl.struct_array`` and ``pl.make_tuple``.

All three are compile-time structure over runtime scalars, so the parser flattens them: every scalar
field (and every element of an array field) is its own :class:`~pypto_pro.ir.nodes.Var`, and the
aggregate itself is a Python object the parser passes around by reference (``t = s`` aliases, a helper
that assigns ``entry.val`` changes the caller's struct).  No backend knows about aggregates.

A runtime index (``arr[i]``, ``s.offsets[j]``) selects among the flattened variables: the index is
snapshotted into a variable and checked against the length at run time, reads become a balanced tree
of :class:`~pypto_pro.ir.nodes.Select` on it and writes become one guarded assignment per candidate.
"""
from __future__ import annotations

import ast
import keyword
from typing import Any, Dict, List, Sequence, Union

from ... import dtypes as dt
from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir


# ----------------------------------------------------------------------------------------------
# Compile-time aggregate objects
# ----------------------------------------------------------------------------------------------
class ScalarArray:
    """An array field ``arr=[0, 0, 0]`` of a struct: one runtime variable per element."""

    def __init__(self, name: str, elements: List[ir.Var]):
        self.name = name
        self.elements = elements

    def __len__(self) -> int:
        return len(self.elements)

    @property
    def dtype(self) -> dt.DataType:
        return self.elements[0].dtype


class StructValue:
    """``pl.struct("Name", f=init, ...)``: named fields, each a runtime :class:`Var` or a
    :class:`ScalarArray`.  Bound by reference like any Python object."""

    def __init__(self, type_name: str, fields: Dict[str, Union[ir.Var, ScalarArray]]):
        self.type_name = type_name
        self.fields = fields

    def __repr__(self) -> str:
        return f"pl.struct {self.type_name}"


class StructArray:
    """``pl.struct_array(n, "Name", ...)``: ``n`` structs of one type, indexed by ints or runtime scalars."""

    def __init__(self, type_name: str, elements: List[StructValue]):
        self.type_name = type_name
        self.elements = elements

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self):
        return iter(self.elements)

    def __repr__(self) -> str:
        return f"pl.struct_array {self.type_name}[{len(self.elements)}]"


class NamedTuple(tuple):
    """``pl.make_tuple(a=..., b=...)``: an immutable tuple whose items are also reachable by field name
    (``t.a``, resolved by the parser).  Items are any kernel values (scalars, tiles, groups, tensors,
    structs, other tuples)."""

    def __new__(cls, names: Sequence[str], values: Sequence[Any]):
        obj = super().__new__(cls, values)
        obj._names = tuple(names)
        return obj

    def __repr__(self) -> str:
        return "pl.make_tuple(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self)) + ")"


class Choice:
    """``options[index]`` with a runtime ``index`` (a snapshot variable, already range-checked): the
    element of a struct array or of an array field that a runtime index selects.  The options are
    alike: all variables, all arrays, all structs, or all choices."""

    def __init__(self, index: ir.Var, options: List[Any]):
        self.index = index
        self.options = options

    def __repr__(self) -> str:
        return f"<element [{self.index!r}] of {len(self.options)}>"


AGGREGATES = (StructValue, StructArray, ScalarArray, Choice)


def _identifier(name) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def reads_var(expr, uids) -> bool:
    """Whether scalar expression ``expr`` reads one of the variables whose uids are in ``uids``."""
    if isinstance(expr, ir.Var):
        return expr.uid in uids
    if isinstance(expr, ir.BinOp):
        return reads_var(expr.lhs, uids) or reads_var(expr.rhs, uids)
    if isinstance(expr, ir.UnOp):
        return reads_var(expr.operand, uids)
    if isinstance(expr, ir.Select):
        return any(reads_var(e, uids) for e in (expr.cond, expr.if_true, expr.if_false))
    return False


def selects_aggregates(seq) -> bool:
    """Whether a runtime index into compile-time ``seq`` is :meth:`StructsMixin.sequence_item`'s: a list or
    tuple of structs, of whole tiles, or of scalars some of which are runtime (plain numbers are
    runtime_lookup's)."""
    if not isinstance(seq, (list, tuple)) or not seq:
        return False
    return (all(isinstance(v, StructValue) for v in seq) or all(isinstance(v, (ir.DeclRef, ir.SlotRef)) for v in seq)
            or (any(isinstance(v, ir.Expr) for v in seq) and
                all(isinstance(v, (ir.Expr, int, float)) for v in seq)))


def select_tree(index: ir.Expr, values: Sequence[ir.Expr], lo: int = 0) -> ir.Expr:
    """``values[index - lo]`` as a balanced tree of selects (depth log2(n), not n)."""
    if len(values) == 1:
        return values[0]
    mid = len(values) // 2
    left, right = select_tree(index, values[:mid], lo), select_tree(index, values[mid:], lo + mid)
    dtype = left.dtype if left.dtype == right.dtype else ir.binop_dtype("+", left.dtype, right.dtype)
    return ir.Select(ir.BinOp("<", index, ir.const(lo + mid), dt.DT_BOOL), left, right, dtype)


# ----------------------------------------------------------------------------------------------
# The parser's side
# ----------------------------------------------------------------------------------------------
class StructsMixin:
    """The parser's handling of struct / struct-array / named-tuple values (mixed into KernelParser)."""

    # ------------------------------------------------------------------ creation
    def intrinsic_struct(self, node, type_name, **fields):
        return self._new_struct(self._struct_type_name(type_name, "pl.struct", node), fields, "", node)

    def intrinsic_struct_array(self, node, size, type_name, **fields):
        if isinstance(size, bool) or not isinstance(size, int):
            raise self.err(KernelSyntaxError, f"pl.struct_array: the size must be a compile-time positive integer, "
                           f"got {size!r}", node)
        if size < 1:
            raise self.err(KernelSyntaxError, f"pl.struct_array: the size must be a positive integer, got {size}",
                           node)
        name = self._struct_type_name(type_name, "pl.struct_array", node)
        return StructArray(name, [self._new_struct(name, fields, str(k), node) for k in range(size)])

    def intrinsic_make_tuple(self, node, *args, **fields):
        if args:
            raise self.err(KernelSyntaxError, "pl.make_tuple takes keyword arguments only (field=value)", node)
        if not fields:
            raise self.err(KernelSyntaxError, "pl.make_tuple needs at least one keyword argument (field=value)",
                           node)
        values = []
        for name, value in fields.items():
            if isinstance(value, ir.Expr) and not isinstance(value, ir.Const):
                # the tuple holds the value it was made with (a later assignment to its source changes nothing)
                value = self.new_var(f"{self.assign_target or 'tuple'}_{name}", value, node)
            values.append(value)
        return NamedTuple(list(fields), values)

    def _struct_type_name(self, type_name, what: str, node) -> str:
        if not _identifier(type_name):
            raise self.err(KernelSyntaxError, f"{what}: the struct type name must be a string constant that is a valid "
                           f"identifier, got {type_name!r}", node)
        return type_name

    def _new_struct(self, type_name: str, fields: Dict[str, Any], suffix: str, node) -> StructValue:
        what = "pl.struct_array" if suffix else "pl.struct"
        if not fields:
            raise self.err(KernelSyntaxError, f"{what}(\"{type_name}\", ...) needs at least one keyword field "
                           f"(field=initial value)", node)
        base = f"{self.assign_target or type_name}{suffix}"
        made: Dict[str, Union[ir.Var, ScalarArray]] = {}
        for name, init in fields.items():
            if isinstance(init, (list, tuple)):
                made[name] = self._new_array(f"{base}_{name}", init, f"{what} field '{name}'", node)
            else:
                self._require_field_scalar(init, f"{what} field '{name}'", node)
                made[name] = self.new_var(f"{base}_{name}", init, node)
        return StructValue(type_name, made)

    def _new_array(self, name: str, inits: Sequence[Any], what: str, node) -> ScalarArray:
        if not inits:
            raise self.err(KernelSyntaxError, f"{what}: an array field needs at least one element", node)
        for v in inits:
            self._require_field_scalar(v, what, node)
        dtypes = [self._var_dtype(v) for v in inits]
        dtype = (dt.DT_FP32 if any(d.is_float() for d in dtypes) else
                 dt.DT_BOOL if all(d == dt.DT_BOOL for d in dtypes) else
                 next(d for d in dtypes if d != dt.DT_BOOL))
        elements = []
        for k, v in enumerate(inits):
            var = ir.Var(f"{name}_{k}", dtype)
            self.emit(ir.Assign(self.loc(node), var, ir.const(v) if not isinstance(v, ir.Expr) else v))
            elements.append(var)
        return ScalarArray(name, elements)

    def _require_field_scalar(self, value, what: str, node) -> None:
        from . import is_scalar
        if not is_scalar(value):
            raise self.err(KernelTypeError, f"{what} must be a scalar (or, for an array field, a list of scalars), "
                           f"got {type(value).__name__}", node)

    # ------------------------------------------------------------------ reads
    def aggregate_attr(self, obj, attr: str, node):
        """``obj.attr`` of a struct or of a runtime-selected struct element."""
        if isinstance(obj, StructValue):
            if attr not in obj.fields:
                raise self.err(KernelSyntaxError, f"struct {obj.type_name} has no field '{attr}' (fields: "
                               f"{', '.join(obj.fields)})", node)
            return obj.fields[attr]
        if isinstance(obj, Choice):
            return self._value(Choice(obj.index, [self.aggregate_attr(o, attr, node) for o in obj.options]))
        what = "a struct array" if isinstance(obj, StructArray) else f"array field '{obj.name}'"
        raise self.err(KernelSyntaxError, f"{what} has no attribute '{attr}'; index it first", node)

    def _value(self, x):
        """A runtime choice between variables reads as a select expression; anything else stays an object."""
        if isinstance(x, Choice) and self._scalar_leaf(x):
            return select_tree(x.index, [self._value(o) for o in x.options])
        return x

    @staticmethod
    def _scalar_leaf(x) -> bool:
        while isinstance(x, Choice):
            x = x.options[0]
        return isinstance(x, ir.Var)

    def tuple_field(self, obj: NamedTuple, attr: str, node):
        """``t.field`` of a ``pl.make_tuple`` value."""
        if attr not in obj._names:
            raise self.err(KernelSyntaxError, f"pl.make_tuple has no field '{attr}' (fields: "
                           f"{', '.join(obj._names)})", node)
        return obj[obj._names.index(attr)]

    def aggregate_item(self, obj, index, node):
        """``obj[index]`` of a struct array or array field (or of a runtime-selected one)."""
        return self._value(self._element(obj, index, node))

    def sequence_item(self, seq: Sequence[Any], index: ir.Expr, node):
        """``seq[i]`` of a compile-time list/tuple at a runtime index ``i``: a select among scalar items, or
        the struct ``i`` picks among struct items."""
        from . import is_scalar, to_expr
        items = list(seq)
        if items and all(is_scalar(v) for v in items):
            return select_tree(self._checked_index(index, len(items), node), [to_expr(v) for v in items])
        if items and all(isinstance(v, StructValue) for v in items) and \
                len({tuple(v.fields) for v in items}) == 1:
            return Choice(self._checked_index(index, len(items), node), items)
        if items and all(isinstance(v, (ir.DeclRef, ir.SlotRef)) for v in items):
            from .tile_choice import choose_tile
            return choose_tile(self, self.assign_target or "tiles", items,
                               self._checked_index(index, len(items), node), node)
        raise self.err(KernelSyntaxError, "indexing a compile-time list or tuple at a runtime index needs items "
                       "that are all scalars, all structs of one type or all whole tiles", node)

    def _options_of(self, obj, node) -> list:
        """The elements ``obj[k]`` chooses from (for a runtime choice: those of each option)."""
        if isinstance(obj, Choice):
            return self._options_of(obj.options[0], node)
        if isinstance(obj, (StructArray, ScalarArray)):
            return obj.elements
        if isinstance(obj, StructValue):
            raise self.err(KernelSyntaxError, f"struct {obj.type_name} cannot be indexed; use its fields", node)
        raise self.err(KernelSyntaxError, f"{type(obj).__name__} cannot be indexed", node)

    def _element(self, obj, index, node, checked: bool = False):
        """Element ``index`` of an array (an int, or a runtime scalar giving a :class:`Choice`)."""
        options = self._options_of(obj, node)
        if isinstance(index, ir.Expr) and not checked:
            index, checked = self._checked_index(index, len(options), node), True
        if isinstance(obj, Choice):
            return Choice(obj.index, [self._element(o, index, node, checked) for o in obj.options])
        if isinstance(index, ir.Expr):
            return Choice(index, options)
        if isinstance(index, slice) and isinstance(obj, StructArray):
            if any(isinstance(b, ir.Expr) for b in (index.start, index.stop)):
                raise self.err(KernelSyntaxError, "a struct array slice needs compile-time bounds", node)
            return StructArray(obj.type_name, options[index])
        if isinstance(index, bool) or not isinstance(index, int):
            raise self.err(KernelTypeError, f"an index of {self._describe(obj)} must be an integer, got "
                           f"{index!r}", node)
        if not -len(options) <= index < len(options):
            raise self.err(KernelSyntaxError, f"index {index} is out of bounds for {self._describe(obj)} of length "
                           f"{len(options)}", node)
        return options[index]

    @staticmethod
    def _describe(obj) -> str:
        if isinstance(obj, StructArray):
            return f"struct array {obj.type_name}"
        if isinstance(obj, ScalarArray):
            return f"array field '{obj.name}'"
        return "the selected element"

    def _checked_index(self, index: ir.Expr, size: int, node) -> ir.Var:
        """A snapshot of runtime ``index`` (the element it selects stays selected) checked to be in [0, size)."""
        if not ir.is_integral(index):
            raise self.err(KernelTypeError, f"an array index must be an integer, got {ir.describe_value(index)}", node)
        snap = self.new_var("idx", index, node)
        self.emit(ir.OpStmt(self.loc(node), self.op_named("check_index"), {"index": snap, "size": size}))
        return snap

    def unpacked_values(self, targets: Sequence[ast.expr], values: Sequence[Any], node) -> list:
        """The values of ``a, b = ...``: a runtime value that reads a variable some target assigns is copied
        first, so that ``a, b = b, a`` swaps (Python reads every value before it assigns any target)."""
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        everything = len(names) != len(targets)  # attribute / item targets: copy whatever is runtime
        uids = {v.uid for v in (self.scope.vars.get(n) for n in names) if isinstance(v, ir.Var)}
        out = []
        for v in values:
            if isinstance(v, ir.Expr) and not isinstance(v, ir.Const) and (everything or reads_var(v, uids)):
                v = self.new_var("tmp", v, node)
            out.append(v)
        return out

    # ------------------------------------------------------------------ writes
    def aggregate_store_attr(self, obj, attr: str, value, node) -> None:
        """``obj.attr = value`` for a struct or a runtime-selected struct element."""
        if isinstance(obj, NamedTuple):
            raise self.err(KernelSyntaxError, f"pl.make_tuple fields are read-only (cannot assign '{attr}'); use "
                           f"pl.struct for mutable fields", node)
        if not isinstance(obj, (StructValue, Choice)):
            raise self.err(KernelSyntaxError, f"cannot assign attribute '{attr}' of {type(obj).__name__} in a "
                           f"kernel", node)
        target = (obj.fields.get(attr) if isinstance(obj, StructValue) else
                  Choice(obj.index, [self._field_lvalue(o, attr, node) for o in obj.options]))
        if target is None:
            raise self.err(KernelSyntaxError, f"struct {obj.type_name} has no field '{attr}' (fields: "
                           f"{', '.join(obj.fields)})", node)
        self._write(target, value, f"field '{attr}'", node)

    def _field_lvalue(self, obj, attr: str, node):
        if isinstance(obj, Choice):
            return Choice(obj.index, [self._field_lvalue(o, attr, node) for o in obj.options])
        return self.aggregate_attr(obj, attr, node)

    def aggregate_store_item(self, obj, index, value, node) -> None:
        """``obj[index] = value`` for an array field (or a runtime-selected one)."""
        if isinstance(obj, StructArray) or (isinstance(obj, Choice) and self._struct_leaf(obj)):
            raise self.err(KernelSyntaxError, "cannot assign a whole struct array element; assign its fields", node)
        self._write(self._element(obj, index, node), value, "array element", node)

    @staticmethod
    def _struct_leaf(x) -> bool:
        while isinstance(x, Choice):
            x = x.options[0]
        return isinstance(x, StructValue)

    def _write(self, target, value, what: str, node) -> None:
        """Assign ``value`` to a variable, an array (element-wise from a list) or a runtime choice of them."""
        from . import is_scalar, to_expr
        if isinstance(target, (ScalarArray, Choice)) and not self._scalar_leaf(target):
            n = len(self._options_of(target, node))
            if not isinstance(value, (list, tuple)) or len(value) != n:
                raise self.err(KernelTypeError, f"{what}: an array field of length {n} takes a list of {n} scalars",
                               node)
            for k, v in enumerate(value):
                self._write(self._element(target, k, node), v, what, node)
            return
        if isinstance(target, StructValue):
            raise self.err(KernelSyntaxError, f"{what} is a struct; assign its fields", node)
        if not is_scalar(value):
            raise self.err(KernelTypeError, f"{what} takes a scalar, got {type(value).__name__}", node)
        if isinstance(target, ir.Var):
            self.emit(ir.Assign(self.loc(node), target, to_expr(value)))
            return
        # a runtime choice: evaluate the value once, then one guarded assignment per candidate
        expr = to_expr(value)
        if not isinstance(expr, (ir.Const, ir.Var)):
            expr = self.new_var("value", expr, node)
        self._write_choice(target, expr, node)

    def _write_choice(self, target, expr: ir.Expr, node) -> None:
        if isinstance(target, ir.Var):
            self.emit(ir.Assign(self.loc(node), target, expr))
            return
        for k, option in enumerate(target.options):
            self.blocks.append([])
            self._write_choice(option, expr, node)
            body = self.blocks.pop()
            cond = ir.BinOp("==", target.index, ir.const(k), dt.DT_BOOL)
            self.emit(ir.If(self.loc(node), cond, body, []))
