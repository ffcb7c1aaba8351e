"""MX matmul (pl.matmul_mx / pl.matmul_mx_acc): MXFP8 and packed MXFP4 operands with E8M0 group scales.

The kernels below walk K in 64-element steps (two 32-element scale groups, one scale pair per row of
A and per column of B), load the scale pairs from ``[rows, G/2, 2]`` / ``[G/2, cols, 2]`` tensors into
ZZ / NN Mat tiles, move them next to the data at ``addr(data) >> 4`` and accumulate in FP32.  The
expectation is a numpy float64 product of the decoded operands, rounded once to fp32 (what the
reference computes); a second, independent check uses small exact values.
"""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError, KernelTypeError, lowprec

BACKENDS = ["interp", "cpu", "sim"]
KT = 64  # K per MX step
E8M0_ONE = 127

FP8 = {"e4m3": (pl.DT_FP8E4M3FN, ml_dtypes.float8_e4m3fn), "e5m2": (pl.DT_FP8E5M2, ml_dtypes.float8_e5m2)}
FP4 = {"e2m1": pl.DT_FP4E2M1, "e1m2": pl.DT_FP4E1M2}


def fp4_values(name: str, codes: np.ndarray) -> np.ndarray:
    if name == "e2m1":
        return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    return lowprec.e1m2_decode(codes).astype(np.float64)


