"""``@pypto.frontend.jit``: record on first call, lower to a tile kernel, cache, launch.

The cache key is (STATIC dims, inferred shapes/dtypes, the values of non-tensor arguments, the
effective options, the arch); DYNAMIC dims are runtime values and never recompile.
"""
from __future__ import annotations

import inspect
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.arch import resolve_arch
from pypto_pro.errors import KernelError, KernelLaunchError, KernelRuntimeError, KernelSyntaxError
from pypto_pro import backends
from pypto_pro.language.annotations import DYNAMIC, STATIC, parameter_annotations
from pypto_pro.runtime.args import as_numpy, carried_as, declared_str, element_strides, is_torch_tensor
from pypto_pro.runtime import capture as _capture
from pypto_pro.runtime.fastpath import launch_environment
from pypto_pro.runtime.jit import select_backend

from .. import options as opt
from ..graph import Buffer, Graph, full_leaf
from .graph_text import format_graph
from ..lower.program import LoweredProgram
from ..symbolic import SymbolicScalar
from ..tensor import Tensor, TileOpFormat, is_named_dim, is_status_shape
from . import nz_args, stage_log
from .control import TILE_SHAPES, check_loop_bodies
from .sim_output import record_sim_launch
from .fastcall import call_key, freeze
from . import packed_fp4
from .run_errors import speak_tensor_level
from .tracer import Session, record


class _TensorArg:
    def __init__(self, name: str, index: int, ann: Optional[Tensor], fmt: str = TileOpFormat.TILEOP_ND):
        self.name = name
        self.index = index
        self.ann = ann
        self.format = fmt  # the storage format the kernel sees it in (nz_args.py)
        self.original: Optional[np.ndarray] = None  # an NZ argument passed padded: where its logical part goes back
        #: an FP4 parameter's argument as given (its codes, one per byte, are what the kernel gets)
        self.fp4_arg: Optional[np.ndarray] = None


class Compiled:
    """One cache entry: the recorded graph and (unless compile_stage stopped early) the lowered program."""

    def __init__(self, graph: Graph, program: Optional[LoweredProgram], dyn_vars: List[Tuple[int, int, Any]],
                 session: Session):
        self.graph = graph
        self.program = program
        self.dyn_vars = dyn_vars  # (arg index, axis, Var)
        self.assumptions = list(session.assumptions)  # pypto.experimental.assume_divisible
        self.dim_agreements = list(session.dim_agreements)  # ops/core.py note_equal_at_run_time


