"""The six option groups of ``@pypto.frontend.jit`` and their process-wide defaults.

Every documented key is listed here with its default and a status:

* ``honoured`` — the key changes what we do (see docs/tensor.md for each meaning);
* ``npu-knob`` — the key tunes NPU scheduling/codegen (graph slicing and merging, buffer counts,
  AICPU scheduling, profiling) and cannot change results: any valid value is accepted and recorded
  (``get_<group>_options`` reports it), the first non-default value of each key is logged once at
  INFO on the ``pypto`` logger, and it has no effect here.

Unknown keys and ill-typed values raise ``ValueError``.
"""
from __future__ import annotations

import enum
import functools
import logging
from typing import Any, Callable, Dict, Optional, Tuple
from . import state


class RunMode(enum.IntEnum):
    """``runtime_options["run_mode"]``: NPU (0) runs on the execution backend, SIM (1) on the simulator."""

    NPU = 0
    SIM = 1


class CompStage(enum.IntEnum):
    """``host_options["compile_stage"]``: where compilation stops (everything but ALL_COMPLETE skips the run)."""

    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5  # the NPU binary: here, like CODEGEN_INSTRUCTION, the lowered program (nothing runs)


def _int_in(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _is_bool(v) -> bool:
    return isinstance(v, bool) or v in (0, 1)


def _pass_names(v) -> bool:
    """``dump_pass_graph``: a list of pass identifiers (officially), or a bool (all passes or none)."""
    return isinstance(v, bool) or (isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v))


def _pos_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def _non_negative(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def _any(v) -> bool:
    return True


#: ``run_mode`` -> the backend it selects (None: the default selection; NPU runs on the execution backend).
#: Backend *selection* only: what a backend does is its own business (pypto_pro/backends/__init__.py).
RUN_MODE_BACKENDS = {0: None, "npu": None, 1: "sim", "sim": "sim", "interp": "interp", "cpu": "cpu"}


def _run_mode(v) -> bool:
    try:
        return v in RUN_MODE_BACKENDS
    except TypeError:  # unhashable
        return False


def _stage(v) -> bool:
    return v in tuple(CompStage)


def _int_like(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _merge_setting(v) -> bool:
    """``{key: count}`` of the graph-merging knobs: int keys (-2, -1, 0, ...) or names ("DEFAULT",
    "func12_0"); counts are ints or, for cube_l1_reuse_setting, ``(count, "left"|"right"|"auto")``."""
    if not isinstance(v, dict):
        return False
    for key, value in v.items():
        if not (_int_like(key) or isinstance(key, str)):
            return False
        if isinstance(value, (tuple, list)):
            if len(value) != 2 or value[1] not in ("left", "right", "auto"):
                return False
            value = value[0]
        if not _int_like(value):
            return False
    return True


def _scope(v) -> bool:
    """``sg_set_scope``: a scope id, or ``(scope id, allow_parallel_merge, allow_cross_scope_merge)``."""
    if isinstance(v, (tuple, list)):
        return len(v) == 3 and _int_like(v[0]) and all(isinstance(b, bool) for b in v[1:])
    return _int_like(v)


def _int_list(v) -> bool:
    return isinstance(v, (list, tuple)) and all(_int_like(x) for x in v)


# group -> key -> (default, validator, status)
SPEC: Dict[str, Dict[str, Tuple[Any, Callable[[Any], bool], str]]] = {
    "host": {
        "compile_stage": (CompStage.ALL_COMPLETE, _stage, "honoured"),
        "compile_monitor_enable": (0, _int_in(0, 2), "honoured"),
        "compile_timeout": (600, _non_negative, "honoured"),  # 0: no limit (the official page)
        "compile_timeout_stage": (0, _non_negative, "npu-knob"),
        "compile_monitor_print_interval": (60, _pos_number, "npu-knob"),
    },
    "codegen": {
        "support_dynamic_aligned": (False, _is_bool, "honoured"),
        "enable_pmu_trace": (False, _is_bool, "npu-knob"),
    },
    "pass": {
        "vec_nbuffer_setting": ({}, _merge_setting, "npu-knob"),
        "cube_l1_reuse_setting": ({}, _merge_setting, "npu-knob"),
        "cube_nbuffer_setting": ({"DEFAULT": 1}, _merge_setting, "npu-knob"),
        "sg_set_scope": ((-1, False, False), _scope, "npu-knob"),
        "auto_mix_partition": (False, lambda v: _is_bool(v) or _int_like(v), "npu-knob"),
        "sg_set_ooo_scope": (-1, lambda v: v == -1 or _int_in(1, 1 << 20)(v), "npu-knob"),
        "ooo_sched_mode": ("", lambda v: v in ("", "GAPMIN", "HLF", 0), "npu-knob"),
        "sg_set_tunevf_mode": (0, _int_in(0, 2), "npu-knob"),
        "enable_slice": (False, lambda v: isinstance(v, bool), "npu-knob"),
    },
    "runtime": {
        "run_mode": (None, _run_mode, "honoured"),
        "device_sched_mode": (0, _int_in(0, 3), "npu-knob"),
        "stitch_function_max_num": (128, _int_in(1, 1 << 20), "npu-knob"),
        "max_workspace_kb": (0, _int_in(0, 1 << 40), "honoured"),
        "valid_shape_optimize": (False, _is_bool, "npu-knob"),
        # the page: a list of input tensor names (ints, parameter positions, are accepted too)
        "ready_on_host_tensors": ([], lambda v: isinstance(v, (list, tuple)) and all(
            isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool)) for x in v), "npu-knob"),
        "device_sched_parallelism": (1, _int_in(1, 8), "npu-knob"),
        "launch_sched_aicpu_num": (7, _int_in(1, 64), "npu-knob"),
        "launch_early_mode": (0, _int_in(0, 2), "npu-knob"),
    },
    "verify": {
        "enable_pass_verify": (False, _is_bool, "honoured"),
        "pass_verify_save_tensor": (False, _is_bool, "honoured"),
        "pass_verify_save_tensor_dir": ("", lambda v: isinstance(v, str), "honoured"),
        "pass_verify_pass_filter": ([], lambda v: isinstance(v, (list, tuple)), "npu-knob"),
        "pass_verify_error_tol": (1e-3, lambda v: _pos_number(v) or (isinstance(v, (list, tuple)) and len(v) == 2),
                                  "honoured"),
    },
    "debug": {
        "compile_debug_mode": (0, _int_in(0, 2), "honoured"),
        "runtime_debug_mode": (0, _int_in(0, 4), "honoured"),
        "dump_pass_graph": ([], _pass_names, "honoured"),
    },
}

