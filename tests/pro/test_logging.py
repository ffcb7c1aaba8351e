"""PYPTO_LOG / the "pypto" logger report what the JIT does."""
import logging
import subprocess
import sys

import numpy as np

import pypto_pro.language as pl


def test_info_log_reports_the_parse(caplog):
    @pl.jit
    def scale(x: pl.Tensor[[8, 64], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.mul(t, t, 2.0)
            pl.store(x, t, [0, 0])

    x = np.ones((8, 64), np.float32)
    with caplog.at_level(logging.INFO, logger="pypto"):
        scale(x)
    assert np.all(x == 2)
    assert any("parsed kernel scale for arch a5" in r.getMessage() for r in caplog.records)


def test_invalid_level_is_refused():
    r = subprocess.run([sys.executable, "-c", "import pypto_pro.log"], capture_output=True, text=True,
                       env={"PYPTO_LOG": "chatty", "PATH": ""})
    assert r.returncode != 0 and "PYPTO_LOG='chatty'" in r.stderr
