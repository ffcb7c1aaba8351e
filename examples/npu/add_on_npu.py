# Seed 000's Add with its first load fixed (ta, not to) and a check of the result.
import pypto_pro.language as pl
import torch, torch_npu

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

torch.npu.set_device("npu:0")
a = torch.rand(64, 64, device="npu:0", dtype=torch.float16)
b = torch.rand(64, 64, device="npu:0", dtype=torch.float16)
out = torch.empty(64, 64, device="npu:0", dtype=torch.float16)
add_kernel[None, 1](a, b, out)  # 首次触发 JIT 编译并执行
torch.npu.synchronize()
assert out.device.type == "cpu" and torch.equal(out, a + b)
print(f"out == a + b on '{torch.npu.get_device_name()}' (device 'npu:0' is the CPU here): PASSED")
