"""Tile IR -> readable C++17 (``kernel.cpp``) against the header-only tile library in ``include/pto``.

One C++ statement per tile op (the op's emitter in the cpu registry, see :mod:`.registry`) except
runs of element-wise ops, which become one fused loop (:mod:`.fusion`); C++ loops and ifs for control
flow, kernel scalars as C++ locals.  Every core runs the same ``core_main``; sections test the core kind;
long runs of statements become non-inlined lambdas inside it (:mod:`.outline`, for g++'s compile time);
a big kernel shares its fused loops and compiles its glue at -Og (:mod:`.bigkernel`, the same).  Scalars that another core must read (the slot index
of a cross-core move destination) live in the core's shared-variable array instead of a local.
"""
from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ...dtypes import DT_UINT8, DataType
from ...errors import KernelMemoryError, SourceLoc
from ...ir import nodes as ir
from ...ir.layout import footprint_bytes
from ...ir.types import CrossCoreSyncMode, Layout, MemorySpace
from . import bigkernel, fusion, outline, registry

SPACES = ["Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling", "ScaleLeft", "ScaleRight", "Reg"]
LAYOUTS = {Layout.ND: "pto::ND", Layout.DN: "pto::DN", Layout.NZ: "pto::NZ", Layout.ZN: "pto::ZN",
           Layout.ZZ: "pto::ZZ", Layout.NN: "pto::NN"}
C_TYPES = {"BOOL": "bool", "INT8": "int8_t", "INT16": "int16_t", "INT32": "int32_t", "INT64": "int64_t",
           "UINT8": "uint8_t", "UINT16": "uint16_t", "UINT32": "uint32_t", "UINT64": "uint64_t",
           "FP16": "pto::half", "BF16": "pto::bf16", "FP32": "float",
           # 8-bit floats: one code per byte, read as their fp32 value (include/pto/lowfloat.h)
           "FP8E4M3FN": "pto::f8e4m3", "FP8E5M2": "pto::f8e5m2", "FP8E8M0": "pto::f8e8m0", "HF8": "pto::hif8"}
KIND_CODES = {"vector": 0, "cube": 1, "mix": 2}



def _only_comments(code: str) -> bool:
    """Whether emitted ``code`` is comments only (``/* ... */`` or ``//`` lines): nothing runs."""
    return all(not line.strip() or line.strip().startswith("//")
               or (line.strip().startswith("/*") and line.strip().endswith("*/")) for line in code.splitlines())


def _as_int64(code: str) -> str:
    """``code`` (an integer scalar expression) as an int64_t: cast unless it already is one (a cast
    expression, an INT64_C literal or a generated int64 variable), so no ``(int64_t)(int64_t)``."""
    if code.startswith(("(int64_t)", "INT64_C(")) or re.fullmatch(r"v_\w+", code):
        return code
    return f"(int64_t){code}"

class UnsupportedDtype(NotImplementedError):
    """A dtype without a C++ storage type here (FP8*, INT4/UINT4, FP4, ...)."""

    def __init__(self, dtype: DataType):
        self.dtype = dtype
        super().__init__(f"dtype {dtype.name} on the cpu backend")


def c_type(dtype: DataType) -> str:
    """The C++ storage type of a tile/tensor dtype; raises :class:`UnsupportedDtype`."""
    try:
        return C_TYPES[dtype.name]
    except KeyError:
        raise UnsupportedDtype(dtype) from None


class CpuNotImplemented(NotImplementedError):
    """A valid kernel the cpu backend cannot emit.  The message names the kernel, the feature, the
    backends that run it and the kernel line, in the form of KernelError messages (docs/contract.md "Errors")."""

    def __init__(self, kernel: str, feature: str, loc: Optional[SourceLoc] = None):
        self.kernel, self.feature, self.loc = kernel, feature, loc
        where = f"\n  at {loc}" if loc is not None else ""
        super().__init__(f"[kernel {kernel}] {feature} is not implemented on the cpu backend "
                         f"(use backend='interp' or 'sim'){where}")


def scalar_kind(dtype: DataType) -> str:
    """'f' (fp32 value), 'b' (bool) or 'i' (int64) for a scalar expression's dtype."""
    if dtype.kind == "float":
        return "f"
    if dtype.kind == "bool":
        return "b"
    return "i"


