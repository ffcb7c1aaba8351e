"""SPMD lowering: tile iterations spread over cores, grid barriers between dependent passes,
results independent of the block count, race-free under the simulator."""
import numpy as np
import pytest
import torch

import pypto
from pypto_pro import backends
from pypto_pro.backends import interp


def _count(text: str, op: str) -> int:
    return len([ln for ln in text.splitlines() if ln.strip().startswith(op + "[") or ln.strip().startswith(op + "(")])


@pypto.frontend.jit
def fused(a: pypto.Tensor(), b: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 64)
    y[:] = pypto.relu(a * b + 1.0)


@pypto.frontend.jit
def long_rows(x: pypto.Tensor(), y: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 64)  # rows of 200 do not fit a 64-column tile: workspace passes
    y[:] = pypto.softmax(x, -1)


@pypto.frontend.jit
def accumulate(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), acc: pypto.Tensor([32, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 64)
    for i in pypto.loop(x.shape[0] // 32):
        acc[:] = acc + x[i * 32:(i + 1) * 32, :]


def test_fused_pass_needs_no_grid_barrier_and_is_spmd():
    a, b, y = torch.randn(200, 130), torch.randn(200, 130), torch.empty(200, 130)
    fused(a, b, y)
    torch.testing.assert_close(y, torch.relu(a * b + 1))
    text = fused.lowered_text()
    assert _count(text, "sync_all") == 0
    assert "get_block_idx()" in text and "get_block_num()" in text


@pytest.mark.both_backends
def test_results_do_not_depend_on_the_block_count(monkeypatch):
    x = torch.randn(70, 200)
    results = []
    for blocks in (1, 3, 7):
        monkeypatch.setattr(interp, "LAUNCH_BLOCKS", blocks)
        monkeypatch.setenv("PYPTO_NUM_THREADS", str(blocks))  # the cpu backend's block count
        y = torch.empty_like(x)
        long_rows(x, y)
        results.append(y)
    torch.testing.assert_close(results[0], torch.softmax(x, -1))
    assert all(torch.equal(r, results[0]) for r in results[1:])
    assert _count(long_rows.lowered_text(x, results[0]), "sync_all") >= 1


def test_multipass_softmax_computes_the_row_max_once():
    x = torch.randn(40, 200)
    y = torch.empty_like(x)
    long_rows(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    text = long_rows.lowered_text(x, y)
    # row max, row sum of exp, output: three passes, two grid barriers
    assert text.count("section_vector") == 3 and _count(text, "sync_all") == 2


@pytest.mark.both_backends
def test_loop_iterations_see_each_other_on_every_core():
    x = torch.randn(96, 64)
    acc = torch.zeros(32, 64)
    accumulate(x, acc)
    torch.testing.assert_close(acc, x[:32] + x[32:64] + x[64:])


def test_simulator_finds_no_race_in_multipass_and_loop_kernels(monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "sim")
    x = torch.randn(70, 200)
    y = torch.empty_like(x)
    long_rows(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    assert len(long_rows.last_report.per_core) >= 2 and not long_rows.last_report.hazards
    x, acc = torch.randn(64, 64), torch.zeros(32, 64)
    accumulate(x, acc)
    torch.testing.assert_close(acc, x[:32] + x[32:])


def test_pass_reading_its_own_output_elsewhere_runs_serially():
    @pypto.frontend.jit
    def shift(x: pypto.Tensor([128, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        x[32:, :] = x[:96, :] * 2.0

    x = torch.arange(128 * 32, dtype=torch.float32).reshape(128, 32)
    want = x.numpy().copy()
    for r0 in range(32, 128, 32):  # tile order: each tile reads the rows the previous tile wrote
        want[r0:r0 + 32] = want[r0 - 32:r0] * 2
    shift(x)
    np.testing.assert_array_equal(x.numpy(), want)
    assert "range((get_block_idx() * 3), 3, 1)" in shift.lowered_text()


def test_cpu_block_count_follows_pypto_num_threads(monkeypatch):
    monkeypatch.setenv("PYPTO_NUM_THREADS", "5")
    assert backends.launch_blocks("cpu", None, 0) == 5
    monkeypatch.delenv("PYPTO_NUM_THREADS")
    assert backends.launch_blocks("cpu", None, 0) >= 1
