"""Frozen result records of the pair queries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


def _freeze(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


@dataclass(frozen=True, eq=False)
class Contacts:
    """Intersecting triangle pairs of a batch of N pose pairs.

    Attributes
    ----------
    pose_index, face_a, face_b : (M,) int64
        One row per intersecting pair (face ids as given to the meshes),
        sorted by (pose_index, face_a, face_b), each pair once.
    counts : (N,) int64
        Rows per pose.
    truncated : (N,) bool
        True where ``max_pairs`` cut the pose's pairs (more exist).
    """

    pose_index: NDArray[np.int64]
    face_a: NDArray[np.int64]
    face_b: NDArray[np.int64]
    counts: NDArray[np.int64]
    truncated: NDArray[np.bool_]

    def __post_init__(self) -> None:
        _freeze(self.pose_index, self.face_a, self.face_b, self.counts, self.truncated)

    def __len__(self) -> int:
        return int(self.pose_index.shape[0])

    @property
    def n_poses(self) -> int:
        return int(self.counts.shape[0])

    @property
    def colliding(self) -> NDArray[np.bool_]:
        """(N,) bool: the poses with at least one pair."""
        return self.counts > 0

    def pairs(self, pose: int = 0) -> NDArray[np.int64]:
        """(k, 2) int64 (face_a, face_b) rows of one pose."""
        if not 0 <= pose < self.n_poses:
            raise IndexError(f"pose {pose} out of range for {self.n_poses} poses")
        start = int(self.counts[:pose].sum())
        stop = start + int(self.counts[pose])
        return np.stack([self.face_a[start:stop], self.face_b[start:stop]], axis=1)

    def __repr__(self) -> str:
        return f"Contacts(poses={self.n_poses}, pairs={len(self)}, truncated={int(self.truncated.sum())})"


@dataclass(frozen=True, eq=False)
class Stats:
    """What the traversal did per pose: the seeds' cost model
    t = n_v c_v + n_p c_p + n_u c_u, counted by the kernel that answers queries.

    Attributes (all (N,) int64)
    ---------------------------
    bv_tests : bounding-volume overlap tests (n_v)
    tri_tests : exact triangle-triangle tests (n_p)
    node_pairs : node pairs taken from the stack
    bv_updates : volumes of b moved into a's frame (n_u; 0 for AABB trees)
    colliding : (N,) bool, the query's answer for each pose
    """

    bv_tests: NDArray[np.int64]
    tri_tests: NDArray[np.int64]
    node_pairs: NDArray[np.int64]
    bv_updates: NDArray[np.int64]
    colliding: NDArray[np.bool_]

    def __post_init__(self) -> None:
        _freeze(self.bv_tests, self.tri_tests, self.node_pairs, self.bv_updates, self.colliding)

    @property
    def n_poses(self) -> int:
        return int(self.bv_tests.shape[0])

    def cost(self, c_v: float, c_p: float, c_u: float = 0.0) -> NDArray[np.float64]:
        """The cost model t = n_v c_v + n_p c_p + n_u c_u per pose, for unit costs given."""
        return self.bv_tests * c_v + self.tri_tests * c_p + self.bv_updates * c_u

    def __repr__(self) -> str:
        return (
            f"Stats(poses={self.n_poses}, bv_tests={int(self.bv_tests.sum())}, "
            f"tri_tests={int(self.tri_tests.sum())}, node_pairs={int(self.node_pairs.sum())}, "
            f"bv_updates={int(self.bv_updates.sum())})"
        )


# --- distance, contact geometry, penetration, classification, time of impact (issue 7) ---


@dataclass(frozen=True, eq=False)
class Distance:
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
    node_pairs, tri_pairs : (N,) int64
        Work done: node pairs visited, triangle pairs measured.
    """

    distance: float | NDArray[np.float64]
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    face_a: int | NDArray[np.int64]
    face_b: int | NDArray[np.int64]
    node_pairs: NDArray[np.int64]
    tri_pairs: NDArray[np.int64]

    def __post_init__(self) -> None:
        for x in (self.distance, self.point_a, self.point_b, self.face_a, self.face_b, self.node_pairs, self.tri_pairs):
            if isinstance(x, np.ndarray):
                x.flags.writeable = False

    @property
    def intersecting(self) -> bool | NDArray[np.bool_]:
        return self.distance == 0.0

    def __repr__(self) -> str:
        d = np.asarray(self.distance)
        if d.ndim == 0:
            return f"Distance({float(d):.6g}, faces=({self.face_a}, {self.face_b}))"
        return f"Distance(poses={d.shape[0]}, min={float(d.min()) if d.size else float('nan'):.6g})"


@dataclass(frozen=True, eq=False)
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
        _freeze(self.segments, self.points, self.normals, self.kinds)

    def __repr__(self) -> str:
        return f"ContactGeometry(poses={self.n_poses}, pairs={len(self)}, coplanar={int((self.kinds == 1).sum())})"


@dataclass(frozen=True, eq=False)
class Penetration:
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
    method : str
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

    depth: float | NDArray[np.float64]
    direction: NDArray[np.float64]
    exact: bool | NDArray[np.bool_]
    error_bound: float | NDArray[np.float64]
    method: str
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

    def __repr__(self) -> str:
        return (
            f"Penetration(depth={self.depth}, exact={self.exact}, method={self.method!r}, "
            f"depth_lower={self.depth_lower}, depth_upper={self.depth_upper})"
        )


#: classify() codes and names
CLASS_NAMES = ("disjoint", "touching", "penetrating", "contained")


@dataclass(frozen=True, eq=False)
class Classification:
    """classify() for a batch: codes (N,) int8 into ``names``; ``labels`` (N,) str."""

    codes: NDArray[np.int8]
    distance: NDArray[np.float64]
    a_inside_b: NDArray[np.bool_]
    b_inside_a: NDArray[np.bool_]
    names: tuple[str, ...] = CLASS_NAMES

    def __post_init__(self) -> None:
        _freeze(self.codes, self.distance, self.a_inside_b, self.b_inside_a)

    @property
    def labels(self) -> NDArray[np.str_]:
        return np.asarray(self.names)[self.codes]

    def __len__(self) -> int:
        return int(self.codes.shape[0])


@dataclass(frozen=True, eq=False)
class TimeOfImpact:
    """First contact of two moving shapes over t in [0, 1].

    Attributes
    ----------
    hit : bool
        True when the shapes come within ``tolerance`` of each other (or
        intersect) at some t in [0, 1].
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
        ``hit`` is True and ``t`` is still a safe lower bound of the contact time).
    """

    hit: bool
    t: float
    pose_a: NDArray[np.float64]
    pose_b: NDArray[np.float64]
    face_a: int
    face_b: int
    distance: float
    iterations: int
    converged: bool = True
