"""Row softmax (fp32) and RMSNorm (fp16 in/out, fp32 math) over a DYNAMIC number of rows.

Each core takes blocks of 16 rows round-robin; the last block is a tail whose valid rows are set
with ``pl.set_validshape`` before the load.  Row statistics live in DN [16, 1] tiles and are
broadcast back with ``expand_*`` ops.  Each buffer is a depth-1 tile group with a mutex id, so
``auto_mutex`` (on by default) orders MTE2 -> V -> MTE3 on it, across loop iterations too.
"""
import numpy as np

import pypto_pro.language as pl

R, C = 16, 256
EPS = 1e-6


def vec_tile(shape, dtype, addr, mutex_id, **kw):
    """A Vec buffer under auto_mutex: a depth-1 tile group with its own mutex id (inlined)."""
    tt = pl.TileType(shape, dtype, pl.MemorySpace.Vec, **kw)
    return pl.make_tile_group(type=tt, addrs=addr, mutex_ids=[mutex_id]).current()


@pl.jit
def softmax_rows(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    rows = x.shape[0]
    t = vec_tile([R, C], pl.DT_FP32, 0x0, 0, valid_shape=[-1, C])
    tmp = vec_tile([R, C], pl.DT_FP32, 0x4000, 1)
    stat = vec_tile([R, 1], pl.DT_FP32, 0x8000, 2, layout=pl.DN)
    with pl.section_vector():
        for blk in pl.range(pl.get_block_idx(), (rows + R - 1) // R, pl.get_block_num()):
            valid = pl.min(rows - blk * R, R)
            pl.set_validshape(t, [valid, C])
            pl.load(t, x, [blk * R, 0])
            pl.maximum(stat, t, tmp, dim=0)
            pl.expand_sub(t, t, stat, dim=0)
            pl.exp(t, t)
            pl.sum(stat, t, tmp, dim=0)
            pl.expand_div(t, t, stat, dim=0)
            pl.store(y, t, [blk * R, 0])


@pl.jit
def rmsnorm_rows(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP16], gamma: pl.Tensor[[1, C], pl.DT_FP16],
                 y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP16]):
    rows = x.shape[0]
    xh = vec_tile([R, C], pl.DT_FP16, 0x0, 0, valid_shape=[-1, C])
    xf = vec_tile([R, C], pl.DT_FP32, 0x2000, 1, valid_shape=[-1, C])
    sq = vec_tile([R, C], pl.DT_FP32, 0x6000, 2, valid_shape=[-1, C])
    gh = vec_tile([1, C], pl.DT_FP16, 0xA000, 3)
    gf = vec_tile([1, C], pl.DT_FP32, 0xA200, 4)
    ms = vec_tile([R, 1], pl.DT_FP32, 0xA800, 5, layout=pl.DN)
    with pl.section_vector():
        pl.load(gh, gamma, [0, 0])
        pl.cast(gf, gh)
        for blk in pl.range(pl.get_block_idx(), (rows + R - 1) // R, pl.get_block_num()):
            valid = pl.min(rows - blk * R, R)
            pl.set_validshape(xh, [valid, C])
            pl.set_validshape(xf, [valid, C])
            pl.set_validshape(sq, [valid, C])
            pl.set_validshape(ms, [valid, 1])
            pl.load(xh, x, [blk * R, 0])
            pl.cast(xf, xh)
            pl.mul(sq, xf, xf)
            pl.sum(ms, sq, sq, dim=0)
            pl.mul(ms, ms, 1.0 / C)
            pl.add(ms, ms, EPS)
            pl.sqrt(ms, ms)
            pl.expand_div(xf, xf, ms, dim=0)
            pl.expand_mul(xf, xf, gf, dim=1)
            pl.cast(xh, xf, mode=pl.RoundMode.CAST_RINT)
            pl.store(y, xh, [blk * R, 0])


def main() -> bool:
    rng = np.random.default_rng(2)
    ok = True
    for rows in (37, 64):
        x = rng.standard_normal((rows, C), dtype=np.float32)
        y = np.zeros_like(x)
        softmax_rows[None, 3](x, y)
        ref = np.exp(x - x.max(1, keepdims=True))
        ref /= ref.sum(1, keepdims=True)
        err = np.abs(y - ref).max()
        good = err < 1e-6
        ok &= good
        print(f"row softmax {rows}x{C} fp32 (DYNAMIC rows, tail block) on 3 cores: max |err| = {err:.2g} -> "
              f"{'PASSED' if good else 'FAILED'}")

        xh = rng.standard_normal((rows, C)).astype(np.float16)
        g = rng.uniform(0.5, 1.5, (1, C)).astype(np.float16)
        yh = np.zeros_like(xh)
        rmsnorm_rows[None, 3](xh, g, yh)
        xf = xh.astype(np.float64)
        ref = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + EPS) * g.astype(np.float64)
        err = np.abs(yh.astype(np.float64) - ref).max()
        good = err < 2e-2  # fp16 output: half an ulp at |y| < 8 is <= 2^-8
        ok &= good
        print(f"rmsnorm {rows}x{C} fp16 (fp32 math): max |err| = {err:.2g} -> {'PASSED' if good else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
