"""pypto.distributed while recording and lowering (one process, no group needed)."""
from __future__ import annotations

import pytest
import torch

import pypto

D = pypto.distributed


@pypto.frontend.jit
def exchange(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32), group, n):
    pypto.set_vec_tile_shapes(8, 32)
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8 * n, 32])
    me = D.my_symbolic_pe(group)
    sent = D.shmem_put(x * 2, [me * 8, 0], buf, (me + 1) % n, put_op=pypto.AtomicType.ADD)
    D.shmem_signal(buf, (me + 1) % n, 1, [8, 32], [me * 8, 0], target_pe=-1, pred=[sent])
    ready = D.shmem_wait_until(buf, me, 1, [8, 32], [0, 0], cmp=pypto.OpType.GE)
    out[:] = pypto.experimental.shmem_load(buf, me, [8, 32], [0, 0], pred=[ready]) + 1


def test_lowered_comm_ops_run_on_one_core_between_grid_barriers():
    text = exchange.lowered_text(torch.zeros(8, 32), torch.zeros(8, 32), "g", 2)
    lines = [line.strip() for line in text.splitlines()]
    for name in ("shmem_put[COMM]", "shmem_signal[COMM]", "shmem_wait[COMM]", "shmem_get[COMM]"):
        i = next(k for k, line in enumerate(lines) if line.startswith(name))
        assert lines[i - 1] == "if (get_block_idx() == 0):" and lines[i - 2] == "section_vector:"
        assert lines[i - 3].startswith("sync_all") and lines[i + 1].startswith("sync_all")
    assert "pe_g: INT64" in text and "comm_fn: INT64" in text  # PE and callback are launch scalars
    assert "atomic=1" in text and "target_pe=-1" in text and "cmp=5" in text


def _record(body):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        body(x)

    return k.graph_text(torch.zeros(8, 32))


@pytest.mark.parametrize("body, error, text", [
    (lambda x: D.create_shmem_tensor("g", 2, pypto.DT_INT8, [8, 32]), pypto.KernelTypeError, "dtype must be"),
    (lambda x: D.create_shmem_tensor("g", 2, pypto.DT_FP32, [8]), pypto.KernelTypeError, "2 to 4"),
    (lambda x: D.create_shmem_tensor("", 2, pypto.DT_FP32, [8, 8]), pypto.KernelTypeError, "1 to 128"),
    (lambda x: D.create_shmem_tensor("g", 0, pypto.DT_FP32, [8, 8]), pypto.KernelTypeError, "n_pes"),
    (lambda x: D.shmem_view(D.create_shmem_tensor("g", 2, pypto.DT_FP32, [8, 8]), [4, 8], [6, 0]),
     pypto.KernelValueError, "outside"),
    (lambda x: D.shmem_put(x, [4, 0], D.create_shmem_tensor("g", 2, pypto.DT_FP32, [8, 32]), 1),
     pypto.KernelValueError, "does not fit"),
    (lambda x: pypto.experimental.shmem_store(x, [0, 0], D.create_shmem_tensor("g", 2, pypto.DT_FP16, [8, 32]), 1),
     pypto.KernelTypeError, "must be equal"),
    (lambda x: D.shmem_put(x, [0, 0], D.create_shmem_tensor("g", 2, pypto.DT_FP32, [8, 32]), 1, put_op=3),
     pypto.KernelTypeError, "AtomicType"),
    (lambda x: D.shmem_wait_until(D.create_shmem_signal("g", 2), 0, 1, cmp="eq"), pypto.KernelTypeError, "OpType"),
    (lambda x: D.shmem_barrier_all(x), pypto.KernelTypeError, "shared-memory tensor"),
])
def test_invalid_calls_name_the_rule(body, error, text):
    with pytest.raises(error, match=text):
        _record(body)


def test_outside_a_kernel():
    with pytest.raises(pypto.KernelSyntaxError, match="only valid while"):
        D.create_shmem_tensor("g", 2, pypto.DT_FP32, [8, 8])
