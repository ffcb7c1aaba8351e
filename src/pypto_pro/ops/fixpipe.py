"""The fixpipe: what an accumulator (Acc, L0C) becomes on its way to GM (``pl.store``/``pl.store_tile``) or
to the vector cores (``pl.move`` Acc -> Vec).

One conversion, in this order (the official reference computes it the same way):

1. an INT32 accumulator with a scale is converted to FP32 (round to nearest even);
2. ``relu_pre_mode=NormalRelu``: ``x < 0 -> 0`` (NaN and -0.0 pass unchanged);
3. ``scale``: one FP32 multiply by the scale the hardware holds -- the FP32 value's sign, exponent and top
   10 mantissa bits (``bits & 0xFFFFE000``; the low 13 bits are cut, not rounded);
4. one rounding into the output dtype: floats round to nearest even (FP16/BF16 overflow to +-inf like
   IEEE; HF8 as its codec rounds); INT8 rounds to nearest even, saturates to [-128, 127] and maps NaN to 0.

``scale`` forms (docs/language.md "Semantics of ops" / the official store/move pages):

* a Python ``float``/``int``: a per-tensor scale fixed at compile time;
* a runtime FP32 scalar: its value; a runtime INT32/INT64 scalar: the FP32 bit pattern it carries (the low 32
  bits; a launch may pass an INT32 parameter the unsigned pattern ``struct.pack("!f", v)`` gives);
* a ``[1, N]`` INT64 tile in ``MemorySpace.Scaling``: per-channel scales, word ``j`` for output column ``j``,
  each word laid out as ``torch_npu.npu_trans_quant_param`` builds it (FP32 bits in bits 0..31; for an INT8
  output bit 46 marks the signed result and bits 37..45 hold an offset).

Conversions (no scale): FP32 -> FP32/FP16/BF16/HF8, INT32 -> INT32.  With a scale: FP32 -> FP32/FP16/INT8/HF8,
INT32 -> FP16/INT8.  Quantising into UINT8 or BF16 is rejected like the official parser does.
"""
from __future__ import annotations

from typing import Optional, Union

import numpy as np

from .. import dtypes as dt
from ..ir import nodes as ir
from ..ir.nodes import TensorParam, TileRef
from ..ir.types import AccToVecMode, MemorySpace, ReluPreMode

#: the scale bits the fixpipe keeps: sign, 8 exponent bits, the top 10 mantissa bits
MANTISSA_MASK = 0xFFFFE000
#: per-channel word: the signed-INT8-output flag and the 9-bit offset field
SIGNED_FLAG = 1 << 46
OFFSET_FIELD = 0x1FF << 37
#: per-channel scale tiles: [1, N] with N a multiple of 16 (128 bytes); the Scaling memory's size bounds N
CHANNEL_ALIGN = 16

_PLAIN = {"FP32": ("FP32", "FP16", "BF16", "HF8"), "INT32": ("INT32",)}
_SCALED = {"FP32": ("FP32", "FP16", "INT8", "HF8"), "INT32": ("FP16", "INT8")}
_RUNTIME_SCALE_DTYPES = ("FP32", "INT32", "INT64")

Scale = Union[None, float, int, ir.Expr, TileRef]


# --------------------------------------------------------------------------- scale forms
def kind(scale: Scale) -> str:
    """'none', 'const', 'value' (runtime FP32), 'bits' (runtime INT32/INT64) or 'channel' (a Scaling tile).

    Only meaningful after :func:`check` accepted the scale."""
    if scale is None:
        return "none"
    if isinstance(scale, TileRef):
        return "channel"
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        return "const"
    return "value" if scale.dtype.name == "FP32" else "bits"


def hardware_scale(value: float) -> np.float32:
    """A scale value as the fixpipe holds it: FP32, low 13 mantissa bits cut."""
    return bits_scale(int(np.float32(value).view(np.uint32)))


def bits_scale(bits: int) -> np.float32:
    """The fixpipe scale carried by an FP32 bit pattern (the low 32 bits of ``bits``)."""
    return np.uint32((int(bits) & 0xFFFFFFFF) & MANTISSA_MASK).view(np.float32)


def channel_scales(words: np.ndarray) -> np.ndarray:
    """Per-channel scale words (INT64) -> the FP32 scales they carry."""
    low = (np.asarray(words).astype(np.int64).view(np.uint64) & np.uint64(MANTISSA_MASK)).astype(np.uint32)
    return low.view(np.float32)


