"""A Python counter a pypto.loop body only prints (its value never reaches the recorded program) may be
carried from one iteration to the next; a carried value that feeds an op, an index or a condition is
still a KernelSyntaxError (frontend/trace_only.py, docs/tensor.md "Loops")."""
import ast
import textwrap

import pytest
import torch

import pypto
from pypto.frontend.trace_only import trace_only_names
from pypto_pro.errors import KernelSyntaxError


def printed_counter_body(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    seen = 0
    for i in pypto.loop(2):
        print(f"recording block {i}, seen {seen}")
        seen = seen + 1
        part = pypto.view(x, [8, 32], [i * 8, 0])
        pypto.assemble(part * 3.0, [i * 8, 0], y)
    print("blocks recorded:", seen)


printed_counter = pypto.frontend.jit(printed_counter_body)


@pypto.frontend.jit
def counter_feeds_an_op(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    k = 1.0
    for i in pypto.loop(2):
        print(k)
        part = pypto.view(x, [8, 32], [i * 8, 0])
        pypto.assemble(part * k, [i * 8, 0], y)
        k = k + 1.0


@pytest.mark.both_backends
def test_a_printed_counter_may_be_carried():
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    printed_counter(x, y)
    torch.testing.assert_close(y, x * 3.0)


def test_the_counter_counts_recordings(capsys):
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    pypto.frontend.jit(printed_counter_body)(x, y)  # a fresh kernel: compiled (and so printed) here
    assert "blocks recorded: 1" in capsys.readouterr().out  # the body was recorded once


def test_a_carried_value_that_reaches_an_op_is_still_rejected():
    with pytest.raises(KernelSyntaxError, match="`k` is carried from one pypto.loop iteration"):
        counter_feeds_an_op(torch.randn(16, 32), torch.zeros(16, 32))


@pytest.mark.parametrize("body, expected", [
    ("n = 0\nprint(n)\nn = n + 1\nn += 2", {"n"}),
    ("n = 0\nn = n + a\nprint(n)", {"n"}),           # `a` feeds n, which is printed only ...
    ("n = 0\nout = x * n", {"x"} - {"x"}),           # ... but an operand is a use
    ("n = 0\nif n:\n    pass", set()),
    ("n = 0\nm = n\nprint(m)", {"m"}),               # n flows into m: a use of n
    ("n = 0\ndef f():\n    return n\nprint(n)", set()),
])
def test_trace_only_names(body, expected):
    tree = ast.parse("def k(x, a):\n" + textwrap.indent(body, "    "))
    assert trace_only_names(tree) & {"n", "m", "x"} == expected


@pypto.frontend.jit
def split_k_sum(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    col = pypto.arange(16)
    for _ in pypto.loop(1):
        col = pypto.reshape(col, [1, 16], inplace=True)  # one trip: nothing to carry
    for i in pypto.loop(2):
        col = pypto.reshape(col, [1, 16])  # a reshape of itself gives the same whichever iteration
        for k in range(4):  # a Python loop carries its own accumulator
            part = pypto.view(x, [8, 16], [0, k * 16])
            if k == 0:
                acc = part
            else:
                acc = acc + part
        y[:] = acc + col


@pytest.mark.both_backends
def test_carries_that_recording_once_gets_right():
    x, y = torch.randn(8, 64), torch.empty(8, 16)
    split_k_sum(x, y)
    torch.testing.assert_close(y, x.reshape(8, 4, 16).sum(1) + torch.arange(16.0))
