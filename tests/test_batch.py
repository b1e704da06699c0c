"""The batch engine (query/batch.py): one chunk plan, one launch, one overflow rerun for
every query, strategy and the World.

The first-pass row guess is forced down to one row a task, so every pose of a
contact-rich batch overflows and takes the rerun path: the rows must equal those
of an unforced run (and brute force), on every strategy, serial and parallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import PARALLEL_BATCH, brute_pairs, rows_of

import collisionkit as ck
from collisionkit.constants import MODE_ANY, PARALLEL_MIN_POSES
from collisionkit.query import batch

STRATEGIES = ["descent", "oaabb", ck.BFS(), ck.BFS(parallel=True, min_frontier=1), ck.BFS(parallel=False)]


def _grid(n: int) -> ck.Mesh:
    xs = np.arange(n + 1, dtype=np.float64)
    x, y = np.meshgrid(xs, xs, indexing="ij")
    v = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    f = []
    for i in range(n):
        for j in range(n):
            a, b, c, d = i * (n + 1) + j, (i + 1) * (n + 1) + j, (i + 1) * (n + 1) + j + 1, i * (n + 1) + j + 1
            f += [(a, b, c), (a, c, d)]
    return ck.Mesh(v, np.array(f))


@pytest.fixture(scope="module")
def scene():
    a = _grid(6)
    b = ck.primitives.box_mesh([2.0, 2.0, 0.5])
    poses = ck.random_poses(PARALLEL_BATCH, radius=2.0, seed=11)
    poses[:, :3, 3] += [3.0, 3.0, 0.0]
    return a, b, poses


def _one_row_guess(monkeypatch):
    real = batch.row_guess
    monkeypatch.setattr(batch, "row_guess", lambda mode, max_pairs, size: min(real(mode, max_pairs, size), 1))


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_forced_overflow_reruns_give_the_same_rows(scene, strategy, threads, monkeypatch):
    a, b, poses = scene
    expected = ck.contacts(a, b, None, poses, strategy=strategy, threads=threads)
    assert np.array_equal(rows_of(expected), brute_pairs(a, b, None, poses))
    assert np.bincount(expected.pose_index).max() > 1, "no pose has two pairs: nothing overflows"
    _one_row_guess(monkeypatch)
    got = ck.contacts(a, b, None, poses, strategy=strategy, threads=threads)
    assert np.array_equal(rows_of(got), rows_of(expected))
    capped = ck.contacts(a, b, None, poses, strategy=strategy, threads=threads, max_pairs=2)
    monkeypatch.undo()
    ref_capped = ck.contacts(a, b, None, poses, strategy=strategy, threads=threads, max_pairs=2)
    assert np.array_equal(rows_of(capped), rows_of(ref_capped))
    assert np.array_equal(capped.truncated, ref_capped.truncated)


def _world(a, b):
    w = ck.World("brute")
    w.add("grid", a)
    for k in range(6):  # boxes straddling the grid's plane: many triangle pairs each
        w.add(f"box{k}", b, ck.translation([1.5 + 0.6 * k, 3.0, 0.0]))
    return w


def test_world_contacts_take_the_same_rerun(scene, monkeypatch):
    a, b, _ = scene
    expected = _world(a, b).contacts()
    assert expected.counts.max() > 1
    real = batch.pair_rows
    monkeypatch.setattr(
        batch, "pair_rows", lambda tasks, p, guess, *x, **kw: real(tasks, p, min(guess, 1), *x, **{**kw, "min_chunk_rows": 0})
    )
    got = _world(a, b).contacts()
    assert np.array_equal(got.object_a, expected.object_a) and np.array_equal(got.object_b, expected.object_b)
    assert np.array_equal(got.face_a, expected.face_a) and np.array_equal(got.face_b, expected.face_b)


def test_plan():
    assert batch.plan(PARALLEL_MIN_POSES - 1, 4) == batch.Plan(PARALLEL_MIN_POSES - 1, 4, False, 1)
    assert batch.plan(PARALLEL_MIN_POSES, 4) == batch.Plan(PARALLEL_MIN_POSES, 4, True, 16)
    assert batch.plan(1000, 1).parallel is False
    assert batch.plan(1000, 2, parallel_ok=False).nchunks == 1
    assert batch.plan(1000, 2, uniform=True).nchunks == 2 and batch.plan(1000, 2).nchunks == 8
    assert batch.row_guess(MODE_ANY, -1, 10**6) == 0


def test_run_chunks_covers_every_task_once():
    seen = np.zeros(1000, np.int64)

    def fn(lo, hi):
        seen[lo:hi] += 1

    batch.run_chunks(1000, 2, fn)
    assert np.all(seen == 1)
    batch.run_chunks(0, 2, fn)
    batch.run_chunks(3, 2, fn)
    assert seen[:3].tolist() == [2, 2, 2]


def test_thread_count_rejects_bad_values():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="threads"):
            batch.thread_count(bad)


def test_pinned_entry_answers_as_the_dispatcher():
    """batch.Pinned: after the first (dispatched) call, the per-call intersects kernel is
    called through its compiled entry; every volume kind and pose answers as the dispatcher."""
    from collisionkit.kernels.traverse.descent import intersect_one
    from collisionkit.query import pair

    pinned = batch.Pinned(intersect_one)
    torus = ck.primitives.torus_mesh(1.0, 0.3, 16, 8)
    poses = ck.random_poses(40, 1.5, seed=8)
    hits = 0
    for bv in ("aabb", "obb", "sphere", "kdop18"):
        a = torus.with_options(ck.BuildOptions(bv=bv))
        for T in poses:
            args = pair.single_call_args(a, a, None, T)
            assert pinned.call(*args) == intersect_one(*args)
            hits += intersect_one(*args) == 1
    assert getattr(pinned.call, "__func__", None) is not batch.Pinned._first  # pinned after the first call
    assert pinned.call is not intersect_one
    assert 0 < hits < 160

    def plain(x, y):  # not a numba dispatcher: stays a plain call
        return x + y

    p = batch.Pinned(plain)
    assert p.call(1, 2) == 3 and p.call is plain
