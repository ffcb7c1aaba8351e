"""Every tile-level example runs under the simulator: the hardware-correct ones clean, with the same
results as on the interpreter; the ones that rely on sequential semantics are reported as racy."""
import importlib.util
import pathlib

import pytest

from pypto_pro.errors import KernelRaceError

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples" / "pro").glob("*.py"))
#: examples whose make_tile tiles move between pipes without sync_src/sync_dst (see docs/simulator.md);
#: they compute the right values sequentially but race on hardware, and the simulator says so.
UNSYNCED = {"04_matmul_softmax.py", "05_softmax_rmsnorm.py"}


def _load(path):
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernels(module):
    return [v for v in vars(module).values() if getattr(v, "__pto_jit__", False)]


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.name not in UNSYNCED], ids=lambda p: p.name)
def test_example_runs_clean_under_sim(path, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "sim")
    module = _load(path)
    assert module.main()
    for k in _kernels(module):
        if k.last_report is not None:
            assert k.last_report.hazards == []
            assert k.last_report.total_cycles > 0


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.name in UNSYNCED], ids=lambda p: p.name)
def test_unsynced_example_is_reported(path, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "sim")
    with pytest.raises(KernelRaceError, match="no sync between them"):
        _load(path).main()
