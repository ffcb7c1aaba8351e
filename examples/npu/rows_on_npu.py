"""An NPU-style program of our own: the host side talks to torch_npu exactly as scripts written for
Ascend do, and runs unchanged on the CPU under ``python -m pypto_pro.npu``.

Each of 4 cores scales and shifts its 16-row band of x (y = 2 x - 1) in one pass.
"""
import torch
import torch_npu  # noqa: F401  (the NPU layer: the CPU stand-in here)

import pypto_pro.language as pl

ROWS, COLS, BAND = 64, 128, 16


@pl.jit(auto_mutex=True)  # the framework orders load -> compute -> store through the group's mutex
def affine_rows(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    band_type = pl.TileType(shape=[BAND, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    band = pl.make_tile_group(type=band_type, addrs=0x0, mutex_ids=[0]).current()
    with pl.section_vector():
        first_row = pl.get_block_idx() * BAND
        pl.load(band, x, [first_row, 0])
        pl.mul(band, band, 2.0)
        pl.sub(band, band, 1.0)
        pl.store(y, band, [first_row, 0])


device = "npu:0"
torch.npu.set_device(device)
x = torch.randn(ROWS, COLS, device=device)
y = torch.empty_like(x).npu()
stream = torch.npu.current_stream()
affine_rows[stream, ROWS // BAND](x, y)
torch.npu.synchronize()
assert torch.equal(y.cpu(), x.cpu() * 2.0 - 1.0)
print(f"y == 2x - 1 on {torch.npu.get_device_name()} (soc {torch_npu.npu.get_soc_version()}); "
      f"'{device}' is the CPU here: PASSED")
