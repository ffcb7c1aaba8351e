"""What each rank runs in the distributed tests (module-level functions: spawned processes import them)."""
from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist


def _subgroup(rank, k, backend):
    os.environ["PYPTO_BACKEND"] = backend
    g = dist.new_group(list(range(k)))
    return g if rank < k else None


def allgather_matmul(rank, n, k, backend):
    from shmem_kernels import allgather_matmul as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    torch.manual_seed(100 + rank)
    x = torch.randn(8, 32)
    w = torch.randn(32, 48)
    dist.broadcast(w, 0, group=g)
    out = torch.zeros(8 * k, 48)
    kernel(x, w, out, g.group_name, k)
    parts = [torch.zeros_like(x) for _ in range(k)]
    dist.all_gather(parts, x, group=g)
    torch.testing.assert_close(out, torch.cat(parts) @ w, rtol=1e-5, atol=1e-4)
    return float(out.abs().sum())


def matmul_allreduce_add_rmsnorm(rank, n, k, backend):
    from shmem_kernels import matmul_allreduce_add_rmsnorm as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    torch.manual_seed(200 + rank)
    x, w = torch.randn(16, 32), torch.randn(32, 64)
    residual, gamma = torch.randn(16, 64), torch.rand(64) + 0.5
    dist.broadcast(residual, 0, group=g)
    dist.broadcast(gamma, 0, group=g)
    out = torch.zeros(16, 64)
    for _ in range(2):  # twice: the shmem buffer and barrier counters are reused
        kernel(x, w, residual, gamma, out, g.group_name, k)
        total = x @ w
        dist.all_reduce(total, group=g)
        h = total + residual
        ref = h / torch.sqrt((h * h).mean(-1, keepdim=True) + 1e-6) * gamma
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
    return True


COUNTS = {2: ((3, 0), (5, 2)), 4: ((2, 0, 5, 1), (0, 0, 3, 0), (4, 1, 0, 2), (1, 6, 0, 3))}


def moe_dispatch_combine(rank, n, k, backend):
    from shmem_kernels import moe_dispatch_combine as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    counts = COUNTS[k]
    torch.manual_seed(300 + rank)
    total = sum(counts[rank])
    x = torch.randn(max(total, 1), 32)[:total].contiguous()
    w = torch.randn(32, 32)
    out = torch.zeros(total, 32)
    kernel(x if total else torch.zeros(1, 32), w, out if total else torch.zeros(1, 32), g.group_name, counts, rank)
    # reference: every rank's tokens and expert through torch.distributed
    rows = max(sum(r) for r in counts)
    padded = torch.zeros(rows, 32)
    padded[:total] = x
    xs = [torch.zeros(rows, 32) for _ in range(k)]
    ws = [torch.zeros(32, 32) for _ in range(k)]
    dist.all_gather(xs, padded, group=g)
    dist.all_gather(ws, w, group=g)
    ref, start = [], 0
    for d in range(k):
        ref.append(xs[rank][start:start + counts[rank][d]] @ ws[d])
        start += counts[rank][d]
    torch.testing.assert_close(out, torch.cat(ref), rtol=1e-5, atol=1e-4)
    return total


