"""Frozen result records of the pair queries.

One form for all of them (``query/pose_form.py``): the fields a record lists in
``PER_POSE`` are Python scalars (or a (3,) / (4, 4) array) when the query was
called with single (4, 4) poses, and arrays over the batch ((N,), (N, 3), ...)
when a pose was an (N, 4, 4) batch, even N = 1. Per-row fields (triangle pairs,
with ``pose_index``) are (M,) arrays in both forms.

Given a Dask array of poses, a query returns the same record with Dask arrays in
its fields (``collisionkit.distributed``); ``record.compute()`` gives the numpy record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
from numpy.typing import NDArray

from ..geometry.frozen import sealed
from .deferred import Computable, to_dataframe


def row_span(counts: Any, k: int, noun: str = "pose", plural: str = "poses") -> tuple[int, int]:
    """[start, stop) of group ``k``'s rows in a row record whose rows follow its groups
    (poses, frames, object pairs) in order, ``counts`` rows per group (a scalar for one
    group); an IndexError naming the ``noun`` when ``k`` is out of range."""
    counts = np.atleast_1d(counts)
    if not 0 <= k < counts.shape[0]:
        raise IndexError(f"{noun} {k} out of range for {counts.shape[0]} {plural}")
    start = int(counts[:k].sum())
    return start, start + int(counts[k])


def pose_rows(
    counts: Any,
    col_a: NDArray[np.int64],
    col_b: NDArray[np.int64],
    pose: int,
    noun: str = "pose",
    plural: str = "poses",
) -> NDArray[np.int64]:
    """(k, 2) int64 rows (col_a, col_b) of one pose (or other group: ``row_span``) of a row
    record whose rows follow the poses in order, ``counts`` per pose (a scalar for one pose)."""
    start, stop = row_span(counts, pose, noun, plural)
    return np.stack([col_a[start:stop], col_b[start:stop]], axis=1)


class PerPose(Computable):
    """Base of the pair queries' records: ``PER_POSE`` names the per-pose fields (scalars
    for one pose pair, (N, ...) arrays for a batch); the first gives ``n_poses``."""

    __slots__ = ()

    PER_POSE: ClassVar[tuple[str, ...]]
    #: per-row fields (one row per pair found, not per pose): sealed like PER_POSE
    ROWS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        _freeze(self, *self.ROWS, *self.PER_POSE)

    @property
    def n_poses(self) -> int:
        """N (1 for a single pose pair, or four single poses of a motion)."""
        return _size(getattr(self, self.PER_POSE[0]))


class PoseRows:
    """Mixin of the records of rows per pose (``Contacts``, ``SurfaceContacts``): ``ROWS``
    names the pose column and the two pair columns; ``counts`` holds the rows per pose."""

    __slots__ = ()

    ROWS: ClassVar[tuple[str, str, str]]
    counts: Any

    def __len__(self) -> int:
        return int(getattr(self, self.ROWS[0]).shape[0])

    @property
    def colliding(self) -> bool | NDArray[np.bool_]:
        """bool or (N,) bool: the poses with at least one pair."""
        return self.counts > 0

    def pairs(self, pose: int = 0) -> NDArray[np.int64]:
        """(k, 2) int64 rows of one pose: its pairs of the two pair columns of ``ROWS``."""
        _, a, b = self.ROWS
        return pose_rows(self.counts, getattr(self, a), getattr(self, b), pose)


def _size(value: Any) -> int:
    """Elements of a per-pose field: 1 for a scalar (one pose); no compute for a Dask array."""
    size = getattr(value, "size", None)
    return 1 if size is None else int(size)


def _freeze(rec: object, *names: str) -> None:
    """Make the array fields ``names`` of the frozen record ``rec`` read-only for good
    (``geometry.frozen.sealed``: a view of a private read-only array, so flipping
    ``flags.writeable`` back raises); scalars of a single pose and Dask arrays pass."""
    if not all(isinstance(n, str) for n in names) or isinstance(rec, np.ndarray):
        # NOTE: the old form, _freeze(self.a, self.b): flags only (flippable); use the names
        for a in (rec, *names):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        return
    d = rec.__dict__  # PERF: the frozen dataclass's storage (a per-call record seals ~5 arrays)
    for name in names:
        a = d[name]
        if type(a) is np.ndarray and a.base is None:  # a fresh answer: freeze it, hand out a view
            a.flags.writeable = False
            d[name] = a.view()
        elif isinstance(a, np.ndarray):
            d[name] = sealed(a)


def single(cls: type, **fields: Any) -> Any:
    """A record of one pose pair built without the dataclass ``__init__`` (PERF: per-call
    paths, -2 us): ``fields`` are every field, already in their final form (Python scalars,
    read-only arrays that cannot be made writable again: views of an array the caller has
    made read-only, or ``geometry.frozen.sealed``), as ``__post_init__`` would leave them;
    the record stays frozen."""
    r: Any = object.__new__(cls)
    r.__dict__.update(fields)
    return r


@dataclass(frozen=True, eq=False, repr=False)
class Contacts(PoseRows, PerPose):
    """Intersecting triangle pairs of one pose pair or of a batch of N.

    Attributes
    ----------
    pose_index, face_a, face_b : (M,) int64
        One row per intersecting pair (face ids as given to the meshes),
        sorted by (pose_index, face_a, face_b), each pair once; ``pose_index``
        is 0 for a single pose.
    counts : int or (N,) int64
        Rows per pose.
    truncated : bool or (N,) bool
        True where ``max_pairs`` cut the pose's pairs (more exist).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("counts", "truncated")
    ROWS: ClassVar[tuple[str, str, str]] = ("pose_index", "face_a", "face_b")

    pose_index: NDArray[np.int64]
    face_a: NDArray[np.int64]
    face_b: NDArray[np.int64]
    counts: int | NDArray[np.int64]
    truncated: bool | NDArray[np.bool_]

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame with columns pose_index, face_a, face_b (a Dask
        DataFrame, one partition per chunk of poses, when the record is lazy)."""
        return to_dataframe(self, self.ROWS)

    def _summary(self) -> str:
        return f"pairs={len(self)}, truncated={int(np.sum(self.truncated))}"


@dataclass(frozen=True, eq=False, repr=False)
class Stats(PerPose):
    """What the traversal did per pose: the seeds' cost model
    t = n_v c_v + n_p c_p + n_u c_u, counted by the kernel that answers queries.

    Attributes (int for a single pose, else (N,) int64)
    ---------------------------------------------------
    bv_tests : bounding-volume overlap tests (n_v)
    tri_tests : exact triangle-triangle tests (n_p)
    node_pairs : node pairs taken from the stack
    bv_updates : volumes of b moved into a's frame (n_u; 0 for AABB trees)
    colliding : bool or (N,) bool, the query's answer for each pose
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("bv_tests", "tri_tests", "node_pairs", "bv_updates", "colliding")

    bv_tests: int | NDArray[np.int64]
    tri_tests: int | NDArray[np.int64]
    node_pairs: int | NDArray[np.int64]
    bv_updates: int | NDArray[np.int64]
    colliding: bool | NDArray[np.bool_]

    def cost(self, c_v: float, c_p: float, c_u: float = 0.0) -> float | NDArray[np.float64]:
        """The cost model t = n_v c_v + n_p c_p + n_u c_u per pose, for unit costs given."""
        # NOTE: numpy types an int64 array times a float as floating[Any]: it is float64
        return cast("float | NDArray[np.float64]", self.bv_tests * c_v + self.tri_tests * c_p + self.bv_updates * c_u)

    def _summary(self) -> str:
        return ", ".join(
            f"{n}={int(np.sum(getattr(self, n)))}" for n in ("bv_tests", "tri_tests", "node_pairs", "bv_updates")
        )


