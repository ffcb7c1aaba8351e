"""``graph_text()`` prints the recorded DAG with named values (linear in its size), and
``PYPTO_LOG`` reports each tensor-level compile stage with its time."""
import logging
import re

import pytest
import torch

import pypto


def _nested(depth: int):
    @pypto.frontend.jit
    def nested(x: pypto.Tensor([16, 64], pypto.DT_FP32), y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        h = x
        for _ in range(depth):
            h = pypto.sigmoid(h) * h + h  # h is used three times per level
        y[:] = h

    return nested


def test_graph_text_defines_each_value_once_and_grows_linearly():
    x, y = torch.randn(16, 64), torch.empty(16, 64)
    texts = {d: _nested(d).graph_text(x, y) for d in (1, 2, 6)}
    for text in texts.values():
        defined = re.findall(r"^\s+(v\d+) = ", text, re.M)
        assert len(defined) == len(set(defined))  # every value printed once
        for name in defined:  # ... before it is used
            assert text.index(f"{name} = ") < min((m.start() for m in re.finditer(rf"\b{name}\b(?! =)", text)),
                                                  default=len(text))
        assert text.count("x@") <= 3
    per_level = len(texts[2]) - len(texts[1])
    assert abs((len(texts[6]) - len(texts[2])) - 4 * per_level) < 4 * 20  # a constant cost per level
    assert re.search(r"y@\[0, 0\]\[16, 64\] = v\d+  # line \d+", texts[6])


def test_info_logs_recording_and_lowering_debug_adds_the_programs(caplog, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "interp")
    x, y = torch.randn(16, 64), torch.empty(16, 64)
    with caplog.at_level(logging.INFO, logger="pypto"):
        _nested(1)(x, y)
    info = "\n".join(r.getMessage() for r in caplog.records)
    assert re.search(r"recorded tensor kernel nested: 1 statements, \d+ graph nodes, 0 workspace tensors \(\d", info)
    assert re.search(r"lowered tensor kernel nested to a vector tile kernel: \d+ tile ops, \d+ tiles \(\d", info)
    assert "tensor graph of" not in info
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="pypto"):
        _nested(1)(x, y)
    debug = "\n".join(r.getMessage() for r in caplog.records)
    assert "tensor graph of nested:" in debug and "lowered tile program of nested:" in debug


def test_info_logs_the_cpu_runtime_library(caplog, monkeypatch):
    from pypto_pro.backends.cpu import launcher
    from pypto_pro.backends.cpu.toolchain import find_toolchain

    tc = find_toolchain()
    if tc is None:
        pytest.skip("no C++ compiler for the cpu backend")
    launcher.runtime_library(tc)  # built (or found on disk) once
    monkeypatch.setattr(launcher, "_runtime", {})  # as in a new process: found in the disk cache
    with caplog.at_level(logging.INFO, logger="pypto"):
        launcher.runtime_library(tc)
    assert any(re.search(r"cache hit for the cpu runtime library .*\(\d+ ms", r.getMessage())
               for r in caplog.records)
