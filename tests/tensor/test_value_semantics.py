"""Computed tensors are values: a later write into a buffer they were computed from does not change
them, writing into a computed tensor updates that tensor (from where it was made), and a
``pypto.loop`` that Python never enters is not checked for what its body cannot mean."""
import pytest
import torch

import pypto
from pypto_pro.errors import KernelSyntaxError

F32 = pypto.DT_FP32


@pypto.frontend.jit
def read_then_overwrite(a: pypto.Tensor([8, 32], F32), res: pypto.Tensor([8, 32], F32)):
    pypto.set_vec_tile_shapes(8, 32)
    for _ in range(3):  # a Python loop: unrolled while recording
        before = a * 2.0
        a[:] = a + 1.0
    res[:] = before  # 2 * (a + 1 + 1): the value of `a` when `before` was computed, not after the last write


@pytest.mark.both_backends
def test_a_value_keeps_what_its_buffer_held_when_it_was_computed():
    a = torch.randn(8, 32)
    a0 = a.clone()
    res = torch.empty(8, 32)
    read_then_overwrite(a, res)
    assert torch.equal(res, (a0 + 1.0 + 1.0) * 2.0)
    assert torch.equal(a, a0 + 1.0 + 1.0 + 1.0)


@pypto.frontend.jit
def value_before_loop(a: pypto.Tensor([8, 32], F32), res: pypto.Tensor([8, 32], F32)):
    pypto.set_vec_tile_shapes(8, 32)
    keep = a - 1.0
    for _ in pypto.loop(3):
        a[:] = a * 2.0
    res[:] = keep  # taken before the runtime loop, not re-read inside it


@pytest.mark.both_backends
def test_a_value_made_before_a_runtime_loop_is_taken_there():
    a = torch.randn(8, 32)
    a0 = a.clone()
    res = torch.empty(8, 32)
    value_before_loop(a, res)
    assert torch.equal(res, a0 - 1.0)
    assert torch.equal(a, a0 * 8.0)


@pypto.frontend.jit
def fill_blocks_of_a_computed_tensor(out: pypto.Tensor([16, 8], F32)):
    pypto.set_vec_tile_shapes(4, 8)
    for b in pypto.loop(2):
        block = pypto.full([8, 8], -1.0, F32)  # a computed tensor ...
        for s in pypto.loop(2):
            block[s * 4:(s + 1) * 4, :] = pypto.full([4, 8], 1.0, F32) * (s + 2.0)  # ... written in place
        out[b * 8:(b + 1) * 8, :] = block


@pytest.mark.both_backends
def test_writes_into_a_computed_tensor_keep_its_other_elements():
    out = torch.zeros(16, 8)
    fill_blocks_of_a_computed_tensor(out)
    want = torch.cat([torch.full((4, 8), 2.0), torch.full((4, 8), 3.0)] * 2)
    assert torch.equal(out, want)


@pypto.frontend.jit
def update_a_sum(t1: pypto.Tensor([16, 32], F32), t2: pypto.Tensor([16, 32], F32), out: pypto.Tensor([16, 32], F32)):
    pypto.set_vec_tile_shapes(16, 32)
    acc = t1 + t1
    acc[:] = acc + 1.0
    for _ in pypto.loop(2):
        acc[:] = acc * t2
    out[:] = acc


@pytest.mark.both_backends
def test_a_computed_tensor_accumulates_in_a_runtime_loop():
    t1, t2 = torch.full((16, 32), 20.0), torch.full((16, 32), 3.0)
    out = torch.empty(16, 32)
    update_a_sum(t1, t2, out)
    assert torch.equal(out, torch.full((16, 32), 41.0 * 9.0))


LIMIT = 8


@pypto.frontend.jit
def carried_name_in_a_dead_branch(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32)):
    pypto.set_vec_tile_shapes(8, 32)
    k = 0
    if k < LIMIT:
        for _ in pypto.loop(2):
            y[:] = y + x
    else:
        for _ in pypto.loop(2):
            x = x + y  # would be rejected: Python never records this loop


@pypto.frontend.jit
def carried_name_in_a_live_loop(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32)):
    pypto.set_vec_tile_shapes(8, 32)
    for _ in pypto.loop(2):
        x = x + y
    y[:] = x


def test_loop_body_checks_apply_to_loops_that_are_recorded():
    x, y = torch.ones(8, 32), torch.zeros(8, 32)
    carried_name_in_a_dead_branch(x, y)
    assert torch.equal(y, torch.full((8, 32), 2.0))
    with pytest.raises(KernelSyntaxError, match="`x` is carried from one pypto.loop iteration"):
        carried_name_in_a_live_loop(x, y)
