"""The atomic counter behind dynamic scheduling, and the dynamic chunks of the batch engine."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit, prange

import collisionkit as ck
from collisionkit.kernels.core.atomics import fetch_add


@njit(parallel=True)
def _claim_all(n, workers, shared, owner, rounds):
    """Each worker claims tasks from shared[1] until none is left; owner[k] += 1 per claim."""
    for _w in prange(workers):
        while True:
            k = fetch_add(shared, 1, np.int64(1))
            if k >= n:
                break
            owner[k] += 1
            # some work so that the workers really interleave
            x = 0.0
            for i in range(rounds):
                x += np.sqrt(i + k)
            if x < 0.0:
                owner[k] += 100


def test_fetch_add_returns_the_old_value_and_adds():
    a = np.array([5, 40], np.int64)

    @njit
    def twice(a):
        return fetch_add(a, 1, np.int64(3)), fetch_add(a, 1, np.int64(-1))

    assert twice(a) == (40, 43)
    assert a.tolist() == [5, 42]


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_every_task_is_claimed_exactly_once_by_concurrent_workers(threads):
    n = 20_000
    with ck.runtime.using_threads(min(threads, numba.config.NUMBA_NUM_THREADS)):
        for rounds in (0, 50):
            shared = np.zeros(2, np.int64)
            owner = np.zeros(n, np.int64)
            _claim_all(n, 8, shared, owner, rounds)
            assert np.all(owner == 1)
            # every worker's last claim overshoots by one
            assert shared[1] == n + 8


def test_fetch_add_refuses_other_arrays():
    @njit
    def on_floats(a):
        return fetch_add(a, 0, np.int64(1))

    with pytest.raises(numba.core.errors.TypingError):
        on_floats(np.zeros(2))


@pytest.mark.parametrize("bv", ["auto", "aabb", "obb", "sphere", "kdop14", "saabb"])
def test_dynamic_batches_answer_as_the_serial_path(bv):
    """Batches run with dynamic chunks on several threads; rows, counts and counters equal
    the serial ones for every mode and volume kind, with skewed pose costs (misses,
    touches, deep overlaps)."""
    ring = ck.primitives.torus_mesh(1.0, 0.3, 40, 20).with_options(ck.BuildOptions(bv=bv))
    rng = np.random.default_rng(3)
    poses = ck.random_poses(400, radius=1.2, seed=4)
    poses[::7, :3, 3] += 10.0  # far misses between the costly poses
    poses[rng.integers(0, 400, 30), :3, 3] = 0.0  # deep overlaps: hundreds of pairs each
    for threads in (2, 4):
        ref = ck.contacts(ring, ring, None, poses, threads=1)
        got = ck.contacts(ring, ring, None, poses, threads=threads)
        assert np.array_equal(got.counts, ref.counts)
        assert np.array_equal(got.pose_index, ref.pose_index)
        assert np.array_equal(got.face_a, ref.face_a) and np.array_equal(got.face_b, ref.face_b)
        assert np.array_equal(ck.intersects(ring, ring, None, poses, threads=threads), ref.counts > 0)
        s1 = ck.query_stats(ring, ring, None, poses, mode="all", threads=1)
        s2 = ck.query_stats(ring, ring, None, poses, mode="all", threads=threads)
        for field in ("bv_tests", "tri_tests", "node_pairs", "bv_updates"):
            assert np.array_equal(getattr(s1, field), getattr(s2, field)), field
        capped = ck.contacts(ring, ring, None, poses, max_pairs=5, threads=threads)
        assert np.array_equal(capped.counts, np.minimum(ref.counts, 5))
