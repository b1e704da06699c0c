"""contact_geometry: intersection segments, points and normals per pair."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.brute import load_pb_mesh, scene
from tests.distance_oracle import tri_pair_distance2

import collisionkit as ck

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
TRI = ck.Mesh([[0, 0, 0], [2, 0, 0], [0, 2, 0]], [[0, 1, 2]])


def _on_triangle(p, tri, tol):
    d2 = tri_pair_distance2(tri[None], np.repeat(p[None], 3, axis=0)[None])[0]
    return d2 <= tol * tol


def _world(mesh, face, T):
    T = np.eye(4) if T is None else np.asarray(T)
    return mesh.triangles[face] @ T[:3, :3].T + T[:3, 3]


def test_piercing_segment_is_exact():
    # a vertical triangle crossing the plane z = 0 inside TRI: segment x in [0.25, 0.75] at y = 0.5
    wall = ck.Mesh([[0.25, 0.5, -1.0], [0.75, 0.5, -1.0], [0.5, 0.5, 1.0]], [[0, 1, 2]])
    g = ck.contact_geometry(TRI, wall)
    assert len(g) == 1 and g.kinds[0] == 0
    seg = np.sort(g.segments[0], axis=0)
    np.testing.assert_allclose(seg, [[0.375, 0.5, 0.0], [0.625, 0.5, 0.0]], atol=1e-15)
    np.testing.assert_allclose(g.points[0], [0.5, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(g.normals[0], [0.0, 0.0, 1.0])


def test_single_point_touch_and_coplanar_overlap():
    tip = ck.Mesh([[0.5, 0.5, 0.0], [0.5, 1.5, 1.0], [1.5, 0.5, 1.0]], [[0, 1, 2]])
    g = ck.contact_geometry(TRI, tip)
    assert len(g) == 1
    np.testing.assert_array_equal(g.segments[0, 0], g.segments[0, 1])
    np.testing.assert_array_equal(g.points[0], [0.5, 0.5, 0.0])
    # coplanar: overlap triangle (0.5,0.5) (1.5,0.5) (0.5,1.5); its diameter is sqrt(2)
    g = ck.contact_geometry(TRI, TRI, None, ck.translation([0.5, 0.5, 0.0]))
    assert len(g) == 1 and g.kinds[0] == 1
    s = g.segments[0]
    assert np.linalg.norm(s[0] - s[1]) == pytest.approx(math.sqrt(2.0), rel=1e-15)
    assert {tuple(np.round(p, 12)) for p in s} == {(1.5, 0.5, 0.0), (0.5, 1.5, 0.0)}


def test_degenerate_pair():
    a = ck.Mesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]])  # segment along x
    b = ck.Mesh([[1, -1, 0], [1, 0, 0], [1, 1, 0]], [[0, 1, 2]])  # segment along y through (1, 0, 0)
    g = ck.contact_geometry(a, b)
    assert len(g) == 1 and g.kinds[0] == 2
    np.testing.assert_allclose(g.points[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(g.normals[0], [0.0, 0.0, 0.0])


@pytest.mark.parametrize("names", [("box", "box"), ("duck", "torus")])
def test_segments_lie_on_both_triangles(names):
    if names == ("box", "box"):
        a = b = BOX
    else:
        a, b = load_pb_mesh("duck_vhacd.obj"), ck.primitives.torus_mesh(0.03, 0.01, 24, 12)
    pa, pb = scene(a, b, 0.4, 40, seed=4)
    plain = ck.contacts(a, b, pa, pb)
    g = ck.contact_geometry(a, b, pa, pb)
    assert isinstance(g, ck.ContactGeometry) and len(g) == len(plain) > 0
    np.testing.assert_array_equal(g.face_a, plain.face_a)
    np.testing.assert_array_equal(g.face_b, plain.face_b)
    np.testing.assert_array_equal(g.counts, plain.counts)
    size = float(np.abs(a.vertices).max() + np.abs(b.vertices).max() + np.abs(pb[:, :3, 3]).max())
    tol = 1e-12 * size
    for r in range(len(g)):
        k = g.pose_index[r]
        ta = _world(a, g.face_a[r], pa[k])
        tb = _world(b, g.face_b[r], pb[k])
        for p in (*g.segments[r], g.points[r]):
            assert _on_triangle(p, ta, tol) and _on_triangle(p, tb, tol)
        n = g.normals[r]
        assert np.linalg.norm(n) == pytest.approx(1.0)
        want = np.cross(ta[1] - ta[0], ta[2] - ta[0])
        np.testing.assert_allclose(n, want / np.linalg.norm(want), atol=1e-12)


def test_normal_points_from_a_to_b_for_boxes():
    # b overlaps a's +x face: contacts on that face report normal +x
    g = ck.contact_geometry(BOX, BOX, None, ck.translation([0.9, 0.1, 0.05]))
    on_px = np.isin(g.face_a, [2, 3])  # box_mesh's +x faces
    assert on_px.any()
    np.testing.assert_allclose(g.points[on_px, 0], 0.5)
    np.testing.assert_allclose(g.normals[on_px], np.tile([1.0, 0.0, 0.0], (on_px.sum(), 1)))


def test_unsupported_and_empty():
    g = ck.contact_geometry(BOX, BOX, None, ck.translation([5.0, 0, 0]))
    assert len(g) == 0 and g.segments.shape == (0, 2, 3)