GROUPS = tuple(SPEC)
#: the process-wide option scopes live in state.py: the global one and the root one under it
#: (``pypto.pypto_impl.SetGlobalConfig``, kept by ``reset_options``)
_GLOBAL: Dict[str, Dict[str, Any]] = state.GLOBAL_OPTIONS
_ROOT: Dict[str, Dict[str, Any]] = state.ROOT_OPTIONS
for _g in GROUPS:
    _GLOBAL.setdefault(_g, {})
    _ROOT.setdefault(_g, {})


def validate(group: str, options: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Check ``options`` of one group; returns a copy.  Raises ValueError / NotImplementedError."""
    if group not in SPEC:
        raise ValueError(f"unknown option group {group!r}; expected one of {', '.join(GROUPS)}")
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"{group}_options must be a dict, got {type(options).__name__}")
    spec = SPEC[group]
    for key, value in options.items():
        if key not in spec:
            raise ValueError(f"{group}_options: unknown key {key!r}; known keys: {', '.join(spec)}")
        default, ok, status = spec[key]
        if not ok(value):
            raise ValueError(f"{group}_options[{key!r}] = {value!r} is not a valid value")
        if status == "npu-knob" and not _same_value(value, default):
            note_knob(group, key, value)
    return dict(options)


_NOTED: set = state.NOTED_KNOBS
_LOG = logging.getLogger("pypto")


def note_knob(group: str, key: str, value: Any) -> None:
    """Log (once per key) that an NPU tuning knob was set: it is recorded and has no effect here."""
    if (group, key) in _NOTED:
        return
    _NOTED.add((group, key))
    _LOG.info("%s_options[%r] = %r: an NPU scheduling/codegen knob that cannot change results; recorded "
              "(the options getter reports it), no effect on this implementation", group, key, value)


def _same_value(value, default) -> bool:
    """``value`` is ``default`` (a list and a tuple of the same items count as equal)."""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return value == default


_version = state.OPTIONS_VERSION


def version() -> int:
    """A counter bumped by every change of the process-wide options (lets callers cache ``effective``)."""
    return _version[0]


def bump_version() -> None:
    """Another process-wide setting changed (tile shapes set outside a kernel): frozen launches made
    under the old settings are not reused."""
    _version[0] += 1


def set_options(group: str, **kwargs) -> None:
    """Update the process-wide defaults of one group (validated)."""
    _GLOBAL[group].update(validate(group, kwargs))
    _version[0] += 1


def get_options(group: str) -> Dict[str, Any]:
    """The effective process-wide values of one group (defaults filled in)."""
    glob, root = _GLOBAL[group], _ROOT[group]
    out = {k: glob[k] if k in glob else root.get(k, spec[0]) for k, spec in SPEC[group].items()}
    return {k: list(v) if isinstance(v, list) else v for k, v in out.items()}  # a caller's edit stays its own


def set_root_options(config: Dict[str, Any]) -> None:
    """``{"<group>.<key>": value}`` into the root scope, which ``reset_options`` keeps (the official
    ``pypto_impl.SetGlobalConfig``; its test conftest sets ``pass.enable_slice`` there)."""
    if not isinstance(config, dict):
        raise ValueError(f"SetGlobalConfig takes a dict of '<group>.<key>': value, got {type(config).__name__}")
    for name, value in config.items():
        group, _, key = str(name).partition(".")
        if group not in SPEC or not key:
            raise ValueError(f"SetGlobalConfig: {name!r} is not '<group>.<key>' with a group among {', '.join(GROUPS)}")
        _ROOT[group].update(validate(group, {key: value}))
    _version[0] += 1


def reset_options() -> None:
    """Forget every ``set_*_options`` call, the tile shapes set outside kernels and the pass switches."""
    from .experimental import reset as reset_experimental
    from .frontend.control import TILE_SHAPES
    from .pass_config import reset as reset_pass_config

    for g in GROUPS:
        _GLOBAL[g].clear()
    TILE_SHAPES.reset()
    reset_experimental()
    reset_pass_config()
    _version[0] += 1


def effective(local: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Global values overridden by a jit's own options, per group."""
    out = {}
    for g in GROUPS:
        merged = get_options(g)
        merged.update(local.get(g, {}))
        out[g] = merged
    return out


def cache_key(options: Dict[str, Dict[str, Any]]) -> Any:
    """The options that can change a compiled kernel, hashable (NPU knobs have no effect: left out)."""
    return freeze({g: {k: v for k, v in values.items() if SPEC[g][k][2] != "npu-knob"}
                   for g, values in options.items()})


def freeze(value) -> Any:
    """A hashable form of an option value (for cache keys)."""
    if isinstance(value, dict):
        return tuple(sorted(((k, freeze(v)) for k, v in value.items()), key=lambda kv: repr(kv[0])))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def _setter(group: str):
    def setter(**kwargs) -> None:
        set_options(group, **kwargs)

    setter.__name__ = f"set_{group}_options"
    setter.__doc__ = f"``pypto.set_{group}_options(**kw)``: process-wide {group} options (see pypto.options.SPEC)."
    return setter


def _getter(group: str):
    def getter() -> Dict[str, Any]:
        return get_options(group)

    getter.__name__ = f"get_{group}_options"
    getter.__doc__ = f"``pypto.get_{group}_options()``: the effective process-wide {group} options."
    return getter


set_host_options, get_host_options = _setter("host"), _getter("host")
set_codegen_options, get_codegen_options = _setter("codegen"), _getter("codegen")
set_pass_options, get_pass_options = _setter("pass"), _getter("pass")
set_runtime_options, get_runtime_options = _setter("runtime"), _getter("runtime")
set_verify_options, get_verify_options = _setter("verify"), _getter("verify")
set_debug_options, get_debug_options = _setter("debug"), _getter("debug")


def set_global_options(**groups: Dict[str, Any]) -> None:
    """``pypto.set_options(runtime_options={...}, ...)``."""
    for name, value in groups.items():
        if not name.endswith("_options"):
            raise ValueError(f"pypto.set_options takes <group>_options=dict arguments, got {name!r}")
        set_options(name[: -len("_options")], **(value or {}))


class scoped_options:
    """``@pypto.options(pass_options={...}, ...)`` on a function (the official tests decorate theirs) or
    ``with pypto.options(...):``: a scope.  The named groups take these values while the function or
    block runs; when it ends every option group and the tile shapes set outside kernels are restored,
    including what ``set_*_options`` / ``set_*_tile_shapes`` changed inside it.  Validated like
    ``set_options``."""

    def __init__(self, name: str = "", **groups: Dict[str, Any]):
        if not isinstance(name, str):
            raise ValueError(f"pypto.options: name must be a str, got {name!r}")
        self.name = name  # the official scope's label (it names the scope in option dumps)
        self.groups = {}
        for kw, value in groups.items():
            if kw == "operation_options":
                raise NotImplementedError("pypto.options(operation_options=...): use "
                                          "pypto.experimental.set_operation_options")
            if kw in ("vec_tile_shapes", "cube_tile_shapes", "conv_tile_shapes", "matrix_size"):
                raise NotImplementedError(f"pypto.options({kw}=...): call pypto.set_{kw}(...) instead")
            if not kw.endswith("_options") or kw[: -len("_options")] not in SPEC:
                raise ValueError(f"pypto.options takes <group>_options=dict arguments "
                                 f"({', '.join(g + '_options' for g in GROUPS)}), got {kw!r}")
            group = kw[: -len("_options")]
            self.groups[group] = validate(group, value)
        self._saved: list = []

    def __enter__(self) -> "scoped_options":
        # a scope, as officially: whatever is set inside it (these groups, set_*_options calls, tile
        # shapes set outside kernels) is undone when it ends
        from .frontend.control import TILE_SHAPES

        self._saved.append(({g: dict(_GLOBAL[g]) for g in GROUPS}, dict(vars(TILE_SHAPES))))
        for g, values in self.groups.items():
            _GLOBAL[g].update(values)
        _version[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        from .frontend.control import TILE_SHAPES

        groups, tiles = self._saved.pop()
        for g, values in groups.items():
            _GLOBAL[g].clear()
            _GLOBAL[g].update(values)
        vars(TILE_SHAPES).update(tiles)
        _version[0] += 1

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def with_options(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return with_options

