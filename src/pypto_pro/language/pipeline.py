"""``pl.pipeline``: ``@pl.pipeline.stage`` and ``pl.pipeline.PipelineConfig`` (see runtime/pipeline.py)."""
from ..runtime.pipeline import PipelineConfig, is_stage, stage  # noqa: F401

__all__ = ["PipelineConfig", "stage", "is_stage"]
