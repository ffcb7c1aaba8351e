"""``pypto.matmul``: 2-D and batched (batch broadcasting), ``a_trans``/``b_trans``, ``out_dtype``, and
``extend_params`` ``bias_tensor``, ``scale`` / ``scale_tensor`` (per-tensor / per-channel dequant and
quant) and ``relu_type``.

Operands are read from GM by the cube path (unstored operands are stored first); transposed
operands are free (the load reads them transposed)."""
from __future__ import annotations

import contextlib
import struct
from enum import IntEnum
from typing import Optional

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError
from pypto_pro.ir.types import RoundMode as CastMode

from ..frontend.tracer import current_recorder
from ..graph import Node, full_leaf, gm_leaf
from ..symbolic import format_dims, is_static
from ..tensor import Tensor, reported_shape
from .core import broadcast_shape, dims_agree, immediate, materialize, node_of, out, same_dim
from .elementwise import SaturationMode, add, cast, mul, relu
from .bitwise import bitwise_and
from .shape import reshape, transpose, view
from .valid_region import common_k

_ACC = {"FP16": dt.DT_FP32, "BF16": dt.DT_FP32, "FP32": dt.DT_FP32, "INT8": dt.DT_INT32}


class ReLuType(IntEnum):
    """``extend_params["relu_type"]`` of ``pypto.matmul``: RELU applies max(x, 0) to the result, after
    the ``scale`` and before the rounding to ``out_dtype`` (the fixpipe's order)."""

    NO_RELU = 0
    RELU = 1


class TransMode(IntEnum):
    """``extend_params["trans_mode"]`` of ``pypto.matmul``: FP32 operands rounded to TF32 before the
    product.  Only CAST_NONE (no rounding) is implemented; the others raise NotImplementedError."""

    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


