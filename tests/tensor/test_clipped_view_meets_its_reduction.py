"""A view declared longer than its tensor (``[1, 8, d]`` over rows that hold ``l`` < 8 at run time) meets a
value computed on its valid region (its row sums: ``l`` rows) in an element-wise op: the op computes on
the ``l`` valid rows.  The run-time check that DYNAMIC dims agree must not ask ``l`` to equal the view's
requested 8 (it did, so an RMS norm over such a view stopped with ``KernelRuntimeError``)."""
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
D = pypto.DYNAMIC


@pypto.frontend.jit
def row_normalise(v_flat: pypto.Tensor([D, D, 16], pypto.DT_FP32), out: pypto.Tensor([D, D, 16], pypto.DT_FP32)):
    bt, rows, d = v_flat.shape
    pypto.set_vec_tile_shapes(1, 8, 16)
    for i in pypto.loop(0, bt, 1, name="b", idx_name="i"):
        v = pypto.view(v_flat, [1, 8, d], [i, 0, 0], valid_shape=[1, rows, d])
        norm = pypto.sqrt(pypto.sum(pypto.mul(v, v), dim=-1, keepdim=True))
        pypto.assemble(pypto.div(v, norm), [i, 0, 0], out)


@BOTH
@pytest.mark.parametrize("rows", [5, 8])
def test_a_view_divided_by_its_own_row_norms(rows):
    v = torch.rand(3, rows, 16) + 0.5
    out = torch.zeros(3, rows, 16)
    row_normalise(v, out)
    want = v / v.square().sum(-1, keepdim=True).sqrt()
    assert torch.allclose(out, want, rtol=1e-6, atol=0)
