"""pypto.distributed on this machine: all-gather + matmul vs torch.distributed, and the transport's GB/s.

For world sizes 2 and 4 (processes of this machine, gloo), rank 0 reports:

* all-gather + matmul: one pypto kernel (shmem put + signal/wait + get, then the matmul) against
  ``torch.distributed.all_gather`` + ``torch.matmul``;
* the transport: a kernel that puts a large block into the next PE's copy and fences with a barrier,
  as GB/s, against a plain ``numpy.copyto`` of the same bytes into a shared-memory (/dev/shm) mapping.

Both pypto rows run twice: on the shared-memory transport (the default on one host) and on the
cross-host transport forced on this machine (``PYPTO_SHMEM_TRANSPORT=mpi``: MPI one-sided over the
mpich wheel; shown as "-" where mpi4py is not installed).

Medians over ``--repeat`` runs, with the spread (min..max).  The backend is the default one
(``PYPTO_BACKEND`` overrides; ``cpu`` runs the communication ops through its Python callback).
Usage: python benchmarks/bench_distributed.py [--repeat N] [--worlds 2,4]
"""
from __future__ import annotations

import argparse
import mmap
import os
import statistics
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import pypto

D = pypto.distributed
ROWS, K, N = 64, 256, 256
BLOCK = (2048, 1024)  # FP32: 8 MiB per put


@pypto.frontend.jit
def allgather_matmul(x: pypto.Tensor([ROWS, K], pypto.DT_FP32), w: pypto.Tensor([K, N], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32), group, n):
    pypto.set_vec_tile_shapes(ROWS, K)
    pypto.set_cube_tile_shapes([64, 64], [128, 128], [128, 128])
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [ROWS * n, K])
    me = D.my_symbolic_pe(group)
    for pe in range(n):
        sent = D.shmem_put(x, [me * ROWS, 0], buf, pe)
        D.shmem_signal(buf, pe, 1, [ROWS, K], [me * ROWS, 0], target_pe=pe, sig_op=pypto.AtomicType.ADD,
                       pred=[sent])
    local = pypto.tensor([ROWS * n, K], pypto.DT_FP32, "local")
    for src in range(n):
        ready = D.shmem_wait_until(buf, me, 1, [ROWS, K], [src * ROWS, 0], clear_signal=True)
        local[src * ROWS:(src + 1) * ROWS, :] = D.shmem_get(buf, me, [ROWS, K], [src * ROWS, 0], pred=[ready])
    out[:] = pypto.matmul(local, w, pypto.DT_FP32)


@pypto.frontend.jit
def put_block(x: pypto.Tensor(list(BLOCK), pypto.DT_FP32), group, n):
    pypto.set_vec_tile_shapes(64, 1024)
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, list(BLOCK))
    sync = D.create_shmem_signal(group, n)
    D.shmem_put(x, [0, 0], buf, (D.my_symbolic_pe(group) + 1) % n)
    D.shmem_barrier_all(sync)


def _stats(samples):
    ms = [s * 1e3 for s in samples]
    return statistics.median(ms), min(ms), max(ms)


def _timed(fn, repeat):
    fn()  # warm-up (compilation, heap allocation)
    out = []
    for _ in range(repeat):
        dist.barrier()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _shm_copy_times(src: np.ndarray, repeat: int):
    """Times of a plain copy of ``src`` into a /dev/shm mapping (the transport's floor)."""
    with tempfile.TemporaryFile(dir="/dev/shm") as f:
        f.truncate(src.nbytes)
        mm = mmap.mmap(f.fileno(), src.nbytes)
        dst = np.frombuffer(mm, src.dtype).reshape(src.shape)
        return _timed(lambda: np.copyto(dst, src), repeat)


