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
    return not ck.intersects(a, b, Ta, T) and ck.classify(a, b, Ta, T).labels in ("disjoint", "touching")


def test_sampled_on_non_convex_separates():
    small = ck.primitives.box_mesh([0.3, 0.3, 0.3])
    for t in ([1.0, 0.0, 0.1], [0.0, 1.15, 0.0], [0.8, 0.6, 0.2]):
        Tb = ck.translation(t)
        p = ck.penetration(TORUS, small, None, Tb, method="sampled")
        assert p.method == "sampled" and not p.exact and p.error_bound == math.inf
        assert p.depth_upper == p.depth and p.depth_lower == 0.0
        assert p.depth > 0
        assert _separates(TORUS, small, np.eye(4), Tb, p)
    # a box across the tube on the +x side: the analytic way out is up or down, 0.3 + 0.15
    p = ck.penetration(TORUS, small, None, ck.translation([1.0, 0.0, 0.0]), method="sampled")
    assert p.depth == pytest.approx(0.45, rel=0.02)


def test_sampled_on_an_open_mesh_separates_the_surfaces():
    """An open tube (no end caps) encloses no volume: "auto" takes the sampled method (the
    bounds method needs closed meshes), only surfaces that cross overlap, and its translation
    separates the surfaces. A box across the wall gets out inwards (its face at x = 0.6 past
    the facets' x = 0.4745 at y = +-0.15: 0.1255 along -x) or outwards (0.2); a box inside the
    tube, not touching it, is not an overlap."""
    v, f = [], []
    k = 32
    for i in range(k):  # a cylinder's side, radius 0.5, z in [-0.5, 0.5], no caps
        a = 2 * math.pi * i / k
        v += [(0.5 * math.cos(a), 0.5 * math.sin(a), -0.5), (0.5 * math.cos(a), 0.5 * math.sin(a), 0.5)]
        j, jn = 2 * i, 2 * ((i + 1) % k)
        f += [(j, jn, jn + 1), (j, jn + 1, j + 1)]
    tube = ck.Mesh(np.array(v), np.array(f))
    small = ck.primitives.box_mesh([0.3, 0.3, 0.3])
    Tb = ck.translation([0.45, 0.0, 0.0])
    p = ck.penetration(tube, small, None, Tb)
    assert p.method == "sampled" and not p.exact and p.error_bound == math.inf
    assert 0.1255 - 1e-4 <= p.depth <= 0.2 + 1e-9
    T = Tb.copy()
    T[:3, 3] += p.depth * p.direction
    assert not ck.intersects(tube, small, None, T)
    inside = ck.penetration(tube, small, None, ck.translation([0.0, 0.0, 0.0]))
    assert inside.depth == 0.0 and inside.method == "none"


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


# --------------------------------------------------------------------------- pruned kernel


def _hull_mesh(pts):
    from scipy.spatial import ConvexHull

    c = ConvexHull(pts)
    f = c.simplices.copy()
    e = np.cross(pts[f[:, 1]] - pts[f[:, 0]], pts[f[:, 2]] - pts[f[:, 0]])
    flip = np.einsum("ij,ij->i", e, c.equations[:, :3]) < 0
    f[flip] = f[flip][:, ::-1]
    return ck.Mesh(pts, f)


def _shapes():
    rng = np.random.default_rng(11)
    yield "box", BOX, ck.primitives.box_mesh([0.5, 1.5, 0.8])
    yield "sphere", SPHERE, SPHERE
    yield "sphere-box", SPHERE, ck.primitives.box_mesh([0.3, 1.2, 0.6])
    yield "fine-sphere", ck.primitives.uv_sphere_mesh(0.6, 16, 32), ck.primitives.uv_sphere_mesh(0.4, 12, 24)
    for n in (6, 30, 200):
        yield f"cloud{n}", _hull_mesh(rng.normal(size=(n, 3))), _hull_mesh(rng.normal(size=(n, 3)) * [1.0, 0.3, 0.6])


