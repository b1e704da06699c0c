"""collisionkit.distance: against the brute-force minimum over all triangle pairs,
against Coal, analytic cases, touching and grazing, batches, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.brute import load_pb_mesh, mapped_triangles, scene
from tests.distance_oracle import brute_distance, tri_pair_distance2

import collisionkit as ck
from collisionkit.errors import UnsupportedPairError

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 6, 10)
TORUS = ck.primitives.torus_mesh(1.0, 0.25, 12, 8)


def test_boxes_analytic():
    r = ck.distance(BOX, BOX, None, ck.translation([3.0, 0.0, 0.0]))
    assert r.distance == 2.0
    assert abs(r.point_a[0] - 0.5) == 0 and abs(r.point_b[0] - 2.5) == 0
    # corner to corner along the diagonal: sqrt(3) * (t - 1)
    r = ck.distance(BOX, BOX, None, ck.translation([2.0, 2.0, 2.0]))
    assert r.distance == pytest.approx(math.sqrt(3.0), rel=1e-15)
    np.testing.assert_allclose(r.point_a, [0.5, 0.5, 0.5])
    np.testing.assert_allclose(r.point_b, [1.5, 1.5, 1.5])


def test_touching_is_zero_and_grazing_is_positive():
    # exact face contact: the exact test says intersecting -> distance 0
    r = ck.distance(BOX, BOX, None, ck.translation([1.0, 0.3, 0.2]))
    assert r.distance == 0.0 and ck.intersects(BOX, BOX, None, ck.translation([1.0, 0.3, 0.2]))
    np.testing.assert_array_equal(r.point_a, r.point_b)
    assert abs(r.point_a[0] - 0.5) < 1e-15
    for gap in (1e-9, 1e-13, 2.0**-40):
        T = ck.translation([1.0 + gap, 0.3, 0.2])
        r = ck.distance(BOX, BOX, None, T)
        assert not ck.intersects(BOX, BOX, None, T)
        assert r.distance == pytest.approx(gap, rel=1e-3)
    # edge grazing a face, rotated 45 degrees about z then shifted to touch / just miss
    R = ck.rotation([0, 0, 1], math.pi / 4)
    h = math.sqrt(0.5)
    for gap in (0.0, 1e-10):
        T = ck.translation([0.5 + h + gap, 0.0, 0.0]) @ R
        r = ck.distance(BOX, BOX, None, T)
        assert (r.distance == 0.0) == bool(ck.intersects(BOX, BOX, None, T))
        assert r.distance == pytest.approx(gap, abs=1e-15)


def _check_points(a, b, pose_a, pose_b, r):
    """point_a lies on face_a of a, point_b on face_b of b, |pa - pb| = distance."""
    Ta = np.eye(4) if pose_a is None else np.asarray(pose_a)
    Tb = np.eye(4) if pose_b is None else np.asarray(pose_b)
    assert np.linalg.norm(r.point_a - r.point_b) == pytest.approx(r.distance, rel=1e-9, abs=1e-12)
    ta = a.triangles[r.face_a] @ Ta[:3, :3].T + Ta[:3, 3]
    tb = b.triangles[r.face_b] @ Tb[:3, :3].T + Tb[:3, 3]
    for tri, p in ((ta, r.point_a), (tb, r.point_b)):
        deg = np.repeat(p[None], 3, axis=0)[None]
        d = tri_pair_distance2(tri[None], deg)[0]
        assert d <= 1e-18 + 1e-20 * np.abs(tri).max(), d


@pytest.mark.parametrize("pair", [("box", "sphere"), ("torus", "sphere"), ("torus", "torus"), ("duck", "bunny")])
def test_against_brute_force(pair):
    meshes = {"box": BOX, "sphere": SPHERE, "torus": TORUS}
    if pair == ("duck", "bunny"):
        a, b = load_pb_mesh("duck_vhacd.obj"), load_pb_mesh("bunny.obj")
        n = 6
    else:
        a, b = meshes[pair[0]], meshes[pair[1]]
        n = 25
    pa, pb = scene(a, b, 0.8, n, seed=7)
    batch = ck.distance(a, b, pa, pb)
    for k in range(n):
        want, _, _ = brute_distance(a, b, pa[k], pb[k])
        one = ck.distance(a, b, pa[k], pb[k])
        assert one.distance == batch.distance[k]
        if want == 0.0:
            assert one.distance == 0.0
        else:
            assert one.distance == pytest.approx(want, rel=1e-9, abs=1e-13)
        _check_points(a, b, pa[k], pb[k], one)
    assert (batch.distance == 0).any() or pair == ("duck", "bunny")


def test_zero_iff_intersects_batch():
    a, b = TORUS, SPHERE
    pa, pb = scene(a, b, 0.6, 300, seed=3)
    r = ck.distance(a, b, pa, pb)
    hit = ck.intersects(a, b, pa, pb)
    np.testing.assert_array_equal(r.distance == 0.0, hit)
    assert hit.any() and (~hit).any()


@pytest.mark.parametrize("bv", ["aabb", "obb"])
def test_tree_kinds_threads_and_serial_agree(bv):
    a = TORUS.with_options(bv=bv)
    b = SPHERE.with_options(bv=bv, leaf_size=1)
    pa, pb = scene(a, b, 1.2, 200, seed=11)
    ref = ck.distance(TORUS, SPHERE, pa, pb, threads=1)
    got = ck.distance(a, b, pa, pb)
    np.testing.assert_allclose(got.distance, ref.distance, rtol=1e-12, atol=1e-15)
    par = ck.distance(a, b, pa, pb, threads=2)
    np.testing.assert_array_equal(par.distance, got.distance)
    np.testing.assert_array_equal(par.face_a, got.face_a)


def test_upper_bound():
    pa, pb = scene(TORUS, SPHERE, 1.5, 100, seed=5)
    full = ck.distance(TORUS, SPHERE, pa, pb)
    cut = ck.distance(TORUS, SPHERE, pa, pb, upper_bound=0.5)
    below = full.distance < 0.5
    np.testing.assert_array_equal(cut.distance[below], full.distance[below])
    assert np.all(np.isinf(cut.distance[~below]))
    assert np.all(cut.face_a[~below] == -1) and np.all(np.isnan(cut.point_a[~below]))
    assert below.any() and (~below).any()
    assert cut.node_pairs.sum() <= full.node_pairs.sum()


def test_huge_and_tiny_coordinates():
    for s in (1e-6, 1e6):
        a = ck.Mesh(BOX.vertices * s, BOX.faces)
        r = ck.distance(a, a, None, ck.translation([3.0 * s, 0.5 * s, 0.0]))
        assert r.distance == pytest.approx(2.0 * s, rel=1e-12)


def test_degenerate_triangles():
    # a segment-like zero-area triangle parallel to a box face, 0.25 above it
    seg = ck.Mesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]])
    r = ck.distance(BOX, seg, None, ck.translation([-0.5, 0.1, 0.75]))
    assert r.distance == pytest.approx(0.25, rel=1e-14)
    point = ck.Mesh([[0, 0, 0]] * 3, [[0, 1, 2]])
    r = ck.distance(point, BOX, ck.translation([0.1, 0.2, 2.0]), None)
    assert r.distance == pytest.approx(1.5, rel=1e-14)
    # parallel overlapping edges: two flat triangles stacked
    t = ck.Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    r = ck.distance(t, t, None, ck.translation([0.25, 0.0, 1e-3]))
    assert r.distance == pytest.approx(1e-3, rel=1e-12)


def test_against_coal():
    coal = pytest.importorskip("coal")

    def model(m):
        g = coal.BVHModelOBBRSS()
        g.beginModel(m.n_faces, m.n_vertices)
        g.addVertices(np.ascontiguousarray(m.vertices, dtype=np.float64))
        g.addTriangles(np.ascontiguousarray(m.faces, dtype=np.int64))
        g.endModel()
        return g

    a, b = load_pb_mesh("duck_vhacd.obj"), load_pb_mesh("teddy2_VHACD_CHs.obj")
    ga, gb = model(a), model(b)
    pa, pb = scene(a, b, 1.0, 60, seed=2)
    ours = ck.distance(a, b, pa, pb)
    req, compared = coal.DistanceRequest(), 0
    for k in range(60):
        res = coal.DistanceResult()
        ta, tb = coal.Transform3s(), coal.Transform3s()
        ta.setRotation(pa[k, :3, :3])
        ta.setTranslation(pa[k, :3, 3])
        tb.setRotation(pb[k, :3, :3])
        tb.setTranslation(pb[k, :3, 3])
        coal.distance(ga, ta, gb, tb, req, res)
        if ours.distance[k] == 0.0:
            assert res.min_distance <= 1e-6
            continue
        compared += 1
        # Coal's GJK on triangle pairs stops at a relative tolerance (1e-6)
        assert ours.distance[k] == pytest.approx(res.min_distance, rel=1e-5, abs=1e-7)
        assert ours.distance[k] <= res.min_distance + 1e-12  # we never report more than a real pair's distance
    assert compared > 10


def test_errors_and_shapes():
    with pytest.raises(ValueError):
        ck.distance(BOX, BOX, upper_bound=0.0)
    with pytest.raises(ValueError):
        ck.distance(BOX, BOX, upper_bound=float("nan"))
    with pytest.raises(UnsupportedPairError):
        ck.distance(BOX, object())
    with pytest.raises(ck.InvalidPoseError):
        ck.distance(BOX, BOX, None, np.diag([2.0, 1.0, 1.0, 1.0]))
    r = ck.distance(BOX, BOX, None, np.zeros((0, 4, 4)))
    assert r.distance.shape == (0,)
    r = ck.distance(BOX, BOX, None, ck.translation([3, 0, 0])[None])
    assert r.distance.shape == (1,) and r.point_a.shape == (1, 3)
    r = ck.distance(BOX, BOX, None, ck.translation([3, 0, 0]))
    assert isinstance(r.distance, float) and r.point_a.shape == (3,) and isinstance(r.face_a, int)


def test_mapped_like_the_intersection_queries():
    # closest points are computed on b's triangles exactly as mapped by the library
    a, b = TORUS, SPHERE
    pa, pb = scene(a, b, 1.0, 5, seed=1)
    for k in range(5):
        r = ck.distance(a, b, pa[k], pb[k])
        if r.distance == 0:
            continue
        mapped = mapped_triangles(b, pa[k], pb[k])[r.face_b]
        Ta = pa[k]
        local_pb = (r.point_b - Ta[:3, 3]) @ Ta[:3, :3]
        d = tri_pair_distance2(mapped[None], np.repeat(local_pb[None], 3, axis=0)[None])[0]
        assert d < 1e-24
