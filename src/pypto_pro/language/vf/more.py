"""More ``vf.*`` functions (see :mod:`pypto_pro.language.vf`): composite arithmetic, squeeze and
friends, pack / unpack, gather / scatter, histograms, unaligned and simple transfers, AddrReg and the
special registers.  Internal ops: :mod:`pypto_pro.ops.vf`, :mod:`pypto_pro.ops.vf_more`.
"""
from __future__ import annotations

import inspect

from ... import dtypes as dt
from ...ir import nodes as ir
from ...ir.types import RoundMode
from .enums import ENUMS, CastLayout, DataCopyMode, MergeMode
from .frontend import AddrReg, Mask, Reg, UnalignReg, frontend, state


def _merge(c, mode) -> bool:
    return c.const(mode, MergeMode, "mode", "ZEROING") == "MERGING"


def _target(c, what: str) -> Reg:
    p = c.p
    cur = p.scope.vars.get(p.assign_target) if p.assign_node is c.node and p.assign_target else None
    if not isinstance(cur, Reg):
        raise c.error(f"{what} accumulates into its destination: write `d = vf.{c.name}(...)` with `d` a register "
                      f"assigned before")
    return cur


# ----------------------------------------------------------------------------- arithmetic
@frontend()
def mull(c, src0, src1, preg=None, mode=None):
    """(lo, hi) = the low and high 32 bits of the 64-bit products of 32-bit integer lanes."""
    a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
    if a.dtype not in (dt.DT_INT32, dt.DT_UINT32) or b.dtype != a.dtype:
        raise c.error(f"operands must both be INT32 or both UINT32, got {a.dtype.name} and {b.dtype.name}")
    lo, hi = c.reg(a.dtype, reuse=False), c.reg(a.dtype, reuse=False)
    c.emit("vf_mull", lo=lo.ref, hi=hi.ref, a=a.ref, b=b.ref, mask=c.want_mask(preg, "preg"))
    return lo, hi


def _with_carry(name: str, sub: bool, carry_name: str):
    def op(c, src0, src1, flags_in, preg=None, mode=None):
        a, b = c.want_reg(src0, "src0"), c.want_reg(src1, "src1")
        if a.dtype not in (dt.DT_INT32, dt.DT_UINT32) or b.dtype != a.dtype:
            raise c.error(f"operands must both be INT32 or both UINT32, got {a.dtype.name} and {b.dtype.name}")
        cin = c.want_mask(flags_in, carry_name, optional=False)
        carry, d = c._alloc(dt.DT_UINT8, Mask, False), c.reg(a.dtype, reuse=False)
        c.emit("vf_addc", carry=carry.ref, dst=d.ref, a=a.ref, b=b.ref, cin=cin, mask=c.want_mask(preg, "preg"),
               sub=sub)
        return carry, d
    params = list(inspect.signature(op).parameters.values())
    params[3] = params[3].replace(name=carry_name)  # carry_src / borrow_src, as the pages name it
    op.__signature__ = inspect.Signature(params)
    op.__name__ = name
    op.__doc__ = (f"vf.{name}(src0, src1, {carry_name}, preg) -> (carry, dst): 32-bit integer lanes, "
                  + ("dst = src0 + ~src1 + borrow_src (src0 - src1 when borrow_src is set); the borrow mask is set "
                     "where that sum has no carry out." if sub else
                     "dst = src0 + src1 + carry_src; the carry mask is set where the sum carries out."))
    return frontend(name)(op)


addc = _with_carry("addc", False, "carry_src")
subc = _with_carry("subc", True, "borrow_src")


@frontend()
def bit_cast(c, src, dtype=None):
    """The bits of register ``src`` as lanes of ``dtype`` (same width; no value conversion): a copy."""
    a = c.want_reg(src, "src")
    if not isinstance(dtype, dt.DataType):
        raise c.error(f"'dtype' must be a data type (pl.DT_*), got {dtype!r}")
    if dtype.bits() != a.dtype.bits():
        raise c.error(f"bit_cast keeps the lane width: {a.dtype.name} has {a.dtype.bits()} bits, "
                      f"{dtype.name} {dtype.bits()}")
    return c.copy(c.view(a, dtype))


