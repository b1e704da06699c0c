"""Strategy "bfs": seed 002's breadth-first traversal of S-AABB trees, serial or parallel.

``strategy="bfs"`` (or ``collisionkit.BFS(...)``) on ``intersects``, ``contacts``
and ``query_stats``: both meshes are traversed with their "saabb" trees (their
own split rule and leaf size; ``BuildOptions(bv="saabb", split="balanced")`` is
seed 002's tree). The answers are those of the default strategy, pair for pair
(ARCHITECTURE.md, "Exactness"); only the order of work differs. Kernels:
``kernels/traverse/bfs.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..bvh import BVH as Tree
from ..bvh import tree_for
from ..constants import (
    BFS_PARALLEL_MIN_FRONTIER,
    BFS_VOLUMES,
    MODE_ALL,
    MODE_ANY,
    MODE_FIRST,
    PAIRS_PER_POSE_GUESS,
    PARALLEL_MIN_POSES,
    TRI_TESTS,
)
from ..geometry.mesh import Mesh
from ..kernels.core.layout import META_FACES, N_STATS
from ..kernels.traverse import bfs as kb
from ..kernels.volumes.saabb import triangle_spheres
from ..runtime import using_threads
from ..strategies import register
from .engine import BatchResult
from .registry import Request

#: Result rows reserved for the first pass (as the engine's first pass).
_FIRST_PASS_ROWS = 1 << 18


@dataclass(frozen=True)
class BFS:
    """Breadth-first ("task queue") traversal of the two meshes' S-AABB trees (seed 002).

    Parameters
    ----------
    parallel : bool or None
        False: one thread (the seed's SCDA). True: each query's levels are
        processed by all threads (the seed's PCDA: the frontier is cut into
        chunks, boolean queries stop at the first hit). None (default): batches
        of at least ``constants.PARALLEL_MIN_POSES`` poses run parallel over poses
        (each traversal serial), smaller batches use the parallel frontier.
        ``threads=1`` (or ``collisionkit.set_num_threads(1)``) always runs serially.
    volumes : {"hybrid", "aabb", "sphere"}
        Volume tests per node pair: "hybrid" (default) the seed's choice - sphere
        test, then the box test(s) of the nodes whose sphere-to-box volume ratio
        reaches their level's threshold; "aabb" boxes only; "sphere" spheres only.
    ratio_threshold : float
        Scale of the per-level threshold (the level's median ratio): a node's box
        is tested when its ratio >= ratio_threshold * median. 0 tests every box,
        inf none (that is "sphere").
    tri_spheres : bool
        Use each triangle's bounding sphere as a pre-check before the exact test
        (seed 002's "underlying spheres"). Default True.
    tri_test : {"guigue", "moller"}
        Exact triangle test at the leaves, as ``strategies.BVH``.
    min_frontier : int
        Levels with fewer node pairs run on one thread even when parallel (a
        parallel launch costs as much as a few hundred volume tests); 1 makes
        every level parallel.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> ck.intersects(box, box, None, ck.translation([0.5, 0, 0]), strategy=ck.BFS(parallel=True))
    True
    """

    parallel: bool | None = None
    volumes: str = "hybrid"
    ratio_threshold: float = 1.0
    tri_spheres: bool = True
    tri_test: str = "guigue"
    min_frontier: int = BFS_PARALLEL_MIN_FRONTIER

    def __post_init__(self) -> None:
        if not (self.parallel is None or isinstance(self.parallel, bool)):
            raise ValueError(f"parallel must be True, False or None, got {self.parallel!r}")
        if self.volumes not in BFS_VOLUMES:
            raise ValueError(f"unknown volumes {self.volumes!r}; choose one of {sorted(BFS_VOLUMES)}")
        if isinstance(self.ratio_threshold, bool) or not isinstance(self.ratio_threshold, (int, float)) or not (
            self.ratio_threshold >= 0
        ):
            raise ValueError(f"ratio_threshold must be a number >= 0, got {self.ratio_threshold!r}")
        if not isinstance(self.tri_spheres, bool):
            raise ValueError(f"tri_spheres must be a bool, got {self.tri_spheres!r}")
        if self.tri_test not in TRI_TESTS:
            raise ValueError(f"unknown tri_test {self.tri_test!r}; choose one of {sorted(TRI_TESTS)}")
        if isinstance(self.min_frontier, bool) or not isinstance(self.min_frontier, int) or self.min_frontier < 1:
            raise ValueError(f"min_frontier must be an int >= 1, got {self.min_frontier!r}")

    def run(self, request: Request) -> BatchResult:
        """Answer a validated batch (see ``query.registry.Request``)."""
        return _run(self, request)


def saabb_tree(mesh: Mesh) -> Tree:
    """The mesh's "saabb" tree (its split rule and leaf size), built once and cached."""
    return tree_for(mesh, "saabb")


def tri_spheres(mesh: Mesh, tree: Tree) -> NDArray[np.float64]:
    """(F, 4) float64 bounding sphere (centre, radius) of each triangle of ``tree``, in
    leaf order (row i belongs to ``tree.arrays.tris[i]``); cached on the mesh."""

    def build() -> NDArray[np.float64]:
        tris = tree.arrays.tris
        scale = float(tree.arrays.scale[0])
        # As build_bvh: fit on coordinates scaled by a power of two (squares stay finite).
        exponent = int(np.frexp(scale)[1]) if scale > 0 else 0
        scaled = np.ldexp(tris, -exponent) if exponent else np.array(tris, copy=True)
        out = np.empty((tris.shape[0], 4))
        triangle_spheres(scaled, out)
        if exponent:
            out = np.ldexp(out, exponent)
        return np.ascontiguousarray(out)

    return mesh.cached(("saabb-tri-spheres", tree.options), build)


def _run(strat: BFS, req: Request) -> BatchResult:
    a, b, n, mode, max_pairs, nthreads = req.a, req.b, req.n, req.mode, req.max_pairs, req.threads
    ta, tb = saabb_tree(a), saabb_tree(b)
    sa, sb = tri_spheres(a, ta), tri_spheres(b, tb)
    faces_b = int(tb.arrays.meta[0, META_FACES])
    counts = np.zeros(n, np.int64)
    starts = np.full(n, -1, np.int64)
    stats = np.zeros((n, N_STATS), np.int64)
    if n == 0:
        return BatchResult(0, True, counts, stats, np.empty(0, np.int64), starts, faces_b)
    tasks = np.zeros((n, 4), np.int64)
    tasks[:, 2] = req.ia
    tasks[:, 3] = req.ib
    x, y = ta.arrays, tb.arrays
    pool_a = (x.topo, x.bv, x.tris, x.face_ids, sa, x.meta, x.scale, req.pa)
    pool_b = (y.topo, y.bv, y.tris, y.face_ids, sb, y.meta, y.scale, req.pb)
    opts = (
        np.int64(BFS_VOLUMES[strat.volumes]), float(strat.ratio_threshold), np.int64(strat.tri_spheres),
        np.int64(TRI_TESTS[strat.tri_test]), np.int64(mode), np.int64(max_pairs),
    )
    if mode == MODE_ANY:
        guess = 0
    elif mode == MODE_FIRST:
        guess = 1
    else:
        guess = PAIRS_PER_POSE_GUESS + (x.tris.shape[0] + y.tris.shape[0]) // 8
        if max_pairs >= 0:
            guess = min(guess, max_pairs)

    if strat.parallel is False or nthreads == 1:
        path = "serial"
    elif strat.parallel is None and n >= PARALLEL_MIN_POSES:
        path = "poses"
    else:
        path = "frontier"

    def launch(sub_tasks, sub_starts, sub_counts, sub_stats, keys, chunk_cap, nchunks, how):
        if how == "serial":
            kb.bfs_query_serial(*pool_a, *pool_b, sub_tasks, *opts, keys, chunk_cap, sub_starts, sub_counts, sub_stats, nchunks)
            return
        with using_threads(nthreads):
            if how == "poses":
                kb.bfs_query_poses(*pool_a, *pool_b, sub_tasks, *opts, keys, chunk_cap, sub_starts, sub_counts, sub_stats, nchunks)
            else:
                kb.bfs_query_frontier(
                    *pool_a, *pool_b, sub_tasks, *opts, keys, sub_starts, sub_counts, sub_stats,
                    np.int64(4 * nthreads), np.int64(strat.min_frontier),
                )

    nchunks = min(n, 4 * nthreads) if path == "poses" else 1
    per_chunk = -(-n // nchunks)
    chunk_cap = max(guess, min(guess * per_chunk, _FIRST_PASS_ROWS // nchunks))
    keys = np.empty(max(1, chunk_cap * nchunks), np.int64)
    launch(tasks, starts, counts, stats, keys, chunk_cap, nchunks, path)

    if mode != MODE_ANY:
        over = np.flatnonzero(starts < 0)
        if over.size:
            # Rerun the tasks that did not fit, with exact room, one buffer.
            kept = counts[over] if max_pairs < 0 else np.minimum(counts[over], max_pairs)
            sub_tasks = np.ascontiguousarray(tasks[over])
            sub_starts = np.full(over.size, -1, np.int64)
            sub_counts = np.zeros(over.size, np.int64)
            sub_stats = np.zeros((over.size, N_STATS), np.int64)
            total = int(kept.sum())
            sub_keys = np.empty(max(1, total), np.int64)
            launch(sub_tasks, sub_starts, sub_counts, sub_stats, sub_keys, total, 1, "frontier" if path == "frontier" else "serial")
            assert np.all(sub_starts >= 0) and np.array_equal(sub_counts, counts[over])
            starts[over] = sub_starts + keys.shape[0]
            keys = np.concatenate([keys, sub_keys])
    assert mode in (MODE_ANY, MODE_FIRST, MODE_ALL)
    return BatchResult(n, req.batched, counts, stats, keys, starts, faces_b)


register("bfs", BFS())

__all__ = ["BFS", "saabb_tree", "tri_spheres"]
