"""GJK boolean and distance for convex shapes, against independent oracles.

* booleans: the exact oracle of ``tests/convex_cases.py`` (brute-force exact
  triangle pairs + rational containment), so one solid inside the other counts;
* distances: brute force over vertex-triangle and edge-edge pairs in numpy, and
  Coal's GJK distance; closed forms for the smooth primitives.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import scene
from tests.convex_cases import cube, dodecahedron, exact_colliding, octahedron, prism, random_hull, seed_shapes

import collisionkit as ck
from collisionkit.query.convex import gjk_distance

SEED_PAIRS = [("cube", "cube"), ("cube", "prism9"), ("prism9", "prism9"), ("dodecahedron", "octahedron")]


@pytest.mark.parametrize("na,nb", SEED_PAIRS)
def test_boolean_equals_exact_oracle_seed_shapes(na, nb):
    shapes = seed_shapes()
    a, b = shapes[na], shapes[nb]
    pa, pb = scene(a.mesh, b.mesh, 1.0, 300, seed=SEED_PAIRS.index((na, nb)))
    got = ck.intersects(a, b, pa, pb)
    want = exact_colliding(a, b, pa, pb)
    assert 0.1 < want.mean() < 0.9
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(4))
def test_boolean_equals_exact_oracle_random_hulls(seed):
    a, b = random_hull(seed), random_hull(seed + 100, n=20)
    pa, pb = scene(a.mesh, b.mesh, 1.0, 250, seed=seed)
    np.testing.assert_array_equal(ck.intersects(a, b, pa, pb), exact_colliding(a, b, pa, pb))


def test_containment_counts_as_collision():
    big, small = cube(), ck.Box([0.1, 0.2, 0.05])
    inside = ck.translation([0.2, -0.1, 0.3]) @ ck.rotation([1, 2, 3], 0.7)
    assert ck.intersects(big, small, None, inside)
    assert ck.intersects(small, big, inside, None)
    assert not ck.contacts(big, small, None, inside).counts  # no surface pair
    assert ck.intersects(dodecahedron(), ck.Sphere(0.05), None, ck.translation([0.1, 0.0, 0.2]))
    assert ck.intersects(ck.Sphere(2.0), octahedron(), None, ck.translation([0.3, 0.0, 0.0]))


def test_touching_and_just_apart_exact():
    a = cube()
    for axis in range(3):
        t = np.zeros(3)
        t[axis] = 1.0
        assert ck.intersects(a, a, None, ck.translation(t))  # face contact
        t[axis] = np.nextafter(1.0, 2.0)
        assert not ck.intersects(a, a, None, ck.translation(t))
    # edge and vertex contact
    assert ck.intersects(a, a, None, ck.translation([1.0, 1.0, 0.3]))
    assert ck.intersects(a, a, None, ck.translation([1.0, 1.0, 1.0]))
    assert not ck.intersects(a, a, None, ck.translation([1.0, 1.0, np.nextafter(1.0, 2.0)]))
    # octahedron vertex on the cube's face, after an exact rotation
    o = octahedron(0.5)
    assert ck.intersects(a, o, None, ck.translation([1.0, 0.1, 0.2]))
    assert not ck.intersects(a, o, None, ck.translation([np.nextafter(1.0, 2.0), 0.1, 0.2]))


def test_batch_serial_parallel_and_single_agree():
    a, b = dodecahedron(), prism()
    pa, pb = scene(a.mesh, b.mesh, 1.0, 200, seed=5)
    batch = ck.intersects(a, b, pa, pb)
    np.testing.assert_array_equal(batch, ck.intersects(a, b, pa, pb, threads=1))
    single = [ck.intersects(a, b, pa[i], pb[i]) for i in range(20)]
    assert single == batch[:20].tolist()
    assert ck.intersects(a, b, pa[:0], pb[:0]).shape == (0,)


def test_strategy_gjk_and_stats():
    a = cube()
    poses = ck.random_poses(64, radius=2.5, seed=3)
    # refereed by the exact oracle (brute-force surfaces + containment), not by another GJK run
    base = exact_colliding(a, a, None, poses)
    assert 0 < base.sum() < len(poses)
    np.testing.assert_array_equal(ck.intersects(a, a, None, poses), base)
    np.testing.assert_array_equal(ck.intersects(a, a, None, poses, strategy="gjk"), base)
    st = ck.query_stats(a, a, None, poses)
    np.testing.assert_array_equal(st.colliding, base)
    assert (st.bv_tests > 0).all()  # GJK rounds
    with pytest.raises(ck.UnsupportedOptionError):
        ck.intersects(a.mesh, a.mesh, None, poses, strategy="gjk")


def test_bad_poses_raise():
    a = cube()
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(ck.InvalidPoseError):
        ck.intersects(a, a, None, bad)
    with pytest.raises(ValueError):
        ck.intersects(a, a, np.zeros((2, 4, 4)) + np.eye(4), np.zeros((3, 4, 4)) + np.eye(4))


# --- distance -------------------------------------------------------------------------


def _seg_seg(p1, q1, p2, q2):
    """Distances between segment batches (Ericson 5.1.9, vectorised; parallel-safe)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.einsum("ij,ij->i", d1, d1)
    e = np.einsum("ij,ij->i", d2, d2)
    f = np.einsum("ij,ij->i", d2, r)
    c = np.einsum("ij,ij->i", d1, r)
    b = np.einsum("ij,ij->i", d1, d2)
    den = a * e - b * b
    sa = np.where(a > 0, a, 1.0)
    s = np.where(den > 1e-14 * a * e, np.clip((b * f - c * e) / np.where(den > 0, den, 1), 0, 1), 0.0)
    t = (b * s + f) / e
    s = np.where(t < 0, np.clip(-c / sa, 0, 1), np.where(t > 1, np.clip((b - c) / sa, 0, 1), s))
    s = np.where(a > 0, s, 0.0)  # a point: s = 0, t = its projection
    t = np.where(a > 0, np.clip(t, 0, 1), np.clip(f / e, 0, 1))
    return np.linalg.norm(p1 + d1 * s[:, None] - p2 - d2 * t[:, None], axis=1)


