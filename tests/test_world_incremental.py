"""The World after pose changes: results kept for unmoved pairs, and the first colliding pair.

Oracle: a fresh World (brute broad phase) built at the same poses answers every
query from scratch; the incremental answers must equal it after any sequence of
moves, structural changes and filter changes, on every broad phase, with meshes
of several volume kinds and non-mesh shapes.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

import collisionkit as ck
from collisionkit.trimesh import CollisionManager, as_mesh

BROADPHASES = ["sap", "brute", "grid", "hash", "octree", "tree"]


def _shapes(rng: np.random.Generator, n: int) -> list:
    """Meshes (AABB, OBB and sphere trees: the World's pools per kind) and convex shapes."""
    out = []
    for k in range(n):
        r = k % 5
        if r == 0:
            m = ck.primitives.box_mesh(rng.uniform(0.3, 1.2, 3))
        elif r == 1:
            m = ck.primitives.uv_sphere_mesh(rng.uniform(0.2, 0.6), 6, 10)
            m = m.with_options(bv="obb")
        elif r == 2:
            m = ck.primitives.box_mesh([1.5, 0.05, 1.5])  # a thin plate
            m = m.with_options(bv="sphere")
        elif r == 3:
            m = ck.Sphere(rng.uniform(0.2, 0.5))
        else:
            m = ck.primitives.uv_sphere_mesh(0.3, 5, 8)
        out.append(m)
    return out


def _random_pose(rng: np.random.Generator, spread: float) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    T = np.eye(4)
    T[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    T[:3, 3] = rng.uniform(-spread, spread, 3)
    return T


def _fresh(w: ck.World) -> ck.World:
    """The same objects, poses and filters, nothing computed yet."""
    f = ck.World(broadphase="brute")
    for name, T in zip(w.names, w.poses, strict=True):
        f.add(name, w.shape(name), T)
    f.set_exclusion_matrix(w.exclusion_matrix())
    for name in w.names:
        s = w._slot(name)
        f.set_filter(name, group=int(w._group[s]), mask=int(w._mask[s]))
    return f


@pytest.mark.parametrize("bp", BROADPHASES)
def test_moves_match_a_fresh_world(bp):
    rng = np.random.default_rng(7)
    w = ck.World(broadphase=bp)
    shapes = _shapes(rng, 30)
    for k, s in enumerate(shapes):
        w.add(f"o{k}", s, _random_pose(rng, 2.0))
    w.exclude("o0", "o1")
    w.set_filter("o7", group=2, mask=2)  # o7 meets only group-2 objects: none
    w.colliding_pairs()
    checked = 0
    for step in range(80):
        kind = rng.integers(10)
        if kind == 0 and len(w) > 20:  # structural changes forget everything
            w.remove(w.names[int(rng.integers(len(w)))])
        elif kind == 1:
            name = f"n{step}"
            w.add(name, shapes[int(rng.integers(len(shapes)))], _random_pose(rng, 2.0))
        elif kind == 2:  # many at once: beyond what the World keeps results for
            w.set_poses(np.stack([_random_pose(rng, 2.0) for _ in range(len(w))]))
        else:
            for i in rng.choice(len(w), int(rng.integers(1, 4)), replace=False).tolist():
                T = w.pose(w.names[i])
                T[:3, 3] += rng.normal(0.0, 0.4, 3)
                w.set_pose(w.names[i], T)
        ref = _fresh(w)
        expect = set(ref.colliding_pairs().names)
        q = int(rng.integers(3))
        if q == 0:
            assert set(w.candidate_pairs().names) == set(ref.candidate_pairs().names)
            assert set(w.colliding_pairs().names) == expect
        elif q == 1:
            first = w.first_colliding_pair()
            assert (first is None) == (not expect)
            assert first is None or first in expect
        else:
            first = w.first_colliding_pair()  # then the full answer, from what it left
            assert set(w.colliding_pairs().names) == expect
            assert (first is None) == (not expect)
        checked += bool(expect)
    assert checked > 10  # the sequence did visit colliding states


def test_first_colliding_pair_edges():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World()
    assert w.first_colliding_pair() is None  # empty
    w.add("a", box)
    assert w.first_colliding_pair() is None  # one object
    w.add("b", box, ck.translation([1.0, 0, 0]))  # touching faces collide
    assert w.first_colliding_pair() == ("a", "b")
    w.set_pose("b", ck.translation([1.0 + 1e-9, 0, 0]))  # a gap of 1e-9: apart
    assert w.first_colliding_pair() is None
    assert w.colliding_pairs().names == []  # settled by the search
    w.set_pose("b", ck.translation([0.5, 0, 0]))
    assert w.first_colliding_pair() == ("a", "b")
    w.exclude("a", "b")
    assert w.first_colliding_pair() is None


def test_witness_is_dropped_when_its_object_moves():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World()
    w.add("a", box)
    w.add("b", box, ck.translation([0.5, 0, 0]))
    w.add("c", box, ck.translation([10.0, 0, 0]))
    assert w.first_colliding_pair() == ("a", "b")
    w.set_pose("c", ck.translation([20.0, 0, 0]))  # an unrelated move keeps the pair
    assert w.first_colliding_pair() == ("a", "b")
    w.set_pose("b", ck.translation([5.0, 0, 0]))  # the pair's object moves away
    assert w.first_colliding_pair() is None
    w.set_pose("c", ck.translation([5.5, 0, 0]))  # a new pair appears among moved ones
    assert w.first_colliding_pair() == ("b", "c")
    w.remove("a")  # indices shift: the pair keeps its names
    assert w.first_colliding_pair() == ("b", "c")


def test_bad_pose_leaves_results_valid():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World()
    w.add("a", box)
    w.add("b", box, ck.translation([0.5, 0, 0]))
    assert w.colliding_pairs().names == [("a", "b")]
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(ck.InvalidPoseError):
        w.set_pose("b", bad)
    assert w.colliding_pairs().names == [("a", "b")]
    assert w.first_colliding_pair() == ("a", "b")


# -- the trimesh drop-in's booleans stop at the first hit: same answers as the names form ----


def _manager(rng: np.random.Generator, n: int, spread: float) -> CollisionManager:
    m = CollisionManager()
    meshes = [trimesh.creation.box([0.6, 0.4, 0.5]), trimesh.creation.icosphere(1, 0.35), trimesh.creation.annulus(0.2, 0.4, 0.2)]
    for k in range(n):
        m.add_object(f"m{k}", meshes[k % 3], _random_pose(rng, spread))
    return m


@pytest.mark.parametrize("spread", [0.8, 1.6, 4.0])
def test_drop_in_booleans_match_names(spread):
    rng = np.random.default_rng(int(spread * 10))
    a, b = _manager(rng, 12, spread), _manager(rng, 9, spread)
    probe = trimesh.creation.icosphere(1, 0.3)
    for _ in range(25):
        name = f"m{int(rng.integers(12))}"
        a.set_transform(name, _random_pose(rng, spread))
        got, names = a.in_collision_internal(), a.in_collision_internal(return_names=True)[1]
        assert got == bool(names)
        assert a.in_collision_other(b) == bool(a.in_collision_other(b, return_names=True)[1])
        T = _random_pose(rng, spread)
        assert a.in_collision_single(probe, T) == bool(a.in_collision_single(probe, T, return_names=True)[1])


def test_drop_in_booleans_see_containment():
    """Surfaces apart, one closed mesh inside the other: the booleans find it too."""
    big, small = trimesh.creation.icosphere(2, 1.0), trimesh.creation.icosphere(1, 0.2)
    m = CollisionManager()
    m.add_object("big", big)
    m.add_object("small", small)
    assert m.in_collision_internal() is True
    assert m.in_collision_single(small) is True
    other = CollisionManager()
    other.add_object("inner", small)
    assert m.in_collision_other(other) is True and other.in_collision_other(m) is True
    m.set_transform("small", trimesh.transformations.translation_matrix([3.0, 0, 0]))
    assert m.in_collision_internal() is False
    assert CollisionManager().in_collision_other(m) is False
    assert as_mesh(big) is as_mesh(big)  # one conversion per mesh (shared trees)


@pytest.mark.parametrize("bp", BROADPHASES)
def test_moved_objects_meeting_each_other(bp):
    """Pairs of two moved objects (each found once, from the lower index) and a moved
    object's pairs with unmoved ones."""
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World(broadphase=bp)
    for k in range(8):
        w.add(f"b{k}", box, ck.translation([3.0 * k, 0, 0]))
    assert w.colliding_pairs().names == []
    w.set_pose("b3", ck.translation([30.0, 0, 0]))
    w.set_pose("b4", ck.translation([30.5, 0, 0]))  # b3, b4 moved onto each other
    assert w.candidate_pairs().names == [("b3", "b4")]
    assert w.colliding_pairs().names == [("b3", "b4")]
    w.set_pose("b4", ck.translation([0.5, 0, 0]))  # onto unmoved b0; b3 and b4 part
    w.set_pose("b5", ck.translation([30.2, 0, 0]))  # onto b3 (moved earlier)
    assert w.first_colliding_pair() in {("b0", "b4"), ("b3", "b5")}
    assert w.colliding_pairs().names == [("b0", "b4"), ("b3", "b5")]


def _fresh_manager(m: CollisionManager) -> CollisionManager:
    f = CollisionManager(depth=m._depth_mode)
    for name, o in m._objs.items():
        f.add_object(name, o.mesh)
        f.set_transform(name, o.transform)  # float64 as stored (add_object rounds to float32)
    return f


@pytest.mark.parametrize(("depth", "removed"), [("lower", False), ("bounds", False), ("lower", True)])
def test_drop_in_answers_after_moves_match_a_fresh_manager(depth, removed):
    """Depths and containment kept by pair of objects (a moved object is a new one): after
    any sequence of moves every answer equals a manager built at the same poses. With
    ``removed`` an object was removed first: the World's slots have a hole, so the cached
    poses and boxes are copies updated per move, not views of the World's rows."""
    rng = np.random.default_rng(11)
    m = CollisionManager(depth=depth)
    meshes = [trimesh.creation.box([0.8, 0.6, 0.5]), trimesh.creation.icosphere(1, 0.45), trimesh.creation.annulus(0.2, 0.45, 0.3)]
    if removed:
        m.add_object("gone", meshes[0])
    for k in range(9):
        m.add_object(f"m{k}", meshes[k % 3], _random_pose(rng, 0.9))
    if removed:
        m.remove_object("gone")
    other = _manager(rng, 5, 0.9)
    overlapping = 0
    for _ in range(12):
        for name in rng.choice(9, int(rng.integers(1, 3)), replace=False).tolist():
            m.set_transform(f"m{name}", _random_pose(rng, 0.9))
        f = _fresh_manager(m)
        got, want = m.min_distance_internal(return_names=True), f.min_distance_internal(return_names=True)
        assert got[0] == want[0] and got[1] == want[1]
        assert m.in_collision_internal(return_names=True) == f.in_collision_internal(return_names=True)
        assert m.min_distance_other(other, return_names=True) == f.min_distance_other(other, return_names=True)
        assert m.in_collision_other(other, return_names=True) == f.in_collision_other(other, return_names=True)
        assert m.in_collision_other(other) == f.in_collision_other(other)
        other.set_transform(f"m{int(rng.integers(5))}", _random_pose(rng, 0.9))  # the other side moves too
        assert m.in_collision_other(other) == f.in_collision_other(other)
        assert m.in_collision_other(other, return_names=True) == f.in_collision_other(other, return_names=True)
        overlapping += got[0] < 0
    assert overlapping >= 3
    assert m._flat_views is not removed  # both ways of keeping the cached rows were run


def test_drop_in_memo_follows_a_pair_moved_back_and_forth():
    big, small = trimesh.creation.icosphere(2, 1.0), trimesh.creation.box([0.4, 0.4, 0.4])
    m = CollisionManager()
    m.add_object("big", big)
    m.add_object("box", small)
    m.set_transform("box", trimesh.transformations.translation_matrix([0.95, 0, 0]))  # float64 kept
    first = m.min_distance_internal()
    assert first < 0
    m.set_transform("box", trimesh.transformations.translation_matrix([0.5, 0, 0]))  # inside, surfaces apart
    assert m.in_collision_internal(return_names=True) == (True, {("big", "box")})
    inside = m.min_distance_internal()
    assert inside < first  # deeper inside
    m.set_transform("box", trimesh.transformations.translation_matrix([3.0, 0, 0]))
    assert m.in_collision_internal() is False and m.min_distance_internal() > 0
    m.set_transform("box", trimesh.transformations.translation_matrix([0.95, 0, 0]))
    assert m.min_distance_internal() == first


def test_drop_in_containment_follows_moves():
    """Boxes nested in both poses: inside the solid, then in its box's corner outside it."""
    m = CollisionManager()
    m.add_object("big", trimesh.creation.icosphere(3, 1.0))
    m.add_object("bit", trimesh.creation.box([0.1, 0.1, 0.1]))
    m.set_transform("bit", trimesh.transformations.translation_matrix([0.3, 0, 0]))
    assert m.in_collision_internal() is True and m.in_collision_internal(return_names=True)[1] == {("big", "bit")}
    m.set_transform("bit", trimesh.transformations.translation_matrix([0.8, 0.8, 0.8]))  # |corner| > 1
    assert m.in_collision_internal(return_names=True) == (False, set())
    assert m.min_distance_internal() > 0


def _count_full_searches(m: CollisionManager, monkeypatch) -> list[int]:
    """Calls of the full overlapping-pair search (``_internal_pairs``) on ``m``."""
    calls = [0]
    full = m._internal_pairs

    def counted():
        calls[0] += 1
        return full()

    monkeypatch.setattr(m, "_internal_pairs", counted)
    return calls


def _same_nearest(m: CollisionManager, f: CollisionManager) -> tuple:
    got = m.min_distance_internal(return_names=True, return_data=True)
    want = f.min_distance_internal(return_names=True, return_data=True)
    assert got[:2] == want[:2]
    if got[2] is not None:
        assert got[2].names == want[2].names
        for name in got[2].names:
            assert np.array_equal(got[2].point(name), want[2].point(name))
    return got


@pytest.mark.parametrize("offset", [0.0, 1.0e5])
def test_drop_in_nearest_after_small_moves_matches_a_full_search(monkeypatch, offset):
    """``min_distance_internal()`` after moves measures the moved objects' pairs alone
    (the last deepest pair kept while unmoved): equal to a manager built at the same poses,
    names and closest points included, over steps that move one or a few objects a little
    (mostly the kept answer), far (new deepest pairs) or the deepest pair itself."""
    rng = np.random.default_rng(5)
    m = CollisionManager()
    meshes = [trimesh.creation.box([0.8, 0.6, 0.5]), trimesh.creation.icosphere(1, 0.45), trimesh.creation.annulus(0.2, 0.45, 0.3)]
    for k in range(14):  # ``offset``: far from the origin (the bounds' rounding pads are relative)
        T = _random_pose(rng, 1.4)
        T[:3, 3] += offset
        m.add_object(f"m{k}", meshes[k % 3], T)
    start = {name: o.transform.copy() for name, o in m._objs.items()}
    calls = _count_full_searches(m, monkeypatch)
    kept = 0
    for step in range(40):
        kind = step % 4
        deepest = m.min_distance_internal(return_names=True)
        if kind == 3:  # the deepest pair's first object
            names = [deepest[1][0]]
        else:
            names = [f"m{k}" for k in rng.choice(14, 1 + kind, replace=False).tolist()]
        for name in names:  # about the start (a random walk would drift apart)
            T = start[name].copy()
            T[:3, 3] += rng.normal(0, 0.1 if kind < 2 else 0.6, 3)
            m.set_transform(name, T)
        before = calls[0]
        _same_nearest(m, _fresh_manager(m))
        if deepest[0] < 0 and not set(names) & set(deepest[1]):  # the kept pair did not move: no full search
            assert calls[0] == before
            kept += 1
        elif kind == 3 and deepest[0] < 0:
            assert calls[0] == before + 1
    assert kept >= 15


def test_drop_in_nearest_after_moves_with_equal_depths(monkeypatch):
    """Exactly equal depths (boxes at exact binary coordinates): a moved pair that ties the
    kept deepest one leaves the choice to the full search, so the names equal a fresh
    manager's; open meshes (signed distance 0.0 for every overlap) likewise."""
    box = trimesh.creation.box([1.0, 1.0, 1.0])
    m = CollisionManager()
    for k, x in enumerate([0.0, 0.75, 8.0, 20.0, 20.5]):
        m.add_object(f"b{k}", box, trimesh.transformations.translation_matrix([x, 0.0, 0.0]))
    f = _fresh_manager(m)
    assert _same_nearest(m, f)[1] == ("b3", "b4")  # 0.5 deep; b0-b1 0.25
    calls = _count_full_searches(m, monkeypatch)
    # b2 alone; b2 as deep into b3 as b4 is (a tie: the full search chooses); b2 alone; deeper into b0
    for x, deepest, full in [(8.75, ("b3", "b4"), 0), (19.5, None, 1), (40.0, None, None), (0.25, ("b0", "b2"), None)]:
        before = calls[0]
        m.set_transform("b2", trimesh.transformations.translation_matrix([x, 0.0, 0.0]))
        got = _same_nearest(m, _fresh_manager(m))
        assert got[0] == (-0.75 if x == 0.25 else -0.5)
        if deepest is not None:
            assert got[1] == deepest
        if full is not None:
            assert calls[0] - before == full

    flat = trimesh.creation.annulus(0.2, 0.5, 0.1)
    flat = trimesh.Trimesh(flat.vertices, flat.faces[: len(flat.faces) // 2], process=False)  # open
    m = CollisionManager()
    for k in range(4):
        m.add_object(f"o{k}", flat, trimesh.transformations.translation_matrix([0.5 * k, 0.0, 0.0]))
    assert m.min_distance_internal() == 0.0
    for k in (1, 3, 0):
        m.set_transform(f"o{k}", trimesh.transformations.translation_matrix([0.5 * k + 0.05, 0.1, 0.0]))
        _same_nearest(m, _fresh_manager(m))


def test_drop_in_nearest_after_moves_finds_containment_and_forgets_on_remove():
    """A moved object that lands inside a closed one (surfaces apart) is a deeper pair; a
    removed object's pairs leave the answer."""
    m = CollisionManager()
    m.add_object("big", trimesh.creation.icosphere(3, 1.0))
    m.add_object("a", trimesh.creation.box([0.5, 0.5, 0.5]), trimesh.transformations.translation_matrix([1.1, 0, 0]))
    m.add_object("bit", trimesh.creation.box([0.1, 0.1, 0.1]), trimesh.transformations.translation_matrix([5.0, 0, 0]))
    first = _same_nearest(m, _fresh_manager(m))
    assert first[0] < 0 and first[1] == ("a", "big")
    m.set_transform("bit", trimesh.transformations.translation_matrix([0.1, 0, 0]))  # deep inside
    got = _same_nearest(m, _fresh_manager(m))
    assert got[1] == ("big", "bit") and got[0] < first[0]
    m.remove_object("bit")
    assert _same_nearest(m, _fresh_manager(m))[1] == ("a", "big")
    m.set_transform("a", trimesh.transformations.translation_matrix([4.0, 0, 0]))
    assert _same_nearest(m, _fresh_manager(m))[0] > 0  # apart: the distance branch


def test_deeper_neighbours_kernel_against_numpy():
    """The kernel's bounds and kept objects equal the drop-in's numpy depth bound
    (``_depth_bound``, boxes and spheres) over random boxes, for several floors and
    skip masks (a box touching another counts at floor 0)."""
    from collisionkit.kernels.broadphase.common import deeper_neighbours
    from collisionkit.trimesh import _depth_bound

    rng = np.random.default_rng(3)
    n = 300
    centres = rng.uniform(-5, 5, (n, 3))
    half = rng.uniform(0.05, 1.0, (n, 3))
    lo, hi = centres - half, centres + half
    lo[1] = [hi[0, 0], lo[0, 1], lo[0, 2]]  # touches box 0's face x = hi
    hi[1] = lo[1] + 0.5
    centres[1], half[1] = (lo[1] + hi[1]) / 2, (hi[1] - lo[1]) / 2
    radii = np.sqrt((half**2).sum(axis=1)) * (1 + 1e-12)
    boxes = np.stack([lo, hi], axis=1)
    for i in (0, 7, 150):
        want_all = _depth_bound(boxes, boxes[i : i + 1], (centres, radii, centres[i : i + 1], radii[i : i + 1]))
        for floor in (0.0, 0.1, 0.5):
            skip = rng.random(n) < 0.2
            js, bounds = deeper_neighbours(i, lo, hi, centres, radii, skip, floor)
            want = np.flatnonzero((want_all >= floor) & ~skip & (np.arange(n) != i))
            assert js.tolist() == want.tolist()
            np.testing.assert_allclose(bounds, want_all[want], rtol=1e-12, atol=1e-15)
            if i == 0 and floor == 0.0 and not skip[1]:
                assert 1 in js.tolist()  # touching boxes: bound 0
