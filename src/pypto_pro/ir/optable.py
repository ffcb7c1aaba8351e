"""The op table: every tile op is declared exactly once here (docs/architecture.md; adding an op: docs/adding_an_op.md).

An :class:`OpDef` names the op, its parameters (with operand kinds and data-flow roles), the
pipe that executes it, a static ``check`` (dtype/shape/space rules, raising ``KernelTypeError``)
and its reference semantics ``run`` (numpy, used by the interpreter), plus traits that say what kind
of op it is (element-wise, commutative, fusable, reduction, sync kind, cost class, ...).  The parser
binds calls with :meth:`OpDef.bind` and the public ``pl.<op>`` names are generated from the table.
Backends keep their own per-op registries keyed by op name (the cpu backend's C++ emitters,
``backends/cpu/registry.py``; the simulator's cost table, ``backends/sim/costs.py``) and never write
into this table; ``tests/design/test_op_registries.py`` checks that they cover it exactly.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..dtypes import DataType
from ..errors import KernelTypeError, SourceLoc
from .nodes import TileRef
from .types import CUBE_SPACES, MemorySpace

REQUIRED = inspect.Parameter.empty

#: Operand kinds understood by the parser.
#:   tile            a tile reference                    tensor   a GM tensor parameter
#:   tile_or_scalar  tile, or a runtime/compile-time number
#:   tile_or_group   a tile or a whole tile group        tile_or_tensor  either
#:   scalar          a runtime or compile-time number    index_list  list of scalars
#:   const           any compile-time Python value (enum, dtype, int, list)
#:   tile_list       list of tiles                      scalars  *args of scalars
KINDS = ("tile", "tensor", "tile_or_scalar", "tile_or_group", "tile_or_tensor", "scalar", "index_list", "const",
         "tile_list", "scalars", "any")


#: values of the OpDef traits ``sync``, ``cost`` and ``reduction`` ("" = none / by pipe).
SYNC_KINDS = ("", "flag", "barrier", "mutex", "cross_core", "grid")
COST_CLASSES = ("", "transcendental", "divide", "reciprocal", "reduce", "permute", "sort", "random", "histogram",
                "descriptor", "debug_io", "cache")
REDUCTIONS = ("", "sum", "max", "min", "argmax", "argmin")


@dataclass(frozen=True)
class Param:
    """One parameter of an op: ``role`` is "in", "out" or "inout" for tiles/tensors, "" otherwise."""

    name: str
    kind: str
    role: str = ""
    default: Any = REQUIRED
    kw_only: bool = False
    #: collects the remaining positional arguments (``*args``), e.g. printf's values.
    var: bool = False


def In(name: str, kind: str = "tile", **kw) -> Param:
    return Param(name, kind, "in", **kw)


def Out(name: str, kind: str = "tile", **kw) -> Param:
    return Param(name, kind, "out", **kw)


def InOut(name: str, kind: str = "tile", **kw) -> Param:
    return Param(name, kind, "inout", **kw)


def Arg(name: str, kind: str = "const", **kw) -> Param:
    return Param(name, kind, "", **kw)


CheckFn = Callable[["CheckCtx", Dict[str, Any]], Optional[DataType]]
RunFn = Callable[[Any, Dict[str, Any]], Any]


@dataclass
class OpDef:
    """A tile op: signature, pipe, static rule, reference semantics."""

    name: str
    params: Tuple[Param, ...]
    pipe: Union[str, Callable[[Dict[str, Any]], str]]
    check: CheckFn
    run: RunFn
    doc: str = ""
    #: the public names under ``pl`` (defaults to ``name``); ``pl.system.*`` names use a "system." prefix.
    aliases: Tuple[str, ...] = ()
    #: ops that only describe tiles (set_validshape) never take part in sync or data hazards.
    descriptor_only: bool = False
    #: internal ops are emitted by the compiler (the tensor-level lowering), never by users: no ``pl`` name.
    internal: bool = False
    # -- traits: backend-neutral facts about the KIND of op.  Passes and backends decide on these
    #    (never on lists of op names); docs/architecture.md "Op traits" lists who reads which.
    #: element-wise op: the function each element goes through ("add", "max", "exp", "splat", ...);
    #: element (r, c) of the result depends only on element (r, c) of the operands (or on row r / column c of
    #: a broadcast operand, or on a scalar).  "" for every other op.
    elementwise: str = ""
    #: swapping the two inputs (``lhs``/``rhs``) does not change the result.
    commutative: bool = False
    #: an element-wise op simple enough that a backend may chain it with its neighbours in one loop over the
    #: elements (values flowing in registers, rounded to the dtype after every op, as the op alone does).
    fusable: bool = False
    #: reduction kind ("sum", "max", "min", "argmax", "argmin"); "" when the op does not reduce.
    reduction: str = ""
    #: the axis a reduction always reduces (0: each row to one value, 1: each column); ``None``: its ``dim``
    #: argument says (and a ``dim`` of ``None`` means the op does not reduce on that call).
    reduce_dim: Optional[int] = None
    #: synchronisation kind: "flag" (set/wait a pipe flag), "barrier" (a pipe barrier), "mutex"
    #: (lock/unlock), "cross_core" (events between cores), "grid" (all cores); "" for data ops.
    sync: str = ""
    #: the op takes a ``phase`` argument that splits its work on an Acc tile (matmul into / store from Acc).
    phased: bool = False
    #: the op reads or writes ONE element of its tile/tensor (getval, setval and their SIMT forms); the name
    #: of that operand.
    element_of: str = ""
    #: arguments without a data-flow role that the op nevertheless writes (sync_all's counter workspaces).
    writes_args: Tuple[str, ...] = ()
    #: cost class for cost models: "" (the work of the op's pipe: bytes moved, MACs), "transcendental",
    #: "divide", "reciprocal", "reduce", "permute", "sort", "random", "histogram", "descriptor" (no data
    #: work), "debug_io" (host output), "cache" (cache maintenance).  Each backend maps classes to numbers.
    cost: str = ""
    #: the keyword names users write where they differ from the parameter names the backends read
    #: ({parameter name: public keyword}): the official API's spellings (``out``, ``dst_tile``, ...).
    keywords: Dict[str, str] = field(default_factory=dict)
    signature: inspect.Signature = field(init=False, repr=False)
    #: the signature users call (``pl.<op>``): ``signature`` with the public keyword names.
    public_signature: inspect.Signature = field(init=False, repr=False)

    def __post_init__(self):
        for trait, value, allowed in (("sync", self.sync, SYNC_KINDS), ("cost", self.cost, COST_CLASSES),
                                      ("reduction", self.reduction, REDUCTIONS)):
            if value not in allowed:
                raise ValueError(f"op {self.name}: {trait}={value!r} is not one of {allowed}")
        self.signature = self._signature({})
        self.param_map = {p.name: p for p in self.params}
        self.set_keywords(self.keywords)

    def _signature(self, names: Dict[str, str]) -> inspect.Signature:
        parameters = []
        for p in self.params:
            name = names.get(p.name, p.name)
            if p.var:
                parameters.append(inspect.Parameter(name, inspect.Parameter.VAR_POSITIONAL))
                continue
            kind = inspect.Parameter.KEYWORD_ONLY if p.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            parameters.append(inspect.Parameter(name, kind, default=p.default))
        return inspect.Signature(parameters)

    def set_keywords(self, keywords: Dict[str, str]) -> None:
        """Set the public keyword names ({parameter name: keyword}) of ``pl.<op>``."""
        unknown = set(keywords) - set(self.param_map)
        if unknown:
            raise ValueError(f"op {self.name}: keywords for unknown parameters {sorted(unknown)}")
        self.keywords = dict(keywords)
        self.public_signature = self._signature(self.keywords)
        self._from_public = {public: name for name, public in self.keywords.items()}

    def from_public(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        """Arguments bound to ``public_signature``, keyed by parameter name."""
        return {self._from_public.get(k, k): v for k, v in arguments.items()}

    def bind(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """Bind call arguments to parameter names (defaults applied); raises ``TypeError``."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def pipe_of(self, args: Dict[str, Any]) -> str:
        return self.pipe(args) if callable(self.pipe) else self.pipe

    def tile_operands(self, args: Dict[str, Any], roles=("in", "out", "inout")) -> List[Tuple[str, TileRef]]:
        """(role, tile) pairs of the tile operands in ``args`` with one of ``roles``."""
        found = []
        for p in self.params:
            if p.role not in roles:
                continue
            value = args.get(p.name)
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if isinstance(v, TileRef):
                    found.append((p.role, v))
        return found

    def side(self, args: Dict[str, Any]) -> Optional[str]:
        """Which core executes the op: "vector", "cube", or ``None`` for scalar-only ops.

        All-Vec operands -> vector; all cube-space operands -> cube; a transfer between the two
        sides runs on the side of its source (Acc->Vec on the cube's FIX pipe, Vec->Mat on MTE3)."""
        tiles = self.tile_operands(args)
        if not tiles:
            return None
        sides = {"cube" if t.space in CUBE_SPACES else "vector" for _, t in tiles}
        if len(sides) == 1:
            return sides.pop()
        sources = [t for role, t in tiles if role == "in"]
        return "cube" if sources and sources[0].space in CUBE_SPACES else "vector"