# --------------------------------------------------------------------------- static rules
def check(c, acc_dtype: dt.DataType, out_dtype: dt.DataType, relu, scale: Scale, *, phase=None,
          acc_to_vec_mode=None) -> None:
    """The static rules of a fixpipe conversion (store/store_tile/move from an Acc tile)."""
    _check_scale_form(c, scale)
    form = kind(scale)
    if form != "none":
        if out_dtype.name == "UINT8":
            c.fail("scale quantization to UINT8 is not supported: the fixpipe has no unsigned requantization; "
                   "store INT8, or quantize in the vector domain (pl.quant)")
        if out_dtype.name == "BF16":
            c.fail(f"scale quantization from {acc_dtype.name} to BF16 is not supported: the fixpipe converts FP32 "
                   f"to BF16 only without a scale; store FP16, or drop scale= and scale in the vector domain")
    allowed = (_SCALED if form != "none" else _PLAIN).get(acc_dtype.name, ())
    if out_dtype.name not in allowed:
        how = "with a scale" if form != "none" else "without a scale"
        hint = f"; {out_dtype.name} needs a scale (scale=)" if (form == "none" and out_dtype.name in
                                                         _SCALED.get(acc_dtype.name, ())) else ""
        c.fail(f"the fixpipe converts {acc_dtype.name} accumulators {how} to {', '.join(allowed) or 'nothing'}, "
               f"not {out_dtype.name}{hint}")
    if form == "channel":
        if relu is not None:
            c.fail("scale (per-channel) cannot be used together with relu_pre_mode; apply the ReLU after the store")
        if phase is not None:
            c.fail("scale (per-channel) cannot be combined with phase; synchronise M -> FIX with events instead")
        if acc_to_vec_mode is not None and AccToVecMode(acc_to_vec_mode) in (AccToVecMode.DualModeSplitM,
                                                                           AccToVecMode.DualModeSplitN):
            c.fail("scale (per-channel) only supports single-mode acc_to_vec_mode (SingleModeVec0/SingleModeVec1)")
    if relu is not None and relu not in tuple(ReluPreMode):
        c.fail(f"relu_pre_mode must be a pl.ReluPreMode, got {relu!r}")


def _check_scale_form(c, scale: Scale) -> None:
    if scale is None or isinstance(scale, TileRef):
        if isinstance(scale, TileRef):
            _check_scale_tile(c, scale)
        return
    if isinstance(scale, TensorParam):
        c.fail("scale Tensor is not supported for per-channel quantization: load the INT64 [1, N] scales into a Mat "
               "tile, pl.move them into a MemorySpace.Scaling tile (sync MTE1 -> FIX) and pass that tile")
    if isinstance(scale, bool) or not isinstance(scale, (int, float, ir.Expr)):
        c.fail(f"scale must be a float, an int, a runtime scalar or a Scaling tile, got {type(scale).__name__}")
    if isinstance(scale, ir.Expr) and scale.dtype.name not in _RUNTIME_SCALE_DTYPES:
        c.fail(f"scale runtime scalar dtype {scale.dtype.name.lower()} is not supported: pass an FP32 scalar (its "
               f"value) or an INT32/INT64 scalar carrying the FP32 bit pattern (struct.pack(\"!f\", scale))")


def _check_scale_tile(c, t: TileRef) -> None:
    if t.space != MemorySpace.Scaling:
        c.fail(f"the scale tile must be allocated in MemorySpace.Scaling for per-channel quantization, got "
               f"{t.space.name} (pl.move a Mat tile of the scales into a Scaling tile)")
    shape = list(t.decl.ttype.shape)
    if len(shape) != 2:
        c.fail(f"scale tile must be 2D with shape [1, N], got shape {shape}")
    rows, cols = shape
    if rows != 1:
        c.fail(f"scale tile shape [1, N]: the fixpipe scales per column only (row == 1), got {shape}")
    if cols % CHANNEL_ALIGN:
        c.fail(f"scale tile shape [1, N]: N must be a multiple of {CHANNEL_ALIGN}, got {shape}")
    if t.dtype.name == "FP32":
        c.fail("scale tile dtype FP32 is not supported: convert the FP32 scales to INT64 words on the host with "
               "torch_npu.npu_trans_quant_param(scales) first")
    if t.dtype.name != "INT64":
        c.fail(f"scale tile dtype must be INT64, got {t.dtype.name} (build the words with "
               f"torch_npu.npu_trans_quant_param)")


