"""``pypto.runtime``: running the program built with ``with pypto.function(...)`` on host data.

* ``_device_init()`` starts a new program (the functions recorded before are forgotten);
* ``_device_run_once_data_from_host(*tensors)`` runs the last recorded function once, its
  parameters bound in order to ``tensors`` (``pypto.from_torch`` results, or torch tensors / numpy
  arrays; a contiguous tensor with the element count of a fixed-shape parameter is seen in the
  parameter's shape, as the device sees the host bytes).  The kernel reads and writes their memory directly, so outputs appear in the torch
  tensors, as on the NPU where the data is copied back to the host after the run.  The backend is
  the one ``runtime_options["run_mode"]`` selects (``$PYPTO_BACKEND`` by default);
* ``_device_synchronize()`` returns at once (a run finishes before its call returns);
* ``_device_fini()`` ends the program (like ``_device_init``, it forgets the recorded functions).
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelLaunchError
from pypto_pro.runtime.args import as_numpy, element_strides
from pypto_pro.runtime.jit import select_backend

from .options import RUN_MODE_BACKENDS, get_options
from .converter import host_array
from .frontend.graph_function import PROGRAM, RecordedFunction, dim_values
from .options import RunMode  # noqa: F401 (pypto.runtime.RunMode, as officially)
from .frontend import nz_args
from .tensor import Tensor, TileOpFormat


def _device_init() -> None:
    """Start a new program: functions recorded earlier are no longer run."""
    PROGRAM.reset()


def _device_fini() -> None:
    """End the program (forgets its functions)."""
    PROGRAM.reset()


def _device_synchronize() -> None:
    """Every run has finished when its call returns: nothing to wait for."""


def _array(fn: RecordedFunction, i: int, value: Any, pending: list) -> np.ndarray:
    what = f"argument {i} of function '{fn.name}'"
    if isinstance(value, Tensor):
        if value.data is None:
            raise KernelLaunchError(f"{what}: a pypto.Tensor without host data; pass pypto.from_torch(t)",
                                    kernel=fn.name)
        arr = host_array(value, what)
        if value.format == TileOpFormat.TILEOP_NZ:  # the padded runtime shape of an NZ tensor (nz_args.py)
            arr, original = nz_args.present(arr)
            if original is not None:
                pending.append((arr, original))
    else:
        arr = as_numpy(value, what)
    param = fn.params[i]
    if all(isinstance(d, int) for d in param.shape) and arr.shape != tuple(param.shape) and \
            arr.size == int(np.prod(param.shape)) and arr.flags.c_contiguous:
        arr = arr.reshape(param.shape)  # the device sees the host bytes in the declared shape
    ok = arr.dtype == param.dtype.np_dtype or (param.dtype.kind == "bool" and arr.dtype == np.bool_)
    if not ok:
        found = dt.from_numpy(arr.dtype)
        raise KernelLaunchError(f"{what} ('{param.name}'): expected dtype {param.dtype.name}, got "
                                f"{found.name if found else arr.dtype}", kernel=fn.name)
    if arr.ndim != len(param.shape) or any(isinstance(d, int) and d != s for d, s in zip(param.shape, arr.shape)):
        raise KernelLaunchError(f"{what} ('{param.name}'): expected shape "
                                f"{[d if isinstance(d, int) else 'DYNAMIC' for d in param.shape]}, got "
                                f"{list(arr.shape)}", kernel=fn.name)
    element_strides(arr, what, fn.name)
    return arr


def _backend():
    mode = get_options("runtime")["run_mode"]
    request = RUN_MODE_BACKENDS[mode] if mode is not None else None
    select_backend(request)
    return request


def _device_run_once_data_from_host(*tensors: Any):
    """Run the last recorded function once on ``tensors`` (one per parameter, in order)."""
    fn = PROGRAM.last()
    if len(tensors) != len(fn.params):
        raise KernelLaunchError(f"function '{fn.name}' has {len(fn.params)} tensor parameters "
                                f"({', '.join(p.name for p in fn.params)}), got {len(tensors)} tensors",
                                kernel=fn.name)
    pending: list = []
    user: Dict[int, np.ndarray] = {i: _array(fn, i, t, pending) for i, t in enumerate(tensors)}
    report = fn.program.run(user, dim_values(fn, user), _backend())
    nz_args.write_back(pending)
    return report


__all__ = ["_device_init", "_device_fini", "_device_run_once_data_from_host", "_device_synchronize", "RunMode"]
