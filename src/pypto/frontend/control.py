"""Runtime control flow and tiling settings used inside kernels: ``pypto.loop``, ``is_loop_begin/end``,
``pypto.cond``, ``set_vec_tile_shapes``, ``set_cube_tile_shapes``, ``set_matrix_size``, and the
annotations ``set_semantic_label`` / ``with pypto.function(...)``."""
from __future__ import annotations

import ast
import contextlib
import inspect
import linecache
import textwrap
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from pypto_pro.errors import KernelSyntaxError, KernelTypeError, KernelValueError, SourceLoc

from ..graph import Loop
from ..symbolic import SymbolicScalar, is_static, note_loop_range, to_expr
from ..options import bump_version
from .tracer import caller_location, current_recorder, recording
from .carry_rules import is_self_reshape, single_trip
from .trace_only import trace_only_names
from .. import state


def loop(start, stop=None, step=1, *, name: str = "", idx_name: str = "", unroll_list: Optional[Sequence[int]] = None,
         submit_before_loop: bool = False, parallel: bool = False, **hints: Any) -> Iterator[SymbolicScalar]:
    """``for i in pypto.loop(stop)`` / ``pypto.loop(start, stop, step)``: a runtime loop; the body is
    recorded once with a symbolic index.  ``unroll_list``/``parallel`` are scheduling hints (results
    are identical; the loop stays a runtime loop).  Other keywords (``hints``) are ignored, as the
    official ``pypto.loop`` ignores keywords it does not know (an official test spells ``unroll_List``)."""
    if stop is None:
        start, stop = 0, start
    if is_static(step) and step == 0:
        raise KernelTypeError("pypto.loop step must not be 0")
    if unroll_list is not None and not all(is_static(u) and u > 0 for u in unroll_list):
        raise KernelTypeError("pypto.loop unroll_list must hold positive ints")
    rec = current_recorder()
    _reject_unrecordable(rec)
    var = rec.new_var(idx_name or name or "idx")
    note_loop_range(var, start, stop, step)
    lp = Loop(var, to_expr(start), to_expr(stop), to_expr(step), [], name)
    where = caller_location()
    rec.push_loop(lp)
    finished = False
    try:
        if rec.single_run:  # `with pypto.function(...)`: the loop explores its body's runtime ifs itself
            yield from _explore_paths(rec, lp, SymbolicScalar(var))
        else:
            yield SymbolicScalar(var)
        finished = True
    finally:
        rec.pop_loop(lp)
        if not finished:  # the body left early: break, return, or an exception (which propagates anyway)
            rec.left_loop_early(where)


def _explore_paths(rec, lp: Loop, index: SymbolicScalar) -> Iterator[SymbolicScalar]:
    """Run a ``pypto.loop`` body once per outcome of its runtime ``if``s and merge the runs into the
    loop body (how the official graph API records branches; a jit kernel re-runs the whole function
    instead).  Every run starts from the same recorder state: tile shapes, buffer versions, and the
    creation counters that make runtime variables and workspaces the same objects in every run."""
    from .tracer import MAX_PATHS, _merge

    depth = rec.loops[-1][1]
    start = (rec._var_count, rec._temp_count, rec.vec_tile, rec.cube_tile)
    buffers = [b for b in rec.session.temps] + list(getattr(rec, "params", ()))
    versions = [b.version for b in buffers]
    saved = (rec.decisions, rec.made)
    live = set(rec.live.tensors())  # values made by one path are not live in the next
    pending: List[List[bool]] = [[]]
    merged: Optional[List[Any]] = None
    runs = 0
    rec.exploring += 1
    try:
        while pending:
            runs += 1
            if runs > MAX_PATHS:
                raise KernelSyntaxError(f"more than {MAX_PATHS} runtime-branch paths in one pypto.loop body")
            rec.decisions, rec.made = pending.pop(), []
            rec.live.reset(live)
            rec._var_count, rec._temp_count, rec.vec_tile, rec.cube_tile = start
            for b, v in zip(buffers, versions):
                b.version = v
            del rec.stack[depth:]
            lp.body = []
            rec.stack.append(lp.body)
            yield index
            for k in range(len(rec.decisions), len(rec.made)):
                pending.append(rec.made[:k] + [False])
            if merged is None:
                merged = lp.body
            else:
                _merge(merged, lp.body)
        lp.body = merged if merged is not None else []
    finally:
        rec.exploring -= 1
        rec.decisions, rec.made = saved


