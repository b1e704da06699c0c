"""Motion planning with OMPL on the exact meshes: a state validity checker, a certified
motion validator and a one-call ``plan`` (extra ``collisionkit[planning]``, which installs
OMPL's Python wheels).

A planner asks two questions millions of times, one at a time: is this configuration free
(``StateValidityChecker.isValid``, answered by ``Robot.check``: one compiled call on the
robot and world prepared once) and is this edge free (``MotionValidator.checkMotion``,
answered by ``Robot.check_motion``: certified on the whole straight joint-space segment, not
sampled at a resolution, so a plan never steps over a thin plate between two samples).

>>> import collisionkit as ck                                      # doctest: +SKIP
>>> from collisionkit.planning import plan                          # doctest: +SKIP
>>> result = plan(panda, world, q_start, q_goal, joints=panda.joint_names[:7])  # doctest: +SKIP
>>> result.solved, result.path.shape                                # doctest: +SKIP
(True, (12, 9))

Planned joints and held joints: a planner often plans the 7 arm joints of a 9-dof Panda
(its fingers held). ``joints`` names the planned joints (default: every actuated joint);
the others are held at ``hold`` (a full (dof,) configuration, or a {joint: value} dict;
default 0 clipped into each joint's limits). OMPL's state space is the planned joints with
their limits as bounds (a joint with an infinite limit gets [-pi, pi] for a continuous joint;
anything else infinite is refused: OMPL samples within finite bounds).

What OMPL's Python bindings do not let Python override (OMPL 2.0.1): ``MotionValidator``'s
``checkMotion(s1, s2, lastValid)`` form. Python overrides ``checkMotion(s1, s2)`` only; the
planners that call the lastValid form (KPIECE1 and its relatives) then get no valid prefix
from Python. Use RRTConnect, RRT, PRM, RRT*, BIT*... (which call the boolean form), or call
``Robot.check_motion`` yourself: its ``t_free`` is OMPL's ``lastValid.second`` (the largest
certified-free fraction of the segment).

Thread safety: the callbacks hold no per-call state of their own (each call builds its own
configuration vector) and ``Robot.check`` / ``Robot.check_motion`` are safe to call from
several threads, so OMPL's multi-threaded planners may call them at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

_OMPL: dict[str, Any] = {}


def _ompl() -> tuple[Any, Any]:
    """(ompl.base, ompl.geometric), imported on first use with a clear error when missing."""
    if not _OMPL:
        try:
            from ompl import base as ob
            from ompl import geometric as og
        except ImportError as e:  # pragma: no cover - the message is what matters
            raise ImportError(
                "collisionkit.planning needs OMPL's Python bindings: pip install 'collisionkit[planning]' "
                f"(or pip install ompl); importing it failed: {e}"
            ) from e
        from ompl import util as ou

        # NOTE: OMPL logs every solve at Info/Debug on stderr; a library quiets that to
        # warnings once, on first use (ompl.util.setLogLevel turns it back up)
        ou.setLogLevel(ou.LOG_WARN)
        _OMPL["base"], _OMPL["geometric"] = ob, og
        _OMPL["classes"] = _define_classes(ob)
    return _OMPL["base"], _OMPL["geometric"]


@dataclass(frozen=True)
class PlanningSetup:
    """What a planning problem checks: the robot, the world, which joints are planned and the
    check's options. Built by ``planning_setup`` (validated); the OMPL objects read it.

    Attributes
    ----------
    robot : Robot
    world : World or None
    joints : tuple of str
        The planned joints, in the order of OMPL's state vector.
    indices : (k,) int64
        Their slots in ``robot.joint_names``.
    hold : (dof,) float64
        The full configuration the planned values are written into (held joints keep theirs).
    bounds : (k, 2) float64
        OMPL's state-space bounds per planned joint.
    options : dict
        Keyword options passed to ``Robot.check`` and ``Robot.check_motion`` (``margin``,
        ``self_collision``, ``allowed``, ``ignore``, ``base``).
    """

    robot: Any
    world: Any
    joints: tuple[str, ...]
    indices: NDArray[np.int64]
    hold: NDArray[np.float64]
    bounds: NDArray[np.float64]
    options: dict[str, Any] = field(default_factory=dict)

    def full(self, x: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
        """The (dof,) configuration for planned values ``x`` ((k,)), held joints at ``hold``."""
        q = self.hold.copy()
        q[self.indices] = x
        return q

    def planned(self, q: ArrayLike) -> NDArray[np.float64]:
        """The planned joints' values (k,) of a full (dof,) configuration."""
        qa = _configuration(self.robot, q, "q")
        return qa[self.indices]