# --------------------------------------------------------------------------- semantics (interpreter)
def scale_of(ctx, scale: Scale, cols: int, out_dtype: dt.DataType) -> Optional[np.ndarray]:
    """The FP32 scale(s) of one conversion: a 0-d array, or one per output column (per-channel)."""
    form = kind(scale)
    if form == "none":
        return None
    if form == "const":
        return np.asarray(hardware_scale(scale))
    if form == "value":
        return np.asarray(hardware_scale(ctx.scalar(scale)))
    if form == "bits":
        return np.asarray(bits_scale(int(ctx.scalar(scale))))
    view = ctx.tile(scale)
    have = view.valid[1]
    if cols > have:
        raise ctx.error(f"per-channel scale tile {view.name} holds {have} scales (valid columns) but the fixpipe "
                        f"converts {cols} columns")
    words = view.read(1, cols)[0].astype(np.int64)
    if out_dtype.name == "INT8":
        check_channel_words(words, ctx.error)
    return channel_scales(words)


def check_channel_words(words: np.ndarray, error) -> None:
    """INT8 outputs: every word marks the signed result (bit 46) and has no offset (bits 37..45); the first
    word (in column order) that does not is reported (the cpu backend checks the same way)."""
    u = words.view(np.uint64)
    bad = np.nonzero(((u & np.uint64(SIGNED_FLAG)) == 0) | ((u & np.uint64(OFFSET_FIELD)) != 0))[0]
    if not bad.size:
        return
    c = int(bad[0])
    if not int(u[c]) & SIGNED_FLAG:
        raise error(f"per-channel scale word {c} lacks the signed-INT8 flag (bit 46) an INT8 output needs; build "
                    f"the words with torch_npu.npu_trans_quant_param or set 1 << 46")
    raise error(f"per-channel scale word {c} has an offset (bits 37..45): asymmetric fixpipe requantization is not "
                f"implemented")


def convert(values: np.ndarray, out_dtype: dt.DataType, relu, scale: Optional[np.ndarray]) -> np.ndarray:
    """Accumulator values (FP32 or INT32, [rows, cols]) -> output storage of ``out_dtype``."""
    relu_on = relu is not None and ReluPreMode(relu) == ReluPreMode.NormalRelu
    if values.dtype.kind != "f" and scale is None:  # INT32 -> INT32: exact
        x = values.astype(np.int64)
        return (np.where(x < 0, 0, x) if relu_on else x).astype(out_dtype.require_numpy())
    with np.errstate(all="ignore"):
        x = values.astype(np.float32)
        if relu_on:
            x = np.where(x < 0, np.float32(0), x)
        if scale is not None:
            x = (x * scale.astype(np.float32)).astype(np.float32)
        if out_dtype.codec is not None:  # HF8: FP32 -> code (dtypes.DT_HF8: ties away from zero, saturating)
            return out_dtype.encode(x)
        if out_dtype.is_float():
            return x.astype(out_dtype.require_numpy())
        info = np.iinfo(out_dtype.require_numpy())
        r = np.where(np.isnan(x), np.float32(0), np.clip(np.rint(x), info.min, info.max))
        return r.astype(out_dtype.require_numpy())


def apply(ctx, values: np.ndarray, out_dtype: dt.DataType, relu, scale: Scale) -> np.ndarray:
    """The fixpipe conversion of an accumulator window (interpreter semantics of store/move from Acc)."""
    return convert(values, out_dtype, relu, scale_of(ctx, scale, values.shape[1], out_dtype))


def trans_quant_words(scales: np.ndarray, offsets: Optional[np.ndarray] = None) -> np.ndarray:
    """``npu_trans_quant_param``: FP32 scales (and optional offsets) -> the INT64 words the fixpipe reads.

    Word = ``(bits(scale) & 0xFFFFE000) | 1 << 46``; an offset is rounded to nearest even, clamped to
    [-256, 255] and kept as 9 bits at bit 37."""
    s = np.asarray(scales, dtype=np.float32)
    words = (s.view(np.uint32).astype(np.uint64) & np.uint64(MANTISSA_MASK)) | np.uint64(SIGNED_FLAG)
    if offsets is not None:
        o = np.clip(np.rint(np.asarray(offsets, dtype=np.float32)), -256, 255).astype(np.int64)
        words, o = np.broadcast_arrays(words, o)
        words = (words & ~np.uint64(OFFSET_FIELD)) | ((o.astype(np.uint64) & np.uint64(0x1FF)) << np.uint64(37))
    return words.view(np.int64)


__all__ = ["check", "apply", "convert", "kind", "hardware_scale", "bits_scale", "channel_scales", "scale_of",
           "trans_quant_words", "check_channel_words", "MANTISSA_MASK", "SIGNED_FLAG"]