class Wait:
    """Returned by an op's ``run`` when the core must block (cross-core events, barriers).

    Executors poll ``ready()`` (no side effects) and, once it holds, the waiting core calls
    ``done()`` to consume what it waited for."""

    def __init__(self, ready: Callable[[], bool], done: Callable[[], Any] = lambda: None, what: str = "",
                 loc: Optional[SourceLoc] = None):
        self.ready = ready
        self.done = done
        self.what = what
        self.loc = loc  # the waiting statement, for deadlock reports


def wait_location(loc: Optional[SourceLoc]) -> str:
    """How a deadlock report places a blocked core's wait: file:line and the source line, indented."""
    return "" if loc is None else "\n    at " + str(loc).replace("\n", "\n  ")


OPS: Dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in OPS:
        raise RuntimeError(f"op {op.name} registered twice")
    if not op.aliases:
        op.aliases = (op.name,)
    OPS[op.name] = op
    return op


def op(name: str, params: Sequence[Param], pipe, doc: str = "", aliases: Sequence[str] = (), **kw):
    """Decorator form: ``@op("add", [...], "V")`` on a class with ``check`` and ``run`` staticmethods,
    or on a ``run`` function when ``check=`` is passed as a keyword."""

    def wrap(obj):
        if isinstance(obj, type):
            check, run = obj.check, obj.run
            text = doc or (obj.__doc__ or "")
        else:
            check, run = kw.pop("check"), obj
            text = doc or (obj.__doc__ or "")
        register(OpDef(name, tuple(params), pipe, check, run, doc=text.strip(), aliases=tuple(aliases), **kw))
        return obj

    return wrap


