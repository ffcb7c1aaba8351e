"""C++ emission of the Reg/VF ops (:mod:`pypto_pro.ops.vf`, :mod:`pypto_pro.ops.vf_more`) into
``pto/vf.h`` and ``pto/vf_more.h`` calls (most are one call: :mod:`.emit_call`)."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ops.vf import lanes, lanes_to_bits, pattern_lanes
from ... import dtypes as dt
from .codegen import KernelCodegen, c_type
from .emit_call import Emitter, Operand, call, chosen, ctype, flag, int64, number, scalar
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


# ------------------------------------------------------------------ operands of the one-call emitters
def reg(name: str) -> Operand:
    """A register's address."""
    return lambda g, a: _reg(g, a[name])


def mask(name: str) -> Operand:
    """A mask register's bytes (nullptr without one)."""
    return lambda g, a: _mask(g, a[name])


def mask_out(name: str) -> Operand:
    """A mask register written by the op."""
    return lambda g, a: f"(uint8_t*){_reg(g, a[name])}"


def ub(name: str) -> Operand:
    """UB at the op's ``offset`` past tile ``name``'s first element."""
    return lambda g, a: _ub(g, a[name], a["offset"])


def pto_fn(table) -> Operand:
    """The ``pto::`` functor of the op's ``fn`` (a template argument)."""
    return chosen("fn", {fn: f"pto::{c}" for fn, c in table.items()})


def _capacity(g: KernelCodegen, a) -> str:
    return str(_cap(g))


def _by_operand(name: str, on_register: Emitter, on_scalar: Emitter) -> Emitter:
    """``on_register`` when operand ``name`` is a register, else ``on_scalar``."""
    return lambda g, s: (on_register if isinstance(s.args[name], ir.TileRef) else on_scalar)(g, s)


def _create_mask(g, s):
    a = s.args
    bits = lanes_to_bits(pattern_lanes(a["pattern"], lanes(a["dtype"])), a["dtype"].nbytes)
    return ("{ static const uint8_t b_[256] = {" + ",".join(str(int(b)) for b in bits) + "}; "
            f"pto::vf_mask_set({_reg(g, a['dst'])}, b_); }}")


def _bitwise(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)
    b = a["b"]
    if isinstance(b, ir.TileRef):
        bargs = f"{_reg(g, b)}, false, {t}{{}}"  # (a zero of any lane type, bf16's struct included)
    elif b is None:
        bargs = f"({t}*)nullptr, false, {t}{{}}"
    else:
        bargs = f"({t}*)nullptr, true, pto::st<{t}>(pto::scal<{t}>({g.scalar(b)}))"
    return (f"pto::vf_bitwise<{t}>({_reg(g, a['dst'])}, {_reg(g, a['a'])}, {bargs}, {_mask(g, a['mask'])}, "
            f"{_b(a['merge'])}, {_BITWISE[a['fn']]});")


_lanewise = _by_operand(
    "b", call("vf_binary", reg("dst"), reg("a"), reg("b"), mask("mask"), flag("merge"),
              types=(ctype("dst"), pto_fn(_BINARY))),
    call("vf_binary_s", reg("dst"), reg("a"), scalar("b"), mask("mask"), flag("merge"),
         types=(ctype("dst"), pto_fn(_BINARY))))


def _binary(g, s):
    return (_bitwise if s.args["fn"] in _BITWISE else _lanewise)(g, s)


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


def _store(g, s):
    a = s.args
    if a["dist"] in _STORE_DIST:
        count = "0" if a["count"] is None else g.scalar(a["count"])
        return (f"pto::vf_store_dist<{c_type(a['src'].dtype)}>(C, {_ub(g, a['dst'], a['offset'])}, {_reg(g, a['src'])}, "
                f"{_mask(g, a['mask'])}, {_STORE_DIST[a['dist']]}, (int64_t)({count}), {_cap(g)});")
    stride = "-1" if a["block_stride"] is None else g.scalar(a["block_stride"])
    return (f"pto::vf_store<{c_type(a['src'].dtype)}, {c_type(a['dst'].dtype)}>(C, {_ub(g, a['dst'], a['offset'])}, "
            f"{_reg(g, a['src'])}, {_mask(g, a['mask'])}, (int64_t)({stride}), {_cap(g)});")