@pytest.mark.parametrize("name,a,b", list(_shapes()), ids=[s[0] for s in _shapes()])
def test_pruned_equals_brute_force(name, a, b):
    """The pruned kernel (buckets, O(1) edge axes) gives the brute-force minimum over all axes."""
    from collisionkit.query.penetration import _convex_one

    n = 60
    pa = ck.random_poses(n, 0.3, seed=1)
    pb = ck.random_poses(n, 1.2, seed=2)
    batch = ck.penetration(a, b, pa, pb)
    overlapping = 0
    for k in range(n):
        want, u, _ = _convex_one(a, b, pa[k], pb[k])
        one = ck.penetration(a, b, pa[k], pb[k])
        # batched and per-call run the same kernel on the same relative pose: same bits
        assert one.depth == batch.depth[k]
        np.testing.assert_array_equal(one.direction, batch.direction[k])
        assert one.exact and one.error_bound == batch.error_bound[k] > 0
        if want <= 0:
            assert one.depth == 0.0 and one.method == "none" and np.isnan(one.direction).all()
            continue
        overlapping += 1
        assert one.method == "convex"
        assert one.depth == pytest.approx(want, abs=1e-12)
        # the direction attains the depth: b moved by depth along it touches a
        got, _, _ = _convex_one(a, b, pa[k], _shifted(pb[k], one.depth * one.direction))
        assert abs(got) <= 1e-9
        assert np.linalg.norm(one.direction) == pytest.approx(1.0, abs=1e-12)
    assert overlapping >= 10


def _shifted(T, v):
    T = T.copy()
    T[:3, 3] += v
    return T


def test_touching_boxes():
    """Face-touching boxes: depth 0 or within rounding of it, the same per call and batched."""
    Ta = ck.rotation([1, 2, 3], 0.7)
    shifts = [1.0, 1.0 - 1e-13, 1.0 + 1e-13]
    poses = np.stack([_shifted(Ta, Ta[:3, :3] @ [s, 0.2, 0.1]) for s in shifts])
    batch = ck.penetration(BOX, BOX, Ta, poses)
    for k in range(len(shifts)):
        one = ck.penetration(BOX, BOX, Ta, poses[k])
        assert one.depth == batch.depth[k]
        assert 0.0 <= one.depth <= 1e-12
    assert ck.penetration(BOX, BOX, None, ck.translation([1.0, 0.5, 0.0])).depth <= 1e-15


def test_large_and_small_coordinates():
    rel = ck.rotation([0, 1, 1], 0.4) @ ck.translation([0.7, 0.2, 0.1])
    ref = ck.penetration(BOX, SPHERE, None, rel)
    assert ref.depth > 0.1
    for far in (1e3, 1e6):
        Ta = ck.translation([far, -far, 0.5 * far]) @ ck.rotation([1, 0, 0], 0.3)
        p = ck.penetration(BOX, SPHERE, Ta, Ta @ rel)
        assert p.exact and p.error_bound >= 1e-12 * far
        assert abs(p.depth - ref.depth) <= p.error_bound + ref.error_bound
        np.testing.assert_allclose(p.direction, Ta[:3, :3] @ ref.direction, atol=1e-6)
    s = 1e-4
    tiny_box = ck.Mesh(np.asarray(BOX.vertices) * s, BOX.faces)
    tiny_sphere = ck.Mesh(np.asarray(SPHERE.vertices) * s, SPHERE.faces)
    small = rel.copy()
    small[:3, 3] *= s
    p = ck.penetration(tiny_box, tiny_sphere, None, small)
    assert p.depth == pytest.approx(ref.depth * s, rel=1e-9)
    assert p.error_bound < 1e-12


def test_fast_path_inputs():
    """The per-call path agrees with the general one and checks its poses."""
    Tb = ck.translation([0.75, 0.125, 0.0])  # float32-exact
    ro = Tb.copy()
    ro.flags.writeable = False  # not the fast path's kind of array: general path
    for pose in (ro, Tb.tolist(), Tb.astype(np.float32)):
        p = ck.penetration(BOX, BOX, None, pose)
        assert p.depth == pytest.approx(0.25, abs=1e-12) and p.method == "convex"
    bad = Tb.copy()
    bad[0, 0] = 2.0
    with pytest.raises(ck.InvalidPoseError):
        ck.penetration(BOX, BOX, None, bad)
    with pytest.raises(ck.InvalidPoseError):
        ck.penetration(BOX, BOX, bad, Tb)
    nan = Tb.copy()
    nan[1, 3] = np.nan
    with pytest.raises(ck.InvalidPoseError):
        ck.penetration(BOX, BOX, nan, Tb)
    # method="convex" on a non-convex mesh: its hull, the same on both paths
    one = ck.penetration(TORUS, BOX, None, Tb, method="convex")
    batch = ck.penetration(TORUS, BOX, None, Tb[None], method="convex")
    assert one.exact and one.depth == batch.depth[0] > 0
    flat = ck.Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(ck.InvalidMeshError):
        ck.penetration(flat, BOX, None, Tb, method="convex")
