"""The error classes of docs/contract.md "Errors" that apply before or while a kernel runs.

Every error tied to kernel code must name the kernel file, the line number and show the offending
source line; each offending line below carries a unique ``# E:<tag>`` marker so the test can find
its line number and check that the message quotes it.
"""
import numpy as np
import pytest
import torch

import pypto_pro
import pypto_pro.language as pl
from pypto_pro import (KernelError, KernelLaunchError, KernelMemoryError, KernelRuntimeError, KernelSyntaxError,
                       KernelTypeError)

VEC, MAT, LEFT = pl.MemorySpace.Vec, pl.MemorySpace.Mat, pl.MemorySpace.Left
FP32 = pl.DT_FP32


def marker_line(tag: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# E:{tag}"))


def assert_points_at(err: KernelError, tag: str) -> None:
    text = str(err)
    assert f"test_errors.py:{marker_line(tag)}" in text, text
    assert f"# E:{tag}" in text, text  # the source line itself


def test_errors_are_importable_everywhere_and_form_one_hierarchy():
    assert pypto_pro.KernelError is pl.KernelError is KernelError
    for cls in (KernelSyntaxError, KernelTypeError, KernelMemoryError, KernelLaunchError, KernelRuntimeError,
                pl.KernelDeadlockError, pl.KernelRaceError, pl.KernelUninitError):
        assert issubclass(cls, KernelError)
        assert getattr(pl, cls.__name__) is cls is getattr(pypto_pro, cls.__name__)


# ----------------------------------------------------------------------------------------------
# KernelSyntaxError: constructs a kernel may not use
# ----------------------------------------------------------------------------------------------
@pl.jit
def uses_try(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    try:  # E:try
        pass
    except ValueError:
        pass


@pl.jit
def uses_lambda(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    f = lambda v: v  # noqa: E731  # E:lambda
    f(1)


@pl.jit
def uses_print(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    print("hello")  # E:print


@pl.jit
def tile_operator(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([8, 32], FP32), addr=0)
    b = pl.make_tile(pl.TileType([8, 32], FP32), addr=0x400)
    with pl.section_vector():
        c = a + b  # noqa: F841  # E:tile_op


@pl.jit
def returns_value(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    return 1  # E:return


@pl.jit
def imports(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    import math  # noqa: F401  # E:import


@pl.jit
def constexpr_on_runtime(x: pl.Tensor[[8, 32], pl.DT_FP32], n: int):
    if pl.constexpr(n > 2):  # E:constexpr
        pass


@pl.jit
def for_over_tensor(x: pl.Tensor[[8, 32], pl.DT_FP32], n: int):
    for i in n:  # E:for_runtime
        pass


@pl.jit
def nested_sections(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    with pl.section_vector():
        with pl.section_vector():  # E:nested
            pass


@pl.jit
def break_outside_loop(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    for i in range(2):
        break  # E:break


@pl.jit
def undefined_name(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    y = not_defined_anywhere + 1  # noqa: F821,F841  # E:undefined


@pl.jit
def slices_tensor(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    y = x[0:4, :]  # noqa: F841  # E:tensor_slice


SYNTAX = [(uses_try, "try", "Try"), (uses_lambda, "lambda", "Lambda"), (uses_print, "print", "print"),
          (tile_operator, "tile_op", "on tiles"), (returns_value, "return", "cannot return a value"),
          (imports, "import", "Import"), (constexpr_on_runtime, "constexpr", "compile time"),
          (for_over_tensor, "for_runtime", "pl.range"), (nested_sections, "nested", "nested"),
          (break_outside_loop, "break", "break"), (undefined_name, "undefined", "not defined"),
          (slices_tensor, "tensor_slice", "cannot be sliced")]


@pytest.mark.parametrize("kernel,tag,words", SYNTAX, ids=[t for _, t, _ in SYNTAX])
def test_syntax_errors(kernel, tag, words):
    args = [np.zeros((8, 32), np.float32)] + ([3] if tag in ("constexpr", "for_runtime") else [])
    with pytest.raises(KernelSyntaxError, match=words) as e:
        kernel(*args)
    assert_points_at(e.value, tag)
    assert kernel.name in str(e.value)


def test_missing_annotation_is_a_syntax_error():
    @pl.jit
    def unannotated(x: pl.Tensor[[8, 32], pl.DT_FP32], n):
        pass

    with pytest.raises(KernelSyntaxError, match="'n' needs an annotation"):
        unannotated(np.zeros((8, 32), np.float32), 1)


# ----------------------------------------------------------------------------------------------
# KernelTypeError: operands
# ----------------------------------------------------------------------------------------------
@pl.jit
def type_errors(x: pl.Tensor[[8, 32], pl.DT_FP32], case: pl.DT_INT32):
    f32 = pl.make_tile(pl.TileType([8, 32], FP32), addr=0)
    f16 = pl.make_tile(pl.TileType([8, 32], pl.DT_FP16), addr=0x400)
    big = pl.make_tile(pl.TileType([16, 32], FP32), addr=0x800)
    i32 = pl.make_tile(pl.TileType([8, 32], pl.DT_INT32), addr=0x1000)
    row = pl.make_tile(pl.TileType([8, 1], FP32, layout=pl.DN), addr=0x2000)
    mat = pl.make_tile(pl.TileType([8, 32], FP32, MAT), addr=0)
    left = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, LEFT), addr=0)
    if pl.constexpr(CASE == "dtype"):
        with pl.section_vector():
            pl.add(f32, f32, f16)  # E:dtype
    if pl.constexpr(CASE == "shape"):
        with pl.section_vector():
            pl.add(f32, f32, big)  # E:shape
    if pl.constexpr(CASE == "space"):
        with pl.section_cube():
            pl.add(mat, mat, mat)  # E:space
    if pl.constexpr(CASE == "move_path"):
        with pl.section_vector():
            pl.move(left, f16)  # E:move_path
    if pl.constexpr(CASE == "reduce_shape"):
        with pl.section_vector():
            pl.sum(row, big, big, dim=0)  # E:reduce_shape
    if pl.constexpr(CASE == "load_dtype"):
        with pl.section_vector():
            pl.load(f16, x, [0, 0])  # E:load_dtype
    if pl.constexpr(CASE == "unary_dtype"):
        with pl.section_vector():
            pl.exp(i32, i32)  # E:unary_dtype
    if pl.constexpr(CASE == "cast_odd"):
        with pl.section_vector():
            pl.cast(f16, i32, mode=pl.RoundMode.CAST_ODD)  # E:cast_odd
    if pl.constexpr(CASE == "group_as_tile"):
        g = pl.make_tile_group(type=pl.TileType([8, 32], FP32), addrs=0x4000, depth=2)
        with pl.section_vector():
            pl.add(f32, g, f32)  # E:group_as_tile


CASE = None
TYPE_CASES = {"dtype": "dtype", "shape": "do not broadcast", "space": "must be a Vec tile",
              "move_path": "move", "reduce_shape": "dim=0", "load_dtype": "differs from tensor",
              "unary_dtype": "supported", "cast_odd": "CAST_ODD", "group_as_tile": "tile group"}


@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_type_errors(case, monkeypatch):
    monkeypatch.setitem(globals(), "CASE", case)
    kernel = pl.jit(type_errors.fn)  # a fresh kernel: CASE is read when it compiles
    with pytest.raises(KernelTypeError, match=TYPE_CASES[case]) as e:
        kernel(np.zeros((8, 32), np.float32), 0)
    assert_points_at(e.value, case)


# ----------------------------------------------------------------------------------------------
# KernelMemoryError: capacity and alignment
# ----------------------------------------------------------------------------------------------
@pl.jit
def too_big(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([128, 1024], FP32), addr=0)  # E:capacity


@pl.jit
def beyond_the_end(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([64, 64], FP32), addr=0x3F000)  # E:end


@pl.jit
def misaligned_vec(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 32], FP32), addr=0x10)  # E:vec_align


@pl.jit
def misaligned_left(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, LEFT), addr=0x100)  # E:left_align


@pl.jit
def unaligned_shape(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 3], FP32), addr=0)  # E:shape_align


@pl.jit
def group_overflows(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([64, 256], FP32), addrs=0, depth=4)  # E:group


MEMORY = [(too_big, "capacity", "beyond"), (beyond_the_end, "end", "beyond"),
          (misaligned_vec, "vec_align", "multiple of 32"), (misaligned_left, "left_align", "multiple of 512"),
          (unaligned_shape, "shape_align", "multiple of 32"), (group_overflows, "group", "beyond")]


@pytest.mark.parametrize("kernel,tag,words", MEMORY, ids=[t for _, t, _ in MEMORY])
def test_memory_errors(kernel, tag, words):
    with pytest.raises(KernelMemoryError, match=words) as e:
        kernel(np.zeros((8, 32), np.float32))
    assert_points_at(e.value, tag)


# ----------------------------------------------------------------------------------------------
# KernelLaunchError: arguments
# ----------------------------------------------------------------------------------------------
@pl.jit
def launched(x: pl.Tensor[[8, pl.DYNAMIC], pl.DT_FP32], n: pl.DT_INT8, f: float):
    t = pl.make_tile(pl.TileType([8, 32], FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.store(x, t, [0, 0])


GOOD = np.zeros((8, 32), np.float32)
LAUNCH = {
    "arity": ((GOOD, 1), "expected 3 arguments"),
    "rank": ((np.zeros((8, 32, 1), np.float32), 1, 0.0), "2-D"),
    "fixed_dim": ((np.zeros((9, 32), np.float32), 1, 0.0), "dim 0 must be 8"),
    "dtype": ((np.zeros((8, 32), np.float16), 1, 0.0), "expected dtype FP32"),
    "torch_dtype": ((torch.zeros(8, 32, dtype=torch.float64), 1, 0.0), "expected dtype FP32"),
    "not_a_tensor": (([[0.0] * 32] * 8, 1, 0.0), "torch tensor or numpy array"),
    "device": ((torch.zeros(8, 32, device="meta"), 1, 0.0), "device"),
    "scalar_type": ((GOOD, "1", 0.0), "expected an int"),
    "scalar_range": ((GOOD, 300, 0.0), "does not fit INT8"),
    "float_type": ((GOOD, 1, "x"), "expected a number"),
}


@pytest.mark.parametrize("case", sorted(LAUNCH))
def test_launch_errors(case):
    args, words = LAUNCH[case]
    with pytest.raises(KernelLaunchError, match=words) as e:
        launched(*args)
    assert "launched" in str(e.value)


@pytest.mark.parametrize("block_dim", [0, -2, 1.5, True, "4"])
def test_block_dim_must_be_a_positive_int(block_dim):
    out = np.full((8, 32), 3.0, np.float32)
    with pytest.raises(KernelLaunchError, match="block_dim"):
        launched[None, block_dim](out, 1, 0.0)
    assert np.all(out == 3.0)  # a failed launch leaves outputs untouched


def test_launch_forms_and_ignored_stream():
    out = np.zeros((8, 32), np.float32)
    launched(out, 1, 0.0)
    launched[2](out, 1, 0.0)
    launched[object(), 1](out, 1, 0.0)
    launched[None, 3](out, True, 2)


# ----------------------------------------------------------------------------------------------
# runtime errors
# ----------------------------------------------------------------------------------------------
@pl.jit
def runtime_subview(x: pl.Tensor[[8, 32], pl.DT_FP32], r: int):
    t = pl.make_tile(pl.TileType([8, 32], FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.store(x, t[0:r, 0:32], [0, 0])  # E:subview


def test_runtime_subview_out_of_tile_is_a_runtime_error():
    with pytest.raises(KernelRuntimeError, match="subview") as e:
        runtime_subview(GOOD.copy(), 9)
    assert_points_at(e.value, "subview")


@pl.jit
def bad_validshape(x: pl.Tensor[[8, 32], pl.DT_FP32], r: int):
    t = pl.make_tile(pl.TileType([8, 32], FP32, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [r, 32])  # E:validshape


@pytest.mark.parametrize("rows", [-1, 9])  # 0 rows is an empty window (tests/pro/test_empty_valid_window.py)
def test_runtime_valid_shape_outside_the_tile(rows):
    with pytest.raises(KernelRuntimeError, match="valid shape") as e:
        bad_validshape(GOOD.copy(), rows)
    assert_points_at(e.value, "validshape")


def test_jit_options_not_implemented_or_invalid():
    with pytest.raises(TypeError, match="PipelineConfig"):
        pl.jit(pipeline=object())
    with pytest.raises(TypeError):
        pl.jit(no_such_option=1)


def test_ops_cannot_be_called_outside_a_kernel():
    with pytest.raises(KernelSyntaxError, match="inside a @pl.jit kernel"):
        pl.add(None, None, None)



def test_a_dict_operand_is_an_unsupported_closure_value():
    """A dict (a compile-time lookup table) given as an op operand is refused with the official wording."""
    from pypto_pro.language.parser.diagnostics import ParserTypeError

    def scale_dict(x: pl.Tensor[[8, 8], FP32], y: pl.Tensor[[8, 8], FP32]):
        with pl.section_vector():
            t = pl.make_tile(pl.TileType(shape=[8, 8], dtype=FP32, target_memory=VEC), addr=0)
            pl.load(t, x, [0, 0])
            pl.muls(t, t, {"value": 2.0})  # E:dict

    x = np.zeros((8, 8), np.float32)
    with pytest.raises(ParserTypeError, match="Unsupported closure variable type: dict") as e:
        pl.jit(scale_dict, backend="interp")(x, x.copy())
    assert_points_at(e.value, "dict")
