"""Every batched query on Dask: a laptop's threads, a LocalCluster, or a real cluster (issue 17).

Give any batched query a ``dask.array.Array`` where it takes a numpy batch (poses
chunked along the batch axis, ``Robot.check`` configurations, ``World.run`` frames)
and it answers lazily with the same record, Dask arrays in its fields::

    >>> import dask.array as da, collisionkit as ck                  # doctest: +SKIP
    >>> client = ck.distributed.local_cluster(2)                    # doctest: +SKIP
    >>> P = da.from_array(ck.random_poses(1_000_000, seed=0), chunks=(50_000, 4, 4))
    >>> c = ck.contacts(a, b, None, P)                              # doctest: +SKIP
    >>> c.compute()               # the numpy Contacts, in one pass  # doctest: +SKIP

Without a ``distributed.Client`` Dask's local threaded scheduler runs the chunks;
with one (``local_cluster``, ``connect``, or any ``Client`` made the default) its
workers do. Computed answers equal the local numpy answers exactly: each chunk is
the numpy query on the chunk's poses, and row fields carry global pose indices.

How one call runs (``run``):

1. **Probe.** The query runs once here, on one identity pose with ``threads=1``:
   it validates the options (errors are raised at the call, not at compute),
   gives each field's dtype and trailing shape, and builds every structure the
   query needs (trees, hulls, ...) so that they travel with the geometry.
2. **Ship the geometry once.** Shapes, Worlds and Robots pickle with their built
   structures (protocol 5: read-only arrays come back read-only, writable ones
   writable, so the kernels see the array types they were compiled for and
   nothing is rebuilt). With a distributed client they are scattered to every
   worker once per call (``broadcast=True``); otherwise they are one literal of
   the graph. No chunk task embeds them.
3. **One task per chunk**: the numpy query on the chunk with ``threads=1``
   unless ``threads`` is given (Dask already runs one task per worker thread:
   numba's threads inside would oversubscribe), its ``pose_index`` (``frame``)
   offset by the chunk's start.
4. **Assemble**: per-pose fields keep the chunks of the poses; per-row fields
   have unknown chunk lengths. ``record.compute()`` computes all fields together,
   so each chunk runs once.

Workers load the compiled kernels from the cache folder they inherit
(``COLLISIONKIT_CACHE_DIR``; ``local_cluster`` sets it to this process's) or from
a platform wheel's shipped code; ``warm_workers`` loads them up front.

Dask is an optional extra: ``pip install collisionkit[dask]``. Importing this
module does not import Dask.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .query import deferred, registry

_EXTRA = "pip install 'collisionkit[dask]'"
_I64 = np.int64


def _dask() -> tuple[Any, Any]:
    """``(dask, dask.array)``, or an ImportError naming the extra."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:
        raise ImportError(f"collisionkit's Dask support needs dask[array]: {_EXTRA} ({exc})") from None
    return dask, da


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(f"a Dask cluster needs dask.distributed: {_EXTRA} ({exc})") from None
    return distributed


# -- clusters --------------------------------------------------------------------------------
def local_cluster(n_workers: int = 2, *, threads_per_worker: int = 1, warm: bool = False, **kwargs: Any) -> Any:
    """Start a LocalCluster of ``n_workers`` worker processes and return its ``Client``
    (made the default: lazy results compute there). ``client.close()`` stops the cluster.

    The workers inherit this process's environment and its kernel cache folder
    (``COLLISIONKIT_CACHE_DIR``), so they load compiled kernels instead of compiling.
    The scheduler and dashboard ports are chosen freely (two clusters on one machine
    do not clash; pass ``dashboard_address`` to fix one). ``warm=True`` loads the
    kernels on every worker before returning (``warm_workers``). Other keyword
    arguments go to ``distributed.LocalCluster``.
    """
    distributed = _distributed()
    from ._numba import cache_dir

    env = dict(kwargs.pop("env", {}))
    env.setdefault("COLLISIONKIT_CACHE_DIR", str(cache_dir().parent))
    kwargs.setdefault("dashboard_address", ":0")
    kwargs.setdefault("scheduler_port", 0)
    client = distributed.Client(
        n_workers=n_workers, threads_per_worker=threads_per_worker, processes=True, env=env, **kwargs
    )
    if warm:
        warm_workers(client)
    return client


