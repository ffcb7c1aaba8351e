"""What ``import torch_npu`` gives under the CPU stand-in (see :mod:`pypto_pro.npu`).

``torch_npu.npu`` (also ``torch.npu``) answers device queries for one modelled device of the arch
the JIT compiles for (``$PYPTOPRO_JIT_ARCH``, default a5 = Ascend 950): kernels run synchronously
on the host, so streams and events are ordered trivially and ``synchronize`` returns at once.
Settings that only steer the device (core limits, internal formats) are recorded and have no effect.
On-board profiling, device dumps and the CANN ``torch_npu.npu_*`` / ``torch_npu._npu_*`` operators raise
:class:`~pypto_pro.npu.NpuOnlyFacilityError`, except three exactly defined conversions the stand-in
computes: ``npu_trans_quant_param``, a fixed bit-level format conversion (:mod:`pypto_pro.npu.quant_param`),
``npu_format_cast`` to ND or FRACTAL_NZ, a storage-format change that keeps the logical values
(:mod:`pypto_pro.npu.formats`, with ``get_npu_format`` and ``Format``), and ``npu_dtype_cast``, the
element-type conversion (HiFloat8 included, :mod:`pypto_pro.npu.dtype_cast`).
"""
from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Optional

import torch

from ..arch import resolve_arch
from pypto_pro.runtime import capture as _capture

from . import NpuOnlyFacilityError, graphs
from .formats import Format, get_npu_format, npu_format_cast  # noqa: F401  (torch_npu.*)
from .dtype_cast import npu_dtype_cast  # noqa: F401  (torch_npu.npu_dtype_cast)
from .quant_param import npu_trans_quant_param  # noqa: F401  (torch_npu.npu_trans_quant_param)
from ..log import logger

ARCH = resolve_arch(None)
"""The arch whose device the stand-in reports (and that kernels compile for by default)."""

#: ``torch_npu.npu.get_soc_version()`` per arch (the official test harness maps 260 to its "950" tag).
SOC_VERSION = {"a2": 223, "a3": 250, "a5": 260}

__version__ = "pypto-cpu-standin"
hifloat8 = torch.uint8
"""HiFloat8 has no torch dtype: tensors of HF8 codes are ``torch.uint8`` (what kernels take for DT_HF8)."""


def _npu_only(facility: str, hint: str = ""):
    def refuse(*_args: Any, **_kwargs: Any):
        raise NpuOnlyFacilityError(facility, hint)
    refuse.__name__ = facility.rsplit(".", 1)[-1]
    refuse.__doc__ = f"NPU-only: raises NpuOnlyFacilityError naming {facility}."
    return refuse


def __getattr__(name: str):
    """``torch_npu.npu_*`` / ``torch_npu._npu_*``: the CANN operators have no CPU implementation here."""
    if name.startswith(("npu_", "_npu_")):
        return _npu_only(f"torch_npu.{name}", "compute the reference with plain torch on the CPU")
    raise AttributeError(f"module 'torch_npu' (pypto CPU stand-in) has no attribute {name!r}")


# ---------------------------------------------------------------- torch_npu.npu / torch.npu
npu = types.ModuleType("torch_npu.npu", "The device namespace (``torch.npu``) of the CPU stand-in.")


class _DeviceState:
    current = 0
    initialized = False
    limits: dict = {}


def _ordinal(device: Any) -> int:
    if device is None:
        return _DeviceState.current
    if isinstance(device, int):
        return device
    if isinstance(device, torch.device):
        return device.index or 0
    text = str(device)
    return int(text.split(":", 1)[1]) if ":" in text else 0


def set_device(device: Any) -> None:
    """Select the (single modelled) device; any ordinal is accepted, all map to the CPU."""
    _DeviceState.current = _ordinal(device)
    _DeviceState.initialized = True


def current_device() -> int:
    return _DeviceState.current


def device_count() -> int:
    return 1


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return _DeviceState.initialized


def init() -> None:
    _DeviceState.initialized = True


def synchronize(device: Any = None) -> None:
    """Kernels finish before their launch returns: nothing is outstanding."""


def get_device_name(device: Any = None) -> str:
    return ARCH.soc_version


def get_soc_version() -> int:
    return SOC_VERSION[ARCH.name]


def get_device_properties(device: Any = None):
    return types.SimpleNamespace(name=ARCH.soc_version, total_memory=0, major=0, minor=0,
                                 multi_processor_count=ARCH.core_num)


def get_device_capability(device: Any = None):
    return None


def _zero(*_args: Any, **_kwargs: Any) -> int:
    return 0


def _nothing(*_args: Any, **_kwargs: Any) -> None:
    return None


class Stream:
    """A stream of the stand-in: launches are synchronous, so every stream is always idle."""

    def __init__(self, device: Any = None, priority: int = 0, **_: Any):
        self.device = torch.device("cpu")
        self.priority = priority

    def synchronize(self) -> None: ...

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: "Stream") -> None: ...

    def wait_event(self, event: "Event") -> None: ...

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        return event or Event()


