"""Tile matmul quick start: C[M,N] (fp32) = A[M,K] @ B[K,N] (fp16), K accumulated in L0C.

GM -> Mat (L1) with ``load``, Mat -> Left/Right (L0A/L0B) with ``move``, ``matmul`` for the first K
block and ``matmul_acc`` for the rest, then ``store`` from Acc (L0C) through the fixpipe.  Output
tiles are spread over cores with ``pl.range(core, tiles, cores)``.
"""
import numpy as np

import pypto_pro.language as pl

M, K, N = 256, 256, 256
TM, TK, TN = 128, 64, 128


@pl.jit
def matmul_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                  c: pl.Tensor[[M, N], pl.DT_FP32]):
    mat_a = pl.make_tile_group(type=pl.TileType([TM, TK], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x0,
                               mutex_ids=[0, 1])
    mat_b = pl.make_tile_group(type=pl.TileType([TK, TN], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x8000,
                               mutex_ids=[2, 3])
    left = pl.make_tile_group(type=pl.TileType([TM, TK], pl.DT_FP16, pl.MemorySpace.Left), addrs=0x0,
                              mutex_ids=[4, 5])
    right = pl.make_tile_group(type=pl.TileType([TK, TN], pl.DT_FP16, pl.MemorySpace.Right), addrs=0x0,
                               mutex_ids=[6, 7])
    acc = pl.make_tile_group(type=pl.TileType([TM, TN], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0x0,
                             mutex_ids=[8, 9])
    n_tiles = N // TN
    with pl.section_cube():
        for t in pl.range(pl.get_block_idx(), (M // TM) * n_tiles, pl.get_block_num()):
            i = t // n_tiles
            j = t % n_tiles
            c_tile = acc.next()
            for kk in pl.range(K // TK):
                a_l1 = mat_a.next()
                b_l1 = mat_b.next()
                pl.load(a_l1, a, [i * TM, kk * TK])
                pl.load(b_l1, b, [kk * TK, j * TN])
                a_l0 = left.next()
                b_l0 = right.next()
                pl.move(a_l0, a_l1)
                pl.move(b_l0, b_l1)
                if kk == 0:
                    pl.matmul(c_tile, a_l0, b_l0)
                else:
                    pl.matmul_acc(c_tile, c_tile, a_l0, b_l0)
            pl.store(c, c_tile, [i * TM, j * TN])


def main() -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[None, 4](a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max()
    ok = err < 1e-3
    print(f"matmul {M}x{K}x{N} fp16 -> fp32 on 4 cores: max |err| vs fp64 = {err:.2g} -> "
          f"{'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
