"""Task rows in a shared key buffer: the bookkeeping every pair-row driver shares.

A pair-row driver (``descent``, ``oaabb``, ``bfs``) runs its tasks chunk by
chunk; chunk c owns ``keys[c*chunk_cap : (c+1)*chunk_cap]`` and writes each
task's pair keys (face_a * faces_b + face_b) from a cursor. ``place_rows``
records where a task's rows went, or that they did not fit (the caller,
``query/batch.pair_rows``, reruns that task with exact room).
"""

from __future__ import annotations

from ...constants import MODE_ANY
from ..core.jit import njit


# inline: measured 6 us more per 400-pose batch of root misses as a call (three array
# arguments' refcounts per task); the body is a few lines, so the copies cost little compile.
@njit(cache=True, nogil=True, inline="always")
def place_rows(keys, cursor, room, found, mode, max_pairs, starts, counts, k):
    """Record task ``k``'s ``found`` pairs, written from ``keys[cursor]`` with
    ``room`` rows free; return the next task's cursor.

    ``counts[k] = found`` (a capped task reports ``max_pairs + 1``); the kept
    rows (none for MODE_ANY, at most ``max_pairs``) are sorted so a task's rows
    come out in (face_a, face_b) order; ``starts[k] = -1`` when they did not fit.
    """
    counts[k] = found
    kept = found
    if max_pairs >= 0 and kept > max_pairs:
        kept = max_pairs
    if mode == MODE_ANY:
        kept = 0
    if kept > room:
        starts[k] = -1
        return cursor
    starts[k] = cursor
    if kept > 1:
        keys[cursor : cursor + kept].sort()
    return cursor + kept
