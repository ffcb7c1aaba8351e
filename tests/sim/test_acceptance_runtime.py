"""Acceptance findings on the simulator, the cpu backend and the launch runtime.

1. vector-only kernels run ``vector_core_num`` blocks at once on the simulator (cube/mix: ``core_num``);
   blocks that synchronise beyond that hang with a message saying why;
2. the cpu backend moves Acc -> Vec with an offset bit-exactly like the interpreter, and names the kernel,
   the op and the line of what it does not implement (fp8 / int4 data);
3. a read-only array bound to a parameter the kernel writes is rejected before the launch, on every
   backend and on the frozen fast path; read-only inputs stay accepted;
4. ``arch=`` / ``backend=`` are checked when the kernel is decorated; runtime messages agree across backends.
"""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends import cpu
from pypto_pro.errors import KernelDeadlockError, KernelLaunchError, KernelRuntimeError
from pypto_pro.runtime.args import written_params
from pypto_pro.runtime.platform import get_platform_info

FP32 = pl.DT_FP32
ROW = pl.TileType([1, 64], FP32, pl.MemorySpace.Vec)
needs_cpu = pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")


pytestmark = pytest.mark.usefixtures("private_build_dir")  # tests/conftest.py


def _line_of(text: str) -> int:
    """The line of this file that contains ``text`` (kernel lines named by error messages)."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# ====================================================================================== 1. waves
@pl.jit(backend="sim")
def aiv_sync_all(x: pl.Tensor[[pl.DYNAMIC, 64], FP32], y: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
    t = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0]).current()
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(t, x, [b, 0])
        pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
        pl.store(y, t, [b, 0])


@pl.jit(backend="sim")
def aiv_copy_row(x: pl.Tensor[[pl.DYNAMIC, 64], FP32], y: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
    t = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0]).current()
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(t, x, [b, 0])
        pl.store(y, t, [b, 0])


@pl.jit(backend="sim")
def mix_sync_all(x: pl.Tensor[[pl.DYNAMIC, 64], FP32], y: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
    t = pl.make_tile_group(type=ROW, addrs=0x0, mutex_ids=[0]).current()
    with pl.section_cube():
        pl.system.sync_all()
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(t, x, [b, 0])
        pl.system.sync_all()
        pl.store(y, t, [b, 0])


@pl.jit(backend="sim")
def aic_sync_all(x: pl.Tensor[[pl.DYNAMIC, 64], FP32]):
    with pl.section_cube():
        pl.system.sync_all(core_type=pl.SyncCoreType.AIC_ONLY)


def _rows(n):
    x = np.arange(n * 64, dtype=np.float32).reshape(n, 64)
    return x, np.zeros_like(x)


def test_vector_only_kernel_with_sync_all_runs_vector_core_num_blocks_at_once():
    n = get_platform_info("a5").vector_core_num
    assert n == 64
    x, y = _rows(n)
    aiv_sync_all[None, n](x, y)
    np.testing.assert_array_equal(y, x)
    report = aiv_sync_all.last_report
    assert report.core_num == n and "64 blocks run at once" in str(report)


def test_vector_only_blocks_up_to_vector_core_num_are_one_wave_in_the_cycle_estimate():
    def cycles(blocks):
        x, y = _rows(blocks)
        aiv_copy_row[None, blocks](x, y)
        np.testing.assert_array_equal(y, x)
        return aiv_copy_row.last_report.total_cycles

    one_wave, full, second_wave = cycles(32), cycles(64), cycles(65)
    assert full == one_wave  # identical blocks side by side
    assert second_wave > 1.5 * full


def test_sync_all_beyond_the_resident_blocks_is_a_deadlock_saying_why():
    x, y = _rows(66)
    with pytest.raises(KernelDeadlockError) as e:
        aiv_sync_all[None, 66](x, y)
    text = str(e.value)
    assert "[kernel aiv_sync_all]" in text
    assert "block_dim 66 is more than the 64 blocks that run at once (one per AIV core)" in text
    assert "blocks 64..65 wait in a later wave" in text and "blocks in a later wave can never arrive" in text
    assert "pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)" in text


@pytest.mark.parametrize("kernel, args", [(mix_sync_all, _rows(66)), (aic_sync_all, _rows(33)[:1])],
                         ids=["mix", "cube"])
def test_cube_and_mix_kernels_run_core_num_blocks_at_once(kernel, args):
    n = get_platform_info("a5").core_num
    kernel[None, n](*args)
    assert kernel.last_report.core_num == n
    with pytest.raises(KernelDeadlockError, match=f"block_dim {n + 1} is more than the {n} blocks that run at "
                                                  f"once \\(one per AI core\\), so block {n} waits in a later wave"):
        kernel[None, n + 1](*args)


# ====================================================================================== 2. cpu backend
def _acc_to_vec(in_dt, out_dt, mode, relu, scale, backend):
    """A mix kernel: (a @ b) moved from the accumulator's [r, c] on into both AIVs' UB, each AIV storing its
    UB tile to rows [32 * subblock, ...) of y.  The window is [offset, offset + the valid shape the AIC holds
    for v), here the rest of the accumulator (at least one row and column)."""
    acc_dt = pl.DT_INT32 if in_dt == pl.DT_INT8 else FP32

    def acc_to_vec(a: pl.Tensor[[32, 32], in_dt], b: pl.Tensor[[32, 64], in_dt], y: pl.Tensor[[64, 64], out_dt],
                   r: int, c: int):
        a1 = pl.make_tile(pl.TileType([32, 32], in_dt, pl.MemorySpace.Mat), addr=0)
        b1 = pl.make_tile(pl.TileType([32, 64], in_dt, pl.MemorySpace.Mat), addr=0x10000)
        a0 = pl.make_tile(pl.TileType([32, 32], in_dt, pl.MemorySpace.Left), addr=0)
        b0 = pl.make_tile(pl.TileType([32, 64], in_dt, pl.MemorySpace.Right), addr=0)
        acc = pl.make_tile(pl.TileType([32, 64], acc_dt, pl.MemorySpace.Acc), addr=0)
        v = pl.make_tile(pl.TileType([32, 64], out_dt), addr=0)
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.set_validshape(v, [pl.max(1, 32 - r), pl.max(1, 64 - c)])
            pl.move(v, acc, [r, c], acc_to_vec_mode=mode, relu_pre_mode=relu, scale=scale)  # acc_to_vec move
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=2)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=2)
            pl.store(y, v, [pl.get_subblock_idx() * 32, 0])

    return pl.jit(backend=backend)(acc_to_vec)


MODES = [pl.AccToVecMode.SingleModeVec0, pl.AccToVecMode.SingleModeVec1, pl.AccToVecMode.DualModeSplitM,
         pl.AccToVecMode.DualModeSplitN]
FIXPIPES = {  # (in dtype, out dtype, relu, scale)
    "fp32": (pl.DT_FP16, FP32, None, None),
    "relu_scale_fp16": (pl.DT_FP16, pl.DT_FP16, pl.ReluPreMode.NormalRelu, 0.5),
    "int8_scaled": (pl.DT_INT8, pl.DT_INT8, None, 0.25),
}


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


@needs_cpu
@pytest.mark.parametrize("offset", [(16, 0), (8, 16), (0, 0)])
@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("fixpipe", list(FIXPIPES))
def test_cpu_acc_to_vec_move_with_offset_matches_the_interpreter_bit_for_bit(offset, mode, fixpipe):
    in_dt, out_dt, relu, scale = FIXPIPES[fixpipe]
    # small integers: exact products and sums, so the comparison is about the move, not the matmul's rounding
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-6, 7, shape).astype(in_dt.require_numpy()) for shape in ((32, 32), (32, 64)))
    out = {}
    for backend in ("interp", "cpu"):
        y = np.zeros((64, 64), out_dt.require_numpy())
        _acc_to_vec(in_dt, out_dt, mode, relu, scale, backend)(a, b, y, *offset)
        out[backend] = y
    np.testing.assert_array_equal(_bits(out["cpu"]), _bits(out["interp"]))
    if fixpipe == "fp32" and mode == pl.AccToVecMode.SingleModeVec0:  # the oracle itself, once
        r, c = offset
        want = (a.astype(np.float32) @ b.astype(np.float32))[r:, c:]
        np.testing.assert_array_equal(out["interp"][:32 - r, :64 - c], want)


@needs_cpu
def test_cpu_acc_to_vec_offset_outside_the_window_fails_like_the_interpreter():
    a, b = np.ones((32, 32), np.float16), np.ones((32, 64), np.float16)
    messages = []
    for backend in ("interp", "cpu"):
        k = _acc_to_vec(pl.DT_FP16, FP32, None, None, None, backend)
        with pytest.raises(KernelRuntimeError) as e:
            k(a, b, np.zeros((64, 64), np.float32), 32, 0)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert ("move window [32:33, 0:64] (offset + the valid shape of v on the AIC) leaves accumulator acc of "
            "shape [32, 64]") in messages[0]
    assert f"test_acceptance_runtime.py:{_line_of('# acc_to_vec move')}" in messages[0]


def _copy_kernel(dtype, backend):
    def copy(a: pl.Tensor[[4, 32], dtype], out: pl.Tensor[[4, 32], dtype]):
        t = pl.make_tile_group(type=pl.TileType([4, 32], dtype), addrs=0x0, mutex_ids=[0]).current()
        with pl.section_vector():
            pl.load(t, a, [0, 0])  # copy load
            pl.store(out, t, [0, 0])

    return pl.jit(backend=backend)(copy)


NARROW = {"INT4": ml_dtypes.int4, "UINT4": ml_dtypes.uint4}  # (the 8-bit floats have a C++ type: tests/cpu/test_low_float_cpu.py)


@needs_cpu
@pytest.mark.parametrize("name", list(NARROW))
def test_cpu_names_kernel_op_and_line_of_unimplemented_dtypes(name, monkeypatch):
    dtype = getattr(pl, f"DT_{name}")
    a = np.arange(128).reshape(4, 32).astype(np.float32).astype(NARROW[name])
    with pytest.raises(NotImplementedError) as e:
        _copy_kernel(dtype, "cpu")(a, np.zeros((4, 32), NARROW[name]))
    text = str(e.value)
    assert text.startswith(f"[kernel copy] pl.load of {name} data is not implemented on the cpu backend "
                           f"(use backend='interp' or 'sim')"), text
    assert f"test_acceptance_runtime.py:{_line_of('# copy load')}" in text and "pl.load(t, a, [0, 0])" in text
    # cpu only as the default: the kernel runs on the interpreter, with one warning naming the op and line
    monkeypatch.delenv("PYPTO_BACKEND", raising=False)
    out = np.zeros((4, 32), NARROW[name])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _copy_kernel(dtype, None)(a, out)
    np.testing.assert_array_equal(_bits(out), _bits(a))
    message = next(str(m.message) for m in w if "running it on the interpreter" in str(m.message))
    assert message.startswith(f"kernel 'copy': pl.load of {name} data is not supported by the cpu backend")
    assert f"test_acceptance_runtime.py:{_line_of('# copy load')}" in message


# ====================================================================================== 3. read-only arrays
def _copy_fp32(backend):
    return _copy_kernel(FP32, backend)


@pl.jit(backend="interp")
def set_flag(flags: pl.Tensor[[8], pl.DT_INT64], n: int):
    with pl.section_vector():
        if n > 0:
            flags[n] = 1


BACKENDS = ["interp", "sim", pytest.param("cpu", marks=needs_cpu)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_output_is_rejected_before_the_launch(backend):
    a = np.ones((4, 32), np.float32)
    out = np.zeros((4, 32), np.float32)
    out.setflags(write=False)
    with pytest.raises(KernelLaunchError, match=r"\[kernel copy\] argument 'out': the kernel writes this tensor, "
                                                r"but the array is read-only"):
        _copy_fp32(backend)(a, out)
    assert not out.any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_inputs_stay_accepted(backend):
    a = np.broadcast_to(np.arange(32, dtype=np.float32), (4, 32))
    out = np.zeros((4, 32), np.float32)
    _copy_fp32(backend)(a, out)
    np.testing.assert_array_equal(out, a)


def test_written_parameters_come_from_the_ir_including_setval_in_branches():
    flags = np.zeros(8, np.int64)
    set_flag(flags, 3)
    assert flags[3] == 1
    assert written_params(next(iter(set_flag._variants.values()))) == {0}
    flags.setflags(write=False)
    with pytest.raises(KernelLaunchError, match="argument 'flags': the kernel writes this tensor"):
        set_flag(flags, 0)


@needs_cpu
def test_frozen_cpu_launcher_does_not_skip_the_read_only_check():
    k = _copy_fp32("cpu")
    out = np.zeros((4, 32), np.float32)
    k(np.ones((4, 32), np.float32), out)
    k(np.ones((4, 32), np.float32), out)  # the frozen launcher for these argument types
    out.setflags(write=False)
    with pytest.raises(KernelLaunchError, match="argument 'out'"):
        k(np.full((4, 32), 7, np.float32), out)
    assert (out == 1).all()


# ====================================================================================== 4. decoration, messages
def test_unknown_arch_or_backend_is_rejected_at_decoration_naming_the_kernel():
    fn = _copy_fp32("interp").__wrapped__
    with pytest.raises(KernelLaunchError, match=r"\[kernel copy\] unknown arch 'a9'; expected one of "
                                                r"\['a2', 'a3', 'a5'\]"):
        pl.jit(arch="a9")(fn)
    with pytest.raises(KernelLaunchError, match=r"\[kernel copy\] unknown arch 'A5'"):  # case-sensitive
        pl.jit(arch="A5")(fn)
    with pytest.raises(KernelLaunchError, match=r"\[kernel copy\] unknown backend 'gpu'; expected one of"):
        pl.jit(backend="gpu")(fn)
    assert pl.jit(arch="a2", backend="sim")(fn).arch.name == "a2"


def test_unknown_arch_from_the_environment_names_the_kernel_at_launch(monkeypatch):
    k = _copy_fp32("interp")  # decorated with arch=None: $PYPTOPRO_JIT_ARCH is read at launch
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a9")
    with pytest.raises(KernelLaunchError, match=r"\[kernel copy\] unknown arch 'a9'"):
        k(np.ones((4, 32), np.float32), np.zeros((4, 32), np.float32))


def _valid_rows(backend):
    def valid_rows(x: pl.Tensor[[16, 16], FP32], n: int):
        t = pl.make_tile(pl.TileType([16, 16], FP32), addr=0)
        with pl.section_vector():
            pl.set_validshape(t, [n, 16])
            pl.load(t, x, [0, 0])

    return pl.jit(backend=backend)(valid_rows)


@needs_cpu
def test_runtime_messages_are_the_same_on_cpu_and_interp():
    messages = []
    for backend in ("interp", "cpu"):
        with pytest.raises(KernelRuntimeError) as e:
            _valid_rows(backend)(np.zeros((16, 16), np.float32), 20)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("[kernel valid_rows] valid shape [20, 16] is outside tile t of shape [16, 16]")
