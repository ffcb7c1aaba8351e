"""The Reg/VF API: ``@pl.vector_function`` helpers and ``vf.*`` register ops
(``from pypto_pro.language import Vf as vf``).

Registers are values: ``vf.load_align`` fills a vector register from UB, arithmetic makes new
registers, ``vf.store_align`` writes the lanes a mask selects back to UB.  See ``docs/language.md``
("Reg/VF API") for the semantics and the decisions where the official pages are silent.
"""
from __future__ import annotations

import types

from ... import dtypes as dt
from ...errors import KernelSyntaxError
from ...ir.types import RoundMode
from .enums import (ENUMS, CastLayout, DataCopyMode, DuplicatePos, LoadDist, MaskPattern, MemBarMode,  # noqa: F401
                    MergeMode, SaturateMode, StoreDist, VFRoundMode)
from .frontend import Mask, Reg, VectorFunction, frontend, not_implemented

__all__ = ["Vf", "vector_function", "RegTensor", "MaskReg", "ENUMS"]

RegTensor = Reg
MaskReg = Mask


def vector_function(fn=None, **options):
    """``@pl.vector_function`` (or with options, which are NPU code-generation hints and are ignored)."""
    if fn is None:
        return lambda f: VectorFunction(f)
    return VectorFunction(fn)


def _merge(c, mode) -> bool:
    return c.const(mode, MergeMode, "mode", "ZEROING") == "MERGING"


# ----------------------------------------------------------------------------- masks
@frontend()
def create_mask(c, pattern=None, dtype=None):
    """A mask register of ``pattern`` (default ALL) at the element width of ``dtype`` (default FP32)."""
    pat = c.const(pattern, MaskPattern, "pattern", "ALL")
    m = c.mask()
    c.emit("vf_create_mask", dst=m.ref, pattern=pat, dtype=dtype or dt.DT_FP32)
    return m


@frontend()
def update_mask(c, scalar, dtype=None):
    """A mask register selecting the first ``scalar`` elements of ``dtype`` (default FP32).
    Decision: the scalar argument is not decremented (Python values are not passed by reference)."""
    m = c.mask()
    c.emit("vf_update_mask", dst=m.ref, count=c.scalar(scalar, "scalar"), dtype=dtype or dt.DT_FP32)
    return m


# ----------------------------------------------------------------------------- element-wise
def _binary(name: str, fn: str):
    def op(c, src0, src1, preg=None, mode=None):
        a = c.want_reg(src0, "src0")
        b = c.want_reg(src1, "src1")
        if a.dtype != b.dtype:
            raise c.error(f"operands have dtypes {a.dtype.name} and {b.dtype.name}; convert with vf.astype")
        d = c.dest(a.dtype, _merge(c, mode))
        c.emit("vf_binary", dst=d.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg"), fn=fn, merge=_merge(c, mode))
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src0, src1, preg, mode=None): lane-wise {fn}, masked."
    return frontend(name)(op)


def _scalar_op(name: str, fn: str):
    def op(c, src, scalar, preg=None, mode=None):
        a = c.want_reg(src, "src")
        d = c.dest(a.dtype, _merge(c, mode))
        if isinstance(scalar, Reg):  # shift by a register of amounts
            c.emit("vf_binary", dst=d.ref, a=a.ref, b=scalar.ref, mask=c.want_mask(preg, "preg"), fn=fn,
                   merge=_merge(c, mode))
            return d
        c.emit("vf_binary", dst=d.ref, a=a.ref, b=c.scalar(scalar, "scalar"), mask=c.want_mask(preg, "preg"), fn=fn,
               merge=_merge(c, mode))
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src, scalar, preg, mode=None): lane-wise {fn} with a scalar, masked."
    return frontend(name)(op)


def _unary(name: str, fn: str):
    def op(c, src, preg=None, mode=None, precision=None):
        a = c.want_reg(src, "src")
        d = c.dest(a.dtype, _merge(c, mode))
        c.emit("vf_unary", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn=fn, merge=_merge(c, mode))
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src, preg, mode=None): lane-wise {fn}, masked (precision hints are ignored)."
    return frontend(name)(op)


_NS = {}
for _name, _fn in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"), ("max", "max"), ("min", "min"),
                   ("and_", "and_"), ("or_", "or_"), ("abs_sub", "abs_sub")):
    _NS[_name] = _binary(_name, _fn)
for _name, _fn in (("adds", "add"), ("subs", "sub"), ("muls", "mul"), ("maxs", "max"), ("mins", "min"),
                   ("shift_left", "shl"), ("shift_right", "shr")):
    _NS[_name] = _scalar_op(_name, _fn)
