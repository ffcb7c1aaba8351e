"""pypto.Element (typed scalars), pypto.cond (explicit runtime conditions), set_matrix_size and the
conv tiling calls (docs/tensor.md)."""
import pytest
import torch

import pypto


def test_element_holds_its_value_converted_to_the_dtype():
    e = pypto.Element(pypto.DT_FP16, 0.1)
    assert e.dtype == pypto.DT_FP16 and e.value == float(torch.tensor(0.1, dtype=torch.float16))
    assert isinstance(e, pypto.Element) and isinstance(e.value, float)
    i = pypto.Element(pypto.DT_INT8, 300)
    assert i.value == 44 and i.dtype == pypto.DT_INT8  # wraps like a cast to INT8
    assert pypto.Element(pypto.DT_FP32, 3).value == 3.0
    assert pypto.Element(pypto.DT_BOOL, True).value is True
    assert "FP16" in repr(e)


def test_element_rejects_bad_arguments():
    with pytest.raises(pypto.KernelTypeError, match="dtype"):
        pypto.Element("fp32", 1.0)
    with pytest.raises(pypto.KernelTypeError, match="value"):
        pypto.Element(pypto.DT_FP32, "1.0")


@pypto.frontend.jit
def element_ops(x: pypto.Tensor([16, 64], pypto.DT_FP16), y: pypto.Tensor([16, 64], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = pypto.where(x > 0, x * pypto.Element(pypto.DT_FP16, 2.0), pypto.Element(pypto.DT_FP16, -1.0))


@pytest.mark.both_backends
def test_elements_are_scalar_operands():
    x, y = torch.randn(16, 64).half(), torch.empty(16, 64).half()
    element_ops(x, y)
    torch.testing.assert_close(y, torch.where(x > 0, x * 2, torch.tensor(-1.0).half()))


@pypto.frontend.jit
def mark_last(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(0, x.shape[0], 8):
        part = pypto.view(x, [8, 32], [i, 0])
        if pypto.cond(pypto.is_loop_end(i)):
            pypto.assemble(part + 100.0, [i, 0], y)
        else:
            pypto.assemble(part, [i, 0], y)


@pytest.mark.both_backends
def test_cond_marks_a_runtime_branch():
    for rows in (16, 40):
        x = torch.randn(rows, 32)
        y = torch.empty_like(x)
        mark_last(x, y)
        want = x.clone()
        want[-8:] += 100.0
        torch.testing.assert_close(y, want)
    assert mark_last.compile_count == 1


def test_cond_rejects_tensors():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        if pypto.cond(x):
            y[:] = x

    with pytest.raises(pypto.KernelTypeError, match="pypto.cond"):
        bad(torch.randn(8, 32), torch.empty(8, 32))


def test_set_matrix_size_is_validated_and_conv_tiling_is_not_implemented():
    @pypto.frontend.jit
    def mm(a: pypto.Tensor([32, 64], pypto.DT_FP16), b: pypto.Tensor([64, 16], pypto.DT_FP16),
           c: pypto.Tensor([32, 16], pypto.DT_FP32), size: tuple = (32, 64, 16)):
        pypto.set_cube_tile_shapes([16, 32], [32, 64], [16, 16])
        pypto.set_vec_tile_shapes(32, 16)
        pypto.set_matrix_size(list(size))
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b, c = torch.randn(32, 64).half(), torch.randn(64, 16).half(), torch.empty(32, 16)
    mm(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)
    with pytest.raises(pypto.KernelTypeError, match="set_matrix_size"):
        mm(a, b, c, (32, 64))
    with pytest.raises(pypto.KernelTypeError, match="set_conv_tile_shapes"):
        pypto.set_conv_tile_shapes([1, 1])
