"""``torch.compile`` under the stand-in: ``npu`` devices named inside a compiled region mean the CPU too.

Eager torch calls reach the CPU through the ``npu`` backend's kernels (:mod:`pypto_pro.npu.devices`), but
a compiled region is traced first on fake tensors, which take the device they are given: a
``torch.ones(4, device="npu")`` there would be a fake ``npu`` tensor next to fake CPU ones, and torch
refuses the mix while tracing.  So every callable ``torch.compile`` (``torch._dynamo.optimize``) makes
runs inside :class:`NpuToCpuMode`, a torch-function mode that rewrites ``npu`` device arguments to the CPU:
torch's compiler traces through the mode (and guards on it), so the captured graph names the CPU.  Only
calls of compiled code pay for the mode; eager code never sees it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from .devices import CPU, is_npu_device, to_host


class NpuToCpuMode(TorchFunctionMode):
    """Rewrites ``npu`` device arguments (``device=``, the target of ``Tensor.to``) to the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if "device" in kwargs:
            kwargs["device"] = to_host(kwargs["device"])
        if func is torch.Tensor.to and len(args) > 1 and is_npu_device(args[1]):
            args = (args[0], CPU) + tuple(args[2:])
        return func(*args, **kwargs)


def _in_mode(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with NpuToCpuMode():
            return fn(*args, **kwargs)

    return run


def _register_with_dynamo() -> None:
    """Make the callables of ``torch.compile`` run in :class:`NpuToCpuMode`, and let the stand-in's
    ``Tensor.to`` into graphs as the operator it is (traced inside, dynamo would stop at torch's C method
    it calls).  Idempotent; it runs at the first ``torch.compile``, which imports dynamo anyway."""
    from torch._dynamo import allow_in_graph
    from torch._dynamo.eval_frame import OptimizeContext

    if getattr(OptimizeContext.__call__, "_pypto_npu", False):
        return
    make = OptimizeContext.__call__

    def __call__(self: Any, fn: Any) -> Any:
        compiled = make(self, fn)
        return compiled if isinstance(compiled, torch.nn.Module) or not callable(compiled) else _in_mode(compiled)

    __call__._pypto_npu = True
    OptimizeContext.__call__ = __call__
    allow_in_graph(torch.Tensor.to)


def register() -> None:
    """Hook ``torch.compile`` (modules compile through the same path: a compiled module's ``forward`` is
    such a callable; ``Module.compile`` calls ``torch.compile``).  Dynamo is imported only when used."""
    if getattr(torch.compile, "_pypto_npu", False):
        return
    torch_compile = torch.compile

    @functools.wraps(torch_compile)
    def compile(*args: Any, **kwargs: Any) -> Any:
        _register_with_dynamo()
        return torch_compile(*args, **kwargs)

    compile._pypto_npu = True
    torch.compile = compile
