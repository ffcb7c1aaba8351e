"""Tensor-level mistakes are reported as KernelErrors that name the kernel, its line and what to
write instead, in tensor-level terms (no tile API a @pypto.frontend.jit user cannot call)."""
import inspect
import math

import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelRuntimeError, KernelTypeError

D = pypto.DYNAMIC


def _line_of(fn, needle: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if needle in line)


def _raises(kernel, args, kind=KernelTypeError):
    with pytest.raises(kind) as info:
        kernel(*args)
    return info.value


def _rows(n=8):
    return torch.randn(n, 64), torch.empty(n, 64)


def test_a_torch_function_names_the_pypto_op():
    def body(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = torch.sigmoid(a) + 1.0

    err = _raises(pypto.frontend.jit(body), _rows())
    assert err.kernel == "body" and err.loc.lineno == _line_of(body, "torch.sigmoid")
    assert "torch.sigmoid()" in str(err) and "use pypto.sigmoid(...)" in str(err)


def test_a_torch_function_without_a_pypto_op_says_so():
    def nofn(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = torch.special.i0(a)

    err = _raises(pypto.frontend.jit(nofn), _rows())
    assert "pypto has no op named 'special_i0'" in str(err) or "pypto has no op named 'i0'" in str(err)


def test_a_torch_nn_functional_call_points_to_pypto():
    def act(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = torch.nn.functional.gelu(a)

    assert "use pypto.gelu(...)" in str(_raises(pypto.frontend.jit(act), _rows()))


def test_a_numpy_ufunc_names_the_pypto_op():
    def npexp(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = np.exp(a)

    err = _raises(pypto.frontend.jit(npexp), _rows())
    assert "numpy.exp()" in str(err) and "use pypto.exp(...)" in str(err)
    assert err.loc.lineno == _line_of(npexp, "np.exp")


def test_numpy_conversion_of_a_recorded_tensor_is_an_error_not_a_hang():
    def conv(a: pypto.Tensor([16, 64], pypto.DT_FP32), c: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = a * float(np.asarray(a).sum())

    assert "cannot become a numpy array" in str(_raises(pypto.frontend.jit(conv), _rows(16)))


def test_a_data_dependent_if_suggests_where():
    def branchy(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        if pypto.amax(a) > 0:
            c[:] = a

    err = _raises(pypto.frontend.jit(branchy), _rows())
    assert isinstance(err, pypto.KernelError) and isinstance(err, TypeError)
    assert "pypto.where(cond, a, b)" in str(err) and err.loc.lineno == _line_of(branchy, "if pypto.amax")


def test_math_on_a_dynamic_dim_says_how_to_get_the_value():
    def scaled(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = a * (1.0 / math.sqrt(a.shape[0]))

    msg = str(_raises(pypto.frontend.jit(scaled), _rows()))
    assert "math functions and float()" in msg and "pypto.STATIC" in msg and "range()" not in msg


def test_math_on_a_static_dim_still_works():
    @pypto.frontend.jit
    def scaled(a: pypto.Tensor([8, 64], pypto.DT_FP32), c: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = a * (1.0 / math.sqrt(a.shape[0]))

    a, c = _rows()
    scaled(a, c)
    torch.testing.assert_close(c, a / math.sqrt(8))


def test_an_out_of_bounds_assemble_speaks_tensor_level():
    def k(a: pypto.Tensor([D, 64], pypto.DT_FP32), c: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.assemble(pypto.view(a, [16, 64], [0, 0]) + 1.0, [4, 0], c)

    err = _raises(pypto.frontend.jit(k), _rows(), KernelRuntimeError)
    msg = str(err)
    assert "writing tensor 'c': elements [4, 12) on axis 0 are outside its shape [8, 64]" in msg
    assert "pypto.assemble" in msg and "pl." not in msg and "AIV" not in msg
    assert err.loc.lineno == _line_of(k, "pypto.assemble(")


def test_oversized_cube_tiles_run_in_smaller_steps():
    """Cube tiles that overflow L0 are not refused (the official system runs such programs): K reaches L0
    in smaller steps (lower/cube_fit.py)."""
    def mm(a: pypto.Tensor([256, 256], pypto.DT_FP16), b: pypto.Tensor([256, 256], pypto.DT_FP16),
           c: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([256, 256], [256, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b = torch.randn(256, 256).half(), torch.randn(256, 256).half()
    c = torch.empty(256, 256)
    pypto.frontend.jit(mm, backend="interp")(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)


def test_the_cube_tiles_message_says_what_overflows_and_what_fits():
    """The message for cube tiles that fit nowhere (an arch smaller than the real ones)."""
    from pypto.lower.cube_fit import cube_tiles_error
    from pypto_pro.arch import resolve_arch

    msg = str(cube_tiles_error(resolve_arch("a5"), 256, 256, 256, pypto.DT_FP16, pypto.DT_FP16, pypto.DT_FP32,
                               None, "mm"))
    assert "L0A (Left) needs 131072 bytes" in msg and "(shrink m/k)" in msg and "L0C (Acc)" not in msg
    assert "These fit: pypto.set_cube_tile_shapes(" in msg


CAPTURED = torch.ones(1, 64)


def test_a_captured_torch_tensor_or_numpy_scalar_says_what_to_pass():
    def captured(a: pypto.Tensor([8, 64], pypto.DT_FP32), c: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = CAPTURED * a

    def npscalar(a: pypto.Tensor([8, 64], pypto.DT_FP32), c: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        c[:] = a * np.float32(2.0)

    msg = str(_raises(pypto.frontend.jit(captured), _rows()))
    assert "got a torch.Tensor from outside the kernel: pass it as a kernel argument" in msg
    assert "use a Python number" in str(_raises(pypto.frontend.jit(npscalar), _rows()))
