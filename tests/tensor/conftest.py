"""Tensor-level tests run on the reference interpreter (the meaning of every tile program); tests
marked ``both_backends`` run on the default compiled ``cpu`` backend as well.
``PYPTO_TENSOR_TEST_BACKEND=cpu`` runs every test on the cpu backend instead."""
import os

import pytest

import pypto
from pypto_pro.backends import cpu

_MAIN = os.environ.get("PYPTO_TENSOR_TEST_BACKEND", "interp")


def pytest_configure(config):
    config.addinivalue_line("markers", "both_backends: also run this test on the compiled cpu backend")


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("both_backends") and _MAIN != "cpu":
        metafunc.fixturenames.append("pypto_backend")
        metafunc.parametrize("pypto_backend", [_MAIN, "cpu"])


@pytest.fixture(autouse=True)
def _reset_options(request, monkeypatch, tmp_path_factory):
    callspec = getattr(request.node, "callspec", None)
    backend = callspec.params.get("pypto_backend", _MAIN) if callspec else _MAIN
    if backend == "cpu" and not cpu.available():
        pytest.skip("no C++ compiler for the cpu backend")
    monkeypatch.setenv("PYPTO_BACKEND", backend)
    # RunMode.SIM launches write their swimlane under $PYPTO_OUTPUT_DIR (frontend/sim_output.py): not the checkout
    monkeypatch.setenv("PYPTO_OUTPUT_DIR", str(tmp_path_factory.getbasetemp() / "output"))
    pypto.reset_options()
    yield
    pypto.reset_options()
