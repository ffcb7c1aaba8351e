"""Simulator options: ``@pl.jit(backend="sim", sim_options={...})`` or the environment.

``strict`` (default True; ``PYPTO_SIM_STRICT=0`` turns it off): raise on the first hazard, else
collect every hazard into ``kernel.last_report.hazards`` and keep going.  Options given on the
kernel win over the environment.

``fast`` (default None, "when it pays"; ``PYPTO_SIM_FAST=1`` / ``0`` forces it on / off): run the kernels it
covers on the compiled fast path (same report, same values; any hazard is reported by the interpreter
engine).  By default a kernel takes the fast path once its launches are big enough to repay compiling
its trace program (see fast/__init__.py, ``worth_compiling``); small launches stay on the engine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class SimOptions:
    """How the simulator runs a launch."""

    strict: bool = True
    #: run covered kernels on the compiled fast path (backends/sim/fast): True always, False never (the
    #: interpreter engine), None when the launch is big enough to repay the compile
    fast: Optional[bool] = None


def resolve_options(given: Optional[Mapping[str, Any]] = None) -> SimOptions:
    """Environment defaults overridden by the ``sim_options`` mapping of the kernel."""
    env = os.environ.get("PYPTO_SIM_STRICT")
    values = {"strict": env.strip().lower() not in ("0", "false", "no", "off")} if env else {}
    if given:
        known = {f.name for f in fields(SimOptions)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown sim_options {unknown}; known: {sorted(known)}")
        values.update(given)
    return SimOptions(**values)
