"""``pytest -p pypto_pro.npu.plugin``: run NPU test suites on the CPU.

Activates the ``torch_npu`` stand-in (:mod:`pypto_pro.npu`) before any test module is imported, and
registers the markers the official suites use (``soc``, ``world_size``, ``duration_estimate``,
``skip_if_no_npu``...) so that they are known under ``--strict-markers`` too.
"""
from __future__ import annotations

from .__main__ import export_shim_path
from . import install

MARKERS = (
    "soc(*versions): the SoC versions a test is written for ('910', '950'); the stand-in models the "
    "arch of $PYPTOPRO_JIT_ARCH (default a5 = 950)",
    "world_size(n): the number of devices (ranks) a test needs",
    "duration_estimate(seconds): expected run time of a test (ordering hint)",
    "skip_if_no_npu: a test that needs an NPU (runs on the CPU stand-in)",
    "npu: a test written for the NPU",
)


# Active from the moment pytest loads the plugin: conftest files and test modules import after this.
export_shim_path()
install()


def pytest_configure(config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)


def pytest_runtest_teardown(item, nextitem) -> None:
    """A test that failed inside ``capture_begin() ... capture_end()`` leaves its capture open: close it,
    so the tests after it run their torch calls instead of having them refused as captured."""
    import pytest

    from .graphs import end_open_capture

    if end_open_capture():
        item.warn(pytest.PytestWarning("this test left a torch.npu graph capture open (capture_begin without "
                                       "capture_end); the stand-in closed it after the test"))