for _name, _fn in (("abs", "abs"), ("exp", "exp"), ("sqrt", "sqrt"), ("neg", "neg"), ("relu", "relu"),
                   ("not_", "not_"), ("ln", "log"), ("log", "log"), ("log2", "log2"), ("log10", "log10"),
                   ("truncate", "truncate")):
    _NS[_name] = _unary(_name, _fn)


@frontend("xor")
def _xor(c, src0, src1, preg=None, mode=None, dtype=None):
    """vf.xor(src0, src1, preg): lane-wise bitwise xor, masked."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    d = c.dest(a.dtype, _merge(c, mode))
    c.emit("vf_binary", dst=d.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg"), fn="xor", merge=_merge(c, mode))
    return d


@frontend()
def exp_sub(c, src0, src1, preg=None, layout=None):
    """exp(src0 - src1) lane-wise, masked (fp32 operands)."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    if a.dtype != dt.DT_FP32 or b.dtype != dt.DT_FP32:
        raise c.not_implemented(f"exp_sub on {a.dtype.name} registers")
    d = c.reg(a.dtype)
    c.emit("vf_binary", dst=d.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg"), fn="exp_sub", merge=False)
    return d


def _target_reg(c, what: str) -> Reg:
    """The register the assignment's target names (ops that read their destination)."""
    p = c.p
    cur = p.scope.vars.get(p.assign_target) if p.assign_node is c.node and p.assign_target else None
    if not isinstance(cur, Reg):
        raise c.error(f"{what} reads its destination: write `d = vf.{c.name}(..., d ...)` with `d` an existing "
                      f"register", cls=KernelSyntaxError)
    return cur


@frontend()
def mul_add_dst(c, src0, src1, preg=None, mode=None):
    """dst = src0 * src1 + dst (dst: the register the result is assigned to)."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    t = _target_reg(c, "vf.mul_add_dst")
    d = c.reg(t.dtype)  # t itself unless another name refers to it
    c.emit("vf_fma", dst=d.ref, a=a.ref, b=b.ref, c=t.ref, mask=c.want_mask(preg, "preg"))
    return d


@frontend()
def mul_dst_add(c, src0, src1, preg=None, mode=None):
    """dst = src0 * dst + src1 (dst: the register the result is assigned to)."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    t = _target_reg(c, "vf.mul_dst_add")
    d = c.reg(t.dtype)
    c.emit("vf_fma", dst=d.ref, a=a.ref, b=t.ref, c=b.ref, mask=c.want_mask(preg, "preg"))
    return d


@frontend()
def full(c, src, preg=None, dtype=None, mode=None, pos=None):
    """Every selected lane = the scalar ``src``, or the lowest (``pos=HIGHEST``: highest) lane of register ``src``."""
    highest = c.const(pos, DuplicatePos, "pos", "LOWEST") == "HIGHEST"
    if isinstance(src, Reg):
        d = c.dest(src.dtype, _merge(c, mode))
        c.emit("vf_dup", dst=d.ref, value=src.ref, mask=c.want_mask(preg, "preg"), highest=highest,
               merge=_merge(c, mode))
        return d
    d = c.dest(dtype or dt.DT_FP32, _merge(c, mode))
    c.emit("vf_dup", dst=d.ref, value=c.scalar(src, "src"), mask=c.want_mask(preg, "preg"), highest=False,
           merge=_merge(c, mode))
    return d


@frontend()
def move(c, src, preg=None, mode=None):
    """A copy of a register (masked lanes 0 / kept with MERGING), or of a mask register."""
    if isinstance(src, Mask):
        m = c.mask()
        c.emit("vf_mask_logic", dst=m.ref, a=src.ref, b=src.ref, mask=None, fn="and")
        return m
    a = c.want_reg(src, "src")
    d = c.reg(a.dtype, reuse=False)
    c.emit("vf_unary", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn="copy", merge=_merge(c, mode))
    return d


@frontend()
def arange(c, start, index_order=None, dtype=None):
    """dst[i] = start + i (DECREASE_ORDER: start - i)."""
    order = c.const(index_order, ENUMS["IndexOrder"], "index_order", "INCREASE_ORDER")
    d = c.reg(dtype or dt.DT_INT32)
    c.emit("vf_arange", dst=d.ref, start=c.scalar(start, "start"), descending=order == "DECREASE_ORDER")
    return d


def _reduce(name: str, fn: str):
    def op(c, src, preg=None, datablock=False, merge_mode=None):
        a = c.want_reg(src, "src")
        if datablock:
            raise c.not_implemented("datablock=True")
        d = c.reg(a.dtype)
        c.emit("vf_reduce", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn=fn)
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src, preg): lane 0 = {fn} of the selected lanes (binary tree), other lanes 0."
    return frontend(name)(op)


