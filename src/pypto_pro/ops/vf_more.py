"""More Reg/VF ops (see :mod:`pypto_pro.ops.vf` for registers, masks and addressing): widening
multiply, squeeze / unsqueeze, pack / unpack of registers and masks, mask loads and stores,
interleaved and DataBlock transfers, gather / scatter, masks from register bits, histograms.

Each op is the reference semantics the cpu backend (``pto/vf_more.h``) reproduces bit for bit.
Decisions where the official pages are silent are stated in the op docstrings.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out
from ..ir.types import RoundMode
from .casting import cast_values
from .vf import BLOCK, VL, active, lanes, lanes_to_bits, mask_bits, require_aligned, ub_view, vf_op, _writes_in_runs


def _raw(ctx, ref) -> np.ndarray:
    return ctx.tile(ref).read().reshape(-1)


def _put(ctx, ref, values) -> None:
    ctx.tile(ref).write(np.ascontiguousarray(values).reshape(1, -1))


def _uint(nbytes: int) -> np.dtype:
    return np.dtype(f"<u{nbytes}")


@vf_op("vf_mull", [Out("lo"), Out("hi"), In("a"), In("b"), In("mask", "tile", default=None)], "Vf.mull")
def _mull(ctx, a):
    """(lo, hi) = the low / high 32 bits of the exact 64-bit product of 32-bit integer lanes (signed
    operands give the signed product); unselected lanes 0."""
    d = a["lo"].dtype
    x, y = _raw(ctx, a["a"]).astype(np.int64), _raw(ctx, a["b"]).astype(np.int64)
    if d.kind == "uint":
        p = (x.astype(np.uint64) * y.astype(np.uint64))
        lo, hi = (p & 0xFFFFFFFF).astype(np.uint32), (p >> np.uint64(32)).astype(np.uint32)
    else:
        p = x * y  # |p| < 2**62: exact in int64
        lo = (p & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        hi = (p >> 32).astype(np.int32)
    on = active(ctx, a["mask"], d)
    _put(ctx, a["lo"], np.where(on, lo, 0).astype(lo.dtype))
    _put(ctx, a["hi"], np.where(on, hi, 0).astype(hi.dtype))


def _squeeze_check(c, a):
    return dt.DT_INT64


@vf_op("vf_squeeze", [Out("dst"), In("a"), In("mask")], "Vf.squeeze", check=_squeeze_check)
def _squeeze(ctx, a):
    """dst = the selected lanes of a, in order, from lane 0; the rest 0.  Result: how many lanes."""
    d = a["dst"].dtype
    x = _raw(ctx, a["a"])
    on = active(ctx, a["mask"], d)
    out = np.zeros_like(x)
    kept = x[on]
    out[:len(kept)] = kept
    _put(ctx, a["dst"], out)
    return int(len(kept))


@vf_op("vf_unsqueeze", [Out("dst"), In("mask")], "Vf.unsqueeze")
def _unsqueeze(ctx, a):
    """dst[0] = 0, dst[i] = dst[i-1] + mask[i-1]: each lane's count of selected lanes before it (the
    page's step-by-step rule; the top lane's bit counts for nothing)."""
    d = a["dst"].dtype
    on = active(ctx, a["mask"], d).astype(np.int64)
    out = np.concatenate([[0], np.cumsum(on)[:-1]])
    _put(ctx, a["dst"], out.astype(d.require_numpy()))


@vf_op("vf_pack", [Out("dst"), In("a"), Arg("upper", default=False)], "Vf.pack")
def _pack(ctx, a):
    """Register pack: the low half of each element's bits, into the lower (upper) half of dst; the other
    half of dst is 0."""
    s, d = a["a"].dtype, a["dst"].dtype
    x = _raw(ctx, a["a"])
    low = x.view(np.uint8).reshape(-1, s.nbytes)[:, :d.nbytes].copy().view(_uint(d.nbytes)).reshape(-1)
    out = np.zeros(lanes(d), dtype=_uint(d.nbytes))
    n = len(low)
    if a["upper"]:
        out[n:] = low
    else:
        out[:n] = low
    _put(ctx, a["dst"], out.view(d.require_numpy()))


@vf_op("vf_unpack", [Out("dst"), In("a"), Arg("upper", default=False)], "Vf.unpack")
def _unpack(ctx, a):
    """Register unpack: the lower (upper) half of a's lanes widened to dst's type (zero-extended from
    unsigned, sign-extended from signed sources)."""
    d = a["dst"].dtype
    x = _raw(ctx, a["a"])
    n = lanes(d)
    part = x[n:2 * n] if a["upper"] else x[:n]
    _put(ctx, a["dst"], part.astype(np.int64).astype(d.require_numpy()))


@vf_op("vf_mask_pack", [Out("dst"), In("a"), Arg("upper", default=False), Arg("unpack", default=False)], "Vf.mask_pack")
def _mask_pack(ctx, a):
    """Mask pack: the even bits of a into the lower (upper) half of dst, the other half 0.  Mask unpack:
    the lower (upper) half of a's bits, each doubled."""
    x = mask_bits(ctx, a["a"])
    out = np.zeros(VL, dtype=bool)
    half = VL // 2
    if a["unpack"]:
        out = np.repeat(x[half:] if a["upper"] else x[:half], 2)
    elif a["upper"]:
        out[half:] = x[0::2]
    else:
        out[:half] = x[0::2]
    _put(ctx, a["dst"], out.astype(np.uint8))


