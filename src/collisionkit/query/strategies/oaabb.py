"""Seed 000's CollisionSearch as a strategy (``strategy="oaabb"``); its native surface
pairs and per-node visit counters serve the questions ``surface_contacts`` and
``node_visits`` (``query/surfaces.py``).

``OAABB`` walks per-object R-trees of surfaces and triangles
(``bvh/rtree.py``), filters b's trees by the overlap box of the two objects
and walks a's trees with each surviving triangle's tight box
(``kernels/traverse/oaabb.py``). Like every strategy it returns exactly the
triangle pairs of the default BVH traversal (the triangle test is exact and
b's vertices are mapped by the same arithmetic).

Its ``query_stats`` counters mean: ``bv_tests`` box tests (nodes and
triangle entries against the OAABB or a triangle's box, plus the root test),
``tri_tests`` exact triangle tests, ``node_pairs`` nodes visited in all four
walks (R-tree walks visit single nodes, not node pairs), ``bv_updates`` boxes
moved into the other object's frame (a's root box, then one per mapped
triangle of b): the seed's table 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...bvh.rtree import DEFAULT_NODE_CAPACITY, RTrees, rtrees_for
from ...constants import MODE_SURFACE_PAIRS, TRI_TEST_GUIGUE
from ...geometry.mesh import Mesh
from ...kernels.build.rtree import RT_FACES, RT_SURFACES
from ...kernels.traverse import oaabb as ko
from ...strategies import register
from .. import batch
from ..driver import check_mesh
from ..registry import Request
from ..rows import BatchResult
from . import Capabilities, declare


@dataclass(frozen=True)
class OAABB:
    """Seed 000's CollisionSearch over R-trees of surfaces and triangles.

    Parameters
    ----------
    use_overlap_box : bool
        True (default): b's surface and triangle trees are filtered by the
        overlap box (OAABB) of the two objects before b's triangles are mapped
        into a's frame. False: every triangle of b is mapped and walked through
        a's trees (the seed's "without OAABB").
    node_capacity : int
        Node capacity m of the STR-packed R-trees (>= 2).

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> ck.intersects(box, box, None, ck.translation([0.9, 0, 0]), strategy="oaabb")
    True
    >>> ck.contacts(box, box, None, ck.translation([2, 0, 0]), strategy=ck.OAABB(use_overlap_box=False)).counts
    array([0])
    """

    use_overlap_box: bool = True
    node_capacity: int = DEFAULT_NODE_CAPACITY

    def __post_init__(self) -> None:
        if not isinstance(self.use_overlap_box, (bool, np.bool_)):
            raise ValueError(f"use_overlap_box must be a bool, got {self.use_overlap_box!r}")
        m = self.node_capacity
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 2:
            raise ValueError(f"node_capacity must be an int >= 2, got {m!r}")

    def trees(self, mesh: Mesh) -> RTrees:
        """``mesh``'s R-trees for this node capacity (cached per geometry)."""
        return rtrees_for(mesh, int(self.node_capacity))

    def run(self, request: Request) -> BatchResult:
        """Answer a validated batch (``query.registry.Request``) in one compiled call."""
        return _execute(self, request, request.mode, None)

    def surface_rows(self, request: Request) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        """(pose_index, surface_a, surface_b, counts) of every intersecting surface pair, each
        settled at its first triangle pair (the seed's query 2)."""
        res = _execute(self, request, MODE_SURFACE_PAIRS, None)
        pose, ca, cb, counts = _gather_keys(res)
        ra, rb = self.trees(request.a), self.trees(request.b)
        return pose, ra.labels[ca].astype(np.int64), rb.labels[cb].astype(np.int64), counts

    def visits(self, request: Request) -> tuple[NDArray, NDArray, int, int]:
        """(visits per node of a's R-trees, of b's, surface nodes of a, of b), summed over
        the poses; serial (the counters are shared)."""
        ra, rb = self.trees(request.a), self.trees(request.b)
        va = np.zeros(ra.n_nodes, np.int64)
        vb = np.zeros(rb.n_nodes, np.int64)
        _execute(self, request, request.mode, (va, vb))
        return va, vb, ra.n_surface_nodes, rb.n_surface_nodes


register("oaabb", OAABB())


def _kernel_args(rt: RTrees) -> tuple:
    x = rt.arrays
    return (x.topo, x.box, x.surf_root, x.surf_ids, x.tbox, x.tris, x.face_ids, x.meta, x.scale)


#: Visit counters handed to the kernels when nobody counts (never written then).
_NO_VISITS = (np.zeros(1, np.int64), np.zeros(1, np.int64))


def _execute(strat: OAABB, req: Request, mode: int, visits: tuple[NDArray, NDArray] | None) -> BatchResult:
    a, b = check_mesh(req.a, "a"), check_mesh(req.b, "b")
    ra, rb = strat.trees(a), strat.trees(b)
    n, max_pairs, nthreads = req.n, req.max_pairs, req.threads
    surf_mode = mode == MODE_SURFACE_PAIRS
    width_b = int(rb.arrays.meta[RT_SURFACES if surf_mode else RT_FACES])
    # PERF: per-call overhead matters (one pose per call is common): no np.stack/np.full
    tasks = np.empty((n, 2), np.int64)
    tasks[:, 0] = req.ia
    tasks[:, 1] = req.ib
    counting = visits is not None
    size = (ra.n_surfaces + rb.n_surfaces) if surf_mode else (a.n_faces + b.n_faces)
    guess = batch.row_guess(mode, max_pairs, size)
    p = batch.plan(n, nthreads, parallel_ok=not counting)  # visit counters are shared: serial
    head = (*_kernel_args(ra), req.pa, *_kernel_args(rb), req.pb)
    opts = (np.int64(bool(strat.use_overlap_box)), np.int64(TRI_TEST_GUIGUE), np.int64(mode), np.int64(max_pairs))
    flag = np.int64(counting)

    def run(p_, tasks_, keys_, cap_, starts_, counts_, stats_, rerun):
        # the first pass counted the visits of a task that ran out of room in full
        # (it keeps walking): a rerun counts into scratch
        va, vb = _NO_VISITS if visits is None else (np.zeros_like(visits[0]), np.zeros_like(visits[1])) if rerun else visits
        args = (*head, tasks_, *opts, keys_, np.int64(cap_), starts_, counts_, stats_, flag, va, vb)
        batch.launch(p_, ko.oaabb_serial, ko.oaabb_parallel, *args)

    rows = batch.pair_rows(tasks, p, guess, mode, max_pairs, run, rerun_parallel=False)
    return BatchResult(n, req.batched, rows.counts, rows.stats, rows.keys, rows.starts, width_b)


def _gather_keys(res: BatchResult) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """(pose, compact a, compact b, counts) from a result's per-pose sorted keys."""
    n = res.n
    counts = res.counts.astype(np.int64)
    total = int(counts.sum())
    idx = np.repeat(res.starts, counts) + (np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts))
    key = res.keys[idx] if total else np.zeros(0, np.int64)
    pose = np.repeat(np.arange(n, dtype=np.int64), counts)
    w = max(res.faces_b, 1)
    return pose, key // w, key % w, counts


declare(
    OAABB,
    Capabilities(
        walks="surfaces", pairs=frozenset({"mesh"}), surface_pairs=True, counts_visits=True,
        questions=frozenset({"intersects", "contacts", "query_stats", "surface_contacts", "node_visits"}),
    ),
)  # fmt: skip

__all__ = ["OAABB"]