def _mpi_group(n):
    """A group of all ranks on the MPI transport, or ``None`` where mpi4py/MPI is missing."""
    from pypto_pro.comm import mpi
    from pypto_pro.errors import KernelRuntimeError

    try:
        mpi._mpi()
        ok = 1
    except KernelRuntimeError:
        ok = 0
    flags = [None] * n
    dist.all_gather_object(flags, ok)
    if not all(flags):
        return None
    os.environ["PYPTO_SHMEM_TRANSPORT"] = "mpi"  # read when the group's heap is set up (first launch)
    return dist.new_group(list(range(n))).group_name


def _rank(rank, n, store, repeat, results):
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=n)
    torch.manual_seed(rank)
    x, w = torch.randn(ROWS, K), torch.randn(K, N)
    out = torch.zeros(ROWS * n, N)
    name = dist.group.WORLD.group_name
    block = torch.randn(*BLOCK)

    def ours(group=name):
        allgather_matmul(x, w, out, group, n)

    def theirs():
        parts = [torch.empty_like(x) for _ in range(n)]
        dist.all_gather(parts, x)
        return torch.cat(parts) @ w

    t_ours, t_torch = _timed(ours, repeat), _timed(theirs, repeat)
    assert torch.allclose(out, theirs(), rtol=1e-4, atol=1e-3)
    t_put = _timed(lambda: put_block(block, name, n), repeat)
    src = block.numpy()
    t_copy = _shm_copy_times(src, repeat)
    t_ours_mpi = t_put_mpi = None
    over_mpi = _mpi_group(n)
    if over_mpi is not None:
        out.zero_()
        t_ours_mpi = _timed(lambda: ours(over_mpi), repeat)
        assert torch.allclose(out, theirs(), rtol=1e-4, atol=1e-3)
        t_put_mpi = _timed(lambda: put_block(block, over_mpi, n), repeat)
    if rank == 0:
        results[n] = (t_ours, t_ours_mpi, t_torch, t_put, t_put_mpi, t_copy, src.nbytes)
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--worlds", default="2,4")
    args = ap.parse_args()
    results = mp.get_context("spawn").Manager().dict()
    for n in (int(w) for w in args.worlds.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            mp.start_processes(_rank, args=(n, os.path.join(tmp, "store"), args.repeat, results), nprocs=n,
                               start_method="spawn")
    backend = os.environ.get("PYPTO_BACKEND", "default")
    print(f"backend {backend}; all-gather of [{ROWS}, {K}] FP32 per rank, then @ [{K}, {N}]; "
          f"put of {BLOCK[0]}x{BLOCK[1]} FP32; median (min..max) over {args.repeat} runs, rank 0")
    print(f"{'world':>5} | {'pypto ag+mm ms (shm)':>22} | {'pypto ag+mm ms (mpi)':>22} | {'torch ag+mm ms':>22}")
    for n in sorted(results.keys()):
        t_ours, t_ours_mpi, t_torch = results[n][:3]
        print(f"{n:>5} | {_ms(t_ours)} | {_ms(t_ours_mpi)} | {_ms(t_torch)}")
    heads = ("put+barrier GB/s (shm)", "put+barrier GB/s (mpi)", "plain shm copy GB/s")
    print(f"{'world':>5} | " + " | ".join(f"{h:>22}" for h in heads))
    for n in sorted(results.keys()):
        t_put, t_put_mpi, t_copy, nbytes = results[n][3:]
        print(f"{n:>5} | {_gbs(t_put, nbytes)} | {_gbs(t_put_mpi, nbytes)} | {_gbs(t_copy, nbytes)}")


def _ms(samples) -> str:
    if samples is None:
        return f"{'-':>22}"
    m = _stats(samples)
    return f"{m[0]:8.3f} ({m[1]:.3f}..{m[2]:.3f})".rjust(22)


def _gbs(samples, nbytes: int) -> str:
    """Median GB/s (slowest..fastest run)."""
    if samples is None:
        return f"{'-':>22}"
    m = _stats(samples)
    rate = [nbytes / (v * 1e-3) / 1e9 for v in m]
    return f"{rate[0]:8.2f} ({rate[2]:.2f}..{rate[1]:.2f})".rjust(22)


if __name__ == "__main__":
    main()
