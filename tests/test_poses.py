"""Pose arguments: shapes, broadcasting, return types, invalid poses, strategies, threads."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import PARALLEL_BATCH, rows_of

import collisionkit as ck
from collisionkit import Descent, InvalidPoseError

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 6, 10)


def poses(n: int, seed: int = 0) -> np.ndarray:
    return ck.random_poses(n, radius=1.2, seed=seed)


def test_two_single_poses_give_a_python_bool():
    hit = ck.translation([0.5, 0, 0])
    miss = ck.translation([3, 0, 0])
    for pa, pb, expected in [
        (None, hit, True),
        (None, miss, False),
        (np.eye(4), hit, True),
        (hit, hit, True),
        (hit.tolist(), miss.tolist(), False),  # nested lists
        (tuple(map(tuple, hit)), None, True),
        (np.asfortranarray(hit), miss, False),  # not C-contiguous
        (hit.astype(np.float32), miss, False),  # other dtype
        (np.eye(4, dtype=int), hit, True),
    ]:
        r = ck.intersects(BOX, SPHERE, pa, pb)
        assert type(r) is bool and r is expected
        assert type(ck.intersects(BOX, SPHERE, pa, pb, threads=1)) is bool
    ro = hit.copy()
    ro.flags.writeable = False  # a read-only pose is still a single pose
    assert ck.intersects(BOX, SPHERE, None, ro) is True
    assert ck.intersects(BOX, SPHERE, ro, None) is True


@pytest.mark.parametrize("threads", [1, None])
def test_any_3d_pose_gives_an_array(threads):
    hit = ck.translation([0.5, 0, 0])
    for pa, pb in [
        (None, hit[None]),
        (hit[None], None),
        (hit[None], hit[None]),
        (np.eye(4), hit[None]),
        ([hit.tolist()], None),
    ]:
        r = ck.intersects(BOX, SPHERE, pa, pb, threads=threads)
        assert isinstance(r, np.ndarray) and r.dtype == np.bool_ and r.shape == (1,)
        assert r[0]


@pytest.mark.parametrize("threads", [1, 2, None])
def test_broadcasting(threads):
    n = PARALLEL_BATCH + 3
    P = poses(n)
    one = ck.translation([0.25, 0.125, 0])
    expected_ab = np.array([ck.intersects(BOX, SPHERE, one, p) for p in P])
    expected_ba = np.array([ck.intersects(BOX, SPHERE, p, one) for p in P])
    expected_nn = np.array([ck.intersects(BOX, SPHERE, p, q) for p, q in zip(P, P[::-1], strict=True)])
    assert 0 < expected_ab.sum() < n and 0 < expected_ba.sum() < n
    assert np.array_equal(ck.intersects(BOX, SPHERE, one, P, threads=threads), expected_ab)
    assert np.array_equal(ck.intersects(BOX, SPHERE, P, one, threads=threads), expected_ba)
    assert np.array_equal(ck.intersects(BOX, SPHERE, P, P[::-1].copy(), threads=threads), expected_nn)
    assert np.array_equal(ck.intersects(BOX, SPHERE, P, P[::-1], threads=threads), expected_nn)  # a view
    tiled = np.repeat(one[None], n, axis=0)
    for fn in (ck.contacts, ck.query_stats):
        r1 = fn(BOX, SPHERE, one, P, threads=threads)
        r2 = fn(BOX, SPHERE, tiled, P, threads=threads)
        if fn is ck.contacts:
            assert np.array_equal(rows_of(r1), rows_of(r2)) and np.array_equal(r1.counts, r2.counts)
            assert np.array_equal(r1.colliding, expected_ab)
        else:
            assert np.array_equal(r1.bv_tests, r2.bv_tests) and np.array_equal(r1.colliding, expected_ab)


@pytest.mark.parametrize(
    "pa,pb",
    [
        (np.zeros((3, 4, 4)) + np.eye(4), np.zeros((2, 4, 4)) + np.eye(4)),
        (np.eye(3), None),
        (None, np.eye(4)[:3]),
        (None, np.zeros((2, 4, 4, 4)) + np.eye(4)),
        (None, np.eye(4).ravel()),
        (None, np.zeros((3, 4, 3))),
        (np.zeros((0, 4, 4)), np.zeros((2, 4, 4)) + np.eye(4)),
        (None, "identity"),
        (None, [[1, 0, 0], [0, 1, 0]]),
    ],
)
def test_bad_pose_shapes_raise_value_error(pa, pb):
    for call in (ck.intersects, ck.contacts, ck.query_stats):
        with pytest.raises(ValueError):
            call(BOX, SPHERE, pa, pb)


@pytest.mark.parametrize("threads", [1, None])
def test_empty_batches(threads):
    empty = np.zeros((0, 4, 4))
    for pa, pb in [(None, empty), (empty, None), (empty, empty), (np.eye(4), empty)]:
        r = ck.intersects(BOX, SPHERE, pa, pb, threads=threads)
        assert isinstance(r, np.ndarray) and r.shape == (0,) and r.dtype == np.bool_
        c = ck.contacts(BOX, SPHERE, pa, pb, threads=threads)
        assert isinstance(c, ck.Contacts) and len(c) == 0 and c.counts.shape == (0,) and c.truncated.shape == (0,)
        assert c.pose_index.dtype == np.int64 and c.counts.dtype == np.int64
        s = ck.query_stats(BOX, SPHERE, pa, pb, threads=threads)
        assert isinstance(s, ck.Stats) and s.bv_tests.shape == (0,) and s.colliding.shape == (0,)


def test_contacts_and_stats_return_records_with_scalars_for_one_pose():
    c = ck.contacts(BOX, SPHERE)
    assert isinstance(c, ck.Contacts) and type(c.counts) is int and c.counts > 0 and c.n_poses == 1
    assert np.all(c.pose_index == 0)
    s = ck.query_stats(BOX, SPHERE, None, ck.translation([5, 0, 0]))
    assert isinstance(s, ck.Stats) and s.colliding is False
    c = ck.contacts(BOX, SPHERE, None, ck.translation([5, 0, 0]), mode="first")
    assert isinstance(c, ck.Contacts) and c.counts == 0 and len(c) == 0


def _bad(kind: str) -> np.ndarray:
    T = ck.rotation([1, 2, 3], 0.7)
    T[:3, 3] = [0.1, 0.2, 0.3]
    if kind == "nan":
        T[1, 2] = np.nan
    elif kind == "inf":
        T[0, 3] = np.inf
    elif kind == "-inf-last-row":
        T[3, 3] = -np.inf
    elif kind == "scaled":
        T[:3, :3] *= 1.01
    elif kind == "slightly scaled":
        T[:3, :3] *= 1 + 1e-5
    elif kind == "uniform scale 2":
        T[:3, :3] = 2 * np.eye(3)
    elif kind == "sheared":
        T[0, 1] += 0.1
    elif kind == "reflection":
        T[:3, :3] = np.diag([-1.0, 1.0, 1.0])
    elif kind == "point reflection":
        T[:3, :3] = -np.eye(3)
    elif kind == "last row 2":
        T[3, 3] = 2.0
    elif kind == "last row projective":
        T[3, 0] = 1e-3
    elif kind == "zero":
        T = np.zeros((4, 4))
    return T


BAD_KINDS = [
    "nan", "inf", "-inf-last-row", "scaled", "slightly scaled", "uniform scale 2", "sheared",
    "reflection", "point reflection", "last row 2", "last row projective", "zero",
]  # fmt: skip


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("side", ["pose_a", "pose_b"])
def test_invalid_single_pose(kind, side):
    bad = _bad(kind)
    args = (bad, None) if side == "pose_a" else (None, bad)
    for call in (ck.intersects, ck.contacts, ck.query_stats):
        with pytest.raises(InvalidPoseError) as info:
            call(BOX, SPHERE, *args)
        assert isinstance(info.value, ValueError)
        assert info.value.index == 0
        assert side in str(info.value)


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("side", ["pose_a", "pose_b"])
@pytest.mark.parametrize("index", [0, 5, 11])
def test_invalid_pose_in_batch_names_its_index(kind, side, index):
    P = poses(12, seed=index)
    P[index] = _bad(kind)
    good = ck.translation([0.1, 0, 0])
    for other in (good, poses(12, seed=99)):
        args = (P, other) if side == "pose_a" else (other, P)
        for call in (ck.intersects, ck.contacts, ck.query_stats):
            for threads in (1, None):
                with pytest.raises(InvalidPoseError) as info:
                    call(BOX, SPHERE, *args, threads=threads)
                assert info.value.index == index
                msg = str(info.value)
                assert f"{side}[{index}]" in msg, msg


def test_first_invalid_pose_is_reported():
    P = poses(10)
    P[3] = _bad("scaled")
    P[7] = _bad("nan")
    with pytest.raises(InvalidPoseError) as info:
        ck.intersects(BOX, SPHERE, None, P)
    assert info.value.index == 3


def test_nearly_rigid_poses_are_accepted():
    T = ck.rotation([0.3, -1, 2], 1.1)
    T[:3, :3] += 1e-9 * np.random.default_rng(0).normal(size=(3, 3))  # 9 significant digits
    T[:3, 3] = [0.75, 0, 0]  # the sphere crosses the box's +x face
    assert ck.intersects(BOX, SPHERE, None, T) is True
    assert ck.contacts(BOX, SPHERE, None, T[None]).counts[0] > 0
    rounded = np.round(ck.rotation([1, 1, 0], 0.4), 9)
    assert ck.intersects(BOX, SPHERE, rounded, ck.translation([0.75, 0, 0])) is True
    assert ck.intersects(BOX, SPHERE, rounded[None], ck.translation([0.75, 0, 0])).tolist() == [True]


def test_pose_arrays_are_not_modified():
    P = poses(9)
    P_copy = P.copy()
    ck.contacts(BOX, SPHERE, P, P[::-1].copy())
    ck.intersects(BOX, SPHERE, P[0], P[1])
    assert np.array_equal(P, P_copy)


@pytest.mark.parametrize(
    "strategy", ["descent", Descent(), Descent(tri_test="guigue"), Descent(tri_test="moller")]
)
def test_strategies_are_accepted(strategy):
    P = poses(10)
    expected = ck.intersects(BOX, SPHERE, None, P)
    assert np.array_equal(ck.intersects(BOX, SPHERE, None, P, strategy=strategy), expected)
    assert type(ck.intersects(BOX, SPHERE, None, P[0], strategy=strategy)) is bool
    assert np.array_equal(ck.contacts(BOX, SPHERE, None, P, strategy=strategy).colliding, expected)
    assert np.array_equal(ck.query_stats(BOX, SPHERE, None, P, strategy=strategy).colliding, expected)


@pytest.mark.parametrize("name", ["BVH", "brute", "", "sap", "bvh "])
def test_unknown_strategy_names_raise(name):
    for call in (ck.intersects, ck.contacts, ck.query_stats):
        for pb in (None, poses(3)):
            with pytest.raises(ValueError, match="strategy"):
                call(BOX, SPHERE, None, pb, strategy=name)


def test_strategy_record_validation():
    with pytest.raises(ValueError):
        Descent(tri_test="exact")
    with pytest.raises(ValueError):
        Descent(tri_test="Moller")
    for bad in (3, None, object()):
        with pytest.raises((TypeError, ValueError)):
            ck.contacts(BOX, SPHERE, strategy=bad)


BAD_THREADS = [0, -1, 1.5, True, False, "2", 2.0]


@pytest.mark.parametrize("threads", BAD_THREADS)
def test_bad_thread_counts(threads):
    for call in (ck.intersects, ck.contacts, ck.query_stats):
        for pb in (poses(12), poses(3), poses(1)):
            with pytest.raises(ValueError, match="threads"):
                call(BOX, SPHERE, None, pb, threads=threads)
    for call in (ck.contacts, ck.query_stats):
        with pytest.raises(ValueError, match="threads"):
            call(BOX, SPHERE, None, None, threads=threads)


@pytest.mark.parametrize("threads", [0, "2"])
def test_bad_thread_counts_single_pose_intersects(threads):
    with pytest.raises(ValueError, match="threads"):
        ck.intersects(BOX, SPHERE, None, None, threads=threads)


def test_good_thread_counts():
    P = poses(PARALLEL_BATCH)
    expected = ck.intersects(BOX, SPHERE, None, P, threads=1)
    for threads in (None, 1, 2, 3, 64, np.int64(2), np.int32(1)):
        assert np.array_equal(ck.intersects(BOX, SPHERE, None, P, threads=threads), expected)


@pytest.mark.parametrize("max_pairs", [0, -1, 1.5, True, "3"])
def test_bad_max_pairs(max_pairs):
    with pytest.raises(ValueError, match="max_pairs"):
        ck.contacts(BOX, SPHERE, max_pairs=max_pairs)


def test_bad_modes():
    with pytest.raises(ValueError, match="mode"):
        ck.contacts(BOX, SPHERE, mode="any")
    with pytest.raises(ValueError, match="mode"):
        ck.contacts(BOX, SPHERE, mode="ALL")
    with pytest.raises(ValueError, match="mode"):
        ck.query_stats(BOX, SPHERE, mode="none")


def test_non_meshes_are_rejected():
    for bad in (None, BOX.vertices, "box"):
        with pytest.raises(TypeError):
            ck.intersects(BOX, bad)
        with pytest.raises(TypeError):
            ck.contacts(bad, BOX, None, poses(3))
