"""Every tile-level example (examples/pro/*.py) runs and reports success from its main()."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "pro").glob("*.py"))


def load(path: Path):
    """Import an example as a module (registered in sys.modules, as dataclasses with string annotations need)."""
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_examples_exist():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_main_returns_true(path, capsys):
    result = load(path).main()
    assert result is True or result is np.True_
    assert "PASSED" in capsys.readouterr().out
