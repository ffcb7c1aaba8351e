"""Our own communicating kernels for the distributed tests (each rank runs them on its own data)."""
from __future__ import annotations

import pypto

D = pypto.distributed
ADD, SET = pypto.AtomicType.ADD, pypto.AtomicType.SET


@pypto.frontend.jit
def allgather_matmul(x: pypto.Tensor([8, 32], pypto.DT_FP32), w: pypto.Tensor([32, 48], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, 48], pypto.DT_FP32), group, n):
    """out = all_gather(x) @ w: every PE writes its rows into every PE's buffer and signals them."""
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [48, 48])
    rows = x.shape[0]
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [rows * n, 32])
    me = D.my_symbolic_pe(group)
    for pe in range(n):
        put = D.shmem_put(x, [me * rows, 0], buf, pe)
        D.shmem_signal(buf, pe, 1, [rows, 32], [me * rows, 0], target_pe=pe, sig_op=ADD, pred=[put])
    gathered = pypto.tensor([rows * n, 32], pypto.DT_FP32, "gathered")
    for src in range(n):
        ready = D.shmem_wait_until(buf, me, 1, [rows, 32], [src * rows, 0], clear_signal=True)
        part = D.shmem_get(buf, me, [rows, 32], [src * rows, 0], pred=[ready])
        gathered[src * rows:(src + 1) * rows, :] = part
    out[:] = pypto.matmul(gathered, w, pypto.DT_FP32)


@pypto.frontend.jit
def matmul_allreduce_add_rmsnorm(x: pypto.Tensor([16, 32], pypto.DT_FP32), w: pypto.Tensor([32, 64], pypto.DT_FP32),
                                 residual: pypto.Tensor([16, 64], pypto.DT_FP32),
                                 gamma: pypto.Tensor([64], pypto.DT_FP32),
                                 out: pypto.Tensor([16, 64], pypto.DT_FP32), group, n):
    """out = rmsnorm(all_reduce(x @ w) + residual) * gamma; the reduction adds (AtomicType.ADD) every
    PE's partial product into every PE's buffer, fenced by barriers."""
    pypto.set_vec_tile_shapes(16, 64)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
    acc = D.create_shmem_tensor(group, n, pypto.DT_FP32, [16, 64])
    sync = D.create_shmem_signal(group, n)
    partial = pypto.matmul(x, w, pypto.DT_FP32)
    cleared = D.shmem_clear_data(acc)
    ready = D.shmem_barrier_all(sync, pred=[cleared])
    for pe in range(n):
        D.shmem_put(partial, [0, 0], acc, pe, put_op=ADD, pred=[ready])
    done = D.shmem_barrier_all(sync)
    total = D.shmem_get(acc, D.my_symbolic_pe(group), pred=[done])
    h = total + residual
    rms = pypto.sqrt(pypto.sum(h * h, -1, keepdim=True) / 64 + 1e-6)
    out[:] = h / rms * gamma


@pypto.frontend.jit
def cascaded_allreduce(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32),
                       group_a, n_a, group_b, n_b):
    """Two groups at once: sum over group_a, then over group_b (their product covers every rank)."""
    pypto.set_vec_tile_shapes(8, 32)
    stage = x
    for group, n in ((group_a, n_a), (group_b, n_b)):
        acc = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8, 32])
        sync = D.create_shmem_signal(group, n)
        D.shmem_clear_data(acc)
        D.shmem_barrier_all(sync)
        for pe in range(n):
            D.shmem_put(stage, [0, 0], acc, pe, put_op=ADD)
        D.shmem_barrier_all(sync)
        stage = D.shmem_get(acc, D.my_symbolic_pe(group))
    out[:] = stage


@pypto.frontend.jit
def wait_forever(x: pypto.Tensor([8, 32], pypto.DT_FP32), group, n):
    """Waits for a signal nobody sends."""
    pypto.set_vec_tile_shapes(8, 32)
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8, 32])
    D.shmem_wait_until(buf, D.my_symbolic_pe(group), 1)
    x[:] = x + 1


@pypto.frontend.jit
def barrier_only(x: pypto.Tensor([8, 32], pypto.DT_FP32), group, n):
    """A barrier of the group (then x += 1)."""
    pypto.set_vec_tile_shapes(8, 32)
    D.shmem_barrier_all(D.create_shmem_signal(group, n))
    x[:] = x + 1


