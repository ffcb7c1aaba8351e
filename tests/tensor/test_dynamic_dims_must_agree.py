"""Dims known only at run time (DYNAMIC) that meet in an element-wise op, or in an assignment, are taken
to be equal when the kernel is recorded; every launch checks that they are, for its sizes, and names
the op's line when they are not (before, the op silently ran over the shorter operand's extent)."""
import pytest
import torch

import pypto
from pypto_pro.errors import KernelRuntimeError

N = pypto.DYNAMIC


@pypto.frontend.jit
def add_two_dynamic(a: pypto.Tensor([N, 64], pypto.DT_FP32), b: pypto.Tensor([N, 64], pypto.DT_FP32),
                    c: pypto.Tensor([N, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    c[:] = a + b


@pypto.frontend.jit
def mul_dynamic_by_fixed(a: pypto.Tensor([N, 64], pypto.DT_FP32), b: pypto.Tensor([32, 64], pypto.DT_FP32),
                         c: pypto.Tensor([N, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    c[:] = a * b


def test_equal_dynamic_dims_run():
    a, b, c = torch.randn(48, 64), torch.randn(48, 64), torch.zeros(48, 64)
    add_two_dynamic(a, b, c)
    assert torch.equal(c, a + b)


def test_unequal_dynamic_operands_are_named_with_sizes_and_line():
    a, b, c = torch.randn(32, 64), torch.randn(48, 64), torch.zeros(32, 64)
    with pytest.raises(KernelRuntimeError, match=r"pypto\.add: axis 0 is 32 on one side and 48") as e:
        add_two_dynamic(a, b, c)
    assert "c[:] = a + b" in str(e.value)
    assert torch.count_nonzero(c) == 0  # nothing ran


def test_dynamic_meeting_a_fixed_dim_is_checked():
    b = torch.randn(32, 64)
    a, c = torch.randn(32, 64), torch.zeros(32, 64)
    mul_dynamic_by_fixed(a, b, c)
    assert torch.equal(c, a * b)
    with pytest.raises(KernelRuntimeError, match=r"pypto\.mul: axis 0 is 48 on one side and 32"):
        mul_dynamic_by_fixed(torch.randn(48, 64), b, torch.zeros(48, 64))


def test_assignment_into_a_longer_dynamic_target_is_checked():
    with pytest.raises(KernelRuntimeError, match=r"assignment: axis 0 is 48 on one side and 32"):
        mul_dynamic_by_fixed(torch.randn(32, 64), torch.randn(32, 64), torch.zeros(48, 64))


def test_the_check_holds_after_a_frozen_call():
    """A repeated call takes the frozen launch; a call with other sizes takes the checked path again."""
    a, b, c = torch.randn(16, 64), torch.randn(16, 64), torch.zeros(16, 64)
    for _ in range(3):
        add_two_dynamic(a, b, c)
    with pytest.raises(KernelRuntimeError, match="axis 0 is 16 on one side and 24"):
        add_two_dynamic(a, torch.randn(24, 64), c)
