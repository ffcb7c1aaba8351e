"""Tile-level GM tensors declared ``pl.Tensor[[R, C], dtype, pl.NZ]``: NZ storage, logical addressing.

A tensor cast with ``npu_format_cast(t, 29)`` keeps its logical values; a kernel loads from and stores to
it with logical offsets, so every backend computes what the board computes.  The launch refuses an
argument whose format is not the declared one (the board would read one format's bytes as the other),
and the parser the shapes the official code generator refuses (not 2-D, not whole fractals)."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import KernelLaunchValueError, KernelTypeError
from pypto_pro.npu.formats import npu_format_cast

from .on_every_backend import EVERY_BACKEND, backend, jit_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

M, K, N = 32, 64, 32
S, P = pl.MemorySpace, pl.PipeType
F16, F32 = pl.DT_FP16, pl.DT_FP32


def _sync(src, dst, event):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=event)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=event)


def nz_weights_product(a: pl.Tensor[[M, K], F16], w: pl.Tensor[[K, N], F16, pl.NZ],
                       out_nz: pl.Tensor[[M, N], F32, pl.NZ], out_nd: pl.Tensor[[M, N], F32]):
    """out = a @ w, with the weight read from and the product written to NZ GM tensors."""
    a1 = pl.make_tile(pl.TileType([M, K], F16, S.Mat), addr=0x0, size=M * K * 2)
    w1 = pl.make_tile(pl.TileType([K, N], F16, S.Mat), addr=0x8000, size=K * N * 2)
    a0 = pl.make_tile(pl.TileType([M, K], F16, S.Left), addr=0x0, size=M * K * 2)
    w0 = pl.make_tile(pl.TileType([K, N], F16, S.Right), addr=0x0, size=K * N * 2)
    acc = pl.make_tile(pl.TileType([M, N], F32, S.Acc), addr=0x0, size=M * N * 4)
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(w1, w, [0, 0])
        _sync(P.MTE2, P.MTE1, 0)
        pl.move(a0, a1)
        pl.move(w0, w1)
        _sync(P.MTE1, P.M, 1)
        pl.matmul(acc, a0, w0)
        _sync(P.M, P.FIX, 2)
        pl.store(out_nz, acc, [0, 0])
        pl.store(out_nd, acc, [0, 0])


def halves_of_nz_weights(a: pl.Tensor[[M, K], F16], w: pl.Tensor[[K, N], F16, pl.NZ],
                         out_nd: pl.Tensor[[M, N], F32]):
    """out = a @ w with the weight's two K halves loaded at logical row offsets 0 and K/2."""
    a1 = pl.make_tile(pl.TileType([M, K // 2], F16, S.Mat), addr=0x0, size=M * K)
    w1 = pl.make_tile(pl.TileType([K // 2, N], F16, S.Mat), addr=0x8000, size=K * N)
    a0 = pl.make_tile(pl.TileType([M, K // 2], F16, S.Left), addr=0x0, size=M * K)
    w0 = pl.make_tile(pl.TileType([K // 2, N], F16, S.Right), addr=0x0, size=K * N)
    acc = pl.make_tile(pl.TileType([M, N], F32, S.Acc), addr=0x0, size=M * N * 4)
    with pl.section_cube():
        for h in pl.range(2):
            pl.load(a1, a, [0, h * (K // 2)])
            pl.load(w1, w, [h * (K // 2), 0])
            _sync(P.MTE2, P.MTE1, 0)
            pl.move(a0, a1)
            pl.move(w0, w1)
            _sync(P.MTE1, P.M, 1)
            if h == 0:
                pl.matmul(acc, a0, w0)
            else:
                pl.matmul_acc(acc, acc, a0, w0)
            _sync(P.M, P.MTE2, 3)
        _sync(P.M, P.FIX, 2)
        pl.store(out_nd, acc, [0, 0])


def _operands():
    a = torch.randint(-3, 4, (M, K)).to(torch.float16)
    w = torch.randint(-3, 4, (K, N)).to(torch.float16)
    return a, w, (a.float() @ w.float())


def test_nz_weights_and_nz_output_hold_logical_values(backend):
    a, w, want = _operands()
    out_nz = npu_format_cast(torch.full((M, N), float("nan")), 29)
    out_nd = torch.full((M, N), float("nan"))
    jit_on(nz_weights_product, backend)(a, npu_format_cast(w, 29), out_nz, out_nd)
    assert torch.equal(out_nd, want)
    assert torch.equal(out_nz.cpu(), want)  # the logical values, as .cpu() shows them on the board


def test_loads_from_an_nz_tensor_take_logical_offsets(backend):
    a, w, want = _operands()
    out = torch.full((M, N), float("nan"))
    jit_on(halves_of_nz_weights, backend)(a, npu_format_cast(w, 29), out)
    assert torch.equal(out, want)


def test_an_nd_tensor_for_an_nz_parameter_is_refused():
    a, w, _ = _operands()
    out_nz = npu_format_cast(torch.zeros(M, N), 29)
    with pytest.raises(KernelLaunchValueError, match=r"argument 'w': a ND tensor given to a parameter declared "
                                                      r"pl.NZ.*npu_format_cast\(t, 29\)"):
        jit_on(nz_weights_product, "interp")(a, w, out_nz, torch.zeros(M, N))
    with pytest.raises(KernelLaunchValueError, match="argument 'w'"):
        jit_on(nz_weights_product, "interp")(a, w.numpy(), out_nz, torch.zeros(M, N))


def test_an_nz_tensor_for_an_nd_parameter_is_refused():
    a, w, _ = _operands()
    out_nz = npu_format_cast(torch.zeros(M, N), 29)
    with pytest.raises(KernelLaunchValueError, match=r"argument 'out_nd': a FRACTAL_NZ tensor given to a "
                                                      r"parameter declared pl.ND"):
        jit_on(nz_weights_product, "interp")(a, npu_format_cast(w, 29), out_nz, npu_format_cast(torch.zeros(M, N), 29))


def bytes_of(src: pl.Ptr[pl.DT_FP16], out: pl.Tensor[[1, 16], F16]):
    t = pl.make_tensor(src, [1, 16])
    v = pl.make_tile(pl.TileType([1, 16], F16, S.Vec), addr=0x0, size=32)
    with pl.section_vector():
        pl.load(v, t, [0, 0])
        pl.store(out, v, [0, 0])


def test_an_nz_tensor_for_a_raw_pointer_is_refused():
    """A pl.Ptr reads bytes, and an NZ tensor's bytes are fractal storage on the board."""
    w = npu_format_cast(torch.ones(16, 16).half(), 29)
    with pytest.raises(KernelLaunchValueError, match="pl.Ptr parameter reads the argument's bytes"):
        jit_on(bytes_of, "interp")(w, torch.zeros(1, 16).half())


@pytest.mark.parametrize("ann, message", [
    ("pl.Tensor[[16, 16, 16], pl.DT_FP16, pl.NZ]", "must have 2 dims"),
    ("pl.Tensor[[24, 16], pl.DT_FP16, pl.NZ]", r"rows divisible by 16 and columns by C0 = 16"),
    ("pl.Tensor[[16, 12], pl.DT_FP32, pl.NZ]", r"columns by C0 = 8"),
    ("pl.Tensor[[16, 16], pl.DT_INT8, pl.NZ]", r"columns by C0 = 32"),
])
def test_nz_parameters_are_2d_whole_fractals(ann, message, tmp_path):
    src = tmp_path / "nz_kernel.py"
    src.write_text("import pypto_pro.language as pl\n\n"
                   f"def k(x: {ann}, y: pl.Tensor[[16, 16], pl.DT_FP32]):\n"
                   "    with pl.section_vector():\n        pass\n")
    namespace = {}
    exec(compile(src.read_text(), str(src), "exec"), namespace)
    with pytest.raises(KernelTypeError, match=message):
        pl.jit(namespace["k"], backend="interp").compile({})


def test_dynamic_nz_dims_are_checked_at_launch():
    def copy_rows(x: pl.Tensor[[pl.DYNAMIC, 16], F16, pl.NZ], y: pl.Tensor[[16, 16], F32]):
        with pl.section_vector():
            pass

    with pytest.raises(KernelLaunchValueError, match=r"shape \[24, 16\] needs rows divisible by 16"):
        pl.jit(copy_rows, backend="interp")(npu_format_cast(torch.zeros(24, 16).half(), 29), torch.zeros(16, 16))


def vec_into_nz(x: pl.Tensor[[16, 16], F32], y: pl.Tensor[[16, 16], F32, pl.NZ]):
    v = pl.make_tile(pl.TileType([16, 16], F32, S.Vec), addr=0x0, size=1024)
    with pl.section_vector():
        pl.load(v, x, [0, 0])
        pl.store(y, v, [0, 0])


def test_nz_tensors_are_written_from_acc_tiles():
    with pytest.raises(KernelTypeError, match="NZ GM tensor: it is written from an Acc tile"):
        pl.jit(vec_into_nz, backend="interp")(torch.zeros(16, 16), npu_format_cast(torch.zeros(16, 16), 29))


def test_results_agree_with_numpy():
    """The oracle's numbers are numpy's product (not only self-consistent across backends)."""
    rng = np.random.default_rng(5)
    a = rng.integers(-2, 3, (M, K)).astype(np.float16)
    w = rng.integers(-2, 3, (K, N)).astype(np.float16)
    out = torch.zeros(M, N)
    jit_on(halves_of_nz_weights, "interp")(torch.from_numpy(a), npu_format_cast(torch.from_numpy(w), 29), out)
    np.testing.assert_array_equal(out.numpy(), a.astype(np.float32) @ w.astype(np.float32))
