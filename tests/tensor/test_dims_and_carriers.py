"""Dims that meet in an op (docs/tensor.md): the same symbolic expression built twice is
one dim, two DYNAMIC dims are assumed equal, a loop-offset view whose loop bounds prove it whole is
whole, a slice running past the end is clipped as in Python; UINT8 carriers of 8-bit float formats
(docs/tensor.md "Calling": "torch uint8 can carry HF8/FP4"); ``@pypto.options``; NotImplementedError locations."""
import pytest
import torch

import pypto
from pypto_pro import KernelTypeError

D = pypto.DYNAMIC


@pytest.mark.both_backends
def test_k_loop_over_views_accumulates_a_matmul():
    """The K-split pattern: both operands' K extent is ``min(32, 64 - i*32)`` built separately."""
    @pypto.frontend.jit
    def k_loop(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        pypto.set_vec_tile_shapes(32, 64)
        out[:] = pypto.zeros(64, 64, dtype=pypto.DT_FP32)
        for i in pypto.loop(2):
            out[:] = out + pypto.matmul(pypto.view(a, [64, 32], [0, i * 32]),
                                        pypto.view(b, [32, 64], [i * 32, 0]), pypto.DT_FP32)

    torch.manual_seed(0)
    a, b, out = torch.randn(64, 64).half(), torch.randn(64, 64).half(), torch.empty(64, 64)
    k_loop(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


@pytest.mark.both_backends
def test_matmul_with_separate_dynamic_inner_dims_and_rows():
    """``a: [D, D] @ b: [D, 64] -> out: [D, 64]``: every D is its own run-time value, assumed equal where they
    meet; the product is stored straight from the cube pass (no vec tiles needed)."""
    @pypto.frontend.jit
    def dyn_mm(a: pypto.Tensor([D, D], pypto.DT_FP16), b: pypto.Tensor([D, 64], pypto.DT_FP16),
               out: pypto.Tensor([D, 64], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    torch.manual_seed(1)
    for m, k in ((40, 96), (17, 33)):
        a, b, out = torch.randn(m, k).half(), torch.randn(k, 64).half(), torch.empty(m, 64)
        dyn_mm(a, b, out)
        torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-5, atol=1e-4)


def test_fixed_inner_dims_that_differ_are_still_an_error():
    @pypto.frontend.jit
    def bad(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    with pytest.raises(KernelTypeError, match="inner dims differ"):
        bad(torch.randn(32, 48).half(), torch.randn(32, 32).half(), torch.empty(32, 32))


@pytest.mark.both_backends
def test_loop_offset_view_that_cannot_run_past_its_input_is_whole():
    """``view(a, [8, 32], [i*8, 0])`` over ``pypto.loop(4)`` of a 32-row ``a``: the loop's fixed bounds prove
    ``min(8, 32 - 8*i) == 8``, so the view meets same-shape operands like any [8, 32] tensor."""
    @pypto.frontend.jit
    def row_blocks(a: pypto.Tensor(), w: pypto.Tensor(), acc: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        acc[:] = pypto.zeros(8, 32, dtype=pypto.DT_FP32)
        for i in pypto.loop(4):
            acc[:] = acc + pypto.view(a, [8, 32], [i * 8, 0])
            out[i * 8:(i + 1) * 8, :] = pypto.view(a, [8, 32], [i * 8, 0]) * w

    torch.manual_seed(2)
    a, w = torch.randn(32, 32), torch.randn(8, 32)
    acc, out = torch.empty(8, 32), torch.empty(32, 32)
    row_blocks(a, w, acc, out)
    torch.testing.assert_close(acc, a.reshape(4, 8, 32).sum(0), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out, (a.reshape(4, 8, 32) * w).reshape(32, 32), rtol=0, atol=0)


def test_a_view_the_loop_can_run_past_keeps_its_clipped_region():
    """Five 8-row blocks of a 36-row input: the last view has 4 valid rows, so adding it to the full
    [8, 32] accumulator computes (and writes) those 4 rows only; it is not treated as whole."""
    @pypto.frontend.jit
    def past(a: pypto.Tensor(), acc: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        acc[:] = pypto.zeros(8, 32, dtype=pypto.DT_FP32)
        for i in pypto.loop(5):
            acc[:] = acc + pypto.view(a, [8, 32], [i * 8, 0])

    a, acc = torch.randn(36, 32), torch.empty(8, 32)
    past(a, acc)
    want = a[:32].reshape(4, 8, 32).sum(0)
    want[:4] += a[32:]
    torch.testing.assert_close(acc, want, rtol=1e-5, atol=1e-5)


@pytest.mark.both_backends
@pytest.mark.parametrize("dtype, torch_dtype", [(pypto.DT_FP8E4M3, torch.float8_e4m3fn),
                                                (pypto.DT_FP8E5M2, torch.float8_e5m2)])
def test_uint8_tensors_carry_fp8(dtype, torch_dtype):
    @pypto.frontend.jit
    def copy8(x: pypto.Tensor([8, 64], dtype), out: pypto.Tensor([8, 64], dtype)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.clone(x)

    x = torch.randn(8, 64).to(torch_dtype)
    carrier, out = x.view(torch.uint8), torch.zeros(8, 64, dtype=torch.uint8)
    copy8(carrier, out)
    assert torch.equal(out, carrier)
    out8 = torch.zeros(8, 64, dtype=torch_dtype)
    copy8(x, out8)  # the real torch dtype still works
    assert torch.equal(out8.view(torch.uint8), carrier)


def test_hf8_tensors_are_uint8_codes():
    """HF8 has no torch dtype: its tensors are uint8 codes, copied through a kernel unchanged."""
    @pypto.frontend.jit
    def copy_hf8(x: pypto.Tensor([8, 64], pypto.DT_HF8), out: pypto.Tensor([8, 64], pypto.DT_HF8)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.clone(x)

    codes = torch.arange(8 * 64, dtype=torch.int64).remainder(0x6F).to(torch.uint8).reshape(8, 64)
    out = torch.zeros(8, 64, dtype=torch.uint8)
    copy_hf8(codes, out)
    assert torch.equal(out, codes)


def test_options_decorator_scopes_process_wide_options():
    """``@pypto.options(pass_options={"enable_slice": False})`` decorates the official tests' functions: the
    options hold while the function runs (also as a ``with`` block), and are validated like set_options."""
    @pypto.options(pass_options={"enable_slice": False}, runtime_options={"max_workspace_kb": 4})
    def inside():
        return pypto.get_runtime_options()["max_workspace_kb"]

    assert inside() == 4
    assert pypto.get_runtime_options()["max_workspace_kb"] == 0
    with pypto.options(runtime_options={"max_workspace_kb": 8}):
        assert pypto.get_runtime_options()["max_workspace_kb"] == 8
    assert pypto.get_runtime_options()["max_workspace_kb"] == 0
    with pytest.raises(ValueError, match="unknown key"):
        pypto.options(pass_options={"no_such_knob": 1})
    with pypto.options(pass_options={"enable_slice": True}):  # an NPU knob: recorded, no effect
        assert pypto.get_pass_options()["enable_slice"] is True
    assert pypto.get_pass_options()["enable_slice"] is False


@pytest.mark.both_backends
def test_loop_slices_are_clipped_at_the_end_like_python_slices():
    """``x[i:i + 4, :]`` in ``pypto.loop(0, n, 4)``: the last block of a ragged n is shorter, as a Python
    slice (and ``pypto.view``) is, for fixed and DYNAMIC n; ``o[i:i + 1] = ...`` and ``o[i] = ...`` with a
    loop index take the remaining axes whole."""
    @pypto.frontend.jit
    def fixed(x: pypto.Tensor([10, 32], pypto.DT_FP32), o: pypto.Tensor([10, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        for i in pypto.loop(0, 10, 4):
            o[i:i + 4, :] = x[i:i + 4, :] * 2.0

    @pypto.frontend.jit
    def dynamic(x: pypto.Tensor([D, 32], pypto.DT_FP32), o: pypto.Tensor([D, 32], pypto.DT_FP32),
                p: pypto.Tensor([D, 32], pypto.DT_FP32), q: pypto.Tensor([D, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        for i in pypto.loop(0, x.shape[0], 4):
            o[i:i + 4, :] = x[i:i + 4, :] * 2.0
        for i in pypto.loop(x.shape[0]):
            p[i:i + 1] = x[i:i + 1, :] + 1.0
            q[i] = x[i] - 1.0

    x = torch.randn(10, 32)
    o = torch.zeros(10, 32)
    fixed(x, o)
    assert torch.equal(o, x * 2)
    for n in (1, 10, 12):
        x = torch.randn(n, 32)
        o, p, q = torch.zeros(n, 32), torch.zeros(n, 32), torch.zeros(n, 32)
        dynamic(x, o, p, q)
        assert torch.equal(o, x * 2) and torch.equal(p, x + 1) and torch.equal(q, x - 1)


def test_not_implemented_features_name_the_kernel_and_line():
    @pypto.frontend.jit
    def reflect(x: pypto.Tensor([8, 32], pypto.DT_FP32), o: pypto.Tensor([8, 34], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        o[:] = pypto.pad(x, (1, 1), mode="reflect")

    with pytest.raises(NotImplementedError, match=r"\[kernel reflect\] pypto.pad\(mode='reflect'\)") as info:
        reflect(torch.randn(8, 32), torch.empty(8, 34))
    assert "test_dims_and_carriers.py:" in str(info.value)
    assert 'o[:] = pypto.pad(x, (1, 1), mode="reflect")' in str(info.value)


def test_clipped_inner_dim_against_a_fixed_one_reduces_over_the_valid_k():
    """``[8, 8] @ view(b, [8, 4], valid_shape=[min(8, n - i), 4])``: as the official chunked kernels,
    the product sums over the clipped K only (the last chunk of 12 rows holds 4)."""
    @pypto.frontend.jit
    def clipped(a: pypto.Tensor([8, 8], pypto.DT_FP16), b: pypto.Tensor([D, 4], pypto.DT_FP16),
                out: pypto.Tensor([8, 4], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        n = b.shape[0]
        for i in pypto.loop(0, n, 8):
            bv = pypto.view(b, [8, 4], [i, 0], valid_shape=[(n - i).min(8), 4])
            out[:] = pypto.matmul(a, bv, pypto.DT_FP32)

    a, b, out = torch.randn(8, 8).half(), torch.randn(12, 4).half(), torch.empty(8, 4)
    clipped(a, b, out)
    torch.testing.assert_close(out, a[:, :4].float() @ b[8:].float(), rtol=1e-5, atol=1e-5)
