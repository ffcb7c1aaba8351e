"""The project's logger (``logging.getLogger("pypto")``), configured by ``$PYPTO_LOG``.

``PYPTO_LOG`` takes a level name (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``) or number; when it is
set, messages at that level and above go to standard error.  INFO reports what the JIT does: kernels
parsed per specialization, C++ builds and disk-cache hits with their timings.  Unset: nothing is
printed (the logger stays at the application's configuration).
"""
from __future__ import annotations

import logging
import os

logger = logging.getLogger("pypto")


def _configure() -> None:
    level = os.environ.get("PYPTO_LOG", "").strip()
    if not level:
        return
    value = int(level) if level.isdigit() else logging.getLevelName(level.upper())
    if not isinstance(value, int):
        raise ValueError(f"PYPTO_LOG={level!r}: expected DEBUG, INFO, WARNING, ERROR or a number")
    logger.setLevel(value)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[pypto %(levelname)s] %(message)s"))
        logger.addHandler(handler)


_configure()
