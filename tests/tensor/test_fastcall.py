"""Frozen launches (pypto/frontend/fastcall.py): repeated calls on the cpu backend skip binding and
checks, yet give the full path's results and errors for every argument that changes the key."""
import threading

import numpy as np
import pytest
import torch

import pypto
from pypto.frontend.fastcall import call_key, feeds
from pypto_pro.backends.cpu import workers
from pypto_pro.backends import cpu

pytestmark = pytest.mark.skipif(not cpu.available(), reason="no C++ compiler for the cpu backend")


@pytest.fixture(autouse=True)
def _on_cpu(monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "cpu")


def _frozen(kernel) -> int:
    return sum(1 for f in kernel._fast.values() if f)


@pypto.frontend.jit
def scaled_add(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), b: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), scale: float = 2.0):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = (a + b) * scale


def test_repeated_calls_read_new_data_and_new_tensors():
    a, b, y = torch.randn(40, 64), torch.randn(40, 64), torch.empty(40, 64)
    scaled_add(a, b, y)
    scaled_add(a, b, y)
    assert _frozen(scaled_add) == 1
    a.add_(1.0)  # same tensors, new contents
    scaled_add(a, b, y)
    torch.testing.assert_close(y, (a + b) * 2.0)
    a2, b2, y2 = torch.randn(40, 64), torch.randn(40, 64), torch.empty(40, 64)  # new tensors, same key
    scaled_add(a2, b2, y2)
    torch.testing.assert_close(y2, (a2 + b2) * 2.0)
    assert _frozen(scaled_add) == 1


def test_constants_strides_and_dynamic_dims_change_the_key():
    a, b, y = torch.randn(40, 64), torch.randn(40, 64), torch.empty(40, 64)
    scaled_add(a, b, y, 3.0)
    scaled_add(a, b, y, 3.0)
    scaled_add(a, b, y, 0.5)
    torch.testing.assert_close(y, (a + b) * 0.5)
    wide = torch.randn(40, 128)
    strided = wide[:, ::2]  # same shape, other strides
    scaled_add(strided, b, y, 0.5)
    torch.testing.assert_close(y, (strided + b) * 0.5)
    count = scaled_add.compile_count
    a3, b3, y3 = torch.randn(72, 64), torch.randn(72, 64), torch.empty(72, 64)
    scaled_add(a3, b3, y3, 0.5)
    scaled_add(a3, b3, y3, 0.5)
    torch.testing.assert_close(y3, (a3 + b3) * 0.5)
    assert scaled_add.compile_count == count  # a DYNAMIC dim: new key, no recompile


def test_numpy_arguments_take_the_frozen_path_too():
    a, b = np.random.rand(24, 64).astype(np.float32), np.random.rand(24, 64).astype(np.float32)
    y = np.empty_like(a)
    for _ in range(3):
        scaled_add(a, b, y)
    np.testing.assert_allclose(y, (a + b) * 2.0, rtol=1e-6)
    assert call_key((a, b, y)) in {k[2] for k, f in scaled_add._fast.items() if f}


def test_launch_errors_are_still_raised_after_freezing():
    a, b, y = torch.randn(8, 64), torch.randn(8, 64), torch.empty(8, 64)
    scaled_add(a, b, y)
    scaled_add(a, b, y)
    with pytest.raises(pypto.KernelLaunchError, match="dtype"):
        scaled_add(a.double(), b, y)
    with pytest.raises(pypto.KernelLaunchError, match="dim 1 must be 64"):
        scaled_add(torch.randn(8, 32), b, y)


