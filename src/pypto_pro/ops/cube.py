"""Cube ops (pipe M, inside ``section_cube``; docs/language.md "Semantics of ops").

``dst[M,N] = lhs[M,K] @ rhs[K,N] (+ bias)`` with M/K/N taken from the operands' valid windows.
Float operands (read as fp32, which holds every FP16/BF16/FP8/HF8 value exactly): each result element
is one fp32 FMA chain over k = 0..K-1 starting from the bias/accumulator value or +0
(``fp32math.matmul32``, the cpu backend's sequence, bit for bit). INT8 accumulates exactly in int64 and
wraps to the INT32 accumulator. Narrowing happens only when the result leaves Acc (store/move fixpipe).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import AccPhase, MemorySpace
from .fp32math import matmul32

FP8 = (dt.DT_FP8E4M3FN, dt.DT_FP8E5M2)


def acc_dtype_for(lhs, rhs):
    """The accumulator dtype of a matmul of these operand dtypes, or None if the pair is not supported."""
    a, b = lhs.name, rhs.name
    if a == b and a in ("FP16", "BF16", "FP32", "HF8"):
        return dt.DT_FP32
    if lhs in FP8 and rhs in FP8:
        return dt.DT_FP32
    if a == b == "INT8":
        return dt.DT_INT32
    return None


def _check_mm(c, a, acc=None):
    dst, lhs, rhs = a["dst"], a["lhs"], a["rhs"]
    c.space("dst", dst, MemorySpace.Acc)
    c.space("lhs", lhs, MemorySpace.Left)
    c.space("rhs", rhs, MemorySpace.Right)
    want = acc_dtype_for(lhs.dtype, rhs.dtype)
    if want is None:
        c.fail(f"unsupported operand dtypes {lhs.dtype.name} x {rhs.dtype.name} (FP16/BF16/FP32/FP8 pairs -> FP32, "
               f"INT8 x INT8 -> INT32)")
    if dst.dtype != want:
        c.fail(f"{lhs.dtype.name} x {rhs.dtype.name} accumulates in {want.name}, but dst is {dst.dtype.name}")
    if acc is not None:
        c.space("acc", acc, MemorySpace.Acc)
        c.same_dtype(dst=dst, acc=acc)
    ls, rs, ds = lhs.static_shape, rhs.static_shape, dst.static_shape
    if ls and rs and ls[1] != rs[0]:
        c.fail(f"inner dimensions differ: lhs {list(ls)} @ rhs {list(rs)}")
    if ls and rs and ds and (ds[0] < ls[0] or ds[1] < rs[1]):
        c.fail(f"dst {list(ds)} cannot hold the [{ls[0]}, {rs[1]}] product")
    for n in ("lhs", "rhs"):
        if a[n].dtype.np_dtype is None:
            raise NotImplementedError(f"pl.matmul on {a[n].dtype.name} operands")
    if a.get("phase") is not None:
        a["phase"] = AccPhase(a["phase"])


def _operands(ctx, a):
    """lhs [M, K] and rhs [K, N] windows (int64 for INT8, fp32 otherwise) and M, N."""
    lhs, rhs = ctx.tile(a["lhs"]), ctx.tile(a["rhs"])
    m, k = lhs.valid
    k2, n = rhs.valid
    if k2 != k:
        raise ctx.error(f"matmul: lhs valid K={k} differs from rhs valid K={k2}")
    for name, v in (("M", m), ("K", k), ("N", n)):
        if not 1 <= v <= 4095:
            raise ctx.error(f"matmul: {name}={v} is outside [1, 4095]")
    kind = np.int64 if lhs.dtype == dt.DT_INT8 else np.float32
    return lhs.read_compute(m, k).astype(kind), rhs.read_compute(k, n).astype(kind), m, n


def _finish(ctx, a, x, y, m, n, base):
    """dst = base + x @ y: exact int64 wrapped to INT32, or the fp32 FMA chain."""
    d = ctx.tile(a["dst"])
    if m > d.shape[0] or n > d.shape[1]:
        raise ctx.error(f"matmul: the {m}x{n} product does not fit {d.name} {list(d.shape)}")
    if d.dtype == dt.DT_INT32:
        total = x @ y if base is None else x @ y + base.astype(np.int64)
        d.write(total.astype(np.int32), m, n)
    else:
        d.write(matmul32(x, y, base), m, n)


@op("matmul", [Out("dst"), In("lhs"), In("rhs"), In("bias", default=None), Arg("phase", default=None, kw_only=True)],
    "M", phased=True)
class Matmul:
    """pl.matmul(dst, lhs, rhs, bias=None, *, phase=None): dst = lhs @ rhs (+ bias [1,N] FP32 Bias tile),
    overwriting dst (Acc); M/K/N from the valid windows."""

    @staticmethod
    def check(c, a):
        _check_mm(c, a)
        if a["bias"] is not None:
            c.space("bias", a["bias"], MemorySpace.Bias)
            if a["bias"].dtype != dt.DT_FP32:
                c.fail("the bias tile must be FP32 (move FP16/BF16 bias from Mat to Bias to upcast)")

    @staticmethod
    def run(ctx, a):
        x, y, m, n = _operands(ctx, a)
        base = None if a["bias"] is None else ctx.tile(a["bias"]).read(1, n)
        _finish(ctx, a, x, y, m, n, base)


@op("matmul_acc", [Out("dst"), In("acc"), In("lhs"), In("rhs"), Arg("phase", default=None, kw_only=True)], "M",
    phased=True)
class MatmulAcc:
    """pl.matmul_acc(dst, acc, lhs, rhs, *, phase=None): dst = acc + lhs @ rhs (usually dst is acc)."""

    @staticmethod
    def check(c, a):
        _check_mm(c, a, acc=a["acc"])

    @staticmethod
    def run(ctx, a):
        x, y, m, n = _operands(ctx, a)
        _finish(ctx, a, x, y, m, n, ctx.tile(a["acc"]).read(m, n))


__all__ = ["acc_dtype_for"]
