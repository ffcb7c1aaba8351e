"""Register-level (Reg/VF API) ops: reference semantics of ``vf.*`` on vector and mask registers.

A vector register (RegTensor) is a 256-byte tile ``[1, 256 / elem_bytes]`` in the per-core ``Reg``
memory space; a mask register (MaskReg) is a ``[1, 256]`` UINT8 tile there holding one 0/1 byte per
predicate bit (256 bits, one per register byte).  An op on elements of ``b`` bytes uses bit
``i * b`` for element ``i`` (``create_mask``/``update_mask``/compares set all ``b`` bits of an
element).  The public ``vf.*`` functions (``pypto_pro.language.vf``) allocate registers and emit
these internal ops; every backend is driven by them (interp: ``run`` here, cpu: ``emit_vf``).

Masked-off lanes of a result are 0 (``MergeMode.ZEROING``) or keep the destination's old value
(``MERGING``).  Arithmetic reuses the element functions of the memory-level ops (``binary_values``,
``unary_values``, ``cast_values``), so a VF op computes exactly what the same ``pl.*`` op does.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import TileRef
from ..ir.optable import Arg, In, Out, op
from ..ir.types import RoundMode
from .casting import cast_values
from .common import write_result
from .vector import binary_values, unary_values

VL = 256  #: register length in bytes (Ascend 950)
BLOCK = 32  #: a DataBlock in bytes

# ----------------------------------------------------------------------------- helpers


def unchecked(c, a) -> None:
    """The static check of a register op: none of its own (the ``vf.*`` functions of
    ``pypto_pro.language.vf`` choose the registers and arguments of the ops they emit)."""
    return None


def vf_op(name: str, params, alias: str, check=unchecked, **kw):
    """Declare the register op ``name`` on its ``run(ctx, a)`` function: an internal op of the V pipe,
    named ``alias`` in messages (every ``vf_*`` op of this module and of :mod:`.vf_more`)."""
    return op(name, params, "V", internal=True, aliases=(alias,), check=check, **kw)


def lanes(dtype: dt.DataType) -> int:
    return VL // dtype.nbytes


def reg_read(ctx, ref) -> np.ndarray:
    """A register's lanes in the compute dtype (1-D)."""
    return ctx.tile(ref).read_compute().reshape(-1)


def reg_write(ctx, ref, values) -> None:
    view = ctx.tile(ref)
    write_result(view, np.asarray(values).reshape(1, -1))


def mask_bits(ctx, ref) -> np.ndarray:
    return ctx.tile(ref).read().reshape(-1) != 0


def active(ctx, mask, dtype: dt.DataType) -> np.ndarray:
    """Which of the lanes of a ``dtype`` register the mask selects (all when there is no mask)."""
    n = lanes(dtype)
    if mask is None:
        return np.ones(n, dtype=bool)
    return mask_bits(ctx, mask)[::dtype.nbytes][:n]


def merged(ctx, dst, values, on: np.ndarray, merge: bool) -> np.ndarray:
    """Masked-off lanes: 0 (zeroing) or the destination's old value (merging)."""
    if merge:
        old = ctx.tile(dst).read_unreported(1, lanes(dst.dtype)).reshape(-1).astype(dst.dtype.compute_np_dtype)
    else:
        old = np.zeros(len(on), dtype=np.asarray(values).dtype)
    return np.where(on, values, old)


def ub_view(ctx, ref, elem_offset, dtype: dt.DataType, count: int, what: str):
    """``count`` elements of ``dtype`` starting ``elem_offset`` elements (of the tile's dtype) past the
    tile's first element: a flat view of UB bytes, as a register load/store addresses them (a view of
    the same memory as ``ctx.tile(ref)``)."""
    base = ctx.tile(ref)
    es = base.dtype.nbytes
    addr = base.addr + int(base.offsets.item(0, 0)) * es + int(ctx.scalar(elem_offset)) * es
    if addr < 0:
        raise ctx.error(f"{what}: address {addr} is below the start of {base.space.name}")
    return base.flat(addr, dtype, count, f"{base.name}+{addr - base.addr}B")


def require_aligned(ctx, view, align: int, what: str) -> None:
    if view.addr % align:
        raise ctx.error(f"{what}: UB address {view.addr} is not {align}-byte aligned")


