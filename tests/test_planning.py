"""collisionkit.planning: the OMPL adapter (state validity, certified motions, plan)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import collisionkit as ck

pytest.importorskip("ompl")
from collisionkit import planning  # noqa: E402


@pytest.fixture(scope="module")
def table_and_post():
    world = ck.World()
    world.add("table", ck.primitives.box_mesh([1.2, 1.2, 0.04]), ck.translation([0.5, 0, -0.03]))
    world.add("post", ck.primitives.box_mesh([0.1, 0.1, 0.8]), ck.translation([0.45, 0.0, 0.4]))
    return world


START = np.array([-1.2, 0.3, 0, -2.0, 0, 2.2, 0.8, 0.02])
GOAL = np.array([1.2, 0.3, 0, -2.0, 0, 2.2, 0.8, 0.02])


def _state(si, x):
    s = si.getStateSpace().allocState()
    for i, v in enumerate(x):
        s[i] = float(v)
    return s


def test_setup_plans_the_named_joints_and_holds_the_rest(panda, table_and_post):
    setup = planning.planning_setup(panda, table_and_post, joints=panda.joint_names[:7], hold=START)
    assert setup.joints == panda.joint_names[:7]
    assert setup.hold[7] == START[7]
    q = setup.full(np.arange(7) * 0.1)
    assert np.array_equal(q[:7], np.arange(7) * 0.1) and q[7] == START[7]
    assert np.array_equal(setup.bounds, panda.limits[:7])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"joints": ["nope"]}, "no actuated joint"),
        ({"joints": "panda_joint1"}, "not one string"),
        ({"joints": ["panda_joint1", "panda_joint1"]}, "twice"),
        ({"joints": []}, "empty"),
        ({"hold": np.zeros(3)}, "shape"),
        ({"hold": np.full(8, np.nan)}, "non-finite"),
        ({"hold": np.zeros(8) + 0j}, "complex"),
        ({"hold": {"nope": 1.0}}, "unknown joint"),
        ({"margin": -0.1}, ">= 0"),
        ({"margin": float("nan")}, ">= 0"),
    ],
)
def test_setup_refuses_bad_problems_clearly(panda, kwargs, match):
    with pytest.raises(ValueError, match=match):
        planning.planning_setup(panda, None, **kwargs)


def test_state_validity_equals_robot_check(panda, table_and_post):
    setup = planning.planning_setup(panda, table_and_post, joints=panda.joint_names[:7], hold=START)
    si = planning.space_information(setup, certified_motions=False)
    try:
        rng = np.random.default_rng(7)
        lo, hi = setup.bounds[:, 0], setup.bounds[:, 1]
        xs = lo + (hi - lo) * rng.random((200, 7))
        expect = ~panda.check(np.array([setup.full(x) for x in xs]), table_and_post)
        assert 20 < expect.sum() < 190  # both answers occur
        checker = si.getStateValidityChecker()
        got = np.array([checker.isValid(_state(si, x)) for x in xs])
        assert np.array_equal(got, expect)
        # several threads at once give the same answers
        with ThreadPoolExecutor(4) as pool:
            threaded = np.array(list(pool.map(lambda x: checker.isValid(_state(si, x)), xs)))
        assert np.array_equal(threaded, expect)
    finally:
        planning.release(si)


def test_plan_refuses_colliding_start_and_unknown_planner(panda, table_and_post):
    inside = START.copy()
    inside[:7] = 0.0
    inside[1] = 1.7  # the arm folded down through the table
    assert panda.check(inside, table_and_post)
    with pytest.raises(ValueError, match="start configuration is in collision"):
        planning.plan(panda, table_and_post, inside, GOAL, joints=panda.joint_names[:7])
    with pytest.raises(ValueError, match="no planner"):
        planning.plan(panda, table_and_post, START, GOAL, joints=panda.joint_names[:7], planner="Nope")
    other = GOAL.copy()
    other[7] = 0.03
    with pytest.raises(ValueError, match="not planned"):
        planning.plan(panda, table_and_post, START, other, joints=panda.joint_names[:7])


def test_plan_with_sampled_motions_finds_a_path_of_free_states(panda, table_and_post):
    r = planning.plan(
        panda, table_and_post, START, GOAL, joints=panda.joint_names[:7], timeout=20, certified_motions=False
    )
    assert r.solved
    assert np.array_equal(r.path[0], START) and np.allclose(r.path[-1], GOAL)
    assert np.all(r.path[:, 7] == START[7])
    assert not np.any(panda.check(r.path, table_and_post))


def test_motion_validator_is_the_certified_check(panda, table_and_post):
    setup = planning.planning_setup(panda, table_and_post, joints=panda.joint_names[:7], hold=START)
    si = planning.space_information(setup)
    try:
        validator = si.getMotionValidator()
        rng = np.random.default_rng(3)
        lo, hi = setup.bounds[:, 0], setup.bounds[:, 1]
        answers = []
        for _ in range(12):
            a, b = lo + (hi - lo) * rng.random(7), lo + (hi - lo) * rng.random(7)
            a = setup.planned(START) + 0.3 * (a - setup.planned(START))  # short edges near the start
            b = a + 0.3 * (b - a)
            expect = panda.check_motion(setup.full(a), setup.full(b), table_and_post).free
            assert validator.checkMotion(_state(si, a), _state(si, b)) == expect
            answers.append(expect)
        assert any(answers)
    finally:
        planning.release(si)


def test_plan_with_certified_motions_holds_under_dense_sampling(panda, table_and_post):
    r = planning.plan(panda, table_and_post, START, GOAL, joints=panda.joint_names[:7], timeout=30, seed=2)
    assert r.solved and len(r.path) >= 2
    t = np.linspace(0.0, 1.0, 400)[:, None]
    for a, b in zip(r.path[:-1], r.path[1:], strict=True):
        assert panda.check_motion(a, b, table_and_post).free
        assert not np.any(panda.check(a + t * (b - a), table_and_post))