def connect(scheduler: Any) -> Any:
    """The ``Client`` of a running cluster (made the default): ``scheduler`` is an
    address such as ``"tcp://host:8786"``, or an existing ``Client`` (returned as is)."""
    distributed = _distributed()
    if isinstance(scheduler, distributed.Client):
        return scheduler
    return distributed.Client(scheduler, set_as_default=True)


def active_client() -> Any:
    """The default ``distributed.Client`` if one exists (None: Dask's local scheduler runs)."""
    if "distributed" not in sys.modules:  # nobody made a client without importing it
        return None
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


def _warm_worker() -> dict:
    """Load the kernels of the batched queries in this worker process (tiny queries, threads=1)."""
    import time

    from .convex import Sphere
    from .geometry import primitives
    from .geometry.transforms import random_poses
    from .query.distance import distance
    from .query.pair import contacts, intersects

    start = time.perf_counter()
    box = primitives.box_mesh([1.0, 1.0, 1.0])
    P = random_poses(4, 1.0, seed=0)
    intersects(box, box, None, P, threads=1)
    contacts(box, box, None, P, threads=1)
    distance(box, box, None, P, threads=1)
    intersects(box, Sphere(0.5), None, P, threads=1)
    return {"pid": os.getpid(), "seconds": time.perf_counter() - start}


def warm_workers(client: Any) -> dict[str, dict]:
    """Load the common kernels on every worker now (from the cache: nothing compiles when
    the workers share the cache folder), so the first chunk does not pay for it.
    Returns ``{worker address: {"pid", "seconds"}}``."""
    return client.run(_warm_worker)


def kernel_cache_misses() -> dict[str, int]:
    """Kernels this process compiled (numba cache misses), by qualified name; for tests and
    benchmarks (``client.run(kernel_cache_misses)`` asks every worker)."""
    return {name: sum(d.stats.cache_misses.values()) for name, d in _dispatchers().items() if d.stats.cache_misses}


def kernel_signatures() -> dict[str, list[str]]:
    """Compiled signatures of every collisionkit kernel in this process, by qualified name."""
    return {name: sorted(str(s) for s in d.signatures) for name, d in _dispatchers().items() if d.signatures}


def _dispatchers() -> dict[str, Any]:
    from numba.core.registry import CPUDispatcher

    from .kernels.core.lazy import LazyKernel

    found = {}
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("collisionkit.kernels") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, LazyKernel):  # an entry called through slots: its dispatcher
                obj = obj.dispatcher
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod_name:
                found[f"{mod_name}.{obj.py_func.__name__}"] = obj
    return found


def shipped_bytes(*objects: Any) -> int:
    """Bytes of ``objects`` pickled as they are shipped (protocol 5, buffers in band)."""
    return sum(len(pickle.dumps(o, protocol=5)) for o in objects)


