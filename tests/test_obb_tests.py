"""The three OBB-OBB tests (kernels/volumes/obb_tests.py) against the separating-axis test.

The SAT is exact up to rounding (Gottschalk et al. 1996); the edge/face tests of
seed 004 (144 tests; the 60-test front-face variant) must give the same answer
once the containment check is added. Default run: 100,000 random pairs over
three kinds of scenes; the millions are in ``python -m benchmarks.obb_tests``.
"""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit  # noqa: F401  (numba cache configuration)
from collisionkit.kernels.volumes import obb_tests as T
from collisionkit.kernels.volumes.box import boxes_overlap  # noqa: F401  (the trees' SAT, reused by T)


def _boxes(n: int, seed: int, spread: float) -> np.ndarray:
    out = np.empty((n, 15))
    T.random_boxes(np.int64(n), np.int64(seed), spread, out)
    return out


def _run(a: np.ndarray, b: np.ndarray, code: int) -> tuple[np.ndarray, np.ndarray]:
    out = np.empty(a.shape[0], np.bool_)
    ops = np.zeros(2, np.int64)
    T.obb_overlap_batch(a, b, np.int64(code), True, out, ops)
    return out, ops


def _box(centre, axes, half) -> np.ndarray:
    return np.concatenate([np.asarray(centre, float), np.asarray(axes, float).reshape(-1), np.asarray(half, float)])


def _rot(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


@pytest.mark.parametrize("spread,seed", [(2.0, 11), (0.75, 12), (1.25, 13)])
def test_edge_face_tests_agree_with_sat_on_random_pairs(spread, seed):
    n = 25_000
    a, b = _boxes(n, seed, spread), _boxes(n, seed + 100, spread)
    sat, sat_ops = _run(a, b, T.OBB_TEST_SAT)
    assert 0.05 < sat.mean() < 0.95  # both outcomes well represented
    for code in (T.OBB_TEST_EDGE_FACE, T.OBB_TEST_FRONT_FACES):
        got, ops = _run(a, b, code)
        bad = np.flatnonzero(got != sat)
        assert bad.size == 0, f"method {code} disagrees with the SAT on pairs {bad[:5]}"
    # counters: the SAT tests at most 15 axes, stops early on misses
    assert n <= sat_ops[0] <= 15 * n


def test_nested_boxes_need_the_containment_check():
    n = 25_000
    rng = np.random.default_rng(5)
    a = _boxes(n, 21, 0.0)
    b = _boxes(n, 22, 0.0)
    b[:, 12:15] *= rng.uniform(0.05, 0.2, (n, 1))
    b[:, :3] = a[:, :3] + rng.uniform(-0.3, 0.3, (n, 3))
    sat, _ = _run(a, b, T.OBB_TEST_SAT)
    for code in (T.OBB_TEST_EDGE_FACE, T.OBB_TEST_FRONT_FACES):
        got, _ = _run(a, b, code)
        assert np.array_equal(got, sat)
    # as the seed states them (no containment check) they miss nested boxes
    for code in (T.OBB_TEST_EDGE_FACE_ONLY, T.OBB_TEST_FRONT_FACES_ONLY):
        got, _ = _run(a, b, code)
        assert not np.any(got & ~sat), "an edge/face test reported a separated pair as overlapping"
        assert np.count_nonzero(sat & ~got) > n // 10


def test_box_inside_box_and_far_apart():
    big = _box([0, 0, 0], _rot([1, 2, 3], 0.4), [2, 2, 2])
    small = _box([0.1, -0.2, 0.3], _rot([0, 1, 1], 1.1), [0.2, 0.3, 0.1])
    far = _box([10, 0, 0], np.eye(3), [1, 1, 1])
    for a, b, expected in [(big, small, True), (small, big, True), (big, far, False)]:
        A, B = a[None].copy(), b[None].copy()
        for code in (T.OBB_TEST_SAT, T.OBB_TEST_EDGE_FACE, T.OBB_TEST_FRONT_FACES):
            assert bool(_run(A, B, code)[0][0]) is expected, (code, expected)
    got, _ = _run(big[None].copy(), small[None].copy(), T.OBB_TEST_EDGE_FACE_ONLY)
    assert not got[0]  # Theorem 1 alone: "no edge crosses a face"


def test_edge_crossing_cases():
    # a long thin bar through a cube (edges of the bar cross two faces of the cube)
    cube = _box([0, 0, 0], np.eye(3), [1, 1, 1])
    bar = _box([0, 0.5, 0.5], _rot([0, 0, 1], 0.3), [3, 0.05, 0.05])
    # an edge-edge configuration: two boxes rotated 45 degrees about different axes
    e1 = _box([0, 0, 0], _rot([1, 0, 0], np.pi / 4), [1, 1, 1])
    e2 = _box([0, 0, 2.3], _rot([0, 1, 0], np.pi / 4), [1, 1, 1])  # edges 2*sqrt(2) = 2.83 apart on z: overlap
    e3 = _box([0, 0, 2.9], _rot([0, 1, 0], np.pi / 4), [1, 1, 1])  # 2.9 > 2.83: separated by the edge-edge axis
    for a, b, expected in [(cube, bar, True), (e1, e2, True), (e1, e3, False)]:
        for code in (T.OBB_TEST_SAT, T.OBB_TEST_EDGE_FACE, T.OBB_TEST_FRONT_FACES):
            assert bool(_run(a[None].copy(), b[None].copy(), code)[0][0]) is expected, (code, expected)


def test_operation_counts_bounds():
    n = 5000
    a, b = _boxes(n, 31, 1.0), _boxes(n, 32, 1.0)
    _, ops_full = _run(a, b, T.OBB_TEST_EDGE_FACE)
    _, ops_front = _run(a, b, T.OBB_TEST_FRONT_FACES)
    # 144 edge/face tests + 2 containment checks at most; the front-face test 54 + 6 cosines + 2
    assert ops_full[0] <= 146 * n
    assert ops_front[0] <= 62 * n
    assert ops_front[0] < ops_full[0] and ops_front[1] < ops_full[1]
