"""One registry for every query (ISSUE 14 step 3).

Handlers are found by (query, shape kind a, shape kind b), receive one request
record with every option of the query, and declare the options they honour;
setting any other option raises ``UnsupportedOptionError`` naming it. Here every
option is set, one at a time, on every registered handler: an honoured option
must answer (and answer as the option says where that is checkable), any other
must be refused by name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collisionkit as ck
from collisionkit import Descent
from collisionkit.errors import UnsupportedOptionError, UnsupportedPairError, UnsupportedQueryError
from collisionkit.query import registry

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])
SHAPES = {
    ck.Mesh: BOX,
    ck.ConvexShape: ck.Box([1.0, 1.0, 1.0]),
}
# a shallow overlap (contacts, penetration) and a clear gap, as a two-pose batch
POSE_A = None
POSE_B = np.stack([ck.translation([0.9, 0.05, 0.02]), ck.translation([3.0, 0.0, 0.0])])

#: A non-default value per (query, option): what a caller would set.
NON_DEFAULT = {
    ("intersects", "margin"): 2.5,
    ("intersects", "strategy"): Descent(tri_test="moller"),
    ("intersects", "threads"): 1,
    ("contacts", "mode"): "first",
    ("contacts", "max_pairs"): 1,
    ("contacts", "strategy"): Descent(tri_test="moller"),
    ("contacts", "threads"): 1,
    ("query_stats", "mode"): "all",
    ("query_stats", "strategy"): Descent(tri_test="moller"),
    ("query_stats", "threads"): 1,
    ("distance", "upper_bound"): 1.5,
    ("distance", "threads"): 1,
    ("penetration", "method"): "sampled",
    ("penetration", "directions"): 8,
    ("penetration", "refine"): True,
    ("penetration", "threads"): 1,
    ("classify", "tolerance"): 0.5,
    ("classify", "threads"): 1,
    ("time_of_impact", "motion"): "screw",
    ("time_of_impact", "tolerance"): 1e-3,
    ("time_of_impact", "max_iterations"): 1,
    ("time_of_impact", "threads"): 1,
    ("check_motion", "motion"): "screw",
    ("check_motion", "margin"): 0.5,
    ("check_motion", "threads"): 1,
    ("surface_contacts", "mode"): "first",
    ("surface_contacts", "triangles"): True,
    ("surface_contacts", "strategy"): "descent",
    ("surface_contacts", "threads"): 1,
    ("node_visits", "mode"): "any",
    ("node_visits", "surfaces"): True,
    ("node_visits", "strategy"): ck.OAABB(use_overlap_box=False),
    ("node_visits", "threads"): 2,
}


def _call(query, a, b, **options):
    if query == "time_of_impact":
        start_b, end_b = ck.translation([3.0, 0.2, 0.0]), ck.translation([-3.0, 0.2, 0.0])
        return ck.time_of_impact(a, b, None, None, start_b, end_b, **options)
    if query == "check_motion":
        start_b, end_b = ck.translation([3.0, 0.2, 0.0]), ck.translation([-3.0, 0.2, 0.0])
        return ck.check_motion(a, b, start_b=start_b, end_b=end_b, **options)
    return getattr(ck, query)(a, b, POSE_A, POSE_B, **options)


def test_every_option_has_a_value_here():
    want = {(q, o) for q, opts in registry.QUERY_OPTIONS.items() for o in opts}
    assert want == set(NON_DEFAULT)


def _answering_cells():
    for h in registry.handlers():
        if h.fn is None or h.type_a not in SHAPES or h.type_b not in SHAPES:
            continue
        for option in registry.QUERY_OPTIONS[h.query]:
            yield pytest.param(h, option, id=f"{h.query}-{h.type_a.__name__}-{h.type_b.__name__}-{option}")


@pytest.mark.parametrize(("handler", "option"), list(_answering_cells()))
def test_every_option_on_every_handler(handler, option):
    a, b = SHAPES[handler.type_a], SHAPES[handler.type_b]
    assert registry.find(handler.query, a, b) is handler
    value = NON_DEFAULT[(handler.query, option)]
    if option not in handler.honours:
        with pytest.raises(UnsupportedOptionError, match=option):
            _call(handler.query, a, b, **{option: value})
        return
    got = _call(handler.query, a, b, **{option: value})
    _check_honoured(handler.query, option, value, got, a, b)


def _check_honoured(query, option, value, got, a, b):
    """Where the option's effect is visible in the answer, see it."""
    if (query, option) == ("distance", "upper_bound"):
        # the gap is 2.0: beyond the bound it reads inf; the overlap still 0
        np.testing.assert_array_equal(got.distance, [0.0, math.inf])
    elif (query, option) == ("contacts", "max_pairs"):
        assert got.counts[0] == 1 and bool(got.truncated[0])
    elif (query, option) == ("contacts", "mode"):
        assert got.counts.tolist() == [1, 0]
    elif (query, option) == ("query_stats", "mode"):
        assert got.tri_tests[0] >= 1
    elif (query, option) == ("classify", "tolerance"):
        assert got.labels.tolist() == ["penetrating", "disjoint"]  # gap 2.0 > 0.5
    elif (query, option) == ("penetration", "method"):
        assert got.method[0] == "sampled" and got.depth[0] > 0
    elif (query, option) == ("time_of_impact", "max_iterations"):
        assert not got.converged
    elif (query, option) == ("check_motion", "margin"):
        assert not got.free and got.distance <= value
    elif (query, option) == ("surface_contacts", "triangles"):
        assert got.triangles is not None
    elif (query, option) == ("intersects", "margin"):
        np.testing.assert_array_equal(got, [True, True])  # the gap of 2.0 is within 2.5
    elif query in ("intersects",):
        np.testing.assert_array_equal(got, [True, False])


