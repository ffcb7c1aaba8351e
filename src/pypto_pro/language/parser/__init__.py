"""Kernel source (Python AST) -> tile IR.

The parser is an abstract interpreter over the kernel's AST.  Module/closure values, literals
and anything computed from them are compile-time Python values and are folded; loop variables,
scalar parameters, dynamic dims and ``getval`` results are runtime :class:`~pypto_pro.ir.nodes.Expr`
values that become IR.  ``pl.range``/``while``/``if`` on runtime values become IR control flow;
``range(const)``, literal lists and compile-time ``if`` are unrolled/folded here.  Plain Python
helpers are inlined.  Every rejected construct raises ``KernelSyntaxError`` and every ill-typed op
``KernelTypeError``, both with ``file:line`` and the source line.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
import inspect
import textwrap
import types
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ... import dtypes as dt
from ...errors import (KernelError, KernelMemoryError, KernelSyntaxError, KernelTypeError, KernelValueError,
                      SourceLoc)
from ...ir import nodes as ir, verify
from ...ir.optable import CheckCtx, OpDef
from ...ir.types import Layout, MemorySpace, TileType, default_layout
from ...runtime.gm_format import nz_param_problem
from .. import intrinsics
from . import runtime_lookup
from ..simt import simt_element_op, tile_valid_shape
from ..vf import Vf
from ..vf.frontend import VfPtr, state as vf_state, vf_pointer_arith, vf_rebind
from ..annotations import (DYNAMIC, STATIC, PtrAnnotation, TensorAnnotation, closure_vars, is_tiling_annotation,
                          parameter_annotations, scalar_annotation_dtype, tiling_slots)
from .returns import ReturnFrame, ReturnsMixin
from .hints import compile_time_call_hint, operator_hint
from .ssbuf import SsbufMixin
from .structs import AGGREGATES, NamedTuple, StructsMixin, selects_aggregates
from .tile_choice import merge_branch_tiles, select_tile

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Pow: "**"}
#: operators the parser folds on compile-time values but that have no runtime scalar op in the IR
_COMPILE_TIME_ONLY = frozenset({"**"})
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_PY_BINOP = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "min": builtins.min, "max": builtins.max,
}


# ----------------------------------------------------------------------------------------------
# Compile-time handles for IR objects
# ----------------------------------------------------------------------------------------------
class GroupHandle:
    def __init__(self, decl: ir.TileGroupDecl):
        self.decl = decl


class TensorHandle:
    def __init__(self, param: ir.TensorParam):
        self.param = param


class PtrValue:
    """A raw pointer in a kernel: ``byte_offset`` (an int or a Var) bytes past the data of ``root`` (a
    ``pl.Ptr`` parameter), addressing ``dtype`` elements.  ``pl.addptr`` and ``pl.make_ptr`` make new
    values; ``pl.make_tensor`` turns one into a GM tensor view."""

    def __init__(self, root: ir.PtrParam, dtype: dt.DataType, byte_offset):
        self.root = root
        self.dtype = dtype
        self.byte_offset = byte_offset

    def address(self) -> ir.Expr:
        """The pointer's value as an INT64 scalar (``printf("%p", ptr)``): the argument's address, bound
        at launch (``ir.PtrParam.address``), plus the byte offset."""
        if self.root.address is None:
            self.root.address = ir.Var(f"{self.root.name}_address", dt.DT_INT64)
        return ir.BinOp("+", self.root.address, to_expr(self.byte_offset))


class TilingHandle:
    """A TilingData parameter: its fields are runtime scalars (arrays: :class:`TilingArray`)."""

    def __init__(self, type_name: str):
        self.type_name = type_name
        self.fields: Dict[str, Union[ir.Var, "TilingArray"]] = {}


class TilingArray:
    """A ``T[N]`` TilingData field: ``a[k]`` (k a compile-time int) is element k's runtime scalar;
    ``len(a)`` and iteration work as on a list."""

    def __init__(self, name: str):
        self.name = name
        self.elements: List[ir.Var] = []

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self):
        return iter(self.elements)


class BoundMethod:
    def __init__(self, obj, name: str):
        self.obj = obj
        self.name = name


class PendingVar:
    """A name first assigned inside a runtime ``if``: becomes a Var on its first assignment."""

    def __init__(self, name: str):
        self.name = name
        self.var: Optional[ir.Var] = None


class Conflict:
    """A name bound to different compile-time values in the branches of a runtime ``if``."""

    def __init__(self, name: str):
        self.name = name


class PendingMerge:
    """A name bound to different whole tiles by the two branches of a runtime ``if``.  The branch-choice
    index is emitted only when the name is used after the ``if`` (:meth:`Parser.lookup`): a name the code
    after the ``if`` never reads must not read, in the branch that did not bind it, a slot index that branch
    may never have set (say a tile-group slot taken in the other section, or before any ``next()``)."""

    def __init__(self, name: str, a, b, then_body: list, else_body: list, node):
        self.name, self.a, self.b = name, a, b
        self.then_body, self.else_body, self.node = then_body, else_body, node
        self.result = None

    def resolve(self, parser):
        """The merged tile (the branch-choice index assigned at the end of each branch), or a Conflict."""
        if self.result is None:
            a, b = (v.resolve(parser) if isinstance(v, PendingMerge) else v for v in (self.a, self.b))
            self.result = merge_branch_tiles(parser, self.name, a, b, self.then_body, self.else_body,
                                             self.node) or Conflict(self.name)
        return self.result


def _resolved(value):
    """A PendingVar that has been assigned stands for its Var."""
    return value.var if isinstance(value, PendingVar) and value.var is not None else value


def _what(value) -> str:
    """A short description of a kernel value for error messages."""
    if is_scalar(value):
        return ir.describe_value(value)
    if isinstance(value, TensorHandle):
        return f"tensor '{value.param.name}'"
    if isinstance(value, ir.TileRef):
        return f"tile {value!r}"
    return type(value).__name__


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float, np.number, ir.Expr))


def is_runtime(v) -> bool:
    return isinstance(v, ir.Expr)


def scalar_dtype(v) -> dt.DataType:
    if isinstance(v, ir.Expr):
        return v.dtype
    if isinstance(v, np.number):
        return dt.from_numpy(v.dtype) or dt.DT_FP32
    return dt.from_python_scalar(v)


def to_expr(v) -> ir.Expr:
    if isinstance(v, ir.Expr):
        return v
    if isinstance(v, np.generic):
        v = v.item()
    return ir.const(v)


class Scope:
    """Local names of the kernel or of one inlined helper."""

    def __init__(self, fn_globals: Dict[str, Any], closure: Dict[str, Any], filename: str, first_line: int,
                 lines: List[str]):
        self.vars: Dict[str, Any] = {}
        self.globals = fn_globals
        self.closure = closure
        self.filename = filename
        self.first_line = first_line
        self.lines = lines


def _assigned_names(stmts: Sequence[ast.stmt]) -> List[str]:
    """Names stored anywhere in ``stmts`` (not descending into nested defs), in order."""
    seen: Dict[str, None] = {}
    stack = list(stmts)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            seen[node.id] = None
        stack.extend(ast.iter_child_nodes(node))
    return list(seen)


def signature_text(public: str, sig: inspect.Signature) -> str:
    """``pl.make_tile(tile_type, *, addr, size=None)``: a signature as the user writes the call
    (enum defaults shown as ``pl.RoundMode.CAST_ROUND``)."""
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            parts.append("*" + p.name)
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.default is p.empty:
            parts.append(p.name)
        elif isinstance(p.default, enum.Enum):
            parts.append(f"{p.name}=pl.{type(p.default).__name__}.{p.default.name}")
        else:
            parts.append(f"{p.name}={p.default!r}")
    return f"{public}({', '.join(parts)})"


def _binding_problem(sig: inspect.Signature, args, error: TypeError) -> str:
    """What is wrong with a call that does not bind: Python's message, or for extra positional
    arguments, how many it takes and which parameters are keyword-only."""
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params) or "too many positional" not in str(error):
        return str(error)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    text = f"takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''}, got {len(args)}"
    if keyword_only:
        names = ", ".join(keyword_only)
        text += f"; {names} {'is' if len(keyword_only) == 1 else 'are'} keyword-only"
    return text


def function_source(fn) -> tuple:
    """(FunctionDef node, filename, first line, source lines) of a Python function."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise KernelSyntaxError(f"cannot read the source of {fn.__qualname__}: {e}") from None
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise KernelSyntaxError(f"{fn.__qualname__} is not a plain function definition")
    filename = inspect.getsourcefile(fn) or "<kernel>"
    return node, filename, first, [ln.rstrip("\n") for ln in lines]


