"""Every tile-level example runs clean under the simulator, with the results it checks itself."""
import pathlib

import pytest

from pro.test_examples import load as _load  # tests/ is on sys.path (rootdir-relative packages)

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples" / "pro").glob("*.py"))


def _kernels(module):
    return [v for v in vars(module).values() if getattr(v, "__pto_jit__", False)]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_clean_under_sim(path, monkeypatch):
    monkeypatch.setenv("PYPTO_BACKEND", "sim")
    module = _load(path)
    assert module.main()
    for k in _kernels(module):
        if k.last_report is not None:
            assert k.last_report.hazards == []
            assert k.last_report.total_cycles > 0

