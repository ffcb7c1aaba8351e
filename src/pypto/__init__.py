"""PyPTO tensor level (``import pypto``): record-mode kernels lowered into the tile IR of
``pypto_pro`` and run on its backends (see docs/tensor.md)."""
from pypto_pro import errors as _errors
from pypto_pro.dtypes import (DT_BF16, DT_BOOL, DT_FP8, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP16, DT_FP32,  # noqa: F401
                              DT_HF4, DT_HF8, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16,
                              DT_UINT32, DT_UINT64, DataType)
from pypto_pro.errors import (KernelDeadlockError, KernelError, KernelLaunchError, KernelMemoryError,  # noqa: F401
                              KernelRaceError, KernelRuntimeError, KernelSyntaxError, KernelTypeError,
                              KernelUninitError, KernelValueError)
from pypto_pro.dtypes import DT_FP4E1M2 as DT_FP4_E1M2X2  # noqa: F401 (the official packed-pair names)
from pypto_pro.dtypes import DT_DOUBLE, DT_FP4E2M1, DT_FP8E8M0  # noqa: F401
from pypto_pro.dtypes import DT_FP4E2M1 as DT_FP4_E2M1X2  # noqa: F401
from pypto_pro.dtypes import DT_FP8E4M3FN as DT_FP8E4M3  # noqa: F401
from pypto_pro.ir.types import RoundMode as CastMode  # noqa: F401

from . import frontend  # noqa: F401
from . import experimental  # noqa: F401 (pypto.experimental.*)
from . import distributed  # noqa: F401 (pypto.distributed.*: docs/distributed.md)
from .distributed.atomic import AtomicType  # noqa: F401
from .datatype import CachePolicy, LogBaseType, OpType, OutType, ReduceMode, ScatterMode, bytes_of  # noqa: F401
from .element import Element  # noqa: F401
from .frontend.control import (cond, get_conv_tile_shapes, get_convbp_input_tile_shapes,  # noqa: F401
                               get_cube_tile_shapes, get_vec_tile_shapes, is_loop_begin, is_loop_end, loop,
                               loop_unroll, set_conv_tile_shapes, set_convbp_input_tile_shapes,
                               set_cube_tile_shapes, set_matrix_size, set_semantic_label, set_vec_tile_shapes)
from .frontend.graph_function import function  # noqa: F401 (with pypto.function(name, *tensors))
from .frontend.jit import jit  # noqa: F401
from .frontend.verify import set_verify_golden_data  # noqa: F401
from .ops import *  # noqa: F401,F403
from .ops import _NOT_IMPLEMENTED
from .options import (CompStage, RunMode, get_codegen_options, get_debug_options, get_host_options,  # noqa: F401
                      get_pass_options, get_runtime_options, get_verify_options, reset_options,
                      set_codegen_options, set_debug_options, set_host_options, set_pass_options,
                      set_runtime_options, set_verify_options)
from .options import set_global_options as set_options  # noqa: F401
from .options import scoped_options as options  # noqa: F401,E402 (the attribute is the decorator, not the module)
from .converter import from_torch  # noqa: F401
from .pass_config import (PassConfigKey, PassConfigs, get_pass_config, get_pass_configs,  # noqa: F401
                          get_pass_default_config, set_pass_config, set_pass_default_config)
from . import error  # noqa: F401 (pypto.error.FeError ...)
from . import runtime  # noqa: F401 (pypto.runtime._device_run_once_data_from_host ...)
from . import pypto_impl  # noqa: F401 (pypto.pypto_impl.SetGlobalConfig ...)
from . import operation  # noqa: F401 (pypto.operation.op_wrapper)
from . import symbolic_scalar as _symbolic_scalar_module  # noqa: F401 (loaded before the alias below)
from . import platform as _platform_module  # noqa: F401 (loaded before the object below)
from .platform import platform  # noqa: F401,E402 (pypto.platform.npuarch; the attribute is the object)
from .symbolic import SymbolicScalar  # noqa: F401
from .symbolic import SymbolicScalar as symbolic_scalar  # noqa: F401 (the official alias; the module keeps SymInt)
from .symbolic_scalar import SymInt, ceildiv  # noqa: F401
from .symbolic import sym_max as max  # noqa: F401,A001
from .symbolic import sym_min as min  # noqa: F401,A001
from .tensor import DYN, DYNAMIC, STATIC, Tensor, TileOpFormat  # noqa: F401
from . import cache_policy  # noqa: F401  (Tensor.set_cache_policy)

from . import ops as _ops

greater = gt  # noqa: F405 (the official name of the comparison)
# pypto.DataType.DT_FP32 ...: the official enum spelling of the dtype names
for _name, _value in list(globals().items()):
    if _name.startswith("DT_") and isinstance(_value, DataType) and not hasattr(DataType, _name):
        setattr(DataType, _name, _value)
for _name, _value in (("DT_FP4_E2M1", DT_FP4_E2M1X2), ("DT_FP4_E1M2", DT_FP4_E1M2X2)):
    if not hasattr(DataType, _name):
        setattr(DataType, _name, _value)

for _name in _NOT_IMPLEMENTED:
    globals()[_name] = getattr(_ops, _name)

__all__ = [n for n in dir() if not n.startswith("_")] + list(_errors.__all__ if hasattr(_errors, "__all__") else [])