def _writes_in_runs(view, values: np.ndarray, on: np.ndarray) -> None:
    """Store the selected elements only, one write per contiguous run (the simulator sees exact bytes)."""
    n = len(on)
    i = 0
    while i < n:
        if not on[i]:
            i += 1
            continue
        j = i
        while j < n and on[j]:
            j += 1
        view.sub(0, 1, i, j, (1, j - i)).write(values[i:j].reshape(1, -1))
        i = j


# ----------------------------------------------------------------------------- masks
#: pattern name -> selected lanes of n (the MaskPattern page)
def pattern_lanes(pattern: str, n: int) -> np.ndarray:
    idx = np.arange(n)
    if pattern == "ALL":
        return np.ones(n, dtype=bool)
    if pattern == "ALLF":
        return np.zeros(n, dtype=bool)
    if pattern.startswith("VL"):
        return idx < int(pattern[2:])
    if pattern == "H":
        return idx < n // 2
    if pattern == "Q":
        return idx < n // 4
    if pattern in ("M3", "M4"):
        return idx % int(pattern[1]) == 0
    raise NotImplementedError(f"vf.create_mask pattern {pattern}")


def lanes_to_bits(on: np.ndarray, nbytes: int) -> np.ndarray:
    return np.repeat(on, nbytes).astype(np.uint8)


@vf_op("vf_create_mask", [Out("dst"), Arg("pattern"), Arg("dtype")], "Vf.create_mask")
def _create_mask(ctx, a):
    """dst = the mask of ``pattern`` at the element width of ``dtype``."""
    d = a["dtype"]
    reg_write(ctx, a["dst"], lanes_to_bits(pattern_lanes(a["pattern"], lanes(d)), d.nbytes))


@vf_op("vf_update_mask", [Out("dst"), Arg("count", "scalar"), Arg("dtype")], "Vf.update_mask")
def _update_mask(ctx, a):
    """dst = the first min(count, lanes) elements of ``dtype`` (count < 0 selects none)."""
    d = a["dtype"]
    n = int(ctx.scalar(a["count"]))
    reg_write(ctx, a["dst"], lanes_to_bits(np.arange(lanes(d)) < n, d.nbytes))


_MASK_LOGIC = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


@vf_op("vf_mask_logic", [Out("dst"), In("a"), Arg("fn"), In("b", "tile", default=None),
                         In("mask", "tile", default=None)], "Vf.mask_logic")
def _mask_logic(ctx, a):
    """dst = a <fn> b bit by bit (``not``: ~a), bits outside ``mask`` cleared; ``sel``: a where ``mask``, else b."""
    x = mask_bits(ctx, a["a"])
    if a["fn"] == "sel":  # a where the mask bit is set, else b
        r = np.where(mask_bits(ctx, a["mask"]), x, mask_bits(ctx, a["b"]))
    else:
        r = ~x if a["fn"] == "not" else _MASK_LOGIC[a["fn"]](x, mask_bits(ctx, a["b"]))
        if a["mask"] is not None:
            r = r & mask_bits(ctx, a["mask"])
    reg_write(ctx, a["dst"], r.astype(np.uint8))


# ----------------------------------------------------------------------------- element-wise
def _lanewise(name):
    """Element function of a binary VF op on compute values."""
    if name == "max":
        return lambda ctx, x, y, d: binary_values(ctx, "maximum", x, y, d)
    if name == "min":
        return lambda ctx, x, y, d: binary_values(ctx, "minimum", x, y, d)
    if name == "xor":
        return lambda ctx, x, y, d: np.bitwise_xor(x, y)
    if name == "exp_sub":
        return lambda ctx, x, y, d: unary_values("exp", (x - y).astype(x.dtype))
    if name == "abs_sub":
        return lambda ctx, x, y, d: np.abs((x - y).astype(x.dtype))
    if name in ("lrelu", "prelu"):  # x >= 0 ? x : x * y (y a scalar / a register)
        return lambda ctx, x, y, d: np.where(x >= 0, x, (x * y).astype(x.dtype))
    if name in ("vshl", "vshr"):
        return lambda ctx, x, y, d: register_shift(x, y, d, name == "vshl")
    return lambda ctx, x, y, d: binary_values(ctx, name, x, y, d)