SCALAR_CTYPES = {"f": "float", "b": "bool", "i": "int64_t"}


#: the scalar helpers that fail (division or modulo by zero): statements calling them get a site
_FALLIBLE = re.compile(r"pto::s(?:div|floordiv|floordiv_f|mod|mod_f)\(C,")


@dataclass
class Site:
    """One op statement: what the runtime reports when it fails."""

    op: str
    loc: Optional[SourceLoc]


@dataclass
class Generated:
    """The output of code generation."""

    source: str
    sites: List[Site]
    #: args buffer layout: tensor param index -> slot offset; scalar param index -> slot offset
    tensor_slots: Dict[int, int]
    scalar_slots: Dict[int, Tuple[int, str]]
    nslots: int
    mode: int
    kind: int
    extra: Dict[str, Any] = field(default_factory=dict)


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _c_string(text: str) -> str:
    """A C++ string literal of ``text``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def float_literal(v: float) -> str:
    if math.isnan(v):
        return "(double)NAN"
    if math.isinf(v):
        return "(double)INFINITY" if v > 0 else "(-(double)INFINITY)"
    return f"{float(v).hex()}"


class KernelCodegen:
    """Emits one kernel.  Op emitters call back into :meth:`tile`, :meth:`expr`, :meth:`scalar` etc."""

    def __init__(self, kernel: ir.KernelIR):
        self.k = kernel
        self.decl_index = {t.uid: i for i, t in enumerate(kernel.tiles)}
        self.sites: List[Site] = []
        self.var_names: Dict[int, str] = {}
        self.var_kinds: Dict[int, str] = {}
        self.shared: Dict[int, int] = {}
        self.lines: List[str] = []
        self.indent = 1
        self.tensor_slots: Dict[int, int] = {}
        self.scalar_slots: Dict[int, Tuple[int, str]] = {}
        self.groups: Dict[int, str] = {}
        self._used_names: set = set()
        self._tmp = 0
        self.fuse = fusion.enabled()
        self.fused_groups = 0
        self.uses_ahead = False  # a fused group reads or notes the next row tile's window (fusion.py)
        self.outline_limit = outline.chunk_lines()
        self.outlined = 0  # lines already inside outlined chunks (:mod:`.outline`)
        self.outlined_chunks = 0
        self.views: Dict[str, ir.TensorView] = {}  # the pl.make_tensor views the body uses, by name

    # ------------------------------------------------------------------ names
    def var(self, v: ir.Var, core: str = "C") -> str:
        if v.uid in self.shared and core != "C":
            return f"{core}.sv[{self.shared[v.uid]}]"
        if v.uid not in self.var_names:
            if core != "C":
                raise NotImplementedError(f"reading variable '{v.name}' of another core")
            base = "v_" + _ident(v.name)
            name, n = base, 1
            while name in self._used_names:
                n += 1
                name = f"{base}_{n}"
            self._used_names.add(name)
            self.var_names[v.uid] = name
            self.var_kinds[v.uid] = scalar_kind(v.dtype) if v.uid not in self.shared else "i"
        return self.var_names[v.uid]

    def tmp(self, prefix: str = "t") -> str:
        self._tmp += 1
        return f"{prefix}{self._tmp}_"

    def tensor(self, p: ir.TensorParam) -> str:
        """The C++ expression of a GM tensor: a parameter's ``g_<name>``, or a view filled and checked now."""
        if isinstance(p, ir.TensorView):
            store = self.views.setdefault(p.name, p)
            vals = [self.expr(v)[0] for v in (*p.dims, *p.strides)]
            n = len(p.dims)
            return (f"vs_{_ident(store.name)}.at(C, {self.tensor(p.base)}, {self.expr(p.byte_offset)[0]}, "
                    f"{{{', '.join(vals[:n])}}}, {{{', '.join(vals[n:])}}})")
        return f"g_{_ident(p.name)}"

    # ------------------------------------------------------------------ expressions
    def expr(self, e, core: str = "C") -> Tuple[str, str]:
        """(C++ code, kind) of a scalar expression evaluated on core ``core``."""
        if not isinstance(e, ir.Expr):
            return self.literal(e)
        t = type(e)
        if t is ir.Const:
            return self.literal(e.value)
        if t is ir.Var:
            return self.var(e, core), ("i" if e.uid in self.shared else scalar_kind(e.dtype))
        if t is ir.CoreQuery:
            return f"{core}.{e.what}", "i"
        if t is ir.UnOp:
            code, kind = self.expr(e.operand, core)
            if e.op == "-":
                return f"(-{code})", kind
            if e.op == "not":
                return f"(!{code})", "b"
            if e.op == "~":
                return f"(~(int64_t){code})", "i"
            if e.op == "float":
                return f"((float){code})", "f"
            if e.op == "int":
                return f"((int64_t){code})", "i"
            raise NotImplementedError(f"scalar operator {e.op}")
        if t is ir.Select:
            c, _ = self.expr(e.cond, core)
            a, ka = self.expr(e.if_true, core)
            b, kb = self.expr(e.if_false, core)
            kind = "f" if "f" in (ka, kb) else ("b" if ka == kb == "b" else "i")
            return f"({c} ? ({SCALAR_CTYPES[kind]}){a} : ({SCALAR_CTYPES[kind]}){b})", kind
        if t is ir.BinOp:
            return self._binop(e, core)
        raise NotImplementedError(f"scalar expression {e!r}")

    def literal(self, v) -> Tuple[str, str]:
        if isinstance(v, bool):
            return ("true" if v else "false"), "b"
        if isinstance(v, int):  # int(v): a subclass (pypto.Element) may print otherwise
            v = int(v)
            return (f"INT64_C({v})" if -2**63 < v < 2**63 else f"(int64_t){v}ULL"), "i"
        if isinstance(v, float):
            return float_literal(float(v)), "f"
        if hasattr(v, "value") and isinstance(getattr(v, "value"), int):  # IntEnum members
            return f"INT64_C({int(v)})", "i"
        raise NotImplementedError(f"compile-time value {v!r} in a scalar position")

    def _binop(self, e: ir.BinOp, core: str) -> Tuple[str, str]:
        a, ka = self.expr(e.lhs, core)
        b, kb = self.expr(e.rhs, core)
        op = e.op
        flt = "f" in (ka, kb)
        if op in ("and", "or"):
            return f"((bool){a} {'&&' if op == 'and' else '||'} (bool){b})", "b"
        if op in ir.COMPARE_OPS:
            if flt:
                return f"((double){a} {op} (double){b})", "b"
            return f"({a} {op} {b})", "b"
        out_float = e.dtype.kind == "float"
        if op in ("+", "-", "*"):
            if out_float or flt:
                return f"pto::f32((double){a} {op} (double){b})", "f"
            return f"(int64_t)({a} {op} {b})", "i"
        if op == "/":
            return f"pto::sdiv(C, (double){a}, (double){b})", "f"
        if op == "//":
            if out_float or flt:
                return f"pto::sfloordiv_f(C, (double){a}, (double){b})", "f"
            return f"pto::sfloordiv(C, {a}, {b})", "i"
        if op == "%":
            if out_float or flt:
                return f"pto::smod_f(C, (double){a}, (double){b})", "f"
            return f"pto::smod(C, {a}, {b})", "i"
        if op in ("<<", ">>", "&", "|", "^"):
            return f"((int64_t){a} {op} (int64_t){b})", "i"
        if op in ("min", "max"):
            fn = "pto::smin" if op == "min" else "pto::smax"
            if out_float or flt:
                return f"pto::f32({fn}((double){a}, (double){b}))", "f"
            return f"(int64_t){fn}({a}, {b})", "i"
        raise NotImplementedError(f"scalar operator {op}")

    def scalar(self, value, core: str = "C") -> str:
        """A scalar operand for a tile op (typed so pto::scal<T> converts it like numpy's astype)."""
        code, kind = self.expr(value, core)
        if kind == "i":
            return _as_int64(code)
        return code

    # ------------------------------------------------------------------ tiles
    def tile(self, ref: ir.TileRef, core: str = "C") -> str:
        """The tile ``ref`` denotes on ``core``; its slot index and subview bounds are scalars of the executing
        core ``C`` even when the tile lives on another core (Vec->Mat insert, Acc->Vec move)."""
        ct = c_type(ref.dtype)
        t = type(ref)
        if t is ir.DeclRef:
            return f"T_<{ct}>({core}, {self.decl_index[ref.tile.uid]})"
        if t is ir.SlotRef:
            return f"T_<{ct}>({core}, {self.slot_index(ref)})"
        if t is ir.SubRef:
            base = self.tile(ref.base, core)
            bounds = ", ".join(self.scalar(x) for x in (ref.r0, ref.r1, ref.c0, ref.c1)
                               + (ref.valid or ()))
            return f"pto::sub(C, {base}, {bounds})"
        raise NotImplementedError(f"tile reference {ref!r}")

    def slot_index(self, ref: ir.SlotRef, core: str = "C") -> str:
        g = ref.group
        idx = self.scalar(ref.index, core)
        first = self.decl_index[g.slots[0].uid]
        if all(self.decl_index[s.uid] == first + i for i, s in enumerate(g.slots)):
            return f"{first} + pto::slot({idx}, {g.depth})"
        return f"{self.group_table(g)}[pto::slot({idx}, {g.depth})]"

    def group_table(self, g: ir.TileGroupDecl) -> str:
        name = self.groups.get(id(g))
        if name is None:
            name = f"kGroup_{_ident(g.name)}_{len(self.groups)}"
            self.groups[id(g)] = name
        return name

    def decl_indices(self, ref) -> Optional[List[int]]:
        """Static declaration indices a whole-tile reference / group may denote."""
        if isinstance(ref, ir.TileGroupDecl):
            return [self.decl_index[s.uid] for s in ref.slots]
        return None

    # ------------------------------------------------------------------ statements
    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    def site(self, stmt: ir.OpStmt) -> int:
        self.sites.append(Site(stmt.op.aliases[0], stmt.loc))
        return len(self.sites) - 1

    def stmts(self, body: List[ir.Stmt]) -> None:
        """Emit a statement list; runs of element-wise ops become fused groups (:mod:`.fusion`), long runs
        of statements their own functions (:mod:`.outline`)."""
        i = 0
        chunks = outline.Chunker(self, self.outline_limit)
        while i < len(body):
            group = fusion.find_group(body, i) if self.fuse else None
            if group is None:
                self.stmt(body[i])
                i += 1
            else:
                with self.context(group.stmts[0]):
                    fusion.emit_group(self, group)
                i += len(group.stmts)
            chunks.after_statement()

    @contextlib.contextmanager
    def context(self, s: ir.Stmt):
        """Turn a ``NotImplementedError`` raised while emitting ``s`` into a :class:`CpuNotImplemented`
        naming the kernel, the op and the kernel line: emitters, :func:`c_type` and the expression code
        only name the feature.  (Errors of nested statements already carry their own line.)"""
        try:
            yield
        except CpuNotImplemented:
            raise
        except NotImplementedError as e:
            feature = str(e)
            if isinstance(s, ir.OpStmt):
                op = f"pl.{s.op.aliases[0]}"
                if isinstance(e, UnsupportedDtype):
                    feature = f"{op} of {e.dtype.name} data"
                elif not feature.startswith(op):
                    feature = f"{op}: {feature}"
            raise CpuNotImplemented(self.k.name, feature, s.loc) from None

    def stmt(self, s: ir.Stmt) -> None:
        with self.context(s):
            self._stmt(s)

    def _stmt(self, s: ir.Stmt) -> None:
        t = type(s)
        if t is ir.OpStmt:
            emitter = registry.lookup(s.op).emit
            site = self.site(s)
            src = s.loc.source_line.strip() if s.loc and s.loc.source_line else s.op.name
            line = f"  // line {s.loc.lineno}: {src}" if s.loc else ""
            code = emitter(self, s)
            if not _only_comments(code):  # an op that emits nothing (a sync on the CPU) cannot fail
                self.emit(f"C.site = {site};{line}")
            for part in code.splitlines():
                self.emit(part)
        elif t is ir.Assign:
            code, value_kind = self.expr(s.value)
            kind = "i" if s.var.uid in self.shared else scalar_kind(s.var.dtype)
            self._scalar_site(s, "assignment", code)
            value = _as_int64(code) if kind == value_kind == "i" else f"({SCALAR_CTYPES[kind]}){code}"
            self.emit(f"{self.var(s.var)} = {value};")
        elif t is ir.For:
            lo, hi, st = (self.scalar(x) for x in (s.start, s.stop, s.step))
            i = self.tmp("i")
            self.emit("{")
            self.indent += 1
            header = f"const int64_t {i}lo = {lo}, {i}hi = {hi}, {i}st = {st};"
            site = self._scalar_site(s, "range", header, needed=True)
            self.emit(header)
            self.emit(f'if ({i}st == 0) {{ C.site = {site}; pto::fail(C, "pl.range step is 0"); }}')
            if isinstance(s.step, ir.Const):
                cond = f"{i} < {i}hi" if s.step.value > 0 else f"{i} > {i}hi"
            else:
                cond = f"({i}st > 0 ? {i} < {i}hi : {i} > {i}hi)"
            self.emit(f"for (int64_t {i} = {i}lo; {cond}; {i} += {i}st) {{")
            self.indent += 1
            self.emit(f"{self.var(s.var)} = {i};")
            self.stmts(s.body)
            self.indent -= 1
            self.emit("}")
            self.indent -= 1
            self.emit("}")
        elif t is ir.If:
            c, _ = self.expr(s.cond)
            self._scalar_site(s, "if", c)
            self.emit(f"if ({c}) {{")
            self.indent += 1
            self.stmts(s.then_body)
            self.indent -= 1
            if s.else_body:
                self.emit("} else {")
                self.indent += 1
                self.stmts(s.else_body)
                self.indent -= 1
            self.emit("}")
        elif t is ir.While:
            self.emit("while (true) {")
            self.indent += 1
            self.stmts(s.pre)
            c, _ = self.expr(s.cond)
            self._scalar_site(s, "while", c)
            self.emit(f"if (!({c})) break;")
            self.stmts(s.body)
            self.indent -= 1
            self.emit("}")
        elif t is ir.Break:
            self.emit("break;")
        elif t is ir.Continue:
            self.emit("continue;")
        elif t is ir.Section:
            self.emit(f"if (C.kind == {1 if s.kind == 'cube' else 0}) {{  // section_{s.kind}")
            self.indent += 1
            self.stmts(s.body)
            self.indent -= 1
            self.emit("}")
        else:
            raise NotImplementedError(f"statement {type(s).__name__}")

    def _scalar_site(self, s: ir.Stmt, what: str, code: str, needed: bool = False) -> Optional[int]:
        """A site for a scalar statement (assignment, loop header, condition) whose ``code`` can
        fail (a scalar division or modulo checks for zero), set in ``C.site`` before it so that the
        failure names its line; ``needed``: registered even when ``code`` cannot fail (the caller
        reports through it), else None."""
        fallible = _FALLIBLE.search(code) is not None
        if not (fallible or needed):
            return None
        self.sites.append(Site(what, s.loc))
        site = len(self.sites) - 1
        if fallible:
            self.emit(f"C.site = {site};  // " + (f"line {s.loc.lineno}: {what}" if s.loc else what))
        return site

    # ------------------------------------------------------------------ kernel
    def analyse(self) -> int:
        """Mark cross-core shared variables; return the execution mode (0 in order, 1 block fibers, 2 grid)."""
        mode = 0
        for s in ir.walk(self.k.body):
            if not isinstance(s, ir.OpStmt):
                continue
            if s.op.sync == "cross_core":
                if CrossCoreSyncMode(s.args["sync_mode"]) == CrossCoreSyncMode.INTER_BLOCK:
                    mode = 2
                elif s.op.name == "wait_cross_core":
                    mode = max(mode, 1)
            elif s.op.sync == "grid":
                mode = 2
            entry = registry.table().get(s.op.name)  # (an op without one fails at its line when emitted)
            peer_dst = entry.peer_dst if entry is not None else None
            if peer_dst is not None:
                ref = peer_dst(s)
                if ref is not None:
                    for v in _vars_in_ref(ref):
                        self.shared.setdefault(v.uid, len(self.shared))
        return mode

    def uses_simd_math(self) -> bool:
        """Whether the kernel has ops or fused groups with AVX2 code paths (they need <immintrin.h>)."""
        return self.fused_groups > 0 or any(isinstance(s, ir.OpStmt) and registry.lookup(s.op).simd_math
                                            for s in ir.walk(self.k.body))

    def extents(self) -> Dict[str, int]:
        ext = {sp: 0 for sp in SPACES}
        cap = self.k.arch.capacity
        for t in self.k.tiles:
            end = t.addr + footprint_bytes(t.shape[0], t.shape[1], t.layout, t.dtype, t.space)
            sp = t.space.name
            if sp not in cap:
                raise KernelMemoryError(f"memory space {sp} does not exist on arch {self.k.arch.name}",
                                        loc=t.loc, kernel=self.k.name)
            if end > cap[sp]:
                raise KernelMemoryError(f"tile {t.name} spans bytes [{t.addr}, {end}) of {sp}, which holds "
                                        f"{cap[sp]} bytes", loc=t.loc, kernel=self.k.name)
            ext[sp] = max(ext[sp], end)
        return ext

    def generate(self) -> Generated:
        k = self.k
        mode = self.analyse()
        # argument slots
        slot = 0
        for p in k.params:
            if isinstance(p, ir.TensorParam):
                self.tensor_slots[p.index] = slot
                slot += 1 + 2 * p.ndim
            else:
                self.scalar_slots[p.index] = (slot, scalar_kind(p.dtype))
                slot += 1
        # body first (it names variables and sites), then the prologue that declares them
        self.indent = 1
        self.stmts(k.body)
        body = self.lines
        self.lines = []
        big = bigkernel.is_big(body)
        loops: List[str] = []
        if big:  # g++'s compile time (:mod:`.bigkernel`)
            loops, body = bigkernel.share_loops(body)
            body = bigkernel.glue_at_og(body)
        prologue = self._prologue()
        ext = self.extents()
        out = [f"// Generated by pypto_pro's cpu backend from kernel '{k.name}'.",
               f"// arch={k.arch.name} kind={k.kind}; one statement per tile op, see include/pto/*.h."]
        if self.uses_simd_math():
            out.append("#define PTO_SIMD_MATH 1  // AVX2 exp / row max-min / fused loops (same bits as the scalar code)")
        out += ['#include "pto/pto.h"', ""]
        out.append("// tiles: space, layout, byte address, shape, element bytes, acc fractal, name")
        out.append("static const pto::TileDecl kTiles[] = {")
        for i, t in enumerate(k.tiles):
            out.append(f"  /* {i} */ {{pto::{t.space.name}, {LAYOUTS[t.layout]}, {t.addr:#x}, {t.shape[0]}, "
                       f"{t.shape[1]}, {t.dtype.nbytes}, {int(t.space == MemorySpace.Acc)}, \"{t.name}\"}},")
        if not k.tiles:
            out.append("  {pto::Vec, pto::ND, 0, 1, 1, 1, 0, \"\"},")
        out.append("};")
        init_valid = []
        for t in k.tiles:
            vs = t.ttype.valid_shape or [-1, -1]
            init_valid += [t.shape[0] if vs[0] == -1 else vs[0], t.shape[1] if vs[1] == -1 else vs[1]]
        out.append(f"static const int32_t kInitValid[] = {{{', '.join(map(str, init_valid or [0, 0]))}}};")
        for g in k.groups:
            if id(g) in self.groups:
                idx = ", ".join(str(self.decl_index[s.uid]) for s in g.slots)
                out.append(f"static const int32_t {self.groups[id(g)]}[] = {{{idx}}};")
        out.append("")
        out.append("template <class T> static inline pto::Tile<T> T_(pto::Core& C, int64_t i) {")
        out.append("  return pto::tile<T>(C, kTiles[i], (int)i);")
        out.append("}")
        out.append("")
        out += loops
        out.append(bigkernel.core_main_line(big))
        out += prologue
        if self.uses_ahead:
            out.append("  pto::fz::Ahead ahead_;  // the next row tile's GM window, noted by fused loads (fuse.h)")
        out += body
        out.append("}")
        out.append("")
        extent = ", ".join(str(ext[s]) for s in SPACES)
        capacity = ", ".join(str(k.arch.capacity.get(s, 0)) for s in SPACES)
        kind = KIND_CODES[k.kind]
        out.append("static const pto::KernelDesc kDesc = {")
        out.append(f"  \"{k.name}\", /*kind*/ {kind}, /*vector_per_block*/ {k.arch.vector_per_block}, "
                   f"/*mode*/ {mode}, /*ntiles*/ {len(k.tiles)}, /*nshared*/ {len(self.shared)},")
        out.append(f"  /*extent*/ {{{extent}}},")
        out.append(f"  /*capacity*/ {{{capacity}}},")
        out.append(f"  kInitValid, {len(self.sites)}, core_main}};")
        out.append("")
        out.append('extern "C" __attribute__((visibility("default"))) int call_kernel(const int64_t* args, '
                   'int64_t block_dim, PtoError* err) {')
        out.append("  return pto_rt_launch(&kDesc, args, block_dim, err);")
        out.append("}")
        return Generated("\n".join(out) + "\n", self.sites, self.tensor_slots, self.scalar_slots, slot, mode, kind)

    def _prologue(self) -> List[str]:
        k = self.k
        out = []
        for p in k.params:
            if isinstance(p, ir.TensorParam):
                storage = p.dtype
                if p.dtype.name not in C_TYPES:  # (after the body: an op using it names itself and its line)
                    if p.dtype.bits() != 8:
                        raise CpuNotImplemented(k.name, f"tensor parameter '{p.name}' of dtype {p.dtype.name}")
                    storage = DT_UINT8  # an 8-bit format no op reads directly (only its byte view, an alias)
                out.append(f"  const auto {self.tensor(p)} = pto::gm<{c_type(storage)}>(C, "
                           f"{self.tensor_slots[p.index]}, {p.ndim}, \"{p.name}\");")
        for v in self.views.values():
            if v.dtype.name not in C_TYPES:
                raise CpuNotImplemented(k.name, f"{v.describe()} of dtype {v.dtype.name}")
            store = f"vs_{_ident(v.name)}"
            out.append(f"  pto::GmView<{c_type(v.dtype)}, {v.ndim}> {store}{{}};")
            out.append(f"  {store}.name = \"{v.name}\", {store}.what = {_c_string(v.describe())}, "
                       f"{store}.clamp_rows = {'true' if v.clamp_rows else 'false'};")
        declared = set()
        for p in k.params:
            if isinstance(p, ir.ScalarParam):
                slot, kind = self.scalar_slots[p.index]
                value = {"f": f"pto::arg_f(C.args[{slot}])", "b": f"(bool)C.args[{slot}]",
                         "i": f"C.args[{slot}]"}[kind]
                out.append(self._decl(p.var, value))
                declared.add(p.var.uid)
            else:
                for i, d in enumerate(p.dims):
                    if isinstance(d, ir.Var) and d.uid not in declared:
                        out.append(self._decl(d, f"{self.tensor(p)}.shape[{i}]"))
                        declared.add(d.uid)
                address = getattr(p, "address", None)  # a pl.Ptr whose value the kernel uses (printf %p)
                if address is not None and address.uid in self.var_names and address.uid not in declared:
                    out.append(self._decl(address, f"C.args[{self.tensor_slots[p.index]}]"))
                    declared.add(address.uid)
        for g in k.groups:
            if g.cursor.uid not in declared:
                out.append(self._decl(g.cursor, str(g.depth - 1)))
                declared.add(g.cursor.uid)
        for uid, name in self.var_names.items():
            if uid not in declared:
                if uid in self.shared:
                    out.append(f"  int64_t& {name} = C.sv[{self.shared[uid]}];")
                    out.append(f"  {name} = 0;")
                else:
                    out.append(f"  {SCALAR_CTYPES[self.var_kinds[uid]]} {name} = 0;")
        return out

    def _decl(self, v: ir.Var, value: str) -> str:
        name = self.var(v)
        if v.uid in self.shared:
            return f"  int64_t& {name} = C.sv[{self.shared[v.uid]}];  {name} = (int64_t){value};"
        return f"  {SCALAR_CTYPES[self.var_kinds[v.uid]]} {name} = {value};"


def _vars_in_expr(e) -> List[ir.Var]:
    if isinstance(e, ir.Var):
        return [e]
    out = []
    for attr in ("lhs", "rhs", "operand", "cond", "if_true", "if_false"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr):
            out += _vars_in_expr(sub)
    return out


def _vars_in_ref(ref) -> List[ir.Var]:
    if isinstance(ref, ir.SlotRef):
        return _vars_in_expr(ref.index)
    if isinstance(ref, ir.SubRef):
        out = _vars_in_ref(ref.base)
        for x in (ref.r0, ref.r1, ref.c0, ref.c1) + (ref.valid or ()):
            out += _vars_in_expr(x)
        return out
    return []


def generate(kernel: ir.KernelIR) -> Generated:
    """Generate kernel.cpp for a parsed kernel; raises NotImplementedError naming an unsupported op."""
    return KernelCodegen(kernel).generate()
