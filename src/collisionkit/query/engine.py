"""The mechanics shared by the pair queries: trees, poses, batch runs, overflow reruns.

Python is crossed once per call: poses are validated and the whole batch is
answered by one compiled call (serial, or parallel over numba threads).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ..bvh import BVH, pair_volume, tree_for
from ..constants import FRONT_PER_THREAD, MODE_ALL, MODE_ANY, MODE_FIRST, SPLIT_WORK
from ..errors import InvalidPoseError, UnsupportedPairError
from ..geometry.mesh import Mesh
from ..geometry.pose import as_poses, broadcast_poses
from ..kernels.core.layout import META_FACES, META_LEAFMAX, N_STATS
from ..kernels.core.linalg import POSE_BAD_LAST_ROW, POSE_NOT_FINITE, POSE_NOT_RIGID
from ..kernels.traverse import descent as kt
from ..strategies import BVH as BVHStrategy
from ..strategies import resolve
from . import batch
from .batch import thread_count
from .registry import Request

_POSE_REASON = {
    POSE_NOT_FINITE: "is not finite",
    POSE_NOT_RIGID: "is not a rigid transform (rotation block not orthonormal with det +1)",
    POSE_BAD_LAST_ROW: "has a last row other than [0, 0, 0, 1]",
}


def pose_error(side: str, index: int, code: int, batched: bool) -> InvalidPoseError:
    where = f"{side}[{index}]" if batched else side
    return InvalidPoseError(f"{where} {_POSE_REASON.get(code, 'is invalid')}", index)


def check_mesh(x: Any, name: str) -> Mesh:
    if not isinstance(x, Mesh):
        raise UnsupportedPairError(f"{name} must be a collisionkit.Mesh, got {type(x).__name__}")
    return x


def trees(a: Mesh, b: Mesh) -> tuple[BVH, BVH]:
    """Both trees in the pair's volume kind (``bvh.pair_volume``; cached on both meshes)."""
    bv = pair_volume(a, b)
    return tree_for(a, bv), tree_for(b, bv)


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
    if 0 < n < nthreads and splits(mode, max_pairs):
        return _split_batch(req, ta, tb)
    tasks = np.zeros((n, 4), np.int64)
    tasks[:, 2] = ia
    tasks[:, 3] = ib
    faces_b = int(tb.arrays.meta[0, META_FACES])
    guess = batch.row_guess(mode, max_pairs, ta.arrays.tris.shape[0] + tb.arrays.tris.shape[0])
    # the threads claim poses as they go, one worker chunk each; each worker's key slice
    # has room for twice its even share (a worker that claims more reruns what overflows)
    p = batch.plan(n, nthreads, uniform=True)
    run_rows = descent_rows(ta.arrays, pa, tb.arrays, pb, ta.options.bv_code, strat.tri_test_code, mode, max_pairs, dynamic=True)
    room = min(2 * guess * -(-n // p.nchunks), batch.FIRST_PASS_ROWS // p.nchunks)
    rows = batch.pair_rows(tasks, p, guess, mode, max_pairs, run_rows, min_chunk_rows=room)
    return BatchResult(n, req.batched, rows.counts, rows.stats, rows.keys, rows.starts, faces_b)


#: ``shared`` of tasks that run in static chunks and share no early exit
#: (``kernels/traverse/descent._run_chunk``).
_STATIC = np.zeros(0, np.int64)


def descent_rows(
    pool_a: tuple, poses_a, pool_b: tuple, poses_b, bv_code: int, tri_test: int, mode: int, max_pairs: int,
    dynamic: bool = False, shared_exit: bool = False,
) -> batch.RowLauncher:  # fmt: skip
    """The descent kernels (``kernels/traverse/descent.py``) as a row launcher.

    ``pool_a``/``pool_b``: one tree's ``BVHArrays`` or a pool of trees in that layout
    (the World's); tasks name (tree in a, tree in b, pose in a, pose in b), optionally
    followed by the node pair to start from (a split pose's front, ``split_pose``).
    ``dynamic``: a parallel first pass's chunks claim tasks as they go (plan one chunk a
    thread): tasks that differ in cost (colliding and missing poses, one pose's front)
    then never leave a thread idle, on a busy machine too. ``shared_exit``: the tasks are
    parts of one boolean pose, and the first pair found ends them all. Reruns of tasks
    that overflowed run in static chunks, each with its exact room.
    """
    head = (*pool_a, poses_a, *pool_b, poses_b)
    opts = (np.int64(bv_code), np.int64(tri_test), np.int64(mode), np.int64(max_pairs))
    stop = 0 if shared_exit else -1

    def run(p, tasks, keys, chunk_cap, starts, counts, stats, rerun):
        # [stop, next task] (kernels/traverse/descent._run_chunk)
        shared = np.array([stop, 0], np.int64) if dynamic and p.parallel and not rerun else _STATIC
        batch.launch(
            p, kt.query_serial, kt.query_parallel, *head, tasks, *opts, keys, np.int64(chunk_cap), starts, counts, stats, shared
        )  # fmt: skip

    return run


def splits(mode: int, max_pairs: int) -> bool:
    """Whether a query of this mode may split one pose over threads (``split_pose``):
    booleans and uncapped all-pairs. A cap keeps the first pairs the serial descent
    meets, and "first" reports the serial descent's first pair: both stay serial."""
    return mode == MODE_ANY or (mode == MODE_ALL and max_pairs < 0)


class PoseRows(NamedTuple):
    """One pose's answer from ``split_pose``."""

    found: int  # pairs (MODE_ALL), 0/1 (MODE_ANY), or a negative pose error (kernels.traverse.descent.contacts_one)
    keys: NDArray[np.int64]  # (found,) sorted pair keys face_a * faces_b + face_b (MODE_ALL), else empty
    stats: NDArray[np.int64]  # (N_STATS,) counters of every part
    split: bool  # whether its front ran as tasks


_NO_KEYS = np.zeros(0, np.int64)
#: the per-call contacts kernel without numba's per-call type dispatch (batch.Pinned: 2.6 us
#: of a 4 us call with 23 arguments): its callers pass library-built tree arrays, their own
#: buffers, ints and (4, 4) C-contiguous writable float64 poses (pair._single_pose, prepare)
CONTACTS_ONE = batch.Pinned(kt.contacts_one)


def split_pose(
    ta: BVH, tb: BVH, Ta: NDArray[np.float64], Tb: NDArray[np.float64], tri_test: int, mode: int,
    threads: int | None, budget: int = SPLIT_WORK,
) -> PoseRows:  # fmt: skip
    """One pose pair (MODE_ALL without a cap, or MODE_ANY) on all threads when it is large.

    The descent runs serially for ``budget`` work units (``kernels.traverse.descent.
    contacts_one``); a query not done by then expands the node pairs it left, breadth
    first, into a front of ``FRONT_PER_THREAD`` pairs a thread, and the front runs as
    tasks of the batch engine (chunk plan, key buffers, exact-room reruns), each
    descending from its pair; a boolean's tasks share a stop flag. Each node pair has
    one parent, so the parts partition the descent and the sorted rows are exactly the
    serial rows. Counters are the parts' sums: for MODE_ALL the serial counters (every
    node pair and leaf pair is tested once either way); a boolean may stop at another
    first pair, so its counters differ.

    ``Ta``, ``Tb``: (4, 4) C-contiguous writable float64 (their values are checked by the
    kernel, their layout is not: ``CONTACTS_ONE``).
    ``threads``: as the query's option (None: numba's count); resolved only when the
    pose splits. ``budget`` 0 splits at the roots (a boolean that ``intersect_one``
    already found large).
    """
    x, y = ta.arrays, tb.arrays
    nmax = numba.config.NUMBA_NUM_THREADS
    target = FRONT_PER_THREAD * (nmax if threads is None else min(threads, nmax))
    fan = max(ta.fanout, tb.fanout)
    front = np.empty((target + (ta.depth + tb.depth) * (fan - 1) + 2 + fan, 2), np.int32)
    # room for what the serial part can find: budget, the leaf pair that crosses it, the
    # expansion's margin of one leaf pair (contacts_one)
    room = budget + 2 * int(x.meta[0, META_LEAFMAX] * y.meta[0, META_LEAFMAX]) if mode == MODE_ALL else 1
    keys = np.empty(room, np.int64)
    stats = np.zeros((1, N_STATS), np.int64)
    r, m = CONTACTS_ONE.call(*x, Ta, *y, Tb, ta.bv_code, tri_test, mode, -1, keys, budget, front, target, stats)
    if r < 0 or m == 0:
        return PoseRows(int(r), keys[: max(int(r), 0)] if mode == MODE_ALL else _NO_KEYS, stats[0], False)
    nthreads = thread_count(threads)
    tasks = np.zeros((m, 6), np.int64)
    tasks[:, 4:] = front[:m]
    # one worker chunk a thread, claiming front tasks as it goes (their costs are skewed)
    p = batch.Plan(m, nthreads, nthreads > 1, min(m, nthreads))
    run = descent_rows(
        x, Ta.reshape(1, 4, 4), y, Tb.reshape(1, 4, 4), ta.bv_code, tri_test, mode, -1, dynamic=True, shared_exit=True
    )  # fmt: skip
    guess = batch.row_guess(mode, -1, x.tris.shape[0] + y.tris.shape[0])
    # every chunk gets room for the whole first pass: one pose's pairs bunch up in a few
    # subtrees, a chunk claims any number of tasks, and a task that overflows is run
    # again (pages are touched only as written)
    room = batch.FIRST_PASS_ROWS // p.nchunks if mode == MODE_ALL else 0
    rows = batch.pair_rows(tasks, p, guess, mode, -1, run, min_chunk_rows=room)
    total = stats[0] + rows.stats.sum(axis=0)
    if mode == MODE_ANY:
        return PoseRows(int(rows.counts.any()), _NO_KEYS, total, True)
    out = np.empty(int(r) + int(rows.counts.sum()), np.int64)
    kt.join_rows(keys, np.int64(r), rows.keys, rows.starts, rows.counts, out)
    return PoseRows(out.shape[0], out, total, True)


def _split_batch(req: Request, ta: BVH, tb: BVH) -> BatchResult:
    """Fewer poses than threads: each pose in turn on all threads (``split_pose``)."""
    n = req.n
    counts = np.zeros(n, np.int64)
    stats = np.zeros((n, N_STATS), np.int64)
    starts = np.zeros(n, np.int64)
    parts = []
    w = 0
    for i in range(n):
        r = split_pose(ta, tb, req.pa[req.ia[i]], req.pb[req.ib[i]], req.strategy.tri_test_code, req.mode, req.threads)
        counts[i], stats[i], starts[i] = r.found, r.stats, w
        parts.append(r.keys)
        w += r.keys.shape[0]
    faces_b = int(tb.arrays.meta[0, META_FACES])
    return BatchResult(n, req.batched, counts, stats, np.concatenate(parts), starts, faces_b)


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


__all__ = [
    "MODE_ALL", "MODE_ANY", "MODE_FIRST", "BatchResult", "PoseRows", "Request", "descent_rows", "gather", "prepare",
    "result_from_pairs", "run", "split_pose", "splits", "trees",
]  # fmt: skip
