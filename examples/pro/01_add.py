"""The seed's Add kernel (64x64 fp16), restored: load a and b, add, store.

The seed text loads ``a`` into the output slot and adds a never-written tile; the interpreter's
NaN-filled on-chip memory makes that visible, so this version loads into ``ta``.
"""
import numpy as np
import torch

import pypto_pro.language as pl


@pl.jit(auto_mutex=True)
def add_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    b: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tb = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    to = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        pl.load(ta.current(), a, [0, 0])
        pl.load(tb.current(), b, [0, 0])
        pl.add(to.current(), ta.current(), tb.current())
        pl.store(out, to.current(), [0, 0])


def main() -> bool:
    torch.manual_seed(0)
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16)
    add_kernel[None, 1](a, b, out)  # first call compiles, later calls reuse
    ok = torch.equal(out, a + b)
    print(f"add 64x64 fp16: max |err| = {(out.float() - (a + b).float()).abs().max().item():.3g} -> "
          f"{'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
