"""LayerNorm and RMSNorm (FP16 in/out, FP32 math), static and DYNAMIC batch."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402

H = 256


@pypto.frontend.jit
def norms(x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16), g: pypto.Tensor([H], pypto.DT_FP16),
          b: pypto.Tensor([H], pypto.DT_FP16), ln: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
          rms: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(32, H)
    ln[:] = pypto.layer_norm(x, g, b, 1e-5)
    rms[:] = pypto.rms_norm(x, g, 1e-6)


def main() -> bool:
    ok = True
    g, b = (torch.rand(H) + 0.5).half(), torch.randn(H).half()
    for rows in (8, 45):
        x = torch.randn(rows, H).half()
        ln, rms = torch.empty_like(x), torch.empty_like(x)
        norms(x, g, b, ln, rms)
        xf = x.float()
        ok &= check(f"layernorm {rows}x{H} fp16", ln,
                    torch.nn.functional.layer_norm(xf, (H,), g.float(), b.float(), 1e-5), 2e-2)
        ok &= check(f"rmsnorm {rows}x{H} fp16", rms, xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
                    * g.float(), 2e-2)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