def _npy_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of a .npy file as float64 (read where the task runs)."""
    return np.array(np.load(path, mmap_mode="r", allow_pickle=False)[start:stop], dtype=np.float64)


def from_npy(path: str | os.PathLike[str], chunk: int, *, row_shape: tuple[int, ...] | None = None) -> Any:
    """A ``.npy`` file as a float64 Dask array of ``chunk`` rows per chunk, each chunk read
    from the file (memory-mapped) by the task that uses it: the data never passes through
    the client or the scheduler (``da.from_array`` of a loaded array puts it in the graph).
    Workers of a remote cluster must see the file at the same path.

    ``row_shape``: the shape each row must have ((4, 4) for poses, (dof,) for
    configurations, (n, 4, 4) for frames); ``ValueError`` naming the file otherwise.
    """
    dask, da = _dask()
    from pathlib import Path

    p = Path(path)
    if p.suffix.lower() != ".npy":
        raise ValueError(f"expected a .npy file, got {path}")
    if not p.is_file():
        raise FileNotFoundError(f"file not found: {path}")
    arr = np.load(p, mmap_mode="r", allow_pickle=False)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{path} holds {arr.dtype} values; expected numbers")
    if arr.ndim < 1 or (row_shape is not None and tuple(arr.shape[1:]) != tuple(row_shape)):
        want = "(N, " + ", ".join(map(str, row_shape or ())) + ")"
        raise ValueError(f"{path} holds shape {arr.shape}; expected {want}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    n, rest = int(arr.shape[0]), tuple(arr.shape[1:])
    if n == 0:
        return da.from_array(np.empty((0, *rest)), chunks=(1, *rest))
    absolute = str(p.resolve())
    read = dask.delayed(_npy_rows, pure=True)
    blocks = [
        da.from_delayed(read(absolute, s0, min(n, s0 + chunk)), shape=(min(n, s0 + chunk) - s0, *rest),
                        dtype=np.float64, meta=np.empty((0, *rest)))
        for s0 in range(0, n, chunk)
    ]  # fmt: skip
    return blocks[0] if len(blocks) == 1 else da.concatenate(blocks)


# -- the queries -------------------------------------------------------------------------------
def _pair_queries() -> dict[str, tuple[Callable[..., Any], int]]:
    """query name -> (public function, number of pose arguments)."""
    from .query.classify import classify
    from .query.distance import distance
    from .query.pair import contacts, intersects, query_stats
    from .query.penetration import penetration
    from .query.toi import time_of_impact

    return {
        "intersects": (intersects, 2),
        "contacts": (contacts, 2),
        "query_stats": (query_stats, 2),
        "distance": (distance, 2),
        "penetration": (penetration, 2),
        "classify": (classify, 2),
        "time_of_impact": (time_of_impact, 4),
    }


_POSE_NAMES = {2: ("pose_a", "pose_b"), 4: ("start_a", "end_a", "start_b", "end_b")}


def _with_threads(query: str, a: Any, b: Any, kwargs: dict) -> dict:
    """``kwargs`` with ``threads=1`` when the caller left it unset and the handler takes it."""
    if kwargs.get("threads") is not None:
        return kwargs
    if query in registry.QUERY_OPTIONS and "threads" not in registry.find(query, a, b).honours:
        return kwargs
    return {**kwargs, "threads": 1}


def _writable(x: Any) -> Any:
    """A chunk as the kernels take it: C-contiguous, writable float64 (a read-only block,
    as Dask may hand over, would compile a second kernel signature)."""
    if isinstance(x, np.ndarray):
        return np.require(x, np.float64, ("C", "W"))
    return x


def _offset(rec: Any, field: str, start: int) -> Any:
    """``rec`` with its row field ``field`` (pose_index, frame) made global."""
    if start == 0 or not dataclasses.is_dataclass(rec) or isinstance(rec, type) or not hasattr(rec, field):
        return rec
    return dataclasses.replace(rec, **{field: getattr(rec, field) + _I64(start)})


_INDEXED = re.compile(r"^(\w+)\[(\d+)\]")


def _global_error(exc: Exception, start: int, sliced: Sequence[str]) -> Exception | None:
    """``exc`` raised by one chunk's query, with the index it names made global.

    A chunk's query names a bad pose by its place in the chunk (``pose_b[87]``); the
    user gave pose ``start + 87`` of the whole batch. Only the arguments in ``sliced``
    (Dask batches and numpy batches cut per chunk) are offset: a pose broadcast to
    every chunk keeps its index. None when there is nothing to rewrite.
    """
    from .errors import InvalidPoseError

    m = _INDEXED.match(str(exc))
    if start == 0 or m is None or m.group(1) not in sliced:
        return None
    index = int(m.group(2)) + start
    message = f"{m.group(1)}[{index}]{str(exc)[m.end():]}"
    if isinstance(exc, InvalidPoseError):
        return InvalidPoseError(message, index)
    try:
        return type(exc)(message)
    except Exception:  # an exception type with another constructor: keep the original
        return None


def _pair_chunk(query: str, a: Any, b: Any, start: int, kwargs: dict, sliced: tuple[str, ...], *poses: Any) -> Any:
    """One chunk: the numpy query on the chunk's poses, pose indices made global (in the
    rows and in the error a bad pose raises)."""
    fn, _ = _pair_queries()[query]
    try:
        rec = fn(a, b, *[_writable(p) for p in poses], **kwargs)
    except (ValueError, TypeError) as exc:
        moved = _global_error(exc, start, sliced)
        if moved is None:
            raise
        raise moved from None
    return _offset(rec, "pose_index", start)


def _robot_chunk(robot: Any, world: Any, start: int, kwargs: dict, q: Any) -> Any:
    try:
        return robot.check(_writable(q), world, **kwargs)
    except (ValueError, TypeError) as exc:
        moved = _global_error(exc, start, ("q",))
        if moved is None:
            raise
        raise moved from None


def _world_chunk(world: Any, start: int, threads: int | None, frames: Any) -> Any:
    try:
        rec = world._replica(1 if threads is None else threads).run(_writable(frames))
    except (ValueError, TypeError) as exc:
        moved = _global_error(exc, start, ("frames",))
        if moved is None:
            raise
        raise moved from None
    return _offset(rec, "frame", start)


def _chunked(x: Any, what: str, trailing: tuple[int, ...]) -> Any:
    """A Dask array of shape (N, *trailing), chunked along N only."""
    if np.dtype(x.dtype).kind not in "biuf":  # complex: numpy would drop the imaginary part silently
        raise ValueError(f"{what}: a Dask array of {x.dtype} values; expected real numbers")
    if x.ndim != 1 + len(trailing) or tuple(x.shape[1:]) != trailing:
        raise ValueError(f"{what}: a Dask array must have shape (N, {', '.join(map(str, trailing))}), got {x.shape}")
    if any(np.isnan(c) for c in x.chunks[0]):
        raise ValueError(f"{what}: the Dask array's chunk sizes are unknown; call .compute_chunk_sizes() first")
    if any(len(c) != 1 for c in x.chunks[1:]):
        x = x.rechunk({i: -1 for i in range(1, x.ndim)})
    return x


def _blocks(x: Any, chunks: tuple[int, ...]) -> list[Any]:
    """The per-chunk pieces of a batch argument (Delayed blocks of a Dask array; numpy slices)."""
    if deferred.is_lazy(x):
        if x.shape[0] == 1 and sum(chunks) != 1:  # one pose broadcast to every chunk
            return list(x.rechunk({0: -1}).to_delayed().ravel()) * len(chunks)
        if x.chunks[0] != chunks:
            x = x.rechunk({0: chunks})
        return list(x.to_delayed().ravel())
    starts = np.concatenate([[0], np.cumsum(chunks)]).astype(int)
    return [x[starts[i] : starts[i + 1]] for i in range(len(chunks))]


def _ship(*objects: Any) -> list[Any]:
    """References to ``objects`` that tasks take as arguments: futures of objects scattered
    to every worker (a distributed client is active), else graph literals."""
    dask, _ = _dask()
    unique: list[Any] = []
    for o in objects:
        if o is not None and not any(o is u for u in unique):
            unique.append(o)
    client = active_client()
    if client is not None and unique:
        refs = client.scatter(unique, broadcast=True, hash=False)
    else:
        refs = [
            dask.delayed(o, name=f"collisionkit-{type(o).__name__.lower()}-{uuid.uuid4().hex}", traverse=False)
            for o in unique
        ]
    return [None if o is None else refs[next(i for i, u in enumerate(unique) if u is o)] for o in objects]


def _assemble(meta: Any, parts: list[Any], chunks: tuple[int, ...]) -> Any:
    """The lazy answer from per-chunk Delayed answers and ``meta`` (the probe's answer in
    batch form): per-pose fields keep ``chunks``; per-row fields have unknown lengths."""
    dask, da = _dask()

    def column(m: np.ndarray, name: str | None, per_pose: bool) -> Any:
        blocks = []
        for part, n in zip(parts, chunks, strict=True):
            value = part if name is None else dask.delayed(getattr, pure=True)(part, name)
            shape = ((n if per_pose else np.nan),) + m.shape[1:]
            blocks.append(da.from_delayed(value, shape=shape, dtype=m.dtype, meta=m[:0]))
        return blocks[0] if len(blocks) == 1 else da.concatenate(blocks)

    if isinstance(meta, np.ndarray):
        return column(meta, None, True)
    per_pose = type(meta).PER_POSE
    fields = {}
    for f in dataclasses.fields(meta):
        m = getattr(meta, f.name)
        fields[f.name] = column(m, f.name, f.name in per_pose) if isinstance(m, np.ndarray) else m
    return type(meta)(**fields)


def _pose_counts(poses: list[Any], names: tuple[str, ...]) -> list[int]:
    """The batch length of each pose argument, None when it is a single (4, 4) pose (or
    None), numpy arguments checked for shape as ``geometry.pose.as_poses`` checks them."""
    counts: list[Any] = []
    for p, name in zip(poses, names, strict=True):
        if p is None:
            counts.append(None)
        elif deferred.is_lazy(p):
            counts.append(int(p.shape[0]))
        else:
            arr = np.asarray(p, dtype=np.float64) if not isinstance(p, np.ndarray) else p
            if arr.shape == (4, 4):
                counts.append(None)
            elif arr.ndim == 3 and arr.shape[1:] == (4, 4):
                counts.append(int(arr.shape[0]))
            else:
                raise ValueError(f"{name} must have shape (4, 4) or (N, 4, 4), got {arr.shape}")
    return counts


def _broadcast_count(counts: list[Any], names: tuple[str, ...]) -> int:
    """N of the whole call, by the rules of the numpy path (``geometry.pose.broadcast_poses``;
    ``query.toi``: each side's start and end, then a against b): equal lengths, or one
    pose (a (4, 4) pose or a batch of 1) beside any batch. ValueError at the call otherwise,
    so a Dask batch is never answered as a numpy batch tiled to its length."""

    def pair(x: Any, y: Any, say: str, longer: bool = False) -> Any:
        if x is None or y is None:
            return y if x is None else x
        if x == y:
            return x
        if 1 not in (x, y):
            raise ValueError(say.format(x, y))
        if longer:  # query.toi: a side's start and end broadcast to the longer one
            return max(x, y)
        return y if x == 1 else x  # broadcast_poses: the batch beside one pose (even 0 long)

    if len(counts) == 2:
        n = pair(counts[0], counts[1], "pose batches do not broadcast: pose_a has {} poses, pose_b has {}")
    else:
        sides = [
            pair(counts[k], counts[k + 1], f"pose batches do not broadcast: {names[k]} has {{}} poses, "
                 f"{names[k + 1]} has {{}}", longer=True)
            for k in (0, 2)
        ]  # fmt: skip
        n = pair(sides[0], sides[1], "pose batches do not broadcast: a moves {} times, b {} times")
    return 1 if n is None else int(n)


def _pair_run(query: str, args: tuple, kwargs: dict) -> Any:
    """A pair query with a Dask pose batch: broadcast checked here, as the numpy path
    checks it (not at compute time), then one task per chunk of the longest batch."""
    fn, n_poses = _pair_queries()[query]
    a, b, *poses = args
    poses += [None] * (n_poses - len(poses))
    names = _POSE_NAMES[n_poses]
    lazy = [i for i, p in enumerate(poses) if deferred.is_lazy(p)]
    for i in lazy:
        poses[i] = _chunked(poses[i], names[i], (4, 4))
    counts = _pose_counts(poses, names)
    n = _broadcast_count(counts, names)
    # the chunks: those of a Dask batch of all N poses; else (a Dask batch of one pose
    # beside a numpy batch of N) one chunk
    driver = next((i for i in lazy if counts[i] == n), None)
    chunks = poses[driver].chunks[0] if driver is not None else (n,)
    # the probe: validates, builds what the query needs, gives the fields' dtypes and shapes
    kw = _with_threads(query, a, b, kwargs)
    eye = np.eye(4).reshape(1, 4, 4)
    meta = fn(a, b, *[eye if i in lazy or p is None else _probe_pose(p) for i, p in enumerate(poses)], **kw)
    pieces = []
    sliced = []
    for i, p in enumerate(poses):
        if i in lazy:
            pieces.append(_blocks(p, chunks))
            if counts[i] == n and n != 1:
                sliced.append(names[i])
        elif counts[i] is not None and counts[i] == n and n != 1:
            pieces.append(_blocks(np.asarray(p, dtype=np.float64), chunks))  # a numpy batch: sliced per chunk
            sliced.append(names[i])
        else:
            arr = None if p is None else np.asarray(p, dtype=np.float64)
            pieces.append([arr] * len(chunks))  # one pose: the same in every chunk
    ra, rb = _ship(a, b)
    dask, _ = _dask()
    task = dask.delayed(_pair_chunk, pure=True)
    starts = np.concatenate([[0], np.cumsum(chunks)]).astype(int)
    parts = [
        task(query, ra, rb, int(starts[k]), kw, tuple(sliced), *[pc[k] for pc in pieces]) for k in range(len(chunks))
    ]
    return _assemble(meta, parts, chunks)


def _probe_pose(p: Any) -> Any:
    """A non-lazy pose argument as the probe takes it: its first pose when it is a batch."""
    arr = np.asarray(p, dtype=np.float64)
    return arr[:1] if arr.ndim == 3 else arr


def _robot_run(args: tuple, kwargs: dict) -> Any:
    robot, q, *rest = args
    world = rest[0] if rest else kwargs.pop("world", None)
    q = _chunked(q, "q", (robot.dof,))
    kw = kwargs if kwargs.get("threads") is not None else {**kwargs, "threads": 1}
    meta = robot.check(np.zeros((1, robot.dof)), world, **kw)  # validates, builds the trees
    rr, rw = _ship(robot, world)
    dask, _ = _dask()
    task = dask.delayed(_robot_chunk, pure=True)
    chunks = q.chunks[0]
    starts = np.concatenate([[0], np.cumsum(chunks)]).astype(int)
    parts = [task(rr, rw, int(starts[k]), kw, blk) for k, blk in enumerate(_blocks(q, chunks))]
    return _assemble(np.asarray(meta), parts, chunks)


def _world_run(args: tuple, kwargs: dict) -> Any:
    world, frames = args
    frames = _chunked(frames, "frames", (len(world), 4, 4))
    threads = kwargs.get("threads")
    probe = world._replica(1)
    meta = probe.run(world.poses[None])  # dtypes; builds the trees and the World's pools...
    world._pools.update(probe._pools)  # ...which then travel with the world (a cache: same objects)
    (rw,) = _ship(world)
    dask, _ = _dask()
    task = dask.delayed(_world_chunk, pure=True)
    chunks = frames.chunks[0]
    starts = np.concatenate([[0], np.cumsum(chunks)]).astype(int)
    parts = [task(rw, int(starts[k]), threads, blk) for k, blk in enumerate(_blocks(frames, chunks))]
    return _assemble(meta, parts, chunks)


def run(query: str, args: tuple, kwargs: dict) -> Any:
    """Answer ``query`` lazily (``query.deferred.run`` calls it): see the module notes."""
    _dask()
    if query == "robot_check":
        return _robot_run(args, dict(kwargs))
    if query == "world_run":
        return _world_run(args, dict(kwargs))
    return _pair_run(query, args, dict(kwargs))


def compute(record: Any, kwargs: dict) -> Any:
    """The numpy record of a lazy one: every Dask field computed together (one pass)."""
    dask, _ = _dask()
    names = [f.name for f in dataclasses.fields(record) if deferred.is_lazy(getattr(record, f.name))]
    values = dask.compute(*[getattr(record, n) for n in names], **kwargs)
    return dataclasses.replace(record, **dict(zip(names, values, strict=True)))


def _frame(columns: Sequence[str], *arrays: np.ndarray) -> Any:
    import pandas as pd

    return pd.DataFrame(dict(zip(columns, arrays, strict=True)))


def to_dataframe(record: Any, columns: Sequence[str]) -> Any:
    """A Dask DataFrame of a lazy record's per-row ``columns``: one partition per chunk."""
    dask, _ = _dask()
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError(f"to_dataframe on a lazy record needs dask[dataframe]: {_EXTRA} ({exc})") from None
    arrays = [getattr(record, c) for c in columns]
    blocks = [list(a.to_delayed().ravel()) for a in arrays]
    part = dask.delayed(_frame, pure=True)
    parts = [part(tuple(columns), *bs) for bs in zip(*blocks, strict=True)]
    meta = _frame(columns, *[np.empty(0, a.dtype) for a in arrays])
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


class _Runner:
    """What ``query.deferred`` calls."""

    run = staticmethod(run)
    compute = staticmethod(compute)
    to_dataframe = staticmethod(to_dataframe)


deferred.register(_Runner())

__all__ = [
    "active_client",
    "compute",
    "connect",
    "from_npy",
    "kernel_cache_misses",
    "kernel_signatures",
    "local_cluster",
    "run",
    "shipped_bytes",
    "to_dataframe",
    "warm_workers",
]
