"""``x[..., i, a:b] = v``: an int subscript keeps its axis as size 1 in the written region, and a value
without those axes fills it (``res[2, 1:4] = v`` with ``v`` of shape [3]); 5-D vec tile shapes; unary +."""
import pytest
import torch

import pypto


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_value_without_the_int_axes_fills_the_region(backend):
    @pypto.frontend.jit(backend=backend)
    def place(x: pypto.Tensor([3, 8, 3], pypto.DT_FP32), y: pypto.Tensor([4], pypto.DT_FP32),
              res: pypto.Tensor([4, 8, 8, 8, 8], pypto.DT_FP32), col: pypto.Tensor([4, 6], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 4, 4, 4, 8)
        res[-2, -3:8, :, 1:4, 2] = +x
        res[..., 0] = pypto.full([4, 8, 8, 8], 7.0, pypto.DT_FP32)
        for i in pypto.loop(6, idx_name="i"):
            col[0:, i] = y * (i + 1)

    x, y = torch.randn(3, 8, 3), torch.randn(4)
    res, col = torch.zeros(4, 8, 8, 8, 8), torch.zeros(4, 6)
    place(x, y, res, col)
    want = torch.zeros(4, 8, 8, 8, 8)
    want[-2, -3:8, :, 1:4, 2] = x
    want[..., 0] = 7.0
    assert torch.equal(res, want)
    assert torch.equal(col, torch.stack([y * (i + 1) for i in range(6)], dim=1))


def test_launch_errors_use_the_official_wording():
    @pypto.frontend.jit
    def copy(a: pypto.Tensor([pypto.STATIC, 32], pypto.DT_INT32), b: pypto.Tensor([pypto.STATIC, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 32)
        b[:] = a

    ok = torch.zeros(8, 32, dtype=torch.int32)
    with pytest.raises(pypto.KernelLaunchError, match="does not match the shape"):
        copy(ok, torch.zeros(8, 31, dtype=torch.int32))
    with pytest.raises(pypto.KernelLaunchError, match="does not match the dtype"):
        copy(torch.zeros(8, 32), ok)
