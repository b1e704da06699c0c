"""The World's API and its exact queries.

Oracles: ``collisionkit.intersects``/``contacts`` on every pair of objects
(the World must report exactly these, filters aside), and python-fcl as an
independent check of the colliding pairs on a real-mesh scene.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import load_pb_mesh, radius

import collisionkit as ck
from collisionkit.query import registry
from collisionkit.query.rows import result_from_pairs
from collisionkit.world import BROADPHASES

ALL = sorted(BROADPHASES)
MESHES = ["duck_vhacd.obj", "soccerball.obj", "teddy2_VHACD_CHs.obj", "cube.obj", "sphere_smooth.obj"]


def scaled(mesh, size):
    lo, hi = mesh.bounds
    c = (lo + hi) / 2
    s = size / float(np.max(hi - lo))
    return ck.Mesh((mesh.vertices - c) * s, mesh.faces)


@pytest.fixture(scope="module")
def meshes():
    return [scaled(load_pb_mesh(m), 1.0) for m in MESHES]


def pairwise(world: ck.World) -> set[tuple[int, int]]:
    """Every filtered pair by ck.intersects: the World's exact answer."""
    names = world.names
    excluded = {tuple(sorted((world.index(a), world.index(b)))) for a, b in world.excluded_pairs()}
    out = set()
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if (i, j) in excluded:
                continue
            a, b = names[i], names[j]
            sa, sb = world._slot(a), world._slot(b)
            if (world._group[sa] & world._mask[sb]) == 0 or (world._group[sb] & world._mask[sa]) == 0:
                continue
            if ck.intersects(world.shape(a), world.shape(b), world.pose(a), world.pose(b)):
                out.add((i, j))
    return out


def real_scene(meshes, n, seed, spread=1.6):
    rng = np.random.default_rng(seed)
    shapes = [meshes[k] for k in rng.integers(len(meshes), size=n)]
    poses = ck.random_poses(n, radius=spread * n ** (1 / 3) / 2, seed=seed)
    return shapes, poses


@pytest.mark.parametrize("broadphase", ALL)
def test_colliding_pairs_equal_pairwise_intersects(meshes, broadphase):
    shapes, poses = real_scene(meshes, 14, seed=3)
    w = ck.World(broadphase)
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"m{k}", s, T)
    for frame in range(4):
        got = set(map(tuple, w.colliding_pairs().rows.tolist()))
        assert got == pairwise(w), f"frame {frame}"
        assert got <= set(map(tuple, w.candidate_pairs().rows.tolist()))
        moved = ck.random_poses(len(w), radius=0.1, seed=100 + frame)
        poses = np.einsum("nij,njk->nik", poses, moved)
        w.step(poses) if frame % 2 else w.set_poses(poses)
        if frame == 1:
            w.remove("m3")
            w.add("late", meshes[0], poses[3])
            poses = w.poses
    assert 0 < len(w.colliding_pairs()) < len(w.candidate_pairs()) + 1


def test_colliding_pairs_agree_with_fcl(meshes):
    fcl = pytest.importorskip("fcl")
    shapes, poses = real_scene(meshes, 12, seed=8)
    w = ck.World("sap")
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"m{k}", s, T)
    objs = []
    for s, T in zip(shapes, poses, strict=True):
        m = fcl.BVHModel()
        m.beginModel(s.n_vertices, s.n_faces)
        m.addSubModel(s.vertices, s.faces)
        m.endModel()
        objs.append(fcl.CollisionObject(m, fcl.Transform(T[:3, :3], T[:3, 3])))
    want = set()
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            res = fcl.CollisionResult()
            if fcl.collide(objs[i], objs[j], fcl.CollisionRequest(), res):
                want.add((i, j))
    assert set(map(tuple, w.colliding_pairs().rows.tolist())) == want


@pytest.mark.parametrize("broadphase", ["sap", "tree"])
def test_contacts_equal_pairwise_contacts(meshes, broadphase):
    shapes, poses = real_scene(meshes, 10, seed=4, spread=1.2)
    w = ck.World(broadphase)
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"m{k}", s, T)
    c = w.contacts()
    assert np.array_equal(np.stack([c.object_a, c.object_b], axis=1), w.colliding_pairs().rows)
    assert len(c.object_a) > 0
    for k, (i, j) in enumerate(zip(c.object_a.tolist(), c.object_b.tolist(), strict=True)):
        ref = ck.contacts(shapes[i], shapes[j], poses[i], poses[j])
        assert np.array_equal(c.pairs(k), ref.pairs(0))
        assert not c.truncated[k]
    capped = w.contacts(max_pairs=2)
    assert np.all(capped.counts <= 2)
    assert np.array_equal(capped.truncated, c.counts > 2)
    with pytest.raises(ValueError, match="max_pairs"):
        w.contacts(max_pairs=0)


