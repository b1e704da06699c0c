"""Rectangle swept spheres (kernels/volumes/rss.py), the kind added through the volume
contract: fits contain their triangles, the node test never misses, and it prunes.
The query x volume matrix (tests/test_query_matrix.py) runs every query on RSS trees."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

import collisionkit as ck
from collisionkit.bvh.tree import build_tree, validate_bvh
from collisionkit.bvh.volumes import containment_excess
from collisionkit.constants import BV_RSS
from collisionkit.kernels.volumes.rss import overlap_rss, rss_extent
from collisionkit.options import BuildOptions


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def _meshes() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    plate = trimesh.creation.box((1.0, 2.0, 1e-4))
    out = {
        "icosphere": trimesh.creation.icosphere(2).triangles,
        "torus": trimesh.creation.torus(1.0, 0.3).triangles,
        "thin plate": plate.triangles,
        "one triangle": np.array([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]]),
        "collinear": np.array([[[0.0, 0, 0], [1, 1, 1], [2, 2, 2]], [[0.0, 0, 0], [0, 0, 0], [0, 0, 0]]]),
        "coplanar fan": np.array([[[0.0, 0, 0], [np.cos(a), np.sin(a), 0], [np.cos(a + 0.3), np.sin(a + 0.3), 0]] for a in np.linspace(0, 6, 20)]),
        "random soup": rng.normal(size=(300, 3, 3)),
    }
    out["far from the origin"] = out["torus"] + 1e6
    out["tiny"] = out["icosphere"] * 1e-6
    out["huge"] = out["random soup"] * 1e8
    return {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in out.items()}


@pytest.mark.parametrize("name", list(_meshes()))
def test_rss_fit_contains_every_node_triangle(name):
    tris = _meshes()[name]
    tree = build_tree(tris, BuildOptions(bv="rss"))
    validate_bvh(tree, tris)  # every node's triangles inside its volume (containment_excess)
    a = tree.arrays
    pts = a.tris.reshape(-1, 3)
    assert containment_excess(BV_RSS, a.bv[0], pts) <= 1e-12 * float(np.abs(tris).max())
    # the enclosing box the distance bounds read holds the whole RSS
    c = np.array(rss_extent(a.bv, 0))
    assert np.all(np.abs(pts - c[:3]) <= c[3:] * (1 + 1e-12) + 1e-300)


def _rect_mesh(row: np.ndarray) -> ck.Mesh:
    c, u, v, a, b = row[:3], row[3:6], row[6:9], row[12], row[13]
    corners = np.array([c - a * u - b * v, c + a * u - b * v, c + a * u + b * v, c - a * u + b * v])
    return ck.Mesh(corners, np.array([[0, 1, 2], [0, 2, 3]]))


def _random_row(rng: np.random.Generator) -> np.ndarray:
    R = _rotation(rng)
    row = np.empty(15)
    row[:3] = rng.uniform(-1, 1, 3)
    row[3:12] = R.reshape(-1)
    row[12:14] = rng.uniform(0.0, 1.0, 2) * (rng.random(2) > 0.1)  # some degenerate rectangles
    row[14] = rng.uniform(0.0, 0.3)
    return row


def test_rss_overlap_never_misses_and_prunes():
    """Against the exact rectangle-rectangle distance (two triangles each, ``ck.distance``):
    a pair the test calls disjoint is farther apart than the radii; most pairs farther than
    that by a clear gap are called disjoint."""
    rng = np.random.default_rng(11)
    rejected = far = 0
    for _ in range(400):
        ra, rb = _random_row(rng), _random_row(rng)
        R = _rotation(rng)
        t = rng.uniform(-2.5, 2.5, 3)
        Rt = tuple(float(x) for x in R.reshape(-1))
        tt = tuple(float(x) for x in t)
        hit = overlap_rss(Rt, tt, ra[None], 0, rb[None], 0, 1e-12)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, t
        d = ck.distance(_rect_mesh(ra), _rect_mesh(rb), None, T).distance
        reach = ra[14] + rb[14]
        if not hit:
            assert d > reach - 1e-9, (d, reach)
            rejected += 1
        if d > 1.5 * reach + 0.5:
            far += 1
    assert far > 50 and rejected >= 0.5 * far, (rejected, far)


def test_rss_queries_agree_with_aabb_trees():
    """Same answers as AABB trees on near-contact poses of two curved meshes."""
    ta, tb = trimesh.creation.torus(1.0, 0.3), trimesh.creation.icosphere(2)
    a, b = ck.Mesh(ta.vertices, ta.faces), ck.Mesh(tb.vertices, tb.faces)
    rng = np.random.default_rng(5)
    poses = np.repeat(np.eye(4)[None], 200, axis=0)
    poses[:, :3, 3] = rng.uniform(-1.8, 1.8, (200, 3))
    ra = ck.Mesh(ta.vertices, ta.faces, options=BuildOptions(bv="rss"))
    rb = ck.Mesh(tb.vertices, tb.faces, options=BuildOptions(bv="rss"))
    want = np.asarray(ck.intersects(a, b, None, poses))
    assert 20 < want.sum() < 180
    assert np.array_equal(np.asarray(ck.intersects(ra, rb, None, poses)), want)
    da = ck.distance(a, b, None, poses[:40]).distance
    dr = ck.distance(ra, rb, None, poses[:40]).distance
    assert np.allclose(da, dr, rtol=0, atol=1e-12)
