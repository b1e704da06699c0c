"""``Robot.check_motion``'s compiled edge search (``kernels/robot/edge.py``) against its
reference, ``robot.motion._search`` (the bisection written in Python): on random edges of the
Panda among box meshes, with and without self-collision, margins and padding.

With exact distances (``motion.EDGE_SHRINK = 1.0``) every field of the answer is equal (free,
t_free, the witness and its t, undecided) and so is the work (segments, distance calls): the
two take the same steps. With the default relative-error distances (``EDGE_SHRINK`` < 1: the
certified lower bounds of a cheaper descent) the search takes other steps, so t_free and the
witness may differ: the answers are compared with the certified semantics instead (every free
edge free at dense exact samples, every certified prefix free, every witness confirmed, and
the same free / colliding verdict as the reference wherever both decided).
"""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.robot import motion


def _scene():
    w = ck.World()
    box = ck.primitives.box_mesh
    w.add("table", box([1.2, 1.6, 0.04]), ck.translation([0.75, 0, -0.03]))
    w.add("shelf", box([0.3, 0.8, 0.02]), ck.translation([0.6, 0, 0.5]))
    w.add("post", box([0.08, 0.08, 0.8]), ck.translation([0.5, 0.5, 0.4]))
    w.add("plate", box([0.4, 0.002, 0.4]), ck.translation([0.45, -0.35, 0.35]))
    return w


FIELDS = ("free", "t_free", "t_witness", "undecided", "segments", "distance_calls")


def _edges(robot, world, n, seed):
    rng = np.random.default_rng(seed)
    q0 = robot.random_configurations(n, seed=seed)
    step = rng.normal(size=q0.shape)
    step *= rng.uniform(0.05, 1.5, (n, 1)) / np.linalg.norm(step, axis=1, keepdims=True)
    q1 = np.clip(q0 + step, robot.limits[:, 0], robot.limits[:, 1])
    return q0, q1


def _both(monkeypatch, robot, q0, q1, world, **kw):
    monkeypatch.setattr(motion, "COMPILED_SEARCH", True)
    fast = robot.check_motion(q0, q1, world, **kw)
    monkeypatch.setattr(motion, "COMPILED_SEARCH", False)
    ref = robot.check_motion(q0, q1, world, **kw)
    return fast, ref


@pytest.mark.parametrize(
    ("self_collision", "margin", "padded"),
    [(False, 0.0, False), (True, 0.0, False), (True, 0.02, False), (False, 0.0, True)],
)
def test_compiled_search_equals_the_reference(monkeypatch, panda, self_collision, margin, padded):
    monkeypatch.setattr(motion, "EDGE_SHRINK", 1.0)
    robot = panda.with_padding({"panda_hand": 0.03, "panda_link5": 0.01}) if padded else panda
    world = _scene()
    q0, q1 = _edges(panda, world, 40, seed=3 + int(10 * margin) + int(self_collision) + 7 * int(padded))
    fast, ref = _both(monkeypatch, robot, q0, q1, world, self_collision=self_collision, margin=margin)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(fast, f), getattr(ref, f), err_msg=f)
    np.testing.assert_array_equal(fast.witness, ref.witness)
    # not vacuous: both answers occur, and the edges took work
    assert fast.free.any() and (~fast.free & ~fast.undecided).any()
    assert fast.segments.sum() > 2 * len(q0)
    assert fast.segments.max() > 16  # points past the 16 the search allocates first: its grown arrays


def _samples_collide(robot, world, q0, q1, t1, n, **kw):
    """Whether any of n exact samples of the segment's part [0, t1] collides."""
    t = np.linspace(0.0, t1, n)
    Q = q0 + t[:, None] * (q1 - q0)
    return bool(np.any(robot.check(Q, world, **kw)))


