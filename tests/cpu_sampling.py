"""Full dtype x op matrices on the interpreter, a covering cross-section of them on the cpu backend.

A parametrized test marked ``@pytest.mark.cpu_sample`` (a matrix such as op x dtype) runs every case on the
interpreter, the oracle, and on the cpu backend only a subset in which every value of every parameter
occurs at least once and every value meets every dtype family (float, int, uint) it is paired with in the
matrix: every op on cpu, every dtype on cpu, each op with a float and an integer dtype where it has both.  On cpu each case is a
C++ compile (~0.5-1 s of CPU), which is what makes the full matrices expensive there; the cpu backend's
agreement with the interpreter across dtypes, shapes and fused paths is also checked by the differential
and fuzz tests of tests/cpu.

``@pytest.mark.cpu_sample(pairs=True)`` is for matrices whose every case compares cpu with the interpreter
(tests/cpu: there is no separate interpreter run): the subset then holds every combination of values of
any two parameters (a pairwise covering array), so each factor meets each value of each other factor.

Which items run on cpu: those with a ``backend`` parameter equal to "cpu" (the every-backend modules), or,
without one, every item when the session's default backend is cpu (``$PYPTO_BACKEND`` unset or "cpu").
The subset is deterministic (the same on every run and every xdist worker).  ``PYPTO_FULL_MATRIX=1`` runs
the whole matrices on cpu as well.
"""
from __future__ import annotations

import os
from typing import Dict, List, Sequence, Tuple

MARK = "cpu_sample"


def _runs_on_cpu(item, session_cpu: bool) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "backend" in params:
        return params["backend"] == "cpu"
    return session_cpu and item.get_closest_marker("every_backend") is None


def _stable(value) -> str:
    """A parameter value as a string that is the same in every process (xdist workers must agree)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_stable(v) for v in value) + ")"
    for attr in ("name", "__name__"):
        if isinstance(getattr(value, attr, None), str):
            return f"{type(value).__name__}:{getattr(value, attr)}"
    return type(value).__name__


def _features(item, pairs: bool = False) -> Tuple[tuple, ...]:
    """What a case covers: its (parameter, value) pairs other than the backend, and for each dtype-valued
    parameter the pairs (other parameter's value, dtype family); with ``pairs``, every two of its values."""
    params = {k: v for k, v in item.callspec.params.items() if k != "backend"}
    values = sorted((k, _stable(v)) for k, v in params.items())
    if pairs:
        return tuple(values + [(a, b) for i, a in enumerate(values) for b in values[i + 1:]])
    families = [(k, f"{type(v).__name__}.kind:{v.kind}") for k, v in params.items()
                if isinstance(getattr(v, "kind", None), str)]
    mixed = sorted((value, family) for value in values for family in families if value[0] != family[0])
    return tuple(values + mixed)


def covering_subset(cases: Sequence[Tuple[tuple, ...]]) -> List[int]:
    """Indices of a small subset of ``cases`` that together have every feature any case has.

    Greedy: repeatedly take the first case that covers the most features not covered yet (deterministic)."""
    uncovered = {pair for case in cases for pair in case}
    chosen: List[int] = []
    while uncovered:
        best, gain = -1, 0
        for i, case in enumerate(cases):
            g = sum(1 for pair in case if pair in uncovered)
            if g > gain:
                best, gain = i, g
        chosen.append(best)
        uncovered.difference_update(cases[best])
    return sorted(chosen)


def deselect_cpu_cross_section(config, items) -> None:
    """Drop the cpu items of ``cpu_sample`` matrices that the covering subset does not need."""
    if os.environ.get("PYPTO_FULL_MATRIX", "") not in ("", "0"):
        return
    session_cpu = os.environ.get("PYPTO_BACKEND", "cpu") == "cpu"
    groups: Dict[Tuple[str, str], List] = {}
    for item in items:
        if item.get_closest_marker(MARK) is None or not hasattr(item, "callspec"):
            continue
        if _runs_on_cpu(item, session_cpu) or item.get_closest_marker(MARK).kwargs.get("pairs"):
            groups.setdefault((str(item.fspath), item.originalname), []).append(item)
    drop = set()
    for members in groups.values():
        pairs = bool(members[0].get_closest_marker(MARK).kwargs.get("pairs"))
        keep = set(covering_subset([_features(m, pairs) for m in members]))
        drop.update(id(m) for i, m in enumerate(members) if i not in keep)
    if not drop:
        return
    deselected = [item for item in items if id(item) in drop]
    items[:] = [item for item in items if id(item) not in drop]
    config.hook.pytest_deselected(items=deselected)
