"""``pl.pipeline``: the automatic preload pipeline of a serial cube/vector kernel.

A kernel written as a serial loop whose body alternates ``pl.section_cube()`` and
``pl.section_vector()`` blocks (the work of each block usually a ``@pl.pipeline.stage`` helper)
and launched with ``@pl.jit(pipeline=pl.pipeline.PipelineConfig(...))`` means that serial program:
every section sees the results of every section before it, on whichever core type it ran.
Officially the compiler keeps that meaning while it overlaps the stages (``preload`` iterations of
the first stage run ahead; ``sync_only=True`` only adds the cross-core synchronisation).  Here the
meaning is kept by :func:`pypto_pro.passes.pipeline_sync.insert_pipeline_sync`, which hands control
between the core types in program order; how far stages run ahead is NPU scheduling, recorded and
otherwise without effect (results cannot depend on it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..log import logger

#: the attribute ``@pl.pipeline.stage`` sets on a function
STAGE_ATTR = "pipeline_stage"


@dataclass(frozen=True)
class PipelineConfig:
    """``preload``: how many times the first stage runs ahead before the stages alternate (NPU
    scheduling); ``sync_only``: keep the serial loop and only add cross-core synchronisation."""

    preload: int = 2
    sync_only: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.preload, bool) or not isinstance(self.preload, int) or self.preload < 0:
            raise ValueError(f"PipelineConfig.preload must be a non-negative int, got {self.preload!r}")
        if not isinstance(self.sync_only, bool):
            raise ValueError(f"PipelineConfig.sync_only must be a bool, got {self.sync_only!r}")


def stage(fn: Callable) -> Callable:
    """Mark ``fn`` as a pipeline stage.  The function is unchanged: inside a kernel it is inlined like
    any helper; the mark names the unit the NPU pipeline schedules."""
    setattr(fn, STAGE_ATTR, True)
    return fn


def is_stage(fn) -> bool:
    """Whether ``fn`` was marked by :func:`stage`."""
    return callable(fn) and bool(getattr(fn, STAGE_ATTR, False))


_logged = set()


def check_pipeline_config(config: Optional[PipelineConfig]) -> None:
    """Reject a ``pipeline=`` that is not a PipelineConfig; log once what the CPU backends make of it."""
    if config is None:
        return
    if not isinstance(config, PipelineConfig):
        raise TypeError(f"@pl.jit(pipeline=...) takes a pl.pipeline.PipelineConfig, got {type(config).__name__}")
    if config not in _logged:
        _logged.add(config)
        logger.info("pipeline=%s: sections keep their serial order across cube and vector cores; preload and "
                    "sync_only steer NPU scheduling only and change no result here", config)
