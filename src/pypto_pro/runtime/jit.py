"""``@pl.jit``: lazy compilation, specialization cache and the launch forms.

``kernel[stream, block_dim](*args)``, ``kernel[block_dim](*args)`` and ``kernel(*args)`` (block_dim 1)
all bind and check the arguments, fetch or build the variant for the STATIC dims, and run it on
the selected backend.  A kernel with a tiling key (``@pl.jit(tiling_key=Schema)``) is launched with
``kernel[stream, block_dim, {field: value}](*args)``; each key is its own variant.  A kernel with a
datatype schema (``@pl.jit(datatype={param: "var"})``, runtime/datatype.py) takes the dtype dict after the
key (or third without a key); each set of types is its own variant too.  Launches are synchronous on
every backend: results are ready on return.
"""
from __future__ import annotations

import functools
import inspect
import numbers
import os
import re
import time
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import ops as _ops  # noqa: F401  (registers the op table)
from ..arch import ArchSpec, resolve_arch
from . import capture as _capture
from ..log import logger
from .. import backends
from ..backends import KNOWN as KNOWN_BACKENDS
from ..backends import get_runner
from ..errors import KernelLaunchError, KernelLaunchValueError, KernelSyntaxError, SourceLoc
from ..dtypes import DataType
from ..ir.nodes import KernelIR
from ..ir.printer import format_kernel
from ..ir.verify import verify
from ..language.annotations import (PtrAnnotation, TensorAnnotation, is_tiling_annotation, parameter_annotations,
                                    scalar_annotation_dtype)
from .args import ParamSpec, bind_arguments, check_writeable, runtime_scalars
from .datatype import DatatypeSchema, DtypeBinding, split_launch_key
from .fastpath import arg_key, launch_environment
from ..passes.pipeline_sync import insert_pipeline_sync
from .pipeline import PipelineConfig, check_pipeline_config
from .tilingkey import TilingKeySchema

#: the largest block_dim a launch accepts: the hardware's blockDim field (larger is not clamped but
#: rejected; the runtime would otherwise try to create that many blocks)
MAX_BLOCK_DIM = 65535

def select_backend(requested: Optional[str]) -> str:
    """``backend=`` argument, else ``$PYPTO_BACKEND``, else the first available of backends.PREFERENCE ("cpu" if a
    compiler exists, else "interp"; docs/contract.md)."""
    name = requested or os.environ.get("PYPTO_BACKEND") or backends.default_backend()
    if name not in KNOWN_BACKENDS:
        raise KernelLaunchError(f"unknown backend {name!r}; expected one of {', '.join(KNOWN_BACKENDS)}")
    return name


def execute(kernel: KernelIR, tensors, scalars, block_dim: int, backend: Optional[str] = None, jit=None):
    """Run a parsed/lowered kernel on a backend; returns the backend's report (or ``None``).

    The tensor-level frontend launches its lowered programs through this function too."""
    check_writeable(kernel, tensors)
    name = select_backend(backend)
    name, prepared = backends.prepare(name, kernel, strict=backend == name)
    if prepared is not None:
        backends.get_backend(name).launch(prepared, tensors, scalars, block_dim)
        return None
    return get_runner(name)(kernel, tensors, scalars, block_dim, jit=jit)


def parameter_loc(fn: Callable, pname: str) -> Optional[SourceLoc]:
    """file:line of parameter ``pname`` in ``fn``'s source (its ``def`` line when the source is not
    available as text), so signature errors point at the code like every other kernel error."""
    filename, line = fn.__code__.co_filename, fn.__code__.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return SourceLoc(filename, line)
    for k, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            line = first + k
            for j in range(k, len(lines)):
                if re.search(rf"\b{re.escape(pname)}\b\s*[:,=)]", lines[j]):
                    return SourceLoc(filename, first + j, lines[j])
            return SourceLoc(filename, line, text)
    return SourceLoc(filename, line)


