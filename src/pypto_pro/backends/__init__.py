"""Backends consuming the tile IR, and the protocol the runtime drives them through.

A backend is a module ``pypto_pro.backends.<name>`` (see :class:`Backend`).  Every backend has ``run``
and ``launch_blocks``; a backend that compiles kernels ahead of their launch (cpu) also has
``available``, ``prepare``, ``launch`` and ``frozen_launcher``, and may have a ``frozen_call`` (the
tensor level's repeated calls) and a ``native_launcher`` (:class:`NativeLauncher`).  The runtime (``runtime/jit.py``) only talks to this protocol and
never names a backend: which backend runs by default is :data:`PREFERENCE`, and a backend whose
``prepare`` raises ``NotImplementedError`` falls back to the interpreter unless it was asked for
explicitly (:func:`prepare`).
"""
from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable, Dict, NamedTuple, Optional, Protocol, Sequence, Tuple

KNOWN = ("interp", "cpu", "sim")
#: the default backend is the first available one of these
PREFERENCE = ("cpu", "interp")
#: where a kernel runs when its backend cannot prepare it (and was not requested explicitly)
FALLBACK = "interp"
#: the oracle: the backend whose results define the semantics (pass verification compares against it)
REFERENCE = "interp"


class Backend(Protocol):
    """What the runtime may call on a backend module.

    ``run(kernel, tensors, scalars, block_dim, *, jit=None)`` executes one launch (``tensors``: param
    index -> ndarray, ``scalars``: ``Var`` uid -> value, for scalar params and dynamic dims); its return value (e.g. the simulator's report)
    becomes ``kernel.last_report``.  ``jit`` is the launching ``JitKernel`` (None for programmatic
    launches).  Optional, for backends that build a kernel before launching it:

    * ``available() -> bool``: whether the backend can run here (e.g. a C++ compiler exists);
    * ``prepare(kernel, relaunch=False) -> prepared``: build it (cached); ``NotImplementedError`` naming
      an unsupported op.  ``relaunch=True``: for a frozen relauncher, which skips the launch's own
      wrapping; ``NotImplementedError`` for a kernel that needs it (cpu: communicating kernels);
    * ``launch(prepared, tensors, scalars, block_dim)``: one launch of a prepared kernel;
    * ``frozen_launcher(kernel_name, prepared, specs) -> (args, block_dim) -> bool``: a relauncher for
      exactly one argument signature, skipping argument binding; False (nothing done) for a negative
      view or a tensor the kernel writes whose elements share memory (``expand``), which the checked
      launch then reports;
    * ``frozen_call(prepared, tensors, scalars, block_dim, feeds) -> (args) -> bool``: a repeater of one
      checked launch (``tensors``/``scalars`` as for ``launch``) for later calls whose arguments have the
      same types, shapes and strides: only the data pointers change, as :class:`Feeds` says where each
      tensor's comes from; False (nothing done) where it cannot run the call (e.g. another thread);
    * ``native_launcher``: a :class:`NativeLauncher` that runs ``kernel[None, n]`` launches of the latest
      frozen signature without Python code (cpu: the C extension of ``backends/cpu/clauncher.py``).
    """

    def run(self, kernel: Any, tensors: Dict[int, Any], scalars: Dict[int, Any], block_dim: int, *,
            jit: Any = None) -> Any: ...

    def launch_blocks(self, arch: Any, work: int) -> int:
        """Blocks to launch an SPMD kernel of ``arch`` with when the caller leaves the count to the
        backend (lowered tensor-level programs: the result does not depend on it, only the speed);
        ``work``: elements of the kernel's largest GM tensor."""


class Feeds(NamedTuple):
    """Where each tensor parameter of a :meth:`Backend.frozen_call` repeat gets its data on a later call.

    ``args``: param index -> position of the call's argument (a torch tensor or ndarray) whose data
    the parameter is (a zero-copy view of it starts at its first element); ``zeroed``: param index ->
    the param index of a workspace that each call allocates afresh, zero-filled, with the dtype and
    shape of that parameter's array in the frozen launch (the parameter starts at its first element).
    Every tensor parameter is in exactly one of the two."""

    args: Dict[int, int]
    zeroed: Dict[int, int]