# ----------------------------------------------------------------------------------------------
# The parser
# ----------------------------------------------------------------------------------------------
class KernelParser(StructsMixin, SsbufMixin, ReturnsMixin):
    """Parses one specialization of a kernel function into a :class:`KernelIR`."""

    def __init__(self, fn, *, name: str, arch, auto_mutex: bool, static_dims: Dict[str, List[int]],
                 key_fields: Optional[Dict[str, int]] = None, type_names: Optional[Dict[str, Any]] = None):
        self.fn = fn
        self.key_fields = dict(key_fields or {})  # the launch's tiling-key fields: compile-time names
        self.type_names = dict(type_names or {})  # @pl.jit(datatype=...)'s dtype variables (runtime/datatype.py)
        self.name = name
        self.arch = arch
        self.auto_mutex = auto_mutex
        self.static_dims = static_dims
        self.tiles: List[ir.TileDecl] = []
        self.groups: List[ir.TileGroupDecl] = []
        self.blocks: List[List[ir.Stmt]] = []
        self.section: Optional[str] = None
        self.sections_seen: set = set()
        self.sides_outside: Dict[str, ir.Stmt] = {}
        self.views = 0  # pl.make_tensor views made so far (numbers their names)
        self.runtime_depth = 0
        self.loop_depth = 0
        self.unroll_depth = 0
        self.scope: Optional[Scope] = None
        self.assign_target: Optional[str] = None
        #: the value expression of the assignment being evaluated (a frontend call that *is* it may
        #: write its result into the target's existing register: pypto_pro.language.vf)
        self.assign_node: Optional[ast.expr] = None
        self.inline_stack: List[Any] = []
        self.frames: List[ReturnFrame] = []  # the kernel body and the inlined helper calls being parsed
        #: uid -> why: UINT8 Vec tiles whose rows break the 32-byte rule, usable only as compare/select masks
        self.mask_only: Dict[int, str] = {}

    # ------------------------------------------------------------------ errors and locations
    def loc(self, node: Optional[ast.AST]) -> Optional[SourceLoc]:
        if node is None or not hasattr(node, "lineno") or self.scope is None:
            return None
        idx = node.lineno - 1
        text = self.scope.lines[idx] if 0 <= idx < len(self.scope.lines) else ""
        return SourceLoc(self.scope.filename, self.scope.first_line + idx, text)

    def err(self, cls, message: str, node) -> KernelError:
        return cls(message, loc=self.loc(node), kernel=self.name)

    # ------------------------------------------------------------------ entry
    def parse(self) -> ir.KernelIR:
        fdef, filename, first, lines = function_source(self.fn)
        self.scope = Scope(self.fn.__globals__, closure_vars(self.fn), filename, first, lines)
        params = self._parse_params(fdef)
        for key_name in self.key_fields:
            clash = ("a kernel parameter" if key_name in inspect.signature(self.fn).parameters else
                     "a module-level name" if key_name in self.fn.__globals__ else None)
            if clash:
                raise self.err(KernelSyntaxError, f"tiling-key field '{key_name}' is also {clash}; rename one of "
                               f"them", fdef)
        self.blocks.append([])
        self.enter_frame(self.name, helper=False)
        try:
            self.visit_body(fdef.body)
        except _Return:
            pass
        body = self.blocks.pop()
        kind = self._kernel_kind(fdef)
        return ir.KernelIR(name=self.name, arch=self.arch, params=params, body=body, tiles=self.tiles,
                           groups=self.groups, kind=kind, auto_mutex=self.auto_mutex, filename=filename)

    def _parse_params(self, fdef: ast.FunctionDef) -> List[Any]:
        sig = inspect.signature(self.fn)
        try:
            hints = parameter_annotations(self.fn)
        except Exception as e:  # noqa: BLE001 - report any annotation failure as a syntax error
            raise self.err(KernelSyntaxError, f"cannot evaluate the parameter annotations: {e}", fdef) from None
        params: List[Any] = []
        arg_nodes = {a.arg: a for a in fdef.args.args}
        for index, (pname, p) in enumerate(sig.parameters.items()):
            node = arg_nodes.get(pname, fdef)
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise self.err(KernelSyntaxError, f"parameter '{pname}': *args/**kwargs/keyword-only parameters "
                               f"are not allowed in a kernel", node)
            ann = hints.get(pname, inspect.Parameter.empty)
            if isinstance(ann, TensorAnnotation):
                if ann.layout not in (Layout.ND, Layout.NZ):
                    raise self.not_implemented(
                        f"parameter '{pname}': GM tensors in layout pl.{ann.layout.name} are not implemented "
                        f"(only pl.ND and pl.NZ tensors are)", node)
                dims: List[Any] = []
                static = self.static_dims.get(pname)
                for i, d in enumerate(ann.dims):
                    if d is Ellipsis:
                        dims.extend(static[i:] if static else [])
                        break
                    if d is DYNAMIC:
                        dims.append(ir.Var(f"{pname}_dim{i}", dt.DT_INT64))
                    elif d is STATIC:
                        dims.append(static[i])
                    else:
                        dims.append(d)
                if ann.layout == Layout.NZ:
                    problem = nz_param_problem(ann.dtype, dims)
                    if problem:
                        raise self.err(KernelTypeError, f"parameter '{pname}': {problem}", node)
                param = ir.TensorParam(pname, index, ann.dtype, dims, ann.layout, tuple(ann.dims))
                self.scope.vars[pname] = TensorHandle(param)
            elif isinstance(ann, PtrAnnotation):
                if ann.dtype.np_dtype is None:
                    raise self.not_implemented(f"parameter '{pname}': pl.Ptr[{ann.dtype.name}] (a sub-byte or "
                                               f"storage-only element type)", node)
                param = ir.PtrParam(pname, index, ann.dtype, [ir.Var(f"{pname}_extent", dt.DT_INT64)],
                                    declared=(DYNAMIC,))
                self.scope.vars[pname] = PtrValue(param, ann.dtype, 0)
            elif is_tiling_annotation(ann):
                handle = TilingHandle(ann.__name__)
                for k, (label, fdt, field, element) in enumerate(tiling_slots(ann)):
                    var = ir.Var(f"{pname}_{field}" + ("" if element is None else f"_{element}"), fdt)
                    if element is None:
                        handle.fields[field] = var
                    else:
                        handle.fields.setdefault(field, TilingArray(f"{pname}.{field}"))
                        handle.fields[field].elements.append(var)
                    params.append(ir.ScalarParam(f"{pname}.{label}", index + k, var))
                self.scope.vars[pname] = handle
                continue
            else:
                sdt = scalar_annotation_dtype(ann)
                if sdt is None:
                    raise self.err(KernelSyntaxError,
                                   f"parameter '{pname}' needs an annotation: pl.Tensor[[...], dtype], pl.Ptr[dtype], "
                                   f"int, float, bool or a pl.DT_* scalar type (got {ann!r})", node)
                if sdt.name in dt.STORAGE_ONLY:
                    raise self.err(KernelSyntaxError, f"parameter '{pname}': {sdt.name} cannot be a scalar", node)
                param = ir.ScalarParam(pname, index, ir.Var(pname, sdt))
                self.scope.vars[pname] = param.var
            params.append(param)
        return params

    def _kernel_kind(self, fdef) -> str:
        """The kernel's kind from its sections and the sides of its ops outside them (ir/verify.py's rule)."""
        return verify.kernel_kind(self.sections_seen, self.sides_outside, self.name, self.loc(fdef))

    # ------------------------------------------------------------------ emission helpers
    def emit(self, stmt: ir.Stmt) -> None:
        self.blocks[-1].append(stmt)

    def new_var(self, name: str, value, node) -> ir.Var:
        var = ir.Var(name, self._var_dtype(value))
        self.emit(ir.Assign(self.loc(node), var, to_expr(value)))
        return var

    @staticmethod
    def _var_dtype(value) -> dt.DataType:
        d = scalar_dtype(value)
        return dt.DT_INT64 if d == dt.DT_INDEX else d

    # ------------------------------------------------------------------ name binding
    def lookup(self, name: str, node):
        scope = self.scope
        if name in scope.vars:
            v = scope.vars[name]
            if isinstance(v, PendingMerge):
                v = scope.vars[name] = v.resolve(self)
            if isinstance(v, PendingVar):
                if v.var is None:
                    raise self.err(KernelSyntaxError, f"'{name}' may be used before it is assigned", node)
                return v.var
            if isinstance(v, Conflict):
                raise self.err(KernelSyntaxError, f"'{name}' is bound to different tiles or compile-time values in "
                               f"the branches of a runtime if; it cannot be used after it", node)
            return v
        if name in self.key_fields:
            return self.key_fields[name]
        if name in self.type_names:
            return self.type_names[name]
        if name in scope.closure:
            return scope.closure[name]
        if name in scope.globals:
            return scope.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        if name == "vf":  # officially `vf.<op>` names the VF namespace by its spelling, imported or not
            return Vf
        raise self.err(KernelSyntaxError, f"name '{name}' is not defined", node)

    def assign_name(self, name: str, value, node) -> None:
        value = vf_rebind(self, name, value, node)  # a register another name refers to is copied
        if isinstance(value, ir.SubRef) and value.valid is None:
            # a named subview is a tile of its own: its valid window is fixed now (official semantics) and
            # lives in two variables that pl.set_validshape of the name sets
            value = dataclasses.replace(value, valid=tuple(tile_valid_shape(self, value, node)))
        cur = self.scope.vars.get(name)
        if isinstance(cur, PendingVar):
            if not is_scalar(value):  # a tile or compile-time object: local to this branch (merge checks it)
                self.scope.vars[name] = value
                return
            if cur.var is None:
                cur.var = ir.Var(name, self._var_dtype(value))
            self.emit(ir.Assign(self.loc(node), cur.var, to_expr(value)))
            return
        if isinstance(cur, ir.Var) and is_scalar(value):
            self.emit(ir.Assign(self.loc(node), cur, to_expr(value)))
            return
        if is_runtime(value):
            self.scope.vars[name] = self.new_var(name, value, node)
            return
        if self.runtime_depth and is_scalar(value) and isinstance(cur, (bool, int, float, np.number)):
            # rebinding a compile-time scalar inside runtime control flow: must be a runtime var
            self.scope.vars[name] = self.new_var(name, value, node)
            return
        self.scope.vars[name] = value

    def promote(self, names: Sequence[str], node, pending: bool) -> None:
        """Make scalars assigned inside runtime control flow into runtime Vars."""
        for name in names:
            cur = self.scope.vars.get(name)
            if isinstance(cur, (ir.Var, PendingVar)):
                continue
            if cur is None:
                if pending:
                    self.scope.vars[name] = PendingVar(name)
            elif is_scalar(cur):
                self.scope.vars[name] = self.new_var(name, cur, node)

    # ------------------------------------------------------------------ statements
    def visit_stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.err(KernelSyntaxError, f"'{type(node).__name__}' statements are not allowed in a kernel", node)
        try:
            method(node)
        except (KernelError, _Return):
            raise
        except NotImplementedError as e:
            if getattr(e, "pto_located", False):
                raise
            raise self.not_implemented(str(e), node) from None
        except (TypeError, ValueError) as e:
            raise self.err(KernelSyntaxError, str(e), node) from None

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.eval(node.value)

    def stmt_Pass(self, node) -> None:
        pass

    def stmt_Assign(self, node: ast.Assign) -> None:
        outer = self.assign_target  # inside an inlined helper: the caller's target names its tiles
        outer_node, self.assign_node = self.assign_node, node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.assign_target = node.targets[0].id
        try:
            value = self.eval(node.value)
        finally:
            self.assign_target, self.assign_node = outer, outer_node
        for target in node.targets:
            self.store(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        outer = self.assign_target
        outer_node, self.assign_node = self.assign_node, node.value
        if isinstance(node.target, ast.Name):
            self.assign_target = node.target.id
        try:
            value = self.eval(node.value)
        finally:
            self.assign_target, self.assign_node = outer, outer_node
        self.store(node.target, value, node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.err(KernelSyntaxError, f"operator {type(node.op).__name__} is not supported", node)
        if isinstance(node.target, ast.Name):
            current = self.lookup(node.target.id, node)
        elif isinstance(node.target, ast.Attribute):
            current = self.eval(ast.Attribute(value=node.target.value, attr=node.target.attr, ctx=ast.Load(),
                                              lineno=node.lineno, col_offset=node.col_offset))
        else:
            current = self.eval(ast.Subscript(value=node.target.value, slice=node.target.slice, ctx=ast.Load(),
                                              lineno=node.lineno, col_offset=node.col_offset))
        self.store(node.target, self.binop(op, current, self.eval(node.value), node), node)

    def store(self, target: ast.expr, value, node) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.err(KernelSyntaxError, "tuple unpacking needs a compile-time sequence of the same "
                               "length", node)
            value = self.unpacked_values(target.elts, value, node)
            for t, v in zip(target.elts, value):
                self.store(t, v, node)
        elif isinstance(target, ast.Attribute):
            self.aggregate_store_attr(self.eval(target.value), target.attr, value, node)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value)
            index = self.eval_index(target.slice)
            if isinstance(obj, AGGREGATES):
                self.aggregate_store_item(obj, index, value, node)
            elif isinstance(obj, (ir.TileRef, TensorHandle)):
                self.call_op(self.op_named("setval"), [obj, self.scalar_index(obj, index, node), value], {}, node)
            else:
                raise self.err(KernelSyntaxError, "only tiles and tensors support item assignment in a kernel", node)
        else:
            raise self.err(KernelSyntaxError, f"cannot assign to {type(target).__name__}", node)

    def stmt_If(self, node: ast.If) -> None:
        cond = self.eval(node.test)
        if not is_runtime(cond):
            if isinstance(cond, (ir.TileRef, GroupHandle, TensorHandle)):
                raise self.err(KernelSyntaxError, "a tile or tensor is not a condition", node)
            self.visit_body(node.body if cond else node.orelse)
            return
        self.promote(_assigned_names(node.body + node.orelse), node, pending=True)
        before = dict(self.scope.vars)
        then_body = self.runtime_block(node.body)
        then_env = dict(self.scope.vars)
        self.scope.vars = dict(before)
        else_body = self.runtime_block(node.orelse)
        merged = {}
        for name in set(then_env) | set(self.scope.vars):
            # a PendingVar that got its Var in one branch (e.g. a nested elif) is that Var in both
            a, b = (_resolved(env.get(name, Conflict(name))) for env in (then_env, self.scope.vars))
            merged[name] = a if a is b else PendingMerge(name, a, b, then_body, else_body, node)
        self.scope.vars = {k: v for k, v in merged.items() if not (isinstance(v, PendingVar) and v.var is None)}
        self.emit(ir.If(self.loc(node), cond, then_body, else_body))

    def runtime_block(self, stmts: Sequence[ast.stmt], loop: bool = False) -> List[ir.Stmt]:
        self.blocks.append([])
        self.runtime_depth += 1
        self.loop_depth += loop
        try:
            self.visit_body(stmts)
        finally:
            self.runtime_depth -= 1
            self.loop_depth -= loop
        return self.blocks.pop()

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.err(KernelSyntaxError, "for ... else is not supported in a kernel", node)
        it = node.iter
        if isinstance(it, ast.Call) and getattr(self.eval(it.func), "__pto_intrinsic__", None) == "range":
            self.runtime_for(node, it)
            return
        iterable = self.eval(it)
        if is_runtime(iterable) or isinstance(iterable, (ir.TileRef, GroupHandle, TensorHandle)):
            raise self.err(KernelSyntaxError, "a kernel for-loop iterates over pl.range(...) (runtime loop) or a "
                           "compile-time range/list/tuple (unrolled)", node)
        try:
            values = list(iterable)
        except TypeError:
            raise self.err(KernelSyntaxError, f"cannot iterate over {type(iterable).__name__} at compile time",
                           node) from None
        for n in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(n, (ast.Break, ast.Continue)) and not self._inside_nested_loop(node, n):
                raise self.err(KernelSyntaxError, "break/continue in a compile-time unrolled loop is not supported; "
                               "use pl.range for a runtime loop", n)
        def bind(v):
            if isinstance(node.target, ast.Name):
                self.scope.vars[node.target.id] = v  # a fresh compile-time binding per iteration
            else:
                self.store(node.target, v, node)

        self.unroll_depth += 1
        try:
            self.visit_unrolled(node.body, values, bind)
        finally:
            self.unroll_depth -= 1

    @staticmethod
    def _inside_nested_loop(outer: ast.For, target: ast.AST) -> bool:
        for n in ast.walk(ast.Module(body=outer.body, type_ignores=[])):
            if isinstance(n, (ast.For, ast.While)) and n is not outer:
                if any(m is target for m in ast.walk(n)):
                    return True
        return False

    def runtime_for(self, node: ast.For, call: ast.Call) -> None:
        try:  # the official signature: range(start, stop=None, step=1), range(n) counting from 0
            bound = inspect.signature(intrinsics.range).bind(*call.args,
                                                             **{k.arg: k.value for k in call.keywords if k.arg})
        except TypeError:
            bound = None
        if bound is None or any(k.arg is None for k in call.keywords):
            raise self.err(KernelSyntaxError, "pl.range takes (stop), (start, stop) or (start, stop, step); "
                           "start, stop and step may be keywords", node)
        bound.apply_defaults()
        given = {k: (self.eval(v) if isinstance(v, ast.AST) else v) for k, v in bound.arguments.items()}
        if given["stop"] is None:
            given["start"], given["stop"] = 0, given["start"]
        args = [given["start"], given["stop"], given["step"]]
        if not all(is_scalar(a) for a in args):
            raise self.err(KernelSyntaxError, "pl.range takes 1 to 3 scalar arguments", node)
        for a in args:
            self.require_int(a, "a pl.range bound", node)
        if not is_runtime(args[2]) and args[2] == 0:
            raise self.err(KernelSyntaxError, "pl.range step must not be 0", node)
        if not isinstance(node.target, ast.Name):
            raise self.err(KernelSyntaxError, "the loop variable of pl.range must be a single name", node)
        self.promote(_assigned_names(node.body), node, pending=False)
        var = ir.Var(node.target.id, dt.DT_INDEX)
        self.scope.vars[node.target.id] = var
        body = self.runtime_block(node.body, loop=True)
        self.emit(ir.For(self.loc(node), var, *(to_expr(a) for a in args), body))

    def stmt_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.err(KernelSyntaxError, "while ... else is not supported in a kernel", node)
        self.promote(_assigned_names(node.body), node, pending=False)
        self.blocks.append([])
        cond = self.eval(node.test)
        pre = self.blocks.pop()
        if not is_runtime(cond):
            if not cond:
                self.blocks[-1].extend(pre)
                return
            cond = ir.const(True)
        body = self.runtime_block(node.body, loop=True)
        self.emit(ir.While(self.loc(node), pre, cond, body))

    def stmt_Break(self, node) -> None:
        if not self.loop_depth:
            raise self.err(KernelSyntaxError, "break outside a runtime loop", node)
        self.emit(ir.Break(self.loc(node)))

    def stmt_Continue(self, node) -> None:
        if not self.loop_depth:
            raise self.err(KernelSyntaxError, "continue outside a runtime loop", node)
        self.emit(ir.Continue(self.loc(node)))

    def stmt_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            raise self.err(KernelSyntaxError, "use one section per with statement", node)
        item = node.items[0]
        kind = None
        if isinstance(item.context_expr, ast.Call) and not item.context_expr.args:
            kind = {"section_vector": "vector", "section_cube": "cube"}.get(
                getattr(self.eval(item.context_expr.func), "__pto_intrinsic__", None))
        if kind is None or item.optional_vars is not None:
            raise self.err(KernelSyntaxError, "the only context managers in a kernel are pl.section_vector() and "
                           "pl.section_cube()", node)
        if self.section is not None:
            raise self.err(KernelSyntaxError, "sections cannot be nested", node)
        self.section = kind
        self.sections_seen.add(kind)
        self.blocks.append([])
        try:
            self.visit_body(node.body)
        finally:
            self.section = None
        body = self.blocks.pop()
        self.emit(ir.Section(self.loc(node), kind, body))

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.expr):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.err(KernelSyntaxError, f"'{type(node).__name__}' expressions are not allowed in a kernel",
                           node)
        return method(node)

    def expr_Constant(self, node):
        return node.value

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def expr_List(self, node):
        return [self.eval(e) for e in node.elts]

    def expr_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def expr_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def expr_JoinedStr(self, node):
        parts = []
        for v in node.values:
            val = self.eval(v.value) if isinstance(v, ast.FormattedValue) else v.value
            if is_runtime(val):
                raise self.err(KernelSyntaxError, "f-strings may only format compile-time values; use pl.printf",
                               node)
            parts.append(str(val) if isinstance(v, ast.FormattedValue) else val)
        return "".join(parts)

    def expr_Attribute(self, node: ast.Attribute):
        obj = self.eval(node.value)
        attr = node.attr
        if isinstance(obj, AGGREGATES):
            return self.aggregate_attr(obj, attr, node)
        if isinstance(obj, NamedTuple):
            return self.tuple_field(obj, attr, node)
        if isinstance(obj, TensorHandle):
            p = obj.param
            if attr == "shape":
                return tuple(p.dims)
            if attr == "dtype":
                return p.dtype
            if attr == "ndim":
                return p.ndim
            raise self.err(KernelSyntaxError, f"tensor '{p.name}' has no attribute '{attr}' in a kernel", node)
        if isinstance(obj, TilingHandle):
            if attr not in obj.fields:
                raise self.err(KernelSyntaxError, f"{obj.type_name} has no field '{attr}'", node)
            return obj.fields[attr]
        if isinstance(obj, GroupHandle):
            if attr in ("current", "next", "previous"):
                return BoundMethod(obj, attr)
            if attr == "depth":
                return obj.decl.depth
            raise self.err(KernelSyntaxError, f"tile group has no attribute '{attr}'", node)
        if isinstance(obj, ir.TileRef):
            if attr == "shape":
                s = obj.static_shape
                if s is None:
                    raise self.err(KernelSyntaxError, "the shape of a subview with runtime bounds is not a "
                                   "compile-time value", node)
                return list(s)
            if attr in ("dtype", "layout"):
                return getattr(obj, attr)
            if attr == "tile_type":
                return obj.ttype
            if attr == "valid_shape":
                return tile_valid_shape(self, obj, node)
            raise self.err(KernelSyntaxError, f"tile has no attribute '{attr}' in a kernel", node)
        if is_runtime(obj):
            raise self.err(KernelSyntaxError, f"runtime scalars have no attribute '{attr}'", node)
        try:
            return getattr(obj, attr)
        except AttributeError as e:
            raise self.err(KernelSyntaxError, str(e), node) from None

    def expr_Subscript(self, node: ast.Subscript):
        obj = self.eval(node.value)
        index = self.eval_index(node.slice)
        if isinstance(obj, AGGREGATES):
            return self.aggregate_item(obj, index, node)
        if isinstance(obj, ir.TileRef):
            if isinstance(index, tuple) and len(index) == 2 and all(isinstance(i, slice) for i in index):
                return self.subview(obj, index, node)
            return self.call_op(self.op_named("getval"), [obj, self.scalar_index(obj, index, node)], {}, node)
        if isinstance(obj, TensorHandle):
            if isinstance(index, slice) or (isinstance(index, tuple) and any(isinstance(i, slice) for i in index)):
                raise self.err(KernelSyntaxError, "tensors cannot be sliced at tile level; load a tile with offsets",
                               node)
            return self.call_op(self.op_named("getval"), [obj, self.scalar_index(obj, index, node)], {}, node)
        if isinstance(obj, TilingArray):
            if is_runtime(index):
                raise self.not_implemented(f"TilingData array element {obj.name}[i] at a runtime index (use a "
                                           f"compile-time index)", node)
            self.require_int(index, f"a TilingData array index {obj.name}[i]", node)
            if not -len(obj) <= index < len(obj):
                raise self.err(KernelSyntaxError, f"index {index} is outside {obj.name} (length {len(obj)})", node)
            return obj.elements[index]
        if isinstance(obj, GroupHandle):
            if is_runtime(index) and is_scalar(index) and ir.is_integral(index):  # checked where it is taken
                g = obj.decl
                snapshot = self.new_var(f"{g.name}_slot", index, node)
                self.call_op(self.op_named("check_slot"), [snapshot, g], {}, node)
                return ir.SlotRef(g, snapshot)
            if is_runtime(index) or not is_scalar(index):
                raise self.err(KernelSyntaxError, "a tile group index g[i] must be an int", node)
            self.require_int(index, "a tile group index g[i]", node)
            if not 0 <= index < obj.decl.depth:
                raise self.err(KernelSyntaxError, f"tile group index {index} is outside [0, {obj.decl.depth})", node)
            return ir.DeclRef(obj.decl.slots[index])
        if is_runtime(index) and selects_aggregates(obj):
            return self.sequence_item(obj, index, node)  # structs, tiles or runtime scalars
        if is_runtime(index) or (isinstance(index, tuple) and any(is_runtime(i) for i in index)):
            return runtime_lookup.select(self, obj, index, node)
        try:
            return obj[index]
        except Exception as e:  # noqa: BLE001 - compile-time evaluation failure
            raise self.err(KernelSyntaxError, f"compile-time subscript failed: {e}", node) from None

    def eval_index(self, node):
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise self.err(KernelSyntaxError, "slices with a step are not supported", node)
            return slice(None if node.lower is None else self.eval(node.lower),
                         None if node.upper is None else self.eval(node.upper))
        if isinstance(node, ast.Tuple):
            return tuple(self.eval_index(e) for e in node.elts)
        return self.eval(node)

    def require_int(self, value, what: str, node) -> None:
        """Reject a float where an integer is required (offsets, valid shapes, bounds), instead of
        truncating it silently."""
        if not ir.is_integral(value):
            raise self.err(KernelTypeError, f"{what} must be an integer, got {ir.describe_value(value)}", node)

    def scalar_index(self, obj, index, node):
        items = list(index) if isinstance(index, tuple) else [index]
        if not all(is_scalar(i) for i in items):
            raise self.err(KernelSyntaxError, "element access takes scalar indices", node)
        return items if len(items) > 1 else items[0]

    def subview(self, tile: ir.TileRef, index, node) -> ir.SubRef:
        shape = tile.static_shape
        bounds = []
        for axis, sl in enumerate(index):
            lo = 0 if sl.start is None else sl.start
            if sl.stop is None:
                if shape is None:
                    raise self.err(KernelSyntaxError, "open-ended slices need a tile of compile-time shape", node)
                hi = shape[axis]
            else:
                hi = sl.stop
            for b in (lo, hi):
                if not is_scalar(b):
                    raise self.err(KernelSyntaxError, "subview bounds must be scalars", node)
                self.require_int(b, f"subview bound on axis {axis}", node)
            if not is_runtime(lo) and not is_runtime(hi):
                if lo < 0 or hi <= lo or (shape is not None and hi > shape[axis]):
                    extent = shape[axis] if shape else "?"
                    raise self.err(KernelTypeError, f"subview [{lo}:{hi}] on axis {axis} is outside the tile "
                                   f"extent {extent}", node)
            bounds += [to_expr(lo), to_expr(hi)]
        return ir.SubRef(tile, bounds[0], bounds[1], bounds[2], bounds[3])

    def expr_BinOp(self, node: ast.BinOp):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.err(KernelSyntaxError, f"operator {type(node.op).__name__} is not supported", node)
        return self.binop(op, self.eval(node.left), self.eval(node.right), node)

    def binop(self, op: str, a, b, node):
        pointer = vf_pointer_arith(self, op, a, b, node)  # `tile + offset` in VF code
        if pointer is not None:
            return pointer
        if isinstance(a, (ir.TileRef, GroupHandle)) or isinstance(b, (ir.TileRef, GroupHandle)):
            raise self.err(KernelSyntaxError, operator_hint(op), node)
        if not is_runtime(a) and not is_runtime(b):
            try:
                return _PY_BINOP[op](a, b)
            except Exception as e:  # noqa: BLE001
                raise self.err(KernelSyntaxError, f"compile-time '{op}' failed: {e}", node) from None
        if not (is_scalar(a) and is_scalar(b)):
            raise self.err(KernelSyntaxError, f"operator '{op}' needs scalar operands", node)
        if op in _COMPILE_TIME_ONLY:
            raise self.err(KernelSyntaxError, f"operator '{op}' needs compile-time operands (runtime scalars have no "
                           f"'{op}' op; multiply explicitly or compute the value outside the kernel)", node)
        ea, eb = to_expr(a), to_expr(b)
        return ir.BinOp(op, ea, eb, ir.binop_dtype(op, ea.dtype, eb.dtype))

    def expr_UnaryOp(self, node: ast.UnaryOp):
        v = self.eval(node.operand)
        op = {ast.USub: "-", ast.Not: "not", ast.Invert: "~", ast.UAdd: "+"}[type(node.op)]
        if not is_runtime(v):
            return {"-": lambda x: -x, "not": lambda x: not x, "~": lambda x: ~x, "+": lambda x: +x}[op](v)
        if op == "+":
            return v
        return ir.UnOp(op, v, dt.DT_BOOL if op == "not" else v.dtype)

    def expr_BoolOp(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        result = self.eval(node.values[0])
        for v in node.values[1:]:
            if not is_runtime(result):
                if (op == "and") != bool(result):
                    return result
                result = self.eval(v)
                continue
            result = ir.BinOp(op, result, to_expr(self.eval(v)), dt.DT_BOOL)
        return result

    def expr_Compare(self, node: ast.Compare):
        left = self.eval(node.left)
        result = None
        for op_node, right_node in zip(node.ops, node.comparators):
            if isinstance(op_node, (ast.In, ast.NotIn)):  # also a runtime value in a list or a pl.range
                right = None
                cmp = runtime_lookup.contains(self, left, right_node, node)
                if isinstance(op_node, ast.NotIn):
                    cmp = ir.UnOp("not", cmp, dt.DT_BOOL) if is_runtime(cmp) else not cmp
                if len(node.ops) > 1:  # a chained comparison continues from the right operand
                    right = self.eval(right_node)
            elif isinstance(op_node, (ast.Is, ast.IsNot)):
                right = self.eval(right_node)
                if is_runtime(left) or is_runtime(right):
                    raise self.err(KernelSyntaxError, "is/is not comparisons need compile-time values (use == for "
                                   "runtime scalars)", node)
                cmp = (left is right) if isinstance(op_node, ast.Is) else (left is not right)
            else:
                right = self.eval(right_node)
                cmp = self.binop(_CMPOPS[type(op_node)], left, right, node)
            if result is None:
                result = cmp
            elif not is_runtime(result) and not is_runtime(cmp):
                result = result and cmp
            else:
                result = ir.BinOp("and", to_expr(result), to_expr(cmp), dt.DT_BOOL)
            left = right
        return result

    def expr_IfExp(self, node: ast.IfExp):
        cond = self.eval(node.test)
        if not is_runtime(cond):
            return self.eval(node.body if cond else node.orelse)
        a, b = self.eval(node.body), self.eval(node.orelse)
        tile = select_tile(self, cond, a, b, node)
        if tile is not None:
            return tile
        if not (is_scalar(a) and is_scalar(b)):
            raise self.err(KernelSyntaxError, "a runtime conditional expression can only choose between scalars "
                           "or between whole tiles of one type", node)
        ea, eb = to_expr(a), to_expr(b)
        dtype = ir.binop_dtype("+", ea.dtype, eb.dtype) if ea.dtype != eb.dtype else ea.dtype
        return ir.Select(cond, ea, eb, dtype)

    # ------------------------------------------------------------------ calls
    def expr_Call(self, node: ast.Call):
        func = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                seq = self.eval(a.value)
                if not isinstance(seq, (list, tuple)):
                    raise self.err(KernelSyntaxError, "*args needs a compile-time sequence", node)
                args.extend(seq)
            else:
                args.append(self.eval(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                extra = self.eval(k.value)
                if not isinstance(extra, dict):
                    raise self.err(KernelSyntaxError, "**kwargs needs a compile-time dict", node)
                kwargs.update(extra)
                continue
            kwargs[k.arg] = self.eval(k.value)
        opdef = getattr(func, "__pto_op__", None)
        if opdef is not None:
            adapt = getattr(func, "__pto_adapt__", None)  # an instruction-level spelling (language/spellings.py)
            if adapt is not None:
                try:
                    args, kwargs = adapt(args, kwargs, lambda v: isinstance(v, ir.TileRef))
                except KernelError as e:
                    raise e.attach(loc=self.loc(node), kernel=self.name)
            return self.call_op(opdef, args, kwargs, node)
        frontend = getattr(func, "__pto_frontend__", None)  # API families with their own module (vf)
        if frontend is not None:
            return frontend(self, node, args, kwargs)
        intrinsic = getattr(func, "__pto_intrinsic__", None)
        if intrinsic == "not_implemented":
            self.call_not_implemented(func, node)
        if intrinsic is not None:
            return self.call_intrinsic(func, args, kwargs, node)
        if isinstance(func, BoundMethod):
            return self.call_method(func, args, kwargs, node)
        if func in (builtins.min, builtins.max) and len(args) == 2 and not kwargs and any(map(is_runtime, args)):
            return self.binop(func.__name__, args[0], args[1], node)
        if func in (builtins.int, builtins.float, builtins.bool) and len(args) == 1 and is_runtime(args[0]):
            target = {int: dt.DT_INT64, float: dt.DT_FP32, bool: dt.DT_BOOL}[func]
            return ir.UnOp({int: "int", float: "float", bool: "bool"}[func], args[0], target)
        if func is builtins.print:
            raise self.err(KernelSyntaxError, "print() is not available in a kernel; use pl.printf", node)
        if getattr(func, "__pto_jit__", False):
            raise self.err(KernelSyntaxError, "calling another @pl.jit kernel from a kernel is not supported; call "
                           "its undecorated helper instead", node)
        if (isinstance(func, types.FunctionType) and not func.__module__.startswith("pypto_pro")
                and func.__name__ != "<lambda>"):  # a lambda has no statements to inline: a compile-time callable
            return self.inline_call(func, args, kwargs, node)
        values = list(args) + list(kwargs.values())
        if any(is_runtime(v) or isinstance(v, (ir.TileRef, GroupHandle, TensorHandle)) for v in values):
            on_tile = any(isinstance(v, (ir.TileRef, GroupHandle)) for v in values)
            hint = ("; use pl.range for a runtime loop" if func is builtins.range else
                    "; write it as a def helper, which is inlined" if getattr(func, "__name__", "") == "<lambda>"
                    else compile_time_call_hint(getattr(func, "__name__", ""), on_tile)
                    if getattr(func, "__module__", None) in ("math", "numpy") or isinstance(func, np.ufunc) else "")
            raise self.err(KernelSyntaxError, f"{getattr(func, '__name__', func)!s} is evaluated at compile time "
                           f"and cannot take runtime scalars, tiles or tensors{hint}", node)
        try:
            return func(*args, **kwargs)
        except KernelError as e:
            raise e.attach(loc=self.loc(node), kernel=self.name)
        except NotImplementedError:
            raise
        except ValueError as e:
            raise self.err(KernelValueError, str(e), node) from None
        except Exception as e:  # noqa: BLE001 - any compile-time failure is the kernel author's
            raise self.err(KernelSyntaxError, f"{type(e).__name__}: {e}", node) from None

    def inline_call(self, func, args, kwargs, node):
        if len(self.inline_stack) > 32:
            raise self.err(KernelSyntaxError, "helper inlining is too deep (recursion?)", node)
        try:
            fdef, filename, first, lines = function_source(func)
        except KernelError as e:
            raise e.attach(loc=self.loc(node), kernel=self.name)
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            raise self.err(KernelSyntaxError, f"calling {func.__name__}: {e}", node) from None
        bound.apply_defaults()
        reassigned = set(_assigned_names(fdef.body))
        params = {name: self.new_var(name, value, node) if name in reassigned and isinstance(value, ir.Var) else value
                  for name, value in bound.arguments.items()}  # a reassigned parameter is local, not the caller's
        outer = self.scope
        self.scope = Scope(func.__globals__, closure_vars(func), filename, first, lines)
        self.scope.vars.update(params)
        self.inline_stack.append(self.runtime_depth)
        frame = self.enter_frame(func.__name__, helper=True)
        try:
            self.visit_body(fdef.body)
            return self.leave_frame(frame, fdef, node)
        except _Return as r:
            return r.value
        finally:
            if self.frames and self.frames[-1] is frame:
                self.frames.pop()
            self.inline_stack.pop()
            self.scope = outer

    def call_method(self, m: BoundMethod, args, kwargs, node):
        if args or kwargs:
            raise self.err(KernelSyntaxError, f"{m.name}() takes no arguments", node)
        g = m.obj.decl
        if g.depth == 1:
            return ir.DeclRef(g.slots[0])
        cursor = g.cursor
        if m.name == "next":
            self.emit(ir.Assign(self.loc(node), cursor, ir.BinOp("%", ir.BinOp("+", cursor, ir.const(1)),
                                                                 ir.const(g.depth))))
            index = cursor
        elif m.name == "current":
            index = cursor
        else:
            index = ir.BinOp("%", ir.BinOp("+", cursor, ir.const(g.depth - 1)), ir.const(g.depth))
        snapshot = self.new_var(f"{g.name}_slot", index, node)
        return ir.SlotRef(g, snapshot)

    def op_named(self, name: str) -> OpDef:
        from ...ir.optable import OPS
        return OPS[simt_element_op(self, name)]  # element access by a SIMT thread: its V-pipe variant

    def bind(self, public: str, sig: inspect.Signature, args, kwargs, node) -> inspect.BoundArguments:
        """Bind a call of ``pl.<public>``; a mismatch is a KernelSyntaxError naming the function, the
        problem and the expected signature."""
        try:
            return sig.bind(*args, **kwargs)
        except TypeError as e:
            raise self.err(KernelSyntaxError, f"{public}: {_binding_problem(sig, args, e)}; expected "
                           f"{signature_text(public, sig)}", node) from None

    def call_op(self, opdef: OpDef, args, kwargs, node):
        bound = self.bind(f"pl.{opdef.aliases[0]}", opdef.public_signature, args, kwargs, node)
        bound.apply_defaults()
        bound = opdef.from_public(bound.arguments)
        for p in opdef.params:
            bound[p.name] = self.convert_operand(opdef, p, bound[p.name], node)
        self._strided_access(opdef, bound, node)
        self._check_mask_only(opdef, bound, node)
        try:
            result_dtype = opdef.check(CheckCtx(opdef, self.arch, self.section), bound)
        except KernelError as e:
            raise e.attach(loc=self.loc(node), kernel=self.name)
        side = opdef.side(bound)
        stmt = ir.OpStmt(self.loc(node), opdef, bound)
        try:
            verify.check_side(stmt, side, self.section)
        except KernelError as e:
            raise e.attach(kernel=self.name)
        if side is not None and self.section is None:
            self.sides_outside.setdefault(side, stmt)
        if result_dtype is not None:
            stmt.result = ir.Var(f"{opdef.name}_result", result_dtype)
        self.emit(stmt)
        return stmt.result

    def convert_operand(self, opdef: OpDef, p, value, node):
        kind = p.kind
        where = f"pl.{opdef.aliases[0]}: '{p.name}'"
        if value is None and p.default is None:
            return None
        if isinstance(value, dict):  # a dict is a compile-time lookup table, never an operand (official wording)
            raise self.err(KernelTypeError, f"{where}: Unsupported closure variable type: dict; pass a value, a "
                           f"tile or a tensor", node)
        if kind == "any":
            return value.param if isinstance(value, TensorHandle) else value
        if kind in ("tile", "tile_or_scalar", "tile_or_group", "tile_or_tensor"):
            if isinstance(value, ir.TileRef):
                return value
            if kind == "tile_or_group" and isinstance(value, GroupHandle):
                return value.decl
            if kind == "tile_or_tensor" and isinstance(value, TensorHandle):
                return value.param
            if kind == "tile_or_scalar" and is_scalar(value):
                return value.item() if isinstance(value, np.generic) else value
            if isinstance(value, GroupHandle):
                raise self.err(KernelTypeError, f"{where} is a tile group; pass one of its tiles "
                               f"(g.current(), g.next(), g[i])", node)
            if isinstance(value, VfPtr):
                raise self.err(KernelTypeError, f"{where} must be a tile, got `tile + offset`, an address that only "
                               f"vf loads and stores take; for element-wise arithmetic use pl.add(dst, tile, "
                               f"value) with a destination tile", node)
            raise self.err(KernelTypeError, f"{where} must be a tile, got {type(value).__name__}", node)
        if kind == "tensor":
            if isinstance(value, TensorHandle):
                return value.param
            raise self.err(KernelTypeError, f"{where} must be a pl.Tensor parameter, got {type(value).__name__}",
                           node)
        if kind == "scalar":
            if is_scalar(value):
                return value.item() if isinstance(value, np.generic) else value
            raise self.err(KernelTypeError, f"{where} must be a scalar, got {type(value).__name__}", node)
        if kind == "index_list":
            if isinstance(value, (list, tuple)) and all(is_scalar(v) for v in value):
                for v in value:
                    self.require_int(v, f"{where} entry", node)
                return [v.item() if isinstance(v, np.generic) else v for v in value]
            raise self.err(KernelTypeError, f"{where} must be a list of scalar offsets, got {value!r}", node)
        if kind == "scalars":
            value = [v.address() if isinstance(v, PtrValue) else v for v in value]  # printf("%p", ptr)
            if all(is_scalar(v) for v in value):
                return [v.item() if isinstance(v, np.generic) else v for v in value]
            raise self.err(KernelTypeError, f"{where} must be scalars", node)
        if kind == "tile_list":
            if isinstance(value, (list, tuple)) and all(isinstance(v, ir.TileRef) for v in value):
                return list(value)
            raise self.err(KernelTypeError, f"{where} must be a list of tiles", node)
        # const
        if is_runtime(value) or isinstance(value, (ir.TileRef, GroupHandle, TensorHandle)):
            raise self.err(KernelTypeError, f"{where} must be a compile-time value", node)
        return value

    # ------------------------------------------------------------------ intrinsics
    def call_intrinsic(self, func, args, kwargs, node):
        name = func.__pto_intrinsic__
        handler = getattr(self, "intrinsic_" + name, None)
        if handler is None:
            raise self.err(KernelSyntaxError, f"pl.{name}() cannot be used here", node)
        bound = self.bind(f"pl.{name}", inspect.signature(func), args, kwargs, node)
        return handler(node, *bound.args, **bound.kwargs)

    def intrinsic_range(self, node, *args, **kwargs):
        raise self.err(KernelSyntaxError, "pl.range can only be the iterator of a for statement", node)

    def intrinsic_section_vector(self, node):
        raise self.err(KernelSyntaxError, "pl.section_vector() must be used as 'with pl.section_vector():'", node)

    intrinsic_section_cube = intrinsic_section_vector

    def _core_query(what):
        def handler(self, node):
            return ir.CoreQuery(what)
        return handler

    intrinsic_get_block_idx = _core_query("block_idx")
    intrinsic_get_block_num = _core_query("block_num")
    intrinsic_get_subblock_idx = _core_query("subblock_idx")
    intrinsic_get_subblock_num = _core_query("subblock_num")
    del _core_query

    def intrinsic_get_spr(self, node):
        """The AddrReg value the vector functions left (the same value as ``vf.get_spr()``)."""
        ar = vf_state(self).ar
        return 0 if ar is None else ar

    def intrinsic_min(self, node, lhs, rhs):
        return self._minmax("min", lhs, rhs, node)

    def intrinsic_max(self, node, lhs, rhs):
        return self._minmax("max", lhs, rhs, node)

    def _minmax(self, op, a, b, node):
        if not (is_scalar(a) and is_scalar(b)):
            raise self.err(KernelTypeError, f"pl.{op} takes two scalars; for tiles use pl.{op}imum", node)
        if scalar_dtype(a).is_float() != scalar_dtype(b).is_float():
            raise self.err(KernelTypeError, f"pl.{op} needs operands of the same category (int/int or "
                           f"float/float), got {scalar_dtype(a).name} and {scalar_dtype(b).name}", node)
        return self.binop(op, a, b, node)

    def intrinsic_const(self, node, value, dtype):
        if is_runtime(value) or not isinstance(dtype, dt.DataType):
            raise self.err(KernelTypeError, "pl.const(value, dtype) takes a compile-time value and a pl.DT_* type",
                           node)
        if dtype.is_float():
            return float(np.asarray(value, dtype=dtype.require_numpy()).astype(np.float32))
        if dtype.kind == "bool":
            return bool(value)
        return int(np.asarray(value).astype(dtype.require_numpy()))

    def intrinsic_constexpr(self, node, cond):
        if is_runtime(cond):
            raise self.err(KernelSyntaxError, "pl.constexpr(...) needs a condition known at compile time", node)
        return bool(cond)

    def not_implemented(self, what: str, node) -> NotImplementedError:
        """A NotImplementedError naming the feature, the kernel and the source location."""
        suffix = "" if "not implemented" in what else " is not implemented yet"
        err = NotImplementedError(f"[kernel {self.name}] {what}{suffix}\n  at {self.loc(node)}")
        err.pto_located = True
        return err

    def call_not_implemented(self, func, node):
        raise self.not_implemented(func.__pto_feature__, node)

    # ------------------------------------------------------------------ raw pointers and GM views
    def _index_value(self, value, what: str, node, minimum: int = 0):
        """An int >= ``minimum`` as is; a runtime integer as a fresh Var holding its value now (a pointer
        or view keeps the value it was made with, as in Python); anything else raises."""
        if not is_scalar(value) or isinstance(value, bool):
            raise self.err(KernelTypeError, f"{what} must be an int or a runtime integer, got {value!r}", node)
        self.require_int(value, what, node)
        if not is_runtime(value):
            if value < minimum:
                raise self.err(KernelValueError, f"{what} must be >= {minimum}, got {value}", node)
            return int(value)
        return self.new_var("ptr_view", value, node)

    def _pointer(self, ptr, what: str, node) -> "PtrValue":
        if not isinstance(ptr, PtrValue):
            raise self.err(KernelTypeError, f"{what} takes a pl.Ptr pointer (a pl.Ptr[...] parameter, pl.addptr or "
                           f"pl.make_ptr), got {_what(ptr)}", node)
        return ptr

    def intrinsic_addptr(self, node, ptr, offset):
        p = self._pointer(ptr, "pl.addptr", node)
        if not is_scalar(offset) or isinstance(offset, bool) or not ir.is_integral(offset):
            raise self.err(KernelTypeError, f"pl.addptr: the offset must be an integer (elements), got {offset!r}",
                           node)
        moved = self.binop("+", p.byte_offset, self.binop("*", offset, p.dtype.nbytes, node), node)
        return PtrValue(p.root, p.dtype, self._index_value(moved, "pl.addptr: the offset", node,
                                                            minimum=-(1 << 62)))

    def intrinsic_make_ptr(self, node, ptr, dtype=None):
        p = self._pointer(ptr, "pl.make_ptr", node)
        if dtype is None:
            return PtrValue(p.root, p.dtype, p.byte_offset)
        if not isinstance(dtype, dt.DataType) or dtype.np_dtype is None:
            raise self.err(KernelTypeError, f"pl.make_ptr: dtype must be a pl.DT_* type with whole-byte elements, "
                           f"got {dtype!r}", node)
        return PtrValue(p.root, dtype, p.byte_offset)

    def intrinsic_make_tensor(self, node, ptr, shape, stride=None, dtype=None):
        if isinstance(ptr, PtrValue):
            root, byte_offset, src_dtype = ptr.root, ptr.byte_offset, ptr.dtype
        elif isinstance(ptr, TensorHandle):
            p = ptr.param
            root = p.base if isinstance(p, ir.TensorView) else p
            byte_offset = p.byte_offset if isinstance(p, ir.TensorView) else 0
            src_dtype = p.dtype
        else:
            raise self.err(KernelTypeError, f"pl.make_tensor takes a pl.Ptr pointer or a GM tensor, got "
                           f"{_what(ptr)}", node)
        if dtype is None:
            dtype = src_dtype
        if not isinstance(dtype, dt.DataType) or dtype.np_dtype is None:
            raise self.err(KernelTypeError, f"pl.make_tensor: dtype must be a pl.DT_* type with whole-byte "
                           f"elements, got {dtype!r}", node)
        if not isinstance(shape, (list, tuple)) or not shape:
            raise self.err(KernelTypeError, f"pl.make_tensor: shape must be a non-empty list, got {shape!r}", node)
        dims = [self._index_value(d, f"pl.make_tensor: shape[{i}]", node, minimum=1) for i, d in enumerate(shape)]
        if stride is None:
            strides = [1]  # row-major: each axis steps over the product of the dims after it
            for d in reversed(dims[1:]):
                strides.insert(0, self._index_value(self.binop("*", strides[0], d, node),
                                                    "pl.make_tensor: a row-major stride", node))
        else:
            if not isinstance(stride, (list, tuple)) or len(stride) != len(shape):
                raise self.err(KernelTypeError, f"pl.make_tensor: stride must be a list of {len(shape)} entries (one "
                               f"per axis of shape), got {stride!r}", node)
            strides = [self._index_value(s, f"pl.make_tensor: stride[{i}]", node) for i, s in enumerate(stride)]
        return TensorHandle(self._view(root, dtype, dims, strides, byte_offset, node))

    def _view(self, root: ir.TensorParam, dtype: dt.DataType, dims, strides, byte_offset, node,
              clamp_rows: bool = False) -> ir.TensorView:
        self.views += 1
        kind = "strided" if clamp_rows else "view"
        return ir.TensorView(f"{root.name}_{kind}{self.views}", root.index, dtype, list(dims), Layout.ND,
                             tuple(DYNAMIC for _ in dims), base=root, byte_offset=byte_offset, strides=strides,
                             made_at=self.loc(node), clamp_rows=clamp_rows)

    def intrinsic_set_stride(self, node, tensor, stride):
        target = node.args[0] if node.args else None
        if not isinstance(tensor, TensorHandle) or not isinstance(target, ast.Name):
            raise self.err(KernelTypeError, f"pl.set_stride takes a GM tensor by its name, got {_what(tensor)}", node)
        p = tensor.param
        if dt.is_packed_gm(p.dtype):
            self._set_packed_stride(node, target, p, stride)
            return
        if not isinstance(stride, (list, tuple)) or len(stride) != p.ndim:
            raise self.err(KernelTypeError, f"pl.set_stride: stride must be a list of {p.ndim} entries (one per axis "
                           f"of '{p.name}'), got {stride!r}", node)
        strides = [self._index_value(s, f"pl.set_stride: stride[{i}]", node) for i, s in enumerate(stride)]
        root = p.base if isinstance(p, ir.TensorView) else p
        offset = p.byte_offset if isinstance(p, ir.TensorView) else 0
        view = self._view(root, p.dtype, p.dims, strides, offset, node, clamp_rows=True)
        view.offset_strides = (p.offset_strides or p.strides) if isinstance(p, ir.TensorView) else \
            self._row_major(p.dims, node)
        # in place: the name now denotes the re-strided tensor
        self.assign_name(target.id, TensorHandle(view), node)

    def _row_major(self, dims, node) -> list:
        strides = [1]
        for d in reversed(dims[1:]):
            strides.insert(0, self._index_value(self.binop("*", strides[0], d, node), "a row-major stride", node))
        return strides

    def _strided_access(self, opdef: OpDef, bound: dict, node) -> None:
        """``pl.load``/``pl.store`` on a ``pl.set_stride`` tensor: the access starts at the element its offsets
        named before the strides were set (official set_stride: a gather of rows ``s`` apart starts at row
        ``i``), so it becomes an access at offset 0 of a view starting there with the new strides."""
        name = "src" if opdef.name == "load" else "dst" if opdef.name == "store" else None
        view = bound.get(name) if name else None
        if not isinstance(view, ir.TensorView) or view.offset_strides is None:
            return
        offsets = bound["offsets"]
        if len(offsets) != view.ndim:
            return  # the op's own check names the mismatch
        start = view.byte_offset
        for o, s in zip(offsets, view.offset_strides):
            start = self.binop("+", start, self.binop("*", self.binop("*", o, s, node), view.dtype.nbytes, node),
                               node)
        at = self._view(view.base, view.dtype, view.dims, view.strides,
                        self._index_value(start, "the start of a set_stride access", node), node, clamp_rows=True)
        at.name = view.name
        bound[name] = at
        bound["offsets"] = [0] * view.ndim

    def _set_packed_stride(self, node, target, p: ir.TensorParam, stride) -> None:
        """``pl.set_stride`` of a packed FP4 tensor: ``[row_stride, col_stride]`` in logical 4-bit elements,
        the steps of a loaded tile's rows and columns (the tensor's own shape counts bytes)."""
        if not isinstance(stride, (list, tuple)) or len(stride) != 2:
            raise self.err(KernelTypeError, f"pl.set_stride: '{p.name}' is a packed {p.dtype.name} tensor; its stride is "
                           f"[row_stride, col_stride] in {p.dtype.name} elements, got {stride!r}", node)
        strides = [self._index_value(s, f"pl.set_stride: stride[{i}]", node) for i, s in enumerate(stride)]
        root = p.base if isinstance(p, ir.PackedStrides) else p
        view = ir.PackedStrides(root.name, root.index, root.dtype, list(root.dims), root.layout, root.declared,
                                base=root, tile_strides=strides)
        self.assign_name(target.id, TensorHandle(view), node)

    def _check_placement(self, ttype: TileType, addr, size: int, what: str, node) -> int:
        """The layout of a tile declared at ``addr``; placement rules of ir/verify.py, located at ``node``."""
        if is_runtime(addr) or not isinstance(addr, int) or isinstance(addr, bool):
            raise self.err(KernelTypeError, f"{what}: addr must be a compile-time int", node)
        layout = ttype.layout or default_layout(ttype.target_memory, ttype.dtype, self.arch.name)
        try:
            verify.check_tile_placement(ttype, layout, addr, size, self.arch, what)
        except KernelError as e:
            raise e.attach(loc=self.loc(node), kernel=self.name)
        return layout

    def _check_slots_apart(self, ttype: TileType, slots: List[ir.TileDecl], what: str, node) -> None:
        try:
            verify.check_slots_apart(ttype, slots, what)
        except KernelError as e:
            raise e.attach(loc=self.loc(node), kernel=self.name)

    def _check_vec_extent(self, decl: ir.TileDecl, what: str, node) -> None:
        """The 32-byte rule of Vec tiles (docs/language.md): the contiguous extent — an ND row, a DN
        column, or the whole tile when it is a single column/row (ND [R,1] and DN [1,C] are laid out
        like DN [R,1] and ND [1,C]) — must be a multiple of 32 bytes.  A UINT8 tile that breaks it is
        accepted as a compare mask (declared with the data tile's shape, docs/language.md) and rejected at
        its first other use (:meth:`_check_mask_only`)."""
        if decl.space != MemorySpace.Vec or decl.layout.name not in ("ND", "DN"):
            return
        rows, cols = decl.shape
        nd = decl.layout.name == "ND"
        extent, axis = (cols, "cols") if (nd and cols > 1) or (not nd and rows == 1) else (rows, "rows")
        if extent * decl.dtype.nbytes % 32 == 0:
            return
        article = "an" if nd else "a"
        message = (f"{what}: {article} {decl.layout.name} Vec tile needs {axis} x element bytes to be a multiple of "
                   f"32 (got {extent} x {decl.dtype.nbytes})")
        if decl.dtype == dt.DT_UINT8:
            self.mask_only[decl.uid] = message + "; such a UINT8 tile can only be the mask of a compare or select"
            return
        raise self.err(KernelMemoryError, message, node)

    def _check_mask_only(self, opdef: OpDef, bound: Dict[str, Any], node) -> None:
        """A narrow UINT8 tile (see :meth:`_check_vec_extent`) may only be an op's ``mask`` operand."""
        if not self.mask_only:
            return
        for p in opdef.params:
            if p.name == "mask":
                continue
            values = bound[p.name] if isinstance(bound[p.name], (list, tuple)) else [bound[p.name]]
            for v in values:
                for d in v.decls() if isinstance(v, ir.TileRef) else ():
                    if d.uid in self.mask_only:
                        raise self.err(KernelMemoryError, f"pl.{opdef.aliases[0]}: tile {d.name} is not a valid "
                                       f"'{p.name}' operand: {self.mask_only[d.uid]}", node)

    def _tile_name(self, default: str) -> str:
        return self.assign_target or default

    def intrinsic_make_tile(self, node, tile_type, *, addr, size=None):
        if not isinstance(tile_type, TileType):
            raise self.err(KernelTypeError, "pl.make_tile needs a pl.TileType as first argument", node)
        size = tile_type.nbytes if size is None else size
        layout = self._check_placement(tile_type, addr, size, "pl.make_tile", node)
        decl = ir.TileDecl(self._tile_name(f"tile{len(self.tiles)}"), tile_type, layout, addr, size, self.loc(node))
        self._check_vec_extent(decl, "pl.make_tile", node)
        self.tiles.append(decl)
        return ir.DeclRef(decl)

    def intrinsic_make_tile_group(self, node, *, type, addrs, mutex_ids=None, depth=None,  # noqa: A002
                                  fwd_ids=None, bwd_ids=None):
        where = "pl.make_tile_group"
        if not isinstance(type, TileType):
            raise self.err(KernelTypeError, f"{where} needs type=<pl.TileType>", node)
        if mutex_ids:
            if not isinstance(mutex_ids, (list, tuple)):
                raise self.err(KernelTypeError, f"{where}: mutex_ids must be a list (one entry per slot)", node)
            slots_ids = []
            for entry in mutex_ids:
                ids = list(entry) if isinstance(entry, (list, tuple)) else [entry]
                if not ids or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= 31 for i in ids):
                    raise self.err(KernelTypeError, f"{where}: each mutex_ids entry is an int or a non-empty list of "
                                   f"ints in [0, 31], got {entry!r}", node)
                if len(set(ids)) != len(ids):
                    raise self.err(KernelTypeError, f"{where}: mutex ids repeat within one slot: {entry!r}", node)
                slots_ids.append(ids)
            if len({len(s) for s in slots_ids}) != 1:
                raise self.err(KernelTypeError, f"{where}: every slot needs the same number of mutex ids", node)
            if depth is not None and depth != len(slots_ids):
                raise self.err(KernelTypeError, f"{where}: depth={depth} but {len(slots_ids)} mutex_ids entries",
                               node)
            depth = len(slots_ids)
        else:
            if depth is None:
                raise self.err(KernelTypeError, f"{where}: depth is required when mutex_ids is not given", node)
            slots_ids = [[] for _ in builtins.range(depth if isinstance(depth, int) else 0)]
        if not isinstance(depth, int) or depth < 1:
            raise self.err(KernelTypeError, f"{where}: depth must be a positive int, got {depth!r}", node)
        size = type.nbytes
        if isinstance(addrs, (list, tuple)):
            if len(addrs) != depth:
                raise self.err(KernelTypeError, f"{where}: {len(addrs)} addrs for depth {depth}", node)
            addr_list = list(addrs)
        elif isinstance(addrs, int) and not isinstance(addrs, bool):
            addr_list = [addrs + i * size for i in builtins.range(depth)]
        else:
            raise self.err(KernelTypeError, f"{where}: addrs must be a base address or a list of addresses", node)
        name = self._tile_name(f"group{len(self.groups)}")
        slots = []
        for i, a in enumerate(addr_list):
            layout = self._check_placement(type, a, size, f"{where} slot {i}", node)
            slots.append(ir.TileDecl(f"{name}[{i}]", type, layout, a, size, self.loc(node)))
            self._check_vec_extent(slots[-1], f"{where} slot {i}", node)
        if not isinstance(addrs, (list, tuple)):  # explicit addresses may alias on purpose (docs/language.md)
            self._check_slots_apart(type, slots, where, node)
        self.tiles.extend(slots)
        group = ir.TileGroupDecl(name, slots, slots_ids, ir.Var(f"{name}_cursor", dt.DT_INT64), self.loc(node),
                                 may_alias=isinstance(addrs, (list, tuple)))
        for s in slots:
            s.group = group
        self.groups.append(group)
        if depth > 1:
            self.emit(ir.Assign(self.loc(node), group.cursor, ir.const(depth - 1)))
        return GroupHandle(group)


def parse_kernel(fn, *, name: str, arch, auto_mutex: bool, static_dims: Dict[str, List[int]],
                 key_fields: Optional[Dict[str, int]] = None, type_names: Optional[Dict[str, Any]] = None
                 ) -> ir.KernelIR:
    """Parse ``fn`` into tile IR for one specialization (the values of its STATIC dims and, for a kernel
    with a tiling key, the key's field values: compile-time names in the body)."""
    return KernelParser(fn, name=name, arch=arch, auto_mutex=auto_mutex, static_dims=static_dims,
                        key_fields=key_fields, type_names=type_names).parse()
