"""``with pypto.function(name, *tensors)`` outside a kernel + ``pypto.runtime`` + ``pypto.from_torch``:
the official graph-building API run on host data (pypto/frontend/graph_function.py, pypto/runtime.py)."""
import numpy as np
import pytest
import torch

import pypto


@pytest.fixture(autouse=True)
def _program():
    pypto.runtime._device_init()
    yield
    pypto.runtime._device_fini()


def _record_blockwise_affine(shape, rows, dtype=pypto.DT_FP32):
    """out = 2 * a + b over row blocks of ``rows`` (the last block clipped by valid_shape)."""
    a = pypto.tensor(shape, dtype, "a in")
    b = pypto.tensor(shape, dtype, "b in")
    out = pypto.tensor(shape, dtype, "out")
    blocks = (shape[0] + rows - 1) // rows
    with pypto.function("affine", a, b, out):
        for i in pypto.loop(blocks, name="rows", idx_name="i"):
            valid = [pypto.min(pypto.symbolic_scalar(shape[0]) - i * rows, pypto.symbolic_scalar(rows)), shape[1]]
            va = pypto.view(a, [rows, shape[1]], [i * rows, 0], valid_shape=valid)
            vb = pypto.view(b, [rows, shape[1]], [i * rows, 0], valid_shape=valid)
            pypto.set_vec_tile_shapes(8, 32)
            r = pypto.tensor()
            r.move(va * 2.0 + vb)
            pypto.assemble(r, [i * rows, 0], out)
    return a, b, out


@pytest.mark.parametrize("shape,rows", [((40, 64), 16), ((33, 40), 8), ((8, 32), 8)])
def test_function_runs_on_host_data(shape, rows):
    a, b, out = _record_blockwise_affine(shape, rows)
    assert isinstance(out, pypto.tensor) and out.shape == list(shape)
    x, y = torch.randn(shape), torch.randn(shape)
    z = torch.full(shape, float("nan"))
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x, "x"), pypto.from_torch(y, "y"),
                                                  pypto.from_torch(z, "z"))
    assert torch.equal(z, x * 2.0 + y)


def test_function_accepts_plain_torch_and_numpy():
    _record_blockwise_affine((16, 32), 16)
    x, y = np.arange(512, dtype=np.float32).reshape(16, 32), np.ones((16, 32), np.float32)
    z = torch.zeros(16, 32)
    pypto.runtime._device_run_once_data_from_host(torch.from_numpy(x), y, z)
    assert np.array_equal(z.numpy(), 2 * x + 1)


def test_run_checks_count_dtype_and_shape():
    _record_blockwise_affine((16, 32), 16)
    x = torch.zeros(16, 32)
    with pytest.raises(pypto.KernelLaunchError, match="3 tensor parameters"):
        pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x), pypto.from_torch(x))
    with pytest.raises(pypto.KernelLaunchError, match="dtype FP32"):
        pypto.runtime._device_run_once_data_from_host(x, x, x.half())
    with pytest.raises(pypto.KernelLaunchError, match="shape"):
        pypto.runtime._device_run_once_data_from_host(x, x, torch.zeros(16, 16))


def test_dynamic_dim_parameter():
    a = pypto.tensor([pypto.DYNAMIC, 32], pypto.DT_FP32, "a")
    out = pypto.tensor([pypto.DYNAMIC, 32], pypto.DT_FP32, "out")
    with pypto.function("neg", a, out):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = -a
    for n in (5, 24):
        x, z = torch.randn(n, 32), torch.zeros(n, 32)
        pypto.runtime._device_run_once_data_from_host(pypto.from_torch(x), pypto.from_torch(z))
        assert torch.equal(z, -x)


def test_last_function_runs_and_init_forgets():
    _record_blockwise_affine((8, 32), 8)
    a = pypto.tensor([8, 32], pypto.DT_FP32, "a")
    out = pypto.tensor([8, 32], pypto.DT_FP32, "out")
    with pypto.function("square", a, out):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = a * a
    x, z = torch.randn(8, 32), torch.zeros(8, 32)
    pypto.runtime._device_run_once_data_from_host(x, z)
    assert torch.equal(z, x * x)
    pypto.runtime._device_init()
    with pytest.raises(pypto.KernelSyntaxError, match="no function was recorded"):
        pypto.runtime._device_run_once_data_from_host(x, z)


