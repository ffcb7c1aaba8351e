"""A tensor made by pypto.zeros/full before a pypto.loop and updated in it with `acc[:] = acc + part`
accumulates over every iteration (the write gives it a workspace and the value written reads that
workspace, frontend/snapshots.py `redirect`); it kept only the last iteration before."""
import pytest
import torch

import pypto

W = 48


@pypto.frontend.jit
def column_totals(x: pypto.Tensor([pypto.DYNAMIC, 4, W], pypto.DT_FP32), out: pypto.Tensor([1, 1, W], pypto.DT_FP32),
                  peak: pypto.Tensor([1, 1, W], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4, W)
    acc = pypto.zeros([1, 1, W], dtype=pypto.DT_FP32)
    best = pypto.full([1, 1, W], -1000.0, pypto.DT_FP32)
    for i in pypto.loop(0, x.shape[0], 1):
        part = pypto.sum(pypto.view(x, [1, 4, W], [i, 0, 0]), dim=1, keepdim=True)
        acc[:] = acc + part * 0.5
        best[:] = pypto.maximum(best, part)
    out[:] = acc
    peak[:] = best


@pytest.mark.both_backends
@pytest.mark.parametrize("rows", [1, 7])
def test_an_accumulator_made_before_the_loop_sums_every_iteration(rows):
    x = torch.randn(rows, 4, W)
    out, peak = torch.empty(1, 1, W), torch.empty(1, 1, W)
    column_totals(x, out, peak)
    parts = x.sum(1, keepdim=True)
    torch.testing.assert_close(out, (parts * 0.5).sum(0, keepdim=True))
    torch.testing.assert_close(peak, parts.amax(0, keepdim=True))


@pypto.frontend.jit
def written_twice(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    t = pypto.full([8, 32], 2.0, pypto.DT_FP32)
    before = t * 3.0  # read before the write: the value then
    t[:] = t + x
    y[:] = t * 10.0 + before


def test_straight_line_writes_keep_value_semantics():
    x, y = torch.randn(8, 32), torch.empty(8, 32)
    written_twice(x, y)
    torch.testing.assert_close(y, (2.0 + x) * 10.0 + 6.0)