def pair_scales(groups_last: np.ndarray) -> np.ndarray:
    """Logical scales [R, G] (groups on the last axis) -> stored pairs [R, G/2, 2]."""
    r, g = groups_last.shape
    return np.ascontiguousarray(groups_last.reshape(r, g // 2, 2))


def e8m0(codes: np.ndarray) -> np.ndarray:
    return np.where(codes == 0xFF, np.nan, np.exp2(codes.astype(np.float64) - 127))


def mx_kernel(M, K, N, a_dt, b_dt, packed: bool, b_transposed: bool, backend: str, tm: int = 64, tn: int = 64):
    """out[M, N] = MX(a, b); B is stored [K, N] or, with ``b_transposed``, [N, K] (loaded with order=[1, 0])."""
    ga = K // 32
    a_cols = K // 2 if packed else K
    b_shape = ([N, K // 2] if packed else [N, K]) if b_transposed else ([K, N // 2] if packed else [K, N])
    sb_shape = [N, ga // 2, 2] if b_transposed else [ga // 2, N, 2]
    S = KT // 32

    @pl.jit(backend=backend, auto_mutex=True)
    def mx_mm(a: pl.Tensor[[M, a_cols], a_dt], b: pl.Tensor[b_shape, b_dt],
              sa: pl.Tensor[[M, ga // 2, 2], pl.DT_FP8E8M0], sb: pl.Tensor[sb_shape, pl.DT_FP8E8M0],
              out: pl.Tensor[[M, N], pl.DT_FP32]):
        b_layout = pl.ZN if b_transposed else pl.NZ
        a1 = pl.make_tile_group(type=pl.TileType(shape=[tm, KT], dtype=a_dt, target_memory=pl.MemorySpace.Mat,
                                                 valid_shape=[-1, -1]), addrs=0x0, mutex_ids=[0, 1])
        b1 = pl.make_tile_group(type=pl.TileType(shape=[KT, tn], dtype=b_dt, target_memory=pl.MemorySpace.Mat,
                                                 layout=b_layout, valid_shape=[-1, -1]),
                                addrs=0x8000, mutex_ids=[2, 3])
        sa1 = pl.make_tile_group(type=pl.TileType(shape=[tm, S], dtype=pl.DT_FP8E8M0,
                                                  target_memory=pl.MemorySpace.Mat, layout=pl.ZZ,
                                                  valid_shape=[-1, -1]), addrs=0x10000, mutex_ids=[4, 5])
        sb1 = pl.make_tile_group(type=pl.TileType(shape=[S, tn], dtype=pl.DT_FP8E8M0,
                                                  target_memory=pl.MemorySpace.Mat, layout=pl.NN,
                                                  valid_shape=[-1, -1]), addrs=0x11000, mutex_ids=[6, 7])
        la = pl.make_tile_group(type=pl.TileType(shape=[tm, KT], dtype=a_dt, target_memory=pl.MemorySpace.Left,
                                                 valid_shape=[-1, -1]), addrs=[0x0, 0x2000], mutex_ids=[8, 9])
        rb = pl.make_tile_group(type=pl.TileType(shape=[KT, tn], dtype=b_dt, target_memory=pl.MemorySpace.Right,
                                                 valid_shape=[-1, -1]), addrs=[0x0, 0x2000], mutex_ids=[10, 11])
        # the MX instruction finds the scales at the data address >> 4
        lsa = pl.make_tile_group(type=pl.TileType(shape=[tm, S], dtype=pl.DT_FP8E8M0,
                                                  target_memory=pl.MemorySpace.ScaleLeft, valid_shape=[-1, -1]),
                                 addrs=[0x0, 0x200], mutex_ids=[12, 13])
        rsb = pl.make_tile_group(type=pl.TileType(shape=[S, tn], dtype=pl.DT_FP8E8M0,
                                                  target_memory=pl.MemorySpace.ScaleRight, valid_shape=[-1, -1]),
                                 addrs=[0x0, 0x200], mutex_ids=[14, 15])
        acc = pl.make_tile_group(type=pl.TileType(shape=[tm, tn], dtype=pl.DT_FP32,
                                                  target_memory=pl.MemorySpace.Acc, valid_shape=[-1, -1]),
                                 addrs=0x0, mutex_ids=[16])
        with pl.section_cube():
            if packed:
                pl.set_stride(a, [K, 1])
                if b_transposed:
                    pl.set_stride(b, [1, K])
                else:
                    pl.set_stride(b, [N, 1])
            for m0 in pl.range(0, M, tm):
                mv = pl.min(tm, M - m0)
                for n0 in pl.range(0, N, tn):
                    nv = pl.min(tn, N - n0)
                    c = acc.current()
                    pl.set_validshape(c, [mv, nv])
                    for k0 in pl.range(0, K, KT):
                        ta, tb, ts, tt = a1.next(), b1.next(), sa1.next(), sb1.next()
                        l, r, ls, rs = la.next(), rb.next(), lsa.next(), rsb.next()
                        for t, shape in ((ta, [mv, KT]), (l, [mv, KT]), (tb, [KT, nv]), (r, [KT, nv]),
                                         (ts, [mv, S]), (ls, [mv, S]), (tt, [S, nv]), (rs, [S, nv])):
                            pl.set_validshape(t, shape)
                        if packed:
                            pl.load(ta, a, [m0, k0 // 2])
                        else:
                            pl.load(ta, a, [m0, k0])
                        if b_transposed:
                            if packed:
                                pl.load(tb, b, [n0, k0 // 2], order=[1, 0])
                            else:
                                pl.load(tb, b, [n0, k0], order=[1, 0])
                            pl.load(tt, sb, [n0, k0 // KT, 0], order=[1, 0])
                        else:
                            if packed:
                                pl.load(tb, b, [k0, n0 // 2])
                            else:
                                pl.load(tb, b, [k0, n0])
                            pl.load(tt, sb, [k0 // KT, n0, 0])
                        pl.load(ts, sa, [m0, k0 // KT, 0])
                        pl.move(l, ta)
                        pl.move(r, tb)
                        pl.move(ls, ts)
                        pl.move(rs, tt)
                        if k0 == 0:
                            pl.matmul_mx(c, l, r, ls, rs, phase=pl.AccPhase.Final if K == KT else pl.AccPhase.Partial)
                        elif k0 + KT < K:
                            pl.matmul_mx_acc(c, c, l, r, ls, rs, phase=pl.AccPhase.Partial)
                        else:
                            pl.matmul_mx_acc(c, c, l, r, ls, rs, phase=pl.AccPhase.Final)
                    pl.store(out, c, [m0, n0], phase=pl.STPhase.Final)

    return mx_mm


def stepwise(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The FP32 accumulator after each 64-wide K step: exact step products, one rounding per step."""
    acc = np.zeros((x.shape[0], y.shape[1]), np.float32)
    for k0 in range(0, x.shape[1], KT):
        acc = (acc.astype(np.float64) + x[:, k0:k0 + KT] @ y[k0:k0 + KT]).astype(np.float32)
    return acc


def fp8_operands(rng, M, K, N, a_name, b_name, b_transposed):
    a_dt, a_np = FP8[a_name]
    b_dt, b_np = FP8[b_name]
    a = rng.uniform(-4, 4, (M, K)).astype(a_np)
    b = rng.uniform(-4, 4, (K, N)).astype(b_np)
    sa = rng.integers(120, 135, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(120, 135, (K // 32, N)).astype(np.uint8)
    expect = stepwise(a.astype(np.float64) * np.repeat(e8m0(sa), 32, 1), b.astype(np.float64) * np.repeat(e8m0(sb), 32, 0))
    b_arg = np.ascontiguousarray(b.T) if b_transposed else b
    sb_arg = pair_scales(sb.T) if b_transposed else np.ascontiguousarray(pair_scales(sb.T).transpose(1, 0, 2))
    return (a_dt, b_dt), (a.view(np.uint8), b_arg.view(np.uint8), pair_scales(sa), sb_arg), expect


def fp4_operands(rng, M, K, N, a_name, b_name, b_transposed):
    a_codes = rng.integers(0, 16, (M, K)).astype(np.uint8)
    b_codes = rng.integers(0, 16, (K, N)).astype(np.uint8)
    sa = rng.integers(124, 131, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(124, 131, (K // 32, N)).astype(np.uint8)
    a_vals, b_vals = fp4_values(a_name, a_codes), fp4_values(b_name, b_codes)
    expect = stepwise(a_vals * np.repeat(e8m0(sa), 32, 1), b_vals * np.repeat(e8m0(sb), 32, 0))
    b_arg = lowprec.pack_fp4(b_codes.T) if b_transposed else lowprec.pack_fp4(b_codes)
    sb_arg = pair_scales(sb.T) if b_transposed else np.ascontiguousarray(pair_scales(sb.T).transpose(1, 0, 2))
    return ((FP4[a_name], FP4[b_name]), (lowprec.pack_fp4(a_codes), b_arg, pair_scales(sa), sb_arg),
            expect)


def _run(backend, monkeypatch, kernel_args, make_kernel):
    if backend == "cpu":  # no C++ 8/4-bit types: $PYPTO_BACKEND=cpu runs MX kernels on the interpreter
        monkeypatch.setenv("PYPTO_BACKEND", "cpu")
        with pytest.warns(RuntimeWarning, match="interpreter"):
            make_kernel(None)(*kernel_args)
    else:
        make_kernel(backend)(*kernel_args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a_name,b_name,b_t", [("e4m3", "e5m2", True), ("e5m2", "e4m3", False)])
def test_mxfp8_matmul_with_tails(backend, a_name, b_name, b_t, monkeypatch):
    M, K, N = 72, 128, 80  # M/N tails, two K steps
    rng = np.random.default_rng(3)
    (a_dt, b_dt), args, expect = fp8_operands(rng, M, K, N, a_name, b_name, b_t)
    out = np.zeros((M, N), np.float32)
    _run(backend, monkeypatch, args + (out,), lambda be: mx_kernel(M, K, N, a_dt, b_dt, False, b_t, be))
    np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a_name,b_name,b_t", [("e2m1", "e1m2", True), ("e1m2", "e2m1", False),
                                               ("e2m1", "e2m1", False)])
def test_mxfp4_matmul_packed_operands(backend, a_name, b_name, b_t, monkeypatch):
    M, K, N = 40, 192, 64
    rng = np.random.default_rng(4)
    (a_dt, b_dt), args, expect = fp4_operands(rng, M, K, N, a_name, b_name, b_t)
    out = np.zeros((M, N), np.float32)
    _run(backend, monkeypatch, args + (out,), lambda be: mx_kernel(M, K, N, a_dt, b_dt, True, b_t, be))
    np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-6)


def test_exact_small_values_and_group_scales():
    """Ones times ones with distinct per-group exponents: each output is sum_g 32 * 2^(ea_g + eb_g - 254)."""
    M = K = N = 64
    a = np.ones((M, K), ml_dtypes.float8_e4m3fn)
    b = np.ones((K, N), ml_dtypes.float8_e5m2)
    sa = np.tile(np.uint8([127 + 3, 127 - 2]), (M, 1))
    sb = np.tile(np.uint8([[0], [254]]), (1, N))
    out = np.zeros((M, N), np.float32)
    kernel = mx_kernel(M, K, N, pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, False, False, "interp")
    kernel(a.view(np.uint8), b.view(np.uint8), pair_scales(sa),
           np.ascontiguousarray(pair_scales(sb.T).transpose(1, 0, 2)), out)
    want = 32 * 2.0 ** (130 + 0 - 254) + 32 * 2.0 ** (125 + 254 - 254)
    assert np.all(out == np.float32(want))


def test_e8m0_nan_code_poisons_the_result():
    M = K = N = 64
    a = np.ones((M, K), ml_dtypes.float8_e4m3fn).view(np.uint8)
    b = np.ones((K, N), ml_dtypes.float8_e4m3fn).view(np.uint8)
    sa = np.full((M, 2), 0xFF, np.uint8)
    sb = np.full((1, N, 2), E8M0_ONE, np.uint8)
    out = np.zeros((M, N), np.float32)
    mx_kernel(M, K, N, pl.DT_FP8E4M3FN, pl.DT_FP8E4M3FN, False, False, "interp")(a, b, pair_scales(sa), sb, out)
    assert np.isnan(out).all()


def test_packed_fp4_argument_must_be_bytes():
    M, K, N = 64, 64, 64
    kernel = mx_kernel(M, K, N, pl.DT_FP4E2M1, pl.DT_FP4E2M1, True, False, "interp")
    with pytest.raises(Exception, match="packed"):
        kernel(np.zeros((M, K // 2), np.float32), np.zeros((K, N // 2), np.uint8), np.zeros((M, 1, 2), np.uint8),
               np.zeros((1, N, 2), np.uint8), np.zeros((M, N), np.float32))


def _packed_load_kernel(strided: bool):
    @pl.jit(backend="interp")
    def kernel(a: pl.Tensor[[4, 16], pl.DT_FP4E2M1]):  # 4 rows of 32 FP4 elements
        t = pl.make_tile(pl.TileType([4, 64], pl.DT_FP4E2M1, pl.MemorySpace.Mat), addr=0)
        with pl.section_cube():
            if strided:
                pl.set_stride(a, [64, 1])
            pl.load(t, a, [0, 0])

    return kernel


@pytest.mark.parametrize("strided,match", [(False, r"window \[0, 64\) on axis 1 exceeds packed tensor 'a'"),
                                           (True, "element 255 of packed tensor 'a'")])
def test_packed_fp4_load_window_is_bounds_checked(strided, match):
    with pytest.raises(KernelRuntimeError, match=match):
        _packed_load_kernel(strided)(np.zeros((4, 16), np.uint8))


def test_packed_fp4_set_stride_takes_row_and_column_steps():
    @pl.jit(backend="interp")
    def kernel(a: pl.Tensor[[4, 16, 8], pl.DT_FP4E2M1]):
        with pl.section_cube():
            pl.set_stride(a, [16, 1, 0])

    with pytest.raises(KernelTypeError, match="row_stride, col_stride"):
        kernel(np.zeros((4, 16, 8), np.uint8))


# --------------------------------------------------------------------------- static rules
def _single(body, a_dt=pl.DT_FP8E4M3FN, b_dt=pl.DT_FP8E4M3FN, k=64, sa_addr=0x40, sa_shape=None):
    sa_shape = sa_shape or [16, k // 32]

    @pl.jit(backend="interp")
    def kernel(out: pl.Tensor[[16, 16], pl.DT_FP32]):
        l = pl.make_tile(pl.TileType([16, k], a_dt, pl.MemorySpace.Left), addr=0x400)
        r = pl.make_tile(pl.TileType([k, 16], b_dt, pl.MemorySpace.Right), addr=0x0)
        ls = pl.make_tile(pl.TileType(sa_shape, pl.DT_FP8E8M0, pl.MemorySpace.ScaleLeft), addr=sa_addr)
        rs = pl.make_tile(pl.TileType([k // 32, 16], pl.DT_FP8E8M0, pl.MemorySpace.ScaleRight), addr=0x0)
        c = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Acc), addr=0x0)
        with pl.section_cube():
            body(c, l, r, ls, rs)

    return kernel


def plain_mx(c, l, r, ls, rs):
    pl.matmul_mx(c, l, r, ls, rs)


def swapped_scales(c, l, r, ls, rs):
    pl.matmul_mx(c, l, r, rs, ls)


@pytest.mark.parametrize("kw,match", [
    (dict(sa_addr=0x60), "address must equal"),
    (dict(k=32), "multiple of 64"),
    (dict(b_dt=pl.DT_FP4E2M1), "both be MXFP8"),
    (dict(a_dt=pl.DT_FP16, b_dt=pl.DT_FP16), "both be MXFP8"),
    (dict(sa_shape=[16, 4]), "MX groups"),
])
def test_static_rules(kw, match):
    kernel = _single(plain_mx, **kw)
    with pytest.raises(KernelTypeError, match=match):
        kernel(np.zeros((16, 16), np.float32))


def test_scales_must_come_from_scale_buffers():
    kernel = _single(swapped_scales)
    with pytest.raises(KernelTypeError, match="ScaleLeft"):
        kernel(np.zeros((16, 16), np.float32))


def test_mx_scale_tensor_needs_a_pair_axis():
    @pl.jit(backend="interp")
    def kernel(s: pl.Tensor[[64, 2], pl.DT_FP8E8M0]):
        t = pl.make_tile(pl.TileType([64, 2], pl.DT_FP8E8M0, pl.MemorySpace.Mat, layout=pl.ZZ), addr=0)
        with pl.section_cube():
            pl.load(t, s, [0, 0])

    with pytest.raises(KernelTypeError, match="length 2"):
        kernel(np.zeros((64, 2), np.uint8))
