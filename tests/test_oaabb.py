"""Strategy "oaabb" (seed 000's CollisionSearch): exactly the default strategy's and the
brute-force oracle's pairs, on single poses and batches; surface_contacts; node visits."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import PARALLEL_BATCH, brute_pairs, counts_of, load_pb_mesh, rows_of, scene, signed_perm

import collisionkit as ck
from collisionkit.errors import InvalidPoseError, UnsupportedPairError

STRATEGIES = [
    pytest.param(ck.OAABB(), id="oaabb"),
    pytest.param(ck.OAABB(use_overlap_box=False), id="no-obox"),
    pytest.param(ck.OAABB(node_capacity=2), id="m2"),
    pytest.param(ck.OAABB(node_capacity=16, use_overlap_box=False), id="m16-no-obox"),
]


def _pair(name: str):
    if name == "sphere-torus":
        return ck.primitives.uv_sphere_mesh(1.0, 12, 24), ck.primitives.torus_mesh(1.0, 0.3, 24, 12)
    if name == "box-box":
        return ck.primitives.box_mesh([1, 2, 3]), ck.primitives.box_mesh([0.5, 0.5, 4])
    if name == "duck-teddy":
        return load_pb_mesh("duck_vhacd.obj"), load_pb_mesh("teddy2_VHACD_CHs.obj")
    raise KeyError(name)


def test_registered():
    assert "oaabb" in ck.strategies.names()
    assert ck.strategies.resolve("oaabb") == ck.OAABB()
    with pytest.raises(ValueError, match="use_overlap_box"):
        ck.OAABB(use_overlap_box=1)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["sphere-torus", "box-box", "duck-teddy"])
def test_equals_brute_force_and_default(name, strategy):
    a, b = _pair(name)
    pa, pb = scene(a, b, 0.6, 60, seed=11)
    ref = brute_pairs(a, b, pa, pb)
    c = ck.contacts(a, b, pa, pb, strategy=strategy, threads=1)
    assert np.array_equal(rows_of(c), ref)
    assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb)), ref)
    hit = counts_of(ref, 60) > 0
    assert np.array_equal(ck.intersects(a, b, pa, pb, strategy=strategy), hit)
    first = ck.contacts(a, b, pa, pb, mode="first", strategy=strategy)
    assert np.array_equal(first.counts, hit.astype(np.int64))
    got = {tuple(r) for r in rows_of(first)}
    assert got <= {tuple(r) for r in ref}


@pytest.mark.parametrize("strategy", STRATEGIES[:2])
def test_parallel_batches_and_threads(strategy):
    a, b = _pair("sphere-torus")
    n = PARALLEL_BATCH + 7
    pa, pb = scene(a, b, 0.5, n, seed=5)
    ref = brute_pairs(a, b, pa, pb)
    for threads in (1, 2):
        assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy=strategy, threads=threads)), ref)
        s = ck.query_stats(a, b, pa, pb, mode="all", strategy=strategy, threads=threads)
        assert np.array_equal(s.colliding, counts_of(ref, n) > 0)
    # broadcasting a single pose against a batch, both ways
    one = ck.contacts(a, b, pa[3], pb, strategy=strategy)
    assert np.array_equal(rows_of(one), brute_pairs(a, b, pa[3], pb))
    assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb[4], strategy=strategy)), brute_pairs(a, b, pa, pb[4]))


def test_max_pairs_cap_like_the_default():
    a, b = _pair("sphere-torus")
    pa, pb = scene(a, b, 0.3, 40, seed=8)
    ref = brute_pairs(a, b, pa, pb)
    full = counts_of(ref, 40)
    for cap in (1, 5):
        c = ck.contacts(a, b, pa, pb, max_pairs=cap, strategy="oaabb")
        assert np.array_equal(c.counts, np.minimum(full, cap))
        assert np.array_equal(c.truncated, full > cap)
        refset = {tuple(r) for r in ref}
        assert {tuple(r) for r in rows_of(c)} <= refset


def test_small_result_buffer_overflow_rerun():
    # two identical dense meshes at the identity: every pose has thousands of pairs
    a = ck.primitives.uv_sphere_mesh(1.0, 24, 48)
    poses = np.repeat(np.eye(4)[None], 3, axis=0)
    poses[:, 0, 3] = [0.0, 0.01, 0.02]
    ref = brute_pairs(a, a, None, poses)
    assert ref.shape[0] > 3 * 1000
    assert np.array_equal(rows_of(ck.contacts(a, a, None, poses, strategy="oaabb")), ref)


def test_touching_and_coplanar_exact():
    box = ck.primitives.box_mesh([1, 1, 1])
    for t in ([1.0, 0, 0], [1.0, 1.0, 0], [1.0, 1.0, 1.0], [1.0 + 2**-40, 0, 0], [0.5, 0.25, 0.125]):
        T = ck.translation(t)
        ref = brute_pairs(box, box, None, T)
        for strategy in ("oaabb", ck.OAABB(use_overlap_box=False)):
            assert np.array_equal(rows_of(ck.contacts(box, box, None, T, strategy=strategy)), ref), t
    # exact signed-permutation rotations: touching faces stay touching
    T = signed_perm((1, 0, 2), (1, -1, 1), (1.0, 0.0, 0.0))
    assert np.array_equal(rows_of(ck.contacts(box, box, None, T, strategy="oaabb")), brute_pairs(box, box, None, T))


def test_far_huge_and_tiny_coordinates():
    a, b = _pair("box-box")
    pa0, pb0 = scene(a, b, 0.5, 20, seed=2)
    for s in (1e-150, 1e150):
        sa = ck.Mesh(a.vertices * s, a.faces)
        sb = ck.Mesh(b.vertices * s, b.faces)
        pa, pb = pa0.copy(), pb0.copy()
        pa[:, :3, 3] *= s
        pb[:, :3, 3] *= s
        assert np.array_equal(rows_of(ck.contacts(sa, sb, pa, pb, strategy="oaabb")), brute_pairs(sa, sb, pa, pb))
    far = ck.translation([1e9, 0, 0])
    assert not ck.intersects(a, b, None, far, strategy="oaabb")


def test_slightly_non_rigid_pose_is_conservative():
    # accepted poses may be off rigid by up to 1e-6: the OAABB must still not drop pairs
    a, b = _pair("sphere-torus")
    rng = np.random.default_rng(0)
    pa, pb = scene(a, b, 0.4, 30, seed=9)
    pb = pb.copy()
    pb[:, :3, :3] *= 1.0 + rng.uniform(-4e-7, 4e-7, (30, 1, 1))  # |R^T R - I| < 1e-6: accepted
    assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy="oaabb")), brute_pairs(a, b, pa, pb))


def test_errors_and_empty_batches():
    box = ck.primitives.box_mesh()
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(InvalidPoseError, match="pose_b"):
        ck.intersects(box, box, None, bad, strategy="oaabb")
    with pytest.raises(UnsupportedPairError):
        ck.surface_contacts(box, "box")
    empty = np.zeros((0, 4, 4))
    assert ck.intersects(box, box, None, empty, strategy="oaabb").shape == (0,)
    assert ck.contacts(box, box, None, empty, strategy="oaabb").n_poses == 0
    assert ck.surface_contacts(box, box, None, empty).n_poses == 0
    assert ck.intersects(box, box, strategy="oaabb") is True
    with pytest.raises(ValueError, match="mode"):
        ck.surface_contacts(box, box, mode="any")


@pytest.mark.parametrize("name", ["sphere-torus", "box-box", "duck-teddy"])
def test_surface_contacts_agree_across_strategies(name):
    a, b = _pair(name)
    pa, pb = scene(a, b, 0.5, 30, seed=4)
    ref = brute_pairs(a, b, pa, pb)
    expect = {(int(p), int(a.surfaces[i]), int(b.surfaces[j])) for p, i, j in ref}
    for strategy in ("oaabb", ck.OAABB(use_overlap_box=False), "descent"):
        sc = ck.surface_contacts(a, b, pa, pb, strategy=strategy)
        rows = np.stack([sc.pose_index, sc.surface_a, sc.surface_b], axis=1)
        assert {tuple(map(int, r)) for r in rows} == expect and len(rows) == len(expect)
        assert np.array_equal(rows, np.unique(rows, axis=0)), "rows not sorted"
        assert sc.triangles is None
        both = ck.surface_contacts(a, b, pa, pb, strategy=strategy, triangles=True)
        assert np.array_equal(rows_of(both.triangles), ref)
        assert np.array_equal(both.surface_a, sc.surface_a) and np.array_equal(both.counts, sc.counts)
        first = ck.surface_contacts(a, b, pa, pb, mode="first", strategy=strategy, triangles=True)
        assert np.array_equal(first.counts, (sc.counts > 0).astype(np.int64))
        frows = {tuple(map(int, r)) for r in np.stack([first.pose_index, first.surface_a, first.surface_b], axis=1)}
        assert frows <= expect


def test_surface_labels_are_the_meshes_labels():
    box = ck.primitives.box_mesh()
    lab = ck.Mesh(box.vertices, box.faces, surfaces=np.arange(12) * 10 + 7)
    sc = ck.surface_contacts(lab, lab, None, ck.translation([0.5, 0.5, 0.5]))
    assert set(sc.surface_a.tolist()) <= set((np.arange(12) * 10 + 7).tolist())
    ref = ck.surface_contacts(lab, lab, None, ck.translation([0.5, 0.5, 0.5]), strategy="descent")
    assert np.array_equal(sc.surface_a, ref.surface_a) and np.array_equal(sc.surface_b, ref.surface_b)
    assert sc.pairs(0).shape == (len(sc), 2)


def test_counters_and_node_visits():
    a, b = _pair("duck-teddy")
    pa, pb = scene(a, b, 0.5, 25, seed=6)
    with_box = ck.query_stats(a, b, pa, pb, mode="all", strategy="oaabb")
    without = ck.query_stats(a, b, pa, pb, mode="all", strategy=ck.OAABB(use_overlap_box=False))
    assert np.array_equal(with_box.tri_tests, without.tri_tests)  # same triangle pairs tested
    # without the filter every triangle of b is moved into a's frame (+1 for a's root box) ...
    near = without.bv_updates > 1
    assert np.all(without.bv_updates[near] == b.n_faces + 1)
    # ... with it, only those meeting the overlap box
    assert np.all(with_box.bv_updates <= without.bv_updates)
    nv = ck.node_visits(a, b, pa, pb, mode="all")
    assert nv.visits_b.shape == (ck.OAABB().trees(b).n_nodes,)
    # node_pairs counts node visits: the same total as the per-node counters
    assert nv.visits_a.sum() + nv.visits_b.sum() == with_box.node_pairs.sum()
    # b's nodes are walked once per pose at most
    assert nv.visits_b.max() <= 25
    summary = nv.summary()
    assert summary["visited_a"] <= summary["nodes_a"]
    with pytest.raises(ValueError):
        ck.node_visits(a, b, mode="everything")
    with pytest.raises(ValueError):
        ck.node_visits(a, b, strategy="descent")


@pytest.fixture(scope="module")
def cell():
    pytest.importorskip("pybullet_data")
    import warnings

    from benchmarks.robot_cell import build_cell

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_cell(60)


def _world_boxes_overlap(mesh_a, Ta, mesh_b, Tb) -> bool:
    def box(m, T):
        corners = np.array([[x, y, z] for x in m.bounds[:, 0] for y in m.bounds[:, 1] for z in m.bounds[:, 2]])
        w = corners @ T[:3, :3].T + T[:3, 3]
        return w.min(axis=0), w.max(axis=0)

    (la, ha), (lb, hb) = box(mesh_a, Ta), box(mesh_b, Tb)
    return bool(np.all(la <= hb + 1e-9) and np.all(lb <= ha + 1e-9))


def test_robot_cell_equals_default_and_brute_force(cell):
    """The seed's scene: every queried part pair over the whole trajectory equals the default
    strategy; at a few steps (with and without contact) also the brute-force oracle."""
    assert cell.inventory()["parts"] == 28
    contact_steps = 0
    for i, j in cell.pairs:
        a, b = cell.meshes[i], cell.meshes[j]
        pa, pb = np.ascontiguousarray(cell.poses[:, i]), np.ascontiguousarray(cell.poses[:, j])
        ref = rows_of(ck.contacts(a, b, pa, pb))
        for strategy in ("oaabb", ck.OAABB(use_overlap_box=False)):
            assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy=strategy)), ref), (cell.names[i], cell.names[j])
        contact_steps += len(np.unique(ref[:, 0]))
        sc = ck.surface_contacts(a, b, pa, pb)
        expect = np.unique(np.stack([ref[:, 0], a.surfaces[ref[:, 1]], b.surfaces[ref[:, 2]]], axis=1), axis=0)
        assert np.array_equal(np.stack([sc.pose_index, sc.surface_a, sc.surface_b], axis=1).reshape(-1, 3), expect.reshape(-1, 3))
        for s in (5, 25, 40):
            if _world_boxes_overlap(a, pa[s], b, pb[s]):
                got = rows_of(ck.contacts(a, b, pa[s], pb[s], strategy="oaabb"))
                assert np.array_equal(got[:, 1:], brute_pairs(a, b, pa[s], pb[s])[:, 1:]), (s, cell.names[i], cell.names[j])
    assert contact_steps > 20, "the trajectory should bring the arm into contact with parts"


def test_node_visits_not_double_counted_by_overflow_reruns():
    # thousands of pairs: the first pass overflows its buffer and the pose is rerun
    a = ck.primitives.uv_sphere_mesh(1.0, 24, 48)
    T = ck.translation([0.01, 0.0, 0.0])
    nv = ck.node_visits(a, a, None, T, mode="all")
    assert nv.visits_b.max() == 1  # b's trees are walked once per pose
    s = ck.query_stats(a, a, None, T, mode="all", strategy="oaabb")
    assert nv.visits_a.sum() + nv.visits_b.sum() == s.node_pairs  # one pose: an int