def two_groups(rank, n, backend):
    from shmem_kernels import cascaded_allreduce as kernel

    os.environ["PYPTO_BACKEND"] = backend
    halves = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    parity = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    a, b = halves[rank // 2], parity[rank % 2]
    torch.manual_seed(400 + rank)
    x = torch.randn(8, 32)
    out = torch.zeros(8, 32)
    kernel(x, out, a.group_name, 2, b.group_name, 2)
    ref = x.clone()
    dist.all_reduce(ref)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    return True


def never_signalled(rank, n, k, backend):
    from shmem_kernels import wait_forever

    import pypto

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    os.environ["PYPTO_SHMEM_TIMEOUT"] = "1.5"
    start = time.monotonic()
    try:
        wait_forever(torch.zeros(8, 32), g.group_name, k)
    except pypto.KernelDeadlockError as e:
        return str(e), time.monotonic() - start
    finally:
        os.environ["PYPTO_SHMEM_TIMEOUT"] = "20"
    raise AssertionError("a wait that is never signalled returned")


def dies_after_attach(rank, n, backend):
    """PEs 0 and 1 of the subgroup of ranks 2 and 3: PE 1 exits after the heap is mapped, PE 0 then waits."""
    from shmem_kernels import barrier_only, wait_forever

    os.environ["PYPTO_BACKEND"] = backend
    pair = dist.new_group([2, 3])
    if rank < 2:
        return None
    barrier_only(torch.zeros(8, 32), pair.group_name, 2)  # both PEs map the heap
    if rank == 3:
        os._exit(7)
    wait_forever(torch.zeros(8, 32), pair.group_name, 2)


def looped_allreduce(rank, n, k, backend):
    from shmem_kernels import looped_allreduce as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    for rows in (21, 13, 13):  # 3 and 2 iterations, launched again: every generation starts at zero
        torch.manual_seed(500 + rank + rows)
        x = torch.randn(rows, 32)
        out = torch.zeros(rows, 32)
        kernel(x, out, g.group_name, k)
        ref = x.clone()
        dist.all_reduce(ref, group=g)
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    return True


def unordered_get(rank, n, k, backend):
    """On sim, a get that nothing orders after the remote put is a race naming both lines; a barrier
    between them orders it (the host-side dist.barrier between launches is outside the kernels' model)."""
    from shmem_kernels import race_probe

    import pypto

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    x = torch.full((8, 32), float(rank + 1))
    out = torch.zeros(8, 32)
    race_probe(x, out, g.group_name, k, 0, False)
    dist.barrier(group=g)
    try:
        race_probe(x, out, g.group_name, k, 1, False)
        message = None
    except pypto.KernelRaceError as e:
        message = str(e)
    dist.barrier(group=g)
    race_probe(x, out, g.group_name, k, 0, False)
    race_probe(x, out, g.group_name, k, 1, True)
    assert torch.equal(out, torch.full((8, 32), float((rank - 1) % k + 1)))
    return message


def on_transport(rank, n, transport, case, *args):
    """``case(rank, n, *args)`` with ``$PYPTO_SHMEM_TRANSPORT=transport`` (read when a group's heap is set
    up: the cases make fresh groups), and the transport each of its groups got."""
    from pypto_pro.comm import heap

    before = set(heap._segments)
    old = os.environ.get("PYPTO_SHMEM_TRANSPORT")
    os.environ["PYPTO_SHMEM_TRANSPORT"] = transport
    try:
        result = globals()[case](rank, n, *args)
    finally:
        if old is None:
            del os.environ["PYPTO_SHMEM_TRANSPORT"]
        else:
            os.environ["PYPTO_SHMEM_TRANSPORT"] = old
    used = sorted({seg.transport for name, seg in heap._segments.items() if name not in before})
    return result, used


def as_separate_hosts(rank, n, transport, case, *args):
    """``case`` with every process reporting a hostname of its own (as if each rank ran on its own
    machine), under ``$PYPTO_SHMEM_TRANSPORT=transport``; the error text when setting up fails."""
    import pypto
    from pypto_pro.comm import segment

    real = segment.socket.gethostname
    segment.socket.gethostname = lambda: f"node{rank}"
    try:
        return on_transport(rank, n, transport, case, *args)
    except pypto.KernelError as e:
        return str(e), None
    finally:
        segment.socket.gethostname = real


def allreduce_16bit(rank, n, k, backend):
    """BF16/FP16 sums by atomic ADD puts; exact where every partial sum is representable (small
    integers), so the order in which the PEs' adds land does not matter."""
    from shmem_kernels import allreduce_16bit as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    torch.manual_seed(600 + rank)
    x = torch.randint(-8, 9, (8, 32)).to(torch.bfloat16)
    y = torch.randint(-8, 9, (8, 32)).to(torch.float16)
    out_x, out_y = torch.zeros_like(x), torch.zeros_like(y)
    kernel(x, y, out_x, out_y, g.group_name, k)
    ref_x, ref_y = x.float(), y.float()
    dist.all_reduce(ref_x, group=g)
    dist.all_reduce(ref_y, group=g)
    assert torch.equal(out_x.float(), ref_x) and torch.equal(out_y.float(), ref_y)
    return out_x.float().sum().item() + out_y.float().sum().item()


def one_sided_while_target_is_busy(rank, n, k, backend):
    """PE 0 adds into PE 1 while PE 1 is busy outside communication (3 s): a one-sided transfer
    completes without the target's help; the seconds PE 0's launch took."""
    from shmem_kernels import add_into_next as kernel

    g = _subgroup(rank, k, backend)
    if g is None:
        return None
    x = torch.ones(8, 32)
    kernel(x, g.group_name, k)  # the heap is set up (collectively)
    dist.barrier(group=g)
    if rank == 1:
        time.sleep(3)
        return None
    start = time.monotonic()
    kernel(x, g.group_name, k)
    return time.monotonic() - start