@frontend()
def axpy(c, src, scalar, preg=None, mode=None):
    """dst = scalar * src + dst (dst: the register the result is assigned to; mul then add, two roundings)."""
    a = c.want_reg(src, "src")
    t = _target(c, "vf.axpy")
    d = c.reg(t.dtype)
    c.emit("vf_fma", dst=d.ref, a=a.ref, b=c.scalar(scalar, "scalar"), c=t.ref, mask=c.want_mask(preg, "preg"))
    return d


@frontend()
def muls_cast(c, src, scalar, preg=None, dtype=None, layout=None):
    """cast(src * scalar) to ``dtype`` (FP16) rounding to nearest (CAST_ROUND), at the CastLayout lanes."""
    a = c.want_reg(src, "src")
    if a.dtype != dt.DT_FP32 or dtype != dt.DT_FP16:
        raise c.error("muls_cast takes an FP32 register and dtype=pl.DT_FP16")
    mask = c.want_mask(preg, "preg")
    tmp = c.reg(dt.DT_FP32, reuse=False)
    c.emit("vf_binary", dst=tmp.ref, a=a.ref, b=c.scalar(scalar, "scalar"), mask=mask, fn="mul", merge=False)
    d = c.reg(dtype)
    part = ("ZERO", "ONE").index(c.const(layout, CastLayout, "layout", "ZERO"))
    c.emit("vf_cast", dst=d.ref, a=tmp.ref, mask=mask, part=part, mode=int(RoundMode.CAST_ROUND), saturate=True)
    return d


