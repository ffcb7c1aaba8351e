"""C++ emission of the core tile ops, registered in the cpu backend's registry (:mod:`.registry`).

An emitter takes the :class:`~.codegen.KernelCodegen` and the op statement and returns C++ text
(usually one call into the tile library).  Ops that write into another core's memory (Vec->Mat,
Acc->Vec) also register a ``peer_dst`` so the code generator can share the scalars that select the
destination slot.  The other ``emit_*`` modules cover the remaining op families.
"""
from __future__ import annotations

from typing import Callable, Dict, Union

import numpy as np

from ...ir import nodes as ir
from ...ops.movement import insert_transposes, is_insert, nz_frame_valid
from ...ir.types import AccToVecMode, AtomicType, MemorySpace, ReluPreMode, RoundMode
from ...ops import fixpipe
from .codegen import KernelCodegen, c_type
from .fusion import gm_axes
from .registry import not_implemented, register as _register

M = MemorySpace
Emitter = Callable[[KernelCodegen, ir.OpStmt], str]
#: an argument of a one-call emitter (:func:`_call`): an op argument's name, or a function of the arguments
Operand = Union[str, Callable[[KernelCodegen, Dict], str]]


def _rhs(g: KernelCodegen, value) -> str:
    return g.tile(value) if isinstance(value, ir.TileRef) else g.scalar(value)


def _operand(g: KernelCodegen, args: Dict, spec: Operand) -> str:
    if callable(spec):
        return spec(g, args)
    if spec.startswith("$"):
        return g.scalar(args[spec[1:]])
    if spec.endswith("?"):
        return _rhs(g, args[spec[:-1]])
    return g.tile(args[spec])


def _call(fn: str, *operands: Operand) -> Emitter:
    """The emitter of the one-call form ``pto::fn(C, operand, ...);``.  An operand names an argument of
    the op, emitted as a tile (``"dst"``), a scalar (``"$alpha"``) or either (``"rhs?"``), or is a
    function ``(codegen, args) -> C++``; operands are emitted left to right."""
    def emit(g, s):
        return f"pto::{fn}(C, {', '.join(_operand(g, s.args, o) for o in operands)});"
    return emit


def _axis(g, a) -> str:
    """A ``dim`` argument as the library's axis: 0 rows, 1 columns."""
    return "0" if a["dim"] == 0 else "1"


# ------------------------------------------------------------------ vector
for _op in ("add", "sub", "mul", "div", "and_", "or_", "shl", "shr"):
    _register(_op, _call(_op, "dst", "lhs", "rhs?"))
_register("xor", _call("xor_", "dst", "lhs", "rhs"))

_REDUCE = {"sum": "RSum", "max": "RMax", "min": "RMin", "argmax": "RArgMax", "argmin": "RArgMin"}


def _reduce_call(g, dst, src, kind: str, dim: int) -> str:
    return (f"pto::reduce<pto::{_REDUCE[kind]}, {c_type(dst.dtype)}, {c_type(src.dtype)}>(C, {g.tile(dst)}, "
            f"{g.tile(src)}, {0 if dim == 0 else 1});")


def _minmax(fn: str, kind: str) -> Emitter:
    elementwise = _call(fn, "dst", "lhs", "rhs?")

    def emit(g, s):
        a = s.args
        if a["dim"] is None:
            return elementwise(g, s)
        return _reduce_call(g, a["dst"], a["lhs"], kind, a["dim"])
    return emit


# exp, maximum/minimum and row max/min have AVX2 paths in the tile library (simd_math)
_register("maximum", _minmax("maximum", "max"), simd_math=True)
_register("minimum", _minmax("minimum", "min"), simd_math=True)
for _kind in ("sum", "argmax", "argmin"):
    _register(_kind, lambda g, s, k=_kind: _reduce_call(g, s.args["dst"], s.args["src"], k, s.args["dim"]))
for _prefix, _dim in (("row", 0), ("col", 1)):
    for _kind in ("sum", "max", "min", "argmax", "argmin"):
        _register(f"{_prefix}_{_kind}",
                  lambda g, s, k=_kind, d=_dim: _reduce_call(g, s.args["dst"], s.args["src"], k, d),
                  simd_math=f"{_prefix}_{_kind}" in ("row_max", "row_min"))

for _op in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "not_"):
    _register(_op, _call(_op, "dst", "src"), simd_math=_op == "exp")

_register("expands", _call("expands", "dst", "$scalar"))
_register("cast", _call("cast", "dst", "src", lambda g, a: str(int(RoundMode(a["mode"])))))

