"""``World.nearest_pair``: the broad-phase pruned nearest pair equals brute force.

Oracle: ``collisionkit.distance`` of every allowed pair of objects (no pruning),
and the numpy brute-force triangle distance (``tests.distance_oracle``) for the
reported value on small meshes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.distance_oracle import brute_distance

import collisionkit as ck
from collisionkit.kernels.broadphase import nearest as kn
from collisionkit.world.nearest import box_bounds, local_sphere, nearest, pair_measure, sphere_bounds


def brute_nearest(world: ck.World, name: str | None = None) -> tuple[float, set[tuple[int, int]]]:
    """Least distance over every allowed pair (filters as colliding_pairs) and the pairs attaining it."""
    names = world.names
    excluded = {tuple(sorted((world.index(a), world.index(b)))) for a, b in world.excluded_pairs()}
    best, arg = math.inf, set()
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if (i, j) in excluded or (name is not None and name not in (names[i], names[j])):
                continue
            sa, sb = world._slot(names[i]), world._slot(names[j])
            if (world._group[sa] & world._mask[sb]) == 0 or (world._group[sb] & world._mask[sa]) == 0:
                continue
            d = float(ck.distance(world.shape(names[i]), world.shape(names[j]), world.pose(names[i]), world.pose(names[j])).distance)
            if d < best:
                best, arg = d, {(i, j)}
            elif d == best:
                arg.add((i, j))
    return best, arg


def scene(n: int, seed: int, spread: float) -> ck.World:
    rng = np.random.default_rng(seed)
    shapes = [ck.primitives.box_mesh([0.6, 0.3, 0.4]), ck.primitives.uv_sphere_mesh(0.3, 6, 10), ck.primitives.box_mesh([0.2, 0.9, 0.2])]
    w = ck.World()
    poses = ck.random_poses(n, radius=spread, seed=seed)
    for k in range(n):
        w.add(f"o{k}", shapes[int(rng.integers(3))], poses[k])
    return w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_pair_equals_brute_force(seed):
    w = scene(24, seed, spread=6.0)
    p = w.nearest_pair()
    best, arg = brute_nearest(w)
    assert p.distance == best
    assert (p.object_a, p.object_b) in arg
    assert p.names == (w.names[p.object_a], w.names[p.object_b])
    i, j = (p.object_a, p.object_b)
    a, b = w.shape(w.names[i]), w.shape(w.names[j])
    # the points are on the reported faces' objects: their distance is the reported one
    assert np.linalg.norm(p.point_a - p.point_b) == pytest.approx(p.distance, rel=1e-12, abs=1e-15)
    ref, _, _ = brute_distance(a, b, w.pose(w.names[i]), w.pose(w.names[j]))
    assert p.distance == pytest.approx(ref, rel=1e-12, abs=1e-15)
    # the box bounds pruned most pairs (the seed pair is measured first, and counted once)
    assert 1 <= p.measured <= p.candidates < 24 * 23 // 2


def test_nearest_pair_of_one_object_and_filters():
    w = scene(16, 5, spread=5.0)
    for name in ("o0", "o7", "o15"):
        p = w.nearest_pair(name)
        best, arg = brute_nearest(w, name)
        assert p.distance == best and (p.object_a, p.object_b) in arg
        assert name in p.names and p.object_a < p.object_b
        # point_a belongs to object index[0]: swapping the arguments keeps it there
        ref = ck.distance(w.shape(p.names[0]), w.shape(p.names[1]), w.pose(p.names[0]), w.pose(p.names[1]), upper_bound=math.inf)
        assert float(ref.distance) == p.distance
    first = w.nearest_pair()
    w.exclude(*first.names)
    second = w.nearest_pair()
    assert (second.object_a, second.object_b) != (first.object_a, first.object_b)
    assert second.distance == brute_nearest(w)[0] >= first.distance
    w.set_filter(first.names[0], group=2, mask=2)  # now meets nothing
    assert w.nearest_pair().distance == brute_nearest(w)[0]
    assert w.nearest_pair(first.names[0]).distance == math.inf


def test_nearest_pair_intersecting_is_zero_and_upper_bound():
    box = ck.primitives.box_mesh([1, 1, 1])
    w = ck.World()
    w.add("a", box)
    w.add("b", box, ck.translation([3.0, 0, 0]))
    w.add("c", box, ck.translation([4.25, 0, 0]))
    p = w.nearest_pair()
    assert (p.names, p.distance) == (("b", "c"), 0.25)
    assert p.point_a.tolist() == [3.5, p.point_a[1], p.point_a[2]] and p.point_b[0] == 3.75
    assert w.nearest_pair(upper_bound=0.25).distance == math.inf
    assert w.nearest_pair("a").names == ("a", "b") and w.nearest_pair("a").distance == 2.0
    w.set_pose("a", ck.translation([3.5, 0.5, 0.0]))  # touches b along an edge: exactly 0
    assert w.nearest_pair().distance == 0.0
    with pytest.raises(ValueError, match="upper_bound"):
        w.nearest_pair(upper_bound=0.0)
    with pytest.raises(KeyError):
        w.nearest_pair("zz")


def test_nearest_pair_empty_and_single():
    w = ck.World()
    p = w.nearest_pair()
    assert p.distance == math.inf and p.names is None and (p.object_a, p.object_b) == (-1, -1) and p.measured == 0
    w.add("only", ck.primitives.box_mesh([1, 1, 1]))
    assert w.nearest_pair().distance == math.inf
    assert w.nearest_pair("only").names is None


def test_box_bounds_bracket_point_distances():
    rng = np.random.default_rng(0)
    lo_a = rng.uniform(-2, 2, (400, 3))
    hi_a = lo_a + rng.uniform(0, 1, (400, 3))
    lo_b = rng.uniform(-2, 2, (400, 3))
    hi_b = lo_b + rng.uniform(0, 1, (400, 3))
    lower, upper = box_bounds(lo_a, hi_a, lo_b, hi_b)
    # any two points of the boxes are at least `lower` apart; some pair of points is at most `upper`
    pa = lo_a[:, None] + rng.uniform(0, 1, (400, 64, 3)) * (hi_a - lo_a)[:, None]
    pb = lo_b[:, None] + rng.uniform(0, 1, (400, 64, 3)) * (hi_b - lo_b)[:, None]
    d = np.linalg.norm(pa[:, :, None] - pb[:, None], axis=3)
    assert np.all(d.min(axis=(1, 2)) >= lower)
    assert np.all(d.max(axis=(1, 2)) <= upper)


def test_sphere_bounds_bracket_point_distances():
    rng = np.random.default_rng(1)
    ca, cb = rng.uniform(-3, 3, (300, 3)), rng.uniform(-3, 3, (300, 3))
    ra, rb = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300)
    lower, upper = sphere_bounds(ca, ra, cb, rb)

    def inside(c, r):  # points in each ball
        u = rng.normal(size=(300, 64, 3))
        u /= np.linalg.norm(u, axis=2, keepdims=True)
        return c[:, None] + u * (r[:, None, None] * rng.uniform(0, 1, (300, 64, 1)) ** (1 / 3))

    d = np.linalg.norm(inside(ca, ra)[:, :, None] - inside(cb, rb)[:, None], axis=3)
    assert np.all(d.min(axis=(1, 2)) >= lower) and np.all(d.max(axis=(1, 2)) <= upper)


def test_local_sphere_holds_every_vertex():
    for mesh in (ck.primitives.box_mesh([0.6, 0.3, 0.4]), ck.primitives.torus_mesh(1.0, 0.2), ck.primitives.uv_sphere_mesh(0.3, 6, 10)):
        s = local_sphere(mesh, np.asarray(mesh.bounds))
        assert np.all(np.linalg.norm(mesh.vertices - s[:3], axis=1) <= s[3])
        assert s[3] <= np.linalg.norm(mesh.bounds[1] - mesh.bounds[0]) / 2 * (1 + 1e-9)  # never looser than the box
    ball = ck.Sphere(0.5)  # a smooth shape has no vertices: its box's half diagonal
    assert local_sphere(ball, np.asarray(ball.bounds))[3] == pytest.approx(np.sqrt(3) / 2)


def test_nearest_pair_with_convex_shapes():
    w = ck.World()
    w.add("ball", ck.Sphere(0.5))
    w.add("box", ck.primitives.box_mesh([1, 1, 1]), ck.translation([2.0, 0.2, 0.0]))
    w.add("capsule", ck.Capsule(0.2, 1.0), ck.translation([-1.5, 0.0, 0.3]))
    w.add("far", ck.Sphere(0.5), ck.translation([0.0, 9.0, 0.0]))
    p = w.nearest_pair()
    best, arg = brute_nearest(w)
    assert p.distance == pytest.approx(best, rel=1e-12) and (p.object_a, p.object_b) in arg
    assert w.nearest_pair("far").distance == pytest.approx(brute_nearest(w, "far")[0], rel=1e-12)


# -- the tree search (kernels/broadphase/nearest.py) against brute force and the block scan --


def block_nearest(w: ck.World, upper_bound: float = math.inf):
    """The all-pairs block scan (``nearest(same=True)``), the search World.nearest_pair used
    before the tree: the reference for 'the same answer as before'."""
    order = w._order
    lo, hi = w._lo[order], w._hi[order]
    shapes = [w._shapes[s] for s in order.tolist()]
    cen, rad = w._spheres()
    measure = pair_measure(shapes, w._poses[order], shapes, w._poses[order])
    return nearest(lo, hi, lo, hi, measure, same=True, allowed=w._allowed, upper_bound=upper_bound,
                   spheres_a=(cen, rad), spheres_b=(cen, rad))  # fmt: skip


def assert_brute(w: ck.World, upper_bound: float = math.inf) -> ck.World:
    p = w.nearest_pair(upper_bound=upper_bound)
    best, arg = brute_nearest(w)
    if not best < upper_bound:
        best, arg = math.inf, set()
    assert p.distance == best
    old = block_nearest(w, upper_bound)
    assert old[0] == p.distance  # the block scan's answer
    if math.isinf(best):
        assert (p.object_a, p.object_b) == (-1, -1) and p.names is None
    else:
        assert (p.object_a, p.object_b) in arg and (old[1], old[2]) in arg
        assert p.measured <= p.candidates + 1
    if best == 0.0:  # touching: both report the first touching pair in (i, j) order
        assert (p.object_a, p.object_b) == (old[1], old[2])
    return w


def world_of(shapes, poses) -> ck.World:
    w = ck.World()
    for k, (shape, pose) in enumerate(zip(shapes, poses, strict=True)):
        w.add(f"o{k}", shape, pose)
    return w


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("offset", [0.0, 1e7])
def test_nearest_pair_scaled_and_shifted_equals_brute_force(scale, offset):
    """Tiny, unit and huge scenes far from the origin: the bounds keep their side."""
    rng = np.random.default_rng(int(np.log10(scale) + 20 + offset % 7))
    shapes = [ck.primitives.box_mesh(np.array([0.6, 0.3, 0.4]) * scale), ck.primitives.uv_sphere_mesh(0.3 * scale, 6, 10)]
    poses = ck.random_poses(30, radius=4.0, seed=int(rng.integers(1000)))
    poses[:, :3, 3] = poses[:, :3, 3] * scale + offset
    assert_brute(world_of([shapes[k % 2] for k in range(30)], poses))


def test_nearest_pair_touching_overlapping_nested():
    box = ck.primitives.box_mesh([1, 1, 1])
    small = ck.primitives.box_mesh([0.2, 0.2, 0.2])
    # a row of face-touching boxes, a far pair, a box nested in another
    poses = [ck.translation([x, 0, 0]) for x in (0.0, 1.0, 2.0)] + [ck.translation([10, 0, 0]), ck.translation([12.5, 0, 0]),
                                                                   ck.translation([20, 0, 0]), ck.translation([20.1, 0, 0])]  # fmt: skip
    shapes = [box, box, box, box, box, box, small]
    w = assert_brute(world_of(shapes, poses))
    # without the touching row: the nested pair or the far pair decides
    for name in ("o0", "o1", "o2"):
        w.remove(name)
    assert_brute(w)
    # dense: most boxes overlap
    rng = np.random.default_rng(3)
    poses = ck.random_poses(40, radius=1.5, seed=int(rng.integers(1000)))
    assert_brute(world_of([box] * 40, poses))
    # identical boxes at one spot (every pair's bounds are equal)
    assert_brute(world_of([small] * 12, [np.eye(4)] * 12))


def test_nearest_pair_mixed_sizes_and_convex_shapes():
    """One huge object among small ones (its box overlaps many), convex shapes."""
    rng = np.random.default_rng(11)
    shapes = [ck.primitives.box_mesh([40, 0.5, 40])] + [ck.primitives.uv_sphere_mesh(0.2, 6, 10), ck.Sphere(0.3), ck.Capsule(0.1, 0.5)] * 10
    poses = ck.random_poses(len(shapes), radius=15.0, seed=int(rng.integers(1000)))
    poses[0] = ck.translation([0, -3.0, 0])
    assert_brute(world_of(shapes, poses))


@pytest.mark.parametrize("seed", [0, 1])
def test_nearest_pair_filters_and_upper_bound_equal_brute_force(seed):
    w = scene(30, 20 + seed, spread=6.0)
    first = w.nearest_pair()
    # exclude the nearest pair and then each of its objects' next nearest partners
    w.exclude(*first.names)
    assert_brute(w)
    for _ in range(3):
        nxt = w.nearest_pair()
        w.exclude(*nxt.names)
    assert_brute(w)
    # groups: half the objects meet only the other half (each one's nearest neighbour is often its own half)
    rng = np.random.default_rng(seed)
    for k, name in enumerate(w.names):
        g = 1 << int(rng.integers(2))
        w.set_filter(name, group=g, mask=3 - g if k % 5 else 3)
    assert_brute(w)
    d = w.nearest_pair().distance
    for ub in (d * 0.5, d, np.nextafter(d, math.inf), d * 2.0, math.inf):
        assert_brute(w, upper_bound=float(ub))
    for name in w.names[:5]:  # (measured from ``name``'s side: the same value up to rounding)
        p = w.nearest_pair(name)
        assert p.distance == pytest.approx(brute_nearest(w, name)[0], rel=1e-12)
    # every pair filtered out
    for name in w.names:
        w.set_filter(name, group=1, mask=2)
    assert w.nearest_pair().distance == math.inf and w.nearest_pair().measured == 0


def test_nearest_pair_two_objects_and_empty_after_removal():
    w = world_of([ck.primitives.box_mesh([1, 1, 1])] * 2, [np.eye(4), ck.translation([3.0, 0.0, 0.0])])
    p = w.nearest_pair()
    assert ((p.object_a, p.object_b), p.distance) == ((0, 1), 2.0)
    w.remove("o0")
    p = w.nearest_pair()
    assert p.distance == math.inf and (p.object_a, p.object_b) == (-1, -1)
    w.remove("o1")
    assert w.nearest_pair().distance == math.inf


def candidates_by_brute_force(lo, hi, c, r, group, mask, excluded, upper_bound):
    n = lo.shape[0]
    ii, jj = np.triu_indices(n, 1)
    ok = ((group[ii] & mask[jj]) != 0) & ((group[jj] & mask[ii]) != 0) & ~np.isin((ii << 32) + jj, excluded)
    ii, jj = ii[ok], jj[ok]
    low, up = box_bounds(lo[ii], hi[ii], lo[jj], hi[jj])
    low_s, up_s = sphere_bounds(c[ii], r[ii], c[jj], r[jj])
    low, up = np.maximum(low, low_s), np.minimum(up, up_s)
    cap = min(upper_bound, float(up.min())) if up.size else upper_bound
    keep = (low < upper_bound) & (low <= cap)
    return set(zip(ii[keep].tolist(), jj[keep].tolist(), strict=True)), cap, low[keep], up


@pytest.mark.parametrize("seed", range(6))
def test_tree_candidates_equal_brute_force_candidates(seed):
    """The kernel's candidate set is every allowed pair with lower bound <= the least upper
    bound (and < upper_bound): the block scan's set, on boxes of every kind of layout."""
    rng = np.random.default_rng(seed)
    most = 0
    for trial in range(12):
        n = int(rng.integers(2, 200))
        scale = 10.0 ** rng.uniform(-120, 120) if trial % 3 == 0 else 1.0
        lo = rng.uniform(0, 10, (n, 3)) * scale
        hi = lo + rng.uniform(0, 2, (n, 3)) * scale * (rng.random((n, 1)) < 0.9)  # some points
        if trial % 4 == 0:
            lo[: n // 2], hi[: n // 2] = lo[0], hi[0]  # many identical boxes
        # spheres that hold the boxes (both bound the same contents, as in a World)
        shift = rng.uniform(-0.1, 0.1, (n, 3)) * scale
        c = (lo + hi) / 2 + shift
        r = (np.linalg.norm(hi - lo, axis=1) / 2 + np.linalg.norm(shift, axis=1)) * (1 + 1e-9) * rng.uniform(1.0, 1.2, n)
        group, mask = rng.integers(1, 4, n), rng.integers(1, 4, n)
        excluded = np.unique([(min(a, b) << 32) + max(a, b) for a, b in rng.integers(0, n, (n, 2)) if a != b]).astype(np.int64)
        ub = math.inf if trial % 4 else float(rng.uniform(0, 3)) * scale
        tree = kn.nearest_tree(lo, hi, c, r, np.arange(n), group, mask)
        ii, jj, low, cap, _ = kn.nearest_candidates(tree, group, mask, excluded, ub, math.inf, 0, n)
        ref, ref_cap, ref_low, ups = candidates_by_brute_force(lo, hi, c, r, group, mask, excluded, ub)
        assert cap == pytest.approx(ref_cap, rel=1e-9) or cap == ref_cap
        got = set(zip(ii.tolist(), jj.tolist(), strict=True))
        assert got == ref, (trial, len(got), len(ref))
        most = max(most, len(got))
        assert np.all(ii < jj)
        # a threshold (a distance some allowed pair reaches) keeps exactly the pairs below it
        if ups.size and np.isfinite(ups.min()):
            t = float(np.median(ups))
            ii2, jj2, low2, cap2, _ = kn.nearest_candidates(tree, group, mask, excluded, ub, t, 0, n)
            assert cap2 <= min(t, ub)
            assert set(zip(ii2.tolist(), jj2.tolist(), strict=True)) == {p for p, lw in zip(sorted(got), low[np.lexsort((jj, ii))], strict=True) if lw <= cap2}
        i0, j0, _, u0 = kn.seed_pair(tree, group, mask, excluded)
        if i0 >= 0:  # an allowed pair, its upper bound at least the least one
            assert i0 < j0 and u0 >= cap - 1e-9 * abs(cap)
    assert most > 512  # past half the kernel's first 1,024 rows: its candidate buffers grew


def test_nearest_pair_of_20k_separated_boxes_is_not_quadratic():
    """Regression (issue 31): 8,000 boxes took 9.8 s in the all-pairs scan. The tree visits
    O(n log n) nodes and keeps few candidates; the answer is the planted pair."""
    n, spacing = 20000, 3.0
    rng = np.random.default_rng(5)
    side = int(np.ceil(n ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n] * spacing
    pos = grid + rng.uniform(-0.5, 0.5, (n, 3))  # gaps between neighbours in [1, 3]
    a, b = 7123, 7124  # neighbours along z: plant a gap of 0.25
    pos[b] = pos[a] + [0.0, 0.0, 1.25]
    lo, hi = pos - 0.5, pos + 0.5
    c, r = pos, np.full(n, math.sqrt(3) / 2)
    tree = kn.nearest_tree(lo, hi, c, r, np.arange(n), np.ones(n, np.int64), np.full(n, -1, np.int64))
    i0, j0, _, _ = kn.seed_pair(tree, np.ones(n, np.int64), np.full(n, -1, np.int64), np.empty(0, np.int64))
    ii, jj, _, _, visits = kn.nearest_candidates(tree, np.ones(n, np.int64), np.full(n, -1, np.int64), np.empty(0, np.int64), math.inf, 0.25, 0, n)
    assert (a, b) in set(zip(ii.tolist(), jj.tolist(), strict=True))
    assert ii.shape[0] <= 10 and visits <= 80 * n
    w = ck.World()
    box = ck.primitives.box_mesh([1, 1, 1])
    for k in range(n):
        w.add(f"b{k}", box, ck.translation(pos[k]))
    p = w.nearest_pair()
    assert (p.object_a, p.object_b) == (a, b) and p.distance == pytest.approx(0.25, abs=1e-12)
    assert p.candidates <= n and p.measured <= 8


def test_trimesh_drop_in_min_distance_internal_uses_the_tree():
    trimesh = pytest.importorskip("trimesh")
    from collisionkit import trimesh as ckt

    w = scene(20, 9, spread=7.0)
    m = ckt.CollisionManager()
    for name in w.names:
        s = w.shape(name)
        m.add_object(name, trimesh.Trimesh(np.asarray(s.vertices), np.asarray(s.faces)), w.pose(name))
    best, arg = brute_nearest(w)
    assert best > 0.0  # separated: the drop-in answers by World.nearest_pair
    d, names = m.min_distance_internal(return_names=True)
    assert d == pytest.approx(best, rel=1e-6)  # the drop-in's poses are re-orthonormalised
    assert tuple(sorted(w.index(x) for x in names)) in arg


def test_nearest_pair_of_a_pile_is_not_quadratic():
    """Regression: n overlapping objects have ~n^2 / 2 pairs of lower bound 0; once a seed
    pair touches, they are made a few objects at a time, and the answer is the block scan's
    (the first touching pair in (i, j) order)."""
    small = ck.primitives.box_mesh([0.5, 0.3, 0.2])
    poses = ck.random_poses(40, radius=0.1, seed=4)
    w = assert_brute(world_of([small] * 40, poses))
    assert w.nearest_pair().distance == 0.0
    # the first objects apart from the rest: the first touching pair is further down
    for k in range(5):
        w.set_pose(f"o{k}", ck.translation([10.0 * (k + 1), 0.0, 0.0]))
    assert_brute(w)
    n = 3000
    big = world_of([small] * n, ck.random_poses(n, radius=0.1, seed=5))
    p = big.nearest_pair()
    assert p.distance == 0.0 and (p.object_a, p.object_b) == (0, 1)
    assert p.candidates < 2 * n  # not the ~4.5M pairs of lower bound 0


def brute_between(shapes_a, poses_a, shapes_b, poses_b) -> tuple[float, set[tuple[int, int]]]:
    best, arg = math.inf, set()
    for i in range(len(shapes_a)):
        for j in range(len(shapes_b)):
            d = float(ck.distance(shapes_a[i], shapes_b[j], poses_a[i], poses_b[j]).distance)
            if d < best:
                best, arg = d, {(i, j)}
            elif d == best:
                arg.add((i, j))
    return best, arg


def between(shapes_a, poses_a, shapes_b, poses_b, upper_bound=math.inf):
    def sets(shapes, poses):
        b = np.array([_box(s, T) for s, T in zip(shapes, poses, strict=True)])
        sph = np.array([local_sphere(s, np.asarray(s.bounds)) for s in shapes])
        cen = np.einsum("nij,nj->ni", poses[:, :3, :3], sph[:, :3]) + poses[:, :3, 3]
        return b[:, 0], b[:, 1], (cen, sph[:, 3])

    lo_a, hi_a, sa = sets(shapes_a, poses_a)
    lo_b, hi_b, sb = sets(shapes_b, poses_b)
    return nearest(lo_a, hi_a, lo_b, hi_b, pair_measure(shapes_a, poses_a, shapes_b, poses_b), same=False,
                   upper_bound=upper_bound, spheres_a=sa, spheres_b=sb)  # fmt: skip


def _box(shape, T):
    """World box of a shape's vertices (meshes) under T, padded a little outward."""
    v = np.asarray(shape.vertices) @ T[:3, :3].T + T[:3, 3]
    pad = 1e-9 * (1.0 + np.abs(v).max())
    return np.stack([v.min(axis=0) - pad, v.max(axis=0) + pad])


@pytest.mark.parametrize("layout", ["interleaved", "apart", "overlapping"])
def test_nearest_between_two_sets_by_tree_equals_block_scan_and_brute_force(layout, monkeypatch):
    """``nearest(same=False)`` without filters (the drop-in's ``min_distance_other``) joins
    both sets into one tree from TREE_MIN_PAIRS pairs on: the block scan's answer."""
    import collisionkit.world.nearest as wn

    shapes = [ck.primitives.box_mesh([0.6, 0.3, 0.4]), ck.primitives.uv_sphere_mesh(0.3, 6, 10)]
    pa = ck.random_poses(24, radius=6.0 if layout != "overlapping" else 1.0, seed=1)
    pb = ck.random_poses(30, radius=6.0 if layout != "overlapping" else 1.0, seed=2)
    if layout == "apart":
        pb[:, 0, 3] += 20.0  # no leaf of the joined tree holds a pair across: no seed pair
    sa, sb = [shapes[k % 2] for k in range(24)], [shapes[(k + 1) % 2] for k in range(30)]
    monkeypatch.setattr(wn, "TREE_MIN_PAIRS", 1 << 62)
    old = between(sa, pa, sb, pb)
    monkeypatch.setattr(wn, "TREE_MIN_PAIRS", 0)
    new = between(sa, pa, sb, pb)
    best, arg = brute_between(sa, pa, sb, pb)
    assert new[0] == old[0] == best
    assert (new[1], new[2]) in arg and (old[1], old[2]) in arg
    if best == 0.0:
        assert (new[1], new[2]) == (old[1], old[2])
    assert new[7] <= new[8] + 1
    for ub in (best * 0.5, best * 2.0):
        if ub > 0:
            assert between(sa, pa, sb, pb, upper_bound=ub)[0] == (best if best < ub else math.inf)


def test_trimesh_drop_in_min_distance_other_by_tree(monkeypatch):
    trimesh = pytest.importorskip("trimesh")
    import collisionkit.world.nearest as wn
    from collisionkit import trimesh as ckt

    box = trimesh.creation.box([0.5, 0.5, 0.5])
    rng = np.random.default_rng(2)
    side = 18  # 324 objects a manager: 105k pairs, above TREE_MIN_PAIRS
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side), indexing="ij"), -1).reshape(-1, 2) * 1.5
    a, b = ckt.CollisionManager(), ckt.CollisionManager()
    for k, (x, y) in enumerate(grid):
        a.add_object(f"a{k}", box, ck.translation([x, y, 0.0]) @ ck.random_poses(1, 0.0, seed=k)[0])
        b.add_object(f"b{k}", box, ck.translation([x + rng.uniform(-0.2, 0.2), y, 1.2 + rng.uniform(0, 0.5)]))
    assert len(grid) ** 2 >= wn.TREE_MIN_PAIRS
    d, names = a.min_distance_other(b, return_names=True)
    monkeypatch.setattr(wn, "TREE_MIN_PAIRS", 1 << 62)
    d_old, names_old = a.min_distance_other(b, return_names=True)
    assert d == d_old and d > 0.0
    assert names == names_old