_LOOP_CALLS = ("loop", "loop_unroll")
_NESTED_SCOPES = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def check_loop_bodies(fn: Callable, kernel: str) -> Dict[Tuple[str, int], KernelSyntaxError]:
    """What a ``for ... in pypto.loop(...)`` body in ``fn``'s source cannot mean when it is recorded
    once: ``break``/``continue`` of that loop (recording would silently keep or drop the rest of the
    body; a break in a helper's loop is caught while recording) and a Python variable carried from one
    iteration to the next (``y = x + y``).  Returns the error of each such loop keyed by the source
    lines (file, line) of its ``for`` statement; :func:`loop` raises it when the loop is recorded, so a
    loop in a branch that Python never takes (``if k < LIMIT: ... else: <that loop>``) is harmless.
    Functions without source are not checked."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return {}
    code = getattr(fn, "__code__", None)
    filename = code.co_filename if code is not None else inspect.getsourcefile(fn) or "<kernel>"
    found: Dict[Tuple[str, int], KernelSyntaxError] = {}
    trace_only = trace_only_names(tree)  # only printed while recording: carrying them changes no result

    def reject(loop_node: ast.AST, node: ast.AST, message: str) -> None:
        line = first + node.lineno - 1
        error = KernelSyntaxError(message, loc=SourceLoc(filename, line, linecache.getline(filename, line)),
                                  kernel=kernel)
        for at in {loop_node.lineno, loop_node.iter.lineno}:
            found.setdefault((filename, first + at - 1), error)

    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)) and _is_pypto_loop(node.iter):
            jump = _first_jump(node.body)
            if jump is not None:
                word = "continue" if isinstance(jump, ast.Continue) else "break"
                reject(node, jump, f"`{word}` inside a pypto.loop body: the body is recorded once and runs as a "
                                   "runtime loop, so it cannot skip or stop iterations (guard the statements with a "
                                   "runtime if on the loop index instead)")
                continue
            assigned = _stored_names(node.body) - _stored_names([node.target]) - trace_only
            carried = None if single_trip(node.iter) else _first_carried(node.body, assigned, set())
            if carried is not None:
                reject(node, carried, f"`{carried.id}` is carried from one pypto.loop iteration to the next (the "
                                      f"body reads it before assigning it): the body is recorded once, so a Python "
                                      f"variable cannot accumulate across iterations; keep the value in a tensor "
                                      f"(`acc[:] = acc + ...`)")
    return found


def _reject_unrecordable(rec) -> None:
    """Raise the :func:`check_loop_bodies` error of the pypto.loop being entered, if it has one."""
    rejects = getattr(rec.session, "loop_rejects", None)
    if not rejects:
        return
    where = caller_location()
    if where is not None and (where.filename, where.lineno) in rejects:
        raise rejects[(where.filename, where.lineno)]


_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
               ast.DictComp, ast.GeneratorExp)


def _names(node: ast.AST, ctx: type) -> List[ast.Name]:
    """The Name nodes of ``ctx`` (Load/Store) in ``node``, in source order, outside nested scopes."""
    out: List[ast.Name] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
            out.append(n)
        if not isinstance(n, _OWN_SCOPES) or n is node:
            todo.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


def _stored_names(stmts: List[ast.AST]) -> set:
    return {n.id for s in stmts for n in _names(s, ast.Store)}


def _first_carried(stmts: List[ast.stmt], assigned: set, written: set) -> Optional[ast.Name]:
    """The first read, in execution order, of a name the loop body assigns but has not assigned yet in
    this iteration: its value comes from the previous iteration.  ``written`` grows as statements run;
    branches each start from the state before them."""
    def read_first(expr: Optional[ast.AST]) -> Optional[ast.Name]:
        if expr is None:
            return None
        return next((n for n in _names(expr, ast.Load) if n.id in assigned and n.id not in written), None)

    for s in stmts:
        if isinstance(s, _OWN_SCOPES):
            continue
        if isinstance(s, (ast.If, ast.While)):
            hit = read_first(s.test)
            # a Python while may carry its own names (carry_rules.py)
            own = _stored_names(s.body) if isinstance(s, ast.While) else set()
            branches = [written | own, set(written)]
            hit = hit or _first_carried(s.body, assigned, branches[0]) or _first_carried(s.orelse, assigned,
                                                                                        branches[1])
            if hit is not None:
                return hit
            written |= branches[0] | branches[1]
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            heads = [s.iter] if isinstance(s, (ast.For, ast.AsyncFor)) else [i.context_expr for i in s.items]
            hit = next((h for h in map(read_first, heads) if h is not None), None)
            if hit is not None:
                return hit
            if isinstance(s, (ast.For, ast.AsyncFor)):
                written |= {n.id for n in _names(s.target, ast.Store)}
                if not _is_pypto_loop(s.iter):  # a Python loop may carry its own names (carry_rules.py)
                    written |= _stored_names(s.body)
            hit = _first_carried(s.body, assigned, written)
            if hit is not None:
                return hit
        elif is_self_reshape(s) is not None:  # x = reshape(x, ...): the same whichever iteration (carry_rules.py)
            written.add(is_self_reshape(s))
        else:
            if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id in assigned \
                    and s.target.id not in written:
                return s.target
            hit = read_first(s)
            if hit is not None:
                return hit
            written |= {n.id for n in _names(s, ast.Store)}
    return None


def _is_pypto_loop(it: ast.expr) -> bool:
    if not isinstance(it, ast.Call):
        return False
    f = it.func
    return (isinstance(f, ast.Attribute) and f.attr in _LOOP_CALLS) or (isinstance(f, ast.Name) and f.id in _LOOP_CALLS)


def _first_jump(stmts: List[ast.stmt]) -> Optional[ast.stmt]:
    """The first break/continue of this loop level (not inside nested loops or functions)."""
    todo: List[ast.AST] = list(stmts)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.Break, ast.Continue)):
            return node
        if not isinstance(node, _NESTED_SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return None


def loop_unroll(start, stop=None, step=1, **kw) -> Iterator[Tuple[SymbolicScalar, int]]:
    """``for idx, factor in pypto.loop_unroll(...)``: like loop, with unroll factor 1."""
    for i in loop(start, stop, step, **{k: v for k, v in kw.items() if k != "unroll_list"}):
        yield i, 1


def _loop_info(i) -> Loop:
    if not isinstance(i, SymbolicScalar):
        raise KernelValueError("is_loop_begin/is_loop_end take the index of a pypto.loop")
    return current_recorder().loop_of(i.expr)


def is_loop_begin(scalar) -> SymbolicScalar:
    """True on the first iteration of the enclosing ``pypto.loop`` with index ``scalar``."""
    lp = _loop_info(scalar)
    return SymbolicScalar(lp.var) == SymbolicScalar(lp.start)


def is_loop_end(scalar) -> SymbolicScalar:
    """True on the last iteration of the enclosing ``pypto.loop`` with index ``scalar``: the next index
    would be past ``stop``, in the direction of the step (a run-time step: whichever its sign)."""
    lp = _loop_info(scalar)
    past = SymbolicScalar(lp.var) + SymbolicScalar(lp.step) - SymbolicScalar(lp.stop)
    if is_static(lp.step):
        return past >= 0 if lp.step > 0 else past <= 0
    return past * SymbolicScalar(lp.step) >= 0


def cond(scalar):
    """``if pypto.cond(expr):``: marks a runtime condition.  A Python ``if`` on a SymbolicScalar is
    already a runtime branch and one on a plain bool/int picks a branch while recording, so this
    returns ``scalar`` after checking its type."""
    if isinstance(scalar, (bool, int, SymbolicScalar)):
        return scalar
    raise KernelTypeError(f"pypto.cond takes a bool, an int or a SymbolicScalar, got {type(scalar).__name__}")


TILE_SHAPES = state.TILE_SHAPES  # tile shapes set outside a kernel (process-wide: state.py)


def set_vec_tile_shapes(*dims: int) -> None:
    """Chunk sizes per dim for the following vector ops (<= 4 positive ints).  Outside a kernel: the
    default for kernels recorded afterwards.  An immediate ``SymbolicScalar`` (``SymbolicScalar(32)``)
    is its int."""
    dims = tuple(d.concrete() if isinstance(d, SymbolicScalar) and d.is_concrete() else d for d in dims)
    if not 1 <= len(dims) <= 8 or not all(is_static(d) and d > 0 for d in dims):
        raise KernelTypeError(f"pypto.set_vec_tile_shapes takes 1 to 8 positive ints, got {list(dims)}")
    TILE_SHAPES.last_vec = tuple(dims)
    if recording():
        current_recorder().vec_tile = tuple(dims)
    else:
        TILE_SHAPES.default_vec = tuple(dims)
        bump_version()


def get_vec_tile_shapes() -> List[int]:
    """The vec tile shapes in scope (outside a kernel: the ones set last); [] when none were set."""
    dims = current_recorder().vec_tile if recording() else TILE_SHAPES.last_vec
    return list(dims or ())


def set_cube_tile_shapes(m: Sequence[int], k: Sequence[int], n: Sequence[int], enable_split_k: bool = False,
                         **kw: Any) -> None:
    """``m=[mL0, mL1], k=[kL0, kL1], n=[nL0, nL1]``: the cube tiles (L0 sizes drive the lowering).
    ``k`` may also be ``[kL0, kL1, kL1b]``, as the official frontend accepts (its third entry, the L1
    K tile of the right matrix, defaults to ``kL1`` there); a multiple of ``kL0`` like ``kL1``, it only
    steers NPU tiling and is recorded.  Outside a kernel: the default for kernels recorded afterwards."""
    for name, v in (("m", m), ("k", k), ("n", n)):
        lengths = (2, 3) if name == "k" else (2,)
        if len(v) not in lengths or not all(is_static(x) and x > 0 for x in v) or v[0] > v[1] \
                or any(x % v[0] for x in v[1:]):
            form = "[L0, L1] or [L0, L1, L1b]" if name == "k" else "[L0, L1]"
            raise KernelTypeError(f"pypto.set_cube_tile_shapes: {name}={list(v)} needs {form} with L0 <= L1 and "
                                  f"each L1 entry a multiple of L0")
    if not isinstance(enable_split_k, bool):
        raise KernelTypeError(f"pypto.set_cube_tile_shapes: enable_split_k must be a bool, got {enable_split_k!r}")
    shapes = {"m": tuple(m), "k": tuple(k), "n": tuple(n)}
    if enable_split_k:  # matmuls check its constraints (pypto/ops/matmul.py: split_k_checks)
        shapes["split_k"] = True
    TILE_SHAPES.last_cube = shapes
    if recording():
        current_recorder().cube_tile = shapes
    else:
        TILE_SHAPES.default_cube = shapes
        bump_version()


def get_cube_tile_shapes() -> Optional[Tuple[List[int], List[int], List[int], bool]]:
    """``(m, k, n, enable_split_k)`` as set (outside a kernel: the ones set last); None when unset."""
    shapes = current_recorder().cube_tile if recording() else TILE_SHAPES.last_cube
    if shapes is None:
        return None
    return list(shapes["m"]), list(shapes["k"]), list(shapes["n"]), bool(shapes.get("split_k", False))


def set_matrix_size(size: Sequence[int]) -> None:
    """``[m, k, n]`` of the original NZ matrices before a reshape (official: needed only for NZ
    inputs of ``matmul``).  Kernels address NZ tensors by their logical values here (frontend/nz_args.py),
    so a reshape of one is a logical reshape and the validated sizes change nothing.
    Decision: 0 and run-time sizes are accepted (the page is silent; official kernels pass 0 for a k they
    leave open, and a data-dependent valid extent)."""
    if len(size) != 3 or not all(isinstance(v, SymbolicScalar) or (is_static(v) and v >= 0) for v in size):
        raise KernelTypeError(f"pypto.set_matrix_size takes [m, k, n] non-negative ints or SymbolicScalars, "
                              f"got {list(size)}")


def set_semantic_label(label: str) -> None:
    """``pypto.set_semantic_label(label)``: names the following ops in the NPU's profiles; results do
    not depend on it, so it is checked (a str) and has no effect here."""
    if not isinstance(label, str):
        raise KernelTypeError(f"pypto.set_semantic_label takes a str, got {label!r}")


@contextlib.contextmanager
def function(name: str, *tensors: Any):
    """``with pypto.function(name, *tensors):`` groups the body into a named function of the official
    graph; record mode records the body inline, so it only checks its arguments."""
    if not isinstance(name, str):
        raise KernelTypeError(f"pypto.function takes a name (str) first, got {name!r}")
    yield


def set_conv_tile_shapes(tile_l1_info: Any, tile_l0_info: Any = None) -> None:
    """``pypto.set_conv_tile_shapes(TileL1Info(...), TileL0Info(...) | None)``: the NPU's L1/L0 convolution
    tiles.  ``pypto.conv`` is composed from ``matmul`` here and tiles with the vec/cube tile shapes, so
    these tiles cannot change results: they are checked, recorded (``get_conv_tile_shapes`` returns
    them) and logged once at INFO, like the other NPU tuning knobs."""
    from ..pypto_impl import TileL0Info, TileL1Info

    if not isinstance(tile_l1_info, TileL1Info):
        raise KernelTypeError(f"pypto.set_conv_tile_shapes takes a pypto_impl.TileL1Info first, got {tile_l1_info!r}")
    if tile_l0_info is not None and not isinstance(tile_l0_info, TileL0Info):
        raise KernelTypeError(f"pypto.set_conv_tile_shapes: tile_l0_info must be a pypto_impl.TileL0Info or None, "
                              f"got {tile_l0_info!r}")
    from ..options import note_knob

    note_knob("conv_tile", "shapes", (tile_l1_info, tile_l0_info))
    TILE_SHAPES.last_conv = (tile_l1_info, tile_l0_info, tile_l0_info is not None)


def get_conv_tile_shapes() -> Optional[Tuple[Any, Any, bool]]:
    """``(TileL1Info, TileL0Info | None, l0 tiles given)`` as set last; None when unset."""
    return TILE_SHAPES.last_conv


_CONV_TILES = ("the NPU's L1/L0 convolution tiles (pypto_impl TileL1Info/TileL0Info objects); pypto.conv and "
               "pypto.conv_backward_input are composed from matmul here and tile with set_vec/cube_tile_shapes")


def set_convbp_input_tile_shapes(*args: Any, **kwargs: Any) -> None:
    """The NPU's conv_backward_input tiles: not offered (:data:`_CONV_TILES`), raises ``NotImplementedError``."""
    raise NotImplementedError(f"pypto.set_convbp_input_tile_shapes ({_CONV_TILES})")


def get_convbp_input_tile_shapes(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(f"pypto.get_convbp_input_tile_shapes ({_CONV_TILES})")
