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
from ...ir import nodes as ir
from .frontend import Mask, Reg, VectorFunction, VfPtr, frontend, state
from .more import MORE

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
    def op(c, src, scalar, preg=None, mode=None, dtype=None):
        a = c.want_reg(src, "src")
        if dtype is not None and dtype != a.dtype:
            raise c.error(f"dtype={dtype.name} differs from the register's {a.dtype.name}")
        d = c.dest(a.dtype, _merge(c, mode))
        if isinstance(scalar, Reg):  # shift by a register of per-lane amounts
            if fn not in ("shl", "shr"):
                raise c.error("'scalar' must be a scalar, got a register")
            amounts = c.want_reg(scalar, "shift")
            if amounts.dtype.nbytes != a.dtype.nbytes:
                raise c.error(f"shift amounts must have {a.dtype.name}'s lane width, got {amounts.dtype.name}")
            # amounts count as unsigned (ops/vf.py register_shift): read them at the source's type
            c.emit("vf_binary", dst=d.ref, a=a.ref, b=c.view(amounts, a.dtype).ref, mask=c.want_mask(preg, "preg"),
                   fn="v" + fn, merge=_merge(c, mode))
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
                   ("abs_sub", "abs_sub"), ("prelu", "prelu")):
    _NS[_name] = _binary(_name, _fn)
for _name, _fn in (("adds", "add"), ("subs", "sub"), ("muls", "mul"), ("maxs", "max"), ("mins", "min"),
                   ("shift_left", "shl"), ("shift_right", "shr"), ("leaky_relu", "lrelu")):
    _NS[_name] = _scalar_op(_name, _fn)
for _name, _fn in (("abs", "abs"), ("exp", "exp"), ("sqrt", "sqrt"), ("neg", "neg"), ("relu", "relu"),
                   ("ln", "log"), ("log", "log"), ("log2", "log2"), ("log10", "log10"), ("truncate", "truncate")):
    _NS[_name] = _unary(_name, _fn)


def _logic(name: str, fn: str):
    """and_ / or_ / xor: bitwise on the lanes' bits (float lanes by their bit patterns), or on two mask
    registers (bits outside ``preg`` cleared)."""
    def op(c, src0, src1, preg=None, mode=None, dtype=None):
        if isinstance(src0, Mask) or isinstance(src1, Mask):
            if not (isinstance(src0, Mask) and isinstance(src1, Mask)):
                raise c.error("operands must both be registers or both be mask registers")
            m = c.mask()
            c.emit("vf_mask_logic", dst=m.ref, a=src0.ref, b=src1.ref, mask=c.want_mask(preg, "preg"), fn=fn)
            return m
        a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
        if a.dtype.nbytes != b.dtype.nbytes:
            raise c.error(f"operands have widths {a.dtype.nbytes} and {b.dtype.nbytes} bytes")
        d = c.dest(a.dtype, _merge(c, mode))
        c.emit("vf_binary", dst=d.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg"), fn="b" + fn,
               merge=_merge(c, mode))
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src0, src1, preg): bitwise {fn} of registers' lanes or of two mask registers."
    return frontend(name)(op)


for _name, _fn in (("and_", "and"), ("or_", "or"), ("xor", "xor")):
    _NS[_name] = _logic(_name, _fn)


@frontend("not_")
def _not(c, src, preg=None, mode=None):
    """vf.not_(src, preg): bitwise not of a register's lanes, or of a mask register (bits outside preg 0)."""
    if isinstance(src, Mask):
        m = c.mask()
        c.emit("vf_mask_logic", dst=m.ref, a=src.ref, b=None, mask=c.want_mask(preg, "preg"), fn="not")
        return m
    a = c.want_reg(src, "src")
    d = c.dest(a.dtype, _merge(c, mode))
    c.emit("vf_binary", dst=d.ref, a=a.ref, b=None, mask=c.want_mask(preg, "preg"), fn="bnot", merge=_merge(c, mode))
    return d