class FrozenSignature:
    """What repeats a launch with one argument signature: the backend's frozen relauncher (``run``),
    its native description for the kernel's slot (``native``, see :class:`backends.NativeLauncher`)
    and, while the native launcher is still being built, what to freeze it from (``pending``)."""

    __slots__ = ("run", "native", "pending")

    def __init__(self, run: Callable[[Any, int], None]):
        self.run = run
        self.native: Any = None
        self.pending: Optional[Tuple[backends.NativeLauncher, Any, List[ParamSpec]]] = None


class VariantCache(dict):
    """The parsed variants of a kernel, keyed by (arch, STATIC dims, tiling key).

    Clearing it also drops the kernel's frozen launchers, so the next launch of every signature
    compiles again (the official tests count variants after clearing ``_compiled_by_signature``)."""

    def __init__(self, fast: Dict[Tuple, FrozenSignature], on_clear: Optional[Callable[[], None]] = None):
        super().__init__()
        self._fast = fast
        self._on_clear = on_clear

    def clear(self) -> None:
        super().clear()
        self._fast.clear()
        if self._on_clear is not None:
            self._on_clear()


class JitKernel:
    """A tile kernel: compiled on first launch per STATIC-dims signature, then reused."""

    __pto_jit__ = True

    def __init__(self, fn: Callable, *, arch=None, auto_mutex: bool = True, name: Optional[str] = None,
                 backend: Optional[str] = None, sim_options: Optional[Dict[str, Any]] = None, tiling_key=None,
                 pipeline: Optional[PipelineConfig] = None, datatype=None):
        self.fn = fn
        #: the ``pipeline=`` configuration (docs/language.md: stages keep their serial meaning on every backend)
        self.pipeline = pipeline
        #: the ``tiling_key=`` schema, checked now (launches then name a key: ``kernel[stream, n, {...}]``)
        self.tiling_key = TilingKeySchema(tiling_key) if tiling_key is not None else None
        #: the ``datatype=`` schema: dtype variables chosen per launch (``kernel[stream, n, key, {...}]``)
        self.datatype = DatatypeSchema(datatype, fn, self.tiling_key) if datatype is not None else None
        #: options of the simulator backend (``{"strict": False}``; see docs/simulator.md)
        self.sim_options = dict(sim_options or {})
        self.name = name or fn.__name__
        self.auto_mutex = auto_mutex
        self._arch_request = arch
        self._backend_request = backend
        self._fast: Dict[Tuple, FrozenSignature] = {}
        self._variants: VariantCache = VariantCache(self._fast, self._forget_frozen)
        #: the native launcher that bound launchers go through (backends.NativeLauncher; None until a
        #: backend that has one is ready), its slot holding the latest frozen signature, and
        #: ``kernel[None, n]`` objects by block count
        self._native: Optional[backends.NativeLauncher] = None
        self._slot = None
        self._bound: Dict[int, Callable] = {}
        self._signature: Optional[List[ParamSpec]] = None
        self._param_names: Optional[Tuple[str, ...]] = None
        self._lock = threading.Lock()
        #: what the backend reported about the latest launch (the simulator's report; None for interp)
        self.last_report = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__wrapped__ = fn
        # an explicit arch= or backend= is checked now; None/"auto" depend on the environment at launch
        if arch not in (None, "auto"):
            _ = self.arch
        if backend is not None:
            self.selected_backend()

    @property
    def func_name(self) -> str:
        """The decorated function's name (the official attribute)."""
        return self.fn.__name__

    @property
    def _compiled_by_signature(self) -> VariantCache:
        """The official name of the variant cache (one entry per compiled STATIC-dims signature)."""
        return self._variants

    @property
    def _kernel_def_by_static_signature(self) -> VariantCache:
        """The official name of the parsed-kernel cache; parsing and compiling share one cache here."""
        return self._variants

    def _positional(self, args, kwargs) -> tuple:
        """Launch arguments in parameter order: keywords bound by name, defaults filled in (as Python
        binds a call); a mismatch raises KernelLaunchError with the signature."""
        if not kwargs and len(args) == len(self._parameters()):
            return args
        sig = inspect.signature(self.fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            names = ", ".join(sig.parameters)
            raise KernelLaunchError(f"expected {len(sig.parameters)} arguments ({names}) as in "
                                    f"{self.fn.__name__}{sig}: {e}", kernel=self.name) from None
        bound.apply_defaults()
        return tuple(bound.arguments[name] for name in sig.parameters)

    def _parameters(self):
        if self._param_names is None:
            self._param_names = tuple(inspect.signature(self.fn).parameters)
        return self._param_names

    # ------------------------------------------------------------------ launch forms
    def _forget_frozen(self) -> None:
        if self._slot is not None:
            self._slot.set(None)

    def __getitem__(self, key) -> Callable[..., None]:
        if _capture.capturing and _capture.active() is not None:  # inside a graph capture: launch at replay
            return _capture.deferred_launcher(self, key)
        n = key if type(key) is int else \
            key[1] if type(key) is tuple and len(key) == 2 and key[0] is None and type(key[1]) is int else None
        if n is not None:
            bound = self._bound.get(n)  # kernel[None, n]: one launcher per n, not a closure per call
            if bound is not None:
                return bound
        if not isinstance(key, tuple):
            key = (None, key)
        if len(key) == 1:
            key = (None, key[0])
        if len(key) > 4:
            raise KernelLaunchError(f"launch with kernel[stream, block_dim] or kernel[stream, block_dim, tiling_key"
                                    f"(, datatype)], got {len(key)} items", kernel=self.name)
        stream, block_dim, key_dict, types = split_launch_key(key, self.tiling_key is not None,
                                                              self.datatype is not None)
        if key_dict is not None and self.tiling_key is None:
            raise KernelLaunchError("a tiling key was given at launch, but the kernel has no @pl.jit(tiling_key=...) "
                                    "schema", kernel=self.name)
        tiling = self._tiling(key_dict)
        dtypes = self._dtypes(types)

        def launcher(*args, **kwargs):
            return self.launch(self._positional(args, kwargs), block_dim=block_dim, stream=stream, tiling=tiling,
                               dtypes=dtypes)

        if stream is None and type(block_dim) is int and 1 <= block_dim <= MAX_BLOCK_DIM and tiling is None \
                and dtypes is None and len(self._bound) < 64:
            if self._slot is not None:
                launcher = self._native.bound(self._slot, launcher, self, block_dim)
            self._bound[block_dim] = launcher
        return launcher

    #: the Python ``__getitem__``; once a backend's native launcher is ready, ``__getitem__`` is its
    #: native front for the cached ``kernel[None, n]`` that calls this for everything else (_install_subscript)
    _getitem = __getitem__

    def __call__(self, *args, **kwargs):
        if _capture.capturing and _capture.active() is not None:  # inside a graph capture: run at replay
            _capture.active().record(self, args, kwargs)
            return None
        tiling = self._tiling(None)  # a kernel with a tiling key is never called directly, whatever the arguments
        dtypes = self._dtypes(None)
        return self.launch(self._positional(args, kwargs), block_dim=1, tiling=tiling, dtypes=dtypes)

    def _dtypes(self, types) -> Optional[DtypeBinding]:
        """The dtype variables of a launch's dtype dict; None for a kernel without a datatype schema."""
        if self.datatype is None:
            if types is not None:
                raise KernelLaunchValueError("a datatype dict was given at launch, but the kernel has no "
                                             "@pl.jit(datatype=...) schema", kernel=self.name)
            return None
        if types is None:  # ValueError officially, like a missing tiling key
            where = "kernel[stream, block_dim, tiling_key, {...}]" if self.tiling_key else "kernel[stream, block_dim, {...}]"
            raise KernelLaunchValueError(f"the kernel has a datatype schema and cannot be called directly: launch it "
                                         f"with {where}, the dict giving a pl.DT_* for each of "
                                         f"{sorted(self.datatype.mapping)}", kernel=self.name)
        return self.datatype.resolve(types, self.name)

    def _tiling(self, key) -> Optional[Tuple[int, Dict[str, int]]]:
        """(packed key, field values) of a launch's tiling key; None for a kernel without a schema."""
        if self.tiling_key is None:
            return None
        if key is None:  # ValueError officially: a kernel with compile-time specialization is not called directly
            raise KernelLaunchValueError(f"the kernel has a tiling key and cannot be called directly: launch it with kernel[stream, block_dim, "
                                    f"{{{', '.join(repr(n) + ': ...' for n in self.tiling_key.names)}}}](...)",
                                    kernel=self.name)
        return self.tiling_key.resolve(key, self.name)

    # ------------------------------------------------------------------ compile + run
    @property
    def arch(self) -> ArchSpec:
        """The arch the kernel is compiled for (``arch=``, else $PYPTOPRO_JIT_ARCH, else a5)."""
        try:
            return resolve_arch(self._arch_request)
        except KernelLaunchError as e:
            raise e.attach(kernel=self.name) from None

    @property
    def backend(self) -> Optional[str]:
        """The backend asked for with ``@pl.jit(backend=...)`` (None: $PYPTO_BACKEND, else the default)."""
        return self._backend_request

    @backend.setter
    def backend(self, name: Optional[str]) -> None:
        """Ask for another backend from the next launch on; launchers frozen for the old one are dropped."""
        if name is not None:
            select_backend(name)  # an unknown name fails here, not at the next launch
        with self._lock:
            self._backend_request = name
            self._fast.clear()
            self._bound.clear()
            self._forget_frozen()

    def selected_backend(self) -> str:
        """The backend a launch runs on now (``backend=``, else $PYPTO_BACKEND, else the default)."""
        try:
            return select_backend(self._backend_request)
        except KernelLaunchError as e:
            raise e.attach(kernel=self.name) from None

    def signature(self) -> List[ParamSpec]:
        if self._signature is None:
            try:
                hints = parameter_annotations(self.fn)
            except Exception as e:  # noqa: BLE001
                raise KernelSyntaxError(f"cannot evaluate the parameter annotations: {e}", kernel=self.name) from None
            specs = []
            for i, pname in enumerate(inspect.signature(self.fn).parameters):
                ann = hints.get(pname)
                if isinstance(ann, TensorAnnotation):
                    specs.append(ParamSpec(pname, i, tensor=ann))
                elif isinstance(ann, PtrAnnotation):
                    specs.append(ParamSpec(pname, i, pointer=ann.dtype))
                elif is_tiling_annotation(ann):
                    if i != len(inspect.signature(self.fn).parameters) - 1:
                        raise KernelSyntaxError(f"the TilingData parameter '{pname}' must be the last parameter",
                                                kernel=self.name, loc=parameter_loc(self.fn, pname))
                    specs.append(ParamSpec(pname, i, tiling=ann))
                else:
                    sdt = scalar_annotation_dtype(ann)
                    if sdt is None:
                        raise KernelSyntaxError(
                            f"parameter '{pname}' needs an annotation: pl.Tensor[[...], dtype], pl.Ptr[dtype], int, "
                            f"float, bool or a pl.DT_* scalar type (got {ann!r})", kernel=self.name,
                            loc=parameter_loc(self.fn, pname))
                    specs.append(ParamSpec(pname, i, scalar=sdt))
            self._signature = specs
        return self._signature

    def compile(self, static_shapes: Dict[str, List[int]], key: Tuple = (),
                tiling: Optional[Tuple[int, Dict[str, int]]] = None, dtypes: Optional[DtypeBinding] = None
                ) -> KernelIR:
        """The parsed and checked kernel for one STATIC-dims signature, tiling key and dtype binding (cached)."""
        arch = self.arch
        cache_key = (arch.name, key, tiling[0] if tiling else None) + ((dtypes,) if dtypes else ())
        with self._lock:
            kir = self._variants.get(cache_key)
            if kir is None:
                from ..language.parser import parse_kernel

                start = time.perf_counter()
                kir = parse_kernel(self.fn, name=self.name, arch=arch, auto_mutex=self.auto_mutex,
                                   static_dims=static_shapes, key_fields=tiling[1] if tiling else None,
                                   type_names=dict(dtypes) if dtypes else None)
                kir = verify(insert_pipeline_sync(kir, self.pipeline))
                self._variants[cache_key] = kir
                static = ", ".join(f"{name}={list(dims)}" for name, dims in key if dims) or "none"
                logger.info("parsed kernel %s for arch %s (STATIC dims: %s): %s kernel in %.1f ms",
                            self.name, arch.name, static, kir.kind, (time.perf_counter() - start) * 1e3)
        return kir

    def launch(self, args, *, block_dim=1, stream=None,
               tiling: Optional[Tuple[int, Dict[str, int]]] = None, dtypes: Optional[DtypeBinding] = None) -> None:
        if isinstance(block_dim, numbers.Integral) and not isinstance(block_dim, bool):
            block_dim = int(block_dim)  # numpy ints too (a block count computed with numpy)
        if type(block_dim) is not int or not 1 <= block_dim <= MAX_BLOCK_DIM:
            raise KernelLaunchError(f"block_dim must be an int in [1, {MAX_BLOCK_DIM}] (the hardware's blockDim "
                                    f"limit), got {block_dim!r}", kernel=self.name)
        key = arg_key(args)
        if key is not None:  # a changed $PYPTO_BACKEND / arch / thread count must not reuse a frozen launcher
            key = (launch_environment(), key, tiling[0] if tiling else None, dtypes)
        fast = self._fast.get(key) if key is not None else None
        if fast is not None:  # a frozen launcher for exactly these argument types and shapes
            native = fast.native
            if native is None and fast.pending is not None:
                native = self._retry_native(fast, args, key[0])
            if native is not None and self._slot is not None:
                self._slot.set(native)
            try:
                done = fast.run(args, block_dim)
            except RuntimeError:  # torch refused a tensor (a sparse one has no data pointer): checked below
                done = False
            if done:
                self.last_report = None
                return
        specs = self.signature()
        tensors, scalars, static_key = bind_arguments(self.name, specs, args)
        shapes = {p.name: list(tensors[p.index].shape) for p in specs if p.tensor is not None}
        kir = self.compile(shapes, static_key, tiling, dtypes)
        check_writeable(kir, tensors)
        values = runtime_scalars(kir.params, tensors, scalars)
        selected = self.selected_backend()
        backend, prepared = backends.prepare(selected, kir, strict=self._backend_request == selected)
        if prepared is not None:  # a backend that builds kernels: launch, then keep a frozen relauncher
            module = backends.get_backend(backend)
            module.launch(prepared, tensors, values, block_dim)
            if key is not None and not any(p.pointer is not None for p in specs):
                with self._lock:
                    if len(self._fast) > 256:
                        self._fast.clear()
                    fast = self._fast[key] = FrozenSignature(module.frozen_launcher(self.name, prepared, specs))
                    native = backends.native_launcher(backend)
                    if native is not None:
                        fast.native = self._freeze_native(native, prepared, specs, args, key[0])
                        # retried by later launches unless the native launcher is off: while it is
                        # being built, and once when it is ready (it may have become so since this try)
                        if fast.native is None and native.state() != "off":
                            fast.pending = (native, prepared, specs)
            self.last_report = None
            return
        self.last_report = get_runner(backend)(kir, tensors, values, block_dim, jit=self)

    def _retry_native(self, fast: FrozenSignature, args, env):
        """The native description of a signature frozen before its native launcher was ready (None
        while it is still being built, or where the native path does not apply)."""
        with self._lock:
            if fast.pending is None:
                return fast.native
            native, prepared, specs = fast.pending
            state = native.state()
            if state == "ready":
                fast.native = self._freeze_native(native, prepared, specs, args, env)
                fast.pending = None
            elif state == "off":
                fast.pending = None
            return fast.native

    def _freeze_native(self, native: backends.NativeLauncher, prepared, specs, args, env):
        """``native``'s description of this signature, made current in the kernel's slot (None where
        the native path does not apply).  Called with self._lock held."""
        if self._slot is None:
            slot = native.slot()
            if slot is None:
                return None
            self._native, self._slot = native, slot
            self._bound.clear()  # launchers made before the native launcher was ready: remake them with it
            _install_subscript(native)
        frozen = native.frozen(self.name, prepared, specs, args, env)
        self._slot.set(frozen)
        return frozen

    def ir_text(self, *args, tiling_key: Optional[Dict[str, int]] = None,
                datatype: Optional[Dict[str, DataType]] = None) -> str:
        """The tile IR of the variant these example arguments (and tiling key, dtype dict) select, or of
        the only compiled one."""
        if args:
            specs = self.signature()
            tensors, _, key = bind_arguments(self.name, specs, args)
            shapes = {p.name: list(tensors[p.index].shape) for p in specs if p.tensor is not None}
            return format_kernel(self.compile(shapes, key, self._tiling(tiling_key), self._dtypes(datatype)))
        if not self._variants:
            raise KernelLaunchError("the kernel has not been compiled yet; pass example arguments", kernel=self.name)
        return format_kernel(next(iter(self._variants.values())))


def _install_subscript(native: backends.NativeLauncher) -> None:
    """``JitKernel.__getitem__`` through ``native``'s subscript, if it has one (once per process): the
    cached ``kernel[None, n]`` (no capture active) is then found without running Python code; every
    other key goes to the Python ``__getitem__``, with its checks and messages."""
    if JitKernel.__getitem__ is not JitKernel._getitem:
        return
    make = getattr(native, "subscript", None)
    fast = make(JitKernel._getitem, vars(_capture), "_bound", "capturing") if make is not None else None
    if fast is not None:
        JitKernel.__getitem__ = fast


def is_tile_kernel(fn: Callable) -> bool:
    """Whether ``fn`` declares a kernel parameter: a ``pl.Tensor``/``pl.Ptr`` annotation or a ``pl.DT_*``
    scalar type (also as a string under ``from __future__ import annotations``).  Officially ``@pl.jit``
    on any other function (no parameters, plain ``int``/``float`` ones, none annotated) returns the
    function wrapped unchanged."""
    for pname, ann in getattr(fn, "__annotations__", {}).items():
        if pname == "return":
            continue
        if isinstance(ann, (TensorAnnotation, PtrAnnotation, DataType)):
            return True
        if isinstance(ann, str) and ann.split("[")[0].split(".")[-1] in ("Tensor", "Ptr") or \
                isinstance(ann, str) and ann.split(".")[-1].startswith("DT_"):
            return True
    return False


def plain_function(fn: Callable) -> Callable:
    """``fn`` as an ordinary Python function (what ``@pl.jit`` makes of a function that is no kernel)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def jit(target: Optional[Callable] = None, *, arch=None, auto_mutex: bool = True, name: Optional[str] = None,
        pipeline=None, tiling_key=None, datatype=None, compile_timeout=None, backend: Optional[str] = None,
        sim_options: Optional[Dict[str, Any]] = None):
    """Mark a function as a tile kernel: ``@pl.jit`` or ``@pl.jit(arch="a5", auto_mutex=True, backend="interp")``.

    ``sim_options`` configures the simulator backend, e.g. ``{"strict": False}`` to collect hazards into
    ``kernel.last_report.hazards`` instead of raising (docs/simulator.md)."""
    check_pipeline_config(pipeline)
    if compile_timeout is not None and (not isinstance(compile_timeout, (int, float)) or compile_timeout <= 0):
        raise ValueError("compile_timeout must be a positive number of seconds")

    def wrap(fn: Callable):
        if not callable(fn):
            raise TypeError("@pl.jit decorates a function")
        if not is_tile_kernel(fn):
            return plain_function(fn)
        return JitKernel(fn, arch=arch, auto_mutex=auto_mutex, name=name, backend=backend, sim_options=sim_options,
                         tiling_key=tiling_key, pipeline=pipeline, datatype=datatype)

    return wrap(target) if target is not None else wrap
