"""C++ emission of the Reg/VF ops (:mod:`pypto_pro.ops.vf`) into ``pto/vf.h`` calls."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ops.vf import lanes, lanes_to_bits, pattern_lanes
from ... import dtypes as dt
from .codegen import KernelCodegen, c_type
from .registry import register

_BINARY = {"add": "OpAdd", "sub": "OpSub", "mul": "OpMul", "div": "OpDiv", "max": "OpMax", "min": "OpMin",
           "and_": "OpAnd", "or_": "OpOr", "xor": "OpXor", "exp_sub": "OpExpSub", "abs_sub": "OpAbsSub",
           "shl": "OpShift<true>", "shr": "OpShift<false>", "lrelu": "OpLRelu", "prelu": "OpLRelu",
           "vshl": "OpVShift<true>", "vshr": "OpVShift<false>"}
_BITWISE = {"band": 0, "bor": 1, "bxor": 2, "bnot": 3}
_UNARY = {"abs": "UAbs", "exp": "UExp", "sqrt": "USqrt", "neg": "UNeg", "relu": "URelu", "not_": "UNot", "log": "ULog",
          "rsqrt": "URsqrt", "recip": "URecip", "log2": "ULog2", "log10": "ULog10", "truncate": "UTrunc",
          "copy": "UCopy"}
_CMP = {"eq": "CmpEq", "ne": "CmpNe", "lt": "CmpLt", "le": "CmpLe", "gt": "CmpGt", "ge": "CmpGe"}
_REDUCE = {"sum": "OpAdd", "max": "OpMax", "min": "OpMin"}
_LOAD = {"NORM": 0, "BRC": 1, "US": 2, "DS": 3, "UNPK": 4}
_MASK_FN = {"and": 0, "or": 1, "xor": 2, "not": 3}
_STORE_DIST = {"PACK": 1, "PACK4": 2, "FIRST": 3, "U": 4}


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
    register(name, fn)


def _create_mask(g, s):
    a = s.args
    bits = lanes_to_bits(pattern_lanes(a["pattern"], lanes(a["dtype"])), a["dtype"].nbytes)
    return ("{ static const uint8_t b_[256] = {" + ",".join(str(int(b)) for b in bits) + "}; "
            f"pto::vf_mask_set({_reg(g, a['dst'])}, b_); }}")


def _binary(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    if a["fn"] in _BITWISE:
        b = a["b"]
        if isinstance(b, ir.TileRef):
            bargs = f"{_reg(g, b)}, false, ({t})0"
        elif b is None:
            bargs = f"({t}*)nullptr, false, ({t})0"
        else:
            bargs = f"({t}*)nullptr, true, pto::st<{t}>(pto::scal<{t}>({g.scalar(b)}))"
        return (f"pto::vf_bitwise<{t}>({_reg(g, a['dst'])}, {_reg(g, a['a'])}, {bargs}, {_mask(g, a['mask'])}, "
                f"{_b(a['merge'])}, {_BITWISE[a['fn']]});")
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
    if a["group"]:
        return (f"{{ using VT_ = {t}; pto::vf_reduce_group<VT_, pto::{_REDUCE[fn]}>(C, {_reg(g, a['dst'])}, "
                f"{_reg(g, a['a'])}, {_mask(g, a['mask'])}, (pto::ct<VT_>)({ident}), {a['group']}); }}")
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
    if a["dist"] in _STORE_DIST:
        count = "0" if a["count"] is None else g.scalar(a["count"])
        return (f"pto::vf_store_dist<{c_type(a['src'].dtype)}>(C, {_ub(g, a['dst'], a['offset'])}, {_reg(g, a['src'])}, "
                f"{_mask(g, a['mask'])}, {_STORE_DIST[a['dist']]}, (int64_t)({count}), {_cap(g)});")
    stride = "-1" if a["block_stride"] is None else g.scalar(a["block_stride"])
    return (f"pto::vf_store<{c_type(a['src'].dtype)}, {c_type(a['dst'].dtype)}>(C, {_ub(g, a['dst'], a['offset'])}, "
            f"{_reg(g, a['src'])}, {_mask(g, a['mask'])}, (int64_t)({stride}), {_cap(g)});")


_register("vf_create_mask", _create_mask)
_register("vf_update_mask", lambda g, s: f"pto::vf_update_mask((uint8_t*){_reg(g, s.args['dst'])}, "
                                         f"(int64_t)({g.scalar(s.args['count'])}), {s.args['dtype'].nbytes});")
def _mask_logic(g, s):
    a = s.args
    if a["fn"] == "sel":
        return (f"pto::vf_mask_sel((uint8_t*){_reg(g, a['dst'])}, (const uint8_t*){_reg(g, a['a'])}, "
                f"{_mask(g, a['b'])}, {_mask(g, a['mask'])});")
    return (f"pto::vf_mask_logic((uint8_t*){_reg(g, a['dst'])}, (const uint8_t*){_reg(g, a['a'])}, "
            f"{_mask(g, a['b'])}, {_mask(g, a['mask'])}, {_MASK_FN[a['fn']]});")


def _fma(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    if isinstance(a["b"], ir.TileRef):
        return (f"pto::vf_fma<{t}>(C, {_reg(g, a['dst'])}, {_reg(g, a['a'])}, {_reg(g, a['b'])}, {_reg(g, a['c'])}, "
                f"{_mask(g, a['mask'])});")
    return (f"pto::vf_fma_s<{t}>(C, {_reg(g, a['dst'])}, {_reg(g, a['a'])}, {g.scalar(a['b'])}, {_reg(g, a['c'])}, "
            f"{_mask(g, a['mask'])});")


def _load(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    ub = _ub(g, a["src"], a["offset"])
    if a["dist"] == "U":
        return f"pto::vf_load_u<{t}>(C, {_reg(g, a['dst'])}, {ub}, {_cap(g)});"
    if a["dist"] == "BLK":
        return f"pto::vf_load_blk<{t}>(C, {_reg(g, a['dst'])}, {ub}, {_cap(g)});"
    return f"pto::vf_load<{t}>(C, {_reg(g, a['dst'])}, {ub}, {_LOAD[a['dist']]}, {_cap(g)});"


_register("vf_mask_logic", _mask_logic)
_register("vf_binary", _binary)
_register("vf_fma", _fma)
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
def _permute(g, s):
    a = s.args
    t = f"uint{8 * a['width']}_t" if a["width"] else c_type(a["dst0"].dtype)  # width: mask lanes as unsigned ints
    regs = ", ".join(f"({'const ' if k in 'ab' else ''}{t}*){_reg(g, a[k])}" for k in ("dst0", "dst1", "a", "b"))
    return f"pto::vf_permute<{t}>({regs}, {_b(a['interleave'])});"


_register("vf_permute", _permute)
_register("vf_load", _load)
_register("vf_load2", lambda g, s: f"pto::vf_load2<{c_type(s.args['dst0'].dtype)}>(C, {_reg(g, s.args['dst0'])}, "
                                   f"{_reg(g, s.args['dst1'])}, {_ub(g, s.args['src'], s.args['offset'])}, {_cap(g)});")
_register("vf_store", _store)
_register("vf_mem_bar", lambda g, s: "/* vf.mem_bar: program order */")



# ---------------------------------------------------------------- ops/vf_more.py
def _t(ref) -> str:
    return c_type(ref.dtype)


def _u8(g, ref) -> str:
    return f"(uint8_t*){_reg(g, ref)}"


def _squeeze(g, s):
    a = s.args
    call = f"pto::vf_squeeze<{_t(a['dst'])}>({_reg(g, a['dst'])}, {_reg(g, a['a'])}, {_mask(g, a['mask'])})"
    return f"{g.var(s.result)} = {call};" if s.result is not None else f"(void){call};"


def _hist(g, s):
    a = s.args
    return (f"pto::vf_hist<{_t(a['dst'])}>({_reg(g, a['dst'])}, (const uint8_t*){_reg(g, a['a'])}, "
            f"{_reg(g, a['acc'])}, {_mask(g, a['mask'])}, {_b(a['high'])}, {_b(a['cumulative'])});")


def _cast4(g, s):
    a = s.args
    signed = _b(dt.DT_INT4 in (a["src_type"], a["dst_type"]))
    if a["dst_type"].bits() < 8:
        return (f"pto::vf_cast_to4<{c_type(a['src_type'])}>({_u8(g, a['dst'])}, {_reg(g, a['a'])}, "
                f"{_mask(g, a['mask'])}, {a['part']}, {int(a['mode'])}, {signed});")
    return (f"pto::vf_cast_from4<{c_type(a['dst_type'])}>({_reg(g, a['dst'])}, (const uint8_t*){_reg(g, a['a'])}, "
            f"{_mask(g, a['mask'])}, {a['part']}, {int(a['mode'])}, {signed});")


_register("vf_mull", lambda g, s: f"pto::vf_mull<{_t(s.args['lo'])}>({_reg(g, s.args['lo'])}, {_reg(g, s.args['hi'])}, "
                                  f"{_reg(g, s.args['a'])}, {_reg(g, s.args['b'])}, {_mask(g, s.args['mask'])});")
_register("vf_squeeze", _squeeze)
_register("vf_unsqueeze", lambda g, s: f"pto::vf_unsqueeze<{_t(s.args['dst'])}>({_reg(g, s.args['dst'])}, "
                                       f"{_mask(g, s.args['mask'])});")
_register("vf_pack", lambda g, s: f"pto::vf_pack<{_t(s.args['dst'])}, {_t(s.args['a'])}>({_reg(g, s.args['dst'])}, "
                                  f"{_reg(g, s.args['a'])}, {_b(s.args['upper'])});")
_register("vf_unpack", lambda g, s: f"pto::vf_unpack<{_t(s.args['dst'])}, {_t(s.args['a'])}>({_reg(g, s.args['dst'])}, "
                                    f"{_reg(g, s.args['a'])}, {_b(s.args['upper'])});")
_register("vf_mask_pack", lambda g, s: f"pto::vf_mask_pack({_u8(g, s.args['dst'])}, {_mask(g, s.args['a'])}, "
                                       f"{_b(s.args['upper'])}, {_b(s.args['unpack'])});")
_register("vf_mask_store", lambda g, s: f"pto::vf_mask_store(C, {_ub(g, s.args['dst'], s.args['offset'])}, "
                                        f"{_mask(g, s.args['src'])}, {1 if s.args['dist'] == 'PACK' else 0}, "
                                        f"{_cap(g)});")
_register("vf_mask_load", lambda g, s: f"pto::vf_mask_load(C, {_u8(g, s.args['dst'])}, "
                                       f"{_ub(g, s.args['src'], s.args['offset'])}, "
                                       f"{ {'NORM': 0, 'US': 1, 'DS': 2}[s.args['dist']]}, {_cap(g)});")
_register("vf_store2", lambda g, s: f"pto::vf_store2<{_t(s.args['a'])}>(C, {_ub(g, s.args['dst'], s.args['offset'])}, "
                                    f"{_reg(g, s.args['a'])}, {_reg(g, s.args['b'])}, {_mask(g, s.args['mask'])}, "
                                    f"{_cap(g)});")
_register("vf_load_blocks", lambda g, s: f"pto::vf_load_blocks<{_t(s.args['dst'])}>(C, {_reg(g, s.args['dst'])}, "
                                         f"{_ub(g, s.args['src'], s.args['offset'])}, "
                                         f"(int64_t)({g.scalar(s.args['block_stride'])}) * 32, "
                                         f"{_mask(g, s.args['mask'])}, {_cap(g)});")
_register("vf_gather", lambda g, s: f"pto::vf_gather<{_t(s.args['dst'])}>(C, {_reg(g, s.args['dst'])}, "
                                    f"{_ub(g, s.args['src'], s.args['offset'])}, ({_t(s.args['dst'])}*)"
                                    f"{_reg(g, s.args['index'])}, {_mask(g, s.args['mask'])}, {_cap(g)});")
_register("vf_gather_reg", lambda g, s: f"pto::vf_gather_reg<{_t(s.args['dst'])}, {_t(s.args['index'])}>("
                                        f"{_reg(g, s.args['dst'])}, {_reg(g, s.args['src'])}, "
                                        f"{_reg(g, s.args['index'])});")
_register("vf_scatter", lambda g, s: f"pto::vf_scatter<{_t(s.args['src'])}, {_t(s.args['index'])}>(C, "
                                     f"{_ub(g, s.args['dst'], s.args['offset'])}, {_reg(g, s.args['src'])}, "
                                     f"{_reg(g, s.args['index'])}, {_mask(g, s.args['mask'])}, {_cap(g)});")
_register("vf_mask_from_reg", lambda g, s: f"pto::vf_mask_from_reg(C, {_u8(g, s.args['dst'])}, "
                                           f"(const void*){_reg(g, s.args['a'])}, {s.args['a'].dtype.nbytes}, "
                                           f"(int64_t)({g.scalar(s.args['block'])}));")
_register("vf_hist", _hist)
_register("vf_cast4", _cast4)