# --- distance, contact geometry, penetration, classification, time of impact (issue 7) ---


@dataclass(frozen=True, eq=False)
class Distance(PerPose):
    """Minimum distance between two shapes, per pose pair (world frame).

    For a single pose pair (two (4, 4) poses) the fields are scalars and (3,)
    arrays; for a batch of N they are (N,) and (N, 3) arrays.

    Attributes
    ----------
    distance : float or (N,) float64
        0.0 exactly when the shapes intersect (the exact test says so);
        ``inf`` when the distance is not below the ``upper_bound`` asked for.
    point_a, point_b : (3,) or (N, 3) float64
        Closest points on a and on b in the world frame (equal when the
        distance is 0: a point of the contact); NaN when ``distance`` is inf.
    face_a, face_b : int or (N,) int64
        Faces (as given to the meshes) holding the closest points; -1 when
        ``distance`` is inf.
    node_pairs, tri_tests : int or (N,) int64
        Work done, named as ``Stats``' counters: node pairs visited, triangle
        pairs measured (GJK on two convex shapes: its iterations and 0).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "distance", "point_a", "point_b", "face_a", "face_b", "node_pairs", "tri_tests",
    )  # fmt: skip

    distance: float | NDArray[np.float64]
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    face_a: int | NDArray[np.int64]
    face_b: int | NDArray[np.int64]
    node_pairs: int | NDArray[np.int64]
    tri_tests: int | NDArray[np.int64]

    @property
    def colliding(self) -> bool | NDArray[np.bool_]:
        """bool or (N,) bool: the poses where the shapes intersect (``distance`` 0)."""
        return self.distance == 0.0

    def __repr__(self) -> str:
        if self.lazy:
            return f"Distance(poses={self.n_poses}, lazy)"
        d = np.asarray(self.distance)
        if d.ndim == 0:
            return f"Distance({float(d):.6g}, faces=({self.face_a}, {self.face_b}))"
        return f"Distance(poses={d.shape[0]}, min={float(d.min()) if d.size else float('nan'):.6g})"


@dataclass(frozen=True, eq=False, repr=False)
class ContactGeometry(Contacts):
    """``Contacts`` plus the geometry of each intersecting triangle pair (world frame).

    Attributes (besides Contacts')
    ------------------------------
    segments : (M, 2, 3) float64
        The intersection of the two triangles: the exact segment (its float64
        ends) when their planes cross, a point when they touch at one point
        (both ends equal), a diameter of the overlap polygon when coplanar.
    points : (M, 3) float64
        Midpoint of each segment (one contact point per pair; not snapped to
        vertices, not merged with other pairs' points).
    normals : (M, 3) float64
        Unit normal of a's face (right-hand rule of its vertex order; outward
        for an outward-oriented closed mesh, i.e. from a towards b); the
        reverse of b's face normal when a's face has zero area; 0 when both do.
    kinds : (M,) int8
        0 crossing planes, 1 coplanar overlap, 2 both triangles degenerate.
    """

    segments: NDArray[np.float64] = None  # type: ignore[assignment]
    points: NDArray[np.float64] = None  # type: ignore[assignment]
    normals: NDArray[np.float64] = None  # type: ignore[assignment]
    kinds: NDArray[np.int8] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        _freeze(self, "segments", "points", "normals", "kinds")

    def _summary(self) -> str:
        return f"pairs={len(self)}, coplanar={int((self.kinds == 1).sum())}"


@dataclass(frozen=True, eq=False)
class Penetration(PerPose):
    """Minimal translation separating two overlapping shapes (world frame).

    Moving b by ``depth * direction`` (or a by the opposite) makes them touch
    without overlapping: ``direction`` is a unit vector from a towards b,
    ``depth`` >= 0 (0 when the shapes do not overlap).

    Attributes
    ----------
    depth : float or (N,) float64
    direction : (3,) or (N, 3) float64 (NaN when depth is 0 and no overlap)
    exact : bool or (N,) bool
        True when ``depth`` is the exact minimum up to float64 rounding (convex
        pairs: the minimum of the Minkowski difference's support function over
        its facet normals, the value EPA converges to); False when it is an
        upper bound (the "bounds" or "sampled" method).
    error_bound : float or (N,) float64
        For exact results a bound on the float64 rounding; for the "bounds"
        method ``depth_upper - depth_lower``, a bound on the gap to the true
        depth; for the "sampled" method ``inf`` (no bound is known).
    method : str or (N,) str
        "convex", "bounds", "sampled" or "none" (no overlap).
    depth_lower, depth_upper : float or (N,) float64
        A bracket of the true depth: ``depth_lower <= true depth <=
        depth_upper``. ``depth_upper`` is ``depth``: b's translation by
        ``depth_upper * direction`` separates the shapes. ``depth_lower`` is
        the deepest vertex of either mesh inside the other, measured to the
        other's surface ("bounds"), ``depth`` for exact results, and 0 where
        nothing better is known ("sampled"). Left out by a handler, they
        are filled in that way from ``depth`` and ``exact``.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "depth", "direction", "exact", "error_bound", "method", "depth_lower", "depth_upper",
    )  # fmt: skip

    depth: float | NDArray[np.float64]
    direction: NDArray[np.float64]
    exact: bool | NDArray[np.bool_]
    error_bound: float | NDArray[np.float64]
    method: str | NDArray[np.str_]
    depth_lower: float | NDArray[np.float64] | None = None
    depth_upper: float | NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        if self.depth_upper is None:
            object.__setattr__(self, "depth_upper", self.depth)
        if self.depth_lower is None:
            if np.ndim(self.depth) == 0:
                lower = self.depth if bool(self.exact) else 0.0
            else:
                lower = np.where(self.exact, self.depth, 0.0)
            object.__setattr__(self, "depth_lower", lower)
        super().__post_init__()

    def __repr__(self) -> str:
        return (
            f"Penetration(depth={self.depth}, exact={self.exact}, method={self.method!r}, "
            f"depth_lower={self.depth_lower}, depth_upper={self.depth_upper})"
        )


