"""Cube/vector fusion: out = softmax(A @ B) along rows, one mix block (1 AIC + 2 AIV).

The cube core computes S = A @ B in 64-column blocks and stores them (fp32) to a GM workspace,
then signals the vector cores with ``set_cross_core`` on its FIX pipe.  Every buffer is a depth-1
tile group with a mutex id, so ``auto_mutex`` orders the pipes that share it (MTE2 -> MTE1 -> M -> FIX
on the cube, MTE2 -> V -> MTE3 on the vector cores).  Each AIV waits, takes half
of the rows and computes a numerically stable row softmax: row max (``maximum`` with dim=0 into a
DN [R,1] tile), ``expand_sub``, ``exp``, row ``sum``, ``expand_div``.
"""
import numpy as np

import pypto_pro.language as pl

M, K, N = 64, 128, 256
BN = 64
HALF = M // 2


def tile(shape, dtype, space, addr, mutex_id, layout=None):
    """One buffer under auto_mutex: a depth-1 tile group with its own mutex id (inlined into the kernel)."""
    tt = pl.TileType(shape, dtype, space, layout=layout)
    return pl.make_tile_group(type=tt, addrs=addr, mutex_ids=[mutex_id]).current()


@pl.jit(auto_mutex=True)
def matmul_softmax(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                   work: pl.Tensor[[M, N], pl.DT_FP32], out: pl.Tensor[[M, N], pl.DT_FP32]):
    a_l1 = tile([M, K], pl.DT_FP16, pl.MemorySpace.Mat, 0x0, 0)
    b_l1 = tile([K, BN], pl.DT_FP16, pl.MemorySpace.Mat, 0x10000, 1)
    a_l0 = tile([M, K], pl.DT_FP16, pl.MemorySpace.Left, 0x0, 2)
    b_l0 = tile([K, BN], pl.DT_FP16, pl.MemorySpace.Right, 0x0, 3)
    s_acc = tile([M, BN], pl.DT_FP32, pl.MemorySpace.Acc, 0x0, 4)
    with pl.section_cube():
        pl.load(a_l1, a, [0, 0])
        pl.move(a_l0, a_l1)
        for j in pl.range(N // BN):
            pl.load(b_l1, b, [0, j * BN])
            pl.move(b_l0, b_l1)
            pl.matmul(s_acc, a_l0, b_l0)
            pl.store(work, s_acc, [0, j * BN])
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)

    s = tile([HALF, N], pl.DT_FP32, pl.MemorySpace.Vec, 0x0, 5)
    tmp = tile([HALF, N], pl.DT_FP32, pl.MemorySpace.Vec, 0x8000, 6)
    row = tile([HALF, 1], pl.DT_FP32, pl.MemorySpace.Vec, 0x10000, 7, layout=pl.DN)
    with pl.section_vector():
        r0 = pl.get_subblock_idx() * HALF
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
        pl.load(s, work, [r0, 0])
        pl.maximum(row, s, tmp, dim=0)
        pl.expand_sub(s, s, row, dim=0)
        pl.exp(s, s)
        pl.sum(row, s, tmp, dim=0)
        pl.expand_div(s, s, row, dim=0)
        pl.store(out, s, [r0, 0])


def main() -> bool:
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((M, K)) * 0.2).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.2).astype(np.float16)
    work = np.zeros((M, N), np.float32)
    out = np.zeros((M, N), np.float32)
    matmul_softmax[None, 1](a, b, work, out)
    s = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.exp(s - s.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    err = np.abs(out - ref).max()
    ok = err < 1e-5
    print(f"softmax(A @ B) {M}x{K}x{N}, cube -> GM -> cross-core event -> 2 AIVs: max |err| = {err:.2g} -> "
          f"{'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
