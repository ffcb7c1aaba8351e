"""The tile IR: scalar expressions, tile and tensor references, statements, kernels.

The IR is structured (loops and branches are nested statement lists) and is the single contract
between the frontends and the backends.  Scalar values live in mutable :class:`Var` slots; tiles
are byte-addressed views declared once (:class:`TileDecl`) and referenced through
:class:`TileRef` expressions, which may select a tile-group slot or a subview at run time.
"""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..dtypes import DT_BOOL, DT_FP32, DT_INDEX, DT_INT64, DataType
from ..errors import SourceLoc
from .types import Layout, MemorySpace, TileType

_ids = itertools.count()


# ----------------------------------------------------------------------------------------------
# Scalar expressions
# ----------------------------------------------------------------------------------------------
class Expr:
    """A runtime scalar expression."""

    dtype: DataType


@dataclass(eq=False)
class Const(Expr):
    value: Any
    dtype: DataType = DT_INT64

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(eq=False)
class Var(Expr):
    """A mutable scalar slot: loop variables, kernel scalar parameters, dynamic dims, locals."""

    name: str
    dtype: DataType = DT_INDEX
    uid: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class BinOp(Expr):
    """``op`` is one of + - * / // % << >> & | ^ min max == != < <= > >= and or."""

    op: str
    lhs: Expr
    rhs: Expr
    dtype: DataType = DT_INDEX

    def __repr__(self) -> str:
        if self.op in ("min", "max"):
            return f"{self.op}({self.lhs!r}, {self.rhs!r})"
        return f"({self.lhs!r} {self.op} {self.rhs!r})"


@dataclass(eq=False)
class UnOp(Expr):
    """``op`` is one of - not ~ float int."""

    op: str
    operand: Expr
    dtype: DataType = DT_INDEX

    def __repr__(self) -> str:
        return f"{self.op}({self.operand!r})"


@dataclass(eq=False)
class Select(Expr):
    cond: Expr
    if_true: Expr
    if_false: Expr
    dtype: DataType = DT_INDEX

    def __repr__(self) -> str:
        return f"({self.if_true!r} if {self.cond!r} else {self.if_false!r})"


@dataclass(eq=False)
class CoreQuery(Expr):
    """``block_idx`` / ``block_num`` / ``subblock_idx`` / ``subblock_num`` of the executing core."""

    what: str
    dtype: DataType = DT_INT64

    def __repr__(self) -> str:
        return f"get_{self.what}()"


def same_expr(a: Expr, b: Expr) -> bool:
    """Whether two expressions compute the same thing by construction: equal constants, the same
    variable, or the same operator over operands that are the same (no algebra: ``x + 1`` and ``1 + x``
    differ)."""
    if a is b:
        return True
    if type(a) is not type(b) or a.dtype != b.dtype:
        return False
    if isinstance(a, Const):
        return a.value == b.value and type(a.value) is type(b.value)
    if isinstance(a, BinOp):
        return a.op == b.op and same_expr(a.lhs, b.lhs) and same_expr(a.rhs, b.rhs)
    if isinstance(a, UnOp):
        return a.op == b.op and same_expr(a.operand, b.operand)
    if isinstance(a, Select):
        return same_expr(a.cond, b.cond) and same_expr(a.if_true, b.if_true) and same_expr(a.if_false, b.if_false)
    if isinstance(a, CoreQuery):
        return a.what == b.what
    return False  # two distinct variables


COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
LOGIC_OPS = ("and", "or")


def is_integral(value) -> bool:
    """Whether a scalar operand is an integer (or bool): a Python/numpy int, or a runtime expression of
    a non-float dtype.  Indices, offsets, valid shapes and loop bounds must be; a float there would
    otherwise be truncated silently."""
    if isinstance(value, Expr):
        return not value.dtype.is_float()
    return isinstance(value, numbers.Integral)


def describe_value(value) -> str:
    """A short text naming a scalar operand for error messages: ``float 1.5``, ``runtime FP32 x``."""
    if isinstance(value, Expr):
        return f"runtime {value.dtype.name} {value!r}"
    return f"{type(value).__name__} {value!r}"


def binop_dtype(op: str, a: DataType, b: DataType) -> DataType:
    """Result dtype of a scalar binary op (floats win; comparisons are BOOL; ints widen to 64-bit)."""
    if op in COMPARE_OPS or op in LOGIC_OPS:
        return DT_BOOL
    if op == "/" or a.is_float() or b.is_float():
        return DT_FP32
    return DT_INT64