_CMP = {"eq": "CEq", "ne": "CNe", "lt": "CLt", "le": "CLe", "gt": "CGt", "ge": "CGe"}
for _op, _fn in _CMP.items():
    _register(_op, _call(f"compare<pto::{_fn}>", "mask", "lhs", "rhs?"))
_register("select", _call("select", "dst", "mask", "lhs", "rhs?"))

_EXPAND = {"expand_max": "OpMax", "expand_min": "OpMin", "expand_mul": "OpMul", "expand_sub": "OpSub",
           "expand_div": "OpDiv"}
for _op, _fn in _EXPAND.items():
    _register(_op, _call(f"expand<pto::{_fn}>", "dst", "src", "v", _axis))

_register("addc", _call("addc", "dst", "a", "b", "c"))
for _op in ("mul_add_dst", "fused_mul_add", "add_relu", "sub_relu"):
    _register(_op, _call(_op, "dst", "lhs", "rhs"))
_register("fused_mul_add_relu", _call("fused_mul_add_relu", "dst", "a", "b"))
_register("axpy", _call("axpy", "dst", "src", "$alpha"))


# ------------------------------------------------------------------ GM movement
def _offsets(g, offsets) -> str:
    return "{" + ", ".join(g.scalar(o) for o in offsets) + "}"


def _gm_as(g, t: ir.TensorParam, tile_dtype) -> str:
    """The GM tensor ``t`` as seen by a load/store of a ``tile_dtype`` tile: itself, or its bits reinterpreted
    as ``tile_dtype`` (same width, ops/movement.reinterprets)."""
    if t.dtype == tile_dtype:
        return g.tensor(t)
    return f"pto::gm_as<{c_type(tile_dtype)}>({g.tensor(t)})"


def _fixpipe(g, a) -> tuple:
    """(prelude lines, C++ pto::Fix expression) of a store/move from Acc (ops/fixpipe.py)."""
    scale, relu = a.get("scale"), a.get("relu_pre_mode")
    relu_v = int(ReluPreMode(relu)) if relu is not None else 0
    form = fixpipe.kind(scale)
    if form == "none":
        return [], f"pto::fix_plain({relu_v})"
    if form == "channel":
        return [f"  const auto w_ = {g.tile(scale)};"], "pto::fix_channel(w_)"
    if form == "const":
        value = f"pto::fix_bits({int(fixpipe.hardware_scale(scale).view(np.uint32))}u)"
    elif form == "value":
        value = f"pto::fix_value((float)({g.scalar(scale)}))"
    else:
        value = f"pto::fix_bits((uint64_t)({g.scalar(scale)}))"
    return [], f"pto::fix_scalar({value}, {relu_v})"


def _gm_move(store: bool, tile_units: bool) -> Emitter:
    """``pl.load``/``pl.load_tile`` (GM -> tile) or ``pl.store``/``pl.store_tile`` (tile -> GM, through
    the fixpipe from Acc) at element offsets or, with ``tile_units``, offsets counted in tiles."""
    what = ("pl.store" if store else "pl.load") + ("_tile" if tile_units else "")
    var, tile_arg, gm_arg = ("s_", "src", "dst") if store else ("d_", "dst", "src")

    def emit(g, s):
        a = s.args
        tile, t = a[tile_arg], a[gm_arg]
        a0, a1 = gm_axes(a["order"], t.ndim)
        prelude, fix = _fixpipe(g, a) if store else ([], "")
        lines = ["{", f"  const auto {var} = {g.tile(tile)};",
                 f"  int64_t o_[] = {_offsets(g, a['tile_offsets' if tile_units else 'offsets'])};", *prelude]
        if tile_units:
            lines.append(f"  pto::tile_units(o_, {a0}, {a1}, {var}.rows, {var}.cols);")
        if store:
            atomic = "true" if AtomicType(a["atomic"]) == AtomicType.AtomicAdd else "false"
            gm = g.tensor(t) if tile.space == MemorySpace.Acc else _gm_as(g, t, tile.dtype)
            lines.append(f"  pto::store(C, {gm}, s_, o_, {a0}, {a1}, \"{what}\", {atomic}, {fix});")
        else:
            lines.append(f"  pto::load(C, d_, {_gm_as(g, t, tile.dtype)}, o_, {a0}, {a1}, \"{what}\");")
        lines.append("}")
        return "\n".join(lines)
    return emit


_register("load", _gm_move(False, False))
_register("load_tile", _gm_move(False, True))
_register("store", _gm_move(True, False))
_register("store_tile", _gm_move(True, True))


# ------------------------------------------------------------------ tile -> tile
def _peer_cube(a) -> bool:
    return a["src"].space == M.Vec and a["dst"].space == M.Mat


