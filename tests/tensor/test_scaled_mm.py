"""``pypto.scaled_mm``: the MX product ``(a * scale_a) @ (b * scale_b)``, one E8M0 scale per 32 K elements
(scale shapes ``[M, ceil(K/64), 2]`` / ``[ceil(K/64), N, 2]``, transposed ``[ceil(K/64), M, 2]`` /
``[N, ceil(K/64), 2]``), against a numpy expectation; FP8 values, subnormals and the E8M0 extremes decode
exactly on every backend."""
import numpy as np
import pytest
import torch

import pypto

M, K, N = 16, 96, 32
SK = (K + 63) // 64


def _run(backend, a_trans, b_trans, sa_trans, sb_trans, a, b, sa, sb):
    @pypto.frontend.jit(backend=backend)
    def mx(x: pypto.Tensor(), y: pypto.Tensor(), s: pypto.Tensor(), t: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        o[:] = pypto.scaled_mm(x, y, pypto.DT_FP32, s, t, a_trans=a_trans, b_trans=b_trans,
                               scale_a_trans=sa_trans, scale_b_trans=sb_trans)

    out = torch.zeros(M, N)
    mx(a.T.contiguous() if a_trans else a, b.T.contiguous() if b_trans else b,
       sa.permute(1, 0, 2).contiguous() if sa_trans else sa, sb.permute(1, 0, 2).contiguous() if sb_trans else sb, out)
    return out, mx


def _want(a, b, sa, sb):
    fa = sa.float().reshape(M, SK * 2).repeat_interleave(32, 1)[:, :K]
    fb = sb.float().permute(0, 2, 1).reshape(SK * 2, N).repeat_interleave(32, 0)[:K]
    return (a.float().numpy().astype(np.float64) * fa.numpy()) @ (b.float().numpy().astype(np.float64) * fb.numpy())


def _inputs(seed):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand(M, K, generator=g) * 6 - 3).to(torch.float8_e4m3fn)
    b = (torch.rand(K, N, generator=g) * 6 - 3).to(torch.float8_e5m2)
    sa = torch.randint(120, 134, (M, SK, 2), generator=g, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    sb = torch.randint(120, 134, (SK, N, 2), generator=g, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    return a, b, sa, sb


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
@pytest.mark.parametrize("trans", ["0000", "1111", "0110", "1001"])
def test_scaled_mm_matches_the_block_scaled_product(backend, trans):
    a, b, sa, sb = _inputs(int(trans, 2))
    out, k = _run(backend, *(c == "1" for c in trans), a, b, sa, sb)
    np.testing.assert_allclose(out.numpy(), _want(a, b, sa, sb), rtol=1e-5, atol=1e-3)
    if backend == "sim":
        assert not k.last_report.hazards


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_fp8_and_e8m0_codes_decode_exactly(backend):
    """Every finite E4M3FN code (subnormals and -0 included) and E5M2 subnormals, zeros and extremes, with
    E8M0 scales 2**-127, 1 and 2**10: each column of B has one nonzero, so each output is one exact product."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    a8 = codes.view(torch.float8_e4m3fn)
    finite = torch.isfinite(a8.float())
    a = a8[finite].repeat(7)[:M * K].reshape(M, K)
    b_codes = torch.tensor([1, 2, 3, 4, 60, 61, 122, 123, 129, 131, 188, 251, 0, 128, 70, 200] * 2,
                           dtype=torch.uint8).view(torch.float8_e5m2)  # subnormals, +-0, the largest finite
    b = torch.zeros(K, N, dtype=torch.float8_e5m2)
    for n in range(N):
        b[(n * 3) % K, n] = b_codes[n]
    sa = torch.full((M, SK, 2), 127, dtype=torch.uint8)
    sa[0, 0, 0], sa[1, 0, 1] = 0, 137
    sa = sa.view(torch.float8_e8m0fnu)
    sb = torch.full((SK, N, 2), 127, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    out, _ = _run(backend, False, False, False, False, a, b, sa, sb)
    assert np.array_equal(out.numpy(), _want(a, b, sa, sb).astype(np.float32))


def test_wrong_scale_dtype_is_named():
    a, b, sa, sb = _inputs(0)
    with pytest.raises(pypto.KernelError, match="DT_FP8E8M0"):
        _run("interp", False, False, False, False, a, b, sa.view(torch.uint8), sb)