class NativeLauncher(Protocol):
    """A backend's native front for ``kernel[None, n]``: the kernel's bound launchers first try the
    latest signature frozen in the kernel's slot, natively, and call the Python launcher for anything
    else, so every check and message stays the Python launcher's.

    * ``state() -> "ready" | "building" | "off"``: loaded, being built (a later launch retries the
      freeze), or unavailable/disabled;
    * ``slot()``: a kernel's latest-signature slot (``slot.set(frozen or None)``), None until ready;
    * ``frozen(kernel_name, prepared, specs, args, env)``: the native description of the signature of
      ``args`` (None where the native path does not apply to it);
    * ``bound(slot, fallback, jit, block_dim)``: ``kernel[None, block_dim]``, calling ``fallback``
      (the Python launcher) for whatever the slot's signature does not cover.
    * optional ``subscript(getitem, capture_flags, bound_attr, capturing_key)``: a native
      ``JitKernel.__getitem__`` that returns the kernel's cached ``kernel[None, n]`` (from its
      ``bound_attr`` dict, while ``capture_flags[capturing_key]`` is 0) and calls ``getitem`` otherwise.
    """

    def state(self) -> str: ...

    def slot(self) -> Any: ...

    def frozen(self, kernel_name: str, prepared: Any, specs: Sequence[Any], args: Sequence[Any],
               env: tuple) -> Any: ...

    def bound(self, slot: Any, fallback: Callable, jit: Any, block_dim: int) -> Callable: ...


def get_backend(name: str) -> Backend:
    """The module of backend ``name`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{name}")


def get_runner(name: str) -> Callable:
    """The ``run`` function of backend ``name`` (imported on first use)."""
    runner = getattr(get_backend(name), "run", None)
    if runner is None:
        raise NotImplementedError(f"the '{name}' backend")
    return runner


def is_available(name: str) -> bool:
    available = getattr(get_backend(name), "available", None)
    return available() if available is not None else True


_warned_default = False


def default_backend() -> str:
    """The first available backend of :data:`PREFERENCE` (a one-time warning when it is not the first)."""
    global _warned_default
    for name in PREFERENCE:
        if is_available(name):
            if name != PREFERENCE[0] and not _warned_default:
                _warned_default = True
                warnings.warn("no C++ compiler found ($CXX, g++, clang++): kernels run on the slow numpy interpreter",
                              RuntimeWarning, stacklevel=3)
            return name
    return FALLBACK


def prepare(name: str, kernel: Any, strict: bool) -> Tuple[str, Optional[Any]]:
    """(backend that will run ``kernel``, its prepared form or None for backends that do not prepare).

    A backend that cannot prepare the kernel raises ``NotImplementedError`` when it was requested
    explicitly (``strict``); otherwise the kernel runs on :data:`FALLBACK`, with a warning naming the
    unsupported feature and its kernel line."""
    backend = get_backend(name)
    prep = getattr(backend, "prepare", None)
    if prep is None:
        return name, None
    try:
        if not is_available(name):
            raise NotImplementedError(f"the {name} backend without a C++ compiler (set $CXX or install g++/clang++)")
        return name, prep(kernel)
    except NotImplementedError as e:
        if strict:
            raise
        loc = getattr(e, "loc", None)  # codegen.CpuNotImplemented: the feature and its kernel line
        warnings.warn(f"kernel '{kernel.name}': {getattr(e, 'feature', e)} is not supported by the {name} backend; "
                      f"running it on the interpreter" + (f"\n  at {loc}" if loc is not None else ""),
                      RuntimeWarning, stacklevel=3)
        return FALLBACK, None


def launch_blocks(name: str, arch: Any, work: int) -> int:
    """The block count backend ``name`` launches an SPMD kernel of ``arch`` with, for ``work`` elements in
    its largest GM tensor (:meth:`Backend.launch_blocks`)."""
    return get_backend(name).launch_blocks(arch, work)


def native_launcher(name: str) -> Optional[NativeLauncher]:
    """Backend ``name``'s :class:`NativeLauncher`, or None where it has none."""
    return getattr(get_backend(name), "native_launcher", None)


def frozen_call(name: str, prepared: Any, tensors: Dict[int, Any], scalars: Dict[int, Any], block_dim: int,
                feeds: Feeds) -> Optional[Callable[[Sequence[Any]], bool]]:
    """Backend ``name``'s repeater of the launch of ``prepared`` with these bound ``tensors`` and
    ``scalars`` (:meth:`Backend.frozen_call`), or None where the backend has none."""
    make = getattr(get_backend(name), "frozen_call", None)
    return None if make is None else make(prepared, tensors, scalars, block_dim, feeds)


def prepare_relaunch(name: str, kernel: Any) -> Optional[Any]:
    """``kernel`` prepared by backend ``name`` for a frozen relauncher; None where the backend does not
    prepare kernels or declines to relaunch this one (e.g. no compiler here)."""
    prep = getattr(get_backend(name), "prepare", None)
    if prep is None:
        return None
    try:
        return prep(kernel, relaunch=True)
    except NotImplementedError:
        return None


__all__: Sequence[str] = ["Backend", "FALLBACK", "Feeds", "KNOWN", "NativeLauncher", "PREFERENCE", "REFERENCE",
                          "default_backend", "frozen_call", "get_backend", "get_runner", "is_available",
                          "launch_blocks", "native_launcher", "prepare", "prepare_relaunch"]