@pytest.mark.parametrize(
    ("self_collision", "margin", "padded"),
    [(False, 0.0, False), (True, 0.0, False), (True, 0.02, False), (False, 0.0, True)],
)
@pytest.mark.parametrize("shrink", [0.5, 0.1])
def test_relative_error_search_is_certified(monkeypatch, panda, self_collision, margin, padded, shrink):
    """The default search (relative-error distances, certified lower bounds) against the
    certified semantics: dense exact samples, confirmed witnesses, the reference's verdicts."""
    robot = panda.with_padding({"panda_hand": 0.03, "panda_link5": 0.01}) if padded else panda
    world = _scene()
    q0, q1 = _edges(panda, world, 40, seed=3 + int(10 * margin) + int(self_collision) + 7 * int(padded))
    monkeypatch.setattr(motion, "EDGE_SHRINK", shrink)
    kw = {"self_collision": self_collision, "margin": margin}
    fast, ref = _both(monkeypatch, robot, q0, q1, world, **kw)
    assert not fast.undecided.any()
    decided = ~ref.undecided
    np.testing.assert_array_equal(fast.free[decided], ref.free[decided])
    assert fast.free.any() and (~fast.free).any()
    for k in range(len(q0)):
        if fast.free[k]:
            assert fast.t_free[k] == 1.0 and np.isnan(fast.witness[k]).all()
            assert not _samples_collide(robot, world, q0[k], q1[k], 1.0, 2000, **kw), k
            continue
        assert 0.0 <= fast.t_free[k] <= fast.t_witness[k] <= 1.0
        if fast.t_free[k] > 0.0:
            assert not _samples_collide(robot, world, q0[k], q1[k], fast.t_free[k], 400, **kw), k
        w = q0[k] + fast.t_witness[k] * (q1[k] - q0[k])
        np.testing.assert_allclose(fast.witness[k], w)
        assert _samples_collide(robot, world, w, w, 0.0, 1, **kw), k


def test_the_kernel_answers_every_mesh_edge(monkeypatch, panda):
    """The compiled path runs (no fallback) on a mesh-only world; a convex obstacle sends the
    edge to the reference."""
    monkeypatch.setattr(motion, "EDGE_SHRINK", 1.0)
    world = _scene()
    q0, q1 = _edges(panda, world, 6, seed=1)
    ps = motion._pair_set(panda, world, self_collision=True, allowed=(), ignore=(), base=None)
    from collisionkit.robot.travel import entry_travel, pair_masks, sum_terms

    travel = sum_terms(entry_travel(panda, q0, q1), pair_masks(panda, ps.a, ps.b))
    for k in range(len(q0)):
        got = motion._search_compiled(motion._Edge(ps, q0[k], q1[k], travel[k]))
        assert got is not None
        edge = motion._Edge(ps, q0[k], q1[k], travel[k])
        want = motion._search(edge, np.arange(ps.n, dtype=np.int64))
        assert got[:5] == (*want, edge.calls)
        # the witness is the configuration measured at t_hit, as the reference computes it
        if want[1] < np.inf:
            np.testing.assert_array_equal(got[5], edge.q(want[1]))
        else:
            assert got[5] is None
    convex = _scene()
    convex.add("ball", ck.Sphere(0.1), ck.translation([0.4, 0.0, 0.7]))
    res = panda.check_motion(q0, q1, convex)
    ref = panda.check_motion(q0, q1, world)
    assert (res.free <= ref.free).all()  # one more obstacle: never freer


def test_single_edge_and_identical_ends(panda):
    world = _scene()
    q = np.array([0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4, 0.04])
    one = panda.check_motion(q, q, world)
    assert one.free and one.t_free == 1.0 and one.witness is None


def test_proximity_queries_do_not_order_the_checker_and_answer_the_same_either_way(panda):
    """``Robot.clearance`` and ``check_motion`` read the prepared checker's arrays in any order,
    so they leave its pair ordering (which runs the collision kernel: its whole compile from
    an empty cache) to the first check. Their answers must not depend on whether the check
    came first, nor on the ordering happening after they took the arrays (their pair set
    keeps the old arrays, a new pair set takes the ordered ones)."""
    from collisionkit.robot.checker import checker_for

    q0, q1 = _edges(panda, _scene(), 10, seed=5)
    qs = panda.random_configurations(64, seed=3)

    def answers(world):
        clear = np.array([panda.clearance(q, world).distance for q in q0[:4]])
        edges = panda.check_motion(q0, q1, world, margin=0.01)
        return clear, edges

    checked_first = _scene()
    hits = panda.check(qs, checked_first)
    assert not checker_for(panda, checked_first, {})._order_pending
    want_clear, want_edges = answers(checked_first)

    later = _scene()
    chk = checker_for(panda, later, {})
    unordered = chk._pairs.copy()
    got_before = answers(later)
    assert chk._order_pending  # neither query ordered the pairs
    np.testing.assert_array_equal(panda.check(qs, later), hits)
    assert not chk._order_pending
    assert not np.array_equal(chk._pairs, unordered)  # the ordering moved pairs: the case under test
    got_after = answers(later)  # the pair sets made before the ordering
    edges_new = panda.check_motion(q0, q1, later, margin=0.02)  # a new pair set: the ordered arrays
    edges_ref = panda.check_motion(q0, q1, checked_first, margin=0.02)
    for clear, edges in (got_before, got_after):
        np.testing.assert_array_equal(clear, want_clear)
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(edges, f), getattr(want_edges, f), err_msg=f)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(edges_new, f), getattr(edges_ref, f), err_msg=f)
