"""Every broad phase returns exactly the brute-force pair set, frame after frame.

Oracle: the (N, N) closed-interval overlap of the World's own boxes in numpy,
independent of every kernel; the kernels' brute force is checked against it
too. Scenes: uniform, clustered (many intervals piled in one place, where
sweep and prune degrades), mixed sizes, objects added and removed mid-run.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.world import BROADPHASES

ALL = sorted(BROADPHASES)


class BoxShape:
    """The least a World object needs: a (2, 3) local box."""

    def __init__(self, half):
        h = np.asarray(half, dtype=np.float64)
        self.bounds = np.stack([-h, h])


def oracle(world: ck.World) -> set[tuple[int, int]]:
    b = world.boxes()
    lo, hi = b[:, 0], b[:, 1]
    ov = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(ov, 1))
    return set(zip(i.tolist(), j.tolist(), strict=True))


def as_set(pairs) -> set[tuple[int, int]]:
    idx = pairs.rows
    assert idx.dtype == np.int64 and idx.ndim == 2 and idx.shape[1] == 2
    assert np.all(idx[:, 0] < idx[:, 1])
    keys = idx[:, 0] * 10**6 + idx[:, 1]
    assert np.all(np.diff(keys) > 0), "rows must be sorted and unique"
    return set(map(tuple, idx.tolist()))


def random_rotations(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    R = np.empty((n, 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - z * w)
    R[:, 0, 2] = 2 * (x * z + y * w)
    R[:, 1, 0] = 2 * (x * y + z * w)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - x * w)
    R[:, 2, 0] = 2 * (x * z - y * w)
    R[:, 2, 1] = 2 * (y * z + x * w)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def poses_at(centres, R):
    T = np.zeros((len(centres), 4, 4))
    T[:, :3, :3] = R
    T[:, :3, 3] = centres
    T[:, 3, 3] = 1.0
    return T


def make_scene(kind, n, rng):
    """Half extents and centres: 'uniform', 'clustered' (most objects piled in a
    small region), 'mixed' (sizes over two decades), 'line' (all on one axis)."""
    if kind == "mixed":
        half = np.exp(rng.uniform(np.log(0.05), np.log(5.0), size=(n, 1))) * rng.uniform(0.3, 1.0, size=(n, 3))
    else:
        half = rng.uniform(0.2, 1.0, size=(n, 3))
    side = 2.0 * n ** (1 / 3) * 1.5
    if kind == "clustered":
        centres = rng.normal(scale=1.0, size=(n, 3))
        centres[: n // 5] = rng.uniform(-side, side, size=(n // 5, 3))
    elif kind == "line":
        centres = np.zeros((n, 3))
        centres[:, 0] = rng.uniform(-side, side, size=n)
        centres[:, 1:] = rng.normal(scale=0.3, size=(n, 2))
    else:
        centres = rng.uniform(-side, side, size=(n, 3))
    return half, centres, side


def run_frames(broadphase, kind, n, frames, seed, add_remove=True, step=0.1, **options):
    """Advance a scene, adding/removing objects mid-run; check every frame."""
    rng = np.random.default_rng(seed)
    half, centres, side = make_scene(kind, n, rng)
    R = random_rotations(rng, n)
    worlds = {"x": ck.World(broadphase, **options), "ref": ck.World("brute")}
    names = [f"o{i}" for i in range(n)]
    for w in worlds.values():
        for i in range(n):
            w.add(names[i], BoxShape(half[i]), poses_at(centres[i : i + 1], R[i : i + 1])[0])
    live = list(range(n))
    next_id = n
    for f in range(frames):
        centres = centres + rng.normal(scale=step, size=centres.shape) * (half.max(axis=1, keepdims=True) + 0.1)
        if f % 7 == 3:  # big jumps now and then: reinsertions, relinks, long swaps
            jump = rng.choice(n, size=max(1, n // 10), replace=False)
            centres[jump] = rng.uniform(-side, side, size=(jump.size, 3))
            R[jump] = random_rotations(rng, jump.size)
        T = poses_at(centres, R)
        for w in worlds.values():
            w.set_poses(T[live])
        if add_remove and f % 5 == 2:
            gone = rng.choice(len(live), size=max(1, len(live) // 8), replace=False)
            for g in sorted(gone.tolist(), reverse=True):
                for w in worlds.values():
                    w.remove(names[live[g]])
                del live[g]
            for _ in range(len(gone)):
                i = int(rng.integers(T.shape[0]))  # reuse the geometry and pose of some object
                name = f"new{next_id}"
                next_id += 1
                for w in worlds.values():
                    w.add(name, BoxShape(half[i]), T[i])
                names.append(name)
                half = np.vstack([half, half[i : i + 1]])
                centres = np.vstack([centres, centres[i : i + 1]])
                R = np.concatenate([R, R[i : i + 1]])
                live.append(len(names) - 1)
                n += 1
        got = as_set(worlds["x"].candidate_pairs())
        ref = as_set(worlds["ref"].candidate_pairs())
        want = oracle(worlds["x"])
        assert ref == want, f"brute differs from the numpy oracle at frame {f}"
        assert got == want, f"{broadphase} differs at frame {f}: missing {sorted(want - got)[:5]}, extra {sorted(got - want)[:5]}"
    return worlds["x"]


@pytest.mark.parametrize("broadphase", ALL)
@pytest.mark.parametrize("kind", ["uniform", "clustered", "mixed", "line"])
def test_equals_brute_over_frames(broadphase, kind):
    w = run_frames(broadphase, kind, n=120, frames=25, seed=zlib.crc32(f"{broadphase}{kind}".encode()) % 1000)
    if broadphase == "tree":
        w._bp.validate(w._lo, w._hi, w._order)


@pytest.mark.slow
@pytest.mark.parametrize("broadphase", ALL)
@pytest.mark.parametrize("kind", ["uniform", "clustered", "mixed"])
def test_equals_brute_long(broadphase, kind):
    run_frames(broadphase, kind, n=600, frames=60, seed=7)


@pytest.mark.parametrize("broadphase", ALL)
def test_big_steps_without_coherence(broadphase):
    """Every object jumps anywhere each frame (the worst case of sap and tree)."""
    run_frames(broadphase, "uniform", n=80, frames=8, seed=3, step=30.0)


@pytest.mark.parametrize("broadphase", ALL)
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_worlds(broadphase, n):
    w = ck.World(broadphase)
    for i in range(n):
        w.add(f"o{i}", BoxShape([1, 1, 1]), ck.translation([0.5 * i, 0, 0]))
    assert len(w.candidate_pairs()) == (1 if n == 2 else 0)
    w.set_poses(np.repeat(ck.translation([0, 0, 0])[None], n, axis=0))
    assert len(w.candidate_pairs()) == (1 if n == 2 else 0)


@pytest.mark.parametrize("broadphase", ALL)
def test_identical_touching_and_degenerate_boxes(broadphase):
    """Stacks of identical boxes, boxes touching face to face (closed intervals,
    after the tiny pose padding), flat and point boxes."""
    w = ck.World(broadphase)
    ref = ck.World("brute")
    shapes = [BoxShape([1, 1, 1])] * 6 + [BoxShape([1, 1, 0]), BoxShape([0, 0, 0]), BoxShape([0, 0, 0])]
    pos = [[0, 0, 0]] * 3 + [[2, 0, 0], [4, 0, 0], [-2, 2, 2], [0, 0, 1], [1, 1, 1], [9, 9, 9]]
    for k, (s, p) in enumerate(zip(shapes, pos, strict=True)):
        for x in (w, ref):
            x.add(f"o{k}", s, ck.translation(p))
    assert as_set(w.candidate_pairs()) == as_set(ref.candidate_pairs()) == oracle(w)
    assert (0, 3) in oracle(w) and (3, 4) in oracle(w)  # touching faces
    assert (5, 0) not in oracle(w)


@pytest.mark.parametrize("broadphase", ALL)
@pytest.mark.parametrize("scale", [1e-9, 1e12])
def test_tiny_and_huge_coordinates(broadphase, scale):
    rng = np.random.default_rng(5)
    w = ck.World(broadphase)
    for i in range(60):
        c = (rng.uniform(-5, 5, size=3) + (1e3 if scale > 1 else 0)) * scale
        w.add(f"o{i}", BoxShape(rng.uniform(0.2, 1.5, size=3) * scale), ck.translation(c))
    assert as_set(w.candidate_pairs()) == oracle(w)
    w.set_poses(np.stack([ck.translation(rng.uniform(-5, 5, size=3) * scale) for _ in range(60)]))
    assert as_set(w.candidate_pairs()) == oracle(w)


@pytest.mark.parametrize("broadphase", ["grid", "hash"])
@pytest.mark.parametrize("cell", [0.05, 1.0, 50.0])
def test_given_cell_sizes_and_oversize_objects(broadphase, cell):
    rng = np.random.default_rng(11)
    w = ck.World(broadphase, cell_size=cell, max_per_object=8)
    for i in range(80):
        w.add(f"o{i}", BoxShape(rng.uniform(0.1, 3.0, size=3)), ck.translation(rng.uniform(-8, 8, size=3)))
    assert as_set(w.candidate_pairs()) == oracle(w)


def test_octree_rebuilds_when_its_table_fills():
    w = run_frames("octree", "mixed", n=50, frames=30, seed=2, step=3.0)
    assert w.broadphase_stats()["nodes"] >= 1


def test_broadphase_stats_report_the_work():
    w = run_frames("sap", "uniform", n=100, frames=3, seed=1, add_remove=False)
    st = w.broadphase_stats()
    assert st["swaps"] > 0 and st["axis"] in "xyz"
    # exact count: moving one box past another on x only is 4 endpoint swaps (each of its two
    # endpoints passes each of the other's two), none on y and z; the sweep axis then has
    # the fewest 1-D overlaps (x: none)
    w = ck.World("sap")
    w.add("a", BoxShape([0.5, 0.5, 0.5]), ck.translation([0.0, 0.0, 0.0]))
    w.add("b", BoxShape([0.5, 0.5, 0.5]), ck.translation([3.0, 0.1, 0.2]))  # no ties on y, z
    assert len(w.candidate_pairs()) == 0
    w.set_pose("a", ck.translation([6.0, 0.0, 0.0]))
    assert len(w.candidate_pairs()) == 0
    st = w.broadphase_stats()
    assert (st["swaps"], st["axis"], st["overlaps_1d"]) == (4, "x", 0)
    w = run_frames("tree", "uniform", n=100, frames=3, seed=1, add_remove=False)
    assert w.broadphase_stats()["height"] >= 7  # 100 leaves need depth >= log2(100)


def test_unknown_broadphase_and_options():
    with pytest.raises(ValueError, match="unknown broadphase"):
        ck.World("kd")
    with pytest.raises(ck.UnsupportedOptionError, match="does not take cell_size"):
        ck.World("sap", cell_size=1.0)
    with pytest.raises(ValueError, match="cell_size"):
        ck.World("grid", cell_size=-1.0)
    with pytest.raises(ValueError, match="rel_margin"):
        ck.World("tree", rel_margin=float("nan"))
    with pytest.raises(TypeError, match="margin"):  # renamed: a fraction, not a length
        ck.World("tree", margin=0.2)  # type: ignore[call-arg]


def test_box_pairs_across_grows_past_its_first_buffer():
    """``box_pairs_across`` (the drop-in's pairs across managers) starts with room for 16 pairs
    and doubles: over many overlapping and touching boxes it lists exactly numpy's closed
    overlaps, in order of i then j."""
    from collisionkit.kernels.broadphase.common import box_pairs_across

    rng = np.random.default_rng(11)
    lo_a = rng.uniform(-1.0, 1.0, (40, 3))
    hi_a = lo_a + rng.uniform(0.1, 1.0, (40, 3))
    lo_b = rng.uniform(-1.0, 1.0, (30, 3))
    hi_b = lo_b + rng.uniform(0.1, 1.0, (30, 3))
    lo_b[0] = [hi_a[5, 0], lo_a[5, 1], lo_a[5, 2]]  # touches a's box 5 on its face x = hi
    hi_b[0] = lo_b[0] + 0.3
    overlap = np.all((lo_a[:, None] <= hi_b[None]) & (lo_b[None] <= hi_a[:, None]), axis=2)
    for r0, r1 in ((0, 40), (3, 17)):
        want = np.argwhere(overlap[r0:r1]) + [r0, 0]
        got = box_pairs_across(lo_a, hi_a, lo_b, hi_b, r0, r1)
        assert len(want) > 16
        np.testing.assert_array_equal(got, want)
    assert [5, 0] in box_pairs_across(lo_a, hi_a, lo_b, hi_b, 0, 40).tolist()


def test_tree_pairs_grows_its_stack():
    """``tree_pairs`` sizes its stack from the tree's height and doubles it when a descent
    needs more (a defensive path: a height-sized stack suffices for a tree whose heights are
    right). With the root's height understated to 0 the stack starts at 8 rows, and over 120
    mutually overlapping boxes (every node pair overlaps, so the self-descent pushes three
    pairs per level it goes down) it must grow several times: the pairs still equal the
    correct height's answer and numpy's closed overlaps."""
    from collisionkit.kernels.broadphase import tree as kt
    from collisionkit.world.broadphases import DynamicTree

    rng = np.random.default_rng(5)
    n = 120
    lo = rng.uniform(-0.1, 0.1, (n, 3))
    hi = lo + rng.uniform(0.3, 0.6, (n, 3))  # every box holds (0.1, 0.1, 0.1)...(0.2, 0.2, 0.2)
    slots = np.arange(n, dtype=np.int64)
    bp = DynamicTree()
    bp.update(lo, hi, slots, np.zeros(0, np.int64), slots)
    root = int(bp.st[0])
    assert bp.height[root] >= 6  # so the descent goes > 8 rows deep

    def pairs(height):
        out = np.empty((n * n, 2), np.int64)
        k, _ = kt.tree_pairs(lo, hi, bp.nlo, bp.nhi, bp.c1, bp.c2, height, bp.nslot, bp.st, out)
        return {tuple(sorted(p)) for p in out[:k].tolist()}

    low = bp.height.copy()
    low[root] = 0
    want = {(i, j) for i in range(n) for j in range(i + 1, n)}  # all overlap (see hi above)
    assert np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]))
    assert pairs(bp.height) == want
    assert pairs(low) == want
