"""Record-mode contract points found by acceptance testing: matmul without vec tiles, errors that
name the kernel line, early exits from pypto.loop, symbolic values in Python control flow, cast
saturation, decoration-time validation."""
import sys

import pytest
import torch

import pypto
from pypto_pro.errors import (KernelError, KernelLaunchError, KernelRuntimeError, KernelSyntaxError, KernelTypeError,
                              KernelValueError)

D = pypto.DYNAMIC
F32 = pypto.DT_FP32
THIS_FILE = __file__


def _line_of(text: str) -> int:
    """The line number of the first line of this file that contains ``text``."""
    with open(THIS_FILE) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(text)


# ----------------------------------------------------------------------------------------------
# a matmul stored straight into a tensor needs only the cube tiles (the official basic_ops example)
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def matmul_kernel(a: pypto.Tensor[[...], pypto.DT_BF16], b: pypto.Tensor[[...], pypto.DT_BF16],
                  out: pypto.Tensor[[...], pypto.DT_BF16]):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
    out.move(pypto.matmul(a, b, a.dtype))


@pytest.mark.both_backends
def test_official_matmul_kernel_runs_without_vec_tiles():
    torch.manual_seed(0)
    a, b = torch.randn(80, 128, dtype=torch.bfloat16), torch.randn(128, 96, dtype=torch.bfloat16)
    out = torch.empty(80, 96, dtype=torch.bfloat16)
    matmul_kernel(a, b, out)
    want = (a.double() @ b.double()).to(torch.bfloat16)  # fp32 accumulation, one rounding to bf16
    torch.testing.assert_close(out.float(), want.float(), atol=0.02, rtol=0.01)
    text = matmul_kernel.lowered_text(a, b, out)
    assert "section_vector" not in text and "dst=out" in text  # Acc tiles stored into out, no copy pass


