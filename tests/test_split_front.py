"""One large pose on all cores (issue 15 item 2): a single pose's descent split over its
node pairs (``query.strategies.descent.split_pose``, ``kernels.traverse.descent.contacts_one``).

The split must give the serial rows exactly (the front partitions the descent: no pair
lost, none found twice) and, for all pairs, the serial counters too (each node pair and
each leaf pair is still tested once); a boolean answers as the serial one. Budgets 0 and
a few work units force the split on small meshes, so every path of the expansion runs
(split at the roots, a front cut short by the keys' room, leaf pairs met by the
expansion); threads 1, 2 and 4 (clamped to numba's count) run its front serially and in
parallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import brute_colliding, brute_pairs, rows_of

import collisionkit as ck
from collisionkit.bvh import pair_trees
from collisionkit.constants import MODE_ALL, MODE_ANY, NO_BUDGET, SPLIT_WORK, TRI_TEST_GUIGUE
from collisionkit.kernels.traverse.descent import UNSETTLED, intersect_one
from collisionkit.query import pair
from collisionkit.query.strategies import descent
from collisionkit.runtime import using_threads

pytest.importorskip("shapely")
pytest.importorskip("mapbox_earcut")

from benchmarks import hard_scenes as H  # noqa: E402

STATS = ("bv_tests", "tri_tests", "node_pairs", "bv_updates")


@pytest.fixture(scope="module")
def near_contact():
    """Hard scenes' miniatures (near contact everywhere) and a torus that overlaps itself
    in hundreds of triangle pairs (far more keys than the serial part's room)."""
    out = {}
    for name in ("flange", "press-fit", "gears-15k", "scan-large"):
        s = H.make_hard_scene(name, res="tiny", n=4)
        a = ck.Mesh(s.mesh_a.vertices, s.mesh_a.faces)
        b = ck.Mesh(s.mesh_b.vertices, s.mesh_b.faces)
        out[name] = (a, b, [np.eye(4)] * 4, [np.ascontiguousarray(T) for T in s.poses_b])
    t = ck.primitives.torus_mesh(1.0, 0.3, 48, 24)
    shifts = [ck.translation([0.02, 0.01, 0.0]), ck.translation([0.3, 0.0, 0.05]), ck.translation([5.0, 0, 0])]
    out["torus"] = (t, t, [np.eye(4)] * 3, shifts)
    return out


def _keys(c, faces_b):
    return c.face_a * faces_b + c.face_b


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("budget", [0, 7, 300])
def test_split_rows_and_counters_equal_serial(near_contact, threads, budget):
    splits = 0
    for name, (a, b, pas, pbs) in near_contact.items():
        ta, tb = pair_trees(a, b)
        for Ta, Tb in zip(pas, pbs, strict=True):
            ref = ck.contacts(a, b, Ta, Tb, threads=1)
            ref_stats = ck.query_stats(a, b, Ta, Tb, mode="all", threads=1)
            got = descent.split_pose(ta, tb, Ta, Tb, TRI_TEST_GUIGUE, MODE_ALL, threads, budget)
            assert got.found == ref.counts, name
            assert np.array_equal(got.keys, _keys(ref, b.faces.shape[0])), f"{name}: rows differ"
            # every node pair and leaf pair is still tested exactly once
            for k, field in enumerate(STATS):
                assert got.stats[k] == getattr(ref_stats, field), f"{name}: {field}"
            splits += got.split
    # budget 0 splits every query whose roots overlap; a few units still split most
    assert splits >= 10, splits


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("budget", [0, 7, 300])
def test_split_boolean_equals_serial(near_contact, threads, budget):
    splits = 0
    for name, (a, b, pas, pbs) in near_contact.items():
        ta, tb = pair_trees(a, b)
        for Ta, Tb in zip(pas, pbs, strict=True):
            got = descent.split_pose(ta, tb, Ta, Tb, TRI_TEST_GUIGUE, MODE_ANY, threads, budget)
            assert got.found == int(ck.intersects(a, b, Ta, Tb, threads=1)), name
            assert got.keys.shape == (0,)
            splits += got.split
    assert splits >= 5, splits


def test_split_matches_the_brute_force_oracle(near_contact):
    for name in ("flange", "torus"):
        a, b, pas, pbs = near_contact[name]
        ta, tb = pair_trees(a, b)
        for Ta, Tb in zip(pas[:2], pbs[:2], strict=True):
            want = brute_pairs(a, b, Ta, Tb)
            got = descent.split_pose(ta, tb, Ta, Tb, TRI_TEST_GUIGUE, MODE_ALL, 2, 0)
            assert got.split
            fb = b.faces.shape[0]
            assert np.array_equal(np.stack([got.keys // fb, got.keys % fb], axis=1), want[:, 1:])
            hit = descent.split_pose(ta, tb, Ta, Tb, TRI_TEST_GUIGUE, MODE_ANY, 2, 0).found
            assert bool(hit) == bool(brute_colliding(a, b, Ta, Tb)[0])


class _Spy:
    """Wraps descent.split_pose where query.pair calls it; records (budget, split)."""

    def __init__(self, monkeypatch):
        self.calls: list[tuple[int, bool]] = []
        real = descent.split_pose

        def spy(*args):
            r = real(*args)
            self.calls.append((args[7] if len(args) > 7 else SPLIT_WORK, r.split))
            return r

        monkeypatch.setattr(pair, "split_pose", spy)


def test_per_call_contacts_split_a_large_pose_only(near_contact, monkeypatch):
    spy = _Spy(monkeypatch)
    t, _, _, shifts = near_contact["torus"]
    big = shifts[0]  # hundreds of pairs, far more work than SPLIT_WORK
    want = ck.contacts(t, t, None, big, threads=1)
    work = ck.query_stats(t, t, None, big, mode="all", threads=1)
    assert want.counts > 300 and work.node_pairs + work.tri_tests > SPLIT_WORK
    for threads in (None, 2, 4):
        got = ck.contacts(t, t, None, big, threads=threads)
        assert np.array_equal(rows_of(got), rows_of(want)) and got.counts == want.counts
    assert spy.calls and all(split for _, split in spy.calls)
    spy.calls.clear()
    small = ck.contacts(t, t, None, shifts[2])  # the roots miss: serial, no launch
    assert small.counts == 0 and spy.calls == [(SPLIT_WORK, False)]
    # threads=1, mode "first" and a cap keep the serial kernel
    spy.calls.clear()
    ck.contacts(t, t, None, big, threads=1)
    first = ck.contacts(t, t, None, big, mode="first")
    capped = ck.contacts(t, t, None, big, max_pairs=10)
    assert spy.calls == []
    assert first.counts == 1 and capped.counts == 10 and capped.truncated


def test_per_call_intersects_splits_when_its_budget_runs_out(near_contact):
    """A per-call boolean its first pass leaves UNSETTLED runs on the threads
    (``split_boolean``: ``contacts_one`` expands the front, the batch driver runs it with a
    shared stop flag); any thread count, so any front size, gives the serial answer."""
    for name, (a, b, pas, pbs) in near_contact.items():
        ta, tb = pair_trees(a, b)
        for Ta, Tb in zip(pas, pbs, strict=True):
            args = pair.single_call_args(a, b, Ta, Tb)
            assert args[-1] == NO_BUDGET
            want = intersect_one(*args)
            assert want == ck.intersects(a, b, Ta, Tb, threads=1) == bool(brute_colliding(a, b, Ta, Tb)[0]), name
            tri = args[-2]
            for n in (1, 2, 3, 8):  # fronts of 64 to 512 node pairs, 1 to 8 chunks
                assert descent.split_boolean(ta, tb, Ta, Tb, tri, n) == want, (name, n)
            for threads in (None, 2, 4):
                assert ck.intersects(a, b, Ta, Tb, threads=threads) == want


def test_first_pass_hands_large_queries_to_the_split(near_contact):
    """``intersect_one`` with the public path's SPLIT_WORK budget answers only what the
    budget settles: a large query comes back UNSETTLED and the public path finishes it on
    the threads (``split_boolean``), the serial answer; with one thread, serially."""
    seen = set()
    for name, (a, b, pas, pbs) in near_contact.items():
        for Ta, Tb in zip(pas, pbs, strict=True):
            args = pair.single_call_args(a, b, Ta, Tb)
            want = intersect_one(*args)
            first = intersect_one(*args[:-1], SPLIT_WORK)
            assert first in (want, UNSETTLED), (name, first, want)
            seen.add(first == UNSETTLED)
            for threads in (None, 1, 2):
                assert ck.intersects(a, b, Ta, Tb, threads=threads) == want, (name, threads)
            with using_threads(1):  # the default path on one thread: the serial descent
                assert ck.intersects(a, b, Ta, Tb) == want, name
    assert seen == {True, False}  # both ways were exercised


def test_batches_below_the_thread_count_split_each_pose(near_contact):
    t, _, _, shifts = near_contact["torus"]
    a, b, pas, pbs = near_contact["scan-large"]
    for m1, m2, pa, pb in ((t, t, None, np.stack(shifts[:1])), (a, b, np.stack(pas[:1]), np.stack(pbs[:1]))):
        ref = ck.contacts(m1, m2, pa, pb, threads=1)
        got = ck.contacts(m1, m2, pa, pb, threads=2)
        assert np.array_equal(rows_of(got), rows_of(ref)) and np.array_equal(got.counts, ref.counts)
        s1 = ck.query_stats(m1, m2, pa, pb, mode="all", threads=1)
        s2 = ck.query_stats(m1, m2, pa, pb, mode="all", threads=2)
        for field in STATS:
            assert np.array_equal(getattr(s1, field), getattr(s2, field)), field
        assert np.array_equal(ck.intersects(m1, m2, pa, pb, threads=2), ck.intersects(m1, m2, pa, pb, threads=1))
        any2 = ck.query_stats(m1, m2, pa, pb, mode="any", threads=2)
        assert np.array_equal(any2.colliding, ck.intersects(m1, m2, pa, pb, threads=1))


def test_contacts_one_refuses_a_front_too_small(near_contact):
    """The kernel writes the front without bounds checks: a short one is refused up front."""
    a, b, pas, pbs = near_contact["torus"]
    ta, tb = pair_trees(a, b)
    keys, stats = np.empty(100, np.int64), np.zeros((1, 4), np.int64)
    short = np.empty((4, 2), np.int32)
    tri = descent.descent_tri(ta.bv_code, 0)
    one = descent.CONTACTS_ONE[tri is not None]
    with pytest.raises(ValueError, match="front too small"):
        one.call(*ta.arrays, pas[0], *tb.arrays, pbs[0], ta.bv_code, tri, MODE_ALL, -1, keys, 0, short, 32, stats)
    # without a budget the front is never written: an empty one is fine
    r, m = one.call(*ta.arrays, pas[0], *tb.arrays, pbs[0], ta.bv_code, tri, MODE_ALL, -1, keys, NO_BUDGET, short[:0], 32, stats)
    assert m == 0 and r == ck.contacts(a, b, pas[0], pbs[0], threads=1).counts


def test_split_poses_from_concurrent_python_threads(near_contact):
    """Split poses launched from several Python threads at once (each its own buffers and
    parallel launch) answer as the serial path."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(name, i) for name in ("flange", "scan-large", "torus") for i in range(2)]
    want = {}
    for name, i in jobs:
        a, b, pas, pbs = near_contact[name]
        want[name, i] = (rows_of(ck.contacts(a, b, pas[i], pbs[i], threads=1)), ck.intersects(a, b, pas[i], pbs[i], threads=1))

    def run(job):
        name, i = job
        a, b, pas, pbs = near_contact[name]
        ta, tb = pair_trees(a, b)
        got = descent.split_pose(ta, tb, pas[i], pbs[i], TRI_TEST_GUIGUE, MODE_ALL, None, 0)
        hit = descent.split_pose(ta, tb, pas[i], pbs[i], TRI_TEST_GUIGUE, MODE_ANY, None, 0).found
        return got.keys, hit

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, jobs * 4))
    for job, (keys, hit) in zip(jobs * 4, results, strict=True):
        rows, colliding = want[job]
        fb = near_contact[job[0]][1].faces.shape[0]
        assert np.array_equal(keys, rows[:, 1] * fb + rows[:, 2]), job
        assert bool(hit) == colliding, job
