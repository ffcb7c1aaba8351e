"""Double-buffered add over a DYNAMIC [M, N] fp32 tensor on several cores, with tails.

Tiles are 32x64; the (M, N) = (100, 200) tensor leaves partial tiles on both edges, handled with
``pl.set_validshape`` before each load (tails are never clamped at tensor edges).  Tiles are
distributed round-robin over cores with ``pl.range(core, total, cores)`` and loaded into the next
slot of two-deep tile groups.
"""
import numpy as np

import pypto_pro.language as pl

TR, TC = 32, 64


@pl.jit
def add_tiles(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
              y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
              out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
    m = x.shape[0]
    n = x.shape[1]
    tt = pl.TileType(shape=[TR, TC], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    gx = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
    gy = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[4, 5])
    row_tiles = (m + TR - 1) // TR
    col_tiles = (n + TC - 1) // TC
    core = pl.get_block_idx()
    cores = pl.get_block_num()
    with pl.section_vector():
        for t in pl.range(core, row_tiles * col_tiles, cores):
            i = t // col_tiles
            j = t % col_tiles
            rows = pl.min(m - i * TR, TR)
            cols = pl.min(n - j * TC, TC)
            tx = gx.next()
            ty = gy.next()
            to = go.next()
            pl.set_validshape(gx, [rows, cols])
            pl.set_validshape(gy, [rows, cols])
            pl.set_validshape(go, [rows, cols])
            pl.load(tx, x, [i * TR, j * TC])
            pl.load(ty, y, [i * TR, j * TC])
            pl.add(to, tx, ty)
            pl.store(out, to, [i * TR, j * TC])


def main() -> bool:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 200), dtype=np.float32)
    y = rng.standard_normal((100, 200), dtype=np.float32)
    out = np.full_like(x, np.nan)
    add_tiles[None, 4](x, y, out)
    ok = np.array_equal(out, x + y)
    print(f"double-buffered add 100x200 fp32 on 4 cores (tails on both edges): "
          f"{'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
