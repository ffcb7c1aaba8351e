"""One-op vector kernels for the tile-level tests, plus exact comparison helpers.

``run_vec(body, ins, outs)`` builds (once, cached) a real ``@pl.jit`` kernel that loads every input
array into a Vec tile, sets the requested valid windows, calls the plain Python helper ``body``
(inlined by the parser) with ``(out_tiles, in_tiles, scalars)`` and stores every output tile back.
``scalars`` is the runtime tuple ``(vr, vc, si, sf)``: the valid rows/cols and one int and one float
kernel argument.  Kernels are closures, so shapes, dtypes and ``body`` are compile-time constants.
"""
import functools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple, Union

import ml_dtypes
import numpy as np

import pypto_pro.language as pl

MAX_IN, MAX_OUT = 4, 3
#: a valid-window token: "r"/"c" = the runtime valid rows/cols, an int = a fixed extent
Tok = Union[str, int]

NP = {pl.DT_FP16: np.float16, pl.DT_BF16: ml_dtypes.bfloat16, pl.DT_FP32: np.float32, pl.DT_INT8: np.int8,
      pl.DT_INT16: np.int16, pl.DT_INT32: np.int32, pl.DT_INT64: np.int64, pl.DT_UINT8: np.uint8,
      pl.DT_UINT16: np.uint16, pl.DT_UINT32: np.uint32, pl.DT_UINT64: np.uint64}
BY_NP = {np.dtype(v): k for k, v in NP.items()}


@dataclass(frozen=True)
class Spec:
    """A Vec tile of the generated kernel: shape, dtype, layout, pad, valid window, and for outputs
    whether the tile is loaded from the output tensor first (in/out operands)."""

    shape: Tuple[int, int]
    dtype: pl.DataType
    layout: Optional[pl.Layout] = None
    pad: Optional[pl.TilePad] = None
    valid: Optional[Tuple[Tok, Tok]] = None
    init: bool = False


_DUMMY = Spec((1, 8), pl.DT_INT32)


def _window(t, valid, vr, vc):
    """Inlined into kernels: set ``t``'s valid window from compile-time tokens."""
    if valid is not None:
        pl.set_validshape(t, [_pick(valid[0], vr, vc), _pick(valid[1], vr, vc)])


def _pick(tok, vr, vc):
    if tok == "r":
        return vr
    if tok == "c":
        return vc
    return tok


