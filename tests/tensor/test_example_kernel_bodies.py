"""Kernel bodies of the official PyPTO examples (examples/01_beginner .. 03_advanced) that the tensor
level once rejected or crashed on, checked against torch."""
import pytest
import torch

import pypto
from pypto_pro.errors import KernelTypeError


def _softmax_core(x):
    row_max = pypto.amax(x, dim=-1, keepdim=True)
    exp = pypto.exp(x - row_max)
    return exp / pypto.sum(exp, dim=-1, keepdim=True)


@pytest.mark.both_backends
def test_softmax_loop_over_batch_views():
    """02_intermediate/operators/softmax: reductions wider than the vec tile on views whose offset is a
    pypto.loop index (workspaces sized at launch), stored with ``out[b:, ...] = value``."""
    @pypto.frontend.jit
    def softmax_kernel(input_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                       output_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        bs, seqlen, head, dim = input_tensor.shape
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for idx in pypto.loop(0, bs, 1, name="LOOP_L0_bIdx", idx_name="idx"):
            input_view = input_tensor[idx:idx + 1, :seqlen, :head, :dim]
            output_tensor[idx:, ...] = _softmax_core(input_view)

    x = torch.rand(3, 4, 1, 256)
    out = torch.zeros_like(x)
    softmax_kernel(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), atol=3e-3, rtol=1e-3)


@pytest.mark.both_backends
def test_loop_view_reduction_2d():
    @pypto.frontend.jit
    def kernel(inp: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 64)
        for i in pypto.loop(inp.shape[0] // 4):
            v = inp[i * 4:(i + 1) * 4, :]
            pypto.assemble(v - pypto.amax(v, dim=-1, keepdim=True), [i * 4, 0], out)

    x = torch.rand(8, 256)
    out = torch.zeros_like(x)
    kernel(x, out)
    torch.testing.assert_close(out, x - x.amax(-1, keepdim=True))


@pytest.mark.both_backends
def test_loop_view_matmul_then_vector_op():
    """03_advanced attention_with_projection: a matmul of a loop-offset view feeding a vector op."""
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor((64, 32), pypto.DT_FP32), b: pypto.Tensor((32, 16), pypto.DT_FP32),
               out: pypto.Tensor((64, 16), pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [16, 16])
        pypto.set_vec_tile_shapes(16, 16)
        for i in pypto.loop(2):
            av = pypto.view(a, [32, 32], [i * 32, 0])
            pypto.assemble(pypto.matmul(av, b, pypto.DT_FP32) * 2.0, [i * 32, 0], out)

    a, b = torch.randn(64, 32), torch.randn(32, 16)
    out = torch.zeros(64, 16)
    kernel(a, b, out)
    torch.testing.assert_close(out, 2 * (a @ b), atol=1e-4, rtol=1e-4)


@pytest.mark.both_backends
def test_store_view_with_valid_shape():
    """01_beginner/transform/transform_ops test_view_with_valid_shape: storing a clipped view whose
    reported shape is the destination's writes its valid region only."""
    @pypto.frontend.jit
    def kernel(x: pypto.Tensor([...], pypto.DT_FP32), out: pypto.Tensor([...], pypto.DT_FP32),
               shape: list, offsets: list, valid_shape: list):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.view(x, shape, offsets, valid_shape=valid_shape)

    x = torch.tensor([[1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 2, 2, 3, 3, 4, 4],
                      [1, 1, 2, 2, 5, 5, 6, 6], [1, 1, 2, 2, 5, 5, 6, 6]], dtype=torch.float32)
    out = torch.full((4, 4), -1.0)
    kernel(x, out, [4, 4], [2, 4], [2, 4])
    expected = torch.full((4, 4), -1.0)
    expected[:2] = x[2:, 4:]
    torch.testing.assert_close(out, expected)


def test_store_of_smaller_tensor_still_rejected():
    @pypto.frontend.jit
    def kernel(x: pypto.Tensor([...], pypto.DT_FP32), out: pypto.Tensor([...], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x[0:2, 0:4]

    with pytest.raises(KernelTypeError, match="do not broadcast"):
        kernel(torch.zeros(4, 8), torch.zeros(4, 4))


@pytest.mark.both_backends
@pytest.mark.parametrize("m,k,n,bias_shape", [(2, 2, 2, (1, 2)), (40, 24, 48, (48,))])
def test_matmul_bias_without_vec_tiles(m, k, n, bias_shape):
    """01_beginner/compute/matmul_ops test_matmul_bias: the cube adds the bias row (no vec tiles set)."""
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor([...], pypto.DT_FP32), b: pypto.Tensor([...], pypto.DT_FP32),
               bias: pypto.Tensor([...], pypto.DT_FP32), out: pypto.Tensor([...], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [16, 16], [32, 32])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"bias_tensor": bias})

    a, b, bias = torch.randn(m, k), torch.randn(k, n), torch.randn(*bias_shape)
    out = torch.empty(m, n)
    kernel(a, b, bias, out)
    torch.testing.assert_close(out, a @ b + bias, atol=1e-4, rtol=1e-4)


@pytest.mark.both_backends
def test_reshape_of_loop_dependent_value():
    """attention_with_projection's ``reshape(transpose(context))`` on a per-batch view whose valid
    extent depends on the loop index: a zero-copy reshape of a workspace allocated at a bound."""
    @pypto.frontend.jit
    def kernel(x: pypto.Tensor((2, 4, 8), pypto.DT_FP32), out: pypto.Tensor((2, 32), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 8)
        for i in pypto.loop(0, 2, 1):
            end = pypto.min(i + 1, 2)
            v = pypto.view(x, [1, 4, 8], [i, 0, 0], valid_shape=[end - i, 4, 8])
            flat = pypto.reshape(pypto.transpose(v * 2.0, 1, 2), [1, 32])
            out[i:, ...] = flat

    x = torch.randn(2, 4, 8)
    out = torch.zeros(2, 32)
    kernel(x, out)
    torch.testing.assert_close(out, (2 * x).transpose(1, 2).reshape(2, 32))