# ----------------------------------------------------------------------------------------------
# Static checking helpers
# ----------------------------------------------------------------------------------------------
class CheckCtx:
    """What a ``check`` function may ask: the op being checked, the arch and the section it stands in
    (``"cube"``, ``"vector"``, or ``None`` outside sections)."""

    def __init__(self, opdef: OpDef, arch, section: Optional[str] = None):
        self.op = opdef
        self.arch = arch
        self.section = section

    def fail(self, message: str) -> "None":
        raise KernelTypeError(f"pl.{self.op.aliases[0]}: {message}")

    # -- common rules --------------------------------------------------------------------
    def space(self, name: str, tile: TileRef, *spaces: MemorySpace) -> None:
        if tile.space not in spaces:
            allowed = "/".join(s.name for s in spaces)
            self.fail(f"'{name}' must be a {allowed} tile, got a {tile.space.name} tile ({tile!r})")

    def dtype_in(self, name: str, tile, dtypes: Sequence[DataType]) -> None:
        if tile.dtype not in dtypes:
            allowed = ", ".join(d.name for d in dtypes)
            self.fail(f"'{name}' has dtype {tile.dtype.name}; supported: {allowed}")

    def same_dtype(self, **tiles) -> None:
        items = [(n, t) for n, t in tiles.items() if isinstance(t, TileRef)]
        first_name, first = items[0]
        for n, t in items[1:]:
            if t.dtype != first.dtype:
                self.fail(f"'{n}' has dtype {t.dtype.name} but '{first_name}' has {first.dtype.name}; "
                          f"vector ops do not promote — insert pl.cast")

    def same_shape(self, **tiles) -> None:
        items = [(n, t.static_shape) for n, t in tiles.items() if isinstance(t, TileRef)]
        known = [(n, s) for n, s in items if s is not None]
        if not known:
            return
        first_name, first = known[0]
        for n, s in known[1:]:
            if tuple(s) != tuple(first):
                self.fail(f"'{n}' has shape {list(s)} but '{first_name}' has {list(first)}; "
                          f"vector ops do not broadcast (use pl.expand_* for row/column operands)")

    def shape_is(self, name: str, tile: TileRef, shape: Sequence[int], why: str = "") -> None:
        s = tile.static_shape
        if s is not None and tuple(s) != tuple(shape):
            self.fail(f"'{name}' must have shape {list(shape)}, got {list(s)}" + (f" ({why})" if why else ""))

    def not_in_place(self, out: TileRef, src: TileRef) -> None:
        """Ops that read src while writing out refuse one tile in both roles."""
        if out.decl is src.decl:
            self.fail(f"{self.op.name} cannot work in place")

    def is_tile(self, name: str, value) -> None:
        if not isinstance(value, TileRef):
            self.fail(f"'{name}' must be a tile, got {type(value).__name__}")