def _on_cube(what: str, call: str) -> str:
    """``call`` with ``P_`` bound to the block's cube core (a Vec -> Mat copy writes into its memory)."""
    return "\n".join(["{", "  pto::Core* P_ = C.blk->cube();",
                      f'  if (!P_) pto::fail(C, "{what} needs the block\'s cube core; this kernel has none");',
                      f"  {call}", "}"])


def _insert_code(g, dst, src, offset) -> str:
    transposed = "true" if insert_transposes(dst, src) else "false"
    r0, c0 = (g.scalar(x) for x in offset)
    if _peer_cube({"src": src, "dst": dst}):
        return _on_cube("insert into Mat",
                        f"pto::insert_into(C, {g.tile(dst, '(*P_)')}, {g.tile(src)}, {r0}, {c0}, {transposed});")
    return f"pto::insert_into(C, {g.tile(dst)}, {g.tile(src)}, {r0}, {c0}, {transposed});"


def _move(g, s):
    a = s.args
    dst, src = a["dst"], a["src"]
    if is_insert(a):
        return _insert_code(g, dst, src, a["offset"])
    if src.space == M.Acc:
        mode = int(AccToVecMode(a["acc_to_vec_mode"] or AccToVecMode.SingleModeVec0))
        prelude, fix = _fixpipe(g, a)
        window = ""
        if a["offset"] is not None:  # [offset, offset + the valid shape the AIC holds for dst)
            prelude = [*prelude, f"  const auto w_ = {g.tile(dst)};"]
            window = (", true, " + ", ".join(g.scalar(x) for x in a["offset"]) +
                      f", w_.vr, w_.vc, \"{dst}\"")
        return "\n".join(["{", *prelude, f"  pto::move_acc_to_vec<{c_type(dst.dtype)}>(C, [&](pto::Core& P_) {{ return "
                                          f"{g.tile(dst, 'P_')}; }}, {g.tile(src)}, {mode}, {fix}{window});", "}"])
    has_off = "true" if a["offset"] is not None else "false"
    nz_frame = "true" if nz_frame_valid(src, dst) else "false"
    r0, c0 = (g.scalar(x) for x in a["offset"]) if a["offset"] is not None else ("0", "0")
    if _peer_cube(a):
        return _on_cube("Vec -> Mat",
                        f"pto::move_to(C, {g.tile(dst, '(*P_)')}, {g.tile(src)}, {has_off}, {r0}, {c0}, {nz_frame});")
    return f"pto::move_to(C, {g.tile(dst)}, {g.tile(src)}, {has_off}, {r0}, {c0}, {nz_frame});"


def _move_peer(s):
    a = s.args
    if a["src"].space == M.Acc or _peer_cube(a):
        return a["dst"]
    return None


_register("move", _move, peer_dst=_move_peer)
_register("insert", lambda g, s: _insert_code(g, s.args["dst"], s.args["src"], s.args["offset"]),
          peer_dst=lambda s: s.args["dst"] if _peer_cube(s.args) else None)


# ------------------------------------------------------------------ cube
def _matmul(g, s):
    a = s.args
    dst, lhs = a["dst"], a["lhs"]
    targs = f"<{c_type(dst.dtype)}, {c_type(lhs.dtype)}, {c_type(a['rhs'].dtype)}>"
    acc = a.get("acc")
    bias = a.get("bias")
    lines = ["{"]
    acc_p = bias_p = "nullptr"
    if acc is not None:
        lines.append(f"  const auto acc_ = {g.tile(acc)};")
        acc_p = "&acc_"
    if bias is not None:
        lines.append(f"  const auto bias_ = {g.tile(bias)};")
        bias_p = "&bias_"
    lines.append(f"  pto::matmul{targs}(C, {g.tile(dst)}, {g.tile(lhs)}, {g.tile(a['rhs'])}, {acc_p}, {bias_p});")
    lines.append("}")
    return "\n".join(lines)


_register("matmul", _matmul)
_register("matmul_acc", _matmul)
for _op in ("matmul_mx", "matmul_mx_acc"):
    not_implemented(_op, "the MX matmul (E8M0 group scales; FP4 operand tiles have no C++ type) is not emitted; "
                         "such kernels run on the interpreter")


# ------------------------------------------------------------------ scalar pipe
def _index(g, value):
    if isinstance(value, (list, tuple)):
        return [g.scalar(v) for v in value]
    return [g.scalar(value)]


def _tile_lin(g, tile_code: str, idx) -> str:
    if len(idx) == 1:
        return idx[0]
    if len(idx) != 2:
        raise NotImplementedError("tile element access with more than 2 indices")
    return f"pto::tile_lin2(C, t_, {idx[0]}, {idx[1]})"