def register_shift(x: np.ndarray, amount, d: dt.DataType, left: bool) -> np.ndarray:
    """Shift by per-lane amounts (the reg_tensor form of vf.shift_left / shift_right): amounts are
    unsigned, so a negative amount counts as >= the width (the pages leave it undefined); shifting by
    the width or more gives 0, or -1 for a right shift of a negative signed value."""
    bits = 8 * d.nbytes
    u = np.dtype(f"u{d.nbytes}")
    amt = np.asarray(amount).astype(np.int64).astype(np.uint64)
    big = amt >= bits
    a = np.where(big, 0, amt).astype(np.uint64)
    xs = x.astype(d.require_numpy())
    if left:
        r = (xs.view(u).astype(np.uint64) << a).astype(u).view(xs.dtype)
        return np.where(big, 0, r).astype(x.dtype)
    if d.kind == "uint":
        r = (xs.astype(np.uint64) >> a).astype(xs.dtype)
        return np.where(big, 0, r).astype(x.dtype)
    r = (xs.astype(np.int64) >> a.astype(np.int64)).astype(xs.dtype)
    return np.where(big, np.where(xs < 0, -1, 0), r).astype(x.dtype)


BITWISE_FNS = ("band", "bor", "bxor", "bnot")


def bitwise(fn: str, x: np.ndarray, y) -> np.ndarray:
    """Bitwise and / or / xor / not on the lanes' bits (any dtype: floats by their bit patterns)."""
    u = np.dtype(f"u{x.dtype.itemsize}")
    a = x.view(u)
    if fn == "bnot":
        return (~a).view(x.dtype)
    b = np.asarray(y, dtype=x.dtype).view(u)
    return {"band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}[fn](a, b).view(x.dtype)


BINARY_FNS = ("add", "sub", "mul", "div", "max", "min", "and_", "or_", "xor", "exp_sub", "abs_sub", "shl", "shr",
              "lrelu", "prelu", "vshl", "vshr") + BITWISE_FNS


@vf_op("vf_binary", [Out("dst"), In("a"), In("b", "tile_or_scalar"), Arg("fn"), In("mask", "tile", default=None),
                     Arg("merge", default=False)], "Vf.binary")
def _binary(ctx, a):
    """dst = a <fn> b lane by lane (b a register or a scalar), masked."""
    d = a["dst"].dtype
    if a["fn"] in BITWISE_FNS:
        _run_bitwise(ctx, a)
        return
    x = reg_read(ctx, a["a"])
    b = a["b"]
    if isinstance(b, TileRef):
        y = reg_read(ctx, b)
    else:
        y = np.asarray(ctx.scalar(b)).astype(d.require_numpy()).astype(d.compute_np_dtype)[()]
    with np.errstate(all="ignore"):
        r = _lanewise(a["fn"])(ctx, x, y, d)
    on = active(ctx, a["mask"], d)
    reg_write(ctx, a["dst"], merged(ctx, a["dst"], np.asarray(r, dtype=x.dtype), on, a["merge"]))


def _run_bitwise(ctx, a) -> None:
    """vf_binary with a bitwise fn: on the storage bits of the lanes (b: a register, a scalar or None)."""
    d = a["dst"].dtype
    x = ctx.tile(a["a"]).read().reshape(-1)
    b = a["b"]
    if isinstance(b, TileRef):
        y = ctx.tile(b).read().reshape(-1)
    elif b is None:
        y = None
    else:
        y = np.asarray(ctx.scalar(b)).astype(d.require_numpy())
    r = bitwise(a["fn"], x, y)
    on = active(ctx, a["mask"], d)
    old = ctx.tile(a["dst"]).read_unreported(1, lanes(d)).reshape(-1) if a["merge"] else np.zeros_like(r)
    ctx.tile(a["dst"]).write(np.where(on, r, old).reshape(1, -1))


@vf_op("vf_fma", [Out("dst"), In("a"), In("b", "tile_or_scalar"), In("c"), In("mask", "tile", default=None)],
       "Vf.mul_add_dst")
def _fma(ctx, a):
    """dst = a * b + c, two roundings (mul then add), masked (zeroing); b a register or a scalar (axpy)."""
    d = a["dst"].dtype
    x, z = reg_read(ctx, a["a"]), reg_read(ctx, a["c"])
    b = a["b"]
    y = reg_read(ctx, b) if isinstance(b, TileRef) else \
        np.asarray(ctx.scalar(b)).astype(d.require_numpy()).astype(d.compute_np_dtype)[()]
    with np.errstate(all="ignore"):
        r = binary_values(ctx, "add", binary_values(ctx, "mul", x, y, d).astype(x.dtype), z, d)
    reg_write(ctx, a["dst"], merged(ctx, a["dst"], r, active(ctx, a["mask"], d), False))


_UNARY_EXTRA = {
    "log2": lambda x: np.log2(x.astype(np.float64)).astype(x.dtype),
    "log10": lambda x: np.log10(x.astype(np.float64)).astype(x.dtype),
    "truncate": np.trunc,
    "copy": lambda x: x,
}
UNARY_FNS = ("abs", "exp", "sqrt", "neg", "relu", "not_", "log", "rsqrt", "recip") + tuple(_UNARY_EXTRA)


@vf_op("vf_unary", [Out("dst"), In("a"), Arg("fn"), In("mask", "tile", default=None), Arg("merge", default=False)],
       "Vf.unary")
def _unary(ctx, a):
    """dst = fn(a) lane by lane, masked."""
    d = a["dst"].dtype
    x = reg_read(ctx, a["a"])
    fn = a["fn"]
    with np.errstate(all="ignore"):
        r = _UNARY_EXTRA[fn](x) if fn in _UNARY_EXTRA else unary_values(fn, x)
    reg_write(ctx, a["dst"], merged(ctx, a["dst"], np.asarray(r, dtype=x.dtype), active(ctx, a["mask"], d),
                                    a["merge"]))


@vf_op("vf_dup", [Out("dst"), In("value", "tile_or_scalar"), In("mask", "tile", default=None),
                  Arg("highest", default=False), Arg("merge", default=False)], "Vf.full")
def _dup(ctx, a):
    """dst = the scalar, or the lowest / highest lane of a register, on every selected lane."""
    d = a["dst"].dtype
    v = a["value"]
    if isinstance(v, TileRef):
        src = reg_read(ctx, v)
        x = src[-1] if a["highest"] else src[0]
    else:
        x = np.asarray(ctx.scalar(v)).astype(d.require_numpy()).astype(d.compute_np_dtype)[()]
    vals = np.full(lanes(d), x, dtype=d.compute_np_dtype)
    reg_write(ctx, a["dst"], merged(ctx, a["dst"], vals, active(ctx, a["mask"], d), a["merge"]))


@vf_op("vf_arange", [Out("dst"), Arg("start", "scalar"), Arg("descending", default=False)], "Vf.arange")
def _arange(ctx, a):
    """dst[i] = start + i; descending: the same values in reverse lane order, dst[i] = start + (n - 1 - i)
    (the reference page's measured result; docs/language.md "vf.arange")."""
    d = a["dst"].dtype
    n = lanes(d)
    start = np.asarray(ctx.scalar(a["start"])).astype(d.require_numpy()).astype(d.compute_np_dtype)[()]
    step = np.arange(n)[::-1 if a["descending"] else 1].astype(d.compute_np_dtype)
    with np.errstate(all="ignore"):
        reg_write(ctx, a["dst"], start + step)


# ----------------------------------------------------------------------------- reductions, compare, select
def tree_reduce(values: np.ndarray, fn: str) -> np.ndarray:
    """Pairwise (binary tree) reduction of adjacent lanes, in the compute dtype."""
    v = values
    while len(v) > 1:
        a, b = v[0::2], v[1::2]
        with np.errstate(all="ignore"):
            if fn == "sum":
                v = (a + b).astype(values.dtype)
            elif fn == "max":
                v = np.maximum(a, b)
            else:
                v = np.minimum(a, b)
    return v[0]


@vf_op("vf_reduce", [Out("dst"), In("a"), Arg("fn"), In("mask", "tile", default=None), Arg("group", default=0)],
       "Vf.reduce")
def _reduce(ctx, a):
    """dst[0] = sum / max / min of the selected lanes (a binary tree over adjacent lanes), the rest 0.
    Unselected lanes count as 0 (sum), -inf (max) or +inf (min).  ``group`` > 0 (datablock=True): each
    run of ``group`` lanes (one 32-byte DataBlock) is reduced on its own into its first lane;
    ``group`` = -2 (pair_reduce_sum): dst[i] = a[2i] + a[2i+1] for the lower half, the upper half 0."""
    d = a["dst"].dtype
    x = reg_read(ctx, a["a"])
    on = active(ctx, a["mask"], d)
    fn = a["fn"]
    if fn == "sum":
        ident = 0
    elif d.is_float():
        ident = -np.inf if fn == "max" else np.inf
    else:
        info = np.iinfo(x.dtype)
        ident = info.min if fn == "max" else info.max
    v = np.where(on, x, np.asarray(ident, dtype=x.dtype))
    out = np.zeros(len(x), dtype=x.dtype)
    g = a["group"]
    if g == -2:
        with np.errstate(all="ignore"):
            out[:len(x) // 2] = (v[0::2] + v[1::2]).astype(x.dtype)
    elif g > 0:
        for k in range(0, len(x), g):
            out[k] = tree_reduce(v[k:k + g], fn)
    else:
        out[0] = tree_reduce(v, fn)
    reg_write(ctx, a["dst"], out)


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


@vf_op("vf_compare", [Out("dst"), In("a"), In("b", "tile_or_scalar"), Arg("fn"), In("mask", "tile", default=None)],
       "Vf.compare")
def _compare(ctx, a):
    """dst (mask) = a <fn> b on the selected lanes (all bits of an element), 0 elsewhere."""
    d = a["a"].dtype
    x = reg_read(ctx, a["a"])
    b = a["b"]
    y = reg_read(ctx, b) if isinstance(b, TileRef) else \
        np.asarray(ctx.scalar(b)).astype(d.require_numpy()).astype(d.compute_np_dtype)[()]
    r = _CMP[a["fn"]](x, y) & active(ctx, a["mask"], d)
    reg_write(ctx, a["dst"], lanes_to_bits(r, d.nbytes))


@vf_op("vf_select", [Out("dst"), In("a"), In("b"), In("mask")], "Vf.select")
def _select(ctx, a):
    """dst = a where the mask selects the lane, else b."""
    d = a["dst"].dtype
    reg_write(ctx, a["dst"], np.where(active(ctx, a["mask"], d), reg_read(ctx, a["a"]), reg_read(ctx, a["b"])))


# ----------------------------------------------------------------------------- conversion, permutation
@vf_op("vf_cast", [Out("dst"), In("a"), Arg("mode"), In("mask", "tile", default=None), Arg("part", default=0),
                   Arg("saturate", default=True)], "Vf.astype")
def _cast(ctx, a):
    """dst = a converted to dst's dtype.  Between widths, the narrow elements sit at lanes
    ``k * i + part`` (k the width ratio, CastLayout ZERO/ONE/... = part); other lanes are 0."""
    s_t, d_t = a["a"].dtype, a["dst"].dtype
    src = ctx.tile(a["a"]).read().reshape(-1)
    on = active(ctx, a["mask"], s_t)
    part, mode = a["part"], RoundMode(a["mode"])
    n_s, n_d = lanes(s_t), lanes(d_t)
    out = np.zeros(n_d, dtype=d_t.require_numpy())
    if n_s == n_d:
        idx_s = idx_d = np.arange(n_s)
    elif n_s > n_d:  # widening: source lanes k*i + part -> i
        k = n_s // n_d
        idx_d = np.arange(n_d)
        idx_s = idx_d * k + part
    else:  # narrowing: i -> k*i + part
        k = n_d // n_s
        idx_s = np.arange(n_s)
        idx_d = idx_s * k + part
    conv = cast_values(src[idx_s], s_t, d_t, mode)
    out[idx_d] = np.where(on[idx_s], conv, np.zeros(1, dtype=out.dtype))
    ctx.tile(a["dst"]).write(out.reshape(1, -1))


@vf_op("vf_permute", [Out("dst0"), Out("dst1"), In("a"), In("b"), Arg("interleave"), Arg("width", default=0)],
       "Vf.de_interleave")
def _permute(ctx, a):
    """(dst0, dst1) from the 2*lanes elements a ++ b: de-interleave = (evens, odds); interleave =
    a[0] b[0] a[1] b[1] ... split in halves.  ``width`` > 0: mask registers, whose predicate bytes move
    in lanes of ``width`` bytes (the ``dtype`` given to the VF call)."""
    x = ctx.tile(a["a"]).read().reshape(-1)
    y = ctx.tile(a["b"]).read().reshape(-1)
    if a["width"]:
        lane = np.dtype(f"<u{a['width']}")
        x, y = x.view(lane), y.view(lane)
    if a["interleave"]:
        z = np.empty(2 * len(x), dtype=x.dtype)
        z[0::2], z[1::2] = x, y
        lo, hi = z[:len(x)], z[len(x):]
    else:
        z = np.concatenate([x, y])
        lo, hi = z[0::2], z[1::2]
    if a["width"]:
        lo, hi = np.ascontiguousarray(lo).view(np.uint8), np.ascontiguousarray(hi).view(np.uint8)
    ctx.tile(a["dst0"]).write(lo.reshape(1, -1))
    ctx.tile(a["dst1"]).write(hi.reshape(1, -1))


# ----------------------------------------------------------------------------- UB <-> register
LOAD_DISTS = ("NORM", "BRC", "DS", "US", "UNPK", "U", "BLK")


@vf_op("vf_load", [Out("dst"), In("src"), Arg("offset", "scalar"), Arg("dist", default="NORM")], "Vf.load_align")
def _load(ctx, a):
    """dst = UB elements at ``offset`` (elements of the tile's dtype past its first element).
    NORM: one register of consecutive elements (32-byte aligned); BRC: one element broadcast;
    US: lanes/2 elements each repeated twice; DS: 2*lanes elements, every other one kept;
    UNPK: lanes/2 elements, each followed by a 0; U: like NORM at any element-aligned address (vf.load,
    vf.load_unalign); BLK: one 32-byte DataBlock repeated 8 times."""
    d = a["dst"].dtype
    n = lanes(d)
    dist = a["dist"]
    what = "vf.load_align"
    if dist == "BRC":
        v = ub_view(ctx, a["src"], a["offset"], d, 1, what)
        require_aligned(ctx, v, d.nbytes, what)
        vals = np.repeat(v.read().reshape(-1), n)
    elif dist == "NORM":
        v = ub_view(ctx, a["src"], a["offset"], d, n, what)
        require_aligned(ctx, v, BLOCK, what)
        vals = v.read().reshape(-1)
    elif dist == "US":
        v = ub_view(ctx, a["src"], a["offset"], d, n // 2, what)
        vals = np.repeat(v.read().reshape(-1), 2)
    elif dist == "DS":
        v = ub_view(ctx, a["src"], a["offset"], d, 2 * n, what)
        require_aligned(ctx, v, BLOCK, what)
        vals = v.read().reshape(-1)[0::2]
    elif dist == "U":  # vf.load / vf.load_unalign: one register of consecutive elements, any address
        v = ub_view(ctx, a["src"], a["offset"], d, n, what)
        require_aligned(ctx, v, d.nbytes, what)
        vals = v.read().reshape(-1)
    elif dist == "BLK":  # one DataBlock repeated over the register
        v = ub_view(ctx, a["src"], a["offset"], d, BLOCK // d.nbytes, what)
        require_aligned(ctx, v, BLOCK, what)
        vals = np.tile(v.read().reshape(-1), VL // BLOCK)
    else:  # UNPK
        v = ub_view(ctx, a["src"], a["offset"], d, n // 2, what)
        vals = np.zeros(n, dtype=d.require_numpy())
        vals[0::2] = v.read().reshape(-1)
    ctx.tile(a["dst"]).write(np.ascontiguousarray(vals).reshape(1, -1))


@vf_op("vf_load2", [Out("dst0"), Out("dst1"), In("src"), Arg("offset", "scalar")], "Vf.load_align_dintlv")
def _load_deinterleave(ctx, a):
    """(dst0, dst1) = even / odd elements of 2*lanes consecutive UB elements (LoadDist.DINTLV_*)."""
    d = a["dst0"].dtype
    v = ub_view(ctx, a["src"], a["offset"], d, 2 * lanes(d), "vf.load_align")
    require_aligned(ctx, v, BLOCK, "vf.load_align")
    z = v.read().reshape(-1)
    ctx.tile(a["dst0"]).write(np.ascontiguousarray(z[0::2]).reshape(1, -1))
    ctx.tile(a["dst1"]).write(np.ascontiguousarray(z[1::2]).reshape(1, -1))


@vf_op("vf_store", [Out("dst"), In("src"), Arg("offset", "scalar"), In("mask", "tile", default=None),
                    Arg("block_stride", "scalar", default=None), Arg("dist", default="NORM"),
                    Arg("count", "scalar", default=None)], "Vf.store_align")
def _store(ctx, a):
    """UB at ``offset`` = the selected lanes of src.  NORM: consecutive elements; DataBlock mode (block_stride set): the
    8 32-byte blocks of src go ``block_stride`` blocks apart, a block stored when any of its mask bits is set.
    PACK / PACK4: the low half / quarter of each selected element's bytes, element i at i * width / 2 (/ 4);
    FIRST: element 0 only (no mask); U: the first ``count`` elements at any element-aligned address
    (vf.store, vf.store_unalign)."""
    s = a["src"].dtype
    what = "vf.store_align"
    raw = ctx.tile(a["src"]).read().reshape(-1)
    bits = np.ones(VL, dtype=bool) if a["mask"] is None else mask_bits(ctx, a["mask"])
    if a["block_stride"] is not None:
        stride = int(ctx.scalar(a["block_stride"]))
        nb = BLOCK // s.nbytes
        for k in range(VL // BLOCK):
            if not bits[k * BLOCK:(k + 1) * BLOCK].any():
                continue
            first = ub_view(ctx, a["dst"], a["offset"], s, 1, what)
            require_aligned(ctx, first, BLOCK, what)
            off = ctx.scalar(a["offset"]) + k * stride * BLOCK // ctx.tile(a["dst"]).dtype.nbytes
            ub_view(ctx, a["dst"], off, s, nb, what).write(raw[k * nb:(k + 1) * nb].reshape(1, -1))
        return
    n = lanes(s)
    on = bits[::s.nbytes][:n]
    dist = a["dist"]
    if dist in ("PACK", "PACK4"):
        w = s.nbytes // (2 if dist == "PACK" else 4)
        if w < 1:
            raise ctx.error(f"{what}: dist={dist} needs elements of at least {2 if dist == 'PACK' else 4} bytes")
        part = raw.view(np.uint8).reshape(n, s.nbytes)[:, :w].copy().view(f"<u{w}").reshape(-1)
        v = ub_view(ctx, a["dst"], a["offset"], dt.from_numpy(part.dtype), n, what)
        require_aligned(ctx, v, BLOCK, what)
        _writes_in_runs(v, part, on)
        return
    if dist == "FIRST":
        v = ub_view(ctx, a["dst"], a["offset"], s, 1, what)
        require_aligned(ctx, v, s.nbytes, what)
        v.write(raw[:1].reshape(1, 1))
        return
    if dist == "U":
        count = n if a["count"] is None else int(ctx.scalar(a["count"]))
        if not 0 <= count <= n:
            raise ctx.error(f"{what}: count {count} is outside [0, {n}]")
        if count == 0:
            return
        v = ub_view(ctx, a["dst"], a["offset"], s, count, what)
        require_aligned(ctx, v, s.nbytes, what)
        _writes_in_runs(v, raw[:count], on[:count])
        return
    v = ub_view(ctx, a["dst"], a["offset"], s, n, what)
    require_aligned(ctx, v, BLOCK, what)
    _writes_in_runs(v, raw, on)


@vf_op("vf_mem_bar", [Arg("mode", default="VV_ALL")], "Vf.mem_bar")
def _mem_bar(ctx, a):
    """Orders register loads and stores inside a VF function.  Every backend runs a VF function's
    statements in program order, so the barrier has no effect here (it is kept in the IR)."""
    return None


#: register loads read a whole register (or two) of UB; lanes outside the valid data are harmless unless a
#: mask selects them, so the simulator does not report never-written bytes these ops read
SPECULATIVE_READS = frozenset({"vf_load", "vf_load2"})

VF_OPS = ("vf_create_mask", "vf_update_mask", "vf_mask_logic", "vf_binary", "vf_fma", "vf_unary", "vf_dup",
          "vf_arange", "vf_reduce", "vf_compare", "vf_select", "vf_cast", "vf_permute", "vf_load", "vf_load2",
          "vf_store", "vf_mem_bar")
