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
