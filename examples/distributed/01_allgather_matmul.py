"""All-gather fused with a matmul, one process per PE (docs/distributed.md).

Several machines or one, the same command:

    torchrun --nproc-per-node 2 examples/distributed/01_allgather_matmul.py
    torchrun --nnodes 2 --node-rank R --nproc-per-node 4 --rdzv-endpoint HOST:29500 ...   (several hosts:
        the group is torch.distributed's; the shared-memory transport needs one host, see the docs)

Without torchrun (``make demo``), ``main()`` starts 2 processes itself.  Every PE puts its rows
into every PE's copy of a symmetric buffer and signals them; each PE waits for all rows, reads them
and multiplies by the weight.  The result is checked against torch.distributed's all_gather.
"""
from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

import pypto

D = pypto.distributed
ROWS, K, N = 16, 64, 96


@pypto.frontend.jit
def allgather_matmul(x: pypto.Tensor([ROWS, K], pypto.DT_FP32), w: pypto.Tensor([K, N], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32), group, n):
    pypto.set_vec_tile_shapes(ROWS, K)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [96, 96])
    gathered_rows = D.create_shmem_tensor(group, n, pypto.DT_FP32, [ROWS * n, K])
    me = D.my_symbolic_pe(group)
    for pe in range(n):  # my rows go to row block `me` of every PE's buffer
        sent = D.shmem_put(x, [me * ROWS, 0], gathered_rows, pe)
        D.shmem_signal(gathered_rows, pe, 1, [ROWS, K], [me * ROWS, 0], target_pe=pe,
                       sig_op=pypto.AtomicType.ADD, pred=[sent])
    local = pypto.tensor([ROWS * n, K], pypto.DT_FP32, "local")
    for src in range(n):  # wait for each block, then read it
        arrived = D.shmem_wait_until(gathered_rows, me, 1, [ROWS, K], [src * ROWS, 0], clear_signal=True)
        local[src * ROWS:(src + 1) * ROWS, :] = D.shmem_get(gathered_rows, me, [ROWS, K], [src * ROWS, 0],
                                                            pred=[arrived])
    out[:] = pypto.matmul(local, w, pypto.DT_FP32)


def rank_main() -> bool:
    """One PE: the process group comes from torch.distributed (torchrun's environment)."""
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    x = torch.randn(ROWS, K)
    w = torch.randn(K, N)
    dist.broadcast(w, 0)
    out = torch.zeros(ROWS * n, N)
    allgather_matmul(x, w, out, dist.group.WORLD.group_name, n)
    parts = [torch.zeros_like(x) for _ in range(n)]
    dist.all_gather(parts, x)
    ok = torch.allclose(out, torch.cat(parts) @ w, rtol=1e-5, atol=1e-4)
    print(f"rank {rank}/{n}: all_gather(x) @ w {'matches' if ok else 'DIFFERS FROM'} torch.distributed")
    return ok


def main(n: int = 2) -> bool:
    """Start ``n`` ranks on this machine with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR,
    MASTER_PORT) and check that every one succeeds."""
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env))
    return all(p.wait(timeout=300) == 0 for p in procs)


if __name__ == "__main__":
    if "RANK" in os.environ:  # under torchrun
        dist.init_process_group("gloo")
        ok = rank_main()
        dist.barrier()  # every rank is done with the group before any tears it down
        dist.destroy_process_group()
    else:
        ok = main()
    sys.exit(0 if ok else 1)
