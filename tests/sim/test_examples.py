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



SIM_EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples" / "sim").glob("[0-9]*.py"))


@pytest.mark.parametrize("path", SIM_EXAMPLES, ids=lambda p: p.name)
def test_simulator_demo(path, monkeypatch, tmp_path, capsys):
    """The demo stops the racy kernel at its two lines and writes the fixed kernel's timeline (named in
    the output) into PYPTO_EXAMPLES_OUT."""
    monkeypatch.setenv("PYPTO_EXAMPLES_OUT", str(tmp_path))
    assert _load(path).main()
    out = capsys.readouterr().out
    assert "race caught at lines" in out and "sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V" in out
    assert "torch on this CPU" in out and "hazards: none" in out
    pytest.importorskip("matplotlib")
    png = tmp_path / "gelu_pipelined_timeline.png"
    assert str(png) in out and png.read_bytes()[:4] == b"\x89PNG"
