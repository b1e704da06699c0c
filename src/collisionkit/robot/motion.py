"""Clearance, margins, per-link padding and certified edge checks of a robot (issue 30 items 2-4).

Three questions a motion planner asks besides "is this configuration free"
(``check.py``):

* ``clearance(robot, q, world)``: the smallest distance from the robot to collision, over
  the same pairs as ``Robot.check`` (each link against each world object, and the
  self-collision pairs of ``check.self_collision_pairs``), with the pair and its closest
  points; per link on request.
* ``check_with_margin(robot, q, world, margin=)``: ``Robot.check`` where a pair collides
  when its distance is at most ``margin + pad_a + pad_b`` (an exact offset by a ball, not
  a vertex inflation); ``Robot.check(q, world, margin=...)`` and the check of a padded
  robot route here.
* ``check_motion(robot, q_start, q_end, world)``: whether every configuration of the
  straight joint-space segment is free (with the margin and padding), certified, with
  the free prefix and a confirmed witness otherwise.

Padding: ``Robot.with_padding({"panda_hand": 0.02})`` gives a robot whose listed links
count as colliding within that distance of anything; a pair's threshold is
``margin + pad_a + pad_b`` (a world object's pad is 0).

Certified edges (Schwarzer, Saha & Latombe 2005; LaValle, Planning Algorithms 5.3.4)
--------------------------------------------------------------------------------------
For a pair (a, b) and a sub-segment [t_a, t_b] of the edge, let lam bound the relative
travel of the two bodies over it (``robot/travel.py``: a link against a static object, its
own travel; a self pair, the terms of the joints its two chains do not share; on a
sub-segment the bound is (t_b - t_a) times the edge's), d_a, d_b lower bounds of the
pair's distance at the two ends and m its threshold. The pair's distance d(t) changes by
at most the travel of its bodies (every point of each moves at most its bound), so if the
pair came within m at some t*, then d_a <= m + lam(t_a, t*) and d_b <= m + lam(t*, t_b),
whose sum gives d_a + d_b <= 2 m + lam. Hence ``d_a + d_b > lam + 2 m`` certifies the
sub-segment free for the pair. A sub-segment that no bound certifies is halved (its
midpoint's distances measured), depth-first from q_start, so the certified part is always
a prefix [0, t_free]. Lower bounds come cheapest first: the distance of the two links'
padded world boxes (a lower bound of the geometry's distance), then the exact
``collisionkit.distance`` of the pair, asked with an ``upper_bound`` just above
``lam_edge + m`` (a larger distance certifies every sub-segment, so it need not be known).
A midpoint where a pair is at most m apart is a collision: the witness. The per-pair search
(``_search``) confirms it by ``Robot.check`` (``check_with_margin`` when a margin or padding
is set). The compiled search (below) confirms it where it finds it: a pair is a hit only when
the distance kernel measured two real points of its shapes at most m apart at that very
configuration (for m = 0, a triangle pair the exact intersection test calls crossing), or no
two points of its two oriented boxes are more than m apart, and the configuration it returns
is the one it measured. Asking ``Robot.check`` again compiled the whole collision chain
(``collide_task`` and the checker's driver: 2.8 CPU s of a first edge with a witness; with
the margin kernel's chain, 6.2 of the robot_motion warm-up group) to repeat that answer
(issue 32, ``benchmarks/results/compile_times.md`` stop 52);
``tests/test_robot_motion_compiled.py`` referees every witness with ``Robot.check``.

Stopping (no resolution parameter; the constants below are limits of the search, not of
the answer's validity): a sub-segment shorter than ``2**-MAX_DEPTH`` of the edge is not
halved (the pair is then within about ``lam * 2**-40`` of its threshold there); once a
witness is known, the prefix is refined only down to ``WITNESS_GAP`` of the edge; at most
``MAX_SEGMENTS`` sub-segments are tested per edge. An edge whose search stops without
certifying every sub-segment and without finding a colliding configuration is reported
``free=False, undecided=True`` with no witness (a graze within rounding of the threshold):
never "free" unless certified, never "collides" without a confirmed witness.

Compiled pair distances (issue 30 item 2): every pair whose two shapes are meshes is
measured by ``kernels/robot/proximity.py`` over the arrays of the robot's prepared checker
(``robot/checker.py``): the distance kernel's pruned descent on the pair's two trees in the
checker's pool, searching only below the bound each question needs, several pairs of one
configuration in one compiled call: a bisection point's open pairs (``_Edge.exact_many``),
a configuration's pairs for ``clearance`` (each search capped by the best so far) and for
``check_with_margin`` (stopping at the first pair within its threshold; a whole batch,
kinematics included, in one call when every threshold is > 0). The answers are
``collisionkit.distance``'s on the same trees and poses. Pairs with a convex shape (a
``ck.Box``, ``ck.Sphere``, ... in the World, which the checker also routes aside), pairs
whose scale lies outside the kernel's band, ``per_link`` clearance and zero-threshold
pairs of a margin check (``intersects``, exact) stay on the per-pair path
(``collisionkit.distance`` / ``intersects`` per pair): correct, slower.

Compiled edges: when every pair is the checker's, the whole search of an edge is one compiled
call (``kernels/robot/edge.py``: the points' kinematics, world and oriented boxes, the pair
distances and the bisection). With ``EDGE_SHRINK = 1.0`` it is step for step ``_search``
(kept as its reference: the same points, bounds, order of measurements and limits, so the
same answers and counters; tests compare them). By default (``EDGE_SHRINK`` < 1) each pair
distance is the descent's relative-error mode (``proximity.distance.distance_task``'s
``shrink``: a node or triangle pair is pruned once its squared lower bound reaches ``shrink``
times the best so far), searched below ``u / sqrt(shrink)`` for the exact path's bound u; it
returns the distance of two real points (a hit at most the threshold is a real collision)
and a certified lower bound of the true distance (the smallest of that and every pruned
bound; ``sqrt(shrink)`` times the search bound when nothing is found below it), and the
lower bound is what certifies. Where the approximate distance is above the threshold but the
lower bound is not, the exact distance decides the hit. Each pair's search starts from the
closest triangle pair it found last on the edge (``distance_task``'s seed: a bound from the
start; the values never depend on it). The proof above holds with any lower bounds, so the
guarantee is the same; the steps, and so ``t_free`` and the witness, may
differ from the exact search's (``tests/test_robot_motion_compiled.py`` referees them with
dense exact samples). PERF: ``python -m benchmarks.planning_edges``, 100 Panda edges, about
8x less time an edge (each distance about a microsecond instead of 20-30; about the same
number of them). Convex obstacles and pairs outside the distance kernel's band of scales run
``_search``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..constants import WORLD_BOX_SLACK
from ..kernels.robot import checker as checker_kernel
from ..kernels.robot import edge as edge_kernel
from ..kernels.robot import proximity
from ..query import batch
from ..query.distance import distance
from ..query.pair import intersects
from ..query.pose_form import record
from .check import mesh_links, self_pair_array
from .travel import _ends, entry_travel, pair_masks, sum_terms

#: sub-segments shorter than 2**-MAX_DEPTH of the edge are not halved
MAX_DEPTH = 40
#: with a witness known, the free prefix is refined down to this fraction of the edge
WITNESS_GAP = 2.0**-10
#: sub-segments tested per edge at most (then: a witness if one was found, else undecided)
MAX_SEGMENTS = 1 << 14
#: EXACT: relative allowance subtracted from measured distances before they certify
#: anything: the float64 rounding of the forward kinematics, the poses' mapping and the
#: distance's own arithmetic (each a few ulps of the pair's extent) stays far below it.
DISTANCE_SLACK = 2.0**-32


@dataclass(frozen=True, eq=False)
class RobotClearance:
    """Result of ``Robot.clearance``: the smallest distance to collision per configuration.

    For one (dof,) configuration the fields are Python scalars and (3,) arrays; for an
    (N, dof) batch (N,) and (N, 3) arrays (object arrays for the names).

    Attributes
    ----------
    distance : float or (N,) float64
        min over the checked pairs of ``max(d - pad_a - pad_b, 0)`` (world units), d the
        exact distance of the pair (``collisionkit.distance``): 0.0 when the configuration
        collides (a padded link within its padding), ``inf`` when no pair is checked.
    link : str or None, or (N,) object
        The robot link of the closest pair (None when ``distance`` is inf).
    other : str or None, or (N,) object
        The world object, or the other link for a self pair.
    other_is_link : bool or (N,) bool
        Whether ``other`` is a link (a self-collision pair).
    point_link, point_other : (3,) or (N, 3) float64
        Closest points on ``link`` and on ``other``, world frame (NaN when inf).
    per_link : dict[str, float or (N,) float64] or None
        With ``per_link=True``: per link with geometry, the smallest padded distance over
        its pairs (inf when it has none).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "distance", "link", "other", "other_is_link", "point_link", "point_other", "per_link",
    )  # fmt: skip

    distance: float | NDArray[np.float64]
    link: str | None | NDArray[np.object_]
    other: str | None | NDArray[np.object_]
    other_is_link: bool | NDArray[np.bool_]
    point_link: NDArray[np.float64]
    point_other: NDArray[np.float64]
    per_link: dict[str, float | NDArray[np.float64]] | None

    def __post_init__(self) -> None:
        values = [self.distance, self.link, self.other, self.other_is_link, self.point_link, self.point_other]
        values += list(self.per_link.values()) if self.per_link else []
        for a in values:
            if isinstance(a, np.ndarray):
                a.flags.writeable = False