#: classify() codes and names
CLASS_NAMES = ("disjoint", "touching", "penetrating", "contained")


@dataclass(frozen=True, eq=False)
class Classification(PerPose):
    """What ``classify`` found per pose pair.

    Attributes
    ----------
    codes : int or (N,) int8
        Index into ``names``: 0 disjoint, 1 touching, 2 penetrating, 3 contained.
    distance : float or (N,) float64
        Distance between the surfaces (0.0 where they meet).
    a_inside_b, b_inside_a : bool or (N,) bool
        Which solid lies inside the other (surfaces apart only).
    names : tuple of str
        The class names (``CLASS_NAMES``).

    ``labels`` gives the codes as names: a str, or an (N,) str array.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("codes", "distance", "a_inside_b", "b_inside_a")

    codes: int | NDArray[np.int8]
    distance: float | NDArray[np.float64]
    a_inside_b: bool | NDArray[np.bool_]
    b_inside_a: bool | NDArray[np.bool_]
    names: tuple[str, ...] = CLASS_NAMES

    @property
    def labels(self) -> str | NDArray[np.str_]:
        if isinstance(self.codes, np.ndarray):
            return np.asarray(self.names)[self.codes]
        return self.names[self.codes]


@dataclass(frozen=True, eq=False)
class TimeOfImpact(PerPose):
    """First contact of two moving shapes over t in [0, 1].

    Every field is per motion: the types below for four single (4, 4) poses,
    (N,) arrays (and (N, 4, 4) poses) for a batch of N motions.

    Attributes
    ----------
    colliding : bool
        True when the shapes come within ``tolerance`` of each other (or
        intersect) at some t in [0, 1] (a hit).
    t : float
        Conservative time of impact: never after the real first contact; the
        distance at ``t`` is at most ``tolerance`` (0 when they already
        intersect at t = 0). 1.0 when there is no hit.
    pose_a, pose_b : (4, 4) float64
        World poses of a and b at ``t``.
    face_a, face_b : int
        The closest triangle pair at ``t`` (the first contacting pair); -1 without a hit.
    distance : float
        Distance at ``t`` after a hit; ``inf`` without a hit (not measured).
    iterations : int
        Conservative-advancement steps taken.
    converged : bool
        False when the iteration cap stopped the advancement early (then
        ``colliding`` is True and ``t`` is still a safe lower bound of the contact time).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "colliding", "t", "pose_a", "pose_b", "face_a", "face_b", "distance", "iterations", "converged",
    )  # fmt: skip

    colliding: bool | NDArray[np.bool_]
    t: float | NDArray[np.float64]
    pose_a: NDArray[np.float64]
    pose_b: NDArray[np.float64]
    face_a: int | NDArray[np.int64]
    face_b: int | NDArray[np.int64]
    distance: float | NDArray[np.float64]
    iterations: int | NDArray[np.int64]
    converged: bool | NDArray[np.bool_] = True


