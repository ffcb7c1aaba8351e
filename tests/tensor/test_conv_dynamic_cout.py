"""``pypto.conv`` with a DYNAMIC output-channel count: the weight is a view clipped by a ``pypto.loop``
index (``w[c:c + chunk]`` of a weight whose Cout is DYNAMIC), so each iteration convolves the input with
the next ``min(chunk, Cout - c)`` filters and assembles them at channel ``c``.  Cout is only the matmul's
M dim, so any chunk (one that does not divide Cout too) gives torch's convolution."""
import pytest
import torch
import torch.nn.functional as F

import pypto

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC


def chunked_conv1d(chunk: int, pad: int, bias: bool):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 4, 12], pypto.DT_FP32), w: pypto.Tensor([D, 4, 3], pypto.DT_FP32),
          b: pypto.Tensor([D], pypto.DT_FP32), out: pypto.Tensor([2, D, 12 + 2 * pad - 2], pypto.DT_FP32)):
        cout = w.shape[0]
        pypto.set_vec_tile_shapes(2, 8, 16)
        for i in pypto.loop(0, (cout + chunk - 1) // chunk, 1, name="cout_chunks"):
            c = i * chunk
            params = {"bias_tensor": b[c:c + chunk]} if bias else {}
            y = pypto.conv(x, w[c:c + chunk, 0:4, 0:3], pypto.DT_FP32, [1], [pad, pad], [1], extend_params=params)
            pypto.assemble(y, [0, c, 0], out)
    return k


@BOTH
@pytest.mark.parametrize("cout, chunk, pad, bias", [(32, 16, 1, False), (40, 16, 0, False), (24, 32, 1, True)])
def test_conv1d_dynamic_cout_chunks(cout, chunk, pad, bias):
    x, w, b = torch.randn(2, 4, 12), torch.randn(cout, 4, 3), torch.randn(cout)
    want = F.conv1d(x.double(), w.double(), b.double() if bias else None, padding=pad)
    out = torch.full(tuple(want.shape), float("nan"))
    chunked_conv1d(chunk, pad, bias)(x, w, b, out)
    scale = F.conv1d(x.abs().double(), w.abs().double(), b.abs().double() if bias else None, padding=pad)
    assert ((out.double() - want).abs() <= 1e-6 * scale + 1e-6).all()


def test_conv_dynamic_cout_needs_one_group():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([1, 4, 8], pypto.DT_FP32), w: pypto.Tensor([D, 2, 3], pypto.DT_FP32),
          out: pypto.Tensor([1, D, 6], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 8)
        out[:] = pypto.conv(x, w, pypto.DT_FP32, [1], [0, 0], [1], groups=2)

    with pytest.raises(NotImplementedError, match="DYNAMIC Cout"):
        k(torch.zeros(1, 4, 8), torch.zeros(4, 2, 3), torch.zeros(1, 4, 6))
