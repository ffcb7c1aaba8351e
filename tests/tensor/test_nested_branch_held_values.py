"""Runtime branches are recorded once per path and merged.  A computed tensor whose inputs a path
later overwrites is held (stored where it was made) on that path only, so the paths' statement lists
differ by that store; the merge must still pair up the branches after it.  An online-softmax style
update (first tile / middle tiles / last tile, the official varlen attention's shape) lost its middle
path that way: the nested ``else`` came out empty."""
import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends


def running_rescale(tiles: int):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([tiles * 8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        acc = pypto.tensor([8, 16], pypto.DT_FP32, "acc")
        run_max = pypto.tensor([8, 1], pypto.DT_FP32, "run_max")
        for t in pypto.loop(tiles):
            xv = pypto.view(x, [8, 16], [t * 8, 0])
            tile_max = pypto.amax(xv, dim=-1, keepdim=True)
            if pypto.is_loop_begin(t):
                if pypto.is_loop_end(t):
                    out[:] = xv
                else:
                    acc[:] = xv
                    run_max[:] = tile_max
            else:
                prev = pypto.view(run_max, [8, 1], [0, 0])
                new_max = pypto.maximum(prev, tile_max)
                rescaled = acc * pypto.exp(prev - new_max) + xv  # reads acc and run_max, both written below
                if pypto.is_loop_end(t):
                    out[:] = rescaled
                else:
                    acc[:] = rescaled
                    run_max[:] = new_max
    return k


@BOTH
@pytest.mark.parametrize("tiles", [1, 2, 3, 5])
def test_first_middle_last_tile_updates(tiles):
    x = torch.randn(tiles * 8, 16)
    out = torch.zeros(8, 16)
    running_rescale(tiles)(x, out)
    acc, run_max = x[:8].clone(), x[:8].amax(-1, keepdim=True)
    for t in range(1, tiles):
        xv = x[t * 8:(t + 1) * 8]
        new_max = torch.maximum(run_max, xv.amax(-1, keepdim=True))
        acc, run_max = acc * torch.exp(run_max - new_max) + xv, new_max
    torch.testing.assert_close(out, acc, rtol=1e-6, atol=1e-6)


@BOTH
def test_value_held_on_one_path_is_not_stored_twice():
    """``s = a + 1`` before a runtime branch; one path overwrites ``a`` then stores ``s``, the other
    stores ``s`` directly: both see ``a + 1`` as it was, and the accumulation runs once per iteration."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([8, 16], pypto.DT_FP32), total: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for t in pypto.loop(4):
            s = a + 1.0
            if t % 2 == 0:
                a[:] = a * 2.0
                total[:] = total + s
            else:
                total[:] = total + s

    a, total = torch.randn(8, 16), torch.zeros(8, 16)
    want_a, want = a.clone(), torch.zeros(8, 16)
    for t in range(4):
        s = want_a + 1.0
        if t % 2 == 0:
            want_a = want_a * 2.0
        want = want + s
    k(a, total)
    torch.testing.assert_close(total, want)
    torch.testing.assert_close(a, want_a)
