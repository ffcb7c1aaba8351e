"""Device mapping of the stand-in: every ``npu`` device a torch program names means the CPU.

torch learns the device name ``npu`` (its PrivateUse1 backend renamed, with our ``torch.npu``
module registered for it) so that ``torch.device("npu:0")`` parses, and the CPU becomes the kernels
of that backend: torch's dispatcher sends every operator that names the ``npu`` device (the
allocation under ``torch.zeros(..., device="npu")``, ``torch.tensor(..., device="npu:0")``,
``with torch.device("npu")`` ...) to :func:`_on_host`, which runs it with the CPU instead.  This is
C-level dispatch: a torch call that names no NPU never reaches Python code of the stand-in, so it
costs what it costs without the stand-in (benchmarks/bench_npu_standin.py).  ``Tensor.to`` a target
naming the NPU, ``Tensor.npu()`` and ``Module.npu()`` return the object itself.  torch's accelerator
queries about the ``npu`` device get answers (device 0, the default stream), so ``torch.compile``
traces.  All of it is process-wide (every thread).
"""
from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import torch

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


def _host_value(value: Any) -> Any:
    """A dispatcher argument with an NPU device replaced by the CPU."""
    if type(value) is torch.device and value.type == NPU:
        return CPU
    return value


def _on_host(op: Any, *args: Any, **kwargs: Any) -> Any:
    """The ``npu`` (PrivateUse1) backend of every aten operator: the operator on the CPU.

    Only calls that name the NPU reach the ``npu`` backend -- in practice the allocations under every
    factory (``torch.zeros(..., device="npu")``, ``torch.tensor(..., device="npu:0")``, ``with
    torch.device("npu")`` ...), which :func:`_empty_on_host` and :func:`_empty_strided_on_host` take
    directly, so this fallback sees the rest.  Calls that name no NPU pay nothing for the stand-in:
    torch's dispatcher never looks at this backend for them."""
    return op(*[_host_value(a) for a in args], **{k: _host_value(v) for k, v in kwargs.items()})


def _empty_on_host(size: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None, memory_format: Any = None) -> torch.Tensor:
    """``aten::empty.memory_format`` of the ``npu`` backend (called through torch's C binding: an
    ``OpOverload`` call costs about 10 us more in Python)."""
    return _torch_empty(size, dtype=dtype, layout=layout, device=CPU, pin_memory=pin_memory,
                        memory_format=memory_format)


def _empty_strided_on_host(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                           pin_memory: Any = None) -> torch.Tensor:
    """``aten::empty_strided`` of the ``npu`` backend (the allocation of ``Tensor.to`` and ``torch.tensor``)."""
    return _torch_empty_strided(size, stride, dtype=dtype, layout=layout, device=CPU, pin_memory=pin_memory)


_torch_empty = torch._C._VariableFunctions.empty
_torch_empty_strided = torch._C._VariableFunctions.empty_strided


#: integer dtypes the NPU's uniform fill (``aclnnInplaceUniform``, what ``torch.rand`` runs there) accepts
_UNIFORM_INT_DTYPES = frozenset({torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8})


def _rand_on_host(op: Any, size: Any, **kwargs: Any) -> torch.Tensor:
    """``torch.rand(size, dtype=<integer>, device="npu")``: zeros, as on the NPU.

    torch's ``rand`` fills a new tensor with ``uniform_(0, 1)``.  The CPU refuses that for integer dtypes
    (``"check_uniform_bounds" not implemented for 'Int'``); torch_npu's ``uniform_`` runs the CANN operator
    ``aclnnInplaceUniform``, which takes INT8/16/32/64 and UINT8 and fills with values in ``[from, to)``
    = ``[0, 1)``: for an integer type that is 0 (the official glm_select_experts allocates its int32
    outputs this way).  Floating dtypes take the CPU generator, as every ``npu`` random tensor does."""
    kwargs = {k: _host_value(v) for k, v in kwargs.items()}
    dtype = kwargs.get("dtype")
    if dtype in _UNIFORM_INT_DTYPES:
        return torch.zeros(size, dtype=dtype, layout=kwargs.get("layout"), device=CPU,
                           pin_memory=kwargs.get("pin_memory"))
    return op(size, **kwargs)


_library: list = []  # the torch.library registrations (they stay in force while the objects live)


def _register_host_backend() -> None:
    """Make the CPU the kernels of the ``npu`` backend: the two allocations every factory ends in,
    :func:`_rand_on_host` for ``rand`` and a fallback for every other aten operator.  C-level dispatch:
    nothing of it runs for calls that name no NPU."""
    fallback = torch.library.Library("_", "IMPL")  # noqa: TOR901  (a backend fallback needs the global namespace)
    fallback.fallback(_on_host, dispatch_key="PrivateUse1")
    aten = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    aten.impl("empty.memory_format", _empty_on_host, "PrivateUse1")
    aten.impl("empty_strided", _empty_strided_on_host, "PrivateUse1")
    for overload in ("default", "generator"):
        op = getattr(torch.ops.aten.rand, overload)
        name = "rand" if overload == "default" else f"rand.{overload}"
        aten.impl(name, functools.partial(_rand_on_host, op), "PrivateUse1")
    _library.extend((fallback, aten))


_torch_to = torch.Tensor.to
_DEVICE_TYPES = frozenset({str, torch.device})  # how a positional Tensor.to target names a device


def _tensor_to(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    """``Tensor.to``: a target naming the NPU (first argument or ``device=``) is the CPU, so that
    ``t.to("npu")`` is ``t`` itself, as ``t.npu()`` is (the NPU is where ``t`` lives)."""
    if args and type(args[0]) in _DEVICE_TYPES and is_npu_device(args[0]):
        args = (CPU,) + args[1:]
    if kwargs and "device" in kwargs:
        kwargs["device"] = to_host(kwargs["device"])
    return _torch_to(self, *args, **kwargs)


_tensor_to.__name__ = _tensor_to.__qualname__ = "to"  # what __torch_function__ handlers read
_tensor_to.__doc__ = _torch_to.__doc__


_torch_set_default_device = torch.set_default_device


def _set_default_device(device: Any) -> None:
    """``torch.set_default_device("npu")``: the CPU (no torch-function mode in front of every call)."""
    _torch_set_default_device(CPU if is_npu_device(device) else device)


def _tensor_npu(self: torch.Tensor, device: Any = None, non_blocking: bool = False, **_: Any) -> torch.Tensor:
    """``Tensor.npu()``: the tensor itself (it already lives where the stand-in's NPU is)."""
    return self


def _module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    """``Module.npu()``: the module itself."""
    return self


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
    if torch._C._get_privateuse1_backend_name() != NPU:
        torch.utils.rename_privateuse1_backend(NPU)
    if not hasattr(torch, NPU):
        torch._register_device_module(NPU, npu_module.npu)
        _register_accelerator_hooks()
    torch.Tensor.npu = _tensor_npu
    torch.nn.Module.npu = _module_npu
    if not _library:
        _register_host_backend()
        torch.Tensor.to = _tensor_to
        torch.set_default_device = _set_default_device
        from . import compiled, topk_order
        compiled.register()
        topk_order.install()
