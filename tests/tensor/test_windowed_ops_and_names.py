"""Ops on loop windows and the names kernels use: ``triu``/``tril`` with a diagonal that depends on
the window's position, reductions over ``dim=()``, a keepdim result moved into a buffer without
that axis, ``reshape(valid_shape=)`` of a clipped window, parameter names, ``pypto.DT_DOUBLE``,
``jit(create_new_logical_tensor=)`` and ``Tensor.as_variable``."""
import pytest
import torch

import pypto

F32, I32 = pypto.DT_FP32, pypto.DT_INT32


@pypto.frontend.jit
def band_by_windows(x: pypto.Tensor([12, 12], I32), up: pypto.Tensor([12, 12], I32), lo: pypto.Tensor([12, 12], I32)):
    pypto.set_vec_tile_shapes(8, 8)
    for i in pypto.loop(3):
        for j in pypto.loop(2):
            win = pypto.view(x, [4, 6], [i * 4, j * 6])
            shift = i * 4 - j * 6  # the window's diagonal offset: a symbolic scalar
            pypto.assemble(pypto.triu(win, 1 + shift), [i * 4, j * 6], up)
            pypto.assemble(pypto.tril(win, -2 + shift), [i * 4, j * 6], lo)


@pytest.mark.both_backends
def test_triangles_of_windows_with_a_symbolic_diagonal():
    x = torch.randint(-9, 10, (12, 12), dtype=torch.int32)
    up, lo = torch.zeros_like(x), torch.zeros_like(x)
    band_by_windows(x, up, lo)
    assert torch.equal(up, torch.triu(x, 1)) and torch.equal(lo, torch.tril(x, -2))


@pypto.frontend.jit
def spreads(x: pypto.Tensor([4, 8], F32), every: pypto.Tensor([1], F32), total: pypto.Tensor([1], F32),
            cols: pypto.Tensor([8], F32)):
    pypto.set_vec_tile_shapes(4, 8)
    every.move(pypto.var(x, (), correction=1))
    total.move(pypto.sum(x, []))
    cols.move(pypto.var(x, (-2,), correction=0, keepdim=True))  # [1, 8] into [8]


@pytest.mark.both_backends
def test_empty_dims_reduce_everything_and_keepdim_results_move_into_flat_buffers():
    x = torch.randn(4, 8)
    every, total, cols = torch.empty(1), torch.empty(1), torch.empty(8)
    spreads(x, every, total, cols)
    torch.testing.assert_close(every, torch.var(x).reshape(1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(total, x.sum().reshape(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(cols, torch.var(x, 0, correction=0), rtol=1e-5, atol=1e-6)


@pypto.frontend.jit
def flatten_ragged_blocks(x: pypto.Tensor([pypto.DYNAMIC, 4, 8], F32), out: pypto.Tensor([24, 8], F32)):
    pypto.set_vec_tile_shapes(8, 8)
    rows = x.shape[0]
    for b in pypto.loop((rows + 1) // 2):
        win = x[b * 2:(b + 1) * 2, :, :]  # [2, 4, 8], the last block clipped to [1, 4, 8]
        valid = pypto.min(2, rows - b * 2)
        flat = pypto.reshape(win, [8, 8], valid_shape=[valid * 4, 8])
        assert flat.shape == [8, 8]
        pypto.assemble(flat * 2.0, [b * 8, 0], out)  # writes the valid rows


@pytest.mark.both_backends
def test_reshape_with_a_valid_shape_flattens_the_valid_region():
    x = torch.randn(5, 4, 8)
    out = torch.zeros(24, 8)
    flatten_ragged_blocks(x, out)
    assert torch.equal(out[:20], x.reshape(20, 8) * 2.0)
    assert not out[20:].any()


def test_parameters_carry_their_names():
    seen = []

    @pypto.frontend.jit
    def named(alpha: pypto.Tensor([4, 32], F32), beta: pypto.Tensor([4, 32], F32)):
        seen.append((alpha.name, beta.name))
        pypto.set_vec_tile_shapes(4, 32)
        beta[:] = alpha + 1.0

    named(torch.zeros(4, 32), torch.zeros(4, 32))
    assert seen[0] == ("alpha", "beta")


def test_double_is_a_name_without_fp64_tensors():
    assert pypto.DT_DOUBLE.name == "DOUBLE" and pypto.DataType.DT_DOUBLE is pypto.DT_DOUBLE
    with pytest.raises(NotImplementedError, match="DT_DOUBLE"):
        pypto.tensor([4, 4], pypto.DT_DOUBLE)


def test_create_new_logical_tensor_is_recorded_without_effect():
    @pypto.frontend.jit(create_new_logical_tensor=True)
    def copy_rows(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = x

    assert copy_rows.create_new_logical_tensor is True
    x, y = torch.randn(8, 32), torch.zeros(8, 32)
    copy_rows(x, y)
    assert torch.equal(x, y)


def test_a_tensor_element_read_as_a_runtime_scalar_runs():
    """``lens[b]`` on an integer tensor is the element's run-time value (a SymbolicScalar), and
    ``as_variable()`` on it is accepted; the rows are written as without it."""
    @pypto.frontend.jit
    def per_row(lens: pypto.Tensor([4], I32), y: pypto.Tensor([4, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        for b in pypto.loop(4):
            n = lens[b]
            n.as_variable()
            y[b:b + 1, :] = pypto.full([1, 32], 1.0, F32)

    y = torch.zeros(4, 32)
    per_row(torch.arange(4, dtype=torch.int32), y)
    assert torch.equal(y, torch.ones(4, 32))


def test_a_tensor_element_as_a_loop_bound_sets_the_trip_count():
    @pypto.frontend.jit
    def rows_from_data(lens: pypto.Tensor([4], I32), y: pypto.Tensor([4, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        for b in pypto.loop(lens[0]):
            y[b:b + 1, :] = pypto.full([1, 32], 1.0, F32)

    y = torch.zeros(4, 32)
    rows_from_data(torch.tensor([3, 0, 0, 0], dtype=torch.int32), y)
    assert y.sum(dim=1).tolist() == [32.0, 32.0, 32.0, 0.0]


def test_ready_on_host_tensors_takes_input_names():
    pypto.set_runtime_options(ready_on_host_tensors=["block_table", "seq_lens"])
    assert pypto.get_runtime_options()["ready_on_host_tensors"] == ["block_table", "seq_lens"]
    with pytest.raises((TypeError, ValueError)):
        pypto.set_runtime_options(ready_on_host_tensors=[1.5])