class JitFunction:
    """A tensor-level kernel (``@pypto.frontend.jit``)."""

    def __init__(self, fn: Callable, groups: Dict[str, Dict[str, Any]], backend: Optional[str] = None,
                 arch=None):
        self.fn = fn
        self.name = fn.__name__
        self.local = {g: opt.validate(g, v) for g, v in groups.items()}
        try:  # a misspelt backend or arch fails at decoration, not at the first call
            if backend is not None:
                select_backend(backend)
            resolve_arch(arch)
        except KernelError as e:
            raise e.attach(kernel=self.name) from None
        self.backend_request = backend
        self.arch_request = arch
        self.cache: Dict[Tuple, Compiled] = {}
        self.compile_count = 0
        self.last_report = None
        self._lock = threading.Lock()
        self._sig: Optional[Tuple[inspect.Signature, Dict[str, Any]]] = None
        self._opts: Tuple[int, Any, Any] = (-1, None, None)  # (options version, effective, frozen)
        self._fast: Dict[Tuple, Any] = {}  # (options version, launch_environment(), call_key) -> frozen launch or False
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__wrapped__ = fn

    # ------------------------------------------------------------------ binding
    def _signature(self) -> Tuple[inspect.Signature, Dict[str, Any]]:
        """The function's signature and evaluated annotations (computed once)."""
        if self._sig is None:
            try:
                hints = parameter_annotations(self.fn)
            except Exception as e:  # noqa: BLE001
                raise KernelSyntaxError(f"cannot evaluate the parameter annotations: {e}", kernel=self.name) from None
            self._sig = (inspect.signature(self.fn), hints)
        return self._sig

    def _bind(self, args, kwargs):
        sig, hints = self._signature()
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise KernelLaunchError(str(e), kernel=self.name) from None
        bound.apply_defaults()
        tensors: List[Tuple[_TensorArg, np.ndarray]] = []
        consts: List[Tuple[str, Any]] = []
        seen_const = False
        for i, (pname, value) in enumerate(bound.arguments.items()):
            ann = hints.get(pname)
            declared = ann.ann_format if isinstance(ann, Tensor) else None
            fmt = TileOpFormat.TILEOP_ND
            if isinstance(value, Tensor) and value.data is not None:  # pypto.from_torch(t): the torch tensor
                from ..converter import host_array

                fmt = nz_args.resolve_format(self.name, pname, i, declared, value)
                value = host_array(value, f"argument '{pname}'")
            elif isinstance(ann, Tensor) or is_torch_tensor(value):
                fmt = nz_args.resolve_format(self.name, pname, i, declared, value)
            is_tensor_ann = isinstance(ann, Tensor) or ann is Tensor
            if is_tensor_ann or (ann is None and (isinstance(value, np.ndarray) or is_torch_tensor(value))):
                if seen_const:
                    raise KernelSyntaxError(f"parameter '{pname}': tensor parameters come before non-tensor ones",
                                            kernel=self.name)
                want = ann.ann_dtype if isinstance(ann, Tensor) else None
                targ = _TensorArg(pname, i, ann if isinstance(ann, Tensor) else None, fmt)
                try:
                    arr = carried_as(as_numpy(value, f"argument '{pname}'"), want)
                    if packed_fp4.is_fp4(want):
                        targ.fp4_arg = arr
                        arr = packed_fp4.codes_of(arr, want, f"argument '{pname}'", self.name)
                except KernelError as e:
                    raise e.attach(kernel=self.name) from None
                if fmt == TileOpFormat.TILEOP_NZ:
                    if targ.fp4_arg is not None:
                        raise NotImplementedError(f"argument '{pname}': a packed FP4 tensor in the NZ format (its "
                                                  f"runtime shape pads whole bytes of two codes)")
                    arr, targ.original = nz_args.present(arr)
                tensors.append((targ, arr))
            else:
                seen_const = True
                consts.append((pname, value))
        return tensors, consts

    def _check(self, targ: _TensorArg, arr: np.ndarray):
        what = f"argument '{targ.name}'"
        ann = targ.ann
        declared = None if ann is None or ann.ann_dims is None or ann.ann_dims == [Ellipsis] else ann.ann_dims
        want = ann.ann_dtype if ann is not None else None
        if want is not None:
            ok = arr.dtype == want.np_dtype or (want.kind == "bool" and arr.dtype == np.bool_)
            ok = ok or (targ.fp4_arg is not None and arr.dtype == np.uint8)  # FP4 codes (packed_fp4.py)
            if not ok:
                found = dt.from_numpy(arr.dtype)
                raise KernelLaunchError(f"{what}: expected dtype {want.name}, got "
                                        f"{found.name if found else arr.dtype} (the argument does not match the "
                                        f"dtype of its annotation)", kernel=self.name)
        if dt.from_numpy(arr.dtype) is None:
            raise KernelLaunchError(f"{what}: unsupported dtype {arr.dtype}", kernel=self.name)
        element_strides(arr, what, self.name)
        if declared is None:
            return [("S", d) for d in arr.shape]
        if declared[-1] is Ellipsis:
            if arr.ndim < len(declared) - 1:
                raise KernelLaunchError(f"{what}: expected at least {len(declared) - 1} dims, got shape "
                                        f"{list(arr.shape)}", kernel=self.name)
            declared = declared[:-1] + [STATIC] * (arr.ndim - len(declared) + 1)
        elif arr.ndim > len(declared) and is_status_shape(declared):
            # officially a shape of STATIC/DYNAMIC markers (and ints) sets a minimum rank: it describes the
            # leading dims and any further dims are static, as after a trailing `...`
            declared = declared + [STATIC] * (arr.ndim - len(declared))
        if arr.ndim != len(declared):
            raise KernelLaunchError(f"{what}: expected a {len(declared)}-D tensor {declared_str(declared)}, got shape "
                                    f"{list(arr.shape)} (the argument does not match the shape of its annotation)",
                                    kernel=self.name)
        spec = []
        for i, d in enumerate(declared):
            if isinstance(d, int):
                if arr.shape[i] != d:
                    raise KernelLaunchError(f"{what}: dim {i} must be {d} (shape {declared_str(declared)}), got shape "
                                            f"{list(arr.shape)} (the argument does not match the shape of its "
                                            f"annotation)", kernel=self.name)
                spec.append(("S", d))
            elif d is DYNAMIC:
                spec.append(("D", None))
            elif is_named_dim(d):
                spec.append(("N", d))
            else:
                spec.append(("S", arr.shape[i]))
        return spec

    # ------------------------------------------------------------------ options / backend
    def options(self) -> Dict[str, Dict[str, Any]]:
        """The effective options (globals overridden by the decorator's), cached until globals change."""
        return self._options()[0]

    def _options(self):
        version, options, frozen = self._opts
        if version != opt.version():
            options = opt.effective(self.local)
            frozen = opt.cache_key(options)
            self._opts = (opt.version(), options, frozen)
        return options, frozen

    def backend(self, options) -> Optional[str]:
        """The backend requested by ``backend=`` / ``run_mode`` (None: the default selection)."""
        mode = options["runtime"]["run_mode"]
        from_mode = opt.RUN_MODE_BACKENDS[mode] if mode is not None else None
        if self.backend_request and from_mode and self.backend_request != from_mode:
            raise ValueError(f"backend={self.backend_request!r} contradicts runtime_options run_mode={mode!r}")
        request = self.backend_request or from_mode
        select_backend(request)  # validates the name
        # an explicit "cpu" request is strict; the default cpu backend falls back to the interpreter
        # for kernels it cannot emit (the tile runtime's documented rule)
        return request

    # ------------------------------------------------------------------ compile
    def _compile(self, tensors, specs, consts, options) -> Compiled:
        if os.environ.get("PYPTO_ENABLE_KERNEL_BUNDLE") == "1":
            from pypto_pro.npu import NpuOnlyFacilityError

            raise NpuOnlyFacilityError("the kernel bundle (PYPTO_ENABLE_KERNEL_BUNDLE=1: NPU device binaries packed "
                                       "into a .pyptokb for the C launch ABI)",
                                       "unset PYPTO_ENABLE_KERNEL_BUNDLE to run the kernel on this machine")
        t0 = time.perf_counter()
        host = options["host"]
        session = Session(self.name)
        params: List[Buffer] = []
        dyn_vars = []
        for (targ, arr), spec in zip(tensors, specs):
            shape = []
            for axis, (kind, value) in enumerate(spec):
                if kind == "S":
                    shape.append(value)
                elif kind == "N":  # a named dim: one Var for every axis annotated with it
                    dyn_vars.append((targ.index, axis, value.expr))
                    shape.append(value)
                else:
                    from pypto_pro.ir import nodes as ir

                    var = ir.Var(f"{targ.name}_dim{axis}", dt.DT_INT64)
                    dyn_vars.append((targ.index, axis, var))
                    shape.append(SymbolicScalar(var))
            dtype = targ.ann.ann_dtype if targ.fp4_arg is not None else dt.from_numpy(arr.dtype)
            params.append(Buffer(targ.name, dtype, tuple(shape), "param", index=targ.index))

        formats = [targ.format for targ, _ in tensors]

        def make_args():
            args: List[Any] = [Tensor(name=b.name, format=f, _node=full_leaf(b))  # t.name: the parameter's
                               for b, f in zip(params, formats)]
            return args + [v for _, v in consts], {}

        session.loop_rejects = check_loop_bodies(self.fn, self.name)
        graph = record(self.fn, session, make_args, params)
        stage_log.recorded(self.name, graph, time.perf_counter() - t0)
        self._monitor(host, "tensor graph", t0)
        debug = options["debug"]
        stage = host["compile_stage"]
        program = None
        if stage != opt.CompStage.TENSOR_GRAPH:
            t1 = time.perf_counter()
            program = LoweredProgram(graph, self.name, resolve_arch(self.arch_request))
            stage_log.lowered(self.name, program, time.perf_counter() - t1)
            self._monitor(host, "tile program", t0)
            if debug["compile_debug_mode"] == 1:  # 2 fixes the NPU's CCE output path: nothing to do here
                print(program.text())
        if debug["dump_pass_graph"]:
            self._dump(graph, program)
        if host["compile_timeout"] and time.perf_counter() - t0 > host["compile_timeout"]:
            raise KernelError(f"compilation took longer than compile_timeout={host['compile_timeout']} s",
                              kernel=self.name)
        self.compile_count += 1
        return Compiled(graph, program, dyn_vars, session)

    def _monitor(self, host, stage: str, t0: float) -> None:
        if host["compile_monitor_enable"]:
            print(f"[pypto] {self.name}: {stage} ready after {time.perf_counter() - t0:.3f} s", file=sys.stderr)

    def _dump(self, graph: Graph, program: Optional[LoweredProgram]) -> None:
        root = os.path.join(os.environ.get("PYPTO_BUILD_DIR", "build"), f"{self.name}__tensor")
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "graph.txt"), "w") as f:
            f.write(format_graph(graph) + "\n")
        if program is not None:
            with open(os.path.join(root, "lowered.txt"), "w") as f:
                f.write(program.text() + "\n")

    def compiled(self, *args, **kwargs) -> Compiled:
        """The cache entry these arguments select (compiling it if needed)."""
        tensors, consts = self._bind(args, kwargs)
        return self._entry(tensors, consts)

    def _entry(self, tensors, consts) -> Compiled:
        specs = [self._check(t, a) for t, a in tensors]
        options, frozen = self._options()
        key = (tuple((a.dtype.str, tuple(s), t.format) for (t, a), s in zip(tensors, specs)),
               tuple((n, _const_key(v)) for n, v in consts), frozen, resolve_arch(self.arch_request).name,
               TILE_SHAPES.key())
        entry = self.cache.get(key)
        if entry is None:
            with self._lock:
                entry = self.cache.get(key)
                if entry is None:
                    entry = self._compile(tensors, specs, consts, options)
                    self.cache[key] = entry
        return entry

    # ------------------------------------------------------------------ call
    def __call__(self, *args, **kwargs) -> None:
        try:
            return self._call(args, kwargs)
        except KernelRuntimeError as e:  # the backends speak tile level: say it in tensor-level terms
            temps = {b.name for c in list(self.cache.values()) if c.program is not None
                     for b in c.program.buffers if b.kind == "temp"}
            raise speak_tensor_level(e, temps) from None

    def _call(self, args, kwargs) -> None:
        if _capture.capturing and _capture.active() is not None:  # inside a graph capture (torch.npu.graph): run at replay
            _capture.active().record(self, args, kwargs)
            return None
        fast_key = None
        if not kwargs:
            key = call_key(args)
            if key is not None:
                fast_key = (opt.version(), launch_environment(), key)
                fast = self._fast.get(fast_key)
                if fast and fast(args):
                    self.last_report = None
                    return None
        options = self.options()
        backend = self.backend(options)
        tensors, consts = self._bind(args, kwargs)
        entry = self._entry(tensors, consts)
        if entry.program is None or options["host"]["compile_stage"] != opt.CompStage.ALL_COMPLETE:
            return None
        user = {t.index: a for t, a in tensors}
        dyn = self._dim_values(entry, user)
        self._check_dim_agreements(entry, dyn)
        if options["debug"]["runtime_debug_mode"] == 4:
            self._check_assumptions(entry, dyn)
        self._check_workspace(entry.program, user, dyn, options)
        if options["verify"]["enable_pass_verify"]:
            from .verify import verify_run

            self.last_report = verify_run(self, entry, user, dyn, backend, options["verify"])
            nz_args.write_back([(a, t.original) for t, a in tensors if t.original is not None])
            return None
        self.last_report = entry.program.run(user, dyn, backend)
        nz_args.write_back([(a, t.original) for t, a in tensors if t.original is not None])
        fp4 = [(t.fp4_arg, a) for t, a in tensors if t.fp4_arg is not None]
        for arg, codes in fp4:
            packed_fp4.write_back(arg, codes)
        if options["runtime"]["run_mode"] == opt.RunMode.SIM:
            record_sim_launch(self.name, self.last_report)
        if fast_key is not None and fast_key not in self._fast:
            with self._lock:
                if len(self._fast) > 256:
                    self._fast.clear()
                # a frozen launch binds the arguments as given: not FP4 ones, whose codes are unpacked here
                self._fast[fast_key] = False if fp4 else self._freeze(entry.program, backend, user, dyn)
        return None

    def _freeze(self, program: LoweredProgram, backend: Optional[str], user, dyn):
        """The selected backend's repeater of this call (``frozen_call`` of the backend protocol; False
        where the call ran elsewhere or cannot be repeated so: a backend that does not prepare kernels or
        has no repeater, the interpreter fallback of a kernel the backend cannot build, or a kernel the
        backend does not relaunch frozen, such as a communicating one)."""
        name = select_backend(backend)
        prepared = backends.prepare_relaunch(name, program.kernel)
        if prepared is None:
            return False
        arrays = program.bind(user, dyn)
        return freeze(name, prepared, program, arrays, program._values, program.blocks(name, arrays)) or False

    def _dim_values(self, entry: Compiled, user: Dict[int, np.ndarray]) -> Dict[int, int]:
        """Var uid -> run-time size of every DYNAMIC axis; the axes annotated with one named dim must
        agree."""
        dyn: Dict[int, int] = {}
        for i, axis, var in entry.dyn_vars:
            size = int(user[i].shape[axis])
            if dyn.setdefault(var.uid, size) != size:
                raise KernelLaunchError(f"dynamic dim '{var.name}' is {dyn[var.uid]} on one argument but {size} on "
                                        f"axis {axis} of argument {i}", kernel=self.name)
        return dyn

    def _check_dim_agreements(self, entry: Compiled, dyn: Dict[int, int]) -> None:
        """Dims known only at run time that an op takes to be equal (element-wise operands, where
        torch would broadcast or fail) are equal for this launch's sizes; ``KernelRuntimeError`` at
        the op's line otherwise.  Dims of loop indices are decided inside the kernel and not checked."""
        from ..lower.program import eval_expr

        for x, y, what, axis, loc in entry.dim_agreements:
            try:
                vx, vy = (e if isinstance(e, int) else int(eval_expr(e, dyn)) for e in (x, y))
            except (KeyError, TypeError):
                continue
            if vx != vy:
                raise KernelRuntimeError(
                    f"{what}: axis {axis} is {vx} on one side and {vy} on the other at run time; dims known only "
                    f"at run time (DYNAMIC) that meet there must be equal (broadcasting needs a dim fixed to 1 "
                    f"when the kernel is written): pass tensors of matching sizes, or take a view of the longer "
                    f"one", loc=loc, kernel=self.name)

    def _check_assumptions(self, entry: Compiled, dyn: Dict[int, int]) -> None:
        """``runtime_debug_mode=4``: every ``pypto.experimental.assume_divisible(expr, d)`` of the kernel
        holds for this launch's sizes (``KernelRuntimeError`` otherwise)."""
        from ..lower.program import eval_expr

        for expr, divisor in entry.assumptions:
            try:
                value = int(eval_expr(expr, dyn))
            except (KeyError, TypeError):
                raise NotImplementedError("runtime_debug_mode=4 check of pypto.experimental.assume_divisible on an "
                                          "expression of loop indices (only sizes are checked, at launch)") from None
            if value % divisor:
                raise KernelRuntimeError(f"pypto.experimental.assume_divisible: {value} is not a multiple of {divisor}",
                                         kernel=self.name)

    def _check_workspace(self, program: LoweredProgram, user, dyn, options) -> None:
        limit = options["runtime"]["max_workspace_kb"]
        if not limit:
            return
        arrays = program.bind(user, dyn)
        used = sum(a.nbytes for p, a in zip(program.buffers, arrays.values()) if p.kind == "temp")
        if used > limit * 1024:
            raise KernelLaunchError(f"the workspace needs {used} bytes, more than max_workspace_kb={limit}",
                                    kernel=self.name)

    def lowered_text(self, *args, **kwargs) -> str:
        """The lowered tile program (``pypto_pro.ir.printer.format_kernel``) for these example arguments,
        or for the only compiled variant when called without arguments."""
        if args or kwargs:
            entry = self.compiled(*args, **kwargs)
        elif len(self.cache) == 1:
            entry = next(iter(self.cache.values()))
        else:
            raise KernelLaunchError("pass example arguments to select a variant", kernel=self.name)
        if entry.program is None:
            raise KernelLaunchError("compile_stage stopped before lowering", kernel=self.name)
        return entry.program.text()

    def graph_text(self, *args, **kwargs) -> str:
        """The recorded tensor graph for these example arguments."""
        return format_graph(self.compiled(*args, **kwargs).graph)


