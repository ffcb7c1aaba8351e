"""A shape of STATIC/DYNAMIC markers is a minimum rank: a [STATIC, STATIC] parameter takes a [1, 1, D]
tensor (the further dims are static), while an all-int or named-dim shape keeps its exact rank."""
import pytest
import torch

import pypto


@pypto.frontend.jit
def scale_rows(x: pypto.Tensor([pypto.DYNAMIC, 2, 32], pypto.DT_FP32), g: pypto.Tensor([pypto.STATIC, pypto.STATIC]),
               y: pypto.Tensor([pypto.DYNAMIC, 2, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 2, 32)
    y[:] = x * g


@pytest.mark.both_backends
def test_a_status_shape_takes_more_dims():
    x, g = torch.randn(4, 2, 32), torch.randn(1, 1, 32)
    y = torch.empty(4, 2, 32)
    scale_rows(x, g, y)
    torch.testing.assert_close(y, x * g)
    with pytest.raises(pypto.KernelLaunchError, match="expected a 2-D"):
        scale_rows(x, torch.randn(32), y)  # fewer dims than the markers: still an error


def test_an_exact_shape_keeps_its_rank():
    @pypto.frontend.jit
    def copy(x: pypto.Tensor([1, 32], pypto.DT_FP32), y: pypto.Tensor([1, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32)
        y[:] = x

    with pytest.raises(pypto.KernelLaunchError, match="expected a 2-D"):
        copy(torch.randn(1, 32, 1), torch.empty(1, 32))
