"""``pypto.AtomicType``: how a one-sided transfer or a signal combines with what is there."""
from __future__ import annotations

from enum import IntEnum


class AtomicType(IntEnum):
    """``SET`` overwrites, ``ADD`` adds (atomically with respect to the other PEs)."""

    SET = 0
    ADD = 1