@frontend()
def exp_sub(c, src0, src1, preg=None, layout=None, dtype=None):
    """exp(src0 - src1) lane-wise in FP32, masked.  FP16 operands: FP32 lane i takes FP16 lanes 2i + layout
    (CastLayout ZERO/ONE) of both, selected by ``preg``'s bits of those FP16 lanes; the result is FP32."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    if a.dtype != b.dtype or a.dtype not in (dt.DT_FP32, dt.DT_FP16):
        raise c.error(f"exp_sub takes two FP32 or two FP16 registers, got {a.dtype.name} and {b.dtype.name}")
    if dtype not in (None, dt.DT_FP32):
        raise c.error(f"exp_sub produces FP32 lanes; dtype={dtype!r} is not supported")
    mask = c.want_mask(preg, "preg")
    if a.dtype == dt.DT_FP16:
        part = ("ZERO", "ONE").index(c.const(layout, CastLayout, "layout", "ZERO"))
        wide = []
        for x in (a, b, None):  # the two operands, then 1.0 where the mask selects (-> the FP32 lanes' mask)
            w = c.reg(dt.DT_FP32, reuse=False)
            if x is None:
                x = c.reg(dt.DT_FP16, reuse=False)
                c.emit("vf_dup", dst=x.ref, value=c.scalar(1.0, "one"), mask=None, highest=False, merge=False)
            c.emit("vf_cast", dst=w.ref, a=x.ref, mask=mask, part=part, mode=int(RoundMode.CAST_RINT), saturate=True)
            wide.append(w)
        a, b, on = wide
        m = c._alloc(dt.DT_UINT8, Mask, False)
        c.emit("vf_compare", dst=m.ref, a=on.ref, b=c.scalar(0.0, "zero"), mask=None, fn="gt")
        mask = m.ref
    d = c.reg(dt.DT_FP32)
    c.emit("vf_binary", dst=d.ref, a=a.ref, b=b.ref, mask=mask, fn="exp_sub", merge=False)
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
        c.emit("vf_mask_logic", dst=m.ref, a=src.ref, b=src.ref, mask=c.want_mask(preg, "preg"), fn="and")
        return m
    a = c.want_reg(src, "src")
    d = c.dest(a.dtype, _merge(c, mode))
    c.emit("vf_unary", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn="copy", merge=_merge(c, mode))
    return d


@frontend()
def arange(c, start, index_order=None, dtype=None):
    """dst[i] = start + i; DECREASE_ORDER: the same values from the last lane down, dst[i] = start + (n-1-i)
    for n lanes of ``dtype``."""
    order = c.const(index_order, ENUMS["IndexOrder"], "index_order", "INCREASE_ORDER")
    d = c.reg(dtype or dt.DT_INT32)
    c.emit("vf_arange", dst=d.ref, start=c.scalar(start, "start"), descending=order == "DECREASE_ORDER")
    return d


def _reduce(name: str, fn: str):
    def op(c, src, preg=None, datablock=False, merge_mode=None):
        a = c.want_reg(src, "src")
        d = c.reg(a.dtype)
        group = 32 // a.dtype.nbytes if datablock else 0  # datablock=True: each 32-byte DataBlock on its own
        c.emit("vf_reduce", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn=fn, group=group)
        return d
    op.__name__ = name
    op.__doc__ = f"vf.{name}(src, preg): lane 0 = {fn} of the selected lanes (binary tree), other lanes 0."
    return frontend(name)(op)


def _compare(name: str):
    def op(c, a, b, preg=None, cmp_dtype=None):
        x = c.want_reg(a, "a")
        if cmp_dtype is not None and not isinstance(cmp_dtype, dt.DataType):
            raise c.error(f"'cmp_dtype' must be a data type (pl.DT_*), got {cmp_dtype!r}")
        width = cmp_dtype or x.dtype  # the registers are compared as lanes of this type
        x = c.view(x, width)
        y = c.view(b, width).ref if isinstance(b, Reg) else c.scalar(b, "b")
        m = c.mask()
        c.emit("vf_compare", dst=m.ref, a=x.ref, b=y, mask=c.want_mask(preg, "preg"), fn=name)
        state(c.p).spr_mask = (m, width.nbytes)
        return m
    op.__name__ = name
    op.__doc__ = (f"vf.{name}(a, b, preg, cmp_dtype=None): the mask of lanes where a {name} b (b a register or "
                  f"scalar), both registers read as lanes of cmp_dtype (default: a's dtype).")
    return frontend(name)(op)


for _name, _fn in (("reduce_sum", "sum"), ("reduce_max", "max"), ("reduce_min", "min")):
    _NS[_name] = _reduce(_name, _fn)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _NS[_name] = _compare(_name)


@frontend()
def select(c, src0, src1, preg, mode=None):
    """src0 where the mask selects the lane, else src1 (registers, or mask registers bit by bit)."""
    if isinstance(src0, Mask) and isinstance(src1, Mask):
        m = c.mask()
        c.emit("vf_mask_logic", dst=m.ref, a=src0.ref, b=src1.ref, mask=c.want_mask(preg, "preg", optional=False),
               fn="sel")
        return m
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    b = c.view(b, a.dtype)  # a select moves bits: src1 is read at src0's width
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
    if a.dtype.bits() < 8 or dtype.bits() < 8:  # to / from a 4-bit integer register
        other = dtype if a.dtype.bits() < 8 else a.dtype
        if other.bits() != 16 or (a.dtype.bits() < 8 and dtype.bits() < 8):
            raise c.not_implemented(f"astype between {a.dtype.name} and {dtype.name} (4-bit casts go to / from "
                                    f"16-bit types)")
        d = c.reg(dtype)
        c.emit("vf_cast4", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), part=part, mode=int(mode),
               src_type=a.dtype, dst_type=dtype)
        return d
    ratio = max(a.dtype.nbytes, dtype.nbytes) // min(a.dtype.nbytes, dtype.nbytes)
    if part >= ratio and ratio > 1:
        raise c.error(f"layout {('ZERO', 'ONE', 'TWO', 'THREE')[part]} needs a {part + 1}x width change")
    d = c.reg(dtype)
    c.emit("vf_cast", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), part=part if ratio > 1 else 0,
           mode=int(mode), saturate=c.const(saturate, SaturateMode, "saturate", "ON") == "ON")
    return d


def _permute(name: str, interleave: bool):
    def op(c, src0, src1, dtype=None):
        if isinstance(src0, Mask):  # mask registers: lanes of dtype's width (whole predicate bytes) move
            m0, m1 = c.want_mask(src0, "src0", optional=False), c.want_mask(src1, "src1", optional=False)
            width = (dtype or dt.DT_UINT8).nbytes
            if width > 4:
                raise c.error(f"{name} of mask registers takes 8-, 16- or 32-bit lanes, not {dtype.name}")
            d0, d1 = c._alloc(dt.DT_UINT8, Mask, False), c._alloc(dt.DT_UINT8, Mask, False)
            c.emit("vf_permute", dst0=d0.ref, dst1=d1.ref, a=m0, b=m1, interleave=interleave, width=width)
            return d0, d1
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
              "UNPK_B8": "UNPK", "UNPK_B16": "UNPK", "UNPK_B32": "UNPK", "BLK": "BLK"}
_BLOCK_MODES = ("DATA_BLOCK_LOAD", "DATA_BLOCK_COPY")
_GRAIN = {"B8": dt.DT_UINT8, "B16": dt.DT_UINT16, "B32": dt.DT_UINT32}


def _assign_target_mask(c) -> bool:
    p = c.p
    return p.assign_node is c.node and isinstance(p.scope.vars.get(p.assign_target), Mask)


def _post_step(c, tile, step) -> None:
    if step is not None:
        c.advance(tile, c.scalar(step, "offset"))


@frontend()
def load_align(c, tile, offset=None, dist=None, dtype=None, post_update=False, block_stride=None,
               repeat_stride=None, data_copy_mode=None):
    """A register loaded from UB at ``tile + offset`` (elements; ``[row, col]`` or an AddrReg accepted).
    Assigned to a name that holds a mask register, it loads that mask (NORM 32 bytes, US, DS).
    DataBlock mode: ``offset`` is the mask choosing which of the 8 blocks (``block_stride`` apart) load."""
    cm = c.const(data_copy_mode, DataCopyMode, "data_copy_mode", "NORM")
    ds = c.const(dist, LoadDist, "dist", "NORM")
    base0 = tile.base if isinstance(tile, VfPtr) else tile
    if cm in _BLOCK_MODES:
        if block_stride is None:
            raise c.error("DataBlock mode needs block_stride")
        mask = c.want_mask(offset, "offset (the DataBlock mask)")
        base, off = c.address(tile, cursor=post_update)
        d = c.reg(dtype or base.dtype)
        c.emit("vf_load_blocks", dst=d.ref, src=base, offset=off, block_stride=c.scalar(block_stride, "block_stride"),
               mask=mask)
        if post_update:
            if repeat_stride is None:
                raise c.error("post_update in DataBlock mode needs repeat_stride")
            c.advance(tile, c.p.binop("//", c.p.binop("*", c.scalar(repeat_stride, "repeat_stride"), 32, c.node),
                                      base.dtype.nbytes, c.node))
        return d
    step = offset if post_update else None
    if _assign_target_mask(c):  # a mask register from UB
        if ds not in ("NORM", "US", "DS"):
            raise c.error(f"a mask register loads with dist NORM, US or DS, not {ds}")
        base, off = c.address(tile, None if post_update else offset, cursor=post_update)
        m = c.mask()
        c.emit("vf_mask_load", dst=m.ref, src=base, offset=off, dist=ds)
        if post_update:
            _post_step(c, tile, step if step is not None else {"NORM": 32, "US": 16, "DS": 64}[ds] // base0.dtype.nbytes)
        return m
    if isinstance(offset, Mask):
        raise c.error("a mask offset needs data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY")
    base, off = c.address(tile, None if post_update else offset, cursor=post_update)
    t = dtype or base.dtype
    # an explicit granularity (BRC_B8, DINTLV_B16, ...) moves elements of that width whatever the register's
    # dtype: the register is written as lanes of an unsigned type of that width (BRC_B8 into a u32 register
    # repeats one byte in every byte)
    grain = _GRAIN.get(ds.rsplit("_", 1)[-1]) if "_B" in ds else None
    if grain is None or t.bits() < 8 or grain.nbytes == t.nbytes:
        grain = t
    if ds.startswith("DINTLV"):
        d0, d1 = c.reg(t, reuse=False), c.reg(t, reuse=False)
        c.emit("vf_load2", dst0=c.view(d0, grain).ref, dst1=c.view(d1, grain).ref, src=base, offset=off)
        result = (d0, d1)
    elif ds in _LOAD_DIST:
        d = c.reg(t)
        c.emit("vf_load", dst=c.view(d, grain).ref, src=base, offset=off, dist=_LOAD_DIST[ds])
        result = d
    else:
        raise c.not_implemented(f"load_align dist={ds}")
    if post_update:
        _post_step(c, tile, step if step is not None else 256 // base.dtype.nbytes)
    return result


_STORE_BYTES = {"NORM": 256, "NORM_B16": 256, "PACK": 128, "PACK4": 64}


@frontend()
def store_align(c, tile, src, *args, dist=None, data_copy_mode=None, block_stride=None, repeat_stride=None,
                post_update=False):
    """Write register ``src`` (the lanes ``preg`` selects) to UB at ``tile`` (+ offset).  Forms:
    ``(tile, src, preg[, offset])``; ``(tile, src0, src1, preg[, offset], dist=INTLV)``; a mask register
    ``(tile, mask[, offset], dist=NORM|PACK)``; DataBlock ``(tile, src, mask, block_stride[, repeat_stride],
    data_copy_mode=DATA_BLOCK_COPY)``.  Decision: ``post_update`` without an offset advances by the bytes
    the store covers (VL; PACK VL/2; PACK4 VL/4; INTLV 2*VL; a mask 32 or 16)."""
    rest = list(args)
    cm = c.const(data_copy_mode, DataCopyMode, "data_copy_mode", "NORM")
    ds = c.const(dist, StoreDist, "dist", None)
    base0 = tile.base if isinstance(tile, VfPtr) else tile
    if base0 is None or not isinstance(base0, ir.TileRef):
        base0 = None
    if isinstance(src, Mask):  # a mask register to UB
        if ds not in (None, "NORM", "PACK"):
            raise c.error(f"a mask register stores with dist NORM or PACK, not {ds}")
        offset = rest.pop(0) if rest else None
        if rest:
            raise c.error("too many positional arguments")
        base, off = c.address(tile, None if post_update else offset, cursor=post_update)
        c.emit("vf_mask_store", dst=base, src=src.ref, offset=off, dist=ds or "NORM")
        if post_update:
            _post_step(c, tile, offset if offset is not None else (32 if ds != "PACK" else 16) // base.dtype.nbytes)
        return None
    a = c.want_reg(src, "src")
    if rest and isinstance(rest[0], Reg):  # two registers, interleaved
        b = c.want_reg(rest.pop(0), "src1")
        if ds not in (None, "INTLV", "INTLV_B32"):
            raise c.error(f"two source registers store with dist INTLV, not {ds}")
        preg = rest.pop(0) if rest and isinstance(rest[0], Mask) else None
        offset = rest.pop(0) if rest else None
        base, off = c.address(tile, None if post_update else offset, cursor=post_update)
        c.emit("vf_store2", dst=base, a=a.ref, b=b.ref, offset=off, mask=c.want_mask(preg, "preg"))
        if post_update:
            _post_step(c, tile, offset if offset is not None else 512 // base.dtype.nbytes)
        return None
    preg = rest.pop(0) if rest and isinstance(rest[0], Mask) else None
    mask = c.want_mask(preg, "preg")
    if cm == "DATA_BLOCK_COPY":
        if rest:
            block_stride = rest.pop(0)
        if rest:
            repeat_stride = rest.pop(0)
        if block_stride is None:
            raise c.error("DataBlock mode needs block_stride")
        base, off = c.address(tile, cursor=post_update)
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
    ds = ds or "NORM"
    if ds in ("INTLV", "INTLV_B32"):
        raise c.error(f"dist={ds} stores two registers: store_align(tile, src0, src1, preg)")
    if ds == "NORM_B16" and a.dtype.nbytes != 2:
        raise c.error(f"dist=NORM_B16 stores 16-bit lanes, not {a.dtype.name}")
    offset = rest.pop(0) if rest else None
    if rest:
        raise c.error("too many positional arguments")
    base, off = c.address(tile, None if post_update else offset, cursor=post_update)
    kind = {"NORM": "NORM", "NORM_B16": "NORM", "PACK": "PACK", "PACK4": "PACK4", "FIRST_ELEMENT": "FIRST"}[ds]
    c.emit("vf_store", dst=base, src=a.ref, mask=mask, offset=off, block_stride=None, dist=kind)
    if post_update:
        nbytes = a.dtype.nbytes if kind == "FIRST" else _STORE_BYTES[ds]
        _post_step(c, tile, offset if offset is not None else max(1, nbytes // base.dtype.nbytes))
    return None


@frontend()
def mem_bar(c, mode=None):
    """A memory barrier between register loads/stores (program order already holds here)."""
    c.emit("vf_mem_bar", mode=c.const(mode, MemBarMode, "mode", "VV_ALL"))


_IMPLEMENTED = dict(_NS, not_=_not, exp_sub=exp_sub, mul_add_dst=mul_add_dst, mul_dst_add=mul_dst_add, full=full,
                    move=move, arange=arange, select=select, astype=astype, load_align=load_align,
                    store_align=store_align, mem_bar=mem_bar, create_mask=create_mask, update_mask=update_mask, **MORE)
Vf = types.SimpleNamespace(**_IMPLEMENTED)
