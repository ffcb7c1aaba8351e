"""Device mapping of the stand-in: every ``npu`` device a torch program names means the CPU.

torch learns the device name ``npu`` (its PrivateUse1 backend renamed, with our ``torch.npu``
module registered for it) so that ``torch.device("npu:0")`` parses; a torch-function mode then
rewrites each ``device=`` argument and ``Tensor.to`` target of type ``npu`` to the CPU before torch
sees it.  ``Tensor.npu()`` and ``Module.npu()`` return the CPU object.  torch's accelerator queries
about the ``npu`` device get answers (device 0, the default stream), so ``torch.compile`` traces.  The mode is pushed for the
thread that activates the stand-in (torch keeps function modes per thread): tensors made with
``device="npu"`` in other threads are not mapped.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .graphs import check_capture_op

NPU = "npu"
CPU = torch.device("cpu")


def is_npu_device(device: Any) -> bool:
    """Whether ``device`` (a string, ``torch.device`` or int ordinal) names an NPU."""
    if isinstance(device, torch.device):
        return device.type == NPU
    if isinstance(device, str):
        return device.split(":", 1)[0].strip() == NPU
    return False


def to_host(device: Any) -> Any:
    """``device`` with an NPU replaced by the CPU; anything else unchanged.  A bare ordinal
    (``device=0``) names the current accelerator, which is the NPU under torch_npu, unless CUDA
    is present."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device if torch.cuda.is_available() else CPU
    return CPU if is_npu_device(device) else device


class NpuToCpuMode(TorchFunctionMode):
    """Rewrites NPU device arguments of every torch function to the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        check_capture_op(func)
        if "device" in kwargs:
            kwargs["device"] = to_host(kwargs["device"])
        if func is torch.Tensor.to and len(args) > 1 and is_npu_device(args[1]):
            args = (args[0], CPU) + tuple(args[2:])
        return func(*args, **kwargs)


def _tensor_npu(self: torch.Tensor, device: Any = None, non_blocking: bool = False, **_: Any) -> torch.Tensor:
    """``Tensor.npu()``: the tensor itself (it already lives where the stand-in's NPU is)."""
    return self


def _module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    """``Module.npu()``: the module itself."""
    return self


_mode: TorchFunctionMode | None = None


def _register_accelerator_hooks() -> None:
    """Answer torch's accelerator queries for the ``npu`` device (``torch.accelerator.current_stream()``,
    which ``torch.compile`` asks while tracing): the PrivateUse1 hooks and device guard that a real
    backend registers in C++, here with torch's own defaults (device 0, its default stream).  No tensor
    ever lives on that device (every ``npu`` argument means the CPU), so nothing else reaches them."""
    acc = getattr(torch._C, "_acc", None)
    if acc is None or not hasattr(acc, "register_python_privateuseone_hook"):
        return  # an older torch: torch.compile under the stand-in then fails in torch, naming the npu device

    class Hooks(acc.PrivateUse1Hooks):
        def is_available(self) -> bool:
            return True

        def has_primary_context(self, device_index: int) -> bool:
            return True

        def is_built(self) -> bool:
            return True

    class Guard(acc.DeviceGuard):
        def type_(self):
            return torch._C._autograd.DeviceType.PrivateUse1

    acc.register_python_privateuseone_hook(Hooks())
    acc.register_python_privateuseone_device_guard(Guard())
    if not hasattr(torch.Tensor, "is_npu"):  # what torch's generated backend methods give (dynamo reads it)
        torch.Tensor.is_npu = property(lambda self: self.device.type == NPU)


def activate(npu_module: ModuleType) -> None:
    """Teach torch the ``npu`` device name, register ``torch.npu`` and start the mapping."""
    global _mode
    if torch._C._get_privateuse1_backend_name() != NPU:
        torch.utils.rename_privateuse1_backend(NPU)
    if not hasattr(torch, NPU):
        torch._register_device_module(NPU, npu_module.npu)
        _register_accelerator_hooks()
    torch.Tensor.npu = _tensor_npu
    torch.nn.Module.npu = _module_npu
    if _mode is None:
        _mode = NpuToCpuMode()
        _mode.__enter__()