# ----------------------------------------------------------------------------------------------
# Tiles and tensors
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class TileDecl:
    """One physical tile: a typed view at ``addr`` bytes of its memory space on every core."""

    name: str
    ttype: TileType
    layout: Layout
    addr: int
    size: int
    loc: Optional[SourceLoc] = None
    group: Optional["TileGroupDecl"] = None
    uid: int = field(default_factory=lambda: next(_ids))

    @property
    def space(self) -> MemorySpace:
        return self.ttype.target_memory

    @property
    def dtype(self) -> DataType:
        return self.ttype.dtype

    @property
    def shape(self) -> List[int]:
        return self.ttype.shape

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class TileGroupDecl:
    """A ring of ``depth`` tiles with a runtime cursor (initialised to ``depth - 1``)."""

    name: str
    slots: List[TileDecl]
    mutex_ids: List[List[int]]
    cursor: Var
    loc: Optional[SourceLoc] = None
    #: the slots were given explicit addresses (``addrs=[...]``) and may share bytes on purpose
    #: (docs/language.md "Tile groups"); slots from a base address must not (ir/verify.py)
    may_alias: bool = False

    @property
    def depth(self) -> int:
        return len(self.slots)


class TileRef:
    """An operand that denotes a tile at run time."""

    @property
    def decl(self) -> TileDecl:  # a representative declaration (for static typing)
        raise NotImplementedError

    @property
    def ttype(self) -> TileType:
        return self.decl.ttype

    @property
    def dtype(self) -> DataType:
        return self.decl.dtype

    @property
    def space(self) -> MemorySpace:
        return self.decl.space

    @property
    def layout(self) -> Layout:
        return self.decl.layout

    @property
    def static_shape(self) -> Optional[Tuple[int, int]]:
        """The physical shape if known at compile time."""
        return tuple(self.decl.shape)

    def decls(self) -> List[TileDecl]:
        """Every declaration this reference can denote."""
        return [self.decl]


@dataclass(eq=False)
class DeclRef(TileRef):
    tile: TileDecl

    @property
    def decl(self) -> TileDecl:
        return self.tile

    def __repr__(self) -> str:
        return self.tile.name


@dataclass(eq=False)
class SlotRef(TileRef):
    """Slot ``index`` (a runtime expression, taken modulo depth) of a tile group."""

    group: TileGroupDecl
    index: Expr

    @property
    def decl(self) -> TileDecl:
        return self.group.slots[0]

    def decls(self) -> List[TileDecl]:
        return list(self.group.slots)

    def __repr__(self) -> str:
        return f"{self.group.name}[{self.index!r}]"


@dataclass(eq=False)
class SubRef(TileRef):
    """``base[r0:r1, c0:c1]`` sharing the base buffer and row stride.  Its valid window is the bounds clamped
    to the base's current valid window, or, when ``valid`` is set, those (rows, cols) variables: a subview
    bound to a name is a tile of its own, whose window is fixed when it is made (a later
    ``pl.set_validshape`` of the base does not change it) and set by ``pl.set_validshape`` of the name."""

    base: TileRef
    r0: Expr
    r1: Expr
    c0: Expr
    c1: Expr
    valid: Optional[Tuple[Expr, Expr]] = None

    @property
    def decl(self) -> TileDecl:
        return self.base.decl

    def decls(self) -> List[TileDecl]:
        return self.base.decls()

    @property
    def static_shape(self) -> Optional[Tuple[int, int]]:
        if all(isinstance(e, Const) for e in (self.r0, self.r1, self.c0, self.c1)):
            return (self.r1.value - self.r0.value, self.c1.value - self.c0.value)
        return None

    def __repr__(self) -> str:
        return f"{self.base!r}[{self.r0!r}:{self.r1!r}, {self.c0!r}:{self.c1!r}]"


@dataclass(eq=False)
class TensorParam:
    """A GM tensor kernel parameter.  ``dims`` holds ints (fixed/STATIC) or Vars (DYNAMIC)."""

    name: str
    index: int
    dtype: DataType
    dims: List[Union[int, Var]]
    layout: Layout = Layout.ND
    declared: Sequence[Any] = ()

    @property
    def ndim(self) -> int:
        return len(self.dims)

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class PtrParam(TensorParam):
    """A raw GM pointer parameter ``pl.Ptr[dtype]``: the argument's bytes as a flat run of ``dtype``
    elements, ``dims == [extent]`` (a DYNAMIC dim).  Kernels address it only through views
    (:class:`TensorView`, ``pl.make_tensor``).  ``address``, made when the kernel uses the pointer's
    value (``printf("%p", ptr)``), is an INT64 Var bound at launch to the argument's host address (0
    for a ``None`` argument)."""

    address: Optional["Var"] = None


