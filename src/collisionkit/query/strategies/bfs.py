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

from ...bvh import BVH as Tree
from ...bvh import tree_for
from ...constants import (
    BFS_PARALLEL_MIN_FRONTIER,
    BFS_VOLUMES,
    MODE_ALL,
    MODE_ANY,
    MODE_FIRST,
    PARALLEL_MIN_POSES,
    TRI_TESTS,
)
from ...geometry.mesh import Mesh
from ...kernels.core.layout import META_FACES
from ...kernels.traverse import bfs as kb
from ...kernels.volumes.saabb import triangle_spheres
from ...strategies import register
from .. import batch
from ..driver import check_mesh
from ..registry import Request
from ..rows import BatchResult
from . import Capabilities, declare

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
        Exact triangle test at the leaves, as ``Descent``.
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
        # As build_tree: fit on coordinates scaled by a power of two (squares stay finite).
        exponent = int(np.frexp(scale)[1]) if scale > 0 else 0
        scaled = np.ldexp(tris, -exponent) if exponent else np.array(tris, copy=True)
        out = np.empty((tris.shape[0], 4))
        triangle_spheres(scaled, out)
        if exponent:
            out = np.ldexp(out, exponent)
        return np.ascontiguousarray(out)

    return mesh.cached(("saabb-tri-spheres", tree.options), build)


def _run(strat: BFS, req: Request) -> BatchResult:
    a, b, n, mode, max_pairs, nthreads = check_mesh(req.a, "a"), check_mesh(req.b, "b"), req.n, req.mode, req.max_pairs, req.threads
    ta, tb = saabb_tree(a), saabb_tree(b)
    sa, sb = tri_spheres(a, ta), tri_spheres(b, tb)
    faces_b = int(tb.arrays.meta[0, META_FACES])
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
    guess = batch.row_guess(mode, max_pairs, x.tris.shape[0] + y.tris.shape[0])
    # Parallel over poses for a batch; a frontier-parallel descent (seed 002's
    # PCDA) for few poses or when asked; serial when asked or on one thread.
    frontier = strat.parallel is not False and nthreads > 1 and not (strat.parallel is None and n >= PARALLEL_MIN_POSES)
    p = batch.plan(n, nthreads, parallel_ok=strat.parallel is None)

    def run(p_, tasks_, keys, chunk_cap, starts, counts, stats, rerun):
        if frontier:  # tasks one after another, each level parallel over 4 chunks a thread, one buffer
            batch.launch_prange(
                batch.Plan(p_.n, nthreads, True, 4 * nthreads), kb.bfs_query_frontier,
                *pool_a, *pool_b, tasks_, *opts, keys, starts, counts, stats,
                np.int64(4 * nthreads), np.int64(strat.min_frontier),
            )  # fmt: skip
        else:
            batch.launch(p_, kb.bfs_query_serial, kb.bfs_query_poses, *pool_a, *pool_b, tasks_, *opts, keys, chunk_cap, starts, counts, stats)

    rows = batch.pair_rows(tasks, p, guess, mode, max_pairs, run, rerun_parallel=False)
    assert mode in (MODE_ANY, MODE_FIRST, MODE_ALL)
    return BatchResult(n, req.batched, rows.counts, rows.stats, rows.keys, rows.starts, faces_b)


register("bfs", BFS())
declare(
    BFS,
    Capabilities(
        walks="surfaces", pairs=frozenset({"mesh"}),
        questions=frozenset({"intersects", "contacts", "query_stats", "surface_contacts"}),
    ),
)  # fmt: skip

__all__ = ["BFS", "saabb_tree", "tri_spheres"]
