"""Every query on every volume kind: the (query, volume kind) matrix on near-contact poses.

A tree's volume kind changes how fast a query runs, never what it answers. The
reference is the AABB tree (ISSUE 14 step 2): booleans and contact rows equal;
distances bitwise equal (closest faces equal, or an equal-distance tie);
classification labels and distances equal; penetration depths and directions
equal; time of impact within the query's own guarantee (a hit iff the reference
hits; t never after the reference's first contact by more than the advancement
tolerance allows); penetration by every method (the sampled one too) bit for bit. Counters
are excluded: they measure the volumes.

The default run covers every cell once on a torus/sphere pair in near contact;
``-m slow`` runs a second, harder pair (two interlocking rings) with more poses.
Regression: wave one's distance and time-of-impact kernels read sphere and
k-DOP rows as AABB rows (22 of 42 cells silently wrong).
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import scene

import collisionkit as ck
from collisionkit.constants import BV_KINDS

KINDS = [*sorted(BV_KINDS), "auto"]  # "auto" resolves per mesh pair (bvh/auto.py)
OTHER_KINDS = [k for k in KINDS if k != "aabb"]

# the reference: explicit AABB trees (the default is "auto")
TORUS = ck.primitives.torus_mesh(1.0, 0.25, 16, 10).with_options(bv="aabb")
SPHERE = ck.primitives.uv_sphere_mesh(0.5, 8, 12).with_options(bv="aabb")


def _pairs(a, b):
    """(a, b, pose_a, pose_b): near contact, about a third of the poses touching."""
    pa, pb = scene(a, b, 0.55, 24, seed=5)
    return a, b, pa, pb


CASES = {"torus-sphere": lambda: _pairs(TORUS, SPHERE)}


def _ring_pair():
    ring = ck.primitives.torus_mesh(1.0, 0.2, 24, 12)
    return _pairs(ring, ring)


def _with_kind(a, b, kind):
    return a.with_options(bv=kind), b.with_options(bv=kind)


def _rows(c):
    return np.stack([c.pose_index, c.face_a, c.face_b], axis=1)


def _assert_distance_equal(got, ref):
    np.testing.assert_array_equal(got.distance, ref.distance)
    same_faces = (got.face_a == ref.face_a) & (got.face_b == ref.face_b)
    # a different closest pair is only allowed as an exact tie
    assert np.all(same_faces | (got.distance == ref.distance))
    np.testing.assert_array_equal(np.where(same_faces[:, None], got.point_a, ref.point_a), ref.point_a)


QUERIES = {}


def _query(fn):
    QUERIES[fn.__name__.removeprefix("q_")] = fn
    return fn


@_query
def q_intersects(a, b, pa, pb, ref):
    got = ck.intersects(a, b, pa, pb)
    np.testing.assert_array_equal(got, ck.intersects(*ref))


@_query
def q_contacts(a, b, pa, pb, ref):
    np.testing.assert_array_equal(_rows(ck.contacts(a, b, pa, pb)), _rows(ck.contacts(*ref)))


@_query
def q_query_stats(a, b, pa, pb, ref):
    np.testing.assert_array_equal(ck.query_stats(a, b, pa, pb).colliding, ck.query_stats(*ref).colliding)


@_query
def q_distance(a, b, pa, pb, ref):
    _assert_distance_equal(ck.distance(a, b, pa, pb), ck.distance(*ref))


@_query
def q_classify(a, b, pa, pb, ref):
    got, want = ck.classify(a, b, pa, pb), ck.classify(*ref)
    np.testing.assert_array_equal(got.codes, want.codes)
    np.testing.assert_array_equal(got.distance, want.distance)


@_query
def q_penetration(a, b, pa, pb, ref):
    # every method decides with exact tests (the bounds and the sampled method bisect on
    # exact ``intersects`` and ray parity; the lower bound's distances run on an AABB tree of
    # its own): equal bit for bit on every volume kind
    for method in ("auto", "sampled"):
        got, want = ck.penetration(a, b, pa, pb, method=method), ck.penetration(*ref, method=method)
        np.testing.assert_array_equal(got.exact, want.exact)
        np.testing.assert_array_equal(got.method, want.method)
        np.testing.assert_array_equal(got.depth, want.depth)
        np.testing.assert_array_equal(got.direction, want.direction)


@_query
def q_time_of_impact(a, b, pa, pb, ref):
    # b sweeps through a along +x from far left to far right, for a handful of start poses
    for k in range(0, len(pa), 6):
        sb = pb[k].copy()
        eb = pb[k].copy()
        sb[0, 3] -= 4.0
        eb[0, 3] += 4.0
        got = ck.time_of_impact(a, b, pa[k], pa[k], sb, eb)
        want = ck.time_of_impact(ref[0], ref[1], pa[k], pa[k], sb, eb)
        assert got.colliding == want.colliding
        if want.colliding:
            # both stop within tolerance of first contact and never after it: equal to 1e-6 of the motion
            assert abs(got.t - want.t) < 1e-6, (got.t, want.t)
            d = ck.distance(a, b, got.pose_a, got.pose_b).distance
            assert d <= 2e-6 * 8.0


@_query
def q_surface_contacts(a, b, pa, pb, ref):
    got, want = ck.surface_contacts(a, b, pa, pb), ck.surface_contacts(*ref)
    for field in ("pose_index", "surface_a", "surface_b"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("kind", OTHER_KINDS)
def test_every_query_answers_on_every_volume_kind(query, kind):
    a, b, pa, pb = CASES["torus-sphere"]()
    ka, kb = _with_kind(a, b, kind)
    QUERIES[query](ka, kb, pa, pb, (a, b, pa, pb))


def test_the_matrix_covers_every_kind_and_the_reference_is_aabb():
    assert set(OTHER_KINDS) | {"aabb"} == set(BV_KINDS) | {"auto"}
    assert TORUS.options.bv == "aabb" and SPHERE.options.bv == "aabb"


def test_the_near_contact_scene_has_hits_misses_and_gaps():
    """The scene must exercise both sides of every query, or the matrix proves little."""
    a, b, pa, pb = CASES["torus-sphere"]()
    hit = ck.intersects(a, b, pa, pb)
    assert 3 <= hit.sum() <= len(hit) - 3
    d = ck.distance(a, b, pa, pb).distance
    assert np.any((d > 0) & (d < 0.2))


@_query
def q_check_motion(a, b, pa, pb, ref):
    # b sweeps along +x past a from a handful of start poses: the same answer on every kind
    for k in range(0, len(pa), 6):
        sb = pb[k].copy()
        eb = pb[k].copy()
        sb[0, 3] -= 4.0
        eb[0, 3] += 4.0
        got = ck.check_motion(a, b, pa[k], pa[k], sb, eb, margin=0.01)
        want = ck.check_motion(ref[0], ref[1], pa[k], pa[k], sb, eb, margin=0.01)
        if not (got.undecided or want.undecided):
            assert got.free == want.free
        if not (got.free or got.undecided):
            assert ck.distance(a, b, got.pose_a, got.pose_b).distance <= 0.01


@pytest.mark.slow
@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("kind", OTHER_KINDS)
def test_every_query_on_every_kind_interlocking_rings(query, kind):
    a, b, pa, pb = _ring_pair()
    ka, kb = _with_kind(a, b, kind)
    QUERIES[query](ka, kb, pa, pb, (a, b, pa, pb))


# -- shape kinds: every query on every pair of shape kinds --------------------------------
from collisionkit.query.shapes import UNSUPPORTED, pair_kind  # noqa: E402

SHAPES = {
    "Mesh": lambda: ck.primitives.uv_sphere_mesh(0.45, 8, 12),
    "Convex": lambda: ck.Convex.from_points(np.random.default_rng(0).normal(size=(30, 3)) * 0.3),
    "Box": lambda: ck.Box([0.4, 0.3, 0.5]),
    "Sphere": lambda: ck.Sphere(0.4),
    "Capsule": lambda: ck.Capsule(0.2, 0.6),
    "Cylinder": lambda: ck.Cylinder(0.3, 0.6),
}
# b along +x from a: deep overlap, shallow overlap, near miss, far; a small rotation keeps it generic
_ROT = ck.rotation([0.3, 1.0, 0.2], 0.4)
POSES_B = np.stack([ck.translation([x, 0.05, 0.0]) @ _ROT for x in (0.1, 0.55, 1.3, 3.0)])


def _answer(query, a, b):
    """Run ``query`` on the pose batch; return per-pose booleans "the shapes meet" as the query sees it."""
    if query == "intersects":
        return np.asarray(ck.intersects(a, b, None, POSES_B))
    if query == "contacts":
        return np.bincount(ck.contacts(a, b, None, POSES_B).pose_index, minlength=len(POSES_B)) > 0
    if query == "query_stats":
        return ck.query_stats(a, b, None, POSES_B).colliding
    if query == "distance":
        return ck.distance(a, b, None, POSES_B).distance == 0.0
    if query == "classify":
        return ck.classify(a, b, None, POSES_B).codes != 0
    if query == "penetration":
        return ck.penetration(a, b, None, POSES_B).depth > 0.0
    if query == "surface_contacts":
        return np.bincount(ck.surface_contacts(a, b, None, POSES_B).pose_index, minlength=len(POSES_B)) > 0
    if query == "node_visits":
        v = ck.node_visits(a, b, None, POSES_B)  # counters of the R-tree walks, not an answer
        assert v.visits_a.sum() > 0 and v.visits_a.min() >= 0, v
        return None
    if query == "check_motion":
        # b sweeps through a: not free, a witness the exact test confirms, before a's centre
        r = ck.check_motion(a, b, start_b=ck.translation([-3.0, 0, 0]), end_b=ck.translation([3.0, 0, 0]))
        assert not r.free and r.t_free <= r.t_witness < 0.5
        assert ck.intersects(a, b, r.pose_a, r.pose_b)
        return None
    if query == "time_of_impact":
        # b sweeps through a: a hit, at a time when b has not yet passed a's centre
        r = ck.time_of_impact(a, b, None, None, ck.translation([-3.0, 0, 0]), ck.translation([3.0, 0, 0]))
        assert r.colliding and 0.0 < r.t < 0.5
        return None
    raise AssertionError(query)


SHAPE_QUERIES = [
    "intersects", "contacts", "query_stats", "distance", "classify", "penetration",
    "time_of_impact", "check_motion", "surface_contacts", "node_visits",
]  # fmt: skip


@pytest.mark.parametrize("kind_a", sorted(SHAPES))
@pytest.mark.parametrize("query", SHAPE_QUERIES)
def test_every_query_answers_every_shape_pair_or_refuses_as_listed(query, kind_a):
    a = SHAPES[kind_a]()
    for kind_b, make_b in SHAPES.items():
        b = make_b()
        if (query, pair_kind(a, b)) in UNSUPPORTED:
            with pytest.raises(ck.UnsupportedQueryError, match=query):
                _answer(query, a, b)
            continue
        met = _answer(query, a, b)
        if met is None:
            continue
        hit = np.asarray(ck.intersects(a, b, None, POSES_B))
        assert hit[0] and not hit[3], (kind_a, kind_b, hit)
        if query in ("intersects", "query_stats", "distance", "classify"):
            # the same answer to "do they meet" as intersects (solids: containment counts)
            np.testing.assert_array_equal(met, hit, err_msg=f"{query} {kind_a}-{kind_b}")
        else:
            # triangle rows and depths exist only where the shapes meet
            assert not np.any(met & ~hit), (query, kind_a, kind_b, met, hit)


def test_unsupported_cells_are_the_readme_table():
    """The README's table lists exactly the refused cells, each with its reason."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    start = readme.index("### Which query answers which shapes")
    table = readme[start : readme.index("\n\n", readme.index("|", start))]
    rows = [line for line in table.splitlines() if line.startswith("|")]
    refused = {line.split("|")[1].strip().strip("`") for line in rows if "refused" in line}
    assert refused == {q for q, _ in UNSUPPORTED}
