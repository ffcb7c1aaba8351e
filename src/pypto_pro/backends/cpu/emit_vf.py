"""C++ emission of the Reg/VF ops (:mod:`pypto_pro.ops.vf`) into ``pto/vf.h`` calls."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ir.optable import OPS
from ...ops.vf import lanes, lanes_to_bits, pattern_lanes
from .codegen import KernelCodegen, c_type

_BINARY = {"add": "OpAdd", "sub": "OpSub", "mul": "OpMul", "div": "OpDiv", "max": "OpMax", "min": "OpMin",
           "and_": "OpAnd", "or_": "OpOr", "xor": "OpXor", "exp_sub": "OpExpSub", "abs_sub": "OpAbsSub",
           "shl": "OpShift<true>", "shr": "OpShift<false>"}
_UNARY = {"abs": "UAbs", "exp": "UExp", "sqrt": "USqrt", "neg": "UNeg", "relu": "URelu", "not_": "UNot", "log": "ULog",
          "rsqrt": "URsqrt", "recip": "URecip", "log2": "ULog2", "log10": "ULog10", "truncate": "UTrunc",
          "copy": "UCopy"}
_CMP = {"eq": "CmpEq", "ne": "CmpNe", "lt": "CmpLt", "le": "CmpLe", "gt": "CmpGt", "ge": "CmpGe"}
_REDUCE = {"sum": "OpAdd", "max": "OpMax", "min": "OpMin"}
_LOAD = {"NORM": 0, "BRC": 1, "US": 2, "DS": 3, "UNPK": 4}
_MASK_FN = {"and": 0, "or": 1, "xor": 2, "not": 3}


def _reg(g: KernelCodegen, ref) -> str:
    return f"{g.tile(ref)}.base"


def _mask(g: KernelCodegen, ref) -> str:
    return "(const uint8_t*)nullptr" if ref is None else f"(const uint8_t*){g.tile(ref)}.base"


def _ub(g: KernelCodegen, ref, offset) -> str:
    return f"pto::vf_ub({g.tile(ref)}, {g.scalar(offset)})"


def _cap(g: KernelCodegen) -> int:
    return g.k.arch.capacity["Vec"]


def _b(v) -> str:
    return "true" if v else "false"


def _register(name: str, fn) -> None:
    OPS[name].extras["cpp"] = fn


def _create_mask(g, s):
    a = s.args
    bits = lanes_to_bits(pattern_lanes(a["pattern"], lanes(a["dtype"])), a["dtype"].nbytes)
    return ("{ static const uint8_t b_[256] = {" + ",".join(str(int(b)) for b in bits) + "}; "
            f"pto::vf_mask_set({_reg(g, a['dst'])}, b_); }}")


def _binary(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    op = _BINARY[a["fn"]]
    if isinstance(a["b"], ir.TileRef):
        return (f"pto::vf_binary<{t}, pto::{op}>(C, {_reg(g, a['dst'])}, {_reg(g, a['a'])}, {_reg(g, a['b'])}, "
                f"{_mask(g, a['mask'])}, {_b(a['merge'])});")
    return (f"pto::vf_binary_s<{t}, pto::{op}>(C, {_reg(g, a['dst'])}, {_reg(g, a['a'])}, {g.scalar(a['b'])}, "
            f"{_mask(g, a['mask'])}, {_b(a['merge'])});")


def _dup(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    if isinstance(a["value"], ir.TileRef):
        return (f"pto::vf_dup_lane<{t}>({_reg(g, a['dst'])}, {_reg(g, a['value'])}, {_b(a['highest'])}, "
                f"{_mask(g, a['mask'])}, {_b(a['merge'])});")
    return f"pto::vf_dup_s<{t}>({_reg(g, a['dst'])}, {g.scalar(a['value'])}, {_mask(g, a['mask'])}, {_b(a['merge'])});"


def _reduce(g, s):
    a = s.args
    d = a["dst"].dtype
    t = c_type(d)
    fn = a["fn"]
    if fn == "sum":
        ident = "(pto::ct<VT_>)0"
    elif d.is_float():
        ident = ("-" if fn == "max" else "") + "INFINITY"
    else:
        ident = f"std::numeric_limits<pto::ct<VT_>>::{'lowest' if fn == 'max' else 'max'}()"
    return (f"{{ using VT_ = {t}; pto::vf_reduce<VT_, pto::{_REDUCE[fn]}>(C, {_reg(g, a['dst'])}, {_reg(g, a['a'])}, "
            f"{_mask(g, a['mask'])}, (pto::ct<VT_>)({ident})); }}")


def _compare(g, s):
    a = s.args
    t = c_type(a["a"].dtype)
    cmp = _CMP[a["fn"]]
    dst = f"(uint8_t*){_reg(g, a['dst'])}"
    if isinstance(a["b"], ir.TileRef):
        return f"pto::vf_compare<{t}, pto::{cmp}>({dst}, {_reg(g, a['a'])}, {_reg(g, a['b'])}, {_mask(g, a['mask'])});"
    return f"pto::vf_compare_s<{t}, pto::{cmp}>({dst}, {_reg(g, a['a'])}, {g.scalar(a['b'])}, {_mask(g, a['mask'])});"


def _store(g, s):
    a = s.args
    stride = "-1" if a["block_stride"] is None else g.scalar(a["block_stride"])
    return (f"pto::vf_store<{c_type(a['src'].dtype)}, {c_type(a['dst'].dtype)}>(C, {_ub(g, a['dst'], a['offset'])}, "
            f"{_reg(g, a['src'])}, {_mask(g, a['mask'])}, (int64_t)({stride}), {_cap(g)});")


_register("vf_create_mask", _create_mask)
_register("vf_update_mask", lambda g, s: f"pto::vf_update_mask((uint8_t*){_reg(g, s.args['dst'])}, "
                                         f"(int64_t)({g.scalar(s.args['count'])}), {s.args['dtype'].nbytes});")
_register("vf_mask_logic", lambda g, s: f"pto::vf_mask_logic((uint8_t*){_reg(g, s.args['dst'])}, "
                                        f"(const uint8_t*){_reg(g, s.args['a'])}, {_mask(g, s.args['b'])}, "
                                        f"{_mask(g, s.args['mask'])}, {_MASK_FN[s.args['fn']]});")
_register("vf_binary", _binary)
_register("vf_fma", lambda g, s: f"pto::vf_fma<{c_type(s.args['dst'].dtype)}>(C, {_reg(g, s.args['dst'])}, "
                                 f"{_reg(g, s.args['a'])}, {_reg(g, s.args['b'])}, {_reg(g, s.args['c'])}, "
                                 f"{_mask(g, s.args['mask'])});")
_register("vf_unary", lambda g, s: f"pto::vf_unary<{c_type(s.args['dst'].dtype)}, pto::{_UNARY[s.args['fn']]}>("
                                   f"{_reg(g, s.args['dst'])}, {_reg(g, s.args['a'])}, {_mask(g, s.args['mask'])}, "
                                   f"{_b(s.args['merge'])});")
_register("vf_dup", _dup)
_register("vf_arange", lambda g, s: f"pto::vf_arange<{c_type(s.args['dst'].dtype)}>({_reg(g, s.args['dst'])}, "
                                    f"{g.scalar(s.args['start'])}, {_b(s.args['descending'])});")
_register("vf_reduce", _reduce)
_register("vf_compare", _compare)
_register("vf_select", lambda g, s: f"pto::vf_select<{c_type(s.args['dst'].dtype)}>({_reg(g, s.args['dst'])}, "
                                    f"{_reg(g, s.args['a'])}, {_reg(g, s.args['b'])}, {_mask(g, s.args['mask'])});")
_register("vf_cast", lambda g, s: f"pto::vf_cast<{c_type(s.args['dst'].dtype)}, {c_type(s.args['a'].dtype)}>("
                                  f"{_reg(g, s.args['dst'])}, {_reg(g, s.args['a'])}, {_mask(g, s.args['mask'])}, "
                                  f"{s.args['part']}, {int(s.args['mode'])});")
_register("vf_permute", lambda g, s: f"pto::vf_permute<{c_type(s.args['dst0'].dtype)}>({_reg(g, s.args['dst0'])}, "
                                     f"{_reg(g, s.args['dst1'])}, {_reg(g, s.args['a'])}, {_reg(g, s.args['b'])}, "
                                     f"{_b(s.args['interleave'])});")
_register("vf_load", lambda g, s: f"pto::vf_load<{c_type(s.args['dst'].dtype)}>(C, {_reg(g, s.args['dst'])}, "
                                  f"{_ub(g, s.args['src'], s.args['offset'])}, {_LOAD[s.args['dist']]}, {_cap(g)});")
_register("vf_load2", lambda g, s: f"pto::vf_load2<{c_type(s.args['dst0'].dtype)}>(C, {_reg(g, s.args['dst0'])}, "
                                   f"{_reg(g, s.args['dst1'])}, {_ub(g, s.args['src'], s.args['offset'])}, {_cap(g)});")
_register("vf_store", _store)
_register("vf_mem_bar", lambda g, s: "/* vf.mem_bar: program order */")