def planning_setup(
    robot: Any,
    world: Any = None,
    *,
    joints: Iterable[str] | None = None,
    hold: ArrayLike | Mapping[str, float] | None = None,
    margin: float = 0.0,
    self_collision: bool = True,
    allowed: Iterable[tuple[str, str]] = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
) -> PlanningSetup:
    """Validate a planning problem's robot, joints and options (see the module docstring).

    Raises ``ValueError`` naming the problem: unknown or repeated joint names, a ``hold`` of
    the wrong size or non-finite, an unbounded non-continuous joint, a negative or non-finite
    margin.
    """
    names = tuple(robot.joint_names)
    if joints is None:
        planned = names
    else:
        if isinstance(joints, str):
            raise ValueError("joints must be a list of joint names, not one string")
        planned = tuple(joints)
        unknown = [j for j in planned if j not in names]
        if unknown:
            raise ValueError(f"robot {robot.name!r} has no actuated joint(s) {unknown}; its joints: {list(names)}")
        if len(set(planned)) != len(planned):
            raise ValueError(f"joints names a joint twice: {list(planned)}")
        if not planned:
            raise ValueError("joints is empty: nothing to plan")
    indices = np.array([names.index(j) for j in planned], dtype=np.int64)
    limits = np.asarray(robot.limits, dtype=np.float64)
    if hold is None:
        q_hold = np.clip(0.0, limits[:, 0], limits[:, 1]).astype(np.float64)
    elif isinstance(hold, Mapping):
        q_hold = np.clip(0.0, limits[:, 0], limits[:, 1]).astype(np.float64)
        unknown = [j for j in hold if j not in names]
        if unknown:
            raise ValueError(f"hold names unknown joint(s) {unknown}")
        for j, v in hold.items():
            q_hold[names.index(j)] = float(v)
    else:
        q_hold = _configuration(robot, hold, "hold").copy()
    if not np.all(np.isfinite(q_hold)):
        raise ValueError("hold values must be finite")
    bounds = limits[indices].copy()
    by_name = {j.name: j for j in robot.joints}
    for k, j in enumerate(planned):
        lo, hi = bounds[k]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            if by_name[j].type != "continuous":
                raise ValueError(f"joint {j!r} has an infinite limit: OMPL needs finite bounds to sample")
            bounds[k] = (-math.pi, math.pi)
    margin = _margin(margin)
    options: dict[str, Any] = {
        "self_collision": bool(self_collision),
        "allowed": tuple(allowed),
        "ignore": tuple(ignore),
        "base": None if base is None else np.asarray(base, dtype=np.float64),
    }
    if margin > 0:
        options["margin"] = margin
    # validate the options once, here, with the real check (unknown links, bad base...)
    robot.check(q_hold, world, **options)
    return PlanningSetup(robot, world, planned, indices, q_hold, bounds, options)


def _margin(margin: float) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float, np.floating, np.integer)):
        raise TypeError(f"margin must be a number, got {type(margin).__name__}")
    m = float(margin)
    if not math.isfinite(m) or m < 0:
        raise ValueError(f"margin must be finite and >= 0, got {margin!r}")
    return m


def _configuration(robot: Any, q: ArrayLike, what: str) -> NDArray[np.float64]:
    qa = np.asarray(q)
    if np.iscomplexobj(qa):
        raise ValueError(f"{what} must be real, got complex values")
    qa = qa.astype(np.float64)
    if qa.shape != (robot.dof,):
        raise ValueError(f"{what} must have shape ({robot.dof},), got {qa.shape}")
    if not np.all(np.isfinite(qa)):
        raise ValueError(f"{what} holds non-finite values")
    return qa


def _values(state: Any, k: int) -> list[float]:
    # PERF: k item reads through the binding (~0.1 us each); no numpy round trip
    return [state[i] for i in range(k)]