@pypto.frontend.jit
def matmul_then_add(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    out[:] = pypto.matmul(a, b, F32) + 1.0


def test_vector_work_without_vec_tiles_names_the_line():
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    with pytest.raises(KernelSyntaxError, match=r"set_vec_tile_shapes") as e:
        matmul_then_add(a, b, torch.zeros(32, 32))
    assert f"{THIS_FILE}:{_line_of('out[:] = pypto.matmul(a, b, F32) + 1.0')}" in str(e.value)
    assert "[kernel matmul_then_add]" in str(e.value)


# ----------------------------------------------------------------------------------------------
# op errors while recording name the kernel and the kernel line (docs/contract.md "Errors")
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def bad_broadcast(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 64)
    o[:] = x + y


def _helper_with_bad_dim(x):
    return pypto.sum(x, dim=5)


@pypto.frontend.jit
def bad_dim_in_helper(x: pypto.Tensor(), o: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 64)
    o[:] = _helper_with_bad_dim(x)


def test_op_errors_name_kernel_and_line():
    with pytest.raises(KernelTypeError, match="do not broadcast") as e:
        bad_broadcast(torch.randn(8, 64), torch.randn(8, 32), torch.zeros(8, 64))
    msg = str(e.value)
    assert msg.startswith("[kernel bad_broadcast]")
    assert f"{THIS_FILE}:{_line_of('o[:] = x + y')}" in msg and "o[:] = x + y" in msg
    with pytest.raises(KernelError) as e:
        bad_dim_in_helper(torch.randn(8, 64), torch.zeros(8))
    assert "[kernel bad_dim_in_helper]" in str(e.value)
    assert f"{THIS_FILE}:{_line_of('return pypto.sum(x, dim=5)')}" in str(e.value)  # the helper's line


def _assemble_past_the_end(backend: str):
    @pypto.frontend.jit(backend=backend)
    def assemble_past_the_end(x: pypto.Tensor([D, 16], F32), y: pypto.Tensor([D, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        for i in pypto.loop(0, x.shape[0], 4):
            pypto.assemble(pypto.fillpad(pypto.view(x, [4, 16], [i, 0])), [i, 0], y)
    return assemble_past_the_end


@pytest.mark.parametrize("backend", ["interp", "cpu", "sim"])
def test_runtime_errors_of_lowered_ops_name_the_statement(backend):
    """A run-time fault of a lowered op (here a full 4-row block assembled at row 4 of a 6-row output)
    names the kernel and the statement's line on every backend."""
    with pytest.raises(KernelRuntimeError, match=r"writing tensor 'y': elements \[4, 8\) on axis 0 are outside") as e:
        _assemble_past_the_end(backend)(torch.zeros(6, 16), torch.zeros(6, 16))
    msg = str(e.value)
    assert msg.startswith("[kernel assemble_past_the_end]")
    assert f"{THIS_FILE}:{_line_of('pypto.assemble(pypto.fillpad(pypto.view(x, [4, 16], [i, 0])), [i, 0], y)')}" in msg


def test_launch_errors_name_the_kernel():
    with pytest.raises(KernelLaunchError, match=r"^\[kernel bad_broadcast\] argument 'x'"):
        bad_broadcast([1, 2], torch.zeros(8, 64), torch.zeros(8, 64))


# ----------------------------------------------------------------------------------------------
# pypto.loop bodies are recorded once: break / continue / return cannot be honoured
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def loop_with_continue(a: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    for i in pypto.loop(a.shape[0]):
        o[i:i + 1, :] = a[i:i + 1, :]
        if True:
            continue


def _copy_first_row_only(a, o):
    for i in pypto.loop(a.shape[0]):
        o[i:i + 1, :] = a[i:i + 1, :]
        break


@pypto.frontend.jit
def loop_break_in_helper(a: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    _copy_first_row_only(a, o)


@pypto.frontend.jit
def nested_python_loop_may_break(a: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    for i in pypto.loop(a.shape[0]):
        for k in range(3):  # a compile-time loop inside: its break is fine
            if k == 1:
                break
        o[i:i + 1, :] = a[i:i + 1, :] * 2.0


@pypto.frontend.jit
def loop_carried_python_variable(x: pypto.Tensor((3,), F32), out: pypto.Tensor((3,), F32)):
    pypto.set_vec_tile_shapes(2, 8)
    y = pypto.zeros(x.shape)
    for _ in pypto.loop(2, name="sym_loop", idx_name="i"):
        y = x + y
    out[:] = y


@pypto.frontend.jit
def loop_locals_are_fine(x: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    scale = 2.0
    for i in pypto.loop(x.shape[0]):
        row = x[i:i + 1, :]
        if scale > 1:
            t = row * scale
        else:
            t = row
        t = t + 1.0  # reads the t assigned above in this iteration
        parts = [t * 1.0 for _ in range(2)]
        o[i:i + 1, :] = parts[0]


def test_python_variable_carried_across_pypto_loop_is_rejected():
    """The official symbolic_scalar example accumulates ``y = x + y`` in a pypto.loop: recorded once,
    that would silently give x; it is a KernelSyntaxError naming the line.  Values assigned before
    they are read in the same iteration are fine."""
    with pytest.raises(KernelSyntaxError, match="`y` is carried from one pypto.loop iteration") as e:
        loop_carried_python_variable(torch.tensor([1., 2, 3]), torch.zeros(3))
    assert f"{THIS_FILE}:{_line_of('        y = x + y')}" in str(e.value)
    x, o = torch.randn(4, 32), torch.zeros(4, 32)
    loop_locals_are_fine(x, o)
    assert torch.equal(o, x * 2.0 + 1.0)


def test_continue_and_break_in_pypto_loop_are_rejected():
    a, o = torch.randn(4, 32), torch.zeros(4, 32)
    with pytest.raises(KernelSyntaxError, match="`continue` inside a pypto.loop") as e:
        loop_with_continue(a, o)
    assert f"{THIS_FILE}:{_line_of('            continue')}" in str(e.value)
    with pytest.raises(KernelSyntaxError, match="break/return inside a pypto.loop") as e:
        loop_break_in_helper(a, o)
    assert "[kernel loop_break_in_helper]" in str(e.value)
    assert not o.any()  # a rejected kernel never runs
    nested_python_loop_may_break(a, o)
    assert torch.equal(o, a * 2)


# ----------------------------------------------------------------------------------------------
# symbolic values in Python control flow are KernelErrors (and keep their builtin types)
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def python_range_over_dynamic_dim(a: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    for _ in range(a.shape[0]):
        o[:] = a


@pypto.frontend.jit
def concrete_of_dynamic_dim(a: pypto.Tensor([D, 32], F32), o: pypto.Tensor([D, 32], F32)):
    pypto.set_vec_tile_shapes(1, 32)
    n = a.shape[0].concrete()
    o[:] = a * n


def test_symbolic_values_in_python_control_flow():
    a, o = torch.randn(4, 32), torch.zeros(4, 32)
    with pytest.raises(KernelTypeError, match="pypto.loop") as e:
        python_range_over_dynamic_dim(a, o)
    assert isinstance(e.value, TypeError)
    with pytest.raises(KernelValueError, match="runtime value") as e:
        concrete_of_dynamic_dim(a, o)
    assert isinstance(e.value, ValueError)


# ----------------------------------------------------------------------------------------------
# cast saturation (docs/tensor.md "Ops" cast(..., satmode=pypto.SaturationMode.OFF))
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def to_fp16(x: pypto.Tensor(), o: pypto.Tensor(), satmode: int = 0):
    pypto.set_vec_tile_shapes(8, 64)
    o[:] = pypto.cast(x, pypto.DT_FP16, satmode=satmode)


@pytest.mark.both_backends
def test_cast_satmode():
    x = torch.full((8, 64), 1e6)
    x[0, 1], x[0, 2], x[0, 3] = -1e6, float("nan"), 3.0
    o = torch.zeros(8, 64, dtype=torch.float16)
    to_fp16(x, o, pypto.SaturationMode.OFF)
    assert o[0, :2].tolist() == [float("inf"), float("-inf")]
    to_fp16(x, o, pypto.SaturationMode.ON)
    assert o[0, :2].tolist() == [65504.0, -65504.0] and torch.isnan(o[0, 2]) and o[0, 3] == 3.0
    with pytest.raises(KernelTypeError, match="satmode"):
        to_fp16(x, o, 7)


# ----------------------------------------------------------------------------------------------
# a misspelt backend / arch fails at decoration
# ----------------------------------------------------------------------------------------------
def test_backend_and_arch_checked_at_decoration():
    def body(x: pypto.Tensor()):
        pass

    with pytest.raises(KernelLaunchError, match=r"\[kernel body\] unknown backend 'bogus'"):
        pypto.frontend.jit(backend="bogus")(body)
    with pytest.raises(KernelLaunchError, match=r"\[kernel body\] unknown arch 'a9'"):
        pypto.frontend.jit(arch="a9")(body)


def test_factory_kernel_with_string_annotations():
    from factory_kernels import scale_kernel

    k = scale_kernel(32)
    x, o = torch.randn(4, 32), torch.zeros(4, 32)
    k(x, o)
    assert torch.equal(o, x * 2)
    with pytest.raises(KernelLaunchError, match="dim 1 must be 32"):
        k(torch.randn(4, 64), torch.zeros(4, 64))


# ----------------------------------------------------------------------------------------------
# spellings of the official examples: pypto.Tensor([], dtype), x: pypto.tensor(), dim.min(k)
# ----------------------------------------------------------------------------------------------
@pypto.frontend.jit
def empty_shape_annotation(a: pypto.Tensor([], F32), b: pypto.Tensor([], F32), o: pypto.Tensor([], F32)):
    pypto.set_vec_tile_shapes(1, 8, 2)
    o[:] = a + b


@pypto.frontend.jit
def lowercase_tensor_annotation(x: pypto.tensor(), residual: pypto.tensor(), out: pypto.tensor()):
    pypto.set_vec_tile_shapes(64, 128)
    out[:] = pypto.add(x, residual)


@pypto.frontend.jit
def clipped_rows_by_method_min(x: pypto.Tensor((D, 64), F32), y: pypto.Tensor((D, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop((n + 15) // 16):
        off = i * 16
        v = pypto.view(x, [16, 64], [off, 0], valid_shape=[(n - off).min(16), 64])
        pypto.assemble(v * 2.0, [off, 0], y)


def test_official_example_spellings():
    a, b = torch.randn(1, 8, 2), torch.randn(1, 8, 2)
    o = torch.zeros(1, 8, 2)
    empty_shape_annotation(a, b, o)  # [] infers the shape, as [...] does
    assert torch.equal(o, a + b)
    x, r = torch.randn(32, 128, dtype=torch.bfloat16), torch.randn(32, 128, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    lowercase_tensor_annotation(x, r, out)
    assert torch.equal(out, x + r)
    x = torch.randn(40, 64)
    y = torch.zeros_like(x)
    clipped_rows_by_method_min(x, y)
    assert torch.equal(y, 2 * x)


# ----------------------------------------------------------------------------------------------
# named dynamic dims (pypto.frontend.dynamic) and the SymbolicScalar constructor forms
# ----------------------------------------------------------------------------------------------
BS = pypto.frontend.dynamic("batch_size")


@pypto.frontend.jit
def dynamic_mul_kernel(x: pypto.Tensor((BS, 128), pypto.DT_FP16), out: pypto.Tensor((BS, 128), pypto.DT_FP16)):
    tile_b = 8
    for idx in pypto.loop((BS + tile_b - 1) // tile_b):
        off = idx * tile_b
        v = pypto.view(x, [tile_b, 128], [off, 0], valid_shape=[pypto.min(off + tile_b, BS) - off, 128])
        pypto.set_vec_tile_shapes(1, 128)
        pypto.assemble(pypto.mul(v, 2.0), [off, 0], out)


@pytest.mark.both_backends
def test_named_dynamic_dim_in_annotations_and_body():
    for n in (8, 13, 3):
        x = torch.randn(n, 128, dtype=torch.float16)
        out = torch.zeros_like(x)
        dynamic_mul_kernel(x, out)
        assert torch.equal(out, x * 2)
    assert dynamic_mul_kernel.compile_count == 1  # a named dim is DYNAMIC: no recompilation
    with pytest.raises(KernelLaunchError, match="dynamic dim 'batch_size' is 4 on one argument but 5"):
        dynamic_mul_kernel(torch.zeros(4, 128, dtype=torch.float16), torch.zeros(5, 128, dtype=torch.float16))


def test_symbolic_scalar_constructor_forms():
    imm = pypto.SymbolicScalar(123)
    assert imm.is_concrete() and imm.is_immediate() and imm.concrete() == 123
    assert (pypto.SymbolicScalar(10) < 2).concrete() is False and (imm + 1).concrete() == 124
    assert pypto.SymbolicScalar("n", 10).concrete() == 10
    n = pypto.SymbolicScalar("n")
    assert n.is_symbol() and not n.is_concrete() and (n * 2).is_expression()
    assert pypto.SymbolicScalar(imm).concrete() == 123  # a copy
    t = pypto.Tensor([n, 4, -1], F32)  # a named dim and -1 (dynamic) are annotation dims
    assert t.shape[0] is n and t.shape[2] is pypto.DYNAMIC
    with pytest.raises(KernelTypeError, match="dim name"):
        pypto.SymbolicScalar(1.5)
    a, b = pypto.SymbolicScalar(), pypto.SymbolicScalar()  # fresh symbols, distinct names
    assert a.is_symbol() and not a.is_concrete() and repr(a) != repr(b)
    assert a.as_variable() is None and a.is_symbol()  # a hint without effect


@pypto.frontend.jit
def workspace_with_format(x: pypto.Tensor(), o: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 32)
    w = pypto.tensor([8, 32], pypto.DT_FP32, "w", format=pypto.TileOpFormat.TILEOP_ND)
    assert w.format == pypto.TileOpFormat.TILEOP_ND and x.format == pypto.TileOpFormat.TILEOP_ND
    w[:] = x * 2
    o[:] = w + 1


def test_tensor_format_attribute_and_storage_dtype_names():
    x, o = torch.randn(8, 32), torch.zeros(8, 32)
    workspace_with_format(x, o)
    torch.testing.assert_close(o, x * 2 + 1)
    assert pypto.DT_INT4.bits() == 4 and pypto.DT_HF4.bits() == 4
    assert pypto.tensor([8, 32], F32, "nz", format=pypto.TileOpFormat.TILEOP_NZ).format == "NZ"


@pypto.frontend.jit
def tiles_from_outside(a: pypto.Tensor((32, 32), F32), b: pypto.Tensor((32, 32), F32), o: pypto.Tensor((32, 32), F32)):
    o[:] = pypto.matmul(a, b, F32) * 2.0


def test_tile_shapes_set_and_read_outside_kernels():
    """Set outside a kernel, the shapes are the defaults of kernels recorded afterwards (and part of
    their cache key); the getters outside a kernel report the shapes set last (official tiling_config)."""
    a, b, o = torch.randn(32, 32), torch.randn(32, 32), torch.zeros(32, 32)
    with pytest.raises(KernelSyntaxError, match="set_vec_tile_shapes"):
        tiles_from_outside(a, b, o)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 32])
    pypto.set_vec_tile_shapes(8, 32)
    tiles_from_outside(a, b, o)
    torch.testing.assert_close(o, (a.double() @ b.double()).float() * 2, rtol=1e-4, atol=1e-4)
    assert pypto.get_cube_tile_shapes() == ([16, 16], [32, 32], [16, 32], False)
    assert pypto.get_vec_tile_shapes() == [8, 32]
    pypto.set_vec_tile_shapes(16, 32)  # another default: another compiled variant
    tiles_from_outside(a, b, o)
    assert tiles_from_outside.compile_count == 2
    pypto.reset_options()
    assert pypto.get_vec_tile_shapes() == [] and pypto.get_cube_tile_shapes() is None


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
