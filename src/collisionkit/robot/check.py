"""The per-pair path of robot checks: a batch of robot configurations against a World.

``Robot.check`` and ``check_detail`` run on the prepared checker (``robot/checker.py``: one
compiled call per configuration or batch); this module is its reference (the tests compare
every answer with it) and still answers the pairs the checker routes here (shapes that are not
meshes), and ``allowed_pairs_from_samples``.

``check_configurations(robot, q, world)`` answers, for N joint configurations,
whether any link touches any object of the world (and, with
``self_collision=True``, any other link of the robot itself, except the
robot's ``adjacent_pairs`` and ``allowed_pairs`` and the pairs allowed for
the call).

How: forward kinematics and every link's padded world box for the whole batch in one
kernel call (``Robot.poses_and_boxes``: each link's poses one contiguous block; the
boxes padded as the World's), box overlaps vectorised over links and configurations,
then one batched compiled query per (link, object) pair and per self-collision link pair
over the configurations whose boxes overlap and that are still collision-free (so a colliding configuration stops costing work once
one pair is found, unless per-link detail is asked for). Poses of world objects are
fixed during the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..query.pair import intersects
from ..query.pose_form import in_form, per_pose


@dataclass(frozen=True, eq=False)
class RobotCheck:
    """Result of ``Robot.check_detail``: which links and objects touch, per configuration.

    For a batch of N configurations the fields are as below; for one (dof,)
    configuration ``colliding`` is a bool, ``link_hits`` (L,) and the dict values bools.

    Attributes
    ----------
    colliding : (N,) bool
        Any contact per configuration.
    link_hits : (N, L) bool
        Per configuration, which links (``robot.links`` order) touch something.
    object_hits : dict[str, (N,) bool]
        Per world object, the configurations in which some link touches it.
    self_hits : dict[tuple[str, str], (N,) bool]
        Per self-collision link pair, the configurations in which it touches. For a robot
        whose checker sweeps its self pairs (``robot.checker.SWEEP_MIN_LINKS`` links with
        geometry or more) only the pairs that touch in some configuration are keys: a
        missing checked pair touches in none.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("colliding", "link_hits", "object_hits", "self_hits")

    colliding: bool | NDArray[np.bool_]
    link_hits: NDArray[np.bool_]
    object_hits: dict[str, bool | NDArray[np.bool_]]
    self_hits: dict[tuple[str, str], bool | NDArray[np.bool_]]

    def __post_init__(self) -> None:
        for a in (self.colliding, self.link_hits, *self.object_hits.values(), *self.self_hits.values()):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False


def adjacent_links(robot: Any) -> set[tuple[int, int]]:
    """Link index pairs (i < j) of ``robot.adjacent_pairs``: excluded from self-collision."""
    return {_index_pair(robot, a, b) for a, b in robot.adjacent_pairs}


def _index_pair(robot: Any, a: str, b: str) -> tuple[int, int]:
    i, j = robot.link_index(a), robot.link_index(b)
    return (i, j) if i < j else (j, i)


def excluded_keys(
    robot: Any,
    allowed: Iterable[tuple[str, str]] = (),
    *,
    exclude_adjacent: bool = True,
    use_allowed_pairs: bool = True,
) -> NDArray[np.int64]:
    """(E,) sorted unique int64 keys ``i * L + j`` (i < j link indices, L = ``len(robot.links)``)
    of the link pairs never checked for self-collision: ``robot.adjacent_pairs`` (unless
    ``exclude_adjacent=False``), ``robot.allowed_pairs`` (unless ``use_allowed_pairs=False``)
    and ``allowed`` (link name pairs, validated: unknown names raise ``ValueError``).

    Linear in the pairs named (the robot's own keys are kept on it): never a walk over
    every link pair (issue 31 item 6).
    """
    extra = robot.link_pairs(allowed, "allowed")
    cache = robot.__dict__.setdefault("_excluded_keys", {})
    # NOTE: keyed by the pair sets too (a frozenset caches its hash): copies share the dict
    key = (robot.adjacent_pairs if exclude_adjacent else None, robot.allowed_pairs if use_allowed_pairs else None)
    own = cache.get(key)
    if own is None:
        skip: set[tuple[str, str]] = set()
        if exclude_adjacent:
            skip |= robot.adjacent_pairs
        if use_allowed_pairs:
            skip |= robot.allowed_pairs
        own = cache[key] = _keys(robot, skip)
        own.flags.writeable = False
    if not extra:
        return own
    return np.union1d(own, _keys(robot, extra))


