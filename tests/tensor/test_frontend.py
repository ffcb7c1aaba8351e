"""jit, annotations, dynamic shapes, control flow, options, verification, fusion and errors."""
import re

import numpy as np
import pytest
import torch

import pypto


def add_core(input0, input1, output, val: int, add1_flag: bool = False):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    if add1_flag:
        t3 = input0 + input1
        output[:] = t3 + val
    else:
        output[:] = input0 + input1


SPEC = [pypto.DYNAMIC, 4, 1, 64]


@pypto.frontend.jit
def add_kernel_true(input0: pypto.Tensor(SPEC, pypto.DT_FP32), input1: pypto.Tensor(SPEC, pypto.DT_FP32),
                    output: pypto.Tensor(SPEC, pypto.DT_FP32), val: int):
    add_core(input0, input1, output, val, True)


@pypto.frontend.jit
def add_kernel_false(input0: pypto.Tensor(SPEC, pypto.DT_FP32), input1: pypto.Tensor(SPEC, pypto.DT_FP32),
                     output: pypto.Tensor(SPEC, pypto.DT_FP32), val: int):
    add_core(input0, input1, output, val, False)


@pytest.mark.both_backends
def test_seed_multi_jit_dynamic_no_recompile_and_constants_recompile():
    add_kernel_true.cache.clear()  # the kernels are module-level: start from a cold cache on each backend
    add_kernel_true.compile_count = 0
    for batch in (1, 3, 5):
        a, b = torch.randn(batch, 4, 1, 64), torch.randn(batch, 4, 1, 64)
        out = torch.empty_like(a)
        add_kernel_true(a, b, out, 2)
        torch.testing.assert_close(out, a + b + 2)
        add_kernel_false(a, b, out, 2)
        torch.testing.assert_close(out, a + b)
    assert add_kernel_true.compile_count == 1
    add_kernel_true(a, b, out, 7)
    torch.testing.assert_close(out, a + b + 7)
    assert add_kernel_true.compile_count == 2


def test_annotation_forms_and_launch_errors():
    @pypto.frontend.jit
    def k(x: pypto.Tensor[[pypto.DYN, 64], pypto.DT_FP32], y: pypto.Tensor[..., pypto.DT_FP32]):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x * 2

    x = torch.randn(5, 64)
    y = torch.empty(5, 64)
    k(x, y)
    torch.testing.assert_close(y, x * 2)
    k(x.numpy(), y.numpy())  # numpy arrays, zero-copy
    with pytest.raises(pypto.KernelLaunchError, match="dim 1 must be 64"):
        k(torch.randn(5, 32), y)
    with pytest.raises(pypto.KernelLaunchError, match="expected a 2-D"):
        k(torch.randn(5), y)
    with pytest.raises(pypto.KernelLaunchError, match="dtype FP32"):
        k(torch.randn(5, 64).half(), y)
    with pytest.raises(TypeError):
        pypto.Tensor[()]


@pytest.mark.both_backends
def test_symbolic_shape_loop_view_assemble_and_runtime_if():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        rows = x.shape[0]
        assert isinstance(rows, pypto.SymbolicScalar) and not rows.is_concrete()
        for i in pypto.loop(0, (rows + 7) // 8, 1, name="blk", unroll_list=[4, 1]):
            valid = pypto.min(rows - i * 8, 8)
            part = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[valid, 32])
            if pypto.is_loop_begin(i):
                pypto.assemble(part * 10, [i * 8, 0], y)
            else:
                pypto.assemble(part * 2, [i * 8, 0], y)

    for rows in (8, 21):
        x = torch.randn(rows, 32)
        y = torch.empty(rows, 32)
        k(x, y)
        want = x * 2
        want[:8] = x[:8] * 10
        torch.testing.assert_close(y, want)
    assert k.compile_count == 1
    text = k.lowered_text()
    assert "for idx" in text or "for blk" in text
    assert re.search(r"^\s+if ", text, re.M)


def test_compile_time_if_on_python_values():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor(), mode: str = "double"):
        pypto.set_vec_tile_shapes(8, 64)
        if mode == "double":
            y[:] = x * 2
        else:
            y[:] = x * 3

    x, y = torch.randn(8, 64), torch.empty(8, 64)
    k(x, y)
    torch.testing.assert_close(y, x * 2)
    k(x, y, "triple")
    torch.testing.assert_close(y, x * 3)
    assert "if " not in k.lowered_text(x, y, "triple").split("section")[1]


def _count(text, op):
    return len(re.findall(rf"\b{op}\[", text))


@pytest.mark.both_backends
def test_fusion_chain_reads_each_input_once_and_writes_once():
    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        t = a + b
        for _ in range(6):
            t = pypto.exp(t * 0.5) - b
        y[:] = pypto.sigmoid(t) * a

    a, b, y = torch.randn(40, 100), torch.randn(40, 100), torch.empty(40, 100)
    k(a, b, y)
    t = a + b
    for _ in range(6):
        t = torch.exp(t * 0.5) - b
    torch.testing.assert_close(y, torch.sigmoid(t) * a)
    text = k.lowered_text()
    assert _count(text, "load") == 2 and _count(text, "store") == 1
    assert text.count("section_vector") == 1


def test_softmax_fuses_when_tile_covers_row_and_goes_multipass_otherwise():
    def make(tile):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 128],
                                                                                      pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(*tile)
            y[:] = pypto.softmax(x, -1)
        return k

    x = torch.randn(50, 128)
    for tile, single in (((16, 128), True), ((16, 32), False)):
        k = make(tile)
        y = torch.empty_like(x)
        k(x, y)
        torch.testing.assert_close(y, torch.softmax(x, -1))
        assert (_count(k.lowered_text(), "load") == 1) == single


