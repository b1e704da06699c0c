"""penetration: analytic box/sphere cases, Coal's EPA on convex pairs, the sampled
method's validity (its translation separates) and its gap on convex pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.query.penetration import hull, is_convex

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 10, 20)
TORUS = ck.primitives.torus_mesh(1.0, 0.3, 24, 12)


def test_hull_check():
    assert is_convex(BOX) and is_convex(SPHERE)
    assert not is_convex(TORUS)
    open_tri = ck.Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    assert not is_convex(open_tri)
    assert hull(BOX).normals.shape == (6, 3) and hull(BOX).edges.shape == (12, 3, 3)


def test_boxes_analytic():
    p = ck.penetration(BOX, BOX, None, ck.translation([0.8, 0.1, 0.0]))
    assert p.exact and p.method == "convex"
    assert p.depth == pytest.approx(0.2, abs=1e-12)
    np.testing.assert_allclose(p.direction, [1.0, 0.0, 0.0], atol=1e-12)
    # a's pose matters: world frame
    Ta = ck.rotation([0, 0, 1], math.pi / 2)
    p = ck.penetration(BOX, BOX, Ta, ck.translation([0.1, 0.7, 0.0]))
    assert p.depth == pytest.approx(0.3, abs=1e-12)
    np.testing.assert_allclose(p.direction, [0.0, 1.0, 0.0], atol=1e-12)
    # not overlapping: depth 0
    p = ck.penetration(BOX, BOX, None, ck.translation([1.5, 0.0, 0.0]))
    assert p.depth == 0.0 and p.method == "none"
    # deep inside: the smallest way out
    small = ck.primitives.box_mesh([0.2, 0.2, 0.2])
    p = ck.penetration(BOX, small, None, ck.translation([0.0, 0.0, 0.3]))
    assert p.depth == pytest.approx(0.3, abs=1e-12)
    np.testing.assert_allclose(p.direction, [0.0, 0.0, 1.0], atol=1e-12)


def test_spheres_near_analytic():
    # polyhedral spheres: depth between the inscribed and circumscribed answers
    d = 0.7
    p = ck.penetration(SPHERE, SPHERE, None, ck.translation([d, 0.0, 0.0]))
    assert p.exact
    assert 1.0 - d - 0.03 <= p.depth <= 1.0 - d + 1e-12
    assert p.direction[0] > 0.95


def _coal_depth(a, b, Ta, Tb):
    coal = pytest.importorskip("coal")

    def shape(m):
        v = coal.StdVec_Vec3s()
        for p in hull(m).vertices:
            v.append(np.asarray(p, dtype=float))
        return coal.Convex.convexHull(v, False, "")

    ta, tb = coal.Transform3s(), coal.Transform3s()
    ta.setRotation(Ta[:3, :3])
    ta.setTranslation(Ta[:3, 3])
    tb.setRotation(Tb[:3, :3])
    tb.setTranslation(Tb[:3, 3])
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    coal.distance(shape(a), ta, shape(b), tb, req, res)
    return -res.min_distance, np.asarray(res.normal)


@pytest.mark.parametrize("pair", ["box-box", "sphere-box", "hull-hull"])
def test_against_coal_epa(pair):
    rng = np.random.default_rng(3)
    if pair == "box-box":
        a, b = BOX, ck.primitives.box_mesh([0.5, 1.5, 0.8])
    elif pair == "sphere-box":
        a, b = SPHERE, BOX
    else:
        pts = rng.normal(size=(40, 3))
        from scipy.spatial import ConvexHull

        c = ConvexHull(pts)
        f = c.simplices.copy()
        flip = (
            np.einsum(
                "ij,ij->i", np.cross(pts[f[:, 1]] - pts[f[:, 0]], pts[f[:, 2]] - pts[f[:, 0]]), c.equations[:, :3]
            )
            < 0
        )
        f[flip] = f[flip][:, ::-1]
        a = b = ck.Mesh(pts, f)
        assert is_convex(a)
    compared = 0
    for _ in range(12):
        Ta = ck.random_poses(1, 0.1, seed=int(rng.integers(1e6)))[0]
        Tb = ck.random_poses(1, 0.6, seed=int(rng.integers(1e6)))[0]
        p = ck.penetration(a, b, Ta, Tb)
        want, normal = _coal_depth(a, b, Ta, Tb)
        if want <= 1e-9:
            assert p.depth == 0.0 or p.depth <= 1e-9
            continue
        compared += 1
        assert p.exact
        # Coal's EPA stops at a tolerance: it can only be above the exact minimum, a little
        assert p.depth <= want + 1e-9
        assert p.depth == pytest.approx(want, rel=1e-4, abs=1e-6)
        assert float(p.direction @ normal) > 0.99
    assert compared >= 4


def _separates(a, b, Ta, Tb, p, extra=1e-6):
    T = Tb.copy()
    T[:3, 3] += (p.depth * (1 + extra) + 1e-9) * p.direction
    return not ck.intersects(a, b, Ta, T) and ck.classify(a, b, Ta, T).labels[0] in ("disjoint", "touching")


def test_sampled_on_non_convex_separates():
    small = ck.primitives.box_mesh([0.3, 0.3, 0.3])
    for t in ([1.0, 0.0, 0.1], [0.0, 1.15, 0.0], [0.8, 0.6, 0.2]):
        Tb = ck.translation(t)
        p = ck.penetration(TORUS, small, None, Tb)
        assert p.method == "sampled" and not p.exact and p.error_bound == math.inf
        assert p.depth > 0
        assert _separates(TORUS, small, np.eye(4), Tb, p)
    # a box across the tube on the +x side: the analytic way out is up or down, 0.3 + 0.15
    p = ck.penetration(TORUS, small, None, ck.translation([1.0, 0.0, 0.0]))
    assert p.depth == pytest.approx(0.45, rel=0.02)


def test_sampled_gap_on_convex_pairs():
    rng = np.random.default_rng(8)
    gaps = []
    for _ in range(6):
        Tb = ck.random_poses(1, 0.6, seed=int(rng.integers(1e6)))[0]
        exact = ck.penetration(SPHERE, BOX, None, Tb)
        if exact.depth <= 1e-6:
            continue
        approx = ck.penetration(SPHERE, BOX, None, Tb, method="sampled")
        assert approx.depth >= exact.depth - 1e-6  # an upper bound
        gaps.append(approx.depth / exact.depth - 1)
        assert _separates(SPHERE, BOX, np.eye(4), Tb, approx)
    assert gaps and max(gaps) < 0.05


def test_batch_and_errors():
    poses = np.stack([ck.translation([x, 0, 0]) for x in (0.5, 0.9, 2.0)])
    p = ck.penetration(BOX, BOX, None, poses)
    np.testing.assert_allclose(p.depth, [0.5, 0.1, 0.0], atol=1e-12)
    assert list(p.method) == ["convex", "convex", "none"]
    with pytest.raises(ValueError):
        ck.penetration(BOX, BOX, method="epa2")
    with pytest.raises(ValueError):
        ck.penetration(BOX, BOX, directions=0)
    with pytest.raises(ck.UnsupportedPairError):
        ck.penetration(BOX, "box")