def _define_classes(ob: Any) -> dict[str, type]:
    """The OMPL subclasses, defined once OMPL is imported (their bases come from it)."""

    class StateValidityChecker(ob.StateValidityChecker):
        """``isValid``: within the bounds and ``Robot.check`` finds no contact (within the
        margin); ``clearance``: ``Robot.clearance``'s distance."""

        def __init__(self, si: Any, setup: PlanningSetup) -> None:
            super().__init__(si)
            self.setup = setup
            self._k = len(setup.joints)

        def isValid(self, state: Any) -> bool:  # noqa: N802 (OMPL's name)
            s = self.setup
            return not s.robot.check(s.full(_values(state, self._k)), s.world, **s.options)

        def clearance(self, state: Any) -> float:
            s = self.setup
            opts = {k: v for k, v in s.options.items() if k != "margin"}
            return float(s.robot.clearance(s.full(_values(state, self._k)), s.world, **opts).distance)

    class MotionValidator(ob.MotionValidator):
        """``checkMotion(s1, s2)``: the straight joint-space segment is certified free
        (``Robot.check_motion``), never sampled."""

        def __init__(self, si: Any, setup: PlanningSetup) -> None:
            super().__init__(si)
            self.setup = setup
            self._k = len(setup.joints)

        def checkMotion(self, s1: Any, s2: Any) -> bool:  # noqa: N802 (OMPL's name)
            s = self.setup
            res = s.robot.check_motion(s.full(_values(s1, self._k)), s.full(_values(s2, self._k)), s.world, **s.options)
            return bool(res.free)

    return {"StateValidityChecker": StateValidityChecker, "MotionValidator": MotionValidator}


def space_information(setup: PlanningSetup, *, certified_motions: bool = True) -> Any:
    """An OMPL ``SpaceInformation`` for ``setup``: a ``RealVectorStateSpace`` over the planned
    joints (their limits as bounds), the state validity checker and, unless
    ``certified_motions=False`` (OMPL's own sampled ``DiscreteMotionValidator`` then), the
    certified motion validator. Already ``setup()``.

    The validator objects are kept alive on the returned object's Python side
    (``si._collisionkit``): OMPL holds them by reference only.
    """
    ob, _ = _ompl()
    classes = _OMPL["classes"]
    k = len(setup.joints)
    space = ob.RealVectorStateSpace(k)
    b = ob.RealVectorBounds(k)
    for i, (lo, hi) in enumerate(setup.bounds):
        b.setLow(i, float(lo))
        b.setHigh(i, float(hi))
    space.setBounds(b)
    for i, name in enumerate(setup.joints):
        space.setDimensionName(i, name)
    si = ob.SpaceInformation(space)
    checker = classes["StateValidityChecker"](si, setup)
    si.setStateValidityChecker(checker)
    keep = [space, checker]
    if certified_motions:
        motion = classes["MotionValidator"](si, setup)
        si.setMotionValidator(motion)
        keep.append(motion)
    si.setup()
    _KEEP_ALIVE[id(si)] = (si, keep)
    return si


# NOTE: nanobind objects take no new attributes; the Python validators must outlive the
# SpaceInformation that calls them, so each is kept here with its owner (a planning session
# makes a handful; ``release`` drops them).
_KEEP_ALIVE: dict[int, tuple[Any, list[Any]]] = {}


def release(si: Any) -> None:
    """Drop collisionkit's references to the objects of ``si`` (made by ``space_information``)."""
    _KEEP_ALIVE.pop(id(si), None)


@dataclass(frozen=True)
class PlanResult:
    """What ``plan`` found.

    Attributes
    ----------
    solved : bool
        An exact solution was found (approximate solutions count as not solved).
    path : (K, dof) float64
        The full configurations of the path, start to goal (empty (0, dof) when not solved);
        every edge certified free by ``Robot.check_motion`` when the motion validator is the
        certified one.
    planned_path : (K, k) float64
        The same path in the planned joints only.
    seconds : float
        Wall time of OMPL's solve (and simplification).
    planner : str
    """

    solved: bool
    path: NDArray[np.float64]
    planned_path: NDArray[np.float64]
    seconds: float
    planner: str


