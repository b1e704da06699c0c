"""The planner's main call: a batch of robot configurations against a World.

``check_configurations(robot, q, world)`` answers, for N joint configurations,
whether any link touches any object of the world (and, with
``self_collision=True``, any other link of the robot itself, except the
robot's ``adjacent_pairs`` and ``allowed_pairs`` and the pairs allowed for
the call).

How: forward kinematics for the whole batch in one call (``Robot.link_poses_by_link``:
each link's poses one contiguous block), then one batched compiled query per
(link, object) pair and per self-collision link pair over the configurations whose
padded world boxes overlap (the World's ``world_boxes``, computed once per link) and
that are still collision-free (so a colliding configuration stops costing work once
one pair is found, unless per-link detail is asked for). Poses of world objects are
fixed during the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..constants import WORLD_BOX_SLACK
from ..kernels.broadphase.common import world_boxes
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
        Per self-collision link pair, the configurations in which it touches.
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
    validated: unknown names raise ``ValueError``).
    """
    skip = set(robot.link_pairs(allowed, "allowed"))
    if exclude_adjacent:
        skip |= robot.adjacent_pairs
    if use_allowed_pairs:
        skip |= robot.allowed_pairs
    skipped = {_index_pair(robot, a, b) for a, b in skip}
    with_mesh = [i for i, n in enumerate(robot.links) if n in robot.link_meshes]
    return [(i, j) for k, i in enumerate(with_mesh) for j in with_mesh[k + 1 :] if (i, j) not in skipped]


def always_colliding_pairs(
    robot: Any, n: int, seed: int | None, threads: int | None = None
) -> frozenset[tuple[str, str]]:
    """Non-adjacent link pairs that intersect in every one of ``n`` random
    configurations (``Robot.allowed_pairs_from_samples`` documents it)."""
    q = robot.random_configurations(n, seed)
    poses = robot.link_poses(q)
    found = set()
    for i, j in self_collision_pairs(robot, use_allowed_pairs=False):
        a, b = robot.link_meshes[robot.links[i]], robot.link_meshes[robot.links[j]]
        # PERF: most pairs are apart in the first sample already, and cost one call
        if not intersects(a, b, poses[0, i], poses[0, j]):
            continue
        if n > 1:
            rest = intersects(
                a, b, np.ascontiguousarray(poses[1:, i]), np.ascontiguousarray(poses[1:, j]), threads=threads
            )
            if not np.all(rest):
                continue
        found.add(tuple(sorted((robot.links[i], robot.links[j]))))
    return frozenset(found)


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
    return per_pose(res.colliding.copy(), not single)  # the caller's array (the record's is read-only)


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
    # (L, N, 4, 4): each link's poses one contiguous block, passed to the queries as they are
    by_link = robot.link_poses_by_link(qa, base)
    n_links, n = by_link.shape[0], by_link.shape[1]
    colliding = np.zeros(n, np.bool_)
    link_hits = np.zeros((n, n_links), np.bool_)
    object_hits: dict[str, NDArray[np.bool_]] = {}
    self_hits: dict[tuple[str, str], NDArray[np.bool_]] = {}
    links = [(i, robot.link_meshes[name]) for i, name in enumerate(robot.links) if name in robot.link_meshes]

    boxes: dict[int, tuple[NDArray, NDArray]] = {}

    def link_boxes(i: int, mesh: Any) -> tuple[NDArray, NDArray]:
        """(N, 3) world box corners of link i in every configuration: the World's padded
        boxes (``kernels.broadphase.common.world_boxes``: a pair the exact test finds
        intersecting always has overlapping boxes)."""
        if i not in boxes:
            b = np.asarray(mesh.bounds, dtype=np.float64)
            local = np.ascontiguousarray(np.broadcast_to(np.concatenate([b[0], b[1]]), (n, 6)))
            lo, hi = np.empty((n, 3)), np.empty((n, 3))
            world_boxes(local, by_link[i], np.arange(n, dtype=np.int64), WORLD_BOX_SLACK, lo, hi)
            boxes[i] = (lo, hi)
        return boxes[i]

    def test(shape_a: Any, poses_a: NDArray, shape_b: Any, poses_b: NDArray, near: NDArray) -> NDArray[np.bool_]:
        """Hits over all N configurations: the exact query on the configurations whose boxes
        overlap (``near``) and, unless detail, that are still free."""
        todo_mask = near if detail else near & ~colliding
        if todo_mask.all():
            # every configuration: the link blocks as they are (PERF: no gather, no copy)
            return np.asarray(intersects(shape_a, shape_b, poses_a, poses_b, threads=threads), np.bool_)
        hit = np.zeros(n, np.bool_)
        todo = np.flatnonzero(todo_mask)
        if todo.size == 0:
            return hit
        pb = poses_b if poses_b.ndim == 2 else poses_b[todo]
        hit[todo] = intersects(shape_a, shape_b, poses_a[todo], pb, threads=threads)
        return hit

    def overlap(lo_a: NDArray, hi_a: NDArray, lo_b: NDArray, hi_b: NDArray) -> NDArray[np.bool_]:
        return np.all(lo_a <= hi_b, axis=1) & np.all(lo_b <= hi_a, axis=1)

    if world is not None:
        skip = set(ignore)
        world_box = dict(zip(world.names, world.boxes(), strict=True))
        for name in world.names:
            if name in skip:
                continue
            shape, pose = world.shape(name), world.pose(name)
            lo_o, hi_o = world_box[name]
            hits_obj = np.zeros(n, np.bool_)
            for i, mesh in links:
                # PERF: most (configuration, link, object) triples are far apart: their boxes
                # decide them here, vectorised, instead of a task each in the kernel
                h = test(mesh, by_link[i], shape, pose, overlap(*link_boxes(i, mesh), lo_o, hi_o))
                link_hits[:, i] |= h
                hits_obj |= h
                colliding |= h
            object_hits[name] = hits_obj
    if pairs:
        meshes = dict(links)
        for i, j in pairs:
            near = overlap(*link_boxes(i, meshes[i]), *link_boxes(j, meshes[j]))
            h = test(meshes[i], by_link[i], meshes[j], by_link[j], near)
            link_hits[:, i] |= h
            link_hits[:, j] |= h
            colliding |= h
            self_hits[(robot.links[i], robot.links[j])] = h
    return single, RobotCheck(colliding, link_hits, object_hits, self_hits)