def _keys(robot: Any, pairs: Iterable[tuple[str, str]]) -> NDArray[np.int64]:
    """Sorted unique keys ``i * L + j`` (i < j) of link name pairs."""
    n = len(robot.links)
    ij = np.array([_index_pair(robot, a, b) for a, b in pairs], dtype=np.int64).reshape(-1, 2)
    return np.unique(ij[:, 0] * n + ij[:, 1])


def self_pair_array(
    robot: Any,
    allowed: Iterable[tuple[str, str]] = (),
    *,
    exclude_adjacent: bool = True,
    use_allowed_pairs: bool = True,
) -> NDArray[np.int64]:
    """(P, 2) int64: ``self_collision_pairs`` as an array (rows (i, j), i < j, ordered by i then
    j), generated in compiled code (``kernels.robot.checker.self_pairs``: no Python work per
    pair). P grows with the square of the links with geometry: the prepared checker of a
    robot with many links does not list them (``robot/checker.py``, ``SWEEP_MIN_LINKS``)."""
    from ..kernels.robot.checker import self_pairs

    ex = excluded_keys(robot, allowed, exclude_adjacent=exclude_adjacent, use_allowed_pairs=use_allowed_pairs)
    mesh_ids = mesh_links(robot)
    return self_pairs(mesh_ids, np.int64(len(robot.links)), np.ascontiguousarray(ex))


def mesh_links(robot: Any) -> NDArray[np.int64]:
    """(M,) int64 ascending indices of the links with a mesh (read-only, kept on the robot)."""
    ids = robot.__dict__.get("_mesh_links")
    if ids is None:
        ids = np.array([i for i, n in enumerate(robot.links) if n in robot.link_meshes], dtype=np.int64)
        ids.flags.writeable = False
        robot.__dict__["_mesh_links"] = ids
    return ids


def self_collision_pairs(
    robot: Any,
    exclude_adjacent: bool = True,
    allowed: Iterable[tuple[str, str]] = (),
    *,
    use_allowed_pairs: bool = True,
) -> list[tuple[int, int]]:
    """Link index pairs (i < j, in ``robot.links`` order) checked for self-collision.

    Both links have a mesh, and the pair is not adjacent (unless
    ``exclude_adjacent=False``), not in ``robot.allowed_pairs`` (unless
    ``use_allowed_pairs=False``) and not in ``allowed`` (link name pairs,
    validated: unknown names raise ``ValueError``). A list of Python tuples for the
    per-pair path and the tests; ``self_pair_array`` is the same pairs as an array.
    """
    arr = self_pair_array(robot, allowed, exclude_adjacent=exclude_adjacent, use_allowed_pairs=use_allowed_pairs)
    return [tuple(p) for p in arr.tolist()]


def check_configurations(
    robot: Any,
    q: ArrayLike,
    world: Any = None,
    *,
    base: ArrayLike | None = None,
    self_collision: bool = True,
    allowed: Iterable[tuple[str, str]] = (),
    ignore: tuple[str, ...] | list[str] = (),
    threads: int | None = None,
) -> bool | NDArray[np.bool_]:
    """(N,) bool: which configurations collide (a bool for one (dof,) configuration).

    Parameters
    ----------
    robot : Robot
    q : array_like (N, dof) or (dof,)
        Joint values in ``robot.joint_names`` order.
    world : World, optional
        Obstacles at their current poses; objects named in ``ignore`` are skipped.
    base : (4, 4), optional
        World-from-base pose of the robot (default identity).
    self_collision : bool
        Also check the robot's links against each other (default True), except
        ``robot.adjacent_pairs`` (joined through links without geometry only)
        and ``robot.allowed_pairs``.
    allowed : iterable of (link, link), optional
        More link pairs not to check, for this call only. Unknown link names
        raise ``ValueError`` naming them.
    threads : int, optional
        Threads per batched query (default: all cores).

    A configuration stops costing work once one pair is found in it;
    ``check_detail`` tests every pair in every configuration instead.
    """
    single, res = _run_checks(
        robot, q, world, base=base, self_collision=self_collision, allowed=allowed, ignore=ignore,
        threads=threads, detail=False,
    )  # fmt: skip
    return per_pose(np.array(res.colliding), not single)  # the caller's array (a copy: the record's is read-only)


