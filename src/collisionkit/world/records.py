"""Frozen result records of World queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..query.deferred import Computable, to_dataframe
from ..query.results import _freeze  # the one rule that seals a record's arrays


@dataclass(frozen=True, eq=False)
class Pairs:
    """Pairs of World objects.

    Attributes
    ----------
    index : (M, 2) int64
        Rows (i, j), i < j, of object indices in insertion order (the order of
        ``World.names`` when the query ran), sorted by (i, j).
    object_names : tuple of str
        ``World.names`` when the query ran (index -> name).

    ``names`` gives the rows as (name_i, name_j) tuples; iterating a Pairs
    yields those tuples; ``len`` is M.
    """

    index: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "index")

    def __len__(self) -> int:
        return int(self.index.shape[0])

    @property
    def names(self) -> list[tuple[str, str]]:
        n = self.object_names
        return [(n[i], n[j]) for i, j in self.index.tolist()]

    def __iter__(self):
        return iter(self.names)

    def __contains__(self, pair: object) -> bool:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        return pair in set(self.names) or (pair[1], pair[0]) in set(self.names)

    def __repr__(self) -> str:
        return f"Pairs({len(self)} of {len(self.object_names)} objects)"


@dataclass(frozen=True, eq=False)
class FramePairs(Computable):
    """The colliding pairs of every frame of a trajectory (``World.run``): one row per
    (frame, pair).

    Attributes
    ----------
    frame : (M,) int64
        Frame of each row (0-based over the frames given), rows sorted by (frame, a, b).
    a, b : (M,) int64
        Object indices (insertion order, ``object_names``), a < b.
    counts : (F,) int64
        Colliding pairs per frame.
    object_names : tuple of str
        ``World.names`` when the frames ran.

    ``rows`` is the (M, 3) int64 array of (frame, a, b); ``pairs(f)`` one frame's ``Pairs``.
    Given a Dask array of frames, the fields are Dask arrays (``compute()`` gives numpy;
    ``to_dataframe()`` a Dask DataFrame).
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("counts",)

    frame: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    counts: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "frame", "a", "b", "counts")

    def __len__(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_frames(self) -> int:
        return int(self.counts.shape[0])

    @property
    def rows(self) -> NDArray[np.int64]:
        """(M, 3) int64 rows (frame, a, b)."""
        return np.stack([self.frame, self.a, self.b], axis=1)

    @property
    def colliding(self) -> NDArray[np.bool_]:
        """(F,) bool: the frames with at least one colliding pair."""
        return self.counts > 0

    def pairs(self, frame: int) -> Pairs:
        """The colliding pairs of one frame (as ``World.step`` returned them)."""
        if not 0 <= frame < self.n_frames:
            raise IndexError(f"frame {frame} out of range for {self.n_frames} frames")
        start = int(self.counts[:frame].sum())
        stop = start + int(self.counts[frame])
        return Pairs(np.stack([self.a[start:stop], self.b[start:stop]], axis=1), self.object_names)

    def to_dataframe(self) -> Any:
        """The rows as a pandas DataFrame (frame, a, b); a Dask DataFrame when lazy."""
        return to_dataframe(self, ("frame", "a", "b"))

    def __repr__(self) -> str:
        if self.lazy:
            return f"FramePairs(frames={self.n_frames}, lazy)"
        return f"FramePairs(frames={self.n_frames}, rows={len(self)}, objects={len(self.object_names)})"


@dataclass(frozen=True, eq=False)
class WorldContacts:
    """Intersecting triangle pairs of every colliding object pair.

    Attributes
    ----------
    pairs : (K, 2) int64
        The colliding object pairs (i < j, insertion-order indices), sorted.
    counts : (K,) int64
        Triangle pairs reported per object pair (capped by ``max_pairs``).
    truncated : (K,) bool
        Where ``max_pairs`` cut a pair's list.
    pair_row : (T,) int64
        Row in ``pairs`` of each triangle pair.
    face_a, face_b : (T,) int64
        Face of object i and face of object j (as given to their meshes),
        sorted by (pair_row, face_a, face_b).
    object_names : tuple of str
    """

    pairs: NDArray[np.int64]
    counts: NDArray[np.int64]
    truncated: NDArray[np.bool_]
    pair_row: NDArray[np.int64]
    face_a: NDArray[np.int64]
    face_b: NDArray[np.int64]
    object_names: tuple[str, ...]

    def __post_init__(self) -> None:
        _freeze(self, "pairs", "counts", "truncated", "pair_row", "face_a", "face_b")

    def __len__(self) -> int:
        return int(self.face_a.shape[0])

    @property
    def names(self) -> list[tuple[str, str]]:
        n = self.object_names
        return [(n[i], n[j]) for i, j in self.pairs.tolist()]

    def faces(self, k: int) -> NDArray[np.int64]:
        """(c, 2) int64 (face_a, face_b) rows of colliding pair ``k``."""
        if not 0 <= k < self.pairs.shape[0]:
            raise IndexError(f"pair {k} out of range for {self.pairs.shape[0]} colliding pairs")
        start = int(self.counts[:k].sum())
        stop = start + int(self.counts[k])
        return np.stack([self.face_a[start:stop], self.face_b[start:stop]], axis=1)

    def __repr__(self) -> str:
        return f"WorldContacts(pairs={self.pairs.shape[0]}, triangle_pairs={len(self)})"
