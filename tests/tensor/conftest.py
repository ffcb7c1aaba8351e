import pytest

import pypto


@pytest.fixture(autouse=True)
def _reset_options(monkeypatch):
    """Tests check the lowering against the reference interpreter (the meaning of every tile program)."""
    monkeypatch.setenv("PYPTO_BACKEND", "interp")
    pypto.reset_options()
    yield
    pypto.reset_options()
