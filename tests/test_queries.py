"""Pair queries against the brute-force oracle, the exact rational reference and
each other: contacts, intersects, query_stats on real meshes and exact edge cases."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tests.brute import (
    PARALLEL_BATCH,
    brute_pairs,
    counts_of,
    load_shared_mesh,
    rational_pairs,
    rows_of,
    scene,
    signed_perm,
)

import collisionkit as ck
from collisionkit import Descent

# (mesh a, mesh b, radius factor for ~half colliding, poses); sizes keep brute force fast.
REAL_PAIRS = [
    ("bunny.obj", "duck_vhacd.obj", 0.6, 24),
    ("kuka_iiwa/meshes/link_3.stl", "kuka_iiwa/meshes/link_5.obj", 0.45, 16),
    ("kuka_iiwa/meshes/link_0.obj", "kuka_iiwa/meshes/link_1.stl", 0.5, 12),
    ("franka_panda/meshes/collision/link0.obj", "franka_panda/meshes/collision/hand.obj", 0.6, 32),
    ("franka_panda/meshes/collision/link5.obj", "franka_panda/meshes/collision/link6.obj", 0.6, 32),
    ("kiva_shelf/meshes/pod_lowres.stl", "franka_panda/meshes/collision/link1.obj", 0.4, 12),
    ("duck.obj", "bunny.obj", 0.6, 10),
]


def assert_rows_sorted_unique(c: ck.Contacts) -> None:
    rows = rows_of(c)
    if len(rows) > 1:
        diff = np.diff(rows, axis=0)
        # strictly increasing in (pose, face_a, face_b) order
        first_nonzero = np.array([d[np.flatnonzero(d)[0]] if np.any(d) else 0 for d in diff])
        assert np.all(first_nonzero > 0), "rows are not strictly sorted by (pose, face_a, face_b)"


def assert_matches_brute(a, b, pose_a, pose_b, expected=None, **kw) -> ck.Contacts:
    c = ck.contacts(a, b, pose_a, pose_b, **kw)
    if expected is None:
        expected = brute_pairs(a, b, pose_a, pose_b)
    got = rows_of(c)
    if not np.array_equal(got, expected):
        g, e = set(map(tuple, got)), set(map(tuple, expected))
        raise AssertionError(
            f"contacts differ from brute force ({kw}): {len(g - e)} extra, e.g. {sorted(g - e)[:5]}; "
            f"{len(e - g)} missing, e.g. {sorted(e - g)[:5]}"
        )
    assert np.array_equal(np.atleast_1d(c.counts), counts_of(expected, c.n_poses))
    assert not np.any(c.truncated)
    return c


@pytest.mark.parametrize("name_a,name_b,factor,n", REAL_PAIRS, ids=lambda v: str(v).split("/")[-1])
def test_real_meshes_equal_brute_force(pb_mesh, name_a, name_b, factor, n):
    a, b = pb_mesh(name_a), pb_mesh(name_b)
    pose_a, pose_b = scene(a, b, factor, n)
    expected = brute_pairs(a, b, pose_a, pose_b)
    colliding = counts_of(expected, n) > 0
    assert 0.15 <= colliding.mean() <= 0.85, f"scene is not informative: {colliding.mean():.2f} colliding"
    c = assert_matches_brute(a, b, pose_a, pose_b, expected)
    assert_rows_sorted_unique(c)

    hits = ck.intersects(a, b, pose_a, pose_b)
    assert hits.dtype == np.bool_ and hits.shape == (n,)
    assert np.array_equal(hits, colliding)
    assert np.array_equal(ck.query_stats(a, b, pose_a, pose_b).colliding, colliding)

    first = ck.contacts(a, b, pose_a, pose_b, mode="first")
    assert np.array_equal(first.counts, colliding.astype(np.int64))
    truth = set(map(tuple, expected))
    assert all(tuple(r) in truth for r in rows_of(first)), "mode='first' returned a pair that does not intersect"

    # one by one: the single-pose fast path and one-pose contacts agree with the batch
    for k in range(min(n, 8)):
        single = ck.intersects(a, b, pose_a[k], pose_b[k])
        assert type(single) is bool and single == colliding[k]
        ck_k = ck.contacts(a, b, pose_a[k], pose_b[k])
        assert np.array_equal(ck_k.pairs(0), expected[expected[:, 0] == k, 1:])


def test_env_rob_equal_brute_force(shared_data):
    env, rob = load_shared_mesh("env.obj"), load_shared_mesh("rob.obj")
    n = 40
    rng = np.random.default_rng(7)
    pose_b = ck.random_poses(n, radius=3500.0, center=(0, 0, 1500), seed=3)
    pose_b[:, :3, 3] += rng.normal(scale=10.0, size=(n, 3))
    expected = brute_pairs(env, rob, None, pose_b)
    colliding = counts_of(expected, n) > 0
    assert 0.15 <= colliding.mean() <= 0.85, f"scene is not informative: {colliding.mean():.2f} colliding"
    assert_matches_brute(env, rob, None, pose_b, expected)
    assert_matches_brute(env, rob, np.eye(4), pose_b, expected, threads=1)
    assert np.array_equal(ck.intersects(env, rob, None, pose_b), colliding)
    assert np.array_equal(ck.intersects(env, rob, None, pose_b, threads=1), colliding)
    # swapped roles (each against its own brute force: the two relative poses are not exact inverses)
    swapped = brute_pairs(rob, env, pose_b, None)
    assert_matches_brute(rob, env, pose_b, None, swapped)


OPTION_GRID = [
    ck.BuildOptions(bv=bv, split=split, leaf_size=leaf)
    for bv in ("aabb", "obb")
    for split in ("sah", "median", "mean")
    for leaf in (1, 2, 4, 7)
]


@pytest.mark.parametrize("which", ["bunny-duck", "panda", "env-rob"])
def test_identical_rows_for_every_tree_thread_and_strategy(pb_mesh, which):
    N = PARALLEL_BATCH  # long enough for the parallel kernel
    if which == "bunny-duck":
        a, b = pb_mesh("bunny.obj"), pb_mesh("duck_vhacd.obj")
        pose_a, pose_b = scene(a, b, 0.6, N, seed=5)
    elif which == "panda":
        a = pb_mesh("franka_panda/meshes/collision/link2.obj")
        b = pb_mesh("franka_panda/meshes/collision/link3.obj")
        pose_a, pose_b = scene(a, b, 0.6, N, seed=6)
    else:
        a, b = load_shared_mesh("env.obj"), load_shared_mesh("rob.obj")
        pose_a, pose_b = None, ck.random_poses(N, radius=3000.0, center=(0, 0, 1500), seed=11)
    expected = brute_pairs(a, b, pose_a, pose_b)
    assert len(expected) > 0
    splits = ["sah", "median", "mean"]
    for i, opts in enumerate(OPTION_GRID):
        # vary b's own split rule and leaf size too (b is traversed with a's volume kind)
        opts_b = dataclasses.replace(opts, split=splits[(i + 1) % 3], leaf_size=1 + (i * 3) % 7)
        ma, mb = a.with_options(opts), b.with_options(opts_b)
        for threads in (1, 2, None):
            assert_matches_brute(ma, mb, pose_a, pose_b, expected, threads=threads)
        assert_matches_brute(ma, mb, pose_a, pose_b, expected, strategy=Descent(tri_test="guigue"))
        assert_matches_brute(ma, mb, pose_a, pose_b, expected, strategy="descent", threads=2)
        hits = ck.intersects(ma, mb, pose_a, pose_b, threads=2)
        assert np.array_equal(hits, counts_of(expected, N) > 0), f"intersects differs for {opts}/{opts_b}"


def test_max_pairs_caps_and_flags_truncation(pb_mesh):
    a, b = pb_mesh("bunny.obj"), pb_mesh("duck_vhacd.obj")
    n = PARALLEL_BATCH
    pose_a, pose_b = scene(a, b, 0.5, n, seed=9)
    full = ck.contacts(a, b, pose_a, pose_b)
    assert full.counts.max() > 20
    full_sets = [set(map(tuple, full.pairs(k))) for k in range(n)]
    exact_cap = int(np.max(full.counts))
    for cap in (1, 2, 5, 17, exact_cap, exact_cap + 1):
        for threads in (1, 2):
            c = ck.contacts(a, b, pose_a, pose_b, max_pairs=cap, threads=threads)
            assert np.array_equal(c.counts, np.minimum(full.counts, cap)), f"cap {cap}"
            assert np.array_equal(c.truncated, full.counts > cap), f"cap {cap}: truncated flags wrong"
            assert_rows_sorted_unique(c)
            for k in range(n):
                assert set(map(tuple, c.pairs(k))) <= full_sets[k], f"cap {cap}: pose {k} has a pair 'all' lacks"
    # a pose capped at exactly its own count is complete, hence not truncated
    k = int(np.argmax(full.counts))
    c = ck.contacts(a, b, pose_a[k], pose_b[k], max_pairs=int(full.counts[k]))
    assert not c.truncated and np.array_equal(c.pairs(0), full.pairs(k))


def grid_mesh(n: int, cell: float = 1.0, z: float = 0.0) -> ck.Mesh:
    """A flat n x n grid of squares (2 n^2 triangles) in the plane z."""
    xs = np.arange(n + 1) * cell
    v = np.array([[x, y, z] for y in xs for x in xs])
    f = []
    for j in range(n):
        for i in range(n):
            p = j * (n + 1) + i
            f += [[p, p + 1, p + n + 2], [p, p + n + 2, p + n + 1]]
    return ck.Mesh(v, f)


def test_many_pairs_overflow_rerun_matches_brute_force():
    """Coplanar overlapping grids: far more pairs per pose than the kernels reserve,
    so some poses overflow their chunk and are rerun; mixed with empty poses."""
    a, b = grid_mesh(12), grid_mesh(12)
    n = PARALLEL_BATCH
    pose_b = np.repeat(np.eye(4)[None], n, axis=0)
    pose_b[:, 0, 3] = (np.arange(n) % 24) * 0.5 + 0.25  # 1/4 .. 11.75: exact
    pose_b[:, 1, 3] = 0.375
    pose_b[1::3, 2, 3] = 0.125  # a third of the poses lift b off a's plane
    expected = brute_pairs(a, b, None, pose_b)
    counts = counts_of(expected, n)
    assert counts.max() > 64 + 2 * (a.n_faces + b.n_faces), "scene does not exercise the overflow rerun"
    assert (counts == 0).sum() >= 6
    for threads in (1, 2, None):
        assert_matches_brute(a, b, None, pose_b, expected, threads=threads)
        assert_matches_brute(a, b, None, pose_b, expected, threads=threads, max_pairs=10**6)
        c = ck.contacts(a, b, None, pose_b, threads=threads, max_pairs=100)
        assert np.array_equal(c.counts, np.minimum(counts, 100)) and np.array_equal(c.truncated, counts > 100)


# --- records ---------------------------------------------------------------------------


def test_contacts_record_is_frozen_and_typed():
    box = ck.primitives.box_mesh()
    poses = np.repeat(ck.translation([0.5, 0.25, 0.125])[None], 3, axis=0)
    poses[1] = ck.translation([5, 0, 0])
    c = ck.contacts(box, box, None, poses)
    for name in ("pose_index", "face_a", "face_b", "counts"):
        arr = getattr(c, name)
        assert arr.dtype == np.int64 and arr.ndim == 1 and not arr.flags.writeable, name
        with pytest.raises(ValueError):
            arr[...] = 0
    assert c.truncated.dtype == np.bool_ and c.truncated.shape == (3,) and not c.truncated.flags.writeable
    assert c.counts.shape == (3,) and c.counts[1] == 0 and c.counts[0] == c.counts[2] > 0
    assert len(c) == int(c.counts.sum()) == c.pose_index.shape[0] == c.face_a.shape[0] == c.face_b.shape[0]
    assert c.n_poses == 3 and np.array_equal(c.colliding, [True, False, True])
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.counts = np.zeros(3, np.int64)
    assert c.pairs(1).shape == (0, 2)
    assert np.array_equal(c.pairs(0), c.pairs(2))
    with pytest.raises(IndexError):
        c.pairs(3)
    with pytest.raises(IndexError):
        c.pairs(-1)


def test_stats_record_and_counters(pb_mesh):
    a, b = pb_mesh("bunny.obj"), pb_mesh("duck_vhacd.obj")
    n = PARALLEL_BATCH
    pose_a, pose_b = scene(a, b, 0.6, n, seed=2)
    hits = ck.intersects(a, b, pose_a, pose_b)
    full = ck.contacts(a, b, pose_a, pose_b)
    assert 0 < hits.sum() < n
    for bv in ("aabb", "obb"):
        ma = a.with_options(bv=bv)
        for mode in ("any", "first", "all"):
            s = ck.query_stats(ma, b, pose_a, pose_b, mode=mode)
            for name in ("bv_tests", "tri_tests", "node_pairs", "bv_updates"):
                arr = getattr(s, name)
                assert arr.dtype == np.int64 and arr.shape == (n,) and not arr.flags.writeable, name
            assert s.colliding.dtype == np.bool_ and np.array_equal(s.colliding, hits), (bv, mode)
            assert np.all(s.bv_tests >= 1) and np.all(s.node_pairs >= 1)
            if bv == "aabb":
                assert np.all(s.bv_updates == 0)
            else:
                assert np.all(s.bv_updates > 0)
            # every reported pair needed its own triangle test
            needed = full.counts if mode == "all" else hits.astype(np.int64)
            assert np.all(s.tri_tests >= needed), (bv, mode)
            # counters are per pose: the thread count cannot change them
            s1 = ck.query_stats(ma, b, pose_a, pose_b, mode=mode, threads=1)
            for name in ("bv_tests", "tri_tests", "node_pairs", "bv_updates"):
                assert np.array_equal(getattr(s1, name), getattr(s, name)), (bv, mode, name)
            assert s.cost(1.0, 2.0, 3.0).shape == (n,)
    with pytest.raises(ValueError):
        ck.query_stats(a, b, pose_a, pose_b, mode="some")
    single = ck.query_stats(a, b)
    assert isinstance(single, ck.Stats) and type(single.bv_tests) is int and single.colliding is True


def test_all_mode_stats_visit_at_least_any_mode(pb_mesh):
    a, b = pb_mesh("franka_panda/meshes/collision/link0.obj"), pb_mesh("franka_panda/meshes/collision/hand.obj")
    pose_a, pose_b = scene(a, b, 0.6, 24, seed=4)
    s_any = ck.query_stats(a, b, pose_a, pose_b, mode="any")
    s_all = ck.query_stats(a, b, pose_a, pose_b, mode="all")
    assert np.all(s_all.node_pairs >= s_any.node_pairs)
    assert np.all(s_all.tri_tests >= s_any.tri_tests)
    assert np.array_equal(s_all.node_pairs[~s_any.colliding], s_any.node_pairs[~s_any.colliding])


# --- exact edge cases -------------------------------------------------------------------


BOX_FACES_PLUS_X = (2, 3)
BOX_FACES_MINUS_X = (0, 1)


@pytest.mark.parametrize("shift", [(1, 0, 0), (1, 0.25, -0.5), (1, 1, 0), (1, 1, 1), (0, 0, 1)])
def test_touching_boxes_exact(shift):
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    pose_b = ck.translation(shift)
    assert ck.intersects(box, box, None, pose_b) is True
    truth = rational_pairs(box, box, None, pose_b)
    c = ck.contacts(box, box, None, pose_b)
    assert np.array_equal(c.pairs(0), truth)
    if shift == (1, 0, 0):  # the two touching faces' triangles, each against each
        got = set(map(tuple, c.pairs(0)))
        assert {(i, j) for i in BOX_FACES_PLUS_X for j in BOX_FACES_MINUS_X} <= got
    # the smallest gap there is
    gap = np.array(shift, float)
    gap[np.flatnonzero(gap)[0]] = np.nextafter(1.0, 2.0)
    assert ck.intersects(box, box, None, ck.translation(gap)) is False
    assert len(ck.contacts(box, box, None, ck.translation(gap))) == 0
    for threads in (1, 2):
        stack = np.stack([pose_b, ck.translation(gap)] * 5)
        assert np.array_equal(ck.intersects(box, box, None, stack, threads=threads), [True, False] * 5)


def test_touching_boxes_rotated_exactly():
    box = ck.primitives.box_mesh([1.0, 2.0, 0.5])
    for perm, signs in [((1, 0, 2), (1, -1, 1)), ((2, 1, 0), (-1, 1, 1)), ((0, 1, 2), (-1, -1, 1))]:
        pose_a = signed_perm(perm, signs, (0.25, -0.125, 2.0))
        # put b's face exactly against a's in a's frame, then move both by pose_a
        for offset in ([1.0, 0, 0], [0, 2.0, 0], [0, 0, 0.5], [1.0, 2.0, 0.5]):
            pose_b = pose_a @ signed_perm(t=offset)
            assert ck.intersects(box, box, pose_a, pose_b) is True
            truth = rational_pairs(box, box, pose_a, pose_b)
            assert np.array_equal(ck.contacts(box, box, pose_a, pose_b).pairs(0), truth)


def tri_mesh(*tris) -> ck.Mesh:
    v = np.array(tris, dtype=np.float64).reshape(-1, 3)
    return ck.Mesh(v, np.arange(len(v)).reshape(-1, 3))


@pytest.mark.parametrize(
    "ta,tb,expected",
    [
        # coplanar overlapping / disjoint / vertex-touching / edge-sharing / nested
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, 0], [5, 1, 0], [1, 5, 0]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[3, 3, 0], [7, 3, 0], [3, 7, 0]], False),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[2, 2, 0], [6, 2, 0], [2, 6, 0]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[4, 0, 0], [0, 4, 0], [4, 4, 0]], True),
        ([[0, 0, 0], [8, 0, 0], [0, 8, 0]], [[1, 1, 0], [2, 1, 0], [1, 2, 0]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[-1, -1, 0], [-4, -1, 0], [-1, -4, 0]], False),
        # an edge of b lying in a's face, b's third vertex off the plane
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, 0], [2, 1, 0], [1, 1, 3]], True),
        # that edge just outside the face (in the plane)
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[3, 3, 0], [4, 3, 0], [3, 3, 3]], False),
        # a vertex of b on a's edge / exactly one ulp above a's plane
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[2, 0, 0], [2, -1, 1], [2, 1, 1]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, 2**-1074], [1, 2, 1], [2, 1, 1]], False),
        # crossing (piercing) triangles
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, -1], [1, 1, 1], [3, 3, 1]], True),
        # degenerate b: a segment through a's face, a point in a's face, a point off it
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, -1], [1, 1, 1], [1, 1, 1]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, 0], [1, 1, 0], [1, 1, 0]], True),
        ([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[1, 1, 0.5], [1, 1, 0.5], [1, 1, 0.5]], False),
        # collinear segments: overlapping, touching end to end, disjoint
        ([[0, 0, 0], [2, 2, 2], [1, 1, 1]], [[2, 2, 2], [3, 3, 3], [4, 4, 4]], True),
        ([[0, 0, 0], [2, 2, 2], [1, 1, 1]], [[3, 3, 3], [5, 5, 5], [4, 4, 4]], False),
        ([[0, 0, 0], [2, 2, 2], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]], True),
    ],
)
def test_special_triangle_pairs(ta, tb, expected):
    from tests.oracles import tri_tri_rational

    assert tri_tri_rational(ta, tb) == expected  # the case is what its comment says
    a, b = tri_mesh(ta), tri_mesh(tb)
    for pose in (None, signed_perm((2, 0, 1), (1, -1, 1), (0.5, 0.25, -8.0))):
        # moving both by an exact motion keeps the configuration exactly
        assert ck.intersects(a, b, pose, pose) is expected
        assert ck.intersects(b, a, pose, pose) is expected
        assert len(ck.contacts(a, b, pose, pose)) == int(expected)
        small_ints = all(float(x).is_integer() and abs(x) <= 32 for x in np.ravel(ta + tb))
        for tri_test in ("guigue", "moller") if small_ints else ("guigue",):  # Moller: exact on small ints
            assert ck.intersects(a, b, pose, pose, strategy=Descent(tri_test=tri_test)) is expected


def test_degenerate_triangles_in_meshes_match_rational_reference():
    rng = np.random.default_rng(3)
    verts = rng.integers(-3, 4, size=(24, 3)).astype(float) / 2
    faces = rng.integers(0, 24, size=(20, 3))
    faces[::3, 2] = faces[::3, 1]  # segments
    faces[1::5, 1:] = faces[1::5, :1]  # points
    collinear = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [-1, 0, 0], [0, 0, 0], [1, 0, 0]], float)
    v = np.vstack([verts, collinear])
    f = np.vstack([faces, [[24, 25, 26], [27, 28, 29]]])
    a = ck.Mesh(v, f)
    b = ck.Mesh(v[::-1].copy(), f)  # same soup, other vertex order
    for k, pose_b in enumerate(
        [np.eye(4), signed_perm((1, 2, 0), (1, 1, 1), (0.5, 0, -0.5)), ck.translation([1, 0.5, 0])]
    ):
        truth = rational_pairs(a, b, None, pose_b)
        assert len(truth) > 0
        for opts in (ck.BuildOptions(), ck.BuildOptions(bv="obb", split="median", leaf_size=1)):
            c = ck.contacts(a.with_options(opts), b, None, pose_b)
            assert np.array_equal(c.pairs(0), truth), f"pose {k}, {opts}"


def test_identical_meshes_at_identity(pb_mesh):
    for m in (pb_mesh("bunny.obj"), pb_mesh("franka_panda/meshes/collision/hand.obj"), ck.primitives.torus_mesh()):
        c = assert_matches_brute(m, m, None, None)
        pairs = c.pairs(0)
        diag = pairs[pairs[:, 0] == pairs[:, 1], 0]
        assert np.array_equal(diag, np.arange(m.n_faces)), "a triangle must intersect itself"
        # the relation is symmetric at identity
        assert set(map(tuple, pairs)) == set(map(tuple, pairs[:, ::-1]))
        assert ck.intersects(m, m) is True


def dyadic_sphere(scale_exp: int = 0) -> ck.Mesh:
    s = ck.primitives.uv_sphere_mesh(1.0, 8, 12)
    v = np.round(s.vertices * 2**20) / 2**20
    return ck.Mesh(np.ldexp(v, scale_exp), s.faces)


@pytest.mark.parametrize("exp", [500, -500, 60, -60])
def test_scaled_scene_gives_same_pairs(exp):
    """The same scene scaled by a power of two (exact) gives the same pairs: coordinates
    near 1e150 and 1e-150 included (the products of the predicates over- and underflow
    there unless the kernels rescale)."""
    a, box = dyadic_sphere(), ck.primitives.box_mesh([1.0, 0.5, 2.0])
    pose_b = ck.random_poses(12, radius=1.5, seed=8)
    pose_b[:, :3, 3] = np.round(pose_b[:, :3, 3] * 64) / 64
    expected = brute_pairs(a, box, None, pose_b)
    assert 0 < len(np.unique(expected[:, 0])) < 12
    a_s = dyadic_sphere(exp)
    box_s = ck.Mesh(np.ldexp(box.vertices, exp), box.faces)
    pose_s = pose_b.copy()
    pose_s[:, :3, 3] = np.ldexp(pose_s[:, :3, 3], exp)
    assert np.array_equal(brute_pairs(a_s, box_s, None, pose_s), expected), "the scaled scene is not the same scene"
    assert_matches_brute(a_s, box_s, None, pose_s, expected)
    assert_matches_brute(a_s.with_options(bv="obb", leaf_size=1), box_s, None, pose_s, expected)
    assert np.array_equal(ck.intersects(a_s, box_s, None, pose_s), counts_of(expected, 12) > 0)


@pytest.mark.parametrize("exp", [500, -500])
def test_scaled_scene_exact_against_rational(exp):
    """Touching boxes scaled by 2**exp: exact answers by the rational reference."""
    box = ck.Mesh(np.ldexp(ck.primitives.box_mesh().vertices, exp), ck.primitives.box_mesh().faces)
    for shift in ((1, 0, 0), (1, 1, 1), (1, 0.5, 0.25)):
        pose = ck.translation(np.ldexp(np.array(shift, float), exp))
        truth = rational_pairs(box, box, None, pose)
        assert len(truth) > 0
        assert np.array_equal(ck.contacts(box, box, None, pose).pairs(0), truth)
        assert ck.intersects(box, box, None, pose) is True


def test_far_offsets(pb_mesh):
    a, b = pb_mesh("franka_panda/meshes/collision/link0.obj"), pb_mesh("franka_panda/meshes/collision/hand.obj")
    pose_a, pose_b = scene(a, b, 0.6, 16, seed=12)
    pose_a[:, :3, :3] = signed_perm((1, 0, 2), (1, -1, 1))[:3, :3]
    pose_a[:, :3, 3] = np.round(pose_a[:, :3, 3] * 64) / 64
    pose_b[:, :3, 3] = np.round(pose_b[:, :3, 3] * 64) / 64
    expected = brute_pairs(a, b, pose_a, pose_b)
    assert 0 < len(expected)
    for offset in (1e8, -3e8, 2.0**40):
        pa, pb = pose_a.copy(), pose_b.copy()
        pa[:, :3, 3] += offset  # exact: the dyadic translations keep their bits
        pb[:, :3, 3] += offset
        assert_matches_brute(a, b, pa, pb, expected)
    # geometry itself far from its origin: compared with brute force on the same coordinates
    far_a = ck.Mesh(a.vertices + 1e8, a.faces)
    far_b = ck.Mesh(b.vertices + 1e8, b.faces)
    pb = pose_b.copy()
    pb[:, :3, 3] += 1e8 - np.einsum("nij,j->ni", pose_b[:, :3, :3], np.full(3, 1e8))
    expected_far = brute_pairs(far_a, far_b, None, pb)
    assert 0 < len(expected_far)
    assert_matches_brute(far_a, far_b, None, pb, expected_far)
    assert_matches_brute(far_a.with_options(bv="obb"), far_b, None, pb, expected_far)


def test_uniform_overflow_takes_the_parallel_rerun():
    """Every pose overflows by the same amount: the rerun runs one chunk per pose in
    parallel (batch.pair_rows), and must give the serial rows exactly."""
    from collisionkit.constants import PAIRS_PER_POSE_GUESS

    a, b = grid_mesh(12), grid_mesh(12)
    n = PARALLEL_BATCH
    pose_b = np.repeat(ck.translation([0.25, 0.375, 0.0])[None], n, axis=0)
    expected = brute_pairs(a, b, None, pose_b)
    counts = counts_of(expected, n)
    guess = PAIRS_PER_POSE_GUESS + (a.n_faces + b.n_faces) // 8
    assert counts.min() > guess, "scene does not overflow every pose"
    assert_matches_brute(a, b, None, pose_b, expected, threads=2)
    serial = ck.contacts(a, b, None, pose_b, threads=1)
    parallel = ck.contacts(a, b, None, pose_b, threads=2)
    assert np.array_equal(rows_of(serial), rows_of(parallel))


def test_single_pose_contacts_path_equals_batch_path(pb_mesh, monkeypatch):
    """contacts on one pose pair takes a per-call kernel (query.pair._contacts_one): the rows,
    counts and truncation flags equal the batch path's for every mode, cap, volume kind and
    tri test, including poses with more pairs than the per-call buffer (a second pass with
    exact room), capped or not."""
    from collisionkit.query import pair

    monkeypatch.setattr(pair, "_ONE_CALL_KEYS", 16)  # small buffer: the second pass is taken too
    monkeypatch.setattr(pair, "_ROOM", {})  # no room remembered from other tests
    bunny = pb_mesh("bunny.obj")
    poses = ck.random_poses(12, 0.08, seed=21)
    cases = [(bunny, bunny, poses), (bunny, bunny.with_options(ck.BuildOptions(bv="obb")), poses[:4])]
    seen_truncated = seen_big = seen_big_cap = False
    for a, b, pb in cases:
        for mode, cap in [("all", None), ("first", None), ("all", 3), ("all", 1), ("all", 20)]:
            for strat in ["descent", Descent(tri_test="moller")]:
                batch = ck.contacts(a, b, None, pb, mode=mode, max_pairs=cap, strategy=strat)
                for i in range(len(pb)):
                    one = ck.contacts(a, b, None, pb[i], mode=mode, max_pairs=cap, strategy=strat)
                    assert one.counts == batch.counts[i] and type(one.counts) is int
                    assert one.truncated == batch.truncated[i] and type(one.truncated) is bool
                    assert np.array_equal(one.pairs(0), batch.pairs(i))
                    assert not one.pose_index.any()
                    seen_truncated |= one.truncated
                    seen_big |= mode == "all" and cap is None and one.counts > pair._ONE_CALL_KEYS
                    seen_big_cap |= cap == 20 and one.counts > pair._ONE_CALL_KEYS
    assert seen_truncated and seen_big and seen_big_cap  # the cap and the second pass were exercised
    assert pair._ROOM  # and the room they needed is remembered for the next call
    bad = np.eye(4)
    bad[3, 0] = 1.0
    with pytest.raises(ck.InvalidPoseError, match="pose_b"):
        ck.contacts(bunny, bunny, None, bad)
    with pytest.raises(ck.InvalidPoseError, match="pose_a"):
        ck.contacts(bunny, bunny, bad, None)
