"""The cross-host transport (MPI one-sided communication, pypto_pro/comm/mpi.py) forced on this machine.

The same kernels and cases as test_collectives.py, with ``$PYPTO_SHMEM_TRANSPORT=mpi``: results
equal the torch.distributed reference (checked in each case) and the shared-memory transport's;
a group whose processes report different hostnames gets the MPI transport by itself.  Skipped,
saying why, where mpi4py or its MPI library is missing (``make venv`` installs both).
"""
from __future__ import annotations

import subprocess
import sys

import pytest


def _missing() -> str:
    """Why MPI cannot be used here ('' when it can); checked in a child process, so that this one does
    not initialise MPI."""
    probe = ("import sys\nfrom pypto_pro.comm import mpi\n"
             "try:\n    mpi._mpi().Get_library_version()\nexcept Exception as e:\n    sys.exit(str(e))")
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "loading mpi4py took more than 120 s"
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["?"])[-1]


_MISSING = _missing()
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"the MPI transport is unavailable: {_MISSING}")


def _run(world, transport, case, *args):
    results = world.run(__import__("shmem_cases").on_transport, transport, case, *args)
    k = args[0]
    for rank, (_, used) in enumerate(results[:k]):
        assert used and set(used) == {transport}, f"rank {rank} used {used}"
    return [value for value, _ in results[:k]]


@pytest.mark.parametrize("k", [2, 4])
def test_allgather_matmul_over_mpi_equals_shm(world, k):
    assert _run(world, "mpi", "allgather_matmul", k, "interp") == _run(world, "shm", "allgather_matmul", k, "interp")


def test_16bit_atomic_adds_over_mpi_equal_shm(world):
    """BF16/FP16 ADD puts: MPI cannot add them, so they go get-add-put under the target PE's mutex."""
    assert _run(world, "mpi", "allreduce_16bit", 4, "interp") == _run(world, "shm", "allreduce_16bit", 4, "interp")


def test_a_busy_target_does_not_stall_one_sided_transfers(world):
    """MPICH adds at a target by messages the target must handle: the transport's progress thread
    does, while the target's main thread is elsewhere."""
    seconds = _run(world, "mpi", "one_sided_while_target_is_busy", 2, "interp")[0]
    assert seconds < 2.0


def test_allgather_matmul_over_mpi_on_cpu(world):
    _run(world, "mpi", "allgather_matmul", 2, "cpu")


@pytest.mark.parametrize("k", [2, 4])
def test_matmul_allreduce_add_rmsnorm_over_mpi(world, k):
    _run(world, "mpi", "matmul_allreduce_add_rmsnorm", k, "interp")


def test_moe_dispatch_combine_and_looped_tensors_over_mpi(world):
    _run(world, "mpi", "moe_dispatch_combine", 4, "interp")
    _run(world, "mpi", "looped_allreduce", 4, "interp")


def test_sim_order_check_over_mpi(world):
    """The simulator's ordering metadata lives in the window too: the unordered get is still a race."""
    for pe, message in enumerate(_run(world, "mpi", "unordered_get", 2, "sim")):
        assert message is not None and f"PE {pe} reads" in message and "kernels.py:" in message


def test_wait_never_signalled_over_mpi_is_a_deadlock_error(world):
    for pe, (message, seconds) in enumerate(_run(world, "mpi", "never_signalled", 2, "interp")):
        assert f"PE {pe} of group" in message and "kernels.py:" in message and "waited 1.5 s" in message
        assert seconds < 10


def test_a_group_spanning_hosts_gets_the_mpi_transport(world):
    import shmem_cases

    results = world.run(shmem_cases.as_separate_hosts, "auto", "allgather_matmul", 4, "interp")
    assert [used for _, used in results] == [["mpi"]] * 4
    refused = world.run(shmem_cases.as_separate_hosts, "shm", "allgather_matmul", 2, "interp")[:2]
    for message, _ in refused:
        assert "spans hosts ['node0', 'node1']" in message and "shared-memory transport" in message


def test_a_rank_that_dies_fails_the_others_over_mpi(world):
    """Last (it breaks the shared world): the waiting PE sees its peer's process gone, as on shm."""
    import time

    import shmem_cases

    start = time.monotonic()
    with pytest.raises(AssertionError) as info:
        world.run(shmem_cases.on_transport, "mpi", "dies_after_attach", "interp", timeout=60)
    text = str(info.value)
    assert "rank 2: KernelDeadlockError" in text and "PE 1 (pid" in text and "has exited" in text
    assert "rank 3: process exited (code 7)" in text
    assert time.monotonic() - start < 30
