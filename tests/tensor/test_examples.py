"""Every tensor-level example checks itself; run each on the test backend (interp by default)."""
import pathlib
import runpy

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples" / "tensor").glob("[0-9]*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_passes(path):
    assert runpy.run_path(str(path), run_name="example")["main"]()
