"""The seed's multi-jit example: add_kernel_true / add_kernel_false sharing the helper add_core."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402


def add_core(input0: pypto.Tensor, input1: pypto.Tensor, output: pypto.Tensor, val: int, add1_flag: bool = False):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    if add1_flag:
        t3 = input0 + input1
        output[:] = t3 + val
    else:
        output[:] = input0 + input1


@pypto.frontend.jit
def add_kernel_true(
    input0: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    input1: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    output: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    val: int
):
    add_core(input0, input1, output, val, True)


@pypto.frontend.jit
def add_kernel_false(
    input0: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    input1: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    output: pypto.Tensor([pypto.DYNAMIC, 4, 1, 64], pypto.DT_FP32),
    val: int
):
    add_core(input0, input1, output, val, False)


def add_add1flag_false(input_data0, input_data1, val=0):
    output_data = torch.empty_like(input_data0)
    add_kernel_false(input_data0, input_data1, output_data, val)
    return output_data


def add_add1flag_true(input_data0, input_data1, val=0):
    output_data = torch.empty_like(input_data0)
    add_kernel_true(input_data0, input_data1, output_data, val)
    return output_data


def main() -> bool:
    ok = True
    for batch in (1, 3):
        input_data0, input_data1 = torch.randn(batch, 4, 1, 64), torch.randn(batch, 4, 1, 64)
        val = 1
        ok &= check(f"add_kernel_false batch={batch}", add_add1flag_false(input_data0, input_data1, val),
                    input_data0 + input_data1, 0)
        ok &= check(f"add_kernel_true batch={batch}", add_add1flag_true(input_data0, input_data1, val),
                    input_data0 + input_data1 + val, 0)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