_MASK_LOGIC = {"sel": call("vf_mask_sel", mask_out("dst"), mask("a"), mask("b"), mask("mask"), core=False)}
_MASK_OTHER = call("vf_mask_logic", mask_out("dst"), mask("a"), mask("b"), mask("mask"),
                   chosen("fn", {fn: str(code) for fn, code in _MASK_FN.items()}), core=False)
_LOADS = {"U": call("vf_load_u", reg("dst"), ub("src"), _capacity, types=(ctype("dst"),)),
          "BLK": call("vf_load_blk", reg("dst"), ub("src"), _capacity, types=(ctype("dst"),))}
_LOAD_DIST = call("vf_load", reg("dst"), ub("src"), chosen("dist", {d: str(code) for d, code in _LOAD.items()}),
                  _capacity, types=(ctype("dst"),))


def _permute(g, s):
    a = s.args
    t = f"uint{8 * a['width']}_t" if a["width"] else c_type(a["dst0"].dtype)  # width: mask lanes as unsigned ints
    regs = ", ".join(f"({'const ' if k in 'ab' else ''}{t}*){_reg(g, a[k])}" for k in ("dst0", "dst1", "a", "b"))
    return f"pto::vf_permute<{t}>({regs}, {_b(a['interleave'])});"


register("vf_create_mask", _create_mask)
register("vf_update_mask", call("vf_update_mask", mask_out("dst"), int64("count"),
                                lambda g, a: str(a["dtype"].nbytes), core=False))
register("vf_mask_logic", lambda g, s: _MASK_LOGIC.get(s.args["fn"], _MASK_OTHER)(g, s))
register("vf_binary", _binary)
register("vf_fma", _by_operand("b", call("vf_fma", reg("dst"), reg("a"), reg("b"), reg("c"), mask("mask"),
                                         types=(ctype("dst"),)),
                               call("vf_fma_s", reg("dst"), reg("a"), scalar("b"), reg("c"), mask("mask"),
                                    types=(ctype("dst"),))))
register("vf_unary", call("vf_unary", reg("dst"), reg("a"), mask("mask"), flag("merge"),
                          types=(ctype("dst"), pto_fn(_UNARY)), core=False))
register("vf_dup", _by_operand("value", call("vf_dup_lane", reg("dst"), reg("value"), flag("highest"), mask("mask"),
                                             flag("merge"), types=(ctype("dst"),), core=False),
                               call("vf_dup_s", reg("dst"), scalar("value"), mask("mask"), flag("merge"),
                                    types=(ctype("dst"),), core=False)))
register("vf_arange", call("vf_arange", reg("dst"), scalar("start"), flag("descending"), types=(ctype("dst"),),
                           core=False))
register("vf_reduce", _reduce)
register("vf_compare", _by_operand("b", call("vf_compare", mask_out("dst"), reg("a"), reg("b"), mask("mask"),
                                             types=(ctype("a"), pto_fn(_CMP)), core=False),
                                   call("vf_compare_s", mask_out("dst"), reg("a"), scalar("b"), mask("mask"),
                                        types=(ctype("a"), pto_fn(_CMP)), core=False)))
register("vf_select", call("vf_select", reg("dst"), reg("a"), reg("b"), mask("mask"), types=(ctype("dst"),),
                           core=False))
register("vf_cast", call("vf_cast", reg("dst"), reg("a"), mask("mask"), number("part"), number("mode"),
                         types=(ctype("dst"), ctype("a")), core=False))
register("vf_permute", _permute)
register("vf_load", lambda g, s: _LOADS.get(s.args["dist"], _LOAD_DIST)(g, s))
register("vf_load2", call("vf_load2", reg("dst0"), reg("dst1"), ub("src"), _capacity, types=(ctype("dst0"),)))
register("vf_store", _store)
register("vf_mem_bar", lambda g, s: "/* vf.mem_bar: program order */")


# ---------------------------------------------------------------- ops/vf_more.py
def _squeeze(g, s):
    a = s.args
    t = c_type(a["dst"].dtype)  # a's lanes as dst's type: the same bits (e.g. INT32 indices squeezed as UINT32)
    call_ = f"pto::vf_squeeze<{t}>({_reg(g, a['dst'])}, (const {t}*)(const void*){_reg(g, a['a'])}, {_mask(g, a['mask'])})"
    return f"{g.var(s.result)} = {call_};" if s.result is not None else f"(void){call_};"


