"""Frozen result records of World queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..query.deferred import Computable, to_dataframe
from ..query.results import _freeze, pose_rows, row_span  # _freeze: the one rule that seals a record's arrays


def rows_in(rows: NDArray[np.int64], sorted_rows: NDArray[np.int64], n: int) -> NDArray[np.bool_]:
    """Which (i, j) rows are among ``sorted_rows`` (pair rows sorted by (i, j), indices below n):
    one ``searchsorted`` on the keys i * n + j."""
    keys = sorted_rows[:, 0] * n + sorted_rows[:, 1]
    q = rows[:, 0] * n + rows[:, 1]
    if not keys.shape[0]:
        return np.zeros(q.shape[0], np.bool_)
    at = np.minimum(np.searchsorted(keys, q), keys.shape[0] - 1)
    return keys[at] == q


@dataclass(frozen=True, eq=False)
class Pairs:
    """Pairs of World objects.

    Attributes
    ----------
    object_a, object_b : (M,) int64
        One row per pair: object indices i < j in insertion order (the order of
        ``World.names`` when the query ran), sorted by (object_a, object_b).
    object_names : tuple of str
        ``World.names`` when the query ran (index -> name).

    ``rows`` is the (M, 2) int64 array of (object_a, object_b); ``names`` gives the rows
    as (name_a, name_b) tuples; iterating a Pairs yields those tuples; ``len`` is M.
    """

    object_a: NDArray[np.int64]
    object_b: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "object_a", "object_b")

    @classmethod
    def from_rows(cls, rows: NDArray[np.int64], object_names: tuple[str, ...]) -> Pairs:
        """A Pairs from (M, 2) int64 rows (i, j), i < j, sorted."""
        return cls(np.ascontiguousarray(rows[:, 0]), np.ascontiguousarray(rows[:, 1]), object_names)

    def __len__(self) -> int:
        return int(self.object_a.shape[0])

    @property
    def rows(self) -> NDArray[np.int64]:
        """(M, 2) int64 rows (object_a, object_b)."""
        return np.stack([self.object_a, self.object_b], axis=1)

    @property
    def names(self) -> list[tuple[str, str]]:
        n = self.object_names
        return [(n[i], n[j]) for i, j in zip(self.object_a.tolist(), self.object_b.tolist(), strict=True)]

    def __iter__(self):
        return iter(self.names)

    def __contains__(self, pair: object) -> bool:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        return pair in set(self.names) or (pair[1], pair[0]) in set(self.names)

    def __repr__(self) -> str:
        return f"Pairs({len(self)} of {len(self.object_names)} objects)"


@dataclass(frozen=True, eq=False, repr=False)
class FramePairs(Computable):
    """The colliding pairs of every frame of a trajectory (``World.run``): one row per
    (frame, pair).

    Attributes
    ----------
    frame : (M,) int64
        Frame of each row (0-based over the frames given), rows sorted by
        (frame, object_a, object_b).
    object_a, object_b : (M,) int64
        Object indices (insertion order, ``object_names``), object_a < object_b.
    counts : (F,) int64
        Colliding pairs per frame.
    object_names : tuple of str
        ``World.names`` when the frames ran.

    ``rows`` is the (M, 3) int64 array of (frame, object_a, object_b); ``pairs(f)`` one
    frame's ``Pairs``.
    Given a Dask array of frames, the fields are Dask arrays (``compute()`` gives numpy;
    ``to_dataframe()`` a Dask DataFrame).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("counts",)

    frame: NDArray[np.int64]
    object_a: NDArray[np.int64]
    object_b: NDArray[np.int64]
    counts: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "frame", "object_a", "object_b", "counts")

    def __len__(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_frames(self) -> int:
        return int(self.counts.shape[0])

    @property
    def rows(self) -> NDArray[np.int64]:
        """(M, 3) int64 rows (frame, object_a, object_b)."""
        return np.stack([self.frame, self.object_a, self.object_b], axis=1)

    @property
    def colliding(self) -> NDArray[np.bool_]:
        """(F,) bool: the frames with at least one colliding pair."""
        return self.counts > 0

    def pairs(self, frame: int) -> Pairs:
        """The colliding pairs of one frame (as ``World.step`` returned them)."""
        start, stop = row_span(self.counts, frame, "frame", "frames")
        return Pairs(self.object_a[start:stop].copy(), self.object_b[start:stop].copy(), self.object_names)

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame (frame, object_a, object_b); a Dask DataFrame when lazy."""
        return to_dataframe(self, ("frame", "object_a", "object_b"))

    def _count(self) -> str:
        return f"frames={self.n_frames}"

    def _summary(self) -> str:
        return f"rows={len(self)}, objects={len(self.object_names)}"


@dataclass(frozen=True, eq=False)
class WorldContacts:
    """Intersecting triangle pairs of every colliding object pair.

    Attributes
    ----------
    object_a, object_b : (K,) int64
        The colliding object pairs (object_a < object_b, insertion-order indices), sorted.
    counts : (K,) int64
        Triangle pairs reported per object pair (capped by ``max_pairs``).
    truncated : (K,) bool
        Where ``max_pairs`` cut a pair's list.
    pair_index : (T,) int64
        Row of each triangle pair's object pair (into ``object_a``, ``object_b``), as
        ``pose_index`` names the pose of a ``Contacts`` row.
    face_a, face_b : (T,) int64
        Face of object_a and face of object_b (as given to their meshes),
        sorted by (pair_index, face_a, face_b).
    object_names : tuple of str

    ``pairs(k)`` is the (c, 2) int64 (face_a, face_b) rows of object pair ``k``.
    """

    object_a: NDArray[np.int64]
    object_b: NDArray[np.int64]
    counts: NDArray[np.int64]
    truncated: NDArray[np.bool_]
    pair_index: NDArray[np.int64]
    face_a: NDArray[np.int64]
    face_b: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "object_a", "object_b", "counts", "truncated", "pair_index", "face_a", "face_b")

    def __len__(self) -> int:
        return int(self.face_a.shape[0])

    @property
    def names(self) -> list[tuple[str, str]]:
        n = self.object_names
        return [(n[i], n[j]) for i, j in zip(self.object_a.tolist(), self.object_b.tolist(), strict=True)]

    def pairs(self, k: int) -> NDArray[np.int64]:
        """(c, 2) int64 (face_a, face_b) rows of colliding object pair ``k``."""
        return pose_rows(self.counts, self.face_a, self.face_b, k, "pair", "colliding pairs")

    def __repr__(self) -> str:
        return f"WorldContacts(pairs={self.object_a.shape[0]}, triangle_pairs={len(self)})"
