"""Properties (hypothesis): swapping a and b, moving both by one rigid motion,
batched versus one by one, thread counts, random small triangles.

Exactness: where the relative poses of two runs are computed exactly (signed
axis permutations, dyadic translations, meshes on a dyadic grid) the rows
must be EQUAL. With general rotations the two runs test slightly different
float64 coordinates, so every difference is refereed by the exact rational
reference on EACH run's own mapped coordinates: each run must be right about
what it saw.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event as _hypothesis_event
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from tests.brute import PARALLEL_BATCH, brute_pairs, mapped_triangles, rows_of, signed_perm
from tests.oracles import tri_tri_rational

import collisionkit as ck


def event(label: str) -> None:
    """hypothesis.event when inside a hypothesis example (statistics: --hypothesis-show-statistics)."""
    if currently_in_test_context():
        _hypothesis_event(label)


def dyadic(mesh: ck.Mesh, bits: int = 20) -> ck.Mesh:
    """The mesh with coordinates rounded to multiples of 2**-bits (exact sums with k/8 shifts)."""
    return ck.Mesh(np.round(mesh.vertices * 2.0**bits) / 2.0**bits, mesh.faces)


def _soup() -> ck.Mesh:
    rng = np.random.default_rng(5)
    v = rng.integers(-6, 7, size=(45, 3)) / 4.0
    f = np.arange(45).reshape(15, 3)
    f[::4, 2] = f[::4, 1]  # some segments
    f[1::6, 1:] = f[1::6, :1]  # some points
    return ck.Mesh(v, f)


MESHES = {
    "box": ck.primitives.box_mesh([1.0, 0.5, 2.0]),
    "sphere": dyadic(ck.primitives.uv_sphere_mesh(0.75, 6, 10)),
    "torus": dyadic(ck.primitives.torus_mesh(1.0, 0.25, 16, 8)),
    "soup": _soup(),
    "grid-box": ck.Mesh(ck.primitives.box_mesh([2.0, 2.0, 2.0]).vertices, ck.primitives.box_mesh().faces),
}
NAMES = sorted(MESHES)
OPTIONS = [
    ck.BuildOptions(),
    ck.BuildOptions(bv="obb", split="median", leaf_size=1),
    ck.BuildOptions(split="mean", leaf_size=7),
]


# --- strategies ---------------------------------------------------------------------------

meshes = st.sampled_from(NAMES).map(MESHES.__getitem__)
options = st.sampled_from(OPTIONS)
dyadic_t = st.lists(st.integers(-24, 24).map(lambda k: k / 8.0), min_size=3, max_size=3)


@st.composite
def signed_perm_poses(draw, translation=dyadic_t):
    perm = draw(st.permutations([0, 1, 2]))
    signs = draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=3, max_size=3))
    P = np.zeros((3, 3))
    P[[0, 1, 2], perm] = signs
    if np.linalg.det(P) < 0:
        P[2] *= -1
    T = np.eye(4)
    T[:3, :3] = P
    T[:3, 3] = draw(translation)
    return T


def _realistic(bound: float):
    """Floats in [-bound, bound] on a 2**-40 grid. The exact predicates' documented
    domain is a dynamic range below ~2**300 inside one triangle pair (ARCHITECTURE.md,
    "Exactness"); hypothesis' favourite 5e-324 next to O(1) coordinates is outside
    it, and real poses never are."""
    return st.floats(-bound, bound, allow_nan=False).map(lambda x: round(x * 2.0**40) / 2.0**40)


@st.composite
def rotations(draw):
    q = np.array(draw(st.lists(_realistic(1.0), min_size=4, max_size=4)))
    n = np.linalg.norm(q)
    if n < 1e-3:
        return np.eye(3)
    w, x, y, z = q / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


@st.composite
def rigid_poses(draw, translation=None):
    T = np.eye(4)
    T[:3, :3] = draw(rotations())
    if translation is None:
        translation = st.lists(_realistic(2.5), min_size=3, max_size=3)
    T[:3, 3] = draw(translation)
    return T


def swapped(rows: np.ndarray) -> set[tuple[int, int]]:
    return {(int(j), int(i)) for i, j in rows}


def pairs(c: ck.Contacts, k: int = 0) -> set[tuple[int, int]]:
    return set(map(tuple, c.pairs(k).tolist()))


def referee_difference(a, b, Ta, Tb, run1: set, run2: set, a2, b2, Ta2, Tb2, map2) -> None:
    """run1 = pairs of (a at Ta, b at Tb); run2 = the same pairs, as the second run
    (a2 at Ta2, b2 at Tb2) reported them, mapped back by ``map2`` to (face_a, face_b).
    Every difference: each run must be exactly right about its own coordinates."""
    diff = run1 ^ run2
    if not diff:
        return
    m1 = mapped_triangles(b, Ta, Tb)
    m2 = mapped_triangles(b2, Ta2, Tb2)
    for i, j in sorted(diff):
        i2, j2 = map2(i, j)
        v1 = tri_tri_rational(a.triangles[i].tolist(), m1[j].tolist())
        v2 = tri_tri_rational(a2.triangles[i2].tolist(), m2[j2].tolist())
        assert v1 == ((i, j) in run1), f"run 1 is wrong about pair {(i, j)}: exact answer {v1}"
        assert v2 == ((i, j) in run2), f"run 2 is wrong about pair {(i, j)}: exact answer {v2}"


# --- swap -----------------------------------------------------------------------------------


def check_swap_exact(a, b, oa, ob, Ta, Tb):
    ma, mb = a.with_options(oa), b.with_options(ob)
    ab = ck.contacts(ma, mb, Ta, Tb)
    ba = ck.contacts(mb, ma, Tb, Ta)
    event(f"colliding: {bool(ab.counts)}")
    assert pairs(ab) == swapped(ba.pairs(0)), "swapping a and b changed the pairs under an exact motion"
    assert ck.intersects(ma, mb, Ta, Tb) is ck.intersects(mb, ma, Tb, Ta) is bool(ab.counts)


@given(meshes, meshes, options, options, signed_perm_poses(), signed_perm_poses())
def test_swap_exact(a, b, oa, ob, Ta, Tb):
    check_swap_exact(a, b, oa, ob, Ta, Tb)


@pytest.mark.slow
@settings(max_examples=600)
@given(meshes, meshes, options, options, signed_perm_poses(), signed_perm_poses())
def test_swap_exact_sweep(a, b, oa, ob, Ta, Tb):
    check_swap_exact(a, b, oa, ob, Ta, Tb)


def check_swap_general(a, b, o, Ta, Tb):
    ma = a.with_options(o)
    run1 = pairs(ck.contacts(ma, b, Ta, Tb))
    event(f"colliding: {bool(run1)}")
    run2 = swapped(ck.contacts(b, ma, Tb, Ta).pairs(0))
    referee_difference(a, b, Ta, Tb, run1, run2, b, a, Tb, Ta, lambda i, j: (j, i))


@given(meshes, meshes, options, rigid_poses(), rigid_poses())
def test_swap_general_rotations_refereed(a, b, o, Ta, Tb):
    check_swap_general(a, b, o, Ta, Tb)


@pytest.mark.slow
@settings(max_examples=600)
@given(meshes, meshes, options, rigid_poses(), rigid_poses())
def test_swap_general_rotations_sweep(a, b, o, Ta, Tb):
    check_swap_general(a, b, o, Ta, Tb)


def test_swap_real_meshes(pb_mesh):
    a, b = pb_mesh("bunny.obj"), pb_mesh("duck_vhacd.obj")
    rng = np.random.default_rng(0)
    a, b = dyadic(a, 24), dyadic(b, 24)
    for k in range(12):
        Tb = signed_perm(rng.permutation(3), rng.choice([-1.0, 1.0], 3), rng.integers(-6, 7, 3) / 8.0)
        check_swap_exact(a, b, OPTIONS[k % 3], OPTIONS[(k + 1) % 3], np.eye(4), Tb)
        check_swap_general(
            a, b, OPTIONS[k % 3], ck.random_poses(1, 0.2, seed=k)[0], ck.random_poses(1, 0.8, seed=50 + k)[0]
        )


# --- one rigid motion applied to both ---------------------------------------------------


def check_motion_exact(a, b, o, Ta, Tb, M):
    ma = a.with_options(o)
    before = ck.contacts(ma, b, Ta, Tb)
    after = ck.contacts(ma, b, M @ Ta, M @ Tb)
    event(f"colliding: {bool(before.counts)}")
    assert pairs(before) == pairs(after), "an exact common motion changed the pairs"
    assert ck.intersects(ma, b, M @ Ta, M @ Tb) is bool(before.counts)


@given(meshes, meshes, options, signed_perm_poses(), rigid_poses(translation=dyadic_t), signed_perm_poses())
def test_common_motion_exact(a, b, o, Ta, Tb, M):
    check_motion_exact(a, b, o, Ta, Tb, M)


@pytest.mark.slow
@settings(max_examples=600)
@given(meshes, meshes, options, signed_perm_poses(), rigid_poses(translation=dyadic_t), signed_perm_poses())
def test_common_motion_exact_sweep(a, b, o, Ta, Tb, M):
    check_motion_exact(a, b, o, Ta, Tb, M)


def check_motion_general(a, b, o, Ta, Tb, M):
    ma = a.with_options(o)
    run1 = pairs(ck.contacts(ma, b, Ta, Tb))
    event(f"colliding: {bool(run1)}")
    Ta2, Tb2 = M @ Ta, M @ Tb
    run2 = pairs(ck.contacts(ma, b, Ta2, Tb2))
    referee_difference(a, b, Ta, Tb, run1, run2, a, b, Ta2, Tb2, lambda i, j: (i, j))


@given(meshes, meshes, options, rigid_poses(), rigid_poses(), rigid_poses())
def test_common_motion_general_refereed(a, b, o, Ta, Tb, M):
    check_motion_general(a, b, o, Ta, Tb, M)


@pytest.mark.slow
@settings(max_examples=600)
@given(meshes, meshes, options, rigid_poses(), rigid_poses(), rigid_poses())
def test_common_motion_general_sweep(a, b, o, Ta, Tb, M):
    check_motion_general(a, b, o, Ta, Tb, M)


# --- batches and threads -------------------------------------------------------------------------


ORACLE_POSES = 8


def check_batch(a, b, o, Ta, Tb):
    ma = a.with_options(o)
    c = ck.contacts(ma, b, Ta, Tb)
    n = Tb.shape[0]
    assert c.n_poses == n
    # The exact oracle decides near-degenerate pairs in rationals, up to ~1 s a pose on
    # these meshes; a batch of ~70 such poses once ran for 800 s. So it referees a spread
    # of at most ORACLE_POSES poses; every other pose is held to the one-by-one answers below.
    sel = np.unique(np.linspace(0, n - 1, min(n, ORACLE_POSES)).round().astype(np.int64))
    rows = rows_of(c)
    picked = rows[np.isin(rows[:, 0], sel)]
    picked[:, 0] = np.searchsorted(sel, picked[:, 0])
    assert np.array_equal(picked, brute_pairs(ma, b, Ta if Ta.ndim == 2 else Ta[sel], Tb[sel]))
    hits = ck.intersects(ma, b, Ta, Tb)
    assert np.array_equal(hits, c.colliding)
    for k in range(n):
        Tak = Ta if Ta.ndim == 2 else Ta[k]
        assert np.array_equal(ck.contacts(ma, b, Tak, Tb[k]).pairs(0), c.pairs(k))
        assert ck.intersects(ma, b, Tak, Tb[k]) is bool(hits[k])
    for threads in (1, 2):
        ct = ck.contacts(ma, b, Ta, Tb, threads=threads)
        assert np.array_equal(rows_of(ct), rows_of(c)) and np.array_equal(ct.counts, c.counts)
        assert np.array_equal(ck.intersects(ma, b, Ta, Tb, threads=threads), hits)
        first = ck.contacts(ma, b, Ta, Tb, mode="first", threads=threads)
        assert np.array_equal(first.counts, hits.astype(np.int64))
        truth = set(map(tuple, rows_of(c).tolist()))
        assert all(tuple(r) in truth for r in rows_of(first).tolist())
        s = ck.query_stats(ma, b, Ta, Tb, threads=threads)
        assert np.array_equal(s.colliding, hits)


@given(
    meshes, meshes, options,
    st.one_of(rigid_poses(), st.integers(1, 20).flatmap(lambda n: st.lists(rigid_poses(), min_size=n, max_size=n).map(np.stack))),
    st.one_of(st.integers(1, 20), st.integers(PARALLEL_BATCH // 2, PARALLEL_BATCH + 5)).flatmap(
        lambda n: st.lists(rigid_poses(), min_size=n, max_size=n).map(np.stack)
    ),
)  # fmt: skip
def test_batched_equals_one_by_one_and_threads(a, b, o, Ta, Tb):
    if Ta.ndim == 3 and Ta.shape[0] != Tb.shape[0]:
        Ta = Ta[:1] if Ta.shape[0] < Tb.shape[0] else Ta[: Tb.shape[0]]
        if Ta.shape[0] == 1:
            Ta = Ta[0]
    check_batch(a, b, o, Ta, Tb)


# --- random small triangles, exact -------------------------------------------------------------

small_ints = st.integers(-3, 3).map(float)
points = st.lists(small_ints, min_size=3, max_size=3)
triangles = st.lists(points, min_size=3, max_size=3)


@st.composite
def coplanar_pairs(draw):
    """Two triangles in one plane (z = c, or that plane moved by a signed permutation)."""
    c = draw(small_ints)
    t1 = [[draw(small_ints), draw(small_ints), c] for _ in range(3)]
    t2 = [[draw(small_ints), draw(small_ints), c] for _ in range(3)]
    perm = draw(st.permutations([0, 1, 2]))
    return [[p[i] for i in perm] for p in t1], [[p[i] for i in perm] for p in t2]


def check_single_triangles(t1, t2, pose):
    exact = tri_tri_rational(t1, t2)
    event(f"intersecting: {exact}")
    a, b = ck.Mesh(t1, [[0, 1, 2]]), ck.Mesh(t2, [[0, 1, 2]])
    assert ck.intersects(a, b, pose, pose) is exact
    assert ck.intersects(b, a, pose, pose) is exact
    assert ck.contacts(a, b, pose, pose).counts == int(exact)
    stacked = np.stack([pose, pose])
    assert ck.intersects(a.with_options(bv="obb"), b, stacked, stacked).tolist() == [exact, exact]


@given(triangles, triangles, signed_perm_poses())
def test_random_small_triangles_exact(t1, t2, pose):
    check_single_triangles(t1, t2, pose)


@given(coplanar_pairs(), signed_perm_poses())
def test_random_coplanar_triangles_exact(pair, pose):
    check_single_triangles(pair[0], pair[1], pose)


@pytest.mark.slow
@settings(max_examples=2000)
@given(st.one_of(st.tuples(triangles, triangles), coplanar_pairs()), signed_perm_poses())
def test_random_small_triangles_sweep(pair, pose):
    check_single_triangles(pair[0], pair[1], pose)