def test_lowered_program_is_inspectable_with_syncs_and_addresses():
    @pypto.frontend.jit
    def k(a: pypto.Tensor(), w: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        y[:] = pypto.relu(pypto.matmul(a, w, pypto.DT_FP32) + 1.0)

    a, w, y = torch.randn(32, 48), torch.randn(48, 64), torch.empty(32, 64)
    k(a, w, y)
    torch.testing.assert_close(y, torch.relu(a @ w + 1), rtol=1e-4, atol=1e-4)
    text = k.lowered_text()
    assert "kind=mix" in text and "section_cube" in text and "section_vector" in text
    for op in ("matmul", "matmul_acc", "move", "sync_src", "sync_dst"):
        assert _count(text, op) >= 1, op
    # the cube pass writes a workspace the vector pass reads: one grid barrier between them
    assert _count(text, "sync_all") == 1 and "core_type=SyncCoreType.MIX" in text
    assert "get_block_idx()" in text and "get_block_num()" in text
    assert re.search(r"tile \w+: FP32\[16, 16\] Acc/NZ @ 0x", text)


def test_options_groups_honoured_and_rejected(capsys):
    assert pypto.get_host_options()["compile_stage"] == pypto.CompStage.ALL_COMPLETE
    pypto.set_codegen_options(support_dynamic_aligned=True)
    assert pypto.get_codegen_options()["support_dynamic_aligned"] is True
    pypto.reset_options()
    assert pypto.get_codegen_options()["support_dynamic_aligned"] is False
    pypto.set_pass_options(vec_nbuffer_setting={-1: 2})  # an NPU knob: recorded
    assert pypto.get_pass_options()["vec_nbuffer_setting"] == {-1: 2}
    with pytest.raises(ValueError, match="vec_nbuffer_setting"):
        pypto.set_pass_options(vec_nbuffer_setting={-1: "two"})
    with pytest.raises(ValueError, match="unknown key"):
        pypto.set_runtime_options(no_such_key=1)
    with pytest.raises(ValueError, match="device_sched_mode"):
        pypto.frontend.jit(runtime_options={"device_sched_mode": 9})(lambda x: None)

    @pypto.frontend.jit(host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH},
                        debug_options={"compile_debug_mode": 0})
    def staged(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + 1

    x, y = torch.randn(8, 64), torch.zeros(8, 64)
    staged(x, y)
    assert torch.equal(y, torch.zeros(8, 64))  # stopped before running
    assert "add" in staged.graph_text(x, y)

    @pypto.frontend.jit(runtime_options={"run_mode": "interp"}, debug_options={"compile_debug_mode": 1})
    def printed(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + 1

    printed(x, y)
    torch.testing.assert_close(y, x + 1)
    assert "kernel printed" in capsys.readouterr().out
    with pytest.raises(ValueError, match="contradicts"):
        pypto.frontend.jit(backend="interp", runtime_options={"run_mode": pypto.RunMode.SIM})(printed.fn)(x, y)


def test_pass_verify_compares_against_graph_reference():
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True, "pass_verify_error_tol": 1e-5})
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.softmax(x * 2, -1)

    x, y = torch.randn(20, 64), torch.empty(20, 64)
    k(x, y)
    torch.testing.assert_close(y, torch.softmax(x * 2, -1))


def test_pass_verify_reports_first_mismatch(monkeypatch):
    from pypto.frontend import verify

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + 1

    def wrong(graph, user, dyn, arch=None):
        out = {i: a.copy() for i, a in user.items()}
        out[1][...] = 0
        return out

    monkeypatch.setattr(verify, "run_graph", wrong)
    with pytest.raises(pypto.KernelRuntimeError, match="tensor 'y' differs .* at \\[0, 0\\]"):
        k(torch.randn(8, 64), torch.empty(8, 64))


def test_errors():
    @pypto.frontend.jit
    def returns(x: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        return x + 1

    with pytest.raises(pypto.KernelSyntaxError, match="returns nothing"):
        returns(torch.randn(8, 64))

    @pypto.frontend.jit
    def no_tiles(x: pypto.Tensor(), y: pypto.Tensor()):
        y[:] = x + 1

    with pytest.raises(pypto.KernelSyntaxError, match="set_vec_tile_shapes"):
        no_tiles(torch.randn(8, 64), torch.empty(8, 64))

    @pypto.frontend.jit
    def bad_shape(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + pypto.ones(3, 5)

    with pytest.raises(pypto.KernelTypeError, match="do not broadcast"):
        bad_shape(torch.randn(8, 64), torch.empty(8, 64))
    with pytest.raises(pypto.KernelSyntaxError, match="only valid while"):
        pypto.loop(4).__next__()  # record-mode calls outside a kernel (tile shapes are the exception)
    assert issubclass(pypto.KernelLaunchError, pypto.KernelError)


def test_torch_bf16_and_fp16_zero_copy():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.rms_norm(x)

    for dtype in (torch.float16, torch.bfloat16):
        x = torch.randn(16, 64).to(dtype)
        y = torch.empty_like(x)
        k(x, y)
        xf = x.float()
        want = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(dtype)
        torch.testing.assert_close(y.float(), want.float(), rtol=1e-2, atol=1e-2)
    assert np.isfinite(y.float().numpy()).all()