def _compare(name: str):
    def op(c, a, b, preg=None, cmp_dtype=None):
        x = c.want_reg(a, "a")
        y = b.ref if isinstance(b, Reg) else c.scalar(b, "b")
        m = c.mask()
        c.emit("vf_compare", dst=m.ref, a=x.ref, b=y, mask=c.want_mask(preg, "preg"), fn=name)
        return m
    op.__name__ = name
    op.__doc__ = f"vf.{name}(a, b, preg): the mask of lanes where a {name} b (b a register or scalar)."
    return frontend(name)(op)


for _name, _fn in (("reduce_sum", "sum"), ("reduce_max", "max"), ("reduce_min", "min")):
    _NS[_name] = _reduce(_name, _fn)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _NS[_name] = _compare(_name)


@frontend()
def select(c, src0, src1, preg, mode=None):
    """src0 where the mask selects the lane, else src1."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    d = c.reg(a.dtype)
    c.emit("vf_select", dst=d.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg", optional=False))
    return d


_ROUND = {"CAST_ROUND": RoundMode.CAST_ROUND, "CAST_RINT": RoundMode.CAST_RINT, "CAST_FLOOR": RoundMode.CAST_FLOOR,
          "CAST_CEIL": RoundMode.CAST_CEIL, "CAST_TRUNC": RoundMode.CAST_TRUNC, "CAST_ODD": RoundMode.CAST_ODD}


@frontend()
def astype(c, src, preg=None, dtype=None, layout=None, round_mode=None, saturate=None):
    """Convert lanes to ``dtype``.  Decision: without round_mode, float -> float rounds to nearest even and
    float -> int truncates; float -> int saturates (NaN -> 0)."""
    a = c.want_reg(src, "src")
    if dtype is None:
        raise c.error("dtype= is required")
    rm = c.const(round_mode, VFRoundMode, "round_mode", None)
    if rm == "CAST_HYBRID":
        raise c.not_implemented("round_mode=CAST_HYBRID")
    if rm is None:
        mode = RoundMode.CAST_TRUNC if (a.dtype.is_float() and not dtype.is_float()) else RoundMode.CAST_RINT
    else:
        mode = _ROUND[rm]
    part = ("ZERO", "ONE", "TWO", "THREE").index(c.const(layout, CastLayout, "layout", "ZERO"))
    ratio = max(a.dtype.nbytes, dtype.nbytes) // min(a.dtype.nbytes, dtype.nbytes)
    if part >= ratio and ratio > 1:
        raise c.error(f"layout {('ZERO', 'ONE', 'TWO', 'THREE')[part]} needs a {part + 1}x width change")
    d = c.reg(dtype)
    c.emit("vf_cast", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), part=part if ratio > 1 else 0,
           mode=int(mode), saturate=c.const(saturate, SaturateMode, "saturate", "ON") == "ON")
    return d


def _permute(name: str, interleave: bool):
    def op(c, src0, src1, dtype=None):
        a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
        t = dtype or a.dtype
        if t.nbytes != a.dtype.nbytes or b.dtype.nbytes != a.dtype.nbytes:
            raise c.not_implemented(f"{name} with a dtype of another width")
        d0, d1 = c.reg(t, reuse=False), c.reg(t, reuse=False)
        c.emit("vf_permute", dst0=d0.ref, dst1=d1.ref, a=a.ref, b=b.ref, interleave=interleave)
        return d0, d1
    op.__name__ = name
    op.__doc__ = (f"vf.{name}(src0, src1): " + ("(lower, upper half of a0 b0 a1 b1 ...)" if interleave else
                                                 "(even, odd elements of src0 ++ src1)"))
    return frontend(name)(op)


_NS["de_interleave"] = _permute("de_interleave", False)
_NS["interleave"] = _permute("interleave", True)


# ----------------------------------------------------------------------------- UB <-> registers
_LOAD_DIST = {"NORM": "NORM", "BRC": "BRC", "BRC_B8": "BRC", "BRC_B16": "BRC", "BRC_B32": "BRC", "US": "US",
              "US_B8": "US", "US_B16": "US", "DS": "DS", "DS_B8": "DS", "DS_B16": "DS", "UNPK": "UNPK",
              "UNPK_B8": "UNPK", "UNPK_B16": "UNPK", "UNPK_B32": "UNPK"}


@frontend()
def load_align(c, tile, offset=None, dist=None, dtype=None, post_update=False, block_stride=None,
               repeat_stride=None, data_copy_mode=None):
    """A register loaded from UB at ``tile + offset`` (elements; ``[row, col]`` accepted)."""
    if isinstance(offset, (Reg, Mask)):
        raise c.not_implemented("load_align with an AddrReg or mask offset")
    cm = c.const(data_copy_mode, DataCopyMode, "data_copy_mode", "NORM")
    if cm != "NORM":
        raise c.not_implemented(f"load_align data_copy_mode={cm}")
    p = c.p
    if p.assign_node is c.node and isinstance(p.scope.vars.get(p.assign_target), Mask):
        raise c.not_implemented("load_align into a mask register")
    ds = c.const(dist, LoadDist, "dist", "NORM")
    step = offset if post_update else None
    base, off = c.address(tile, None if post_update else offset)
    t = dtype or base.dtype
    if ds.startswith("DINTLV"):
        d0, d1 = c.reg(t, reuse=False), c.reg(t, reuse=False)
        c.emit("vf_load2", dst0=d0.ref, dst1=d1.ref, src=base, offset=off)
        result = (d0, d1)
    elif ds in _LOAD_DIST:
        d = c.reg(t)
        c.emit("vf_load", dst=d.ref, src=base, offset=off, dist=_LOAD_DIST[ds])
        result = d
    else:
        raise c.not_implemented(f"load_align dist={ds}")
    if post_update:
        c.advance(tile, c.scalar(step if step is not None else 256 // base.dtype.nbytes, "offset"))
    return result


@frontend()
def store_align(c, tile, src, *args, dist=None, data_copy_mode=None, block_stride=None, repeat_stride=None,
                post_update=False):
    """Write the selected lanes of register ``src`` to UB at ``tile`` (+ offset)."""
    if isinstance(src, Mask):
        raise c.not_implemented("store_align of a mask register")
    a = c.want_reg(src, "src")
    rest = list(args)
    if rest and isinstance(rest[0], Reg):
        raise c.not_implemented("store_align with two source registers (INTLV)")
    preg = rest.pop(0) if rest and isinstance(rest[0], Mask) else None
    cm = c.const(data_copy_mode, DataCopyMode, "data_copy_mode", "NORM")
    ds = c.const(dist, StoreDist, "dist", "NORM")
    if ds != "NORM" and not (ds == "NORM_B16" and a.dtype.nbytes == 2):
        raise c.not_implemented(f"store_align dist={ds}")
    mask = c.want_mask(preg, "preg")
    if cm == "DATA_BLOCK_COPY":
        if rest:
            block_stride = rest.pop(0)
        if rest:
            repeat_stride = rest.pop(0)
        if block_stride is None:
            raise c.error("DataBlock mode needs block_stride")
        base, off = c.address(tile)
        c.emit("vf_store", dst=base, src=a.ref, mask=mask, offset=off, block_stride=c.scalar(block_stride,
               "block_stride"), dist="NORM")
        if post_update:
            if repeat_stride is None:
                raise c.error("post_update in DataBlock mode needs repeat_stride")
            step = c.p.binop("//", c.p.binop("*", c.scalar(repeat_stride, "repeat_stride"), 32, c.node),
                             base.dtype.nbytes, c.node)
            c.advance(tile, step)
        return None
    if cm != "NORM":
        raise c.not_implemented(f"store_align data_copy_mode={cm}")
    offset = rest.pop(0) if rest else None
    if rest:
        raise c.error("too many positional arguments")
    base, off = c.address(tile, None if post_update else offset)
    c.emit("vf_store", dst=base, src=a.ref, mask=mask, offset=off, block_stride=None, dist="NORM")
    if post_update:
        c.advance(tile, c.scalar(offset if offset is not None else 256 // base.dtype.nbytes, "offset"))
    return None


@frontend()
def mem_bar(c, mode=None):
    """A memory barrier between register loads/stores (program order already holds here)."""
    c.emit("vf_mem_bar", mode=c.const(mode, MemBarMode, "mode", "VV_ALL"))


_IMPLEMENTED = dict(_NS, xor=_xor, exp_sub=exp_sub, mul_add_dst=mul_add_dst, mul_dst_add=mul_dst_add, full=full,
                    move=move, arange=arange, select=select, astype=astype, load_align=load_align,
                    store_align=store_align, mem_bar=mem_bar, create_mask=create_mask, update_mask=update_mask)
#: official vf names without an implementation yet: each raises NotImplementedError naming itself
_MISSING = ("addc", "subc", "leaky_relu", "prelu", "mull", "axpy", "muls_cast", "pair_reduce_sum", "squeeze",
            "unsqueeze", "pack", "unpack", "gather", "scatter", "histograms", "load", "store", "load_unalign",
            "load_unalign_init", "load_unalign_pre", "store_unalign", "store_unalign_post", "unalign_reg_for_store",
            "create_addr_reg", "clear_spr", "get_spr", "get_mask_spr", "mask_gen_with_reg_tensor", "bit_cast")

Vf = types.SimpleNamespace(**_IMPLEMENTED, **{n: not_implemented(n) for n in _MISSING})