def fixpipe_scale(scale) -> float:
    """The per-tensor ``scale`` as the fixpipe uses it: the FP32 value's sign, 8 exponent bits and the
    top 10 of its 23 mantissa bits (the official page: "1 sign + 8 exponent + 10 mantissa bits"; the
    dropped bits are cut, not rounded)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise KernelTypeError(f"pypto.matmul extend_params scale must be a float, got {scale!r}")
    (bits,) = struct.unpack("<I", struct.pack("<f", float(scale)))
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFE000))[0]


def channel_scales(scale_tensor, n, batch=()) -> Tensor:
    """A [1, n] UINT64/INT64 ``scale_tensor`` (or [b.., 1, n] with batch dims that broadcast to the
    product's ``batch``) as the FP32 per-channel scales the fixpipe uses: the low 32 bits of each
    element read as a float (the official page), cut to 10 mantissa bits like :func:`fixpipe_scale`.
    The low word is taken by an INT64 -> INT32 conversion (which wraps), so a DYNAMIC ``n`` works too."""
    t = node_of(scale_tensor, "pypto.matmul extend_params scale_tensor")
    lead = t.shape[:-2]
    if t.dtype not in (dt.DT_UINT64, dt.DT_INT64) or t.ndim < 2 or len(lead) > len(batch) or not (
            is_static(t.shape[-2]) and t.shape[-2] == 1 and dims_agree(t.shape[-1], n)) or not all(
            (is_static(d) and d == 1) or dims_agree(d, b) for d, b in zip(lead, batch[len(batch) - len(lead):])):
        raise KernelTypeError(f"pypto.matmul extend_params scale_tensor must be a [1, {n}] UINT64/INT64 tensor "
                              f"(with optional leading batch dims), got {list(t.shape)} {t.dtype.name}")
    whole = t.op == "gm" and not all(is_static(d) for d in t.shape)
    src = out(full_leaf(t.attrs["buf"])) if whole else scale_tensor
    with cube_side_vec_tiles(None, "n"):
        low = cast(cast(src, dt.DT_INT64), dt.DT_INT32)  # integer narrowing wraps: the low word
        scales = view(bitwise_and(low, -0x2000), dtype=dt.DT_FP32)  # 0xFFFFE000: sign, exponent, 10 mantissa bits
    if not whole:
        return scales
    # a window with a loop-dependent extent (the last block of N): the bits of the whole buffer are
    # converted (a workspace of fixed extents) and the same window of them is read
    a = t.attrs
    return out(gm_leaf(node_of(scales).attrs["buf"], a["offsets"], a["axes"], t.shape))


@contextlib.contextmanager
def cube_side_vec_tiles(rows: Optional[str], cols: str):
    """Vector tiles for the work the NPU does on a matmul's way in or out without vector tiles -- the
    DMA that stages a computed operand (a gathered one: ``gather_in_l1``) into L1, the fixpipe's
    per-channel scale row -- when the kernel set none (official kernels that only multiply set cube
    tiles alone): the cube's L0 tile along ``rows`` x ``cols`` ("m"/"k"/"n"; rows None: one row),
    64 where no cube tiles are in scope either.  Values do not depend on tile shapes."""
    rec = current_recorder()
    if rec.vec_tile is not None:
        yield
        return
    cube = rec.cube_tile or DEFAULT_CUBE_TILES
    rec.vec_tile = (1 if rows is None else cube[rows][0], cube[cols][0])
    try:
        yield
    finally:
        rec.vec_tile = None


def matmul(input, mat2, out_dtype: Optional[dt.DataType] = None, *, a_trans: bool = False, b_trans: bool = False,
           c_matrix_nz: bool = False, extend_params: Optional[dict] = None) -> Tensor:
    """``[.., m, k] @ [.., k, n]``; ``out_dtype`` defaults to b's dtype (INT32 for INT8)."""
    if c_matrix_nz:
        raise NotImplementedError("pypto.matmul(c_matrix_nz=True): an NZ result (officially only c_matrix_nz=False is "
                                  "supported)")
    x, y = node_of(input), node_of(mat2)
    if x.ndim < 2 or y.ndim < 2:
        raise KernelTypeError("pypto.matmul needs operands of rank >= 2")
    requested_k = (reported_shape(x)[-2 if a_trans else -1], reported_shape(y)[-1 if b_trans else -2])
    if x.dtype != y.dtype or x.dtype.name not in _ACC:
        raise KernelTypeError(f"pypto.matmul: unsupported operand dtypes {x.dtype.name} x {y.dtype.name}")
    if a_trans:
        x = node_of(transpose(input, -1, -2))
    if b_trans:
        y = node_of(transpose(mat2, -1, -2))
    with cube_side_vec_tiles("m", "k"):
        x = materialize(x)
    with cube_side_vec_tiles("k", "n"):
        y = materialize(y)
    k = None if same_dim(x.shape[-1], y.shape[-2]) else common_k(x.shape[-1], requested_k[0], y.shape[-2],
                                                                   requested_k[1])
    if k is not None:  # an operand clipped to a valid K: reduce over that K only
        x, y = _narrowed(x, -1, k), _narrowed(y, -2, k)
    if not dims_agree(x.shape[-1], y.shape[-2]):
        kx, ky = immediate(x.shape[-1]), immediate(y.shape[-2])
        if is_static(kx) and is_static(ky):
            raise KernelTypeError(f"pypto.matmul: inner dims differ ({kx} vs {ky})")
        raise NotImplementedError(f"pypto.matmul with a K of {format_dims([kx])} against a K of {format_dims([ky])}: a K "
                                  "operand clipped by a run-time valid shape meeting a fixed K (reducing over the "
                                  "clipped K only) is not implemented; clip both operands to the same valid K")
    out_dtype = out_dtype or (dt.DT_INT32 if x.dtype == dt.DT_INT8 else y.dtype)
    acc = _ACC[x.dtype.name]
    params = dict(extend_params or {})
    bias = params.pop("bias_tensor", None)
    scale, scale_tensor = params.pop("scale", None), params.pop("scale_tensor", None)
    if scale is not None and scale_tensor is not None:
        raise KernelTypeError("pypto.matmul extend_params: give scale (per tensor) or scale_tensor (per channel), "
                              "not both")
    relu_type = _enum(ReLuType, params.pop("relu_type", ReLuType.NO_RELU), "relu_type")
    if _enum(TransMode, params.pop("trans_mode", TransMode.CAST_NONE), "trans_mode") != TransMode.CAST_NONE:
        raise NotImplementedError("pypto.matmul extend_params trans_mode other than TransMode.CAST_NONE "
                                  "(TF32 rounding of FP32 operands)")
    if params:
        raise NotImplementedError(f"pypto.matmul extend_params {sorted(params)}")
    batch = broadcast_shape(x.shape[:-2], y.shape[:-2], "pypto.matmul batch")
    factor = fixpipe_scale(scale) if scale is not None else (
        None if scale_tensor is None else channel_scales(scale_tensor, y.shape[-1], batch))
    quant = factor is not None and out_dtype == dt.DT_INT8
    if acc == dt.DT_FP32 and out_dtype not in (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16) and not quant:
        raise KernelTypeError(f"pypto.matmul: FP32 accumulation cannot produce {out_dtype.name} "
                              "(INT8 needs extend_params scale or scale_tensor: quantization)")
    shape = tuple(batch) + (x.shape[-2], y.shape[-1])
    split_k_checks(len(shape), out_dtype, bias is not None or factor is not None or relu_type == ReLuType.RELU)
    if factor is not None or relu_type == ReLuType.RELU:
        return _epilogue(_fixpipe(_with_bias(x, y, bias, shape, acc, acc), factor, relu_type, out_dtype))
    return _epilogue(_with_bias(x, y, bias, shape, acc, out_dtype))


def _narrowed(n: Node, axis: int, extent) -> Node:
    """The stored operand ``n`` read over ``[0, extent)`` on ``axis`` (a window of the same buffer)."""
    if same_dim(n.shape[axis], extent):
        return n
    sizes = list(n.shape)
    sizes[axis] = extent
    attrs = {key: v for key, v in n.attrs.items() if key != "view_shape"}  # same buffer, window and version
    return Node("gm", (), tuple(sizes), n.dtype, attrs)


def _epilogue(t: Tensor) -> Tensor:
    """Mark a product that leaves the cube through the fixpipe (bias, scale, ReLU, conversion: the
    node is not the bare ``matmul``): its vector pass may run on cube-sized tiles when the kernel set
    no vector tiles (``lower/lowerer.py: fixpipe_tiles``), as the official kernels expect."""
    n = node_of(t)
    if n.op != "matmul":
        n.attrs["fixpipe"] = True
    return t


def split_k_checks(rank: int, out_dtype: dt.DataType, fixpipe: bool) -> None:
    """``set_cube_tile_shapes(..., enable_split_k=True)``: the K axis is split over cores and the partial
    FP32/INT32 products are summed into the output.  Here every output tile is owned by one core that
    accumulates its K blocks in FP32/INT32 in order, which is one valid order of that sum, so the
    product is the same; what the switch changes is what it allows -- 2-D to 4-D products with an
    FP32/INT32 out_dtype and no bias/fixpipe (scale, ReLU), the official constraints -- checked here."""
    from ..frontend.tracer import current_recorder, recording

    tiles = current_recorder().cube_tile if recording() else None
    if not tiles or not tiles.get("split_k"):
        return
    if not 2 <= rank <= 4:
        raise KernelTypeError(f"pypto.matmul with enable_split_k: only 2-D to 4-D products, got {rank}-D")
    if out_dtype not in (dt.DT_FP32, dt.DT_INT32):
        raise KernelTypeError(f"pypto.matmul with enable_split_k: out_dtype must be DT_FP32 or DT_INT32, "
                              f"got {out_dtype.name}")
    if fixpipe:
        raise KernelTypeError("pypto.matmul with enable_split_k: bias, scale and ReLU (fixpipe) cannot be "
                              "combined with the multi-core K split")


def _enum(kind, value, what: str):
    try:
        return kind(value)
    except ValueError:
        raise KernelTypeError(f"pypto.matmul extend_params {what} must be a pypto.{kind.__name__}, "
                              f"got {value!r}") from None


def _fixpipe(y: Tensor, factor, relu_type: ReLuType, out_dtype: dt.DataType) -> Tensor:
    """What the fixpipe does to the accumulator on its way out: times the (10-mantissa-bit) scale --
    ``factor``, a float or a [1, n] FP32 row of per-channel scales -- in FP32, ReLU, then one rounding
    to ``out_dtype`` (to nearest even, saturating, for float -> integer).  Without a scale an INT32
    accumulator stays integer (ReLU is exact there)."""
    if factor is not None:
        y = mul(cast(y, dt.DT_FP32) if node_of(y).dtype.is_int() else y, factor)
    if relu_type == ReLuType.RELU:
        y = relu(y)
    if node_of(y).dtype == out_dtype:
        return y
    if out_dtype.is_int() and node_of(y).dtype.is_float():
        return cast(y, out_dtype, CastMode.CAST_RINT, SaturationMode.ON)
    return cast(y, out_dtype)


def _with_bias(x: Node, y: Node, bias, shape: tuple, acc: dt.DataType, out_dtype: dt.DataType) -> Tensor:
    """``x @ y`` (+ bias) as ``out_dtype``: the bias through the cube's Bias tile where it is a row it
    can take, else added by a vector op in the accumulator dtype."""
    if bias is None:
        return out(Node("matmul", (x, y), shape, out_dtype, {}))
    row = _bias_row(node_of(bias, "pypto.matmul bias_tensor"), acc, y.shape[-1])
    if row is not None:
        return out(Node("matmul", (x, y, row), shape, out_dtype, {}))
    mm = out(Node("matmul", (x, y), shape, acc, {}))
    return cast(add(mm, cast(bias, acc)), out_dtype)


def _bias_row(bias: Node, acc: dt.DataType, n) -> Optional[Node]:
    """``bias`` as a [1, n] row the cube adds while accumulating (the first K block's ``matmul`` with
    a Bias tile), or None when it is not one (another shape, or a dtype the Bias tile cannot take):
    then the bias is added by a vector op after the matmul."""
    if acc != dt.DT_FP32 or bias.dtype not in (dt.DT_FP32, dt.DT_FP16, dt.DT_BF16) or not same_dim(bias.shape[-1], n):
        return None
    if not all(is_static(d) and d == 1 for d in bias.shape[:-1]):
        return None
    return node_of(reshape(out(materialize(bias)), [1, n]))


#: the cube tiles of the composed ops (``conv``, ``transposed_batchmatmul``) when none are in scope
DEFAULT_CUBE_TILES = {"m": (64, 64), "k": (64, 64), "n": (64, 64)}


@contextlib.contextmanager
def default_cube_tiles():
    """Record the block with :data:`DEFAULT_CUBE_TILES` if no ``set_cube_tile_shapes`` is in scope (ops
    whose official pages configure other tiles, or none, still lower their matmuls); the block must
    store its matmul results itself (the tiles are taken when a value is stored)."""
    rec = current_recorder()
    if rec.cube_tile is not None:
        yield
        return
    rec.cube_tile = dict(DEFAULT_CUBE_TILES)
    try:
        yield
    finally:
        rec.cube_tile = None


def bmm(a, b, out_dtype: Optional[dt.DataType] = None) -> Tensor:
    return matmul(a, b, out_dtype)
