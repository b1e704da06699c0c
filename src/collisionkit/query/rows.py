"""The answer of the pair-row questions (intersects, contacts, query_stats) before its record.

Every strategy answers a traversal request with a ``BatchResult``: per pose the pair count
and counters, and the sorted pair keys ``face_a * faces_b + face_b`` of each pose's rows.
``gather`` turns it into the record's columns; ``result_from_pairs`` builds one from
flat pair columns found outside the engine's kernels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..constants import MODE_ALL
from ..kernels.core.layout import N_STATS
from ..kernels.traverse import descent as kt


class BatchResult(NamedTuple):
    n: int
    batched: bool
    counts: NDArray[np.int64]  # (N,) pairs found (0/1 for any/first; max_pairs+1 when capped)
    stats: NDArray[np.int64]  # (N, 4)
    keys: NDArray[np.int64]
    starts: NDArray[np.int64]
    faces_b: int


def result_from_pairs(
    n: int, batched: bool, pose_of_pair: NDArray[np.int64], face_a: NDArray[np.int64],
    face_b: NDArray[np.int64], faces_b: int, mode: int, max_pairs: int, stats: NDArray[np.int64] | None = None,
) -> BatchResult:
    """A BatchResult from flat pair columns (any order; duplicates not allowed).

    For strategies and shape handlers that find their pairs outside the
    engine's kernels: counts are per pose, capped as ``max_pairs`` asks
    (``counts`` is then max_pairs + 1 where more exist, as the kernels do).
    """
    pose_of_pair = np.asarray(pose_of_pair, np.int64)
    key = np.asarray(face_a, np.int64) * max(faces_b, 1) + np.asarray(face_b, np.int64)
    order = np.lexsort((key, pose_of_pair))
    pose_of_pair, key = pose_of_pair[order], key[order]
    counts = np.bincount(pose_of_pair, minlength=n).astype(np.int64)
    starts = np.zeros(n, np.int64)
    if n:
        starts[1:] = np.cumsum(counts)[:-1]
    if mode != MODE_ALL:
        counts = np.minimum(counts, 1)
    elif max_pairs >= 0:
        counts = np.minimum(counts, max_pairs + 1)
    if stats is None:
        stats = np.zeros((n, N_STATS), np.int64)
    return BatchResult(n, batched, counts, stats, key, starts, faces_b)


def gather(result: BatchResult, max_pairs: int, task_pose: NDArray[np.int64] | None = None):
    """Result columns (pose_index, face_a, face_b, truncated) from a batch run."""
    n = result.n
    kept = result.counts if max_pairs < 0 else np.minimum(result.counts, max_pairs)
    total = int(kept.sum())
    pose_index = np.empty(total, np.int64)
    face_a = np.empty(total, np.int64)
    face_b = np.empty(total, np.int64)
    truncated = np.zeros(n, np.bool_)
    if task_pose is None:
        task_pose = np.arange(n, dtype=np.int64)
    kt.gather_pairs(result.keys, result.starts, result.counts, max_pairs, result.faces_b, task_pose, pose_index, face_a, face_b, truncated)
    return pose_index, face_a, face_b, kept.astype(np.int64), truncated


__all__ = ["BatchResult", "gather", "result_from_pairs"]
