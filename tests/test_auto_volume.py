"""BuildOptions(bv="auto"), the default: the choice per mesh, the rule per pair, and every
query answering on the trees the rule picks exactly as on explicit AABB trees (issue 15 item 1)."""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.bvh import auto


def _tube(radius=0.05, length=1.0, sections=96, layers=40, tilt=0.7):
    """A thin closed tube whose axis is oblique in its own frame (as CAD exports often are)."""
    th = np.linspace(0.0, 2.0 * np.pi, sections, endpoint=False)
    z = np.linspace(-length / 2, length / 2, layers + 1)
    ring = np.stack([radius * np.cos(th), radius * np.sin(th)], axis=1)
    v = np.concatenate([np.column_stack([ring, np.full(sections, zz)]) for zz in z])
    v = np.vstack([v, [[0.0, 0.0, z[0]], [0.0, 0.0, z[-1]]]])
    f = []
    for layer in range(layers):
        for i in range(sections):
            j = (i + 1) % sections
            a, b, c, d = layer * sections + i, layer * sections + j, (layer + 1) * sections + j, (layer + 1) * sections + i
            f += [[a, b, c], [a, c, d]]
    bottom, top = len(v) - 2, len(v) - 1
    for i in range(sections):
        j = (i + 1) % sections
        f += [[bottom, j, i], [top, layers * sections + i, layers * sections + j]]
    R = ck.rotation([1.0, 1.0, 0.0], tilt)[:3, :3]
    return ck.Mesh(v @ R.T, np.array(f))


TUBE = _tube()
BOX = ck.primitives.box_mesh([0.3, 0.3, 0.3])


def test_the_default_is_auto_and_the_choice_follows_the_shape():
    assert ck.BuildOptions().bv == "auto" and TUBE.options.bv == "auto"
    tube, box = ck.bvh.choose_volume(TUBE), ck.bvh.choose_volume(BOX)
    assert tube.bv == "obb" and tube.leaf_thickness_ratio >= auto.OBB_RATIO
    assert box.bv == "aabb" and box.leaf_thickness_ratio < auto.OBB_RATIO
    # scale-free and exact under power-of-two scaling, no overflow at the ends of the range
    for s in (2.0**-900, 2.0**900):
        scaled = ck.Mesh(TUBE.vertices * s, TUBE.faces)
        assert auto.leaf_thickness_ratio(scaled.triangles) == tube.leaf_thickness_ratio
    # a tree built for "auto" is the chosen kind, and says so
    assert ck.bvh_of(TUBE).options.bv == "obb" and ck.build_bvh(BOX).options.bv == "aabb"
    with pytest.raises(ValueError, match="auto"):
        ck.BuildOptions().bv_code  # noqa: B018 (the property raises)


def test_the_pair_rule():
    aabb_tube, obb_box = TUBE.with_options(bv="aabb"), BOX.with_options(bv="obb")
    assert ck.bvh.pair_volume(TUBE, TUBE) == "obb"
    assert ck.bvh.pair_volume(TUBE, BOX) == ck.bvh.pair_volume(BOX, TUBE) == "obb"  # either prefers OBB
    assert ck.bvh.pair_volume(BOX, BOX) == "aabb"
    assert ck.bvh.pair_volume(aabb_tube, TUBE) == "aabb"  # an explicit kind wins, a's first
    assert ck.bvh.pair_volume(BOX, obb_box) == "obb"
    assert ck.bvh.mesh_volume(TUBE) == "obb" and ck.bvh.mesh_volume(aabb_tube) == "aabb"


def test_every_query_on_auto_trees_answers_as_on_aabb_trees():
    """Two tubes in near contact: "auto" runs them as OBB trees (their counters are the OBB
    trees'), and every query answers as on explicit AABB trees."""
    a, b = TUBE, _tube(tilt=0.9)
    ra, rb = a.with_options(bv="aabb"), b.with_options(bv="aabb")
    oa, ob = a.with_options(bv="obb"), b.with_options(bv="obb")
    rng = np.random.default_rng(3)
    poses = ck.random_poses(24, 0.3, seed=4)
    poses[:, :3, 3] = rng.normal(scale=0.06, size=(24, 3))
    hit = ck.intersects(a, b, None, poses)
    assert 3 <= hit.sum() <= 21
    np.testing.assert_array_equal(hit, ck.intersects(ra, rb, None, poses))
    got, ref = ck.contacts(a, b, None, poses), ck.contacts(ra, rb, None, poses)
    np.testing.assert_array_equal(np.stack([got.pose_index, got.face_a, got.face_b]), np.stack([ref.pose_index, ref.face_a, ref.face_b]))
    d, dref = ck.distance(a, b, None, poses), ck.distance(ra, rb, None, poses)
    np.testing.assert_array_equal(d.distance, dref.distance)
    stats = ck.query_stats(a, b, None, poses, mode="all")
    np.testing.assert_array_equal(stats.bv_tests, ck.query_stats(oa, ob, None, poses, mode="all").bv_tests)
    assert not np.array_equal(stats.bv_tests, ck.query_stats(ra, rb, None, poses, mode="all").bv_tests)
    ends = poses.copy()
    ends[:, :3, 3] = -ends[:, :3, 3] + 0.3
    t, tref = ck.time_of_impact(a, b, None, None, poses, ends), ck.time_of_impact(ra, rb, None, None, poses, ends)
    np.testing.assert_array_equal(t.colliding, tref.colliding)
    for k in range(0, 24, 5):  # the per-call paths resolve the pair the same way
        assert ck.intersects(a, b, None, poses[k]) == hit[k]
        assert ck.distance(a, b, None, poses[k]).distance == d.distance[k]
        assert np.array_equal(ck.contacts(a, b, None, poses[k]).pairs(0), got.pairs(k))
    w = ck.World()
    w.add("a", a)
    w.add("b", b, poses[int(np.argmax(hit))])
    assert len(w.colliding_pairs()) == 1
