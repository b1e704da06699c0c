"""The mechanics shared by the pair queries: trees, poses, batch runs, overflow reruns.

Python is crossed once per call: poses are validated and the whole batch is
answered by one compiled call (serial, or parallel over numba threads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ..bvh import BVH, tree_for
from ..constants import MODE_ALL, MODE_ANY, MODE_FIRST, PAIRS_PER_POSE_GUESS, PARALLEL_MIN_POSES
from ..errors import InvalidPoseError, UnsupportedPairError
from ..geometry.mesh import Mesh
from ..geometry.pose import as_poses, broadcast_poses
from ..kernels.core.layout import META_FACES, N_STATS
from ..kernels.core.linalg import POSE_BAD_LAST_ROW, POSE_NOT_FINITE, POSE_NOT_RIGID
from ..kernels.traverse import descent as kt
from ..runtime import using_threads
from ..strategies import BVH as BVHStrategy
from ..strategies import resolve
from .registry import Request

_POSE_REASON = {
    POSE_NOT_FINITE: "is not finite",
    POSE_NOT_RIGID: "is not a rigid transform (rotation block not orthonormal with det +1)",
    POSE_BAD_LAST_ROW: "has a last row other than [0, 0, 0, 1]",
}
#: Result rows reserved for the first pass of a batch (2 MB of int64 keys). PERF:
#: a larger first buffer made parallel all-pairs batches 3x slower (env/rob, 1000
#: poses: 64 vs 11 us a pose with a 32 MB buffer), the page faults of a fresh
#: mapping serialising the threads; poses that do not fit are rerun with exact room.
_FIRST_PASS_ROWS = 1 << 18


def pose_error(side: str, index: int, code: int, batched: bool) -> InvalidPoseError:
    where = f"{side}[{index}]" if batched else side
    return InvalidPoseError(f"{where} {_POSE_REASON.get(code, 'is invalid')}", index)


def check_mesh(x: Any, name: str) -> Mesh:
    if not isinstance(x, Mesh):
        raise UnsupportedPairError(f"{name} must be a collisionkit.Mesh, got {type(x).__name__}")
    return x


def trees(a: Mesh, b: Mesh) -> tuple[BVH, BVH]:
    """a's tree, and b's tree built with a's volume kind (cached on both meshes)."""
    bv = a.options.bv
    return tree_for(a, bv), tree_for(b, bv)


def thread_count(threads: int | None) -> int:
    if threads is None:
        return numba.get_num_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    return min(int(threads), numba.config.NUMBA_NUM_THREADS)


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


_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


def prepare(
    a: Any, b: Any, pose_a: Any, pose_b: Any, mode: int, max_pairs: int, strategy: Any, threads: int | None,
    query: str = "", options: Mapping[str, Any] = _NO_OPTIONS,
) -> Request:
    """Validate and broadcast the poses of a query; resolve its strategy.

    ``query`` and ``options`` (every option of the query, as the caller gave
    it) travel with the request to the handler (``query/registry.py``).
    """
    strat = resolve(strategy)
    nthreads = thread_count(threads)
    pa, batched_a = as_poses(pose_a, "pose_a")
    pb, batched_b = as_poses(pose_b, "pose_b")
    n, ia, ib = broadcast_poses(pa, pb)
    side, index, code = kt.validate_poses(pa, pb)
    if side >= 0:
        raise pose_error("pose_a" if side == 0 else "pose_b", int(index), int(code), batched_a or batched_b)
    return Request(
        a, b, pa, pb, ia, ib, n, batched_a or batched_b, mode, max_pairs, strat, nthreads,
        query, MappingProxyType(dict(options)),
    )  # fmt: skip


