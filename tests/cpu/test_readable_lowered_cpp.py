"""The C++ generated for a lowered tensor-level kernel reads like code written by hand: a tail's
valid extent is computed once per iteration, no doubled casts, no site markers for ops that emit
nothing, and the ops of a value materialised for a later statement carry the line that wrote it."""
import inspect
import re

import torch

import pypto
from pypto_pro.backends.cpu.codegen import generate

D = pypto.DYNAMIC


@pypto.frontend.jit(backend="interp")
def softmax_rows(x: pypto.Tensor([D, 64], pypto.DT_FP32), y: pypto.Tensor([D, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = pypto.softmax(x, -1)


@pypto.frontend.jit(backend="interp")
def two_matmuls(x: pypto.Tensor([64, 64], pypto.DT_FP16), w1: pypto.Tensor([64, 64], pypto.DT_FP16),
                w2: pypto.Tensor([64, 64], pypto.DT_FP16), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
    pypto.set_vec_tile_shapes(32, 64)
    h = pypto.matmul(x, w1, pypto.DT_FP32)  # LINE-H
    a = pypto.cast(pypto.exp(h * 0.01), pypto.DT_FP16)  # LINE-A
    out[:] = pypto.matmul(a, w2, pypto.DT_FP32)  # LINE-OUT


def _cpp(kernel, *args) -> str:
    return generate(kernel.compiled(*args).program.kernel).source


def _line(tag: str) -> int:
    lines, start = inspect.getsourcelines(two_matmuls.__wrapped__)
    return start + next(i for i, line in enumerate(lines) if tag in line)


def test_the_valid_extent_of_a_tail_is_computed_once_per_iteration():
    x = torch.randn(40, 64)
    cpp = _cpp(softmax_rows, x, torch.empty_like(x))
    # the tail's row count min(16, rows - 16 r) appears once, in an assignment; every op uses the variable
    assert len(re.findall(r"pto::smin\(INT64_C\(16\)", cpp)) == 1
    assert re.search(r"v_vr\d+ = \(int64_t\)pto::smin\(INT64_C\(16\)", cpp)
    assert len(re.findall(r"v_vr\d+\b", cpp)) >= 8


def test_no_doubled_casts_and_no_site_markers_for_empty_ops():
    x = torch.randn(40, 64)
    for cpp in (_cpp(softmax_rows, x, torch.empty_like(x)),
                _cpp(two_matmuls, *(torch.randn(64, 64).half() for _ in range(3)), torch.empty(64, 64))):
        assert "(int64_t)(int64_t)" not in cpp
        lines = [line.strip() for line in cpp.splitlines()]
        for i, line in enumerate(lines[:-1]):
            if re.match(r"C\.site = \d+;  // line", line):
                assert not lines[i + 1].startswith("/*"), (line, lines[i + 1])  # the marker of an empty op
        assert "line ?" not in cpp


def test_ops_of_a_materialised_value_carry_the_line_that_wrote_it():
    cpp = _cpp(two_matmuls, *(torch.randn(64, 64).half() for _ in range(3)), torch.empty(64, 64))
    marked = collections_of(cpp)
    assert {"matmul", "load"} <= marked[_line("LINE-H")]
    assert {"exp", "cast"} <= marked[_line("LINE-A")]
    assert "exp" not in marked[_line("LINE-OUT")] and "matmul" in marked[_line("LINE-OUT")]


def collections_of(cpp: str):
    """line number -> names of the pto calls between a ``// line N:`` site marker and the next marker."""
    out = {}
    line_no = None
    for line in cpp.splitlines():
        m = re.search(r"C\.site = \d+;", line)
        if m:
            found = re.search(r"// line (\d+):", line)
            line_no = int(found.group(1)) if found else None
            continue
        if line_no is not None:
            out.setdefault(line_no, set()).update(re.findall(r"pto::(\w+)[<(]", line))
    return out
