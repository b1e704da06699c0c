"""The batch engine: how every batched query runs its tasks.

One module owns what each query used to repeat: the thread count, the chunk
plan (which tasks run in which chunk, serial or parallel), the launch of a
kernel's serial or parallel driver with the thread count set, Python-thread
pools for kernels that answer one task per call and release the GIL, and the
caller-owned row buffers of the pair queries with their overflow reruns.

Every query, strategy, the World's narrow phase and (through ``intersects``)
``Robot.check`` launch through here. The contract with a kernel is small:

- per-pose kernels (distance, penetration, classify's parts, GJK, double box)
  come as a pair of drivers ``serial(*args, nchunks)`` / ``parallel(*args,
  nchunks)`` that run task ``k`` in chunk ``k % nchunks`` and write row ``k``
  of caller-owned arrays (``launch``);
- pair-row kernels (intersects, contacts, query_stats, surface contacts on
  every strategy) are wrapped by the strategy in a ``RowLauncher`` that fills
  ``keys[c*cap:(c+1)*cap]`` for chunk ``c``, marks a task that did not fit with
  ``starts[k] = -1`` and stops a task early when its mode allows
  (``MODE_ANY``: at the first pair; ``MODE_FIRST``: one row); ``pair_rows``
  sizes the buffers and reruns the tasks that overflowed with exact room;
- one-task kernels that release the GIL (time of impact) run through
  ``run_chunks`` on Python threads.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, Protocol

import numba
import numpy as np
from numpy.typing import NDArray

from ..constants import MODE_ANY, MODE_FIRST, PAIRS_PER_POSE_GUESS, PARALLEL_MIN_POSES
from ..errors import CollisionKitError
from ..kernels.core.layout import N_STATS
from ..runtime import using_threads

#: Result rows reserved for the first pass of a batch (2 MB of int64 keys). PERF:
#: a larger first buffer made parallel all-pairs batches 3x slower (env/rob, 1000
#: poses: 64 vs 11 us a pose with a 32 MB buffer), the page faults of a fresh
#: mapping serialising the threads; tasks that do not fit are rerun with exact room.
FIRST_PASS_ROWS = 1 << 18


class Pinned:
    """A per-call kernel called without numba's per-call type dispatch.

    ``call(*args)`` dispatches normally the first time, then calls the compiled
    overload chosen for those argument types directly (numba's dispatcher types every
    argument on every call: about 0.5 us of a 2 us per-call ``intersects`` with 14
    arguments). Only for callers whose argument types are fixed by construction (trees
    built by the library, poses checked as writable C-contiguous (4, 4) float64,
    Python ints): the compiled entry does not type its arguments again. Falls back to
    the dispatcher when numba exposes no overload for those types.
    """

    __slots__ = ("call", "_dispatcher")

    def __init__(self, dispatcher: Callable) -> None:
        self._dispatcher = dispatcher
        self.call: Callable = self._first

    def _first(self, *args):
        d: Any = self._dispatcher  # a numba Dispatcher (its internals are untyped)
        out = d(*args)
        try:  # NOTE: numba internals (0.5x-0.68): overloads keyed by the argument types
            types = tuple(d.typeof_pyval(a) for a in args)
            self.call = d.overloads[types].entry_point
        except (AttributeError, KeyError, TypeError):
            self.call = d
        return out


def thread_count(threads: int | None) -> int:
    """The thread count a query runs with: ``threads`` checked, or numba's current count."""
    if threads is None:
        return numba.get_num_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    return min(int(threads), numba.config.NUMBA_NUM_THREADS)


class Plan(NamedTuple):
    """How a batch of ``n`` tasks runs: ``nchunks`` chunks, in parallel over ``threads`` or serially."""

    n: int
    threads: int
    parallel: bool
    nchunks: int


def plan(n: int, threads: int, *, parallel_ok: bool = True, uniform: bool = False) -> Plan:
    """The chunk plan of ``n`` tasks: parallel from ``PARALLEL_MIN_POSES`` tasks on
    (a thread costs more than a few small tasks), 4 chunks per thread so uneven
    tasks balance, or one per thread (``uniform``) where a chunk costs more than balance
    gains: numba splits a prange's chunks evenly over the threads (static), and each chunk
    allocates its scratch (PERF: convex penetration, 200 poses of ~0.5 us: 72 us in 8
    chunks, 63 us in 2; mesh distance, 100 env-rob poses: 12.2 vs 10.4 us a pose); one
    chunk when serial."""
    parallel = parallel_ok and threads > 1 and n >= PARALLEL_MIN_POSES
    return Plan(n, threads, parallel, min(n, (1 if uniform else 4) * threads) if parallel else 1)


def launch(p: Plan, serial: Callable, parallel: Callable, *args) -> None:
    """Run a per-pose batch: ``parallel(*args, nchunks)`` on ``p.threads`` numba
    threads, or ``serial(*args, nchunks)``; both write caller-owned rows."""
    nchunks = np.int64(p.nchunks)
    if not p.parallel:
        serial(*args, nchunks)
    elif p.threads == numba.get_num_threads():
        # PERF: setting and restoring the count costs ~16 us a launch more than this check
        # (numba's set_num_threads), and the count is usually already right (threads=None)
        parallel(*args, nchunks)
    else:
        with using_threads(p.threads):
            parallel(*args, nchunks)


def launch_prange(p: Plan, kernel: Callable, *args) -> None:
    """Run a kernel that is its own driver (a prange over ``p.nchunks`` chunks sized
    by its arguments) on ``p.threads`` numba threads, or on one when the plan is serial."""
    n = p.threads if p.parallel else 1
    if n == numba.get_num_threads():
        kernel(*args)
    else:
        with using_threads(n):
            kernel(*args)


