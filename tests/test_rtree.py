"""STR-packed R-trees of surfaces and triangles (kernels/build/rtree.py, bvh/rtree.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.bvh.rtree import build_rtrees, rtrees_for
from collisionkit.constants import LEAF_FLAG
from collisionkit.kernels.build.rtree import level_groups, tree_nodes


def _random_mesh(F: int, n_surf: int, seed: int):
    rng = np.random.default_rng(seed)
    tris = rng.normal(size=(F, 3, 3)) + rng.normal(scale=5.0, size=(F, 1, 3))
    surf = rng.integers(0, n_surf, F) * 7 - 3  # arbitrary labels, gaps, negatives
    return tris, surf


@pytest.mark.parametrize("m", [2, 3, 4, 8, 16])
@pytest.mark.parametrize(("F", "S"), [(1, 1), (2, 1), (7, 3), (64, 1), (300, 40), (1000, 7)])
def test_invariants(m, F, S):
    tris, surf = _random_mesh(F, S, seed=F * 31 + m)
    rt = build_rtrees(tris, surf, m)
    rt.validate(tris)  # one leaf level per tree, <= m entries, exact union boxes, permutations
    a = rt.arrays
    assert rt.n_surface_nodes == tree_nodes(np.int64(rt.n_surfaces), np.int64(m))[0]
    # each triangle tree holds exactly its surface's faces
    compact = np.searchsorted(rt.labels, surf)
    leaf = (a.topo[:, 2] & LEAF_FLAG) != 0
    for q in range(rt.n_surfaces):
        root = int(a.surf_root[q])
        stack, faces = [root], []
        while stack:
            i = stack.pop()
            first, count = int(a.topo[i, 0]), int(a.topo[i, 1])
            if leaf[i]:
                faces.extend(a.face_ids[first : first + count].tolist())
            else:
                stack.extend(range(first, first + count))
        assert sorted(faces) == np.flatnonzero(compact == a.surf_ids[q]).tolist()
    assert np.array_equal(rt.labels, np.unique(surf))


@pytest.mark.parametrize("m", [2, 3, 5, 8])
def test_depth_is_logarithmic_and_counts_are_a_function_of_n(m):
    for n in [1, 2, m, m + 1, m * m, m * m + 1, 1000]:
        nodes, levels = tree_nodes(np.int64(n), np.int64(m))
        # STR fills all but the last group of each run: depth within one level of ceil(log_m n)
        ideal = 0 if n <= 1 else math.ceil(math.log(n) / math.log(m) - 1e-12)
        assert ideal <= levels <= ideal + 2, (n, m, levels)
        assert nodes >= levels
    assert level_groups(np.int64(m), np.int64(m)) == 1
    assert level_groups(np.int64(m + 1), np.int64(m)) == 2


def test_boxes_are_exact_and_in_the_local_frame():
    mesh = ck.primitives.torus_mesh(2.0, 0.5, 32, 16)  # 11.25 and 22.5 degree steps: smooth
    rt = rtrees_for(mesh, 4)
    box = rt.arrays.box
    lo, hi = mesh.bounds
    assert np.array_equal(box[0, :3], lo) and np.array_equal(box[0, 3:], hi)
    assert rt.surface_depth == 0 and rt.n_surfaces == 1  # a smooth torus: one surface
    assert rt.triangle_depth == math.ceil(math.log(mesh.n_faces, 4)) - 1  # 4**5 faces: 5 levels


def test_cached_per_geometry_and_capacity():
    box = ck.primitives.box_mesh()
    assert rtrees_for(box, 4) is rtrees_for(box.with_options(bv="obb"), 4)
    assert rtrees_for(box, 4) is not rtrees_for(box, 8)
    assert repr(rtrees_for(box, 4)).startswith("RTrees(m=4, surfaces=6")


def test_deterministic():
    tris, surf = _random_mesh(500, 20, seed=1)
    r1, r2 = build_rtrees(tris, surf, 6), build_rtrees(tris.copy(), surf.copy(), 6)
    for x, y in zip(r1.arrays, r2.arrays, strict=True):
        assert np.array_equal(x, y)


def test_node_levels():
    tris, surf = _random_mesh(200, 5, seed=2)
    rt = build_rtrees(tris, surf, 3)
    lev = rt.node_levels()
    assert lev[0] == 0 and np.all(lev[rt.arrays.surf_root] == 0)
    assert lev[: rt.n_surface_nodes].max() == rt.surface_depth
    assert lev[rt.n_surface_nodes :].max() == rt.triangle_depth


@pytest.mark.parametrize("m", [1, 0, 2.5, True])
def test_bad_capacity(m):
    tris, surf = _random_mesh(10, 2, seed=0)
    with pytest.raises(ValueError, match="node_capacity"):
        build_rtrees(tris, surf, m)
    with pytest.raises(ValueError, match="node_capacity"):
        ck.OAABB(node_capacity=m)


def test_huge_and_tiny_coordinates():
    tris, surf = _random_mesh(100, 4, seed=5)
    for scale in (1e-200, 1e200):
        rt = build_rtrees(tris * scale, surf, 4)
        rt.validate(tris * scale)
