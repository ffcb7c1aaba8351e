"""pypto.operation.op_wrapper and the native scalar ops of pypto.pypto_impl (ScalarAddS ... ScalarMaxS with
reverse_operand), as helpers decorated with op_wrapper call them (docs/tensor.md "Native entry points")."""
import pytest
import torch

import pypto
from pypto import pypto_impl
from pypto.operation import op_wrapper


@op_wrapper
def inverse_scaled(t, numerator):
    """numerator / t, built from a native call."""
    return pypto_impl.ScalarDivS(t, pypto_impl.Element(t.dtype, numerator), True)


@pypto.frontend.jit
def native_scalar_ops(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([6, 8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    e = pypto_impl.Element(pypto.DT_FP32, 3.0)
    out[0, :, :] = pypto_impl.ScalarAddS(x, e)
    out[1, :, :] = pypto_impl.ScalarSubS(x, e, True)
    out[2, :, :] = pypto_impl.ScalarMulS(x, e)
    out[3, :, :] = pypto_impl.ScalarDivS(x, e)
    out[4, :, :] = inverse_scaled(x, 5.0)
    out[5, :, :] = pypto_impl.ScalarMaxS(x, pypto_impl.Element(pypto.DT_FP32, 0.25))


@pytest.mark.both_backends
def test_native_scalar_ops_and_reverse_operand():
    x = torch.rand(8, 32) + 0.5
    out = torch.empty(6, 8, 32)
    native_scalar_ops(x, out)
    want = torch.stack([x + 3, 3 - x, x * 3, x / 3, 5 / x, torch.clamp(x, min=0.25)])
    torch.testing.assert_close(out, want)


def test_op_wrapper_keeps_the_function_and_refuses_non_callables():
    assert inverse_scaled.__name__ == "inverse_scaled" and "numerator" in inverse_scaled.__doc__
    with pytest.raises(pypto.KernelTypeError, match="op_wrapper"):
        op_wrapper(3)
    with pytest.raises(pypto.KernelTypeError, match="reverse_operand"):
        pypto_impl.ScalarDivS(None, 1.0, 1)