def _point_tri(p, tri):
    """Distances from points (P, 3) to triangles (T, 3, 3): (P, T)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    out = np.full((p.shape[0], tri.shape[0]), np.inf)
    for i, q in enumerate(p):
        h = np.einsum("ij,ij->i", q - a, n)
        x = q - h[:, None] * n
        inside = (
            (np.einsum("ij,ij->i", np.cross(b - a, x - a), n) >= 0)
            & (np.einsum("ij,ij->i", np.cross(c - b, x - b), n) >= 0)
            & (np.einsum("ij,ij->i", np.cross(a - c, x - c), n) >= 0)
        )
        d = np.where(inside, np.abs(h), np.inf)
        for u, v in ((a, b), (b, c), (c, a)):
            d = np.minimum(d, _seg_seg(np.broadcast_to(q, u.shape), np.broadcast_to(q, u.shape) + 0.0, u, v))
        out[i] = d
    return out


def brute_distance(a: ck.Convex, b: ck.Convex, Ta, Tb) -> float:
    """Distance between two disjoint polyhedra: vertex-face and edge-edge minima (world frame)."""
    ta = np.asarray(a.mesh.triangles) @ Ta[:3, :3].T + Ta[:3, 3]
    tb = np.asarray(b.mesh.triangles) @ Tb[:3, :3].T + Tb[:3, 3]
    va = np.asarray(a.vertices) @ Ta[:3, :3].T + Ta[:3, 3]
    vb = np.asarray(b.vertices) @ Tb[:3, :3].T + Tb[:3, 3]
    d = min(_point_tri(va, tb).min(), _point_tri(vb, ta).min())
    ea = np.vstack([ta[:, [0, 1]], ta[:, [1, 2]], ta[:, [2, 0]]])
    eb = np.vstack([tb[:, [0, 1]], tb[:, [1, 2]], tb[:, [2, 0]]])
    i, j = np.meshgrid(np.arange(len(ea)), np.arange(len(eb)), indexing="ij")
    i, j = i.ravel(), j.ravel()
    return float(min(d, _seg_seg(ea[i, 0], ea[i, 1], eb[j, 0], eb[j, 1]).min()))


@pytest.mark.parametrize(
    "pair", [(cube, dodecahedron), (prism, octahedron), (lambda: random_hull(7), lambda: random_hull(8, 25))]
)
def test_distance_vs_brute_force(pair):
    a, b = pair[0](), pair[1]()
    pa, pb = scene(a.mesh, b.mesh, 1.5, 60, seed=11)
    dist, pta, ptb = gjk_distance(a, b, pa, pb)
    hit = ck.intersects(a, b, pa, pb)
    np.testing.assert_array_equal(dist == 0.0, hit)
    checked = 0
    for k in np.flatnonzero(~hit)[:25]:
        want = brute_distance(a, b, pa[k], pb[k])
        assert dist[k] == pytest.approx(want, rel=1e-9, abs=1e-12)
        # closest points: on the shapes (inside, up to rounding) and dist apart
        assert np.linalg.norm(pta[k] - ptb[k]) == pytest.approx(dist[k], rel=1e-9, abs=1e-12)
        la = np.linalg.solve(pa[k][:3, :3], pta[k] - pa[k][:3, 3])
        A, bb = a.halfspaces
        assert (A @ la <= bb + 1e-9).all()
        checked += 1
    assert checked >= 10


def _coal_shape(s):
    coal = pytest.importorskip("coal")
    if isinstance(s, ck.Sphere):
        return coal.Sphere(s.radius)
    if isinstance(s, ck.Capsule):
        return coal.Capsule(s.radius, s.length)
    if isinstance(s, ck.Cylinder):
        return coal.Cylinder(s.radius, s.length)
    v = coal.StdVec_Vec3s()
    for p in np.asarray(s.vertices):
        v.append(p)
    return coal.Convex.convexHull(v, True, "Qt")


def _coal_tf(T):
    coal = pytest.importorskip("coal")
    tf = coal.Transform3s()
    tf.setRotation(np.ascontiguousarray(T[:3, :3]))
    tf.setTranslation(np.ascontiguousarray(T[:3, 3]))
    return tf


@pytest.mark.parametrize(
    "make_a,make_b",
    [
        (cube, dodecahedron),
        (lambda: ck.Sphere(0.4), prism),
        (lambda: ck.Capsule(0.2, 0.8), octahedron),
        (lambda: ck.Cylinder(0.3, 0.9), cube),
        (lambda: ck.Cylinder(0.3, 0.9), lambda: ck.Capsule(0.25, 0.5)),
    ],
)
def test_distance_vs_coal(make_a, make_b):
    coal = pytest.importorskip("coal")
    a, b = make_a(), make_b()
    ga, gb = _coal_shape(a), _coal_shape(b)
    pa, pb = scene(a.mesh, b.mesh, 1.6, 60, seed=21)
    dist, _, _ = gjk_distance(a, b, pa, pb)
    n = 0
    for k in range(len(pa)):
        req, res = coal.DistanceRequest(), coal.DistanceResult()
        d = coal.distance(ga, _coal_tf(pa[k]), gb, _coal_tf(pb[k]), req, res)
        if d > 1e-3:
            # Coal's default GJK tolerance is 1e-6 (absolute, on the distance)
            assert dist[k] == pytest.approx(d, abs=2e-6), k
            n += 1
        elif d < -1e-3:
            assert dist[k] == 0.0
    assert n >= 10


def test_smooth_primitives_closed_forms():
    s = ck.Sphere(0.5)
    for d in (0.3, 0.99, 1.01, 2.5):
        dist = gjk_distance(s, s, None, ck.translation([d * 0.6, d * 0.8, 0.0]))[0]
        assert dist == pytest.approx(max(0.0, d - 1.0), abs=1e-12)
        assert ck.intersects(s, s, None, ck.translation([d * 0.6, d * 0.8, 0.0])) == (d <= 1.0)
    cap = ck.Capsule(0.25, 1.0)  # segment z in [-0.5, 0.5]
    T = ck.translation([0.0, 0.7, 1.2]) @ ck.rotation([1, 0, 0], np.pi / 2)  # b's axis along y
    # closest core points: (0, 0, 0.5) and (0, 0.2, 1.2) (b's segment spans y in [0.2, 1.2])
    assert gjk_distance(cap, cap, None, T)[0] == pytest.approx(np.hypot(0.2, 0.7) - 0.5, abs=1e-12)
    cyl = ck.Cylinder(0.5, 1.0)
    assert gjk_distance(cyl, cyl, None, ck.translation([0.3, 0.4, 1.75]))[0] == pytest.approx(0.75, abs=1e-9)
    assert gjk_distance(cyl, cyl, None, ck.translation([1.2, 1.6, 0.2]))[0] == pytest.approx(1.0, abs=1e-9)
    assert ck.intersects(cyl, ck.Sphere(0.1), None, ck.translation([0.6, 0.0, 0.6])) is False
    assert ck.intersects(cyl, ck.Sphere(0.1), None, ck.translation([0.55, 0.0, 0.45])) is True
    box = ck.Box([1.0, 2.0, 3.0])
    # sphere against the box corner region: distance to the corner (0.5, 1, 1.5)
    c = np.array([0.5, 1.0, 1.5]) + np.array([0.3, 0.4, 1.2])
    assert gjk_distance(box, ck.Sphere(0.2), None, ck.translation(c))[0] == pytest.approx(1.3 - 0.2, abs=1e-12)