@dataclass(eq=False)
class TensorView(TensorParam):
    """A GM tensor view made in the kernel (``pl.make_tensor``): ``dims`` and ``strides`` (in elements of
    ``dtype``) over the memory of the root parameter ``base`` (a tensor or pointer parameter), starting
    ``byte_offset`` bytes after its data pointer.  Dims, strides and the offset are ints or Vars
    assigned where the view was made.  ``index`` is ``base.index``: what the view writes, ``base`` is
    written."""

    base: Optional[TensorParam] = None
    byte_offset: Union[int, "Var"] = 0
    strides: List[Union[int, "Var"]] = field(default_factory=list)
    made_at: Optional[SourceLoc] = None
    #: ``pl.set_stride``: the rows past the root's memory are not addressable (dims[0] shrinks to the
    #: rows that fit at each use) instead of making the view invalid
    clamp_rows: bool = False
    #: ``pl.set_stride``: the strides the tensor had before (elements); ``pl.load``/``pl.store`` offsets
    #: address the element they named before, and only the tile's steps follow ``strides``
    offset_strides: Optional[List[Union[int, "Var"]]] = None

    def describe(self) -> str:
        line = f" at line {self.made_at.lineno}" if self.made_at else ""
        made = "pl.set_stride" if self.clamp_rows else "pl.make_tensor"
        return f"tensor view '{self.name}' ({made}{line}) of '{self.base.name}'"


@dataclass(eq=False)
class PackedStrides(TensorParam):
    """A packed 4-bit GM tensor (``dtypes.PACKED_GM``) after ``pl.set_stride``: later loads step
    ``tile_strides[0]`` / ``tile_strides[1]`` logical (4-bit) elements per tile row / column (ints or
    Vars) instead of the tensor's own strides along their two ``order`` axes.  ``base`` is the root
    parameter, whose bytes (and name) this denotes."""

    base: Optional[TensorParam] = None
    tile_strides: List[Union[int, "Var"]] = field(default_factory=list)


@dataclass(eq=False)
class ScalarParam:
    """A scalar kernel parameter, bound to ``var`` at launch."""

    name: str
    index: int
    var: Var

    @property
    def dtype(self) -> DataType:
        return self.var.dtype


# ----------------------------------------------------------------------------------------------
# Statements
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Stmt:
    loc: Optional[SourceLoc]


@dataclass(eq=False)
class OpStmt(Stmt):
    """One tile-op instruction.  ``args`` maps the op's parameter names to operands."""

    op: Any  # OpDef (kept untyped to avoid an import cycle)
    args: Dict[str, Any]
    result: Optional[Var] = None

    @property
    def pipe(self) -> str:
        return self.op.pipe_of(self.args)


@dataclass(eq=False)
class Assign(Stmt):
    var: Var
    value: Expr


@dataclass(eq=False)
class For(Stmt):
    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: List[Stmt]


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then_body: List[Stmt]
    else_body: List[Stmt]


@dataclass(eq=False)
class While(Stmt):
    """``pre`` recomputes the condition's inputs before every test of ``cond``."""

    pre: List[Stmt]
    cond: Expr
    body: List[Stmt]


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Section(Stmt):
    """``with pl.section_vector()`` (kind "vector") or ``pl.section_cube()`` (kind "cube")."""

    kind: str
    body: List[Stmt]


@dataclass(eq=False)
class KernelIR:
    """A whole tile kernel after parsing and verification."""

    name: str
    arch: Any  # ArchSpec
    params: List[Union[TensorParam, ScalarParam]]
    body: List[Stmt]
    tiles: List[TileDecl]
    groups: List[TileGroupDecl]
    kind: str  # "vector", "cube" or "mix"
    auto_mutex: bool = True
    filename: str = "<kernel>"

    @property
    def tensor_params(self) -> List[TensorParam]:
        return [p for p in self.params if isinstance(p, TensorParam)]

    @property
    def dynamic_vars(self) -> List[Var]:
        return [d for p in self.tensor_params for d in p.dims if isinstance(d, Var)]


def walk(stmts: Sequence[Stmt]):
    """Yield every statement in ``stmts`` depth first, nested bodies included."""
    for s in stmts:
        yield s
        if isinstance(s, For):
            yield from walk(s.body)
        elif isinstance(s, If):
            yield from walk(s.then_body)
            yield from walk(s.else_body)
        elif isinstance(s, While):
            yield from walk(s.pre)
            yield from walk(s.body)
        elif isinstance(s, Section):
            yield from walk(s.body)


def const(value) -> Const:
    """A typed literal: bool -> BOOL, int -> INT64, float -> FP32."""
    if isinstance(value, bool):
        return Const(value, DT_BOOL)
    if isinstance(value, int):
        return Const(value, DT_INT64)
    return Const(float(value), DT_FP32)
