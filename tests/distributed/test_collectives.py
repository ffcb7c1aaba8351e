"""Communicating kernels (kernels.py) on 1, 2 and 4 processes against torch.distributed references.

All cases run on the interpreter (the oracle); the all-gather + matmul also on the cpu backend
(generated C++ calling the transport back) and the simulator.
"""
from __future__ import annotations

import time

import pytest

import shmem_cases as cases


@pytest.mark.parametrize("k", [1, 2, 4])
def test_allgather_matmul(world, k):
    world.run(cases.allgather_matmul, k, "interp")


@pytest.mark.parametrize("backend", ["cpu", "sim"])
def test_allgather_matmul_backends(world, backend):
    world.run(cases.allgather_matmul, 2, backend)


@pytest.mark.parametrize("k", [2, 4])
def test_matmul_allreduce_add_rmsnorm(world, k):
    world.run(cases.matmul_allreduce_add_rmsnorm, k, "interp")


@pytest.mark.parametrize("k", [2, 4])
def test_moe_dispatch_combine_uneven(world, k):
    assert world.run(cases.moe_dispatch_combine, k, "interp")[:k] == [sum(r) for r in cases.COUNTS[k]]


def test_16bit_atomic_adds(world):
    world.run(cases.allreduce_16bit, 4, "interp")


def test_two_groups_at_once(world):
    world.run(cases.two_groups, "interp")


def test_wait_never_signalled_is_a_deadlock_error(world):
    results = world.run(cases.never_signalled, 2, "interp")
    for pe, (message, seconds) in enumerate(results[:2]):
        assert f"PE {pe} of group" in message and "kernels.py:" in message and "waited 1.5 s" in message
        assert seconds < 10


def test_shmem_tensor_created_in_a_loop_is_fresh_each_iteration(world):
    world.run(cases.looped_allreduce, 4, "interp")


def test_sim_reports_a_get_not_ordered_after_the_remote_put(world):
    messages = world.run(cases.unordered_get, 2, "sim")[:2]
    for pe, message in enumerate(messages):
        assert message is not None, f"PE {pe}: no race reported"
        assert f"PE {pe} reads" in message and f"PE {1 - pe} wrote with shmem_put at" in message
        assert message.count("kernels.py:") == 2  # the get's line and the put's line


def test_an_unknown_transport_is_refused(monkeypatch):
    from pypto_pro.comm import heap

    monkeypatch.setenv("PYPTO_SHMEM_TRANSPORT", "tcp")
    with pytest.raises(ValueError, match="'auto', 'shm', 'mpi'"):
        heap.transport()


def test_a_rank_that_dies_fails_the_others(world):
    """Last: it breaks the shared world (a later test would start a new one)."""
    start = time.monotonic()
    with pytest.raises(AssertionError) as info:
        world.run(cases.dies_after_attach, "interp", timeout=60)
    text = str(info.value)
    assert "rank 2: KernelDeadlockError" in text and "PE 1 (pid" in text and "has exited" in text
    assert "rank 3: process exited (code 7)" in text
    assert time.monotonic() - start < 30