@dataclass(frozen=True, eq=False)
class RigidMotionCheck(PerPose):
    """Whether two rigid shapes moving over t in [0, 1] stay farther apart than a margin
    (``collisionkit.check_motion``).

    Every field is per motion: the types below for four single (4, 4) poses, (N,) arrays
    (and (N, 4, 4) poses) for a batch of N motions.

    Attributes
    ----------
    free : bool
        True only when every pose of the motion is certified more than ``margin`` apart
        (distance, or not intersecting at ``margin=0``).
    t_free : float
        The certified free part [0, t_free] of the motion (OMPL's lastValid): 1.0 when
        free; every pose before it is certified free; 0.0 when the start poses collide.
    t_witness : float
        A time at which the shapes collide (distance at most ``margin``, measured
        exactly); NaN when there is none. ``t_free <= t_witness``.
    pose_a, pose_b : (4, 4) float64
        The world poses of a and b at ``t_witness`` (NaN without a witness).
    distance : float
        The exact distance at ``t_witness`` (<= margin); NaN without a witness.
    undecided : bool
        Not certified free and no colliding pose found: the shapes pass within rounding of
        the margin (``free`` is False).
    iterations : int
        Work done: advancement steps plus bisection segments.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = (
        "free", "t_free", "t_witness", "pose_a", "pose_b", "distance", "undecided", "iterations",
    )  # fmt: skip

    free: bool | NDArray[np.bool_]
    t_free: float | NDArray[np.float64]
    t_witness: float | NDArray[np.float64]
    pose_a: NDArray[np.float64]
    pose_b: NDArray[np.float64]
    distance: float | NDArray[np.float64]
    undecided: bool | NDArray[np.bool_]
    iterations: int | NDArray[np.int64]
