"""One compiled kernel for inputs of any rank: raw pointers, TilingData arrays and a tiling key.

The inputs arrive as ``pl.Ptr`` (their bytes), their shape in a TilingData array ``shape: int[4]``
(leading dims padded with 1); the kernel folds them into a 2-D ``[M, N]`` view with
``pl.make_tensor`` and walks it in 64x128 tiles on several cores, tails included.  The element-wise
op is a tiling key: each op compiles once into its own kernel (the branch folds away), while every
shape runs on the same compiled kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pypto_pro.language as pl
from pypto_pro.runtime.tilingkey import TilingKeyField

TM, TN = 64, 128


@dataclass
class Shape4:
    shape: int[4]  # leading dims padded with 1


class OpKey:
    Op = TilingKeyField(bits=2, values=[0, 1, 2])  # add, sub, mul


@pl.jit(tiling_key=OpKey)
def eltwise_any_rank(x: pl.Ptr[pl.DT_FP16], y: pl.Ptr[pl.DT_FP16], z: pl.Ptr[pl.DT_FP16], td: Shape4):
    n = td.shape[3]
    m = td.shape[0] * td.shape[1] * td.shape[2]
    vx = pl.make_tensor(x, [m, n])
    vy = pl.make_tensor(y, [m, n])
    vz = pl.make_tensor(z, [m, n])
    tt = pl.TileType(shape=[TM, TN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    ga = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
    gb = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        col_tiles = (n + TN - 1) // TN
        for t in pl.range(pl.get_block_idx(), (m + TM - 1) // TM * col_tiles, pl.get_block_num()):
            i = t // col_tiles
            j = t % col_tiles
            a = ga.next()
            b = gb.next()
            pl.set_validshape(ga, [pl.min(m - i * TM, TM), pl.min(n - j * TN, TN)])
            pl.set_validshape(gb, [pl.min(m - i * TM, TM), pl.min(n - j * TN, TN)])
            pl.load(a, vx, [i * TM, j * TN])
            pl.load(b, vy, [i * TM, j * TN])
            if Op == 0:  # noqa: F821 - the tiling key's field, a compile-time constant
                pl.add(a, a, b)
            elif Op == 1:  # noqa: F821
                pl.sub(a, a, b)
            else:
                pl.mul(a, a, b)
            pl.store(vz, a, [i * TM, j * TN])


OPS = {0: ("add", np.add), 1: ("sub", np.subtract), 2: ("mul", np.multiply)}


def main() -> bool:
    rng = np.random.default_rng(0)
    ok = True
    for shape in ([200, 300], [2, 3, 130], [2, 2, 3, 257]):
        x = rng.random(shape, dtype=np.float32).astype(np.float16)
        y = rng.random(shape, dtype=np.float32).astype(np.float16)
        dims = [1] * (4 - len(shape)) + list(shape)
        for op, (name, fn) in OPS.items():
            z = np.full_like(x, np.nan)
            eltwise_any_rank[None, 4, {"Op": op}](x, y, z, Shape4(dims))
            want = fn(x.astype(np.float32), y.astype(np.float32)).astype(np.float16)
            good = np.array_equal(z, want)
            ok &= good
            print(f"{name} {shape} through pointer views, shape from TilingData, op from the tiling key: "
                  f"{'PASSED' if good else 'FAILED'}")
    print(f"compiled variants: {len(eltwise_any_rank._variants)} (one per op, shared by every shape)")
    return ok and len(eltwise_any_rank._variants) == len(OPS)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
