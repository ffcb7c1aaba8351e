"""Tensor-level arguments in FRACTAL_NZ (``npu_format_cast(t, 29)``): logical values, padded runtime shape.

A parameter declared ``format=TILEOP_NZ`` takes NZ tensors only, one declared ND takes ND tensors only,
and an undeclared one takes the argument's format.  An NZ argument is seen in its runtime shape (last
axis rounded up to C0 elements, the one before to 16, zeros in the padding); the kernel's writes to the
logical part reach the argument."""
import numpy as np
import pytest
import torch

import pypto
from pypto_pro.errors import KernelLaunchValueError
from pypto_pro.npu.formats import npu_format_cast

NZ, ND = pypto.TileOpFormat.TILEOP_NZ, pypto.TileOpFormat.TILEOP_ND

pytestmark = pytest.mark.every_backend
BACKENDS = ["interp", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", request.param)
    return request.param


@pypto.frontend.jit
def project(x: pypto.Tensor([32, 64], pypto.DT_FP16),
            w: pypto.Tensor([64, 48], pypto.DT_FP16, format=NZ),
            y: pypto.Tensor([32, 48], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [48, 48])
    y[:] = pypto.matmul(x, w, pypto.DT_FP32)


@pypto.frontend.jit
def project_any(x: pypto.Tensor(), w: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    y[:] = pypto.matmul(x, w, pypto.DT_FP32)


@pypto.frontend.jit
def shape_of(w: pypto.Tensor(), out: pypto.Tensor([1, 2], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(1, 2)
    rows, cols = w.shape
    out[:] = pypto.full([1, 2], 0, pypto.DT_INT32) + pypto.full([1, 2], rows * 1000 + cols, pypto.DT_INT32)


def _ints(*shape):
    return torch.randint(-3, 4, shape).to(torch.float16)


def test_a_declared_nz_parameter_computes_on_logical_values(backend):
    x, w = _ints(32, 64), _ints(64, 48)
    y = torch.zeros(32, 48)
    project(x, npu_format_cast(w, 29), y)
    assert torch.equal(y, x.float() @ w.float())


def test_an_undeclared_parameter_takes_the_argument_format(backend):
    x, w = _ints(16, 32), _ints(32, 32)
    y = torch.zeros(16, 32)
    project_any(npu_format_cast(x, 29), npu_format_cast(w, 29), y)
    assert torch.equal(y, x.float() @ w.float())


def test_unaligned_nz_arguments_are_seen_zero_padded(backend):
    """An NZ [m, k] FP16 tensor is [ceil16(m), ceil16(k)] to the kernel: the product of padded operands has
    the logical product in its top-left corner and zeros around it (as the official runtime gives)."""
    x, w = _ints(13, 20), _ints(20, 30)
    y = torch.full((16, 32), float("nan"))
    project_any(npu_format_cast(x, 29), npu_format_cast(w, 29), y)
    want = torch.zeros(16, 32)
    want[:13, :30] = x.float() @ w.float()
    assert torch.equal(y, want)


def test_the_padded_shape_is_what_the_kernel_sees():
    out = torch.zeros(1, 2, dtype=torch.int32)
    shape_of(npu_format_cast(torch.zeros(5, 9), 29), out)  # FP32: C0 = 8
    assert out.tolist() == [[16 * 1000 + 16, 16 * 1000 + 16]]
    shape_of(npu_format_cast(torch.zeros(17, 40, dtype=torch.int8), 29), out)  # INT8: C0 = 32
    assert out.tolist() == [[32 * 1000 + 64] * 2]
    shape_of(torch.zeros(5, 9), out)
    assert out.tolist() == [[5 * 1000 + 9] * 2]


@pypto.frontend.jit
def scale_into(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(16, 16)
    y[:] = x * 2.0


def test_writes_to_an_unaligned_nz_output_reach_its_logical_part(backend):
    x = npu_format_cast(torch.arange(5 * 6, dtype=torch.float32).reshape(5, 6), 29)
    y = npu_format_cast(torch.zeros(5, 6), 29)
    scale_into(x, y)
    assert torch.equal(y.cpu(), x.cpu() * 2)


def test_an_nd_tensor_for_a_declared_nz_parameter_is_refused():
    y = torch.zeros(32, 48)
    with pytest.raises(KernelLaunchValueError, match=r"argument 'w': the format of the 2nd input tensor ND does not "
                                                      r"match the format of its input tensor definition NZ.*"
                                                      r"npu_format_cast\(t, 29\)"):
        project(_ints(32, 64), _ints(64, 48), y)


def test_an_nz_tensor_for_a_declared_nd_parameter_is_refused():
    @pypto.frontend.jit
    def copy_nd(x: pypto.Tensor([16, 16], pypto.DT_FP32, format=ND), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 16)
        y[:] = x + 0.0

    with pytest.raises(KernelLaunchValueError, match=r"argument 'x': the format of the 1st input tensor NZ"):
        copy_nd(npu_format_cast(torch.zeros(16, 16), 29), torch.zeros(16, 16))


def test_from_torch_reads_the_format_and_pads_the_shape():
    t = npu_format_cast(torch.zeros(5, 9, dtype=torch.float16), 29)
    p = pypto.from_torch(t, "w")
    assert p.format == NZ and p.shape == [16, 16]
    q = pypto.from_torch(torch.zeros(5, 9, dtype=torch.float16), "v")
    assert q.format == ND and q.shape == [5, 9]
    out = torch.zeros(1, 2, dtype=torch.int32)
    shape_of(p, out)
    assert out.tolist() == [[16016, 16016]]


def test_declared_formats_read_back():
    assert pypto.Tensor([4, 4], pypto.DT_FP32, format=NZ).format == NZ
    assert pypto.Tensor([4, 4], pypto.DT_FP32).format == ND
    assert pypto.tensor().format == ND


def test_values_match_numpy_on_the_oracle():
    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, (32, 64)).astype(np.float16)
    w = rng.integers(-2, 3, (64, 48)).astype(np.float16)
    y = torch.zeros(32, 48)
    project(torch.from_numpy(x), npu_format_cast(torch.from_numpy(w), 29), y)
    np.testing.assert_array_equal(y.numpy(), x.astype(np.float32) @ w.astype(np.float32))