def test_runtime_if_outside_loops_in_function_is_not_implemented():
    a = pypto.tensor([8, 32], pypto.DT_FP32, "a")
    out = pypto.tensor([8, 32], pypto.DT_FP32, "out")
    n = pypto.tensor([pypto.DYNAMIC, 32], pypto.DT_FP32, "n")
    with pytest.raises(NotImplementedError, match="runtime `if`"):
        with pypto.function("branchy", a, out, n):
            pypto.set_vec_tile_shapes(8, 32)
            if n.shape[0] > 4:
                out[:] = a


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_loop_in_function_explores_its_runtime_ifs(backend, monkeypatch):
    """A plain `with pypto.function(...)` block: each pypto.loop re-runs its body per branch outcome."""
    monkeypatch.setenv("PYPTO_BACKEND", backend)
    a = pypto.tensor([16, 32], pypto.DT_FP32, "a")
    b = pypto.tensor([16, 32], pypto.DT_FP32, "b")
    c = pypto.tensor([16, 32], pypto.DT_FP32, "c")
    with pypto.function("branchy", a, b, c):
        pypto.set_vec_tile_shapes(8, 32)
        for k in pypto.loop(6, idx_name="k"):
            b.move(pypto.add(a, a))
            if pypto.cond(k < 2):
                b.move(pypto.add(b, a))
            else:
                b.move(pypto.sub(b, a))
            if pypto.cond(k < 4):
                b.move(pypto.mul(b, a))
            else:
                b.move(pypto.add(b, 1.0))
            c.move(pypto.sub(b, a))
    x = torch.randn(16, 32)
    y, z = torch.zeros(16, 32), torch.zeros(16, 32)
    pypto.runtime._device_run_once_data_from_host(x, y, z)
    # the last iteration (k = 5) takes the else branches: b = (2x - x) + 1, c = b - x
    assert torch.equal(y, (x + x - x) + 1.0) and torch.equal(z, y - x)


def test_unshaped_tensor_needs_a_tensor_value():
    a = pypto.tensor([8, 32], pypto.DT_FP32, "a")
    out = pypto.tensor([8, 32], pypto.DT_FP32, "out")
    with pytest.raises(pypto.KernelTypeError, match="r.move"):
        with pypto.function("bad", a, out):
            r = pypto.tensor()
            r.move(1.0)


