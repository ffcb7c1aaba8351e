"""Convolutions (the official ``pypto.conv`` and ``pypto.conv_backward_input`` pages) as im2col plus one
``matmul`` per group, composed from existing graph nodes (``pad``, views, ``concat``, ``reshape``,
``matmul``), so they run on every backend.

For a kernel position ``p`` the input values it meets are a strided window of the padded input:
``x_pad[b, c, p_i * d_i + o_i * s_i]``.  A stride ``s > 1`` is taken without a gather: the padded
axis (rounded up to a multiple of ``s``) is reshaped to ``[size / s, s]`` and the window is
``[q : q + O, r]`` with ``q, r = divmod(p_i * d_i, s)``, a free view.  The windows of all kernel
positions are concatenated along the channels (``[B, K * C, O...]``, position-major), the weights
are permuted to the same ``[Cout, K * C]`` order, and ``matmul`` (FP32 accumulation) gives
``[B, Cout, O...]``; bias and ReLU are added in FP32 and the result is rounded once to ``out_dtype``.
"""
from __future__ import annotations

import itertools
from enum import IntEnum
from typing import Any, List, Optional, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError

from ..frontend.tracer import current_recorder
from ..symbolic import format_dims, is_static
from ..tensor import Tensor
from .core import materialize, node_of, out, same_dim
from .elementwise import add, cast, relu
from .matmul import cube_side_vec_tiles, default_cube_tiles, matmul
from .shape import concat, getitem, pad_axes, permute, reshape

_FLOATS = (dt.DT_FP16, dt.DT_BF16, dt.DT_FP32)


class ConvReLuType(IntEnum):
    """``extend_params["relu_type"]`` of ``pypto.conv``: RELU applies ``max(x, 0)`` after the bias, before
    the rounding to ``out_dtype``.  (``pypto.ReLuType`` values are accepted too.)"""

    NO_RELU = 0
    RELU = 1


def _ints(values, count: int, low: int, high: int, what: str, name: str) -> List[int]:
    if not isinstance(values, (list, tuple)) or len(values) != count:
        raise KernelTypeError(f"{what}: {name} needs {count} ints for this convolution, got {values!r}")
    if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise KernelTypeError(f"{what}: {name} must hold ints, got {list(values)}")
    if any(not low <= v <= high for v in values):
        raise KernelValueError(f"{what}: {name} values must lie in [{low}, {high}], got {list(values)}")
    return list(values)


def _static_dims(shape, what: str, name: str) -> List[int]:
    if not all(is_static(d) for d in shape):
        raise NotImplementedError(f"{what} with a DYNAMIC dim in {name} {format_dims(shape)} (the channel, spatial "
                                  "and kernel sizes must be fixed)")
    return [int(d) for d in shape]