def run_chunks(n: int, threads: int, fn: Callable[[int, int], None]) -> None:
    """Run ``fn(lo, hi)`` over [0, n) in chunks: on ``threads`` Python threads for a batch of
    at least PARALLEL_MIN_POSES tasks, else in one serial call.

    For kernels that answer one task per call and release the GIL (``nogil=True``),
    where one task costs far more than a call (time of impact): the chunks are
    4 per thread, so uneven tasks balance.
    """
    p = plan(n, threads)
    if not p.parallel:
        fn(0, n)
        return
    bounds = np.linspace(0, n, p.nchunks + 1).astype(np.int64)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(fn, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]:
            f.result()


# --------------------------------------------------------------------------- pair rows


class RowLauncher(Protocol):
    """A strategy's pair-row kernel bound to its trees and options.

    Called with a chunk plan, the tasks (one row each) and caller-owned buffers:
    ``keys`` (``p.nchunks * chunk_cap`` rows), ``starts``, ``counts`` (N,) and
    ``stats`` (N, N_STATS). ``rerun`` is True for the exact-room rerun of the
    tasks that overflowed (a launcher that counts extra things, e.g. node
    visits, counts the rerun into scratch: the first pass counted them).
    """

    def __call__(
        self, p: Plan, tasks: NDArray[np.int64], keys: NDArray[np.int64], chunk_cap: int,
        starts: NDArray[np.int64], counts: NDArray[np.int64], stats: NDArray[np.int64], rerun: bool,
    ) -> None: ...  # fmt: skip


def row_guess(mode: int, max_pairs: int, size: int) -> int:
    """Rows to reserve per task in the first pass: none for ``any`` (early exit at
    the first pair), one for ``first``, else a guess from the two meshes' sizes."""
    if mode == MODE_ANY:
        return 0
    if mode == MODE_FIRST:
        return 1
    guess = PAIRS_PER_POSE_GUESS + size // 8
    return min(guess, max_pairs) if max_pairs >= 0 else guess


class Rows(NamedTuple):
    """Pair rows of a batch: task k's rows are ``keys[starts[k] : starts[k] + kept]``."""

    counts: NDArray[np.int64]  # (N,) pairs found (0/1 for any/first; max_pairs+1 when capped)
    stats: NDArray[np.int64]  # (N, N_STATS)
    keys: NDArray[np.int64]
    starts: NDArray[np.int64]


def pair_rows(
    tasks: NDArray[np.int64], p: Plan, guess: int, mode: int, max_pairs: int, run: RowLauncher,
    *, rerun_parallel: bool = True, min_chunk_rows: int = 0,
) -> Rows:  # fmt: skip
    """Run a pair-row kernel over ``tasks`` (one row each) and rerun what overflowed.

    The first pass gives each chunk ``guess`` rows per task (at most
    ``FIRST_PASS_ROWS`` in all, at least ``min_chunk_rows`` a chunk); tasks
    whose rows did not fit are rerun with exact room (their counts are known):
    one chunk per task of the largest count, in parallel, when that wastes
    little and ``rerun_parallel`` allows, else serially in one buffer.
    """
    n = tasks.shape[0]
    counts = np.zeros(n, np.int64)
    starts = np.empty(n, np.int64)
    starts.fill(-1)
    stats = np.zeros((n, N_STATS), np.int64)
    if n == 0:
        return Rows(counts, stats, np.empty(0, np.int64), starts)
    per_chunk = -(-n // p.nchunks)
    chunk_cap = max(guess, min_chunk_rows, min(guess * per_chunk, FIRST_PASS_ROWS // p.nchunks))
    keys = np.empty(max(1, chunk_cap * p.nchunks), np.int64)
    run(p, tasks, keys, chunk_cap, starts, counts, stats, False)
    if mode == MODE_ANY:
        return Rows(counts, stats, keys, starts)
    over = np.flatnonzero(starts < 0)
    if over.size:
        kept = counts[over] if max_pairs < 0 else np.minimum(counts[over], max_pairs)
        sub_tasks = np.ascontiguousarray(tasks[over])
        sub_starts = np.full(over.size, -1, np.int64)
        sub_counts = np.zeros(over.size, np.int64)
        sub_stats = np.zeros((over.size, N_STATS), np.int64)
        total, widest = int(kept.sum()), int(kept.max())
        if rerun_parallel and p.parallel and over.size >= 2 and over.size * widest <= 2 * total:
            sub_plan, sub_cap = Plan(over.size, p.threads, True, over.size), widest
        else:
            sub_plan, sub_cap = Plan(over.size, p.threads, False, 1), total
        sub_keys = np.empty(max(1, sub_plan.nchunks * sub_cap), np.int64)
        run(sub_plan, sub_tasks, sub_keys, sub_cap, sub_starts, sub_counts, sub_stats, True)
        if not (np.all(sub_starts >= 0) and np.array_equal(sub_counts, counts[over])):
            raise CollisionKitError("internal error: a rerun with exact room overflowed or found other pairs")
        starts[over] = sub_starts + keys.shape[0]
        keys = np.concatenate([keys, sub_keys])
    return Rows(counts, stats, keys, starts)


__all__ = ["FIRST_PASS_ROWS", "Plan", "RowLauncher", "Rows", "launch", "launch_prange", "pair_rows", "plan", "row_guess", "run_chunks", "thread_count"]
