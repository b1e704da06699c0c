"""classify: disjoint / touching / penetrating / contained, batched."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.brute import load_pb_mesh, rational_pairs, scene

import collisionkit as ck
from collisionkit.kernels.triangle.point_in_mesh import winding_numbers
from collisionkit.query.classify import overlap_codes, piece_points

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
BIG = ck.primitives.box_mesh([4.0, 4.0, 4.0])
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 8, 16)


def label(a, b, pa=None, pb=None, **kw):
    r = ck.classify(a, b, pa, pb, **kw)
    assert r.n_poses == 1 and type(r.labels) is str
    return r.labels


def test_contained_both_ways():
    r = ck.classify(BIG, BOX)
    assert r.labels == "contained" and r.b_inside_a and not r.a_inside_b
    r = ck.classify(BOX, BIG, ck.translation([0.5, 0.3, -0.2]), None)
    assert r.labels == "contained" and r.a_inside_b
    # surface-only queries miss it
    assert not ck.intersects(BIG, BOX)
    # touching the wall from inside is an overlap of solids: penetrating
    assert label(BIG, BOX, None, ck.translation([1.5, 0.0, 0.0])) == "penetrating"


def test_disjoint_touching_tolerance():
    T = ck.translation([1.01, 0.0, 0.0])
    assert label(BOX, BOX, None, T) == "disjoint"
    assert label(BOX, BOX, None, T, tolerance=0.05) == "touching"
    assert label(BOX, BOX, None, ck.translation([1.0, 0.2, 0.1])) == "touching"  # face on face
    R = ck.rotation([0, 0, 1], math.pi / 4)
    edge = ck.translation([0.5 + math.sqrt(0.5), 0.0, 0.0]) @ R
    assert label(BOX, BOX, None, edge) == "touching"  # edge on face
    # ridge on ridge: two wedges whose crossed ridges touch at one point (exact coordinates)
    wa = _hull([[x, y, 0] for x in (-1, 1) for y in (-1, 1)] + [[-1, 0, 1], [1, 0, 1]])
    wb = _hull([[x, y, 2] for x in (-1, 1) for y in (-1, 1)] + [[0, -1, 1], [0, 1, 1]])
    assert ck.intersects(wa, wb)
    assert label(wa, wb) == "touching"
    assert label(wa, wb, None, ck.translation([0.0, 0.0, -0.25])) == "penetrating"


def _hull(points):
    trimesh = pytest.importorskip("trimesh")
    h = trimesh.convex.convex_hull(np.asarray(points, dtype=float))
    return ck.Mesh(h.vertices, h.faces)


def test_penetrating_including_degenerate_overlaps():
    assert label(BOX, BOX, None, ck.translation([0.7, 0.1, 0.05])) == "penetrating"
    assert label(BOX, BOX, None, ck.translation([0.5, 0.0, 0.0])) == "penetrating"  # coplanar sides only
    assert label(BOX, BOX) == "penetrating"  # identical
    assert label(BOX, SPHERE, None, ck.translation([0.9, 0.0, 0.0])) == "penetrating"


def test_batch_against_definitions():
    a, b = load_pb_mesh("duck_vhacd.obj"), SPHERE
    pa, pb = scene(a, b, 0.7, 120, seed=9)
    r = ck.classify(a, b, pa, pb, tolerance=0.01)
    d = ck.distance(a, b, pa, pb).distance
    np.testing.assert_array_equal(r.distance, d)
    hit = ck.intersects(a, b, pa, pb)
    lab = r.labels
    assert set(lab[hit]) <= {"penetrating", "touching"}
    assert set(lab[~hit]) <= {"disjoint", "touching", "contained"}
    np.testing.assert_array_equal(lab[~hit & (d > 0.01) & ~(r.a_inside_b | r.b_inside_a)] == "disjoint", True)
    # random overlaps of solids cross transversally: penetrating
    assert np.all(lab[hit] == "penetrating")
    assert (lab == "disjoint").any() and (lab == "penetrating").any()


def test_winding_numbers():
    pts = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.49, 0.49, -0.49], [0.51, 0.0, 0.0]])
    out = np.empty(4)
    winding_numbers(np.array(BOX.triangles), pts, out)
    np.testing.assert_allclose(out, [1.0, 0.0, 1.0, 0.0], atol=1e-12)
    two = ck.Mesh(np.vstack([BOX.vertices, BOX.vertices + 5.0]), np.vstack([BOX.faces, BOX.faces + 8]))
    assert piece_points(two).shape == (2, 3)


def test_errors():
    with pytest.raises(ValueError):
        ck.classify(BOX, BOX, tolerance=-1.0)
    with pytest.raises(ValueError):
        ck.classify(BOX, BOX, tolerance=float("inf"))
    with pytest.raises(ck.UnsupportedPairError):
        ck.classify(BOX, 3)


def test_overlap_codes_equal_classify_codes():
    """Penetration's overlap test (``overlap_codes``: ``intersects`` instead of ``distance``)
    gives classify's codes at tolerance 0: disjoint, touching (faces, an edge, a corner),
    penetrating (also the edge-on-edge overlap the witness points decide), contained.

    One documented difference: a sphere's vertex 1e-17 off the torus's (sin(pi) != 0) has a
    float distance of 0.0, which classify calls touching; the exact test finds no shared
    point (the rational oracle agrees), so ``overlap_codes`` says disjoint. Either way not
    an overlap, which is all penetration asks."""
    torus = ck.primitives.torus_mesh(1.0, 0.3)
    cases = [
        (BOX, BOX, [1.01, 0, 0]), (BOX, BOX, [1.0, 0, 0]), (BOX, BOX, [1.0, 1.0, 0]), (BOX, BOX, [1.0, 1.0, 1.0]),
        (BOX, BOX, [0.5, 0, 0]), (BOX, BOX, [0.5, 0.5, 0.5]), (BIG, BOX, [0, 0, 0]), (BIG, BOX, [1.5, 0, 0]),
        (torus, BOX, [0, 0, 0]), (torus, SPHERE, [1.0, 0, 0]),
    ]  # fmt: skip
    seen = set()
    for a, b, t in cases:
        T = ck.translation(t)
        want = ck.classify(a, b, None, T).codes
        assert overlap_codes(a, b, np.eye(4), T, 1) == want
        seen.add(int(want))
    assert seen == {0, 1, 2, 3}
    T = ck.translation([1.8, 0, 0])
    c = ck.classify(torus, SPHERE, None, T)
    assert c.labels == "touching" and c.distance == 0.0 and len(rational_pairs(torus, SPHERE, None, T)) == 0
    assert overlap_codes(torus, SPHERE, np.eye(4), T, 1) == 0
    # a batch (random poses, the parallel path too): the same codes row for row
    poses = ck.random_poses(64, 1.2, seed=5)
    got = overlap_codes(torus, SPHERE, np.eye(4), poses, None)
    np.testing.assert_array_equal(got, ck.classify(torus, SPHERE, None, poses).codes)
    assert len(set(got.tolist())) >= 2
