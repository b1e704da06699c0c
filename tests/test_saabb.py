"""S-AABB volume ("saabb") and the balanced split (seed 002): layout, containment, exactness."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import brute_pairs, rows_of, scene

import collisionkit as ck
from collisionkit.constants import BV_KINDS, BV_SAABB, BV_WIDTH, LEAF_FLAG, SPLIT_BALANCED, SPLIT_RULES
from collisionkit.kernels.volumes.saabb import triangle_spheres
from collisionkit.query.strategies.bfs import tri_spheres


def test_codes_registered():
    assert BV_KINDS["saabb"] == BV_SAABB == 7 and BV_WIDTH[BV_SAABB] == 11
    assert SPLIT_RULES["balanced"] == SPLIT_BALANCED == 7
    assert ck.BuildOptions(bv="saabb", split="balanced").bv_code == BV_SAABB


@pytest.mark.parametrize("split", ["sah", "median", "mean", "balanced"])
def test_saabb_rows_start_with_the_aabb_rows(pb_mesh, split):
    m = pb_mesh("duck_vhacd.obj")
    box = ck.build_bvh(m, ck.BuildOptions(bv="aabb", split=split))
    hyb = ck.build_bvh(m, ck.BuildOptions(bv="saabb", split=split))
    hyb.validate(m.triangles)  # boxes AND spheres contain their subtrees
    assert hyb.volumes.shape == (box.n_nodes, 11)
    assert np.array_equal(hyb.topology, box.topology)
    assert np.array_equal(hyb.volumes[:, :6], box.volumes)
    assert np.array_equal(hyb.leaf_faces, box.leaf_faces)
    # the sphere is never larger than the box's circumsphere; the level median ratio is 1
    assert np.all(hyb.volumes[:, 9] <= np.linalg.norm(hyb.volumes[:, 3:6], axis=1) * (1 + 1e-12) + 1e-12)
    assert np.all(hyb.volumes[:, 10] >= 0)
    assert np.median(hyb.volumes[:, 10][np.isfinite(hyb.volumes[:, 10])]) == pytest.approx(1.0, rel=0.5)


@pytest.mark.parametrize("bv", ["aabb", "obb", "saabb"])
@pytest.mark.parametrize("leaf", [1, 4])
def test_balanced_split_builds_valid_balanced_trees(pb_mesh, bv, leaf):
    m = pb_mesh("bunny.obj")
    tree = ck.build_bvh(m, ck.BuildOptions(bv=bv, split="balanced", leaf_size=leaf))
    tree.validate(m.triangles)
    topo = tree.topology
    leafs = (topo[:, 2] & LEAF_FLAG) != 0
    cnt = np.zeros(topo.shape[0], np.int64)
    for i in range(topo.shape[0] - 1, -1, -1):
        cnt[i] = topo[i, 1] if leafs[i] else cnt[topo[i, 0]] + cnt[topo[i, 0] + 1]
    inner = np.flatnonzero(~leafs)
    smaller = np.minimum(cnt[topo[inner, 0]], cnt[topo[inner, 0] + 1]) / cnt[inner]
    assert smaller[0] > 0.4, "root split far from balanced"
    assert smaller.mean() > 0.35
    assert tree.depth <= 2 * np.log2(m.n_faces / leaf) + 2


def test_balanced_split_degenerate_input():
    # every triangle identical: all centres coincide, the split halves the index range
    tri = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    v = np.tile(tri, (9, 1))
    f = np.arange(27).reshape(9, 3)
    m = ck.Mesh(v, f)
    for bv in ("aabb", "saabb"):
        t = ck.build_bvh(m, ck.BuildOptions(bv=bv, split="balanced", leaf_size=1))
        t.validate(m.triangles)
        assert t.n_leaves == 9
    # one triangle
    one = ck.Mesh(tri, [[0, 1, 2]], options=ck.BuildOptions(bv="saabb", split="balanced"))
    assert ck.intersects(one, one)


def test_triangle_spheres_are_smallest_and_contain():
    tris = np.array(
        [
            [[0.0, 0, 0], [2, 0, 0], [1, np.sqrt(3), 0]],  # equilateral: circumradius 2/sqrt(3)
            [[0.0, 0, 0], [4, 0, 0], [2, 0.5, 0]],  # obtuse: half the longest edge
            [[0.0, 0, 0], [1, 1, 1], [2, 2, 2]],  # collinear
            [[3.0, 3, 3], [3, 3, 3], [3, 3, 3]],  # a point
        ]
    )
    out = np.empty((4, 4))
    triangle_spheres(tris, out)
    assert out[0, 3] == pytest.approx(2 / np.sqrt(3), rel=1e-12)
    assert out[1, 3] == pytest.approx(2.0, rel=1e-12)
    assert out[2, 3] == pytest.approx(np.sqrt(3), rel=1e-12)
    assert out[3, 3] == pytest.approx(0.0, abs=1e-14)
    rng = np.random.default_rng(5)
    for scale in (1e-200, 1.0, 1e150):
        t = rng.normal(size=(500, 3, 3)) * scale
        s = np.empty((500, 4))
        triangle_spheres(t, s)
        d = np.linalg.norm(t - s[:, None, :3], axis=2)
        assert np.all(d <= s[:, 3:4])


def test_triangle_spheres_huge_coordinates():
    big = ck.primitives.box_mesh([1e200, 2e200, 3e200])
    tree = ck.build_bvh(big, ck.BuildOptions(bv="saabb", split="balanced"))
    tree.validate(big.triangles)
    assert np.all(np.isfinite(tree.volumes[:, :10]))
    s = tri_spheres(big, ck.bvh.tree_for(big, "saabb"))
    assert np.all(np.isfinite(s))


@pytest.mark.parametrize("split", ["sah", "balanced"])
def test_default_traversal_reads_saabb_as_aabb(pb_mesh, split):
    a = pb_mesh("bunny.obj")
    b = pb_mesh("teddy2_VHACD_CHs.obj")
    ha = a.with_options(bv="saabb", split=split)
    hb = b.with_options(bv="saabb", split=split)
    box_a = a.with_options(bv="aabb", split=split)
    box_b = b.with_options(bv="aabb", split=split)
    pa, pb = scene(a, b, 0.6, 80, seed=11)
    assert np.array_equal(ck.intersects(ha, hb, pa, pb), ck.intersects(a, b, pa, pb))
    c = ck.contacts(ha, hb, pa, pb)
    assert np.array_equal(rows_of(c), rows_of(ck.contacts(a, b, pa, pb)))
    s1 = ck.query_stats(ha, hb, pa, pb, mode="all")
    s2 = ck.query_stats(box_a, box_b, pa, pb, mode="all")  # same tree shape: same counters
    assert np.array_equal(s1.bv_tests, s2.bv_tests) and np.array_equal(s1.tri_tests, s2.tri_tests)
    assert s1.bv_updates.sum() == 0
    for k in range(0, 80, 20):  # single-pose entry
        assert ck.intersects(ha, hb, pa[k], pb[k]) == ck.intersects(a, b, pa[k], pb[k])


def test_saabb_against_brute(pb_mesh):
    a = pb_mesh("cube.obj").with_options(bv="saabb", split="balanced", leaf_size=1)
    b = pb_mesh("teddy2_VHACD_CHs.obj").with_options(bv="saabb", split="balanced")
    pa, pb = scene(a, b, 0.5, 24, seed=2)
    assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb)), brute_pairs(a, b, pa, pb))
