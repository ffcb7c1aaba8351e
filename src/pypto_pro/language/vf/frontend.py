"""Parser side of the Reg/VF API: register values, ``tile + offset`` pointers, ``vf.*`` calls -> IR.

A ``vf.*`` call allocates its result register (a 256-byte tile in the ``Reg`` space) and emits an
internal op of :mod:`pypto_pro.ops.vf`.  **Decision:** ``x = vf.op(...)`` where ``x`` already names a
register of the same kind and dtype, and no other live name refers to that register, writes into it,
so a register assigned in a runtime loop carries its value to the next iteration exactly like a
scalar variable.  Python's value semantics hold: binding a register that another live name already
refers to (``b = a``, ``b = pair[0]``, a helper returning its argument) copies it into a register of
its own, and a ``@pl.vector_function`` parameter the function assigns to starts as a copy, so
rebinding one name never changes another name's value.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, Dict, Optional

import numpy as np

from ... import dtypes as dt
from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir
from ...ir.optable import OPS
from ...ir.types import Layout, MemorySpace, TileType
from .keywords import aliases_for as keyword_aliases

REG_BYTES = 256


class Reg:
    """A vector register (``RegTensor``) of one dtype.  A register of a 4-bit type (512 lanes, two per
    byte, the even lane in the low nibble) is held in a UINT8 register tile; ``logical`` names its type."""

    __slots__ = ("ref", "logical")

    def __init__(self, ref: ir.DeclRef, logical: Optional[dt.DataType] = None):
        self.ref = ref
        self.logical = logical

    @property
    def dtype(self) -> dt.DataType:
        return self.logical or self.ref.dtype

    def __repr__(self) -> str:
        return f"<RegTensor {self.ref.tile.name} {self.dtype.name}>"


class Mask:
    """A mask (predicate) register (``MaskReg``)."""

    __slots__ = ("ref",)

    def __init__(self, ref: ir.DeclRef):
        self.ref = ref

    def __repr__(self) -> str:
        return f"<MaskReg {self.ref.tile.name}>"


class VfPtr:
    """``tile + offset``: the address ``offset`` elements (of the tile's dtype) past the tile's first
    element.  ``cursor`` is the runtime part a ``post_update`` load/store advances."""

    __slots__ = ("base", "offset", "cursor")

    def __init__(self, base: ir.TileRef, offset, cursor: Optional[ir.Var] = None):
        self.base = base
        self.offset = offset
        self.cursor = cursor

    def __repr__(self) -> str:
        return f"<{self.base!r} + {self.offset!r}>"


class AddrReg:
    """``vf.create_addr_reg``: an address offset ``sum(index_k * stride_k)`` in elements of ``dtype``."""

    __slots__ = ("offset", "dtype")

    def __init__(self, offset, dtype: dt.DataType):
        self.offset = offset
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"<AddrReg {self.offset!r} x {self.dtype.name}>"


class UnalignReg:
    """``vf.load_unalign_init`` / ``vf.unalign_reg_for_store``: the buffer register of unaligned transfers.
    Decision: the buffering is invisible in the values (each transfer moves exactly the data the page
    describes), so the object only checks that calls are paired."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<UnalignReg for {self.kind}>"


class _State:
    """Per kernel: the next free register slot; per active VF function: names advanced by post_update
    and the scopes of its callers (whose names stay live while it runs)."""

    def __init__(self):
        self.next_addr = 0
        self.post_update_names: list = []  # stack of sets, one per inlined vector_function
        self.caller_scopes: list = []  # stack of parser scopes, one per inlined vector_function
        self.ar = None  # the AR special register: bytes the last squeeze(STORE_REG) kept (a runtime Var)
        self.spr_mask = None  # (mask register, element bytes) of the latest VF compare (vf.get_mask_spr)
        self.views: Dict[tuple, ir.TileDecl] = {}  # (register decl uid, dtype) -> its reinterpreting alias


def _same(value, reg) -> bool:
    if isinstance(value, (Reg, Mask)):
        return value.ref.tile is reg.ref.tile
    if isinstance(value, (tuple, list)):
        return any(_same(v, reg) for v in value)
    return False


def aliased(p, reg, name: Optional[str]) -> bool:
    """Whether a live name other than ``name`` (of the current scope) refers to ``reg``'s register."""
    scope = p.scope
    for sc in [*state(p).caller_scopes, scope]:
        for k, v in sc.vars.items():
            if sc is scope and k == name:
                continue
            if _same(v, reg):
                return True
    return False


def state(p) -> _State:
    st = getattr(p, "_vf_state", None)
    if st is None:
        st = p._vf_state = _State()
    return st


# ----------------------------------------------------------------------------- helpers for frontends
class Call:
    """One ``vf.*`` call being parsed: the parser, the call node, and emission helpers."""

    def __init__(self, parser, node: ast.Call, name: str):
        self.p = parser
        self.node = node
        self.name = name

    def error(self, message: str, cls=KernelTypeError):
        return self.p.err(cls, f"vf.{self.name}: {message}", self.node)

    def not_implemented(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"vf.{self.name}: {what} (Reg/VF API) is not implemented yet")

    # -- registers
    def _alloc(self, dtype: dt.DataType, kind, reuse: bool = True):
        p = self.p
        if p.arch.capacity.get("Reg") is None:
            raise self.error(f"the Reg/VF API exists on arch a5 (Ascend 950) only, not on {p.arch.name}")
        if reuse and p.assign_node is self.node and p.assign_target:
            cur = p.scope.vars.get(p.assign_target)
            if (isinstance(cur, kind) and cur.ref.dtype == dtype and getattr(cur, "logical", None) is None
                    and not aliased(p, cur, p.assign_target)):
                return cur
        st = state(p)
        cap = p.arch.capacity["Reg"]
        if st.next_addr + REG_BYTES > cap:
            raise self.error(f"the kernel names more than {cap // REG_BYTES} registers", KernelSyntaxError)
        n = REG_BYTES // dtype.nbytes
        ttype = TileType(shape=[1, n], dtype=dtype, target_memory=MemorySpace.Reg)
        label = p.assign_target if p.assign_node is self.node and p.assign_target else self.name
        decl = ir.TileDecl(f"{'m' if kind is Mask else 'v'}reg_{label}_{st.next_addr // REG_BYTES}", ttype,
                           Layout.ND, st.next_addr, REG_BYTES, p.loc(self.node))
        st.next_addr += REG_BYTES
        p.tiles.append(decl)
        return kind(ir.DeclRef(decl))

    def reg(self, dtype: dt.DataType, reuse: bool = True) -> Reg:
        if dtype.bits() < 8:
            if dtype not in (dt.DT_INT4, dt.DT_UINT4):
                raise self.not_implemented(f"{dtype.name} registers (4-bit float types)")
            p = self.p
            cur = p.scope.vars.get(p.assign_target) if p.assign_node is self.node and p.assign_target else None
            if reuse and isinstance(cur, Reg) and cur.logical == dtype and not aliased(p, cur, p.assign_target):
                return cur
            return Reg(self._alloc(dt.DT_UINT8, Reg, False).ref, dtype)
        return self._alloc(dtype, Reg, reuse)

    def dest(self, dtype: dt.DataType, merge: bool) -> Reg:
        """The result register of an op whose MERGING mode keeps the destination's old lanes: the
        target's register, or (when another name refers to it) a copy of it."""
        p = self.p
        cur = p.scope.vars.get(p.assign_target) if p.assign_node is self.node and p.assign_target else None
        if merge and isinstance(cur, Reg) and cur.dtype == dtype and aliased(p, cur, p.assign_target):
            return self.copy(cur, reuse=False)
        return self.reg(dtype)

    def mask(self) -> Mask:
        return self._alloc(dt.DT_UINT8, Mask)

    def view(self, reg: Reg, dtype: dt.DataType) -> Reg:
        """``reg``'s 256 bytes read as lanes of ``dtype``: the same register, no copy (the hardware's ops
        read a register at the width their type names, whatever wrote it).  Only for operands."""
        if reg.dtype == dtype:
            return reg
        if reg.logical is not None or dtype.bits() < 8:
            raise self.not_implemented("reading a register at another width with 4-bit types")
        decl = reg.ref.tile
        views = state(self.p).views
        alias = views.get((decl.uid, dtype))
        if alias is None:
            ttype = TileType(shape=[1, REG_BYTES // dtype.nbytes], dtype=dtype, target_memory=MemorySpace.Reg)
            alias = ir.TileDecl(f"{decl.name}_as_{dtype.name.lower()}", ttype, Layout.ND, decl.addr, REG_BYTES,
                                decl.loc)
            views[(decl.uid, dtype)] = alias
            self.p.tiles.append(alias)
        return Reg(ir.DeclRef(alias))

    def copy(self, src, reuse: bool = True):
        """A copy of register or mask register ``src`` (into the assignment target's own register when it
        has one of the same kind and dtype)."""
        if isinstance(src, Mask):
            m = self.mask() if reuse else self._alloc(dt.DT_UINT8, Mask, False)
            self.emit("vf_mask_logic", dst=m.ref, a=src.ref, b=src.ref, mask=None, fn="and")
            return m
        d = self.reg(src.dtype, reuse)
        self.emit("vf_unary", dst=d.ref, a=src.ref, mask=None, fn="copy", merge=False)  # bytes, for 4-bit types too
        return d

    # -- operands
    def want_reg(self, value, what: str) -> Reg:
        if not isinstance(value, Reg):
            raise self.error(f"'{what}' must be a register (RegTensor), got {_what(value)}")
        return value

    def want_mask(self, value, what: str, optional: bool = True):
        if value is None and optional:
            return None
        if not isinstance(value, Mask):
            raise self.error(f"'{what}' must be a mask register (vf.create_mask / vf.update_mask / a compare), "
                             f"got {_what(value)}")
        return value.ref

    def scalar(self, value, what: str):
        from ..parser import is_scalar
        if isinstance(value, (Reg, Mask, VfPtr, ir.TileRef, AddrReg, UnalignReg)) or not is_scalar(value):
            raise self.error(f"'{what}' must be a scalar, got {_what(value)}")
        return value.item() if hasattr(value, "item") else value

    def const(self, value, enum_cls, what: str, default):
        if value is None:
            return default
        if not isinstance(value, enum_cls):
            raise self.error(f"'{what}' must be a pl.{enum_cls.__name__}, got {value!r}")
        return value.name

    def add(self, a, b):
        if isinstance(a, int) and a == 0:
            return b
        if isinstance(b, int) and b == 0:
            return a
        return self.p.binop("+", a, b, self.node)

    def address(self, tile, offset=None, what: str = "tile", cursor: bool = False):
        """(base tile, element offset) of a tile / pointer plus an offset (int, runtime scalar, [row, col]).
        ``cursor``: the access goes through the pointer's post-update cursor (the transfers that advance it
        and store_unalign); every other access of the pointer addresses its base, as on the hardware, where
        the cursor is a variable of its own next to the base pointer."""
        if isinstance(tile, VfPtr):
            base, off = tile.base, tile.offset
            if cursor and tile.cursor is not None:
                off = self.add(off, tile.cursor)
        elif isinstance(tile, ir.TileRef):
            base, off = tile, 0
        else:
            raise self.error(f"'{what}' must be a UB tile or `tile + offset`, got {_what(tile)}")
        if base.space != MemorySpace.Vec:
            raise self.error(f"'{what}' must be a Vec (UB) tile, got a {base.space.name} tile")
        if isinstance(offset, AddrReg):  # elements of the AddrReg's dtype -> elements of the tile's dtype
            offset = self.p.binop("//", self.p.binop("*", offset.offset, offset.dtype.nbytes, self.node),
                                  base.dtype.nbytes, self.node)
        if offset is not None:
            if isinstance(offset, (list, tuple)):
                if len(offset) != 2:
                    raise self.error("a list offset is [row, col]")
                shape = base.static_shape
                if shape is None:
                    raise self.error("a [row, col] offset needs a tile with a compile-time shape")
                offset = self.add(self.p.binop("*", self.scalar(offset[0], "offset row"), shape[1], self.node),
                                  self.scalar(offset[1], "offset col"))
            off = self.add(off, self.scalar(offset, "offset"))
        return base, off

    def advance(self, tile, step) -> None:
        """post_update: the pointer named by ``tile`` moves ``step`` elements of its tile's dtype."""
        cursor = tile.cursor if isinstance(tile, VfPtr) else None
        if cursor is None:
            raise self.error("post_update=True needs a pointer variable: a parameter of the vector_function or a "
                             "name bound to `tile + offset` in it", KernelSyntaxError)
        self.p.emit(ir.Assign(self.p.loc(self.node), cursor, _expr(self.add(cursor, step))))

    # -- emission
    def emit(self, opname: str, result: Optional[dt.DataType] = None, **args) -> Optional[ir.Var]:
        """Emit internal op ``opname``; with ``result`` (a dtype) the op's scalar result is returned as a Var."""
        p = self.p
        opdef = OPS[opname]
        bound = opdef.bind([], args)
        if p.section == "cube":
            raise self.error("VF code runs on the vector core; it cannot stand in pl.section_cube()")
        stmt = ir.OpStmt(p.loc(self.node), opdef, bound)
        if result is not None:
            stmt.result = ir.Var(f"{opname}_result", result)
        if p.section is None:
            p.sides_outside.setdefault("vector", stmt)
        p.emit(stmt)
        return stmt.result


def _expr(value) -> ir.Expr:
    from ..parser import to_expr
    return to_expr(value)


def _what(value) -> str:
    if isinstance(value, (Reg, Mask, VfPtr, AddrReg, UnalignReg)):
        return repr(value)
    if isinstance(value, ir.TileRef):
        return f"tile {value!r}"
    return type(value).__name__


# ----------------------------------------------------------------------------- parser hooks
def vf_rebind(p, name: str, value, node):
    """``name = value`` where ``value`` is a register another live name refers to: a copy (value
    semantics; see the module docstring).  Other values pass through unchanged."""
    if not isinstance(value, (Reg, Mask)) or not aliased(p, value, name):
        return value
    outer = p.assign_target, p.assign_node
    p.assign_target, p.assign_node = name, node
    try:
        return Call(p, node, "copy").copy(value)
    finally:
        p.assign_target, p.assign_node = outer

def _is_float_scalar(value) -> bool:
    """A float offset is no address (``t + 2.0`` is element-wise arithmetic, which the parser explains)."""
    if isinstance(value, (float, np.floating)):
        return True
    dtype = getattr(value, "dtype", None)
    return isinstance(dtype, dt.DataType) and dtype.is_float()


def vf_pointer_arith(p, op: str, a, b, node):
    """``tile + n`` / ``n + tile`` / ``ptr + n``: a :class:`VfPtr` (None when the operands are not that)."""
    from ..parser import is_scalar
    if op != "+":
        if isinstance(a, (VfPtr, Reg, Mask)) or isinstance(b, (VfPtr, Reg, Mask)):
            raise p.err(KernelSyntaxError, f"operator '{op}' is not defined on registers or tile pointers; only "
                        f"`tile + offset` (an address) is", node)
        return None
    if isinstance(b, (ir.TileRef, VfPtr)) and is_scalar(a):
        a, b = b, a
    if not (isinstance(a, (ir.TileRef, VfPtr)) and is_scalar(b)) or _is_float_scalar(b):
        if isinstance(a, (Reg, Mask)) or isinstance(b, (Reg, Mask)):
            raise p.err(KernelSyntaxError, "'+' on registers is not defined; use vf.add", node)
        return None
    call = Call(p, node, "tile + offset")
    base, off = call.address(a, b)  # from `a`'s base: its post-update cursor does not move the new address
    st = state(p)
    name = p.assign_target if p.assign_node is node else None
    if name is not None and st.post_update_names and name in st.post_update_names[-1]:
        cursor = p.new_var(f"{name}_cursor", 0, node)
        return VfPtr(base, off, cursor)
    return VfPtr(base, off)


def frontend(name: Optional[str] = None):
    """Make ``fn(call, ...)`` the ``vf.<name>`` function: outside a kernel it raises; the parser calls
    the handler with the bound arguments."""

    def wrap(fn):
        public_name = name or fn.__name__
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1:]
        public_sig = sig.replace(parameters=params)

        def public(*args, **kwargs):
            raise KernelSyntaxError(f"vf.{public_name}() can only be called inside a @pl.vector_function")

        aliases = keyword_aliases(public_name, public_sig.parameters)

        def handler(parser, node, args, kwargs):
            kwargs = dict(kwargs)
            for alias, param in aliases.items():
                if alias in kwargs:
                    if param in kwargs:
                        raise parser.err(KernelSyntaxError, f"vf.{public_name}: '{alias}' and '{param}' name the same "
                                         f"argument; pass one", node)
                    kwargs[param] = kwargs.pop(alias)
            try:
                bound = public_sig.bind(*args, **kwargs)
            except TypeError as e:
                raise parser.err(KernelSyntaxError, f"vf.{public_name}: {e}; expected "
                                 f"vf.{public_name}{public_sig}", node) from None
            bound.apply_defaults()
            return fn(Call(parser, node, public_name), *bound.args, **bound.kwargs)

        public.__name__ = public.__qualname__ = public_name
        public.__doc__ = fn.__doc__
        public.__signature__ = public_sig
        public.__pto_frontend__ = handler
        return public

    return wrap


# ----------------------------------------------------------------------------- vector_function
def _post_update_names(fdef: ast.FunctionDef) -> set:
    """Names whose address a ``post_update=True`` load/store advances inside ``fdef``: its first positional
    argument, or its second (the unaligned loads take their buffer register and pointer in either order;
    a name that turns out not to hold a pointer is never advanced)."""
    names = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.Call) and any(k.arg == "post_update" and not (isinstance(k.value, ast.Constant)
                                                                           and not k.value.value)
                                           for k in n.keywords):
            names.update(a.id for a in n.args[:2] if isinstance(a, ast.Name))
    return names


def _assigned_params(fdef: ast.FunctionDef) -> set:
    """Names ``fdef`` stores to anywhere in its body (not in nested definitions)."""
    names = set()
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return names


class VectorFunction:
    """``@pl.vector_function``: a helper of register code, inlined into the (vector section of the)
    kernel that calls it; VF functions may call each other."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "vector_function")
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.__pto_frontend__ = self._call

    def __call__(self, *args, **kwargs):
        raise KernelSyntaxError(f"{self.__name__} is a @pl.vector_function: call it inside a @pl.jit kernel")

    def _call(self, p, node, args, kwargs):
        from ..parser import function_source
        if p.section == "cube":
            raise p.err(KernelTypeError, f"{self.__name__} is a vector function; it cannot run in "
                        f"pl.section_cube()", node)
        fdef = function_source(self.fn)[0]
        names = _post_update_names(fdef)
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise p.err(KernelSyntaxError, f"calling {self.__name__}: {e}", node) from None
        bound.apply_defaults()
        values: Dict[str, Any] = dict(bound.arguments)
        for k in names & set(values):  # parameters advanced by post_update get a runtime cursor
            v = values[k]
            if isinstance(v, ir.TileRef):
                values[k] = VfPtr(v, 0, p.new_var(f"{k}_cursor", 0, node))
            elif isinstance(v, VfPtr):
                values[k] = VfPtr(v.base, v.offset, p.new_var(f"{k}_cursor", 0, node))
        assigned = _assigned_params(fdef) & set(values)
        for k in assigned:  # a parameter the function rebinds starts as its own copy (value semantics)
            if isinstance(values[k], (Reg, Mask)):
                values[k] = Call(p, node, "copy").copy(values[k], reuse=False)
        st = state(p)
        st.post_update_names.append(names)
        st.caller_scopes.append(p.scope)
        try:
            return p.inline_call(self.fn, [], values, node)
        finally:
            st.post_update_names.pop()
            st.caller_scopes.pop()