@dataclass(frozen=True, eq=False)
class MotionCheck:
    """Result of ``Robot.check_motion``: whether straight joint-space edges are free.

    For one edge ((dof,) ends) the fields are Python scalars and a (dof,) witness (None
    when there is none); for N edges, (N,) arrays and an (N, dof) witness (NaN rows).

    Attributes
    ----------
    free : bool or (N,) bool
        True only when every configuration of the segment is certified free: every
        checked pair more than ``margin + pad_a + pad_b`` apart.
    t_free : float or (N,) float64
        The certified free prefix [0, t_free] of the segment (OMPL's lastValid fraction):
        1.0 when free, 0.0 when q_start collides; the configuration is
        ``q_start + t_free * (q_end - q_start)``.
    witness : (dof,) float64 or None, or (N, dof)
        A configuration of the segment that collides: one ``Robot.check`` calls colliding
        (``check_with_margin`` with a margin or padding; module notes: how it is confirmed);
        None / NaN when there is none.
    t_witness : float or (N,) float64
        Its fraction of the segment (NaN when none); ``t_free <= t_witness``.
    undecided : bool or (N,) bool
        Not certified free and no colliding configuration found: the robot passes within
        rounding of a threshold (``free`` is False).
    segments, distance_calls : int or (N,) int64
        Work done: sub-segments tested, exact pair distances measured.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "free", "t_free", "witness", "t_witness", "undecided", "segments", "distance_calls",
    )  # fmt: skip

    free: bool | NDArray[np.bool_]
    t_free: float | NDArray[np.float64]
    witness: NDArray[np.float64] | None
    t_witness: float | NDArray[np.float64]
    undecided: bool | NDArray[np.bool_]
    segments: int | NDArray[np.int64]
    distance_calls: int | NDArray[np.int64]

    def __post_init__(self) -> None:
        for a in (
            self.free,
            self.t_free,
            self.witness,
            self.t_witness,
            self.undecided,
            self.segments,
            self.distance_calls,
        ):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False


# -- validation -----------------------------------------------------------------------------
def check_margin(margin: Any) -> float:
    """``margin`` as a float >= 0 and finite, else ``ValueError``."""
    try:
        m = float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"margin must be a number, got {margin!r:.80}") from None
    if not (math.isfinite(m) and m >= 0.0):
        raise ValueError(f"margin must be finite and >= 0, got {margin!r}")
    return m


def check_padding(robot: Any, padding: Mapping[str, Any]) -> dict[str, float]:
    """Validated per-link padding: {link name: float >= 0, finite}.

    Raises
    ------
    ValueError
        Not a mapping, unknown link names or links without geometry (all named), or a pad
        that is negative, NaN, inf or not a number.
    """
    if not isinstance(padding, Mapping):
        raise ValueError(f"padding must be a mapping of link name -> distance, got {type(padding).__name__}")
    unknown = [k for k in padding if k not in robot._link_index]
    if unknown:
        raise ValueError(f"padding: robot {robot.name!r} has no link(s) {', '.join(map(repr, unknown))}")
    bare = [k for k in padding if k not in robot.link_meshes]
    if bare:
        raise ValueError(f"padding: link(s) {', '.join(map(repr, bare))} have no geometry to pad")
    out = {}
    for k, v in padding.items():
        try:
            out[k] = check_margin(v)
        except ValueError:
            raise ValueError(f"padding of {k!r} must be finite and >= 0, got {v!r:.80}") from None
    return out


class _Shapes:
    """A pair set's shapes on one side, by pair index: ``shapes[p]`` is link ``idx[p]``'s mesh, or
    world object ``obj[p]``'s shape where ``idx[p] < 0`` (no Python list of P entries)."""

    __slots__ = ("_idx", "_obj", "_links", "_objects")

    def __init__(self, idx: NDArray[np.int64], obj: NDArray[np.int64], links: list, objects: list) -> None:
        self._idx, self._obj, self._links, self._objects = idx, obj, links, objects

    def __len__(self) -> int:
        return int(self._idx.shape[0])

    def __getitem__(self, p: int) -> Any:
        i = int(self._idx[p])
        return self._links[i] if i >= 0 else self._objects[int(self._obj[p])]


