"""``set_cube_tile_shapes(..., enable_split_k=True)``: the same product (K blocks summed in FP32/INT32),
with the official constraints checked (2-D to 4-D, FP32/INT32 out_dtype, no bias/scale/ReLU)."""
import pytest
import torch

import pypto


def _mm(split_k: bool, out_dtype=pypto.DT_FP32, bias: bool = False):
    @pypto.frontend.jit
    def mm(a: pypto.Tensor([32, 256], pypto.DT_FP16), b: pypto.Tensor([256, 32], pypto.DT_FP16),
           bias_row: pypto.Tensor([1, 32], pypto.DT_FP32), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 32], enable_split_k=split_k)
        params = {"bias_tensor": bias_row} if bias else None
        c[:] = pypto.matmul(a, b, out_dtype, extend_params=params)

    return mm


def test_split_k_gives_the_product():
    a, b = torch.randn(32, 256).half(), torch.randn(256, 32).half()
    bias = torch.zeros(1, 32)
    plain, split = torch.empty(32, 32), torch.empty(32, 32)
    _mm(False)(a, b, bias, plain)
    _mm(True)(a, b, bias, split)
    assert torch.equal(plain, split)
    torch.testing.assert_close(split, a.float() @ b.float(), rtol=1e-4, atol=1e-3)


def test_split_k_constraints():
    a, b = torch.randn(32, 256).half(), torch.randn(256, 32).half()
    bias = torch.zeros(1, 32)
    with pytest.raises(pypto.KernelTypeError, match="DT_FP32 or DT_INT32"):
        _mm(True, pypto.DT_FP16)(a, b, bias, torch.empty(32, 32).half())
    with pytest.raises(pypto.KernelTypeError, match="bias"):
        _mm(True, bias=True)(a, b, bias, torch.empty(32, 32))
    with pytest.raises(pypto.KernelTypeError, match="enable_split_k must be a bool"):
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 32], enable_split_k=1)
