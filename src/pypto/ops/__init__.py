"""Tensor-level ops (docs/tensor.md "Ops").  Names that exist officially but are not implemented raise
``NotImplementedError`` naming the op."""
from .core import materialize  # noqa: F401
from .creation import arange, full, full_like, ones, ones_like, tensor, zeros, zeros_like  # noqa: F401
from .elementwise import (abs, add, cast, div, eq, exp, ge, gt, le, log, logical_and, logical_not,  # noqa: F401
                          logical_or, lt, maximum, minimum, mul, ne, neg, reciprocal, relu, rsqrt, sqrt, sub, where)
from .elementwise import PrecisionType, SaturationMode, axpy, axpy_  # noqa: F401
from .bitwise import (bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,  # noqa: F401
                      bitwise_xor, ceil_div, gcd)
from .scan import cumprod, cumsum, tril, tril_, triu, triu_  # noqa: F401
from .trig import acos, acosh, asin, asinh, atan, atan2, atanh, cbrt, copysign, cos, signbit, sin, tan  # noqa: F401
from .math import (LReLU, ceil, clip, cosh, erf, erfc, exp2, expand_exp_dif, expm1, floor, floor_div,  # noqa: F401
                   fmod, gelu, hypot, isfinite, isnan, log1p, log2, log10, lrelu, pow, prelu, remainder, round,
                   sigmoid, sign, silu, sinh, swiglu, tanh, trunc)
from .indexing import (gather, index_add, index_add_, index_add__ub, index_add_ub, index_put_,  # noqa: F401
                       index_select, one_hot, scatter, scatter_, scatter_update)
from .matmul import ReLuType, TransMode, bmm, matmul  # noqa: F401
from .reduce import amax, amin, argmax, argmin, layer_norm, mean, prod, rms_norm, softmax, sum, var  # noqa: F401
from .shape import (assemble, atomic_add, clone, concat, deinterleave, expand_clone, fillpad,  # noqa: F401
                    gathermask, getitem, interleave, pack, pad, permute, reshape, setitem, squeeze, transpose,
                    unpack, unsqueeze, view)
from .random import normal, uniform  # noqa: F401
from .sorting import TopKAlgo, argsort, topk  # noqa: F401
from .special import digamma  # noqa: F401
from .quant import dequantize, quant_mx, quantize  # noqa: F401
from .conv import ConvReLuType, conv, conv_backward_input  # noqa: F401
from .scaled_mm import scaled_mm  # noqa: F401
from ..stubs import not_implemented

_NOT_IMPLEMENTED = ("sort32", "mrgsort",
                    # the official verification-data helpers
                    "pass_verify_print", "pass_verify_save")


for _name in _NOT_IMPLEMENTED:
    globals()[_name] = not_implemented(f"pypto.{_name}")
