"""Numba hygiene: concurrent Python threads, fork-started children, thread counts."""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from tests.brute import rows_of, scene

import collisionkit as ck


def _workload(pb_mesh):
    a = pb_mesh("bunny.obj")
    b = pb_mesh("duck_vhacd.obj")
    c = pb_mesh("franka_panda/meshes/collision/link0.obj")
    d = pb_mesh("franka_panda/meshes/collision/hand.obj")
    jobs = []
    for k, (m1, m2, f) in enumerate(
        [(a, b, 0.6), (c, d, 0.6), (a.with_options(bv="obb"), b, 0.6), (c, d.with_options(leaf_size=1), 0.5)]
    ):
        pa, pb = scene(m1, m2, f, 64, seed=100 + k)
        jobs.append((m1, m2, pa, pb))
    return jobs


def _run(job, threads=None):
    m1, m2, pa, pb = job
    c = ck.contacts(m1, m2, pa, pb, threads=threads)
    hits = ck.intersects(m1, m2, pa, pb, threads=threads)
    first = ck.contacts(m1, m2, pa, pb, mode="first", threads=threads)
    singles = [ck.intersects(m1, m2, pa[k], pb[k]) for k in range(0, 64, 8)]
    return rows_of(c), c.counts.copy(), hits.copy(), first.counts.copy(), singles


def test_python_threads_agree_with_serial(pb_mesh):
    jobs = _workload(pb_mesh)
    serial = [_run(job, threads=1) for job in jobs]
    for r in serial:
        assert 0 < r[2].sum() < 64, "workload is not informative"
    tasks = [(i % len(jobs), [None, 2, 1][i % 3]) for i in range(24)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda t: _run(jobs[t[0]], threads=t[1]), tasks))
    for (i, threads), got in zip(tasks, results, strict=True):
        want = serial[i]
        assert np.array_equal(got[0], want[0]), f"job {i}, threads={threads}: rows differ"
        assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
        assert np.array_equal(got[3], want[3]) and got[4] == want[4]


def _child(conn, payload):
    try:
        a, b, pa, pb = payload
        c = ck.contacts(a, b, pa, pb)  # batched, parallel (default threads)
        hits = ck.intersects(a, b, pa, pb, threads=2)
        conn.send(("ok", rows_of(c), hits, ck.threading_layer()))
    except BaseException as exc:  # report, never hang
        conn.send(("error", repr(exc), None, None))
    finally:
        conn.close()


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method is POSIX only")
def test_fork_child_runs_parallel_query_after_parent(pb_mesh):
    a, b = pb_mesh("franka_panda/meshes/collision/link0.obj"), pb_mesh("franka_panda/meshes/collision/hand.obj")
    pa, pb = scene(a, b, 0.6, 48, seed=3)
    # the parent starts the parallel runtime first
    parent = ck.contacts(a, b, pa, pb)
    parent_hits = ck.intersects(a, b, pa, pb, threads=2)
    assert 0 < parent_hits.sum() < 48
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, (a, b, pa, pb)))
    proc.start()
    send.close()
    try:
        assert recv.poll(120), "fork-started child hung (no answer within 120 s)"
        status, rows, hits, layer = recv.recv()
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
    assert status == "ok", f"child failed: {rows}"
    assert proc.exitcode == 0
    assert np.array_equal(rows, rows_of(parent))
    assert np.array_equal(hits, parent_hits)
    assert layer == ck.threading_layer()


def test_threading_layer_is_thread_and_fork_safe():
    layer = ck.threading_layer()
    assert layer in ("tbb", "omp", "workqueue")
    if layer == "workqueue":
        pytest.fail("the workqueue layer aborts when two Python threads run parallel kernels")


def test_thread_counts_give_identical_results(pb_mesh):
    a, b = pb_mesh("bunny.obj"), pb_mesh("duck_vhacd.obj")
    pa, pb = scene(a, b, 0.6, 50, seed=8)
    ref = ck.contacts(a, b, pa, pb, threads=1)
    ref_stats = ck.query_stats(a, b, pa, pb, mode="all", threads=1)
    for threads in (2, None, 16):
        c = ck.contacts(a, b, pa, pb, threads=threads)
        assert np.array_equal(rows_of(c), rows_of(ref)) and np.array_equal(c.counts, ref.counts)
        s = ck.query_stats(a, b, pa, pb, mode="all", threads=threads)
        assert np.array_equal(s.tri_tests, ref_stats.tri_tests) and np.array_equal(s.bv_tests, ref_stats.bv_tests)
    from collisionkit.kernels.traverse import descent as bvh_traverse

    assert bvh_traverse.query_parallel.signatures, "no batch ran on the parallel kernel"
    # a small batch (below the parallel threshold) and a single pose
    for n in (1, 3, 7, 8, 9):
        c = ck.contacts(a, b, pa[:n], pb[:n], threads=2)
        assert np.array_equal(rows_of(c), rows_of(ref)[rows_of(ref)[:, 0] < n])


def test_set_num_threads_is_restored_after_a_query():
    import numba

    before = numba.get_num_threads()
    box = ck.primitives.box_mesh()
    ck.contacts(box, box, None, ck.random_poses(32, seed=1), threads=1)
    ck.contacts(box, box, None, ck.random_poses(32, seed=1), threads=2)
    assert numba.get_num_threads() == before


def test_penetration_honours_threads(monkeypatch):
    """Regression: wave one launched the parallel penetration kernel without setting the
    thread count, so ``threads=`` was ignored on meshes."""
    import collisionkit.query.batch as qb
    from collisionkit.constants import PARALLEL_MIN_POSES
    from collisionkit.kernels.proximity import penetration as kp

    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    poses = ck.random_poses(max(64, PARALLEL_MIN_POSES), radius=2.0, seed=4)
    ref = ck.penetration(box, box, None, poses, threads=1)
    seen = []
    real = qb.using_threads

    def spy(n):
        seen.append(n)
        return real(n)

    monkeypatch.setattr(qb, "using_threads", spy)
    launched = []
    real_launch = qb.launch
    monkeypatch.setattr(qb, "launch", lambda p, s, par, *a: (launched.append((par, p)), real_launch(p, s, par, *a)))
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)  # the count must be raised for this call, then restored
    try:
        got = ck.penetration(box, box, None, poses, threads=2)
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)
    plans = [p for par, p in launched if par is kp.penetration_parallel]
    assert len(plans) == 1 and plans[0].parallel and plans[0].threads == 2
    assert 2 in seen
    np.testing.assert_array_equal(got.depth, ref.depth)
    np.testing.assert_array_equal(got.direction, ref.direction)
    assert (ref.depth > 0).any() and (ref.depth == 0).any()
