"""``pypto.symbolic_scalar(flag)`` of a Python bool (docs/tensor.md "Calling", named dynamic dims): the official constructor takes a
bool as the int 0 or 1, so a kernel option such as ``normalise=True`` can steer an ``if`` through it."""
import pytest
import torch

import pypto


def _scaled_rows_kernel():
    @pypto.frontend.jit
    def scaled_rows(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32),
                    normalise=True):
        pypto.set_vec_tile_shapes(8, 16)
        if pypto.symbolic_scalar(normalise):
            out[:] = pypto.div(x, pypto.sum(x, -1, True))
        else:
            out[:] = x * 2.0
    return scaled_rows


@pytest.mark.both_backends
@pytest.mark.parametrize("normalise", [True, False])
def test_a_bool_option_selects_the_branch(normalise):
    x = torch.rand(8, 16) + 0.5
    out = torch.empty(8, 16)
    _scaled_rows_kernel()(x, out, normalise=normalise)
    expected = x / x.sum(-1, keepdim=True) if normalise else x * 2.0
    torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)


def test_a_bool_is_the_immediate_one_or_zero():
    assert bool(pypto.symbolic_scalar(True)) and not bool(pypto.symbolic_scalar(False))
    assert str(pypto.symbolic_scalar(True) + 1) == str(pypto.symbolic_scalar(2))
