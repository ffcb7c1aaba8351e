"""What ``pypto.matmul`` does on the cube's way in and out needs no vector tiles: a bias, a scale
(per tensor or per channel, also for a loop window whose last block is shorter), ReLU and the
conversion to ``out_dtype`` run on cube-sized tiles, as do gathered operands; other vector work on
the product still needs ``set_vec_tile_shapes``."""
import struct

import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelSyntaxError

I8, I32, F32 = pypto.DT_INT8, pypto.DT_INT32, pypto.DT_FP32


def _cut(scale: float) -> float:
    """The fixpipe's scale: sign, exponent and the top 10 mantissa bits."""
    (bits,) = struct.unpack("<I", struct.pack("<f", scale))
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFE000))[0]


@pypto.frontend.jit
def quant_blocks(a: pypto.Tensor([pypto.DYNAMIC, 64], I8), b: pypto.Tensor([64, pypto.DYNAMIC], I8),
                 bias: pypto.Tensor([1, pypto.DYNAMIC], I32), scales: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_UINT64),
                 out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP16)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])  # no vector tiles
    m, n = a.shape[0], b.shape[1]
    for j in pypto.loop((n + 31) // 32):
        cols = slice(j * 32, (j + 1) * 32)
        out[0:m, cols] = pypto.matmul(a, b[:, cols], pypto.DT_FP16, extend_params={
            "bias_tensor": bias[0:1, cols], "scale_tensor": scales[0:1, cols], "relu_type": pypto.ReLuType.RELU})


@pytest.mark.both_backends
def test_per_channel_dequant_with_bias_and_relu_runs_on_cube_tiles():
    g = torch.Generator().manual_seed(3)
    m, n = 32, 80  # the last column block holds 16 columns
    a = torch.randint(-8, 8, (m, 64), generator=g, dtype=torch.int8)
    b = torch.randint(-8, 8, (64, n), generator=g, dtype=torch.int8)
    bias = torch.randint(-100, 100, (1, n), generator=g, dtype=torch.int32)
    fs = (torch.rand(1, n, generator=g) * 0.01 + 0.001).numpy().astype(np.float32)
    scales = torch.from_numpy(fs.view(np.uint32).astype(np.uint64))
    out = torch.empty(m, n, dtype=torch.float16)
    quant_blocks(a, b, bias, scales, out)
    cut = torch.tensor([[_cut(float(v)) for v in fs[0]]])
    acc = a.int() @ b.int() + bias
    want = torch.relu(acc.float() * cut).half()
    assert torch.equal(out, want)


@pypto.frontend.jit
def quant_per_tensor(a: pypto.Tensor([32, 64], I8), b: pypto.Tensor([64, 32], I8), out: pypto.Tensor([32, 32], I8)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    out[:] = pypto.matmul(a, b, I8, extend_params={"scale": 0.05})


@pytest.mark.both_backends
def test_per_tensor_quant_runs_on_cube_tiles():
    g = torch.Generator().manual_seed(4)
    a = torch.randint(-20, 20, (32, 64), generator=g, dtype=torch.int8)
    b = torch.randint(-20, 20, (64, 32), generator=g, dtype=torch.int8)
    out = torch.empty(32, 32, dtype=torch.int8)
    quant_per_tensor(a, b, out)
    prod = (a.int() @ b.int()).float() * _cut(0.05)
    assert torch.equal(out, torch.clamp(torch.round(prod), -128, 127).to(torch.int8))


@pypto.frontend.jit
def product_plus_one(a: pypto.Tensor([32, 32], F32), b: pypto.Tensor([32, 32], F32), out: pypto.Tensor([32, 32], F32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    out[:] = pypto.matmul(a, b, F32, extend_params={"relu_type": pypto.ReLuType.RELU}) + 1.0


def test_the_kernels_own_vector_work_still_needs_vector_tiles():
    with pytest.raises(KernelSyntaxError, match="set_vec_tile_shapes"):
        product_plus_one(torch.randn(32, 32), torch.randn(32, 32), torch.empty(32, 32))