@pypto.frontend.jit
def pick(x: pypto.Tensor([16, 64], pypto.DT_FP32), idx: pypto.Tensor([16, 64], pypto.DT_INT64),
         y: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = pypto.gather(x, 1, idx)


def test_kernel_runtime_errors_are_raised_on_the_frozen_path():
    x, y = torch.randn(16, 64), torch.empty(16, 64)
    idx = torch.randint(0, 64, (16, 64))
    pick(x, idx, y)
    pick(x, idx, y)
    assert _frozen(pick) == 1
    torch.testing.assert_close(y, torch.gather(x, 1, idx))
    idx[3, 5] = 64
    with pytest.raises(pypto.KernelRuntimeError):
        pick(x, idx, y)


@pypto.frontend.jit
def long_rows(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 64)  # rows of 200 do not fit: workspace passes
    y[:] = pypto.softmax(x, -1)


def test_workspaces_are_fresh_on_every_frozen_call():
    for _ in range(3):
        x, y = torch.randn(20, 200) * 5, torch.empty(20, 200)
        long_rows(x, y)
        torch.testing.assert_close(y, torch.softmax(x, -1))
    assert _frozen(long_rows) == 1


def test_other_threads_and_other_backends_take_the_full_path(monkeypatch):
    a, b, y = torch.randn(16, 64), torch.randn(16, 64), torch.empty(16, 64)
    scaled_add(a, b, y, 1.5)
    scaled_add(a, b, y, 1.5)
    out = torch.empty(16, 64)
    worker = threading.Thread(target=scaled_add, args=(a, b, out, 1.5))
    worker.start()
    worker.join()
    torch.testing.assert_close(out, (a + b) * 1.5)
    monkeypatch.setenv("PYPTO_BACKEND", "interp")
    before = len(scaled_add._fast)
    y.zero_()
    scaled_add(a, b, y, 1.5)
    scaled_add(a, b, y, 1.5)
    torch.testing.assert_close(y, (a + b) * 1.5)
    assert len(scaled_add._fast) == before + 1 and _frozen(scaled_add) == before  # interp: never frozen


def test_block_count_follows_the_work_unless_threads_are_set(monkeypatch):
    monkeypatch.delenv("PYPTO_NUM_THREADS", raising=False)
    assert workers.launch_blocks(None, 64 * 64) == 1
    n = workers.cpu_workers()
    big = workers.MIN_BLOCK_ELEMENTS * 64
    assert workers.launch_blocks(None, big) in ({1} if n == 1 else {n * k for k in range(1, workers.BLOCKS_PER_THREAD + 1)})
    monkeypatch.setenv("PYPTO_NUM_THREADS", "3")
    assert workers.launch_blocks(None, 64 * 64) == 3


def test_large_launches_get_several_blocks_per_thread(monkeypatch):
    """More blocks than threads (claimed one by one) once each block still has enough work; one thread
    always runs one block."""
    monkeypatch.setenv("PYPTO_NUM_THREADS", "2")
    per = workers.MIN_SHARED_BLOCK_ELEMENTS
    assert workers.launch_blocks(None, 2 * per - 1) == 2
    assert workers.launch_blocks(None, 2 * per * 3) == 6
    assert workers.launch_blocks(None, 4096 * 1024) == 2 * workers.BLOCKS_PER_THREAD
    monkeypatch.setenv("PYPTO_NUM_THREADS", "1")
    assert workers.launch_blocks(None, 4096 * 1024) == 1


@pypto.frontend.jit
def tiled_relu(x: pypto.Tensor(), y: pypto.Tensor(), tile: tuple = (8, 64)):
    pypto.set_vec_tile_shapes(*tile)
    y[:] = pypto.relu(x)


def test_tuple_constants_take_the_frozen_path():
    x, y = torch.randn(32, 64), torch.empty(32, 64)
    for tile in ((8, 64), (8, 64), (16, 64), (16, 64)):
        y.zero_()
        tiled_relu(x, y, tile)
        torch.testing.assert_close(y, torch.relu(x))
    assert _frozen(tiled_relu) == 2 and tiled_relu.compile_count == 2


@pypto.frontend.jit
def flat_scale(a: pypto.Tensor([32, 16], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    y[:] = pypto.reshape(a, [16, 32]) * 3.0


def test_zero_copy_views_of_arguments_follow_new_tensors():
    """A reshape of an argument is a kernel parameter of its own whose data is the argument's: a
    repeated call points it at the new argument (fastcall.feeds)."""
    program = None
    for _ in range(3):
        a, y = torch.randn(32, 16), torch.empty(16, 32)
        flat_scale(a, y)
        torch.testing.assert_close(y, a.reshape(16, 32) * 3.0, rtol=0, atol=0)
        program = next(c.program for c in flat_scale.cache.values())
    assert _frozen(flat_scale) == 1
    where = feeds(program)
    views = [p.index for p, b in zip(program.kernel.params, program.buffers) if b.kind == "alias"]
    assert views and all(where.args[i] == 0 for i in views)  # the view of `a` takes a's data
    assert not where.zeroed


def test_a_backend_without_frozen_call_takes_the_full_path(monkeypatch):
    """``frozen_call`` is optional in the backend protocol: without it every call is a full one."""
    monkeypatch.delattr(cpu, "frozen_call")

    @pypto.frontend.jit
    def twice(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x * 2.0

    for _ in range(3):
        x, y = torch.randn(8, 64), torch.empty(8, 64)
        twice(x, y)
        torch.testing.assert_close(y, x * 2.0)
    assert len(twice._fast) == 1 and _frozen(twice) == 0