def run(req: Request) -> BatchResult:
    """Answer a traversal request (intersects, contacts, query_stats) on two meshes.

    The built-in BVH strategy runs the descent kernels here, in one compiled
    call for the whole batch; any other strategy answers with its own ``run``.
    """
    check_mesh(req.a, "a")
    check_mesh(req.b, "b")
    if not isinstance(req.strategy, BVHStrategy):
        return req.strategy.run(req)
    a, b, mode, max_pairs = req.a, req.b, req.mode, req.max_pairs
    strat, nthreads, pa, pb, ia, ib, n = req.strategy, req.threads, req.pa, req.pb, req.ia, req.ib, req.n
    ta, tb = trees(a, b)
    tasks = np.zeros((n, 4), np.int64)
    tasks[:, 2] = ia
    tasks[:, 3] = ib
    faces_b = int(tb.arrays.meta[0, META_FACES])
    counts = np.zeros(n, np.int64)
    starts = np.full(n, -1, np.int64)
    stats = np.zeros((n, N_STATS), np.int64)
    if n == 0:
        return BatchResult(0, True, counts, stats, np.empty(0, np.int64), starts, faces_b)

    parallel = nthreads > 1 and n >= PARALLEL_MIN_POSES
    nchunks = min(n, 4 * nthreads) if parallel else 1
    per_chunk = -(-n // nchunks)
    if mode == MODE_ANY:
        guess = 0
    elif mode == MODE_FIRST:
        guess = 1
    else:
        guess = PAIRS_PER_POSE_GUESS + (ta.arrays.tris.shape[0] + tb.arrays.tris.shape[0]) // 8
        if max_pairs >= 0:
            guess = min(guess, max_pairs)
    chunk_cap = max(guess, min(guess * per_chunk, _FIRST_PASS_ROWS // nchunks))
    keys = np.empty(max(1, chunk_cap * nchunks), np.int64)
    _launch(ta, tb, pa, pb, tasks, strat, mode, max_pairs, keys, chunk_cap, starts, counts, stats, nchunks, parallel, nthreads)

    if mode != MODE_ANY:
        over = np.flatnonzero(starts < 0)
        if over.size:
            # Rerun only the poses that overflowed, now with exact room: one chunk
            # per pose of the largest count (parallel when that wastes little),
            # else all of them serially in one exactly sized buffer.
            kept = counts[over] if max_pairs < 0 else np.minimum(counts[over], max_pairs)
            sub_tasks = np.ascontiguousarray(tasks[over])
            sub_starts = np.full(over.size, -1, np.int64)
            sub_counts = np.zeros(over.size, np.int64)
            sub_stats = np.zeros((over.size, N_STATS), np.int64)
            total, widest = int(kept.sum()), int(kept.max())
            rerun_parallel = parallel and over.size >= 2 and over.size * widest <= 2 * total
            if rerun_parallel:
                sub_chunks, sub_cap = over.size, widest
            else:
                sub_chunks, sub_cap = 1, total
            sub_keys = np.empty(max(1, sub_chunks * sub_cap), np.int64)
            _launch(
                ta, tb, pa, pb, sub_tasks, strat, mode, max_pairs, sub_keys, sub_cap,
                sub_starts, sub_counts, sub_stats, sub_chunks, rerun_parallel, nthreads,
            )
            assert np.all(sub_starts >= 0) and np.array_equal(sub_counts, counts[over])
            starts[over] = sub_starts + keys.shape[0]
            keys = np.concatenate([keys, sub_keys])
    return BatchResult(n, req.batched, counts, stats, keys, starts, faces_b)


def _launch(ta, tb, pa, pb, tasks, strat, mode, max_pairs, keys, chunk_cap, starts, counts, stats, nchunks, parallel, nthreads):
    args = (
        *ta.arrays, pa, *tb.arrays, pb, tasks, ta.options.bv_code, strat.tri_test_code,
        mode, max_pairs, keys, chunk_cap, starts, counts, stats, nchunks,
    )
    if parallel:
        with using_threads(nthreads):
            kt.query_parallel(*args)
    else:
        kt.query_serial(*args)


def run_chunks(n: int, threads: int, fn: Callable[[int, int], None]) -> None:
    """Run ``fn(lo, hi)`` over [0, n) in chunks: on ``threads`` Python threads for a batch of
    at least PARALLEL_MIN_POSES tasks, else in one serial call.

    For kernels that answer one task per call and release the GIL (``nogil=True``),
    where one task costs far more than a call (time of impact): the chunks are
    4 per thread, so uneven tasks balance.
    """
    if threads <= 1 or n < PARALLEL_MIN_POSES:
        fn(0, n)
        return
    nchunks = min(n, 4 * threads)
    bounds = np.linspace(0, n, nchunks + 1).astype(np.int64)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(fn, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]:
            f.result()


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


__all__ = ["MODE_ALL", "MODE_ANY", "MODE_FIRST", "BatchResult", "Request", "gather", "prepare", "result_from_pairs", "run", "trees"]
