"""MX (microscaling) matmul: ``pl.matmul_mx`` / ``pl.matmul_mx_acc`` (pipe M, Ascend 950 only).

``dst[m, n] (= acc[m, n] +) sum_k A[m, k] * 2^(sa[m, k//32] - 127) * B[k, n] * 2^(sb[k//32, n] - 127)``

A and B hold MXFP8 (FP8 E4M3/E5M2) or MXFP4 (FP4 E2M1/E1M2) mantissas; the formats may differ
between the sides but MXFP8 and MXFP4 do not mix.  Every run of 32 elements along K shares one
E8M0 scale (``2^(e-127)``; code 0xFF is NaN and poisons the sums it enters).  The scales live in
ScaleLeft ``[M, K/32]`` (ZZ) and ScaleRight ``[K/32, N]`` (NN) tiles, which the hardware does not
address on its own: the instruction reads them at the Left/Right data address shifted right by 4.
So a scale tile must sit at ``addr(data) >> 4``; that is checked statically where both addresses
are known and at run time for tile-group slots (a misplaced scale tile is an error here, where the
hardware would silently read whatever lies at the derived address).

Like ``pl.matmul``, the reference sums exactly (float64: every product of two decoded mantissas
and two powers of two is exact, the few rounding steps of a 64-term float64 sum are far below
fp32's) and rounds once to the FP32 accumulator; M/K/N come from the operands' valid windows.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import DeclRef
from ..ir.optable import Arg, In, Out, op
from ..ir.types import AccPhase, MemorySpace

#: elements along K that share one E8M0 scale
MX_GROUP = 32
#: K of one MX instruction must be a multiple of this (two scale groups, one packed scale pair)
MX_K_ALIGN = 64
MXFP8 = (dt.DT_FP8E4M3FN, dt.DT_FP8E5M2)
MXFP4 = (dt.DT_FP4E2M1, dt.DT_FP4E1M2)


def _scale_shape(data_shape, left: bool):
    return [data_shape[0], data_shape[1] // MX_GROUP] if left else [data_shape[0] // MX_GROUP, data_shape[1]]


def _check_scale(c, a, name: str, data: str, left: bool):
    scale, tile = a[name], a[data]
    c.space(name, scale, MemorySpace.ScaleLeft if left else MemorySpace.ScaleRight)
    if scale.dtype != dt.DT_FP8E8M0:
        c.fail(f"'{name}' must be an FP8E8M0 tile, got {scale.dtype.name}")
    ss, ds = scale.static_shape, tile.static_shape
    if ss is not None and ds is not None and list(ss) != _scale_shape(ds, left):
        c.fail(f"'{name}' shape must match the MX groups of '{data}': expected {_scale_shape(ds, left)} for "
               f"'{data}' shape {list(ds)}, got {list(ss)}")
    if isinstance(scale, DeclRef) and isinstance(tile, DeclRef):
        want = tile.tile.addr >> 4
        if scale.tile.addr != want:
            c.fail(f"'{name}' address must equal the '{data}' address >> 4 (the MX instruction reads its scales "
                   f"there): '{data}' is at {tile.tile.addr:#x}, so '{name}' belongs at {want:#x}, not "
                   f"{scale.tile.addr:#x}")


def _check_mx(c, a, acc=None):
    dst, lhs, rhs = a["dst"], a["lhs"], a["rhs"]
    c.space("dst", dst, MemorySpace.Acc)
    c.space("lhs", lhs, MemorySpace.Left)
    c.space("rhs", rhs, MemorySpace.Right)
    if not ((lhs.dtype in MXFP8 and rhs.dtype in MXFP8) or (lhs.dtype in MXFP4 and rhs.dtype in MXFP4)):
        c.fail(f"operands must both be MXFP8 (FP8E4M3FN/FP8E5M2) or both MXFP4 (FP4E2M1/FP4E1M2), got "
               f"{lhs.dtype.name} x {rhs.dtype.name}")
    if dst.dtype != dt.DT_FP32:
        c.fail(f"dst must be an FP32 accumulator, got {dst.dtype.name}")
    ls, rs, ds = lhs.static_shape, rhs.static_shape, dst.static_shape
    if ls and rs and ls[1] != rs[0]:
        c.fail(f"lhs K={ls[1]} differs from rhs K={rs[0]}")
    for name, shape, axis in (("lhs", ls, 1), ("rhs", rs, 0)):
        if shape and shape[axis] % MX_K_ALIGN:
            c.fail(f"K must be a multiple of {MX_K_ALIGN} for MX matmul, got {name} K={shape[axis]}")
    if ls and rs and ds and list(ds) != [ls[0], rs[1]]:
        c.fail(f"dst shape must be [lhs M, rhs N] = {[ls[0], rs[1]]}, got {list(ds)}")
    if acc is not None:
        c.space("acc", acc, MemorySpace.Acc)
        if acc.dtype != dt.DT_FP32:
            c.fail(f"acc must be an FP32 accumulator, got {acc.dtype.name}")
        if acc.static_shape and ds and tuple(acc.static_shape) != tuple(ds):
            c.fail(f"acc shape {list(acc.static_shape)} differs from dst shape {list(ds)}")
    _check_scale(c, a, "scale_a", "lhs", left=True)
    _check_scale(c, a, "scale_b", "rhs", left=False)
    if a.get("phase") is not None:
        a["phase"] = AccPhase(a["phase"])


def mx_product(lhs: np.ndarray, rhs: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray) -> np.ndarray:
    """The exact (float64) MX product of decoded mantissas ``lhs [M, K]``, ``rhs [K, N]`` and decoded
    E8M0 scales ``scale_a [M, ceil(K/32)]``, ``scale_b [ceil(K/32), N]``."""
    k = lhs.shape[1]
    x = lhs.astype(np.float64) * np.repeat(scale_a.astype(np.float64), MX_GROUP, axis=1)[:, :k]
    y = rhs.astype(np.float64) * np.repeat(scale_b.astype(np.float64), MX_GROUP, axis=0)[:k, :]
    with np.errstate(invalid="ignore", over="ignore"):
        return x @ y


def _run_mx(ctx, a, acc=None):
    lhs, rhs = ctx.tile(a["lhs"]), ctx.tile(a["rhs"])
    sa, sb = ctx.tile(a["scale_a"]), ctx.tile(a["scale_b"])
    for scale, data, name in ((sa, lhs, "scale_a"), (sb, rhs, "scale_b")):
        if scale.addr != data.addr >> 4:
            raise ctx.error(f"matmul_mx: {name} tile {scale.name} is at {scale.addr:#x}, but the MX instruction "
                            f"reads it at the address of {data.name} >> 4 = {data.addr >> 4:#x}")
    m, k = lhs.valid
    k2, n = rhs.valid
    if k2 != k:
        raise ctx.error(f"matmul_mx: lhs valid K={k} differs from rhs valid K={k2}")
    for name, v in (("M", m), ("K", k), ("N", n)):
        if not 1 <= v <= 4095:
            raise ctx.error(f"matmul_mx: {name}={v} is outside [1, 4095]")
    if k % MX_K_ALIGN:
        raise ctx.error(f"matmul_mx: valid K={k} is not a multiple of {MX_K_ALIGN}")
    groups = k // MX_GROUP
    if sa.valid[0] < m or sa.valid[1] < groups or sb.valid[0] < groups or sb.valid[1] < n:
        raise ctx.error(f"matmul_mx: scale valid windows {list(sa.valid)} / {list(sb.valid)} do not cover the "
                        f"[{m}, {groups}] / [{groups}, {n}] scales of an M={m} K={k} N={n} product")
    prod = mx_product(lhs.read_compute(m, k), rhs.read_compute(k, n), sa.read_compute(m, groups),
                      sb.read_compute(groups, n))
    d = ctx.tile(a["dst"])
    if m > d.shape[0] or n > d.shape[1]:
        raise ctx.error(f"matmul_mx: the {m}x{n} product does not fit {d.name} {list(d.shape)}")
    if acc is not None:
        prod = prod + ctx.tile(acc).read(m, n).astype(np.float64)
    d.write(prod.astype(np.float32), m, n)


_SCALES = [In("scale_a"), In("scale_b"), Arg("phase", default=None, kw_only=True)]


@op("matmul_mx", [Out("dst"), In("lhs"), In("rhs")] + _SCALES, "M", phased=True)
class MatmulMx:
    """pl.matmul_mx(dst, lhs, rhs, scale_a, scale_b, *, phase=None): dst = (lhs * 2^(scale_a-127)) @
    (rhs * 2^(scale_b-127)) with one E8M0 scale per 32 K-elements (MXFP8 or MXFP4 operands, FP32 Acc)."""

    @staticmethod
    def check(c, a):
        _check_mx(c, a)

    @staticmethod
    def run(ctx, a):
        _run_mx(ctx, a)


@op("matmul_mx_acc", [Out("dst"), In("acc"), In("lhs"), In("rhs")] + _SCALES, "M", phased=True)
class MatmulMxAcc:
    """pl.matmul_mx_acc(dst, acc, lhs, rhs, scale_a, scale_b, *, phase=None): dst = acc + the MX product."""

    @staticmethod
    def check(c, a):
        _check_mx(c, a, acc=a["acc"])

    @staticmethod
    def run(ctx, a):
        _run_mx(ctx, a, acc=a["acc"])


__all__ = ["mx_product", "MX_GROUP", "MXFP8", "MXFP4"]