@pypto.frontend.jit
def moe_dispatch_combine(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
                         w: pypto.Tensor([32, 32], pypto.DT_FP32),
                         out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), group, counts, rank):
    """MoE-style all-to-all with uneven token counts: ``counts[s][d]`` rows of PE s (sorted by
    destination) go to PE d, which applies its expert (``@ w``) and sends them back to their rows."""
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    n = len(counts)
    recv_rows = max(max(sum(counts[s][d] for s in range(n)) for d in range(n)), 1)
    send_rows = max(max(sum(row) for row in counts), 1)
    inbox = D.create_shmem_tensor(group, n, pypto.DT_FP32, [recv_rows, 32])
    back = D.create_shmem_tensor(group, n, pypto.DT_FP32, [send_rows, 32])
    # dispatch: my rows for PE d land after the rows of lower PEs in d's inbox
    start = 0
    for d in range(n):
        rows = counts[rank][d]
        if rows:
            at = sum(counts[s][d] for s in range(rank))
            sent = D.shmem_put(pypto.view(x, [rows, 32], [start, 0]), [at, 0], inbox, d)
            D.shmem_signal(inbox, d, 1, [rows, 32], [at, 0], target_pe=d, sig_op=ADD, pred=[sent])
        start += rows
    mine = sum(counts[s][rank] for s in range(n))
    if mine:
        at = 0
        for s in range(n):
            if counts[s][rank]:
                D.shmem_wait_until(inbox, rank, 1, [counts[s][rank], 32], [at, 0], clear_signal=True)
            at += counts[s][rank]
        tokens = D.shmem_get(inbox, rank, [mine, 32], [0, 0])
        expert = pypto.tensor([mine, 32], pypto.DT_FP32, "expert")
        expert[:] = pypto.matmul(tokens, w, pypto.DT_FP32)
        # combine: each source's rows go back to where they came from in its x
        at = 0
        for s in range(n):
            rows = counts[s][rank]
            if rows:
                home = sum(counts[s][d] for d in range(rank))
                sent = D.shmem_put(pypto.view(expert, [rows, 32], [at, 0]), [home, 0], back, s)
                D.shmem_signal(back, s, 1, [rows, 32], [home, 0], target_pe=s, sig_op=ADD, pred=[sent])
            at += rows
    total = sum(counts[rank])
    if total:
        start = 0
        for d in range(n):
            if counts[rank][d]:
                D.shmem_wait_until(back, rank, 1, [counts[rank][d], 32], [start, 0], clear_signal=True)
            start += counts[rank][d]
        out[:] = D.shmem_get(back, rank, [total, 32], [0, 0])


@pypto.frontend.jit
def looped_allreduce(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), group, n):
    """Row blocks of 8 summed over the group, one block per iteration; the shmem tensor is created in
    the loop body, so every iteration starts from a fresh (zero) one: ADD puts need no clearing."""
    pypto.set_vec_tile_shapes(8, 32)
    rows = x.shape[0]
    for i in pypto.loop((rows + 7) // 8, name="BLOCKS", idx_name="i"):
        acc = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8, 32])
        me = D.my_symbolic_pe(group)
        valid = (rows - i * 8).min(8)
        block = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[valid, 32])
        for pe in range(n):
            put = D.shmem_put(block, [0, 0], acc, pe, put_op=ADD)
            D.shmem_signal(acc, pe, 1, [8, 32], [0, 0], target_pe=pe, sig_op=ADD, pred=[put])
        ready = D.shmem_wait_until(acc, me, n, [8, 32], [0, 0], clear_signal=True)
        out[i * 8:, :] = D.shmem_get(acc, me, [8, 32], [0, 0], valid_shape=[valid, 32], pred=[ready])


@pypto.frontend.jit
def race_probe(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32),
               group, n, phase, fence):
    """Phase 0: put x into the next PE's copy.  Phase 1: read my copy (after a barrier if ``fence``)."""
    pypto.set_vec_tile_shapes(8, 32)
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8, 32])
    sync = D.create_shmem_signal(group, n)
    me = D.my_symbolic_pe(group)
    if phase == 0:
        D.shmem_put(x, [0, 0], buf, (me + 1) % n)
    else:
        if fence:
            D.shmem_barrier_all(sync)
        out[:] = D.shmem_get(buf, me)


@pypto.frontend.jit
def allreduce_16bit(x: pypto.Tensor([8, 32], pypto.DT_BF16), y: pypto.Tensor([8, 32], pypto.DT_FP16),
                    out_x: pypto.Tensor([8, 32], pypto.DT_BF16), out_y: pypto.Tensor([8, 32], pypto.DT_FP16),
                    group, n):
    """Sums of BF16 and FP16 tensors over the group by atomic ADD puts (types MPI cannot add itself)."""
    pypto.set_vec_tile_shapes(8, 32)
    acc_x = D.create_shmem_tensor(group, n, pypto.DT_BF16, [8, 32])
    acc_y = D.create_shmem_tensor(group, n, pypto.DT_FP16, [8, 32])
    sync = D.create_shmem_signal(group, n)
    ready = D.shmem_barrier_all(sync, pred=[D.shmem_clear_data(acc_x), D.shmem_clear_data(acc_y)])
    for pe in range(n):
        D.shmem_put(x, [0, 0], acc_x, pe, put_op=ADD, pred=[ready])
        D.shmem_put(y, [0, 0], acc_y, pe, put_op=ADD, pred=[ready])
    done = D.shmem_barrier_all(sync)
    me = D.my_symbolic_pe(group)
    out_x[:] = D.shmem_get(acc_x, me, pred=[done])
    out_y[:] = D.shmem_get(acc_y, me, pred=[done])


@pypto.frontend.jit
def add_into_next(x: pypto.Tensor([8, 32], pypto.DT_FP32), group, n):
    """Adds x into the next PE's buffer and signals it; waits for nothing (one-sided)."""
    pypto.set_vec_tile_shapes(8, 32)
    buf = D.create_shmem_tensor(group, n, pypto.DT_FP32, [8, 32])
    nxt = (D.my_symbolic_pe(group) + 1) % n
    put = D.shmem_put(x, [0, 0], buf, nxt, put_op=ADD)
    D.shmem_signal(buf, nxt, 1, [8, 32], [0, 0], target_pe=nxt, sig_op=ADD, pred=[put])