def check_detail(robot: Any, q: ArrayLike, world: Any = None, **options: Any) -> RobotCheck:
    """Per-link, per-object and per-link-pair results of ``check_configurations``
    (same keyword options; every pair is tested in every configuration: slower)."""
    single, res = _run_checks(robot, q, world, detail=True, **options)
    return in_form(res, not single)


def _run_checks(
    robot: Any, q: ArrayLike, world: Any, *, base: ArrayLike | None = None, self_collision: bool = True,
    allowed: Iterable[tuple[str, str]] = (), ignore: tuple[str, ...] | list[str] = (), threads: int | None = None,
    detail: bool,
) -> tuple[bool, RobotCheck]:
    """(whether q was one configuration, the (N,)-shaped RobotCheck)."""
    allowed = robot.link_pairs(allowed, "allowed")  # validated first, even without self-collision
    pairs = self_collision_pairs(robot, allowed=allowed) if self_collision else []
    qa = np.asarray(q, dtype=np.float64)
    single = qa.ndim == 1
    links = [(i, robot.link_meshes[name]) for i, name in enumerate(robot.links) if name in robot.link_meshes]
    mesh_ids = np.array([i for i, _ in links], dtype=np.int64)
    # (L, N, 4, 4): each link's poses one contiguous block, passed to the queries as they
    # are; and (M, 6, N) the padded world boxes of the M links with a mesh (rows lo xyz,
    # hi xyz): a pair the exact test finds intersecting always has overlapping boxes
    by_link, box = robot.poses_and_boxes(qa, base, boxed=mesh_ids, threads=threads)
    n = by_link.shape[1]
    box_row = {int(i): k for k, i in enumerate(mesh_ids)}  # link index -> its row in box

    # Every exact test to run: (link, other link or -1, object index or -1, shape a, shape b,
    # the object's pose or None) and a (C, N) matrix of box overlaps, a row per check.
    # PERF: most (configuration, link, object) triples are far apart: their boxes decide them
    # here, vectorised over links and configurations, instead of a task each in the kernel.
    checks: list[tuple[int, int, int, Any, Any, NDArray | None]] = []
    near_blocks: list[NDArray[np.bool_]] = []
    skip = set(ignore)
    names = [m for m in world.names if m not in skip] if world is not None else []
    if names:
        boxes = dict(zip(world.names, world.boxes(), strict=True))
        for o, name in enumerate(names):
            shape, pose = world.shape(name), world.pose(name)
            checks += [(i, -1, o, mesh, shape, pose) for i, mesh in links]
            near_blocks.append(_overlap(box, boxes[name].reshape(6, 1)))
    if pairs:
        meshes = dict(links)
        first, second = zip(*pairs, strict=True)
        checks += [(i, j, -1, meshes[i], meshes[j], None) for i, j in pairs]
        near_blocks.append(_overlap(box[[box_row[i] for i in first]], box[[box_row[j] for j in second]]))
    near = np.concatenate(near_blocks) if near_blocks else np.zeros((0, n), np.bool_)
    run = _run_one if n == 1 else _run_batch
    H = run(checks, near, by_link, detail, threads)  # (C, N) hits, a row per check

    return single, gather_record(robot, checks, names, H)



