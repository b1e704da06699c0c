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
from collisionkit.world.nearest import box_bounds, local_sphere, sphere_bounds


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
    assert p.index in arg
    assert p.names == (w.names[p.index[0]], w.names[p.index[1]])
    i, j = p.index
    a, b = w.shape(w.names[i]), w.shape(w.names[j])
    # the points are on the reported faces' objects: their distance is the reported one
    assert np.linalg.norm(p.point_a - p.point_b) == pytest.approx(p.distance, rel=1e-12, abs=1e-15)
    ref, _, _ = brute_distance(a, b, w.pose(w.names[i]), w.pose(w.names[j]))
    assert p.distance == pytest.approx(ref, rel=1e-12, abs=1e-15)
    # the box bounds pruned most pairs
    assert 1 <= p.measured <= p.candidates < 24 * 23 // 2


def test_nearest_pair_of_one_object_and_filters():
    w = scene(16, 5, spread=5.0)
    for name in ("o0", "o7", "o15"):
        p = w.nearest_pair(name)
        best, arg = brute_nearest(w, name)
        assert p.distance == best and p.index in arg
        assert name in p.names and p.index[0] < p.index[1]
        # point_a belongs to object index[0]: swapping the arguments keeps it there
        ref = ck.distance(w.shape(p.names[0]), w.shape(p.names[1]), w.pose(p.names[0]), w.pose(p.names[1]), upper_bound=math.inf)
        assert float(ref.distance) == p.distance
    first = w.nearest_pair()
    w.exclude(*first.names)
    second = w.nearest_pair()
    assert second.index != first.index
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
    assert p.distance == math.inf and p.names is None and p.index == (-1, -1) and p.measured == 0
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
    assert p.distance == pytest.approx(best, rel=1e-12) and p.index in arg
    assert w.nearest_pair("far").distance == pytest.approx(brute_nearest(w, "far")[0], rel=1e-12)