def plan(
    robot: Any,
    world: Any,
    start: ArrayLike,
    goal: ArrayLike,
    *,
    planner: str = "RRTConnect",
    timeout: float = 5.0,
    simplify: bool = False,
    certified_motions: bool = True,
    seed: int | None = None,
    joints: Iterable[str] | None = None,
    hold: ArrayLike | Mapping[str, float] | None = None,
    margin: float = 0.0,
    self_collision: bool = True,
    allowed: Iterable[tuple[str, str]] = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
) -> PlanResult:
    """Plan from ``start`` to ``goal`` (full (dof,) configurations) with an OMPL planner.

    Parameters
    ----------
    robot, world
        The robot and its obstacles.
    start, goal : (dof,)
        Full configurations (held joints take their values from ``start`` unless ``hold`` is
        given).
    planner : str
        The name of a geometric planner in ``ompl.geometric`` ("RRTConnect", "RRT", "PRM",
        "RRTstar", "BITstar", ...).
    timeout : float
        Seconds OMPL may search.
    simplify : bool
        Shortcut the path with OMPL's ``PathSimplifier`` (its shortcuts are checked by the
        same validators).
    certified_motions : bool
        Certified edges (default); False uses OMPL's sampled ``DiscreteMotionValidator``.
    seed : int, optional
        OMPL's random seed (``ompl.util.RNG.setSeed``; it is process-wide and can be set
        once per process, before the first sampler exists).
    joints, hold, margin, self_collision, allowed, ignore, base
        As for ``planning_setup`` (``hold`` default: the held joints' values in ``start``).

    Raises
    ------
    ValueError
        Bad configurations or options, or a start or goal in collision (naming which).
    """
    ob, og = _ompl()
    q0 = _configuration(robot, start, "start")
    q1 = _configuration(robot, goal, "goal")
    held_by_start = hold is None
    setup = planning_setup(
        robot, world, joints=joints, hold=q0 if held_by_start else hold, margin=margin, self_collision=self_collision,
        allowed=allowed, ignore=ignore, base=base,
    )  # fmt: skip
    held = np.delete(np.arange(robot.dof), setup.indices)
    if held_by_start and not np.array_equal(q0[held], q1[held]):
        names = [robot.joint_names[i] for i in held if q0[i] != q1[i]]
        raise ValueError(f"start and goal differ in joints that are not planned: {names}")
    q0, q1 = setup.full(q0[setup.indices]), setup.full(q1[setup.indices])
    for name, q in (("start", q0), ("goal", q1)):
        if robot.check(q, world, **setup.options):
            raise ValueError(f"the {name} configuration is in collision")
    if seed is not None:
        from ompl import util as ou

        ou.RNG.setSeed(int(seed))
    Planner = getattr(og, planner, None)
    if Planner is None:
        raise ValueError(f"ompl.geometric has no planner {planner!r} (try RRTConnect, RRT, PRM, RRTstar, BITstar)")
    si = space_information(setup, certified_motions=certified_motions)
    try:
        space = si.getStateSpace()
        s0, s1 = space.allocState(), space.allocState()
        for i, (a, b) in enumerate(zip(setup.planned(q0), setup.planned(q1), strict=True)):
            s0[i] = float(a)
            s1[i] = float(b)
        pdef = ob.ProblemDefinition(si)
        pdef.setStartAndGoalStates(s0, s1)
        p = Planner(si)
        p.setProblemDefinition(pdef)
        p.setup()
        t0 = time.perf_counter()
        status = p.solve(float(timeout))
        solved = bool(pdef.hasExactSolution()) and bool(status)
        k = len(setup.joints)
        if solved:
            path = pdef.getSolutionPath()
            if simplify:
                og.PathSimplifier(si).simplifyMax(path)
            xs = np.array([_values(path.getState(i), k) for i in range(path.getStateCount())], dtype=np.float64)
        else:
            xs = np.zeros((0, k))
        seconds = time.perf_counter() - t0
    finally:
        release(si)
    full = np.repeat(setup.hold[None, :], len(xs), axis=0)
    full[:, setup.indices] = xs
    return PlanResult(solved, full, xs, seconds, planner)