def test_contacts_overflow_rerun():
    """Pairs with more triangle pairs than the first-pass buffer holds."""
    s = ck.primitives.uv_sphere_mesh(1.0, 40, 80)
    w = ck.World("sap")
    w.add("a", s)
    w.add("b", s, ck.translation([1e-3, 0, 0]))
    c = w.contacts()
    ref = ck.contacts(s, s, None, ck.translation([1e-3, 0, 0]))
    assert len(ref) > 256
    assert np.array_equal(c.pairs(0), ref.pairs(0))


@pytest.mark.parametrize("threads", [1, 2])
def test_many_pairs_batched_like_single_calls(threads):
    """Enough candidate pairs for the parallel narrow phase."""
    box = ck.primitives.box_mesh([1, 1, 1])
    rng = np.random.default_rng(1)
    w = ck.World("grid", threads=threads)
    for k in range(150):
        w.add(f"b{k}", box, ck.translation(rng.uniform(0, 6, size=3)))
    got = set(map(tuple, w.colliding_pairs().rows.tolist()))
    assert len(got) > 64
    assert got == pairwise(w)
    c = w.contacts()
    assert np.array_equal(np.stack([c.object_a, c.object_b], axis=1), w.colliding_pairs().rows)


class Ball:
    """A shape the core does not know: queries go through query.registry."""

    def __init__(self, r):
        self.r = float(r)
        self.bounds = np.array([[-r, -r, -r], [r, r, r]], dtype=np.float64)


def _ball_handler(req):
    a, b = req.a, req.b
    ca = req.pa[req.ia, :3, 3]
    cb = req.pb[req.ib, :3, 3]
    hit = np.linalg.norm(ca - cb, axis=1) <= a.r + b.r
    idx = np.flatnonzero(hit)
    z = np.zeros(idx.size, np.int64)
    return result_from_pairs(req.n, req.batched, idx, z, z, 1, req.mode, req.max_pairs)


@pytest.fixture(scope="module")
def balls_registered():
    added = [registry.register(q, Ball, Ball, _ball_handler, honours=()) for q in ("intersects", "contacts")]
    yield
    for h in added:
        registry._HANDLERS[h.query].remove(h)
    registry._CACHE.clear()


@pytest.mark.parametrize("broadphase", ["sap", "octree"])
def test_other_shapes_through_dispatch(balls_registered, broadphase):
    w = ck.World(broadphase)
    w.add("p", Ball(1.0))
    w.add("q", Ball(1.0), ck.translation([1.5, 1.5, 0]))  # boxes overlap, balls do not
    w.add("r", Ball(0.5), ck.translation([-1.2, 0, 0]))
    box = ck.primitives.box_mesh([1, 1, 1])
    w.add("box", box, ck.translation([0, 10, 0]))
    w.add("box2", box, ck.translation([0, 10.5, 0]))
    assert w.candidate_pairs().names == [("p", "q"), ("p", "r"), ("box", "box2")]
    assert w.colliding_pairs().names == [("p", "r"), ("box", "box2")]
    c = w.contacts()
    assert c.names == [("p", "r"), ("box", "box2")]
    assert c.counts[0] == 1
    w.set_pose("box2", ck.translation([1.5, 0, 0]))  # a mesh-ball pair: no handler
    with pytest.raises(ck.UnsupportedPairError):
        w.colliding_pairs()


@pytest.mark.parametrize("broadphase", ALL)
def test_filters_are_honoured_by_every_query(broadphase):
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World(broadphase)
    for k in range(6):  # a chain of overlapping boxes: pairs (k, k+1)
        w.add(f"link{k}", box, ck.translation([0.9 * k, 0, 0]))
    full = [(k, k + 1) for k in range(5)]
    assert w.colliding_pairs().rows.tolist() == [list(p) for p in full]
    w.exclude("link0", "link1")
    w.exclude_pairs([("link3", "link2")])
    assert w.excluded_pairs() == [("link0", "link1"), ("link2", "link3")]
    want = [[1, 2], [3, 4], [4, 5]]
    for q in (w.candidate_pairs, w.colliding_pairs):
        assert q().rows.tolist() == want
    wc = w.contacts()
    assert np.stack([wc.object_a, wc.object_b], axis=1).tolist() == want
    m = w.exclusion_matrix()
    assert m[0, 1] and m[1, 0] and m[2, 3] and m.sum() == 4
    # groups and masks: link4 in group 2, which link5 does not accept
    w.set_filter("link4", group=2)
    w.set_filter("link5", mask=1)
    assert w.colliding_pairs().rows.tolist() == [[1, 2], [3, 4]]
    w.set_filter("link3", mask=0b100)
    assert w.colliding_pairs().rows.tolist() == [[1, 2]]
    # the matrix round-trips; include undoes an exclusion
    w.set_exclusion_matrix(m)
    assert np.array_equal(w.exclusion_matrix(), m)
    w.include("link1", "link0")
    assert w.excluded_pairs() == [("link2", "link3")]
    # removal drops an object's exclusions; a new object reusing its slot starts clean
    w.remove("link2")
    assert w.excluded_pairs() == []
    w.add("new", box, ck.translation([0.9 * 2, 0, 0]), group=1, mask=(1 << 64) - 1)
    assert ("link1", "new") in w.colliding_pairs()
    with pytest.raises(ValueError, match="symmetric"):
        w.set_exclusion_matrix(np.triu(np.ones((len(w), len(w)), bool), 1))
    with pytest.raises(ValueError, match="itself"):
        w.exclude("new", "new")


