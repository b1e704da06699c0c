"""distance and penetration accept convex shapes (GJK / the exact convex method)."""

from __future__ import annotations

import numpy as np

import collisionkit as ck


def test_distance_convex_convex_analytic():
    a, b = ck.Box([1, 1, 1]), ck.Sphere(0.5)
    d = ck.distance(a, b, None, ck.translation([2.0, 0, 0]))
    assert abs(d.distance - 1.0) < 1e-9
    assert np.allclose(d.point_a, [0.5, 0, 0], atol=1e-9) and np.allclose(d.point_b, [1.5, 0, 0], atol=1e-9)
    batch = np.stack([ck.translation([x, 0, 0]) for x in (0.5, 2.0, 3.0)])
    db = ck.distance(a, b, None, batch)
    assert db.distance[0] == 0.0 and np.allclose(db.distance[1:], [1.0, 2.0], atol=1e-9)
    far = ck.distance(a, b, None, batch, upper_bound=1.5)
    assert np.isinf(far.distance[2]) and abs(far.distance[1] - 1.0) < 1e-9


def test_distance_convex_mesh_matches_mesh_distance_and_solid_semantics():
    box = ck.Box([2, 2, 2])
    tri = ck.primitives.box_mesh([0.2, 0.2, 0.2])
    # outside: the distance to the box's surface
    d = ck.distance(box, tri, None, ck.translation([3.0, 0, 0]))
    assert abs(d.distance - 1.9) < 1e-9
    # inside the solid box: intersecting, distance 0 (surface distance would be 0.9)
    assert ck.intersects(box, tri)
    assert ck.distance(box, tri).distance == 0.0
    assert ck.distance(tri, box).distance == 0.0


def test_penetration_convex_boxes_exact():
    a, b = ck.Box([1, 1, 1]), ck.Box([1, 1, 1])
    p = ck.penetration(a, b, None, ck.translation([0.8, 0.1, 0.0]))
    assert abs(float(p.depth) - 0.2) < 1e-9 and bool(p.exact)
    s = ck.penetration(ck.Sphere(0.5), a, None, ck.translation([0.8, 0.0, 0.0]))
    assert not bool(s.exact) and float(s.depth) > 0