def _configurations(robot: Any, q: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    qa = np.asarray(q, dtype=np.float64)
    if qa.ndim not in (1, 2) or qa.shape[-1] != robot.dof:
        raise ValueError(f"q must have shape (N, {robot.dof}) or ({robot.dof},), got {qa.shape}")
    if not np.all(np.isfinite(qa)):
        raise ValueError("q holds non-finite values")
    return np.ascontiguousarray(qa.reshape(-1, robot.dof)), qa.ndim == 1


# -- the pairs of one call ---------------------------------------------------------------------
class _PairSet:
    """The checked pairs of one call as arrays: P pairs, side a always a link.

    ``a`` (P,) link index; ``b`` (P,) the other link's index or -1; ``obj`` (P,) the world
    object's position in ``names`` or -1; ``thr`` (P,) pad_a + pad_b (+ the margin);
    ``rows_a``, ``rows_b`` rows in the link boxes of ``poses_and_boxes`` (-1 for objects);
    ``obj_box`` (P, 6) the objects' world boxes (lo xyz, hi xyz).
    """

    def __init__(
        self,
        robot: Any,
        world: Any,
        *,
        self_collision: bool,
        allowed: Iterable,
        ignore: Iterable[str],
        base: ArrayLike | None,
        margin: float = 0.0,
    ) -> None:
        allowed = robot.link_pairs(allowed, "allowed")
        self.robot = robot
        self.world = world
        self._options = {
            "self_collision": bool(self_collision),
            "allowed": allowed,
            "ignore": frozenset(ignore),
            "base": base,
        }
        self._kp: NDArray[np.int64] | None = None
        self._edge_args: tuple | None = None  # edge_search's arrays (``_search_compiled``)
        self._all_kernel: bool | None = None  # every pair the checker's (``check_motion``)
        self._masks: NDArray[np.float64] | None = None
        self.base = None if base is None else np.ascontiguousarray(base, dtype=np.float64)
        if self.base is not None and self.base.shape != (4, 4):
            raise ValueError(f"base must have shape (4, 4), got {self.base.shape}")
        # PERF: the pairs as arrays (self pairs generated in compiled code, check.self_pair_array):
        # no Python work per pair. A robot with M links with geometry has O(M^2) self pairs:
        # these arrays (and clearance's and check_motion's work per configuration) grow so.
        self.mesh_ids = mesh_links(robot)
        link_row = np.full(len(robot.links), -1, np.int64)
        link_row[self.mesh_ids] = np.arange(self.mesh_ids.shape[0], dtype=np.int64)
        skip = set(ignore)
        self.names = [n for n in world.names if n not in skip] if world is not None else []
        self.shapes = [world.shape(n) for n in self.names]
        self.poses = [world.pose(n) for n in self.names]
        obj_boxes = dict(zip(world.names, world.boxes().reshape(-1, 6), strict=True)) if world is not None else {}
        sp = self_pair_array(robot, allowed) if self_collision else np.zeros((0, 2), np.int64)
        n_obj, n_mesh = len(self.names), self.mesh_ids.shape[0]
        self.a = np.concatenate([np.tile(self.mesh_ids, n_obj), sp[:, 0]]).astype(np.int64)
        self.b = np.concatenate([np.full(n_obj * n_mesh, -1, np.int64), sp[:, 1]]).astype(np.int64)
        self.obj = np.concatenate([np.repeat(np.arange(n_obj, dtype=np.int64), n_mesh), np.full(sp.shape[0], -1, np.int64)])
        self.n = int(self.a.shape[0])
        pad = np.array([robot.padding.get(n, 0.0) for n in robot.links] + [0.0])  # index -1: no pad
        self.thr = pad[self.a] + pad[self.b] + margin
        self.padded = bool(margin > 0.0 or robot.padding)
        self.rows_a = link_row[self.a]
        self.rows_b = np.where(self.b >= 0, link_row[self.b], -1)
        boxes = np.array([obj_boxes[n] for n in self.names], dtype=np.float64).reshape(-1, 6)
        self.is_obj = self.obj >= 0
        self.obj_box = np.zeros((self.n, 6))
        self.obj_box[self.is_obj] = boxes[self.obj[self.is_obj]]
        meshes = robot.link_meshes
        link_shapes = [meshes.get(n) for n in robot.links]
        self.shape_a = _Shapes(self.a, self.obj, link_shapes, self.shapes)
        self.shape_b = _Shapes(self.b, self.obj, link_shapes, self.shapes)
        # each pair's extent, for the rounding allowance of DISTANCE_SLACK
        radius = np.zeros(len(robot.links) + 1)
        for i in self.mesh_ids:
            radius[i] = float(np.abs(link_shapes[i].bounds).max())
        obj_radius = np.array([float(np.abs(obj_boxes[n]).max()) for n in self.names] + [0.0])
        reach = radius[self.a] + np.where(self.b >= 0, radius[self.b], obj_radius[self.obj])
        self.slack = DISTANCE_SLACK * (reach + 1.0)
        # oriented boxes: per link (robot.links order) its mesh's bounds in its own frame,
        # per pair the object's world box (an oriented box with the world's axes)
        local = np.zeros((len(robot.links), 2, 3))
        for i in self.mesh_ids:
            local[i] = meshes[robot.links[i]].bounds
        self.local_centre = 0.5 * (local[:, 0] + local[:, 1])
        self.local_half = 0.5 * (local[:, 1] - local[:, 0])
        self.obj_centre = 0.5 * (self.obj_box[:, 0:3] + self.obj_box[:, 3:6])
        self.obj_half = 0.5 * (self.obj_box[:, 3:6] - self.obj_box[:, 0:3])

    def other_name(self, p: int) -> str:
        return self.robot.links[self.b[p]] if self.b[p] >= 0 else self.names[self.obj[p]]

    def poses_and_boxes(self, q: NDArray[np.float64], upper: bool = False) -> tuple[NDArray, ...]:
        """(L, N, 4, 4) link poses and the (P, N) box lower bounds of every pair at q (N, dof)
        (the distance of the padded world boxes, which hold the geometry); with ``upper``
        (one configuration, N = 1) the lower bounds are the better of that and the oriented
        boxes' (``_oriented``), and (P, 1) upper bounds come too."""
        T, box = self.robot.poses_and_boxes(q, self.base, boxed=self.mesh_ids)
        A = box[self.rows_a]  # (P, 6, N)
        B = np.where(self.is_obj[:, None, None], self.obj_box[:, :, None], box[self.rows_b])
        gap = np.maximum(np.maximum(B[:, 0:3] - A[:, 3:6], A[:, 0:3] - B[:, 3:6]), 0.0)
        low = np.sqrt((gap * gap).sum(axis=1))
        if not upper:
            return T, low
        low_o, high = self._oriented(T)
        return T, np.maximum(low, low_o[:, None]), high[:, None]

    def _oriented(self, T: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        """(P,) lower and (P,) upper bounds of every pair's distance at link poses T
        (L, 1, 4, 4) from oriented boxes: each link's box in its own frame (its mesh's bounds)
        carried by its pose, each object's world box.

        Lower: the largest gap between the two boxes' projections on the six axes of their
        frames (the distance of two sets is at least the gap of their projections on any
        unit axis); upper: |c_a - c_b| + |h_a| + |h_b| (each box holds a point of its shape,
        every point of a box is within its half diagonal of its centre). Rounded
        outwards by ``slack``. One compiled pass (``kernels.robot.edge.oriented_bounds``),
        the one the compiled edge search runs, so both paths see the same bounds."""
        low = np.empty(self.n)
        high = np.empty(self.n)
        edge_kernel.oriented_bounds(
            np.ascontiguousarray(T), self.a, self.b, self.local_centre, self.local_half, self.obj_centre,
            self.obj_half, self.slack, low, high,
        )  # fmt: skip
        return low, high

    def pose_b(self, p: int, T: NDArray) -> NDArray:
        return T[self.b[p]] if self.b[p] >= 0 else self.poses[self.obj[p]]

    def distance(self, p: int, Ta: NDArray, Tb: NDArray, upper: float) -> tuple[NDArray, NDArray, NDArray]:
        """(d (n,), point_a (n, 3), point_b (n, 3)) of pair p at poses Ta (n, 4, 4) and Tb
        ((4, 4) or (n, 4, 4)); inf where the distance is not below ``upper``.

        PERF: one ``collisionkit.distance`` call (per-call path for one pose); issue 30
        item 2's compiled distance-threshold kernel replaces it."""
        if Ta.shape[0] == 1:  # PERF: the per-call path
            r = distance(self.shape_a[p], self.shape_b[p], Ta[0], Tb if Tb.ndim == 2 else Tb[0], upper_bound=upper)
            return np.array([r.distance]), np.asarray(r.point_a).reshape(1, 3), np.asarray(r.point_b).reshape(1, 3)
        r = distance(self.shape_a[p], self.shape_b[p], Ta, Tb, upper_bound=upper)
        return np.asarray(r.distance), np.asarray(r.point_a), np.asarray(r.point_b)

    def masks(self) -> NDArray[np.float64]:
        """(P, E) the travel entries of each pair (``travel.pair_masks``), made once (PERF:
        ~0.5 ms of Python a call for the Panda)."""
        if self._masks is None:
            self._masks = pair_masks(self.robot, self.a, self.b)
            self._masks.flags.writeable = False
        return self._masks

    def kernel_pairs(self) -> NDArray[np.int64]:
        """(P,) each pair's row in the prepared checker's pairs (``robot/checker.py``, the
        robot's cached one for this world and options), -1 for a pair the checker routes to
        the per-pair path (a convex shape): those are measured by ``distance`` here too."""
        if self._kp is None:
            from .checker import checker_for

            chk = checker_for(self.robot, self.world, {**self._options, "listed": True})
            chk._current()
            # NOTE: the arrays as they are, ordered or not (``RobotChecker._order_pairs``: a
            # later ordering makes new ones; ``_args`` and these rows stay a consistent pair)
            kp = np.full(self.n, -1, np.int64)
            if chk._n_checks == self.n:  # NOTE: the same pairs in the same order (both built from the same lists)
                kp[chk._pairs[:, checker_kernel.PAIR_ROW]] = np.arange(chk._pairs.shape[0], dtype=np.int64)
            self._args = chk._args
            self._kp = kp
        return self._kp

    def compiled(
        self, T: NDArray, idx: NDArray[np.int64], upper: NDArray, mode: int = proximity.PD_ALL, best: float = math.inf
    ) -> tuple[NDArray, int]:
        """The checker's pairs ``idx`` (n,) (every ``kernel_pairs()[idx] >= 0``) at one
        configuration's link poses T (L, 4, 4), each searched below ``upper`` (n,), in one
        compiled call (``kernels.robot.proximity.pair_distances``, its ``mode`` and ``best``):
        (rows (n, OUT_WIDTH): distance (inf: not below; NaN: outside the kernel's scale
        band, or not reached in PD_ANY), closest points; its answer)."""
        out = np.full((idx.shape[0], proximity.OUT_WIDTH), np.nan)
        sel = self.kernel_pairs()[idx]
        if sel.size and sel.min() < 0:
            raise AssertionError("a pair the checker does not take")  # never: callers split the pairs
        who = proximity.pair_distances(
            T, *self._args, sel, upper, self.thr[idx], np.int64(mode), float(best), out,
        )  # fmt: skip
        return out, int(who)

    def measure(self, p: int, T: NDArray, upper: float) -> tuple[float, NDArray, NDArray]:
        """(d, point_a (3,), point_b (3,)) of pair p at one configuration's link poses T
        (L, 4, 4), C-contiguous; d = inf when not below ``upper``: the compiled pass for the
        checker's pairs, ``distance`` for the others."""
        if self.kernel_pairs()[p] >= 0:
            out, _ = self.compiled(T, np.array([p], np.int64), np.array([upper]))
            d = float(out[0, proximity.OUT_D])
            if not math.isnan(d):
                return d, out[0, 1:4], out[0, 4:7]
        r = self.distance(p, T[self.a[p]][None], self.pose_b(p, T), upper)
        return float(r[0][0]), r[1][0], r[2][0]


#: pair sets kept per robot (an entry holds its World alive: few of them)
_PAIR_SETS = 8


def _pair_set(
    robot: Any,
    world: Any,
    *,
    self_collision: bool,
    allowed: Iterable,
    ignore: Iterable[str],
    base: ArrayLike | None,
    margin: float = 0.0,
) -> _PairSet:
    """The robot's cached ``_PairSet`` for this world (at its current ``version``), options
    and margin, made on first use. PERF: building one costs about 0.3 ms of Python (the
    pairs, boxes and extents), several times a compiled margin check."""
    from .checker import _Cache

    cache = robot.__dict__.get("_pair_sets")
    if cache is None:
        cache = robot.__dict__["_pair_sets"] = _Cache()
    B = None if base is None else np.asarray(base, dtype=np.float64).tobytes()
    key = (
        id(world), -1 if world is None else world.version, bool(self_collision), robot.link_pairs(allowed, "allowed"),
        frozenset(ignore), B, float(margin), tuple(sorted(robot.padding.items())), frozenset(robot.allowed_pairs),
    )  # fmt: skip
    ps = cache.get(key)
    if ps is None or ps.world is not world:
        ps = _PairSet(
            robot, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base, margin=margin
        )
        if len(cache) >= _PAIR_SETS:
            cache.pop(next(iter(cache)))
        cache[key] = ps
    return ps


# -- clearance ------------------------------------------------------------------------------
def clearance(
    robot: Any,
    q: ArrayLike,
    world: Any = None,
    *,
    self_collision: bool = True,
    allowed: Iterable = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
    per_link: bool = False,
) -> RobotClearance:
    """The smallest distance from the robot to collision (``Robot.clearance`` documents it).

    Pairs go in increasing order of their smallest box lower bound over the batch; each
    is measured exactly only in the configurations where its box bound is below the best
    distance found so far (per link with ``per_link``), with that best as the query's
    ``upper_bound``. PERF: without ``per_link``, one compiled call per configuration
    (``_clearance_compiled``); with it, one batched ``distance`` call per pair measured.
    """
    qa, single = _configurations(robot, q)
    ps = _pair_set(robot, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base)
    n = qa.shape[0]
    best = np.full(n, np.inf)
    who = np.full(n, -1, np.int64)
    pt_a = np.full((n, 3), np.nan)
    pt_b = np.full((n, 3), np.nan)
    L = len(robot.links)
    link_best = np.full((L + 1, n), np.inf)
    link_best[L] = -np.inf  # row -1: the "other" of an object pair, neutral in the maximum below
    if ps.n and n and not per_link:
        _clearance_compiled(ps, qa, best, who, pt_a, pt_b)
    elif ps.n and n:  # per link: pair-major, one batched ``distance`` per pair measured
        T, lb = ps.poses_and_boxes(qa)
        lb = lb - ps.thr[:, None]
        for p in np.argsort(lb.min(axis=1), kind="stable"):
            a, b = ps.a[p], ps.b[p]
            bound = np.maximum(link_best[a], link_best[b]) if per_link else best
            todo = (lb[p] < bound) & (bound > 0.0)
            if not todo.any():
                continue
            idx = np.flatnonzero(todo)
            upper = float(bound[idx].max()) + ps.thr[p]
            Tb = ps.poses[ps.obj[p]] if b < 0 else T[b, idx]
            d, pa, pb = ps.distance(p, T[a, idx], Tb, upper)
            c = np.maximum(d - ps.thr[p], 0.0)
            better = c < best[idx]
            k = idx[better]
            best[k], who[k], pt_a[k], pt_b[k] = c[better], p, pa[better], pb[better]
            if per_link:
                link_best[a, idx] = np.minimum(link_best[a, idx], c)
                if b >= 0:
                    link_best[b, idx] = np.minimum(link_best[b, idx], c)
    names = np.array([None] * n, dtype=object)
    others = np.array([None] * n, dtype=object)
    found = who >= 0
    for k in np.flatnonzero(found):
        names[k] = robot.links[ps.a[who[k]]]
        others[k] = ps.other_name(int(who[k]))
    is_link = found & (ps.b[np.maximum(who, 0)] >= 0) if ps.n else np.zeros(n, np.bool_)
    pl = {robot.links[i]: link_best[i] for i in ps.mesh_ids} if per_link else None
    out = record(
        RobotClearance, not single, distance=best, link=names, other=others, other_is_link=is_link,
        point_link=pt_a, point_other=pt_b, per_link=pl,
    )  # fmt: skip
    return out


def _clearance_compiled(
    ps: _PairSet, qa: NDArray[np.float64], best: NDArray, who: NDArray, pt_a: NDArray, pt_b: NDArray
) -> None:
    """``clearance`` without ``per_link``, in place: per configuration, the pairs in the
    order of their smallest box lower bound over the batch (the per-pair path's order, so
    ties resolve alike); each run of the checker's pairs is one compiled call that caps
    each pair's search by the best found so far (``proximity.PD_CLEARANCE``), the other
    pairs (convex shapes) one ``distance`` each with the same cap."""
    T, lb = ps.poses_and_boxes(qa)
    order = np.argsort((lb - ps.thr[:, None]).min(axis=1), kind="stable")
    on = ps.kernel_pairs()[order] >= 0
    # runs of consecutive pairs the kernel takes (True) or not
    cut = np.flatnonzero(np.diff(on.astype(np.int8))) + 1
    runs = list(zip((bool(f) for f in on[np.r_[0, cut]]), np.split(order, cut), strict=True)) if order.size else []
    for k in range(qa.shape[0]):
        Tk = np.ascontiguousarray(T[:, k])
        for compiled, idx in runs:
            if not best[k] > 0.0:
                break  # nothing beats 0
            if compiled:
                out, i = ps.compiled(Tk, idx, np.full(idx.shape[0], math.inf), proximity.PD_CLEARANCE, best[k])
                if i >= 0:
                    best[k] = max(out[i, proximity.OUT_D] - ps.thr[idx[i]], 0.0)
                    who[k], pt_a[k], pt_b[k] = idx[i], out[i, 1:4], out[i, 4:7]
                rest = idx[np.isnan(out[:, proximity.OUT_D])]  # outside the kernel's scale band
            else:
                rest = idx
            for p in rest.tolist():
                if not best[k] > 0.0:
                    break
                d, pa, pb = (
                    ps.measure(p, Tk, best[k] + ps.thr[p]) if compiled else _measure_py(ps, p, Tk, best[k] + ps.thr[p])
                )
                c = max(d - ps.thr[p], 0.0)
                if c < best[k]:
                    best[k], who[k], pt_a[k], pt_b[k] = c, p, pa, pb


def _measure_py(ps: _PairSet, p: int, T: NDArray, upper: float) -> tuple[float, NDArray, NDArray]:
    if not upper > 0.0:
        return math.inf, np.full(3, np.nan), np.full(3, np.nan)
    r = ps.distance(p, T[ps.a[p]][None], ps.pose_b(p, T), upper)
    return float(r[0][0]), r[1][0], r[2][0]


# -- margins -------------------------------------------------------------------------------
def check_with_margin(
    robot: Any,
    q: ArrayLike,
    world: Any = None,
    *,
    margin: float = 0.0,
    self_collision: bool = True,
    allowed: Iterable = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
    threads: int | None = None,
) -> bool | NDArray[np.bool_]:
    """(N,) bool (a bool for one configuration): which configurations have a checked pair
    at most ``margin + pad_a + pad_b`` apart (the robot's ``padding``).

    ``Robot.check(q, world, margin=...)`` and the check of a padded robot route here; with
    ``margin=0`` and no padding the answer is ``Robot.check``'s (pairs with a zero threshold
    take the same exact test, ``intersects``). Pair-major, as ``check.py``: per pair, one
    batched query over the configurations whose box lower bound is within the threshold
    and that no earlier pair found colliding. PERF: when every pair is the checker's (no
    convex shape), one compiled call answers the batch (``margin_batch``: kinematics,
    box pretests, threshold descents); otherwise the checker's
    pairs with a threshold > 0 go through one compiled call per configuration
    (``_margin_compiled``), pairs with a zero threshold (``intersects``) and convex shapes
    the per-pair path.
    """
    m = check_margin(margin)
    qa, single = _configurations(robot, q)
    ps = _pair_set(robot, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base, margin=m)
    n = qa.shape[0]
    hit = np.zeros(n, np.bool_)
    kp = ps.kernel_pairs() if ps.n and n else np.zeros(0, np.int64)
    if ps.n and n and (kp >= 0).all():
        # PERF: every pair the checker's: one compiled call for the batch, kinematics
        # included (``margin_batch``: the threshold descent; zero thresholds exact)
        thr = np.empty(ps.n)
        thr[kp] = ps.thr
        got = margin_batch(ps._args, qa, thr, threads)
        hit = got == 1
        if not (got < 0).any():
            return bool(hit[0]) if single else hit
        hit[:] = False  # a pair outside the kernel's band: the path below decides
    if ps.n and n:
        T, lb = ps.poses_and_boxes(qa)
        order = np.argsort(lb.min(axis=1), kind="stable")
        # the checker's pairs with a threshold: one compiled call per configuration; pairs
        # with a zero threshold (EXACT: ``intersects``'s own test) and convex shapes below
        compiled = (ps.kernel_pairs()[order] >= 0) & (ps.thr[order] > 0.0)
        _margin_compiled(ps, T, lb, order[compiled], hit)
        for p in order[~compiled]:
            todo = (lb[p] <= ps.thr[p]) & ~hit
            if not todo.any():
                continue
            idx = np.flatnonzero(todo)
            a, b = ps.a[p], ps.b[p]
            Ta = T[a, idx]
            Tb = ps.poses[ps.obj[p]] if b < 0 else T[b, idx]
            if ps.thr[p] == 0.0:
                got = np.atleast_1d(intersects(ps.shape_a[p], ps.shape_b[p], Ta, Tb, threads=threads))
            else:
                # d <= thr  <=>  d < the next float above thr (the query's upper bound is strict)
                d = ps.distance(p, Ta, Tb, float(np.nextafter(ps.thr[p], np.inf)))[0]
                got = d <= ps.thr[p]
            hit[idx] = got
    return bool(hit[0]) if single else hit


def margin_batch(args: tuple, Q: NDArray[np.float64], thr: NDArray[np.float64], threads: int | None) -> NDArray[np.int8]:
    """(N,) int8: the checker's margin kernel (``kernels.robot.proximity.margin_serial`` /
    ``margin_parallel``) on a finite batch Q (N, dof) over the packed checker ``args`` and
    thresholds ``thr`` (P,) (one per row of its pairs): 1 within a threshold, 0 not, -1
    undecided (a pair outside the kernel's band of scales)."""
    n = Q.shape[0]
    out = np.zeros(n, np.int8)
    if n:
        p = batch.plan(n, batch.thread_count(threads), uniform=True)
        shared = np.zeros(1 if p.parallel else 0, np.int64)
        none = np.zeros(0, np.int64)
        batch.launch(
            p, proximity.margin_serial, proximity.margin_parallel, Q, *args, thr, out, shared, _NO_DETAIL, none
        )  # fmt: skip
    return out


#: ``margin_batch``'s ``detail``: not recording (``kernels.robot.proximity._margin_worker``)
_NO_DETAIL = np.zeros((0, 0), np.bool_)


def _margin_compiled(ps: _PairSet, T: NDArray, lb: NDArray, pairs: NDArray[np.int64], hit: NDArray[np.bool_]) -> None:
    """``check_with_margin`` over the checker's ``pairs`` (thresholds > 0), in place on
    ``hit`` (N,): per configuration, the pairs whose box lower bound is within their
    threshold, one compiled call stopping at the first pair within it
    (``proximity.PD_ANY``; each descent searches only below the next float above the
    threshold, so a pair farther away ends at its first node bounds)."""
    if not pairs.size:
        return
    upper_all = np.nextafter(ps.thr[pairs], np.inf)
    for k in range(hit.shape[0]):
        near = lb[pairs, k] <= ps.thr[pairs]
        if not near.any():
            continue
        idx = pairs[near]
        out, i = ps.compiled(np.ascontiguousarray(T[:, k]), idx, upper_all[near], proximity.PD_ANY)
        if i >= 0:
            hit[k] = True
            continue
        Tk = np.ascontiguousarray(T[:, k])
        for p in idx[np.isnan(out[:, proximity.OUT_D])].tolist():  # outside the kernel's scale band
            if _measure_py(ps, p, Tk, float(np.nextafter(ps.thr[p], np.inf)))[0] <= ps.thr[p]:
                hit[k] = True
                break


# -- certified edges --------------------------------------------------------------------------
class _Edge:
    """The search state of one edge: its points' poses, box bounds and measured distances."""

    def __init__(self, ps: _PairSet, q0: NDArray, q1: NDArray, lam: NDArray) -> None:
        self.ps, self.q0, self.q1, self.dq = ps, q0, q1, q1 - q0
        self.lam = lam  # (P,) the pair's travel bound over the whole edge
        # measured distances need only be known below lam + 2 thr (a larger one certifies
        # every sub-segment): the queries' upper bound at most, a little above it
        self.cap = (lam + 2.0 * ps.thr) * (1.0 + 2.0**-20) + 4.0 * ps.slack
        self.points: dict[float, tuple[NDArray, ...]] = {}
        self.calls = 0

    def point(self, t: float) -> tuple[NDArray, ...]:
        """(poses (L, 4, 4), box lower bounds (P,), distance lower bounds (P,) (-1 until
        measured), whether each is the measured distance less the slack (P,) bool, colliding
        (P,) bool, box upper bounds (P,)) at fraction t."""
        got = self.points.get(t)
        if got is None:
            q = self.q(t)
            T, lb, ub = self.ps.poses_and_boxes(q.reshape(1, -1), upper=True)
            n = self.ps.n
            got = (
                np.ascontiguousarray(T[:, 0]),
                lb[:, 0],
                np.full(n, -1.0),
                np.zeros(n, np.bool_),
                np.zeros(n, np.bool_),
                ub[:, 0],
            )
            self.points[t] = got
        return got

    def exact(self, pt: tuple, p: int, want: float) -> float:
        """A lower bound of pair p's distance at a point: the measured distance (less the
        rounding slack), or at least ``want`` when the distance is not below it (then only
        that is known: the query's ``upper_bound`` prunes most of its descent)."""
        T, _, low, exact, hit, _ = pt
        if exact[p] or low[p] >= want:
            return float(low[p])
        ps = self.ps
        slack = float(ps.slack[p])
        upper = min(max(want, 0.0) + 2.0 * slack, float(self.cap[p]))
        d = ps.measure(p, T, upper)[0]
        self.calls += 1
        if math.isinf(d):
            low[p] = max(low[p], upper - slack)
        else:
            exact[p] = True
            hit[p] = d <= ps.thr[p]
            low[p] = max(d - slack, 0.0)
        return float(low[p])

    def exact_many(self, pt: tuple, pairs: list[int], wants: list[float]) -> list[float]:
        """``exact`` for several pairs at one point: the pairs to measure in one compiled call
        (``_PairSet.compiled``), the others (convex shapes, scales outside the kernel's band)
        one ``distance`` each; the same bounds as ``exact`` pair by pair."""
        T, _, low, exact, hit, _ = pt
        ps = self.ps
        todo = [(p, w) for p, w in zip(pairs, wants, strict=True) if not (exact[p] or low[p] >= w)]
        if len(todo) > 1:
            kp = ps.kernel_pairs()
            idx = np.array([p for p, _ in todo if kp[p] >= 0], np.int64)
            if idx.size:
                slack = ps.slack[idx]
                want = np.array([w for p, w in todo if kp[p] >= 0])
                upper = np.minimum(np.maximum(want, 0.0) + 2.0 * slack, self.cap[idx])
                out, _ = ps.compiled(T, idx, upper)
                for i, p in enumerate(idx.tolist()):
                    d = float(out[i, proximity.OUT_D])
                    if math.isnan(d):
                        continue  # outside the kernel's band: ``exact`` below
                    self.calls += 1
                    if math.isinf(d):
                        low[p] = max(low[p], float(upper[i]) - float(slack[i]))
                    else:
                        exact[p] = True
                        hit[p] = d <= ps.thr[p]
                        low[p] = max(d - float(slack[i]), 0.0)
        for p, w in todo:
            if not exact[p] and low[p] < w:
                self.exact(pt, p, w)
        return [float(low[p]) for p in pairs]

    def q(self, t: float) -> NDArray:
        """The configuration at fraction t (the given ends exactly at 0 and 1)."""
        return self.q1 if t == 1.0 else self.q0 + t * self.dq


def _search(edge: _Edge, pairs: NDArray[np.int64]) -> tuple[float, float, bool, int]:
    """Depth-first bisection of one edge: (t_free, t_witness or inf, certified free, segments)."""
    ps = edge.ps
    stack = [(0.0, 1.0, 0, pairs)]
    frontier = 0.0  # [0, frontier] is certified free
    prefix = True  # the prefix can still grow (no stuck or colliding point at the frontier)
    t_hit = math.inf
    segments = 0
    while stack:
        ta, tb, depth, open_pairs = stack.pop()
        if ta >= t_hit:
            continue  # right of a collision: not needed
        if segments >= MAX_SEGMENTS:
            break
        segments += 1
        A, B = edge.point(ta), edge.point(tb)
        h = tb - ta
        opened = open_pairs.tolist()
        keep = np.zeros(len(opened), np.bool_)
        hit_a = hit_b = False
        # PERF: the pairs a point must measure go in one compiled call per point (A, then B)
        cand: list[int] = []
        need_of: dict[int, float] = {}
        for i, p in enumerate(opened):
            need = h * edge.lam[p] + 2.0 * ps.thr[p]
            box_a, box_b = A[1][p], B[1][p]
            if box_a + box_b > need:
                continue  # the boxes certify it
            # PERF: a distance is measured only where it could certify the segment (the box
            # upper bounds say whether it can), and only as far as needed (a collision
            # skipped here is met deeper down)
            if A[5][p] + B[5][p] <= need:
                # within the threshold by the upper bound alone: a collision there (a large
                # margin would otherwise never measure the pair)
                hit_a |= bool(A[5][p] <= ps.thr[p])
                hit_b |= bool(B[5][p] <= ps.thr[p])
                keep[i] = True
                continue
            cand.append(i)
            need_of[p] = need
        las = edge.exact_many(A, [opened[i] for i in cand], [need_of[opened[i]] - B[1][opened[i]] for i in cand])
        cand_b: list[int] = []
        la_of: dict[int, float] = {}
        for i, la in zip(cand, las, strict=True):
            p = opened[i]
            need = need_of[p]
            hit_a |= bool(A[4][p])
            if la + B[1][p] > need:
                continue
            if la + B[5][p] <= need:
                keep[i] = True
                continue
            cand_b.append(i)
            la_of[p] = la
        lbs = edge.exact_many(B, [opened[i] for i in cand_b], [need_of[opened[i]] - la_of[opened[i]] for i in cand_b])
        for i, lb in zip(cand_b, lbs, strict=True):
            p = opened[i]
            hit_b |= bool(B[4][p])
            if la_of[p] + lb > need_of[p]:
                continue
            keep[i] = True
        if hit_a:
            t_hit = min(t_hit, ta)
            prefix = False
            continue
        if hit_b:
            t_hit = min(t_hit, tb)
        if not keep.any():
            # NOTE: a certified segment cannot end in a collision (the travel bound forbids
            # it); should rounding ever say otherwise, the prefix stops before it
            if prefix and ta == frontier and not hit_b:
                frontier = tb
            prefix = prefix and not hit_b
            continue
        if depth >= MAX_DEPTH or (t_hit < math.inf and h <= WITNESS_GAP):
            prefix = prefix and ta != frontier
            continue
        mid = 0.5 * (ta + tb)
        kept = open_pairs[keep]
        stack.append((mid, tb, depth + 1, kept))
        stack.append((ta, mid, depth + 1, kept))
    return frontier, t_hit, prefix and frontier == 1.0 and t_hit == math.inf, segments


#: PERF: the search of each edge in one compiled call (``kernels.robot.edge.edge_search``);
#: False runs ``_search`` (the reference the tests compare it with)
COMPILED_SEARCH = True


def _search_compiled(edge: _Edge) -> tuple[float, float, bool, int, int, NDArray[np.float64] | None] | None:
    """``_search`` of one edge in one compiled call over the checker's pairs: (t_free, t_hit,
    certified free, segments, distance calls, the configuration at t_hit or None), or None
    where the kernel cannot decide (a pair outside the distance kernel's band of scales): the
    caller runs ``_search``."""
    ps = edge.ps
    args = ps._edge_args
    if args is None:
        rows = ps.kernel_pairs()  # sets ps._args, the checker's arrays
        meshes = ps.robot.link_meshes
        local = np.array([meshes[ps.robot.links[i]].bounds.ravel() for i in ps.mesh_ids], np.float64).reshape(-1, 6)
        args = ps._edge_args = (
            *ps._args, rows, ps.a, ps.b, ps.rows_a, ps.rows_b, np.ascontiguousarray(ps.obj_box),
            ps.mesh_ids, local, ps.local_centre, ps.local_half, ps.obj_centre, ps.obj_half, ps.slack, ps.thr,
        )  # fmt: skip
    out = np.empty(5 + edge.q0.shape[0])
    status = edge_kernel.edge_search(
        edge.q0, edge.q1, *args, edge.lam, edge.cap, WORLD_BOX_SLACK, _limits(), out,
    )  # fmt: skip
    if status != edge_kernel.EDGE_DONE:
        return None
    t_hit = float(out[1])
    hit = out[5:].copy() if t_hit < math.inf else None
    return float(out[0]), t_hit, bool(out[2]), int(out[3]), int(out[4]), hit


#: PERF: the compiled search's distances in the descent's relative-error mode: node and
#: triangle pairs pruned at ``EDGE_SHRINK`` times the best squared distance so far, the
#: certified lower bound used (``kernels/robot/edge.py``); 1.0 is the exact distance,
#: ``_search``'s, step for step
EDGE_SHRINK = 0.5


def _limits() -> NDArray[np.float64]:
    return np.array([MAX_DEPTH, MAX_SEGMENTS, WITNESS_GAP, EDGE_SHRINK], np.float64)


def check_motion(
    robot: Any,
    q_start: ArrayLike,
    q_end: ArrayLike,
    world: Any = None,
    *,
    margin: float = 0.0,
    self_collision: bool = True,
    allowed: Iterable = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
) -> MotionCheck:
    """Certified check of straight joint-space edges (``Robot.check_motion`` documents it;
    the module notes give the method and its proof)."""
    m = check_margin(margin)
    q0, q1, single = _ends(robot, q_start, q_end)
    ps = _pair_set(robot, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base, margin=m)
    n = q0.shape[0]
    # (N, P) each pair's relative travel bound over its edge (robot/travel.py)
    travel = sum_terms(entry_travel(robot, q0, q1), ps.masks()) if n else np.zeros((0, ps.n))
    free = np.zeros(n, np.bool_)
    t_free = np.zeros(n)
    witness = np.full((n, robot.dof), np.nan)
    t_witness = np.full(n, np.nan)
    undecided = np.zeros(n, np.bool_)
    segments = np.zeros(n, np.int64)
    calls = np.zeros(n, np.int64)
    if ps._all_kernel is None:  # PERF: once per pair set
        ps._all_kernel = ps.n > 0 and bool((ps.kernel_pairs() >= 0).all())
    compiled = COMPILED_SEARCH and ps._all_kernel
    for k in range(n):
        edge = _Edge(ps, q0[k], q1[k], travel[k])
        got = _search_compiled(edge) if compiled else None
        if got is None:  # convex shapes, or a pair outside the kernels' band of scales
            frontier, t_hit, ok, segments[k] = _search(edge, np.arange(ps.n, dtype=np.int64))
            calls[k] = edge.calls
            hit = None
        else:
            frontier, t_hit, ok, segments[k], calls[k], hit = got
        if ok:
            free[k], t_free[k] = True, 1.0
            continue
        t_free[k] = frontier
        if hit is not None:
            # the compiled search's witness is confirmed where it was found (module notes)
            witness[k], t_witness[k] = hit, t_hit
            continue
        if t_hit < math.inf:
            w = edge.q(t_hit)
            confirmed = _confirm(robot, w, world, m, self_collision, allowed, ignore, base, ps.padded)
            if confirmed:
                witness[k], t_witness[k] = w, t_hit
                continue
        undecided[k] = True
    rec = record(
        MotionCheck, not single, free=free, t_free=t_free, witness=witness, t_witness=t_witness,
        undecided=undecided, segments=segments, distance_calls=calls,
    )  # fmt: skip
    if single and np.isnan(t_witness[0]):
        object.__setattr__(rec, "witness", None)
    return rec


def _confirm(robot, w, world, margin, self_collision, allowed, ignore, base, padded) -> bool:
    """Whether configuration w collides by the checkers' own test (the witness's referee)."""
    if padded:
        return bool(check_with_margin(
            robot, w, world, margin=margin, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base
        ))  # fmt: skip
    return bool(robot.check(w, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base))


__all__ = [
    "MotionCheck",
    "RobotClearance",
    "check_margin",
    "check_motion",
    "check_padding",
    "check_with_margin",
    "clearance",
]