def gather_record(robot: Any, checks: list[tuple], names: list[str] | tuple[str, ...], H: NDArray[np.bool_]) -> RobotCheck:
    """The batch-form ``RobotCheck`` of the (C, N) hits ``H``, a row per check
    ``(link, other link or -1, object index into names or -1, ...)``.

    Gathered per link and object with a row-wise any (PERF: per check, numpy's per-operation
    cost on one configuration's 1-element rows was most of the call, and np.logical_or.at
    over the checks a quarter of a 20,000-configuration call)."""
    n = H.shape[1]
    rows_of_link: dict[int, list[int]] = {}
    rows_of_object: dict[int, list[int]] = {}
    for k, (i, j, o, *_) in enumerate(checks):
        for link in (i, j) if j >= 0 else (i,):
            rows_of_link.setdefault(link, []).append(k)
        if o >= 0:
            rows_of_object.setdefault(o, []).append(k)
    link_hits = np.zeros((len(robot.links), n), np.bool_)
    for link, rows in rows_of_link.items():
        link_hits[link] = H[rows].any(axis=0)
    per_object = np.zeros((len(names), n), np.bool_)
    for o, rows in rows_of_object.items():
        per_object[o] = H[rows].any(axis=0)
    object_hits: dict[str, bool | NDArray[np.bool_]] = dict(zip(names, per_object, strict=True))
    self_hits = {(robot.links[c[0]], robot.links[c[1]]): H[k] for k, c in enumerate(checks) if c[1] >= 0}
    return RobotCheck(np.asarray(H.any(axis=0)), np.ascontiguousarray(link_hits.T), object_hits, self_hits)

def _run_batch(
    checks: list[tuple], near: NDArray[np.bool_], by_link: NDArray, detail: bool, threads: int | None
) -> NDArray[np.bool_]:
    """(C, N) hits, a row per check: one batched query each, on the configurations whose
    boxes overlap and, unless ``detail``, that no earlier check found colliding."""
    n = by_link.shape[1]
    colliding = np.zeros(n, np.bool_)
    hits = np.zeros((len(checks), n), np.bool_)
    for k, (i, j, _, shape_a, shape_b, pose_b) in enumerate(checks):
        todo_mask = near[k] if detail else near[k] & ~colliding
        poses_a, poses_b = by_link[i], (by_link[j] if pose_b is None else pose_b)
        if todo_mask.all():
            # every configuration: the link blocks as they are (PERF: no gather, no copy)
            hits[k] = intersects(shape_a, shape_b, poses_a, poses_b, threads=threads)
        else:
            todo = np.flatnonzero(todo_mask)
            if todo.size:
                pb = poses_b if poses_b.ndim == 2 else poses_b[todo]
                hits[k, todo] = intersects(shape_a, shape_b, poses_a[todo], pb, threads=threads)
        colliding |= hits[k]
    return hits


def _run_one(
    checks: list[tuple], near: NDArray[np.bool_], by_link: NDArray, detail: bool, threads: int | None
) -> NDArray[np.bool_]:
    """``_run_batch`` for one configuration (a planner's step): per-call queries and Python
    booleans (PERF: numpy's per-operation cost on 1-element arrays was most of the call)."""
    P = by_link[:, 0]
    found = False
    hits = []
    for (i, j, _, shape_a, shape_b, pose_b), in_box in zip(checks, near[:, 0].tolist(), strict=True):
        hit = False
        if in_box and (detail or not found):
            hit = bool(intersects(shape_a, shape_b, P[i], P[j] if pose_b is None else pose_b))
            found |= hit
        hits.append(hit)
    return np.array(hits, dtype=np.bool_).reshape(len(checks), 1)


def _overlap(a: NDArray, b: NDArray) -> NDArray[np.bool_]:
    """Whether boxes overlap, elementwise: a and b are (..., 6, N) boxes, rows lo xyz, hi xyz
    (broadcasting), the result (..., N) bool.

    PERF: six row comparisons, not np.all over a short axis (3x slower in numpy)."""
    near = a[..., 0, :] <= b[..., 3, :]
    for k in (1, 2):
        near &= a[..., k, :] <= b[..., k + 3, :]
    for k in (0, 1, 2):
        near &= b[..., k, :] <= a[..., k + 3, :]
    return near
