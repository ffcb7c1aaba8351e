"""``import torch_npu`` under the pypto CPU stand-in: activates :mod:`pypto_pro.npu` and becomes it."""
import sys

import pypto_pro.npu as _npu

_npu.install()
sys.modules[__name__] = sys.modules["pypto_pro.npu.torch_npu_module"]