def _addresses(specs: Sequence[Spec]) -> Tuple[int, ...]:
    """Consecutive UB addresses, 512-byte aligned (beyond the 32-byte rule, so tiles never touch)."""
    addrs, at = [], 0
    for s in specs:
        addrs.append(at)
        at += -(-(s.shape[0] * s.shape[1] * s.dtype.nbytes) // 512) * 512
    return tuple(addrs)


@functools.lru_cache(maxsize=None)
def vec_kernel(body: Callable, ins: Tuple[Spec, ...], outs: Tuple[Spec, ...]):
    """The cached ``@pl.jit`` kernel running ``body`` on tiles described by ``ins``/``outs``."""
    n_in, n_out = len(ins), len(outs)
    I = tuple(ins) + (_DUMMY,) * (MAX_IN - n_in)  # noqa: E741
    O = tuple(outs) + (_DUMMY,) * (MAX_OUT - n_out)  # noqa: E741
    IA = _addresses(ins)
    OA = tuple(a + (IA[-1] + 65536 if ins else 0) for a in _addresses(outs))

    @pl.jit
    def kernel(x0: pl.Tensor[list(I[0].shape), I[0].dtype], x1: pl.Tensor[list(I[1].shape), I[1].dtype],
               x2: pl.Tensor[list(I[2].shape), I[2].dtype], x3: pl.Tensor[list(I[3].shape), I[3].dtype],
               y0: pl.Tensor[list(O[0].shape), O[0].dtype], y1: pl.Tensor[list(O[1].shape), O[1].dtype],
               y2: pl.Tensor[list(O[2].shape), O[2].dtype], vr: int, vc: int, si: int, sf: float):
        xs = [x0, x1, x2, x3]
        ys = [y0, y1, y2]
        tin = []
        tout = []
        for i in range(n_in):
            tin = tin + [pl.make_tile(pl.TileType(I[i].shape, I[i].dtype, layout=I[i].layout, pad=I[i].pad),
                                      addr=IA[i])]
        for i in range(n_out):
            tout = tout + [pl.make_tile(pl.TileType(O[i].shape, O[i].dtype, layout=O[i].layout, pad=O[i].pad),
                                        addr=OA[i])]
        with pl.section_vector():
            for i in range(n_in):
                _window(tin[i], I[i].valid, vr, vc)
                pl.load(tin[i], xs[i], [0, 0])
            for i in range(n_out):
                _window(tout[i], O[i].valid, vr, vc)
                if O[i].init:
                    pl.load(tout[i], ys[i], [0, 0])
            body(tout, tin, (vr, vc, si, sf))
            for i in range(n_out):
                pl.store(ys[i], tout[i], [0, 0])

    return kernel


def spec_of(arr: np.ndarray, **kw) -> Spec:
    return Spec(tuple(arr.shape), BY_NP[arr.dtype], **kw)


def run_vec(body: Callable, ins: Sequence[np.ndarray], outs: Sequence[Spec], *, in_specs: Sequence[Spec] = None,
            init: Sequence[Optional[np.ndarray]] = (), fill=None, vr: int = 1, vc: int = 1, si: int = 0,
            sf: float = 0.0):
    """Run ``body`` on ``ins``; returns the output arrays (``fill`` where nothing was stored).

    ``in_specs`` overrides the specs derived from the arrays (to set layouts/windows); ``init`` gives
    starting contents for outputs whose spec has ``init=True``."""
    in_specs = tuple(in_specs) if in_specs is not None else tuple(spec_of(a) for a in ins)
    kernel = vec_kernel(body, in_specs, tuple(outs))
    results = []
    for i, s in enumerate(outs):
        start = init[i] if i < len(init) and init[i] is not None else None
        if start is not None:
            results.append(np.array(start, dtype=NP[s.dtype]))
        else:
            results.append(np.full(s.shape, _fill_value(s.dtype, fill), dtype=NP[s.dtype]))
    dummies_in = [np.zeros((1, 8), np.int32)] * (MAX_IN - len(ins))
    dummies_out = [np.zeros((1, 8), np.int32) for _ in range(MAX_OUT - len(outs))]
    kernel(*ins, *dummies_in, *results, *dummies_out, vr, vc, si, sf)
    return results


def _fill_value(dtype, fill):
    if fill is not None:
        return fill
    return np.nan if dtype.is_float() else 0x5A


# ----------------------------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------------------------
def assert_bits_equal(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """Exact equality including NaN positions and the sign of zeros (NaN payloads may differ)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "iub":
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
        bad = actual != expected
    else:
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        bad = ~((a == e) & (np.signbit(a) == np.signbit(e)) | (np.isnan(a) & np.isnan(e)))
    if bad.any():
        idx = np.argwhere(bad)[:5]
        detail = ", ".join(f"{tuple(i)}: got {actual[tuple(i)]!r} want {expected[tuple(i)]!r}" for i in idx)
        raise AssertionError(f"{what}: {int(bad.sum())} mismatches, e.g. {detail}")


def ulp(dtype) -> float:
    """Relative spacing of the dtype's significand (2^-mantissa_bits)."""
    return {pl.DT_FP16: 2.0 ** -10, pl.DT_BF16: 2.0 ** -7, pl.DT_FP32: 2.0 ** -23}[dtype]


def rounded(values, dtype) -> np.ndarray:
    """numpy values (computed in fp32 or the int dtype) rounded once to ``dtype`` storage."""
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(NP[dtype])


def f32(a: np.ndarray) -> np.ndarray:
    """The compute view of ``a``: fp32 for floats, the array itself for ints."""
    return a.astype(np.float32) if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16 else a


def random_array(rng: np.random.Generator, shape, dtype, low=-8.0, high=8.0) -> np.ndarray:
    """Random values of ``dtype``: floats uniform in [low, high), ints over a small symmetric range."""
    if dtype.is_float():
        return rng.uniform(low, high, shape).astype(NP[dtype])
    info = np.iinfo(NP[dtype])
    lo, hi = max(info.min, int(low) * 8), min(info.max, int(high) * 8)
    return rng.integers(lo, hi, shape, endpoint=True).astype(NP[dtype])


# ----------------------------------------------------------------------------------------------
# Cube kernels
# ----------------------------------------------------------------------------------------------
MAT, LEFT, RIGHT, ACC, BIAS = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                               pl.MemorySpace.Bias)


@functools.lru_cache(maxsize=None)
def matmul_kernel(M: int, K: int, N: int, dtype, acc_dtype, out_dtype, *, b_dtype=None, transposed_b=False,
                  relu=False, scale=None, runtime_scale=False, bias=False, k_tile=None, lhs_space=LEFT):
    """A one-block cube kernel ``c = store(A @ B (+ bias))``: GM -> Mat -> Left/Right -> Acc -> GM.

    ``transposed_b``: B comes as an [N, K] tensor, loaded with order=[1,0] into a ZN Mat tile.
    ``k_tile``: K is accumulated in blocks (matmul for the first, matmul_acc for the rest).
    ``relu``/``scale``/``runtime_scale``: fixpipe options of the store (the runtime scale is the ``s``
    argument).  ``bias``: a [1, N] tensor of ``dtype`` moved Mat -> Bias (upcast to FP32).
    Every kernel takes ``(a, b, bias_tensor, c, s)``; unused arguments are dummies."""
    b_dtype = b_dtype or dtype
    kt = k_tile or K
    bshape = [N, K] if transposed_b else [K, N]
    mode = pl.ReluPreMode.NormalRelu if relu else None

    @pl.jit
    def kernel(a: pl.Tensor[[M, K], dtype], b: pl.Tensor[bshape, b_dtype], bias_t: pl.Tensor[[1, N], dtype],
               c: pl.Tensor[[M, N], out_dtype], s: float):
        a1 = pl.make_tile(pl.TileType([M, kt], dtype, MAT), addr=0)
        b1 = pl.make_tile(pl.TileType([kt, N], b_dtype, MAT, layout=pl.ZN if transposed_b else None), addr=0x20000)
        bias1 = pl.make_tile(pl.TileType([1, N], dtype, MAT), addr=0x60000)
        a0 = pl.make_tile(pl.TileType([M, kt], dtype, lhs_space), addr=0)
        b0 = pl.make_tile(pl.TileType([kt, N], b_dtype, RIGHT), addr=0)
        bias0 = pl.make_tile(pl.TileType([1, N], pl.DT_FP32, BIAS), addr=0)
        acc = pl.make_tile(pl.TileType([M, N], acc_dtype, ACC), addr=0)
        with pl.section_cube():
            if pl.constexpr(bias):
                pl.load(bias1, bias_t, [0, 0])
                pl.move(bias0, bias1)
            for kk in pl.range(K // kt):
                pl.load(a1, a, [0, kk * kt])
                if pl.constexpr(transposed_b):
                    pl.load(b1, b, [0, kk * kt], order=[1, 0])
                else:
                    pl.load(b1, b, [kk * kt, 0])
                pl.move(a0, a1)
                pl.move(b0, b1)
                if kk == 0:
                    if pl.constexpr(bias):
                        pl.matmul(acc, a0, b0, bias0)
                    else:
                        pl.matmul(acc, a0, b0)
                else:
                    pl.matmul_acc(acc, acc, a0, b0)
            if pl.constexpr(runtime_scale):
                pl.store(c, acc, [0, 0], relu_pre_mode=mode, scale=s)
            else:
                pl.store(c, acc, [0, 0], relu_pre_mode=mode, scale=scale)

    return kernel


def run_matmul(a: np.ndarray, b: np.ndarray, acc_dtype, out_dtype, *, bias_values=None, s: float = 0.0, **kw):
    """Run :func:`matmul_kernel` on numpy operands; returns C."""
    dtype = BY_NP[a.dtype]
    M, K = a.shape
    N = b.shape[0] if kw.get("transposed_b") else b.shape[1]
    kernel = matmul_kernel(M, K, N, dtype, acc_dtype, out_dtype, b_dtype=BY_NP[b.dtype],
                           bias=bias_values is not None, **kw)
    bias_t = np.zeros((1, N), a.dtype) if bias_values is None else bias_values
    c = np.full((M, N), 0x5A if out_dtype.is_int() else np.nan, NP[out_dtype])
    kernel(a, b, bias_t, c, s)
    return c