def _const_key(v):
    if isinstance(v, (list, tuple)):
        return tuple(_const_key(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _const_key(x)) for k, x in v.items()))
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return (type(v).__name__, id(v))


def jit(func: Optional[Callable] = None, *, host_options=None, codegen_options=None, pass_options=None,
        runtime_options=None, verify_options=None, debug_options=None, new_ir: bool = True,
        create_new_logical_tensor: bool = False, backend: Optional[str] = None, arch=None):
    """``@pypto.frontend.jit`` or ``@pypto.frontend.jit(runtime_options={...}, backend="interp", ...)``."""
    groups = {"host": host_options, "codegen": codegen_options, "pass": pass_options, "runtime": runtime_options,
              "verify": verify_options, "debug": debug_options}
    if create_new_logical_tensor:
        # how the official IR represents a slice assignment (a new logical tensor per assemble, or
        # the assembled one updated): a compiler representation choice, results are the same
        opt.note_knob("jit", "create_new_logical_tensor", True)
    groups = {g: v for g, v in groups.items() if v}

    def wrap(fn: Callable) -> JitFunction:
        if not callable(fn):
            raise TypeError("@pypto.frontend.jit decorates a function")
        jf = JitFunction(fn, groups, backend=backend, arch=arch)
        jf.create_new_logical_tensor = bool(create_new_logical_tensor)  # recorded, no effect
        return jf

    return wrap(func) if func is not None else wrap
