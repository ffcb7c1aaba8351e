"""Reshapes of values whose inner extents depend on a ``pypto.loop`` index.

A workspace is allocated once, at a launch-time bound of such extents.  A reshape seeing it with
another shape is zero-copy: when only its first axis (after size-1 axes) is clipped, the iteration's
elements are the allocation's leading ones; otherwise (``[M, b, s]`` seen as ``[M, b * s]`` with ``b``
and ``s`` clipped) the workspace and its reshapes are addressed with each iteration's exact dims.
Both must give torch's row-major reshape of the valid region, on interp and cpu alike."""
import pytest
import torch
import torch.nn.functional as F

import pypto

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC
TB, TS = 2, 3


def ragged_flatten():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, D, D], pypto.DT_FP32), out: pypto.Tensor([D, D, 4, TB * TS], pypto.DT_FP32)):
        nb, ns = x.shape[1], x.shape[2]
        pypto.set_vec_tile_shapes(4, 8, 8, 8)
        for b in pypto.loop((nb + TB - 1) // TB):
            for s in pypto.loop((ns + TS - 1) // TS):
                win = x[:, b * TB:(b + 1) * TB, s * TS:(s + 1) * TS] + 1.0  # clipped on both inner axes
                vb = pypto.min(TB, nb - b * TB)
                vs = pypto.min(TS, ns - s * TS)
                flat = pypto.reshape(win, [4, TB * TS], valid_shape=[4, vb * vs])
                out[b, s, :, :] = flat * 3.0
    return k


@BOTH
@pytest.mark.parametrize("nb, ns", [(4, 6), (3, 7), (1, 2)])
def test_flatten_of_a_window_clipped_on_two_inner_axes(nb, ns):
    x = torch.randn(4, nb, ns)
    gb, gs = -(-nb // TB), -(-ns // TS)
    out = torch.full((gb, gs, 4, TB * TS), -7.0)
    ragged_flatten()(x, out)
    for b in range(gb):
        for s in range(gs):
            block = ((x[:, b * TB:(b + 1) * TB, s * TS:(s + 1) * TS] + 1.0) * 3.0).reshape(4, -1)
            n = block.shape[1]
            assert torch.equal(out[b, s, :, :n], block), (b, s)
            assert (out[b, s, :, n:] == -7.0).all()  # past the valid region: not written


@BOTH
def test_matmul_of_flattened_clipped_windows():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, D, D], pypto.DT_FP32), w: pypto.Tensor([D, D, 8], pypto.DT_FP32),
          out: pypto.Tensor([D, 16, 8], pypto.DT_FP32)):
        nb, ns = w.shape[0], w.shape[1]
        for b in pypto.loop((nb + TB - 1) // TB):
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
            pypto.set_vec_tile_shapes(8, 8, 8)
            vb = pypto.min(TB, nb - b * TB)
            av = pypto.reshape(a[:, b * TB:(b + 1) * TB, 0:ns], [16, TB * ns], valid_shape=[16, vb * ns])
            wv = pypto.reshape(w[b * TB:(b + 1) * TB, 0:ns, :], [TB * ns, 8], valid_shape=[vb * ns, 8])
            out[b, :, :] = pypto.matmul(av, wv, pypto.DT_FP32)

    a, w = torch.randn(16, 5, 3), torch.randn(5, 3, 8)
    out = torch.zeros(3, 16, 8)
    k(a, w, out)
    for b in range(3):
        want = a[:, b * TB:(b + 1) * TB].reshape(16, -1) @ w[b * TB:(b + 1) * TB].reshape(-1, 8)
        torch.testing.assert_close(out[b], want, rtol=1e-5, atol=1e-5)


@BOTH
def test_clipped_rows_written_into_a_4d_workspace_through_size_one_axes():
    """``tmp[0, i:i + 2, 0] = rows``: the clipped axis has only size-1 axes before it (leading elements)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([D, 8], pypto.DT_FP32), w: pypto.Tensor([8, 8], pypto.DT_FP32),
          out: pypto.Tensor([D, 8], pypto.DT_FP32)):
        n = x.shape[0]
        tmp = pypto.tensor([1, n, 1, 8], pypto.DT_FP32, "tmp")
        for i in pypto.loop(0, n, 2):
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
            pypto.set_vec_tile_shapes(1, 8, 1, 8)
            tmp[0, i:i + 2, 0] = pypto.matmul(x[i:i + 2, :], w, pypto.DT_FP32)
        for i in pypto.loop(0, n, 2):
            pypto.set_vec_tile_shapes(2, 8)
            out[i:i + 2, :] = tmp[0, i:i + 2, 0] + 1.0

    x, w = torch.randn(5, 8), torch.randn(8, 8)
    out = torch.zeros(5, 8)
    k(x, w, out)
    torch.testing.assert_close(out, x @ w + 1.0, rtol=1e-5, atol=1e-5)


@BOTH
@pytest.mark.parametrize("hin", [10, 13])
def test_conv2d_over_row_chunks_of_a_dynamic_height(hin):
    """``pypto.conv`` of an input window clipped by a loop index (a DYNAMIC spatial dim: stride 1, no pads)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([1, 3, D, 9], pypto.DT_FP32), w: pypto.Tensor([4, 3, 3, 2], pypto.DT_FP32),
          out: pypto.Tensor([1, 4, D, 8], pypto.DT_FP32)):
        h = x.shape[2]
        ho = out.shape[2]
        pypto.set_vec_tile_shapes(1, 4, 8, 8)
        for i in pypto.loop((ho + 3) // 4):
            rows = (h - i * 4).min(6)
            win = pypto.view(x, [1, 3, 6, 9], [0, 0, i * 4, 0], valid_shape=[1, 3, rows, 9])
            y = pypto.conv(win, w, pypto.DT_FP32, [1, 1], [0, 0, 0, 0], [1, 1])
            pypto.assemble(y, [0, 0, i * 4, 0], out)

    x, w = torch.randn(1, 3, hin, 9), torch.randn(4, 3, 3, 2)
    want = F.conv2d(x.double(), w.double())
    out = torch.zeros(tuple(want.shape))
    k(x, w, out)
    scale = F.conv2d(x.abs().double(), w.abs().double())
    assert ((out.double() - want).abs() <= 1e-6 * scale + 1e-6).all()


def test_dynamic_spatial_conv_needs_stride_one_and_no_pads():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([1, 2, D, 8], pypto.DT_FP32), w: pypto.Tensor([2, 2, 3, 3], pypto.DT_FP32),
          out: pypto.Tensor([1, 2, D, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 2, 8, 8)
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1])

    with pytest.raises(NotImplementedError, match="DYNAMIC spatial dim 0"):
        k(torch.zeros(1, 2, 8, 8), torch.zeros(2, 2, 3, 3), torch.zeros(1, 2, 8, 8))
