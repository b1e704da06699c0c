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


def _two_piece_mesh() -> ck.Mesh:
    """Two separate small closed pieces 1.5 apart (a cube and a coarse torus)."""
    cube = ck.primitives.box_mesh([0.2, 0.2, 0.2])
    ring = ck.primitives.torus_mesh(0.15, 0.05, 8, 6)
    v = np.vstack([cube.vertices, ring.vertices + [1.5, 0.0, 0.0]])
    f = np.vstack([cube.faces, ring.faces + cube.vertices.shape[0]])
    return ck.Mesh(v, f)


def test_convex_mesh_containment_decided_per_piece_as_per_vertex():
    """ISSUE 15 item 5: without a crossing triangle pair, one vertex per connected piece of
    the mesh decides containment (a piece is wholly inside the solid or wholly outside).
    Every shape kind, both orders, per call and batched, against the per-vertex answer
    (all used vertices tested, as before) and the triangle pairs of the surfaces."""
    from collisionkit.kernels.proximity import gjk as kg

    mesh = _two_piece_mesh()
    shapes = [ck.Box([1.0, 0.8, 0.6]), ck.Sphere(0.5), ck.Capsule(0.3, 0.6), ck.Cylinder(0.4, 0.8),
              ck.Convex(np.random.default_rng(2).normal(size=(12, 3)) * 0.4)]  # fmt: skip
    rng = np.random.default_rng(5)
    poses = ck.random_poses(120, 1.0, seed=9)
    # the cube piece near the shape's centre, or the ring piece, or neither: inside, crossing, outside
    centre = rng.integers(0, 3, 120)
    ring_at = -poses[:, :3, 0] * 1.5  # moves the ring (at x = 1.5 in the mesh) to the origin
    poses[:, :3, 3] = np.where(centre[:, None] == 1, ring_at, 0.0) + rng.normal(scale=0.25, size=(120, 3))
    poses[centre == 2, :3, 3] += 3.0
    used = np.ascontiguousarray(mesh.vertices[np.unique(mesh.faces)])
    idx = np.arange(120, dtype=np.int64)
    inside_seen = crossing_seen = 0
    for shape in shapes:
        pairs = ck.contacts(shape, mesh, None, poses, mode="first").counts > 0
        every_vertex = np.zeros(120, bool)
        kg.mesh_vertices_in_solid(shape._tris, used, np.eye(4)[None], poses, np.zeros(120, np.int64), idx,
                                  np.int64(1), idx, every_vertex)  # fmt: skip
        expected = pairs | every_vertex
        inside_seen += int((every_vertex & ~pairs).sum())
        crossing_seen += int(pairs.sum())
        np.testing.assert_array_equal(ck.intersects(shape, mesh, None, poses), expected)
        np.testing.assert_array_equal(ck.intersects(mesh, shape, poses, None), expected)
        for k in range(0, 120, 7):
            assert ck.intersects(shape, mesh, None, poses[k]) == expected[k]
            assert ck.intersects(mesh, shape, poses[k], None) == expected[k]
    assert inside_seen > 0 and crossing_seen > 0  # both ways of colliding were exercised


def test_convex_mesh_per_call_paths_equal_the_batch():
    """The per-call paths of a convex shape against a mesh (distance, contacts, time of impact,
    intersects: the shape's surface, then containment) answer as the registered batch handlers,
    every shape kind, both orders, poses inside, crossing and outside."""
    mesh = _two_piece_mesh()
    shapes = [ck.Box([1.0, 0.8, 0.6]), ck.Sphere(0.5), ck.Capsule(0.3, 0.6), ck.Cylinder(0.4, 0.8)]
    rng = np.random.default_rng(6)
    poses = ck.random_poses(24, 1.0, seed=4)
    poses[:, :3, 3] = rng.normal(scale=0.5, size=(24, 3)) + np.where(np.arange(24)[:, None] % 3 == 0, 2.0, 0.0)
    ends = poses.copy()
    ends[:, :3, 3] = -ends[:, :3, 3]
    zero_seen = 0
    for shape in shapes:
        for flip in (False, True):
            pair = (mesh, shape) if flip else (shape, mesh)

            def call(query, p, pair=pair, flip=flip, **kw):
                return query(*pair, *((p, None) if flip else (None, p)), **kw)

            d = call(ck.distance, poses)
            c = call(ck.contacts, poses)
            hit = call(ck.intersects, poses)
            t = ck.time_of_impact(*pair, None, None, poses, ends) if not flip else ck.time_of_impact(
                *pair, poses, ends, None, None)
            for k in range(24):
                one = call(ck.distance, poses[k])
                assert (one.distance, one.face_a, one.face_b) == (d.distance[k], d.face_a[k], d.face_b[k])
                assert call(ck.intersects, poses[k]) == hit[k] == (d.distance[k] == 0.0)
                assert np.array_equal(call(ck.contacts, poses[k]).pairs(0), c.pairs(k))
                tk = ck.time_of_impact(*pair, None, None, poses[k], ends[k]) if not flip else ck.time_of_impact(
                    *pair, poses[k], ends[k], None, None)
                assert (tk.colliding, tk.t, tk.face_a, tk.face_b) == (t.colliding[k], t.t[k], t.face_a[k], t.face_b[k])
                zero_seen += one.distance == 0.0 and len(c.pairs(k)) == 0  # held inside: 0 without pairs
    assert zero_seen > 0


def test_convex_convex_distance_per_call_equals_the_batch_rows():
    """The per-call GJK distance path answers as the batch rows, to the bit: every pair of
    shape kinds, overlapping and apart, with an upper bound, and at a scale outside the
    kernel's band (the per-call path hands it to the prescaling batch path)."""
    shapes = [ck.Box([1.0, 0.8, 0.6]), ck.Sphere(0.5), ck.Capsule(0.3, 0.6), ck.Cylinder(0.4, 0.8),
              ck.Convex(np.random.default_rng(2).normal(size=(12, 3)) * 0.4)]  # fmt: skip
    poses = ck.random_poses(12, 1.0, seed=3)
    poses[:, :3, 3] *= np.linspace(0.1, 2.5, 12)[:, None]
    for a in shapes:
        for b in shapes:
            for upper in (np.inf, 1.2):
                batch = ck.distance(a, b, None, poses, upper_bound=upper)
                for k in range(12):
                    one = ck.distance(a, b, None, poses[k], upper_bound=upper)
                    assert one.distance == batch.distance[k] or (np.isinf(one.distance) and np.isinf(batch.distance[k]))
                    np.testing.assert_array_equal(one.point_a, batch.point_a[k])
                    np.testing.assert_array_equal(one.point_b, batch.point_b[k])
                    assert (one.face_a, one.face_b, one.node_pairs, one.tri_tests) == (-1, -1, 0, 0)
                    assert not one.point_a.flags.writeable
    assert 0 < int((batch.distance == 0).sum()) < 12  # overlaps and gaps both compared
    far = ck.translation([3e60, 0.0, 0.0])  # outside the band: the prescaled batch path
    big = ck.distance(shapes[0], shapes[1], None, far)
    assert big.distance == ck.distance(shapes[0], shapes[1], None, far[None]).distance[0] > 0
