"""HelloWorld: every vector core prints a line with ``pl.printf`` and writes 1 into a GM tensor."""
import torch

import pypto_pro.language as pl


@pl.jit
def hello_world(out: pl.Tensor[[1], pl.DT_INT32]):
    with pl.section_vector():
        pl.printf("Hello World from core %d of %d\n", pl.get_block_idx(), pl.get_block_num())
        pl.setval(out, 0, 1)


def main() -> bool:
    out = torch.zeros(1, dtype=torch.int32)
    hello_world[None, 2](out)
    ok = out.item() == 1
    print(f"hello world: out[0] = {out.item()} -> {'PASSED' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