def test_from_torch_into_jit_kernel_writes_the_torch_tensor():
    @pypto.frontend.jit
    def add_one(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        y[:] = x + 1

    x, y = torch.ones(4, 32), torch.zeros(4, 32)
    add_one(pypto.from_torch(x), pypto.from_torch(y))
    assert torch.equal(y, x + 1)


def test_from_torch_checks():
    with pytest.raises(pypto.KernelTypeError):
        pypto.from_torch(np.zeros(3))
    with pytest.raises(pypto.KernelValueError, match="contiguous"):
        pypto.from_torch(torch.zeros(4, 4).t())
    with pytest.raises(pypto.KernelValueError, match="dynamic_axis"):
        pypto.from_torch(torch.zeros(4, 4), dynamic_axis=[2])
    u = pypto.from_torch(torch.tensor([0x38, 0x40], dtype=torch.uint8), dtype=pypto.DT_FP8E4M3)
    assert u.dtype == pypto.DT_FP8E4M3


def test_iterated_function_explores_runtime_ifs():
    """``with pypto.function(...) as f: for _ in f:`` re-runs the body per branch outcome and merges."""
    a = pypto.tensor([32, 16], pypto.DT_FP32, "a")
    out = pypto.tensor([32, 16], pypto.DT_FP32, "out")
    with pypto.function("piecewise", a, out) as f:
        for _ in f:
            for i in pypto.loop(4, idx_name="i"):
                pypto.set_vec_tile_shapes(8, 16)
                v = pypto.view(a, [8, 16], [i * 8, 0])
                if pypto.cond(i == 0):
                    r = v + 1.0
                elif pypto.cond(i < 3):
                    r = v * 2.0
                else:
                    r = -v
                pypto.assemble(r, [i * 8, 0], out)
    x, z = torch.randn(32, 16), torch.zeros(32, 16)
    pypto.runtime._device_run_once_data_from_host(x, z)
    want = torch.cat([x[:8] + 1, x[8:24] * 2, -x[24:]])
    assert torch.equal(z, want)


def test_runtime_valid_shape_larger_than_the_view_is_cut_to_it():
    """valid_shape ``min(n - i * 16, n)`` exceeds the 16-row view before the tail: the window holds 16."""
    @pypto.frontend.jit
    def inplace_double(a: pypto.Tensor([40, 16], pypto.DT_FP32), out: pypto.Tensor([40, 16], pypto.DT_FP32)):
        for i in pypto.loop(3, idx_name="i"):
            v = pypto.view(a, [16, 16], [i * 16, 0],
                           valid_shape=[pypto.min(pypto.symbolic_scalar(40) - i * 16, pypto.symbolic_scalar(40)), 16])
            pypto.set_vec_tile_shapes(8, 16)
            v.move(v * 2.0)
            pypto.assemble(v, [i * 16, 0], out)

    x = torch.randn(40, 16)
    x0 = x.clone()
    out = torch.zeros(40, 16)
    inplace_double(x, out)
    assert torch.equal(out, x0 * 2.0)
    assert torch.equal(x, x0)  # move on a view rebinds the view: the input is not written


def test_move_on_a_view_rebinds_and_on_a_parameter_stores():
    a = pypto.tensor([16, 32], pypto.DT_INT32, "a")
    out = pypto.tensor([16, 32], pypto.DT_INT32, "out")
    with pypto.function("scale_rows", a, out):
        for i in pypto.loop(2, idx_name="i"):
            pypto.set_vec_tile_shapes(8, 32)
            v = pypto.view(a, [8, 32], [i * 8, 0])
            v.move(v * 3)
            v.move(v + 1)  # v is now 3 * a + 1; a itself is untouched
            pypto.assemble(v, [i * 8, 0], out)
    x = torch.randint(-100, 100, (16, 32), dtype=torch.int32)
    x0, z = x.clone(), torch.zeros(16, 32, dtype=torch.int32)
    pypto.runtime._device_run_once_data_from_host(x, z)
    assert torch.equal(z, 3 * x0 + 1) and torch.equal(x, x0)


def test_host_tensor_is_seen_in_the_declared_shape():
    """A contiguous host tensor with the element count of a fixed-shape parameter binds in that shape."""
    a = pypto.tensor([1, 1, 4, 8], pypto.DT_FP32, "a")
    out = pypto.tensor([1, 1, 4, 8], pypto.DT_FP32, "out")
    with pypto.function("copy4d", a, out):
        pypto.set_vec_tile_shapes(1, 1, 4, 8)
        out[:] = a + 0.5
    x, z = torch.randn(32), torch.zeros(4, 8)
    pypto.runtime._device_run_once_data_from_host(x, z)
    assert torch.equal(z, x.reshape(4, 8) + 0.5)
    with pytest.raises(pypto.KernelLaunchError, match="shape"):
        pypto.runtime._device_run_once_data_from_host(torch.zeros(31), z)


def test_loop_paths_write_each_window():
    a = pypto.tensor([32, 16], pypto.DT_FP32, "a")
    out = pypto.tensor([32, 16], pypto.DT_FP32, "out")
    with pypto.function("piecewise_plain", a, out):
        for i in pypto.loop(4, idx_name="i"):
            pypto.set_vec_tile_shapes(8, 16)
            v = pypto.view(a, [8, 16], [i * 8, 0])
            if pypto.cond(i == 0):
                r = v + 1.0
            elif pypto.cond(i < 3):
                r = v * 2.0
            else:
                r = -v
            pypto.assemble(r, [i * 8, 0], out)
    x, z = torch.randn(32, 16), torch.zeros(32, 16)
    pypto.runtime._device_run_once_data_from_host(x, z)
    assert torch.equal(z, torch.cat([x[:8] + 1, x[8:24] * 2, -x[24:]]))