def _getval(g, s):
    a = s.args
    src = a["src"]
    idx = _index(g, a["index"])
    target = g.var(s.result) if s.result is not None else None
    kind = g.var_kinds.get(s.result.uid, "i") if s.result is not None else "i"
    ctype = {"f": "float", "b": "bool", "i": "int64_t"}[kind]
    assign = f"{target} = ({ctype})" if target else "(void)"
    if isinstance(src, ir.TensorParam):
        return f"{{ int64_t i_[] = {{{', '.join(idx)}}}; {assign}pto::getval(C, {g.tensor(src)}, i_, {len(idx)}); }}"
    return (f"{{ const auto t_ = {g.tile(src)}; {assign}pto::getval(C, t_, {_tile_lin(g, 't_', idx)}); }}")


def _setval(g, s):
    a = s.args
    dst = a["dst"]
    idx = _index(g, a["index"])
    value = g.scalar(a["value"])
    if isinstance(dst, ir.TensorParam):
        return f"{{ int64_t i_[] = {{{', '.join(idx)}}}; pto::setval(C, {g.tensor(dst)}, i_, {len(idx)}, {value}); }}"
    return f"{{ const auto t_ = {g.tile(dst)}; pto::setval(C, t_, {_tile_lin(g, 't_', idx)}, {value}); }}"


def _set_validshape(g, s):
    a = s.args
    t = a["tile"]
    rows, cols = (g.scalar(x) for x in a["shape"])
    lines = ["{", f"  const int64_t r_ = {rows}, c_ = {cols};"]
    if isinstance(t, ir.TileGroupDecl):
        for i in g.decl_indices(t):
            lines.append(f"  pto::set_valid(C, kTiles, {i}, r_, c_);")
    elif isinstance(t, ir.DeclRef):
        lines.append(f"  pto::set_valid(C, kTiles, {g.decl_index[t.tile.uid]}, r_, c_);")
    elif isinstance(t, ir.SlotRef):
        lines.append(f"  pto::set_valid(C, kTiles, {g.slot_index(t)}, r_, c_);")
    else:  # a named subview: check against its shape, then set its window variables
        view, (vr, vc) = g.tile(t), t.valid
        lines += [f"  const auto s_ = {view};",
                  "  if (r_ < 1 || r_ > s_.rows || c_ < 1 || c_ > s_.cols)",
                  '    pto::fail(C, "valid shape [%lld, %lld] is outside the subview\'s shape [%d, %d]", '
                  "(long long)r_, (long long)c_, s_.rows, s_.cols);",
                  f"  {g.var(vr)} = r_;", f"  {g.var(vc)} = c_;"]
    lines.append("}")
    return "\n".join(lines)


_register("getval", _getval)
_register("setval", _setval)
_register("set_validshape", _set_validshape)
# the contents become undefined: nothing to do at run time (fusion.py drops stores of discarded tiles)
_register("discard", lambda g, s: f"/* discard {s.args['tile'].tile.name}: its contents are dead */")
_register("trap", lambda g, s: 'pto::fail(C, "pl.trap() was executed");')


def _bound_check(g: KernelCodegen, index, size: int, message: str) -> str:
    """Fail with ``message`` (``%lld``: the index) unless 0 <= ``index`` < ``size``."""
    return (f'{{ const int64_t i_ = (int64_t)({g.scalar(index)}); if (i_ < 0 || i_ >= {size}) '
            f'pto::fail(C, "{message}", (long long)i_); }}')


_register("check_slot", lambda g, s: _bound_check(
    g, s.args["index"], s.args["group"].depth,
    f"tile group index %lld is outside [0, {s.args['group'].depth}) of group {s.args['group'].name}"))
_register("check_index", lambda g, s: _bound_check(
    g, s.args["index"], s.args["size"], f"index %lld is out of bounds for an array of length {s.args['size']}"))


# ------------------------------------------------------------------ synchronisation
def _nop(g, s):
    return f"/* {s.op.aliases[0]}: ordered by program order on the CPU */"


for _op in ["sync_src", "sync_dst", "mutex_lock", "mutex_unlock", "set_mm_layout_transform", "dcci"] + \
        [f"bar_{p}" for p in ("m", "mte1", "mte2", "mte3", "fix", "all", "v")]:
    _register(_op, _nop)

for _op in ("set_vec_mask", "set_mask_count", "set_mask_norm", "reset_mask"):
    _register(_op, lambda g, s: f"/* pl.{s.op.name}: tile ops set the vector mask themselves (no effect) */")

for _op in ("set_cross_core", "wait_cross_core"):
    _register(_op, _call(_op, lambda g, a: str(int(a["sync_mode"])), "$event_id"))

