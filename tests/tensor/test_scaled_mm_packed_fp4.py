"""Tensor-level FP4 parameters given packed ``uint8`` tensors (two codes per byte, element 2i in the low
nibble of byte i; the last dim counts bytes, the kernel sees the logical shape) and ``pypto.scaled_mm``
of FP4 E2M1 / E1M2 operands with E8M0 group scales (one per 32 K elements), against a numpy reference
that decodes every code from the format's fields; a kernel that writes an FP4 output packs it back."""
import numpy as np
import pytest
import torch

import pypto

M, K, N = 16, 128, 32
SK = (K + 63) // 64


def e2m1(code: np.ndarray) -> np.ndarray:
    """E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal (0 or 0.5)."""
    s, e, m = (code >> 3) & 1, (code >> 1) & 3, code & 1
    mag = np.where(e == 0, m * 0.5, (1 + m / 2) * 2.0 ** (e - 1))
    return np.where(s == 1, -mag, mag)


def e1m2(code: np.ndarray) -> np.ndarray:
    """E1M2: sign, 1 exponent bit, 2 mantissa bits: magnitude (code & 7) / 4."""
    mag = (code & 7) / 4.0
    return np.where((code >> 3) & 1, -mag, mag)


DECODE = {"e2m1": (pypto.DataType.DT_FP4_E2M1, e2m1), "e1m2": (pypto.DataType.DT_FP4_E1M2, e1m2)}


def pack(codes: np.ndarray) -> np.ndarray:
    """[R, C] codes -> [R, C/2] bytes: element 2i in the low nibble of byte i."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def _kernel(backend, dtype):
    @pypto.frontend.jit(backend=backend)
    def mx4(x: pypto.Tensor([pypto.STATIC, pypto.STATIC], dtype=dtype),
            y: pypto.Tensor([pypto.STATIC, pypto.STATIC], dtype=dtype),
            s: pypto.Tensor(), t: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 32)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        assert x.shape[1] == K  # the logical K (the tensor holds K / 2 bytes per row)
        o[:] = pypto.scaled_mm(x, y, pypto.DT_FP32, s, t)
    return mx4


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
@pytest.mark.parametrize("fmt", ["e2m1", "e1m2"])
def test_packed_fp4_scaled_mm_matches_numpy(backend, fmt):
    dtype, decode = DECODE[fmt]
    rng = np.random.default_rng(7)
    a_codes = rng.integers(0, 16, (M, K)).astype(np.uint8)
    b_codes = rng.integers(0, 16, (K, N)).astype(np.uint8)
    sa = rng.integers(122, 132, (M, SK, 2)).astype(np.uint8)
    sb = rng.integers(122, 132, (SK, N, 2)).astype(np.uint8)
    a_packed, b_packed = pack(a_codes), np.ascontiguousarray(pack(b_codes))
    out = torch.zeros(M, N)
    kernel = _kernel(backend, dtype)
    kernel(torch.from_numpy(a_packed), torch.from_numpy(b_packed), torch.from_numpy(sa).view(torch.float8_e8m0fnu),
           torch.from_numpy(sb).view(torch.float8_e8m0fnu), out)
    fa = np.repeat(2.0 ** (sa.reshape(M, SK * 2).astype(np.float64) - 127), 32, 1)
    fb = np.repeat(2.0 ** (sb.transpose(0, 2, 1).reshape(SK * 2, N).astype(np.float64) - 127), 32, 0)
    want = (decode(a_codes) * fa) @ (decode(b_codes) * fb)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)
    assert np.array_equal(a_packed, pack(a_codes))  # inputs are left as they were
    if backend == "sim":
        assert not kernel.last_report.hazards


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_fp4_output_is_packed_back(backend):
    """A kernel that writes an FP4 tensor: the caller's packed bytes receive the codes, two per byte."""
    @pypto.frontend.jit(backend=backend)
    def copy4(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], dtype=pypto.DataType.DT_FP4_E2M1),
              o: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], dtype=pypto.DataType.DT_FP4_E2M1)):
        pypto.set_vec_tile_shapes(16, 64)
        o[:] = x

    codes = np.random.default_rng(3).integers(0, 16, (16, 64)).astype(np.uint8)
    out = torch.zeros(16, 32, dtype=torch.uint8)
    copy4(torch.from_numpy(pack(codes)), out)
    assert np.array_equal(out.numpy(), pack(codes))
    assert list(pack(np.array([[1, 2, 3, 4]], np.uint8))[0]) == [0x21, 0x43]
    assert list(e2m1(np.array([1, 2, 3, 4, 9, 15]))) == [0.5, 1.0, 1.5, 2.0, -0.5, -6.0]


def test_wrong_dtype_for_fp4_parameter_is_named():
    kernel = _kernel("interp", pypto.DataType.DT_FP4_E2M1)
    sa = torch.full((M, SK, 2), 127, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    sb = torch.full((SK, N, 2), 127, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    with pytest.raises(pypto.KernelError, match="packed codes"):
        kernel(torch.zeros(M, K // 2), torch.zeros(K, N // 2, dtype=torch.uint8), sa, sb, torch.zeros(M, N))