@frontend()
def pair_reduce_sum(c, src, preg=None, mode=None):
    """dst[i] = src[2i] + src[2i+1] (lanes the mask leaves out count as 0); the upper half of dst is 0."""
    a = c.want_reg(src, "src")
    d = c.reg(a.dtype)
    c.emit("vf_reduce", dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg"), fn="sum", group=-2)
    return d


# ----------------------------------------------------------------------------- squeeze, unsqueeze, pack
@frontend()
def squeeze(c, src, preg, gather_mode=None, dtype=None):
    """The selected lanes packed from lane 0 (the rest 0).  STORE_REG: the AR special register takes the
    byte count, which the next ``vf.store_unalign`` without a stride stores and advances by."""
    a = c.want_reg(src, "src")
    t = dtype or a.dtype
    if t.nbytes != a.dtype.nbytes:
        raise c.error(f"dtype {t.name} has another width than the register's {a.dtype.name}")
    d = c.reg(t)
    count = c.emit("vf_squeeze", result=dt.DT_INT64, dst=d.ref, a=a.ref, mask=c.want_mask(preg, "preg", False))
    if c.const(gather_mode, ENUMS["SqueezeMode"], "gather_mode", "NO_STORE_REG") == "STORE_REG":
        state(c.p).ar = c.p.new_var("vf_ar", c.p.binop("*", count, t.nbytes, c.node), c.node)
    return d


@frontend()
def unsqueeze(c, mask, dtype=None):
    """dst[i] = how many of the lanes before lane i the mask selects (lanes of ``dtype``, default INT32)."""
    if not isinstance(mask, Mask):
        raise c.error("'mask' must be a mask register")
    d = c.reg(dtype or dt.DT_INT32)
    c.emit("vf_unsqueeze", dst=d.ref, mask=mask.ref)
    return d


def _part(c, part) -> bool:
    return c.const(part, ENUMS["PackPart"], "part", "LOWER") == "UPPER"


@frontend()
def pack(c, src, dtype=None, part=None):
    """Register: the low half of each lane's bits into the lower / upper half of a ``dtype`` register
    (the other half 0).  Mask: the even bits into the lower / upper half."""
    if isinstance(src, Mask):
        m = c.mask()
        c.emit("vf_mask_pack", dst=m.ref, a=src.ref, upper=_part(c, part), unpack=False)
        return m
    a = c.want_reg(src, "src")
    if dtype is None or dtype.nbytes * 2 != a.dtype.nbytes or dtype.is_float():
        raise c.error(f"dtype= must be the unsigned type of half {a.dtype.name}'s width")
    d = c.reg(dtype)
    c.emit("vf_pack", dst=d.ref, a=a.ref, upper=_part(c, part))
    return d


@frontend()
def unpack(c, src, dtype=None, part=None):
    """Register: the lower / upper half of the lanes widened to ``dtype`` (sign-extended from signed
    sources).  Mask: the lower / upper half of the bits, each doubled."""
    if isinstance(src, Mask):
        m = c.mask()
        c.emit("vf_mask_pack", dst=m.ref, a=src.ref, upper=_part(c, part), unpack=True)
        return m
    a = c.want_reg(src, "src")
    if dtype is None or dtype.nbytes != 2 * a.dtype.nbytes or dtype.is_float() or a.dtype.is_float():
        raise c.error(f"dtype= must be the integer type of twice {a.dtype.name}'s width")
    d = c.reg(dtype)
    c.emit("vf_unpack", dst=d.ref, a=a.ref, upper=_part(c, part))
    return d


@frontend()
def mask_gen_with_reg_tensor(c, src, offset=None):
    """The mask whose lane bits are the bits of DataBlock ``offset`` of ``src`` (8 bytes for 32-bit
    types, 16 for 16-bit ones)."""
    a = c.want_reg(src, "src")
    if a.dtype.nbytes not in (2, 4):
        raise c.error(f"src must have 16- or 32-bit lanes, got {a.dtype.name}")
    m = c.mask()
    c.emit("vf_mask_from_reg", dst=m.ref, a=a.ref, block=c.scalar(0 if offset is None else offset, "offset"))
    return m


@frontend()
def get_mask_spr(c, width=None):
    """The vector mask special register as a mask of 32-bit (B32) or 16-bit (B16) lanes.  Decision: it
    holds what the latest (in program text, among the statements enclosing the call) of these wrote:
    ``pl.set_vec_mask`` / ``pl.reset_mask`` (norm mode: lane i is bit i of {high, low}; count mode after
    ``pl.set_mask_count``: the first ``low`` lanes) or a VF compare at the same lane width; else every
    lane (its reset state)."""
    w = 4 if c.const(width, ENUMS["MaskWidth"], "width", "B32") == "B32" else 2
    last = state(c.p).spr_mask
    m = c.mask()
    written = _latest_mask_write(c.p, last[0] if last is not None else None)
    if isinstance(written, ir.OpStmt) and written.op.name in ("set_vec_mask", "reset_mask"):
        high, low = ((written.args["mask_high"], written.args["mask_low"]) if written.op.name == "set_vec_mask"
                     else (-1, -1))
        c.emit("vf_mask_from_spr", dst=m.ref, high=high, low=low, count=_count_mode(c.p, written), width=w)
    elif written is not None and last[1] == w:
        c.emit("vf_mask_logic", dst=m.ref, a=last[0].ref, b=last[0].ref, mask=None, fn="and")
    else:
        c.emit("vf_create_mask", dst=m.ref, pattern="ALL", dtype=dt.DT_FP32 if w == 4 else dt.DT_FP16)
    return m


def _enclosing_statements(p):
    """The statements before the current point, latest first, of every block enclosing it."""
    for block in reversed(p.blocks):
        yield from reversed(block)


def _latest_mask_write(p, compare_mask):
    """The latest statement that wrote the mask register: a set_vec_mask / reset_mask op, or the VF
    compare that made ``compare_mask``; None when there is none."""
    for stmt in _enclosing_statements(p):
        if not isinstance(stmt, ir.OpStmt):
            continue
        if stmt.op.name in ("set_vec_mask", "reset_mask"):
            return stmt
        if compare_mask is not None and stmt.op.name == "vf_compare" and stmt.args["dst"] == compare_mask.ref:
            return stmt
    return None


def _count_mode(p, write) -> bool:
    """Whether the mask register is in count mode at ``write``: the latest set_mask_count / set_mask_norm
    before it says (norm by default)."""
    seen = False
    for stmt in _enclosing_statements(p):
        seen = seen or stmt is write
        if seen and isinstance(stmt, ir.OpStmt) and stmt.op.name in ("set_mask_count", "set_mask_norm"):
            return stmt.op.name == "set_mask_count"
    return False


@frontend()
def clear_spr(c):
    """Reset the AR special register to 0."""
    state(c.p).ar = c.p.new_var("vf_ar", 0, c.node)


@frontend()
def get_spr(c):
    """The AR special register (bytes the latest squeeze(STORE_REG) kept; 0 after clear_spr)."""
    ar = state(c.p).ar
    return 0 if ar is None else ar


@frontend()
def histograms(c, src, preg, bin_type=None, hist_type=None):
    """dst += the histogram of src's bytes (values 0..127, BIN1: 128..255); FREQUENCY counts each value,
    ACCUMULATE (default) counts the values up to it (dst: the register assigned to, read first)."""
    a = c.want_reg(src, "src")
    t = _target(c, "vf.histograms")
    d = c.reg(t.dtype)
    high = c.const(bin_type, ENUMS["BinType"], "bin_type", "BIN0") == "BIN1"
    cumulative = c.const(hist_type, ENUMS["HistType"], "hist_type", "ACCUMULATE") == "ACCUMULATE"
    c.emit("vf_hist", dst=d.ref, a=a.ref, acc=t.ref, mask=c.want_mask(preg, "preg"), high=high,
           cumulative=cumulative)
    return d


# ----------------------------------------------------------------------------- gather, scatter
@frontend()
def gather(c, src, index, preg=None, data_copy_mode=None):
    """Tile form: dst[i] = the element ``index[i]`` past ``src`` (selected lanes; others 0).  Register
    form: dst[i] = src[index[i]]."""
    idx = c.want_reg(index, "index")
    if isinstance(src, Reg):
        d = c.reg(src.dtype)
        c.emit("vf_gather_reg", dst=d.ref, src=src.ref, index=idx.ref)
        return d
    block = c.const(data_copy_mode, DataCopyMode, "data_copy_mode", "NORM") != "NORM"
    base, off = c.address(src, what="src")
    pair = (base.dtype.nbytes, idx.dtype.nbytes)
    if idx.dtype.is_float() or idx.dtype.is_signed_int():
        raise c.error(f"gather indices must be unsigned integers, got {idx.dtype.name}")
    if block and idx.dtype != dt.DT_UINT32:
        raise c.error(f"DATA_BLOCK_LOAD gather takes UINT32 byte offsets, got {idx.dtype.name} indices")
    if not block and pair not in ((1, 2), (2, 2), (2, 4), (4, 4)):
        raise c.not_implemented(f"gather of {base.dtype.name} with {idx.dtype.name} indices")
    dtype = base.dtype
    if not block and pair == (1, 2):  # 8-bit data arrives zero-extended in 16-bit lanes
        dtype = dt.DT_INT16 if base.dtype == dt.DT_INT8 else dt.DT_UINT16
    d = c.reg(dtype)
    c.emit("vf_gather", dst=d.ref, src=base, offset=off, index=idx.ref, mask=c.want_mask(preg, "preg"), block=block)
    return d


@frontend()
def scatter(c, tile, src, index, preg):
    """UB element ``index[i]`` past ``tile`` = src[i] for the selected lanes."""
    a, idx = c.want_reg(src, "src"), c.want_reg(index, "index")
    if a.dtype.nbytes != idx.dtype.nbytes:
        raise c.not_implemented(f"scatter of {a.dtype.name} with {idx.dtype.name} indices")
    base, off = c.address(tile)
    c.emit("vf_scatter", dst=base, offset=off, src=a.ref, index=idx.ref, mask=c.want_mask(preg, "preg", False))


# ----------------------------------------------------------------------------- addresses, unaligned transfers
@frontend()
def create_addr_reg(c, index0, stride0, index1=None, stride1=None, index2=None, stride2=None, index3=None,
                    stride3=None, dtype=None):
    """An AddrReg: offset = index0 * stride0 + ... (elements of ``dtype``, default FP32)."""
    off = 0
    for i, s in ((index0, stride0), (index1, stride1), (index2, stride2), (index3, stride3)):
        if i is None and s is None:
            continue
        if i is None or s is None:
            raise c.error("each index needs its stride")
        off = c.add(off, c.p.binop("*", c.scalar(i, "index"), c.scalar(s, "stride"), c.node))
    return AddrReg(off, dtype or dt.DT_FP32)


def _post_advance(c, tile, step_elems) -> None:
    c.advance(tile, step_elems)


@frontend()
def load(c, tile, stride=None, post_update=False, repeat_stride=None, count=None):
    """A register of consecutive elements at ``tile`` (any element-aligned address); post_update advances
    the pointer by ``stride`` elements (default one register)."""
    if count is not None:
        raise c.not_implemented("vf.load with count=")
    base, off = c.address(tile, cursor=post_update)
    d = c.reg(base.dtype)
    c.emit("vf_load", dst=d.ref, src=base, offset=off, dist="U")
    if post_update:
        _post_advance(c, tile, c.scalar(stride if stride is not None else 256 // base.dtype.nbytes, "stride"))
    return d


@frontend()
def store(c, tile, src, count=None, post_update=False, repeat_stride=0):
    """The first ``count`` lanes (default all) of ``src`` at ``tile`` (any element-aligned address);
    post_update advances the pointer past them."""
    a = c.want_reg(src, "src")
    base, off = c.address(tile, cursor=post_update)
    n = c.scalar(count, "count") if count is not None else 256 // a.dtype.nbytes
    c.emit("vf_store", dst=base, src=a.ref, offset=off, mask=None, block_stride=None, dist="U", count=n)
    if post_update:
        _post_advance(c, tile, c.p.binop("//", c.p.binop("*", n, a.dtype.nbytes, c.node), base.dtype.nbytes, c.node))


@frontend()
def load_unalign_init(c):
    """The buffer register of unaligned loads."""
    return UnalignReg("load")


@frontend()
def unalign_reg_for_store(c):
    """The buffer register of unaligned stores."""
    return UnalignReg("store")


def _split(c, a, b, kind: str):
    """(tile, ureg) from arguments given in either order."""
    if isinstance(a, UnalignReg):
        a, b = b, a
    if not isinstance(b, UnalignReg) or b.kind != kind:
        raise c.error(f"expects a register from vf.{'load_unalign_init' if kind == 'load' else 'unalign_reg_for_store'}()")
    return a, b


@frontend()
def load_unalign_pre(c, align_reg, tile):
    """Prepare unaligned loads from ``tile`` (the buffering leaves the values unchanged: nothing to do)."""
    t, _ = _split(c, align_reg, tile, "load")
    c.address(t)


@frontend()
def load_unalign(c, tile, align_reg, stride=None, post_update=False):
    """One register of consecutive elements from an unaligned address; post_update advances the pointer
    by ``stride`` bytes (default one register)."""
    t, _ = _split(c, tile, align_reg, "load")
    base, off = c.address(t, cursor=post_update or stride is not None)
    d = c.reg(base.dtype)
    c.emit("vf_load", dst=d.ref, src=base, offset=off, dist="U")
    if post_update:
        nbytes = c.scalar(stride if stride is not None else 256, "stride")
        _post_advance(c, t, c.p.binop("//", nbytes, base.dtype.nbytes, c.node))
    return d


@frontend()
def store_unalign(c, tile, src, align_reg, stride=None, post_update=False):
    """``stride`` lanes of ``src`` (default: the AR count of the latest squeeze(STORE_REG), else one
    register) at an unaligned address; post_update advances the pointer past them.  Decision: the data
    is written here, so store_unalign_post has nothing left to write."""
    t, _ = _split(c, tile, align_reg, "store")
    a = c.want_reg(src, "src")
    base, off = c.address(t, cursor=True)  # unaligned stores always go through the cursor
    ar = state(c.p).ar
    if stride is not None:
        n = c.scalar(stride, "stride")
    elif ar is not None:
        n = c.p.binop("//", ar, a.dtype.nbytes, c.node)
    else:
        n = 256 // a.dtype.nbytes
    c.emit("vf_store", dst=base, src=a.ref, offset=off, mask=None, block_stride=None, dist="U", count=n)
    if post_update:
        _post_advance(c, t, c.p.binop("//", c.p.binop("*", n, a.dtype.nbytes, c.node), base.dtype.nbytes, c.node))


@frontend()
def store_unalign_post(c, tile, align_reg, stride=None, post_update=False):
    """Finish a run of unaligned stores (store_unalign already wrote everything)."""
    t, _ = _split(c, tile, align_reg, "store")
    c.address(t)


MORE = {f.__name__: f for f in (mull, addc, subc, bit_cast, axpy, muls_cast, pair_reduce_sum, squeeze, unsqueeze, pack, unpack,
                                mask_gen_with_reg_tensor, get_mask_spr, clear_spr, get_spr, histograms, gather,
                                scatter, create_addr_reg, load, store, load_unalign_init, unalign_reg_for_store,
                                load_unalign_pre, load_unalign, store_unalign, store_unalign_post)}
