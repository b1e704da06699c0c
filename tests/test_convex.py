"""Convex shapes: construction, both representations, bad input, and the pair
semantics against meshes (a convex shape is a solid, a mesh a surface)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import brute_colliding, scene
from tests.convex_cases import cube, dodecahedron, octahedron, prism, random_hull

import collisionkit as ck


def test_from_points_hull_and_halfspaces():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(200, 3))
    c = ck.Convex.from_points(pts)
    A, b = c.halfspaces
    assert np.allclose(np.linalg.norm(A, axis=1), 1.0)
    assert (pts @ A.T <= b + 1e-12).all()  # every input point in the solid
    # each hull vertex is an input point and lies on some plane
    assert all(any(np.all(v == p) for p in pts) for v in c.vertices)
    assert (np.abs(c.vertices @ A.T - b).min(axis=1) < 1e-12).all()
    # outward, closed surface: volume by the divergence theorem is positive and equals the hull's
    from scipy.spatial import ConvexHull

    t = np.asarray(c.mesh.triangles)
    vol = np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6
    assert vol == pytest.approx(ConvexHull(pts).volume, rel=1e-12)
    np.testing.assert_array_equal(c.bounds, [pts.min(axis=0), pts.max(axis=0)])
    assert not c.bounds.flags.writeable


def test_coplanar_facets_are_merged():
    assert cube().halfspaces[0].shape == (6, 3)
    assert octahedron().halfspaces[0].shape == (8, 3)
    assert dodecahedron().halfspaces[0].shape == (12, 3)
    assert prism(9).halfspaces[0].shape == (11, 3)
    assert ck.Box([1, 2, 3]).halfspaces[0].shape == (6, 3)


def test_from_mesh_and_primitives():
    box = ck.primitives.box_mesh([1, 2, 3])
    c = ck.Convex.from_mesh(box)
    np.testing.assert_array_equal(c.bounds, box.bounds)
    torus = ck.primitives.torus_mesh()
    hull = ck.Convex.from_mesh(torus)  # the hull of a non-convex mesh
    assert hull.bounds[1, 0] == pytest.approx(1.25)
    for s, lo, hi in [
        (ck.Sphere(0.5), [-0.5] * 3, [0.5] * 3),
        (ck.Capsule(0.25, 1.0), [-0.25, -0.25, -0.75], [0.25, 0.25, 0.75]),
        (ck.Cylinder(0.5, 2.0), [-0.5, -0.5, -1.0], [0.5, 0.5, 1.0]),
        (ck.Box([1, 2, 4]), [-0.5, -1, -2], [0.5, 1, 2]),
    ]:
        np.testing.assert_allclose(s.bounds, [lo, hi])
        # the tessellation lies inside the true shape and inside the bounds
        v = np.asarray(s.mesh.vertices)
        assert (v >= s.bounds[0] - 1e-12).all() and (v <= s.bounds[1] + 1e-12).all()
        assert s.mesh.n_faces >= 12
    assert ck.Box([1, 1, 1]).is_polytope and not ck.Sphere(1.0).is_polytope


@pytest.mark.parametrize(
    "points",
    [
        [[0, 0, 0], [1, 0, 0], [0, 1, 0]],  # fewer than 4
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]],  # coplanar
        [[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]],  # collinear
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]],  # NaN
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.inf]],
        [[0, 0], [1, 0], [0, 1], [1, 1]],  # 2-D
        [["a", 0, 0]] * 4,
    ],
)
def test_bad_points_raise(points):
    with pytest.raises(ck.InvalidMeshError):
        ck.Convex.from_points(points)


def test_bad_primitive_arguments():
    for bad in (0.0, -1.0, np.nan, "x"):
        with pytest.raises(ValueError):
            ck.Sphere(bad)
    with pytest.raises(ValueError):
        ck.Box([1, 2])
    with pytest.raises(ValueError):
        ck.Capsule(0.1, 0.0)
    with pytest.raises(TypeError):
        ck.Convex.from_mesh(np.zeros((4, 3)))


def test_contains_exact():
    c = cube()
    assert c.contains([[0.5, 0.5, 0.5], [0, 0, 0]]).tolist() == [True, True]
    assert c.contains([[np.nextafter(0.5, 1), 0, 0]]).tolist() == [False]
    assert cube().exactly_convex


# --- convex against mesh -----------------------------------------------------------------


def test_mesh_triangle_inside_solid_intersects():
    big = cube()
    tri = ck.Mesh([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]], [[0, 1, 2]])
    T = ck.translation([0.1, 0.1, 0.1])
    assert ck.intersects(big, tri, None, T) is True
    assert ck.intersects(tri, big, T, None) is True
    assert len(ck.contacts(big, tri, None, T)) == 0  # no surface pair
    # just outside: not intersecting, both orders
    out = ck.translation([np.nextafter(0.5, 1.0), 0.1, 0.1])
    assert ck.intersects(big, tri, None, out) is False
    assert ck.intersects(tri, big, out, None) is False
    # a convex solid inside a closed mesh SURFACE does not touch it
    shell = ck.primitives.box_mesh([3, 3, 3])
    assert ck.intersects(shell, ck.Box([0.5, 0.5, 0.5])) is False


@pytest.mark.parametrize("convex_first", [True, False])
def test_convex_mesh_batch_equals_oracle(convex_first, pb_mesh):
    duck = pb_mesh("duck_vhacd.obj")
    c = random_hull(3, 30)
    pa, pb = scene(c.mesh, duck, 0.8, 120, seed=4)
    if not convex_first:
        pa, pb = pb, pa
    a, b = (c, duck) if convex_first else (duck, c)
    ma, mb = (c.mesh, duck) if convex_first else (duck, c.mesh)
    surf = brute_colliding(ma, mb, pa, pb)
    got = ck.intersects(a, b, pa, pb)
    assert (got >= surf).all()
    # the extra collisions are exactly the poses with a duck vertex inside the hull
    for k in np.flatnonzero(got != surf):
        Tc, Tm = (pa[k], pb[k]) if convex_first else (pb[k], pa[k])
        v = np.asarray(duck.vertices) @ Tm[:3, :3].T + Tm[:3, 3]
        local = (v - Tc[:3, 3]) @ Tc[:3, :3]
        assert c.contains(local).any()
    for k in np.flatnonzero(~got)[:20]:
        Tc, Tm = (pa[k], pb[k]) if convex_first else (pb[k], pa[k])
        v = np.asarray(duck.vertices) @ Tm[:3, :3].T + Tm[:3, 3]
        local = (v - Tc[:3, 3]) @ Tc[:3, :3]
        A, bb = c.halfspaces
        assert not ((local @ A.T) <= bb - 1e-9).all(axis=1).any()
    rows = ck.contacts(a, b, pa, pb)
    np.testing.assert_array_equal(np.bincount(rows.pose_index, minlength=len(pa)) > 0, surf)


def test_convex_convex_contacts_are_mesh_pairs():
    a, b = dodecahedron(), prism()
    pa, pb = scene(a.mesh, b.mesh, 0.8, 50, seed=2)
    c1 = ck.contacts(a, b, pa, pb)
    c2 = ck.contacts(a.mesh, b.mesh, pa, pb)
    np.testing.assert_array_equal(c1.face_a, c2.face_a)
    np.testing.assert_array_equal(c1.face_b, c2.face_b)
    with pytest.raises(ck.UnsupportedPairError):
        ck.intersects(a, 3.0)


def test_single_pose_fast_path_equals_batch_and_checks_poses():
    """intersects(a, b, Ta, Tb) on convex shapes takes a per-call kernel: same answers as the
    batch path (every shape kind against every other, touching and deep poses included), and
    bad poses still raise InvalidPoseError naming the side."""
    import pytest

    shapes = [
        ck.Box([1.0, 0.6, 0.4]),
        ck.Sphere(0.4),
        ck.Capsule(0.2, 0.8),
        ck.Cylinder(0.3, 0.7),
        ck.Convex.from_points(np.random.default_rng(5).normal(size=(30, 3))),
    ]
    pa = ck.random_poses(40, 0.5, seed=11)
    pb = ck.random_poses(40, 1.2, seed=12)
    touching = ck.translation([1.0, 0.0, 0.0])  # box faces x = +-0.5 meet exactly
    box = ck.Box([1.0, 1.0, 1.0])
    assert ck.intersects(box, box, None, touching) is True
    assert ck.intersects(box, box, None, ck.translation([1.0 + 1e-9, 0.0, 0.0])) is False
    hits = 0
    for a in shapes:
        for b in shapes:
            batch = ck.intersects(a, b, pa, pb)
            single = np.array([ck.intersects(a, b, pa[i], pb[i]) for i in range(len(pa))])
            assert np.array_equal(batch, single), (type(a).__name__, type(b).__name__)
            hits += int(single.sum())
    assert 0 < hits < len(shapes) ** 2 * len(pa)  # both answers occur
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ck.InvalidPoseError, match="pose_b"):
        ck.intersects(box, box, None, bad)
    with pytest.raises(ck.InvalidPoseError, match="pose_a"):
        ck.intersects(box, box, np.full((4, 4), np.nan), None)
