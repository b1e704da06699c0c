"""The pieces of the distance descent (kernels/proximity/distance.py) checked on their own:
the overlap pre-pass decides intersection exactly like ``intersects``, and the
directional node and leaf bounds never exceed the true gap of the triangles below."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.brute import mapped_triangles, scene

import collisionkit as ck
from collisionkit.bvh import pair_trees as trees
from collisionkit.constants import TRI_TEST_GUIGUE
from collisionkit.kernels.core.linalg import relative_pose
from collisionkit.kernels.proximity.distance import _tri_leaf_gap2, dir_gap2, first_contact
from collisionkit.kernels.triangle.tri_tri import tri_tri_intersect

TORUS = ck.primitives.torus_mesh(1.0, 0.25, 12, 8)
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 6, 10)


def _setup(a, b, Ta, Tb):
    ta, tb = trees(a, b)
    x, y = ta.arrays, tb.arrays
    R, t = relative_pose(Ta, Tb)
    AbsR = tuple(abs(q) for q in R)
    slack = 64.0 * 2.0**-53 * (float(x.scale[0] + y.scale[0]) + sum(abs(q) for q in t))
    return ta, x, y, R, AbsR, t, slack


@pytest.mark.parametrize("bv", ["aabb", "obb"])
def test_first_contact_matches_intersects(bv):
    a, b = TORUS.with_options(bv=bv), SPHERE.with_options(bv=bv)
    pa, pb = scene(a, b, 0.6, 80, seed=21)
    hits = 0
    for k in range(80):
        ta, x, y, R, AbsR, t, slack = _setup(a, b, pa[k], pb[k])
        stack = np.empty((256, 2), np.int64)
        ja, jb, _, _ = first_contact(x.topo, x.bv, x.tris, y.topo, y.bv, y.tris, R, AbsR, t, bv == "obb", slack, stack)
        assert (ja >= 0) == bool(ck.intersects(a, b, pa[k], pb[k]))
        if ja >= 0:
            hits += 1
            B = mapped_triangles(b, pa[k], pb[k])[y.face_ids[jb]]
            assert tri_tri_intersect(np.array(x.tris[ja]), np.array(B), np.int64(TRI_TEST_GUIGUE))
    assert 0 < hits < 80


def _leaves_below(topo, i):
    """Leaf-order triangle indices under node i."""
    out, todo = [], [i]
    while todo:
        n = todo.pop()
        if topo[n, 2] & 1:
            out.extend(range(topo[n, 0], topo[n, 0] + topo[n, 1]))
        else:
            todo.extend(range(topo[n, 0], topo[n, 0] + topo[n, 1]))
    return out


@pytest.mark.parametrize("bv", ["aabb", "obb"])
def test_directional_bounds_are_lower_bounds(bv):
    a, b = TORUS.with_options(bv=bv), SPHERE.with_options(bv=bv)
    rng = np.random.default_rng(5)
    pa, pb = scene(a, b, 1.3, 6, seed=8)
    checked = positive = 0
    for k in range(6):
        ta, x, y, R, AbsR, t, slack = _setup(a, b, pa[k], pb[k])
        B_all = mapped_triangles(b, pa[k], pb[k])[y.face_ids]  # leaf order
        for _ in range(40):
            v = rng.normal(size=3)
            v /= np.linalg.norm(v)
            v = (float(v[0]), float(v[1]), float(v[2]))
            w = tuple(float(q) for q in np.asarray(R).reshape(3, 3).T @ np.asarray(v))
            ia = int(rng.integers(x.topo.shape[0]))
            ib = int(rng.integers(y.topo.shape[0]))
            A = x.tris[_leaves_below(x.topo, ia)].reshape(-1, 3)
            Bn = B_all[_leaves_below(y.topo, ib)]
            true_gap = float((Bn.reshape(-1, 3) @ v).min() - (A @ v).max())
            g2 = dir_gap2(bv == "obb", v, w, R, t, x.bv, ia, y.bv, ib, slack)
            assert math.sqrt(g2) <= max(true_gap, 0.0)
            # one of b's triangles against a's node ia
            tri = Bn[0]
            lo, hi = tri.min(axis=0), tri.max(axis=0)
            sb = float((tri @ v).min())
            lg = _tri_leaf_gap2(
                bv == "obb", True, v, x.bv, ia, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], sb, slack
            )  # fmt: skip
            box_gap = np.maximum(0.0, np.maximum(lo - A.max(axis=0), A.min(axis=0) - hi))
            assert math.sqrt(lg) <= max(max(sb - float((A @ v).max()), 0.0), float(np.linalg.norm(box_gap))) + 1e-15
            checked += 1
            positive += g2 > 0
    assert checked == 240 and positive > 10


@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere"])
@pytest.mark.parametrize("shrink", [0.5, 0.1])
def test_relative_error_lower_bound_never_exceeds_the_distance(bv, shrink):
    """``distance_task`` in relative-error mode (shrink < 1) reports in out[11] a squared LOWER
    bound of the true distance, which the certified edge search relies on. Before: a root pair
    pruned at once (after a warm-start seed, or at upper2 * shrink) left its bound out, and the
    reported "lower bound" could exceed the distance (a free edge certified through an obstacle)."""
    from collisionkit.kernels.proximity.distance import N_DSTATS, _stack_rows, distance_task

    ta_mesh = ck.primitives.torus_mesh(1.0, 0.25, 24, 12).with_options(bv=bv)
    tb_mesh = ck.primitives.uv_sphere_mesh(0.4).with_options(bv=bv)
    ta, tb = trees(ta_mesh, tb_mesh)
    x, y = ta.arrays, tb.arrays
    n = _stack_rows(x.meta, y.meta)
    stack, lbs, buf = np.empty((n, 2), np.int64), np.empty(n), np.empty((24, 3))
    out, stats = np.empty((1, 12)), np.zeros((1, N_DSTATS), np.int64)
    rng = np.random.default_rng(4)
    Ta = np.eye(4)
    checked = 0
    for _ in range(120):
        Tb = ck.random_poses(1, 2.0, seed=int(rng.integers(1 << 30)))[0]
        exact = ck.distance(ta_mesh, tb_mesh, Ta, Tb).distance
        if exact == 0.0:
            continue
        upper = exact * rng.uniform(1.05, 3.0)
        # seeds: a real triangle pair (warm start) or none
        seed_a = np.int64(rng.integers(x.tris.shape[0])) if rng.random() < 0.5 else np.int64(-1)
        seed_b = np.int64(rng.integers(y.tris.shape[0])) if seed_a >= 0 else np.int64(-1)
        d2 = distance_task(
            x.topo, x.bv, x.tris, Ta, y.topo, y.bv, y.tris, Tb,
            float(x.scale[0] + y.scale[0]), ta.bv_code, upper * upper, shrink, seed_a, seed_b,
            stack, lbs, buf, out, stats, np.int64(0),
        )  # fmt: skip
        if math.isinf(d2):
            continue
        low2 = out[0, 11]
        assert d2 >= exact * exact * (1 - 1e-12), (d2, exact)  # a real pair: at least the distance
        assert d2 * shrink <= exact * exact * (1 + 1e-9)  # within the factor the mode promises
        assert low2 <= exact * exact * (1 + 1e-12), (low2, exact * exact)  # a lower bound
        checked += 1
    assert checked > 60


@pytest.mark.parametrize("bv", ["aabb", "obb"])
def test_no_point_buffer_gives_the_same_distance_without_contact_points(bv):
    """``distance_task`` with a (0, 3) point buffer (the robot's edge search, which reads no
    points and so never compiles the intersection segment): the same distance, triangle pair
    and lower bound as with the (24, 3) buffer on intersecting and separate poses; the contact
    point of an intersecting pair NaN instead of the segment's midpoint."""
    from collisionkit.kernels.proximity.distance import N_DSTATS, _stack_rows, distance_task

    a = ck.primitives.torus_mesh(1.0, 0.25, 24, 12).with_options(bv=bv)
    b = ck.primitives.uv_sphere_mesh(0.4).with_options(bv=bv)
    ta, tb = trees(a, b)
    x, y = ta.arrays, tb.arrays
    n = _stack_rows(x.meta, y.meta)
    stack, lbs = np.empty((n, 2), np.int64), np.empty(n)
    stats = np.zeros((1, N_DSTATS), np.int64)
    Ta = np.eye(4)
    crossing = 0
    for k, Tb in enumerate(ck.random_poses(60, 1.5, seed=9)):
        rows = []
        for buf in (np.empty((24, 3)), np.empty((0, 3))):
            out = np.zeros((1, 12))
            d2 = distance_task(
                x.topo, x.bv, x.tris, Ta, y.topo, y.bv, y.tris, Tb,
                float(x.scale[0] + y.scale[0]), ta.bv_code, math.inf, 1.0, np.int64(-1), np.int64(-1),
                stack, lbs, buf, out, stats, np.int64(0),
            )  # fmt: skip
            rows.append((d2, out[0].copy()))
        (d_pts, with_pts), (d_none, without) = rows
        assert d_pts == d_none and with_pts[0] == without[0], k
        np.testing.assert_array_equal(with_pts[7:12], without[7:12])
        if d_pts == 0.0:
            crossing += 1
            assert bool(ck.intersects(a, b, Ta, Tb))
            assert np.isfinite(with_pts[1:7]).all() and np.isnan(without[1:7]).all()
        else:
            np.testing.assert_array_equal(with_pts[1:7], without[1:7])
    assert 5 < crossing < 55  # both kinds of pose occur