class Event:
    """An event of the stand-in; ``elapsed_time`` is host wall time between two records."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self._time: Optional[float] = None

    def record(self, stream: Optional[Stream] = None) -> None:
        import time
        self._time = time.perf_counter()

    def synchronize(self) -> None: ...

    def wait(self, stream: Optional[Stream] = None) -> None: ...

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        if self._time is None or end._time is None:
            raise RuntimeError("elapsed_time needs both events recorded")
        return (end._time - self._time) * 1e3


_DEFAULT_STREAM = Stream()
_stream_stack = [_DEFAULT_STREAM]


def current_stream(device: Any = None) -> Stream:
    return _stream_stack[-1]


def default_stream(device: Any = None) -> Stream:
    return _DEFAULT_STREAM


def set_stream(stream: Stream) -> None:
    _stream_stack[-1] = stream


@contextlib.contextmanager
def stream(s: Optional[Stream]):
    """``with torch.npu.stream(s):`` -- selects ``s`` as the current stream inside the block."""
    _stream_stack.append(s or _stream_stack[-1])
    try:
        yield s
    finally:
        _stream_stack.pop()


@contextlib.contextmanager
def device(index: Any):
    """``with torch.npu.device(i):``"""
    previous = _DeviceState.current
    set_device(index)
    try:
        yield
    finally:
        _DeviceState.current = previous


_knobs_logged: set = set()


def _log_knob_once(name: str) -> None:
    """Say once per process, at INFO, that an NPU tuning knob is recorded and has no effect here."""
    if name not in _knobs_logged:
        _knobs_logged.add(name)
        logger.info("%s steers the NPU only: recorded by the CPU stand-in, no effect", name)


def set_device_limit(device: Any, cube_num: Optional[int] = None, vector_num: Optional[int] = None) -> None:
    """Core limits steer the NPU scheduler only: recorded, no effect on results."""
    _log_knob_once("torch.npu.set_device_limit")
    _DeviceState.limits[_ordinal(device)] = (cube_num, vector_num)


def set_stream_limit(stream_: Stream, cube_num: Optional[int] = None, vector_num: Optional[int] = None) -> None:
    """Per-stream core limits: recorded on the stream, no effect on results."""
    _log_knob_once("torch.npu.set_stream_limit")
    stream_.limits = (cube_num, vector_num)


def is_current_stream_capturing() -> bool:
    """Whether a ``torch.npu.graph`` capture is recording this thread's launches (graphs.py)."""
    return _capture.active() is not None


def manual_seed(seed: int) -> None:
    """Seed the device generator, which is the CPU's here (not ``torch.manual_seed``: torch calls this from it)."""
    torch.default_generator.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed() -> None:
    torch.seed()


def _is_in_bad_fork() -> bool:
    """Whether this is a forked child whose device state is unusable: never here (torch asks before seeding)."""
    return False


class _Config:
    """``torch_npu.npu.config``: ``allow_internal_format`` is recorded and has no effect (``npu_format_cast``
    keeps the format it is asked for either way; the switch only lets torch_npu's own operators pick
    internal formats for their outputs, which no stand-in operator does)."""

    def __init__(self) -> None:
        self._allow_internal_format = False

    @property
    def allow_internal_format(self) -> bool:
        return self._allow_internal_format

    @allow_internal_format.setter
    def allow_internal_format(self, value: bool) -> None:
        _log_knob_once("torch.npu.config.allow_internal_format")
        self._allow_internal_format = bool(value)


config = _Config()


def _device_dump(name: str):
    return _npu_only(f"torch.npu.{name} (device dumps)",
                     "dump kernel data on the CPU with the interp backend or the simulator's trace instead")

for _name, _value in {
    "set_device": set_device, "current_device": current_device, "device_count": device_count,
    "is_available": is_available, "is_initialized": is_initialized, "init": init,
    "synchronize": synchronize, "get_device_name": get_device_name, "get_soc_version": get_soc_version,
    "get_device_properties": get_device_properties, "get_device_capability": get_device_capability,
    "Stream": Stream, "Event": Event, "current_stream": current_stream, "default_stream": default_stream,
    "set_stream": set_stream, "stream": stream, "device": device, "set_device_limit": set_device_limit,
    "set_stream_limit": set_stream_limit, "is_current_stream_capturing": is_current_stream_capturing,
    "manual_seed": manual_seed, "manual_seed_all": manual_seed_all, "seed": seed, "config": config,
    "_is_in_bad_fork": _is_in_bad_fork,
    "init_dump": _device_dump("init_dump"), "set_dump": _device_dump("set_dump"),
    "finalize_dump": _device_dump("finalize_dump"),
    "memory_reserved": _zero, "memory_allocated": _zero, "max_memory_allocated": _zero,
    "max_memory_reserved": _zero, "empty_cache": _nothing, "reset_peak_memory_stats": _nothing,
    "NPUGraph": graphs.NPUGraph, "graph": graphs.graph,
}.items():
    setattr(npu, _name, _value)

# ---------------------------------------------------------------- torch_npu.profiler
profiler = types.ModuleType("torch_npu.profiler", "On-board profiling: NPU-only under the CPU stand-in.")
for _enum, _members in {"ProfilerActivity": ("CPU", "NPU"), "ExportType": ("Text", "Db"),
                        "AiCMetrics": ("PipeUtilization", "ArithmeticUtilization", "Memory", "AiCoreNone"),
                        "ProfilerLevel": ("Level0", "Level1", "Level2", "Level_none")}.items():
    setattr(profiler, _enum, types.SimpleNamespace(**{m: m for m in _members}))
for _name in ("profile", "schedule", "tensorboard_trace_handler", "_ExperimentalConfig"):
    setattr(profiler, _name, _npu_only(f"torch_npu.profiler.{_name} (on-board profiling)",
                                       "use the simulator's timeline (backend='sim') instead"))

sys.modules.setdefault("torch_npu.npu", npu)
sys.modules.setdefault("torch_npu.profiler", profiler)