def test_index_order_names_and_removal():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World()
    assert w.broadphase == "sap" and len(w) == 0
    assert len(w.colliding_pairs()) == 0 and len(w.contacts()) == 0
    for k in range(40):  # past the initial capacity
        assert w.add(f"o{k}", box, ck.translation([3.0 * k, 0, 0])) == k
    assert w.names[:3] == ("o0", "o1", "o2") and "o39" in w and "zz" not in w
    w.remove("o1")
    assert w.index("o2") == 1 and len(w) == 39
    poses = w.poses
    poses[1, 0, 3] = 0.5  # o2 onto o0
    w.set_poses(poses)
    assert w.colliding_pairs().names == [("o0", "o2")]
    assert w.colliding_pairs().rows.tolist() == [[0, 1]]
    w.set_poses([ck.translation([1000.0, 0, 0])], names=["o0"])
    assert len(w.colliding_pairs()) == 0
    w.set_pose("o3", w.pose("o2"))
    assert w.colliding_pairs().names == [("o2", "o3")]
    assert w.boxes().shape == (39, 2, 3)
    w.clear()
    assert len(w) == 0 and len(w.candidate_pairs()) == 0


def test_bad_input():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World("tree")
    w.add("a", box)
    w.add("b", box, ck.translation([0.5, 0, 0]))
    with pytest.raises(ValueError, match="already"):
        w.add("a", box)
    with pytest.raises(ValueError, match="str"):
        w.add(3, box)
    with pytest.raises(ValueError, match="bounds"):
        w.add("c", object())
    with pytest.raises(ValueError, match="group"):
        w.add("c", box, group=1.5)
    with pytest.raises(KeyError):
        w.remove("zz")
    with pytest.raises(ValueError, match="shape"):
        w.set_poses(np.zeros((3, 4, 4)))
    bad = np.stack([np.eye(4), np.eye(4)])
    bad[1, 0, 0] = 2.0
    before = w.boxes()
    with pytest.raises(ck.InvalidPoseError) as info:
        w.set_poses(bad)
    assert info.value.index == 1
    assert np.array_equal(w.boxes(), before) and np.array_equal(w.pose("b"), ck.translation([0.5, 0, 0]))
    assert w.colliding_pairs().names == [("a", "b")]
    nan = np.eye(4)
    nan[0, 3] = np.nan
    with pytest.raises(ck.InvalidPoseError):
        w.add("c", box, nan)
    assert "c" not in w and len(w) == 2
    with pytest.raises(ValueError, match="threads"):
        ck.World(threads=0)


def test_world_boxes_contain_the_meshes(meshes):
    """Each world box contains the object's transformed vertices (and the pad is tiny)."""
    shapes, poses = real_scene(meshes, 8, seed=9)
    w = ck.World()
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"m{k}", s, T)
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        v = s.vertices @ T[:3, :3].T + T[:3, 3]
        lo, hi = w.boxes()[k]
        assert np.all(lo <= v.min(axis=0)) and np.all(v.max(axis=0) <= hi)
        assert np.all(hi - lo <= (v.max(axis=0) - v.min(axis=0)) + 2 * np.sqrt(3) * radius(s) + 1e-3)


def test_world_uses_each_meshs_own_build_options(meshes):
    """The narrow phase traverses each pair in the first mesh's volume kind, on the
    meshes' own trees (issue 14 step 4): answers equal pairwise queries, whatever mix
    of kinds the objects carry."""
    from collisionkit.constants import BV_KINDS

    kinds = sorted(BV_KINDS)  # every volume kind, one per object in turn
    shapes, poses = real_scene(meshes, max(10, len(kinds)), seed=4, spread=1.2)
    shapes = [s.with_options(bv=kinds[k % len(kinds)], leaf_size=2 + k % 3) for k, s in enumerate(shapes)]
    w = ck.World("sap")
    for k, (s, T) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"m{k}", s, T)
    c = w.contacts()
    assert set(map(tuple, w.colliding_pairs().rows.tolist())) == pairwise(w)
    assert len(c.object_a) > 0
    for k, (i, j) in enumerate(zip(c.object_a.tolist(), c.object_b.tolist(), strict=True)):
        ref = ck.contacts(shapes[i], shapes[j], poses[i], poses[j])
        assert np.array_equal(c.pairs(k), ref.pairs(0))
    used = {shapes[i].options.bv for i in c.object_a.tolist()}
    assert used <= set(w._pools) and len(used) > 1, "the pairs were not traversed in their meshes' kinds"
    for bv, (_pool, _, bv_code) in w._pools.items():
        assert bv_code == ck.BuildOptions(bv=bv).bv_code