def _cast4(g, s):
    a = s.args
    signed = _b(dt.DT_INT4 in (a["src_type"], a["dst_type"]))
    if a["dst_type"].bits() < 8:
        return (f"pto::vf_cast_to4<{c_type(a['src_type'])}>((uint8_t*){_reg(g, a['dst'])}, {_reg(g, a['a'])}, "
                f"{_mask(g, a['mask'])}, {a['part']}, {int(a['mode'])}, {signed});")
    return (f"pto::vf_cast_from4<{c_type(a['dst_type'])}>({_reg(g, a['dst'])}, (const uint8_t*){_reg(g, a['a'])}, "
            f"{_mask(g, a['mask'])}, {a['part']}, {int(a['mode'])}, {signed});")


register("vf_mull", call("vf_mull", reg("lo"), reg("hi"), reg("a"), reg("b"), mask("mask"), types=(ctype("lo"),),
                         core=False))
register("vf_squeeze", _squeeze)
register("vf_unsqueeze", call("vf_unsqueeze", reg("dst"), mask("mask"), types=(ctype("dst"),), core=False))
register("vf_pack", call("vf_pack", reg("dst"), reg("a"), flag("upper"), types=(ctype("dst"), ctype("a")),
                         core=False))
register("vf_unpack", call("vf_unpack", reg("dst"), reg("a"), flag("upper"), types=(ctype("dst"), ctype("a")),
                           core=False))
register("vf_mask_pack", call("vf_mask_pack", mask_out("dst"), mask("a"), flag("upper"), flag("unpack"), core=False))
register("vf_mask_store", call("vf_mask_store", ub("dst"), mask("src"),
                               lambda g, a: "1" if a["dist"] == "PACK" else "0", _capacity))
register("vf_mask_load", call("vf_mask_load", mask_out("dst"), ub("src"), chosen("dist", {"NORM": "0", "US": "1",
                                                                                          "DS": "2"}), _capacity))
register("vf_store2", call("vf_store2", ub("dst"), reg("a"), reg("b"), mask("mask"), _capacity, types=(ctype("a"),)))
register("vf_load_blocks", call("vf_load_blocks", reg("dst"), ub("src"),
                                lambda g, a: f"(int64_t)({g.scalar(a['block_stride'])}) * 32", mask("mask"),
                                _capacity, types=(ctype("dst"),)))
register("vf_gather", call("vf_gather", reg("dst"), ub("src"), lambda g, a: f"(const void*){_reg(g, a['index'])}",
                           mask("mask"), _capacity, lambda g, a: str(a["src"].dtype.nbytes),
                           lambda g, a: str(a["index"].dtype.nbytes), flag("block"), types=(ctype("dst"),)))
register("vf_gather_reg", call("vf_gather_reg", reg("dst"), reg("src"), reg("index"),
                               types=(ctype("dst"), ctype("index")), core=False))
register("vf_scatter", call("vf_scatter", ub("dst"), reg("src"), reg("index"), mask("mask"), _capacity,
                            types=(ctype("src"), ctype("index"))))
register("vf_mask_from_reg", call("vf_mask_from_reg", mask_out("dst"), lambda g, a: f"(const void*){_reg(g, a['a'])}",
                                  lambda g, a: str(a["a"].dtype.nbytes), int64("block")))
register("vf_addc", call("vf_addc", mask_out("carry"), reg("dst"), reg("a"), reg("b"), mask("cin"), mask("mask"),
                         flag("sub"), types=(ctype("dst"),), core=False))
register("vf_mask_from_spr", call("vf_mask_from_spr", mask_out("dst"), lambda g, a: f"(uint64_t)({g.scalar(a['high'])})",
                                  lambda g, a: f"(uint64_t)({g.scalar(a['low'])})", flag("count"), number("width"),
                                  core=False))
register("vf_hist", call("vf_hist", reg("dst"), lambda g, a: f"(const uint8_t*){_reg(g, a['a'])}", reg("acc"),
                         mask("mask"), flag("high"), flag("cumulative"), types=(ctype("dst"),), core=False))
register("vf_cast4", _cast4)