def _packed_bits(bits: np.ndarray) -> np.ndarray:
    return np.packbits(bits.astype(np.uint8), bitorder="little")


@vf_op("vf_mask_store", [Out("dst"), In("src"), Arg("offset", "scalar"), Arg("dist", default="NORM")], "Vf.mask_store")
def _mask_store(ctx, a):
    """UB = the mask's 256 bits packed 8 per byte, bit i in byte i // 8 at bit i % 8 (NORM: 32 bytes);
    PACK: the even bits only (16 bytes)."""
    bits = mask_bits(ctx, a["src"])
    if a["dist"] == "PACK":
        bits = bits[0::2]
    data = _packed_bits(bits)
    v = ub_view(ctx, a["dst"], a["offset"], dt.DT_UINT8, len(data), "vf.store_align")
    require_aligned(ctx, v, len(data), "vf.store_align")
    v.write(data.reshape(1, -1))


@vf_op("vf_mask_load", [Out("dst"), In("src"), Arg("offset", "scalar"), Arg("dist", default="NORM")], "Vf.mask_load")
def _mask_load(ctx, a):
    """mask = bits from UB (the packing of vf_mask_store).  NORM: 32 bytes; US: 16 bytes, every bit
    doubled; DS: 64 bytes, every other bit kept."""
    dist = a["dist"]
    nbytes = {"NORM": VL // 8, "US": VL // 16, "DS": VL // 4}[dist]
    v = ub_view(ctx, a["src"], a["offset"], dt.DT_UINT8, nbytes, "vf.load_align")
    require_aligned(ctx, v, min(BLOCK, nbytes), "vf.load_align")
    bits = np.unpackbits(v.read().reshape(-1).astype(np.uint8), bitorder="little").astype(bool)
    if dist == "US":
        bits = np.repeat(bits, 2)
    elif dist == "DS":
        bits = bits[0::2]
    _put(ctx, a["dst"], bits.astype(np.uint8))


@vf_op("vf_store2", [Out("dst"), In("a"), In("b"), Arg("offset", "scalar"), In("mask", "tile", default=None)],
       "Vf.store_align_intlv")
def _store2(ctx, a):
    """StoreDist.INTLV: a[0] b[0] a[1] b[1] ... (2 * VL bytes); lane i of both is written when the mask
    selects lane i."""
    s = a["a"].dtype
    x, y = _raw(ctx, a["a"]), _raw(ctx, a["b"])
    z = np.empty(2 * len(x), dtype=x.dtype)
    z[0::2], z[1::2] = x, y
    on = np.repeat(active(ctx, a["mask"], s), 2)
    v = ub_view(ctx, a["dst"], a["offset"], s, len(z), "vf.store_align")
    require_aligned(ctx, v, BLOCK, "vf.store_align")
    _writes_in_runs(v, z, on)


@vf_op("vf_load_blocks", [Out("dst"), In("src"), Arg("offset", "scalar"), Arg("block_stride", "scalar"),
                          In("mask", "tile", default=None)], "Vf.load_align_blocks")
def _load_blocks(ctx, a):
    """DataBlock load: register block k (32 bytes) = UB at ``offset + k * block_stride`` blocks when any of
    the mask's 32 bits of block k is set, else 0 (that block is not read)."""
    d = a["dst"].dtype
    base = ctx.tile(a["src"])
    stride = int(ctx.scalar(a["block_stride"]))
    bits = np.ones(VL, dtype=bool) if a["mask"] is None else mask_bits(ctx, a["mask"])
    nb = BLOCK // d.nbytes
    out = np.zeros(lanes(d), dtype=d.require_numpy())
    off0 = int(ctx.scalar(a["offset"]))
    for k in range(VL // BLOCK):
        if not bits[k * BLOCK:(k + 1) * BLOCK].any():
            continue
        off = off0 + k * stride * BLOCK // base.dtype.nbytes
        v = ub_view(ctx, a["src"], off, d, nb, "vf.load_align")
        require_aligned(ctx, v, BLOCK, "vf.load_align")
        out[k * nb:(k + 1) * nb] = v.read().reshape(-1)
    _put(ctx, a["dst"], out)


@vf_op("vf_gather", [Out("dst"), In("src"), Arg("offset", "scalar"), In("index"), In("mask", "tile", default=None),
                     Arg("block", default=False)], "Vf.gather")
def _gather(ctx, a):
    """Tile -> register gather.  Element mode: index lane i (lanes of the index register's width) names the
    UB element ``index[i]`` past the base (elements of the src tile's type); its bytes go to the low end of
    register lane i, the lane's other bytes are 0 (8-bit data under 16-bit indices, 16-bit data under 32-bit
    indices), for selected lanes; the rest 0.  ``block`` (DATA_BLOCK_LOAD): DataBlock j (32 bytes) of dst
    is the 32 UB bytes at byte offset ``index[j]`` (UINT32) past the base, where the mask selects its first
    byte."""
    isize = a["index"].dtype.nbytes
    idx = np.ascontiguousarray(_raw(ctx, a["index"])).view(_uint(isize)).astype(np.int64)
    bits = mask_bits(ctx, a["mask"]) if a["mask"] is not None else np.ones(VL, dtype=bool)
    base = ctx.tile(a["src"])
    esize = base.dtype.nbytes
    off0 = int(ctx.scalar(a["offset"]))
    out = np.zeros(VL, dtype=np.uint8)
    u8 = dt.DT_UINT8
    if a["block"]:
        for j in range(VL // BLOCK):
            if not bits[j * BLOCK]:
                continue
            if idx[j] % esize:
                raise ctx.error(f"vf.gather: DataBlock offset {idx[j]} is not a multiple of {esize} bytes")
            v = ub_view(ctx, a["src"], off0 + int(idx[j]) // esize, u8, BLOCK, "vf.gather")
            require_aligned(ctx, v, BLOCK, "vf.gather")
            out[j * BLOCK:(j + 1) * BLOCK] = v.read().reshape(-1)
    else:
        for i in np.nonzero(bits[::isize][:VL // isize])[0]:
            v = ub_view(ctx, a["src"], off0 + int(idx[i]), u8, esize, "vf.gather")
            require_aligned(ctx, v, esize, "vf.gather")
            out[i * isize:i * isize + esize] = v.read().reshape(-1)
    _put(ctx, a["dst"], out.view(a["dst"].dtype.require_numpy()))


@vf_op("vf_gather_reg", [Out("dst"), In("src"), In("index")], "Vf.gather_reg")
def _gather_reg(ctx, a):
    """Register -> register gather: dst[i] = src[index[i] mod lanes] (decision: indices wrap)."""
    x = _raw(ctx, a["src"])
    idx = _raw(ctx, a["index"]).astype(np.int64) % len(x)
    n = lanes(a["dst"].dtype)
    _put(ctx, a["dst"], x[idx[:n]] if len(idx) >= n else np.resize(x[idx], n))


@vf_op("vf_scatter", [Out("dst"), Arg("offset", "scalar"), In("src"), In("index"), In("mask", "tile", default=None)],
       "Vf.scatter")
def _scatter(ctx, a):
    """UB element ``index[i]`` past the base = src[i] for selected lanes, in lane order (decision: with a
    repeated index the highest lane wins)."""
    s = a["src"].dtype
    x = _raw(ctx, a["src"])
    idx = _raw(ctx, a["index"]).astype(np.int64)
    on = active(ctx, a["mask"], s)
    base = ctx.tile(a["dst"])
    off0 = int(ctx.scalar(a["offset"]))
    for i in np.nonzero(on)[0]:
        v = ub_view(ctx, a["dst"], off0 + int(idx[i]) * s.nbytes // base.dtype.nbytes, s, 1, "vf.scatter")
        require_aligned(ctx, v, s.nbytes, "vf.scatter")
        v.write(x[i:i + 1].reshape(1, 1))


@vf_op("vf_mask_from_reg", [Out("dst"), In("a"), Arg("block", "scalar")], "Vf.mask_gen_with_reg_tensor")
def _mask_from_reg(ctx, a):
    """The bits of block ``block`` of register a (8 bytes for 32-bit types, 16 bytes for 16-bit ones),
    each repeated 4 (2) times: the mask of those lanes."""
    w = a["a"].dtype.nbytes
    raw = _raw(ctx, a["a"]).view(np.uint8)
    size = VL // 8 // w  # bytes of one block
    k = int(ctx.scalar(a["block"]))
    if not 0 <= k < VL // size:
        raise ctx.error(f"vf.mask_gen_with_reg_tensor: offset {k} is outside [0, {VL // size})")
    bits = np.unpackbits(raw[k * size:(k + 1) * size], bitorder="little").astype(bool)
    _put(ctx, a["dst"], lanes_to_bits(bits, w))


@vf_op("vf_addc", [Out("carry"), Out("dst"), In("a"), In("b"), In("cin"), In("mask", "tile", default=None),
                   Arg("sub", default=False)], "Vf.addc")
def _addc(ctx, a):
    """32-bit lanes: dst = a + b + cin and carry = the carry out (vf.addc); with ``sub`` (vf.subc)
    dst = a + ~b + cin -- a - b when cin is set, as the reference page's measured example shows -- and the
    borrow mask is set where that sum has no carry out (a lane that could not subtract).  Unselected lanes:
    dst 0, carry 0."""
    d = a["dst"].dtype
    x, y = (np.ascontiguousarray(_raw(ctx, a[k])).view(np.uint32).astype(np.uint64) for k in ("a", "b"))
    if a["sub"]:
        y = y ^ np.uint64(0xFFFFFFFF)
    total = x + y + active(ctx, a["cin"], d).astype(np.uint64)
    out = (total >> np.uint64(32)) != 0
    if a["sub"]:
        out = ~out
    on = active(ctx, a["mask"], d)
    _put(ctx, a["dst"], np.where(on, total & np.uint64(0xFFFFFFFF), 0).astype(np.uint32).view(d.require_numpy()))
    _put(ctx, a["carry"], lanes_to_bits(on & out, 4))


@vf_op("vf_mask_from_spr", [Out("dst"), Arg("high", "scalar"), Arg("low", "scalar"), Arg("count", default=False),
                           Arg("width", default=4)], "Vf.get_mask_spr")
def _mask_from_spr(ctx, a):
    """The mask of the vector mask register {high, low} (pl.set_vec_mask) for lanes of ``width`` bytes:
    norm mode, lane i is bit i of the 128 bits (only the low 64 for 4-byte lanes); count mode (``count``),
    the first ``low`` lanes."""
    w = a["width"]
    n = VL // w
    hi, lo = (int(ctx.scalar(a[k])) & ((1 << 64) - 1) for k in ("high", "low"))
    if a["count"]:
        on = np.arange(n) < lo
    else:
        word = lo | (hi << 64)
        on = np.array([(word >> i) & 1 for i in range(n)], dtype=bool)
    _put(ctx, a["dst"], lanes_to_bits(on, w))


@vf_op("vf_hist", [Out("dst"), In("a"), In("acc"), In("mask", "tile", default=None), Arg("high", default=False),
                   Arg("cumulative", default=True)], "Vf.histograms")
def _hist(ctx, a):
    """dst = acc + the histogram of a's selected bytes (values 0..127, or 128..255 with ``high``):
    dst[n] counts the value base + n (FREQUENCY) or the values 0..base + n, i.e. ``x <= base + n``
    (ACCUMULATE: the cumulative count runs from 0 in both halves, so BIN1 includes the values below 128,
    as AscendC's Histograms page defines it); counts wrap at dst's width."""
    d = a["dst"].dtype
    vals = _raw(ctx, a["a"]).view(np.uint8)
    on = mask_bits(ctx, a["mask"]) if a["mask"] is not None else np.ones(VL, dtype=bool)
    base = 128 if a["high"] else 0
    counts = np.bincount(vals[on].astype(np.int64), minlength=256)
    counts = np.cumsum(counts)[base:base + 128] if a["cumulative"] else counts[base:base + 128]
    n = lanes(d)
    add = np.zeros(n, dtype=np.int64)
    add[:min(n, 128)] = counts[:n]
    acc = _raw(ctx, a["acc"]).astype(np.int64)
    _put(ctx, a["dst"], ((acc + add) & ((1 << (8 * d.nbytes)) - 1)).astype(_uint(d.nbytes)).view(d.require_numpy()))





@vf_op("vf_cast4", [Out("dst"), In("a"), Arg("mode"), Arg("src_type"), Arg("dst_type"),
                    In("mask", "tile", default=None), Arg("part", default=0)], "Vf.astype4")
def _cast4(ctx, a):
    """astype to / from a 4-bit integer register (512 nibble lanes, the even lane in the low nibble of a
    byte).  16-bit lane i <-> nibble lane 4 * i + part; to 4 bits: rounded as ``mode`` says, then
    saturated to the 4-bit range; other nibbles 0.  From 4 bits: sign- (zero-) extended, converted."""
    s_t, d_t, part = a["src_type"], a["dst_type"], a["part"]
    mode = RoundMode(a["mode"])
    signed = (d_t if d_t.bits() < 8 else s_t) == dt.DT_INT4
    narrow = dt.DT_INT8 if signed else dt.DT_UINT8
    lo_hi = (-8, 7) if signed else (0, 15)
    raw = _raw(ctx, a["a"])
    if d_t.bits() < 8:  # 16-bit lanes -> nibbles
        on = active(ctx, a["mask"], s_t)
        v = cast_values(raw, s_t, narrow, mode).astype(np.int64)
        v = np.clip(v, *lo_hi) & 0xF
        nib = np.zeros(2 * VL, dtype=np.int64)
        idx = 4 * np.arange(len(raw)) + part
        nib[idx] = np.where(on, v, 0)
        _put(ctx, a["dst"], (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8))
        return
    on = active(ctx, a["mask"], d_t)
    b = raw.view(np.uint8).astype(np.int64)
    nib = np.empty(2 * VL, dtype=np.int64)
    nib[0::2], nib[1::2] = b & 0xF, b >> 4
    if signed:
        nib = np.where(nib >= 8, nib - 16, nib)
    n = lanes(d_t)
    v = nib[4 * np.arange(n) + part].astype(narrow.require_numpy())
    conv = cast_values(v, narrow, d_t, mode)
    _put(ctx, a["dst"], np.where(on, conv, np.zeros(1, dtype=conv.dtype)))


VF_MORE_OPS = ("vf_mull", "vf_squeeze", "vf_unsqueeze", "vf_pack", "vf_unpack", "vf_mask_pack", "vf_mask_store",
               "vf_mask_load", "vf_store2", "vf_load_blocks", "vf_gather", "vf_gather_reg", "vf_scatter",
               "vf_mask_from_reg", "vf_addc", "vf_mask_from_spr", "vf_hist", "vf_cast4")
