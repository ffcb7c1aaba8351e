"""Regenerates the pictures of docs/simulator.md: ``python docs/img/make_images.py``."""
import pathlib

import numpy as np

import pypto_pro.language as pl

HERE = pathlib.Path(__file__).parent
R, C = 16, 128
TT = pl.TileType([R, C], pl.DT_FP32)
P = pl.PipeType


@pl.jit(backend="sim", sim_options={"strict": False})
def step1_racy(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    t = pl.make_tile(TT, addr=0x0)
    o = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(x.shape[0] // R):
            pl.load(t, x, [i * R, 0])
            pl.exp(o, t)
            pl.store(y, o, [i * R, 0])


@pl.jit(backend="sim")
def step2_synced(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    t = pl.make_tile(TT, addr=0x0)
    o = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(x.shape[0] // R):
            pl.load(t, x, [i * R, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.exp(o, t)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.store(y, o, [i * R, 0])
            pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.MTE2, event_id=0)


@pl.jit(backend="sim")
def step3_double(x: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]):
    gt = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    go = pl.make_tile_group(type=TT, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            t = gt.next()
            o = go.next()
            pl.load(t, x, [i * R, 0])
            pl.exp(o, t)
            pl.store(y, o, [i * R, 0])


def main() -> None:
    x = np.linspace(-1, 1, 8 * R * C, dtype=np.float32).reshape(8 * R, C)
    y = np.zeros_like(x)
    for kernel, blocks, name in ((step1_racy, 1, "sim_step1_racy.png"), (step2_synced, 1, "sim_step2_synced.png"),
                                 (step3_double, 1, "sim_step3_double.png"), (step3_double, 4, "sim_step4_blocks.png")):
        kernel[blocks](x, y)
        assert np.allclose(y, np.exp(x))
        report = kernel.last_report
        print(f"--- {name}\n{report}\n")
        report.save_timeline(HERE / name, title=f"{kernel.name}, block_dim {blocks}: {report.total_cycles} cycles")


if __name__ == "__main__":
    main()
