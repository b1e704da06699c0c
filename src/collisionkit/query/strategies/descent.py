"""The default strategy: simultaneous depth-first descent of the two meshes' hierarchies.

``collisionkit.Descent`` (``strategy="descent"``) on two meshes: the descent kernels
(``kernels/traverse/descent.py``) over the whole batch in one compiled call (``run``),
as a row launcher other callers reuse (``descent_rows``: the World's narrow phase), and
one large pose split over all threads (``split_pose``, ARCHITECTURE.md "One large pose
on all threads").
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ...bvh import BVH, pair_trees
from ...constants import DESCENT_BOX_KINDS, FRONT_PER_THREAD, MODE_ALL, MODE_ANY, SPLIT_WORK, TRI_TEST_GUIGUE
from ...kernels.core.layout import META_FACES, META_LEAFMAX, N_STATS
from ...kernels.traverse import descent as kt
from ...strategies import Descent
from .. import batch
from ..batch import thread_count
from ..driver import check_mesh
from ..registry import Request
from ..rows import BatchResult
from . import Capabilities, declare


def run(req: Request, record: Any = None) -> BatchResult:
    """Answer a traversal request (intersects, contacts, query_stats) on two meshes
    (``record``: the request's ``Descent`` record, as a runner of ``strategies.walk``).

    The descent kernels over the whole batch in one compiled call; fewer poses than
    threads: each pose on all threads (``split_pose``).
    """
    check_mesh(req.a, "a")
    check_mesh(req.b, "b")
    a, b, mode, max_pairs = req.a, req.b, req.mode, req.max_pairs
    strat, nthreads, pa, pb, ia, ib, n = req.strategy, req.threads, req.pa, req.pb, req.ia, req.ib, req.n
    ta, tb = pair_trees(a, b)
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


def descent_tri(bv_code: int, tri_test: int) -> int | None:
    """The descent kernels' ``tri_test`` argument (``kernels.traverse.descent.collide_task``).

    ``None`` for Guigue's test on box trees (AABB, OBB, saabb): the common case, the one
    specialisation a first query compiles (numba prunes the other tests and kinds by
    type, issue 32). Else the code (numba types a Python int as int64, as np.int64): any
    test and volume kind, chosen at run time.
    """
    if tri_test == TRI_TEST_GUIGUE and bv_code in DESCENT_BOX_KINDS:
        return None
    return int(tri_test)


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
    opts = (np.int64(bv_code), descent_tri(bv_code, tri_test), np.int64(mode), np.int64(max_pairs))
    stop = 0 if shared_exit else -1

    def run(p, tasks, keys, chunk_cap, starts, counts, stats, rerun):
        # [stop, next task] (kernels/traverse/descent._run_chunk)
        # a shared exit needs the shared claim counter, serial launches too (one chunk claims all)
        claim = dynamic and (p.parallel or shared_exit) and not rerun
        shared = np.array([stop, 0], np.int64) if claim else _STATIC
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
#: buffers, ints and (4, 4) C-contiguous writable float64 poses (driver.single_pose, driver.prepare)
#: One per ``descent_tri`` specialisation (a pinned call takes the argument types of its
#: first): ``CONTACTS_ONE[tri is not None]``.
CONTACTS_ONE = (batch.Pinned(kt.contacts_one), batch.Pinned(kt.contacts_one))


def _front(ta: BVH, tb: BVH, target: int) -> NDArray[np.int32]:
    """Room for a split pose's front of about ``target`` node pairs (``contacts_one``: the
    target, the descent's stack and the larger fan-out)."""
    fan = max(ta.fanout, tb.fanout)
    return np.empty((target + (ta.depth + tb.depth) * (fan - 1) + 2 + fan, 2), np.int32)


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
    front = _front(ta, tb, target)
    # room for what the serial part can find: budget, the leaf pair that crosses it, the
    # expansion's margin of one leaf pair (contacts_one)
    room = budget + 2 * int(x.meta[0, META_LEAFMAX] * y.meta[0, META_LEAFMAX]) if mode == MODE_ALL else 1
    keys = np.empty(room, np.int64)
    stats = np.zeros((1, N_STATS), np.int64)
    tri = descent_tri(ta.bv_code, tri_test)
    r, m = CONTACTS_ONE[tri is not None].call(*x, Ta, *y, Tb, ta.bv_code, tri, mode, -1, keys, budget, front, target, stats)
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


#: the batch driver a split boolean's front runs on, without numba's per-call type dispatch
#: (batch.Pinned: 26 arguments), one per ``descent_tri`` specialisation; its argument types
#: are the batch path's (``descent_rows``), so the split compiles nothing of its own
_SPLIT_DRIVER = (batch.Pinned(kt.query_parallel), batch.Pinned(kt.query_parallel))


def split_boolean(ta: BVH, tb: BVH, Ta: NDArray[np.float64], Tb: NDArray[np.float64], tri: int | None, nthreads: int) -> int:
    """A per-call boolean that its first pass left large (``kernels.traverse.descent.
    intersect_one`` answered UNSETTLED), on ``nthreads`` of numba's threads (the caller
    sets the count): 1 or 0.

    ``split_pose(mode=MODE_ANY, budget=0)`` without the batch engine's bookkeeping (~40 us
    a call on this 2-core VM, 5-9% of a query just past SPLIT_WORK): the descent from the
    roots is expanded into a front of FRONT_PER_THREAD node pairs a thread
    (``contacts_one`` with budget 0), then the batch driver runs the front as tasks that
    the threads claim as they go, sharing a stop flag (the first pair found ends them all:
    ``_run_chunk``). ``tri``: as ``descent_tri`` gives it; ``Ta``, ``Tb``: (4, 4)
    C-contiguous writable float64, checked by the first pass.
    """
    x, y = ta.arrays, tb.arrays
    target = FRONT_PER_THREAD * nthreads
    front = _front(ta, tb, target)
    keys = np.empty(1, np.int64)  # MODE_ANY stores no keys
    stats = np.zeros((1, N_STATS), np.int64)
    r, m = CONTACTS_ONE[tri is not None].call(*x, Ta, *y, Tb, ta.bv_code, tri, MODE_ANY, -1, keys, 0, front, target, stats)
    if r != 0 or m == 0:
        return int(r)
    tasks = np.zeros((m, 6), np.int64)
    tasks[:, 4:] = front[:m]
    shared = np.zeros(2, np.int64)  # [stop (0: one pose's parts, a shared exit), next task]
    _SPLIT_DRIVER[tri is not None].call(
        *x, Ta.reshape(1, 4, 4), *y, Tb.reshape(1, 4, 4), tasks, np.int64(ta.bv_code), tri, np.int64(MODE_ANY), np.int64(-1),
        keys, np.int64(0), np.empty(m, np.int64), np.zeros(m, np.int64), np.zeros((m, N_STATS), np.int64), shared,
        np.int64(nthreads),
    )  # fmt: skip
    return int(shared[0])


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


#: the built-in default walks triangle surfaces: two meshes, a convex shape's surface
#: ``.mesh`` against a mesh; on two convex solids it hands over to "gjk"
declare(
    Descent,
    Capabilities(
        walks="surfaces", pairs=frozenset({"mesh", "convex-mesh"}), on_solids="gjk",
        questions=frozenset({"intersects", "contacts", "query_stats", "surface_contacts"}),
    ),
    run,
)  # fmt: skip

__all__ = ["CONTACTS_ONE", "PoseRows", "descent_rows", "descent_tri", "run", "split_boolean", "split_pose", "splits"]