def test_refused_cells_name_the_reason():
    sphere = ck.Sphere(0.5)
    for query in ("classify", "time_of_impact", "check_motion"):
        h = registry.find(query, sphere, ck.Box([1.0, 1.0, 1.0]))
        assert h.fn is None and h.reason
        with pytest.raises(UnsupportedQueryError, match=query):
            _call(query, sphere, ck.Box([1.0, 1.0, 1.0]))


def test_unknown_shape_is_an_unsupported_pair():
    with pytest.raises(UnsupportedPairError, match="distance is not implemented for str and Mesh"):
        ck.distance("box", BOX)


class _Ball:
    """A shape kind registered from outside, honouring only ``threads``."""

    def __init__(self, r):
        self.r = r


def _ball_distance(req):
    ca, cb = req.pa[req.ia, :3, 3], req.pb[req.ib, :3, 3]
    d = np.maximum(np.linalg.norm(ca - cb, axis=1) - req.a.r - req.b.r, 0.0)
    return d if req.batched else float(d[0])


@pytest.fixture
def ball_handler():
    h = registry.register("distance", _Ball, _Ball, _ball_distance, honours=("threads",))
    yield h
    registry._HANDLERS["distance"].remove(h)
    registry._CACHE.clear()


def test_option_not_honoured_is_refused_by_name(ball_handler):
    a, b = _Ball(1.0), _Ball(1.0)
    assert ck.distance(a, b, None, ck.translation([5.0, 0, 0]), threads=1) == 3.0
    with pytest.raises(UnsupportedOptionError, match=r"upper_bound=2\.0.*supported here: threads"):
        ck.distance(a, b, None, ck.translation([5.0, 0, 0]), upper_bound=2.0)
    # the default value is not "set": it passes
    assert ck.distance(a, b, None, ck.translation([5.0, 0, 0]), upper_bound=math.inf) == 3.0


def test_register_rejects_options_the_query_does_not_have():
    with pytest.raises(ValueError, match="no options"):
        registry.register("distance", _Ball, _Ball, _ball_distance, honours=("tolerance",))