def _out_size(size, lo: int, hi: int, k: int, s: int, d: int):
    """The output extent of a spatial dim (symbolic for a DYNAMIC one, which has stride 1)."""
    if not is_static(size):
        return size + lo + hi - d * (k - 1)
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _columns(x, pads: Sequence[Tuple[int, int]], kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], outs: Sequence[int], flip: bool) -> Tensor:
    """im2col of ``x`` ([B, C, I...]): ``[B, K * C, prod(O)]``, block ``j`` (position-major) holding the
    window of kernel position ``j`` (of the mirrored position with ``flip``)."""
    n = node_of(x)
    sizes = list(n.shape[2:])
    amounts, split = [], []
    for size, (lo, hi), s in zip(sizes, pads, strides):
        if not is_static(size):  # DYNAMIC: stride 1, no pads (checked by conv)
            amounts.append((0, 0))
            split.append(size)
            continue
        total = size + lo + hi
        extra = -total % s  # round the padded axis up to a multiple of the stride
        amounts.append((lo, hi + extra))
        split.append((total + extra) // s)
    xp = x
    if any(lo or hi for lo, hi in amounts):
        xp = pad_axes(x, amounts)
    shape = list(node_of(xp).shape[:2])
    for q, s in zip(split, strides):
        shape += [q, s] if s > 1 else [q]
    xs = reshape(xp, shape) if any(s > 1 for s in strides) else xp
    windows = []
    for pos in itertools.product(*[range(k) for k in kernel]):
        if flip:
            pos = tuple(k - 1 - p for k, p in zip(kernel, pos))
        key: List[Any] = [slice(None), slice(None)]
        for p, s, d, o in zip(pos, strides, dilations, outs):
            q, r = divmod(p * d, s)
            key += [slice(q, q + o), r] if s > 1 else [slice(q, q + o)]
        windows.append(getitem(xs, tuple(key)))
    cols = concat(windows, 1) if len(windows) > 1 else windows[0]
    count = 1
    for o in outs:
        count *= o
    return reshape(cols, [n.shape[0], len(windows) * int(n.shape[1]), count])


def _weight_matrix(w, transpose_io: bool) -> Tensor:
    """``w`` ([Cout, C, K...]; with ``transpose_io`` [C, Cout, K...]) as ``[Cout, K * C]`` in the order of
    :func:`_columns` (kernel position major, channel minor)."""
    nd = node_of(w).ndim
    order = ([1] if transpose_io else [0]) + list(range(2, nd)) + ([0] if transpose_io else [1])
    wp = permute(w, order)
    shape = node_of(wp).shape
    count = 1
    for v in shape[1:]:
        count *= int(v)
    return reshape(wp, [shape[0], count])  # Cout may be DYNAMIC (a loop-clipped view of the weight)


def _conv_fp32(x, w, pads, strides, dilations, groups: int, flip: bool = False, transpose_io: bool = False) -> Tensor:
    """The convolution of ``x`` with ``w`` accumulated in FP32: ``[B, Cout, O...]``."""
    xn, wn = node_of(x), node_of(w)
    kernel = [int(k) for k in wn.shape[2:]]
    outs = [_out_size(i, lo, hi, k, s, d)
            for i, (lo, hi), k, s, d in zip(xn.shape[2:], pads, kernel, strides, dilations)]
    cin_g = int(xn.shape[1]) // groups
    wout = int(wn.shape[1]) if transpose_io else wn.shape[0]  # the forward Cout may be DYNAMIC (groups == 1)
    cout_g = wout // groups if groups > 1 else wout
    parts = []
    for g in range(groups):
        xg = x if groups == 1 else getitem(x, (slice(None), slice(g * cin_g, (g + 1) * cin_g)))
        if transpose_io:
            wg = w if groups == 1 else getitem(w, (slice(g * cin_g, (g + 1) * cin_g),))
        else:
            wg = w if groups == 1 else getitem(w, (slice(g * cout_g, (g + 1) * cout_g),))
        cols = _columns(xg, pads, kernel, strides, dilations, outs, flip)
        with default_cube_tiles():
            parts.append(out(materialize(node_of(matmul(_weight_matrix(wg, transpose_io), cols, dt.DT_FP32)))))
    y = concat(parts, 1) if groups > 1 else parts[0]
    return reshape(y, [xn.shape[0], wout] + outs)


def _finish(y: Tensor, bias, relu_type, out_dtype: dt.DataType, nsp: int) -> Tensor:
    """``y`` (FP32 [B, Cout, O...]) + bias, ReLU, one rounding to ``out_dtype``."""
    if bias is not None:
        cout = node_of(y).shape[1]
        b = reshape(bias, [cout] + [1] * nsp)
        y = add(y, cast(b, dt.DT_FP32) if node_of(b).dtype != dt.DT_FP32 else b)
    if relu_type == ConvReLuType.RELU:
        y = relu(y)
    return cast(y, out_dtype) if out_dtype != dt.DT_FP32 else y


def _relu_type(value, what: str) -> ConvReLuType:
    if isinstance(value, bool) or not isinstance(value, int):
        raise KernelTypeError(f"{what}: extend_params relu_type must be a pypto.ConvReLuType, got {value!r}")
    try:
        return ConvReLuType(int(value))
    except ValueError:
        raise KernelTypeError(f"{what}: extend_params relu_type must be NO_RELU or RELU, got {value!r}") from None


def conv(input_conv, weight, out_dtype, strides, paddings, dilations, *, groups: int = 1, transposed: bool = False,
         output_paddings: Optional[Sequence[int]] = None, extend_params: Optional[dict] = None) -> Tensor:
    """Official ``pypto.conv``: 1-D / 2-D / 3-D convolution of ``input_conv`` (NCL / NCHW / NCDHW) with
    ``weight`` ([Cout, Cin / groups, K...]), FP16 / BF16 / FP32 (both the same; ``out_dtype`` too: the
    fixpipe-quantized outputs are not offered).  ``strides`` / ``dilations``: one int per spatial dim in
    [1, 63]; ``paddings``: a ``(before, after)`` pair per spatial dim in dim order (``[top, bottom,
    left, right]`` for 2-D), in [0, 255] and smaller than the dilated kernel extent
    ``(K - 1) * d + 1``; ``groups`` in [1, 65535] dividing Cout, with ``Cin == weight Cin * groups``.
    ``extend_params``: ``bias_tensor`` ((Cout,), any float dtype) and ``relu_type``
    (``pypto.ConvReLuType``); ``scale`` / ``scale_tensor`` (fixpipe quantization) and
    ``transposed=True`` / ``output_paddings`` raise ``NotImplementedError`` (the page: not supported
    yet).  Output ``[B, Cout, O...]`` with ``O = (I + lo + hi - d (K - 1) - 1) // s + 1``; products
    accumulate in FP32, bias and ReLU in FP32, one rounding to ``out_dtype``.  The channel, spatial
    and kernel sizes must be fixed (no DYNAMIC dims; the batch may be).  ``pypto.set_conv_tile_shapes``
    is not needed: the composition tiles with the vec / cube tile shapes in scope (cube tiles
    ``matmul.DEFAULT_CUBE_TILES`` when none are set)."""
    what = "pypto.conv"
    xn, wn = node_of(input_conv, f"{what} input_conv"), node_of(weight, f"{what} weight")
    if xn.ndim not in (3, 4, 5):
        raise KernelTypeError(f"{what}: input_conv must be 3-D, 4-D or 5-D (NCL, NCHW, NCDHW), got {xn.ndim} dims")
    if wn.ndim != xn.ndim:
        raise KernelTypeError(f"{what}: weight must have input_conv's {xn.ndim} dims, got {wn.ndim}")
    if xn.dtype not in _FLOATS or wn.dtype != xn.dtype:
        raise KernelTypeError(f"{what}: input_conv and weight must both be FP16, BF16 or FP32, got {xn.dtype.name} and "
                              f"{wn.dtype.name}")
    if out_dtype != xn.dtype:
        raise KernelTypeError(f"{what}: out_dtype must be input_conv's dtype {xn.dtype.name}, got {out_dtype!r}")
    if transposed:
        raise NotImplementedError(f"{what}(transposed=True) (transposed convolution; not supported by the official op "
                                  "either)")
    if output_paddings:
        raise NotImplementedError(f"{what} output_paddings (only for transposed convolution)")
    nsp = xn.ndim - 2
    strides = _ints(strides, nsp, 1, 63, what, "strides")
    dilations = _ints(dilations, nsp, 1, 63, what, "dilations")
    flat = _ints(paddings, 2 * nsp, 0, 255, what, "paddings")
    pads = [(flat[2 * i], flat[2 * i + 1]) for i in range(nsp)]
    if isinstance(groups, bool) or not isinstance(groups, int) or not 1 <= groups <= 65535:
        raise KernelValueError(f"{what}: groups must be an int in [1, 65535], got {groups!r}")
    xs = _static_dims(xn.shape[1:2], what, "input_conv channels") + list(xn.shape[2:])
    for i, (size, s, (lo, hi)) in enumerate(zip(xs[1:], strides, pads)):
        if not is_static(size) and (s != 1 or lo or hi):
            raise NotImplementedError(f"{what} with a DYNAMIC spatial dim {i} in input_conv {format_dims(xn.shape)} "
                                      f"and stride {s}, pads ({lo}, {hi}) on it (a DYNAMIC spatial dim needs stride 1 "
                                      "and no padding, as the official op)")
    cout = wn.shape[0]  # Cout may be DYNAMIC (a view clipped by a loop index): it is only the matmul's M
    if not is_static(cout) and groups != 1:
        raise NotImplementedError(f"{what} with a DYNAMIC Cout in weight {format_dims(wn.shape)} and groups={groups} "
                                  "(a DYNAMIC Cout needs groups=1)")
    ws = [cout] + _static_dims(wn.shape[1:], what, "weight")
    cin, cin_w, kernel = xs[0], ws[1], ws[2:]
    if cin_w * groups != cin or (is_static(cout) and cout % groups):
        raise KernelValueError(f"{what}: input channels {cin} must equal weight Cin {cin_w} x groups {groups}, and Cout "
                               f"{cout} must divide by groups")
    for i, ((lo, hi), k, d, s, size) in enumerate(zip(pads, kernel, dilations, strides, xs[1:])):
        extent = (k - 1) * d + 1
        if lo >= extent or hi >= extent:
            raise KernelValueError(f"{what}: paddings {list(paddings)}: spatial dim {i} pads must be smaller than the "
                                   f"dilated kernel extent {extent}")
        if is_static(size) and _out_size(size, lo, hi, k, s, d) < 1:
            raise KernelValueError(f"{what}: spatial dim {i} of size {size} (padded {size + lo + hi}) is smaller than the "
                                   f"dilated kernel extent {extent}")
    params = dict(extend_params or {})
    bias = params.pop("bias_tensor", None)
    relu_type = _relu_type(params.pop("relu_type", ConvReLuType.NO_RELU), what)
    if "scale" in params or "scale_tensor" in params:
        raise NotImplementedError(f"{what} extend_params scale / scale_tensor (fixpipe quantization; not supported by "
                                  "the official op either)")
    if params:
        raise NotImplementedError(f"{what} extend_params {sorted(params)}")
    if bias is not None:
        bn = node_of(bias, f"{what} bias_tensor")
        fits = same_dim(bn.shape[0], cout) or not (is_static(bn.shape[0]) and is_static(cout))  # DYNAMIC: trusted
        if bn.dtype not in _FLOATS or bn.ndim != 1 or not fits:
            raise KernelTypeError(f"{what}: bias_tensor must be a {format_dims([cout])} float tensor (Cout), got "
                                  f"{format_dims(bn.shape)} {bn.dtype.name}")
    untiled = current_recorder().vec_tile is None
    with cube_side_vec_tiles("m", "n"):  # official kernels may set cube tiles alone: vector tiles from them
        y = _finish(_conv_fp32(input_conv, weight, pads, strides, dilations, groups), bias, relu_type, out_dtype, nsp)
        # without vector tiles of its own the kernel can only copy the result: store it here
        return out(materialize(node_of(y))) if untiled else y


def conv_backward_input(grad_output, input_size, weight, out_dtype, strides, paddings, dilations, *,
                        groups: int = 1) -> Tensor:
    """Official ``pypto.conv_backward_input``: the gradient of a 2-D convolution's input, shape
    ``input_size`` = (B, Cin, Hin, Win), from ``grad_output`` (B, Cout, Hout, Wout) and ``weight``
    (Cout, Cin, Kh, Kw), FP16 or BF16 (the same, ``out_dtype`` too), ``groups=1``, symmetric
    ``paddings`` ``[top, bottom, left, right]`` (top == bottom, left == right) below the dilated
    kernel extent.  ``Hin`` may be any value the forward convolution maps to ``Hout``
    (``[HinMin, HinMin + stride - 1]``, the page's range), likewise ``Win``.

    Computed as the transposed convolution: ``grad_output`` dilated by the stride (``s - 1`` zeros
    between elements, a ``concat`` with zeros and a reshape), padded by ``(K - 1) d - pad`` before and
    that plus ``Hin - HinMin`` after, convolved at stride 1 with the spatially mirrored weight whose
    Cout / Cin roles are swapped; FP32 accumulation, one rounding to ``out_dtype``."""
    what = "pypto.conv_backward_input"
    gn, wn = node_of(grad_output, f"{what} grad_output"), node_of(weight, f"{what} weight")
    if gn.ndim != 4 or wn.ndim != 4:
        raise KernelTypeError(f"{what}: grad_output and weight must be 4-D (NCHW), got {gn.ndim} and {wn.ndim} dims")
    if gn.dtype not in (dt.DT_FP16, dt.DT_BF16) or wn.dtype != gn.dtype:
        raise KernelTypeError(f"{what}: grad_output and weight must both be FP16 or both BF16, got {gn.dtype.name} and "
                              f"{wn.dtype.name}")
    if out_dtype != gn.dtype:
        raise KernelTypeError(f"{what}: out_dtype must be grad_output's dtype {gn.dtype.name}, got {out_dtype!r}")
    if groups != 1:
        raise NotImplementedError(f"{what}(groups={groups!r}): only groups=1 (as the official op)")
    if not isinstance(input_size, (list, tuple)) or len(input_size) != 4 or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in input_size):
        raise KernelTypeError(f"{what}: input_size must be 4 positive ints (B, Cin, Hin, Win), got {input_size!r}")
    strides = _ints(strides, 2, 1, 63, what, "strides")
    dilations = _ints(dilations, 2, 1, 63, what, "dilations")
    flat = _ints(paddings, 4, 0, 255, what, "paddings")
    if flat[0] != flat[1] or flat[2] != flat[3]:
        raise NotImplementedError(f"{what}: paddings {flat}: only equal pads on both sides (top == bottom, left == "
                                  "right), as the official op")
    gs, ws = _static_dims(gn.shape, what, "grad_output"), _static_dims(wn.shape, what, "weight")
    b, cin, hin, win = input_size
    if gs[0] != b or gs[1] != ws[0] or ws[1] != cin:
        raise KernelValueError(f"{what}: grad_output {format_dims(gs)}, weight {format_dims(ws)} and input_size "
                               f"{list(input_size)} disagree (batch, Cout, Cin)")
    pads = []
    for i, (size_in, size_out, k, s, d, p) in enumerate(zip((hin, win), gs[2:], ws[2:], strides, dilations, flat[::2])):
        extent = (k - 1) * d + 1
        if p >= extent:
            raise KernelValueError(f"{what}: the pad {p} of spatial dim {i} must be smaller than the dilated kernel "
                                   f"extent {extent}")
        low = (size_out - 1) * s - 2 * p + extent
        if not low <= size_in <= low + s - 1 or low < 1:
            raise KernelValueError(f"{what}: input_size dim {i + 2} = {size_in} does not map to grad_output's {size_out} "
                                   f"(valid: {low}..{low + s - 1})")
        pads.append((extent - 1 - p, extent - 1 - p + size_in - low))
    g = _dilate(grad_output, strides, gs)
    y = _conv_fp32(g, weight, pads, [1, 1], dilations, 1, flip=True, transpose_io=True)
    return cast(y, out_dtype)


def _dilate(x, strides: Sequence[int], shape: Sequence[int]) -> Tensor:
    """``x`` ([B, C, H, W]) with ``s - 1`` zeros between neighbouring elements of each spatial dim."""
    from .creation import zeros

    dtype = node_of(x).dtype
    for axis, s in ((2, strides[0]), (3, strides[1])):
        if s == 1:
            continue
        cur = list(node_of(x).shape)
        size = int(cur[axis])
        parts = cur[:axis + 1] + [1] + cur[axis + 1:]
        z = zeros(cur[:axis + 1] + [s - 1] + cur[axis + 1:], dtype=dtype)
        wide = reshape(concat([reshape(x, parts), z], axis + 1), cur[:axis] + [size * s] + cur[axis + 1:])
        key: List[Any] = [slice(None)] * 4
        key[axis] = slice(0, (size - 1) * s + 1)
        x = getitem(wide, tuple(key))
    return x


__all__ = ["ConvReLuType", "conv", "conv_backward_input"]
