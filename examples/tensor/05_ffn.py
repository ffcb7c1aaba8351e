"""FFN blocks: ReLU, GELU and SwiGLU (FP16 weights, FP32 accumulation)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402

T, D, F = 32, 64, 128


@pypto.frontend.jit
def ffn(x: pypto.Tensor(), w1: pypto.Tensor(), w3: pypto.Tensor(), w2: pypto.Tensor(), relu_out: pypto.Tensor(),
        gelu_out: pypto.Tensor(), swiglu_out: pypto.Tensor()):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
    pypto.set_vec_tile_shapes(32, 128)
    h = pypto.matmul(x, w1, pypto.DT_FP32)
    relu_out[:] = pypto.matmul(pypto.cast(pypto.relu(h), pypto.DT_FP16), w2, pypto.DT_FP32)
    gelu_out[:] = pypto.matmul(pypto.cast(pypto.gelu(h), pypto.DT_FP16), w2, pypto.DT_FP32)
    g = pypto.swiglu(h, pypto.matmul(x, w3, pypto.DT_FP32))
    swiglu_out[:] = pypto.matmul(pypto.cast(g, pypto.DT_FP16), w2, pypto.DT_FP32)


def main() -> bool:
    torch.manual_seed(0)
    x = (torch.randn(T, D) * 0.5).half()
    w1, w3 = (torch.randn(D, F) * 0.1).half(), (torch.randn(D, F) * 0.1).half()
    w2 = (torch.randn(F, D) * 0.1).half()
    outs = [torch.empty(T, D) for _ in range(3)]
    ffn(x, w1, w3, w2, *outs)
    h = x.float() @ w1.float()
    act = {"relu": torch.relu(h), "gelu": torch.nn.functional.gelu(h),
           "swiglu": torch.nn.functional.silu(h) * (x.float() @ w3.float())}
    ok = True
    for (name, a), got in zip(act.items(), outs):
        ok &= check(f"FFN {name}", got, a.half().float() @ w2.float(), 2e-3)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
